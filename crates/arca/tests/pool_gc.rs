//! `gc()` hands memory back to the allocator, as the allocator counts it.

use std::alloc::System;

use arca::pool::BlockList;
use stats_alloc::{StatsAlloc, INSTRUMENTED_SYSTEM};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

fn live() -> i128 {
    let s = GLOBAL.stats();
    s.bytes_allocated as i128 - s.bytes_deallocated as i128
}

#[test]
fn gc_returns_held_memory_to_the_allocator() {
    static BIG: BlockList = BlockList::new("test gc big blocks");
    let blocks: Vec<_> = (0..32).map(|_| BIG.take_zeroed(64 << 10)).collect();
    drop(blocks);
    let held: usize = arca::pool_stats()
        .iter()
        .filter(|s| s.name == "test gc big blocks")
        .map(|s| s.held_bytes)
        .sum();
    assert!(held >= 16 * (64 << 10), "the list kept the blocks: {held}");

    let before = live();
    let deallocs = GLOBAL.stats().deallocations;
    let released = arca::gc();
    let after = live();
    assert!(released >= held);
    // Everything the list held left the heap (small registry bookkeeping aside).
    assert!(
        before - after >= held as i128,
        "{before} -> {after}, held {held}"
    );
    assert!(GLOBAL.stats().deallocations - deallocs >= held / (64 << 10));

    // And a request after gc allocates again.
    let allocs = GLOBAL.stats().allocations;
    let b = BIG.take_zeroed(64 << 10);
    assert!(GLOBAL.stats().allocations > allocs);
    assert_eq!(b.len(), 64 << 10);
}
