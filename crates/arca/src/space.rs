//! File space: every byte of the file is handed out and taken back here.
//!
//! [`FileSpace`] is the one allocator interface the layers above use. It
//! owns the end of file, one aggregator for metadata and one for small raw
//! data, and a free list of sections — the free-space manager
//! ([`fsm::FreeSpaceManager`]) or, for comparison only, the naive baseline
//! ([`naive::NaiveList`]).
//!
//! Allocation order: a best-fit free section; else the kind's aggregator
//! (metadata, small raw); else the end of file. Freeing merges with both
//! neighbours, shrinks the file when the section touches the end (and keeps
//! shrinking through trailing free sections), and otherwise lets an adjacent
//! aggregator absorb it.
//!
//! Invariants (checked by [`FileSpace::check_invariants`]):
//! - S1: free sections, aggregator remainders and live extents are disjoint
//!   and all lie in `[PAGE_SIZE, eof)`.
//! - S2: no two free sections are adjacent (merging is complete).
//! - S3: no free section ends at `eof` (the file never ends in free space).
//! - S4: space freed while frees are deferred (inside a transaction) is not
//!   handed out before [`FileSpace::commit`].
//!
//! State of one extent:
//! ```text
//!            alloc                free (deferred)          commit
//!   [free] --------> [live] ---------------------> [pending] ------> [free]
//!     ^                 |  free (not deferred)                         |
//!     |                 +------------------------> merge / shrink -----+
//! ```

pub(crate) mod fsm;
pub(crate) mod naive;
pub(crate) mod record;

use crate::error::{Error, Result};

/// What an extent of file space holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SpaceKind {
    /// Pages and blobs: headers, B-tree nodes, large attribute values.
    Meta,
    /// Dataset elements: contiguous storage and chunks.
    Raw,
}

impl SpaceKind {
    pub(crate) const ALL: [SpaceKind; 2] = [SpaceKind::Meta, SpaceKind::Raw];

    pub(crate) fn index(self) -> usize {
        self as usize
    }

    pub(crate) fn from_u8(v: u8) -> Option<SpaceKind> {
        SpaceKind::ALL.get(v as usize).copied()
    }
}

/// Which free list manages free sections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FreeListKind {
    /// Size-binned best fit with an address-ordered merge index: O(log n).
    #[default]
    Managed,
    /// An unsorted list searched linearly: O(n). For benchmarks only.
    Naive,
}

/// A section of free file space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Section {
    /// First byte.
    pub addr: u64,
    /// Length in bytes.
    pub size: u64,
    /// The kind of space it was freed as.
    pub kind: SpaceKind,
}

impl Section {
    pub(crate) fn end(&self) -> u64 {
        self.addr + self.size
    }
}

/// What a free list must do; both implementations keep S2 themselves.
pub(crate) trait FreeList: Send {
    /// Take `size` bytes from the best-fitting section, preferring `kind`;
    /// the unused tail goes back to the list.
    fn take(&mut self, kind: SpaceKind, size: u64) -> Option<u64>;
    /// Add a section, merging with its neighbours; returns the merged section.
    fn give(&mut self, s: Section) -> Section;
    /// Remove the section starting at `addr`, if there is one.
    fn remove(&mut self, addr: u64) -> Option<Section>;
    /// The section that ends exactly at `end`, if any.
    fn ending_at(&self, end: u64) -> Option<Section>;
    /// Every section in address order.
    fn sections(&self) -> Vec<Section>;
}

/// Metadata and small raw data are carved from blocks up to this size.
pub(crate) const AGGREGATOR_BLOCK: u64 = 64 * 1024;
/// An aggregator's first block; each further block doubles, up to
/// [`AGGREGATOR_BLOCK`], so a small file does not end with a large unused
/// remainder and a large one still clusters its metadata.
const FIRST_BLOCK: u64 = 8 * 1024;
/// Raw allocations up to this size go through the small-data aggregator.
pub(crate) const SMALL_RAW: u64 = 4096;

#[derive(Debug, Clone, Copy, Default)]
struct Aggregator {
    pos: u64,
    end: u64,
    /// Size of the next block to reserve (0 before the first).
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
    list: Box<dyn FreeList>,
    aggs: [Aggregator; 2],
    defer: bool,
    pending: Vec<Section>,
}

impl FileSpace {
    pub(crate) fn new(eof: u64, kind: FreeListKind) -> Self {
        let list: Box<dyn FreeList> = match kind {
            FreeListKind::Managed => Box::new(fsm::FreeSpaceManager::new()),
            FreeListKind::Naive => Box::new(naive::NaiveList::new()),
        };
        FileSpace {
            eof,
            list,
            aggs: [Aggregator::default(); 2],
            defer: false,
            pending: vec![],
        }
    }

    /// One past the last allocated byte.
    pub(crate) fn eof(&self) -> u64 {
        self.eof
    }

    /// Reserve `size` bytes of `kind`.
    pub(crate) fn alloc(&mut self, kind: SpaceKind, size: u64) -> Result<u64> {
        if size == 0 {
            // Nothing to place: address 0 is "no storage" everywhere.
            return Ok(0);
        }
        if let Some(a) = self.list.take(kind, size) {
            return Ok(a);
        }
        let aggregated = match kind {
            SpaceKind::Meta => size <= AGGREGATOR_BLOCK,
            SpaceKind::Raw => size <= SMALL_RAW,
        };
        if !aggregated {
            return self.alloc_eof(size);
        }
        let i = kind.index();
        if self.aggs[i].room() < size {
            let old = self.aggs[i];
            if old.end == self.eof && old.end > 0 {
                // The block is at the end: just extend it in place.
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
            let next = if old.next == 0 { FIRST_BLOCK } else { old.next };
            let block = next.max(size);
            let start = self.alloc_eof(block)?;
            self.aggs[i] = Aggregator {
                pos: start,
                end: start + block,
                next: (next * 2).min(AGGREGATOR_BLOCK),
            };
        }
        let a = self.aggs[i].pos;
        self.aggs[i].pos += size;
        Ok(a)
    }

    /// Take space at the end of the file, bypassing free sections.
    pub(crate) fn alloc_eof(&mut self, size: u64) -> Result<u64> {
        let addr = self.eof;
        self.eof = addr
            .checked_add(size)
            .ok_or_else(|| Error::invalid("file address space exhausted"))?;
        Ok(addr)
    }

    /// Give back an extent returned by `alloc`.
    pub(crate) fn free(&mut self, kind: SpaceKind, addr: u64, size: u64) {
        if size == 0 {
            return;
        }
        let s = Section { addr, size, kind };
        if self.defer {
            self.pending.push(s);
        } else {
            self.release(s);
        }
        #[cfg(feature = "paranoid")]
        if let Err(e) = self.check_invariants() {
            panic!("free-space invariant broken after free: {e}");
        }
    }

    /// Merge, shrink at the end, or let an aggregator absorb.
    fn release(&mut self, s: Section) {
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
    }

    /// Hold frees back until [`FileSpace::commit`] (S4).
    #[allow(dead_code)]
    pub(crate) fn set_defer(&mut self, defer: bool) {
        self.defer = defer;
    }

    /// Release frees held back since the last commit.
    pub(crate) fn commit(&mut self) {
        let mut pending = std::mem::take(&mut self.pending);
        for s in pending.drain(..) {
            self.release(s);
        }
        // Emptied but kept: every transaction fills it again.
        self.pending = pending;
    }

    /// Forget frees held back (the transaction that made them was rolled back).
    #[allow(dead_code)]
    pub(crate) fn discard_pending(&mut self) {
        self.pending.clear();
    }

    /// Frees held back until commit.
    pub(crate) fn pending(&self) -> &[Section] {
        &self.pending
    }

    /// Free sections in address order.
    pub(crate) fn sections(&self) -> Vec<Section> {
        self.list.sections()
    }

    /// Restore sections loaded from the file; they were valid when written.
    pub(crate) fn load(&mut self, sections: &[Section]) {
        for s in sections {
            self.list.give(*s);
        }
        self.shrink();
    }

    /// Aggregator remainders, as (addr, size).
    pub(crate) fn reserved(&self) -> Vec<(u64, u64)> {
        self.aggs
            .iter()
            .filter(|a| a.room() > 0)
            .map(|a| (a.pos, a.room()))
            .collect()
    }

    /// Verify S1–S3 over the free list and aggregators.
    #[cfg(any(test, feature = "paranoid"))]
    pub(crate) fn check_invariants(&self) -> std::result::Result<(), String> {
        let mut all: Vec<(u64, u64, bool)> = self
            .list
            .sections()
            .iter()
            .map(|s| (s.addr, s.size, true))
            .collect();
        all.extend(self.reserved().into_iter().map(|(a, s)| (a, s, false)));
        all.sort_unstable();
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
            if a < crate::pager::PAGE_SIZE as u64 {
                return Err(format!("S1: section at {a} overlaps the superblock"));
            }
        }
        if let Some(&(a, s, free)) = all.last() {
            if a + s > self.eof {
                return Err(format!("S1: section at {a} runs past eof {}", self.eof));
            }
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
            let lo = 1u64 << (63 - s.size.leading_zeros());
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
    use crate::pager::PAGE_SIZE;
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
                SpaceKind::Raw
            };
            if is_alloc || live.is_empty() {
                let a = sp.alloc(k, size).unwrap();
                live.push((a, size));
            } else {
                let (a, s) = live.swap_remove(pick % live.len());
                sp.free(k, a, s);
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
            sp.free(SpaceKind::Raw, a, s);
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
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn managed_space_matches_model(ops in ops()) {
            run(FreeListKind::Managed, &ops);
        }
        #[test]
        fn naive_space_matches_model(ops in ops()) {
            run(FreeListKind::Naive, &ops);
        }
    }

    #[test]
    fn deferred_frees_wait_for_commit() {
        let mut sp = FileSpace::new(PAGE_SIZE as u64, FreeListKind::Managed);
        let a = sp.alloc(SpaceKind::Raw, 100_000).unwrap();
        let _b = sp.alloc(SpaceKind::Raw, 100_000).unwrap();
        sp.set_defer(true);
        sp.free(SpaceKind::Raw, a, 100_000);
        let c = sp.alloc(SpaceKind::Raw, 100_000).unwrap();
        assert_ne!(
            c, a,
            "S4: space freed in a transaction was reused before commit"
        );
        sp.commit();
        assert_eq!(sp.alloc(SpaceKind::Raw, 100_000).unwrap(), a);
        sp.free(SpaceKind::Raw, c, 1);
        sp.discard_pending();
        sp.check_invariants().unwrap();
    }
}
