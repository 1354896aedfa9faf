//! The node cache: copies of single nodes read from blocks that were not
//! cached. A read that has to decompress a whole block for one node hints
//! at scattered access (a sorted view of a large directory, say); keeping
//! that node's bytes lets the next pass over the same nodes skip the
//! decompression. Copies are dropped first-in first-out to stay within a
//! byte budget, and whenever their node changes.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

pub(crate) struct NodeCache {
    /// Copies by raw handle.
    map: HashMap<u64, Arc<Vec<u8>>>,
    /// Insertion order; may hold keys already removed (skipped on eviction).
    order: VecDeque<u64>,
    bytes: usize,
    limit: usize,
    pub hits: u64,
}

impl NodeCache {
    pub fn new(limit: usize) -> NodeCache {
        NodeCache {
            map: HashMap::new(),
            order: VecDeque::new(),
            bytes: 0,
            limit,
            hits: 0,
        }
    }

    /// Whether a node of `len` bytes is worth a copy: small against the
    /// budget, so one large node cannot flush everything else.
    pub fn wants(&self, len: usize) -> bool {
        self.limit > 0 && len <= self.limit / 8
    }

    pub fn get(&mut self, key: u64) -> Option<Arc<Vec<u8>>> {
        let c = self.map.get(&key).map(Arc::clone);
        if c.is_some() {
            self.hits += 1;
        }
        c
    }

    /// Stores a copy; returns true if `key` was not cached before. Calls
    /// `dropped` with every key evicted to stay within the budget.
    pub fn insert(&mut self, key: u64, copy: Arc<Vec<u8>>, mut dropped: impl FnMut(u64)) -> bool {
        self.bytes += copy.len();
        let new = match self.map.insert(key, copy) {
            Some(old) => {
                self.bytes -= old.len();
                false
            }
            None => true,
        };
        self.order.push_back(key);
        while self.bytes > self.limit {
            let Some(k) = self.order.pop_front() else {
                break;
            };
            if self.remove(k) {
                dropped(k);
            }
        }
        // Keys removed because their node changed linger in the queue;
        // compact it before it outgrows the map.
        if self.order.len() > 2 * self.map.len() + 64 {
            let map = &self.map;
            self.order.retain(|k| map.contains_key(k));
        }
        new
    }

    /// Drops the copy of `key`; returns whether there was one.
    pub fn remove(&mut self, key: u64) -> bool {
        match self.map.remove(&key) {
            Some(old) => {
                self.bytes -= old.len();
                true
            }
            None => false,
        }
    }

    /// Heap bytes held: the copies plus about 48 bytes of map and queue per
    /// entry.
    pub fn heap_bytes(&self) -> usize {
        self.bytes + self.map.capacity() * 48 + self.order.capacity() * 8
    }

    pub fn bytes(&self) -> usize {
        self.bytes
    }

    pub fn limit(&self) -> usize {
        self.limit
    }

    /// All copies (for the invariant checker).
    pub fn entries(&self) -> Vec<(u64, Arc<Vec<u8>>)> {
        self.map.iter().map(|(k, v)| (*k, Arc::clone(v))).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stays_within_budget_and_reports_evictions() {
        let mut c = NodeCache::new(100);
        let mut dropped = Vec::new();
        for k in 0..5u64 {
            assert!(c.insert(k, Arc::new(vec![0; 30]), |d| dropped.push(d)));
        }
        assert!(c.bytes() <= 100);
        assert_eq!(dropped, vec![0, 1]);
        assert!(c.get(0).is_none());
        assert!(c.get(4).is_some());
        assert!(c.remove(4));
        assert!(!c.remove(4));
        assert!(c.wants(12) && !c.wants(13));
    }
}
