//! Least-recently-used bookkeeping for the cache slots.
//!
//! The cache holds few blocks (the point of the library is to keep most of
//! them compressed), so a stamp per slot and a linear search for the oldest
//! unpinned one are cheaper than maintaining an ordered list.

/// Access stamps for cache slots, indexed like the slots themselves.
#[derive(Debug, Default)]
pub(crate) struct Lru {
    stamps: Vec<u64>,
    clock: u64,
}

impl Lru {
    /// Adds a slot at the end, marked as just used.
    pub fn push(&mut self) {
        self.clock += 1;
        self.stamps.push(self.clock);
    }

    /// Marks slot `i` as just used.
    pub fn touch(&mut self, i: usize) {
        self.clock += 1;
        self.stamps[i] = self.clock;
    }

    /// Removes slot `i`, moving the last slot into its place (mirrors
    /// `Vec::swap_remove` on the slots).
    pub fn swap_remove(&mut self, i: usize) {
        self.stamps.swap_remove(i);
    }

    /// The least recently used slot for which `pinned` is false.
    pub fn victim(&self, pinned: impl Fn(usize) -> bool) -> Option<usize> {
        self.stamps
            .iter()
            .enumerate()
            .filter(|(i, _)| !pinned(*i))
            .min_by_key(|(_, s)| **s)
            .map(|(i, _)| i)
    }

    pub fn capacity_bytes(&self) -> usize {
        self.stamps.capacity() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oldest_unpinned_is_chosen() {
        let mut l = Lru::default();
        l.push();
        l.push();
        l.push();
        l.touch(0);
        assert_eq!(l.victim(|_| false), Some(1));
        assert_eq!(l.victim(|i| i == 1), Some(2));
        assert_eq!(l.victim(|_| true), None);
    }
}
