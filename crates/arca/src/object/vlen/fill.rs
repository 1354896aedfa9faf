//! Fill values of variable-length datasets. The fill value's items live in
//! the dataset's own byte vector, written once at creation; the dataset's
//! fill message holds the record (`[offset, length]`) that points at them,
//! so that unwritten elements, whose records read as the fill message,
//! read as the fill value like any written element. Overwrites with space
//! reuse never free that range, and a repack writes it anew. Writing it
//! at creation is `options::write_fill`, below the dataset handle.

use super::records::{item_size, load_vlen};
use crate::chunk::Cache;
use crate::error::{Error, Result};
use crate::format::object_header::Header;
use crate::object::dataset::Dataset;
use crate::object::session::Session;
use crate::store::Store;
use crate::vlen::vector;

/// The fill value's record of a variable-length dataset's header, if it
/// has one (compounds with variable-length members have none).
pub(crate) fn fill_record(st: &Store, h: &Header) -> Result<Option<[u64; 2]>> {
    let Some(m) = h.dataset.as_ref() else {
        return Ok(None);
    };
    if m.fill.is_none() || !m.dtype.is_vlen() {
        return Ok(None);
    }
    let b = m.fill_bytes(st)?;
    let word = |i: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&b[i * 8..i * 8 + 8]);
        u64::from_le_bytes(w)
    };
    Ok(Some([word(0), word(1)]))
}

/// The fill value's items (native order) of the dataset at `addr`, read
/// under the lock already held, or None.
pub(crate) fn read_fill(g: &mut Session, addr: u64, cache: &mut Cache) -> Result<Option<Vec<u8>>> {
    let (h, dtype, _, mut vm) = load_vlen(g, addr)?;
    let item = item_size(&dtype)?;
    let Some([off, len]) = fill_record(&g.st, &h)? else {
        return Ok(None);
    };
    if !len.is_multiple_of(item as u64) || off.checked_add(len).is_none_or(|e| e > vm.len) {
        return Err(Error::corrupt(
            "fill value",
            addr,
            format!(
                "its record ({off}, {len}) does not fit a vector of {} bytes",
                vm.len
            ),
        ));
    }
    let mut out = vec![0u8; len as usize];
    vector::read_ranges(&mut g.st, cache, &mut vm, item, &[[off, len]], &mut out)?;
    if let Some(b) = dtype.base().filter(|b| b.needs_swap()) {
        b.swap(&mut out);
    }
    Ok(Some(out))
}

impl Dataset {
    /// The fill value of a variable-length dataset: its items in native byte
    /// order (UTF-8 for strings), or None when it has none (unwritten
    /// elements are then empty).
    ///
    /// ```
    /// use arca::{Datatype, DatasetOptions, File, Selection};
    /// let f = File::in_memory().unwrap();
    /// let o = DatasetOptions::new(Datatype::VlenStr, &[3]).fill_value(b"n/a");
    /// let ds = f.root().create_dataset("s", &o).unwrap();
    /// ds.write_strings(&Selection::from_ranges(&[(1, 2, 1)]).unwrap(), &["x"]).unwrap();
    /// assert_eq!(ds.read_strings(&Selection::all(&[3])).unwrap(), vec!["n/a", "x", "n/a"]);
    /// assert_eq!(ds.vlen_fill_value().unwrap(), Some(b"n/a".to_vec()));
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a dataset that is not variable-length;
    /// [`Error::Corrupt`] for a damaged record or vector.
    pub fn vlen_fill_value(&self) -> Result<Option<Vec<u8>>> {
        let addr = self.addr;
        self.with_vector(|g, cache| read_fill(g, addr, cache))
    }
}
