//! How a variable-length dataset's byte vector is stored: the options a
//! dataset is created with, and the vector description built from them.

use crate::chunk::Cache;
use crate::error::{Error, Result};
use crate::filter::Filter;
use crate::format::chunk_index::MAX_CHUNK_BYTES;
use crate::format::datatype::{Datatype, VLEN_RECORD};
use crate::format::vlen_vector::push_record;
use crate::store::Store;
use crate::vlen::vector::{self, VecMeta};

/// Default bytes per chunk of a byte vector.
pub const DEFAULT_VLEN_CHUNK: u64 = 1 << 20;

/// How a variable-length dataset's byte vector is stored; set through
/// [`crate::DatasetOptions::vlen`].
///
/// ```
/// use arca::{Datatype, DatasetOptions, File, Filter, VlenOptions};
/// let f = File::in_memory().unwrap();
/// let opts = DatasetOptions::new(Datatype::VlenStr, &[3]).vlen(
///     VlenOptions::default().chunk_bytes(1 << 16).filters(&[Filter::Zstd(3)]).reuse_space(true),
/// );
/// let ds = f.root().create_dataset("names", &opts).unwrap();
/// ds.write_strings(&arca::Selection::all(&[3]), &["a", "bb", "ccc"]).unwrap();
/// assert!(ds.vlen_info().unwrap().unwrap().reuse_space);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VlenOptions {
    pub(crate) chunk_bytes: u64,
    pub(crate) filters: Vec<Filter>,
    pub(crate) reuse: bool,
}

impl Default for VlenOptions {
    fn default() -> Self {
        VlenOptions {
            chunk_bytes: DEFAULT_VLEN_CHUNK,
            filters: vec![],
            reuse: false,
        }
    }
}

impl VlenOptions {
    /// Bytes per chunk of the vector (rounded down to whole items; default 1 MiB).
    pub fn chunk_bytes(mut self, bytes: u64) -> Self {
        self.chunk_bytes = bytes;
        self
    }
    /// The vector's filter pipeline (default none).
    pub fn filters(mut self, filters: &[Filter]) -> Self {
        self.filters = filters.to_vec();
        self
    }
    /// Keep a list of ranges freed by overwrites and fill them before
    /// appending (default off: everything is appended).
    pub fn reuse_space(mut self, on: bool) -> Self {
        self.reuse = on;
        self
    }

    /// The vector description for a dataset of `dtype`.
    pub(crate) fn build(&self, dtype: &Datatype) -> Result<VecMeta> {
        let item = dtype
            .vector_item()
            .ok_or_else(|| Error::invalid("vector options need a variable-length type"))?
            as u64;
        Filter::validate_pipeline(&self.filters)?;
        if Filter::is_hdf5(&self.filters) {
            return Err(Error::invalid(
                "a byte vector takes arca's own filters, not HDF5's",
            ));
        }
        let chunk = self.chunk_bytes / item * item;
        if chunk == 0 || chunk > MAX_CHUNK_BYTES {
            return Err(Error::invalid(format!(
                "vector chunk of {} bytes: must hold one item and at most 2 GiB",
                self.chunk_bytes
            )));
        }
        Ok(VecMeta::new(chunk, self.filters.clone(), self.reuse))
    }
}

/// Append the fill value `items` (native byte order) to the vector and
/// return its record, encoded as the fill message holds it.
pub(crate) fn write_fill(
    st: &mut Store,
    vm: &mut VecMeta,
    dtype: &Datatype,
    items: &[u8],
) -> Result<Vec<u8>> {
    let item = dtype
        .base()
        .map(|b| b.size())
        .ok_or_else(|| Error::invalid(format!("{dtype} is not variable-length")))?;
    if !items.len().is_multiple_of(item) {
        return Err(Error::invalid(format!(
            "a fill value of {} bytes is not whole items of {item} bytes",
            items.len()
        )));
    }
    if *dtype == Datatype::VlenStr && std::str::from_utf8(items).is_err() {
        return Err(Error::invalid("fill value is not valid UTF-8"));
    }
    let mut stored = items.to_vec();
    if let Some(b) = dtype.base().filter(|b| b.needs_swap()) {
        b.swap(&mut stored);
    }
    let at = vm.len;
    // A cache of its own, emptied before it goes: the dataset's cache is
    // not made yet.
    let mut cache = Cache::new(0);
    vector::write(st, &mut cache, vm, item, at, &stored)?;
    vector::flush(st, &mut cache, vm, item)?;
    let mut rec = Vec::with_capacity(VLEN_RECORD);
    push_record(&mut rec, at, stored.len() as u64);
    Ok(rec)
}
