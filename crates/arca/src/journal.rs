//! The undo journal: every change to a file is atomic.
//!
//! Between two commits the file is in a *transaction*. Before the first
//! overwrite of any byte that existed when the transaction began, the
//! original page goes to a sidecar journal, and the journal is synced. Bytes
//! appended past the original end, and bytes in sections that were free when
//! the transaction began, need no copy: rolling back makes them unreachable
//! again.
//!
//! Invariants:
//! - J1: a page below `orig_len` is overwritten only after its original
//!   bytes are in the journal and the journal is synced.
//! - J2: each page is journaled at most once per transaction, so the journal
//!   always holds the state at the transaction's start.
//! - J3: the file is never truncated below `orig_len` inside a transaction;
//!   shrinking is applied after the commit point.
//! - J4: the commit point is the journal becoming empty (truncated and
//!   synced) after the file was synced; a crash before it rolls back, a
//!   crash after it keeps the new state.
//! - J5: a journal record counts only if its checksum (salted per
//!   transaction) verifies; a torn tail is ignored — the pages it covered
//!   were never overwritten (J1).
//!
//! States:
//! ```text
//!   idle --begin--> open --preserve/write--> open
//!                    |  \--rollback--> idle (file restored, journal emptied)
//!                    +--commit (file synced; journal emptied; deferred truncate)--> idle
//!   open file with a hot journal --recover--> rollback --> idle
//! ```
//!
//! Journal layout: a 32-byte header (`ARCAJNL1`, u64 original length,
//! u64 salt, u32 reserved, u32 CRC32C of the first 28 bytes), then records
//! of `u64 offset, u32 len, u32 CRC32C(salt, offset, len, data), data`.

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::io::{Driver, FileDriver};
use crate::pager::PAGE_SIZE;

const MAGIC: &[u8; 8] = b"ARCAJNL1";
const HEADER: u64 = 32;
const PS: u64 = PAGE_SIZE as u64;

/// Where the journal lives.
pub(crate) enum JournalStore {
    /// No journal: writes go straight to the file (scratch files).
    Off,
    /// A sidecar file, created when first needed and removed at commit.
    Path(PathBuf, Option<FileDriver>),
    /// A caller-supplied driver (in-memory files, fault injection).
    Driver(Box<dyn Driver>),
}

/// The data file seen through the journal.
pub(crate) struct Journaled {
    file: Box<dyn Driver>,
    store: JournalStore,
    open: bool,
    orig_len: u64,
    /// Sections free when the transaction began: addr -> end.
    free: BTreeMap<u64, u64>,
    journaled: HashSet<u64>,
    jlen: u64,
    salt: u64,
    /// Length the file has inside the transaction; the physical file may be
    /// longer until commit (J3).
    logical: u64,
    physical: u64,
    /// Pages journaled since the transaction began, for statistics.
    pub(crate) pages_journaled: u64,
    /// Whether anything was written or truncated since the last commit.
    pub(crate) touched: bool,
    /// Journal writes into free space too, so a rollback restores every
    /// byte, not only every reachable one.
    pub(crate) exact: bool,
}

fn salt() -> u64 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    t ^ ((std::process::id() as u64) << 32) ^ 0x9E37_79B9_7F4A_7C15
}

fn record_crc(salt: u64, off: u64, data: &[u8]) -> u32 {
    let mut c = crc32c::crc32c(&salt.to_le_bytes());
    c = crc32c::crc32c_append(c, &off.to_le_bytes());
    c = crc32c::crc32c_append(c, &(data.len() as u32).to_le_bytes());
    crc32c::crc32c_append(c, data)
}

/// A hot journal: the file's length at the transaction's start and the
/// original pages as (offset, bytes).
type HotJournal = (u64, Vec<(u64, Vec<u8>)>);

/// Parse a journal: `None` if it is not hot (empty, or a torn header).
fn parse(j: &dyn Driver) -> Result<Option<HotJournal>> {
    let len = j.len()?;
    if len < HEADER {
        return Ok(None);
    }
    let mut h = [0u8; HEADER as usize];
    j.read_at(0, &mut h)?;
    if &h[0..8] != MAGIC
        || crc32c::crc32c(&h[0..28]) != u32::from_le_bytes([h[28], h[29], h[30], h[31]])
    {
        return Ok(None);
    }
    let orig_len = u64::from_le_bytes(h[8..16].try_into().unwrap_or_default());
    let salt = u64::from_le_bytes(h[16..24].try_into().unwrap_or_default());
    let mut recs = vec![];
    let mut pos = HEADER;
    while pos + 16 <= len {
        let mut rh = [0u8; 16];
        j.read_at(pos, &mut rh)?;
        let off = u64::from_le_bytes(rh[0..8].try_into().unwrap_or_default());
        let n = u32::from_le_bytes(rh[8..12].try_into().unwrap_or_default()) as u64;
        let crc = u32::from_le_bytes(rh[12..16].try_into().unwrap_or_default());
        if n > PS || pos + 16 + n > len {
            break;
        }
        let mut data = vec![0u8; n as usize];
        j.read_at(pos + 16, &mut data)?;
        if record_crc(salt, off, &data) != crc || off.checked_add(n).is_none_or(|e| e > orig_len) {
            break; // J5: a torn or stale tail
        }
        recs.push((off, data));
        pos += 16 + n;
    }
    Ok(Some((orig_len, recs)))
}

impl Journaled {
    pub(crate) fn new(file: Box<dyn Driver>, store: JournalStore) -> Result<Self> {
        let len = file.len()?;
        Ok(Journaled {
            file,
            store,
            open: false,
            orig_len: len,
            free: BTreeMap::new(),
            journaled: HashSet::new(),
            jlen: 0,
            salt: 0,
            logical: len,
            physical: len,
            pages_journaled: 0,
            touched: false,
            exact: false,
        })
    }

    pub(crate) fn enabled(&self) -> bool {
        !matches!(self.store, JournalStore::Off)
    }

    fn journal(&mut self) -> Result<Option<&mut dyn Driver>> {
        Ok(match &mut self.store {
            JournalStore::Off => None,
            JournalStore::Driver(d) => Some(d.as_mut()),
            JournalStore::Path(p, d) => {
                if d.is_none() {
                    *d = Some(FileDriver::create(p.as_path(), false)?);
                }
                d.as_mut().map(|d| d as &mut dyn Driver)
            }
        })
    }

    /// Stop journaling (scratch files).
    pub(crate) fn disable(&mut self) {
        self.store = JournalStore::Off;
        self.open = false;
    }

    /// Let go of the file (and its lock) when the file is closed while
    /// object handles still share this state.
    pub(crate) fn release(&mut self) {
        self.file = Box::new(crate::io::MemoryDriver::new());
        self.store = JournalStore::Off;
        self.open = false;
    }

    /// Roll back a hot journal left by a crash. Returns whether there was one.
    pub(crate) fn recover(&mut self) -> Result<bool> {
        let parsed = match &self.store {
            JournalStore::Off => None,
            JournalStore::Driver(d) => parse(d.as_ref())?,
            JournalStore::Path(p, _) => {
                if !p.exists() {
                    return Ok(false);
                }
                let d = FileDriver::open(p.as_path(), false)?;
                parse(&d)?
            }
        };
        let Some((orig_len, recs)) = parsed else {
            self.clear_journal()?;
            return Ok(false);
        };
        for (off, data) in &recs {
            self.file.write_at(*off, data)?;
        }
        self.file.truncate(orig_len)?;
        self.file.sync()?;
        self.clear_journal()?;
        self.physical = orig_len;
        self.logical = orig_len;
        Ok(true)
    }

    /// Whether a hot journal exists, without touching anything.
    pub(crate) fn is_hot(&self) -> Result<bool> {
        Ok(match &self.store {
            JournalStore::Off => false,
            JournalStore::Driver(d) => parse(d.as_ref())?.is_some(),
            JournalStore::Path(p, _) => {
                p.exists() && parse(&FileDriver::open(p.as_path(), false)?)?.is_some()
            }
        })
    }

    /// Start a transaction; `free` lists sections free at its start.
    pub(crate) fn begin(&mut self, free: impl Iterator<Item = (u64, u64)>) {
        if !self.enabled() {
            return;
        }
        self.open = true;
        self.orig_len = self.logical;
        self.free = free.map(|(a, s)| (a, a + s)).collect();
        self.journaled.clear();
        self.jlen = 0;
        self.salt = salt();
        self.pages_journaled = 0;
    }

    fn in_free(&self, a: u64, b: u64) -> bool {
        !self.exact
            && self
                .free
                .range(..=a)
                .next_back()
                .is_some_and(|(_, &end)| b <= end)
    }

    /// Journal the original pages under `ranges` (J1, J2) with one sync.
    pub(crate) fn preserve(&mut self, ranges: &[(u64, u64)]) -> Result<()> {
        if !self.open {
            return Ok(());
        }
        let mut out: Vec<u8> = vec![];
        for &(a, len) in ranges {
            let b = (a + len).min(self.orig_len);
            if a >= b || self.in_free(a, b) {
                continue;
            }
            for p in a / PS..b.div_ceil(PS) {
                if !self.journaled.insert(p) {
                    continue;
                }
                let start = p * PS;
                let end = (start + PS).min(self.orig_len).min(self.physical);
                if start >= end {
                    continue;
                }
                let mut data = vec![0u8; (end - start) as usize];
                self.file.read_at(start, &mut data)?;
                out.extend_from_slice(&start.to_le_bytes());
                out.extend_from_slice(&(data.len() as u32).to_le_bytes());
                out.extend_from_slice(&record_crc(self.salt, start, &data).to_le_bytes());
                out.extend_from_slice(&data);
                self.pages_journaled += 1;
            }
        }
        if out.is_empty() {
            return Ok(());
        }
        let (salt, orig_len, at) = (self.salt, self.orig_len, self.jlen);
        let j = self
            .journal()?
            .ok_or_else(|| Error::invalid("journal disabled"))?;
        if at == 0 {
            let mut h = Vec::with_capacity(HEADER as usize);
            h.extend_from_slice(MAGIC);
            h.extend_from_slice(&orig_len.to_le_bytes());
            h.extend_from_slice(&salt.to_le_bytes());
            h.extend_from_slice(&0u32.to_le_bytes());
            let crc = crc32c::crc32c(&h);
            h.extend_from_slice(&crc.to_le_bytes());
            h.extend_from_slice(&out);
            out = h;
        }
        j.write_at(at, &out)?;
        j.sync()?;
        self.jlen = at + out.len() as u64;
        Ok(())
    }

    fn clear_journal(&mut self) -> Result<()> {
        match &mut self.store {
            JournalStore::Off => {}
            JournalStore::Driver(d) => {
                if d.len()? > 0 {
                    d.truncate(0)?;
                    d.sync()?;
                }
            }
            JournalStore::Path(p, d) => {
                if let Some(d) = d.as_mut() {
                    d.truncate(0)?;
                    d.sync()?;
                }
                *d = None;
                if p.exists() {
                    std::fs::remove_file(p.as_path())
                        .map_err(|e| Error::io(format!("removing journal {}", p.display()), e))?;
                }
            }
        }
        self.jlen = 0;
        Ok(())
    }

    /// The commit point (J4): call after the file is synced.
    pub(crate) fn commit(&mut self) -> Result<()> {
        if self.jlen > 0 {
            self.clear_journal()?;
        }
        if self.physical > self.logical {
            self.file.truncate(self.logical)?;
            self.physical = self.logical;
        }
        self.open = false;
        self.touched = false;
        Ok(())
    }

    /// Undo everything since `begin`.
    pub(crate) fn rollback(&mut self) -> Result<()> {
        if !self.open {
            return Err(Error::invalid("no transaction to roll back"));
        }
        let parsed = match &mut self.store {
            JournalStore::Off => None,
            JournalStore::Driver(d) => parse(d.as_ref())?,
            JournalStore::Path(_, d) => match d {
                Some(d) => parse(&*d)?,
                None => None,
            },
        };
        if let Some((_, recs)) = parsed {
            for (off, data) in recs {
                self.file.write_at(off, &data)?;
            }
        }
        self.file.truncate(self.orig_len)?;
        self.file.sync()?;
        self.physical = self.orig_len;
        self.logical = self.orig_len;
        self.clear_journal()?;
        self.open = false;
        self.touched = false;
        Ok(())
    }
}

impl Driver for Journaled {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        if offset.saturating_add(buf.len() as u64) > self.logical {
            return Err(Error::io(
                format!("reading {} bytes at {offset}", buf.len()),
                std::io::ErrorKind::UnexpectedEof.into(),
            ));
        }
        self.file.read_at(offset, buf)
    }

    fn write_at(&mut self, offset: u64, data: &[u8]) -> Result<()> {
        self.touched = true;
        self.preserve(&[(offset, data.len() as u64)])?;
        self.file.write_at(offset, data)?;
        let end = offset + data.len() as u64;
        self.logical = self.logical.max(end);
        self.physical = self.physical.max(end);
        Ok(())
    }

    fn sync(&mut self) -> Result<()> {
        self.file.sync()
    }

    fn truncate(&mut self, len: u64) -> Result<()> {
        self.touched = true;
        if !self.open {
            self.file.truncate(len)?;
            self.logical = len;
            self.physical = len;
            return Ok(());
        }
        if len < self.logical {
            // J3: shrink only after the commit point.
            self.logical = len;
            return Ok(());
        }
        // Growing over bytes still physically present: they must read as zeros.
        let stale_end = len.min(self.physical);
        if stale_end > self.logical {
            let zeros = vec![0u8; (stale_end - self.logical).min(1 << 20) as usize];
            let mut at = self.logical;
            while at < stale_end {
                let n = (stale_end - at).min(zeros.len() as u64);
                self.write_at(at, &zeros[..n as usize])?;
                at += n;
            }
        }
        if len > self.physical {
            self.file.truncate(len)?;
            self.physical = len;
        }
        self.logical = len;
        Ok(())
    }

    fn len(&self) -> Result<u64> {
        Ok(self.logical)
    }

    fn held_bytes(&self) -> Option<u64> {
        self.file.held_bytes()
    }
}
