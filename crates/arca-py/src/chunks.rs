//! Chunks as stored, for copies between files that never decompress and
//! recompress (HDF5 import and export).
//!
//! ```python
//! from arca import _native
//! for offset, size, mask in _native.chunks_stored(ds):
//!     data, mask = _native.chunk_read_stored(ds, offset)
//!     _native.chunk_write_stored(other, offset, data, mask)
//! ```

use numpy::PyArray1;
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
fn chunk_read_stored<'py>(
    py: Python<'py>,
    ds: &PyDataset,
    offset: Vec<u64>,
) -> PyResult<Option<(Bound<'py, PyBytes>, u32)>> {
    let r = cvt(py.detach(|| ds.d.read_chunk_stored(&offset)))?;
    Ok(r.map(|(b, m)| (PyBytes::new(py, &b), m)))
}

/// Store `data` as the chunk at `offset`, as it is (mask 0: filtered;
/// 0xffffffff: the chunk's elements unfiltered).
#[pyfunction]
fn chunk_write_stored(
    py: Python<'_>,
    ds: &PyDataset,
    offset: Vec<u64>,
    data: &[u8],
    mask: u32,
) -> PyResult<()> {
    cvt(py.detach(|| ds.d.write_chunk_stored(&offset, data, mask)))
}

/// Read a batch of chunks as stored: one uint8 array holding them back to
/// back, and for each offset `(stored bytes, mask)` or None.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn chunks_read_stored<'py>(
    py: Python<'py>,
    ds: &PyDataset,
    offsets: Vec<Vec<u64>>,
) -> PyResult<(Bound<'py, PyArray1<u8>>, Vec<Option<(usize, u32)>>)> {
    let (buf, found) = cvt(py.detach(|| ds.d.read_chunks_stored(&offsets)))?;
    Ok((PyArray1::from_vec(py, buf), found))
}

/// Read a batch of chunks as stored into `out` (a writable uint8 array the
/// caller reuses), back to back from its start; for each offset `(stored
/// bytes, mask)` or None.
#[pyfunction]
fn chunks_read_stored_into(
    py: Python<'_>,
    ds: &PyDataset,
    offsets: Vec<Vec<u64>>,
    mut out: numpy::PyReadwriteArray1<'_, u8>,
) -> PyResult<Vec<Option<(usize, u32)>>> {
    let buf = out
        .as_slice_mut()
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
    cvt(py.detach(|| ds.d.read_chunks_stored_into(&offsets, buf)))
}

/// Store a batch of chunks as given: `(offset, bytes, mask)` each.
#[pyfunction]
fn chunks_write_stored(
    py: Python<'_>,
    ds: &PyDataset,
    chunks: Vec<(Vec<u64>, Bound<'_, PyBytes>, u32)>,
) -> PyResult<()> {
    let items: Vec<(&[u64], &[u8], u32)> = chunks
        .iter()
        .map(|(o, b, m)| (o.as_slice(), b.as_bytes(), *m))
        .collect();
    cvt(py.detach(|| ds.d.write_chunks_stored(&items)))
}

/// Store a batch of chunks whose stored bytes lie in the file at `path`:
/// `(offset, position, length, mask)` each, copied file to file without
/// passing through Python.
#[pyfunction]
fn chunks_write_from_file(
    py: Python<'_>,
    ds: &PyDataset,
    path: std::path::PathBuf,
    chunks: Vec<(Vec<u64>, u64, u64, u32)>,
) -> PyResult<()> {
    let items: Vec<(&[u64], u64, u64, u32)> = chunks
        .iter()
        .map(|(o, p, l, m)| (o.as_slice(), *p, *l, *m))
        .collect();
    cvt(py.detach(|| {
        let src = std::fs::File::open(&path).map_err(|source| arca::Error::Io {
            context: format!("opening {}", path.display()),
            source,
        })?;
        ds.d.write_chunks_from_file(&src, &items)
    }))
}

/// Add this module's functions to `arca._native`.
/// A chunk's elements through arca's pipeline `filters` (`[(name, level)]`,
/// as `Dataset.filters()` lists them): `(stored bytes, mask)` for
/// `chunks_write_stored`. Compression without the file, for ranks of an MPI job.
#[pyfunction]
fn chunk_encode<'py>(
    py: Python<'py>,
    filters: Vec<(String, Option<i32>)>,
    elem: usize,
    plain: &[u8],
) -> PyResult<(Bound<'py, PyBytes>, u32)> {
    let fs = crate::parse_filters(&filters)?;
    let (out, mask) = cvt(py.detach(|| arca::encode_chunk(&fs, elem, plain)))?;
    Ok((PyBytes::new(py, &out), mask))
}

/// Reserve `nbytes` of the file for chunks of `ds` that other processes
/// write (see `Dataset::reserve_chunks`), inside a transaction: the
/// region's address.
#[pyfunction]
fn chunks_reserve(py: Python<'_>, ds: &PyDataset, nbytes: u64) -> PyResult<u64> {
    cvt(py.detach(|| ds.d.reserve_chunks(nbytes)))
}

/// Index the chunks written into the space reserved for `ds`:
/// `(offset, addr, length, mask, crc)` each (see `Dataset::seal_chunks`).
#[pyfunction]
#[allow(clippy::type_complexity)]
fn chunks_seal(
    py: Python<'_>,
    ds: &PyDataset,
    chunks: Vec<(Vec<u64>, u64, u64, u32, u32)>,
) -> PyResult<()> {
    let w: Vec<arca::WrittenChunk> = chunks
        .into_iter()
        .map(|(offset, addr, len, mask, crc)| arca::WrittenChunk {
            offset,
            addr,
            len,
            mask,
            crc,
        })
        .collect();
    cvt(py.detach(|| ds.d.seal_chunks(&w)))
}

/// A slab of an array cut along a chunk grid (see `arca::encode_slab`):
/// `(stored bytes of the whole chunks back to back, [(offset, length,
/// mask, crc)], [(start, count)] of the parts of other chunks)`. `slab`
/// is the box's elements as contiguous bytes; the GIL is released while
/// it is cut and compressed.
#[pyfunction]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn chunks_encode_slab<'py>(
    py: Python<'py>,
    filters: Vec<(String, Option<i32>)>,
    elem: usize,
    dims: Vec<u64>,
    chunk: Vec<u64>,
    start: Vec<u64>,
    count: Vec<u64>,
    slab: numpy::PyReadonlyArray1<'py, u8>,
    fill: &[u8],
) -> PyResult<(
    Bound<'py, PyArray1<u8>>,
    Vec<(Vec<u64>, u64, u32, u32)>,
    Vec<(Vec<u64>, Vec<u64>)>,
)> {
    let fs = crate::parse_filters(&filters)?;
    let plain = slab
        .as_slice()
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
    let e = cvt(
        py.detach(|| arca::encode_slab(&fs, elem, &dims, &chunk, &start, &count, plain, fill))
    )?;
    let chunks = e
        .chunks
        .into_iter()
        .map(|c| (c.offset, c.len, c.mask, c.crc))
        .collect();
    Ok((PyArray1::from_vec(py, e.bytes), chunks, e.partial))
}

/// Write `data` at `at` through the open descriptor `fd` and start its
/// writeback (see `arca::io::write_out`), without the GIL.
#[pyfunction]
fn write_out(
    py: Python<'_>,
    fd: i32,
    data: numpy::PyReadonlyArray1<'_, u8>,
    at: u64,
) -> PyResult<()> {
    use std::os::fd::FromRawFd;
    let bytes = data
        .as_slice()
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
    if fd < 0 {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "a negative descriptor",
        ));
    }
    // SAFETY: the caller's descriptor, borrowed for this call and never
    // closed here (ManuallyDrop).
    let file = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
    cvt(py.detach(|| arca::io::write_out(&file, bytes, at)))
}

/// A chunk's elements (`nbytes` bytes) from its stored bytes and mask:
/// `chunk_encode` undone, without the GIL.
#[pyfunction]
fn chunk_decode<'py>(
    py: Python<'py>,
    filters: Vec<(String, Option<i32>)>,
    elem: usize,
    stored: &[u8],
    mask: u32,
    nbytes: usize,
) -> PyResult<Bound<'py, PyBytes>> {
    let fs = crate::parse_filters(&filters)?;
    let out = cvt(py.detach(|| arca::decode_chunk(&fs, elem, stored, mask, nbytes)))?;
    Ok(PyBytes::new(py, &out))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(chunk_encode, m)?)?;
    m.add_function(wrap_pyfunction!(chunk_decode, m)?)?;
    m.add_function(wrap_pyfunction!(chunks_reserve, m)?)?;
    m.add_function(wrap_pyfunction!(write_out, m)?)?;
    m.add_function(wrap_pyfunction!(chunks_seal, m)?)?;
    m.add_function(wrap_pyfunction!(chunks_encode_slab, m)?)?;
    m.add_function(wrap_pyfunction!(chunks_stored, m)?)?;
    m.add_function(wrap_pyfunction!(chunk_read_stored, m)?)?;
    m.add_function(wrap_pyfunction!(chunk_write_stored, m)?)?;
    m.add_function(wrap_pyfunction!(chunks_read_stored, m)?)?;
    m.add_function(wrap_pyfunction!(chunks_read_stored_into, m)?)?;
    m.add_function(wrap_pyfunction!(chunks_write_stored, m)?)?;
    m.add_function(wrap_pyfunction!(chunks_write_from_file, m)?)
}
