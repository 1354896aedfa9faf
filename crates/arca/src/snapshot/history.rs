//! The history: original pages of live bytes a writer overwrites, kept in
//! `PATH-history` for readers whose snapshots still show them.
//!
//! ```text
//! page 0  +0  [u8; 8] "ARCAHST1"
//!         +16 u64, u64  epoch and complement (changes when the history restarts)
//!         +32 u64, u64  live_from and complement: records before it are
//!                       dead for every reader (their space may be punched out)
//! 4096..  records: u64 epoch, u64 tag, u64 offset, u32 len, u32 CRC32C of
//!         the 28 bytes before it and the data; then `len` bytes: the page
//!         at `offset` as it was before the transaction that commits
//!         generation `tag` first overwrote it
//! ```
//! Records are appended in commit order, so a prefix of them is dead once
//! every reader's snapshot is at or past its tags.

use std::collections::VecDeque;
use std::fs;
use std::io::{Seek, SeekFrom};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::sidecar::{pair, settle, sidecar, unpair};
use crate::error::{Error, Result};
use crate::format::page::PAGE_SIZE;

pub(crate) const MAGIC: &[u8; 8] = b"ARCAHST1";
pub(crate) const EPOCH: u64 = 16;
pub(crate) const LIVE_FROM: u64 = 32;
pub(crate) const FIRST: u64 = 4096;
pub(crate) const REC_HEAD: usize = 32;
/// A dead prefix is punched out of the file once it is this long.
const PUNCH: u64 = 4 << 20;
/// With no reader left, a history longer than this restarts at once.
const RESTART: u64 = 1 << 20;

/// The history of the file at `path`.
pub(crate) fn history_path(path: &Path) -> PathBuf {
    sidecar(path, "-history")
}

/// The checksum of a record: its head's first 28 bytes, then its data (a
/// head cut short checksums as empty, and so does not verify).
pub(crate) fn rec_crc(head: &[u8], data: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c(head.get(..28).unwrap_or_default()), data)
}

/// A parsed record head: (epoch, tag, offset, len, crc); None if `h` is
/// shorter than one.
pub(crate) fn parse_head(h: &[u8]) -> Option<(u64, u64, u64, u32, u32)> {
    let u = |a: usize| Some(u64::from_le_bytes(h.get(a..a + 8)?.try_into().ok()?));
    let w = |a: usize| Some(u32::from_le_bytes(h.get(a..a + 4)?.try_into().ok()?));
    Some((u(0)?, u(8)?, u(16)?, w(24)?, w(28)?))
}

/// The length of the history `f`. Asked at every read of a snapshot, so
/// by the cheapest call that tells it (a seek to the end: readers use
/// positioned reads only, so the file position is nobody's).
pub(crate) fn length(f: &fs::File) -> std::io::Result<u64> {
    let mut f = f;
    f.seek(SeekFrom::End(0))
}

/// The history's (epoch, live_from), or None while it is being created.
pub(crate) fn read_header(hist: &fs::File) -> Result<Option<(u64, u64)>> {
    // A torn header is a restart in progress: waited for as long as a
    // torn pair in the reader table (see `settle`).
    let got = settle(|| {
        // The length first: a file shorter than its header is being
        // created (its header is written whole, then it grows).
        let len = length(hist).unwrap_or(0);
        if len < FIRST {
            return Ok(Some(None));
        }
        let mut head = [0u8; 48];
        if hist.read_exact_at(&mut head, 0).is_err() || &head[..8] != MAGIC {
            // Long enough, without the magic: not a history (a reader must
            // not go on without it).
            return Err(Error::corrupt(
                "snapshot history",
                0,
                "the readers' history file does not start with its magic",
            ));
        }
        let (e, l) = (EPOCH as usize, LIVE_FROM as usize);
        Ok(unpair(&head[e..e + 16])
            .zip(unpair(&head[l..l + 16]))
            .map(Some))
    })?;
    got.ok_or_else(|| Error::corrupt("snapshot history", 0, "the header never reads whole"))
}

/// Walk the whole records of `epoch` from `from`, calling `f(pos, tag,
/// offset, len)` for each; returns where the walk stopped (the end, a
/// record still being written, or a torn one).
pub(crate) fn scan(
    hist: &fs::File,
    from: u64,
    epoch: u64,
    mut f: impl FnMut(u64, u64, u64, u32),
) -> Result<u64> {
    let rh = REC_HEAD as u64;
    let len = length(hist).map_err(|e| Error::io("reading the history's size", e))?;
    let mut pos = from;
    let mut buf = vec![0u8; (1 << 20).min(len.saturating_sub(from)) as usize];
    while pos + rh <= len {
        let n = ((len - pos) as usize).min(buf.len());
        if hist.read_exact_at(&mut buf[..n], pos).is_err() {
            return Ok(pos); // cut short by a restart
        }
        let mut i = 0usize;
        while i + rh as usize <= n {
            let head = parse_head(&buf[i..i + rh as usize]);
            let Some((ep, tag, off, rlen, crc)) = head else {
                return Ok(pos + i as u64);
            };
            if ep != epoch || rlen == 0 || rlen as usize > PAGE_SIZE {
                return Ok(pos + i as u64);
            }
            let end = i + rh as usize + rlen as usize;
            if end > n {
                break;
            }
            if rec_crc(&buf[i..i + rh as usize], &buf[i + rh as usize..end]) != crc {
                return Ok(pos + i as u64);
            }
            f(pos + i as u64, tag, off, rlen);
            i = end;
        }
        if i == 0 {
            return Ok(pos);
        }
        pos += i as u64;
    }
    Ok(pos)
}

/// The writer's side of the history.
pub(crate) struct History {
    file: fs::File,
    path: PathBuf,
    epoch: u64,
    /// Where the next record goes.
    end: u64,
    /// After each append: (end of its records, their tag).
    marks: VecDeque<(u64, u64)>,
    live_from: u64,
    punched: u64,
    /// Records being built for the next append.
    buf: Vec<u8>,
}

fn err(what: &str, p: &Path, e: std::io::Error) -> Error {
    Error::io(format!("{what} {}", p.display()), e)
}

impl History {
    /// Open the history of `data`, keeping records a crashed writer left
    /// (readers may still need them: they count as tagged `generation`,
    /// the committed state's, which is never older than theirs).
    pub(crate) fn open(data: &Path, generation: u64) -> Result<History> {
        let path = history_path(data);
        let file = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| err("opening", &path, e))?;
        let len = file.metadata().map_err(|e| err("reading", &path, e))?.len();
        let mut head = [0u8; 48];
        let mut h = History {
            file,
            path,
            epoch: 0,
            end: FIRST,
            marks: VecDeque::new(),
            live_from: FIRST,
            punched: FIRST,
            buf: vec![],
        };
        let valid = len >= FIRST
            && h.file.read_exact_at(&mut head, 0).is_ok()
            && &head[..8] == MAGIC
            && unpair(&head[16..32]).is_some()
            && unpair(&head[32..48]).is_some();
        if valid {
            h.epoch = unpair(&head[16..32]).unwrap_or(0);
            h.live_from = unpair(&head[32..48]).unwrap_or(FIRST);
            h.punched = h.live_from;
            // R4: a killed writer may have left a record half written;
            // the next records go in its place.
            h.end = scan(&h.file, h.live_from, h.epoch, |_, _, _, _| {})?;
            if h.end < len {
                h.file
                    .set_len(h.end)
                    .map_err(|e| err("truncating", &h.path, e))?;
            }
            h.marks.push_back((h.end, generation));
        } else {
            h.epoch = crate::format::journal_layout::salt();
            h.write_header()?;
            h.file
                .set_len(FIRST)
                .map_err(|e| err("truncating", &h.path, e))?;
        }
        Ok(h)
    }

    fn write_header(&self) -> Result<()> {
        crate::io::fault_point();
        let mut page = vec![0u8; FIRST as usize];
        page[..8].copy_from_slice(MAGIC);
        page[16..32].copy_from_slice(&pair(self.epoch));
        page[32..48].copy_from_slice(&pair(self.live_from));
        self.file
            .write_all_at(&page, 0)
            .map_err(|e| err("writing", &self.path, e))
    }

    /// Add the original of the page at `offset` to the next append.
    pub(crate) fn stage(&mut self, tag: u64, offset: u64, data: &[u8]) {
        let mut h = [0u8; REC_HEAD];
        h[0..8].copy_from_slice(&self.epoch.to_le_bytes());
        h[8..16].copy_from_slice(&tag.to_le_bytes());
        h[16..24].copy_from_slice(&offset.to_le_bytes());
        h[24..28].copy_from_slice(&(data.len() as u32).to_le_bytes());
        let crc = rec_crc(&h, data);
        h[28..32].copy_from_slice(&crc.to_le_bytes());
        self.buf.extend_from_slice(&h);
        self.buf.extend_from_slice(data);
    }

    /// Write the staged records. Called before the pages they preserve
    /// are overwritten; readers find them by scanning, so no sync is
    /// needed (readers live on this machine and read its page cache).
    pub(crate) fn append(&mut self, tag: u64) -> Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        crate::io::fault_write_point(&self.buf, |part| {
            let _ = self.file.write_all_at(part, self.end);
        });
        self.file
            .write_all_at(&self.buf, self.end)
            .map_err(|e| err("writing", &self.path, e))?;
        self.end += self.buf.len() as u64;
        self.buf.clear();
        match self.marks.back_mut() {
            Some(m) if m.1 == tag => m.0 = self.end,
            _ => self.marks.push_back((self.end, tag)),
        }
        Ok(())
    }

    /// Drop what no reader can need: with no reader (`None`), restart a
    /// long history; else move `live_from` past records whose tags every
    /// snapshot is at or past, and punch out a long dead prefix.
    pub(crate) fn collect(&mut self, oldest: Option<u64>) -> Result<()> {
        let all_dead = match oldest {
            None => true,
            Some(o) => self.marks.back().is_none_or(|m| m.1 <= o),
        };
        if all_dead {
            if self.end - FIRST >= RESTART || oldest.is_none() && self.end > FIRST {
                self.restart()?;
            }
            return Ok(());
        }
        let o = oldest.unwrap_or(0);
        let mut moved = false;
        while let Some(&(end, tag)) = self.marks.front() {
            if tag > o {
                break;
            }
            self.live_from = end;
            self.marks.pop_front();
            moved = true;
        }
        if moved {
            crate::io::fault_point();
            self.file
                .write_all_at(&pair(self.live_from), LIVE_FROM)
                .map_err(|e| err("writing", &self.path, e))?;
            let to = self.live_from / 4096 * 4096;
            if to >= self.punched + PUNCH {
                // Best effort: a file system without hole punching keeps
                // the bytes until the next restart.
                let _ = nix::fcntl::fallocate(
                    &self.file,
                    nix::fcntl::FallocateFlags::FALLOC_FL_PUNCH_HOLE
                        | nix::fcntl::FallocateFlags::FALLOC_FL_KEEP_SIZE,
                    self.punched as i64,
                    (to - self.punched) as i64,
                );
                self.punched = to;
            }
        }
        Ok(())
    }

    /// Start over with a new epoch: readers that see it drop what they
    /// indexed (none of it is needed, or this would not run).
    fn restart(&mut self) -> Result<()> {
        self.epoch = self.epoch.wrapping_add(0x9E37_79B9_7F4A_7C15);
        self.live_from = FIRST;
        self.punched = FIRST;
        self.write_header()?;
        self.file
            .set_len(FIRST)
            .map_err(|e| err("truncating", &self.path, e))?;
        self.end = FIRST;
        self.marks.clear();
        Ok(())
    }

    /// Bytes of records kept (for tests and statistics).
    #[allow(dead_code)]
    pub(crate) fn kept(&self) -> u64 {
        self.end - self.live_from
    }
}
