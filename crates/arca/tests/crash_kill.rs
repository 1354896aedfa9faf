//! A real process killed with SIGKILL while it commits transactions, again
//! and again: after every kill the file opens (rolling back the journal),
//! passes `check`, and shows exactly one committed transaction's state.
//! Trials: `ARCA_KILL_TRIALS` (default 200).

use std::process::Command;
use std::time::Duration;

use arca::{AttrValue, DatasetOptions, Datatype, File, Filter, Selection};

const CHILD_ENV: &str = "ARCA_KILL_CHILD";
const ROWS: u64 = 16;
const REGIONS: u64 = 100;

fn row(i: u64) -> Selection {
    Selection::from_ranges(&[(i % ROWS, i % ROWS + 1, 1), (0, 256, 1)]).unwrap()
}

fn region(i: u64) -> Selection {
    let a = (i % REGIONS) * 10;
    Selection::from_ranges(&[(a, a + 10, 1)]).unwrap()
}

/// Run by the child process: commit transactions until killed.
#[test]
fn child_workload() {
    let Ok(path) = std::env::var(CHILD_ENV) else {
        return; // only meaningful when spawned by `sigkill_loop`
    };
    let f = File::open_rw(&path).unwrap();
    let counter = |f: &File| {
        f.root()
            .attrs()
            .get("counter")
            .unwrap()
            .to_vec::<u64>()
            .unwrap()[0]
    };
    let mut i = counter(&f);
    loop {
        i += 1;
        f.transaction(|f| {
            let r = f.root();
            r.attrs().set("counter", &AttrValue::scalar(i))?;
            r.dataset("rows")?.write(&row(i), &vec![i as i64; 256])?;
            r.dataset("flat")?.write(&region(i), &[i as i64; 10])?;
            r.create_group(&format!("g{i}"))?;
            if i > 3 && r.contains(&format!("g{}", i - 3))? {
                r.delete(&format!("g{}", i - 3))?;
            }
            Ok(())
        })
        .unwrap();
    }
}

fn verify(path: &std::path::Path, trial: usize) -> u64 {
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

#[test]
fn sigkill_loop() {
    if std::env::var(CHILD_ENV).is_ok() {
        return;
    }
    let trials: usize = std::env::var("ARCA_KILL_TRIALS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("killed.arca");
    {
        let f = File::create(&path).unwrap();
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
        f.close().unwrap();
    }
    let exe = std::env::current_exe().unwrap();
    let mut last = 0;
    let mut progressed = 0;
    let mut seed = 0x1234_5678_9abc_def0u64;
    for trial in 0..trials {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                "child_workload",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, &path)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(3_000 + seed % 30_000));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
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

    // A reader arriving after a crash never sees the half-written state: it
    // rolls the journal back first (it may write here) and says so.
    let mut saw_recovery = false;
    for _ in 0..50 {
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                "child_workload",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, &path)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(20));
        child.kill().unwrap();
        child.wait().unwrap();
        let hot = arca::journal_is_hot(&path).unwrap();
        let f = File::open(&path).unwrap();
        f.check().unwrap();
        // Rolled back if hot, tidied if cold: nothing is left either way.
        assert!(!arca::journal_path(&path).exists());
        assert_eq!(f.recovered(), hot);
        if hot {
            assert!(f.recovered());
            saw_recovery = true;
            break;
        }
    }
    assert!(saw_recovery, "no kill ever left a journal behind");
}
