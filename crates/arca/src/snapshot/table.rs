//! The reader table: who reads which snapshot, in a sidecar `PATH-readers`.
//!
//! ```text
//! page 0   +0  [u8; 8] "ARCARDR1"
//!          +8  [u8; 40] boot id of the machine that wrote it (a table from
//!                       an earlier boot is stale: nobody in it is alive)
//!          +64 u64, u64 published generation + 1 (0: unknown), and its
//!                       complement, so a torn read is seen as torn
//! page 1.. 128 slots of 64 bytes: u64 value and its complement;
//!          value 0: free, u64::MAX: claimed, snapshot not yet chosen,
//!          else the reader's snapshot generation + 1
//! ```
//! Liveness is never read from the values: each slot is held under an
//! open-file-description lock on its 64 bytes, which the kernel drops when
//! its holder dies, so a killed reader frees its slot by dying. Byte 0 is
//! locked by the writer while it serves snapshot readers; byte 1 guards
//! creating, reinitialising and removing the table.

use std::fs;
use std::os::fd::AsFd;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

use nix::fcntl::{fcntl, FcntlArg};
use nix::libc;

use super::history::history_path;
use super::sidecar::{pair, settle, sidecar, unpair};
use crate::error::{Error, Result};

const MAGIC: &[u8; 8] = b"ARCARDR1";
const PUBLISHED: u64 = 64;
const COMMITTING: u64 = 80;
const SLOT_BASE: u64 = 4096;
const SLOT_LEN: u64 = 64;
/// Reader processes (open files) that can hold a snapshot at once.
pub(crate) const SLOTS: usize = 128;
const TABLE_LEN: u64 = SLOT_BASE + SLOT_LEN * SLOTS as u64;
const WRITER_BYTE: u64 = 0;
const INIT_BYTE: u64 = 1;
const FREE: u64 = 0;
const CLAIMED: u64 = u64::MAX;

/// The sidecar reader table of the file at `path`.
pub(crate) fn table_path(path: &Path) -> PathBuf {
    sidecar(path, "-readers")
}

fn boot_id() -> [u8; 40] {
    let mut out = [0u8; 40];
    if let Ok(s) = fs::read_to_string("/proc/sys/kernel/random/boot_id") {
        let b = s.trim().as_bytes();
        let n = b.len().min(40);
        out[..n].copy_from_slice(&b[..n]);
    }
    out
}

fn lock_arg(kind: libc::c_short, start: u64, len: u64) -> libc::flock {
    libc::flock {
        l_type: kind,
        l_whence: libc::SEEK_SET as libc::c_short,
        l_start: start as libc::off_t,
        l_len: len as libc::off_t,
        l_pid: 0,
    }
}

/// What a handle registers as when it opens a table.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Role {
    /// A snapshot reader: claims a slot.
    Reader,
    /// A writer that serves snapshot readers: takes the writer lock
    /// (`Locked` if another has it).
    Writer,
    /// A writer that does not serve them: only looks.
    Plain,
}

/// One process's handle on a reader table. Locks belong to this handle's
/// open file description: two handles in one process exclude each other
/// as two processes would.
pub(crate) struct ReaderTable {
    file: fs::File,
    path: PathBuf,
    slot: Option<usize>,
    /// The data file's history and undo journal: removed with the table
    /// by the last to close (see [`ReaderTable::close`]).
    history: PathBuf,
    journal: PathBuf,
    /// Closed already (or never registered): nothing to tidy at drop.
    closed: bool,
}

fn io_err(what: &str, path: &Path, e: impl Into<std::io::Error>) -> Error {
    Error::io(format!("{what} {}", path.display()), e.into())
}

/// The kind of network file system `data` lives on, if it is one: there
/// the readers' view of the writer's bytes is not one page cache, and
/// byte-range locks are not all honoured, so snapshot readers are refused
/// (readers and writers then exclude each other by whole-file locks).
pub(crate) fn network_fs(data: &Path) -> Option<&'static str> {
    let dir = data
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let st = nix::sys::statfs::statfs(dir).ok()?;
    // Magic numbers from statfs(2); FUSE is left alone (often local).
    match st.filesystem_type().0 as u64 {
        0x6969 => Some("NFS"),
        0xFF53_4D42 => Some("CIFS"),
        0xFE53_4D42 => Some("SMB2"),
        0x517B => Some("SMB"),
        0x00C3_6400 => Some("CephFS"),
        0x0BD0_0BD0 => Some("Lustre"),
        0x4750_4653 => Some("GPFS"),
        0x5346_414F => Some("AFS"),
        0x6B41_4653 => Some("kAFS"),
        0x7461_636F => Some("OCFS2"),
        0x0116_1970 => Some("GFS2"),
        0x564C => Some("NCP"),
        0x0102_1997 => Some("9P"),
        _ => None,
    }
}

impl ReaderTable {
    /// Open (creating if needed) the table of the file at `data`, and
    /// register as `role`. `None` when it can be neither created nor
    /// opened for writing (a read-only directory) or lives on a network
    /// file system: the caller falls back to whole-file locks.
    pub(crate) fn open(data: &Path, role: Role) -> Result<Option<ReaderTable>> {
        if network_fs(data).is_some() {
            return Ok(None);
        }
        let path = table_path(data);
        loop {
            let file = match fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
            {
                Ok(f) => f,
                Err(_) => return Ok(None),
            };
            let mut t = ReaderTable {
                file,
                path: path.clone(),
                slot: None,
                history: history_path(data),
                journal: sidecar(data, "-journal"),
                closed: true,
            };
            t.lock(INIT_BYTE, 1, true)?;
            // Another process may have removed the table between our open
            // and our lock (see `close`): then open afresh.
            if !t.is_current() {
                continue;
            }
            // Registered under the init lock, so `close` (which takes it
            // too) sees this handle's writer or reader.
            let r = t.init().and_then(|()| match role {
                Role::Writer if !t.lock_writer()? => Err(Error::Locked(format!(
                    "{} is being written by another process",
                    data.display()
                ))),
                Role::Reader => t.claim(),
                _ => Ok(()),
            });
            t.unlock(INIT_BYTE, 1)?;
            r?;
            t.closed = false;
            return Ok(Some(t));
        }
    }

    /// Under the init lock: make the header current, zeroing a table left
    /// by an earlier boot or never finished.
    fn init(&self) -> Result<()> {
        let mut head = [0u8; 48];
        let len = self
            .file
            .metadata()
            .map_err(|e| io_err("reading", &self.path, e))?
            .len();
        if len >= TABLE_LEN {
            self.file
                .read_exact_at(&mut head, 0)
                .map_err(|e| io_err("reading", &self.path, e))?;
        }
        let boot = boot_id();
        if len >= TABLE_LEN && &head[..8] == MAGIC && head[8..48] == boot[..] {
            return Ok(());
        }
        let mut page = vec![0u8; TABLE_LEN as usize];
        page[..8].copy_from_slice(MAGIC);
        page[8..48].copy_from_slice(&boot);
        page[PUBLISHED as usize..PUBLISHED as usize + 16].copy_from_slice(&pair(0));
        page[COMMITTING as usize..COMMITTING as usize + 16].copy_from_slice(&pair(0));
        for i in 0..SLOTS {
            let at = (SLOT_BASE + SLOT_LEN * i as u64) as usize;
            page[at..at + 16].copy_from_slice(&pair(FREE));
        }
        self.file
            .write_all_at(&page, 0)
            .map_err(|e| io_err("writing", &self.path, e))
    }

    fn lock(&self, start: u64, len: u64, wait: bool) -> Result<()> {
        let fl = lock_arg(libc::F_WRLCK as libc::c_short, start, len);
        let arg = if wait {
            FcntlArg::F_OFD_SETLKW(&fl)
        } else {
            FcntlArg::F_OFD_SETLK(&fl)
        };
        fcntl(self.file.as_fd(), arg).map_err(|e| io_err("locking", &self.path, e))?;
        Ok(())
    }

    fn try_lock(&self, start: u64, len: u64) -> Result<bool> {
        match self.lock(start, len, false) {
            Ok(()) => Ok(true),
            Err(Error::Io { source, .. })
                if matches!(
                    source.raw_os_error(),
                    Some(libc::EAGAIN) | Some(libc::EACCES)
                ) =>
            {
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    fn unlock(&self, start: u64, len: u64) -> Result<()> {
        let fl = lock_arg(libc::F_UNLCK as libc::c_short, start, len);
        fcntl(self.file.as_fd(), FcntlArg::F_OFD_SETLK(&fl))
            .map_err(|e| io_err("unlocking", &self.path, e))?;
        Ok(())
    }

    /// Whether another handle holds a lock on these bytes.
    fn held_elsewhere(&self, start: u64, len: u64) -> Result<bool> {
        let mut fl = lock_arg(libc::F_WRLCK as libc::c_short, start, len);
        fcntl(self.file.as_fd(), FcntlArg::F_OFD_GETLK(&mut fl))
            .map_err(|e| io_err("testing a lock on", &self.path, e))?;
        Ok(fl.l_type != libc::F_UNLCK as libc::c_short)
    }

    /// Become the writer that serves snapshot readers (held until drop).
    pub(crate) fn lock_writer(&self) -> Result<bool> {
        self.try_lock(WRITER_BYTE, 1)
    }

    /// Whether a writer serving snapshot readers has the file open.
    pub(crate) fn writer_present(&self) -> Result<bool> {
        self.held_elsewhere(WRITER_BYTE, 1)
    }

    fn read_pair(&self, at: u64) -> Result<Option<u64>> {
        let mut b = [0u8; 16];
        self.file
            .read_exact_at(&mut b, at)
            .map_err(|e| io_err("reading", &self.path, e))?;
        Ok(unpair(&b))
    }

    fn write_pair(&self, at: u64, v: u64) -> Result<()> {
        let b = pair(v);
        crate::io::fault_write_point(&b, |part| {
            let _ = self.file.write_all_at(part, at);
        });
        self.file
            .write_all_at(&b, at)
            .map_err(|e| io_err("writing", &self.path, e))
    }

    /// A generation stored at `at` as value + 1 (0: none). A torn pair is
    /// a write in progress: it settles soon (see [`settle`] for how long
    /// is waited before its writer is taken for dead).
    fn settled(&self, at: u64, what: &str) -> Result<Option<u64>> {
        match settle(|| self.read_pair(at))? {
            Some(v) => Ok(v.checked_sub(1)),
            None => Err(Error::corrupt(
                "reader table",
                at,
                format!("the {what} generation never reads whole"),
            )),
        }
    }

    /// The generation of the writer's last commit, if a writer serving
    /// readers published one in this boot.
    pub(crate) fn published(&self) -> Result<Option<u64>> {
        self.settled(PUBLISHED, "published")
    }

    /// Announce that the commit making `generation` may give its frees
    /// back at once, before looking for readers (R3).
    pub(crate) fn announce(&self, generation: Option<u64>) -> Result<()> {
        self.write_pair(COMMITTING, generation.map_or(0, |g| g + 1))
    }

    /// The generation a reader must not start below: a commit announced
    /// but not yet published.
    pub(crate) fn committing(&self) -> Result<Option<u64>> {
        self.settled(COMMITTING, "committing")
    }

    /// Publish the last committed generation (None: unknown, for a writer
    /// that does not serve readers).
    pub(crate) fn publish(&self, generation: Option<u64>) -> Result<()> {
        self.write_pair(PUBLISHED, generation.map_or(0, |g| g + 1))
    }

    fn slot_at(i: usize) -> u64 {
        SLOT_BASE + SLOT_LEN * i as u64
    }

    /// Take a free slot (its lock), marked claimed until [`Self::set`].
    ///
    /// # Errors
    /// [`Error::Locked`] when every slot is taken.
    pub(crate) fn claim(&mut self) -> Result<()> {
        if self.slot.is_some() {
            return Ok(());
        }
        for i in 0..SLOTS {
            if self.try_lock(Self::slot_at(i), SLOT_LEN)? {
                self.write_pair(Self::slot_at(i), CLAIMED)?;
                self.slot = Some(i);
                return Ok(());
            }
        }
        Err(Error::Locked(format!(
            "{}: all {SLOTS} reader slots are taken",
            self.path.display()
        )))
    }

    /// Record the snapshot this handle's reader sees.
    pub(crate) fn set(&self, generation: u64) -> Result<()> {
        match self.slot {
            Some(i) => self.write_pair(Self::slot_at(i), generation + 1),
            None => Ok(()),
        }
    }

    /// The oldest snapshot a live reader may be reading: `None` when no
    /// reader is live; a slot claimed but not yet set counts as 0, so
    /// nothing it could still choose is given away.
    pub(crate) fn oldest(&self) -> Result<Option<u64>> {
        let mut all = vec![0u8; (SLOT_LEN * SLOTS as u64) as usize];
        self.file
            .read_exact_at(&mut all, SLOT_BASE)
            .map_err(|e| io_err("reading", &self.path, e))?;
        let mut oldest: Option<u64> = None;
        for i in 0..SLOTS {
            let at = i * SLOT_LEN as usize;
            let value = unpair(&all[at..at + 16]);
            // A slot that reads free is free, or claimed so recently that
            // its reader has yet to read the announcement made before this
            // look (a claim locks, then marks, then reads): only the others
            // are asked whether a live reader holds them.
            if self.slot == Some(i)
                || value == Some(FREE)
                || !self.held_elsewhere(Self::slot_at(i), SLOT_LEN)?
            {
                continue;
            }
            let snap = match value {
                Some(v) if v != FREE && v != CLAIMED => v - 1,
                _ => 0,
            };
            oldest = Some(oldest.map_or(snap, |o: u64| o.min(snap)));
        }
        Ok(oldest)
    }

    /// Let the slot go (also done by the kernel when the handle closes).
    pub(crate) fn release(&mut self) -> Result<()> {
        if let Some(i) = self.slot.take() {
            self.write_pair(Self::slot_at(i), FREE)?;
            self.unlock(Self::slot_at(i), SLOT_LEN)?;
        }
        Ok(())
    }

    /// Whether the table at the path is this handle's (not one removed
    /// and made anew since it was opened).
    fn is_current(&self) -> bool {
        match (fs::metadata(&self.path), self.file.metadata()) {
            (Ok(a), Ok(b)) => a.ino() == b.ino() && a.dev() == b.dev(),
            _ => false,
        }
    }

    /// The data file's undo journal.
    pub(crate) fn journal(&self) -> &Path {
        &self.journal
    }

    /// Let the slot go, and remove the table and the history when nobody
    /// else uses them: no writer, no reader, nobody opening (all under the
    /// init lock). A dead writer's hot journal keeps them: the published
    /// generation is what lets readers read before anyone recovers. Done
    /// at drop too, errors unreported (leftover sidecars are harmless).
    pub(crate) fn close(mut self) -> Result<()> {
        self.tidy()
    }

    fn tidy(&mut self) -> Result<()> {
        if std::mem::replace(&mut self.closed, true) {
            return Ok(());
        }
        self.release()?;
        self.lock(INIT_BYTE, 1, true)?;
        // Only the table at the path speaks for its readers: a handle whose
        // table was replaced removes nothing. An unreadable journal (being
        // cut by a recovering writer) counts as hot.
        let idle = self.is_current()
            && !self.writer_present()?
            && self.oldest()?.is_none()
            && !crate::format::journal_layout::sidecar_is_hot(&self.journal).unwrap_or(true);
        if idle {
            // Removal failures leave harmless files behind.
            let _ = fs::remove_file(&self.history);
            let _ = fs::remove_file(&self.path);
        }
        self.unlock(INIT_BYTE, 1)
    }
}

impl Drop for ReaderTable {
    fn drop(&mut self) {
        let _ = self.tidy();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_publish_and_liveness() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("f.arca");
        let w = ReaderTable::open(&data, Role::Writer).unwrap().unwrap();
        assert!(w.lock_writer().unwrap());
        assert_eq!(w.published().unwrap(), None);
        w.publish(Some(7)).unwrap();
        assert_eq!(w.oldest().unwrap(), None);
        assert!(matches!(
            ReaderTable::open(&data, Role::Writer),
            Err(Error::Locked(_))
        ));
        let mut r = ReaderTable::open(&data, Role::Plain).unwrap().unwrap();
        assert!(r.writer_present().unwrap());
        assert!(!r.lock_writer().unwrap(), "one writer at a time");
        r.claim().unwrap();
        assert_eq!(w.oldest().unwrap(), Some(0), "claimed counts as oldest");
        assert_eq!(r.published().unwrap(), Some(7));
        r.set(7).unwrap();
        let mut r2 = ReaderTable::open(&data, Role::Reader).unwrap().unwrap();
        r2.set(9).unwrap();
        assert_eq!(w.oldest().unwrap(), Some(7));
        drop(r); // the kernel drops the lock: the slot is dead
        assert_eq!(w.oldest().unwrap(), Some(9));
        r2.release().unwrap();
        assert_eq!(w.oldest().unwrap(), None);
        drop(w);
        r2.close().unwrap();
        assert!(!table_path(&data).exists());
    }
}
