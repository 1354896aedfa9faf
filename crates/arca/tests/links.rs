//! Soft, external and hard links, and creation order: followed, listed,
//! deleted, kept through reopen and `repack`, proved by `check`.

use arca::{
    DatasetOptions, Datatype, Error, File, GroupOptions, Link, Object, ObjectKind, OpenOptions,
    Selection,
};

fn data(f: &File, path: &str, n: u64, v: u8) {
    f.root()
        .create_dataset(path, &DatasetOptions::new(Datatype::uint(1), &[n]))
        .unwrap()
        .write_all(&vec![v; n as usize])
        .unwrap();
}

fn read(f: &File, path: &str) -> Vec<u8> {
    f.root().dataset(path).unwrap().read_all().unwrap()
}

#[test]
fn soft_links_follow_dangle_and_loop() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.arca");
    {
        let f = File::create(&path).unwrap();
        let root = f.root();
        data(&f, "runs/r1/x", 4, 1);
        root.link_soft("latest", "/runs/r1").unwrap();
        // Relative to the group holding the link.
        root.group("runs")
            .unwrap()
            .link_soft("newest", "r1/x")
            .unwrap();
        root.link_soft("nowhere", "/no/such").unwrap();
        root.link_soft("loop_a", "/loop_b").unwrap();
        root.link_soft("loop_b", "/loop_a").unwrap();
        assert!(matches!(
            root.link_soft("latest", "/x"),
            Err(Error::AlreadyExists(_))
        ));
        assert!(root.link_soft("empty", "").is_err());
    }
    let f = File::open(&path).unwrap();
    let root = f.root();
    assert_eq!(read(&f, "latest/x"), vec![1; 4]);
    assert_eq!(read(&f, "runs/newest"), vec![1; 4]);
    assert_eq!(root.dataset("latest/x").unwrap().path(), "/latest/x");
    assert!(matches!(root.object("nowhere"), Err(Error::NotFound(_))));
    assert!(matches!(root.object("loop_a"), Err(Error::NotFound(_))));
    assert!(!root.contains("nowhere").unwrap());
    assert_eq!(root.link("nowhere").unwrap(), Link::Soft("/no/such".into()));
    assert_eq!(root.link("runs").unwrap(), Link::Hard(ObjectKind::Group));
    assert_eq!(
        root.member_names().unwrap(),
        ["latest", "loop_a", "loop_b", "nowhere", "runs"]
    );
    // members() lists what resolves, with the target's kind.
    assert_eq!(
        root.members().unwrap(),
        [
            ("latest".to_string(), ObjectKind::Group),
            ("runs".to_string(), ObjectKind::Group)
        ]
    );
    // visit follows hard links only; visit_links lists every link.
    let mut seen = vec![];
    root.visit(&mut |p, _| {
        seen.push(p.to_string());
        Ok(())
    })
    .unwrap();
    assert_eq!(seen, ["runs", "runs/r1", "runs/r1/x"]);
    let mut all = vec![];
    root.visit_links(&mut |p, l| {
        all.push((p.to_string(), l.clone()));
        Ok(())
    })
    .unwrap();
    assert_eq!(all.len(), 8);
    assert!(all.contains(&("runs/newest".into(), Link::Soft("r1/x".into()))));
    f.check().unwrap();
    drop(root);
    drop(f);
    // Deleting a soft link leaves its target.
    let f = File::open_rw(&path).unwrap();
    f.root().delete("latest").unwrap();
    assert_eq!(read(&f, "runs/r1/x"), vec![1; 4]);
    f.check().unwrap();
}

#[test]
fn external_links_open_the_other_file() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.arca");
    let b = dir.path().join("b.arca");
    {
        let f = File::create(&b).unwrap();
        data(&f, "grp/vals", 3, 7);
    }
    {
        let f = File::create(&a).unwrap();
        let root = f.root();
        // Relative to a.arca's directory.
        root.link_external("ext", "b.arca", "/grp").unwrap();
        root.link_external("gone", "missing.arca", "/x").unwrap();
        root.link_external("badpath", "b.arca", "/nope").unwrap();
        root.link_soft("via_soft", "/ext/vals").unwrap();
        assert_eq!(read(&f, "ext/vals"), vec![7; 3]);
    }
    let f = File::open(&a).unwrap();
    let root = f.root();
    assert_eq!(read(&f, "ext/vals"), vec![7; 3]);
    assert_eq!(read(&f, "via_soft"), vec![7; 3]);
    let d = root.dataset("ext/vals").unwrap();
    assert_eq!(d.path(), "/grp/vals");
    assert!(matches!(root.object("gone"), Err(Error::NotFound(_))));
    assert!(matches!(root.object("badpath"), Err(Error::NotFound(_))));
    assert_eq!(
        root.link("ext").unwrap(),
        Link::External {
            file: "b.arca".into(),
            path: "/grp".into()
        }
    );
    // The other file opens with this one's intent: read-only here, ...
    assert!(d.write_all(&[1u8, 2, 3]).is_err());
    drop(root);
    drop(d);
    drop(f);
    // ... writable from a writable file, as in HDF5.
    let f = File::open_rw(&a).unwrap();
    let d = f.root().dataset("ext/vals").unwrap();
    assert!(Object::Dataset(d.clone()).file().is_writable());
    d.write_all(&[1u8, 2, 3]).unwrap();
    drop(d);
    f.check().unwrap();
    f.close().unwrap();
    let f = File::open(&b).unwrap();
    assert_eq!(read(&f, "grp/vals"), vec![1, 2, 3]);
    drop(f);
    // When the other file cannot open for writing (another writer holds
    // it), the link still reads, read-only.
    let holder = File::open_rw(&b).unwrap();
    let f = File::open_rw(&a).unwrap();
    let d = f.root().dataset("ext/vals").unwrap();
    assert!(!Object::Dataset(d.clone()).file().is_writable());
    assert!(d.write_all(&[4u8, 5, 6]).is_err());
    drop(d);
    drop(f);
    drop(holder);
}

#[test]
fn external_links_that_loop_stop_with_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.arca");
    let b = dir.path().join("b.arca");
    let c = dir.path().join("c.arca");
    {
        let f = File::create(&b).unwrap();
        // b:/back leads to a:/to_b, which leads back to b:/back.
        f.root().link_external("back", "a.arca", "/to_b").unwrap();
        data(&f, "vals", 2, 5);
    }
    {
        // A chain through files longer than the hop limit, with no loop:
        // c:/l0 -> c:/l1 -> ... each an external link into its own file.
        let f = File::create(&c).unwrap();
        let n = arca::MAX_SOFT_LINK_HOPS + 2;
        for i in 0..n {
            let next = if i + 1 == n {
                "/end".to_string()
            } else {
                format!("/l{}", i + 1)
            };
            f.root()
                .link_external(&format!("l{i}"), "c.arca", &next)
                .unwrap();
        }
        data(&f, "end", 1, 9);
        // Within the limit, a chain through its own file still resolves.
        let short = arca::MAX_SOFT_LINK_HOPS as usize - 1;
        assert_eq!(read(&f, &format!("l{}", n as usize - short)), vec![9]);
        let err = f.root().object("l0").err().unwrap();
        assert!(
            matches!(&err, Error::NotFound(m) if m.contains("soft and external links")),
            "{err}"
        );
    }
    {
        let f = File::create(&a).unwrap();
        let root = f.root();
        // An external link into its own file, to itself.
        root.link_external("self", "a.arca", "/self").unwrap();
        root.link_external("to_b", "b.arca", "/back").unwrap();
        root.link_external("fine", "b.arca", "/vals").unwrap();
        // Soft and external hops share one count.
        root.link_soft("soft_to_self", "/self").unwrap();
    }
    let f = File::open_rw(&a).unwrap();
    let root = f.root();
    for name in ["self", "to_b", "soft_to_self"] {
        let err = root.object(name).err().unwrap();
        assert!(
            matches!(&err, Error::NotFound(m) if m.contains("loop")),
            "{name}: {err}"
        );
    }
    assert_eq!(read(&f, "fine"), vec![5; 2]);
    f.check().unwrap();
}

#[test]
fn hard_links_keep_the_object_until_the_last_name_goes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.arca");
    let f = File::create(&path).unwrap();
    let root = f.root();
    data(&f, "a/big", 200_000, 5);
    root.link_hard("a/big", "b/alias").unwrap();
    root.link_hard("a", "a_again").unwrap();
    assert_eq!(
        root.dataset("a/big").unwrap().id(),
        root.dataset("b/alias").unwrap().id()
    );
    assert!(matches!(
        root.link_hard("missing", "x"),
        Err(Error::NotFound(_))
    ));
    // Written through one name, read through the other.
    root.dataset("b/alias")
        .unwrap()
        .write(&Selection::from_ranges(&[(0, 2, 1)]).unwrap(), &[9u8, 9])
        .unwrap();
    assert_eq!(read(&f, "a_again/big")[..3], [9, 9, 5]);
    let st = f.check().unwrap();
    assert_eq!(st.datasets, 1, "an object with three names is counted once");
    f.flush().unwrap();
    drop(root);
    drop(f);

    let f = File::open_rw(&path).unwrap();
    let root = f.root();
    let before = f.stat().unwrap().data_bytes;
    root.delete("a").unwrap();
    f.check().unwrap();
    assert_eq!(read(&f, "a_again/big")[..3], [9, 9, 5]);
    root.delete("a_again").unwrap();
    f.check().unwrap();
    // One name left: the data is still there.
    assert_eq!(f.stat().unwrap().data_bytes, before);
    assert_eq!(read(&f, "b/alias").len(), 200_000);
    root.delete("b/alias").unwrap();
    f.flush().unwrap();
    let st = f.check().unwrap();
    assert_eq!(st.data_bytes, 0, "the last name took the data with it");
    assert_eq!(st.datasets, 0);
}

#[test]
fn hard_links_survive_reopen_and_repack_and_cycles_terminate() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.arca");
    {
        let f = File::create(&path).unwrap();
        let root = f.root();
        data(&f, "top/mid/d", 10, 3);
        // A cycle: a group holds a link to its own ancestor.
        root.link_hard("top", "top/mid/up").unwrap();
        root.link_hard("top/mid/d", "d2").unwrap();
        root.link_soft("soft", "top/mid").unwrap();
        root.link_external("ext", "elsewhere.arca", "/x").unwrap();
    }
    let f = File::open(&path).unwrap();
    let mut seen = vec![];
    f.root()
        .visit(&mut |p, _| {
            seen.push(p.to_string());
            Ok(())
        })
        .unwrap();
    assert_eq!(seen, ["d2", "top", "top/mid"]);
    let st = f.check().unwrap();
    assert_eq!((st.groups, st.datasets), (3, 1));
    drop(f);
    let packed = dir.path().join("p.arca");
    arca::repack(&path, &packed, &mut |_, _| {}).unwrap();
    let p = File::open(&packed).unwrap();
    let root = p.root();
    assert_eq!(
        root.dataset("d2").unwrap().id(),
        root.dataset("top/mid/d").unwrap().id()
    );
    assert_eq!(
        root.group("top/mid/up").unwrap().id(),
        root.group("top").unwrap().id()
    );
    assert_eq!(root.link("soft").unwrap(), Link::Soft("top/mid".into()));
    assert!(matches!(root.link("ext").unwrap(), Link::External { .. }));
    assert_eq!(read(&p, "top/mid/up/mid/d"), vec![3; 10]);
    p.check().unwrap();
}

#[test]
fn a_group_may_link_to_itself() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.arca");
    {
        let f = File::create(&path).unwrap();
        let r = f.root();
        data(&f, "g/d", 4, 7);
        r.link_hard("g", "g/me").unwrap();
        assert_eq!(
            r.group("g/me/me/me").unwrap().id(),
            r.group("g").unwrap().id()
        );
        let mut seen = vec![];
        r.visit(&mut |p, _| {
            seen.push(p.to_string());
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, ["g", "g/d"]);
        f.check().unwrap();
    }
    let packed = dir.path().join("p.arca");
    arca::repack(&path, &packed, &mut |_, _| {}).unwrap();
    let p = File::open(&packed).unwrap();
    assert_eq!(read(&p, "g/me/me/d"), vec![7; 4]);
    p.check().unwrap();
    drop(p);
    // Removing the self link leaves the group with its one name; removing
    // that name then frees it and its dataset.
    let f = File::open_rw(&path).unwrap();
    f.root().delete("g/me").unwrap();
    f.check().unwrap();
    f.root().delete("g").unwrap();
    let st = f.check().unwrap();
    assert_eq!((st.groups, st.datasets), (1, 0));
    drop(f);
    // Removing its outside name first: the group is reached only from
    // itself, so it goes with everything it holds.
    let f = File::open_rw(&packed).unwrap();
    f.root().delete("g").unwrap();
    let st = f.check().unwrap();
    assert_eq!((st.groups, st.datasets), (1, 0));
}

#[test]
fn removing_the_last_outside_name_of_a_cycle_frees_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.arca");
    let f = File::create(&path).unwrap();
    let root = f.root();
    data(&f, "top/mid/d", 50_000, 3);
    data(&f, "top/mid/e", 50_000, 4);
    root.link_hard("top", "top/mid/up").unwrap();
    root.link_hard("top/mid", "top/mid/again").unwrap();
    // A second name outside the cycle keeps d alive.
    root.link_hard("top/mid/d", "d2").unwrap();
    let before = f.check().unwrap().data_bytes;
    // A link inside the cycle goes: nothing dies.
    root.delete("top/mid/again").unwrap();
    assert_eq!(f.check().unwrap().groups, 3);
    root.link_hard("top/mid", "top/mid/again").unwrap();
    root.delete("top").unwrap();
    let st = f.check().unwrap();
    assert_eq!((st.groups, st.datasets), (1, 1));
    assert_eq!(read(&f, "d2"), vec![3; 50_000]);
    assert_eq!(
        root.link_count(root.dataset("d2").unwrap().id()).unwrap(),
        1
    );
    assert!(st.data_bytes <= before - 50_000, "e's bytes are given back");
    f.close().unwrap();
    let f = File::open(&path).unwrap();
    f.check().unwrap();
}

#[test]
fn a_group_cannot_move_under_itself_by_another_name() {
    let f = File::in_memory().unwrap();
    let r = f.root();
    r.create_group("a/b/c").unwrap();
    r.link_hard("a/b", "alias").unwrap();
    // /alias is /a/b: moving /a there would hang it under itself.
    assert!(matches!(
        r.rename("a", "alias/a2"),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        r.rename("a", "a/b/x"),
        Err(Error::InvalidArgument(_))
    ));
    assert!(r.contains("a/b/c").unwrap());
    // Moving a group that is not an ancestor of the destination is fine.
    r.rename("alias", "a/b/c/alias2").unwrap_err();
    r.create_group("d").unwrap();
    r.rename("d", "alias/d").unwrap();
    assert!(r.contains("a/b/d").unwrap());
    f.check().unwrap();
}

#[test]
fn creation_order_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("o.arca");
    let names = ["zeta", "alpha", "mu", "beta", "omega"];
    {
        let f = OpenOptions::new_file_with_order(&path);
        let root = f.root();
        assert!(root.track_order().unwrap());
        for n in names {
            root.create_group(n).unwrap();
        }
        let g = root
            .create_group_with("ordered", &GroupOptions::new().track_order(true))
            .unwrap();
        for i in (0..40).rev() {
            data(&f, &format!("ordered/n{i:02}"), 1, i as u8);
        }
        g.link_soft("s", "/zeta").unwrap();
        // A name moved in takes the next place.
        root.rename("alpha", "ordered/alpha").unwrap();
        let plain = root.create_group("plain").unwrap();
        for n in names {
            plain.create_group(n).unwrap();
        }
    }
    let f = File::open(&path).unwrap();
    let root = f.root();
    assert_eq!(
        root.member_names().unwrap(),
        ["zeta", "mu", "beta", "omega", "ordered", "plain"]
    );
    let want: Vec<String> = (0..40)
        .rev()
        .map(|i| format!("n{i:02}"))
        .chain(["s".to_string(), "alpha".to_string()])
        .collect();
    assert_eq!(root.group("ordered").unwrap().member_names().unwrap(), want);
    let mut sorted = names.to_vec();
    sorted.sort();
    assert_eq!(root.group("plain").unwrap().member_names().unwrap(), sorted);
    assert!(!root.group("plain").unwrap().track_order().unwrap());
    f.check().unwrap();
    drop(root);
    drop(f);
    let packed = dir.path().join("p.arca");
    arca::repack(&path, &packed, &mut |_, _| {}).unwrap();
    let p = File::open(&packed).unwrap();
    assert_eq!(
        p.root().group("ordered").unwrap().member_names().unwrap(),
        want
    );
    assert!(p.root().track_order().unwrap());
}

#[test]
fn attribute_creation_order_is_kept() {
    use arca::{AttrValue, DatasetOptions, Datatype};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.arca");
    let names = ["zz", "aa", "mm", "bb", "yy"];
    let v = |i: i64| AttrValue::scalar(i);
    {
        let f = OpenOptions::new_file_with_order(&path);
        let root = f.root();
        let ds = root
            .create_dataset(
                "d",
                &DatasetOptions::new(Datatype::float(8), &[4]).track_order(true),
            )
            .unwrap();
        let only = root
            .create_group_with("attrs_only", &GroupOptions::new().track_attr_order(true))
            .unwrap();
        let plain = root.create_group("plain").unwrap();
        for a in [root.attrs(), ds.attrs(), only.attrs(), plain.attrs()] {
            for (i, n) in names.iter().enumerate() {
                a.set(n, &v(i as i64)).unwrap();
            }
            // Replaced: to the end; modified: where it stood; deleted and
            // made again: to the end.
            a.set("aa", &v(10)).unwrap();
            a.modify("mm", &v(11)).unwrap();
            a.delete("zz").unwrap();
            a.create("zz", &v(12)).unwrap();
        }
        assert!(!only.track_order().unwrap() && only.attrs().track_order().unwrap());
    }
    let want = ["mm", "bb", "yy", "aa", "zz"];
    let mut sorted = want.to_vec();
    sorted.sort();
    let packed = dir.path().join("p.arca");
    arca::repack(&path, &packed, &mut |_, _| {}).unwrap();
    for p in [&path, &packed] {
        let f = File::open(p).unwrap();
        f.check().unwrap();
        let root = f.root();
        for obj in [
            root.attrs(),
            root.dataset("d").unwrap().attrs(),
            root.group("attrs_only").unwrap().attrs(),
        ] {
            assert_eq!(obj.names().unwrap(), want);
            assert_eq!(obj.get("mm").unwrap(), v(11));
        }
        assert_eq!(
            root.group("plain").unwrap().attrs().names().unwrap(),
            sorted
        );
        assert!(!root.group("attrs_only").unwrap().track_order().unwrap());
    }
}

trait NewWithOrder {
    fn new_file_with_order(path: &std::path::Path) -> File;
}

impl NewWithOrder for OpenOptions {
    fn new_file_with_order(path: &std::path::Path) -> File {
        File::options()
            .mode(arca::Mode::Create)
            .track_order(true)
            .open(path)
            .unwrap()
    }
}

/// Set the u64 body of message `msg` in the object header page at `addr`
/// of `img` and make the page's checksum valid again (see docs/FORMAT.md,
/// "Pages" and "Object header").
fn set_header_u64(img: &mut [u8], addr: usize, msg: u16, value: u64) {
    assert_eq!(&img[addr..addr + 3], b"AOH");
    let size = (img[addr + 3] as usize - 0x80 + 1) * 32;
    let payload = addr + 8;
    let n = u16::from_le_bytes([img[payload + 2], img[payload + 3]]);
    let mut p = payload + 4;
    for _ in 0..n {
        let ty = u16::from_le_bytes([img[p], img[p + 1]]);
        let len = u32::from_le_bytes(img[p + 4..p + 8].try_into().unwrap()) as usize;
        if ty == msg {
            assert_eq!(len, 8);
            img[p + 8..p + 16].copy_from_slice(&value.to_le_bytes());
            let c = crc32c::crc32c_append(
                crc32c::crc32c(&img[addr..addr + 4]),
                &img[addr + 8..addr + size],
            );
            img[addr + 4..addr + 8].copy_from_slice(&c.to_le_bytes());
            return;
        }
        p += 8 + len;
    }
    panic!("no message {msg} in the header at {addr}");
}

#[test]
fn creation_counters_at_their_maximum_refuse_to_wrap() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("order.arca");
    {
        let f = OpenOptions::new_file_with_order(&path);
        let root = f.root();
        root.create_group("g0").unwrap();
        root.attrs()
            .set("a0", &arca::AttrValue::scalar(1i64))
            .unwrap();
    }
    let intact = std::fs::read(&path).unwrap();
    let root_addr = {
        let f = File::from_bytes(intact.clone()).unwrap();
        let map = f.space_map().unwrap();
        map.iter()
            .find(|e| e.what == "object header")
            .map(|e| e.addr as usize)
            .unwrap()
    };
    // Message 9 is the next link creation index, 10 the attribute one.
    for (msg, what) in [(9u16, "link"), (10, "attribute")] {
        let mut img = intact.clone();
        set_header_u64(&mut img, root_addr, msg, u64::MAX);
        std::fs::write(&path, &img).unwrap();
        let f = File::open_rw(&path).unwrap();
        f.check().unwrap();
        let root = f.root();
        let err = if msg == 9 {
            root.create_group("g1").err().unwrap()
        } else {
            // Large enough for a blob of its own: refused before it is made.
            let big = arca::AttrValue::array(&[4096], &[7u64; 4096]).unwrap();
            root.attrs().set("a1", &big).err().unwrap()
        };
        assert!(
            matches!(&err, Error::Corrupt { detail, .. } if detail.contains(what)),
            "{what}: {err}"
        );
        // Nothing was written: the file still checks, holds what it held,
        // and neither the new link nor the new attribute exists.
        f.check().unwrap();
        assert!(root.object("g0").is_ok() && root.object("g1").is_err());
        assert_eq!(root.attrs().names().unwrap(), vec!["a0".to_string()]);
        drop(root);
        drop(f);
        let f = File::open(&path).unwrap();
        f.check().unwrap();
        assert!(f.root().object("g1").is_err());
    }
    // An index at or past the next one fails `check`, for links as for attributes.
    for msg in [9u16, 10] {
        let mut img = intact.clone();
        set_header_u64(&mut img, root_addr, msg, 0);
        let f = File::from_bytes(img).unwrap();
        let err = f.check().err().unwrap();
        assert!(matches!(err, Error::Corrupt { .. }), "{msg}: {err}");
    }
}

#[test]
fn objects_without_a_name_live_until_linked_or_closed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.arca");
    let f = File::create(&path).unwrap();
    let root = f.root();
    let opts = DatasetOptions::new(Datatype::uint(1), &[40_000]);
    let kept = root.create_anonymous_dataset(&opts).unwrap();
    let lost = root.create_anonymous_dataset(&opts).unwrap();
    let g = root.create_anonymous_group(&GroupOptions::new()).unwrap();
    assert_eq!((kept.path(), g.path()), ("", ""));
    kept.write_all(&[7u8; 40_000]).unwrap();
    lost.write_all(&[8u8; 40_000]).unwrap();
    // A member of a group without a name, and a second name of a named object.
    g.create_dataset("inner", &opts)
        .unwrap()
        .write_all(&[9u8; 40_000])
        .unwrap();
    data(&f, "named", 40_000, 5);
    g.link_hard("/named", "alias").unwrap();
    assert_eq!(root.link_count(kept.id()).unwrap(), 0);
    // Committed with them: check walks them as it walks the root.
    f.flush().unwrap();
    let st = f.check().unwrap();
    assert_eq!((st.datasets, st.groups), (4, 2));
    // The whole file as committed now: a session that never closed.
    let leftover = dir.path().join("left.arca");
    std::fs::copy(&path, &leftover).unwrap();

    root.link_object("x/kept", &Object::Dataset(kept.clone()))
        .unwrap();
    assert_eq!(root.link_count(kept.id()).unwrap(), 1);
    assert!(matches!(
        root.link_object("x/kept", &Object::Dataset(kept)),
        Err(Error::AlreadyExists(_))
    ));
    // The named object survives losing its name while the group holds it.
    root.delete("named").unwrap();
    assert_eq!(
        g.dataset("alias").unwrap().read_all::<u8>().unwrap(),
        vec![5; 40_000]
    );
    f.check().unwrap();
    f.close().unwrap();

    let f = File::open(&path).unwrap();
    assert_eq!(read(&f, "x/kept"), vec![7; 40_000]);
    let st = f.check().unwrap();
    assert_eq!((st.datasets, st.groups), (1, 2));
    assert!(
        st.data_bytes < 80_000,
        "the unnamed ones' bytes are given back"
    );

    // Leftovers of the unclosed session: sound, and freed by the next writer.
    let f = File::open_rw(&leftover).unwrap();
    assert_eq!(f.check().unwrap().datasets, 4);
    f.close().unwrap();
    let f = File::open(&leftover).unwrap();
    let st = f.check().unwrap();
    assert_eq!((st.datasets, st.groups), (1, 1));
    assert_eq!(read(&f, "named"), vec![5; 40_000]);
}

#[test]
fn unnamed_objects_refuse_what_named_ones_refuse() {
    let f = File::in_memory().unwrap();
    let other = File::in_memory().unwrap();
    let g = f
        .root()
        .create_anonymous_group(&GroupOptions::new())
        .unwrap();
    assert!(matches!(
        other.root().link_object("g", &Object::Group(g)),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        f.root().link_object("r", &Object::Group(f.root())),
        Err(Error::InvalidArgument(_))
    ));
}
