//! Chunks as stored, for copies between files that never decompress and
//! recompress (HDF5 import and export).
//!
//! ```python
//! from arca import _native
//! for offset, size, mask in _native.chunks_stored(ds):
//!     data, mask = _native.chunk_read_raw(ds, offset)
//!     _native.chunk_write_raw(other, offset, data, mask)
//! ```

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::{cvt, PyDataset};

/// Every stored chunk as `(offset, stored bytes, filter mask)`.
#[pyfunction]
fn chunks_stored(py: Python<'_>, ds: &PyDataset) -> PyResult<Vec<(Vec<u64>, u64, u32)>> {
    let c = cvt(py.detach(|| ds.d.stored_chunks()))?;
    Ok(c.into_iter().map(|c| (c.offset, c.size, c.mask)).collect())
}

/// The stored bytes and filter mask of the chunk at `offset`, or None.
#[pyfunction]
fn chunk_read_raw<'py>(
    py: Python<'py>,
    ds: &PyDataset,
    offset: Vec<u64>,
) -> PyResult<Option<(Bound<'py, PyBytes>, u32)>> {
    let r = cvt(py.detach(|| ds.d.read_chunk_raw(&offset)))?;
    Ok(r.map(|(b, m)| (PyBytes::new(py, &b), m)))
}

/// Store `data` as the chunk at `offset`, as it is (mask 0: filtered;
/// 0xffffffff: the chunk's elements unfiltered).
#[pyfunction]
fn chunk_write_raw(
    py: Python<'_>,
    ds: &PyDataset,
    offset: Vec<u64>,
    data: &[u8],
    mask: u32,
) -> PyResult<()> {
    cvt(py.detach(|| ds.d.write_chunk_raw(&offset, data, mask)))
}

/// Add this module's functions to `arca._native`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(chunks_stored, m)?)?;
    m.add_function(wrap_pyfunction!(chunk_read_raw, m)?)?;
    m.add_function(wrap_pyfunction!(chunk_write_raw, m)?)
}
