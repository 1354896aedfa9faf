//! The cache of fetched ranges: aligned blocks of the object, bounded in
//! bytes, least recently used dropped first.

use std::collections::HashMap;

/// Blocks of one object, keyed by index (offset / block size).
pub(super) struct Blocks {
    map: HashMap<u64, (Vec<u8>, u64)>,
    held: usize,
    limit: usize,
    tick: u64,
}

impl Blocks {
    pub(super) fn new(limit: usize) -> Self {
        Blocks {
            map: HashMap::new(),
            held: 0,
            limit,
            tick: 0,
        }
    }

    /// The block at `index`, marked used.
    pub(super) fn get(&mut self, index: u64) -> Option<&[u8]> {
        self.tick += 1;
        let tick = self.tick;
        self.map.get_mut(&index).map(|(b, t)| {
            *t = tick;
            &b[..]
        })
    }

    /// Keep `bytes` as the block at `index`, dropping the least recently
    /// used blocks while more than the limit is held.
    pub(super) fn put(&mut self, index: u64, bytes: Vec<u8>) {
        if bytes.len() > self.limit {
            return;
        }
        self.tick += 1;
        self.held += bytes.len();
        if let Some((old, _)) = self.map.insert(index, (bytes, self.tick)) {
            self.held -= old.len();
        }
        if self.held > self.limit {
            let mut by_age: Vec<(u64, u64)> = self.map.iter().map(|(i, (_, t))| (*t, *i)).collect();
            by_age.sort_unstable();
            for (_, i) in by_age {
                if self.held <= self.limit {
                    break;
                }
                if let Some((b, _)) = self.map.remove(&i) {
                    self.held -= b.len();
                }
            }
        }
    }

    /// Bytes held.
    pub(super) fn held(&self) -> usize {
        self.held
    }
}
