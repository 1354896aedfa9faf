//! File space: every byte of the file is handed out and taken back here.
//!
//! [`FileSpace`] is the one allocator interface the layers above use. It
//! owns the end of file, one aggregator for metadata and one for small
//! data allocations, and a free list of sections — the free-space manager
//! ([`fsm::FreeSpaceManager`]) or, for comparison only, the naive baseline
//! ([`naive::NaiveList`]).
//!
//! Allocation order: a best-fit free section; else the kind's aggregator
//! (metadata, small data); else the end of file. Freeing merges with both
//! neighbours, shrinks the file when the section touches the end (and keeps
//! shrinking through trailing free sections), and otherwise lets an adjacent
//! aggregator absorb it.
//!
//! Invariants (checked by `FileSpace::check_invariants` in tests, and
//! after every operation that changes the space under the `paranoid`
//! feature):
//! - S1: free sections, aggregator remainders, frees held back (S4) or
//!   held for readers (S6), and live extents are disjoint and all lie in
//!   `[PAGE_SIZE, eof)`.
//! - S2: no two free sections are adjacent (merging is complete).
//! - S3: no free section ends at `eof` (the file never ends in free space).
//! - S4: space freed while frees are deferred (inside a transaction) is not
//!   handed out before [`FileSpace::commit`] — unless it lies past the end
//!   of file the transaction began with: allocated and freed within the
//!   transaction, no committed state ever held it, so it is reused at once.
//! - S5: a free never takes back bytes that are not live: an extent outside
//!   `[PAGE_SIZE, eof)` or overlapping a free section, a held-back free or
//!   an aggregator's remainder is refused with `Corrupt` (the caller read
//!   it from a damaged file), and a batch is freed whole or not at all.
//! - S6: with snapshot readers served, space freed by the commit that makes
//!   generation `g` is *held* — neither reused nor cut off the end — until
//!   no reader's snapshot is older than `g` ([`FileSpace::release_held`]).
//! - S7: space is handed out only if it is provably free. Free space the
//!   file names — its free-space and held-space records, and every extent
//!   an earlier session allocated (below `named_end`) once this session
//!   frees it — is *unproven*: kept aside, neither reused nor cut off the
//!   end, until a walk of every live structure has shown it clear of them
//!   ([`FileSpace::prove`]). Space past `named_end` was allocated by this
//!   session and is reused at once. A record that lies (a section over a
//!   live header, a name whose link count is missing) then costs file
//!   growth, never live bytes. Other words of the file are proven before
//!   they are acted on: a commit after an object of an earlier session
//!   died on its link count ([`FileSpace::doubt`]) proves first, as does
//!   the first write into a contiguous extent an earlier session
//!   allocated ([`FileSpace::is_named`]), unless the extent is small
//!   enough to move instead ([`FileSpace::can_set_aside`]): its bytes are
//!   copied to space this session allocated and the old extent is set
//!   aside like any other named free space; a B-tree page of an earlier
//!   session grows only into the bytes its entries proved its own.
//!
//! State of one extent:
//! ```text
//!            alloc                free (deferred)          commit
//!   [free] --------> [live] ---------------------> [pending] ------> [free]
//!     ^                 |  free (not deferred)                         |
//!     |                 +------------------------> merge / shrink -----+
//!
//!   with snapshot readers served (S6):
//!   [pending] --commit--> [held] --release_held (no older snapshot)--> [free]
//! ```

pub(crate) mod fsm;
pub(crate) mod naive;
pub(crate) mod section;

use std::collections::BTreeMap;

pub(crate) use section::SectionIndex;
pub use section::{Section, SpaceKind};

use crate::error::{Error, Result};
use crate::pager::PAGE_SIZE;

/// Which free list manages free sections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FreeListKind {
    /// Size-binned best fit with an address-ordered merge index: O(log n).
    #[default]
    Managed,
    /// An unsorted list searched linearly: O(n). For benchmarks only.
    Naive,
}

/// Metadata and small data are carved from extents an aggregator reserves
/// at the end of the file, up to this size.
pub(crate) const AGGREGATOR_MAX: u64 = 64 * 1024;
/// An aggregator's first reserved extent; each further one doubles, up to
/// [`AGGREGATOR_MAX`], so a small file does not end with a large unused
/// remainder and a large one still clusters its metadata.
const AGGREGATOR_FIRST: u64 = 8 * 1024;
/// Data allocations up to this size go through the small-data aggregator.
pub(crate) const SMALL_DATA: u64 = 4096;

#[derive(Debug, Clone, Copy, Default)]
struct Aggregator {
    pos: u64,
    end: u64,
    /// Size of the next extent to reserve (0 before the first).
    next: u64,
}

impl Aggregator {
    fn room(&self) -> u64 {
        self.end - self.pos
    }
}

/// The file's allocator: end of file, aggregators and a free list.
pub(crate) struct FileSpace {
    eof: u64,
    list: Box<dyn SectionIndex>,
    aggs: [Aggregator; 2],
    defer: bool,
    /// Frees held back until commit (S4), by address: addr -> (size, kind).
    pending: BTreeMap<u64, (u64, SpaceKind)>,
    /// The end of file when the transaction began: space from here on was
    /// allocated in this transaction and is not held back when freed (S4).
    fresh_from: u64,
    /// Frees committed while snapshot readers may still see them (S6):
    /// addr -> (size, kind, generation that freed them).
    held: BTreeMap<u64, (u64, SpaceKind, u64)>,
    /// With snapshot readers served: the generation the next commit makes.
    hold: Option<u64>,
    /// Free space the file named and no walk has proven free yet (S7):
    /// addr -> (size, kind), merged, never handed out.
    unproven: BTreeMap<u64, (u64, SpaceKind)>,
    /// Bytes in `unproven`.
    unproven_bytes: u64,
    /// Whether a walk proved the file's structures disjoint (S7): frees
    /// below `named_end` then go to the free list like any other.
    proven: bool,
    /// The end of file the file named when loaded: extents below it were
    /// allocated by earlier sessions.
    named_end: u64,
    /// Extents contiguous data moved away from (S7), this session's and
    /// those of the file's left-space record: addr -> size, merged. Not
    /// free (the file's word that only the moved data lived there is what
    /// is unproven) and not checked against (a reader trusts no record of
    /// them); a proof takes back what no structure holds.
    left: BTreeMap<u64, u64>,
    /// Bytes in `left`.
    left_bytes: u64,
    /// Whether this session freed an object an earlier session made, on a
    /// link count read from the file: the count is the file's word too, so
    /// the commit proves the space before writing it (S7).
    doubted: bool,
    /// Whether the metadata aggregator holds a region reserved for all of
    /// a file's metadata ([`FileSpace::reserve_meta`]): metadata of any
    /// size then comes from it while it has room.
    meta_region: bool,
    /// The region [`FileSpace::reserve_meta`] reserved, while it lasts
    /// (`0..0` otherwise): no data is placed below its end.
    region: std::ops::Range<u64>,
    /// One past the last metadata byte taken from `region`.
    region_used: u64,
    /// The lowest address of data this session placed (`u64::MAX`: none).
    lowest_data: u64,
    /// One past the metadata region a writer laid out first, as the
    /// superblock records it (0: unknown). No data is placed below it, so
    /// it stays true as the file changes; later metadata may lie past it.
    meta_end: u64,
}

impl FileSpace {
    pub(crate) fn new(eof: u64, kind: FreeListKind) -> Self {
        let list: Box<dyn SectionIndex> = match kind {
            FreeListKind::Managed => Box::new(fsm::FreeSpaceManager::new()),
            FreeListKind::Naive => Box::new(naive::NaiveList::new()),
        };
        FileSpace {
            eof,
            list,
            aggs: [Aggregator::default(); 2],
            defer: false,
            pending: BTreeMap::new(),
            fresh_from: eof,
            held: BTreeMap::new(),
            hold: None,
            unproven: BTreeMap::new(),
            unproven_bytes: 0,
            proven: false,
            named_end: eof,
            left: BTreeMap::new(),
            left_bytes: 0,
            doubted: false,
            meta_region: false,
            region: 0..0,
            region_used: 0,
            lowest_data: u64::MAX,
            meta_end: 0,
        }
    }

    /// The superblock's `meta_end` of the file loaded (0: unknown).
    pub(crate) fn set_meta_end(&mut self, meta_end: u64) {
        self.meta_end = meta_end.min(self.eof);
    }

    /// One past the metadata region laid out first (0: unknown), for the
    /// superblock: never past the end of the file.
    pub(crate) fn meta_end(&self) -> u64 {
        self.meta_end.min(self.eof)
    }

    /// Reserve `bytes` at the end of the file for metadata, so that a file
    /// written at once (a repack) keeps its metadata together before its
    /// data: on object storage one read then holds all of it. Metadata that
    /// does not fit goes where it would have gone. The region lasts until
    /// the next commit returns what is left of it. While it lasts, no data
    /// is placed below its end; the commit records the end of what
    /// metadata took of it as the file's `meta_end` when everything before
    /// it is metadata too.
    pub(crate) fn reserve_meta(&mut self, bytes: u64) -> Result<()> {
        let i = SpaceKind::Meta.index();
        let old = self.aggs[i];
        if old.room() > 0 {
            self.release(Section {
                addr: old.pos,
                size: old.room(),
                kind: SpaceKind::Meta,
            });
        }
        let start = self.grow(bytes)?;
        self.aggs[i] = Aggregator {
            pos: start,
            end: start + bytes,
            next: AGGREGATOR_MAX,
        };
        self.meta_region = true;
        self.region = start..start + bytes;
        self.region_used = start;
        self.checked("reserve_meta");
        Ok(())
    }

    /// One past the last allocated byte.
    pub(crate) fn eof(&self) -> u64 {
        self.eof
    }

    /// Reserve `size` bytes of `kind`.
    pub(crate) fn alloc(&mut self, kind: SpaceKind, size: u64) -> Result<u64> {
        let r = self.take(kind, size);
        if let Ok(a) = r {
            match kind {
                SpaceKind::Data if a != 0 => self.lowest_data = self.lowest_data.min(a),
                SpaceKind::Meta if self.region.contains(&a) => {
                    self.region_used = self
                        .region_used
                        .max(a.saturating_add(size).min(self.region.end))
                }
                _ => {}
            }
        }
        self.checked("alloc");
        r
    }

    /// Below this no data is placed: the metadata region laid out first
    /// (and the one being laid out).
    fn data_floor(&self) -> u64 {
        self.meta_end.max(self.region.end)
    }

    fn take(&mut self, kind: SpaceKind, size: u64) -> Result<u64> {
        if size == 0 {
            // Nothing to place: address 0 is "no storage" everywhere.
            return Ok(0);
        }
        // While a metadata region has room, metadata comes from it: free
        // space inside it (pages freed as B-tree nodes grow), else its
        // aggregator; never free space among the data after it.
        let in_region =
            kind == SpaceKind::Meta && self.meta_region && self.aggs[kind.index()].room() >= size;
        if let Some(a) = self.list.take(kind, size) {
            let below_floor = kind == SpaceKind::Data && a < self.data_floor();
            if (!in_region || a < self.aggs[kind.index()].pos) && !below_floor {
                return Ok(a);
            }
            self.list.give(Section {
                addr: a,
                size,
                kind,
            });
        }
        let aggregated = match kind {
            SpaceKind::Meta => size <= AGGREGATOR_MAX || in_region,
            SpaceKind::Data => size <= SMALL_DATA,
        };
        if !aggregated {
            return self.grow(size);
        }
        let i = kind.index();
        if self.aggs[i].room() < size {
            let old = self.aggs[i];
            if old.end == self.eof && old.end > 0 {
                // The reserved extent is at the end: just extend it in place.
                self.eof = old.pos;
                self.aggs[i].end = old.pos;
            } else {
                self.aggs[i].pos = 0;
                self.aggs[i].end = 0;
                if old.room() > 0 {
                    self.release(Section {
                        addr: old.pos,
                        size: old.room(),
                        kind,
                    });
                }
            }
            let next = if old.next == 0 {
                AGGREGATOR_FIRST
            } else {
                old.next
            };
            let reserve = next.max(size);
            let start = self.grow(reserve)?;
            self.aggs[i] = Aggregator {
                pos: start,
                end: start + reserve,
                next: (next * 2).min(AGGREGATOR_MAX),
            };
        }
        let a = self.aggs[i].pos;
        self.aggs[i].pos += size;
        Ok(a)
    }

    /// Take space at the end of the file, bypassing free sections.
    pub(crate) fn alloc_eof(&mut self, size: u64) -> Result<u64> {
        let r = self.grow(size);
        self.checked("alloc_eof");
        r
    }

    fn grow(&mut self, size: u64) -> Result<u64> {
        let addr = self.eof;
        self.eof = addr
            .checked_add(size)
            .ok_or_else(|| Error::invalid("file address space exhausted"))?;
        Ok(addr)
    }

    /// Give back an extent returned by `alloc`.
    ///
    /// # Errors
    /// `Corrupt` if the extent is not live (S5); nothing is freed then.
    pub(crate) fn free(&mut self, kind: SpaceKind, addr: u64, size: u64) -> Result<()> {
        if size == 0 {
            return Ok(());
        }
        self.check_live("freed extent", addr, size)?;
        self.apply_free(Section { addr, size, kind });
        self.checked("free");
        Ok(())
    }

    fn apply_free(&mut self, s: Section) {
        if self.defer && s.addr < self.fresh_from {
            self.pending.insert(s.addr, (s.size, s.kind));
        } else {
            self.release(s);
        }
    }

    /// Give back several extents: all are checked first — inside the file,
    /// clear of each other and of space that is not live — then all freed;
    /// on an error none is (S5).
    ///
    /// # Errors
    /// `Corrupt` naming the first extent that is not live.
    pub(crate) fn free_all(&mut self, extents: &[Section]) -> Result<()> {
        for s in self.check_free(extents)? {
            self.apply_free(s);
        }
        self.checked("free_all");
        Ok(())
    }

    /// Check that [`FileSpace::free_all`] would accept `extents`, changing
    /// nothing; returns them in address order.
    ///
    /// # Errors
    /// As for [`FileSpace::free_all`].
    pub(crate) fn check_free(&self, extents: &[Section]) -> Result<Vec<Section>> {
        let mut sorted: Vec<Section> = extents.iter().filter(|s| s.size > 0).copied().collect();
        sorted.sort_unstable_by_key(|s| s.addr);
        for (i, s) in sorted.iter().enumerate() {
            self.check_live("freed extent", s.addr, s.size)?;
            if let Some(next) = sorted.get(i + 1) {
                if next.addr < s.end() {
                    return Err(Error::corrupt(
                        "freed extent",
                        next.addr,
                        format!("freed twice: overlaps the extent at {}", s.addr),
                    ));
                }
            }
        }
        Ok(sorted)
    }

    /// Check that `[addr, addr + len)` may hold a live structure: it lies in
    /// `[PAGE_SIZE, eof)` and overlaps no free section, held-back free or
    /// aggregator remainder. An O(log n) test, made before a structure read
    /// from the file is trusted and before its space is freed.
    ///
    /// # Errors
    /// `Corrupt` naming `what` at `addr`.
    pub(crate) fn check_live(&self, what: &'static str, addr: u64, len: u64) -> Result<()> {
        let end = addr
            .checked_add(len)
            .filter(|&e| addr >= PAGE_SIZE as u64 && e <= self.eof);
        let Some(end) = end else {
            return Err(Error::corrupt(
                what,
                addr,
                format!(
                    "{len} bytes at {addr} lie outside the file (which ends at {})",
                    self.eof
                ),
            ));
        };
        let clash = self
            .list
            .overlapping(addr, end)
            .map(|s| (s.addr, "a free section"))
            .or_else(|| {
                let (&a, &(n, _)) = self.pending.range(..end).next_back()?;
                (a + n > addr).then_some((a, "space freed in this transaction"))
            })
            .or_else(|| {
                let (&a, &(n, _, _)) = self.held.range(..end).next_back()?;
                (a + n > addr).then_some((a, "space held for snapshot readers"))
            })
            .or_else(|| {
                let (&a, &(n, _)) = self.unproven.range(..end).next_back()?;
                (a + n > addr).then_some((a, "a free section the file names"))
            })
            .or_else(|| {
                self.aggs
                    .iter()
                    .find(|g| g.room() > 0 && g.pos < end && addr < g.end)
                    .map(|g| (g.pos, "unused reserved space"))
            });
        match clash {
            None => Ok(()),
            Some((at, kind)) => Err(Error::corrupt(
                what,
                addr,
                format!("{len} bytes at {addr} overlap {kind} at {at}"),
            )),
        }
    }

    /// Merge, shrink at the end, or let an aggregator absorb; space an
    /// earlier session allocated waits for a proof instead (S7).
    fn release(&mut self, s: Section) {
        if !self.proven && s.addr < self.named_end {
            self.set_aside(s);
            return;
        }
        let merged = self.list.give(s);
        if merged.end() == self.eof {
            self.list.remove(merged.addr);
            self.eof = merged.addr;
            self.shrink();
            return;
        }
        for i in 0..self.aggs.len() {
            let ag = self.aggs[i];
            if ag.room() == 0 {
                continue;
            }
            if merged.end() == ag.pos {
                self.list.remove(merged.addr);
                self.aggs[i].pos = merged.addr;
                return;
            }
            if merged.addr == ag.end {
                self.list.remove(merged.addr);
                self.aggs[i].end = merged.end();
                if self.aggs[i].end == self.eof {
                    self.shrink();
                }
                return;
            }
        }
    }

    /// Keep `s` among the unproven sections, merged with its neighbours
    /// there (records list merged sections).
    fn set_aside(&mut self, mut s: Section) {
        self.unproven_bytes += s.size;
        if let Some((&a, &(n, _))) = self.unproven.range(..s.addr).next_back() {
            if a + n == s.addr {
                self.unproven.remove(&a);
                s = Section {
                    addr: a,
                    size: n + s.size,
                    kind: s.kind,
                };
            }
        }
        if let Some((n, _)) = self.unproven.remove(&s.end()) {
            s.size += n;
        }
        self.unproven.insert(s.addr, (s.size, s.kind));
    }

    /// Whether the space the file names as free is worth a proof: a walk
    /// costs about what reading the file's structures costs, so it runs
    /// only when it gives back at least an eighth of the file (S7).
    pub(crate) fn wants_proof(&self) -> bool {
        let bytes = self.unproven_bytes.saturating_add(self.left_bytes);
        !self.proven && (self.doubted || (bytes > 0 && bytes >= self.eof / 8))
    }

    /// Whether the extent at `addr` is the file's word: an earlier session
    /// allocated it and no walk has proven this session's space (S7).
    pub(crate) fn is_named(&self, addr: u64) -> bool {
        !self.proven && addr < self.named_end
    }

    /// Whether `size` more bytes can be left unused without making the
    /// space worth a proof ([`Self::wants_proof`]): then an extent the file
    /// names may be moved rather than proven, its old bytes left (S7).
    pub(crate) fn can_leave(&self, size: u64) -> bool {
        // Frees of named space waiting for the commit are set aside then.
        let waiting: u64 = self
            .pending
            .range(..self.named_end)
            .map(|(_, &(n, _))| n)
            .sum();
        !self.proven
            && !self.doubted
            && self
                .unproven_bytes
                .checked_add(waiting)
                .and_then(|b| b.checked_add(self.left_bytes))
                .and_then(|b| b.checked_add(size))
                .is_some_and(|b| b < self.eof / 8)
    }

    /// One past the last byte an earlier session allocated: every extent
    /// the file names lies below it.
    pub(crate) fn named_end(&self) -> u64 {
        self.named_end
    }

    /// Leave the extent `(addr, size)` the file named unused: neither freed
    /// (the file's word that only the moved data lived there is not
    /// proven) nor forgotten (the next proof takes back what no structure
    /// holds, S7). Overlapping or touching extents merge.
    pub(crate) fn leave(&mut self, addr: u64, size: u64) {
        if size == 0 || self.proven {
            return;
        }
        let (mut a, mut e) = (addr, addr.saturating_add(size));
        let before = self.left.range(..=a).next_back().map(|(&x, &n)| (x, n));
        if let Some((x, n)) = before.filter(|&(x, n)| x + n >= a) {
            a = x;
            e = e.max(x + n);
        }
        let after: Vec<(u64, u64)> = self.left.range(a..=e).map(|(&x, &n)| (x, n)).collect();
        for (x, n) in after {
            e = e.max(x + n);
            self.left.remove(&x);
        }
        self.left.remove(&a);
        self.left.insert(a, e - a);
        self.left_bytes = self.left.values().sum();
    }

    /// The extents left unused ([`Self::leave`]), for the left-space
    /// record.
    pub(crate) fn left(&self) -> Vec<Section> {
        self.left
            .iter()
            .map(|(&addr, &size)| Section {
                addr,
                size,
                kind: SpaceKind::Data,
            })
            .collect()
    }

    /// Restore the left-space record's extents.
    pub(crate) fn load_left(&mut self, sections: &[Section]) {
        for s in sections {
            self.leave(s.addr, s.size);
        }
    }

    /// Note that an object an earlier session made was freed because its
    /// link count, read from the file, said its last name went: the next
    /// commit proves the space first (S7).
    pub(crate) fn doubt(&mut self) {
        if !self.proven {
            self.doubted = true;
        }
    }

    /// Whether a walk proved the file's structures disjoint.
    pub(crate) fn is_proven(&self) -> bool {
        self.proven
    }

    /// Check the unproven and held sections against `live`, every live
    /// extent of the file (any order, each named), and the live extents
    /// against each other; then hand the unproven space to the free list
    /// (S7).
    ///
    /// # Errors
    /// `Corrupt` naming both structures of the first overlap; nothing
    /// changes then.
    pub(crate) fn prove(&mut self, live: &mut [(u64, u64, &'static str)]) -> Result<()> {
        live.sort_unstable();
        let mut reach = (0u64, 0u64, "superblock");
        // (the superblock itself is among `live`)
        for &(a, n, what) in live.iter() {
            let (pa, pn, pwhat) = reach;
            if a < pa + pn {
                return Err(Error::corrupt(
                    what,
                    a,
                    format!("{n} bytes at {a} overlap the {pwhat} at {pa} ({pn} bytes)"),
                ));
            }
            if a + n > pa + pn {
                reach = (a, n, what);
            }
        }
        let unproven = self
            .unproven
            .iter()
            .map(|(&a, &(n, _))| (a, n, "free-space record"));
        let held = self
            .held
            .iter()
            .map(|(&a, &(n, _, _))| (a, n, "held-space record"));
        for (a, n, what) in unproven.chain(held) {
            let i = live.partition_point(|&(l, m, _)| l + m <= a);
            if let Some(&(l, m, lw)) = live.get(i).filter(|&&(l, _, _)| l < a + n) {
                return Err(Error::corrupt(
                    what,
                    a,
                    format!(
                        "its section of {n} bytes at {a} covers the live {lw} at {l} ({m} bytes)"
                    ),
                ));
            }
        }
        let back = self.left_unheld(live);
        self.mark_proven();
        for s in back {
            self.release(s);
        }
        self.checked("prove");
        Ok(())
    }

    /// The bytes of the left extents that neither a live structure (`live`,
    /// sorted) nor this allocator holds or names: what a proof gives back.
    /// A left extent of a damaged file may lie over live structures; only
    /// the rest is returned.
    fn left_unheld(&self, live: &[(u64, u64, &'static str)]) -> Vec<Section> {
        let mut taken: Vec<(u64, u64)> = live.iter().map(|&(a, n, _)| (a, n)).collect();
        taken.extend(self.list.sections().iter().map(|s| (s.addr, s.size)));
        taken.extend(self.unproven.iter().map(|(&a, &(n, _))| (a, n)));
        taken.extend(self.held.iter().map(|(&a, &(n, _, _))| (a, n)));
        taken.extend(self.pending.iter().map(|(&a, &(n, _))| (a, n)));
        taken.extend(self.aggs.iter().map(|g| (g.pos, g.room())));
        taken.retain(|&(_, n)| n > 0);
        taken.sort_unstable();
        let mut out = vec![];
        for (&a, &n) in &self.left {
            let end = (a + n).min(self.named_end).min(self.eof);
            let mut at = a.max(PAGE_SIZE as u64);
            // Disjoint once proven: the one before `at` may reach over it.
            let i = taken.partition_point(|&(x, _)| x < at).saturating_sub(1);
            for &(x, m) in &taken[i..] {
                if x >= end {
                    break;
                }
                if x > at {
                    out.push(Section {
                        addr: at,
                        size: x - at,
                        kind: SpaceKind::Data,
                    });
                }
                at = at.max(x + m);
            }
            if at < end {
                out.push(Section {
                    addr: at,
                    size: end - at,
                    kind: SpaceKind::Data,
                });
            }
        }
        out
    }

    /// Trust the file's free space from now on (a proof ran, or the state
    /// was written by this session after one): the unproven sections join
    /// the free list.
    pub(crate) fn mark_proven(&mut self) {
        self.proven = true;
        self.doubted = false;
        self.unproven_bytes = 0;
        self.left.clear();
        self.left_bytes = 0;
        for (addr, (size, kind)) in std::mem::take(&mut self.unproven) {
            self.release(Section { addr, size, kind });
        }
        self.checked("mark_proven");
    }

    /// Drop trailing free sections and empty aggregator tails (S3).
    fn shrink(&mut self) {
        loop {
            if let Some(s) = self.list.ending_at(self.eof) {
                self.list.remove(s.addr);
                self.eof = s.addr;
                continue;
            }
            if let Some(i) = (0..self.aggs.len())
                .find(|&i| self.aggs[i].room() > 0 && self.aggs[i].end == self.eof)
            {
                self.eof = self.aggs[i].pos;
                self.aggs[i].pos = 0;
                self.aggs[i].end = 0;
                continue;
            }
            return;
        }
    }

    /// Return aggregator remainders, so that no reserved-but-unused space
    /// outlives a commit.
    pub(crate) fn release_aggregators(&mut self) {
        self.meta_region = false;
        if !self.region.is_empty() {
            // The region's metadata is the file's first only if all that
            // came before it is metadata too: earlier sessions' (below the
            // file's meta_end) and this one's (no data below the region).
            let before = self.named_end <= self.meta_end.max(PAGE_SIZE as u64)
                && self.lowest_data >= self.region.start;
            if before {
                self.meta_end = self.meta_end.max(self.region_used);
            }
            self.region = 0..0;
        }
        for (i, kind) in SpaceKind::ALL.iter().enumerate() {
            let ag = self.aggs[i];
            self.aggs[i].pos = 0;
            self.aggs[i].end = 0;
            if ag.room() > 0 {
                if ag.end == self.eof {
                    self.eof = ag.pos;
                    self.shrink();
                } else {
                    self.release(Section {
                        addr: ag.pos,
                        size: ag.room(),
                        kind: *kind,
                    });
                }
            }
        }
        self.checked("release_aggregators");
    }

    /// Hold frees back until [`FileSpace::commit`] (S4).
    #[allow(dead_code)]
    pub(crate) fn set_defer(&mut self, defer: bool) {
        self.defer = defer;
        self.fresh_from = self.eof;
        self.checked("set_defer");
    }

    /// Release frees held back since the last commit, or with snapshot
    /// readers served, hold them for the readers (S6).
    pub(crate) fn commit(&mut self) {
        for (addr, (size, kind)) in std::mem::take(&mut self.pending) {
            match self.hold {
                Some(g) => {
                    self.held.insert(addr, (size, kind, g));
                }
                None => self.release(Section { addr, size, kind }),
            }
        }
        self.fresh_from = self.eof;
        self.checked("commit");
    }

    /// Hold committed frees for snapshot readers, as freed by generation
    /// `g` (None: release them at commit).
    pub(crate) fn set_hold(&mut self, g: Option<u64>) {
        self.hold = g;
    }

    /// Release held space no snapshot can see: freed by generations up to
    /// `oldest`, the oldest snapshot a reader holds (None: no reader).
    /// Returns whether any was released.
    pub(crate) fn release_held(&mut self, oldest: Option<u64>) -> bool {
        let go: Vec<u64> = self
            .held
            .iter()
            .filter(|(_, &(_, _, g))| oldest.is_none_or(|o| g <= o))
            .map(|(&a, _)| a)
            .collect();
        let any = !go.is_empty();
        for addr in go {
            if let Some((size, kind, _)) = self.held.remove(&addr) {
                self.release(Section { addr, size, kind });
            }
        }
        self.checked("release_held");
        any
    }

    /// Space held for snapshot readers, in address order.
    pub(crate) fn held(&self) -> Vec<Section> {
        self.held
            .iter()
            .map(|(&addr, &(size, kind, _))| Section { addr, size, kind })
            .collect()
    }

    /// Restore held sections loaded from the file, as freed by generation
    /// `g`; they must be clear of free space and of each other.
    ///
    /// # Errors
    /// `Corrupt` naming the first that is not.
    pub(crate) fn load_held(&mut self, sections: &[Section], g: u64) -> Result<()> {
        for s in sections {
            self.check_live("held-space record", s.addr, s.size)?;
            self.held.insert(s.addr, (s.size, s.kind, g));
        }
        self.checked("load_held");
        Ok(())
    }

    /// Forget frees held back (the transaction that made them was rolled back).
    #[allow(dead_code)]
    pub(crate) fn discard_pending(&mut self) {
        self.pending.clear();
        self.checked("discard_pending");
    }

    /// Frees held back until commit, in address order.
    pub(crate) fn pending(&self) -> Vec<Section> {
        self.pending
            .iter()
            .map(|(&addr, &(size, kind))| Section { addr, size, kind })
            .collect()
    }

    /// Whether any free is held back until commit.
    pub(crate) fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Free sections in address order, proven or not, merged where they
    /// touch: what the free-space record holds.
    pub(crate) fn sections(&self) -> Vec<Section> {
        let mut all = self.list.sections();
        if self.unproven.is_empty() {
            return all;
        }
        all.extend(
            self.unproven
                .iter()
                .map(|(&addr, &(size, kind))| Section { addr, size, kind }),
        );
        all.sort_unstable_by_key(|s| s.addr);
        let mut out: Vec<Section> = Vec::with_capacity(all.len());
        for s in all {
            match out.last_mut() {
                Some(p) if p.end() == s.addr => p.size += s.size,
                _ => out.push(s),
            }
        }
        out
    }

    /// Restore sections loaded from the file: unproven until a walk proves
    /// them (S7), unless this session already trusts the file's space.
    pub(crate) fn load(&mut self, sections: &[Section]) {
        for s in sections {
            if self.proven {
                self.list.give(*s);
            } else {
                self.set_aside(*s);
            }
        }
        self.shrink();
        self.checked("load");
    }

    /// Aggregator remainders, as (addr, size).
    pub(crate) fn reserved(&self) -> Vec<(u64, u64)> {
        self.aggs
            .iter()
            .filter(|a| a.room() > 0)
            .map(|a| (a.pos, a.room()))
            .collect()
    }

    /// Under `paranoid`, panic if an invariant is broken after `op`.
    fn checked(&self, op: &str) {
        #[cfg(feature = "paranoid")]
        if let Err(e) = self.check_invariants() {
            panic!("free-space invariant broken after {op}: {e}");
        }
        #[cfg(not(feature = "paranoid"))]
        let _ = op;
    }

    /// Verify S1–S4 over the free list, the aggregators, and the frees
    /// held back or held for readers, and the free list's own invariants.
    #[cfg(any(test, feature = "paranoid"))]
    pub(crate) fn check_invariants(&self) -> std::result::Result<(), String> {
        self.list.check()?;
        // (addr, size, is a free section)
        let mut all: Vec<(u64, u64, bool)> = self
            .list
            .sections()
            .iter()
            .map(|s| (s.addr, s.size, true))
            .collect();
        all.extend(self.reserved().into_iter().map(|(a, s)| (a, s, false)));
        all.extend(self.pending.iter().map(|(&a, &(s, _))| (a, s, false)));
        all.extend(self.held.iter().map(|(&a, &(s, _, _))| (a, s, false)));
        all.extend(self.unproven.iter().map(|(&a, &(s, _))| (a, s, false)));
        all.sort_unstable();
        if let Some((&a, _)) = self.unproven.iter().next().filter(|_| self.proven) {
            return Err(format!("S7: unproven space at {a} after a proof"));
        }
        if let Some((&a, _)) = self.pending.range(self.fresh_from..).next() {
            return Err(format!(
                "S4: a free at {a} held back, though space from {} on is the transaction's own",
                self.fresh_from
            ));
        }
        for w in all.windows(2) {
            if w[0].0 + w[0].1 > w[1].0 {
                return Err(format!("S1: sections at {} and {} overlap", w[0].0, w[1].0));
            }
            if w[0].2 && w[1].2 && w[0].0 + w[0].1 == w[1].0 {
                return Err(format!(
                    "S2: free sections at {} and {} are adjacent",
                    w[0].0, w[1].0
                ));
            }
        }
        if let Some(&(a, _, _)) = all.first() {
            if a < PAGE_SIZE as u64 {
                return Err(format!("S1: section at {a} overlaps the superblock"));
            }
        }
        if let Some(&(a, s, free)) = all.last() {
            if a + s > self.eof {
                return Err(format!("S1: section at {a} runs past eof {}", self.eof));
            }
            // Held-back and held frees are not free yet: only free sections
            // count for S3.
            if free && a + s == self.eof {
                return Err("S3: the file ends in a free section".into());
            }
        }
        Ok(())
    }
}

/// Free-space figures for `arca stat` and `File::space_info`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SpaceInfo {
    /// Number of free sections.
    pub sections: u64,
    /// Bytes in free sections.
    pub free_bytes: u64,
    /// The largest free section.
    pub largest: u64,
    /// Sections per power-of-two size bin: `(bin lower bound, count, bytes)`.
    pub histogram: Vec<(u64, u64, u64)>,
    /// 1 − largest / free: 0 when all free space is one section.
    pub fragmentation: f64,
    /// Logical end of file.
    pub eof: u64,
}

impl SpaceInfo {
    pub(crate) fn from_sections(sections: &[Section], eof: u64) -> Self {
        let mut info = SpaceInfo {
            eof,
            ..SpaceInfo::default()
        };
        let mut bins: std::collections::BTreeMap<u64, (u64, u64)> = Default::default();
        for s in sections {
            info.sections += 1;
            info.free_bytes += s.size;
            info.largest = info.largest.max(s.size);
            // Sections are never empty; `max` keeps the shift in range anyway.
            let lo = 1u64 << (63 - s.size.max(1).leading_zeros());
            let e = bins.entry(lo).or_default();
            e.0 += 1;
            e.1 += s.size;
        }
        info.histogram = bins.into_iter().map(|(k, (n, b))| (k, n, b)).collect();
        if info.free_bytes > 0 {
            info.fragmentation = 1.0 - info.largest as f64 / info.free_bytes as f64;
        }
        info
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Apply random allocs and frees, then check S1–S3 and that live + free
    /// + reserved + header = eof.
    fn run(kind: FreeListKind, ops: &[(bool, u8, u64, usize)]) {
        let mut sp = FileSpace::new(PAGE_SIZE as u64, kind);
        let mut live: Vec<(u64, u64)> = vec![];
        for &(is_alloc, k, size, pick) in ops {
            let k = if k % 2 == 0 {
                SpaceKind::Meta
            } else {
                SpaceKind::Data
            };
            if is_alloc || live.is_empty() {
                let a = sp.alloc(k, size).unwrap();
                live.push((a, size));
            } else {
                let (a, s) = live.swap_remove(pick % live.len());
                sp.free(k, a, s).unwrap();
            }
            sp.check_invariants().unwrap();
        }
        sp.release_aggregators();
        sp.check_invariants().unwrap();
        let mut all: Vec<(u64, u64)> = live.clone();
        all.extend(sp.sections().iter().map(|s| (s.addr, s.size)));
        all.sort_unstable();
        let mut pos = PAGE_SIZE as u64;
        for (a, s) in all {
            assert_eq!(a, pos, "gap or overlap at {pos}");
            pos = a + s;
        }
        assert_eq!(pos, sp.eof(), "live + free + header = eof");
        // Freeing everything brings the file back to the superblock alone.
        for (a, s) in live {
            sp.free(SpaceKind::Data, a, s).unwrap();
        }
        assert_eq!(sp.eof(), PAGE_SIZE as u64);
        assert!(sp.sections().is_empty());
    }

    fn ops() -> impl Strategy<Value = Vec<(bool, u8, u64, usize)>> {
        prop::collection::vec(
            (
                any::<bool>(),
                any::<u8>(),
                prop_oneof![1u64..64, 64u64..5000, 5000u64..200_000],
                any::<usize>(),
            ),
            1..2000,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            rng_seed: proptest::test_runner::RngSeed::Fixed(0x5eed_5ace),
            ..ProptestConfig::with_cases(64)
        })]
        #[test]
        fn managed_space_matches_model(ops in ops()) {
            run(FreeListKind::Managed, &ops);
        }
        #[test]
        fn naive_space_matches_model(ops in ops()) {
            run(FreeListKind::Naive, &ops);
        }
    }

    #[cfg(feature = "paranoid")]
    #[test]
    #[should_panic(expected = "free-space invariant broken after alloc")]
    fn paranoid_checks_after_every_operation() {
        let mut sp = FileSpace::new(PAGE_SIZE as u64, FreeListKind::Managed);
        let a = sp.alloc(SpaceKind::Data, 100_000).unwrap();
        sp.alloc(SpaceKind::Data, 100_000).unwrap();
        sp.free(SpaceKind::Data, a, 100_000).unwrap();
        // A held-back free over a free section, behind the allocator's back.
        sp.pending.insert(a, (10, SpaceKind::Data));
        let _ = sp.alloc(SpaceKind::Data, 1 << 20);
    }

    #[test]
    fn deferred_frees_wait_for_commit() {
        let mut sp = FileSpace::new(PAGE_SIZE as u64, FreeListKind::Managed);
        let a = sp.alloc(SpaceKind::Data, 100_000).unwrap();
        let _b = sp.alloc(SpaceKind::Data, 100_000).unwrap();
        sp.set_defer(true);
        sp.free(SpaceKind::Data, a, 100_000).unwrap();
        let c = sp.alloc(SpaceKind::Data, 100_000).unwrap();
        assert_ne!(
            c, a,
            "S4: space freed in a transaction was reused before commit"
        );
        sp.commit();
        assert_eq!(sp.alloc(SpaceKind::Data, 100_000).unwrap(), a);
        sp.free(SpaceKind::Data, c, 1).unwrap();
        sp.discard_pending();
        sp.check_invariants().unwrap();
    }

    #[test]
    fn space_allocated_in_the_transaction_is_reused_at_once() {
        let mut sp = FileSpace::new(PAGE_SIZE as u64, FreeListKind::Managed);
        let old = sp.alloc(SpaceKind::Meta, 256).unwrap();
        // As at a commit: the aggregator's remainder goes back first.
        sp.release_aggregators();
        sp.set_defer(true);
        let new = sp.alloc(SpaceKind::Meta, 256).unwrap();
        sp.free(SpaceKind::Meta, new, 256).unwrap();
        sp.free(SpaceKind::Meta, old, 256).unwrap();
        assert_eq!(sp.pending().len(), 1, "only the committed extent waits");
        assert_eq!(sp.alloc(SpaceKind::Meta, 256).unwrap(), new);
        assert_ne!(sp.alloc(SpaceKind::Meta, 256).unwrap(), old);
        sp.check_invariants().unwrap();
    }

    #[test]
    fn frees_of_space_that_is_not_live_are_refused_whole() {
        let mut sp = FileSpace::new(PAGE_SIZE as u64, FreeListKind::Managed);
        let a = sp.alloc(SpaceKind::Data, 100_000).unwrap();
        let b = sp.alloc(SpaceKind::Data, 100_000).unwrap();
        let _c = sp.alloc(SpaceKind::Data, 100_000).unwrap();
        sp.free(SpaceKind::Data, a, 100_000).unwrap();
        let before = sp.sections();
        let eof = sp.eof();
        // Overlapping a free section, past the end, over the superblock,
        // twice in one batch: each refused, and the valid extent beside it
        // in the batch is not freed either.
        for bad in [
            (a + 10, 20),
            (a + 99_990, 20),
            (eof - 10, 20),
            (0, 4096),
            (u64::MAX - 5, 10),
        ] {
            let batch = [
                Section {
                    addr: b,
                    size: 100,
                    kind: SpaceKind::Data,
                },
                Section {
                    addr: bad.0,
                    size: bad.1,
                    kind: SpaceKind::Data,
                },
            ];
            let e = sp.free_all(&batch).unwrap_err();
            assert!(matches!(e, Error::Corrupt { .. }), "{bad:?}: {e}");
            assert_eq!(sp.sections(), before, "{bad:?}: half-freed");
        }
        let twice = [
            Section {
                addr: b,
                size: 100,
                kind: SpaceKind::Data,
            },
            Section {
                addr: b + 50,
                size: 100,
                kind: SpaceKind::Data,
            },
        ];
        assert!(sp.free_all(&twice).is_err());
        // Held back frees count as not live too.
        sp.set_defer(true);
        sp.free(SpaceKind::Data, b, 100).unwrap();
        assert!(sp.free(SpaceKind::Data, b + 50, 10).is_err());
        assert!(sp.check_live("x", b + 99, 1).is_err());
        assert!(sp.check_live("x", b + 100, 10).is_ok());
        sp.check_invariants().unwrap();
    }
}
