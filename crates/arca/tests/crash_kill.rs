//! A real process killed with SIGKILL while it commits transactions, again
//! and again: after every kill the file opens (rolling back the journal),
//! passes `check`, and shows exactly one committed transaction's state,
//! variable-length appends included. Trials: 200 times `ARCA_TEST_SCALE`
//! (see `common::scaled`).
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
/// Set in a reader child: the file it reads; it stops when `STOP_ENV`'s
/// file exists.
const READER_ENV: &str = "ARCA_KILL_READER";
const STOP_ENV: &str = "ARCA_KILL_STOP";
const SEED_ENV: &str = "ARCA_KILL_SEED";
/// Set in a holder child: the file whose snapshot it holds until killed.
const HOLDER_ENV: &str = "ARCA_KILL_HOLDER";
/// Set in a writer child: commit this many transactions, then exit.
const ONCE_ENV: &str = "ARCA_KILL_ONCE";
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
    // A bounded run, for the fault-point test: that many transactions,
    // then the number of fault points passed.
    let once: Option<u64> = std::env::var(ONCE_ENV).ok().map(|s| s.parse().unwrap());
    let end = once.map_or(u64::MAX, |n| i + n);
    loop {
        if i == end {
            f.close().unwrap();
            println!("points {}", arca::io::fault_points_passed());
            std::process::exit(0);
        }
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

/// Run by a reader child beside the killed writers: check its snapshot,
/// refresh, again, until told to stop; every snapshot must be one whole
/// commit and never older than the one before. Reports `checked N
/// states, M distinct` and exits 0, or panics (non-zero exit).
fn reader_workload(path: &str) -> ! {
    let stop = std::env::var(STOP_ENV).unwrap();
    let mut f = File::open(path).unwrap();
    let (mut checked, mut distinct, mut last) = (0u64, 0u64, 0u64);
    let (mut last_gen, mut how) = (0u64, "opened");
    let seed = std::env::var(SEED_ENV).unwrap().parse().unwrap();
    let mut rng = Rng(seed);
    loop {
        // The stop file is looked at before the check, so the last
        // state checked is at least as new as the last kill's.
        let stopping = Path::new(&stop).exists();
        let c = check_state(&f, &format!("reader at generation {:?}", f.generation()));
        let gen = f.generation().unwrap();
        assert!(
            c >= last,
            "reader: the state went back from {last} (generation {last_gen}) to {c} \
             (generation {gen}, {how})"
        );
        last_gen = gen;
        distinct += (c != last) as u64;
        last = c;
        checked += 1;
        if stopping {
            break;
        }
        if rng.next().is_multiple_of(16) {
            // Start afresh now and then: a new slot, a new snapshot.
            f.close().unwrap();
            f = File::open(path).unwrap();
            how = "reopened";
        } else {
            how = if f.refresh().unwrap() {
                "refreshed"
            } else {
                "unchanged"
            };
        }
    }
    f.close().unwrap();
    println!("checked {checked} states, {distinct} distinct");
    std::process::exit(0)
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
    check_state(&f, &format!("trial {trial}"))
}

/// Check that `f` shows exactly one committed transaction's state, and
/// passes `check`; returns its counter.
fn check_state(f: &File, trial: &str) -> u64 {
    f.check()
        .unwrap_or_else(|e| panic!("{trial}: check failed: {e}"));
    let r = f.root();
    let c = r.attrs().get("counter").unwrap().to_vec::<u64>().unwrap()[0];
    if c > 0 {
        let v: Vec<i64> = r.dataset("rows").unwrap().read(&row(c)).unwrap();
        assert!(
            v.iter().all(|&x| x == c as i64),
            "{trial}: row of transaction {c} is torn"
        );
        let v: Vec<i64> = r.dataset("flat").unwrap().read(&region(c)).unwrap();
        assert!(
            v.iter().all(|&x| x == c as i64),
            "{trial}: region of transaction {c} is torn"
        );
        assert!(
            r.contains(&format!("g{c}")).unwrap(),
            "{trial}: group of transaction {c} missing"
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
            "{trial}: string {k} does not belong to state {c}"
        );
        let got = &values[offsets[k as usize] as usize..offsets[k as usize + 1] as usize];
        assert_eq!(
            got,
            last.map(floats).unwrap_or_default(),
            "{trial}: ragged row {k} does not belong to state {c}"
        );
    }
    let groups = r.member_names().unwrap();
    for g in groups.iter().filter(|g| g.starts_with('g')) {
        let n: u64 = g[1..].parse().unwrap();
        assert!(
            n <= c && n + 3 > c,
            "{trial}: group {g} does not belong to state {c}"
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
    common::scaled(200) as usize
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
            "{trial}: committed state went backwards ({last} -> {c})"
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
/// reads the last commit the dead writer published (the history holds
/// what the dead transaction overwrote) and writes nothing; the next
/// writer rolls the journal back and says so.
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
        let c = check_state(&f, "reader after a kill");
        assert!(!f.recovered());
        assert_eq!(
            arca::journal_is_hot(&path).unwrap(),
            hot,
            "the reader wrote"
        );
        f.close().unwrap();
        if hot {
            let w = File::open_rw(&path).unwrap();
            assert!(w.recovered());
            assert_eq!(check_state(&w, "writer after a kill"), c);
            w.close().unwrap();
            assert!(!arca::journal_path(&path).exists());
            return;
        }
        verify(&path, 0);
    }
    panic!("no kill ever left a journal behind");
}

/// The SIGKILL loop with snapshot readers in three other processes, which
/// check, refresh and reopen all the while: every snapshot any of them
/// sees is one whole commit, through every kill and recovery, and once
/// they close the file is clean. Trials: a quarter of the SIGKILL loop's.
fn sigkill_loop_with_readers() {
    let trials = (trials() / 4).max(1);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("read.arca");
    let stop = dir.path().join("stop");
    create(&path);
    let readers = spawn_readers(&path, &stop, 3);
    let mut rng = Rng(0x0005_eed0_f4ea_de45);
    let mut last = 0;
    for trial in 0..trials {
        let r = rng.next();
        let mut w = Worker::spawn(&path);
        w.wait_for(&["begin", "wrote", "committed"], r % 10);
        w.kill_after(Duration::from_micros((r >> 8) % 500));
        let c = verify(&path, trial);
        assert!(c >= last, "trial {trial}: committed state went backwards");
        last = c;
    }
    stop_readers(readers, &stop);
    let f = File::open(&path).unwrap();
    assert_eq!(check_state(&f, "after the readers"), last);
    f.close().unwrap();
    assert!(!arca::journal_path(&path).exists());
}

/// `n` reader children checking `path` until `stop` exists.
fn spawn_readers(path: &Path, stop: &Path, n: usize) -> Vec<Child> {
    let exe = std::env::current_exe().unwrap();
    (0..n)
        .map(|i| {
            Command::new(&exe)
                .env(READER_ENV, path)
                .env(SEED_ENV, (1000 + i).to_string())
                .env(STOP_ENV, stop)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .spawn()
                .unwrap()
        })
        .collect()
}

/// Tell the readers to stop; each must exit cleanly after a last check.
fn stop_readers(readers: Vec<Child>, stop: &Path) {
    std::fs::write(stop, b"").unwrap();
    for r in readers {
        let out = r.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "a reader failed: {}: {text}",
            out.status
        );
        assert!(text.starts_with("checked "), "{text}");
        println!("reader: {}", text.trim());
    }
}

/// Run a writer child for `once` transactions, aborting at fault point
/// `at` (0: never), its write there torn if `torn`; returns the points it
/// passed when it finished, or None if it died.
fn run_writer(path: &Path, once: u64, at: u64, torn: bool) -> Option<u64> {
    let out = Command::new(std::env::current_exe().unwrap())
        .env(CHILD_ENV, path)
        .env(ONCE_ENV, once.to_string())
        .env("ARCA_ABORT_AT_IO", at.to_string())
        .env("ARCA_ABORT_TORN", if torn { "1" } else { "0" })
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    match out.status.code() {
        Some(0) => text
            .lines()
            .find_map(|l| l.strip_prefix("points "))
            .map(|n| n.parse().unwrap()),
        // Killed by its abort (SIGABRT): no exit code.
        None => None,
        Some(c) => panic!("the writer failed with {c} before point {at}: {text}"),
    }
}

/// A writer process dies at every one of its fault points in turn (every
/// write, sync and truncation of the file, its journal, the readers'
/// history and table; every other write torn), while two reader processes
/// check, refresh and reopen: every snapshot they see is one whole
/// commit, and after each death the file recovers to the last commit.
fn crash_at_every_point_with_readers() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("points.arca");
    let stop = dir.path().join("stop");
    create(&path);
    let readers = spawn_readers(&path, &stop, 2);
    // One clean run counts the points of three transactions.
    let points = run_writer(&path, 3, 0, false).expect("the counting run finished");
    assert!(points > 20, "only {points} fault points");
    let mut last = verify(&path, 0);
    let mut died = 0;
    for at in 1..=points {
        let done = run_writer(&path, 3, at, at % 2 == 0);
        died += done.is_none() as u64;
        let c = verify(&path, at as usize);
        assert!(c >= last, "point {at}: committed state went backwards");
        last = c;
    }
    assert!(
        died * 10 >= points * 9,
        "the writer died at {died} of {points} points"
    );
    stop_readers(readers, &stop);
    println!("{points} fault points, the writer died at {died}; state {last}");
}

/// Run by a holder child: open `path` as a snapshot reader, say so, and
/// hold the snapshot until killed (it waits on its stdin, which the parent
/// never closes before the kill).
fn holder_workload(path: &str) -> ! {
    let f = File::open(path).unwrap();
    println!("holding {}", f.generation().unwrap());
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
    std::process::exit(0)
}

/// A reader killed with SIGKILL pins nothing: the space its snapshot held
/// is freed by the writer's next commit after the kill (its slot's lock
/// died with it).
fn killed_reader_releases_space() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("held.arca");
    let n = 100_000u64;
    let opts = DatasetOptions::new(Datatype::float(8), &[n]);
    let w = File::create(&path).unwrap();
    w.root()
        .create_dataset("a", &opts)
        .unwrap()
        .write_all(&vec![1.0f64; n as usize])
        .unwrap();
    w.flush().unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .env(HOLDER_ENV, &path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert!(line.starts_with("holding"), "{line}");
    // Replaced while the reader holds the old data: its space is held.
    w.root().delete("a").unwrap();
    w.root()
        .create_dataset("b", &opts)
        .unwrap()
        .write_all(&vec![2.0f64; n as usize])
        .unwrap();
    w.flush().unwrap();
    let held = w.space_info().unwrap().free_bytes;
    assert!(held < n * 8, "freed while a reader sees it: {held} free");
    child.kill().unwrap();
    child.wait().unwrap();
    w.root()
        .attrs()
        .set("after", &AttrValue::scalar(1u8))
        .unwrap();
    w.flush().unwrap();
    let free = w.space_info().unwrap().free_bytes;
    let len = std::fs::metadata(&path).unwrap().len();
    assert!(
        free >= n * 8 || len < 2 * n * 8,
        "the dead reader's snapshot still holds space: {free} free of {len}"
    );
    w.close().unwrap();
    File::open(&path).unwrap().check().unwrap();
}

const TESTS: &[(&str, fn())] = &[
    ("sigkill_loop", sigkill_loop),
    ("sigkill_loop_with_readers", sigkill_loop_with_readers),
    (
        "crash_at_every_point_with_readers",
        crash_at_every_point_with_readers,
    ),
    ("killed_reader_releases_space", killed_reader_releases_space),
    ("reader_recovers_after_kill", reader_recovers_after_kill),
];

fn main() {
    if let Ok(path) = std::env::var(CHILD_ENV) {
        child_workload(&path);
    }
    if let Ok(path) = std::env::var(READER_ENV) {
        reader_workload(&path);
    }
    if let Ok(path) = std::env::var(HOLDER_ENV) {
        holder_workload(&path);
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
