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
    // An HDF5 file is named as one, with how to convert it.
    let e = File::from_bytes(b"\x89HDF\r\n\x1a\n".repeat(100)).unwrap_err();
    assert!(
        matches!(&e, Error::Unsupported(m) if m.contains("HDF5") && m.contains("arca import")),
        "{e}"
    );
    for bytes in [vec![], b"hello world".to_vec(), vec![0u8; 10000]] {
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
    #![proptest_config(ProptestConfig {
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x5eed_2000),
        ..ProptestConfig::with_cases(common::scaled(2000))
    })]
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

/// Fields that disagree behind valid checksums: each file below is
/// crafted by rewriting one structure and stamping its checksum again.
mod behind_checksums {
    use arca::{DatasetOptions, Datatype, Error, File, Selection};

    /// The size of the page at `at`, from its tag's size byte.
    fn page_size(b: &[u8], at: usize) -> usize {
        (usize::from(b[at + 3] - 0x80) + 1) * 32
    }

    /// Re-stamp the checksum of the page at `at` (tag, size, CRC32C of
    /// bytes 0..4 and 8..size).
    fn stamp_page(b: &mut [u8], at: usize) {
        let size = page_size(b, at);
        let p = &b[at..at + size];
        let c = crc32c::crc32c_append(crc32c::crc32c(&p[0..4]), &p[8..]);
        b[at + 4..at + 8].copy_from_slice(&c.to_le_bytes());
    }

    /// Re-stamp the blob at `at` (CRC32C of its length field and data).
    fn stamp_blob(b: &mut [u8], at: usize) {
        let len = u64::from_le_bytes(b[at + 8..at + 16].try_into().unwrap()) as usize;
        let c = crc32c::crc32c(&b[at + 8..at + 16 + len]);
        b[at + 4..at + 8].copy_from_slice(&c.to_le_bytes());
    }

    /// The messages of the object header at `at`: (type, flags, body).
    fn messages(b: &[u8], at: usize) -> Vec<(u16, u16, Vec<u8>)> {
        let p = &b[at + 8..];
        let n = u16::from_le_bytes([p[2], p[3]]) as usize;
        let mut pos = 4;
        let mut out = vec![];
        for _ in 0..n {
            let t = u16::from_le_bytes([p[pos], p[pos + 1]]);
            let f = u16::from_le_bytes([p[pos + 2], p[pos + 3]]);
            let len = u32::from_le_bytes(p[pos + 4..pos + 8].try_into().unwrap()) as usize;
            out.push((t, f, p[pos + 8..pos + 8 + len].to_vec()));
            pos += 8 + len;
        }
        out
    }

    /// Rewrite the object header at `at` with `msgs`, keeping its kind.
    fn set_messages(b: &mut [u8], at: usize, msgs: &[(u16, u16, Vec<u8>)]) {
        let size = page_size(b, at);
        let mut p = vec![b[at + 8], 0];
        p.extend_from_slice(&(msgs.len() as u16).to_le_bytes());
        for (t, f, body) in msgs {
            p.extend_from_slice(&t.to_le_bytes());
            p.extend_from_slice(&f.to_le_bytes());
            p.extend_from_slice(&(body.len() as u32).to_le_bytes());
            p.extend_from_slice(body);
        }
        assert!(p.len() <= size - 8);
        p.resize(size - 8, 0);
        b[at + 8..at + size].copy_from_slice(&p);
        stamp_page(b, at);
    }

    /// A file with dataset `d` (made by `make`) and a contiguous `other`
    /// of 4096 sevens; returns its bytes and `d`'s header address (headers
    /// are allocated in creation order: the root's, `d`'s, `other`'s).
    fn one_dataset(make: impl Fn(&File) -> arca::Dataset) -> (Vec<u8>, usize) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.arca");
        let f = File::create(&p).unwrap();
        make(&f);
        f.root()
            .create_dataset("other", &DatasetOptions::new(Datatype::uint(1), &[4096]))
            .unwrap()
            .write_all(&vec![7u8; 4096])
            .unwrap();
        let mut headers: Vec<u64> = f
            .space_map()
            .unwrap()
            .iter()
            .filter(|e| e.what == "object header" && e.addr != 4096)
            .map(|e| e.addr)
            .collect();
        headers.sort();
        f.close().unwrap();
        (std::fs::read(&p).unwrap(), headers[0] as usize)
    }

    /// A chunked 4 x 4 dataset `d` whose header has room for crafted
    /// messages: headers take the page they need, so its 64-byte fill
    /// value is dropped (it is optional) to make room.
    fn roomy(f: &File) -> arca::Dataset {
        let o = DatasetOptions::new(Datatype::bytes(64), &[4, 4])
            .chunks(&[2, 2])
            .fill_value(&[b'x'; 64]);
        f.root().create_dataset("d", &o).unwrap()
    }

    fn without_fill(mut msgs: Vec<(u16, u16, Vec<u8>)>) -> Vec<(u16, u16, Vec<u8>)> {
        msgs.retain(|m| m.0 != 7);
        msgs
    }

    fn read_roomy(f: &File) -> arca::Result<()> {
        let mut out = vec![0u8; 16 * 64];
        f.root()
            .dataset("d")?
            .read_bytes(&Selection::all(&[4, 4]), &mut out)
    }

    fn open_rw(bytes: Vec<u8>) -> arca::Result<File> {
        File::options().open_drivers(
            Box::new(arca::io::MemoryDriver::from_bytes(bytes)),
            Some(Box::new(arca::io::MemoryDriver::new())),
            false,
            true,
        )
    }

    fn corrupt<T: std::fmt::Debug>(r: arca::Result<T>) {
        match r {
            Err(Error::Corrupt { .. }) => {}
            other => panic!("expected a damage report, got {other:?}"),
        }
    }

    fn others_intact(f: &File) {
        assert_eq!(
            f.root().dataset("other").unwrap().read_all::<u8>().unwrap(),
            vec![7u8; 4096]
        );
    }

    #[test]
    fn a_repeated_shape_message_is_damage() {
        let (mut b, d) = one_dataset(roomy);
        let mut msgs = without_fill(messages(&b, d));
        // A second shape message of rank 3 after the rank-2 one.
        let mut shape3 = vec![3u8];
        for v in [4u64, 4, 4, 4, 4, 4] {
            shape3.extend_from_slice(&v.to_le_bytes());
        }
        msgs.push((4, 1, shape3));
        set_messages(&mut b, d, &msgs);
        let f = File::from_bytes(b).unwrap();
        corrupt(read_roomy(&f));
        corrupt(f.check());
    }

    #[test]
    fn a_chunk_rank_unlike_the_shape_or_a_huge_chunk_is_damage() {
        let (b, d) = one_dataset(roomy);
        let msgs = without_fill(messages(&b, d));
        let layout = msgs.iter().position(|m| m.0 == 5).unwrap();
        for chunk in [
            vec![2u64],
            vec![2, 2, 2],
            vec![1 << 40, 1 << 40],
            vec![0, 2],
        ] {
            let mut body = vec![1u8];
            for c in &chunk {
                body.extend_from_slice(&c.to_le_bytes());
            }
            body.extend_from_slice(&0u64.to_le_bytes());
            let mut m = msgs.clone();
            m[layout].2 = body;
            let mut bb = b.clone();
            set_messages(&mut bb, d, &m);
            let f = File::from_bytes(bb).unwrap();
            corrupt(read_roomy(&f));
            corrupt(f.check());
        }
    }

    /// A contiguous dataset whose stored size disagrees with its shape, or
    /// whose extent is another object's: reads and `r+` writes refuse it and
    /// never touch the other object.
    #[test]
    fn a_contiguous_extent_that_disagrees_is_refused() {
        let (b, d) = one_dataset(|f| {
            let ds = f
                .root()
                .create_dataset("d", &DatasetOptions::new(Datatype::uint(1), &[64]))
                .unwrap();
            ds.write_all(&[1u8; 64]).unwrap();
            ds
        });
        let msgs = messages(&b, d);
        let layout = msgs.iter().position(|m| m.0 == 5).unwrap();
        let addr = u64::from_le_bytes(msgs[layout].2[1..9].try_into().unwrap());
        let other = b
            .windows(4096)
            .position(|w| w.iter().all(|&x| x == 7))
            .unwrap() as u64;
        for (a, size) in [(addr, 1 << 20), (addr, 63), (u64::MAX - 10, 64)] {
            let mut body = vec![0u8];
            body.extend_from_slice(&a.to_le_bytes());
            body.extend_from_slice(&(size as u64).to_le_bytes());
            let mut m = msgs.clone();
            m[layout].2 = body;
            let mut bb = b.clone();
            set_messages(&mut bb, d, &m);
            let f = open_rw(bb).unwrap();
            let ds = f.root().dataset("d").unwrap();
            corrupt(ds.read_all::<u8>());
            let w = ds.write(&Selection::all(&[64]), &[9u8; 64]);
            assert!(w.is_err(), "a write through a damaged layout succeeded");
            others_intact(&f);
            corrupt(f.check());
        }
        // An extent of the right size that is another object's: only a map
        // of every live extent can tell, and `check` builds one.
        let mut body = vec![0u8];
        body.extend_from_slice(&other.to_le_bytes());
        body.extend_from_slice(&64u64.to_le_bytes());
        let mut m = msgs.clone();
        m[layout].2 = body;
        let mut bb = b.clone();
        set_messages(&mut bb, d, &m);
        corrupt(File::from_bytes(bb).unwrap().check());
    }

    /// A free section over a live object header: the structure is refused
    /// when read, and `check` names the overlap.
    #[test]
    fn a_free_section_over_a_live_structure_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.arca");
        let f = File::create(&p).unwrap();
        for i in 0..4 {
            f.root()
                .create_dataset(
                    &format!("t{i}"),
                    &DatasetOptions::new(Datatype::uint(1), &[100_000]),
                )
                .unwrap()
                .write_all(&vec![i as u8; 100_000])
                .unwrap();
        }
        f.root().create_group("g").unwrap();
        f.flush().unwrap();
        f.root().delete("t1").unwrap();
        let map = f.space_map().unwrap();
        let g_hdr = map
            .iter()
            .filter(|e| e.what == "object header")
            .map(|e| e.addr)
            .max()
            .unwrap();
        f.close().unwrap();
        let mut b = std::fs::read(&p).unwrap();
        let rec = u64::from_le_bytes(b[40..48].try_into().unwrap()) as usize;
        assert!(rec != 0, "the delete left a free-space record");
        // Point the record's first section at g's header instead.
        let first = rec + 16 + 8;
        b[first + 1..first + 9].copy_from_slice(&g_hdr.to_le_bytes());
        b[first + 9..first + 17].copy_from_slice(&512u64.to_le_bytes());
        stamp_blob(&mut b, rec);
        // Sections must stay sorted for the record to decode at all; if
        // this one now is out of order, the record itself is refused.
        match open_rw(b.clone()) {
            Err(e) => assert!(matches!(e, Error::Corrupt { .. }), "{e}"),
            Ok(f) => {
                corrupt(
                    f.root()
                        .group("g")
                        .map(|_| ())
                        .and_then(|_| f.root().group("g")?.attrs().names()),
                );
                corrupt(f.check());
            }
        }
        let f = File::from_bytes(b).unwrap();
        corrupt(f.check());
    }

    /// A reusing vector whose free ranges cover a live element: `check`
    /// finds it.
    #[test]
    fn vlen_free_ranges_over_a_live_element_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.arca");
        let f = File::create(&p).unwrap();
        let ds = f
            .root()
            .create_dataset(
                "s",
                &DatasetOptions::new(Datatype::VlenStr, &[4])
                    .vlen(arca::VlenOptions::default().reuse_space(true)),
            )
            .unwrap();
        let all = Selection::all(&[4]);
        ds.write_strings(&all, &["aaaa", "bbbb", "cccc", "dddd"])
            .unwrap();
        let one = Selection::from_ranges(&[(0, 1, 1)]).unwrap();
        ds.write_strings(&one, &["a much longer string"]).unwrap();
        f.check().unwrap();
        let blobs: Vec<u64> = f
            .space_map()
            .unwrap()
            .iter()
            .filter(|e| e.what == "vlen free ranges")
            .map(|e| e.addr)
            .collect();
        f.close().unwrap();
        let mut b = std::fs::read(&p).unwrap();
        let at = blobs[0] as usize;
        // The one free range (offset 0, 4 bytes) grows over "bbbb".
        b[at + 16 + 8..at + 16 + 16].copy_from_slice(&8u64.to_le_bytes());
        stamp_blob(&mut b, at);
        let f = File::from_bytes(b).unwrap();
        corrupt(f.check());
    }
}
