//! The naive baseline: an unsorted list of free sections, searched from the
//! head for an exact fit, else the smallest that fits; freed sections merge
//! with neighbours found by scanning and go in at the head. Every operation
//! is O(n). It exists so the free-space manager can be measured against it.

use std::collections::VecDeque;

use super::section::{Section, SectionIndex, SpaceKind};

pub(crate) struct NaiveList {
    list: VecDeque<Section>,
}

impl NaiveList {
    pub(crate) fn new() -> Self {
        NaiveList {
            list: VecDeque::new(),
        }
    }

    fn position(&self, f: impl Fn(&Section) -> bool) -> Option<usize> {
        self.list.iter().position(f)
    }
}

impl SectionIndex for NaiveList {
    fn take(&mut self, _kind: SpaceKind, size: u64) -> Option<u64> {
        let mut best: Option<usize> = None;
        for (i, s) in self.list.iter().enumerate() {
            if s.size == size {
                best = Some(i);
                break;
            }
            if s.size > size && best.is_none_or(|b| self.list[b].size > s.size) {
                best = Some(i);
            }
        }
        let s = self.list.remove(best?)?;
        if s.size > size {
            self.list.push_front(Section {
                addr: s.addr + size,
                size: s.size - size,
                kind: s.kind,
            });
        }
        Some(s.addr)
    }

    fn give(&mut self, mut s: Section) -> Section {
        if let Some(i) = self.position(|x| x.end() == s.addr) {
            let l = self.list.remove(i).unwrap_or(s);
            s = Section {
                addr: l.addr,
                size: l.size + s.size,
                kind: s.kind,
            };
        }
        if let Some(i) = self.position(|x| x.addr == s.end()) {
            let r = self.list.remove(i).unwrap_or(s);
            s.size += r.size;
        }
        self.list.push_front(s);
        s
    }

    fn remove(&mut self, addr: u64) -> Option<Section> {
        let i = self.position(|x| x.addr == addr)?;
        self.list.remove(i)
    }

    fn ending_at(&self, end: u64) -> Option<Section> {
        self.list.iter().find(|x| x.end() == end).copied()
    }

    fn overlapping(&self, addr: u64, end: u64) -> Option<Section> {
        self.list
            .iter()
            .find(|x| x.addr < end && addr < x.end())
            .copied()
    }

    fn sections(&self) -> Vec<Section> {
        let mut v: Vec<Section> = self.list.iter().copied().collect();
        v.sort_unstable_by_key(|s| s.addr);
        v
    }
}
