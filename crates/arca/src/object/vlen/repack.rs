//! Rewriting a byte vector with only its live values: in place
//! (`Dataset::vlen_repack`), or into a new dataset of another file when a
//! whole file is repacked.

use super::fill;
use super::options::{write_fill, VlenOptions};
use super::ragged;
use super::records::{load_vlen, save_vm};
use crate::chunk::Cache;
use crate::error::{Error, Result};
use crate::format::object_header::{DatasetMeta, Header};
use crate::object::dataset::options::DatasetOptions;
use crate::object::dataset::Dataset;
use crate::object::group::Group;
use crate::object::named_type::NamedType;
use crate::object::rows;
use crate::selection::Selection;
use crate::vlen::vector;

impl Dataset {
    /// Rewrite the byte vector with only the data elements refer to, in
    /// element order, reclaiming space left by overwrites. Holds the live
    /// data in memory while it runs.
    ///
    /// ```
    /// use arca::{Datatype, DatasetOptions, File, Selection};
    /// let f = File::in_memory().unwrap();
    /// let ds = f.root().create_dataset("s", &DatasetOptions::new(Datatype::VlenStr, &[1])).unwrap();
    /// let all = Selection::all(&[1]);
    /// ds.write_strings(&all, &["first"]).unwrap();
    /// ds.write_strings(&all, &["second"]).unwrap();
    /// assert_eq!(ds.vlen_info().unwrap().unwrap().vector_bytes, 11);
    /// ds.vlen_repack().unwrap();
    /// assert_eq!(ds.vlen_info().unwrap().unwrap().vector_bytes, 6);
    /// assert_eq!(ds.read_strings(&all).unwrap(), vec!["second"]);
    /// ```
    ///
    /// # Errors
    /// [`Error::ReadOnly`]; [`Error::InvalidArgument`] for a fixed-length
    /// dataset; [`Error::Corrupt`] for damaged storage.
    pub fn vlen_repack(&self) -> Result<()> {
        let addr = self.addr;
        self.with_vector(|g, cache| {
            g.st.check_writable()?;
            let (_, dtype, dims, mut vm) = load_vlen(g, addr)?;
            let all = Selection::all(&dims);
            if dtype.takes_rows() {
                let rows = rows::read_rows_locked(g, addr, cache, &all)?;
                *cache = Cache::new(cache.capacity);
                let dead = vector::detach(&mut g.st, &mut vm)?;
                save_vm(g, addr, vm)?;
                g.st.free_structures(&dead)?;
                return rows::write_rows_locked(g, addr, cache, &all, &rows, true);
            }
            let (values, offsets) =
                ragged::read_ragged_locked(g, addr, cache, &all, |n| vec![0u8; n])?;
            let fill_items = fill::read_fill(g, addr, cache)?;
            *cache = Cache::new(cache.capacity);
            let dead = vector::detach(&mut g.st, &mut vm)?;
            if let Some(items) = fill_items {
                // The fill value first, in the new vector, and its new record.
                let rec = write_fill(&mut g.st, &mut vm, &dtype, &items)?;
                let mut h = Header::load(&mut g.st, addr)?;
                if let Some(m) = h.dataset.as_mut() {
                    m.fill = DatasetMeta::make_fill(&mut g.st, Some(rec))?;
                    m.vlen = Some(vm.clone());
                    h.save(&mut g.st, addr)?;
                }
            }
            save_vm(g, addr, vm)?;
            g.st.free_structures(&dead)?;
            // The old records point into the vector just destroyed.
            ragged::write_ragged_locked(g, addr, cache, &all, &values, &offsets, true)
        })
    }
}

/// The committed type a copied dataset takes: one copied already, or
/// (`Err`) its own, made with it (nameless until its link is copied).
pub(crate) type Committed = std::result::Result<NamedType, ()>;

/// Options `o` with the committed type `c` (see [`Committed`]).
pub(crate) fn with_committed(o: DatasetOptions, c: Option<&Committed>) -> DatasetOptions {
    match c {
        Some(Ok(t)) => o.committed(t),
        Some(Err(())) => o.commit_type(),
        None => o,
    }
}

/// Copy a dataset with variable-length values into `to` as `name` (for
/// repacking): same type, shape, layout and vector options, with only live
/// data, in element order. Works in bands of whole rows along the first
/// axis of about [`REPACK_STEP`] element bytes; `progress` gets element
/// bytes (16 per record) as fixed-length copies count them.
pub(crate) fn copy_dataset(
    d: &Dataset,
    to: &Group,
    name: &str,
    committed: Option<&Committed>,
    done: &mut u64,
    total: u64,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Dataset> {
    let dtype = d.dtype()?;
    let shape = d.shape()?;
    let info = d
        .vlen_info()?
        .ok_or_else(|| Error::invalid("not a variable-length dataset"))?;
    let v = VlenOptions::default()
        .chunk_bytes(info.chunk_bytes)
        .filters(&info.filters)
        .reuse_space(info.reuse_space);
    let mut o = DatasetOptions::new(dtype.clone(), &shape)
        .vlen(v)
        .track_order(d.attrs().track_order()?);
    if dtype.is_vlen() && !dtype.nests_vlen() {
        if let Some(items) = d.vlen_fill_value()? {
            o = o.fill_value(&items);
        }
    }
    if let Some(c) = d.chunks()? {
        o = o.chunks(&c).maxshape(&d.maxshape()?).filters(&d.filters()?);
    }
    o = with_committed(o.track_times(d.times()?.is_some()), committed);
    let nd = to.create_dataset(name, &o)?;
    if shape.iter().product::<u64>() == 0 {
        return Ok(nd);
    }
    let rows = dtype.takes_rows();
    let elem = dtype.size() as u64;
    // One band: unwritten ones stay unwritten, as fill-only chunks do.
    let copy = |sel: &Selection| -> Result<()> {
        if rows {
            let r = d.read_rows(sel)?;
            if r.iter().any(|&b| b != 0) {
                nd.write_rows(sel, &r)?;
            }
        } else {
            let (v, off) = d.read_ragged_bytes(sel)?;
            if off.last().is_some_and(|&e| e > 0) {
                nd.write_ragged_bytes(sel, &v, &off)?;
            }
        }
        Ok(())
    };
    if shape.is_empty() {
        copy(&Selection::all(&[]))?;
        *done += elem;
        progress(*done, total);
        return Ok(nd);
    }
    let row = shape[1..].iter().product::<u64>().max(1);
    let step = (REPACK_STEP / (row * elem)).clamp(1, shape[0]);
    let mut i = 0;
    while i < shape[0] {
        let j = (i + step).min(shape[0]);
        let mut ranges = vec![(i, j, 1)];
        ranges.extend(shape[1..].iter().map(|&n| (0, n, 1)));
        let sel = Selection::from_ranges(&ranges)?;
        copy(&sel)?;
        *done += sel.len() * elem;
        progress(*done, total);
        i = j;
    }
    Ok(nd)
}

/// Record bytes per band of [`copy_dataset`].
pub(crate) const REPACK_STEP: u64 = 4 << 20;
