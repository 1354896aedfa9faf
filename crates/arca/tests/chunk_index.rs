//! The chunk index of a dataset appended chunk by chunk fills its pages:
//! no more metadata per chunk than HDF5's index takes (37.5 bytes for a
//! 64-byte chunk), whether the chunks come in one write or one a call,
//! and a file reopened keeps appending as compactly.

use arca::{DatasetOptions, Datatype, File, Selection};

const PER: u64 = 8;

fn opts() -> DatasetOptions {
    DatasetOptions::new(Datatype::parse("<f8").unwrap(), &[0])
        .chunks(&[PER])
        .maxshape(&[None])
}

/// Metadata bytes per stored chunk, after `check` proved the file whole.
fn per_chunk(f: &File) -> f64 {
    let s = f.check().unwrap();
    assert!(s.chunks > 0);
    s.metadata_bytes as f64 / s.chunks as f64
}

#[test]
fn appended_chunks_cost_no_more_index_than_hdf5() {
    let dir = tempfile::tempdir().unwrap();
    let n = 20_000u64;
    let data: Vec<f64> = (0..n * PER).map(|i| i as f64).collect();

    // One write of the whole array.
    let p = dir.path().join("bulk.arca");
    let f = File::create(&p).unwrap();
    let ds = f.root().create_dataset("x", &opts()).unwrap();
    ds.resize(&[n * PER]).unwrap();
    ds.write(&Selection::all(&[n * PER]), &data).unwrap();
    let bulk = per_chunk(&f);
    assert!(bulk <= 37.5, "one write: {bulk} metadata bytes per chunk");
    f.close().unwrap();

    // One chunk a call, growing the dataset each time, half of it before
    // a reopen and half after.
    let p = dir.path().join("loop.arca");
    for half in 0..2 {
        let f = if half == 0 {
            File::create(&p).unwrap()
        } else {
            File::open_rw(&p).unwrap()
        };
        let ds = if half == 0 {
            f.root().create_dataset("x", &opts()).unwrap()
        } else {
            f.root().dataset("x").unwrap()
        };
        for c in half * n / 2..(half + 1) * n / 2 {
            let (a, b) = (c * PER, (c + 1) * PER);
            ds.resize(&[b]).unwrap();
            let sel = Selection::from_ranges(&[(a, b, 1)]).unwrap();
            ds.write(&sel, &data[a as usize..b as usize]).unwrap();
        }
        f.close().unwrap();
    }
    let f = File::open(&p).unwrap();
    let looped = per_chunk(&f);
    assert!(
        looped <= 37.5,
        "one a call: {looped} metadata bytes per chunk"
    );
    let ds = f.root().dataset("x").unwrap();
    assert_eq!(ds.read::<f64>(&Selection::all(&[n * PER])).unwrap(), data);
}

/// Whole chunks written in runs (indexed along the index's right edge in
/// one pass) in every order a run can meet the index in: onto an empty
/// index, appended past the last chunk (before and after a reopen), before
/// chunks already stored, and over stored chunks mixed with new ones;
/// every element and every point read of the file just opened match
/// what was written, and the file checks whole.
#[test]
fn chunks_written_in_runs_read_back_in_any_order() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("runs.arca");
    let (rows, cols) = (4000u64, 6u64);
    let opts2 = || {
        DatasetOptions::new(Datatype::parse("<i8").unwrap(), &[0, cols])
            .chunks(&[2, 3])
            .maxshape(&[None, Some(cols)])
    };
    let mut model = vec![-1i64; (rows * cols) as usize];
    let write = |ds: &arca::Dataset, model: &mut Vec<i64>, r0: u64, r1: u64, salt: i64| {
        let vals: Vec<i64> = (r0 * cols..r1 * cols)
            .map(|i| i as i64 * 10 + salt)
            .collect();
        let sel = Selection::from_ranges(&[(r0, r1, 1), (0, cols, 1)]).unwrap();
        ds.write(&sel, &vals).unwrap();
        model[(r0 * cols) as usize..(r1 * cols) as usize].copy_from_slice(&vals);
    };
    {
        let f = File::create(&p).unwrap();
        let ds = f.root().create_dataset("x", &opts2()).unwrap();
        let one = f.root().create_dataset("one", &opts()).unwrap();
        ds.resize(&[rows, cols]).unwrap();
        // Later rows first (onto an empty index), then runs of growing
        // length appended past them.
        write(&ds, &mut model, 2000, 2400, 1);
        let mut r = 2400;
        let mut len = 2;
        while r < 3000 {
            let end = (r + len).min(3000);
            write(&ds, &mut model, r, end, 2);
            r = end;
            len = len * 2 % 250 + 2;
        }
        // Before every stored chunk: not an append.
        write(&ds, &mut model, 0, 600, 3);
        // Over stored chunks and past them, in one run.
        write(&ds, &mut model, 2900, 3200, 4);
        // A 1-D dataset grown by one write of many chunks.
        let v: Vec<f64> = (0..8000).map(|i| i as f64).collect();
        one.resize(&[8000]).unwrap();
        one.write(&Selection::all(&[8000]), &v).unwrap();
        f.close().unwrap();
    }
    {
        let f = File::open_rw(&p).unwrap();
        let ds = f.root().dataset("x").unwrap();
        write(&ds, &mut model, 3200, 4000, 5);
        write(&ds, &mut model, 600, 1000, 6);
        f.close().unwrap();
    }
    let f = File::open(&p).unwrap();
    f.check().unwrap();
    let ds = f.root().dataset("x").unwrap();
    // Points first, on the file just opened (index pages met as read).
    let mut seed = 36u64;
    for _ in 0..3000 {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let i = (seed >> 33) % (rows * cols);
        let sel =
            Selection::from_ranges(&[(i / cols, i / cols + 1, 1), (i % cols, i % cols + 1, 1)])
                .unwrap();
        let got = ds.read::<i64>(&sel).unwrap();
        let want = if (1000..2000).contains(&(i / cols)) {
            0
        } else {
            model[i as usize]
        };
        assert_eq!(got, vec![want], "element {i}");
    }
    let all = ds.read::<i64>(&Selection::all(&[rows, cols])).unwrap();
    for (i, (&g, &m)) in all.iter().zip(&model).enumerate() {
        let want = if (1000..2000).contains(&(i as u64 / cols)) {
            0
        } else {
            m
        };
        assert_eq!(g, want, "element {i}");
    }
    let one = f.root().dataset("one").unwrap();
    let v = one.read::<f64>(&Selection::all(&[8000])).unwrap();
    assert!(v.iter().enumerate().all(|(i, &x)| x == i as f64));
}

/// Point reads of small unfiltered chunks cache them while the file's
/// session is held; on a file being written, caching one may evict a
/// chunk written only partly (kept dirty in the cache) and store it,
/// moving the index: the data and the index stay right after a reopen.
#[test]
fn point_reads_evicting_dirty_chunks_keep_the_index() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("dirty.arca");
    let n = 4000u64;
    let mut model: Vec<f64> = (0..n * PER).map(|i| i as f64).collect();
    {
        let f = File::create(&p).unwrap();
        let ds = f.root().create_dataset("x", &opts()).unwrap();
        ds.resize(&[n * PER]).unwrap();
        ds.write(&Selection::all(&[n * PER]), &model).unwrap();
        // Room for a few chunks only.
        ds.set_chunk_cache(4 * PER as usize * 8).unwrap();
        for k in 0..200u64 {
            // Part of a chunk: it stays in the cache, dirty.
            let at = (k * 37 % n) * PER + 3;
            ds.write(
                &Selection::from_ranges(&[(at, at + 2, 1)]).unwrap(),
                &[-1.0, -2.0],
            )
            .unwrap();
            model[at as usize] = -1.0;
            model[at as usize + 1] = -2.0;
            // Points elsewhere: each cached, evicting the dirty chunks.
            for j in 0..3u64 {
                let i = (k * 101 + j * 977) % (n * PER);
                let got = ds.read::<f64>(&Selection::from_ranges(&[(i, i + 1, 1)]).unwrap());
                assert_eq!(got.unwrap(), vec![model[i as usize]], "element {i}");
            }
        }
        f.close().unwrap();
    }
    let f = File::open(&p).unwrap();
    f.check().unwrap();
    let ds = f.root().dataset("x").unwrap();
    assert_eq!(ds.read::<f64>(&Selection::all(&[n * PER])).unwrap(), model);
}
