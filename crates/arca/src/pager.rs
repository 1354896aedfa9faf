//! The page cache: every metadata page is read and written through here.
//!
//! A page is any multiple of 32 bytes from 64 to 4096: a 4-byte tag — three
//! letters naming the structure and a byte giving the size — a CRC32C of the
//! rest of the page (tag included, checksum field excluded), then the
//! payload. A structure takes the page it needs; B-tree nodes grow into
//! larger pages before they split. Pages are checksummed when written
//! out and verified when read in, so a damaged page is reported with its
//! structure and offset before anything decodes it.
//!
//! Invariants:
//! - P1: a dirty page is never evicted before it is written to the driver.
//! - P2: the cache holds at most `capacity` pages after any call returns,
//!   except while every page is dirty (they are then flushed first).
//! - P3: dataset data never shares bytes with a page (the allocator hands out
//!   disjoint extents), so data writes bypass the cache safely.

use std::collections::HashMap;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::io::Driver;
use crate::journal::Journaled;
use crate::pool::lists::PAGES;

use crate::format::page::{self, family_name};
pub(crate) use crate::format::page::{size_for, valid_size, Family};
pub use crate::format::page::{MIN_PAGE, PAGE_PAYLOAD, PAGE_SIZE};

/// Adjacent pages are gathered into one write until it reaches this size.
const RUN_LIMIT: usize = 1 << 20;

/// A cached page: tag, checksum, payload. Shared, so reads do not copy;
/// pages come from the page free list and return to it when the cache
/// drops them and nothing else still shares them.
pub(crate) type Page = Arc<Vec<u8>>;

/// The bytes of a page about to be filled or rewritten: the page itself if
/// nothing shares it (the usual case), else a copy.
fn page_mut(page: &mut Page) -> &mut Vec<u8> {
    // A copy takes over the original's place in the page list's count.
    Arc::make_mut(page)
}

/// What a file's page cache holds: its metadata pages, those written
/// since they were last stored (dirty), and its bound. From
/// [`crate::File::cache_stats`].
///
/// The cache never holds more than `capacity` pages (P2): when every page
/// is dirty, a long transaction writes them back early (their originals
/// journaled first, see docs/JOURNAL.md) and goes on, so the memory a
/// session holds for metadata does not grow with the number of objects
/// it writes.
///
/// ```
/// use arca::{io::MemoryDriver, File};
/// let f = File::options()
///     .page_cache_pages(64)
///     .open_driver(Box::new(MemoryDriver::new()), true, true)
///     .unwrap();
/// for i in 0..500 {
///     f.root().create_group(&format!("g{i}")).unwrap();
/// }
/// let s = f.cache_stats();
/// assert!(s.pages <= s.capacity && s.dirty_pages <= s.pages);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Pages held.
    pub pages: usize,
    /// Pages held that storage has not got yet.
    pub dirty_pages: usize,
    /// Bytes of the pages held.
    pub bytes: u64,
    /// Bytes of the dirty pages.
    pub dirty_bytes: u64,
    /// The most pages held after any call returns (`page_cache_pages`).
    pub capacity: usize,
}

struct Entry {
    page: Page,
    dirty: bool,
    tick: u64,
}

pub(crate) struct Pager {
    driver: Journaled,
    /// By address, with a fast seeded hash: every metadata access looks
    /// a page up here, and SipHash was a visible part of a small read.
    cache: HashMap<u64, Entry, foldhash::fast::RandomState>,
    capacity: usize,
    tick: u64,
    /// Bytes that exist on the driver or will after the next flush; reads
    /// beyond this are damage, not I/O errors.
    limit: u64,
    /// Whether the driver's reads are round trips worth batching.
    batches: bool,
}

/// A printable name for a page family.
pub(crate) fn tag_name(family: &Family) -> &'static str {
    family_name(family)
}

impl Pager {
    pub(crate) fn new(driver: Journaled, capacity: usize) -> Result<Self> {
        let limit = driver.len()?;
        // Asked once: the driver does not change, and reads ask often.
        let batches = driver.unlocked_reads().is_some_and(|(io, _)| io.batches());
        Ok(Self {
            driver,
            cache: HashMap::default(),
            capacity: capacity.max(16),
            tick: 0,
            limit,
            batches,
        })
    }

    pub(crate) fn driver(&self) -> &dyn Driver {
        &self.driver
    }

    pub(crate) fn driver_mut(&mut self) -> &mut dyn Driver {
        &mut self.driver
    }

    /// A reader and the writers' gate, for reads without the file's lock
    /// (see `io::Gated`); None where the driver offers no shared reader.
    pub(crate) fn unlocked_reads(&self) -> Option<crate::io::UnlockedReads> {
        self.driver.unlocked_reads()
    }

    /// Whether the driver's reads are round trips worth batching (object
    /// storage).
    pub(crate) fn batches(&self) -> bool {
        self.batches
    }

    pub(crate) fn journal(&mut self) -> &mut Journaled {
        &mut self.driver
    }

    /// What the cache holds now.
    pub(crate) fn stats(&self) -> CacheStats {
        let mut s = CacheStats {
            capacity: self.capacity,
            ..CacheStats::default()
        };
        for e in self.cache.values() {
            s.pages += 1;
            s.bytes += e.page.len() as u64;
            if e.dirty {
                s.dirty_pages += 1;
                s.dirty_bytes += e.page.len() as u64;
            }
        }
        s
    }

    /// Whether any page awaits writing.
    pub(crate) fn has_dirty(&self) -> bool {
        self.cache.values().any(|e| e.dirty)
    }

    /// Drop every cached page, dirty or not (after a rollback).
    pub(crate) fn discard(&mut self) {
        for (_, e) in self.cache.drain() {
            PAGES.give_back(e.page);
        }
    }

    /// Bytes known to exist (on disk or pending in the cache).
    pub(crate) fn limit(&self) -> u64 {
        self.limit
    }

    pub(crate) fn set_limit(&mut self, limit: u64) {
        self.limit = limit;
    }

    /// Record that data bytes up to `end` were written directly to the driver.
    pub(crate) fn extend_limit(&mut self, end: u64) {
        self.limit = self.limit.max(end);
    }

    /// Read a page, verifying its checksum and that it belongs to `family`;
    /// the payload starts at byte 8.
    pub(crate) fn read(&mut self, addr: u64, family: &Family) -> Result<Page> {
        Ok(self.read_any(addr, &[family])?.1)
    }

    /// Read a page of one of `families`; returns which one and the page.
    pub(crate) fn read_any(&mut self, addr: u64, families: &[&Family]) -> Result<(usize, Page)> {
        let what = families.first().map_or("metadata page", |f| tag_name(f));
        self.tick += 1;
        let tick = self.tick;
        let find = |page: &[u8]| families.iter().position(|f| page[0..3] == f[..]);
        if let Some(e) = self.cache.get_mut(&addr) {
            e.tick = tick;
            let Some(i) = find(&e.page) else {
                return Err(Error::corrupt(what, addr, "unexpected page tag"));
            };
            return Ok((i, e.page.clone()));
        }
        self.check_range(addr, 8, what)?;
        // One read up to the next 4 KiB boundary (never into another block
        // of a remote file), when the file has those bytes: the tag says
        // how much of it is the page. Otherwise (a page across the
        // boundary, or bytes after it still only in this cache) the tag
        // first, then the page.
        //
        // The read goes straight into a pooled page of the length read: a
        // page that fills it (an aligned full page, the usual index or
        // B-tree node) is kept as it is, with no copy.
        let to_boundary = PAGE_SIZE as u64 - addr % PAGE_SIZE as u64;
        let n = to_boundary.min(self.limit.saturating_sub(addr)) as usize;
        let mut ahead = None;
        if n >= 8 {
            // Every byte is read over (or the page goes back unused).
            let mut a = PAGES.take_for_overwrite(n);
            match self.driver.read_at(addr, page_mut(&mut a)) {
                Ok(()) => ahead = Some(a),
                Err(_) => PAGES.give_back(a),
            }
        }
        let mut head = [0u8; 8];
        match &ahead {
            Some(a) => head.copy_from_slice(&a[..8]),
            None => self.driver.read_at(addr, &mut head)?,
        }
        let Some(i) = find(&head) else {
            if let Some(a) = ahead {
                PAGES.give_back(a);
            }
            return Err(Error::corrupt(
                what,
                addr,
                format!(
                    "unexpected page tag {:?}",
                    String::from_utf8_lossy(&head[0..4])
                ),
            ));
        };
        let size = match page::size_of(&head) {
            Some(size) => size,
            None => {
                if let Some(a) = ahead {
                    PAGES.give_back(a);
                }
                return Err(Error::corrupt(
                    tag_name(families[i]),
                    addr,
                    format!("page size byte {}", head[3]),
                ));
            }
        };
        if let Err(e) = self.check_range(addr, size, what) {
            if let Some(a) = ahead {
                PAGES.give_back(a);
            }
            return Err(e);
        }
        let (mut page, read) = match ahead {
            Some(a) if a.len() == size => (a, Ok(())),
            Some(a) if a.len() > size => {
                let mut page = PAGES.take_zeroed(size);
                page_mut(&mut page).copy_from_slice(&a[..size]);
                PAGES.give_back(a);
                (page, Ok(()))
            }
            other => {
                if let Some(a) = other {
                    PAGES.give_back(a);
                }
                let mut page = PAGES.take_zeroed(size);
                let read = self.driver.read_at(addr, page_mut(&mut page));
                (page, read)
            }
        };
        let buf = page_mut(&mut page);
        if read.is_err() || !page::verifies(buf) {
            PAGES.give_back(page);
            read?;
            return Err(Error::corrupt(
                tag_name(families[i]),
                addr,
                "checksum mismatch",
            ));
        }
        self.insert(addr, page.clone(), false)?;
        Ok((i, page))
    }

    /// Bring the pages at `addrs` into the cache in one batch, where the
    /// driver's reads are round trips (object storage): a B-tree level's
    /// pages then cost one round trip, not one each. Elsewhere, and for
    /// pages already cached, nothing. A page that does not verify is left
    /// out, for its own read to report.
    pub(crate) fn prefetch(&mut self, addrs: &[u64]) -> Result<()> {
        if !self.batches {
            return Ok(());
        }
        let Some((io, _)) = self.driver.unlocked_reads() else {
            return Ok(());
        };
        // Never more than the cache keeps, or the batch evicts itself.
        let mut want: Vec<u64> = addrs
            .iter()
            .copied()
            .filter(|a| !self.cache.contains_key(a))
            .filter(|&a| self.check_range(a, 8, "metadata page").is_ok())
            .take(self.capacity / 2)
            .collect();
        want.sort_unstable();
        want.dedup();
        if want.is_empty() {
            return Ok(());
        }
        // Each the largest a page can be, as far as the file goes.
        let mut bufs: Vec<Vec<u8>> = want
            .iter()
            .map(|&a| vec![0u8; (PAGE_SIZE as u64).min(self.limit - a) as usize])
            .collect();
        {
            let mut reads: Vec<(u64, &mut [u8])> = want
                .iter()
                .zip(bufs.iter_mut())
                .map(|(&a, b)| (a, &mut b[..]))
                .collect();
            io.read_batch(&mut reads)?;
        }
        for (a, b) in want.into_iter().zip(bufs) {
            let Some(size) = page::size_of(&b[..8]).filter(|&n| n <= b.len()) else {
                continue;
            };
            let mut page = PAGES.take_zeroed(size);
            let buf = page_mut(&mut page);
            buf.copy_from_slice(&b[..size]);
            if page::verifies(buf) {
                self.insert(a, page, false)?;
            } else {
                PAGES.give_back(page);
            }
        }
        Ok(())
    }

    fn check_range(&self, addr: u64, len: usize, what: &'static str) -> Result<()> {
        if addr == 0 || addr.checked_add(len as u64).is_none_or(|e| e > self.limit) {
            return Err(Error::corrupt(
                what,
                addr,
                format!("page address outside the file ({} bytes)", self.limit),
            ));
        }
        Ok(())
    }

    /// The page at `addr` if it is cached (counted as a use), without
    /// reading or checking anything: a caller that decoded this very page
    /// before (the same `Arc`) knows its decoding still holds, since a
    /// rewrite replaces a shared page rather than changing it.
    pub(crate) fn cached(&mut self, addr: u64) -> Option<Page> {
        self.tick += 1;
        let tick = self.tick;
        self.cache.get_mut(&addr).map(|e| {
            e.tick = tick;
            e.page.clone()
        })
    }

    /// Size in bytes of the page at `addr` (from the cache, or its tag).
    pub(crate) fn size_of(&mut self, addr: u64) -> Result<usize> {
        if let Some(e) = self.cache.get(&addr) {
            return Ok(e.page.len());
        }
        self.check_range(addr, 8, "metadata page")?;
        let mut head = [0u8; 8];
        self.driver.read_at(addr, &mut head)?;
        page::size_of(&head).ok_or_else(|| {
            Error::corrupt("metadata page", addr, format!("page size byte {}", head[3]))
        })
    }

    /// Replace the payload of an existing page, keeping its size.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if the payload outgrew the page.
    pub(crate) fn write(&mut self, addr: u64, family: &Family, payload: &[u8]) -> Result<()> {
        let size = self.size_of(addr)?;
        if payload.len() > size - 8 {
            return Err(Error::invalid(format!(
                "{} at {addr} outgrew its {size}-byte page",
                tag_name(family)
            )));
        }
        let code = self.size_code(addr)?;
        self.write_new(addr, family, size, payload)?;
        if page::is_class_code(code) {
            // A version-1 page keeps its class digit: a page's size is the
            // one its own size scheme gives its contents (object headers
            // are checked against it when read).
            if let Some(e) = self.cache.get_mut(&addr) {
                page_mut(&mut e.page)[3] = code;
            }
        }
        Ok(())
    }

    /// The size byte of the page at `addr` (from the cache, or the file).
    fn size_code(&mut self, addr: u64) -> Result<u8> {
        if let Some(e) = self.cache.get(&addr) {
            return Ok(e.page[3]);
        }
        self.check_range(addr, 8, "metadata page")?;
        let mut head = [0u8; 8];
        self.driver.read_at(addr, &mut head)?;
        Ok(head[3])
    }

    /// Write a page of `size` bytes at `addr`; it reaches storage at the
    /// next flush.
    pub(crate) fn write_new(
        &mut self,
        addr: u64,
        family: &Family,
        size: usize,
        payload: &[u8],
    ) -> Result<()> {
        if !valid_size(size) || payload.len() > size - 8 {
            return Err(Error::invalid("page payload too large"));
        }
        // Reuse the cached page at `addr` when nothing else shares it.
        let mut page = match self.cache.remove(&addr) {
            Some(e) if e.page.len() == size && Arc::strong_count(&e.page) == 1 => e.page,
            Some(e) => {
                PAGES.give_back(e.page);
                PAGES.take_zeroed(size)
            }
            None => PAGES.take_zeroed(size),
        };
        let buf = page_mut(&mut page);
        page::write_header(buf, family);
        buf[8..8 + payload.len()].copy_from_slice(payload);
        buf[8 + payload.len()..].fill(0);
        self.limit = self.limit.max(addr + size as u64);
        self.insert(addr, page, true)
    }

    /// Drop a freed page from the cache without writing it.
    pub(crate) fn forget(&mut self, addr: u64) {
        if let Some(e) = self.cache.remove(&addr) {
            PAGES.give_back(e.page);
        }
    }

    fn insert(&mut self, addr: u64, page: Page, dirty: bool) -> Result<()> {
        self.tick += 1;
        let tick = self.tick;
        if let Some(old) = self.cache.insert(addr, Entry { page, dirty, tick }) {
            PAGES.give_back(old.page);
        }
        if self.cache.len() > self.capacity {
            self.evict()?;
        }
        Ok(())
    }

    /// Evict the least recently used half of the clean pages (P1, P2).
    fn evict(&mut self) -> Result<()> {
        if self.cache.values().all(|e| e.dirty) {
            self.flush()?;
        }
        let mut clean: Vec<(u64, u64)> = self
            .cache
            .iter()
            .filter(|(_, e)| !e.dirty)
            .map(|(a, e)| (e.tick, *a))
            .collect();
        clean.sort_unstable();
        let excess = self.cache.len().saturating_sub(self.capacity / 2);
        for (_, addr) in clean.into_iter().take(excess) {
            if let Some(e) = self.cache.remove(&addr) {
                PAGES.give_back(e.page);
            }
        }
        Ok(())
    }

    /// Write every dirty page, in address order, with fresh checksums.
    pub(crate) fn flush(&mut self) -> Result<()> {
        self.flush_with(&[])
    }

    /// Flush; the originals of the dirty pages and of `extra` ranges are
    /// journaled first, in one batch (one journal sync).
    pub(crate) fn flush_with(&mut self, extra: &[(u64, u64)]) -> Result<()> {
        // Sized once: two allocations per commit. Not pooled: kept between
        // commits they would hold 24 bytes per dirty page to save two calls.
        let n = self.cache.values().filter(|e| e.dirty).count();
        let mut dirty = Vec::with_capacity(n);
        dirty.extend(self.cache.iter().filter(|(_, e)| e.dirty).map(|(a, _)| *a));
        dirty.sort_unstable();
        let mut ranges = Vec::with_capacity(n + extra.len());
        ranges.extend(
            dirty
                .iter()
                .map(|a| (*a, self.cache.get(a).map_or(0, |e| e.page.len()) as u64)),
        );
        ranges.extend_from_slice(extra);
        self.driver.preserve(&ranges)?;
        // Pages that touch are written in one call: small objects' pages
        // lie side by side, and a write per 64-byte page would cost a
        // system call each.
        let mut run: Vec<u8> = Vec::new();
        let mut run_at = 0u64;
        let mut first = 0;
        for (i, &addr) in dirty.iter().enumerate() {
            if run_at + run.len() as u64 != addr || run.len() >= RUN_LIMIT {
                self.write_run(run_at, &run, &dirty[first..i])?;
                run.clear();
                run_at = addr;
                first = i;
            }
            if let Some(e) = self.cache.get_mut(&addr) {
                // The checksum goes into the cached page itself.
                let page = page_mut(&mut e.page);
                page::stamp(page);
                run.extend_from_slice(page);
            }
        }
        self.write_run(run_at, &run, &dirty[first..])?;
        Ok(())
    }

    /// Write the stamped pages `addrs`, which lie side by side as `run`
    /// at `at`; they are clean once the write succeeded.
    fn write_run(&mut self, at: u64, run: &[u8], addrs: &[u64]) -> Result<()> {
        if run.is_empty() {
            return Ok(());
        }
        self.driver.write_at(at, run)?;
        for a in addrs {
            if let Some(e) = self.cache.get_mut(a) {
                e.dirty = false;
            }
        }
        Ok(())
    }
}

impl Drop for Pager {
    /// Cached pages go back to the page free list.
    fn drop(&mut self) {
        for (_, e) in self.cache.drain() {
            PAGES.give_back(e.page);
        }
    }
}
