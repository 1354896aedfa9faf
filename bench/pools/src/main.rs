//! The free-list benchmark: create N chunked, compressed datasets, then
//! rewrite every one of them R times, with arca's free lists on and off.
//!
//! Each (N, R, pools) point runs in a fresh child process (this binary with
//! `--child`) so that one point's heap cannot shape the next. A counting
//! global allocator (`stats_alloc`) reports the allocator calls made in the
//! rewrite loop, the peak live heap (sampled after every library call and
//! every 50 µs by a sampler thread) and
//! the child's peak resident set; the rewrite loop is timed. Repeats give
//! medians.
//!
//! ```text
//! arca-bench-pools                      # {500,1000,1500} x {15,30,45}, 3 repeats
//! arca-bench-pools --quick --json out.json
//! ```

use std::alloc::System;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arca::{DatasetOptions, Datatype, File, Filter, Selection};
use clap::Parser;
use serde_json::{json, Value};
use stats_alloc::{Region, StatsAlloc};

#[global_allocator]
static GLOBAL: StatsAlloc<System> = StatsAlloc::system();

#[derive(Parser)]
#[command(about = "Free-list benchmark: datasets x rewrites, pools on and off")]
struct Args {
    /// Comma-separated dataset counts.
    #[arg(long, default_value = "500,1000,1500")]
    datasets: String,
    /// Comma-separated rewrite counts.
    #[arg(long, default_value = "15,30,45")]
    rewrites: String,
    /// Elements (f64) per dataset.
    #[arg(long, default_value_t = 4096)]
    elems: u64,
    /// Elements per chunk.
    #[arg(long, default_value_t = 1024)]
    chunk: u64,
    /// Repetitions per point (medians are reported).
    #[arg(long, default_value_t = 3)]
    repeat: usize,
    /// Which modes to run: on, off or both.
    #[arg(long, default_value = "both")]
    pools: String,
    /// Small sizes, one repetition: a run of seconds.
    #[arg(long)]
    quick: bool,
    /// Write every figure as JSON.
    #[arg(long)]
    json: Option<std::path::PathBuf>,
    /// Run one point in this process and print it as JSON (used internally).
    #[arg(long)]
    child: bool,
}

/// Highest live heap seen, by the per-call samples and the sampler thread.
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn note_peak() -> usize {
    let live = live_bytes();
    PEAK.fetch_max(live, Ordering::Relaxed);
    live
}

fn live_bytes() -> usize {
    let s = GLOBAL.stats();
    // `realloc` already moves the allocated/deallocated byte counts.
    let live = s.bytes_allocated as i128 - s.bytes_deallocated as i128;
    live.max(0) as usize
}

/// Peak resident set of this process in bytes (Linux; 0 elsewhere).
fn peak_rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| {
                l.split_whitespace()
                    .nth(1)
                    .and_then(|v| v.parse::<u64>().ok())
            })
        })
        .map_or(0, |kb| kb * 1024)
}

fn values(buf: &mut [f64], ds: usize, round: usize) {
    for (j, v) in buf.iter_mut().enumerate() {
        *v = ((j + 7 * round + ds) % 1000) as f64 * 0.5;
    }
}

/// One point: N datasets, R rewrites, pools on or off.
fn child(
    n: usize,
    rewrites: usize,
    elems: u64,
    chunk: u64,
    pools: bool,
) -> Result<Value, Box<dyn std::error::Error>> {
    arca::set_pooling(pools);
    // Samples the live heap every 50 µs, so transient buffers inside a
    // library call count too, not only what is live between calls.
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                note_peak();
                std::thread::sleep(Duration::from_micros(50));
            }
        })
    };
    let dir = tempfile::tempdir()?;
    let mut peak = note_peak();
    let f = File::create(dir.path().join("pools.arca"))?;
    let opts = DatasetOptions::new(Datatype::parse("<f8")?, &[elems])
        .chunks(&[chunk])
        .filters(&[Filter::Shuffle, Filter::Zstd(1)]);
    let mut buf = vec![0f64; elems as usize];
    let all = Selection::all(&[elems]);
    let mut sets = Vec::with_capacity(n);
    for i in 0..n {
        let ds = f.root().create_dataset(&format!("d{i}"), &opts)?;
        values(&mut buf, i, 0);
        ds.write(&all, &buf)?;
        sets.push(ds);
        peak = peak.max(note_peak());
    }
    f.flush()?;
    peak = peak.max(note_peak());
    // The rewrite loop's own peak, above what was live when it started.
    let loop_base = live_bytes();
    PEAK.store(loop_base, Ordering::Relaxed);
    let mut loop_peak = loop_base;
    let region = Region::new(&GLOBAL);
    let start = Instant::now();
    for round in 1..=rewrites {
        for (i, ds) in sets.iter().enumerate() {
            values(&mut buf, i, round);
            ds.write(&all, &buf)?;
            loop_peak = loop_peak.max(note_peak());
        }
        f.flush()?;
        loop_peak = loop_peak.max(note_peak());
    }
    let secs = start.elapsed().as_secs_f64();
    let change = region.change();
    let stats = arca::pool_stats();
    let held: usize = stats.iter().map(|s| s.held_bytes).sum();
    // What each list keeps, to see where held memory goes.
    let held_by_list: serde_json::Map<String, Value> = stats
        .iter()
        .filter(|s| s.held_bytes > 0)
        .map(|s| (s.name.to_string(), json!(s.held_bytes)))
        .collect();
    stop.store(true, Ordering::Relaxed);
    let _ = sampler.join();
    let loop_peak = loop_peak.max(PEAK.load(Ordering::Relaxed));
    let peak = peak.max(loop_peak);
    drop(sets);
    f.close()?;
    Ok(json!({
        "datasets": n,
        "rewrites": rewrites,
        "pools": pools,
        "time_s": secs,
        "alloc_calls": change.allocations + change.reallocations,
        "dealloc_calls": change.deallocations,
        "peak_heap": peak,
        "loop_peak_heap": loop_peak - loop_base,
        "peak_rss": peak_rss(),
        "pool_held_bytes": held,
        "pool_held_by_list": held_by_list,
    }))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    if v.is_empty() {
        return 0.0;
    }
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

fn list(s: &str) -> Vec<usize> {
    s.split(',').filter_map(|x| x.trim().parse().ok()).collect()
}

fn run_point(args: &Args, n: usize, r: usize, pools: bool) -> Result<Value, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut runs: Vec<Value> = vec![];
    for _ in 0..args.repeat.max(1) {
        let out = Command::new(&exe)
            .args([
                "--child",
                "--datasets",
                &n.to_string(),
                "--rewrites",
                &r.to_string(),
                "--elems",
                &args.elems.to_string(),
                "--chunk",
                &args.chunk.to_string(),
                "--pools",
                if pools { "on" } else { "off" },
            ])
            .output()
            .map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).into_owned());
        }
        let v: Value =
            serde_json::from_slice(&out.stdout).map_err(|e| format!("child output: {e}"))?;
        runs.push(v);
    }
    let med = |k: &str| median(runs.iter().filter_map(|v| v[k].as_f64()).collect());
    Ok(json!({
        "datasets": n,
        "rewrites": r,
        "pools": pools,
        "time_s": med("time_s"),
        "alloc_calls": med("alloc_calls"),
        "dealloc_calls": med("dealloc_calls"),
        "peak_heap": med("peak_heap"),
        "loop_peak_heap": med("loop_peak_heap"),
        "peak_rss": med("peak_rss"),
        "pool_held_bytes": med("pool_held_bytes"),
        // A snapshot, not a median: the first run's.
        "pool_held_by_list": runs[0]["pool_held_by_list"].clone(),
        "repeats": runs.len(),
    }))
}

fn mib(b: f64) -> String {
    format!("{:.1}", b / (1024.0 * 1024.0))
}

fn main() {
    let mut args = Args::parse();
    if args.child {
        let n = list(&args.datasets).first().copied().unwrap_or(1);
        let r = list(&args.rewrites).first().copied().unwrap_or(1);
        match child(n, r, args.elems, args.chunk, args.pools != "off") {
            Ok(v) => println!("{v}"),
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(1);
            }
        }
        return;
    }
    if args.quick {
        args.datasets = "50,100,150".into();
        args.rewrites = "3,6,9".into();
        args.repeat = 1;
    }
    let modes: Vec<bool> = match args.pools.as_str() {
        "on" => vec![true],
        "off" => vec![false],
        _ => vec![true, false],
    };
    let mut points = vec![];
    println!(
        "{:>8} {:>8} {:>5} {:>12} {:>10} {:>10} {:>10} {:>9}",
        "datasets", "rewrites", "pools", "alloc calls", "peak MiB", "loop KiB", "RSS MiB", "time s"
    );
    for &r in &list(&args.rewrites) {
        for &n in &list(&args.datasets) {
            for &pools in &modes {
                match run_point(&args, n, r, pools) {
                    Ok(v) => {
                        println!(
                            "{:>8} {:>8} {:>5} {:>12} {:>10} {:>10.0} {:>10} {:>9.3}",
                            n,
                            r,
                            if pools { "on" } else { "off" },
                            v["alloc_calls"].as_f64().unwrap_or(0.0) as u64,
                            mib(v["peak_heap"].as_f64().unwrap_or(0.0)),
                            v["loop_peak_heap"].as_f64().unwrap_or(0.0) / 1024.0,
                            mib(v["peak_rss"].as_f64().unwrap_or(0.0)),
                            v["time_s"].as_f64().unwrap_or(0.0),
                        );
                        points.push(v);
                    }
                    Err(e) => {
                        eprintln!("point {n}x{r} pools={pools} failed: {e}");
                        std::process::exit(1);
                    }
                }
            }
        }
    }
    // Ratios pools-on / pools-off per point.
    let find = |n: u64, r: u64, p: bool| {
        points.iter().find(|v| {
            v["datasets"].as_u64() == Some(n)
                && v["rewrites"].as_u64() == Some(r)
                && v["pools"].as_bool() == Some(p)
        })
    };
    let mut ratios = vec![];
    if modes.len() == 2 {
        println!(
            "\n{:>8} {:>8} {:>16} {:>12} {:>12} {:>10}",
            "datasets", "rewrites", "alloc off/on", "peak on/off", "loop on/off", "time on/off"
        );
        for &r in &list(&args.rewrites) {
            for &n in &list(&args.datasets) {
                if let (Some(on), Some(off)) = (
                    find(n as u64, r as u64, true),
                    find(n as u64, r as u64, false),
                ) {
                    let g = |v: &Value, k: &str| v[k].as_f64().unwrap_or(0.0);
                    let calls = g(off, "alloc_calls") / g(on, "alloc_calls").max(1.0);
                    let peak = g(on, "peak_heap") / g(off, "peak_heap").max(1.0);
                    let time = g(on, "time_s") / g(off, "time_s").max(1e-9);
                    let lp = g(on, "loop_peak_heap") / g(off, "loop_peak_heap").max(1.0);
                    println!("{n:>8} {r:>8} {calls:>16.1} {peak:>12.2} {lp:>12.2} {time:>10.2}");
                    ratios.push(json!({"datasets": n, "rewrites": r,
                        "alloc_calls_off_over_on": calls, "peak_heap_on_over_off": peak,
                        "loop_peak_heap_on_over_off": lp,
                        "time_on_over_off": time}));
                }
            }
        }
    }
    if let Some(path) = &args.json {
        let doc = json!({
            "elems": args.elems,
            "chunk": args.chunk,
            "filters": ["shuffle", "zstd(1)"],
            "points": points,
            "ratios": ratios,
        });
        if let Err(e) = std::fs::write(path, serde_json::to_string_pretty(&doc).unwrap_or_default())
        {
            eprintln!("cannot write {}: {e}", path.display());
            std::process::exit(1);
        }
    }
}
