//! Shared byte blocks (`Arc<Vec<u8>>`) by exact size: the page cache's pages.
//!
//! Keeping the `Arc` itself, not only its buffer, means a recycled page
//! costs no allocation at all; a page comes back only when nothing else
//! still shares it (`Arc::get_mut` succeeds), otherwise the last holder
//! frees it as usual.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use super::registry::{lock, pooling_enabled, Counters, FreeList, PoolKind};

pub(crate) struct SharedBlockList {
    name: &'static str,
    counters: Counters,
    free: Mutex<BTreeMap<usize, Vec<Arc<Vec<u8>>>>>,
}

impl SharedBlockList {
    pub(crate) const fn new(name: &'static str) -> Self {
        SharedBlockList {
            name,
            counters: Counters::new(),
            free: Mutex::new(BTreeMap::new()),
        }
    }

    /// An unshared block of exactly `len` bytes, all zero.
    pub(crate) fn take_zeroed(&'static self, len: usize) -> Arc<Vec<u8>> {
        self.take(len, true)
    }

    /// An unshared block of exactly `len` bytes holding whatever its last
    /// user left in it (zeros if new): for a caller that overwrites every
    /// byte before reading any (a whole page read from the file), which
    /// then skips the zeroing [`Self::take_zeroed`] does.
    pub(crate) fn take_for_overwrite(&'static self, len: usize) -> Arc<Vec<u8>> {
        self.take(len, false)
    }

    /// A pooled block of `len` bytes if one is free (zeroed when `zero`),
    /// else a new zeroed one.
    fn take(&'static self, len: usize, zero: bool) -> Arc<Vec<u8>> {
        self.counters.register(self);
        let got = if pooling_enabled() {
            lock(&self.free).get_mut(&len).and_then(|v| v.pop())
        } else {
            None
        };
        match got {
            Some(mut a) => {
                self.counters.handed_out(true, len);
                if let Some(v) = Arc::get_mut(&mut a) {
                    if zero {
                        v.fill(0);
                    }
                    return a;
                }
                // Unreachable in practice: only unshared blocks are kept.
                Arc::new(vec![0; len])
            }
            None => {
                self.counters.handed_out(false, 0);
                Arc::new(vec![0; len])
            }
        }
    }

    /// Give a block back; kept only if nothing else shares it.
    pub(crate) fn give_back(&'static self, mut block: Arc<Vec<u8>>) {
        let Some(v) = Arc::get_mut(&mut block) else {
            // Still shared: the last holder frees it.
            self.counters.detached();
            return;
        };
        let len = v.len();
        if self.counters.admit(len) {
            lock(&self.free).entry(len).or_default().push(block);
        }
    }
}

impl FreeList for SharedBlockList {
    fn name(&self) -> &'static str {
        self.name
    }
    fn kind(&self) -> PoolKind {
        PoolKind::Block
    }
    fn counters(&self) -> &Counters {
        &self.counters
    }
    fn trim(&self, max_bytes: usize) -> usize {
        self.counters
            .trim_classes(&self.free, max_bytes, |b| b.len())
    }
}
