//! Opening files: the open modes and options, and the protocol that turns
//! a path or a pair of drivers into a session behind its handle — the
//! reader table and locks, recovery of a hot journal, snapshot readers —
//! for [`crate::File`] (whose public opening methods wrap these) and for
//! the files external links lead to.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::handle::FileHandle;
use super::session::Session;
use crate::error::{Error, Result};
use crate::format::object_header::Header;
use crate::format::superblock::Superblock;
use crate::io::{Driver, FileDriver, MemoryDriver};
use crate::journal::{JournalStore, Journaled};
use crate::pager::{Pager, PAGE_SIZE};
use crate::space::{FileSpace, FreeListKind};
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
    prove_space: bool,
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
            prove_space: false,
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

    /// Whether a writable open proves the file's free space before any
    /// write (default off). Space the file names as free is never handed
    /// out unproven: by default a writable open walks the file's structures
    /// to prove it only when it is at least an eighth of the file, and
    /// otherwise new space comes from the end of the file. On, the walk
    /// always runs (its cost is about that of [`crate::File::stat`]), so
    /// free space is reused from the first write, and a file whose
    /// structures overlap each other or its free space fails to open with
    /// [`crate::Error::Corrupt`] naming both. For files from untrusted
    /// producers.
    ///
    /// ```
    /// use arca::{File, Mode};
    /// let dir = tempfile::tempdir().unwrap();
    /// let p = dir.path().join("a.arca");
    /// File::create(&p).unwrap().root().create_group("g").unwrap();
    /// let f = File::options().mode(Mode::ReadWrite).prove_space(true).open(&p).unwrap();
    /// f.root().delete("g").unwrap();
    /// ```
    pub fn prove_space(&mut self, on: bool) -> &mut Self {
        self.prove_space = on;
        self
    }

    /// Whether writable opens always prove the file's free space.
    pub(crate) fn proves_space(&self) -> bool {
        self.prove_space
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

    /// Open or create the file at `path` (see [`OpenOptions::open`]).
    pub(crate) fn open_path(&self, path: &Path) -> Result<FileHandle> {
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
        let file = self.open_journaled(driver, create, writable)?;
        if let Ok(mut g) = file.lock() {
            g.set_recovered(recovered);
            g.set_path(path);
            if let (true, Some(t)) = (serve, table) {
                let s = crate::snapshot::Publisher::start(path, t, g.sb.generation)?;
                g.st.pager.journal().serve_readers(Box::new(s));
                // The first transaction began before there was anyone to
                // serve: begin it again, holding frees and keeping history.
                g.begin();
            }
        }
        Ok(file)
    }

    /// Open read-only as a snapshot reader: beside a writer in another
    /// process, this file sees the last commit as of now until
    /// [`crate::File::refresh`].
    fn open_snapshot(
        &self,
        path: &Path,
        table: crate::snapshot::ReaderTable,
    ) -> Result<FileHandle> {
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
        let file = self.open_journaled(driver, false, false)?;
        if let Ok(mut g) = file.lock() {
            g.check_snapshot(snap)?;
            g.set_recovered(recovered);
            g.set_path(path);
            g.set_reader(reader);
        }
        Ok(file)
    }

    /// Open the object at `url` (see [`crate::File::open_url`]).
    #[cfg(feature = "cloud")]
    pub(crate) fn open_url_handle(
        &self,
        url: &str,
        cloud: &crate::io::CloudOptions,
    ) -> Result<FileHandle> {
        if self.mode == Mode::Read {
            let d = crate::io::CloudDriver::open(url, cloud)?;
            return self.open_over(Box::new(d), None, false, false);
        }
        if let Some(path) = local_url(url) {
            // The local file system needs no staging: the file is written
            // in place, under its own lock and journal.
            return self.open_path(&path);
        }
        let (staged, create) = crate::io::Staged::open(url, cloud, self.intent())?;
        self.open_staged(staged, create)
    }

    /// Open `key` in a store made by the caller (see
    /// [`crate::File::open_url`]); `url` names it in errors.
    #[cfg(feature = "cloud")]
    pub(crate) fn open_store_handle(
        &self,
        store: std::sync::Arc<dyn object_store::ObjectStore>,
        key: object_store::path::Path,
        url: &str,
        cloud: &crate::io::CloudOptions,
    ) -> Result<FileHandle> {
        if self.mode == Mode::Read {
            let d = crate::io::CloudDriver::over_store(store, key, url, cloud)?;
            return self.open_over(Box::new(d), None, false, false);
        }
        let (staged, create) =
            crate::io::Staged::over_store(store, key, url, cloud, self.intent())?;
        self.open_staged(staged, create)
    }

    /// What a writable mode wants of an object.
    #[cfg(feature = "cloud")]
    fn intent(&self) -> crate::io::Intent {
        use crate::io::Intent;
        match self.mode {
            Mode::ReadWrite => Intent::Change { must_exist: true },
            Mode::Append => Intent::Change { must_exist: false },
            Mode::Create => Intent::Replace,
            Mode::CreateNew | Mode::Read => Intent::CreateNew,
        }
    }

    /// The staged file opened with the local machinery (lock, journal),
    /// its commits published through `staged`.
    #[cfg(feature = "cloud")]
    fn open_staged(&self, staged: crate::io::Staged, create: bool) -> Result<FileHandle> {
        let mut o = self.clone();
        o.mode(if create {
            Mode::CreateNew
        } else {
            Mode::ReadWrite
        });
        let file = match o.open_path(staged.file()) {
            Ok(f) => f,
            Err(e) => {
                staged.discard();
                return Err(e);
            }
        };
        file.lock()
            .map_err(|_| Error::Poisoned)?
            .set_publisher(Box::new(staged), create);
        Ok(file)
    }

    /// The journal of a file opened over a driver alone: in memory, if
    /// the file journals (see [`OpenOptions::open_driver`]).
    pub(crate) fn memory_journal(&self, writable: bool) -> Option<Box<dyn Driver>> {
        (self.journal && writable).then(|| Box::new(MemoryDriver::new()) as _)
    }

    /// Open a file over a data driver and a journal driver (see
    /// [`OpenOptions::open_drivers`]).
    pub(crate) fn open_over(
        &self,
        driver: Box<dyn Driver>,
        journal: Option<Box<dyn Driver>>,
        create: bool,
        writable: bool,
    ) -> Result<FileHandle> {
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
        let file = self.open_journaled(d, create, writable)?;
        if let Ok(mut g) = file.lock() {
            g.set_recovered(recovered);
        }
        Ok(file)
    }

    /// The session over a journaled driver: a new empty file when
    /// `create`, else the file the driver holds, checked as far as its root.
    fn open_journaled(
        &self,
        mut driver: Journaled,
        create: bool,
        writable: bool,
    ) -> Result<FileHandle> {
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
            left: [0; 2],
            meta_end: 0,
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
            // Everything in a new file is this session's own.
            inner.set_space_proven();
            inner.trust_all_vectors();
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
            inner.close_unopened();
            return Err(e);
        }
        Ok(Arc::new(Mutex::new(inner)))
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

/// The path of a `file://` URL, if `url` is one.
#[cfg(feature = "cloud")]
fn local_url(url: &str) -> Option<PathBuf> {
    let u = url::Url::parse(url).ok()?;
    if u.scheme() == "file" {
        u.to_file_path().ok()
    } else {
        None
    }
}
