//! With warm free lists, rewriting a chunked, compressed dataset makes
//! almost no allocator calls; with pooling off it makes many. Counted by
//! the allocator itself. One test in this binary, so no other test's
//! allocations are counted.

use std::alloc::System;

use arca::{DatasetOptions, Datatype, File, Filter, Selection};
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const ELEMS: u64 = 4096;
const WRITES: usize = 20;

fn values(round: usize) -> Vec<f64> {
    (0..ELEMS as usize)
        .map(|j| ((j + 7 * round) % 1000) as f64 * 0.5)
        .collect()
}

/// Allocator calls made by `WRITES` whole-dataset rewrites, after warming
/// up; the data read back afterwards is the last written.
fn rewrite_calls(pools: bool) -> usize {
    arca::set_pooling(pools);
    let dir = tempfile::tempdir().unwrap();
    let f = File::create(dir.path().join("r.arca")).unwrap();
    let opts = DatasetOptions::new(Datatype::parse("<f8").unwrap(), &[ELEMS])
        .chunks(&[1024])
        .filters(&[Filter::Shuffle, Filter::Zstd(1)]);
    let ds = f.root().create_dataset("d", &opts).unwrap();
    let all = Selection::all(&[ELEMS]);
    let data: Vec<Vec<f64>> = (0..=WRITES).map(values).collect();
    for d in &data[..3] {
        ds.write(&all, d).unwrap();
        f.flush().unwrap();
    }
    let region = Region::new(GLOBAL);
    for d in &data[1..] {
        ds.write(&all, d).unwrap();
    }
    let change = region.change();
    f.flush().unwrap();
    assert_eq!(ds.read::<f64>(&all).unwrap(), data[WRITES]);
    f.close().unwrap();
    change.allocations + change.reallocations
}

#[test]
fn warm_rewrites_allocate_almost_nothing_with_pools() {
    let on = rewrite_calls(true);
    let off = rewrite_calls(false);
    arca::set_pooling(true);
    // Each rewrite decodes the header, fills, shuffles and compresses four
    // chunks and updates the chunk index: dozens of allocations unpooled.
    assert!(off >= 20 * WRITES, "pools off: {off} calls");
    // Pooled, a rewrite of four chunks makes at most one call (the
    // free-space map taking a node as it fills again: 9 for 20 measured),
    // far below the unpooled count.
    assert!(on <= WRITES, "pools on: {on} calls for {WRITES} rewrites");
}
