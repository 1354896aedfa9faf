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
