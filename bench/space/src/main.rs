//! The free-space tests: create and delete groups and datasets in patterns
//! that leave many holes, timed in CPU seconds from create to close, with
//! the free-space manager and with the naive free list.
//!
//! Each phase (a create or delete pass) ends with a commit: with the journal
//! on, space freed in a transaction is reused only after it commits.
//!
//! ```text
//! arca-bench-space --n 500,1000,5000 --json out.json
//! ```

use std::path::Path;

use arca::{DatasetOptions, Datatype, File, FreeListKind, Mode};
use clap::Parser;
use cpu_time::ProcessTime;

/// Bytes of each kind of dataset in test 2 and 3.
const BIG: u64 = 8192;
const MEDIUM: u64 = 4096;
const SMALL: u64 = 1024;

#[derive(Parser)]
#[command(about = "Free-space benchmark: seed tests 1-3, managed vs naive free list")]
struct Args {
    /// Comma-separated set sizes.
    #[arg(long, default_value = "500,1000,5000,10000,50000")]
    n: String,
    /// Largest N for test 3 (it creates 2N groups and 2N datasets).
    #[arg(long, default_value_t = 10000)]
    max_test3: usize,
    /// Which free lists to run: managed, naive or both.
    #[arg(long, default_value = "both")]
    lists: String,
    /// Largest N the naive list is run at (it is quadratic).
    #[arg(long, default_value_t = 50000)]
    max_naive: usize,
    /// Repetitions per point (the median is reported).
    #[arg(long, default_value_t = 1)]
    repeat: usize,
    /// Write the figures as JSON.
    #[arg(long)]
    json: Option<std::path::PathBuf>,
    /// Small sizes, one repetition: a run of seconds.
    #[arg(long)]
    quick: bool,
}

fn dataset(f: &File, name: &str, bytes: u64) -> arca::Result<()> {
    f.root()
        .create_dataset(
            name,
            &DatasetOptions::new(Datatype::uint(1), &[bytes]).allocate_early(true),
        )
        .map(|_| ())
}

fn test1(f: &File, n: usize) -> arca::Result<()> {
    let r = f.root();
    for i in 0..n {
        r.create_group(&format!("a{i}"))?;
    }
    for i in (1..n).step_by(2) {
        r.delete(&format!("a{i}"))?;
    }
    f.flush()?;
    for i in 0..n {
        r.create_group(&format!("b{i}"))?;
    }
    for i in 0..n {
        r.delete(&format!("b{i}"))?;
    }
    Ok(())
}

fn test2(f: &File, n: usize) -> arca::Result<()> {
    let r = f.root();
    for i in 0..n {
        dataset(f, &format!("big{i}"), BIG)?;
    }
    for i in (1..n).step_by(2) {
        r.delete(&format!("big{i}"))?;
    }
    f.flush()?;
    dataset(f, "huge", BIG * n as u64)?;
    r.delete("huge")?;
    f.flush()?;
    for i in 0..n {
        dataset(f, &format!("medium{i}"), MEDIUM)?;
    }
    for i in (1..n).step_by(2) {
        r.delete(&format!("medium{i}"))?;
    }
    f.flush()?;
    for i in 0..n {
        dataset(f, &format!("small{i}"), SMALL)?;
    }
    Ok(())
}

fn test3(f: &File, n: usize) -> arca::Result<()> {
    let r = f.root();
    for i in 0..n {
        r.create_group(&format!("a{i}"))?;
        dataset(f, &format!("a{i}/medium"), MEDIUM)?;
    }
    for i in (1..n).step_by(2) {
        r.delete(&format!("a{i}"))?;
    }
    f.flush()?;
    for i in 0..n {
        r.create_group(&format!("b{i}"))?;
        dataset(f, &format!("b{i}/small"), SMALL)?;
    }
    Ok(())
}

/// Live bytes at the end of each test (raw data only).
fn live_raw(test: usize, n: usize) -> u64 {
    let n = n as u64;
    match test {
        2 => n.div_ceil(2) * BIG + n.div_ceil(2) * MEDIUM + n * SMALL,
        3 => n.div_ceil(2) * MEDIUM + n * SMALL,
        _ => 0,
    }
}

fn run(test: usize, n: usize, list: FreeListKind, path: &Path) -> (f64, u64, arca::Stat) {
    let start = ProcessTime::now();
    let f = File::options()
        .mode(Mode::Create)
        .free_list(list)
        .open(path)
        .expect("create");
    match test {
        1 => test1(&f, n),
        2 => test2(&f, n),
        _ => test3(&f, n),
    }
    .expect("test run");
    f.close().expect("close");
    let cpu = start.elapsed().as_secs_f64();
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let stat = File::open(path).and_then(|f| f.stat()).expect("stat");
    (cpu, size, stat)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    let args = Args::parse();
    let ns: Vec<usize> = if args.quick {
        vec![500, 1000, 5000]
    } else {
        args.n
            .split(',')
            .filter_map(|s| s.trim().parse().ok())
            .collect()
    };
    let repeat = if args.quick { 1 } else { args.repeat.max(1) };
    let lists: Vec<(FreeListKind, &str)> = match args.lists.as_str() {
        "managed" => vec![(FreeListKind::Managed, "managed")],
        "naive" => vec![(FreeListKind::Naive, "naive")],
        _ => vec![
            (FreeListKind::Managed, "managed"),
            (FreeListKind::Naive, "naive"),
        ],
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("space.arca");
    let mut rows = vec![];
    println!(
        "{:>5} {:>7} {:>8} {:>10} {:>12} {:>12} {:>12}",
        "test", "N", "list", "cpu s", "file bytes", "live raw", "metadata"
    );
    for test in 1..=3 {
        for &n in &ns {
            if test == 3 && n > args.max_test3 {
                continue;
            }
            for &(list, name) in &lists {
                if list == FreeListKind::Naive && n > args.max_naive {
                    continue;
                }
                let mut times = vec![];
                let mut last = None;
                for _ in 0..repeat {
                    let (cpu, size, stat) = run(test, n, list, &path);
                    times.push(cpu);
                    last = Some((size, stat));
                }
                let (size, stat) = last.expect("one run");
                let cpu = median(times);
                println!(
                    "{test:>5} {n:>7} {name:>8} {cpu:>10.4} {size:>12} {:>12} {:>12}",
                    live_raw(test, n),
                    stat.metadata_bytes
                );
                rows.push(serde_json::json!({
                    "test": test, "n": n, "list": name, "cpu_s": cpu, "file_bytes": size,
                    "live_raw_bytes": live_raw(test, n), "metadata_bytes": stat.metadata_bytes,
                    "unused_bytes": stat.unused_bytes, "free_sections": stat.free_sections,
                }));
            }
        }
    }
    if let Some(p) = args.json {
        std::fs::write(&p, serde_json::to_string_pretty(&rows).expect("json")).expect("write json");
    }
}
