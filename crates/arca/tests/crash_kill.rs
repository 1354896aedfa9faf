//! A real process killed with SIGKILL while it commits transactions, again
//! and again: after every kill the file opens (rolling back the journal),
//! passes `check`, and shows exactly one committed transaction's state,
//! variable-length appends included. Trials: `ARCA_KILL_TRIALS` (default
//! 200).
//!
//! No libtest harness (`harness = false`): the same binary is the child,
//! which must not count as a test. It takes libtest's name filters,
//! `--exact`, `--skip` and `--list`, and exits non-zero on failure.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use arca::{AttrValue, DatasetOptions, Datatype, File, Filter, Selection, VlenOptions};

mod common;
use common::Rng;

const CHILD_ENV: &str = "ARCA_KILL_CHILD";
const ROWS: u64 = 16;
const REGIONS: u64 = 100;
/// Elements of the variable-length datasets, written round-robin.
const LOG: u64 = 32;
/// The longest a child may take to report its next step.
const STALL: Duration = Duration::from_secs(60);

fn row(i: u64) -> Selection {
    Selection::from_ranges(&[(i % ROWS, i % ROWS + 1, 1), (0, 256, 1)]).unwrap()
}

fn region(i: u64) -> Selection {
    let a = (i % REGIONS) * 10;
    Selection::from_ranges(&[(a, a + 10, 1)]).unwrap()
}

fn slot(i: u64) -> Selection {
    Selection::from_ranges(&[(i % LOG, i % LOG + 1, 1)]).unwrap()
}

/// The string transaction `i` appends (lengths vary, some cross chunks).
fn line(i: u64) -> String {
    format!("transaction {i} {}", "=".repeat((i * 37 % 300) as usize))
}

/// The ragged row transaction `i` writes.
fn floats(i: u64) -> Vec<f32> {
    (0..i * 13 % 40).map(|k| (i * 100 + k) as f32).collect()
}

/// Run by the child process: commit transactions until killed, reporting
/// each step on stdout (`begin i`, `wrote i`, `committed i`).
fn child_workload(path: &str) -> ! {
    let f = File::open_rw(path).unwrap();
    let mut i = f
        .root()
        .attrs()
        .get("counter")
        .unwrap()
        .to_vec::<u64>()
        .unwrap()[0];
    println!("ready {i}");
    loop {
        i += 1;
        f.transaction(|f| {
            println!("begin {i}");
            let r = f.root();
            r.attrs().set("counter", &AttrValue::scalar(i))?;
            r.dataset("rows")?.write(&row(i), &vec![i as i64; 256])?;
            r.dataset("flat")?.write(&region(i), &[i as i64; 10])?;
            r.dataset("log")?.write_strings(&slot(i), &[line(i)])?;
            let v = floats(i);
            let ragged = r.dataset("ragged")?;
            ragged.write_ragged(&slot(i), &v, &[0, v.len() as u64])?;
            r.create_group(&format!("g{i}"))?;
            if i > 3 && r.contains(&format!("g{}", i - 3))? {
                r.delete(&format!("g{}", i - 3))?;
            }
            println!("wrote {i}");
            Ok(())
        })
        .unwrap();
        println!("committed {i}");
    }
}

fn create(path: &Path) {
    let f = File::create(path).unwrap();
    let r = f.root();
    r.attrs().set("counter", &AttrValue::scalar(0u64)).unwrap();
    r.create_dataset(
        "rows",
        &DatasetOptions::new(Datatype::int(8), &[ROWS, 256])
            .chunks(&[4, 256])
            .filters(&[Filter::Zstd(1)]),
    )
    .unwrap();
    r.create_dataset(
        "flat",
        &DatasetOptions::new(Datatype::int(8), &[REGIONS * 10]),
    )
    .unwrap();
    // Small chunks, so appends fill and cross them often.
    let small = VlenOptions::default().chunk_bytes(4096);
    r.create_dataset(
        "log",
        &DatasetOptions::new(Datatype::VlenStr, &[LOG]).vlen(small.clone()),
    )
    .unwrap();
    r.create_dataset(
        "ragged",
        &DatasetOptions::new(Datatype::vlen(Datatype::float(4)).unwrap(), &[LOG])
            .chunks(&[8])
            .vlen(small.reuse_space(true)),
    )
    .unwrap();
    f.close().unwrap();
}

/// Check the file after a kill; returns the committed counter.
fn verify(path: &Path, trial: usize) -> u64 {
    let f = File::open_rw(path).unwrap_or_else(|e| panic!("trial {trial}: reopen failed: {e}"));
    f.check()
        .unwrap_or_else(|e| panic!("trial {trial}: check failed: {e}"));
    let r = f.root();
    let c = r.attrs().get("counter").unwrap().to_vec::<u64>().unwrap()[0];
    if c > 0 {
        let v: Vec<i64> = r.dataset("rows").unwrap().read(&row(c)).unwrap();
        assert!(
            v.iter().all(|&x| x == c as i64),
            "trial {trial}: row of transaction {c} is torn"
        );
        let v: Vec<i64> = r.dataset("flat").unwrap().read(&region(c)).unwrap();
        assert!(
            v.iter().all(|&x| x == c as i64),
            "trial {trial}: region of transaction {c} is torn"
        );
        assert!(
            r.contains(&format!("g{c}")).unwrap(),
            "trial {trial}: group of transaction {c} missing"
        );
    }
    // Each slot holds the last committed transaction's append to it.
    let all = Selection::all(&[LOG]);
    let log = r.dataset("log").unwrap().read_strings(&all).unwrap();
    let (values, offsets) = r
        .dataset("ragged")
        .unwrap()
        .read_ragged::<f32>(&all)
        .unwrap();
    for k in 0..LOG {
        let last = (1..=c).rev().take(LOG as usize).find(|j| j % LOG == k);
        let want = last.map(line).unwrap_or_default();
        assert_eq!(
            log[k as usize], want,
            "trial {trial}: string {k} does not belong to state {c}"
        );
        let got = &values[offsets[k as usize] as usize..offsets[k as usize + 1] as usize];
        assert_eq!(
            got,
            last.map(floats).unwrap_or_default(),
            "trial {trial}: ragged row {k} does not belong to state {c}"
        );
    }
    let groups = r.member_names().unwrap();
    for g in groups.iter().filter(|g| g.starts_with('g')) {
        let n: u64 = g[1..].parse().unwrap();
        assert!(
            n <= c && n + 3 > c,
            "trial {trial}: group {g} does not belong to state {c}"
        );
    }
    c
}

/// A child working on `path`, whose step reports arrive on a channel.
struct Worker {
    child: Child,
    steps: mpsc::Receiver<String>,
}

impl Worker {
    fn spawn(path: &Path) -> Self {
        let exe = std::env::current_exe().unwrap();
        let mut child = Command::new(exe)
            .env(CHILD_ENV, path)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        let (tx, steps) = mpsc::channel();
        std::thread::spawn(move || {
            for l in out.lines().map_while(Result::ok) {
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        Worker { child, steps }
    }

    /// Wait for the child's `n`-th report after `ready` that starts with
    /// one of `kinds`.
    fn wait_for(&mut self, kinds: &[&str], n: u64) {
        let mut seen = 0;
        let mut ready = false;
        while seen < n || !ready {
            let l = self.steps.recv_timeout(STALL).unwrap_or_else(|e| {
                let _ = self.child.kill();
                let status = self.child.wait().ok();
                panic!("the child stopped reporting ({e}); exit status {status:?}")
            });
            if l.starts_with("ready") {
                ready = true;
            } else if kinds.iter().any(|k| l.starts_with(k)) {
                seen += 1;
            }
        }
    }

    /// SIGKILL, after spinning `delay` past the last awaited report (the
    /// kill lands anywhere in the work that follows it).
    fn kill_after(mut self, delay: Duration) {
        let t = Instant::now();
        while t.elapsed() < delay {
            std::hint::spin_loop();
        }
        self.child.kill().unwrap();
        let status = self.child.wait().unwrap();
        assert!(
            status.code().is_none(),
            "the child exited by itself before the kill: {status}"
        );
    }
}

fn trials() -> usize {
    match std::env::var("ARCA_KILL_TRIALS") {
        Err(_) => 200,
        Ok(s) => match s.parse() {
            Ok(n) if n > 0 => n,
            _ => panic!("ARCA_KILL_TRIALS={s:?}: need a positive whole number"),
        },
    }
}

fn sigkill_loop() {
    let trials = trials();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("killed.arca");
    create(&path);
    let mut rng = Rng(0x1234_5678_9abc_def0);
    let mut last = 0;
    let mut progressed = 0;
    for trial in 0..trials {
        let r = rng.next();
        // After 0 to 9 steps of any kind (up to three transactions and a
        // part): before the first transaction, while writing, or while
        // committing; then up to 0.5 ms further.
        let mut w = Worker::spawn(&path);
        w.wait_for(&["begin", "wrote", "committed"], r % 10);
        w.kill_after(Duration::from_micros((r >> 8) % 500));
        let c = verify(&path, trial);
        assert!(
            c >= last,
            "trial {trial}: committed state went backwards ({last} -> {c})"
        );
        progressed += (c > last) as usize;
        last = c;
    }
    assert!(
        progressed > trials / 4,
        "the child rarely got to commit: {progressed} of {trials} trials"
    );
}

/// A reader arriving after a crash never sees the half-written state: it
/// rolls the journal back first (it may write here) and says so.
fn reader_recovers_after_kill() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("killed.arca");
    create(&path);
    let mut rng = Rng(0x0fed_cba9_8765_4321);
    for _ in 0..50 {
        let r = rng.next();
        let mut w = Worker::spawn(&path);
        // Once a transaction's writes are done its commit is under way.
        w.wait_for(&["wrote"], 1 + r % 3);
        w.kill_after(Duration::from_micros((r >> 8) % 200));
        let hot = arca::journal_is_hot(&path).unwrap();
        let f = File::open(&path).unwrap();
        f.check().unwrap();
        // Rolled back if hot, tidied if cold: nothing is left either way.
        assert!(!arca::journal_path(&path).exists());
        assert_eq!(f.recovered(), hot);
        if hot {
            return;
        }
    }
    panic!("no kill ever left a journal behind");
}

const TESTS: &[(&str, fn())] = &[
    ("sigkill_loop", sigkill_loop),
    ("reader_recovers_after_kill", reader_recovers_after_kill),
];

fn main() {
    if let Ok(path) = std::env::var(CHILD_ENV) {
        child_workload(&path);
    }
    let (mut filters, mut skips) = (vec![], vec![]);
    let (mut exact, mut list) = (false, false);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--exact" => exact = true,
            "--list" => list = true,
            "--skip" => skips.extend(args.next()),
            // libtest options with a value, accepted and ignored.
            "--test-threads" | "--format" | "--color" | "--logfile" | "-Z" => {
                args.next();
            }
            _ if a.starts_with('-') => {}
            _ => filters.push(a),
        }
    }
    let matches = |name: &str, pat: &String| {
        if exact {
            name == pat
        } else {
            name.contains(pat.as_str())
        }
    };
    let chosen: Vec<_> = TESTS
        .iter()
        .filter(|(n, _)| filters.is_empty() || filters.iter().any(|p| matches(n, p)))
        .filter(|(n, _)| !skips.iter().any(|p| matches(n, p)))
        .collect();
    if list {
        for (n, _) in &chosen {
            println!("{n}: test");
        }
        return;
    }
    println!("\nrunning {} tests", chosen.len());
    let mut failed = vec![];
    let start = Instant::now();
    for (name, test) in &chosen {
        let ok = std::panic::catch_unwind(*test).is_ok();
        println!("test {name} ... {}", if ok { "ok" } else { "FAILED" });
        if !ok {
            failed.push(name);
        }
    }
    let result = if failed.is_empty() { "ok" } else { "FAILED" };
    println!(
        "\ntest result: {result}. {} passed; {} failed; finished in {:.2}s\n",
        chosen.len() - failed.len(),
        failed.len(),
        start.elapsed().as_secs_f64()
    );
    if !failed.is_empty() {
        eprintln!("failed: {failed:?}");
        std::process::exit(1);
    }
}
