//! Many threads reading one open file while another thread of the same
//! process writes and commits: chunks are fetched and decoded without the
//! file's lock, so every read must still see whole chunks (each one written
//! whole with a single value), never an error or a mixture, and what the
//! readers cached must never hide a later write.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};

use arca::io::{Driver, FileDriver, ReadAt};
use arca::{DatasetOptions, Datatype, File, Filter, Selection};

mod common;
use common::Rng;

const COLS: u64 = 256;

fn chunk_sel(k: u64, rows: u64) -> Selection {
    Selection::from_ranges(&[(k * rows, (k + 1) * rows, 1), (0, COLS, 1)]).unwrap()
}

/// A file whose unlocked reads pause before they read, so that a writer
/// that did not wait for them would have every chance to reuse what they
/// are about to fetch.
struct SlowReads(FileDriver);

struct SlowReader(Arc<dyn ReadAt>);

impl ReadAt for SlowReader {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> arca::Result<()> {
        std::thread::sleep(std::time::Duration::from_micros(1000));
        self.0.read_at(offset, buf)
    }
}

impl Driver for SlowReads {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> arca::Result<()> {
        self.0.read_at(offset, buf)
    }
    fn write_at(&mut self, offset: u64, data: &[u8]) -> arca::Result<()> {
        self.0.write_at(offset, data)
    }
    fn sync(&mut self) -> arca::Result<()> {
        self.0.sync()
    }
    fn truncate(&mut self, len: u64) -> arca::Result<()> {
        self.0.truncate(len)
    }
    fn len(&self) -> arca::Result<u64> {
        self.0.len()
    }
    fn shared_reader(&self) -> Option<Arc<dyn ReadAt>> {
        Some(Arc::new(SlowReader(self.0.shared_reader()?)))
    }
}

/// `chunks` chunks of `rows` rows; the writer commits every `every` writes
/// (each commit hands freed extents back for the next writes to reuse).
fn run(filters: &[Filter], cache_bytes: usize, chunks: u64, rows: u64, every: u64) {
    let chunk_sel = |k| chunk_sel(k, rows);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.arca");
    let f = File::options()
        .chunk_cache_bytes(cache_bytes)
        .open_driver(
            Box::new(SlowReads(FileDriver::create(&path, true).unwrap())),
            true,
            true,
        )
        .unwrap();
    let ds = f
        .root()
        .create_dataset(
            "d",
            &DatasetOptions::new(Datatype::int(4), &[chunks * rows, COLS])
                .chunks(&[rows, COLS])
                .filters(filters),
        )
        .unwrap();
    let n = (rows * COLS) as usize;
    for k in 0..chunks {
        ds.write(&chunk_sel(k), &vec![k as i32; n]).unwrap();
    }
    f.flush().unwrap();
    let done = AtomicBool::new(false);
    let start = Barrier::new(4);
    std::thread::scope(|s| {
        for t in 0..3u64 {
            let (ds, done, start) = (&ds, &done, &start);
            s.spawn(move || {
                let mut r = Rng(100 + t);
                start.wait();
                let mut reads = 0;
                while !done.load(Ordering::Acquire) || reads < 200 {
                    let k = r.next() % chunks;
                    // Whole chunks, and a row inside one.
                    let sel = if r.next().is_multiple_of(2) {
                        chunk_sel(k)
                    } else {
                        let row = k * rows + r.next() % rows;
                        Selection::from_ranges(&[(row, row + 1, 1), (0, COLS, 1)]).unwrap()
                    };
                    let v: Vec<i32> = ds.read(&sel).unwrap();
                    assert!(
                        v.iter().all(|&x| x == v[0]),
                        "chunk {k} read mixed: {} and others",
                        v[0]
                    );
                    assert_eq!(v[0] as u64 % chunks, k, "chunk {k} read another's value");
                    reads += 1;
                }
            });
        }
        let mut r = Rng(7);
        start.wait();
        for round in 1..=150u64 {
            let k = r.next() % chunks;
            let v = (k + chunks * round) as i32;
            ds.write(&chunk_sel(k), &vec![v; n]).unwrap();
            if round.is_multiple_of(every) {
                f.flush().unwrap();
            }
        }
        done.store(true, Ordering::Release);
    });
    // After the writer: every chunk reads its last value, cached or not.
    f.flush().unwrap();
    let mut last = vec![0i32; chunks as usize];
    for k in 0..chunks {
        last[k as usize] = ds.read::<i32>(&chunk_sel(k)).unwrap()[0];
    }
    drop(ds);
    f.close().unwrap();
    let f = File::open(&path).unwrap();
    let ds = f.root().dataset("d").unwrap();
    for k in 0..chunks {
        let v: Vec<i32> = ds.read(&chunk_sel(k)).unwrap();
        assert!(
            v.iter().all(|&x| x == last[k as usize]),
            "chunk {k} after reopen"
        );
    }
    f.check().unwrap();
}

#[test]
fn threads_read_whole_chunks_while_one_writes() {
    // Compressed chunks, cached (64 KiB chunks in a 1 MiB cache) and not.
    for cache in [1 << 20, 0] {
        run(&[Filter::Shuffle, Filter::Zstd(1)], cache, 24, 64, 10);
        run(&[Filter::Deflate(1)], cache, 24, 64, 10);
    }
    // Large unfiltered chunks read straight into the output while each
    // write commits, so freed extents are handed out again at once: the
    // reads most exposed to a writer reusing what they fetch.
    run(&[], 0, 6, 2048, 1);
}
