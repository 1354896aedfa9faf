//! Misuse of handles and sizes returns errors; nothing panics.

use compll::{Arena, Codec, Config, Error, Handle};
use proptest::prelude::*;

fn arena() -> Arena {
    Arena::new(
        Config::default()
            .block_size(2048)
            .uncompressed_blocks(2)
            .codec(Codec::Lz4),
    )
    .unwrap()
}

#[test]
fn null_and_made_up_handles() {
    let a = arena();
    assert!(matches!(a.read(Handle::NULL), Err(Error::InvalidHandle(0))));
    assert!(matches!(
        a.free(Handle::from_raw(1 << 24)),
        Err(Error::InvalidHandle(_))
    ));
    assert!(a.write(Handle::from_raw(u64::MAX)).is_err());
    assert!(a.len(Handle::from_raw(0xdead_beef)).is_err());
}

#[test]
fn handle_into_the_middle_of_a_node() {
    let a = arena();
    let h = a.alloc(64).unwrap();
    for delta in 1..64u64 {
        assert!(
            a.read(Handle::from_raw(h.to_raw() + delta)).is_err(),
            "delta {delta}"
        );
        assert!(a.free(Handle::from_raw(h.to_raw() + delta)).is_err());
    }
    a.check_invariants().unwrap();
}

#[test]
fn freed_and_double_freed_handles() {
    let a = arena();
    let h = a.alloc(10).unwrap();
    let keep = a.alloc(10).unwrap();
    a.free(h).unwrap();
    assert!(matches!(a.free(h), Err(Error::InvalidHandle(_))));
    assert!(a.read(h).is_err());
    assert!(a.write_at(h, 0, &[1]).is_err());
    a.free(keep).unwrap();
    a.flush().unwrap(); // the block is now vacant
    assert!(a.read(keep).is_err());
    a.check_invariants().unwrap();
}

#[test]
fn large_node_handles() {
    let a = arena();
    let h = a.alloc(10_000).unwrap();
    assert!(a.read(Handle::from_raw(h.to_raw() + 8)).is_err());
    a.free(h).unwrap();
    assert!(a.free(h).is_err());
    assert!(a.read(h).is_err());
}

#[test]
fn out_of_bounds_ranges() {
    let a = arena();
    let h = a.alloc(16).unwrap();
    let len = a.len(h).unwrap();
    let mut buf = vec![0u8; len + 1];
    assert!(matches!(
        a.read_at(h, 0, &mut buf),
        Err(Error::OutOfBounds { .. })
    ));
    assert!(matches!(
        a.write_at(h, usize::MAX, &[1]),
        Err(Error::OutOfBounds { .. })
    ));
    assert!(a.write_at(h, len, &[]).is_ok());
}

#[test]
fn impossible_sizes() {
    let a = arena();
    assert!(matches!(a.alloc(usize::MAX), Err(Error::TooLarge(_))));
    assert!(matches!(
        a.alloc(isize::MAX as usize),
        Err(Error::TooLarge(_))
    ));
    a.check_invariants().unwrap();
}

#[test]
fn bad_configurations() {
    for cfg in [
        Config::default().block_size(1023),
        Config::default().block_size((16 << 20) + 1),
        Config::default().alignment(3),
        Config::default().alignment(32),
        Config::default().uncompressed_blocks(0),
        Config::default().codec(Codec::Zlib { level: 10 }),
        Config::default().codec(Codec::Zstd { level: 99 }),
        Config::default().group_fields(4097),
        Config::default().codec(Codec::ZstdTuned {
            level: 1,
            min_match: 8,
            block_kib: 0,
        }),
        Config::default().codec(Codec::ZstdTuned {
            level: 30,
            min_match: 5,
            block_kib: 0,
        }),
        Config::default().codec(Codec::ZstdTuned {
            level: 1,
            min_match: 0,
            block_kib: 129,
        }),
        Config::default().background_compression(1025),
        Config::default().cache_growth((1 << 20) + 1),
    ] {
        assert!(matches!(Arena::new(cfg), Err(Error::InvalidConfig(_))));
    }
}

proptest! {
    /// Any 64-bit value used as a handle gives an answer, never a panic,
    /// and never disturbs the arena.
    #[test]
    fn random_handles_never_panic(raws in prop::collection::vec(any::<u64>(), 1..50), near in prop::collection::vec(0u64..4096, 1..50)) {
        let a = arena();
        let live: Vec<_> = (0..20).map(|i| a.alloc(i * 10).unwrap()).collect();
        for r in raws.iter().copied().chain(near.iter().map(|d| live[0].to_raw() + d)) {
            let h = Handle::from_raw(r);
            let _ = a.read(h);
            let _ = a.len(h);
            let mut b = [0u8; 4];
            let _ = a.read_at(h, 0, &mut b);
            if !live.contains(&h) {
                prop_assert!(a.free(h).is_err());
            }
        }
        a.check_invariants().map_err(TestCaseError::fail)?;
    }
}
