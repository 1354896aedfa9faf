//! Commands applied to real files and read back through the arca API.

use std::path::{Path, PathBuf};

use arca::{AttrValue, ByteOrder, DatasetOptions, Datatype, File};
use arca_edit::{run, Atomic, EditError};

fn fresh(dir: &Path) -> PathBuf {
    let path = dir.join("t.arca");
    let f = File::create(&path).unwrap();
    let g = f.root().create_group("g").unwrap();
    g.attrs().set("units", &AttrValue::string("m/s")).unwrap();
    g.attrs()
        .set("scale", &AttrValue::array(&[2], &[1.5f64, 2.5]).unwrap())
        .unwrap();
    g.create_dataset("d", &DatasetOptions::new(Datatype::int(4), &[3]))
        .unwrap();
    f.close().unwrap();
    path
}

fn ok(path: &Path, cmds: &str) {
    if let Err(e) = run(path, cmds, Atomic::Yes) {
        panic!("{cmds}: {e}");
    }
}

fn semantic(path: &Path, cmds: &str, needle: &str) -> arca_edit::CommandError {
    match run(path, cmds, Atomic::Yes) {
        Err(EditError::Command(c)) => {
            assert!(
                c.message.contains(needle),
                "{cmds}: {:?} lacks {needle:?}",
                c.message
            );
            c
        }
        other => panic!("{cmds}: expected a semantic error, got {other:?}"),
    }
}

fn attr(path: &Path, object: &str, name: &str) -> AttrValue {
    let f = File::open(path).unwrap();
    let o = f.root().object(object).unwrap();
    o.attrs().get(name).unwrap()
}

/// The command file of the h5edit atomicity study: nine CREATE commands on
/// the root group.
const STUDY: &str = "\
CREATE /newattrI32BE {H5T_STD_I32BE (1, 2, 3) DATA {11, 12, 21, 22, 31,32}};
CREATE /newattrF64LE {H5T_IEEE_F64LE (2, 2, 2) DATA {0.1E1, 0.2E1, -1.1e2, -
1.2e2, 2.1E-3, 2.2E-3, -3.1E-3, -3.2E-2}};
CREATE /newattr1 {H5T_STD_I32BE (1, 2, 3) DATA {11, 12, 21, 22, 31,32}};
CREATE /newattr2 {H5T_STD_I32BE (1, 2, 3) DATA {11, 12, 21, 22, 31,32}};
CREATE /newattr3 {H5T_STD_I32BE (1, 2, 3) DATA {11, 12, 21, 22, 31,32}};
CREATE /newattr4 {H5T_STD_I32BE (1, 2, 3) DATA {11, 12, 21, 22, 31,32}};
CREATE /newattr5 {H5T_STD_I32BE (1, 2, 3) DATA {11, 12, 21, 22, 31,32}};
CREATE /newattr6 {H5T_STD_I32BE (1, 2, 3) DATA {11, 12, 21, 22, 31,32}};
CREATE /newattr7 {H5T_STD_I32BE (1, 2, 3) DATA {11, 12, 21, 22, 31,32}};
";

#[test]
fn the_study_command_file() {
    // The PDF split "-1.2e2" across two lines; as a command file it is one token.
    let study = STUDY.replace("-\n1.2e2", "-1.2e2");
    let cmds = arca_edit::parse(&study).unwrap();
    assert_eq!(cmds.len(), 9);
    for atomic in [Atomic::Yes, Atomic::Inc, Atomic::No] {
        let dir = tempfile::tempdir().unwrap();
        let path = fresh(dir.path());
        let r = run(&path, &study, atomic).unwrap();
        assert_eq!(r.applied, 9);
        let a = attr(&path, "/", "newattrI32BE");
        assert_eq!(
            a.dtype,
            Datatype::Int {
                size: 4,
                order: ByteOrder::Big
            }
        );
        assert_eq!(a.shape, vec![1, 2, 3]);
        assert_eq!(a.to_vec::<i32>().unwrap(), vec![11, 12, 21, 22, 31, 32]);
        let a = attr(&path, "/", "newattrF64LE");
        assert_eq!(
            a.dtype,
            Datatype::Float {
                size: 8,
                order: ByteOrder::Little
            }
        );
        assert_eq!(a.shape, vec![2, 2, 2]);
        assert_eq!(
            a.to_vec::<f64>().unwrap(),
            vec![1.0, 2.0, -110.0, -120.0, 2.1e-3, 2.2e-3, -3.1e-3, -3.2e-2]
        );
        for i in 1..=7 {
            let a = attr(&path, "/", &format!("newattr{i}"));
            assert_eq!(a.to_vec::<i32>().unwrap(), vec![11, 12, 21, 22, 31, 32]);
        }
        File::open(&path).unwrap().check().unwrap();
    }
}

#[test]
fn every_numeric_type_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let path = fresh(dir.path());
    let mut cmds = String::new();
    for &(name, _) in arca_edit::TYPE_NAMES {
        cmds.push_str(&format!(
            "CREATE GROUP /g {name} {{{name} (3) DATA {{0, 1, 100}}}};\n"
        ));
    }
    ok(&path, &cmds);
    for (name, dtype) in arca_edit::TYPE_NAMES {
        let a = attr(&path, "/g", name);
        assert_eq!(&a.dtype, dtype, "{name}");
        assert_eq!(a.shape, vec![3]);
        let back: Vec<f64> = match dtype {
            Datatype::Int { size: 1, .. } => a
                .to_vec::<i8>()
                .unwrap()
                .iter()
                .map(|&x| x as f64)
                .collect(),
            Datatype::Int { size: 2, .. } => a
                .to_vec::<i16>()
                .unwrap()
                .iter()
                .map(|&x| x as f64)
                .collect(),
            Datatype::Int { size: 4, .. } => a
                .to_vec::<i32>()
                .unwrap()
                .iter()
                .map(|&x| x as f64)
                .collect(),
            Datatype::Int { .. } => a
                .to_vec::<i64>()
                .unwrap()
                .iter()
                .map(|&x| x as f64)
                .collect(),
            Datatype::UInt { size: 1, .. } => a
                .to_vec::<u8>()
                .unwrap()
                .iter()
                .map(|&x| x as f64)
                .collect(),
            Datatype::UInt { size: 2, .. } => a
                .to_vec::<u16>()
                .unwrap()
                .iter()
                .map(|&x| x as f64)
                .collect(),
            Datatype::UInt { size: 4, .. } => a
                .to_vec::<u32>()
                .unwrap()
                .iter()
                .map(|&x| x as f64)
                .collect(),
            Datatype::UInt { .. } => a
                .to_vec::<u64>()
                .unwrap()
                .iter()
                .map(|&x| x as f64)
                .collect(),
            Datatype::Float { size: 4, .. } => a
                .to_vec::<f32>()
                .unwrap()
                .iter()
                .map(|&x| x as f64)
                .collect(),
            _ => a.to_vec::<f64>().unwrap(),
        };
        assert_eq!(back, vec![0.0, 1.0, 100.0], "{name}");
    }
}

#[test]
fn limits_of_each_integer_type() {
    let dir = tempfile::tempdir().unwrap();
    let path = fresh(dir.path());
    ok(
        &path,
        "CREATE /i8 {H5T_STD_I8BE (2) DATA {-128, 127}};
         CREATE /u8 {H5T_STD_U8LE (2) DATA {0, 255}};
         CREATE /i16 {H5T_STD_I16BE (2) DATA {-32768, 32767}};
         CREATE /u16 {H5T_STD_U16BE (2) DATA {0, 65535}};
         CREATE /i32 {H5T_STD_I32LE (2) DATA {-2147483648, 2147483647}};
         CREATE /u32 {H5T_STD_U32BE (2) DATA {0, 4294967295}};
         CREATE /i64 {H5T_STD_I64BE (2) DATA {-9223372036854775808, 9223372036854775807}};
         CREATE /u64 {H5T_STD_U64BE (2) DATA {0, 18446744073709551615}};
         CREATE /f32 {H5T_IEEE_F32BE (3) DATA {3.4e38, -inf, nan}};",
    );
    assert_eq!(
        attr(&path, "/", "i8").to_vec::<i8>().unwrap(),
        vec![-128, 127]
    );
    assert_eq!(attr(&path, "/", "u8").to_vec::<u8>().unwrap(), vec![0, 255]);
    assert_eq!(
        attr(&path, "/", "i16").to_vec::<i16>().unwrap(),
        vec![i16::MIN, i16::MAX]
    );
    assert_eq!(
        attr(&path, "/", "u16").to_vec::<u16>().unwrap(),
        vec![0, u16::MAX]
    );
    assert_eq!(
        attr(&path, "/", "i32").to_vec::<i32>().unwrap(),
        vec![i32::MIN, i32::MAX]
    );
    assert_eq!(
        attr(&path, "/", "u32").to_vec::<u32>().unwrap(),
        vec![0, u32::MAX]
    );
    assert_eq!(
        attr(&path, "/", "i64").to_vec::<i64>().unwrap(),
        vec![i64::MIN, i64::MAX]
    );
    assert_eq!(
        attr(&path, "/", "u64").to_vec::<u64>().unwrap(),
        vec![0, u64::MAX]
    );
    let f = attr(&path, "/", "f32").to_vec::<f32>().unwrap();
    assert_eq!(f[0], 3.4e38);
    assert_eq!(f[1], f32::NEG_INFINITY);
    assert!(f[2].is_nan());

    for (cmd, needle) in [
        (
            "CREATE /x {H5T_STD_I8LE DATA {128}};",
            "value 1 (128): out of range for H5T_STD_I8LE",
        ),
        ("CREATE /x {H5T_STD_I8LE DATA {-129}};", "out of range"),
        (
            "CREATE /x {H5T_STD_U8LE (2) DATA {1, -1}};",
            "value 2 (-1): out of range for H5T_STD_U8LE",
        ),
        ("CREATE /x {H5T_STD_U16BE DATA {65536}};", "out of range"),
        (
            "CREATE /x {H5T_STD_I32BE DATA {2147483648}};",
            "out of range",
        ),
        (
            "CREATE /x {H5T_STD_U64LE DATA {18446744073709551616}};",
            "out of range",
        ),
        (
            "CREATE /x {H5T_STD_I64LE DATA {99999999999999999999999999999999999999999999}};",
            "out of range",
        ),
        (
            "CREATE /x {H5T_IEEE_F32LE DATA {3.5e38}};",
            "out of range for H5T_IEEE_F32LE",
        ),
        ("CREATE /x {H5T_IEEE_F64LE DATA {1e999}};", "out of range"),
        ("CREATE /x {H5T_STD_I32LE DATA {1.5}};", "needs an integer"),
        ("CREATE /x {H5T_STD_I32LE DATA {\"1\"}};", "quoted string"),
    ] {
        semantic(&path, cmd, needle);
    }
}

#[test]
fn defaults_and_strings() {
    let dir = tempfile::tempdir().unwrap();
    let path = fresh(dir.path());
    ok(
        &path,
        r#"CREATE /g/temperature {{-40.0}};
           CREATE /station {{"Summit"}};
           CREATE /names {(3) DATA {"a", "bcd", ""}};
           CREATE /fixed {H5T_STRING { STRSIZE 6; STRPAD H5T_STR_NULLTERM; CSET H5T_CSET_ASCII; CTYPE H5T_C_S1; } DATA {"abc"}};
           CREATE /spaced {H5T_STRING { STRSIZE 4; STRPAD H5T_STR_SPACEPAD; } (2) DATA {"ab", "c"}};
           CREATE /var {H5T_STRING { STRSIZE H5T_VARIABLE; } (2) DATA {"xy", "z"}};"#,
    );
    let t = attr(&path, "/g", "temperature");
    assert_eq!(t.dtype, Datatype::float(4));
    assert!(t.shape.is_empty());
    assert_eq!(t.to_vec::<f32>().unwrap(), vec![-40.0]);
    assert_eq!(attr(&path, "/", "station").as_string().unwrap(), "Summit");
    let n = attr(&path, "/", "names");
    assert_eq!(n.dtype, Datatype::bytes(3));
    assert_eq!(n.data, b"a\0\0bcd\0\0\0");
    let f = attr(&path, "/", "fixed");
    let nullterm = Datatype::FixedBytes {
        len: 6,
        cset: arca::Charset::Ascii,
        pad: arca::StrPad::NullTerm,
    };
    assert_eq!(f.dtype, nullterm);
    assert_eq!(f.as_string().unwrap(), "abc");
    let s = attr(&path, "/", "spaced");
    assert_eq!(s.data, b"ab  c   ");
    assert!(matches!(
        s.dtype,
        Datatype::FixedBytes {
            pad: arca::StrPad::SpacePad,
            ..
        }
    ));
    let v = attr(&path, "/", "var");
    assert_eq!(v.dtype, Datatype::bytes(2));
    assert_eq!(v.data, b"xyz\0");

    semantic(
        &path,
        r#"CREATE /y {H5T_STRING { STRSIZE 2; } DATA {"abc"}};"#,
        "3 bytes do not fit",
    );
    semantic(
        &path,
        r#"CREATE /y {H5T_STRING { STRSIZE 2; } DATA {5}};"#,
        "needs quoted values",
    );
    semantic(
        &path,
        "CREATE /y {(2) DATA {1, \"a\"}};",
        "quoted string cannot be stored",
    );
    semantic(
        &path,
        "CREATE DATASET /y {H5T_STRING { STRSIZE H5T_VARIABLE; } (2)};",
        "needs DATA to size",
    );
}

#[test]
fn copy_rename_modify_delete_attributes() {
    let dir = tempfile::tempdir().unwrap();
    let path = fresh(dir.path());
    ok(
        &path,
        "COPY /g/units /g/d/units;
         COPY GROUP /g scale scale2;
         RENAME /g/scale2 /g/scale3;
         RENAME GROUP /g scale3 GROUP /g scale4;
         RENAME DATASET /g/d units unit;
         MODIFY /g/scale {3, 4};
         MODIFY /g/scale4 DATA {5, 6};
         MODIFY GROUP /g units {H5T_STD_U16BE (2, 2) DATA {1, 2, 3, 4}};",
    );
    assert_eq!(attr(&path, "/g/d", "unit").as_string().unwrap(), "m/s");
    assert_eq!(
        attr(&path, "/g", "scale").to_vec::<f64>().unwrap(),
        vec![3.0, 4.0]
    );
    assert_eq!(
        attr(&path, "/g", "scale4").to_vec::<f64>().unwrap(),
        vec![5.0, 6.0]
    );
    let u = attr(&path, "/g", "units");
    assert_eq!(
        u.dtype,
        Datatype::UInt {
            size: 2,
            order: ByteOrder::Big
        }
    );
    assert_eq!(u.shape, vec![2, 2]);
    assert_eq!(u.to_vec::<u16>().unwrap(), vec![1, 2, 3, 4]);
    // A definition without a type keeps the attribute's type; one without a
    // dataspace keeps its shape.
    ok(
        &path,
        "MODIFY /g/units {(4) DATA {9, 8, 7, 6}}; MODIFY /g/scale {H5T_IEEE_F32LE DATA {1, 2}};",
    );
    let u = attr(&path, "/g", "units");
    assert_eq!(
        u.dtype,
        Datatype::UInt {
            size: 2,
            order: ByteOrder::Big
        }
    );
    assert_eq!(u.to_vec::<u16>().unwrap(), vec![9, 8, 7, 6]);
    let s = attr(&path, "/g", "scale");
    assert_eq!(
        (s.dtype, s.shape.clone()),
        (
            Datatype::Float {
                size: 4,
                order: ByteOrder::Little
            },
            vec![2]
        )
    );
    ok(&path, "DELETE /g/scale; DELETE DATASET /g/d unit;");
    let f = File::open(&path).unwrap();
    assert!(!f
        .root()
        .group("g")
        .unwrap()
        .attrs()
        .contains("scale")
        .unwrap());
    assert!(f.root().dataset("g/d").unwrap().attrs().is_empty().unwrap());
}

#[test]
fn groups_and_datasets() {
    let dir = tempfile::tempdir().unwrap();
    let path = fresh(dir.path());
    ok(
        &path,
        "CREATE GROUP /a/b;
         CREATE DATASET /a/b/x { H5T_IEEE_F64BE (2, 2) DATA {1, 2, 3, 4} };
         CREATE DATASET /a/y { H5T_STD_I16LE SIMPLE { (2) / (H5S_UNLIMITED) } DATA {-1, 1} };
         CREATE DATASET /a/e { H5T_STD_U8LE (5) };
         CREATE DATASET /s { H5T_STRING { STRSIZE 3; } (2) DATA {\"ab\", \"cde\"} };
         RENAME /a/b /c;
         RENAME GROUP /c b2;
         RENAME DATASET /a/y /a/z;
         CREATE /b2/x/attr {{1}};
         DELETE GROUP /g;",
    );
    {
        let f = File::open(&path).unwrap();
        let x = f.root().dataset("/b2/x").unwrap();
        assert_eq!(
            x.dtype().unwrap(),
            Datatype::Float {
                size: 8,
                order: ByteOrder::Big
            }
        );
        assert_eq!(x.read_all::<f64>().unwrap(), vec![1.0, 2.0, 3.0, 4.0]);
        assert_eq!(
            x.attrs().get("attr").unwrap().to_vec::<f32>().unwrap(),
            vec![1.0]
        );
        let z = f.root().dataset("/a/z").unwrap();
        assert_eq!(z.read_all::<i16>().unwrap(), vec![-1, 1]);
        assert_eq!(z.maxshape().unwrap(), vec![None]);
        assert_eq!(
            f.root().dataset("/a/e").unwrap().read_all::<u8>().unwrap(),
            vec![0; 5]
        );
        let mut s = vec![0u8; 6];
        f.root()
            .dataset("/s")
            .unwrap()
            .read_bytes(&arca::Selection::all(&[2]), &mut s)
            .unwrap();
        assert_eq!(s, b"ab\0cde");
        assert!(!f.root().contains("g").unwrap());
        assert_eq!(f.root().member_names().unwrap(), vec!["a", "b2", "s"]);
        f.check().unwrap();
    }

    ok(&path, "DELETE DATASET /a/e;");
    assert!(!File::open(&path).unwrap().root().contains("a/e").unwrap());
}

#[test]
fn semantic_errors_name_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let path = fresh(dir.path());
    let c = semantic(
        &path,
        "CREATE /ok {{1}};\n\n  CREATE /g/units {{2}};",
        "attribute /g/units exists already",
    );
    assert_eq!(
        (c.index, c.line, c.text.as_str()),
        (2, 3, "CREATE /g/units {{2}};")
    );
    let shown = EditError::Command(c).to_string();
    assert!(
        shown.starts_with("command 2 (line 3) failed: attribute /g/units exists already"),
        "{shown}"
    );
    assert!(shown.contains("the file is unchanged"), "{shown}");

    for (cmd, needle) in [
        ("CREATE /nope/a {{1}};", "no group or dataset /nope"),
        (
            "CREATE GROUP /g/d a {{1}};",
            "/g/d is a dataset, not a group",
        ),
        ("CREATE DATASET /g x {{1}};", "/g is a group, not a dataset"),
        (
            "CREATE /a {(2, 2) DATA {1, 2, 3}};",
            "DATA has 3 values but the dataspace [2, 2] holds 4",
        ),
        ("CREATE /a {DATA {1, 2}};", "give a dataspace, e.g. (2)"),
        (
            "CREATE /a {H5T_STD_I8LE SIMPLE { (2) / (4) } DATA {1, 2}};",
            "an attribute cannot grow",
        ),
        ("CREATE /a {H5T_STD_I8LE (2)};", "needs DATA"),
        ("COPY /g/none /g/x;", "no attribute /g/none"),
        (
            "COPY /g/units /g/scale;",
            "attribute /g/scale exists already",
        ),
        ("COPY /g/units /zz/x;", "no group or dataset /zz"),
        ("DELETE /g/none;", "no attribute /g/none"),
        ("DELETE GROUP /g/d;", "/g/d is a dataset, not a group"),
        ("DELETE DATASET /nope;", "no dataset /nope"),
        (
            "RENAME /g/units /g/scale;",
            "attribute /g/scale exists already",
        ),
        (
            "RENAME /g/units /x;",
            "RENAME keeps an attribute on its object",
        ),
        ("RENAME /g/nothing /g/x;", "nothing to rename"),
        ("RENAME /g /g/d;", "/g/d exists already"),
        ("RENAME /g /g/h;", "cannot move /g into itself"),
        ("RENAME /g /q/h;", "no group /q"),
        ("RENAME DATASET /g /h;", "/g is a group, not a dataset"),
        ("MODIFY /g/none {1};", "no attribute /g/none"),
        (
            "MODIFY /g/scale {1, 2, 3};",
            "DATA has 3 values but the dataspace [2] holds 2",
        ),
        (
            "MODIFY /g/units {\"much too long\"};",
            "13 bytes do not fit",
        ),
        ("CREATE GROUP /g;", "/g exists already"),
        (
            "CREATE GROUP /g/d/x;",
            "/g/d is a dataset, so it cannot hold /g/d/x",
        ),
        (
            "CREATE DATASET /g/d {H5T_STD_I8LE (1)};",
            "/g/d exists already",
        ),
        (
            "CREATE DATASET /n {H5T_STD_I8LE (2) DATA {1}};",
            "DATA has 1 value but",
        ),
    ] {
        let before = std::fs::read(&path).unwrap();
        let c = semantic(&path, cmd, needle);
        assert_eq!(c.index, 1);
        assert_eq!(c.text, cmd);
        assert_eq!(
            std::fs::read(&path).unwrap(),
            before,
            "{cmd} changed the file"
        );
    }

    // An object and an attribute by the same path: RENAME asks which.
    ok(&path, "CREATE GROUP /g d {{1}};");
    semantic(
        &path,
        "RENAME /g/d /g/e;",
        "both an object and an attribute",
    );
}

#[test]
fn exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let path = fresh(dir.path());
    assert_eq!(
        run(&path, "CREATE /a {{1}}", Atomic::Yes)
            .unwrap_err()
            .exit_code(),
        2
    );
    assert_eq!(
        run(&path, "DELETE /nope;", Atomic::Yes)
            .unwrap_err()
            .exit_code(),
        3
    );
    assert_eq!(
        run(dir.path().join("missing.arca"), "DELETE /a;", Atomic::Yes)
            .unwrap_err()
            .exit_code(),
        1
    );

    // Not an arca file: damaged.
    let junk = dir.path().join("junk.arca");
    std::fs::write(&junk, vec![7u8; 10000]).unwrap();
    let e = run(&junk, "DELETE /a;", Atomic::Yes).unwrap_err();
    assert!(matches!(e, EditError::Damaged(_)), "{e:?}");
    assert_eq!(e.exit_code(), 4);

    // Held open for writing by another handle: locked.
    let holder = File::open_rw(&path).unwrap();
    let e = run(&path, "DELETE /g/units;", Atomic::Yes).unwrap_err();
    assert_eq!(e.exit_code(), 4, "{e}");
    drop(holder);

    // Through main_with, with a command file.
    let cmdfile = dir.path().join("cmds.txt");
    std::fs::write(&cmdfile, "# edit\nDELETE /g/units;\n").unwrap();
    let args = |atomic, command: Option<&str>, command_file: Option<&Path>, file: &Path| {
        arca_edit::EditArgs {
            atomic,
            command: command.map(String::from),
            command_file: command_file.map(Path::to_path_buf),
            quiet: true,
            file: file.to_path_buf(),
        }
    };
    assert_eq!(
        arca_edit::main_with(args(Atomic::Inc, None, Some(&cmdfile), &path)),
        0
    );
    assert_eq!(
        arca_edit::main_with(args(Atomic::Inc, None, Some(&cmdfile), &path)),
        3
    );
    assert_eq!(
        arca_edit::main_with(args(Atomic::Yes, Some("DELETE"), None, &path)),
        2
    );
    assert_eq!(
        arca_edit::main_with(args(
            Atomic::Yes,
            None,
            Some(&dir.path().join("none")),
            &path
        )),
        1
    );
    assert_eq!(
        arca_edit::main_with(args(Atomic::Yes, None, None, &path)),
        1
    );
}

#[test]
fn command_line_arguments() {
    use clap::Parser;
    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        edit: arca_edit::EditArgs,
    }
    let parse =
        |args: &[&str]| Cli::try_parse_from(std::iter::once("edit").chain(args.iter().copied()));
    let a = parse(&["-c", "DELETE /a;", "f.arca"]).unwrap().edit;
    assert_eq!(a.atomic, Atomic::Yes);
    assert_eq!(a.command.as_deref(), Some("DELETE /a;"));
    assert_eq!(a.file, PathBuf::from("f.arca"));
    let a = parse(&["--atomic=INC", "--command-file", "cmds", "f.arca"])
        .unwrap()
        .edit;
    assert_eq!(a.atomic, Atomic::Inc);
    assert_eq!(a.command_file, Some(PathBuf::from("cmds")));
    assert_eq!(
        parse(&["--atomic", "no", "-c", "x", "f"])
            .unwrap()
            .edit
            .atomic,
        Atomic::No
    );
    assert!(parse(&["f.arca"]).is_err(), "commands are required");
    assert!(
        parse(&["-c", "x", "--command-file", "y", "f"]).is_err(),
        "only one source"
    );
    assert!(parse(&["--atomic", "maybe", "-c", "x", "f"]).is_err());
    assert!(parse(&["-c", "x"]).is_err(), "FILE is required");
}
