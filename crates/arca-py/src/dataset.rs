//! `_native.Dataset`: a dataset's metadata and its elements read and
//! written as flat `uint8` buffers (the bytes of the elements, every
//! number in native order).

use std::sync::OnceLock;

use arca::{Datatype, FillTime, Filter, Selection, StorageLayout};
use numpy::{PyArray1, PyArrayMethods, PyReadonlyArray1, PyReadwriteArray1};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyBytes;

use crate::attrs::PyAttributes;
use crate::error::err;
use crate::{cvt, H5FilterTuple};

/// Bytes needed for `count` elements of `elem` bytes, refusing overflow.
fn selection_bytes(count: &[u64], elem: usize) -> PyResult<usize> {
    count
        .iter()
        .try_fold(elem as u64, |a, &c| a.checked_mul(c))
        .and_then(|b| usize::try_from(b).ok())
        .filter(|&b| b <= isize::MAX as usize)
        .ok_or_else(|| pyo3::exceptions::PyValueError::new_err("selection too large"))
}

/// A new `uint8` array of `n` bytes for a read to fill completely.
/// Allocated through `numpy.empty` — not zeroed, since the read overwrites
/// every byte and zeroing a large buffer costs a pass over memory — so
/// that running out of memory is a `MemoryError`, not a panic.
fn alloc_bytes(py: Python<'_>, n: usize) -> PyResult<Bound<'_, PyArray1<u8>>> {
    static EMPTY: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let empty = EMPTY.get_or_try_init(py, || {
        Ok::<_, PyErr>(py.import("numpy")?.getattr("empty")?.unbind())
    })?;
    let arr = empty.bind(py).call1((n, "u1"))?;
    Ok(arr.cast_into::<PyArray1<u8>>()?)
}

/// Refuse a selection that does not fit `shape`.
fn check_bounds(sel: &Selection, shape: &[u64]) -> PyResult<()> {
    let bad = |m: String| err(arca::Error::InvalidArgument(m));
    if sel.shape().len() != shape.len() {
        return Err(bad(format!(
            "selection has rank {}, dataset has rank {}",
            sel.shape().len(),
            shape.len()
        )));
    }
    for (d, &n) in shape.iter().enumerate() {
        let c = sel.shape()[d];
        if c == 0 {
            continue;
        }
        let last = (c - 1)
            .checked_mul(sel.step()[d])
            .and_then(|x| x.checked_add(sel.start()[d]));
        if last.is_none_or(|l| l >= n) {
            return Err(bad(format!(
                "selection out of bounds in dimension {d} (size {n})"
            )));
        }
    }
    Ok(())
}

/// A dataset; mirrors `arca::Dataset`. Element data is passed as flat
/// `uint8` arrays in native byte order.
///
/// ```python
/// ds = f.root().dataset("d")
/// buf = ds.read([0], [4], [1])          # uint8 array of 4 * itemsize bytes
/// x = buf.view(np.dtype(ds.dtype).newbyteorder("="))
/// ```
#[pyclass(module = "arca._native", name = "Dataset", frozen)]
pub(crate) struct PyDataset {
    pub(crate) d: arca::Dataset,
    // A dataset's type never changes, so it is loaded once.
    dtype: OnceLock<Datatype>,
    // The element dtype reads through `read_key` produce, once registered.
    fast: OnceLock<crate::fastread::Fast>,
}

impl PyDataset {
    pub(crate) fn new(d: arca::Dataset) -> Self {
        PyDataset {
            d,
            dtype: OnceLock::new(),
            fast: OnceLock::new(),
        }
    }

    fn datatype(&self, py: Python<'_>) -> PyResult<&Datatype> {
        if let Some(t) = self.dtype.get() {
            return Ok(t);
        }
        let t = cvt(py.detach(|| self.d.dtype()))?;
        Ok(self.dtype.get_or_init(|| t))
    }
}

#[pymethods]
impl PyDataset {
    /// The object's identity in its file (equal for all its names).
    #[getter]
    fn id(&self) -> u64 {
        self.d.id()
    }

    /// Absolute path.
    #[getter]
    fn path(&self) -> &str {
        self.d.path()
    }

    /// Last path component.
    #[getter]
    fn name(&self) -> &str {
        self.d.name()
    }

    /// This dataset's attributes.
    fn attrs(&self) -> PyAttributes {
        PyAttributes { a: self.d.attrs() }
    }

    /// The committed datatype the dataset was made with, or None.
    fn committed_type(&self, py: Python<'_>) -> PyResult<Option<crate::named_type::PyNamedType>> {
        let t = cvt(py.detach(|| self.d.committed_type()))?;
        Ok(t.map(|t| crate::named_type::PyNamedType { t }))
    }

    /// Current extent.
    fn shape(&self, py: Python<'_>) -> PyResult<Option<Vec<u64>>> {
        cvt(py.detach(|| self.d.extent()))
    }

    /// Largest extent; `None` entries are unlimited.
    fn maxshape(&self, py: Python<'_>) -> PyResult<Vec<Option<u64>>> {
        cvt(py.detach(|| self.d.maxshape()))
    }

    /// The stored element type as a numpy type string (e.g. `>i4`).
    fn dtype(&self, py: Python<'_>) -> PyResult<String> {
        Ok(self.datatype(py)?.to_numpy_str())
    }

    /// Chunk shape, or `None` when contiguous or compact.
    fn chunks(&self, py: Python<'_>) -> PyResult<Option<Vec<u64>>> {
        cvt(py.detach(|| self.d.chunks()))
    }

    /// `"compact"`, `"contiguous"`, `"chunked"`, `"virtual"` or
    /// `"external"`.
    fn layout(&self, py: Python<'_>) -> PyResult<&'static str> {
        Ok(match cvt(py.detach(|| self.d.layout()))? {
            StorageLayout::Compact => "compact",
            StorageLayout::Contiguous => "contiguous",
            StorageLayout::Chunked => "chunked",
            StorageLayout::Virtual => "virtual",
            StorageLayout::External => "external",
        })
    }

    /// An external dataset's segments, `[(file name, offset, size)]` (size
    /// `2**64 - 1` for unlimited); empty for other datasets.
    fn external_segments(&self, py: Python<'_>) -> PyResult<Vec<(String, u64, u64)>> {
        let segs = cvt(py.detach(|| self.d.external_segments()))?;
        Ok(segs
            .into_iter()
            .map(|s| (s.name, s.offset, s.size))
            .collect())
    }

    /// This dataset with relative external file names looked for under
    /// `prefix` (`${ORIGIN}`: the file's directory).
    fn with_external_prefix(&self, prefix: &str) -> PyDataset {
        PyDataset::new(self.d.with_external_prefix(prefix))
    }

    /// The external prefix of this handle, if one was given.
    fn external_prefix(&self) -> Option<String> {
        self.d.external_prefix().map(str::to_string)
    }

    /// A virtual dataset's mappings: `[(file, dataset, virtual selection,
    /// source selection)]`, selections as `regions.rs` gives them.
    fn virtual_mappings<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<Vec<crate::regions::Mapping<'py>>> {
        let maps = cvt(py.detach(|| self.d.virtual_mappings()))?;
        maps.into_iter()
            .map(|m| {
                Ok((
                    m.file,
                    m.dataset,
                    crate::regions::from_region(py, &m.virtual_region)?,
                    crate::regions::from_region(py, &m.source_region)?,
                ))
            })
            .collect()
    }

    /// The filter pipeline as `[(name, level or None)]`.
    fn filters(&self, py: Python<'_>) -> PyResult<Vec<(String, Option<i32>)>> {
        Ok(cvt(py.detach(|| self.d.filters()))?
            .iter()
            .map(|f| (f.name().into_owned(), f.level()))
            .collect())
    }

    /// An HDF5 pipeline as `[(id, flags, values, name)]` (h5py's
    /// `get_filter` order); empty for arca's own filters.
    fn hdf5_filters(&self, py: Python<'_>) -> PyResult<Vec<H5FilterTuple>> {
        Ok(cvt(py.detach(|| self.d.filters()))?
            .into_iter()
            .filter_map(|f| match f {
                Filter::Hdf5(h) => Some((h.id, h.flags, h.params, h.label)),
                _ => None,
            })
            .collect())
    }

    /// The fill value: one element, native byte order.
    fn fill_value<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let f = cvt(py.detach(|| self.d.fill_value()))?;
        Ok(PyBytes::new(py, &f))
    }

    /// Whether a fill value was given at creation.
    fn has_fill_value(&self, py: Python<'_>) -> PyResult<bool> {
        cvt(py.detach(|| self.d.has_fill_value()))
    }

    /// HDF5's fill time: `"ifset"`, `"alloc"` or `"never"`.
    fn fill_time(&self, py: Python<'_>) -> PyResult<&'static str> {
        Ok(match cvt(py.detach(|| self.d.fill_time()))? {
            FillTime::IfSet => "ifset",
            FillTime::Alloc => "alloc",
            FillTime::Never => "never",
        })
    }

    /// Bytes of file space holding elements.
    fn storage_size(&self, py: Python<'_>) -> PyResult<u64> {
        cvt(py.detach(|| self.d.storage_size()))
    }

    /// Number of elements.
    fn len(&self, py: Python<'_>) -> PyResult<u64> {
        cvt(py.detach(|| self.d.len()))
    }

    /// Let [`PyDataset::read_key`] read into arrays of `dtype` (the
    /// element type in native byte order, its bytes exactly as the
    /// elements' own); false, and nothing registered, when its item size
    /// is not the stored element's.
    ///
    /// ```python
    /// ds._id.fast_reads(np.dtype("<f8"))  # True
    /// ```
    fn fast_reads(&self, py: Python<'_>, dtype: Bound<'_, PyAny>) -> PyResult<bool> {
        let itemsize: usize = dtype.getattr("itemsize")?.extract()?;
        // Reads write raw element bytes: never into object pointers.
        let objects: bool = dtype.getattr("hasobject")?.extract()?;
        let t = self.datatype(py)?;
        if objects || itemsize != t.size() || t.is_vlen() || t.has_vlen() {
            return Ok(false);
        }
        let _ = self.fast.set(crate::fastread::Fast {
            dtype: dtype.unbind(),
            itemsize,
        });
        Ok(true)
    }

    /// Read `key` (numpy indexing: integers, slices, `...`, one increasing
    /// index list) into a new array of the registered dtype, or a numpy
    /// scalar when every axis is an integer; `None` when the key is not one
    /// this path takes (or no dtype was registered): the caller's general
    /// path reads it.
    ///
    /// ```python
    /// ds._id.read_key(np.s_[500:600])   # array of 100 elements
    /// ds._id.read_key("x")              # None
    /// ```
    fn read_key<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let Some(fast) = self.fast.get() else {
            return Ok(None);
        };
        let Some(shape) = cvt(py.detach(|| self.d.extent()))? else {
            return Ok(None);
        };
        crate::fastread::read_key(py, &self.d, fast, &shape, key)
    }

    /// Read the hyperslab `start/count/step` into a new flat `uint8` array.
    fn read<'py>(
        &self,
        py: Python<'py>,
        start: Vec<u64>,
        count: Vec<u64>,
        step: Vec<u64>,
    ) -> PyResult<Bound<'py, PyArray1<u8>>> {
        let sel = cvt(Selection::new(start, count, step))?;
        let elem = self.datatype(py)?.size();
        // Check bounds before allocating, so a bad selection cannot ask for
        // an enormous buffer.
        check_bounds(&sel, &cvt(py.detach(|| self.d.shape()))?)?;
        let n = selection_bytes(sel.shape(), elem)?;
        let arr = alloc_bytes(py, n)?;
        {
            let mut rw = arr.readwrite();
            let buf = rw
                .as_slice_mut()
                .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
            cvt(py.detach(|| self.d.read_bytes(&sel, buf)))?;
        }
        Ok(arr)
    }

    /// Read the hyperslab into `out`, a C-contiguous `uint8` array of exactly
    /// the selection's byte size.
    fn read_into(
        &self,
        py: Python<'_>,
        start: Vec<u64>,
        count: Vec<u64>,
        step: Vec<u64>,
        mut out: PyReadwriteArray1<'_, u8>,
    ) -> PyResult<()> {
        let sel = cvt(Selection::new(start, count, step))?;
        let buf = out
            .as_slice_mut()
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
        cvt(py.detach(|| self.d.read_bytes(&sel, buf)))
    }

    /// Write a C-contiguous flat `uint8` array (native byte order) to the hyperslab.
    fn write(
        &self,
        py: Python<'_>,
        start: Vec<u64>,
        count: Vec<u64>,
        step: Vec<u64>,
        data: PyReadonlyArray1<'_, u8>,
    ) -> PyResult<()> {
        let sel = cvt(Selection::new(start, count, step))?;
        let buf = data
            .as_slice()
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
        cvt(py.detach(|| self.d.write_bytes(&sel, buf)))
    }

    /// Change the extent within maxshape.
    fn resize(&self, py: Python<'_>, shape: Vec<u64>) -> PyResult<()> {
        cvt(py.detach(|| self.d.resize(&shape)))
    }

    /// Set this dataset's chunk cache size in bytes.
    fn set_chunk_cache(&self, bytes: usize) -> PyResult<()> {
        cvt(self.d.set_chunk_cache(bytes))
    }
}
