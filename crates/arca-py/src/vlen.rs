//! Variable-length data for the Python package: dataset creation with byte
//! vector options, Arrow-style `(values, offsets)` reads and writes that
//! move whole buffers, and packing/unpacking of str/bytes objects done
//! here rather than one Python call per element.
//!
//! ```python
//! from arca import _native
//! ds = _native.vlen_create(f.root(), "s", "vlen:str", [3], None, None, [], None, [], False)
//! _native.vlen_write(ds, [0], [3], [1], np.frombuffer(b"abcdef", np.uint8), np.array([0, 1, 3, 6], np.uint64))
//! values, offsets = _native.vlen_read(ds, [0], [3], [1])
//! ```

use arca::{DatasetOptions, Datatype, Filter, Hdf5Filter, Selection, VlenOptions};
use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};

use crate::{cvt, PyDataset, PyGroup};

/// `(values, offsets)` as numpy arrays.
type Ragged<'py> = (Bound<'py, PyArray1<u8>>, Bound<'py, PyArray1<u64>>);

/// The elements of a 1-D array, which must be contiguous in memory.
fn contiguous<'a, T: numpy::Element>(a: &'a PyReadonlyArray1<'_, T>) -> PyResult<&'a [T]> {
    a.as_slice()
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Create a variable-length dataset: `dtype` is `vlen:str`, `vlen:bytes` or
/// `vlen:<base>`; `filters` apply to the records, `vlen_filters` to the
/// byte vector. `fill` is the fill value's items (native order, UTF-8 for
/// strings), shown where nothing was written. `path` None: a dataset
/// without a name; `track_times` records when it was made and changed.
/// `hdf5_filters`, as h5py's `get_filter` lists them, are the records'
/// pipeline instead of `filters_` (HDF5's byte codecs arca encodes: what
/// an imported variable-length dataset keeps).
#[pyfunction]
#[pyo3(signature = (group, path, dtype, shape, maxshape, chunks, filters_, vlen_chunk, vlen_filters, reuse, track_order = false, committed = None, fill = None, track_times = false, hdf5_filters = vec![]))]
#[allow(clippy::too_many_arguments)]
fn vlen_create(
    py: Python<'_>,
    group: &PyGroup,
    path: Option<&str>,
    dtype: &str,
    shape: Vec<u64>,
    maxshape: Option<Vec<Option<u64>>>,
    chunks: Option<Vec<u64>>,
    filters_: Vec<(String, Option<i32>)>,
    vlen_chunk: Option<u64>,
    vlen_filters: Vec<(String, Option<i32>)>,
    reuse: bool,
    track_order: bool,
    committed: Option<&crate::named_type::PyNamedType>,
    fill: Option<Vec<u8>>,
    track_times: bool,
    hdf5_filters: Vec<crate::H5FilterTuple>,
) -> PyResult<PyDataset> {
    let dt = cvt(Datatype::parse(dtype))?;
    if !dt.has_vlen() {
        return Err(PyTypeError::new_err(format!(
            "{dtype} holds no variable-length values"
        )));
    }
    let mut v = VlenOptions::default()
        .filters(&crate::parse_filters(&vlen_filters)?)
        .reuse_space(reuse);
    if let Some(c) = vlen_chunk {
        v = v.chunk_bytes(c);
    }
    let mut o = DatasetOptions::new(dt, &shape)
        .vlen(v)
        .track_order(track_order)
        .track_times(track_times);
    if let Some(m) = maxshape {
        o = o.maxshape(&m);
    }
    if let Some(c) = chunks {
        o = o.chunks(&c);
    }
    let mut fs = crate::parse_filters(&filters_)?;
    fs.extend(hdf5_filters.into_iter().map(|(id, flags, params, label)| {
        Filter::Hdf5(Hdf5Filter {
            id,
            flags,
            label,
            params,
        })
    }));
    if !fs.is_empty() {
        o = o.filters(&fs);
    }
    if let Some(t) = committed {
        o = o.committed(&t.t);
    }
    if let Some(f) = fill {
        o = o.fill_value(&f);
    }
    let d = py.detach(|| match path {
        Some(p) => group.g.create_dataset(p, &o),
        None => group.g.create_anonymous_dataset(&o),
    });
    Ok(PyDataset::new(cvt(d)?))
}

/// The fill value's items of a variable-length dataset (native order,
/// UTF-8 for strings), or None when unwritten elements are empty.
#[pyfunction]
fn vlen_fill<'py>(py: Python<'py>, ds: &PyDataset) -> PyResult<Option<Bound<'py, PyBytes>>> {
    Ok(cvt(py.detach(|| ds.d.vlen_fill_value()))?.map(|b| PyBytes::new(py, &b)))
}

/// Write `values` (flat uint8, native order) with Arrow-style `offsets` in
/// items (uint64, one more than the selected elements) to a hyperslab.
#[pyfunction]
fn vlen_write(
    py: Python<'_>,
    ds: &PyDataset,
    start: Vec<u64>,
    count: Vec<u64>,
    step: Vec<u64>,
    values: PyReadonlyArray1<'_, u8>,
    offsets: PyReadonlyArray1<'_, u64>,
) -> PyResult<()> {
    let sel = cvt(Selection::new(start, count, step))?;
    let v = contiguous(&values)?;
    let o = contiguous(&offsets)?;
    cvt(py.detach(|| ds.d.write_ragged_bytes(&sel, v, o)))
}

/// Read a hyperslab as `(values uint8, offsets uint64)`; the arrays take
/// over the buffers the core filled, without a copy.
#[pyfunction]
fn vlen_read<'py>(
    py: Python<'py>,
    ds: &PyDataset,
    start: Vec<u64>,
    count: Vec<u64>,
    step: Vec<u64>,
) -> PyResult<Ragged<'py>> {
    let sel = cvt(Selection::new(start, count, step))?;
    let (v, o) = cvt(py.detach(|| ds.d.read_ragged_bytes_with(&sel, read_buffer)))?;
    Ok((PyArray1::from_vec(py, v), PyArray1::from_vec(py, o)))
}

/// Write elements of a compound with variable-length members to a
/// hyperslab from one buffer: the elements, whose members' records
/// (offset, length) point into the values that follow them.
#[pyfunction]
fn rows_write(
    py: Python<'_>,
    ds: &PyDataset,
    start: Vec<u64>,
    count: Vec<u64>,
    step: Vec<u64>,
    rows: PyReadonlyArray1<'_, u8>,
) -> PyResult<()> {
    let sel = cvt(Selection::new(start, count, step))?;
    let r = contiguous(&rows)?;
    cvt(py.detach(|| ds.d.write_rows(&sel, r)))
}

/// Read a hyperslab of such elements as one buffer (as `rows_write` takes).
#[pyfunction]
fn rows_read<'py>(
    py: Python<'py>,
    ds: &PyDataset,
    start: Vec<u64>,
    count: Vec<u64>,
    step: Vec<u64>,
) -> PyResult<Bound<'py, PyArray1<u8>>> {
    let sel = cvt(Selection::new(start, count, step))?;
    let r = cvt(py.detach(|| ds.d.read_rows(&sel)))?;
    Ok(PyArray1::from_vec(py, r))
}

/// A zeroed buffer of `n` bytes for a large read. The allocator maps it
/// fresh and untouched; asking for transparent huge pages makes filling it
/// cost one page fault per 2 MiB rather than per 4 KiB (numpy asks the same
/// for its own large arrays), which is most of the cost of a cached read.
fn read_buffer(n: usize) -> Vec<u8> {
    let v = vec![0u8; n];
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        if n >= 4 * HUGE {
            let start = v.as_ptr() as usize;
            let (a, b) = (start.next_multiple_of(HUGE), (start + n) & !(HUGE - 1));
            if b > a {
                // SAFETY: [a, b) lies inside the allocation `v` owns; the
                // advice changes how its pages are backed, never their
                // contents, and a failure leaves them as they were.
                unsafe {
                    libc::madvise(a as *mut libc::c_void, b - a, libc::MADV_HUGEPAGE);
                }
            }
        }
    }
    v
}

/// Pack a list of `str` (as UTF-8) and `bytes` items into `(values, offsets)`.
#[pyfunction]
fn vlen_pack<'py>(py: Python<'py>, items: &Bound<'py, PyList>) -> PyResult<Ragged<'py>> {
    let mut values: Vec<u8> = Vec::new();
    let mut offsets: Vec<u64> = Vec::with_capacity(items.len() + 1);
    offsets.push(0);
    for it in items.iter() {
        if let Ok(s) = it.cast::<PyString>() {
            values.extend_from_slice(s.to_cow()?.as_bytes());
        } else if let Ok(b) = it.cast::<PyBytes>() {
            values.extend_from_slice(b.as_bytes());
        } else {
            return Err(PyTypeError::new_err(format!(
                "cannot store {} in a string dataset; use str or bytes",
                it.get_type().name()?
            )));
        }
        offsets.push(values.len() as u64);
    }
    Ok((
        PyArray1::from_vec(py, values),
        PyArray1::from_vec(py, offsets),
    ))
}

/// Unpack `(values, offsets)` into a list of `str` (`as_str`) or `bytes`.
#[pyfunction]
fn vlen_unpack<'py>(
    py: Python<'py>,
    values: PyReadonlyArray1<'py, u8>,
    offsets: PyReadonlyArray1<'py, u64>,
    as_str: bool,
) -> PyResult<Bound<'py, PyList>> {
    let v = contiguous(&values)?;
    let o = contiguous(&offsets)?;
    let mut out: Vec<Bound<'py, PyAny>> = Vec::with_capacity(o.len().saturating_sub(1));
    for w in o.windows(2) {
        let b = v
            .get(w[0] as usize..w[1] as usize)
            .ok_or_else(|| PyValueError::new_err("offsets outside the values"))?;
        out.push(if as_str {
            let s = std::str::from_utf8(b)
                .map_err(|_| PyValueError::new_err("stored string is not valid UTF-8"))?;
            PyString::new(py, s).into_any()
        } else {
            PyBytes::new(py, b).into_any()
        });
    }
    PyList::new(py, out)
}

/// How the byte vector is stored, as a dict (None for fixed-length data).
#[pyfunction]
fn vlen_info<'py>(py: Python<'py>, ds: &PyDataset) -> PyResult<Option<Bound<'py, PyDict>>> {
    let Some(i) = cvt(py.detach(|| ds.d.vlen_info()))? else {
        return Ok(None);
    };
    let d = PyDict::new(py);
    d.set_item("vector_bytes", i.vector_bytes)?;
    d.set_item("live_bytes", i.live_bytes)?;
    d.set_item("stored_bytes", i.stored_bytes)?;
    d.set_item("chunk_logical_bytes", i.chunk_logical_bytes)?;
    d.set_item("chunks", i.chunks)?;
    d.set_item("chunk_bytes", i.chunk_bytes)?;
    d.set_item("compression_ratio", i.compression_ratio())?;
    let fs: Vec<(String, Option<i32>)> = i
        .filters
        .iter()
        .map(|f| (f.name().into_owned(), f.level()))
        .collect();
    d.set_item("filters", fs)?;
    d.set_item("reuse_space", i.reuse_space)?;
    d.set_item("free_bytes", i.free_bytes)?;
    Ok(Some(d))
}

/// Rewrite the byte vector with only live data.
#[pyfunction]
fn vlen_repack(py: Python<'_>, ds: &PyDataset) -> PyResult<()> {
    cvt(py.detach(|| ds.d.vlen_repack()))
}

/// Grow an unfiltered vector by `nbytes` for writers that put the bytes in
/// the file themselves: `(offset, addr, len, chunk_bytes)`.
#[pyfunction]
fn vlen_extend(py: Python<'_>, ds: &PyDataset, nbytes: u64) -> PyResult<(u64, u64, u64, u64)> {
    let e = cvt(py.detach(|| ds.d.vlen_extend(nbytes)))?;
    Ok((e.offset, e.addr, e.len, e.chunk_bytes))
}

/// Checksum an extent's chunks: `crcs` are `(chunk number, crc)` already
/// computed by the writers; the rest are read back.
#[pyfunction]
fn vlen_seal(
    py: Python<'_>,
    ds: &PyDataset,
    extent: (u64, u64, u64, u64),
    crcs: Vec<(u64, u32)>,
) -> PyResult<()> {
    let e = arca::VlenExtent {
        offset: extent.0,
        addr: extent.1,
        len: extent.2,
        chunk_bytes: extent.3,
    };
    cvt(py.detach(|| ds.d.vlen_seal(&e, &crcs)))
}

/// `(addr, bytes)` of a contiguous variable-length dataset's records (journaled
/// first), or None when they are chunked.
#[pyfunction]
fn vlen_record_extent(py: Python<'_>, ds: &PyDataset) -> PyResult<Option<(u64, u64)>> {
    cvt(py.detach(|| ds.d.vlen_record_extent()))
}

/// Write `(offset, length)` records (flat uint64 pairs) to a hyperslab.
#[pyfunction]
fn vlen_write_records(
    py: Python<'_>,
    ds: &PyDataset,
    start: Vec<u64>,
    count: Vec<u64>,
    step: Vec<u64>,
    records: PyReadonlyArray1<'_, u64>,
) -> PyResult<()> {
    let sel = cvt(Selection::new(start, count, step))?;
    let r = contiguous(&records)?;
    cvt(py.detach(|| ds.d.write_vlen_records(&sel, r)))
}

/// CRC32C of a buffer, as arca's chunk checksums.
#[pyfunction]
#[pyo3(name = "crc32c")]
fn crc32c_of(py: Python<'_>, data: PyReadonlyArray1<'_, u8>) -> PyResult<u32> {
    let b = contiguous(&data)?;
    Ok(py.detach(|| ::crc32c::crc32c(b)))
}

/// Whether every element of `(values, offsets)` is valid UTF-8.
#[pyfunction]
fn vlen_check_utf8(
    py: Python<'_>,
    values: PyReadonlyArray1<'_, u8>,
    offsets: PyReadonlyArray1<'_, u64>,
) -> PyResult<bool> {
    let v = contiguous(&values)?;
    let o = contiguous(&offsets)?;
    Ok(py.detach(|| {
        o.windows(2).all(|w| {
            w[0] <= w[1]
                && v.get(w[0] as usize..w[1] as usize)
                    .is_some_and(|s| std::str::from_utf8(s).is_ok())
        })
    }))
}

/// Add this module's functions to `arca._native`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(vlen_create, m)?)?;
    m.add_function(wrap_pyfunction!(vlen_write, m)?)?;
    m.add_function(wrap_pyfunction!(vlen_read, m)?)?;
    m.add_function(wrap_pyfunction!(rows_read, m)?)?;
    m.add_function(wrap_pyfunction!(rows_write, m)?)?;
    m.add_function(wrap_pyfunction!(vlen_pack, m)?)?;
    m.add_function(wrap_pyfunction!(vlen_unpack, m)?)?;
    m.add_function(wrap_pyfunction!(vlen_info, m)?)?;
    m.add_function(wrap_pyfunction!(vlen_fill, m)?)?;
    m.add_function(wrap_pyfunction!(vlen_repack, m)?)?;
    m.add_function(wrap_pyfunction!(vlen_extend, m)?)?;
    m.add_function(wrap_pyfunction!(vlen_seal, m)?)?;
    m.add_function(wrap_pyfunction!(vlen_write_records, m)?)?;
    m.add_function(wrap_pyfunction!(vlen_record_extent, m)?)?;
    m.add_function(wrap_pyfunction!(crc32c_of, m)?)?;
    m.add_function(wrap_pyfunction!(vlen_check_utf8, m)?)?;
    Ok(())
}
