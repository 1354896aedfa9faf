//! Property tests: random alloc / free / write / read sequences checked
//! byte for byte against a plain `HashMap` model, with the heap invariants
//! (C1–C7, H1–H11) checked along the way.

use std::collections::HashMap;

use compll::{Arena, Codec, Config, Handle, SharedArena};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Alloc(usize),
    Free(usize),
    /// `read_and_free` of a node: (which, offset, length).
    Take(usize, usize, usize),
    Write(usize, usize, u8, usize),
    Read(usize),
    /// Reads up to n live nodes in address order from the i-th, upwards or
    /// downwards (the walks read-ahead follows).
    Walk(usize, bool, usize),
    Check,
}

fn op(max: usize) -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..max).prop_map(Op::Alloc),
        2 => any::<usize>().prop_map(Op::Free),
        1 => (any::<usize>(), any::<usize>(), 0usize..24).prop_map(|(a, b, c)| Op::Take(a, b, c)),
        3 => (any::<usize>(), any::<usize>(), any::<u8>(), 1usize..64).prop_map(|(a, b, c, d)| Op::Write(a, b, c, d)),
        3 => any::<usize>().prop_map(Op::Read),
        1 => (any::<usize>(), any::<bool>(), 1usize..200).prop_map(|(a, b, c)| Op::Walk(a, b, c)),
        1 => Just(Op::Check),
    ]
}

fn codec() -> impl Strategy<Value = Codec> {
    prop_oneof![
        Just(Codec::Lz4),
        Just(Codec::Zstd { level: 1 }),
        Just(Codec::ZstdTuned {
            level: 1,
            min_match: 5,
            block_kib: 16,
        }),
        Just(Codec::Zlib { level: 1 }),
        Just(Codec::Copy),
        Just(Codec::ZstdDict {
            level: 1,
            train_blocks: 2,
            dict_size: 1024
        }),
    ]
}

fn config() -> impl Strategy<Value = Config> {
    (
        prop_oneof![Just(1024usize), Just(1500), Just(4096), Just(70_000)],
        prop_oneof![Just(1usize), Just(2), Just(4), Just(8), Just(16)],
        1usize..4,
        codec(),
        prop_oneof![Just(0usize), Just(1), Just(8), Just(74), Just(300)],
        // Blocks that may wait for the background compressor (0: none).
        // Whether a compression has come back when a block is needed again
        // depends on timing; the outcome must not.
        prop_oneof![Just(0usize), Just(1), Just(3)],
        // How far the cache may grow while reads reload evicted blocks.
        prop_oneof![Just(0usize), Just(2), Just(16)],
        // Blocks read ahead (with a background thread only); whether one is
        // back when read depends on timing too.
        prop_oneof![Just(0usize), Just(1), Just(4)],
        // Memory target: off, or loose enough that some blocks are stored
        // with lz4 and others with the configured codec.
        prop_oneof![Just(0.0f64), Just(1.0), Just(2.0)],
    )
        .prop_map(|(bs, al, unc, c, g, bg, grow, ahead, target)| {
            Config::default()
                .target_ratio(target)
                .background_compression(bg)
                .readahead(ahead)
                .cache_growth(grow)
                .block_size(bs)
                .alignment(al)
                .uncompressed_blocks(unc)
                .group_fields(g)
                .codec(c)
        })
}

/// Runs `ops` against the arena and the model; every live node's bytes are
/// compared on each read and once more at the end.
fn run(cfg: Config, ops: Vec<Op>) -> Result<(), TestCaseError> {
    let arena = Arena::new(cfg.clone()).unwrap();
    let align = arena.alignment();
    let mut live: Vec<Handle> = Vec::new();
    let mut model: HashMap<Handle, Vec<u8>> = HashMap::new();
    for op in ops {
        match op {
            Op::Alloc(n) => {
                let h = arena.alloc(n).unwrap();
                prop_assert!(!model.contains_key(&h), "handle reused while live");
                let len = arena.len(h).unwrap();
                prop_assert!(len >= n);
                let g = arena.read(h).unwrap();
                prop_assert!(g.iter().all(|&b| b == 0), "alloc not zeroed");
                drop(g);
                if n <= arena.max_block_node() {
                    let (_, off) = (h.to_raw() >> 24, h.to_raw() & 0xff_ffff);
                    prop_assert!((off as usize).is_multiple_of(align), "node not aligned");
                }
                model.insert(h, vec![0; len]);
                live.push(h);
            }
            Op::Free(i) if !live.is_empty() => {
                let h = live.swap_remove(i % live.len());
                arena.free(h).unwrap();
                model.remove(&h);
                prop_assert!(arena.free(h).is_err(), "double free accepted");
            }
            Op::Take(i, off, n) if !live.is_empty() => {
                let at = i % live.len();
                let h = live[at];
                let m = &model[&h];
                let off = off % (m.len() + 1);
                let mut out = vec![0xa5u8; n];
                if off + n > m.len() {
                    // Out of the node: an error, and the node stays.
                    prop_assert!(arena.read_and_free(h, off, &mut out).is_err());
                    prop_assert!(
                        arena.read(h).is_ok(),
                        "node freed by a failed read_and_free"
                    );
                    continue;
                }
                arena.read_and_free(h, off, &mut out).unwrap();
                prop_assert_eq!(&out[..], &m[off..off + n]);
                live.swap_remove(at);
                model.remove(&h);
                prop_assert!(arena.read(h).is_err(), "node alive after read_and_free");
            }
            Op::Write(i, off, v, n) if !live.is_empty() => {
                let h = live[i % live.len()];
                let m = model.get_mut(&h).unwrap();
                if m.is_empty() {
                    continue;
                }
                let off = off % m.len();
                let n = n.min(m.len() - off);
                let data: Vec<u8> = (0..n).map(|k| v.wrapping_add(k as u8)).collect();
                if i % 2 == 0 {
                    arena.write_at(h, off, &data).unwrap();
                } else {
                    let mut g = arena.write(h).unwrap();
                    g[off..off + n].copy_from_slice(&data);
                }
                m[off..off + n].copy_from_slice(&data);
            }
            Op::Read(i) if !live.is_empty() => {
                let h = live[i % live.len()];
                let g = arena.read(h).unwrap();
                prop_assert_eq!(&g[..], &model[&h][..]);
            }
            Op::Walk(i, up, n) if !live.is_empty() => {
                let mut order = live.clone();
                order.sort_by_key(|h| h.to_raw());
                if !up {
                    order.reverse();
                }
                for h in order.iter().skip(i % order.len()).take(n) {
                    let g = arena.read(*h).unwrap();
                    prop_assert_eq!(&g[..], &model[h][..]);
                }
            }
            Op::Check => {
                if let Err(e) = arena.check_invariants() {
                    return Err(TestCaseError::fail(e));
                }
            }
            _ => {}
        }
    }
    if let Err(e) = arena.check_invariants() {
        return Err(TestCaseError::fail(e));
    }
    for (h, m) in &model {
        prop_assert_eq!(&arena.read(*h).unwrap()[..], &m[..]);
    }
    arena.flush().unwrap();
    for (h, m) in &model {
        prop_assert_eq!(&arena.read(*h).unwrap()[..], &m[..]);
    }
    for h in live {
        arena.free(h).unwrap();
    }
    prop_assert_eq!(arena.stats().live_nodes, 0);
    if let Err(e) = arena.check_invariants() {
        return Err(TestCaseError::fail(e));
    }
    Ok(())
}

/// Case count: `default` times `ARCA_TEST_SCALE` (1 when unset), at least 1.
fn cases(default: u32) -> ProptestConfig {
    let scale = match std::env::var("ARCA_TEST_SCALE") {
        Err(_) => 1.0,
        Ok(s) => match s.parse::<f64>() {
            Ok(x) if x > 0.0 && x.is_finite() => x,
            _ => panic!("ARCA_TEST_SCALE={s:?}: need a positive number"),
        },
    };
    let n = ((f64::from(default) * scale).round() as u32).max(1);
    ProptestConfig {
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x5eed_c011 + n as u64),
        ..ProptestConfig::with_cases(n)
    }
}

proptest! {
    #![proptest_config(cases(96))]

    #[test]
    fn small_nodes_match_model(cfg in config(), ops in prop::collection::vec(op(300), 1..400)) {
        run(cfg, ops)?;
    }

    #[test]
    fn mixed_sizes_including_large_nodes(cfg in config(), ops in prop::collection::vec(op(5000), 1..120)) {
        run(cfg, ops)?;
    }
}

proptest! {
    #![proptest_config(cases(24))]

    /// The shared arena runs the same engine; a shorter run checks the
    /// wrapper.
    #[test]
    fn shared_arena_matches_model(sizes in prop::collection::vec(0usize..500, 1..200)) {
        let a = SharedArena::new(Config::default().block_size(2048).uncompressed_blocks(2)).unwrap();
        let mut hs = Vec::new();
        for (i, s) in sizes.iter().enumerate() {
            let h = a.alloc(*s).unwrap();
            let fill = vec![i as u8; *s];
            a.write_at(h, 0, &fill).unwrap();
            hs.push((h, fill));
        }
        for (h, fill) in &hs {
            prop_assert_eq!(&a.read(*h).unwrap()[..fill.len()], &fill[..]);
        }
        a.check_invariants().map_err(TestCaseError::fail)?;
    }
}
