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

/// Unfiltered chunks that a large read streams straight into the caller's
/// buffer are checked there: a flipped byte is reported as the chunk's
/// damage, and the undamaged chunks still read back.
#[test]
fn damaged_unfiltered_chunk_read_straight_to_the_output() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("u.arca");
    let n = 8 * 4096u64;
    let data: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2654435761)).collect();
    {
        let f = File::create(&path).unwrap();
        let ds = f
            .root()
            .create_dataset(
                "u",
                &DatasetOptions::new(Datatype::uint(4), &[n]).chunks(&[4096]),
            )
            .unwrap();
        ds.write_all(&data).unwrap();
        f.close().unwrap();
    }
    let open = || {
        File::options()
            .chunk_cache_bytes(1024) // every chunk streams past the cache
            .open(&path)
            .unwrap()
    };
    // Whole and partial reads agree with what was written.
    let f = open();
    let ds = f.root().dataset("u").unwrap();
    assert_eq!(ds.read_all::<u32>().unwrap(), data);
    let part = arca::Selection::new(vec![4096 * 2], vec![4096 * 3], vec![1]).unwrap();
    let got: Vec<u32> = ds.read(&part).unwrap();
    assert_eq!(got, data[4096 * 2..4096 * 5]);
    drop(ds);
    f.close().unwrap();

    // Damage one byte of the sixth chunk, found by its contents.
    let mut bytes = std::fs::read(&path).unwrap();
    let needle: Vec<u8> = data[5 * 4096..5 * 4096 + 4]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let at = bytes
        .windows(needle.len())
        .position(|w| w == needle)
        .expect("chunk bytes in the file");
    bytes[at + 100] ^= 0x01;
    std::fs::write(&path, &bytes).unwrap();

    let f = open();
    let ds = f.root().dataset("u").unwrap();
    match ds.read_all::<u32>() {
        Err(Error::Corrupt { what, offset, .. }) => {
            assert_eq!(what, "chunk");
            assert_eq!(offset, at as u64);
        }
        other => panic!("expected the damaged chunk to be reported, got {other:?}"),
    }
    let got: Vec<u32> = ds.read(&part).unwrap();
    assert_eq!(got, data[4096 * 2..4096 * 5]);
}
