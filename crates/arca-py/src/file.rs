//! `_native.File`: an open file (on disk, in memory or in a Python
//! file-like object), its commits, transactions and whole-file figures.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use arca::io::{Driver, FileDriver, ReadAt};
use arca::{Mode, Stat};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::error::{open_err, PoisonedError};
use crate::fileobj;
use crate::group::PyGroup;
use crate::{cvt, io_stats_dict};

fn stat_dict<'py>(py: Python<'py>, s: &Stat) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("groups", s.groups)?;
    d.set_item("datasets", s.datasets)?;
    d.set_item("datatypes", s.datatypes)?;
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

/// An open arca file; mirrors `arca::File`.
///
/// ```python
/// f = _native.File("data.arca", "a")
/// g = f.root()
/// f.close()
/// ```
#[pyclass(module = "arca._native", name = "File", frozen)]
pub(crate) struct PyFile {
    inner: Mutex<Option<arca::File>>,
    writable: bool,
    /// A file with a user block whose journal (beside it) goes at a clean
    /// close.
    user_block_path: Option<PathBuf>,
    /// A file opened by the core for an external link: it belongs to the
    /// file holding the link, so closing this handle leaves it open.
    borrowed: bool,
}

/// A file whose first `base` bytes are a user block (h5py's
/// `userblock_size`): bytes that belong to the user, which arca never
/// reads or writes. arca's own file starts right after them.
struct UserBlock {
    inner: FileDriver,
    base: u64,
}

/// Reads of a [`UserBlock`] file from other threads.
struct UserBlockReader {
    inner: Arc<dyn ReadAt>,
    base: u64,
}

impl ReadAt for UserBlockReader {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> arca::Result<()> {
        self.inner.read_at(self.base + offset, buf)
    }
}

impl Driver for UserBlock {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> arca::Result<()> {
        self.inner.read_at(self.base + offset, buf)
    }
    fn write_at(&mut self, offset: u64, data: &[u8]) -> arca::Result<()> {
        self.inner.write_at(self.base + offset, data)
    }
    fn sync(&mut self) -> arca::Result<()> {
        self.inner.sync()
    }
    fn start_writeback(&self) {
        self.inner.start_writeback()
    }
    fn truncate(&mut self, len: u64) -> arca::Result<()> {
        self.inner.truncate(self.base + len)
    }
    fn len(&self) -> arca::Result<u64> {
        Ok(self.inner.len()?.saturating_sub(self.base))
    }
    fn shared_reader(&self) -> Option<Arc<dyn ReadAt>> {
        let inner = self.inner.shared_reader()?;
        Some(Arc::new(UserBlockReader {
            inner,
            base: self.base,
        }))
    }
    fn copy_from_file(
        &mut self,
        src: &std::fs::File,
        src_pos: u64,
        offset: u64,
        len: u64,
    ) -> arca::Result<()> {
        self.inner
            .copy_from_file(src, src_pos, self.base + offset, len)
    }
}

/// Open `path` as a file with a user block of `base` bytes: its data
/// through [`UserBlock`], its undo journal in the usual sidecar (rolled
/// back first if a crash left it hot). The file is locked as any other,
/// but is not served to snapshot readers.
fn open_with_user_block(
    o: &arca::OpenOptions,
    path: &Path,
    mode: Mode,
    base: u64,
    lock: bool,
    journal: bool,
) -> arca::Result<(arca::File, Option<PathBuf>)> {
    let (mut data, create, writable) = match mode {
        Mode::Read => (FileDriver::open(path, false)?, false, false),
        Mode::ReadWrite => (FileDriver::open(path, true)?, false, true),
        Mode::Create => (FileDriver::open_or_create(path)?, true, true),
        Mode::CreateNew => (FileDriver::create(path, true)?, true, true),
        Mode::Append => {
            if path.exists() {
                (FileDriver::open(path, true)?, false, true)
            } else {
                (FileDriver::create(path, true)?, true, true)
            }
        }
    };
    if lock {
        data.lock(path, writable)?;
    }
    let sidecar = arca::journal_path(path);
    if create {
        // The user block of a new file is zeros, as HDF5 leaves it.
        data.truncate(0)?;
        if sidecar.exists() {
            std::fs::remove_file(&sidecar).map_err(|source| arca::Error::Io {
                context: format!("removing {}", sidecar.display()),
                source,
            })?;
        }
    } else if !writable && arca::journal_is_hot(path)? {
        return Err(arca::Error::NeedsRecovery(format!(
            "{} has a journal left by an interrupted writer; open it for writing to roll it back",
            path.display()
        )));
    }
    let jd: Option<Box<dyn Driver>> = if writable && (journal || sidecar.exists()) {
        Some(Box::new(FileDriver::open_or_create(&sidecar)?))
    } else {
        None
    };
    let has_journal = jd.is_some();
    let f = o.open_drivers(
        Box::new(UserBlock { inner: data, base }),
        jd,
        create,
        writable,
    )?;
    Ok((f, has_journal.then(|| path.to_path_buf())))
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
            user_block_path: None,
            borrowed: false,
        }
    }

    /// The file an object reached through an external link lies in.
    pub(crate) fn borrowed(f: arca::File) -> Self {
        PyFile {
            borrowed: true,
            ..Self::wrap(f)
        }
    }
}

impl PyFile {
    /// After a clean close, the journal beside a file with a user block
    /// goes (as the core removes its own sidecars); a hot one stays for
    /// the next writer to roll back.
    fn remove_cold_sidecar(&self) -> PyResult<()> {
        if let Some(p) = &self.user_block_path {
            let s = arca::journal_path(p);
            if s.exists() && !cvt(arca::journal_is_hot(p))? {
                std::fs::remove_file(s)?;
            }
        }
        Ok(())
    }
}

/// The options every way of opening shares: cache sizes and the order of
/// the root group's members.
fn base_options(
    track_order: bool,
    chunk_cache_bytes: Option<usize>,
    page_cache_pages: Option<usize>,
) -> arca::OpenOptions {
    let mut o = arca::File::options();
    o.track_order(track_order);
    if let Some(b) = chunk_cache_bytes {
        o.chunk_cache_bytes(b);
    }
    if let Some(p) = page_cache_pages {
        o.page_cache_pages(p);
    }
    o
}

#[pymethods]
impl PyFile {
    /// Open or create `path` with an h5py mode letter (r, r+, w, w-, x, a).
    /// `locking` and `journal` default to the core's defaults (both on).
    /// `userblock` > 0 keeps that many bytes at the start of the file for
    /// the user (see `UserBlock`).
    #[new]
    #[pyo3(signature = (path, mode = "r", chunk_cache_bytes = None, page_cache_pages = None, locking = None, journal = None, free_list = None, exact_rollback = None, track_order = false, userblock = 0))]
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
        userblock: u64,
    ) -> PyResult<Self> {
        let mode = cvt(Mode::parse(mode))?;
        let mut o = base_options(track_order, chunk_cache_bytes, page_cache_pages);
        o.mode(mode);
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
        if userblock > 0 {
            let (lock, journal) = (locking.unwrap_or(true), journal.unwrap_or(true));
            let (f, sidecar) = py
                .detach(|| open_with_user_block(&o, &path, mode, userblock, lock, journal))
                .map_err(open_err)?;
            let mut me = Self::wrap(f);
            me.user_block_path = sidecar;
            return Ok(me);
        }
        let f = py.detach(|| o.open(&path)).map_err(open_err)?;
        Ok(Self::wrap(f))
    }

    /// Open the file at `url` on object storage (`s3://`, `gs://`, `az://`,
    /// `http(s)://`, `file://`, `memory://`); `storage_options` holds the
    /// store's keys and arca's (see `arca::io::CloudOptions`). Modes other
    /// than `r` stage the file locally and publish it at each commit and at
    /// close (see `arca::OpenOptions::open_url`). The requests run without
    /// the GIL.
    #[staticmethod]
    #[pyo3(signature = (url, mode = "r", storage_options = None, chunk_cache_bytes = None, page_cache_pages = None))]
    fn open_url(
        py: Python<'_>,
        url: &str,
        mode: &str,
        storage_options: Option<std::collections::BTreeMap<String, Bound<'_, PyAny>>>,
        chunk_cache_bytes: Option<usize>,
        page_cache_pages: Option<usize>,
    ) -> PyResult<Self> {
        let mode = cvt(Mode::parse(mode))?;
        let mut cloud = arca::io::CloudOptions::new();
        for (k, v) in storage_options.unwrap_or_default() {
            // Booleans as the stores spell them; anything else as its str().
            let v = match v.extract::<bool>() {
                Ok(b) if v.is_instance_of::<pyo3::types::PyBool>() => b.to_string(),
                _ => v.str()?.to_string(),
            };
            cloud = cvt(cloud.set(&k, &v))?;
        }
        let mut o = base_options(false, chunk_cache_bytes, page_cache_pages);
        o.mode(mode);
        let f = py.detach(|| o.open_url(url, &cloud)).map_err(open_err)?;
        Ok(Self::wrap(f))
    }

    /// The URL the file was opened from (None unless on object storage).
    #[getter]
    fn url(&self) -> PyResult<Option<String>> {
        Ok(self.get()?.url().map(str::to_string))
    }

    /// A new file that lives in memory only; with `compress`, its bytes
    /// are kept compressed in a compll arena.
    #[staticmethod]
    #[pyo3(signature = (compress = false, track_order = false, chunk_cache_bytes = None, page_cache_pages = None))]
    fn in_memory(
        compress: bool,
        track_order: bool,
        chunk_cache_bytes: Option<usize>,
        page_cache_pages: Option<usize>,
    ) -> PyResult<Self> {
        let driver: Box<dyn arca::io::Driver> = if compress {
            Box::new(cvt(arca::io::CompressedMemoryDriver::new())?)
        } else {
            Box::new(arca::io::MemoryDriver::new())
        };
        let o = base_options(track_order, chunk_cache_bytes, page_cache_pages);
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
    #[pyo3(signature = (obj, mode = "r", track_order = false, chunk_cache_bytes = None, page_cache_pages = None))]
    fn from_fileobj(
        py: Python<'_>,
        obj: Py<PyAny>,
        mode: &str,
        track_order: bool,
        chunk_cache_bytes: Option<usize>,
        page_cache_pages: Option<usize>,
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
        let o = base_options(track_order, chunk_cache_bytes, page_cache_pages);
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
            Some(_) if self.borrowed => Ok(()),
            Some(f) => {
                cvt(py.detach(|| f.close()))?;
                self.remove_cold_sidecar()
            }
            None => Ok(()),
        }
    }

    /// The path the file was opened from (None in memory or in a Python
    /// object).
    #[getter]
    fn path(&self) -> PyResult<Option<PathBuf>> {
        Ok(self.get()?.path().map(Path::to_path_buf))
    }

    /// Object counts and byte totals as a dict.
    fn stat<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let f = self.get()?;
        let s = cvt(py.detach(|| f.stat()))?;
        stat_dict(py, &s)
    }

    /// What reads of this file fetched from storage: `{"chunks_read",
    /// "bytes_read", "requests", "bytes_fetched", "round_trips", "puts",
    /// "bytes_put", "parts", "completes"}`.
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
