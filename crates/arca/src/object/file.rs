//! The open file: [`File`], its transactions, flushes, refresh and
//! close, and the file-wide walks (stat, check, space map); the public
//! opening methods of [`OpenOptions`] (the protocol is in `open.rs`).

use std::path::{Path, PathBuf};

use super::group::{Group, Object};
use super::handle::{lock, FileHandle};
use super::open::{Mode, OpenOptions};
use super::stat::{Extent, Progress, Stat};
// The docs name the error kinds.
#[cfg(doc)]
use crate::error::Error;
use crate::error::Result;
use crate::io::{Driver, MemoryDriver};
use crate::pager::PAGE_SIZE;
use crate::space::SpaceInfo;

impl OpenOptions {
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
        Ok(File {
            file: self.proved(self.open_path(path)?)?,
            path: Some(path.to_path_buf()),
            url: None,
        })
    }

    /// Open the file at `url` on object storage (`s3://bucket/key`,
    /// `gs://…`, `az://…`, `http(s)://…`, `file:///path`, `memory:///key`);
    /// `cloud` holds the store's keys (credentials, endpoint, region) and
    /// arca's read-ahead, cache, retry and staging settings. See
    /// docs/CLOUD.md.
    ///
    /// Read-only ([`Mode::Read`]), opening costs one request (a ranged GET
    /// of the file's head). The other modes stage the file in a local file
    /// (fetched whole, one GET, for [`Mode::ReadWrite`] and
    /// [`Mode::Append`]; a HEAD for [`Mode::Create`] and
    /// [`Mode::CreateNew`]) written with the local journal, and publish it
    /// at each commit ([`File::flush`], a transaction's end) and at close
    /// with one conditional PUT (on S3 from the `multipart_threshold`
    /// option up, a multipart upload of `part_size` parts whose completion
    /// carries the condition): `If-None-Match: *` while the object does
    /// not exist, else `If-Match` the version opened or last published. A
    /// writer that lost a race gets [`Error::Conflict`], its staged file
    /// kept; a publish whose answer was lost is recognised by the token it
    /// marks the object with, not taken for a conflict. A `file://` URL
    /// opens the path itself.
    ///
    /// ```
    /// use arca::{io::CloudOptions, AttrValue, File, Mode};
    /// let o = CloudOptions::new();
    /// let url = "memory:///doc/open_url.arca";
    /// let f = File::options().mode(Mode::CreateNew).open_url(url, &o).unwrap();
    /// f.root().attrs().set("step", &AttrValue::scalar(1i64)).unwrap();
    /// f.close().unwrap(); // published: one PUT, If-None-Match: *
    /// let f = File::options().open_url(url, &o).unwrap();
    /// assert_eq!((f.io_stats().requests, f.url()), (1, Some(url)));
    /// assert!(f.root().attrs().contains("step").unwrap());
    /// let e = File::options().mode(Mode::CreateNew).open_url(url, &o);
    /// assert!(matches!(e, Err(arca::Error::Conflict { .. })));
    /// let e = File::options().mode(Mode::Append).open_url("https://example.org/a.arca", &o);
    /// assert!(matches!(e, Err(arca::Error::Unsupported(_))));
    /// ```
    ///
    /// # Errors
    /// [`Error::Unsupported`] for a mode but [`Mode::Read`] on an
    /// `http(s)://` URL, [`Error::InvalidArgument`] for a URL or option
    /// arca cannot use, [`Error::Remote`] when a request fails after its
    /// retries, [`Error::Conflict`] when another writer got there first
    /// (from the commit that publishes, or at open for
    /// [`Mode::CreateNew`] on an existing object), and as for
    /// [`OpenOptions::open`].
    #[cfg(feature = "cloud")]
    pub fn open_url(&self, url: &str, cloud: &crate::io::CloudOptions) -> Result<File> {
        Ok(File {
            file: self.proved(self.open_url_handle(url, cloud)?)?,
            path: None,
            url: Some(url.to_string()),
        })
    }

    /// [`OpenOptions::open_url`] for the object `key` in a store made by
    /// the caller (its own credentials provider, a wrapped store); `url`
    /// names the file in errors and [`File::url`].
    ///
    /// ```
    /// use arca::io::{memory_store, object_store::path::Path, CloudOptions};
    /// use arca::{File, Mode};
    /// let key = Path::from("doc/open_store.arca");
    /// let f = File::options().mode(Mode::Create)
    ///     .open_store(memory_store(), key.clone(), "memory:///doc/open_store.arca",
    ///                 &CloudOptions::new())
    ///     .unwrap();
    /// f.close().unwrap();
    /// assert_eq!(File::options().open_url("memory:///doc/open_store.arca",
    ///     &CloudOptions::new()).unwrap().generation().unwrap(), 1);
    /// ```
    ///
    /// # Errors
    /// As for [`OpenOptions::open_url`].
    #[cfg(feature = "cloud")]
    pub fn open_store(
        &self,
        store: std::sync::Arc<dyn crate::io::object_store::ObjectStore>,
        key: crate::io::object_store::path::Path,
        url: &str,
        cloud: &crate::io::CloudOptions,
    ) -> Result<File> {
        Ok(File {
            file: self.proved(self.open_store_handle(store, key, url, cloud)?)?,
            path: None,
            url: Some(url.to_string()),
        })
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
        self.open_drivers(driver, self.memory_journal(writable), create, writable)
    }

    /// Open a file over a data driver and a journal driver (None: no
    /// journal). A hot journal is rolled back before anything is read. This
    /// is how fault-injection tests put both on one simulated disk.
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
        Ok(File {
            file: self.proved(self.open_over(driver, journal, create, writable)?)?,
            path: None,
            url: None,
        })
    }
}

impl OpenOptions {
    /// A writable file whose free space is proven when that is asked for
    /// or worth it (S7 in `space.rs`). A failed proof the caller did not
    /// ask for leaves the space unproven: it is not reused, and `check`
    /// reports the damage.
    fn proved(&self, file: FileHandle) -> Result<FileHandle> {
        let r = {
            let mut g = lock(&file)?;
            g.set_prover(super::stat::prove_space);
            let wanted = self.proves_space() || g.st.space.wants_proof();
            if !g.st.writable || g.st.space.is_proven() || !wanted {
                Ok(())
            } else {
                super::stat::prove_space(&mut g)
            }
        };
        match r {
            Err(e) if self.proves_space() => {
                if let Ok(mut g) = lock(&file) {
                    let _ = g.close();
                }
                Err(e)
            }
            _ => Ok(file),
        }
    }
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
    /// The URL a file on object storage was opened from.
    url: Option<String>,
}

impl std::fmt::Debug for File {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("File")
            .field("writable", &self.is_writable())
            .finish()
    }
}

impl Object {
    /// The file this object lies in: for one reached through an external
    /// link, the other file (opened with the intent of the file the link
    /// is in when it can be: see [`Group::link_external`]).
    pub fn file(&self) -> File {
        File::from_handle(self.handle().clone())
    }
}

impl File {
    /// The file behind an open session: how an object reached through an
    /// external link names the file it lies in.
    pub(crate) fn from_handle(file: FileHandle) -> File {
        let path = lock(&file)
            .ok()
            .and_then(|g| g.path().map(Path::to_path_buf));
        File {
            file,
            path,
            url: None,
        }
    }

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

    /// What the file's metadata page cache holds now, and its bound
    /// ([`OpenOptions::page_cache_pages`](crate::OpenOptions::page_cache_pages)):
    /// see [`CacheStats`](crate::CacheStats).
    ///
    /// ```
    /// use arca::File;
    /// let f = File::in_memory().unwrap();
    /// f.root().create_group("g").unwrap();
    /// let s = f.cache_stats();
    /// assert!(s.dirty_pages >= 1 && s.pages <= s.capacity);
    /// f.flush().unwrap();
    /// assert_eq!(f.cache_stats().dirty_pages, 0);
    /// ```
    pub fn cache_stats(&self) -> crate::pager::CacheStats {
        let g = match self.file.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        g.st.pager.stats()
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
        let g = match self.file.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        let mut s = g.st.stats.snapshot();
        if let Some(f) = g.st.pager.driver().fetches() {
            f.add_to(&mut s);
        }
        if let Some(f) = g.publisher_fetches() {
            f.add_to(&mut s);
        }
        s
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
        self.file.lock().map(|g| g.recovered()).unwrap_or(false)
    }

    /// The path the file was opened from, if it is on disk.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The URL the file was opened from, if it is on object storage
    /// (see [`OpenOptions::open_url`]).
    pub fn url(&self) -> Option<&str> {
        self.url.as_deref()
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
    /// A handle poisoned by a failed write closes too, committing nothing:
    /// its locks and reader-table entries go, and a journal it left hot
    /// stays for the next writer (or a reader) to roll back; the call then
    /// returns [`Error::Poisoned`].
    ///
    /// # Errors
    /// As for [`File::flush`]; [`Error::Poisoned`] as above.
    pub fn close(self) -> Result<()> {
        // Not `lock`, which refuses a poisoned session: it must still let go.
        let mut g = self
            .file
            .lock()
            .map_err(|_| crate::error::Error::Poisoned)?;
        // Objects made without a name and never linked go first; a failure
        // there commits nothing (the last commit stays).
        let released = match g.check_usable() {
            Ok(()) => super::unnamed::release(&mut g),
            Err(_) => Ok(()),
        };
        if released.is_err() {
            g.poison();
        }
        let closed = g.close();
        released.and(closed)
    }

    /// Reserve `bytes` at the end of the file for the metadata written
    /// until the next commit (see `FileSpace::reserve_meta`).
    pub(crate) fn reserve_metadata(&self, bytes: u64) -> Result<()> {
        let mut g = lock(&self.file)?;
        g.st.check_writable()?;
        g.st.space.reserve_meta(bytes)
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
        self.check_with_progress(&mut |_, _| {})
    }

    /// [`File::check`], telling `progress` the bytes verified so far of the
    /// file's size as it goes (for a progress bar on a large file).
    ///
    /// ```
    /// let f = arca::File::in_memory().unwrap();
    /// let mut calls = 0;
    /// f.check_with_progress(&mut |done, total| {
    ///     assert!(done <= total);
    ///     calls += 1;
    /// })
    /// .unwrap();
    /// assert!(calls > 0);
    /// ```
    ///
    /// # Errors
    /// As for [`File::check`].
    pub fn check_with_progress(&self, progress: &mut Progress) -> Result<Stat> {
        let mut g = lock(&self.file)?;
        g.write_back()?;
        super::stat::check(&mut g, progress)
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
