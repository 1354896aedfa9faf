//! External raw storage: elements kept in segments of other files (read and
//! written through them, names resolved as HDF5 resolves them), grown
//! within the segments, lists checked at creation and by `check`, kept by
//! `repack`, typed errors for a missing file.

use arca::{
    ByteOrder, DatasetOptions, Datatype, Error, ExternalSegment, File, Selection, StorageLayout,
};

const UNL: u64 = ExternalSegment::UNLIMITED;

fn seg(name: &std::path::Path, offset: u64, size: u64) -> ExternalSegment {
    ExternalSegment::new(name.to_string_lossy(), offset, size)
}

#[test]
fn elements_live_in_segments_of_other_files() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.bin"), dir.path().join("b.bin"));
    let f = File::create(dir.path().join("f.arca")).unwrap();
    // 3 × 4 i32 = 48 bytes: 20 in a at 100, 12 in b at 0, the rest in a at 300.
    let segs = [seg(&a, 100, 20), seg(&b, 0, 12), seg(&a, 300, UNL)];
    let o = DatasetOptions::new(Datatype::int(4), &[3, 4]).external(&segs);
    let d = f.root().create_dataset("d", &o).unwrap();
    assert_eq!(d.layout().unwrap(), StorageLayout::External);
    assert_eq!(d.chunks().unwrap(), None);
    assert_eq!(d.external_segments().unwrap(), segs);
    let v: Vec<i32> = (0..12).collect();
    d.write_all(&v).unwrap();
    let bytes = |p: &std::path::Path| std::fs::read(p).unwrap();
    let ints = |b: &[u8]| -> Vec<i32> {
        b.chunks(4)
            .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    };
    assert_eq!(ints(&bytes(&a)[100..120]), [0, 1, 2, 3, 4]);
    assert_eq!(ints(&bytes(&b)), [5, 6, 7]);
    assert_eq!(ints(&bytes(&a)[300..]), [8, 9, 10, 11]);
    // A column crosses every segment.
    let col = Selection::from_ranges(&[(0, 3, 1), (1, 2, 1)]).unwrap();
    assert_eq!(d.read::<i32>(&col).unwrap(), [1, 5, 9]);
    d.write(&col, &[-1, -5, -9]).unwrap();
    drop(d);
    f.close().unwrap();
    let f = File::open(dir.path().join("f.arca")).unwrap();
    let d = f.root().dataset("d").unwrap();
    let mut want = v.clone();
    for (i, x) in [(1, -1), (5, -5), (9, -9)] {
        want[i] = x;
    }
    assert_eq!(d.read_all::<i32>().unwrap(), want);
    assert_eq!(d.storage_size().unwrap(), 0);
    f.check().unwrap();
}

#[test]
fn big_endian_elements_are_stored_in_their_order() {
    let dir = tempfile::tempdir().unwrap();
    let raw = dir.path().join("raw.bin");
    let f = File::in_memory().unwrap();
    let dt = Datatype::UInt {
        size: 2,
        order: ByteOrder::Big,
    };
    let o = DatasetOptions::new(dt, &[2]).external(&[seg(&raw, 0, 4)]);
    let d = f.root().create_dataset("d", &o).unwrap();
    d.write_bytes(
        &Selection::all(&[2]),
        bytemuck::cast_slice(&[0x0102u16, 0x0304]),
    )
    .unwrap();
    assert_eq!(std::fs::read(&raw).unwrap(), [1, 2, 3, 4]);
    let mut out = [0u16; 2];
    d.read_bytes(&Selection::all(&[2]), bytemuck::cast_slice_mut(&mut out))
        .unwrap();
    assert_eq!(out, [0x0102, 0x0304]);
}

#[test]
fn names_resolve_from_the_current_directory_or_a_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let f = File::create(dir.path().join("f.arca")).unwrap();
    let o = DatasetOptions::new(Datatype::uint(1), &[3])
        .external(&[ExternalSegment::new("raw.bin", 0, UNL)]);
    let d = f.root().create_dataset("d", &o).unwrap();
    // ${ORIGIN} is the directory of the file holding the dataset.
    let at_origin = d.with_external_prefix("${ORIGIN}");
    assert_eq!(at_origin.external_prefix(), Some("${ORIGIN}"));
    at_origin.write_all(&[1u8, 2, 3]).unwrap();
    assert_eq!(
        std::fs::read(dir.path().join("raw.bin")).unwrap(),
        [1, 2, 3]
    );
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let in_sub = d.with_external_prefix(&sub.to_string_lossy());
    in_sub.write_all(&[4u8, 5, 6]).unwrap();
    assert_eq!(std::fs::read(sub.join("raw.bin")).unwrap(), [4, 5, 6]);
    assert_eq!(at_origin.read_all::<u8>().unwrap(), [1, 2, 3]);
    // Without a prefix, "raw.bin" is looked for in the current directory
    // (as HDF5 does), where there is none.
    assert!(!std::path::Path::new("raw.bin").exists());
    let e = d.read_all::<u8>().unwrap_err();
    assert!(
        matches!(&e, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound),
        "{e}"
    );
    // A file in memory has no directory for ${ORIGIN}.
    let m = File::in_memory().unwrap();
    let d = m.root().create_dataset("d", &o).unwrap();
    let e = d
        .with_external_prefix("${ORIGIN}")
        .read_all::<u8>()
        .unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
}

#[test]
fn a_missing_file_is_an_error_and_a_short_one_reads_zeros() {
    let dir = tempfile::tempdir().unwrap();
    let raw = dir.path().join("raw.bin");
    let f = File::in_memory().unwrap();
    let o = DatasetOptions::new(Datatype::int(4), &[4])
        .fill_value(&7i32.to_ne_bytes())
        .external(&[seg(&raw, 0, UNL)]);
    let d = f.root().create_dataset("d", &o).unwrap();
    assert!(matches!(d.read_all::<i32>(), Err(Error::Io { .. })));
    assert!(!raw.exists(), "nothing is written at creation");
    d.write(&Selection::from_ranges(&[(1, 3, 1)]).unwrap(), &[5, 6])
        .unwrap();
    assert_eq!(std::fs::metadata(&raw).unwrap().len(), 12);
    // What was never written reads as zeros, as in HDF5.
    assert_eq!(d.read_all::<i32>().unwrap(), [0, 5, 6, 0]);
    std::fs::OpenOptions::new()
        .write(true)
        .open(&raw)
        .unwrap()
        .set_len(6)
        .unwrap();
    assert_eq!(d.read_all::<i32>().unwrap(), [0, 5, 0, 0]);
}

#[test]
fn an_expandable_dataset_grows_within_its_segments() {
    let dir = tempfile::tempdir().unwrap();
    let raw = dir.path().join("raw.bin");
    let f = File::in_memory().unwrap();
    let o = DatasetOptions::new(Datatype::uint(1), &[2, 2])
        .maxshape(&[Some(4), Some(2)])
        .external(&[seg(&raw, 0, 4), seg(&raw, 8, 4)]);
    let d = f.root().create_dataset("d", &o).unwrap();
    assert_eq!(d.chunks().unwrap(), None);
    d.write_all(&[1u8, 2, 3, 4]).unwrap();
    d.resize(&[4, 2]).unwrap();
    assert_eq!(d.shape().unwrap(), [4, 2]);
    d.write(
        &Selection::from_ranges(&[(2, 4, 1), (0, 2, 1)]).unwrap(),
        &[5u8, 6, 7, 8],
    )
    .unwrap();
    assert_eq!(
        std::fs::read(&raw).unwrap(),
        [1, 2, 3, 4, 0, 0, 0, 0, 5, 6, 7, 8]
    );
    d.resize(&[1, 2]).unwrap();
    assert_eq!(d.read_all::<u8>().unwrap(), [1, 2]);
    assert!(matches!(d.resize(&[5, 2]), Err(Error::InvalidArgument(_))));
    assert!(matches!(d.resize(&[1, 1]), Err(Error::InvalidArgument(_))));
    // Unlimited along the first dimension over an unlimited segment.
    let o = DatasetOptions::new(Datatype::uint(1), &[0, 3])
        .maxshape(&[None, Some(3)])
        .external(&[seg(&raw, 100, UNL)]);
    let u = f.root().create_dataset("u", &o).unwrap();
    u.resize(&[1000, 3]).unwrap();
    u.write(
        &Selection::from_ranges(&[(999, 1000, 1), (0, 3, 1)]).unwrap(),
        &[9u8, 9, 9],
    )
    .unwrap();
    assert_eq!(std::fs::metadata(&raw).unwrap().len(), 100 + 3000);
    f.check().unwrap();
}

#[test]
fn lists_are_checked_at_creation() {
    let f = File::in_memory().unwrap();
    let refused = |o: DatasetOptions| {
        let e = f.root().create_dataset("x", &o).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    };
    let n = |s: &str, off, size| ExternalSegment::new(s, off, size);
    let i4 = |shape: &[u64]| DatasetOptions::new(Datatype::int(4), shape);
    // Too small; an unlimited segment before another; no segments; an
    // empty name; an unlimited maximum over finite segments; a finite
    // maximum the segments do not hold; a second dimension that grows;
    // chunks, filters, variable-length elements; a segment past 2^64.
    refused(i4(&[4]).external(&[n("a", 0, 15)]));
    refused(i4(&[4]).external(&[n("a", 0, UNL), n("b", 0, 16)]));
    refused(i4(&[4]).external(&[]));
    refused(i4(&[4]).external(&[n("", 0, 16)]));
    refused(i4(&[4]).maxshape(&[None]).external(&[n("a", 0, 1 << 30)]));
    refused(i4(&[4]).maxshape(&[Some(8)]).external(&[n("a", 0, 16)]));
    refused(
        i4(&[4, 4])
            .maxshape(&[Some(4), None])
            .external(&[n("a", 0, UNL)]),
    );
    refused(i4(&[4]).chunks(&[2]).external(&[n("a", 0, UNL)]));
    refused(
        i4(&[4])
            .filters(&[arca::Filter::Deflate(4)])
            .external(&[n("a", 0, UNL)]),
    );
    refused(
        DatasetOptions::new(Datatype::vlen(Datatype::int(2)).unwrap(), &[4])
            .external(&[n("a", 0, UNL)]),
    );
    refused(i4(&[4]).external(&[n("a", u64::MAX - 8, 16)]));
    assert!(!f.root().contains("x").unwrap());
    // Exactly enough, and a scalar.
    f.root()
        .create_dataset(
            "ok",
            &i4(&[4]).maxshape(&[Some(8)]).external(&[n("a", 0, 32)]),
        )
        .unwrap();
    f.root()
        .create_dataset("s", &i4(&[]).external(&[n("s", 0, 4)]))
        .unwrap();
    f.check().unwrap();
}

#[test]
fn repack_keeps_the_list_and_check_finds_a_damaged_one() {
    let dir = tempfile::tempdir().unwrap();
    let raw = dir.path().join("raw.bin");
    let (a, b) = (dir.path().join("a.arca"), dir.path().join("b.arca"));
    {
        let f = File::create(&a).unwrap();
        let o = DatasetOptions::new(Datatype::uint(2), &[3])
            .maxshape(&[Some(8)])
            .fill_value(&7u16.to_ne_bytes())
            .external(&[seg(&raw, 4, 16)]);
        let d = f.root().create_dataset("e", &o).unwrap();
        d.write_all(&[1u16, 2, 3]).unwrap();
        drop(d);
        f.close().unwrap();
    }
    arca::repack(&a, &b, &mut |_, _| {}).unwrap();
    let f = File::open(&b).unwrap();
    let e = f.root().dataset("e").unwrap();
    assert_eq!(e.layout().unwrap(), StorageLayout::External);
    assert_eq!(e.external_segments().unwrap(), [seg(&raw, 4, 16)]);
    assert_eq!(e.maxshape().unwrap(), [Some(8)]);
    assert_eq!(e.fill_value().unwrap(), 7u16.to_ne_bytes());
    assert_eq!(e.read_all::<u16>().unwrap(), [1, 2, 3]);
    f.check().unwrap();
    let at = f
        .space_map()
        .unwrap()
        .into_iter()
        .find(|x| x.what == "external file list")
        .unwrap()
        .addr as usize;
    drop(e);
    f.close().unwrap();
    // The segment's size, 16, made 4 behind a valid checksum: the list no
    // longer holds the dataset's largest shape.
    let mut img = std::fs::read(&b).unwrap();
    let len = u64::from_le_bytes(img[at + 8..at + 16].try_into().unwrap()) as usize;
    let end = at + 16 + len;
    img[end - 8] = 4;
    let crc = crc32c::crc32c(&img[at + 8..end]);
    img[at + 4..at + 8].copy_from_slice(&crc.to_le_bytes());
    std::fs::write(&b, &img).unwrap();
    let f = File::open(&b).unwrap();
    let e = f.check().unwrap_err();
    assert!(
        matches!(
            &e,
            Error::Corrupt {
                what: "external file list",
                ..
            }
        ),
        "{e}"
    );
    let d = f.root().dataset("e").unwrap();
    assert!(matches!(d.read_all::<u16>(), Err(Error::Corrupt { .. })));
}
