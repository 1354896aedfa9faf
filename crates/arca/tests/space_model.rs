//! File space through the public API: random creates and deletes, checked
//! after every step and across close and reopen; space freed in one session
//! is reused in the next; deleting everything gives the space back.

mod common;

use arca::{DatasetOptions, Datatype, File, FreeListKind, Mode, StorageLayout};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Create(u32, u64),
    Delete(usize),
    Reopen,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (any::<u32>(), prop_oneof![1u64..100, 100u64..5000, 5000u64..60_000]).prop_map(|(n, s)| Op::Create(n, s)),
        3 => any::<usize>().prop_map(Op::Delete),
        1 => Just(Op::Reopen),
    ]
}

fn run(ops: &[Op], kind: FreeListKind) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.arca");
    let open = |mode| {
        File::options()
            .mode(mode)
            .free_list(kind)
            .open(&path)
            .unwrap()
    };
    let mut f = open(Mode::Create);
    let mut live: Vec<(String, u64)> = vec![];
    for (step, op) in ops.iter().enumerate() {
        match op {
            Op::Create(n, size) => {
                let name = format!("d{step}_{n}");
                let ds = f
                    .root()
                    .create_dataset(
                        &name,
                        &DatasetOptions::new(Datatype::uint(1), &[*size])
                            .layout(StorageLayout::Contiguous)
                            .allocate_early(true),
                    )
                    .unwrap();
                ds.write_all(&vec![(*n % 251) as u8; *size as usize])
                    .unwrap();
                live.push((name, *size));
            }
            Op::Delete(i) if !live.is_empty() => {
                let (name, _) = live.swap_remove(i % live.len());
                f.root().delete(&name).unwrap();
            }
            Op::Delete(_) => {}
            Op::Reopen => {
                f.close().unwrap();
                f = open(Mode::ReadWrite);
            }
        }
        let s = f.check().unwrap();
        let raw: u64 = live.iter().map(|(_, s)| s).sum();
        assert_eq!(s.data_bytes, raw);
    }
    f.close().unwrap();
    let f = open(Mode::ReadWrite);
    let s = f.check().unwrap();
    assert_eq!(s.datasets as usize, live.len());
    let size = std::fs::metadata(&path).unwrap().len();
    assert_eq!(size, s.file_bytes);
    // The file never ends in free space after a close.
    let info = f.space_info().unwrap();
    assert!(info.free_bytes <= size);
    for (name, len) in &live {
        let v: Vec<u8> = f.root().dataset(name).unwrap().read_all().unwrap();
        assert_eq!(v.len() as u64, *len);
    }
    for (name, _) in &live {
        f.root().delete(name).unwrap();
    }
    f.close().unwrap();
    let size = std::fs::metadata(&path).unwrap().len();
    assert!(
        size <= 16 * 1024,
        "after deleting everything the file is {size} bytes"
    );
}

proptest! {
    #![proptest_config(ProptestConfig {
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x5eed_0048),
        ..ProptestConfig::with_cases(common::scaled(48))
    })]
    #[test]
    fn random_creates_and_deletes_keep_space_accounted(ops in prop::collection::vec(op(), 1..120)) {
        run(&ops, FreeListKind::Managed);
    }
    #[test]
    fn naive_list_keeps_space_accounted_too(ops in prop::collection::vec(op(), 1..60)) {
        run(&ops, FreeListKind::Naive);
    }
}

#[test]
fn space_freed_in_one_session_is_reused_in_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("reuse.arca");
    let f = File::create(&path).unwrap();
    for i in 0..20 {
        let ds = f
            .root()
            .create_dataset(
                &format!("d{i}"),
                &DatasetOptions::new(Datatype::float(8), &[10_000]),
            )
            .unwrap();
        ds.write_all(&vec![i as f64; 10_000]).unwrap();
    }
    for i in (0..20).step_by(2) {
        f.root().delete(&format!("d{i}")).unwrap();
    }
    f.close().unwrap();
    let before = std::fs::metadata(&path).unwrap().len();
    let f = File::open_rw(&path).unwrap();
    let info = f.space_info().unwrap();
    assert!(info.sections >= 9, "{info:?}");
    assert!(info.free_bytes >= 9 * 80_000);
    for i in 0..10 {
        let ds = f
            .root()
            .create_dataset(
                &format!("n{i}"),
                &DatasetOptions::new(Datatype::float(8), &[10_000]),
            )
            .unwrap();
        ds.write_all(&vec![0.5; 10_000]).unwrap();
    }
    f.close().unwrap();
    let after = std::fs::metadata(&path).unwrap().len();
    assert!(
        after <= before,
        "file grew from {before} to {after} instead of reusing space"
    );
    File::open(&path).unwrap().check().unwrap();
}

#[test]
fn damaged_free_space_record_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fsr.arca");
    let f = File::create(&path).unwrap();
    for i in 0..4 {
        f.root()
            .create_dataset(
                &format!("d{i}"),
                &DatasetOptions::new(Datatype::uint(1), &[100_000]).allocate_early(true),
            )
            .unwrap();
    }
    f.root().delete("d1").unwrap();
    f.close().unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    // The record is the last blob in the file: corrupt a section's size and
    // re-seal the blob checksum, so only the validation can catch it.
    let n = bytes.len();
    let rec = bytes.windows(4).rposition(|w| w == b"AFSR").unwrap();
    let blob = rec - 16;
    assert_eq!(&bytes[blob..blob + 4], b"ABLB");
    let size_at = n - 8;
    bytes[size_at..].copy_from_slice(&u64::MAX.to_le_bytes());
    let crc = crc32c_of(&bytes[blob + 8..]);
    bytes[blob + 4..blob + 8].copy_from_slice(&crc.to_le_bytes());
    std::fs::write(&path, &bytes).unwrap();
    let e = File::open_rw(&path).unwrap_err();
    assert!(e.to_string().contains("free-space record"), "{e}");
    // Read-only still opens; check names the damage.
    let f = File::open(&path).unwrap();
    assert_eq!(f.root().member_names().unwrap().len(), 3);
    let e = f.check().unwrap_err();
    assert!(e.to_string().contains("free-space record"), "{e}");
}

fn crc32c_of(b: &[u8]) -> u32 {
    // CRC32C (Castagnoli), bitwise: only for re-sealing a test fixture.
    let mut c = !0u32;
    for &x in b {
        c ^= x as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0x82F6_3B78
            } else {
                c >> 1
            };
        }
    }
    !c
}
