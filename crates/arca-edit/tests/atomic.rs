//! The three atomicity levels with a command failing in the middle.

use std::path::{Path, PathBuf};

use arca::{AttrValue, DatasetOptions, Datatype, File};
use arca_edit::{run, Atomic, EditError};

fn fresh(dir: &Path) -> PathBuf {
    let path = dir.join("t.arca");
    let f = File::create(&path).unwrap();
    let g = f.root().create_group("g").unwrap();
    g.attrs().set("units", &AttrValue::string("m/s")).unwrap();
    let d = g
        .create_dataset("d", &DatasetOptions::new(Datatype::int(4), &[1000]))
        .unwrap();
    d.write_all(&(0..1000).collect::<Vec<i32>>()).unwrap();
    // Leave free space inside the file, so new data can land in old space.
    g.create_dataset("scratch", &DatasetOptions::new(Datatype::uint(1), &[20000]))
        .unwrap()
        .write_all(&[1u8; 20000])
        .unwrap();
    f.root().delete("g/scratch").unwrap();
    f.close().unwrap();
    path
}

/// Three good commands, a failing fourth, a good fifth.
const SESSION: &str = "\
CREATE /g/one {H5T_STD_I32LE (2) DATA {1, 2}};
CREATE DATASET /big {H5T_IEEE_F64LE (4000)};
RENAME /g/units /g/unit;
CREATE /g/d/x {H5T_STD_U8LE DATA {256}};
CREATE /g/five {{5}};
";

fn failure(e: EditError) -> arca_edit::CommandError {
    match e {
        EditError::Command(c) => c,
        other => panic!("expected a command error, got {other:?}"),
    }
}

#[test]
fn yes_leaves_the_file_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let path = fresh(dir.path());
    let before = std::fs::read(&path).unwrap();
    let c = failure(run(&path, SESSION, Atomic::Yes).unwrap_err());
    assert_eq!((c.index, c.line, c.kept), (4, 4, 0));
    assert!(
        c.message.contains("out of range for H5T_STD_U8LE"),
        "{}",
        c.message
    );
    assert_eq!(std::fs::read(&path).unwrap(), before);

    // Writes that grow the file and reuse free space, then a failure.
    let mut big = String::from("CREATE DATASET /w {H5T_STD_I32LE (5000) DATA {");
    big.push_str(&vec!["7"; 5000].join(","));
    big.push_str("}};\nDELETE DATASET /g/d;\nCREATE GROUP /a/b/c;\nMODIFY /g/units {\"m/h\"};\nDELETE /g/none;\n");
    let c = failure(run(&path, &big, Atomic::Yes).unwrap_err());
    assert_eq!(c.index, 5);
    assert_eq!(std::fs::read(&path).unwrap(), before);

    // A parse error: the file is not even opened.
    assert_eq!(
        run(&path, "CREATE /x {{1}}; CREATE", Atomic::Yes)
            .unwrap_err()
            .exit_code(),
        2
    );
    assert_eq!(std::fs::read(&path).unwrap(), before);

    // And the file is still good for the same session without the bad command.
    let good = SESSION.replace("{256}", "{255}");
    assert_eq!(run(&path, &good, Atomic::Yes).unwrap().applied, 5);
    let f = File::open(&path).unwrap();
    assert!(f
        .root()
        .group("g")
        .unwrap()
        .attrs()
        .contains("five")
        .unwrap());
    f.check().unwrap();
}

#[test]
fn inc_keeps_the_commands_before_the_failure() {
    let dir = tempfile::tempdir().unwrap();
    let path = fresh(dir.path());
    let e = run(&path, SESSION, Atomic::Inc).unwrap_err();
    assert_eq!(e.exit_code(), 3);
    let shown = e.to_string();
    assert!(shown.contains("commands 1-3 were applied"), "{shown}");
    let c = failure(e);
    assert_eq!((c.index, c.kept), (4, 3));
    assert_eq!(c.text, "CREATE /g/d/x {H5T_STD_U8LE DATA {256}};");

    let f = File::open(&path).unwrap();
    let g = f.root().group("g").unwrap();
    assert_eq!(
        g.attrs().get("one").unwrap().to_vec::<i32>().unwrap(),
        vec![1, 2]
    );
    assert!(f.root().contains("big").unwrap());
    assert_eq!(g.attrs().names().unwrap(), vec!["one", "unit"]);
    assert!(!f
        .root()
        .dataset("g/d")
        .unwrap()
        .attrs()
        .contains("x")
        .unwrap());
    f.check().unwrap();
    drop(g);
    drop(f);

    // Fix the failed command and run it and the rest.
    let rest = "CREATE /g/d/x {H5T_STD_U8LE DATA {255}}; CREATE /g/five {{5}};";
    assert_eq!(run(&path, rest, Atomic::Inc).unwrap().applied, 2);
    let f = File::open(&path).unwrap();
    assert_eq!(
        f.root().group("g").unwrap().attrs().names().unwrap(),
        vec!["five", "one", "unit"]
    );
}

#[test]
fn inc_failure_inside_the_first_command_keeps_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = fresh(dir.path());
    let before = std::fs::read(&path).unwrap();
    let e = run(&path, "DELETE /g/none; CREATE /g/x {{1}};", Atomic::Inc).unwrap_err();
    assert!(
        e.to_string().contains("no earlier command was applied"),
        "{e}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn no_applies_nothing_of_the_failing_command() {
    let dir = tempfile::tempdir().unwrap();
    let path = fresh(dir.path());
    // The failing command would create /new and /new/deep before writing
    // the dataset, if it were not checked first.
    let session = "\
CREATE /g/one {H5T_STD_I32LE (2) DATA {1, 2}};
RENAME /g/units /g/unit;
CREATE DATASET /new/deep/x {H5T_STD_I8LE (3) DATA {1, 2, 300}};
CREATE /g/after {{1}};
";
    let c = failure(run(&path, session, Atomic::No).unwrap_err());
    assert_eq!((c.index, c.kept), (3, 2));
    assert!(c.message.contains("value 3 (300)"), "{}", c.message);
    let f = File::open(&path).unwrap();
    let g = f.root().group("g").unwrap();
    assert_eq!(g.attrs().names().unwrap(), vec!["one", "unit"]);
    assert!(!f.root().contains("new").unwrap());
    f.check().unwrap();
    drop(g);
    drop(f);

    // Shape mismatches, missing targets and name clashes are caught the same way.
    for cmd in [
        "CREATE GROUP /x/y; CREATE DATASET /p/q {H5T_STD_I8LE (2, 2) DATA {1, 2, 3}};",
        "CREATE GROUP /x/z; COPY /g/unit /p/q/r;",
        "CREATE GROUP /x/w; CREATE GROUP /g/d/sub;",
    ] {
        let c = failure(run(&path, cmd, Atomic::No).unwrap_err());
        assert_eq!((c.index, c.kept), (2, 1));
        let shown = EditError::Command(c).to_string();
        assert!(
            shown.ends_with(
                "command 1 was applied and is kept; fix command 2 and run it and the rest again"
            ),
            "{shown}"
        );
        let f = File::open(&path).unwrap();
        assert!(!f.root().contains("p").unwrap(), "{cmd}");
        assert!(!f.root().contains("g/d/sub").unwrap(), "{cmd}");
        f.check().unwrap();
    }
    let f = File::open(&path).unwrap();
    assert_eq!(
        f.root().group("x").unwrap().member_names().unwrap(),
        vec!["w", "y", "z"]
    );
}

#[test]
fn levels_agree_when_nothing_fails() {
    let session = SESSION.replace("{256}", "{255}");
    let mut results = vec![];
    for atomic in [Atomic::Yes, Atomic::Inc, Atomic::No] {
        let dir = tempfile::tempdir().unwrap();
        let path = fresh(dir.path());
        let r = run(&path, &session, atomic).unwrap();
        assert_eq!(r.applied, 5);
        let f = File::open(&path).unwrap();
        f.check().unwrap();
        let g = f.root().group("g").unwrap();
        results.push((
            g.attrs().names().unwrap(),
            f.root().member_names().unwrap(),
            r.done,
        ));
    }
    assert_eq!(results[0], results[1]);
    assert_eq!(results[0], results[2]);
    assert_eq!(
        results[0].2,
        vec![
            "created attribute /g/one",
            "created dataset /big",
            "renamed attribute /g/units to /g/unit",
            "created attribute /g/d/x",
            "created attribute /g/five",
        ]
    );
}
