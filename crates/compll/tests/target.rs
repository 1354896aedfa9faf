//! The memory target (`Config::target_ratio`): the arena spends memory it
//! does not need on speed by storing blocks with lz4, and only then.
//! Assertions are on statistics, never on time.

use compll::{Arena, Codec, Config, Error, Handle};

/// Bytes of each node: a counter and then either zeros (compressible) or
/// noise from a seeded generator (incompressible).
const NODE: usize = 72;

fn node_bytes(i: u64, noisy: bool, rng: &mut u64) -> [u8; NODE] {
    let mut b = [0u8; NODE];
    b[..8].copy_from_slice(&i.to_le_bytes());
    if noisy {
        for chunk in b[8..].chunks_mut(8) {
            // xorshift64
            *rng ^= *rng << 13;
            *rng ^= *rng >> 7;
            *rng ^= *rng << 17;
            chunk.copy_from_slice(&rng.to_le_bytes()[..chunk.len()]);
        }
    }
    b
}

/// Fills an arena with `n` nodes and returns them with their bytes.
fn fill(a: &Arena, n: u64, noisy: bool) -> Vec<(Handle, [u8; NODE])> {
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    (0..n)
        .map(|i| {
            let b = node_bytes(i, noisy, &mut rng);
            (a.alloc_init(NODE, &b).unwrap(), b)
        })
        .collect()
}

fn config(target: f64, background: usize) -> Config {
    Config::default()
        .uncompressed_blocks(2)
        .codec(Codec::Zstd { level: 1 })
        .background_compression(background)
        .readahead(if background > 0 { 4 } else { 0 })
        .target_ratio(target)
}

/// Reads every node back, newest first (a walk the read-ahead follows).
fn all_read_back(a: &Arena, nodes: &[(Handle, [u8; NODE])]) {
    for (h, b) in nodes.iter().rev() {
        assert_eq!(&a.read(*h).unwrap()[..NODE], &b[..]);
    }
}

#[test]
fn compressible_nodes_are_stored_fast_while_the_target_allows() {
    for background in [0, 2] {
        let a = Arena::new(config(4.0, background)).unwrap();
        let nodes = fill(&a, 100_000, false);
        a.flush().unwrap();
        let s = a.stats();
        assert!(s.fast_blocks > 0, "no lz4 blocks: {s:?}");
        assert!(s.fast_blocks < s.blocks, "only lz4 blocks: {s:?}");
        // What the arena holds stays near its live block bytes / 4 (one
        // block's estimate of slack).
        let live = s.blocks * 32 * 1024;
        assert!(
            s.total_bytes() as f64 <= live as f64 / 4.0 * 1.05,
            "{} held for {live} live block bytes",
            s.total_bytes()
        );
        all_read_back(&a, &nodes);
        a.check_invariants().unwrap(); // H12 counts the lz4 blocks
        if background > 0 {
            assert!(a.stats().decompressed_ahead > 0);
        }
    }
}

#[test]
fn a_looser_target_stores_more_blocks_fast() {
    let count = |target| {
        let a = Arena::new(config(target, 0)).unwrap();
        fill(&a, 100_000, false);
        a.flush().unwrap();
        a.stats().fast_blocks
    };
    let (tight, loose) = (count(6.0), count(3.0));
    assert!(loose > tight, "lz4 blocks: {loose} at 3x, {tight} at 6x");
}

#[test]
fn incompressible_nodes_are_never_stored_fast() {
    let a = Arena::new(config(4.0, 2)).unwrap();
    let nodes = fill(&a, 30_000, true);
    a.flush().unwrap();
    assert_eq!(a.stats().fast_blocks, 0);
    all_read_back(&a, &nodes);
    a.check_invariants().unwrap();
}

#[test]
fn without_a_target_every_block_uses_the_configured_codec() {
    let a = Arena::new(config(0.0, 0)).unwrap();
    fill(&a, 50_000, false);
    a.flush().unwrap();
    assert_eq!(a.stats().fast_blocks, 0);
}

#[test]
fn freed_and_rewritten_blocks_keep_the_counts_true() {
    let a = Arena::new(config(3.0, 2)).unwrap();
    let nodes = fill(&a, 60_000, false);
    a.flush().unwrap();
    assert!(a.stats().fast_blocks > 0);
    // Free every other node and rewrite a few: lz4 blocks are dropped and
    // stored again, emptied blocks released.
    for (i, (h, _)) in nodes.iter().enumerate() {
        if i % 2 == 0 || i < 20_000 {
            a.free(*h).unwrap();
        } else if i % 7 == 0 {
            a.write_at(*h, 8, b"rewritten").unwrap();
        }
    }
    a.flush().unwrap();
    a.check_invariants().unwrap();
    for (i, (h, b)) in nodes.iter().enumerate() {
        if i % 2 == 1 && i >= 20_000 {
            let g = a.read(*h).unwrap();
            if i % 7 == 0 {
                assert_eq!(&g[8..17], b"rewritten");
            } else {
                assert_eq!(&g[..NODE], &b[..]);
            }
        }
    }
}

#[test]
fn a_target_below_one_or_not_a_number_is_refused() {
    for bad in [0.5, -1.0, f64::NAN, f64::INFINITY] {
        let r = Arena::new(Config::default().target_ratio(bad));
        assert!(matches!(r, Err(Error::InvalidConfig(_))), "{bad}");
    }
    assert!(Arena::new(Config::default().target_ratio(1.0)).is_ok());
}

/// An arena over its target (incompressible nodes) frees its codec
/// contexts after every use, on both threads: none are held at rest, and
/// every node still reads back.
#[test]
fn contexts_are_freed_after_each_use_while_the_target_has_no_room() {
    for background in [0, 2] {
        let a = Arena::new(config(2.0, background)).unwrap();
        let nodes = fill(&a, 20_000, true);
        a.flush().unwrap();
        let s = a.stats();
        assert!(s.compressions > 0, "{s:?}");
        assert_eq!(s.codec_context_bytes, 0, "contexts held at rest: {s:?}");
        all_read_back(&a, &nodes);
        a.settle();
        let s = a.stats();
        assert!(s.decompressions > 0, "{s:?}");
        assert_eq!(s.codec_context_bytes, 0, "contexts held after reads: {s:?}");
        a.check_invariants().unwrap();
    }
}

/// Without room to keep them, contexts are parked between calls rather
/// than set up again for every block: after reads the arena holds one
/// decompression context (counted), and `settle` lets it go. The
/// arena's thread alone here, so which thread parked what is fixed.
#[test]
fn lean_contexts_are_parked_between_calls_and_let_go_by_settle() {
    let a = Arena::new(config(2.0, 0)).unwrap();
    let nodes = fill(&a, 20_000, true);
    a.flush().unwrap();
    assert_eq!(a.stats().codec_context_bytes, 0);
    all_read_back(&a, &nodes[..5_000]);
    let s = a.stats();
    assert!(s.decompressions > 1, "{s:?}");
    assert!(
        s.codec_context_bytes > 0 && s.codec_context_bytes < 1 << 20,
        "one parked context expected: {s:?}"
    );
    a.settle();
    assert_eq!(a.stats().codec_context_bytes, 0);
    all_read_back(&a, &nodes);
    a.check_invariants().unwrap();
}

/// With room to spare (compressible nodes, a loose target) or without a
/// target the contexts are kept from one block to the next.
#[test]
fn contexts_are_kept_while_the_target_has_room_or_there_is_none() {
    for target in [1.5, 0.0] {
        let a = Arena::new(config(target, 0)).unwrap();
        let nodes = fill(&a, 100_000, false);
        a.flush().unwrap();
        all_read_back(&a, &nodes);
        let s = a.stats();
        assert!(s.codec_context_bytes > 0, "target {target}: {s:?}");
        a.check_invariants().unwrap();
    }
}
