//! End-to-end tests of the `arca` binary: every subcommand on the example
//! file, JSON that parses, and errors with their exit codes.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

/// Tests here open files in this process and spawn `arca` on others. A
/// child forked by one test holds copies of the other tests' descriptors
/// until it execs, and with them their file locks; one test at a time keeps
/// a lock from outliving its `close` in a sibling's child.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn arca() -> Command {
    Command::cargo_bin("arca").unwrap()
}

/// A temporary directory holding a fresh example file.
fn example() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("example.arca");
    arca()
        .arg("create-example")
        .arg(&path)
        .assert()
        .success()
        .stdout("")
        .stderr("");
    (dir, path)
}

fn target(path: &Path, obj: &str) -> String {
    format!("{}:{obj}", path.display())
}

fn stdout_json(cmd: &mut Command) -> Value {
    let out = cmd.assert().success().get_output().stdout.clone();
    serde_json::from_slice(&out).expect("stdout is JSON")
}

#[test]
fn create_example_refuses_to_overwrite_without_force() {
    let _serial = serial();
    let (_d, path) = example();
    arca()
        .arg("create-example")
        .arg(&path)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("file exists").and(predicate::str::contains("--force")));
    arca()
        .args(["demo", "--force"])
        .arg(&path)
        .assert()
        .success();
    arca().arg("check").arg(&path).assert().success();
}

#[test]
fn ls_root_and_recursive() {
    let _serial = serial();
    let (_d, path) = example();
    arca()
        .arg("ls")
        .arg(&path)
        .assert()
        .success()
        .stdout(predicate::str::contains("experiment  Group"))
        .stdout(predicate::str::contains("notes       Group"))
        .stdout(predicate::str::contains(
            "latest      Soft Link {/experiment/raw/frames}",
        ))
        .stdout(predicate::str::contains("Dataset").not());
    let out = arca().args(["ls", "-r"]).arg(&path).assert().success();
    let s = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    for want in [
        "/experiment/raw/frames",
        "Dataset {3, 40, 25} uint16 LE, chunks {1, 40, 25}, filters shuffle+zstd(3)",
        "Dataset {6/Inf, 4} int32 LE, chunks {4, 4}, filters lz4",
        "Dataset {4, 4} float32 LE, chunks {2, 4}, filters shuffle+gzip(6)",
        "Dataset {6} int32 BE, compact",
        "Dataset {4} bytes[8], compact",
        "Dataset {4, 4} bool, compact",
        "Dataset {SCALAR} uint64 LE, compact",
        "/experiment/log                 Dataset {4} vlen utf8, contiguous, vector filters zstd(3), vector 40 B in 59 B stored (ratio 0.68)",
        "/experiment/raw/tracks          Dataset {4} vlen float32 LE, contiguous, vector 24 B in 1024 B stored (ratio 0.02)",
        "/notes",
        "/experiment/gain_matrix         Dataset, same as /experiment/calibration/matrix",
    ] {
        assert!(s.contains(want), "missing {want:?} in\n{s}");
    }
    // Depth-first in name order, full paths.
    let paths: Vec<&str> = s
        .lines()
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(paths[0], "/experiment");
    assert_eq!(paths[1], "/experiment/calibration");
    assert_eq!(*paths.last().unwrap(), "/notes");
}

#[test]
fn ls_a_group_and_a_dataset() {
    let _serial = serial();
    let (_d, path) = example();
    arca()
        .arg("ls")
        .arg(target(&path, "/experiment/raw"))
        .assert()
        .success()
        .stdout(predicate::str::starts_with("event_log"))
        .stdout(predicate::str::contains("\nevents "))
        .stdout(predicate::str::contains("\nframes "));
    arca()
        .arg("ls")
        .arg(target(&path, "experiment/temperature"))
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "/experiment/temperature  Dataset {24} float64 LE",
        ));
}

#[test]
fn ls_json_parses() {
    let _serial = serial();
    let (_d, path) = example();
    let v = stdout_json(arca().args(["ls", "-r", "--json"]).arg(&path));
    let list = v.as_array().unwrap();
    let events = list
        .iter()
        .find(|e| e["path"] == "/experiment/raw/events")
        .unwrap();
    assert_eq!(events["kind"], "dataset");
    assert_eq!(events["dtype"], "<i4");
    assert_eq!(events["shape"], serde_json::json!([6, 4]));
    assert_eq!(events["maxshape"], serde_json::json!([null, 4]));
    assert_eq!(events["chunks"], serde_json::json!([4, 4]));
    assert_eq!(events["filters"][0]["name"], "lz4");
    let be = list
        .iter()
        .find(|e| e["path"] == "/experiment/legacy/be_counts")
        .unwrap();
    assert_eq!(be["dtype"], ">i4");
    assert_eq!(be["chunks"], Value::Null);
    let groups = list.iter().filter(|e| e["kind"] == "group").count();
    assert_eq!(groups, 5); // the root is not listed
}

#[test]
fn dump_whole_file() {
    let _serial = serial();
    let (_d, path) = example();
    let out = arca().arg("dump").arg(&path).assert().success();
    let s = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    for want in [
        "GROUP \"/\" {",
        "ATTRIBUTE \"title\" {",
        "(0): \"arca example file\"",
        "DATASET \"events\" {",
        "DATATYPE  int32 LE (<i4)",
        "DATASPACE  SIMPLE { ( 6, 4 ) / ( UNLIMITED, 4 ) }",
        "STORAGE_LAYOUT { CHUNKED ( 4, 4 )",
        "FILTERS { LZ4 }",
        "FILLVALUE { -1 }",
        "(0,0): 0, 10, 20, 30,",
        "(5,0): -1, -1, -1, -1",
        "FILTERS { SHUFFLE ZSTD { LEVEL 3 } }",
        "FILTERS { SHUFFLE GZIP { LEVEL 6 } }",
        "showing 2000 of 3000 elements",
        "(0): 1, -2, 300, -40000, 5000000, -2147483648",
        "(1,0): 0.00001, inf, NaN",
        "(0): \"alpha\", \"beta\", \"gamma\", \"delta\"",
        "(0,0): true, false, false, true",
        "DATASPACE  SCALAR",
        "(0): 20240611",
        "GROUP \"notes\" {",
        "DATATYPE  vlen utf8 (vlen:str)",
        "(0): \"run started\", \"beam on\", \"µ-metal shield closed\", \"\"",
        "(0): [0.5, 1, 1.5], [], [2.25], [3, 3.5]",
        "(0): \"calibrated\", \"v2\"",
        "VECTOR 40 BYTES, 40 LIVE",
        "FILTERS { ZSTD { LEVEL 3 } }",
        "DATATYPE  compound {",
        "enum uint8 LE {IDLE = 0, RUN = 1, FAULT = 2} \"state\" @10;",
        "float32 LE[3] \"pos\" @16;",
        "} (40 bytes)",
        "(2): {t: 0.5, channel: 9, state: FAULT, energy: 3.5, pos: [2, -2, 0.5], z: (2+1j)}",
        "DATATYPE  float16 LE (<f2)",
        "(0): 1.5, 2.5",
        "SOFTLINK \"latest\" {",
        "LINKTARGET \"/experiment/raw/frames\"",
        "HARDLINK \"/experiment/calibration/matrix\"",
    ] {
        assert!(s.contains(want), "missing {want:?} in\n{s}");
    }
    assert!(s.lines().all(|l| l.len() <= 100), "over-long line");
    assert!(s.ends_with("}\n}\n"));
}

#[test]
fn dump_one_dataset_limits_and_header_only() {
    let _serial = serial();
    let (_d, path) = example();
    arca()
        .args(["dump", "--max-elements", "3"])
        .arg(target(&path, "/experiment/temperature"))
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "DATASET \"/experiment/temperature\" {",
        ))
        .stdout(predicate::str::contains("(0): 20, 20.78, 21.5\n"))
        .stdout(predicate::str::contains("showing 3 of 24 elements"))
        .stdout(predicate::str::contains("ATTRIBUTE \"units\""));
    arca()
        .args(["dump", "-n", "0"])
        .arg(target(&path, "/experiment/raw/frames"))
        .assert()
        .success()
        .stdout(predicate::str::contains("(2,39,0):"))
        .stdout(predicate::str::contains("showing").not());
    arca()
        .args(["dump", "-H"])
        .arg(&path)
        .assert()
        .success()
        .stdout(predicate::str::contains("DATASPACE"))
        .stdout(predicate::str::contains("(0,0): 0, 10").not());
}

#[test]
fn dump_json_parses() {
    let _serial = serial();
    let (_d, path) = example();
    let v = stdout_json(arca().args(["dump", "--json"]).arg(&path));
    let root = &v["object"];
    assert_eq!(root["path"], "/");
    assert_eq!(root["attributes"][0]["name"], "created_by");
    let exp = &root["members"][0];
    assert_eq!(exp["name"], "experiment");
    let find = |g: &Value, name: &str| -> Value {
        g["members"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == name)
            .cloned()
            .unwrap()
    };
    let gains = exp["attributes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "gains")
        .unwrap()
        .clone();
    assert_eq!(gains["value"], serde_json::json!([1.0, 1.5, 2.0]));
    let events = find(&find(exp, "raw"), "events");
    assert_eq!(events["fill_value"], -1);
    assert_eq!(events["truncated"], false);
    let data = events["data"].as_array().unwrap();
    assert_eq!(data.len(), 24);
    assert_eq!(data[23], -1);
    let frames = find(&find(exp, "raw"), "frames");
    assert_eq!(frames["truncated"], true);
    assert_eq!(frames["data"].as_array().unwrap().len(), 2000);
    let be = find(&find(exp, "legacy"), "be_values");
    assert_eq!(be["dtype"], ">f8");
    assert_eq!(be["data"][4], "Infinity");
    assert_eq!(be["data"][5], "NaN");
    assert_eq!(find(exp, "labels")["data"][1], "beta");
    assert_eq!(find(exp, "run_id")["data"], serde_json::json!([20240611]));
    let log = find(exp, "log");
    assert_eq!(log["dtype"], "vlen:str");
    assert_eq!(log["data"][2], "µ-metal shield closed");
    assert_eq!(log["vlen"]["vector_bytes"], 40);
    assert_eq!(log["vlen"]["filters"][0]["name"], "zstd");
    let tracks = find(&find(exp, "raw"), "tracks");
    assert_eq!(
        tracks["data"],
        serde_json::json!([[0.5, 1.0, 1.5], [], [2.25], [3.0, 3.5]])
    );
    let tags = exp["attributes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "tags")
        .unwrap()
        .clone();
    assert_eq!(tags["value"], serde_json::json!(["calibrated", "v2"]));
    let table = find(exp, "table");
    assert!(table["dtype"]
        .as_str()
        .unwrap()
        .starts_with(r#"struct(40){"t"@0:<f8,"#));
    assert_eq!(
        table["data"][1],
        serde_json::json!({"t": 0.25, "channel": 8, "state": "RUN", "energy": 2.5,
            "pos": [1.0, -1.0, 0.5], "z": {"real": 1.0, "imag": 1.0}})
    );

    let v = stdout_json(
        arca()
            .args(["dump", "--json", "-H"])
            .arg(target(&path, "/experiment/calibration/matrix")),
    );
    assert_eq!(v["object"]["path"], "/experiment/calibration/matrix");
    assert!(v["object"].get("data").is_none());
}

#[test]
fn stat_text_and_json() {
    let _serial = serial();
    let (_d, path) = example();
    arca()
        .arg("stat")
        .arg(&path)
        .assert()
        .success()
        .stdout(predicate::str::contains("groups"))
        .stdout(predicate::str::contains("compression ratio"))
        .stdout(predicate::str::contains("file size"));
    let v = stdout_json(arca().args(["stat", "--json"]).arg(&path));
    assert_eq!(v["groups"], 6);
    assert_eq!(v["datasets"], 13);
    assert_eq!(v["attributes"], 12);
    // frames 3, events 1 (rows 4..6 never written), matrix 2, be_values 2,
    // one vector chunk each for log, tracks and event_log, table 2
    assert_eq!(v["chunks"], 3 + 1 + 2 + 2 + 3 + 2);
    let sum = [
        "superblock_bytes",
        "metadata_bytes",
        "raw_stored_bytes",
        "unused_bytes",
    ]
    .iter()
    .map(|k| v[k].as_u64().unwrap())
    .sum::<u64>();
    assert_eq!(sum, v["file_bytes"].as_u64().unwrap());
    assert_eq!(
        v["file_bytes"].as_u64().unwrap(),
        std::fs::metadata(&path).unwrap().len()
    );
    assert!(v["compression_ratio"].as_f64().unwrap() > 1.0);
}

#[test]
fn check_ok() {
    let _serial = serial();
    let (_d, path) = example();
    arca()
        .arg("check")
        .arg(&path)
        .assert()
        .code(0)
        .stdout(predicate::str::starts_with("ok: "))
        .stderr("");
    arca()
        .args(["check", "-q"])
        .arg(&path)
        .assert()
        .code(0)
        .stdout("");
    let v = stdout_json(arca().args(["check", "--json"]).arg(&path));
    assert_eq!(v["ok"], true);
}

/// Flip one byte in every 4 KiB page after the superblock until `check`
/// reports damage; it must name a structure and an offset and exit 2.
#[test]
fn check_damaged_file() {
    let _serial = serial();
    let (_d, path) = example();
    let good = std::fs::read(&path).unwrap();
    let mut damaged_runs = 0;
    for at in (4096..good.len()).step_by(4096).map(|p| p + 100) {
        let mut bad = good.clone();
        bad[at.min(good.len() - 1)] ^= 0x5a;
        std::fs::write(&path, &bad).unwrap();
        let out = arca().arg("check").arg(&path).output().unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(matches!(out.status.code(), Some(0) | Some(2)), "{err}");
        if out.status.code() == Some(2) {
            damaged_runs += 1;
            assert!(err.starts_with("arca: "), "{err}");
            assert!(err.contains("file is damaged: "), "{err}");
            assert!(err.contains(" at offset "), "{err}");
            assert_eq!(err.lines().count(), 1, "{err}");
            let v: Value = serde_json::from_slice(
                &arca()
                    .args(["check", "--json"])
                    .arg(&path)
                    .output()
                    .unwrap()
                    .stdout,
            )
            .unwrap();
            assert_eq!(v["ok"], false);
            assert!(v["offset"].is_u64());
            assert!(v["structure"].is_string());
        }
    }
    assert!(damaged_runs > 0, "no flipped byte was detected");
}

#[test]
fn damaged_file_fails_every_command_cleanly() {
    let _serial = serial();
    let (_d, path) = example();
    let mut bad = std::fs::read(&path).unwrap();
    // The superblock's checksummed fields.
    bad[20] ^= 0xff;
    std::fs::write(&path, &bad).unwrap();
    for cmd in [&["ls", "-r"][..], &["dump"], &["stat"], &["check"]] {
        arca()
            .args(cmd)
            .arg(&path)
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicate::str::contains(
                "file is damaged: superblock at offset 0",
            ));
    }
}

#[test]
fn missing_file() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nope.arca");
    for cmd in [&["ls"][..], &["dump"], &["stat"], &["check"]] {
        arca()
            .args(cmd)
            .arg(&path)
            .assert()
            .code(1)
            .stderr(predicate::str::starts_with("arca: "))
            .stderr(predicate::str::contains("nope.arca"));
    }
    arca()
        .arg("ls")
        .arg(target(&path, "/a/b"))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("nope.arca"));
}

#[test]
fn not_an_arca_file() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("text.txt");
    std::fs::write(&path, "hello, this is plain text\n".repeat(400)).unwrap();
    for cmd in [&["ls"][..], &["dump"], &["stat"], &["check"]] {
        arca()
            .args(cmd)
            .arg(&path)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("not an arca file"))
            .stderr(predicate::str::contains("offset 0"));
    }
    let empty = dir.path().join("empty.arca");
    std::fs::write(&empty, b"").unwrap();
    arca()
        .arg("ls")
        .arg(&empty)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("superblock at offset 0"));
}

#[test]
fn truncated_files() {
    let _serial = serial();
    let (_d, path) = example();
    let good = std::fs::read(&path).unwrap();
    for len in [10, 4000, good.len() / 2, good.len() - 1] {
        std::fs::write(&path, &good[..len]).unwrap();
        for cmd in [&["ls", "-r"][..], &["dump"], &["stat"], &["check"]] {
            let out = arca().args(cmd).arg(&path).output().unwrap();
            let err = String::from_utf8(out.stderr).unwrap();
            assert_eq!(out.status.code(), Some(2), "{cmd:?} at {len}: {err}");
            assert!(err.contains("file is damaged: "), "{err}");
            assert!(err.contains(" at offset "), "{err}");
            assert_eq!(err.lines().count(), 1, "{err}");
        }
    }
}

#[test]
fn bad_object_paths() {
    let _serial = serial();
    let (_d, path) = example();
    for obj in ["/nope", "/experiment/nope", "/experiment/temperature/x"] {
        for cmd in ["ls", "dump"] {
            arca()
                .arg(cmd)
                .arg(target(&path, obj))
                .assert()
                .code(1)
                .stdout("")
                .stderr(predicate::str::contains("not found"));
        }
    }
    arca()
        .arg("dump")
        .arg(target(&path, "/experiment/../notes"))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("'..'"));
}

#[test]
fn usage_errors_exit_1() {
    let _serial = serial();
    arca()
        .assert()
        .code(1)
        .stderr(predicate::str::contains("Usage"));
    arca().arg("frobnicate").assert().code(1);
    arca().arg("ls").assert().code(1);
    arca()
        .args(["dump", "--max-elements", "many", "x.arca"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("invalid value"));
}

#[test]
fn help_shows_examples_and_exit_codes() {
    let _serial = serial();
    for sub in ["ls", "dump", "stat", "check", "create-example"] {
        arca()
            .args([sub, "--help"])
            .assert()
            .success()
            .stdout(predicate::str::contains("Examples:"))
            .stdout(predicate::str::contains("Exit status:"));
    }
    arca()
        .args(["check", "--help"])
        .assert()
        .stdout(predicate::str::contains("2  the file is damaged"));
    arca()
        .arg("--version")
        .assert()
        .success()
        .stdout(predicate::str::starts_with("arca "));
}

#[test]
fn closed_pipe_is_not_an_error() {
    let _serial = serial();
    let (_d, path) = example();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_arca"))
        .args(["dump", "-n", "0"])
        .arg(&path)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Read nothing and close our end: the writer must stop quietly.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stderr.is_empty());
}

#[test]
fn repack_writes_a_compact_copy_and_stat_shows_free_space() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("holes.arca");
    let b = dir.path().join("compact.arca");
    {
        let f = arca::File::create(&a).unwrap();
        for i in 0..20u8 {
            let d = f
                .root()
                .create_dataset(
                    &format!("d{i}"),
                    &arca::DatasetOptions::new(arca::Datatype::uint(1), &[50_000]),
                )
                .unwrap();
            d.write_all(&vec![i; 50_000]).unwrap();
        }
        for i in (0..20).step_by(2) {
            f.root().delete(&format!("d{i}")).unwrap();
        }
        f.close().unwrap();
    }
    let out = Command::cargo_bin("arca")
        .unwrap()
        .args(["stat", "--json"])
        .arg(&a)
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["free_space"]["sections"].as_u64().unwrap() >= 9);
    assert!(v["free_space"]["largest_section"].as_u64().unwrap() >= 50_000);
    let text = Command::cargo_bin("arca")
        .unwrap()
        .arg("stat")
        .arg(&a)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&text.stdout).contains("fragmentation"));

    Command::cargo_bin("arca")
        .unwrap()
        .args(["repack", "-q"])
        .arg(&a)
        .arg(&b)
        .assert()
        .success();
    let (sa, sb) = (
        std::fs::metadata(&a).unwrap().len(),
        std::fs::metadata(&b).unwrap().len(),
    );
    assert!(sb * 3 < sa * 2, "repacked {sb} bytes from {sa}");
    let f = arca::File::open(&b).unwrap();
    f.check().unwrap();
    assert_eq!(f.root().member_names().unwrap().len(), 10);
    assert_eq!(
        f.root().dataset("d7").unwrap().read_all::<u8>().unwrap(),
        vec![7u8; 50_000]
    );
    // At most an aggregator's unused tail is left free.
    assert!(f.space_info().unwrap().free_bytes < 64 * 1024);
    // The output must not exist yet.
    Command::cargo_bin("arca")
        .unwrap()
        .arg("repack")
        .arg(&a)
        .arg(&b)
        .assert()
        .failure()
        .code(1);
}

#[test]
fn ls_and_dump_show_vector_size_and_compression() {
    let _serial = serial();
    use arca::{DatasetOptions, Datatype, Filter, Selection, VlenOptions};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log.arca");
    {
        let f = arca::File::create(&path).unwrap();
        let opts = DatasetOptions::new(Datatype::VlenStr, &[2000])
            .vlen(VlenOptions::default().filters(&[Filter::Zstd(3)]));
        let ds = f.root().create_dataset("log", &opts).unwrap();
        let lines: Vec<String> = (0..2000).map(|i| format!("event {} ok", i % 10)).collect();
        let refs: Vec<&str> = lines.iter().map(|s| s.as_str()).collect();
        ds.write_strings(&Selection::all(&[2000]), &refs).unwrap();
        f.close().unwrap();
    }
    let out = arca().arg("ls").arg(&path).assert().success();
    let s = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        s.contains("vector filters zstd(3), vector 20000 B in "),
        "{s}"
    );
    let v = stdout_json(arca().args(["ls", "--json"]).arg(&path));
    let e = &v[0];
    assert_eq!(e["vector_bytes"], 20000);
    let stored = e["vector_stored_bytes"].as_u64().unwrap();
    assert!(stored > 0 && stored < 2000, "stored {stored}");
    assert!(e["vector_compression_ratio"].as_f64().unwrap() > 10.0);
    let out = arca().arg("dump").arg("-H").arg(&path).assert().success();
    let s = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(s.contains("VECTOR 20000 BYTES, 20000 LIVE"), "{s}");
    assert!(
        s.contains(&format!("SIZE {stored} COMPRESSION RATIO ")),
        "{s}"
    );
    let v = stdout_json(arca().args(["dump", "--json", "-H"]).arg(&path));
    let ratio = v["object"]["members"][0]["vlen"]["compression_ratio"].as_f64();
    assert!(ratio.is_some_and(|r| r > 10.0), "{v}");
}

/// `ls` and `check` read beside a writer that keeps the file open: they
/// see its last commit, never its uncommitted changes.
#[test]
fn ls_and_check_beside_a_writer() {
    let _serial = serial();
    let (_d, path) = example();
    let w = arca::File::open_rw(&path).unwrap();
    w.root().create_group("committed").unwrap();
    w.flush().unwrap();
    w.root().create_group("pending").unwrap();
    arca()
        .arg("ls")
        .arg(&path)
        .assert()
        .success()
        .stdout(predicate::str::contains("committed"))
        .stdout(predicate::str::contains("pending").not());
    arca()
        .arg("check")
        .arg(&path)
        .assert()
        .success()
        .stdout(predicate::str::starts_with("ok:"));
    w.flush().unwrap();
    arca()
        .arg("ls")
        .arg(&path)
        .assert()
        .success()
        .stdout(predicate::str::contains("pending"));
    w.close().unwrap();
}

#[test]
fn committed_datatypes_are_listed_dumped_and_checked() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("types.arca");
    {
        let f = arca::File::create(&path).unwrap();
        let root = f.root();
        let t = root
            .commit_type("types/pixel", &arca::Datatype::uint(2))
            .unwrap();
        t.attrs()
            .set("unit", &arca::AttrValue::string("counts"))
            .unwrap();
        let o = arca::DatasetOptions::new(arca::Datatype::uint(2), &[3]).committed(&t);
        root.create_dataset("frame", &o).unwrap();
        f.close().unwrap();
    }
    let out = arca().args(["ls", "-r"]).arg(&path).assert().success();
    let s = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(s.contains("/types/pixel  Type "), "{s}");
    assert!(s.contains("(committed /types/pixel)"), "{s}");
    let v = stdout_json(arca().args(["ls", "-r", "--json"]).arg(&path));
    let list = v.as_array().unwrap();
    let t = list.iter().find(|e| e["path"] == "/types/pixel").unwrap();
    assert_eq!(
        (t["kind"].as_str(), t["attributes"].as_u64()),
        (Some("datatype"), Some(1))
    );
    let d = list.iter().find(|e| e["path"] == "/frame").unwrap();
    assert_eq!(d["committed_type"], "/types/pixel");
    let out = arca().arg("dump").arg(&path).assert().success();
    let s = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(s.contains("DATATYPE \"pixel\" {"), "{s}");
    assert!(s.contains("DATATYPE  \"/types/pixel\""), "{s}");
    assert!(s.contains("ATTRIBUTE \"unit\""), "{s}");
    let v = stdout_json(arca().args(["dump", "--json"]).arg(&path));
    let types = &v["object"]["members"][1]["members"][0];
    assert_eq!(types["kind"], "datatype");
    stdout_json(
        arca()
            .args(["dump", "--json"])
            .arg(target(&path, "/types/pixel")),
    );
    arca().arg("check").arg(&path).assert().success();
}
