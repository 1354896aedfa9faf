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
            let (bytes, mask) = src.read_chunk_stored(&c.offset).unwrap().unwrap();
            assert_eq!(bytes.len() as u64, c.size);
            assert_eq!(mask, c.mask);
            dst.write_chunk_stored(&c.offset, &bytes, mask).unwrap();
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
        assert!(back.read_chunk_stored(&[48, 0]).unwrap().is_none());
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
    let (bytes, mask) = a.read_chunk_stored(&[4]).unwrap().unwrap();
    b.write_all(&[9u8; 8]).unwrap();
    b.write_chunk_stored(&[4], &bytes, mask).unwrap();
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
        err(ds.write_chunk_stored(&[3, 0], &[1, 2, 3], 0)),
        "not a chunk start"
    );
    assert!(
        err(ds.write_chunk_stored(&[64, 0], &[1, 2, 3], 0)),
        "outside the extent"
    );
    assert!(
        err(ds.write_chunk_stored(&[0], &[1, 2, 3], 0)),
        "wrong rank"
    );
    assert!(
        err(ds.write_chunk_stored(&[0, 0], &[1, 2, 3], 5)),
        "a partial mask"
    );
    assert!(
        err(ds.write_chunk_stored(&[0, 0], &[0; 10], u32::MAX)),
        "unfiltered but short"
    );
    assert!(err(ds.write_chunk_stored(&[0, 0], &[], 0)), "empty");
    assert!(ds.stored_chunks().unwrap().is_empty());
    // Bytes that are not what the filters made are stored (checksummed)
    // and then fail to decode with a typed error, never wrong values.
    ds.write_chunk_stored(&[0, 0], &[1, 2, 3, 4], 0).unwrap();
    let mut out = vec![0f32; 1500];
    let r = ds.read_bytes(
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
        v.read_chunk_stored(&[0]).is_err(),
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
        let (b, mask) = made.read_chunk_stored(&[off]).unwrap().unwrap();
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
    // A chunk skipping an optional filter, as HDF5 writes it (bzip2: a
    // filter arca has no codec for).
    let bzip2 = vec![h(2, true, &[4]), h(307, true, &[9])];
    let kept = f.root().create_dataset("bzip2", &opts(&bzip2)).unwrap();
    let raw: Vec<u8> = data[..256].iter().flat_map(|v| v.to_le_bytes()).collect();
    kept.write_chunk_stored(&[0, 0], b"bzip2-bytes", 0).unwrap();
    kept.write_chunk_stored(&[16, 0], &raw, 0b11).unwrap();
    let mut shuffled_only = vec![0u8; raw.len()];
    for (i, b) in raw.iter().enumerate() {
        // Shuffled by hand: byte k of element e goes to plane k.
        shuffled_only[(i % 4) * 256 + i / 4] = *b;
    }
    kept.write_chunk_stored(&[32, 0], &shuffled_only, 0b10)
        .unwrap();
    // arca's own filters cannot join an HDF5 pipeline, nor take its masks.
    let mixed = [Filter::Shuffle, h(3, false, &[])];
    assert!(f.root().create_dataset("mixed", &opts(&mixed)).is_err());
    let native = f
        .root()
        .create_dataset("native", &opts(&[Filter::Zstd(1)]))
        .unwrap();
    assert!(native.write_chunk_stored(&[0, 0], &raw, 0b10).is_err());
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
        let ds = f.root().dataset("bzip2").unwrap();
        let masks: Vec<u32> = ds.stored_chunks().unwrap().iter().map(|c| c.mask).collect();
        assert_eq!(masks, vec![0, 0b11, 0b10]);
        assert_eq!(
            ds.read_chunk_stored(&[0, 0]).unwrap().unwrap(),
            (b"bzip2-bytes".to_vec(), 0)
        );
        // Chunks that skipped bzip2 decode (and the one that skipped both).
        let rows = |a, b| Selection::from_ranges(&[(a, b, 1), (0, 16, 1)]).unwrap();
        for start in [16, 32] {
            let got: Vec<f32> = ds.read(&rows(start, start + 16)).unwrap();
            assert_eq!(got, data[..256], "chunk at row {start}");
        }
        match ds.read::<f32>(&rows(0, 16)) {
            Err(Error::Unsupported(m)) => assert!(m.contains("307 (bzip2)"), "{m}"),
            other => panic!("reading bzip2: {other:?}"),
        }
    }
}

/// Encode chunk `offset` of `data` (a 50 x 30 float32 array) for `opts`.
fn encoded(filters: &[Filter], data: &[f32], offset: &[u64]) -> (Vec<u8>, u32) {
    let mut raw = vec![0u8; 16 * 16 * 4];
    for i in 0..16 {
        for j in 0..16 {
            let (r, c) = (offset[0] as usize + i, offset[1] as usize + j);
            if r < 50 && c < 30 {
                raw[(i * 16 + j) * 4..][..4].copy_from_slice(&data[r * 30 + c].to_le_bytes());
            }
        }
    }
    arca::encode_chunk(filters, 4, &raw).unwrap()
}

/// Reserve, write through another descriptor packed from the region's
/// start: the chunks to seal.
fn reserve_and_write(
    path: &std::path::Path,
    ds: &arca::Dataset,
    filters: &[Filter],
    data: &[f32],
    offsets: &[[u64; 2]],
) -> Vec<arca::WrittenChunk> {
    use std::os::unix::fs::FileExt;
    let at = ds
        .reserve_chunks(offsets.len() as u64 * 16 * 16 * 4)
        .unwrap();
    let other = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    let mut addr = at;
    let mut out = vec![];
    for o in offsets {
        let (b, mask) = encoded(filters, data, o);
        other.write_all_at(&b, addr).unwrap();
        out.push(arca::WrittenChunk {
            offset: o.to_vec(),
            addr,
            len: b.len() as u64,
            mask,
            crc: crc32c::crc32c(&b),
        });
        addr += b.len() as u64;
    }
    out
}

#[test]
fn chunks_written_elsewhere_read_as_a_serial_write() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = Rng(11);
    let filters = [Filter::Shuffle, Filter::Zstd(3)];
    let offsets: Vec<[u64; 2]> = (0..4).flat_map(|i| [[16 * i, 0], [16 * i, 16]]).collect();
    let path = dir.path().join("p.arca");
    let f = File::create(&path).unwrap();
    let ds = f.root().create_dataset("x", &opts(&filters)).unwrap();
    let mut size_after_first = 0;
    for round in 0..6 {
        let data: Vec<f32> = (0..1500)
            .map(|i| (i % 89) as f32 + (r.next() % 5) as f32 + round as f32)
            .collect();
        f.begin_transaction().unwrap();
        let mut written = reserve_and_write(&path, &ds, &filters, &data, &offsets);
        written.reverse(); // any order
        ds.seal_chunks(&written).unwrap();
        f.end_transaction(true).unwrap();
        assert_eq!(ds.read_all::<f32>().unwrap(), data, "round {round}");
        let serial = File::in_memory().unwrap();
        let s = serial.root().create_dataset("x", &opts(&filters)).unwrap();
        s.write(&Selection::all(&[50, 30]), &data).unwrap();
        assert_eq!(s.stored_chunks().unwrap(), ds.stored_chunks().unwrap());
        f.check().unwrap();
        // Replaced chunks give their space back: the file does not grow.
        let len = std::fs::metadata(&path).unwrap().len();
        if round == 1 {
            size_after_first = len;
        } else if round > 1 {
            assert!(
                len <= size_after_first + 16 * 4096,
                "round {round}: {len} bytes"
            );
        }
    }
    drop(ds);
    f.close().unwrap();
    let f = File::open(&path).unwrap();
    f.check().unwrap();
}

#[test]
fn reserved_space_not_sealed_rolls_the_transaction_back() {
    let dir = tempfile::tempdir().unwrap();
    let filters = [Filter::Zstd(1)];
    let path = dir.path().join("p.arca");
    let f = File::create(&path).unwrap();
    let ds = f.root().create_dataset("x", &opts(&filters)).unwrap();
    let data: Vec<f32> = (0..1500).map(|i| i as f32).collect();
    ds.write(&Selection::all(&[50, 30]), &data).unwrap();
    f.flush().unwrap();
    let other: Vec<f32> = data.iter().map(|v| v + 1.0).collect();
    // Outside a transaction: refused.
    let e = ds.reserve_chunks(1024).unwrap_err();
    assert!(e.to_string().contains("transaction"), "{e}");
    // Reserved, written, never sealed: the end refuses and rolls back.
    f.begin_transaction().unwrap();
    f.root().create_group("made_inside").unwrap();
    reserve_and_write(&path, &ds, &filters, &other, &[[0, 0], [16, 16]]);
    let e = f.end_transaction(true).unwrap_err();
    assert!(e.to_string().contains("not sealed"), "{e}");
    assert_eq!(ds.read_all::<f32>().unwrap(), data);
    assert!(f.root().group("made_inside").is_err());
    f.check().unwrap();
    // Bad seals are typed errors that index nothing; a good one follows.
    f.begin_transaction().unwrap();
    assert!(ds.seal_chunks(&[]).is_err(), "nothing reserved");
    let w = reserve_and_write(&path, &ds, &filters, &other, &[[0, 0], [16, 16]]);
    let mut twice = w.clone();
    twice[1].offset = vec![0, 0];
    let e = ds.seal_chunks(&twice).unwrap_err();
    assert!(e.to_string().contains("twice"), "{e}");
    let mut overlap = w.clone();
    overlap[1].addr -= 1;
    let e = ds.seal_chunks(&overlap).unwrap_err();
    assert!(e.to_string().contains("overlap"), "{e}");
    let mut outside = w.clone();
    outside[0].addr = 0;
    let e = ds.seal_chunks(&outside).unwrap_err();
    assert!(e.to_string().contains("outside"), "{e}");
    let mut bad_offset = w.clone();
    bad_offset[0].offset = vec![3, 0];
    assert!(ds.seal_chunks(&bad_offset).is_err());
    assert!(ds.read_all::<f32>().unwrap() == data, "nothing indexed");
    ds.seal_chunks(&w).unwrap();
    f.end_transaction(true).unwrap();
    let mut want = data.clone();
    for r in 0..16 {
        for c in 0..16 {
            want[r * 30 + c] += 1.0;
            if 16 + r < 50 && 16 + c < 30 {
                want[(16 + r) * 30 + 16 + c] += 1.0;
            }
        }
    }
    assert!(
        ds.read_all::<f32>().unwrap() == want,
        "sealed chunks read back"
    );
    f.check().unwrap();
    // A wrong checksum is caught by the read, named as damage.
    f.begin_transaction().unwrap();
    let mut w = reserve_and_write(&path, &ds, &filters, &other, &[[0, 0]]);
    w[0].crc ^= 1;
    ds.seal_chunks(&w).unwrap();
    f.end_transaction(true).unwrap();
    let e = ds.read_all::<f32>().unwrap_err();
    assert!(matches!(e, arca::Error::Corrupt { .. }), "{e:?}");
}

#[test]
fn slabs_cut_into_chunks_store_as_a_serial_write() {
    // Seeded boxes of a 3-D int16 dataset whose edge chunks run past the
    // extent, with a fill value: whole chunks encoded by encode_slab and
    // placed, the partial ones written, against a serial write.
    let dims = [13u64, 10, 7];
    let chunk = [4u64, 3, 7];
    let filters = [Filter::Shuffle, Filter::Deflate(3)];
    let fill = 9i16.to_le_bytes();
    let o = DatasetOptions::new(Datatype::int(2), &dims)
        .chunks(&chunk)
        .filters(&filters)
        .fill_value(&fill);
    let mut r = Rng(5);
    let dir = tempfile::tempdir().unwrap();
    for case in 0..40 {
        let start: Vec<u64> = dims.iter().map(|&d| r.next() % d).collect();
        let mut count: Vec<u64> = start
            .iter()
            .zip(&dims)
            .map(|(&s, &d)| 1 + r.next() % (d - s))
            .collect();
        // Blocks of whole chunk rows (filtered in place) and one whose
        // last chunk runs past the extent.
        let (start, count) = match case {
            0 => (vec![0, 3, 0], vec![8, 3, 7]),
            1 => (vec![4, 3, 0], vec![9, 3, 7]),
            _ => (start, std::mem::take(&mut count)),
        };
        let n: u64 = count.iter().product();
        let vals: Vec<i16> = (0..n).map(|_| (r.next() % 1000) as i16).collect();
        let block: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
        let e =
            arca::encode_slab(&filters, 2, &dims, &chunk, &start, &count, &block, &fill).unwrap();
        let whole: u64 = e.chunks.iter().map(|c| c.len).sum();
        assert_eq!(whole, e.bytes.len() as u64);
        let path = dir.path().join(format!("b{case}.arca"));
        let f = File::create(&path).unwrap();
        let ds = f.root().create_dataset("x", &o).unwrap();
        f.begin_transaction().unwrap();
        // Room for every chunk unfiltered, the most any can take.
        let room = e.chunks.len() as u64 * 4 * 3 * 7 * 2;
        if room > 0 {
            use std::os::unix::fs::FileExt;
            let at = ds.reserve_chunks(room).unwrap();
            let other = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
            other.write_all_at(&e.bytes, at).unwrap();
            let mut addr = at;
            let mut written = vec![];
            for c in &e.chunks {
                written.push(arca::WrittenChunk {
                    offset: c.offset.clone(),
                    addr,
                    len: c.len,
                    mask: c.mask,
                    crc: c.crc,
                });
                addr += c.len;
            }
            ds.seal_chunks(&written).unwrap();
        }
        for (s0, cnt) in &e.partial {
            let rel: Vec<(u64, u64, u64)> = s0
                .iter()
                .zip(&start)
                .zip(cnt)
                .map(|((a, b), c)| (a - b, a - b + c, 1))
                .collect();
            let part: Vec<i16> = common::indices(&count, &Selection::from_ranges(&rel).unwrap())
                .into_iter()
                .map(|i| vals[i])
                .collect();
            let at: Vec<(u64, u64, u64)> =
                s0.iter().zip(cnt).map(|(a, c)| (*a, a + c, 1)).collect();
            ds.write(&Selection::from_ranges(&at).unwrap(), &part)
                .unwrap();
        }
        f.end_transaction(true).unwrap();
        let serial = File::in_memory().unwrap();
        let s = serial.root().create_dataset("x", &o).unwrap();
        let sel: Vec<(u64, u64, u64)> = start
            .iter()
            .zip(&count)
            .map(|(a, c)| (*a, a + c, 1))
            .collect();
        s.write(&Selection::from_ranges(&sel).unwrap(), &vals)
            .unwrap();
        assert_eq!(
            ds.read_all::<i16>().unwrap(),
            s.read_all::<i16>().unwrap(),
            "case {case}: {start:?} {count:?}"
        );
        f.check().unwrap();
    }
    // Bad arguments are typed errors.
    let b = [0u8; 8];
    for (d, c, s, n, bl, fl) in [
        (
            &[4u64][..],
            &[2u64][..],
            &[0u64][..],
            &[4u64][..],
            &b[..7],
            &[][..],
        ),
        (&[4], &[2], &[1], &[4], &b[..], &[]),
        (&[4], &[0], &[0], &[4], &b[..], &[]),
        (&[4, 1], &[2], &[0], &[4], &b[..], &[]),
        (&[4], &[2], &[0], &[4], &b[..], &[1u8][..]),
    ] {
        let e = arca::encode_slab(&filters, 2, d, c, s, n, bl, fl).unwrap_err();
        assert!(matches!(e, arca::Error::InvalidArgument(_)), "{e:?}");
    }
}

#[test]
fn large_writes_stream_whole_chunks_from_both_cores() {
    // Over a MiB of whole chunks: filtered on every core, stored in grid
    // order while later ones are filtered. Chunks that are whole rows of
    // the selection are filtered from the caller's buffer, others gathered;
    // edge chunks run past the extent. Every layout reads back, and stores
    // the same chunks as a write made a chunk at a time.
    let dims = [70u64, 64, 60];
    let n: usize = dims.iter().product::<u64>() as usize;
    let data: Vec<f32> = (0..n).map(|i| ((i * 7) % 1013) as f32 * 0.25).collect();
    for chunk in [[2u64, 64, 60], [4, 32, 64], [3, 64, 60]] {
        let o = DatasetOptions::new(Datatype::float(4), &dims)
            .chunks(&chunk)
            .filters(&[Filter::Shuffle, Filter::Zstd(3)]);
        let f = File::in_memory().unwrap();
        let ds = f.root().create_dataset("x", &o).unwrap();
        ds.write(&Selection::all(&dims), &data).unwrap();
        assert!(ds.read_all::<f32>().unwrap() == data, "{chunk:?}");
        // A chunk at a time: the serial path.
        let g = File::in_memory().unwrap();
        let one = g.root().create_dataset("x", &o).unwrap();
        let mut at = 0;
        while at < dims[0] {
            let end = (at + chunk[0]).min(dims[0]);
            let sel = Selection::from_ranges(&[(at, end, 1), (0, 64, 1), (0, 60, 1)]).unwrap();
            let lo = (at * 64 * 60) as usize;
            one.write(&sel, &data[lo..lo + ((end - at) * 64 * 60) as usize])
                .unwrap();
            at = end;
        }
        assert_eq!(one.stored_chunks().unwrap(), ds.stored_chunks().unwrap());
        // A box that cuts chunks: whole ones streamed, the rest merged.
        let sel = Selection::from_ranges(&[(5, 66, 1), (0, 64, 1), (0, 60, 1)]).unwrap();
        let part: Vec<f32> = data[5 * 64 * 60..66 * 64 * 60]
            .iter()
            .map(|v| v + 1.0)
            .collect();
        ds.write(&sel, &part).unwrap();
        let back = ds.read_all::<f32>().unwrap();
        let mut want = data.clone();
        want[5 * 64 * 60..66 * 64 * 60].copy_from_slice(&part);
        assert!(back == want, "{chunk:?} after a partial write");
        f.check().unwrap();
    }
}
