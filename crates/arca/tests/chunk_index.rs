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
