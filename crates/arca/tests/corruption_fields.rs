//! Damage behind valid checksums: a writer with a bug, or a crafted file,
//! can produce structures whose checksums pass but whose fields disagree.
//! Each case changes a few bytes of one structure (a field set to zero,
//! all-ones, off by one, another structure's address or length, the file's
//! length), makes the checksum valid again, and drives the public API over
//! the result: read-only, then an r+ session. Every call must return data or
//! an `arca::Error` — never panic, abort or hang — and the session must not
//! change objects it did not write (see `common/fields.rs`).
//!
//! Four cases always run first, one per class that would write over live
//! data unless the writer proves what the file says (`Fixture::class_cases`):
//! a B-tree leaf's size byte claiming the zeros after it, a contiguous
//! address moved onto another header, a lost link count (tree root or
//! entry zeroed).
//!
//! `ARCA_FIELDS_FULL=1` runs every case instead of a fixed sample;
//! `ARCA_TEST_SCALE` scales the sample (8,000 cases at 1); `ARCA_FIELDS_RANGE=A..B` runs
//! only cases A..B of the list (to reproduce one reported by index).

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::fields::{self, Case, Failure, Fixture};
use common::Rng;

/// Cases in the default (sampled) run: about a minute in release on two cores.
const DEFAULT_CASES: u32 = 8_000;
/// A single allocation this large can only come from a damaged size taken
/// at its word; it would abort (or exhaust memory) later anyway.
const ALLOC_LIMIT: usize = 1 << 30;
/// A case that runs this long is a hang.
const HANG: Duration = Duration::from_secs(60);

thread_local! {
    /// The case this thread runs, readable from the allocator without allocating.
    static CURRENT: Cell<([u8; 200], usize)> = const { Cell::new(([0; 200], 0)) };
}

fn set_current(s: &str) {
    let mut b = [0u8; 200];
    let n = s.len().min(200);
    b[..n].copy_from_slice(&s.as_bytes()[..n]);
    CURRENT.with(|c| c.set((b, n)));
}

/// Refuses huge allocations after naming the case that asked.
struct Guard;

fn too_big(size: usize) -> ! {
    let (b, n) = CURRENT.with(|c| c.get());
    let mut e = std::io::stderr().lock();
    let _ = e.write_all(b"\nallocation of ");
    let _ = e.write_all(size.to_string().as_bytes());
    let _ = e.write_all(b" bytes refused (abort) in case: ");
    let _ = e.write_all(&b[..n]);
    let _ = e.write_all(b"\n");
    // Where it was asked for (small allocations only from here on).
    let bt = std::backtrace::Backtrace::force_capture().to_string();
    let mut lines = bt.lines().peekable();
    while let Some(l) = lines.next() {
        if l.contains("arca::") {
            let _ = e.write_all(l.trim().as_bytes());
            if let Some(at) = lines.next_if(|n| n.trim_start().starts_with("at ")) {
                let _ = e.write_all(b"  ");
                let _ = e.write_all(at.trim().as_bytes());
            }
            let _ = e.write_all(b"\n");
        }
    }
    std::process::abort()
}

// SAFETY: forwards to `System`, refusing only by aborting.
unsafe impl GlobalAlloc for Guard {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        if l.size() > ALLOC_LIMIT {
            too_big(l.size());
        }
        System.alloc(l)
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        if l.size() > ALLOC_LIMIT {
            too_big(l.size());
        }
        System.alloc_zeroed(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        if new > ALLOC_LIMIT {
            too_big(new);
        }
        System.realloc(p, l, new)
    }
}

#[global_allocator]
static GUARD: Guard = Guard;

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// The cases to run, in a fixed order: the classes that write over live
/// data unless proven first, then every case or a sample.
fn select(fx: &Fixture) -> Vec<Case> {
    let mut out = fx.class_cases();
    if env("ARCA_FIELDS_FULL").is_some_and(|v| v != "0") {
        out.extend((0..fx.targets.len()).flat_map(|t| fx.cases_of(t)));
        return out;
    }
    let budget = common::scaled(DEFAULT_CASES) as usize;
    // Every distinct structure gets an equal share; chunks are many and
    // alike (the decoders behind them are few), so a spread of them will do.
    let mut targets = vec![];
    for what in ["chunk", "vlen chunk"] {
        let of: Vec<usize> = fx
            .distinct_targets()
            .into_iter()
            .filter(|&t| fx.targets[t].ext.what == what)
            .collect();
        let step = of.len().div_ceil(10).max(1);
        targets.extend(of.into_iter().step_by(step));
    }
    targets.extend(
        fx.distinct_targets()
            .into_iter()
            .filter(|&t| !matches!(fx.targets[t].ext.what, "chunk" | "vlen chunk")),
    );
    targets.sort_unstable();
    let mut rng = Rng(0x5eed_f1e1_d5a7_a5e1);
    let mut per: Vec<Vec<Case>> = targets
        .iter()
        .map(|&t| {
            let mut c = fx.cases_of(t);
            rng.shuffle(&mut c);
            c
        })
        .collect();
    while out.len() < budget && per.iter().any(|c| !c.is_empty()) {
        for c in per.iter_mut() {
            if let Some(x) = c.pop() {
                out.push(x);
            }
        }
    }
    out.truncate(budget);
    out
}

#[test]
fn fields_behind_checksums() {
    let image = fields::build();
    let fx = Fixture::new(image);
    let again = fields::build();
    if again != fx.image {
        let at = (0..fx.image.len().min(again.len()))
            .find(|&i| fx.image[i] != again[i])
            .unwrap_or(fx.image.len().min(again.len()));
        let ext = fx
            .map
            .iter()
            .find(|e| e.addr <= at as u64 && at as u64 - e.addr < e.len);
        panic!(
            "the fixture is not deterministic: {} and {} bytes, first difference at {at} in {ext:?}",
            fx.image.len(),
            again.len()
        );
    }
    for what in [
        "superblock",
        "object header",
        "B-tree page",
        "attribute blob",
        "fill blob",
        "free-space record",
        "chunk",
        "contiguous data",
        "vlen chunk",
        "vlen free ranges",
        "free section",
    ] {
        assert!(
            fx.map.iter().any(|e| e.what == what),
            "the fixture has no {what}"
        );
    }
    assert_eq!(
        fx.class_cases().len(),
        4,
        "the fixture lost a class's layout"
    );
    let free: u64 = fx
        .map
        .iter()
        .filter(|e| e.what == "free section")
        .map(|e| e.len)
        .sum();
    assert!(
        free < fx.image.len() as u64 / 8,
        "free space is an eighth of the fixture: proofs would run for it alone"
    );
    // Recomputing every checksum of the intact file changes nothing: the
    // checksum layouts here are the format's.
    assert!(fx.refix() == fx.image, "checksums recomputed differently");
    fields::install_panic_hook();
    let intact = fields::run(fx.image.clone(), &fx.datasets);
    assert!(
        intact.is_empty(),
        "the intact file fails: {:?}",
        intact.iter().map(|f| f.to_string()).collect::<Vec<_>>()
    );

    let mut cases = select(&fx);
    let first = match env("ARCA_FIELDS_RANGE") {
        Some(r) => {
            let (a, b) = r.split_once("..").expect("ARCA_FIELDS_RANGE is A..B");
            let (a, b): (usize, usize) = (a.parse().unwrap(), b.parse().unwrap());
            cases = cases[a.min(cases.len())..b.min(cases.len())].to_vec();
            a
        }
        None => 0,
    };

    let started = Instant::now();
    let running: Mutex<BTreeMap<usize, (Instant, String)>> = Mutex::new(BTreeMap::new());
    let done = std::sync::atomic::AtomicBool::new(false);
    let threads = 2;
    let results: Vec<Vec<(usize, Vec<Failure>)>> = std::thread::scope(|s| {
        let fx = &fx;
        let cases = &cases;
        let running = &running;
        let done = &done;
        s.spawn(move || {
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(200));
                for (i, (t, d)) in running.lock().unwrap().iter() {
                    if t.elapsed() > HANG {
                        eprintln!("\ncase {} hangs (over {HANG:?}): {d}", first + i);
                        std::process::exit(1);
                    }
                }
            }
        });
        let workers: Vec<_> = (0..threads)
            .map(|k| {
                s.spawn(move || {
                    let mut out = vec![];
                    for i in (k..cases.len()).step_by(threads) {
                        let d = format!("#{} {}", first + i, fx.describe(&cases[i]));
                        set_current(&d);
                        running.lock().unwrap().insert(i, (Instant::now(), d));
                        let f = fields::run(fx.apply(&cases[i..=i]), &fx.datasets);
                        running.lock().unwrap().remove(&i);
                        if !f.is_empty() {
                            out.push((i, f));
                        }
                    }
                    out
                })
            })
            .collect();
        let r = workers.into_iter().map(|w| w.join().unwrap()).collect();
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        r
    });
    let _ = std::panic::take_hook();

    // One line per distinct failure: how often, and the first case.
    let mut by_sig: BTreeMap<String, (usize, usize, String)> = BTreeMap::new();
    let mut failing = 0;
    for (i, fails) in results.into_iter().flatten() {
        failing += 1;
        for f in fails {
            let e = by_sig
                .entry(f.signature())
                .or_insert((0, usize::MAX, String::new()));
            e.0 += 1;
            if i < e.1 {
                e.1 = i;
                e.2 = f.to_string();
            }
        }
    }
    eprintln!(
        "{} cases in {:.1?}, {failing} failing, {} distinct failures",
        cases.len(),
        started.elapsed(),
        by_sig.len()
    );
    let mut report = String::new();
    for (sig, (n, i, msg)) in &by_sig {
        report.push_str(&format!(
            "\n{sig}\n  {n} times; first: case #{} {}\n  {msg}\n",
            first + i,
            fx.describe(&cases[*i])
        ));
    }
    assert!(by_sig.is_empty(), "{report}");
}
