//! Opening, creating, flushing and closing files.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::group::Group;
use super::handle::{lock, FileHandle};
use super::session::{Session, State};
use super::stat::{Extent, Stat};
use crate::error::{Error, Result};
use crate::format::object_header::Header;
use crate::format::superblock::Superblock;
use crate::io::{Driver, FileDriver, MemoryDriver};
use crate::journal::{JournalStore, Journaled};
use crate::pager::{Pager, PAGE_SIZE};
use crate::space::{FileSpace, FreeListKind, SpaceInfo};
use crate::store::Store;

/// Default bytes of decoded chunks kept per open dataset.
pub const DEFAULT_CHUNK_CACHE: usize = 16 << 20;
/// Default number of metadata pages kept in the page cache.
pub const DEFAULT_PAGE_CACHE: usize = 4096;

/// How a file is opened, like h5py's mode letters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `r`: read only; the file must exist.
    Read,
    /// `r+`: read and write; the file must exist.
    ReadWrite,
    /// `w`: create, truncating any existing file.
    Create,
    /// `w-` / `x`: create; fail if the file exists.
    CreateNew,
    /// `a`: read and write if the file exists, create it otherwise.
    Append,
}

impl Mode {
    /// Parse an h5py mode letter.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for anything but r, r+, w, w-, x, a.
    pub fn parse(s: &str) -> Result<Mode> {
        Ok(match s {
            "r" => Mode::Read,
            "r+" => Mode::ReadWrite,
            "w" => Mode::Create,
            "w-" | "x" => Mode::CreateNew,
            "a" => Mode::Append,
            _ => {
                return Err(Error::invalid(format!(
                    "invalid mode {s:?}; use r, r+, w, w-, x or a"
                )))
            }
        })
    }
}

/// Settings for opening a file.
///
/// ```
/// use arca::{File, Mode};
/// let dir = tempfile::tempdir().unwrap();
/// let f = File::options()
///     .mode(Mode::Create)
///     .chunk_cache_bytes(64 << 20)
///     .open(dir.path().join("x.arca"))
///     .unwrap();
/// f.close().unwrap();
/// ```
#[derive(Debug, Clone)]
pub struct OpenOptions {
    mode: Mode,
    chunk_cache_bytes: usize,
    page_cache_pages: usize,
    free_list: FreeListKind,
    journal: bool,
    lock: bool,
    exact: bool,
    track_order: bool,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            mode: Mode::Read,
            chunk_cache_bytes: DEFAULT_CHUNK_CACHE,
            page_cache_pages: DEFAULT_PAGE_CACHE,
            free_list: FreeListKind::Managed,
            journal: true,
            lock: true,
            exact: false,
            track_order: false,
        }
    }
}

impl OpenOptions {
    /// The open mode (default: read-only).
    pub fn mode(&mut self, mode: Mode) -> &mut Self {
        self.mode = mode;
        self
    }
    /// Bytes of decoded chunks cached per dataset.
    pub fn chunk_cache_bytes(&mut self, bytes: usize) -> &mut Self {
        self.chunk_cache_bytes = bytes;
        self
    }
    /// Metadata pages kept in memory.
    pub fn page_cache_pages(&mut self, pages: usize) -> &mut Self {
        self.page_cache_pages = pages;
        self
    }

    /// Which free list manages free space. [`FreeListKind::Naive`] exists
    /// only so benchmarks can compare against it.
    pub fn free_list(&mut self, kind: FreeListKind) -> &mut Self {
        self.free_list = kind;
        self
    }

    /// Whether changes go through the undo journal (default on). Off, a
    /// crash can leave the file damaged; meant for scratch files.
    pub fn journal(&mut self, on: bool) -> &mut Self {
        self.journal = on;
        self
    }

    /// Make rollbacks restore the file byte for byte, free space included
    /// (default off: bytes in space that was free need no copy, since
    /// rolling back makes them unreachable again).
    pub fn exact_rollback(&mut self, on: bool) -> &mut Self {
        self.exact = on;
        self
    }

    /// Whether to take the advisory file lock (default on): one writer, or
    /// any number of readers. Turn off only when the caller coordinates
    /// access itself (collective parallel writes).
    pub fn lock(&mut self, on: bool) -> &mut Self {
        self.lock = on;
        self
    }

    /// For a new file: list the root group's members in creation order
    /// (see [`crate::GroupOptions::track_order`]).
    pub fn track_order(&mut self, on: bool) -> &mut Self {
        self.track_order = on;
        self
    }

    /// Open or create the file at `path`. A journal left by a crash is
    /// rolled back first ([`File::recovered`] says so).
    ///
    /// # Errors
    /// [`Error::Io`] if the file cannot be opened, [`Error::Corrupt`] if it is
    /// not a valid arca file, [`Error::AlreadyExists`] for `CreateNew` on an
    /// existing file, [`Error::Locked`] if another process holds it,
    /// [`Error::NeedsRecovery`] for a read-only open of a file with a hot
    /// journal that this process may not write.
    pub fn open(&self, path: impl AsRef<Path>) -> Result<File> {
        let path = path.as_ref();
        if self.lock && self.mode == Mode::Read {
            if let Some(table) =
                crate::snapshot::ReaderTable::open(path, crate::snapshot::Role::Reader)?
            {
                return self.open_snapshot(path, table);
            }
        }
        let sidecar = journal_path(path);
        let (mut data, create, writable) = match self.mode {
            Mode::Read => (FileDriver::open(path, false)?, false, false),
            Mode::ReadWrite => (FileDriver::open(path, true)?, false, true),
            // Truncated only once locked and known to have no readers.
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
        // A writer serves snapshot readers in other processes when it
        // journals and the reader table can be made; one that does not
        // must find no reader. The table's writer lock is taken before the
        // file's, and let go after it, so a reader that finds the file's
        // lock held without the table's knows the writer does not serve.
        let table = if writable && self.lock {
            use crate::snapshot::Role;
            let role = if self.journal {
                Role::Writer
            } else {
                Role::Plain
            };
            crate::snapshot::ReaderTable::open(path, role).map_err(|e| match e {
                Error::Locked(_) => Error::Locked(format!(
                    "{} is being written{}",
                    path.display(),
                    FileDriver::holder(path)
                        .map(|h| format!(" by {h}"))
                        .unwrap_or_default()
                )),
                e => e,
            })?
        } else {
            None
        };
        let serve = table.is_some() && self.journal;
        if self.lock {
            let mut tries = 0;
            // Snapshot readers take the file's lock shared for a moment,
            // to see whether a writer without the journal holds it.
            while let Err(e) = data.lock(path, writable) {
                tries += 1;
                if !(serve && matches!(e, Error::Locked(_))) || tries == 2000 {
                    return Err(match (e, crate::snapshot::network_fs(path)) {
                        (Error::Locked(m), Some(fs)) => Error::Locked(format!(
                            "{m}; reading beside a writer needs a local file system, and this file is on {fs}"
                        )),
                        (e, _) => e,
                    });
                }
                std::thread::sleep(std::time::Duration::from_micros(50));
            }
        }
        if let Some(t) = &table {
            if (create || !serve) && t.oldest()?.is_some() {
                return Err(Error::Locked(format!(
                    "{} is being read by snapshot readers in other processes; {} once they close",
                    path.display(),
                    if create {
                        "it can be replaced"
                    } else {
                        "it can be written without the journal"
                    }
                )));
            }
            if create || !serve {
                // Readers that open from now on read the file itself.
                t.publish(None)?;
            }
        }
        if create {
            data.truncate(0)?;
            // A stale journal must not be applied to a new file.
            crate::journal::discard_sidecar(&sidecar)?;
        }
        let mut recovered = false;
        if !writable && sidecar.exists() {
            let probe = Journaled::new(
                Box::new(FileDriver::open(path, false)?),
                JournalStore::Path(sidecar.clone(), None),
            )?;
            if probe.is_hot()? {
                // Never read a half-written state: recover through a writable handle.
                drop(data);
                recover_as_reader(path, &sidecar, self.lock)?;
                recovered = true;
                data = FileDriver::open(path, false)?;
                if self.lock {
                    data.lock(path, false)?;
                }
            } else if self.lock {
                // A cold journal (a writer killed while creating, invalidating
                // or removing it). Holding the shared lock proves no writer is
                // using it, so tidying it cannot race one. It is made durably
                // cold before it goes (a lost unlink must not bring back a
                // header whose zeroing was not yet synced); failing to tidy is
                // harmless, the next writer does it.
                let _ = crate::journal::discard_sidecar(&sidecar);
            }
        }
        let mut driver = Journaled::new(Box::new(data), JournalStore::Path(sidecar, None))?;
        if writable {
            // Roll back what a crashed writer left, journal on or off.
            recovered |= driver.recover()?;
        }
        if !(self.journal && writable) {
            driver.disable();
        }
        let mut f = self.open_journaled(driver, create, writable)?;
        if let Ok(mut g) = f.file.lock() {
            g.recovered = recovered;
            g.path = Some(path.to_path_buf());
            if let (true, Some(t)) = (serve, table) {
                let s = crate::snapshot::Sharing::start(path, t, g.sb.generation)?;
                g.st.pager.journal().sharing = Some(s);
                // The first transaction began before there was anyone to
                // serve: begin it again, holding frees and keeping history.
                g.begin();
            }
        }
        f.path = Some(path.to_path_buf());
        Ok(f)
    }

    /// Open read-only as a snapshot reader: beside a writer in another
    /// process, this file sees the last commit as of now until
    /// [`File::refresh`].
    fn open_snapshot(&self, path: &Path, table: crate::snapshot::ReaderTable) -> Result<File> {
        use crate::snapshot::{history_path, Reader, SnapshotView};
        let sidecar = journal_path(path);
        // R3: the slot was claimed (opening the table) before anything is read.
        let data = FileDriver::open(path, false)?;
        // A serving writer holds the table's lock whenever it holds the
        // file's (it takes it first and lets it go last); the file's alone,
        // held for more than a moment, is a writer without the journal.
        let mut tries = 0;
        let serving = loop {
            if table.writer_present()? {
                break true;
            }
            if !data.writer_holds()? {
                break false;
            }
            tries += 1;
            if tries == 2000 {
                let who = FileDriver::holder(path)
                    .map(|h| format!(" by {h}"))
                    .unwrap_or_default();
                return Err(Error::Locked(format!(
                    "{} is being written{who} without the journal, so it cannot be read until that writer closes",
                    path.display()
                )));
            }
            std::thread::sleep(std::time::Duration::from_micros(50));
        };
        let mut recovered = false;
        // A writer that died inside a transaction left a hot journal. If
        // it served readers, its last published commit is readable as it
        // is (the history holds the originals of what it overwrote), and
        // the next writer rolls it back. With nothing published (a table
        // from before a reboot), roll it back first: this may write.
        if !serving && table.published()?.is_none() && crate::journal::sidecar_is_hot(&sidecar)? {
            recover_as_reader(path, &sidecar, true)?;
            recovered = true;
        }
        drop(data);
        let main = std::fs::File::open(path)
            .map_err(|e| Error::io(format!("opening {}", path.display()), e))?;
        let view = SnapshotView::new(main, history_path(path));
        let superblock = (
            crate::format::superblock::SUPERBLOCK_LEN,
            crate::format::superblock::generation_in as fn(&[u8]) -> Option<u64>,
        );
        let reader = Reader::start(table, &view, superblock)?;
        let snap = reader.snap;
        let driver = Journaled::new(Box::new(view), JournalStore::Off)?;
        let mut f = self.open_journaled(driver, false, false)?;
        if let Ok(mut g) = f.file.lock() {
            g.check_snapshot(snap)?;
            g.recovered = recovered;
            g.path = Some(path.to_path_buf());
            g.reader = Some(reader);
        }
        f.path = Some(path.to_path_buf());
        Ok(f)
    }

    /// Open a file over any driver: `create` writes a new empty file,
    /// otherwise the driver's bytes are read as an existing file. With the
    /// journal on, a writable file journals into memory.
    ///
    /// # Errors
    /// As for [`OpenOptions::open`].
    pub fn open_driver(
        &self,
        driver: Box<dyn Driver>,
        create: bool,
        writable: bool,
    ) -> Result<File> {
        let journal: Option<Box<dyn Driver>> =
            (self.journal && writable).then(|| Box::new(MemoryDriver::new()) as _);
        self.open_drivers(driver, journal, create, writable)
    }

    /// Open a file over a data driver and a journal driver (None: no
    /// journal). A hot journal is rolled back before anything is read. This
    /// is how fault-injection tests place both on one simulated disk.
    ///
    /// # Errors
    /// As for [`OpenOptions::open`].
    pub fn open_drivers(
        &self,
        driver: Box<dyn Driver>,
        journal: Option<Box<dyn Driver>>,
        create: bool,
        writable: bool,
    ) -> Result<File> {
        let store = match journal {
            Some(j) => JournalStore::Driver(j),
            None => JournalStore::Off,
        };
        let mut d = Journaled::new(driver, store)?;
        let mut recovered = false;
        if !create && d.is_hot()? {
            if !writable {
                return Err(Error::NeedsRecovery("the file has a journal left by an interrupted writer; open it for writing to roll it back".into()));
            }
            recovered = d.recover()?;
        }
        let f = self.open_journaled(d, create, writable)?;
        if let Ok(mut g) = f.file.lock() {
            g.recovered = recovered;
        }
        Ok(f)
    }

    fn open_journaled(&self, mut driver: Journaled, create: bool, writable: bool) -> Result<File> {
        driver.exact = self.exact;
        if create {
            driver.truncate(0)?;
        }
        let pager = Pager::new(driver, self.page_cache_pages)?;
        let sb = Superblock {
            root: PAGE_SIZE as u64,
            eof: PAGE_SIZE as u64,
            space: [0; 4],
            generation: 0,
            links: 0,
        };
        let space = FileSpace::new(sb.eof, self.free_list);
        let st = Store {
            pager,
            space,
            writable,
            stats: Default::default(),
            unstarted: 0,
        };
        let mut inner = Session::new(st, sb, self.chunk_cache_bytes, self.free_list);
        let r = if create {
            let mut root = Header::group();
            if self.track_order {
                root.order = Some(0);
                root.attr_order = Some(0);
            }
            root.create(&mut inner.st).and_then(|root| {
                inner.sb.root = root;
                inner.commit()
            })
        } else {
            // Fail now, not on first use, if the root is unreadable.
            inner
                .reload()
                .and_then(|_| Header::load(&mut inner.st, inner.sb.root).map(|_| ()))
        };
        if let Err(e) = r {
            inner.state = State::Closed;
            return Err(e);
        }
        Ok(File {
            file: Arc::new(Mutex::new(inner)),
            path: None,
        })
    }
}

/// Roll back the hot journal of `path` through a writable handle, for a
/// reader that must not read a half-written state.
fn recover_as_reader(path: &Path, sidecar: &Path, lock: bool) -> Result<()> {
    let mut rw = FileDriver::open(path, true).map_err(|e| {
        Error::NeedsRecovery(format!(
            "{} has a journal left by an interrupted writer, and cannot be opened for writing to roll it back: {e}",
            path.display()
        ))
    })?;
    if lock {
        rw.lock(path, true)?;
    }
    Journaled::new(
        Box::new(rw),
        JournalStore::Path(sidecar.to_path_buf(), None),
    )?
    .recover()?;
    Ok(())
}

/// The sidecar journal of the file at `path`.
///
/// ```
/// let p = arca::journal_path(std::path::Path::new("run.arca"));
/// assert_eq!(p, std::path::Path::new("run.arca-journal"));
/// ```
pub fn journal_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push("-journal");
    PathBuf::from(s)
}

/// Whether the file at `path` has a *hot* journal: one left by a writer that
/// stopped inside a transaction, which the next open rolls back. A journal
/// that exists but is empty or torn before its header is cold and harmless.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("x.arca");
/// arca::File::create(&path).unwrap().close().unwrap();
/// assert!(!arca::journal_is_hot(&path).unwrap());
/// ```
///
/// # Errors
/// [`Error::Io`] if the journal exists but cannot be read.
pub fn journal_is_hot(path: &Path) -> Result<bool> {
    crate::journal::sidecar_is_hot(&journal_path(path))
}

/// An open arca file.
///
/// ```
/// use arca::{Datatype, DatasetOptions, File, Selection};
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("demo.arca");
/// let f = File::create(&path).unwrap();
/// let g = f.root().create_group("results").unwrap();
/// let ds = g.create_dataset("x", &DatasetOptions::new(Datatype::float(8), &[4])).unwrap();
/// ds.write_all(&[1.0f64, 2.0, 3.0, 4.0]).unwrap();
/// f.close().unwrap();
///
/// let f = File::open(&path).unwrap();
/// let x: Vec<f64> = f.root().dataset("results/x").unwrap().read_all().unwrap();
/// assert_eq!(x, vec![1.0, 2.0, 3.0, 4.0]);
/// ```
#[derive(Clone)]
pub struct File {
    file: FileHandle,
    path: Option<PathBuf>,
}

impl std::fmt::Debug for File {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("File")
            .field("writable", &self.is_writable())
            .finish()
    }
}

impl File {
    /// Settings for [`OpenOptions::open`].
    pub fn options() -> OpenOptions {
        OpenOptions::default()
    }

    /// Create a file, truncating any existing one.
    ///
    /// # Errors
    /// [`Error::Io`] if it cannot be created.
    pub fn create(path: impl AsRef<Path>) -> Result<File> {
        Self::options().mode(Mode::Create).open(path)
    }

    /// Open an existing file read-only.
    ///
    /// # Errors
    /// [`Error::Io`] or [`Error::Corrupt`].
    pub fn open(path: impl AsRef<Path>) -> Result<File> {
        Self::options().open(path)
    }

    /// Open an existing file for reading and writing.
    ///
    /// # Errors
    /// [`Error::Io`] or [`Error::Corrupt`].
    pub fn open_rw(path: impl AsRef<Path>) -> Result<File> {
        Self::options().mode(Mode::ReadWrite).open(path)
    }

    /// A new file that lives in memory only.
    ///
    /// # Errors
    /// Only on allocation failure inside the driver.
    pub fn in_memory() -> Result<File> {
        Self::options().open_driver(Box::new(MemoryDriver::new()), true, true)
    }

    /// A new in-memory file whose bytes are kept compressed (in a `compll`
    /// arena): it holds a fraction of its size in RAM.
    ///
    /// ```
    /// use arca::{Datatype, DatasetOptions, File};
    /// let f = File::in_memory_compressed().unwrap();
    /// let n = 2_000_000;
    /// let ds = f.root().create_dataset("z", &DatasetOptions::new(Datatype::float(8), &[n])).unwrap();
    /// ds.write_all(&vec![1.5f64; n as usize]).unwrap();
    /// f.flush().unwrap();
    /// // A few blocks stay uncompressed for speed; the rest is compressed.
    /// assert!(f.memory_bytes().unwrap() < n * 8 / 4);
    /// ```
    ///
    /// # Errors
    /// Only if the arena cannot be set up.
    pub fn in_memory_compressed() -> Result<File> {
        Self::options().open_driver(
            Box::new(crate::io::CompressedMemoryDriver::new()?),
            true,
            true,
        )
    }

    /// Bytes of RAM an in-memory file holds (`None` for files on disk).
    pub fn memory_bytes(&self) -> Option<u64> {
        self.file
            .lock()
            .ok()
            .and_then(|g| g.st.pager.driver().held_bytes())
    }

    /// Open an arca file image held in memory, read-only.
    ///
    /// # Errors
    /// [`Error::Corrupt`] if the bytes are not a valid file.
    pub fn from_bytes(bytes: Vec<u8>) -> Result<File> {
        Self::options().open_driver(Box::new(MemoryDriver::from_bytes(bytes)), false, false)
    }

    pub(crate) fn handle(&self) -> FileHandle {
        self.file.clone()
    }

    /// The root group `/`.
    pub fn root(&self) -> Group {
        let root = self
            .file
            .lock()
            .map(|g| g.sb.root)
            .unwrap_or(PAGE_SIZE as u64);
        Group::new(self.file.clone(), root, "/".into())
    }

    /// Whether the file was opened for writing.
    pub fn is_writable(&self) -> bool {
        self.file.lock().map(|g| g.st.writable).unwrap_or(false)
    }

    /// What reads of this file have fetched from storage since it was
    /// opened: chunks (a chunk served from the cache is not counted again)
    /// and bytes of chunks and contiguous data. [`crate::io_stats`] gives
    /// the process's.
    ///
    /// ```
    /// use arca::File;
    /// let f = File::in_memory().unwrap();
    /// assert_eq!(f.io_stats().chunks_read, 0);
    /// ```
    pub fn io_stats(&self) -> crate::io::IoStats {
        match self.file.lock() {
            Ok(g) => g.st.stats.snapshot(),
            Err(p) => p.into_inner().st.stats.snapshot(),
        }
    }

    /// Commit: write every pending change and sync it, atomically and
    /// durably: once it returns, even a power failure keeps this state.
    /// Inside [`File::transaction`] this waits for the transaction's end.
    ///
    /// # Errors
    /// [`Error::Io`]; after a failure the handle is poisoned.
    pub fn flush(&self) -> Result<()> {
        lock(&self.file)?.commit_durable()
    }

    /// Run `f` as one transaction: everything it changes is committed
    /// together when it returns `Ok`, and rolled back — the file as it was
    /// before the call — when it returns `Err` or panics. Nested calls join
    /// the outer transaction.
    ///
    /// The commit is atomic at once. It is durable against a power failure
    /// once the next transaction starts writing, or at [`File::flush`] or
    /// close; until then a power failure may take the file back to the
    /// previous commit (never to a mixture). A killed process loses nothing.
    ///
    /// ```
    /// use arca::{AttrValue, Error, File};
    /// let f = File::in_memory().unwrap();
    /// let r: arca::Result<()> = f.transaction(|f| {
    ///     f.root().create_group("half-done")?;
    ///     Err(Error::InvalidArgument("changed my mind".into()))
    /// });
    /// assert!(r.is_err());
    /// assert!(!f.root().contains("half-done").unwrap());
    /// ```
    ///
    /// # Errors
    /// `f`'s error; [`Error::ReadOnly`]; [`Error::InvalidArgument`] if the
    /// journal is off (nothing to roll back with).
    pub fn transaction<T>(&self, f: impl FnOnce(&File) -> Result<T>) -> Result<T> {
        self.begin_transaction()?;
        let mut guard = TxGuard {
            file: &self.file,
            armed: true,
        };
        let r = f(self);
        guard.armed = false;
        match r {
            Ok(v) => self.end_transaction(true).map(|_| v),
            Err(e) => {
                self.end_transaction(false)?;
                Err(e)
            }
        }
    }

    /// Start a transaction by hand (for bindings that cannot pass a
    /// closure); end it with [`File::end_transaction`]. Work done before is
    /// committed first.
    ///
    /// # Errors
    /// As for [`File::transaction`].
    pub fn begin_transaction(&self) -> Result<()> {
        lock(&self.file)?.begin_transaction()
    }

    /// End the innermost transaction: commit it, or roll everything back
    /// to the state before the outermost one. An inner rollback dooms the
    /// outer transaction: its commit then rolls back and reports it.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] with no transaction open, or when a
    /// commit found the transaction doomed; [`Error::Io`] on failure.
    pub fn end_transaction(&self, commit: bool) -> Result<()> {
        lock(&self.file)?.end_transaction(commit)
    }

    /// Whether opening rolled back a transaction that a crash interrupted.
    pub fn recovered(&self) -> bool {
        self.file.lock().map(|g| g.recovered).unwrap_or(false)
    }

    /// The path the file was opened from, if it is on disk.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Move a read-only file to the newest commit of the writer that has
    /// it open in another process (until then it sees the commit that was
    /// newest when it was opened or last refreshed). Returns whether
    /// anything changed; for writers, a no-op. Object handles stay valid:
    /// they read the new state from their next call (an object the writer
    /// deleted reports an error).
    ///
    /// ```
    /// use arca::{AttrValue, File};
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("live.arca");
    /// let w = File::create(&path).unwrap();
    /// let r = File::open(&path).unwrap(); // beside the writer
    /// w.root().attrs().set("step", &AttrValue::scalar(1i64)).unwrap();
    /// w.flush().unwrap();
    /// assert!(!r.root().attrs().contains("step").unwrap());
    /// assert!(r.refresh().unwrap());
    /// assert!(r.root().attrs().contains("step").unwrap());
    /// ```
    ///
    /// # Errors
    /// [`Error::Io`] on a failed read; [`Error::Corrupt`] if the new state
    /// does not verify.
    pub fn refresh(&self) -> Result<bool> {
        lock(&self.file)?.refresh()
    }

    /// The generation of the state this file shows: the number of commits
    /// the file has had.
    pub fn generation(&self) -> Result<u64> {
        Ok(lock(&self.file)?.sb.generation)
    }

    /// Flush and close. Handles to objects in this file stop working.
    ///
    /// # Errors
    /// As for [`File::flush`].
    pub fn close(self) -> Result<()> {
        lock(&self.file)?.close()
    }

    /// Object counts and bytes by kind, from a walk of the whole file.
    ///
    /// # Errors
    /// [`Error::Corrupt`] if a structure on the way is damaged.
    pub fn stat(&self) -> Result<Stat> {
        let mut g = lock(&self.file)?;
        g.write_back()?;
        super::stat::stat(&mut g)
    }

    /// Free-space figures: sections, free bytes, largest section, a
    /// histogram by size, fragmentation.
    ///
    /// # Errors
    /// Only if the file is closed.
    pub fn space_info(&self) -> Result<SpaceInfo> {
        let g = lock(&self.file)?;
        Ok(SpaceInfo::from_sections(
            &g.st.space.sections(),
            g.st.space.eof(),
        ))
    }

    /// Every extent of the file in address order — the superblock, each
    /// live structure, free sections and reserved space — with what it
    /// holds: a map of where the file's bytes go.
    ///
    /// # Errors
    /// [`Error::Corrupt`] if a structure on the way is damaged.
    pub fn space_map(&self) -> Result<Vec<Extent>> {
        let mut g = lock(&self.file)?;
        g.write_back()?;
        super::stat::space_map(&mut g)
    }

    /// Read every structure and every chunk, verifying checksums and that
    /// chunks decode; returns the first damage found.
    ///
    /// # Errors
    /// [`Error::Corrupt`] naming the damaged structure and its offset.
    pub fn check(&self) -> Result<Stat> {
        let mut g = lock(&self.file)?;
        g.write_back()?;
        super::stat::check(&mut g)
    }
}

/// Rolls back a transaction whose closure panicked.
struct TxGuard<'a> {
    file: &'a FileHandle,
    armed: bool,
}

impl Drop for TxGuard<'_> {
    fn drop(&mut self) {
        if self.armed {
            if let Ok(mut g) = self.file.lock() {
                g.abandon_transaction();
            }
        }
    }
}
