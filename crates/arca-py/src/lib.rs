//! `arca._native`: the thin native layer under the `arca` Python package.
//!
//! Every class here mirrors one type of the Rust crate one-to-one ([`arca::File`],
//! [`arca::Group`], [`arca::Dataset`], [`arca::Attributes`]); the h5py-like
//! behaviour (numpy indexing, dtype handling, mapping semantics) lives in the
//! pure-Python package `python/arca/`. Element data crosses the boundary as
//! flat `uint8` numpy arrays so that reads land directly in the array the
//! caller gets back and writes read straight from the caller's buffer; the GIL
//! is released for every call that touches storage.
//!
//! ```python
//! from arca import _native
//! f = _native.File("x.arca", "w")
//! ds = f.root().create_dataset("d", "<f8", [4], None, None, [], None)
//! ds.write([0], [4], [1], np.arange(4.0).view(np.uint8))
//! f.close()
//! ```

mod chunks;
mod error;
mod fileobj;
mod pools;
mod types;
mod vlen;

use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

use arca::{
    AttrValue, DatasetOptions, Datatype, Filter, Hdf5Filter, Mode, ObjectKind, Selection, Stat,
    StorageLayout,
};
use numpy::{PyArray1, PyArrayMethods, PyReadonlyArray1, PyReadwriteArray1};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict};

use error::{err, open_err, ArcaError, CorruptError, LockedError, NeedsRecoveryError};
use error::{PoisonedError, ReadOnlyError, UnsupportedError};

/// Turn a core result into a Python one, mapping the error.
fn cvt<T>(r: arca::Result<T>) -> PyResult<T> {
    r.map_err(err)
}

fn kind_name(k: ObjectKind) -> &'static str {
    match k {
        ObjectKind::Group => "group",
        ObjectKind::Dataset => "dataset",
    }
}

fn stat_dict<'py>(py: Python<'py>, s: &Stat) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("groups", s.groups)?;
    d.set_item("datasets", s.datasets)?;
    d.set_item("attributes", s.attributes)?;
    d.set_item("chunks", s.chunks)?;
    d.set_item("file_bytes", s.file_bytes)?;
    d.set_item("superblock_bytes", s.superblock_bytes)?;
    d.set_item("metadata_bytes", s.metadata_bytes)?;
    d.set_item("data_bytes", s.data_bytes)?;
    d.set_item("data_logical_bytes", s.data_logical_bytes)?;
    d.set_item("compact_bytes", s.compact_bytes)?;
    d.set_item("unused_bytes", s.unused_bytes)?;
    Ok(d)
}

/// Parse a layout name: `compact`, `contiguous` or `chunked`.
fn parse_layout(name: &str) -> PyResult<StorageLayout> {
    match name {
        "compact" => Ok(StorageLayout::Compact),
        "contiguous" => Ok(StorageLayout::Contiguous),
        "chunked" => Ok(StorageLayout::Chunked),
        _ => Err(pyo3::exceptions::PyValueError::new_err(format!(
            "layout {name:?}: use 'compact', 'contiguous' or 'chunked'"
        ))),
    }
}

/// An HDF5 filter as h5py's `get_filter` gives it: `(id, flags, values, name)`.
type H5FilterTuple = (u16, u16, Vec<u32>, String);

/// Parse a filter given as `(name, level)`: `shuffle`, `gzip`, `zstd`, `lz4`.
/// A pipeline as `Dataset.filters()` lists it: `[(name, level)]`.
pub(crate) fn parse_filters(fs: &[(String, Option<i32>)]) -> PyResult<Vec<Filter>> {
    fs.iter().map(|(n, l)| parse_filter(n, *l)).collect()
}

pub(crate) fn parse_filter(name: &str, level: Option<i32>) -> PyResult<Filter> {
    let bad = |m: String| pyo3::exceptions::PyValueError::new_err(m);
    Ok(match name {
        "shuffle" => Filter::Shuffle,
        "gzip" | "deflate" => {
            let l = level.unwrap_or(4);
            Filter::Deflate(
                u32::try_from(l).map_err(|_| bad(format!("gzip level {l} outside 0..=9")))?,
            )
        }
        "zstd" => Filter::Zstd(level.unwrap_or(3)),
        "lz4" => Filter::Lz4,
        other => {
            return Err(bad(format!(
                "unknown filter {other:?}; use shuffle, gzip, zstd or lz4"
            )))
        }
    })
}

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

/// An open arca file; mirrors `arca::File`.
///
/// ```python
/// f = _native.File("data.arca", "a")
/// g = f.root()
/// f.close()
/// ```
#[pyclass(module = "arca._native", name = "File", frozen)]
pub struct PyFile {
    inner: Mutex<Option<arca::File>>,
    writable: bool,
}

impl PyFile {
    fn get(&self) -> PyResult<arca::File> {
        self.inner
            .lock()
            .map_err(|_| PoisonedError::new_err("file handle poisoned"))?
            .clone()
            .ok_or_else(|| pyo3::exceptions::PyValueError::new_err("the file is closed"))
    }

    fn wrap(f: arca::File) -> Self {
        PyFile {
            writable: f.is_writable(),
            inner: Mutex::new(Some(f)),
        }
    }
}

#[pymethods]
impl PyFile {
    /// Open or create `path` with an h5py mode letter (r, r+, w, w-, x, a).
    /// `locking` and `journal` default to the core's defaults (both on).
    #[new]
    #[pyo3(signature = (path, mode = "r", chunk_cache_bytes = None, page_cache_pages = None, locking = None, journal = None, free_list = None, exact_rollback = None, track_order = false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        mode: &str,
        chunk_cache_bytes: Option<usize>,
        page_cache_pages: Option<usize>,
        locking: Option<bool>,
        journal: Option<bool>,
        free_list: Option<&str>,
        exact_rollback: Option<bool>,
        track_order: bool,
    ) -> PyResult<Self> {
        let mode = cvt(Mode::parse(mode))?;
        let mut o = arca::File::options();
        o.mode(mode).track_order(track_order);
        if let Some(b) = chunk_cache_bytes {
            o.chunk_cache_bytes(b);
        }
        if let Some(p) = page_cache_pages {
            o.page_cache_pages(p);
        }
        if let Some(l) = locking {
            o.lock(l);
        }
        if let Some(j) = journal {
            o.journal(j);
        }
        if let Some(x) = exact_rollback {
            o.exact_rollback(x);
        }
        match free_list {
            None | Some("managed") => {}
            Some("naive") => {
                o.free_list(arca::FreeListKind::Naive);
            }
            Some(other) => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "free_list must be 'managed' or 'naive', not {other:?}"
                )))
            }
        }
        let f = py.detach(|| o.open(&path)).map_err(open_err)?;
        Ok(Self::wrap(f))
    }

    /// A new file that lives in memory only; with `compress`, its bytes
    /// are kept compressed in a compll arena.
    #[staticmethod]
    #[pyo3(signature = (compress = false, track_order = false))]
    fn in_memory(compress: bool, track_order: bool) -> PyResult<Self> {
        let driver: Box<dyn arca::io::Driver> = if compress {
            Box::new(cvt(arca::io::CompressedMemoryDriver::new())?)
        } else {
            Box::new(arca::io::MemoryDriver::new())
        };
        let mut o = arca::File::options();
        o.track_order(track_order);
        Ok(Self::wrap(cvt(o.open_driver(driver, true, true))?))
    }

    /// Bytes of RAM an in-memory file holds (None for files on disk).
    #[getter]
    fn memory_bytes(&self, py: Python<'_>) -> PyResult<Option<u64>> {
        // Never wait for the file's lock holding the GIL: a driver over a
        // Python object takes the GIL while the lock is held.
        let f = self.get()?;
        Ok(py.detach(|| f.memory_bytes()))
    }

    /// Open or create a file held by a Python file-like object (`read`,
    /// `write`, `seek`, `tell`, `truncate`); `mode` as for files. Changes
    /// are journaled in memory: a crash loses the open transaction, and
    /// what reaches the object is whole commits.
    #[staticmethod]
    #[pyo3(signature = (obj, mode = "r", track_order = false))]
    fn from_fileobj(
        py: Python<'_>,
        obj: Py<PyAny>,
        mode: &str,
        track_order: bool,
    ) -> PyResult<Self> {
        use arca::io::Driver;
        let mode = cvt(Mode::parse(mode))?;
        let mut d = fileobj::PyFileDriver::new(obj);
        let empty = py.detach(|| d.len()).map_err(open_err)? == 0;
        let (create, writable) = match mode {
            Mode::Read => (false, false),
            Mode::ReadWrite => (false, true),
            Mode::Create => (true, true),
            Mode::CreateNew => {
                if !empty {
                    return Err(pyo3::exceptions::PyFileExistsError::new_err(
                        "the file-like object is not empty",
                    ));
                }
                (true, true)
            }
            Mode::Append => (empty, true),
        };
        if create {
            py.detach(|| d.truncate(0)).map_err(open_err)?;
        }
        let mut o = arca::File::options();
        o.track_order(track_order);
        let f = py
            .detach(|| o.open_driver(Box::new(d), create, writable))
            .map_err(open_err)?;
        Ok(Self::wrap(f))
    }

    /// Open an arca file image held in memory, read-only.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: Vec<u8>) -> PyResult<Self> {
        Ok(Self::wrap(cvt(py.detach(|| arca::File::from_bytes(data)))?))
    }

    /// The root group.
    fn root(&self, py: Python<'_>) -> PyResult<PyGroup> {
        let f = self.get()?;
        Ok(PyGroup {
            g: py.detach(|| f.root()),
        })
    }

    /// Whether the file was opened for writing.
    #[getter]
    fn writable(&self) -> bool {
        self.writable
    }

    /// Whether opening rolled back a transaction a crash interrupted.
    #[getter]
    fn recovered(&self, py: Python<'_>) -> PyResult<bool> {
        let f = self.get()?;
        Ok(py.detach(|| f.recovered()))
    }

    /// Whether `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.inner.lock().map(|g| g.is_none()).unwrap_or(true)
    }

    /// Write pending changes and sync.
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        let f = self.get()?;
        cvt(py.detach(|| f.flush()))
    }

    /// Move a read-only file to the newest commit of a writer in another
    /// process; returns whether anything changed.
    fn refresh(&self, py: Python<'_>) -> PyResult<bool> {
        let f = self.get()?;
        cvt(py.detach(|| f.refresh()))
    }

    /// The number of commits in the state this file shows.
    #[getter]
    fn generation(&self, py: Python<'_>) -> PyResult<u64> {
        let f = self.get()?;
        cvt(py.detach(|| f.generation()))
    }

    /// Flush and close; a second call does nothing.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let f = self
            .inner
            .lock()
            .map_err(|_| PoisonedError::new_err("file handle poisoned"))?
            .take();
        match f {
            Some(f) => cvt(py.detach(|| f.close())),
            None => Ok(()),
        }
    }

    /// Object counts and byte totals as a dict.
    fn stat<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let f = self.get()?;
        let s = cvt(py.detach(|| f.stat()))?;
        stat_dict(py, &s)
    }

    /// What reads of this file fetched from storage: `{"chunks_read",
    /// "bytes_read"}`.
    fn io_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        io_stats_dict(py, self.get()?.io_stats())
    }

    /// Start a transaction (see `arca::File::begin_transaction`).
    fn begin_transaction(&self, py: Python<'_>) -> PyResult<()> {
        let f = self.get()?;
        cvt(py.detach(|| f.begin_transaction()))
    }

    /// Commit (`commit=True`) or roll back the innermost transaction.
    fn end_transaction(&self, py: Python<'_>, commit: bool) -> PyResult<()> {
        let f = self.get()?;
        cvt(py.detach(|| f.end_transaction(commit)))
    }

    /// Free-space figures as a dict: sections, free_bytes, largest,
    /// histogram [(bin lower bound, count, bytes)], fragmentation, eof.
    fn space_info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let f = self.get()?;
        let i = cvt(py.detach(|| f.space_info()))?;
        let d = PyDict::new(py);
        d.set_item("sections", i.sections)?;
        d.set_item("free_bytes", i.free_bytes)?;
        d.set_item("largest", i.largest)?;
        d.set_item("histogram", i.histogram)?;
        d.set_item("fragmentation", i.fragmentation)?;
        d.set_item("eof", i.eof)?;
        Ok(d)
    }

    /// Verify every structure and chunk; returns the same dict as `stat()`.
    fn check<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let f = self.get()?;
        let s = cvt(py.detach(|| f.check()))?;
        stat_dict(py, &s)
    }
}

/// A group; mirrors `arca::Group`.
///
/// ```python
/// g = f.root().create_group("a/b")
/// assert g.path == "/a/b"
/// ```
#[pyclass(module = "arca._native", name = "Group", frozen)]
pub struct PyGroup {
    g: arca::Group,
}

fn link_to_py(py: Python<'_>, l: &arca::Link) -> PyResult<Py<PyAny>> {
    Ok(match l {
        arca::Link::Hard(k) => ("hard", kind_name(*k))
            .into_pyobject(py)?
            .into_any()
            .unbind(),
        arca::Link::Soft(t) => ("soft", t.as_str()).into_pyobject(py)?.into_any().unbind(),
        arca::Link::External { file, path } => ("external", file.as_str(), path.as_str())
            .into_pyobject(py)?
            .into_any()
            .unbind(),
    })
}

fn object_to_py(py: Python<'_>, o: arca::Object) -> PyResult<Py<PyAny>> {
    Ok(match o {
        arca::Object::Group(g) => Bound::new(py, PyGroup { g })?.into_any().unbind(),
        arca::Object::Dataset(d) => Bound::new(py, PyDataset::new(d))?.into_any().unbind(),
    })
}

#[pymethods]
impl PyGroup {
    /// Absolute path.
    #[getter]
    fn path(&self) -> &str {
        self.g.path()
    }

    /// Last path component (`/` for the root).
    #[getter]
    fn name(&self) -> &str {
        self.g.name()
    }

    /// This group's attributes.
    fn attrs(&self) -> PyAttributes {
        PyAttributes { a: self.g.attrs() }
    }

    /// The group or dataset at `path`.
    fn object(&self, py: Python<'_>, path: &str) -> PyResult<Py<PyAny>> {
        let o = cvt(py.detach(|| self.g.object(path)))?;
        object_to_py(py, o)
    }

    /// How many hard links lead to the object with this id.
    fn link_count(&self, py: Python<'_>, id: u64) -> PyResult<u64> {
        cvt(py.detach(|| self.g.link_count(id)))
    }

    /// The group or dataset with this id (an object reference).
    fn dereference(&self, py: Python<'_>, id: u64) -> PyResult<Py<PyAny>> {
        let o = cvt(py.detach(|| self.g.dereference(id)))?;
        object_to_py(py, o)
    }

    /// The group at `path`.
    fn group(&self, py: Python<'_>, path: &str) -> PyResult<PyGroup> {
        Ok(PyGroup {
            g: cvt(py.detach(|| self.g.group(path)))?,
        })
    }

    /// The dataset at `path`.
    fn dataset(&self, py: Python<'_>, path: &str) -> PyResult<PyDataset> {
        Ok(PyDataset::new(cvt(py.detach(|| self.g.dataset(path)))?))
    }

    /// Whether anything exists at `path`.
    fn contains(&self, py: Python<'_>, path: &str) -> PyResult<bool> {
        cvt(py.detach(|| self.g.contains(path)))
    }

    /// Create a group (and missing parents); `track_order` lists its
    /// members and attributes in creation order (`attr_order`, if given,
    /// decides for attributes alone).
    #[pyo3(signature = (path, track_order = false, attr_order = None))]
    fn create_group(
        &self,
        py: Python<'_>,
        path: &str,
        track_order: bool,
        attr_order: Option<bool>,
    ) -> PyResult<PyGroup> {
        let mut o = arca::GroupOptions::new().track_order(track_order);
        if let Some(a) = attr_order {
            o = o.track_attr_order(a);
        }
        Ok(PyGroup {
            g: cvt(py.detach(|| self.g.create_group_with(path, &o)))?,
        })
    }

    /// Whether members are listed in creation order.
    fn track_order(&self, py: Python<'_>) -> PyResult<bool> {
        cvt(py.detach(|| self.g.track_order()))
    }

    /// The object's identity in its file (equal for all its names).
    #[getter]
    fn id(&self) -> u64 {
        self.g.id()
    }

    /// Make `path` a soft link to `target`.
    fn link_soft(&self, py: Python<'_>, path: &str, target: &str) -> PyResult<()> {
        cvt(py.detach(|| self.g.link_soft(path, target)))
    }

    /// Make `path` an external link to `target` in `file`.
    fn link_external(&self, py: Python<'_>, path: &str, file: &str, target: &str) -> PyResult<()> {
        cvt(py.detach(|| self.g.link_external(path, file, target)))
    }

    /// Give the object at `existing` a second name `path`.
    fn link_hard(&self, py: Python<'_>, existing: &str, path: &str) -> PyResult<()> {
        cvt(py.detach(|| self.g.link_hard(existing, path)))
    }

    /// The link at `path`: `("hard", kind)`, `("soft", target)` or
    /// `("external", file, target)`.
    fn link(&self, py: Python<'_>, path: &str) -> PyResult<Py<PyAny>> {
        let l = cvt(py.detach(|| self.g.link(path)))?;
        link_to_py(py, &l)
    }

    /// `[(path, link)]` of every link below, depth first (see `link`).
    fn visit_links(&self, py: Python<'_>) -> PyResult<Vec<(String, Py<PyAny>)>> {
        let all = cvt(py.detach(|| {
            let mut out = vec![];
            self.g.visit_links(&mut |p, l| {
                out.push((p.to_string(), l.clone()));
                Ok(())
            })?;
            Ok(out)
        }))?;
        all.into_iter()
            .map(|(p, l)| Ok((p, link_to_py(py, &l)?)))
            .collect()
    }

    /// Open or create the group at `path`.
    fn require_group(&self, py: Python<'_>, path: &str) -> PyResult<PyGroup> {
        Ok(PyGroup {
            g: cvt(py.detach(|| self.g.require_group(path)))?,
        })
    }

    /// Create a dataset. `dtype` is a numpy type string; `filters` a list of
    /// `(name, level)`, or `hdf5_filters` an HDF5 pipeline as h5py's
    /// `get_filter` gives it, `(id, flags, values, name)`; `fill` one
    /// element in native byte order.
    #[pyo3(signature = (path, dtype, shape, maxshape = None, chunks = None, filters = vec![], fill = None, layout = None, hdf5_filters = vec![], track_order = false))]
    #[allow(clippy::too_many_arguments)]
    fn create_dataset(
        &self,
        py: Python<'_>,
        path: &str,
        dtype: &str,
        shape: Vec<u64>,
        maxshape: Option<Vec<Option<u64>>>,
        chunks: Option<Vec<u64>>,
        filters: Vec<(String, Option<i32>)>,
        fill: Option<Vec<u8>>,
        layout: Option<&str>,
        hdf5_filters: Vec<H5FilterTuple>,
        track_order: bool,
    ) -> PyResult<PyDataset> {
        let dt = cvt(Datatype::parse(dtype))?;
        let mut o = DatasetOptions::new(dt, &shape).track_order(track_order);
        if let Some(l) = layout {
            o = o.layout(parse_layout(l)?);
        }
        if let Some(m) = maxshape {
            o = o.maxshape(&m);
        }
        if let Some(c) = chunks {
            o = o.chunks(&c);
        }
        let mut fs = parse_filters(&filters)?;
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
        if let Some(f) = fill {
            o = o.fill_value(&f);
        }
        let d = cvt(py.detach(|| self.g.create_dataset(path, &o)))?;
        Ok(PyDataset::new(d))
    }

    /// Create a dataset with a null dataspace (a type, no elements).
    #[pyo3(signature = (path, dtype, track_order = false))]
    fn create_empty(
        &self,
        py: Python<'_>,
        path: &str,
        dtype: &str,
        track_order: bool,
    ) -> PyResult<PyDataset> {
        let dt = cvt(Datatype::parse(dtype))?;
        let o = DatasetOptions::empty(dt).track_order(track_order);
        let d = cvt(py.detach(|| self.g.create_dataset(path, &o)))?;
        Ok(PyDataset::new(d))
    }

    /// Delete the object at `path` and everything below it.
    fn delete(&self, py: Python<'_>, path: &str) -> PyResult<()> {
        cvt(py.detach(|| self.g.delete(path)))
    }

    /// Move or rename `src` to `dst`.
    fn rename(&self, py: Python<'_>, src: &str, dst: &str) -> PyResult<()> {
        cvt(py.detach(|| self.g.rename(src, dst)))
    }

    /// `[(name, "group" | "dataset")]` of the direct members, in name order.
    fn members(&self, py: Python<'_>) -> PyResult<Vec<(String, &'static str)>> {
        let m = cvt(py.detach(|| self.g.members()))?;
        Ok(m.into_iter().map(|(n, k)| (n, kind_name(k))).collect())
    }

    /// Names of the direct members, in name order.
    fn member_names(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        cvt(py.detach(|| self.g.member_names()))
    }

    /// Number of direct members.
    fn len(&self, py: Python<'_>) -> PyResult<u64> {
        cvt(py.detach(|| self.g.len()))
    }

    /// `[(relative path, kind)]` of every object below, depth first in name order.
    fn visit(&self, py: Python<'_>) -> PyResult<Vec<(String, &'static str)>> {
        cvt(py.detach(|| {
            let mut out = vec![];
            self.g.visit(&mut |p, k| {
                out.push((p.to_string(), kind_name(k)));
                Ok(())
            })?;
            Ok(out)
        }))
    }
}

/// A dataset; mirrors `arca::Dataset`. Element data is passed as flat
/// `uint8` arrays in native byte order.
///
/// ```python
/// ds = f.root().dataset("d")
/// raw = ds.read([0], [4], [1])          # uint8 array of 4 * itemsize bytes
/// x = raw.view(np.dtype(ds.dtype).newbyteorder("="))
/// ```
#[pyclass(module = "arca._native", name = "Dataset", frozen)]
pub struct PyDataset {
    d: arca::Dataset,
    // A dataset's type never changes, so it is loaded once.
    dtype: OnceLock<Datatype>,
}

impl PyDataset {
    fn new(d: arca::Dataset) -> Self {
        PyDataset {
            d,
            dtype: OnceLock::new(),
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

    /// `"compact"`, `"contiguous"` or `"chunked"`.
    fn layout(&self, py: Python<'_>) -> PyResult<&'static str> {
        Ok(match cvt(py.detach(|| self.d.layout()))? {
            StorageLayout::Compact => "compact",
            StorageLayout::Contiguous => "contiguous",
            StorageLayout::Chunked => "chunked",
        })
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

    /// Bytes of file space holding elements.
    fn storage_size(&self, py: Python<'_>) -> PyResult<u64> {
        cvt(py.detach(|| self.d.storage_size()))
    }

    /// Number of elements.
    fn len(&self, py: Python<'_>) -> PyResult<u64> {
        cvt(py.detach(|| self.d.len()))
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

/// The attributes of a group or dataset; mirrors `arca::Attributes`.
/// Values cross as `(dtype string, shape, bytes in native order)`.
///
/// ```python
/// a = f.root().attrs()
/// a.set("gain", "<f8", [], np.float64(1.5).tobytes())
/// dtype, shape, data = a.get("gain")
/// ```
#[pyclass(module = "arca._native", name = "Attributes", frozen)]
pub struct PyAttributes {
    a: arca::Attributes,
}

fn attr_value(dtype: &str, shape: Vec<u64>, data: Vec<u8>) -> PyResult<AttrValue> {
    let dt = cvt(Datatype::parse(dtype))?;
    cvt(AttrValue::new(dt, &shape, data))
}

#[pymethods]
impl PyAttributes {
    /// Create or replace an attribute.
    fn set(
        &self,
        py: Python<'_>,
        name: &str,
        dtype: &str,
        shape: Vec<u64>,
        data: Vec<u8>,
    ) -> PyResult<()> {
        let v = attr_value(dtype, shape, data)?;
        cvt(py.detach(|| self.a.set(name, &v)))
    }

    /// Replace an attribute keeping its place in creation order (creating
    /// it if it does not exist).
    fn modify(
        &self,
        py: Python<'_>,
        name: &str,
        dtype: &str,
        shape: Vec<u64>,
        data: Vec<u8>,
    ) -> PyResult<()> {
        let v = attr_value(dtype, shape, data)?;
        cvt(py.detach(|| self.a.modify(name, &v)))
    }

    /// Whether attributes are listed in creation order.
    fn track_order(&self, py: Python<'_>) -> PyResult<bool> {
        cvt(py.detach(|| self.a.track_order()))
    }

    /// Create an attribute; fails if it exists.
    fn create(
        &self,
        py: Python<'_>,
        name: &str,
        dtype: &str,
        shape: Vec<u64>,
        data: Vec<u8>,
    ) -> PyResult<()> {
        let v = attr_value(dtype, shape, data)?;
        cvt(py.detach(|| self.a.create(name, &v)))
    }

    /// `(dtype string, shape, bytes)` of an attribute; shape None for a
    /// null dataspace.
    #[allow(clippy::type_complexity)] // the tuple Python receives
    fn get<'py>(
        &self,
        py: Python<'py>,
        name: &str,
    ) -> PyResult<(String, Option<Vec<u64>>, Bound<'py, PyBytes>)> {
        let v = cvt(py.detach(|| self.a.get(name)))?;
        let shape = if v.null { None } else { Some(v.shape) };
        Ok((v.dtype.to_numpy_str(), shape, PyBytes::new(py, &v.data)))
    }

    /// Create or replace an attribute with a null dataspace.
    fn set_empty(&self, py: Python<'_>, name: &str, dtype: &str) -> PyResult<()> {
        let v = AttrValue::empty(cvt(Datatype::parse(dtype))?);
        cvt(py.detach(|| self.a.set(name, &v)))
    }

    /// Whether an attribute exists.
    fn contains(&self, py: Python<'_>, name: &str) -> PyResult<bool> {
        cvt(py.detach(|| self.a.contains(name)))
    }

    /// Delete an attribute.
    fn delete(&self, py: Python<'_>, name: &str) -> PyResult<()> {
        cvt(py.detach(|| self.a.delete(name)))
    }

    /// Rename an attribute.
    fn rename(&self, py: Python<'_>, src: &str, dst: &str) -> PyResult<()> {
        cvt(py.detach(|| self.a.rename(src, dst)))
    }

    /// Attribute names in name order.
    fn names(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        cvt(py.detach(|| self.a.names()))
    }

    /// Number of attributes.
    fn len(&self, py: Python<'_>) -> PyResult<u64> {
        cvt(py.detach(|| self.a.len()))
    }
}

/// The module `arca._native`.
fn io_stats_dict(py: Python<'_>, s: arca::IoStats) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("chunks_read", s.chunks_read)?;
    d.set_item("bytes_read", s.bytes_read)?;
    Ok(d)
}

/// What reads of every file fetched from storage in this process.
#[pyfunction]
fn io_stats(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    io_stats_dict(py, arca::io_stats())
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<PyFile>()?;
    m.add_class::<PyGroup>()?;
    m.add_class::<PyDataset>()?;
    m.add_class::<PyAttributes>()?;
    m.add("ArcaError", py.get_type::<ArcaError>())?;
    m.add("CorruptError", py.get_type::<CorruptError>())?;
    m.add("ReadOnlyError", py.get_type::<ReadOnlyError>())?;
    m.add("LockedError", py.get_type::<LockedError>())?;
    m.add("PoisonedError", py.get_type::<PoisonedError>())?;
    m.add("NeedsRecoveryError", py.get_type::<NeedsRecoveryError>())?;
    m.add("UnsupportedError", py.get_type::<UnsupportedError>())?;
    m.add("MAX_RANK", arca::MAX_RANK)?;
    m.add_function(wrap_pyfunction!(io_stats, m)?)?;
    vlen::register(m)?;
    chunks::register(m)?;
    pools::register(m)?;
    types::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
