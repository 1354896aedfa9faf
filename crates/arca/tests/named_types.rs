//! Committed datatypes: stored, named, listed, visited, linked, used by
//! datasets (a use counts as a link), deleted, kept through reopen and
//! `repack`, proved by `check`.

use arca::{AttrValue, DatasetOptions, Datatype, Error, File, Link, Object, ObjectKind};

fn compound() -> Datatype {
    Datatype::parse(r#"struct(12){"t"@0:<f8,"n"@8:<i4}"#).unwrap()
}

#[test]
fn committed_types_are_objects() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.arca");
    {
        let f = File::create(&path).unwrap();
        let root = f.root();
        let t = root.commit_type("types/row", &compound()).unwrap();
        assert_eq!(t.path(), "/types/row");
        assert_eq!(t.name(), "row");
        t.attrs().set("unit", &AttrValue::string("s")).unwrap();
        assert!(matches!(
            root.commit_type("types/row", &Datatype::Bool),
            Err(Error::AlreadyExists(_))
        ));
        let o = DatasetOptions::new(compound(), &[3]).committed(&t);
        root.create_dataset("data", &o).unwrap();
        root.link_hard("types/row", "alias").unwrap();
        // A type of the wrong kind, or of another file, is refused.
        let other = File::in_memory().unwrap();
        let foreign = other.root().commit_type("x", &compound()).unwrap();
        let o = DatasetOptions::new(compound(), &[3]).committed(&foreign);
        assert!(matches!(
            root.create_dataset("bad", &o),
            Err(Error::InvalidArgument(_))
        ));
        let o = DatasetOptions::new(Datatype::int(4), &[3]).committed(&t);
        assert!(matches!(
            root.create_dataset("bad", &o),
            Err(Error::InvalidArgument(_))
        ));
        assert!(!root.contains("bad").unwrap());
        f.check().unwrap();
        f.close().unwrap();
    }
    let f = File::open(&path).unwrap();
    let root = f.root();
    let t = root.named_type("types/row").unwrap();
    assert_eq!(t.dtype().unwrap(), compound());
    assert_eq!(t.attrs().get("unit").unwrap().as_string().unwrap(), "s");
    assert_eq!(
        root.link("alias").unwrap(),
        Link::Hard(ObjectKind::Datatype)
    );
    assert_eq!(root.named_type("alias").unwrap().id(), t.id());
    // Two names and one dataset lead to it.
    assert_eq!(root.link_count(t.id()).unwrap(), 3);
    let d = root.dataset("data").unwrap();
    let used = d.committed_type().unwrap().unwrap();
    assert_eq!((used.id(), used.path()), (t.id(), "/alias"));
    assert!(matches!(
        root.object("types/row").unwrap(),
        Object::Datatype(_)
    ));
    assert!(matches!(root.group("types/row"), Err(Error::NotFound(_))));
    assert!(matches!(root.dataset("alias"), Err(Error::NotFound(_))));
    assert!(matches!(root.object("alias/x"), Err(Error::NotFound(_))));
    let mut seen = vec![];
    root.visit(&mut |p, k| {
        seen.push((p.to_string(), k));
        Ok(())
    })
    .unwrap();
    assert!(seen.contains(&("alias".to_string(), ObjectKind::Datatype)));
    assert_eq!(
        seen.iter()
            .filter(|(_, k)| *k == ObjectKind::Datatype)
            .count(),
        1
    );
    let s = f.check().unwrap();
    assert_eq!((s.datatypes, s.datasets, s.groups), (1, 1, 2));
}

#[test]
fn a_used_type_outlives_its_names() {
    let f = File::in_memory().unwrap();
    let root = f.root();
    let t = root.commit_type("t", &Datatype::float(4)).unwrap();
    let o = DatasetOptions::new(Datatype::float(4), &[2]).committed(&t);
    let d = root.create_dataset("d", &o).unwrap();
    d.write_all(&[1.5f32, 2.5]).unwrap();
    root.delete("t").unwrap();
    assert!(!root.contains("t").unwrap());
    f.check().unwrap();
    let anon = d.committed_type().unwrap().unwrap();
    assert_eq!(anon.path(), "");
    assert_eq!(anon.dtype().unwrap(), Datatype::float(4));
    assert_eq!(f.stat().unwrap().datatypes, 1);
    root.delete("d").unwrap();
    let s = f.check().unwrap();
    assert_eq!((s.datatypes, s.datasets), (0, 0));
    // Everything the type held is free again: only the root is left.
    let empty = File::in_memory().unwrap().stat().unwrap();
    assert_eq!(s.metadata_bytes, empty.metadata_bytes);
}

#[test]
fn repack_keeps_types_and_their_users() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.arca"), dir.path().join("b.arca"));
    {
        let f = File::create(&a).unwrap();
        let root = f.root();
        // The dataset comes before the type it uses in name order.
        let t = root.commit_type("z/type", &compound()).unwrap();
        t.attrs().set("k", &AttrValue::scalar(7i32)).unwrap();
        let o = DatasetOptions::new(compound(), &[2]).committed(&t);
        root.create_dataset("a/first", &o).unwrap();
        root.create_dataset("m/second", &o).unwrap();
        let s = root.commit_type("s", &Datatype::VlenStr).unwrap();
        let o = DatasetOptions::new(Datatype::VlenStr, &[2]).committed(&s);
        root.create_dataset("strings", &o).unwrap();
        let gone = root.commit_type("gone", &Datatype::int(2)).unwrap();
        let o = DatasetOptions::new(Datatype::int(2), &[2]).committed(&gone);
        root.create_dataset("orphan", &o).unwrap();
        root.delete("gone").unwrap();
        f.close().unwrap();
    }
    arca::repack(&a, &b, &mut |_, _| {}).unwrap();
    let f = File::open(&b).unwrap();
    let root = f.root();
    let t = root.named_type("z/type").unwrap();
    assert_eq!(t.attrs().get("k").unwrap().to_vec::<i32>().unwrap(), [7]);
    for d in ["a/first", "m/second"] {
        let used = root.dataset(d).unwrap().committed_type().unwrap().unwrap();
        assert_eq!(used.id(), t.id());
    }
    let s = root
        .dataset("strings")
        .unwrap()
        .committed_type()
        .unwrap()
        .unwrap();
    assert_eq!(s.path(), "/s");
    let orphan = root
        .dataset("orphan")
        .unwrap()
        .committed_type()
        .unwrap()
        .unwrap();
    assert_eq!(
        (orphan.path(), orphan.dtype().unwrap()),
        ("", Datatype::int(2))
    );
    assert_eq!(root.link_count(t.id()).unwrap(), 3);
    assert_eq!(f.check().unwrap().datatypes, 3);
}
