//! The background thread on a busy machine: it starts only once the arena
//! is large enough and stops when it shrinks, codec contexts are created
//! on first use, and the arena's thread never waits for work the
//! background thread has not started (it claims it and does it itself).
//! Everything is asserted on statistics; the background thread is held
//! still by a codec that blocks in it, never by delays.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use compll::{Arena, BlockCodec, Codec, Config, Handle};

/// One node of 20,000 bytes per 32 KiB block, its first bytes `i`.
fn fill(a: &Arena, n: usize) -> Vec<Handle> {
    (0..n)
        .map(|i| {
            let h = a.alloc(20_000).unwrap();
            a.write_at(h, 0, &[i as u8; 64]).unwrap();
            h
        })
        .collect()
}

fn check(a: &Arena, hs: &[(usize, Handle)]) {
    for &(i, h) in hs {
        assert_eq!(a.read(h).unwrap()[..64], [i as u8; 64], "node {i}");
    }
    a.check_invariants().unwrap();
}

#[test]
fn a_small_arena_starts_no_thread_and_a_shrinking_one_stops_it() {
    let cfg = Config::default()
        .uncompressed_blocks(1)
        .codec(Codec::Zstd { level: 1 })
        .background_compression(2)
        .background_from(16);
    let a = Arena::new(cfg).unwrap();
    let hs = fill(&a, 10);
    a.flush().unwrap();
    let s = a.stats();
    assert!(!s.background_running);
    assert_eq!(s.background_starts, 0);
    assert_eq!(s.compressions, 10);
    // Only the arena's own compression context: the same as without a
    // background thread configured.
    let plain = Arena::new(Config::default().uncompressed_blocks(1)).unwrap();
    fill(&plain, 10);
    plain.flush().unwrap();
    assert_eq!(s.codec_context_bytes, plain.stats().codec_context_bytes);

    // Grown past 16 blocks: the thread runs.
    let more = fill(&a, 30);
    let s = a.stats();
    assert!(s.background_running);
    assert_eq!(s.background_starts, 1);
    assert!(s.codec_context_bytes >= plain.stats().codec_context_bytes);

    // Shrunk below 8 blocks: stopped, its context no longer counted.
    let mut live: Vec<(usize, Handle)> = hs.into_iter().enumerate().collect();
    live.extend(more.into_iter().enumerate());
    let keep = live.split_off(34);
    for &(_, h) in &live {
        a.free(h).unwrap();
    }
    a.flush().unwrap();
    let s = a.stats();
    assert!(s.blocks < 8, "{} blocks", s.blocks);
    assert!(!s.background_running);
    assert_eq!(s.background_starts, 1);
    check(&a, &keep);

    // Grown again: started a second time.
    fill(&a, 20);
    assert!(a.stats().background_running);
    assert_eq!(a.stats().background_starts, 2);
    check(&a, &keep);
}

#[test]
fn codec_contexts_are_created_on_first_use() {
    let a = Arena::new(Config::default().uncompressed_blocks(1)).unwrap();
    let h = a.alloc(100).unwrap();
    assert_eq!(a.stats().codec_context_bytes, 0, "nothing compressed yet");
    a.flush().unwrap();
    let compressing = a.stats().codec_context_bytes;
    assert!(compressing > 0);
    a.read(h).unwrap();
    assert!(a.stats().codec_context_bytes > compressing, "decompressed");
    // An arena whose thread never started holds no context for it.
    let b = Arena::new(
        Config::default()
            .background_compression(2)
            .readahead(4)
            .background_from(1000),
    )
    .unwrap();
    b.alloc(100).unwrap();
    assert_eq!(b.stats().codec_context_bytes, 0);
}

/// A codec that stores runs of zeros by their length; in the background thread, its
/// first compression blocks until the arena's thread has decompressed
/// (with `count_compress`, also compressed) `open_after` blocks, or a
/// deadlock guard of 30 s passes, which the tests report as a failure.
struct Gate {
    open_after: u64,
    count_compress: bool,
    decompressed_here: AtomicU64,
    held: AtomicBool,
    timed_out: AtomicBool,
    lock: Mutex<()>,
    cv: Condvar,
}

impl Gate {
    fn new(open_after: u64, count_compress: bool) -> Arc<Gate> {
        Arc::new(Gate {
            open_after,
            count_compress,
            decompressed_here: AtomicU64::new(0),
            held: AtomicBool::new(false),
            timed_out: AtomicBool::new(false),
            lock: Mutex::new(()),
            cv: Condvar::new(),
        })
    }

    fn in_thread() -> bool {
        std::thread::current().name() == Some("compll-compress")
    }

    fn is_open(&self) -> bool {
        self.decompressed_here.load(Ordering::SeqCst) >= self.open_after
    }

    /// Counts one codec call on the arena's thread.
    fn count(&self) {
        let _g = self.lock.lock().unwrap();
        self.decompressed_here.fetch_add(1, Ordering::SeqCst);
        self.cv.notify_all();
    }
}

impl BlockCodec for Gate {
    fn compress(&self, src: &[u8], dst: &mut Vec<u8>) -> Result<(), String> {
        if Gate::in_thread() && !self.held.swap(true, Ordering::SeqCst) {
            let g = self.lock.lock().unwrap();
            let (_g, r) = self
                .cv
                .wait_timeout_while(g, Duration::from_secs(30), |_| !self.is_open())
                .unwrap();
            if r.timed_out() {
                self.timed_out.store(true, Ordering::SeqCst);
            }
        } else if !Gate::in_thread() && self.count_compress {
            self.count();
        }
        // Pieces of (zero bytes, literal bytes, the literals).
        let mut i = 0;
        while i < src.len() {
            let zeros = src[i..].iter().take_while(|&&b| b == 0).count();
            let lits = src[i + zeros..].iter().take_while(|&&b| b != 0).count();
            dst.extend_from_slice(&(zeros as u32).to_le_bytes());
            dst.extend_from_slice(&(lits as u32).to_le_bytes());
            dst.extend_from_slice(&src[i + zeros..i + zeros + lits]);
            i += zeros + lits;
        }
        Ok(())
    }

    fn decompress(&self, src: &[u8], dst: &mut [u8]) -> Result<(), String> {
        if !Gate::in_thread() {
            self.count();
        }
        let word = |at: usize| -> Result<usize, String> {
            let b = src.get(at..at + 4).ok_or("short")?;
            Ok(u32::from_le_bytes(b.try_into().unwrap()) as usize)
        };
        let (mut at, mut out) = (0, 0);
        while at < src.len() {
            let (zeros, lits) = (word(at)?, word(at + 4)?);
            at += 8;
            let lit = src.get(at..at + lits).ok_or("short")?;
            dst.get_mut(out..out + zeros).ok_or("long")?.fill(0);
            out += zeros;
            dst.get_mut(out..out + lits)
                .ok_or("long")?
                .copy_from_slice(lit);
            out += lits;
            at += lits;
        }
        if out == dst.len() {
            Ok(())
        } else {
            Err("short output".into())
        }
    }
}

#[test]
fn settle_compresses_what_the_thread_has_not_started() {
    // The thread's first compression blocks until this thread has
    // compressed once, which, with no reads, happens only if it takes a
    // compression queued for the thread over.
    let gate = Gate::new(1, true);
    let a = Arena::new(
        Config::default()
            .uncompressed_blocks(1)
            .codec(Codec::Custom(gate.clone()))
            .background_compression(2),
    )
    .unwrap();
    // Two evictions, both handed to the thread: one it holds (or has not
    // started on), one queued behind it.
    let hs = fill(&a, 3);
    // Settle compresses the queued block here rather than wait for a
    // thread that cannot go on; the thread's own block is the only one
    // waited for, and it goes on once this thread has compressed.
    a.settle();
    assert!(!gate.timed_out.load(Ordering::SeqCst), "settle waited");
    let s = a.stats();
    assert!(s.taken_over >= 1, "{s:?}");
    assert_eq!(s.compressions, 2);
    check(&a, &hs.into_iter().enumerate().collect::<Vec<_>>());
}

#[test]
fn reads_never_wait_for_loads_the_thread_has_not_started() {
    // The thread blocks in its first compression until this thread has
    // decompressed 20 blocks: every load it was asked for meanwhile is
    // queued behind that compression, and the reads that need them must
    // unpack them here rather than wait.
    let gate = Gate::new(20, false);
    let a = Arena::new(
        Config::default()
            .uncompressed_blocks(1)
            .codec(Codec::Custom(gate.clone()))
            .background_compression(2)
            .readahead(4),
    )
    .unwrap();
    let hs = fill(&a, 40);
    // Walk down from the newest node (blocks 39 .. 2; the first two
    // blocks wait for the thread and are not read).
    for (i, h) in hs.iter().enumerate().rev().take(38) {
        assert_eq!(a.read(*h).unwrap()[..64], [i as u8; 64]);
    }
    let s = a.stats();
    assert!(!gate.timed_out.load(Ordering::SeqCst), "a read waited");
    assert!(s.taken_over >= 1, "{s:?}");
    a.settle();
    check(&a, &hs.into_iter().enumerate().collect::<Vec<_>>());
}
