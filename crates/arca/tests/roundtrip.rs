//! Random shapes, types, chunkings, filters and selections, checked against
//! an in-memory reference array, before and after reopening the file.

use arca::{ByteOrder, DatasetOptions, Datatype, File, FillTime, Filter, Selection};
use proptest::prelude::*;

mod common;
use common::indices;

fn selection(dims: Vec<u64>) -> impl Strategy<Value = Selection> {
    dims.into_iter()
        .map(|n| {
            (0..n, 1..=n, 1u64..4).prop_map(move |(a, len, step)| {
                let stop = (a + len).min(n);
                (a, stop.max(a + 1), step)
            })
        })
        .collect::<Vec<_>>()
        .prop_map(|r| Selection::from_ranges(&r).unwrap())
}

#[derive(Debug, Clone)]
struct Case {
    dims: Vec<u64>,
    dtype: Datatype,
    chunks: Option<Vec<u64>>,
    filters: Vec<Filter>,
    fill: u8,
    writes: Vec<(Selection, u64)>,
    reads: Vec<Selection>,
}

fn dtype() -> impl Strategy<Value = Datatype> {
    let order = prop_oneof![Just(ByteOrder::Little), Just(ByteOrder::Big)];
    (0usize..6, order).prop_map(|(k, o)| match k {
        0 => Datatype::Bool,
        1 => Datatype::Int { size: 2, order: o },
        2 => Datatype::UInt { size: 4, order: o },
        3 => Datatype::Float { size: 8, order: o },
        4 => Datatype::Int { size: 1, order: o },
        _ => Datatype::bytes(3),
    })
}

fn filters() -> impl Strategy<Value = Vec<Filter>> {
    prop_oneof![
        Just(vec![]),
        Just(vec![Filter::Shuffle]),
        Just(vec![Filter::Deflate(4)]),
        Just(vec![Filter::Shuffle, Filter::Zstd(3)]),
        Just(vec![Filter::Lz4]),
        Just(vec![Filter::Shuffle, Filter::Lz4]),
    ]
}

fn case() -> impl Strategy<Value = Case> {
    prop::collection::vec(1u64..12, 1..4)
        .prop_flat_map(|dims| {
            let chunks = prop_oneof![
                Just(None),
                dims.iter()
                    .map(|&n| 1..=n + 2)
                    .collect::<Vec<_>>()
                    .prop_map(Some)
            ];
            (
                Just(dims.clone()),
                dtype(),
                chunks,
                filters(),
                any::<u8>(),
                prop::collection::vec((selection(dims.clone()), any::<u64>()), 1..5),
                prop::collection::vec(selection(dims), 1..4),
            )
        })
        .prop_map(|(dims, dtype, chunks, filters, fill, writes, reads)| {
            let chunked = chunks.is_some();
            let fill = if matches!(dtype, Datatype::Bool) {
                fill & 1
            } else {
                fill
            };
            Case {
                dims,
                dtype,
                chunks,
                filters: if chunked { filters } else { vec![] },
                fill,
                writes,
                reads,
            }
        })
}

/// Element bytes derived from a seed, valid for the type (bools are 0/1).
fn values(dtype: Datatype, n: usize, seed: u64) -> Vec<u8> {
    let size = dtype.size();
    let mut x = seed | 1;
    (0..n * size)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if dtype == Datatype::Bool {
                (x & 1) as u8
            } else {
                x as u8
            }
        })
        .collect()
}

fn run(c: &Case) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.arca");
    let size = c.dtype.size();
    let n: usize = c.dims.iter().product::<u64>() as usize;
    let fill = vec![c.fill; size];
    let mut model: Vec<u8> = fill.repeat(n);
    {
        let f = File::create(&path).unwrap();
        let mut o = DatasetOptions::new(c.dtype.clone(), &c.dims).fill_value(&fill);
        if let Some(ch) = &c.chunks {
            o = o.chunks(ch).filters(&c.filters);
        }
        let ds = f.root().create_dataset("d", &o).unwrap();
        ds.set_chunk_cache(64).unwrap(); // tiny cache: exercise eviction
        for (sel, seed) in &c.writes {
            let data = values(c.dtype.clone(), sel.len() as usize, *seed);
            ds.write_bytes(sel, &data).unwrap();
            for (i, flat) in indices(&c.dims, sel).into_iter().enumerate() {
                model[flat * size..(flat + 1) * size]
                    .copy_from_slice(&data[i * size..(i + 1) * size]);
            }
        }
        for sel in &c.reads {
            let mut out = vec![0u8; sel.len() as usize * size];
            ds.read_bytes(sel, &mut out).unwrap();
            let want: Vec<u8> = indices(&c.dims, sel)
                .into_iter()
                .flat_map(|i| model[i * size..(i + 1) * size].to_vec())
                .collect();
            assert_eq!(out, want, "read of {sel:?} before reopen");
        }
        f.close().unwrap();
    }
    let f = File::open(&path).unwrap();
    let ds = f.root().dataset("d").unwrap();
    assert_eq!(ds.dtype().unwrap(), c.dtype);
    let mut out = vec![0u8; n * size];
    ds.read_bytes(&Selection::all(&c.dims), &mut out).unwrap();
    assert_eq!(out, model, "full read after reopen");
    f.check().unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig {
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x5eed_0300),
        ..ProptestConfig::with_cases(common::scaled(300))
    })]
    #[test]
    fn datasets_match_reference(c in case()) {
        run(&c);
    }
}

#[test]
fn resize_shows_fill_after_shrink_and_grow() {
    let f = File::in_memory().unwrap();
    let o = DatasetOptions::new(Datatype::int(4), &[6, 6])
        .maxshape(&[None, Some(6)])
        .chunks(&[4, 4])
        .fill_value(&7i32.to_ne_bytes());
    let ds = f.root().create_dataset("r", &o).unwrap();
    ds.write_all(&(0..36).collect::<Vec<i32>>()).unwrap();
    ds.resize(&[3, 6]).unwrap();
    ds.resize(&[8, 6]).unwrap();
    let v: Vec<i32> = ds.read_all().unwrap();
    for (i, x) in v.iter().enumerate() {
        let want = if i < 18 { i as i32 } else { 7 };
        assert_eq!(*x, want, "element {i}");
    }
    assert!(ds.resize(&[8, 7]).is_err());
    assert!(ds.resize(&[8]).is_err());
}

/// HDF5's fill time: kept across a reopen and a repack; with `Never` the
/// fill value is only recorded and unwritten elements read as zeros, in
/// every layout.
#[test]
fn fill_time_is_kept_and_never_reads_zeros() {
    let dir = tempfile::tempdir().unwrap();
    let (path, copy) = (dir.path().join("t.arca"), dir.path().join("c.arca"));
    let seven = 7i32.to_ne_bytes();
    {
        let f = File::create(&path).unwrap();
        let base = || DatasetOptions::new(Datatype::int(4), &[6]).fill_value(&seven);
        let root = f.root();
        root.create_dataset("chunked", &base().chunks(&[4]).fill_time(FillTime::Never))
            .unwrap()
            .write(
                &Selection::new(vec![0], vec![2], vec![1]).unwrap(),
                &[1i32, 2],
            )
            .unwrap();
        root.create_dataset("contiguous", &base().fill_time(FillTime::Never))
            .unwrap();
        root.create_dataset("alloc", &base().chunks(&[4]).fill_time(FillTime::Alloc))
            .unwrap();
        root.create_dataset("ifset", &base().chunks(&[4])).unwrap();
        f.close().unwrap();
    }
    arca::repack(&path, &copy, &mut |_, _| {}).unwrap();
    for p in [&path, &copy] {
        let f = File::open(p).unwrap();
        let get = |n: &str| f.root().dataset(n).unwrap();
        let read = |n: &str| get(n).read_all::<i32>().unwrap();
        assert_eq!(get("chunked").fill_time().unwrap(), FillTime::Never);
        assert_eq!(get("chunked").fill_value().unwrap(), seven);
        assert_eq!(read("chunked"), [1, 2, 0, 0, 0, 0]);
        assert_eq!(
            get("contiguous").fill_time().unwrap(),
            FillTime::Never,
            "{p:?}"
        );
        assert_eq!(read("contiguous"), [0; 6], "{p:?}");
        assert_eq!(get("alloc").fill_time().unwrap(), FillTime::Alloc);
        assert_eq!(read("alloc"), [7; 6]);
        assert_eq!(get("ifset").fill_time().unwrap(), FillTime::IfSet);
        assert_eq!(read("ifset"), [7; 6]);
    }
}

#[test]
fn big_endian_is_converted_on_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("be.arca");
    let f = File::create(&path).unwrap();
    let t = Datatype::parse(">i4").unwrap();
    let ds = f
        .root()
        .create_dataset("be", &DatasetOptions::new(t, &[3]))
        .unwrap();
    ds.write_all(&[1i32, -2, 300]).unwrap();
    f.close().unwrap();
    let raw = std::fs::read(&path).unwrap();
    // The stored bytes really are big-endian.
    assert!(raw.windows(4).any(|w| w == [0, 0, 1, 44]));
    let f = File::open(&path).unwrap();
    assert_eq!(
        f.root().dataset("be").unwrap().read_all::<i32>().unwrap(),
        vec![1, -2, 300]
    );
}

#[test]
fn type_mismatch_is_an_error() {
    let f = File::in_memory().unwrap();
    let ds = f
        .root()
        .create_dataset("x", &DatasetOptions::new(Datatype::float(8), &[2]))
        .unwrap();
    assert!(ds.write_all(&[1i32, 2]).is_err());
    assert!(ds.read_all::<f32>().is_err());
    assert!(ds.write_all(&[1.0f64]).is_err());
}

/// Large chunks are decoded in parallel, straight into the caller's buffer
/// when they land there in one run; the rest go through a chunk buffer.
/// Both kinds, big-endian, every codec, whole and partial reads.
#[test]
fn large_chunks_read_back_in_place_and_not() {
    let dims = [8u64, 131_072];
    let model: Vec<f32> = (0..dims[0] * dims[1])
        .map(|i| ((i % 977) as f32) * 0.25 - (i / 131_072) as f32)
        .collect();
    let pipelines: [&[Filter]; 4] = [
        &[Filter::Shuffle, Filter::Lz4],
        &[Filter::Shuffle, Filter::Zstd(1)],
        &[Filter::Deflate(1)],
        &[Filter::Shuffle],
    ];
    // Rows (one run each in a full read), and 2x65536 tiles (never one run).
    for chunks in [[1u64, 131_072], [2, 65_536]] {
        for filters in pipelines {
            for ty in ["<f4", ">f4"] {
                let f = File::in_memory().unwrap();
                let o = DatasetOptions::new(Datatype::parse(ty).unwrap(), &dims)
                    .chunks(&chunks)
                    .filters(filters);
                let ds = f.root().create_dataset("x", &o).unwrap();
                ds.write_all(&model).unwrap();
                // A cache smaller than the read: it streams past the cache.
                ds.set_chunk_cache(1 << 20).unwrap();
                assert_eq!(
                    ds.read_all::<f32>().unwrap(),
                    model,
                    "{chunks:?} {filters:?} {ty}"
                );
                let sel = Selection::from_ranges(&[(2, 7, 1), (0, 131_072, 1)]).unwrap();
                let part: Vec<f32> = ds.read(&sel).unwrap();
                assert_eq!(
                    part,
                    model[2 * 131_072..7 * 131_072],
                    "{chunks:?} {filters:?}"
                );
                let sel = Selection::from_ranges(&[(1, 8, 3), (5, 131_000, 2)]).unwrap();
                let got: Vec<f32> = ds.read(&sel).unwrap();
                let want: Vec<f32> = indices(&dims, &sel).iter().map(|&i| model[i]).collect();
                assert_eq!(got, want, "{chunks:?} {filters:?} strided");
            }
        }
    }
}

#[test]
fn long_contiguous_runs_read_whole_from_both_cores() {
    // Runs of 8 MiB and more are read in two halves at once.
    let dir = tempfile::tempdir().unwrap();
    let dims = [3000u64, 1024];
    let n = (dims[0] * dims[1]) as usize;
    let data: Vec<f32> = (0..n).map(|i| (i % 65_521) as f32).collect();
    let f = arca::File::create(dir.path().join("c.arca")).unwrap();
    let o = arca::DatasetOptions::new(arca::Datatype::float(4), &dims)
        .layout(arca::StorageLayout::Contiguous);
    let ds = f.root().create_dataset("c", &o).unwrap();
    ds.write(&Selection::all(&dims), &data).unwrap();
    f.close().unwrap();
    let f = arca::OpenOptions::default()
        .open(dir.path().join("c.arca"))
        .unwrap();
    let ds = f.root().dataset("c").unwrap();
    assert!(ds.read_all::<f32>().unwrap() == data);
    let rows = Selection::from_ranges(&[(7, 2999, 1), (0, 1024, 1)]).unwrap();
    assert!(ds.read::<f32>(&rows).unwrap()[..] == data[7 * 1024..2999 * 1024]);
}
