//! Parser tests: every command form, every type name, every error form.

use arca::{ByteOrder, Datatype};
use arca_edit::{
    parse, AttrName, Definition, Modify, ObjKind, Op, ParseError, Space, TypeSpec, Value,
};

fn one(src: &str) -> Op {
    let mut v = parse(src).unwrap_or_else(|e| panic!("{src}: {e}"));
    assert_eq!(v.len(), 1, "{src}");
    v.remove(0).op
}

fn err(src: &str) -> ParseError {
    match parse(src) {
        Ok(v) => panic!("{src} parsed: {v:?}"),
        Err(e) => e,
    }
}

fn attr(object: &str, name: &str, kind: Option<ObjKind>) -> AttrName {
    AttrName {
        object: object.into(),
        name: name.into(),
        kind,
    }
}

fn nums(v: &[&str]) -> Vec<Value> {
    v.iter().map(|s| Value::Number(s.to_string())).collect()
}

fn fixed(dtype: Datatype) -> Option<TypeSpec> {
    Some(TypeSpec::Fixed {
        dtype,
        space_pad: false,
    })
}

#[test]
fn create_full_definition() {
    let op = one("CREATE /newattrF64LE {H5T_IEEE_F64LE (2, 2, 2) DATA {0.1E1, 0.2E1, -1.1e2, -1.2e2, 2.1E-3, 2.2E-3, -3.1E-3, -3.2E-2}};");
    let Op::CreateAttr { attr: a, def } = op else {
        panic!()
    };
    assert_eq!(a, attr("/", "newattrF64LE", None));
    assert_eq!(
        def.dtype,
        fixed(Datatype::Float {
            size: 8,
            order: ByteOrder::Little
        })
    );
    assert_eq!(
        def.space,
        Some(Space::Simple {
            dims: vec![2, 2, 2],
            max: None
        })
    );
    assert_eq!(def.data.unwrap().len(), 8);
}

#[test]
fn create_defaults_and_optional_keywords() {
    // h5edit's shortest form: data only, DATA keyword left out.
    let op = one("CREATE /sta1/month12/temperature {{-40.0}};");
    assert_eq!(
        op,
        Op::CreateAttr {
            attr: attr("/sta1/month12", "temperature", None),
            def: Definition {
                dtype: None,
                space: None,
                data: Some(nums(&["-40.0"]))
            },
        }
    );
    // DATATYPE and DATASPACE keywords, SCALAR.
    let op = one("create DATASET /d t {DATATYPE H5T_STD_U8LE DATASPACE SCALAR DATA {255}};");
    let Op::CreateAttr { attr: a, def } = op else {
        panic!()
    };
    assert_eq!(a, attr("/d", "t", Some(ObjKind::Dataset)));
    assert_eq!(def.space, Some(Space::Scalar));
    assert_eq!(
        def.dtype,
        fixed(Datatype::UInt {
            size: 1,
            order: ByteOrder::Little
        })
    );
    // GROUP form and a quoted value.
    let op = one(r#"CREATE GROUP /g units {{"m/s"}};"#);
    let Op::CreateAttr { attr: a, def } = op else {
        panic!()
    };
    assert_eq!(a, attr("/g", "units", Some(ObjKind::Group)));
    assert_eq!(def.data, Some(vec![Value::Str("m/s".into())]));
}

#[test]
fn every_type_name() {
    for (name, dtype) in arca_edit::TYPE_NAMES {
        for spelled in [name.to_string(), name.to_ascii_lowercase()] {
            let op = one(&format!("CREATE /a {{{spelled} DATA {{1}}}};"));
            let Op::CreateAttr { def, .. } = op else {
                panic!()
            };
            assert_eq!(def.dtype, fixed(dtype.clone()), "{spelled}");
        }
    }
    // Spot checks of the table itself.
    let t = |n| arca_edit::type_by_name(n).unwrap();
    assert_eq!(
        t("H5T_STD_I16BE"),
        Datatype::Int {
            size: 2,
            order: ByteOrder::Big
        }
    );
    assert_eq!(
        t("H5T_STD_U64LE"),
        Datatype::UInt {
            size: 8,
            order: ByteOrder::Little
        }
    );
    assert_eq!(
        t("H5T_IEEE_F32BE"),
        Datatype::Float {
            size: 4,
            order: ByteOrder::Big
        }
    );
    assert_eq!(t("H5T_NATIVE_FLOAT"), Datatype::float(4));
    assert_eq!(t("H5T_NATIVE_DOUBLE"), Datatype::float(8));
    assert_eq!(t("H5T_NATIVE_CHAR"), Datatype::int(1));
    assert_eq!(t("H5T_NATIVE_UCHAR"), Datatype::uint(1));
    assert_eq!(t("H5T_NATIVE_LONG"), Datatype::int(8));
    assert_eq!(t("H5T_NATIVE_ULLONG"), Datatype::uint(8));
    assert_eq!(t("H5T_NATIVE_UINT16"), Datatype::uint(2));
    assert_eq!(t("H5T_NATIVE_INT64"), Datatype::int(8));
    assert_eq!(arca_edit::TYPE_NAMES.len(), 41);
}

#[test]
fn string_types() {
    let op = one(
        "CREATE /s { H5T_STRING {\n   STRSIZE 5;\n   STRPAD H5T_STR_NULLTERM;\n   CSET H5T_CSET_ASCII;\n   CTYPE H5T_C_S1;\n} SCALAR DATA { \"abc\" } };",
    );
    let Op::CreateAttr { def, .. } = op else {
        panic!()
    };
    // The padding and character set written are kept in the type.
    assert_eq!(
        def.dtype,
        fixed(Datatype::FixedBytes {
            len: 5,
            cset: arca::Charset::Ascii,
            pad: arca::StrPad::NullTerm
        })
    );
    let op = one("CREATE /s { H5T_STRING { STRSIZE H5T_VARIABLE; STRPAD H5T_STR_SPACEPAD } DATA { \"a\" } };");
    let Op::CreateAttr { def, .. } = op else {
        panic!()
    };
    assert_eq!(
        def.dtype,
        Some(TypeSpec::VarString {
            cset: arca::Charset::Ascii,
            pad: arca::StrPad::SpacePad
        })
    );
    let op = one(
        r#"CREATE /s { H5T_STRING { STRSIZE 3; CSET H5T_CSET_UTF8; STRPAD H5T_STR_SPACEPAD; } DATA { "a\"b", "\\" } };"#,
    );
    let Op::CreateAttr { def, .. } = op else {
        panic!()
    };
    assert_eq!(
        def.dtype,
        Some(TypeSpec::Fixed {
            dtype: Datatype::FixedBytes {
                len: 3,
                cset: arca::Charset::Utf8,
                pad: arca::StrPad::SpacePad
            },
            space_pad: true
        })
    );
    assert_eq!(
        def.data,
        Some(vec![Value::Str("a\"b".into()), Value::Str("\\".into())])
    );
}

#[test]
fn dataspaces() {
    let space = |s: &str| {
        let Op::CreateDataset { def, .. } =
            one(&format!("CREATE DATASET /d {{H5T_STD_I8LE {s}}};"))
        else {
            panic!()
        };
        def.space.unwrap()
    };
    assert_eq!(space("SCALAR"), Space::Scalar);
    assert_eq!(
        space("( 4 )"),
        Space::Simple {
            dims: vec![4],
            max: None
        }
    );
    assert_eq!(
        space("(0,3)"),
        Space::Simple {
            dims: vec![0, 3],
            max: None
        }
    );
    assert_eq!(
        space("SIMPLE { ( 2, 3 ) / ( H5S_UNLIMITED, 3 ) }"),
        Space::Simple {
            dims: vec![2, 3],
            max: Some(vec![None, Some(3)])
        }
    );
    assert_eq!(
        space("SIMPLE (2, 5)"),
        Space::Simple {
            dims: vec![2, 5],
            max: None
        }
    );
    assert_eq!(
        space("simple ( 2 ) / ( 2 )"),
        Space::Simple {
            dims: vec![2],
            max: Some(vec![Some(2)])
        }
    );
    assert_eq!(
        space("(2) / (8)"),
        Space::Simple {
            dims: vec![2],
            max: Some(vec![Some(8)])
        }
    );
}

#[test]
fn copy_delete_rename_modify() {
    assert_eq!(
        one("COPY /g/a /d/b;"),
        Op::CopyAttr {
            from: attr("/g", "a", None),
            to: attr("/d", "b", None)
        }
    );
    assert_eq!(
        one("COPY GROUP /g a b;"),
        Op::CopyAttr {
            from: attr("/g", "a", Some(ObjKind::Group)),
            to: attr("/g", "b", Some(ObjKind::Group))
        }
    );
    assert_eq!(
        one("COPY GROUP /g a DATASET /g/d a;"),
        Op::CopyAttr {
            from: attr("/g", "a", Some(ObjKind::Group)),
            to: attr("/g/d", "a", Some(ObjKind::Dataset))
        }
    );
    assert_eq!(
        one("DELETE /g/a;"),
        Op::DeleteAttr {
            attr: attr("/g", "a", None)
        }
    );
    assert_eq!(
        one("delete dataset /d a;"),
        Op::DeleteAttr {
            attr: attr("/d", "a", Some(ObjKind::Dataset))
        }
    );
    assert_eq!(
        one("RENAME GROUP /g a b;"),
        Op::RenameAttr {
            from: attr("/g", "a", Some(ObjKind::Group)),
            to: attr("/g", "b", Some(ObjKind::Group))
        }
    );
    assert_eq!(
        one("RENAME /g/a GROUP /g b;"),
        Op::RenameAttr {
            from: attr("/g", "a", None),
            to: attr("/g", "b", Some(ObjKind::Group))
        }
    );
    assert_eq!(
        one("RENAME /g/a /g/b;"),
        Op::Rename {
            from: "/g/a".into(),
            to: "/g/b".into()
        }
    );
    assert_eq!(
        one("RENAME /g/a b;"),
        Op::Rename {
            from: "/g/a".into(),
            to: "/g/b".into()
        }
    );
    assert_eq!(
        one("MODIFY /g/a {1, 2};"),
        Op::ModifyAttr {
            attr: attr("/g", "a", None),
            change: Modify::Data(nums(&["1", "2"]))
        }
    );
    assert_eq!(
        one("MODIFY /g/a DATA {3};"),
        Op::ModifyAttr {
            attr: attr("/g", "a", None),
            change: Modify::Data(nums(&["3"]))
        }
    );
    let Op::ModifyAttr {
        change: Modify::Definition(def),
        ..
    } = one("MODIFY /g/a {H5T_STD_I64LE (2) DATA {1, 2}};")
    else {
        panic!()
    };
    assert_eq!(
        def.dtype,
        fixed(Datatype::Int {
            size: 8,
            order: ByteOrder::Little
        })
    );
    let Op::ModifyAttr {
        change: Modify::Definition(def),
        ..
    } = one("MODIFY /g/a {{5}};")
    else {
        panic!()
    };
    assert_eq!(def.data, Some(nums(&["5"])));
}

#[test]
fn object_commands() {
    assert_eq!(
        one("CREATE GROUP /a/b;"),
        Op::CreateGroup {
            path: "/a/b".into()
        }
    );
    assert_eq!(
        one("CREATE GROUP a//b/;"),
        Op::CreateGroup {
            path: "/a/b".into()
        }
    );
    assert_eq!(
        one("DELETE GROUP /a;"),
        Op::DeleteObject {
            path: "/a".into(),
            kind: ObjKind::Group
        }
    );
    assert_eq!(
        one("DELETE DATASET /x;"),
        Op::DeleteObject {
            path: "/x".into(),
            kind: ObjKind::Dataset
        }
    );
    assert_eq!(
        one("RENAME /a /c;"),
        Op::Rename {
            from: "/a".into(),
            to: "/c".into()
        }
    );
    assert_eq!(
        one("RENAME GROUP /a/b c;"),
        Op::RenameObject {
            from: "/a/b".into(),
            to: "/a/c".into(),
            kind: ObjKind::Group
        }
    );
    assert_eq!(
        one("RENAME DATASET /x /g/y;"),
        Op::RenameObject {
            from: "/x".into(),
            to: "/g/y".into(),
            kind: ObjKind::Dataset
        }
    );
    let Op::CreateDataset { path, def } =
        one("CREATE DATASET /d { H5T_IEEE_F32BE (2, 2) DATA {1, 2.5, -3, 4e2} };")
    else {
        panic!()
    };
    assert_eq!(path, "/d");
    assert_eq!(def.data.unwrap().len(), 4);
    let Op::CreateDataset { def, .. } = one("CREATE DATASET /e { H5T_STD_I32LE (100) };") else {
        panic!()
    };
    assert_eq!(def.data, None);
}

#[test]
fn comments_text_and_positions() {
    let src = "# header comment\n  CREATE /a { # type follows\n H5T_STD_I8LE DATA {1} } ;;\nDELETE\n  /a; # trailing\n";
    let v = parse(src).unwrap();
    assert_eq!(v.len(), 2);
    assert_eq!((v[0].line, v[0].column), (2, 3));
    assert_eq!(v[0].text, "CREATE /a { H5T_STD_I8LE DATA {1} } ;");
    assert_eq!((v[1].line, v[1].column), (4, 1));
    assert_eq!(v[1].text, "DELETE /a;");
    assert!(parse("  # nothing\n").unwrap().is_empty());
    // Quoted names may hold spaces and keywords.
    assert_eq!(
        one(r#"CREATE GROUP "/my group" "GROUP" {{1}};"#),
        Op::CreateAttr {
            attr: attr("/my group", "GROUP", Some(ObjKind::Group)),
            def: Definition {
                data: Some(nums(&["1"])),
                ..Default::default()
            },
        }
    );
    // Numbers in every spelling the values accept.
    let Op::CreateAttr { def, .. } = one("CREATE /f {(6) DATA {+1, -2, .5, 1., 1e-3, inf}};")
    else {
        panic!()
    };
    assert_eq!(def.data.unwrap().len(), 6);
}

/// Assert an error's position and message, and that the caret under the
/// printed source line sits at that column.
fn check(src: &str, line: usize, column: usize, needle: &str) {
    let e = err(src);
    assert_eq!((e.line, e.column), (line, column), "{src}: {e}");
    assert!(
        e.message.contains(needle),
        "{src}: {:?} lacks {needle:?}",
        e.message
    );
    let shown = e.to_string();
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(lines.len(), 3, "{shown}");
    assert_eq!(lines[1], format!("    {}", e.source_line));
    assert_eq!(lines[2].chars().count(), 4 + column, "{shown}");
    assert!(lines[2].ends_with('^'));
    assert_eq!(e.source_line, src.lines().nth(line - 1).unwrap());
}

#[test]
fn error_forms_with_caret() {
    check("CREATE /a {H5T_STD_I8LE DATA {1}}", 1, 34, "expected ';'");
    check("FROB /a;", 1, 1, "unknown command 'FROB'");
    check("{", 1, 1, "expected a command");
    check(
        "CREATE /a {H5T_STD_I24LE DATA {1}};",
        1,
        12,
        "unknown datatype 'H5T_STD_I24LE'",
    );
    check(
        "CREATE /a {H5T_STD_I8LE DATA {1, x}};",
        1,
        34,
        "expected a number or a quoted string",
    );
    check(
        "CREATE /a {H5T_STD_I8LE DATA {1 2}};",
        1,
        33,
        "expected ',' or '}'",
    );
    check(
        "CREATE /a {H5T_STD_I8LE DATA {}};",
        1,
        31,
        "at least one value",
    );
    check(
        "CREATE /a {H5T_STD_I8LE () DATA {1}};",
        1,
        26,
        "at least one dimension",
    );
    check(
        "CREATE /a {H5T_STD_I8LE (2, x) DATA {1}};",
        1,
        29,
        "dimension size",
    );
    check(
        "CREATE /a {H5T_STD_I8LE (2 3) DATA {1}};",
        1,
        28,
        "expected ',' or ')'",
    );
    check(
        "CREATE /a {FLOAT DATA {1}};",
        1,
        12,
        "a datatype, a dataspace, DATA { values } or '}'",
    );
    check(
        "CREATE /a {H5T_STD_I8LE SCALAR DATA {1} extra};",
        1,
        41,
        "expected '}'",
    );
    check(
        "CREATE /a {H5T_STD_I8LE (2) H5T_STD_I8LE {1}};",
        1,
        29,
        "DATA { values } or '}'",
    );
    check(
        "CREATE /a {1.5};",
        1,
        12,
        "values go inside their own braces",
    );
    check("CREATE /a;", 1, 10, "'{' to start a definition");
    check("CREATE /g/ {{1}};", 1, 8, "attribute name is missing");
    check("CREATE / {{1}};", 1, 8, "names no attribute");
    check("CREATE /a/../b {{1}};", 1, 8, "'..'");
    check("CREATE GROUP /g a/b {{1}};", 1, 17, "contains '/'");
    check("CREATE GROUP /g {{1}};", 1, 17, "a group has no definition");
    check("CREATE DATASET /d;", 1, 18, "a definition");
    check("CREATE GROUP /;", 1, 14, "root group always exists");
    check("DELETE GROUP /;", 1, 14, "cannot be deleted");
    check("RENAME / /x;", 1, 8, "root group cannot be renamed");
    check("MODIFY /a;", 1, 10, "DATA { values } or a definition");
    check("CREATE /a {\"unterminated}};", 1, 12, "unterminated string");
    check("CREATE /a {\"bad \\q\"};", 1, 17, "unknown escape");
    check(
        "CREATE /s {H5T_STRING { STRPAD H5T_STR_NULLTERM; } DATA {\"a\"}};",
        1,
        50,
        "needs STRSIZE",
    );
    check(
        "CREATE /s {H5T_STRING { STRSIZE 0; } DATA {\"a\"}};",
        1,
        33,
        "STRSIZE must be",
    );
    check(
        "CREATE /s {H5T_STRING { STRSIZE 2; STRPAD H5T_STR_X; } DATA {\"a\"}};",
        1,
        43,
        "STRPAD must be",
    );
    check(
        "CREATE /s {H5T_STRING { STRSIZE 2; CSET LATIN1; } DATA {\"a\"}};",
        1,
        41,
        "CSET must be",
    );
    check(
        "CREATE /s {H5T_STRING { STRSIZE 2; CTYPE X; } DATA {\"a\"}};",
        1,
        42,
        "CTYPE must be",
    );
    check(
        "CREATE /s {H5T_STRING { WIDTH 2; } DATA {\"a\"}};",
        1,
        25,
        "unknown string property",
    );
    check(
        "CREATE /s {H5T_STRING { STRSIZE 2 CSET H5T_CSET_UTF8; } DATA {\"a\"}};",
        1,
        35,
        "';' after the string property",
    );
    check(
        "CREATE DATASET /d {H5T_STD_I8LE SIMPLE { (2) / (1) }};",
        1,
        48,
        "below the dimension",
    );
    check(
        "CREATE DATASET /d {H5T_STD_I8LE SIMPLE 2};",
        1,
        40,
        "'{' or '(' after SIMPLE",
    );
    check(
        "CREATE DATASET /d {H5T_STD_I8LE (2) / (4, 4)};",
        1,
        39,
        "rank 2",
    );
    check(
        "CREATE DATASET /d {H5T_STD_I8LE SIMPLE { (2) DATA {1}}};",
        1,
        46,
        "'}' to close SIMPLE",
    );
    check("CREATE DATASET /d {H5T_STD_I8LE (1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1)};", 1, 99, "exceeds the maximum");
    // On a later line, after tabs: the caret keeps the tab.
    let e = err("CREATE /a {{1}};\n\tDELETE /a /b;");
    assert_eq!((e.line, e.column), (2, 12));
    assert!(e.to_string().ends_with("    \t          ^"), "{e}");
    // End of input inside a command.
    check(
        "CREATE /a {H5T_STD_I8LE DATA {1",
        1,
        32,
        "expected ',' or '}'",
    );
}

#[test]
fn non_ascii_input_is_an_error_not_a_panic() {
    check(
        "CREATE /a {H5Tä DATA {1}};",
        1,
        12,
        "DATA { values } or '}'",
    );
    check(
        "MODIFY /a {H5Tä};",
        1,
        12,
        "expected a number or a quoted string",
    );
    check("CRÉER /a;", 1, 1, "unknown command 'CRÉER'");
    // Columns count characters, so the caret sits under the right one.
    check("CREATE /é {{1 2}};", 1, 15, "expected ',' or '}'");
    assert_eq!(
        one("CREATE /été {{\"℃\"}};"),
        Op::CreateAttr {
            attr: attr("/", "été", None),
            def: Definition {
                data: Some(vec![Value::Str("℃".into())]),
                ..Default::default()
            },
        }
    );
}

#[test]
fn arbitrary_input_never_panics() {
    let pieces = [
        "CREATE",
        "COPY",
        "DELETE",
        "RENAME",
        "MODIFY",
        "GROUP",
        "DATASET",
        "DATA",
        "DATATYPE",
        "DATASPACE",
        "SCALAR",
        "SIMPLE",
        "H5T_STRING",
        "STRSIZE",
        "H5T_VARIABLE",
        "STRPAD",
        "H5T_STD_I8LE",
        "H5T_IEEE_F64BE",
        "H5S_UNLIMITED",
        "/",
        "/a",
        "/a/b",
        "x",
        "1",
        "-2.5e3",
        "{",
        "}",
        "(",
        ")",
        ",",
        ";",
        "\"s\"",
        "\"",
        "\\",
        "#c\n",
        "\n",
        " ",
        "\t",
        "é",
        "H5T",
        "H5Tä",
        "",
        "..",
        "0",
        "99999999999999999999999",
    ];
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..5000 {
        let mut src = String::new();
        let n = 1 + (state % 24) as usize;
        for _ in 0..n {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            src.push_str(pieces[(state % pieces.len() as u64) as usize]);
            if state & 1 == 0 {
                src.push(' ');
            }
        }
        if let Err(e) = parse(&src) {
            // The caret line renders for every error.
            assert!(e.to_string().ends_with('^'), "{src:?}: {e}");
        }
    }
}
