//! Chunks as stored: listed, read and written unchanged between datasets
//! and files, checked against what reads decode; bad calls refused.

use arca::{DatasetOptions, Datatype, File, Filter, Selection};

mod common;
use common::Rng;

fn opts(filters: &[Filter]) -> DatasetOptions {
    DatasetOptions::new(Datatype::float(4), &[50, 30])
        .chunks(&[16, 16])
        .maxshape(&[None, Some(30)])
        .filters(filters)
}

#[test]
fn stored_chunks_copy_between_files_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = Rng(7);
    let data: Vec<f32> = (0..1500)
        .map(|i| (i % 97) as f32 + (r.next() % 3) as f32)
        .collect();
    for filters in [
        vec![],
        vec![Filter::Shuffle, Filter::Deflate(5)],
        vec![Filter::Zstd(3)],
        vec![Filter::Shuffle, Filter::Lz4],
    ] {
        let a = File::create(dir.path().join("a.arca")).unwrap();
        let src = a.root().create_dataset("x", &opts(&filters)).unwrap();
        // Rows 0..40 only: some chunks are never written.
        let rows = Selection::from_ranges(&[(0, 40, 1), (0, 30, 1)]).unwrap();
        src.write(&rows, &data[..1200]).unwrap();
        let b = File::create(dir.path().join("b.arca")).unwrap();
        let dst = b.root().create_dataset("x", &opts(&filters)).unwrap();
        let chunks = src.stored_chunks().unwrap();
        assert_eq!(chunks.len(), 3 * 2, "rows 0..40 touch 3 of 4 chunk rows");
        for c in &chunks {
            let (bytes, mask) = src.read_chunk_raw(&c.offset).unwrap().unwrap();
            assert_eq!(bytes.len() as u64, c.size);
            assert_eq!(mask, c.mask);
            dst.write_chunk_raw(&c.offset, &bytes, mask).unwrap();
        }
        assert_eq!(dst.stored_chunks().unwrap(), chunks);
        assert_eq!(
            dst.read_all::<f32>().unwrap(),
            src.read_all::<f32>().unwrap()
        );
        drop(dst);
        b.check().unwrap();
        drop(b);
        let b = File::open(dir.path().join("b.arca")).unwrap();
        let back = b.root().dataset("x").unwrap();
        assert_eq!(back.read::<f32>(&rows).unwrap(), data[..1200]);
        assert!(back.read_chunk_raw(&[48, 0]).unwrap().is_none());
    }
}

#[test]
fn cached_writes_are_seen_and_replaced_chunks_are_read() {
    let f = File::in_memory().unwrap();
    let o = DatasetOptions::new(Datatype::uint(1), &[8])
        .chunks(&[4])
        .filters(&[Filter::Zstd(1)]);
    let a = f.root().create_dataset("a", &o).unwrap();
    let b = f.root().create_dataset("b", &o).unwrap();
    a.write_all(&[1u8; 8]).unwrap();
    // Written through the cache, then read raw: the cached chunk counts.
    let (bytes, mask) = a.read_chunk_raw(&[4]).unwrap().unwrap();
    b.write_all(&[9u8; 8]).unwrap();
    b.write_chunk_raw(&[4], &bytes, mask).unwrap();
    assert_eq!(b.read_all::<u8>().unwrap(), [9, 9, 9, 9, 1, 1, 1, 1]);
}

#[test]
fn bad_raw_chunk_calls_are_refused() {
    let f = File::in_memory().unwrap();
    let ds = f
        .root()
        .create_dataset("x", &opts(&[Filter::Zstd(3)]))
        .unwrap();
    let err = |r: arca::Result<()>| matches!(r, Err(arca::Error::InvalidArgument(_)));
    assert!(
        err(ds.write_chunk_raw(&[3, 0], &[1, 2, 3], 0)),
        "not a chunk start"
    );
    assert!(
        err(ds.write_chunk_raw(&[64, 0], &[1, 2, 3], 0)),
        "outside the extent"
    );
    assert!(err(ds.write_chunk_raw(&[0], &[1, 2, 3], 0)), "wrong rank");
    assert!(
        err(ds.write_chunk_raw(&[0, 0], &[1, 2, 3], 5)),
        "a partial mask"
    );
    assert!(
        err(ds.write_chunk_raw(&[0, 0], &[0; 10], u32::MAX)),
        "unfiltered but short"
    );
    assert!(err(ds.write_chunk_raw(&[0, 0], &[], 0)), "empty");
    assert!(ds.stored_chunks().unwrap().is_empty());
    // Bytes that are not what the filters made are stored (checksummed)
    // and then fail to decode with a typed error, never wrong values.
    ds.write_chunk_raw(&[0, 0], &[1, 2, 3, 4], 0).unwrap();
    let mut out = vec![0f32; 1500];
    let r = ds.read_raw(
        &Selection::all(&[50, 30]),
        bytemuck::cast_slice_mut(&mut out),
    );
    assert!(matches!(r, Err(arca::Error::Corrupt { .. })), "{r:?}");
    let c = f
        .root()
        .create_dataset("c", &DatasetOptions::new(Datatype::int(4), &[4]))
        .unwrap();
    assert!(c.stored_chunks().is_err(), "contiguous");
    let v = f
        .root()
        .create_dataset(
            "v",
            &DatasetOptions::new(Datatype::VlenStr, &[4]).chunks(&[2]),
        )
        .unwrap();
    assert!(
        v.read_chunk_raw(&[0]).is_err(),
        "records point into a vector"
    );
}

#[test]
fn chunks_copied_from_another_file() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    // A "foreign" file: 8 bytes of header, then stored chunks back to back,
    // as an HDF5 file keeps them; one chunk out of order.
    let src_path = dir.path().join("other.bin");
    let o = DatasetOptions::new(Datatype::uint(2), &[40])
        .chunks(&[10])
        .filters(&[Filter::Zstd(1)]);
    let mem = File::in_memory().unwrap();
    let made = mem.root().create_dataset("m", &o).unwrap();
    made.write_all(&(0..40u16).collect::<Vec<_>>()).unwrap();
    let mut bytes = b"HEADER..".to_vec();
    let mut items = vec![];
    for off in [0u64, 10, 30, 20] {
        let (b, mask) = made.read_chunk_raw(&[off]).unwrap().unwrap();
        items.push((vec![off], bytes.len() as u64, b.len() as u64, mask));
        bytes.extend_from_slice(&b);
    }
    std::fs::File::create(&src_path)
        .unwrap()
        .write_all(&bytes)
        .unwrap();
    let src = std::fs::File::open(&src_path).unwrap();
    let path = dir.path().join("a.arca");
    {
        let f = File::create(&path).unwrap();
        let ds = f.root().create_dataset("x", &o).unwrap();
        let list: Vec<(&[u64], u64, u64, u32)> = items
            .iter()
            .map(|(o, p, l, m)| (o.as_slice(), *p, *l, *m))
            .collect();
        ds.write_chunks_from_file(&src, &list).unwrap();
        assert_eq!(ds.read_all::<u16>().unwrap(), (0..40).collect::<Vec<_>>());
    }
    let f = File::open(&path).unwrap();
    f.check().unwrap();
    assert_eq!(
        f.root().dataset("x").unwrap().read_all::<u16>().unwrap(),
        (0..40).collect::<Vec<_>>()
    );
    drop(f);
    // A source that ends early: refused, and the open file refuses further
    // work; the last commit is what a reopen finds.
    let f = File::open_rw(&path).unwrap();
    let ds = f.root().dataset("x").unwrap();
    let short: Vec<(&[u64], u64, u64, u32)> = vec![(&[0], bytes.len() as u64 - 4, 40, 0)];
    assert!(ds.write_chunks_from_file(&src, &short).is_err());
    assert!(ds.read_all::<u16>().is_err());
    drop(ds);
    drop(f);
    let f = File::open(&path).unwrap();
    f.check().unwrap();
    assert_eq!(
        f.root().dataset("x").unwrap().read_all::<u16>().unwrap(),
        (0..40).collect::<Vec<_>>()
    );
}

/// HDF5's own pipelines: chunks written through arca's encoders read back,
/// chunks through a filter arca has no codec for are kept, copied by
/// `repack` and refused on read with the filter's name, and HDF5's skip
/// masks are kept.
#[test]
fn hdf5_pipelines_keep_their_chunks_and_decode_what_arca_can() {
    use arca::{Error, Hdf5Filter};
    let dir = tempfile::tempdir().unwrap();
    let data: Vec<f32> = (0..1500).map(|i| (i % 41) as f32 / 4.0).collect();
    let h = |id, optional, params: &[u32]| Filter::Hdf5(Hdf5Filter::new(id, optional, "", params));
    let decodable = [
        vec![h(2, true, &[4]), h(1, true, &[6]), h(3, false, &[])],
        vec![h(32000, true, &[4, 261, 1024])],
        vec![h(32015, true, &[5]), h(3, false, &[])],
        vec![h(2, true, &[4]), h(32004, true, &[0])],
    ];
    let path = dir.path().join("h.arca");
    let f = File::create(&path).unwrap();
    for (i, p) in decodable.iter().enumerate() {
        let ds = f.root().create_dataset(&format!("d{i}"), &opts(p)).unwrap();
        ds.write_all(&data).unwrap();
        assert_eq!(&ds.filters().unwrap(), p);
    }
    // A chunk skipping an optional filter, as HDF5 writes it.
    let blosc = vec![h(2, true, &[4]), h(32001, true, &[2, 2, 4, 1024, 5, 1, 1])];
    let kept = f.root().create_dataset("blosc", &opts(&blosc)).unwrap();
    let raw: Vec<u8> = data[..256].iter().flat_map(|v| v.to_le_bytes()).collect();
    kept.write_chunk_raw(&[0, 0], b"blosc-bytes", 0).unwrap();
    kept.write_chunk_raw(&[16, 0], &raw, 0b11).unwrap();
    let mut shuffled_only = vec![0u8; raw.len()];
    for (i, b) in raw.iter().enumerate() {
        // Shuffled by hand: byte k of element e goes to plane k.
        shuffled_only[(i % 4) * 256 + i / 4] = *b;
    }
    kept.write_chunk_raw(&[32, 0], &shuffled_only, 0b10)
        .unwrap();
    // arca's own filters cannot join an HDF5 pipeline, nor take its masks.
    let mixed = [Filter::Shuffle, h(3, false, &[])];
    assert!(f.root().create_dataset("mixed", &opts(&mixed)).is_err());
    let native = f
        .root()
        .create_dataset("native", &opts(&[Filter::Zstd(1)]))
        .unwrap();
    assert!(native.write_chunk_raw(&[0, 0], &raw, 0b10).is_err());
    f.close().unwrap();

    let packed = dir.path().join("p.arca");
    arca::repack(&path, &packed, &mut |_, _| {}).unwrap();
    for p in [&path, &packed] {
        let f = File::open(p).unwrap();
        f.check().unwrap();
        for (i, pipe) in decodable.iter().enumerate() {
            let ds = f.root().dataset(&format!("d{i}")).unwrap();
            assert_eq!(&ds.filters().unwrap(), pipe);
            assert_eq!(ds.read_all::<f32>().unwrap(), data, "pipeline {i}");
        }
        let ds = f.root().dataset("blosc").unwrap();
        let masks: Vec<u32> = ds.stored_chunks().unwrap().iter().map(|c| c.mask).collect();
        assert_eq!(masks, vec![0, 0b11, 0b10]);
        assert_eq!(
            ds.read_chunk_raw(&[0, 0]).unwrap().unwrap(),
            (b"blosc-bytes".to_vec(), 0)
        );
        // Chunks that skipped blosc decode (and the one that skipped both).
        let rows = |a, b| Selection::from_ranges(&[(a, b, 1), (0, 16, 1)]).unwrap();
        for start in [16, 32] {
            let got: Vec<f32> = ds.read(&rows(start, start + 16)).unwrap();
            assert_eq!(got, data[..256], "chunk at row {start}");
        }
        match ds.read::<f32>(&rows(0, 16)) {
            Err(Error::Unsupported(m)) => assert!(m.contains("32001 (blosc)"), "{m}"),
            other => panic!("reading blosc: {other:?}"),
        }
    }
}
