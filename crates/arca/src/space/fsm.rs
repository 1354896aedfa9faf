//! The free-space manager: size-binned best fit plus an address-ordered
//! merge index, every operation O(log n).
//!
//! Sections live in two indexes at once:
//! - `bins[kind][class]`: ordered by (size, addr), so the first entry at or
//!   above a size is the best fit, lowest address first among equals;
//!   `class` is ⌊log2 size⌋, and a per-kind bitmap of non-empty classes lets
//!   a search skip straight to the next bin that can satisfy it.
//! - `by_addr`: every section by address, for finding neighbours to merge.
//!
//! Invariants:
//! - F1: a section is in `by_addr` iff it is in exactly one bin, the bin of
//!   its kind and size class.
//! - F2: no two sections in `by_addr` overlap or touch (merging is complete).
//! - F3: bit c of `nonempty[kind]` is set iff `bins[kind][c]` is non-empty.

use std::collections::{BTreeMap, BTreeSet};

use super::section::{Section, SectionIndex, SpaceKind};

const CLASSES: usize = 64;

fn class(size: u64) -> usize {
    63 - size.max(1).leading_zeros() as usize
}

pub(crate) struct FreeSpaceManager {
    bins: Vec<Vec<BTreeSet<(u64, u64)>>>,
    nonempty: Vec<u64>,
    by_addr: BTreeMap<u64, (u64, SpaceKind)>,
}

impl FreeSpaceManager {
    pub(crate) fn new() -> Self {
        FreeSpaceManager {
            bins: SpaceKind::ALL
                .iter()
                .map(|_| vec![BTreeSet::new(); CLASSES])
                .collect(),
            nonempty: vec![0; SpaceKind::ALL.len()],
            by_addr: BTreeMap::new(),
        }
    }

    fn insert(&mut self, s: Section) {
        let (k, c) = (s.kind.index(), class(s.size));
        self.bins[k][c].insert((s.size, s.addr));
        self.nonempty[k] |= 1 << c;
        self.by_addr.insert(s.addr, (s.size, s.kind));
    }

    fn unlink(&mut self, addr: u64) -> Option<Section> {
        let (size, kind) = self.by_addr.remove(&addr)?;
        let (k, c) = (kind.index(), class(size));
        self.bins[k][c].remove(&(size, addr));
        if self.bins[k][c].is_empty() {
            self.nonempty[k] &= !(1 << c);
        }
        Some(Section { addr, size, kind })
    }

    /// Best fit among sections of one kind.
    fn find(&self, kind: SpaceKind, size: u64) -> Option<(u64, u64)> {
        let k = kind.index();
        let c = class(size);
        if let Some(&hit) = self.bins[k][c].range((size, 0)..).next() {
            return Some(hit);
        }
        // Every section in a higher class is large enough: take the smallest.
        let higher = self.nonempty[k] & (!0u64).checked_shl(c as u32 + 1).unwrap_or(0);
        if higher == 0 {
            return None;
        }
        self.bins[k][higher.trailing_zeros() as usize]
            .iter()
            .next()
            .copied()
    }
}

impl SectionIndex for FreeSpaceManager {
    fn take(&mut self, kind: SpaceKind, size: u64) -> Option<u64> {
        let (found_size, addr) = std::iter::once(kind)
            .chain(SpaceKind::ALL.iter().copied().filter(|&k| k != kind))
            .find_map(|k| self.find(k, size))?;
        let s = self.unlink(addr)?;
        if found_size > size {
            // The tail stays free; it cannot touch another section (F2 held before).
            self.insert(Section {
                addr: addr + size,
                size: found_size - size,
                kind: s.kind,
            });
        }
        Some(addr)
    }

    fn give(&mut self, mut s: Section) -> Section {
        // Left neighbour: the last section starting below s.
        if let Some((&a, &(sz, _))) = self.by_addr.range(..s.addr).next_back() {
            if a + sz == s.addr {
                self.unlink(a);
                s = Section {
                    addr: a,
                    size: sz + s.size,
                    kind: s.kind,
                };
            }
        }
        // Right neighbour: the section starting exactly where s ends.
        if let Some(&(sz, _)) = self.by_addr.get(&s.end()) {
            self.unlink(s.end());
            s.size += sz;
        }
        self.insert(s);
        s
    }

    fn remove(&mut self, addr: u64) -> Option<Section> {
        self.unlink(addr)
    }

    fn ending_at(&self, end: u64) -> Option<Section> {
        let (&a, &(size, kind)) = self.by_addr.range(..end).next_back()?;
        (a + size == end).then_some(Section {
            addr: a,
            size,
            kind,
        })
    }

    fn overlapping(&self, addr: u64, end: u64) -> Option<Section> {
        // Sections never overlap (F2): only the last one starting below
        // `end` can reach into [addr, end).
        let (&a, &(size, kind)) = self.by_addr.range(..end).next_back()?;
        (a + size > addr).then_some(Section {
            addr: a,
            size,
            kind,
        })
    }

    fn sections(&self) -> Vec<Section> {
        self.by_addr
            .iter()
            .map(|(&addr, &(size, kind))| Section { addr, size, kind })
            .collect()
    }
    #[cfg(any(test, feature = "paranoid"))]
    fn check(&self) -> Result<(), String> {
        let mut n = 0;
        for (k, bins) in self.bins.iter().enumerate() {
            for (c, b) in bins.iter().enumerate() {
                if b.is_empty() == (self.nonempty[k] & (1 << c) != 0) {
                    return Err(format!("F3: bitmap wrong for kind {k} class {c}"));
                }
                for &(size, addr) in b {
                    n += 1;
                    if self.by_addr.get(&addr) != Some(&(size, SpaceKind::ALL[k]))
                        || class(size) != c
                    {
                        return Err(format!("F1: section {addr}+{size} misfiled"));
                    }
                }
            }
        }
        if n != self.by_addr.len() {
            return Err("F1: bins and address index differ in size".into());
        }
        let v: Vec<_> = self.by_addr.iter().collect();
        for w in v.windows(2) {
            if w[0].0 + w[0].1 .0 >= *w[1].0 {
                return Err(format!("F2: sections at {} and {} touch", w[0].0, w[1].0));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sec(addr: u64, size: u64) -> Section {
        Section {
            addr,
            size,
            kind: SpaceKind::Data,
        }
    }

    #[test]
    fn best_fit_lowest_address_first() {
        let mut m = FreeSpaceManager::new();
        m.give(sec(1000, 100));
        m.give(sec(2000, 50));
        m.give(sec(3000, 50));
        m.give(sec(4000, 300));
        assert_eq!(m.take(SpaceKind::Data, 40), Some(2000));
        assert_eq!(m.take(SpaceKind::Data, 50), Some(3000));
        assert_eq!(m.take(SpaceKind::Data, 200), Some(4000));
        assert_eq!(
            m.sections(),
            vec![sec(1000, 100), sec(2040, 10), sec(4200, 100)]
        );
        assert_eq!(m.take(SpaceKind::Data, 500), None);
        m.check().unwrap();
    }

    #[test]
    fn merges_both_neighbours() {
        let mut m = FreeSpaceManager::new();
        m.give(sec(100, 10));
        m.give(sec(120, 10));
        let merged = m.give(sec(110, 10));
        assert_eq!(merged, sec(100, 30));
        assert_eq!(m.sections().len(), 1);
        assert_eq!(m.ending_at(130), Some(sec(100, 30)));
        m.check().unwrap();
    }

    #[test]
    fn other_kinds_are_a_fallback() {
        let mut m = FreeSpaceManager::new();
        m.give(Section {
            addr: 500,
            size: 64,
            kind: SpaceKind::Meta,
        });
        m.give(sec(1000, 64));
        assert_eq!(m.take(SpaceKind::Data, 64), Some(1000));
        assert_eq!(m.take(SpaceKind::Data, 64), Some(500));
        m.check().unwrap();
    }
}
