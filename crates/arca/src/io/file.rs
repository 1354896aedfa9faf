//! A POSIX file, written with pread/pwrite.

use std::fs;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;

use super::driver::{Driver, ReadAt};
use crate::error::{Error, Result};

/// A driver over an ordinary file.
///
/// ```no_run
/// use arca::io::{Driver, FileDriver};
/// let d = FileDriver::open("data.arca", false).unwrap();
/// println!("{} bytes", d.len().unwrap());
/// ```
#[derive(Debug)]
pub struct FileDriver {
    /// Shared with the readers [`Driver::shared_reader`] hands out.
    file: Arc<fs::File>,
    /// The lock-holder note this driver wrote and removes on drop.
    note: Option<std::path::PathBuf>,
}

impl FileDriver {
    /// Open an existing file, for writing when `writable`.
    ///
    /// # Errors
    /// [`Error::Io`] when the file cannot be opened.
    pub fn open(path: impl AsRef<Path>, writable: bool) -> Result<Self> {
        let path = path.as_ref();
        let file = fs::OpenOptions::new()
            .read(true)
            .write(writable)
            .open(path)
            .map_err(|e| Error::io(format!("opening {}", path.display()), e))?;
        Ok(Self {
            file: Arc::new(file),
            note: None,
        })
    }

    /// Create a file; with `exclusive`, fail if it exists, otherwise truncate it.
    ///
    /// # Errors
    /// [`Error::AlreadyExists`] for an exclusive create of an existing file,
    /// [`Error::Io`] otherwise.
    pub fn create(path: impl AsRef<Path>, exclusive: bool) -> Result<Self> {
        let path = path.as_ref();
        let mut opts = fs::OpenOptions::new();
        opts.read(true).write(true);
        if exclusive {
            opts.create_new(true);
        } else {
            opts.create(true).truncate(true);
        }
        let file = opts.open(path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                Error::AlreadyExists(path.display().to_string())
            } else {
                Error::io(format!("creating {}", path.display()), e)
            }
        })?;
        Ok(Self {
            file: Arc::new(file),
            note: None,
        })
    }
}

impl FileDriver {
    /// Open a file for writing, creating it if missing, without truncating
    /// (a caller replaces its contents once it holds the lock).
    ///
    /// # Errors
    /// [`Error::Io`] when the file cannot be opened or created.
    pub fn open_or_create(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let file = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| Error::io(format!("creating {}", path.display()), e))?;
        Ok(Self {
            file: Arc::new(file),
            note: None,
        })
    }
}

/// Where a writer notes who it is, so others can be told who holds the lock.
fn note_path(path: &Path) -> std::path::PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push("-lock");
    std::path::PathBuf::from(s)
}

impl FileDriver {
    /// Take the advisory lock on `path`: exclusive for a writer, shared for
    /// a reader. Held until the driver is dropped.
    ///
    /// # Errors
    /// [`Error::Locked`] naming the holder when another process has it.
    pub fn lock(&mut self, path: &Path, exclusive: bool) -> Result<()> {
        let r = if exclusive {
            self.file.try_lock()
        } else {
            self.file.try_lock_shared()
        };
        match r {
            Ok(()) => {
                if exclusive {
                    let note = note_path(path);
                    let who = format!(
                        "pid {} ({})",
                        std::process::id(),
                        std::env::args().next().unwrap_or_default()
                    );
                    // The note only improves the message others see; failing to write it is harmless.
                    if fs::write(&note, who).is_ok() {
                        self.note = Some(note);
                    }
                }
                Ok(())
            }
            Err(fs::TryLockError::WouldBlock) => {
                let holder = fs::read_to_string(note_path(path))
                    .ok()
                    .filter(|s| !s.is_empty());
                Err(Error::Locked(match (holder, exclusive) {
                    (Some(h), _) => format!("{} is being written by {h}", path.display()),
                    (None, true) => format!(
                        "{} is open in another process (readers hold it)",
                        path.display()
                    ),
                    (None, false) => {
                        format!("{} is being written by another process", path.display())
                    }
                }))
            }
            Err(fs::TryLockError::Error(e)) => {
                Err(Error::io(format!("locking {}", path.display()), e))
            }
        }
    }
}

impl FileDriver {
    /// Whether another process holds this file's exclusive lock (a
    /// writer), tested without keeping any lock.
    pub(crate) fn writer_holds(&self) -> Result<bool> {
        match self.file.try_lock_shared() {
            Ok(()) => {
                self.file
                    .unlock()
                    .map_err(|e| Error::io("unlocking the file", e))?;
                Ok(false)
            }
            Err(fs::TryLockError::WouldBlock) => Ok(true),
            Err(fs::TryLockError::Error(e)) => Err(Error::io("testing the file's lock", e)),
        }
    }

    /// Who holds the writer's lock, as its note says.
    pub(crate) fn holder(path: &Path) -> Option<String> {
        fs::read_to_string(note_path(path))
            .ok()
            .filter(|s| !s.is_empty())
    }
}

impl Drop for FileDriver {
    fn drop(&mut self) {
        if let Some(n) = self.note.take() {
            let _ = fs::remove_file(n);
        }
    }
}

/// Positional reads of a [`FileDriver`]'s file from any thread.
struct FileReader(Arc<fs::File>);

impl ReadAt for FileReader {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.0
            .read_exact_at(buf, offset)
            .map_err(|e| Error::io(format!("reading {} bytes at {offset}", buf.len()), e))
    }
}

impl Driver for FileDriver {
    fn shared_reader(&self) -> Option<Arc<dyn ReadAt>> {
        Some(Arc::new(FileReader(self.file.clone())))
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.file
            .read_exact_at(buf, offset)
            .map_err(|e| Error::io(format!("reading {} bytes at {offset}", buf.len()), e))
    }

    fn write_at(&mut self, offset: u64, data: &[u8]) -> Result<()> {
        super::points::write_point(data, |part| {
            let _ = self.file.write_all_at(part, offset);
        });
        self.file
            .write_all_at(data, offset)
            .map_err(|e| Error::io(format!("writing {} bytes at {offset}", data.len()), e))
    }

    fn start_writeback(&self) {
        start_writeback(&self.file, 0, 0);
    }

    fn sync(&mut self) -> Result<()> {
        super::points::point();
        self.file
            .sync_data()
            .map_err(|e| Error::io("syncing the file", e))
    }

    fn truncate(&mut self, len: u64) -> Result<()> {
        super::points::point();
        self.file
            .set_len(len)
            .map_err(|e| Error::io(format!("truncating to {len}"), e))
    }

    fn len(&self) -> Result<u64> {
        self.file
            .metadata()
            .map(|m| m.len())
            .map_err(|e| Error::io("reading the file size", e))
    }
}

/// Write all of `bytes` at `at` in `file` and ask the kernel to start
/// writing them to disk at once, without waiting for it (Linux's
/// `sync_file_range` with `SYNC_FILE_RANGE_WRITE`; elsewhere only the
/// write). A sync after many such writes then finds little left to do:
/// the disk worked while the writer went on. Processes that write chunks
/// into space a file reserved for them (the ranks of an MPI job) write
/// this way, so that the commit's sync does not wait for all their bytes
/// at the end.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let f = std::fs::File::create(dir.path().join("x")).unwrap();
/// arca::io::write_out(&f, b"abc", 4).unwrap();
/// assert_eq!(std::fs::read(dir.path().join("x")).unwrap(), b"\0\0\0\0abc");
/// ```
///
/// # Errors
/// [`Error::Io`] when the write fails (a failure to start the writeback
/// is not one: the later sync does the work).
pub fn write_out(file: &fs::File, bytes: &[u8], at: u64) -> Result<()> {
    file.write_all_at(bytes, at)
        .map_err(|e| Error::io(format!("writing {} bytes at {at}", bytes.len()), e))?;
    start_writeback(file, at, bytes.len() as u64);
    Ok(())
}

/// Ask the kernel to start writing `len` bytes of `file` at `at` (0: to
/// its end) to disk, without waiting. Only a hint: a failure leaves the
/// work to the next sync.
fn start_writeback(file: &fs::File, at: u64, len: u64) {
    let _ = arca_writeback::start_writeback(file, at, len);
}
