//! Damaged files: truncated at many points, or with bytes flipped, must give
//! an error naming the damage, or the original data — never a panic, a hang
//! or a huge allocation.

mod common;

use arca::{AttrValue, DatasetOptions, Datatype, Error, File, Filter};
use common::{snapshot, Snapshot};
use proptest::prelude::*;

/// A file with every kind of structure, all of it checksummed.
fn build() -> (Vec<u8>, Snapshot) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.arca");
    let f = File::create(&path).unwrap();
    let root = f.root();
    root.attrs()
        .set("title", &AttrValue::string("damage test"))
        .unwrap();
    root.attrs()
        .set(
            "big",
            &AttrValue::array(&[100], &(0..100).map(|x| x as f64).collect::<Vec<_>>()).unwrap(),
        )
        .unwrap();
    for i in 0..40 {
        root.create_group(&format!("g{i:03}/sub")).unwrap();
    }
    let ds = root
        .create_dataset(
            "g001/z",
            &DatasetOptions::new(Datatype::int(4), &[64, 16])
                .chunks(&[16, 16])
                .filters(&[Filter::Shuffle, Filter::Zstd(3)]),
        )
        .unwrap();
    ds.write_all(&(0..1024).collect::<Vec<i32>>()).unwrap();
    ds.attrs()
        .set("unit", &AttrValue::string("counts"))
        .unwrap();
    let ds = root
        .create_dataset(
            "l",
            &DatasetOptions::new(Datatype::float(4), &[300])
                .chunks(&[64])
                .filters(&[Filter::Lz4]),
        )
        .unwrap();
    ds.write_all(&(0..300).map(|x| x as f32).collect::<Vec<_>>())
        .unwrap();
    let snap = snapshot(&f).unwrap();
    f.close().unwrap();
    (std::fs::read(&path).unwrap(), snap)
}

fn outcome(bytes: Vec<u8>) -> arca::Result<Snapshot> {
    let f = File::from_bytes(bytes)?;
    f.check()?;
    snapshot(&f)
}

#[test]
fn truncation_at_every_point_is_detected() {
    let (bytes, snap) = build();
    let mut step = 1;
    let mut cut = 0;
    let mut errors = 0;
    while cut < bytes.len() {
        match outcome(bytes[..cut].to_vec()) {
            Ok(s) => assert_eq!(s, snap, "truncated at {cut} gave wrong data"),
            Err(Error::Corrupt { .. }) => errors += 1,
            Err(e) => panic!("truncated at {cut}: unexpected error kind {e}"),
        }
        cut += step;
        step = if cut < 8192 { 37 } else { 211 };
    }
    assert!(errors > 0);
}

#[test]
fn not_an_arca_file() {
    for bytes in [
        vec![],
        b"hello world".to_vec(),
        vec![0u8; 10000],
        b"\x89HDF\r\n\x1a\n".repeat(100),
    ] {
        let e = File::from_bytes(bytes).unwrap_err();
        assert!(
            matches!(
                e,
                Error::Corrupt {
                    what: "superblock",
                    offset: 0,
                    ..
                }
            ),
            "{e}"
        );
    }
}

#[test]
fn damage_names_structure_and_offset() {
    let (mut bytes, _) = build();
    // Flip a byte inside the root group's object header (the page after the superblock).
    bytes[4096 + 40] ^= 0x55;
    match outcome(bytes) {
        Err(Error::Corrupt { what, offset, .. }) => {
            assert_eq!(what, "object header");
            assert_eq!(offset, 4096);
        }
        other => panic!("expected damage report, got {other:?}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    #[test]
    fn flipped_bytes_give_error_or_correct_data(flips in prop::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 1..4)) {
        thread_local! {
            static BASE: (Vec<u8>, Snapshot) = build();
        }
        BASE.with(|(bytes, snap)| {
            let mut b = bytes.clone();
            for (i, x) in &flips {
                let i = i.index(b.len());
                b[i] ^= x;
            }
            match outcome(b) {
                Ok(s) => prop_assert_eq!(&s, snap),
                Err(Error::Corrupt { .. }) | Err(Error::Unsupported(_)) => {}
                Err(e) => prop_assert!(false, "unexpected error kind: {}", e),
            }
            Ok(())
        })?;
    }
}
