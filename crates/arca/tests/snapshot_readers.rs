//! Snapshot readers beside a writer. Each `File` has its own lock handles,
//! so a reader and a writer in one process behave as two processes would.

use arca::{AttrValue, DatasetOptions, Datatype, Error, File, Filter, Mode, Selection};

fn vals(n: usize, seed: u64) -> Vec<f64> {
    (0..n).map(|i| (i as u64 * 31 + seed) as f64).collect()
}

#[test]
fn a_reader_keeps_its_snapshot_until_refresh() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("live.arca");
    let w = File::create(&path).unwrap();
    let root = w.root();
    let contiguous = root
        .create_dataset("c", &DatasetOptions::new(Datatype::float(8), &[5000]))
        .unwrap();
    contiguous.write_all(&vals(5000, 1)).unwrap();
    let chunked = root
        .create_dataset(
            "z",
            &DatasetOptions::new(Datatype::float(8), &[4000])
                .chunks(&[500])
                .filters(&[Filter::Zstd(1)]),
        )
        .unwrap();
    chunked.write_all(&vals(4000, 2)).unwrap();
    root.attrs().set("step", &AttrValue::scalar(1i64)).unwrap();
    w.flush().unwrap();

    let r = File::open(&path).unwrap();
    let g0 = r.generation().unwrap();
    let check_old = |r: &File| {
        let c: Vec<f64> = r.root().dataset("c").unwrap().read_all().unwrap();
        assert_eq!(c, vals(5000, 1));
        let z: Vec<f64> = r.root().dataset("z").unwrap().read_all().unwrap();
        assert_eq!(z, vals(4000, 2));
        assert!(!r.root().contains("g").unwrap());
        r.check().unwrap();
    };
    check_old(&r);

    // Overwrite in place, change chunks, add and delete objects.
    for step in 0..5u64 {
        contiguous.write_all(&vals(5000, 100 + step)).unwrap();
        chunked.write_all(&vals(4000, 200 + step)).unwrap();
        root.require_group("g")
            .unwrap()
            .create_group(&format!("s{step}"))
            .unwrap();
        root.attrs()
            .set("step", &AttrValue::scalar(step as i64 + 2))
            .unwrap();
        w.flush().unwrap();
        check_old(&r);
    }
    assert_eq!(r.generation().unwrap(), g0);
    assert!(r.refresh().unwrap());
    assert!(r.generation().unwrap() > g0);
    let c: Vec<f64> = r.root().dataset("c").unwrap().read_all().unwrap();
    assert_eq!(c, vals(5000, 104));
    let z: Vec<f64> = r.root().dataset("z").unwrap().read_all().unwrap();
    assert_eq!(z, vals(4000, 204));
    assert_eq!(r.root().group("g").unwrap().len().unwrap(), 5);
    r.check().unwrap();
    assert!(!r.refresh().unwrap(), "nothing newer");
    r.close().unwrap();
    w.close().unwrap();
    assert!(!path.with_file_name("live.arca-readers").exists());
    assert!(!path.with_file_name("live.arca-history").exists());
    File::open(&path).unwrap().check().unwrap();
}

#[test]
fn freed_space_waits_for_the_snapshots_that_see_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("churn.arca");
    let w = File::create(&path).unwrap();
    let opts = DatasetOptions::new(Datatype::float(8), &[100_000]);
    w.root()
        .create_dataset("a", &opts)
        .unwrap()
        .write_all(&vals(100_000, 7))
        .unwrap();
    w.flush().unwrap();
    let r = File::open(&path).unwrap();
    let a = r.root().dataset("a").unwrap();
    // Delete and replace it, many times: the old bytes must stay intact
    // for the reader, so the file grows while it holds its snapshot.
    for i in 0..6u64 {
        w.root().delete(if i == 0 { "a" } else { "b" }).unwrap();
        w.root()
            .create_dataset("b", &opts)
            .unwrap()
            .write_all(&vals(100_000, i))
            .unwrap();
        w.flush().unwrap();
        let back: Vec<f64> = a.read_all().unwrap();
        assert_eq!(back, vals(100_000, 7));
    }
    let grown = std::fs::metadata(&path).unwrap().len();
    assert!(grown > 6 * 800_000, "held space is not reused: {grown}");
    r.check().unwrap();
    // Once the reader moves on, the space comes back.
    assert!(r.refresh().unwrap());
    for i in 0..3u64 {
        w.root().delete("b").unwrap();
        w.root()
            .create_dataset("b", &opts)
            .unwrap()
            .write_all(&vals(100_000, i))
            .unwrap();
        w.flush().unwrap();
        r.refresh().unwrap();
    }
    // A reader that goes without closing frees its slot too (its last
    // handle gone).
    drop(a);
    drop(r);
    w.root().attrs().set("x", &AttrValue::scalar(1i64)).unwrap();
    w.flush().unwrap();
    let free = w.space_info().unwrap().free_bytes;
    let len = std::fs::metadata(&path).unwrap().len();
    assert!(
        len - free < 800_000 + 100_000,
        "held space is free again (or cut off): {len} bytes, {free} free"
    );
    // and is reused: more churn does not grow the file.
    for i in 0..5u64 {
        w.root().delete("b").unwrap();
        w.root()
            .create_dataset("b", &opts)
            .unwrap()
            .write_all(&vals(100_000, i))
            .unwrap();
        w.flush().unwrap();
    }
    w.close().unwrap();
    let end = std::fs::metadata(&path).unwrap().len();
    assert!(end <= len, "space is reused: {end} > {len}");
    File::open(&path).unwrap().check().unwrap();
}

#[test]
fn writers_that_cannot_serve_readers_are_kept_apart() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.arca");
    File::create(&path).unwrap().close().unwrap();
    let r = File::open(&path).unwrap();
    // Replacing the file or writing without the journal would pull it
    // from under the reader.
    let e = File::create(&path).unwrap_err();
    assert!(matches!(e, Error::Locked(_)), "{e}");
    let e = File::options()
        .mode(Mode::ReadWrite)
        .journal(false)
        .open(&path)
        .unwrap_err();
    assert!(matches!(e, Error::Locked(_)), "{e}");
    r.close().unwrap();
    let w = File::options()
        .mode(Mode::ReadWrite)
        .journal(false)
        .open(&path)
        .unwrap();
    let e = File::open(&path).unwrap_err();
    assert!(matches!(e, Error::Locked(_)), "{e}");
    w.close().unwrap();
    // Two writers still exclude each other.
    let w = File::options().mode(Mode::ReadWrite).open(&path).unwrap();
    let e = File::options()
        .mode(Mode::ReadWrite)
        .open(&path)
        .unwrap_err();
    assert!(matches!(e, Error::Locked(_)), "{e}");
    let r = File::open(&path).unwrap();
    r.check().unwrap();
    drop(w);
    drop(r);
}

#[test]
fn a_reader_opened_mid_transaction_sees_the_last_commit() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tx.arca");
    let w = File::create(&path).unwrap();
    let ds = w
        .root()
        .create_dataset("d", &DatasetOptions::new(Datatype::int(4), &[10_000]))
        .unwrap();
    ds.write_all(&vec![1i32; 10_000]).unwrap();
    w.flush().unwrap();
    w.transaction(|_| {
        ds.write_all(&vec![2i32; 10_000])?;
        w.root().create_group("inside")?;
        ds.write_all(&vec![3i32; 10_000])?;
        // The pages are overwritten in the file already; a new reader
        // must see the last commit.
        let r = File::open(&path)?;
        let back: Vec<i32> = r.root().dataset("d")?.read_all()?;
        assert_eq!(back, vec![1i32; 10_000]);
        assert!(!r.root().contains("inside")?);
        r.check()?;
        Ok(())
    })
    .unwrap();
    let sel = Selection::all(&[10_000]);
    let r = File::open(&path).unwrap();
    let back: Vec<i32> = r.root().dataset("d").unwrap().read(&sel).unwrap();
    assert_eq!(back, vec![3i32; 10_000]);
}

/// A reader that opens with no writer about holds the history from its
/// start (made empty if there is none), so a writer that comes later, and
/// overwrites what the reader's snapshot shows, is seen through it.
#[test]
fn a_writer_that_comes_after_the_reader_is_seen_through_the_history() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("late.arca");
    let hist = path.with_file_name("late.arca-history");
    let w = File::create(&path).unwrap();
    let ds = w
        .root()
        .create_dataset("c", &DatasetOptions::new(Datatype::float(8), &[8192]))
        .unwrap();
    ds.write_all(&vals(8192, 1)).unwrap();
    w.close().unwrap();
    assert!(!hist.exists(), "nobody left to need a history");

    let r = File::open(&path).unwrap();
    assert!(hist.exists(), "the reader holds the history from its start");
    let rd = r.root().dataset("c").unwrap();
    let half = Selection::from_ranges(&[(0, 4096, 1)]).unwrap();
    assert_eq!(rd.read::<f64>(&half).unwrap(), vals(4096, 1));

    let w = File::open_rw(&path).unwrap();
    let wd = w.root().dataset("c").unwrap();
    for step in 0..3 {
        wd.write_all(&vals(8192, 50 + step)).unwrap();
        w.flush().unwrap();
        // Contiguous data is read from the file each time: the bytes the
        // writer replaced come from the history.
        assert_eq!(rd.read_all::<f64>().unwrap(), vals(8192, 1));
    }
    assert!(r.refresh().unwrap());
    let rd = r.root().dataset("c").unwrap();
    assert_eq!(rd.read_all::<f64>().unwrap(), vals(8192, 52));
    r.check().unwrap();
    w.close().unwrap();
    r.close().unwrap();
    assert!(!hist.exists());
    assert!(!path.with_file_name("late.arca-readers").exists());
}

#[test]
fn a_damaged_history_is_an_error_not_a_wrong_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.arca");
    let w = File::create(&path).unwrap();
    let ds = w
        .root()
        .create_dataset("d", &DatasetOptions::new(Datatype::int(8), &[4096]))
        .unwrap();
    ds.write_all(&vec![1i64; 4096]).unwrap();
    w.flush().unwrap();
    let r = File::open(&path).unwrap();
    // Overwritten in place: the originals go to the history.
    ds.write_all(&vec![2i64; 4096]).unwrap();
    w.flush().unwrap();
    // Damage the history's header (before the reader first reads the
    // dataset, so that nothing of it is cached): the reader says so rather than read
    // the writer's newer bytes as its snapshot.
    let hist = path.with_file_name("h.arca-history");
    let mut bytes = std::fs::read(&hist).unwrap();
    bytes[..8].copy_from_slice(b"garbage!");
    std::fs::write(&hist, &bytes).unwrap();
    let e = r
        .root()
        .dataset("d")
        .and_then(|d| d.read_all::<i64>())
        .unwrap_err();
    assert!(matches!(e, Error::Corrupt { .. }), "{e}");
    assert!(e.to_string().contains("history"), "{e}");
    // A new reader cannot know it needs nothing from the history: it
    // refuses as well. Once everyone closes, the file itself is whole.
    assert!(matches!(File::open(&path), Err(Error::Corrupt { .. })));
    drop(r);
    w.close().unwrap();
    let back: Vec<i64> = File::open(&path)
        .unwrap()
        .root()
        .dataset("d")
        .unwrap()
        .read_all()
        .unwrap();
    assert_eq!(back, vec![2i64; 4096]);
}

/// Threads reading one snapshot file while another thread refreshes it and
/// a writer commits: every read shows one commit whole.
#[test]
fn threads_read_while_another_refreshes() {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.arca");
    let n = 64 * 1024;
    let w = File::create(&path).unwrap();
    let ds = w
        .root()
        .create_dataset(
            "d",
            &DatasetOptions::new(Datatype::int(8), &[n])
                .chunks(&[4096])
                .filters(&[Filter::Shuffle, Filter::Zstd(1)]),
        )
        .unwrap();
    ds.write_all(&vec![0i64; n as usize]).unwrap();
    w.flush().unwrap();
    let r = File::open(&path).unwrap();
    let stop = AtomicBool::new(false);
    let (reads, moves) = (AtomicU64::new(0), AtomicU64::new(0));
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                let mut last = 0i64;
                while !stop.load(Ordering::Relaxed) {
                    let v: Vec<i64> = r.root().dataset("d").unwrap().read_all().unwrap();
                    assert!(v.iter().all(|&x| x == v[0]), "a read mixed two commits");
                    assert!(v[0] >= last, "went back from {last} to {}", v[0]);
                    last = v[0];
                    reads.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
        s.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                if r.refresh().unwrap() {
                    moves.fetch_add(1, Ordering::Relaxed);
                }
            }
        });
        for i in 1..=100i64 {
            ds.write_all(&vec![i; n as usize]).unwrap();
            w.flush().unwrap();
        }
        // Let the readers see the last commit before stopping them.
        while r.root().dataset("d").unwrap().read_all::<i64>().unwrap()[0] != 100 {
            r.refresh().unwrap();
        }
        stop.store(true, Ordering::Relaxed);
    });
    assert!(reads.load(Ordering::Relaxed) > 0);
    assert!(moves.load(Ordering::Relaxed) > 0);
    r.check().unwrap();
}
