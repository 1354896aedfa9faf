//! Groups, links and attributes through the public API.

mod common;

use arca::{AttrValue, ByteOrder, DatasetOptions, Datatype, Error, File, ObjectKind};

#[test]
fn hundred_thousand_children_in_one_group() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wide.arca");
    let f = File::create(&path).unwrap();
    let g = f.root().create_group("wide").unwrap();
    let n = 100_000;
    for i in 0..n {
        g.create_group(&format!("c{i:06}")).unwrap();
    }
    assert_eq!(g.len().unwrap(), n);
    for i in (0..n).step_by(2) {
        g.delete(&format!("c{i:06}")).unwrap();
    }
    f.close().unwrap();
    let f = File::open(&path).unwrap();
    let g = f.root().group("wide").unwrap();
    assert_eq!(g.len().unwrap(), n / 2);
    let names = g.member_names().unwrap();
    assert_eq!(names.len() as u64, n / 2);
    assert_eq!(names[0], "c000001");
    assert!(names.windows(2).all(|w| w[0] < w[1]));
    assert!(g.contains("c099999").unwrap());
    assert!(!g.contains("c099998").unwrap());
    f.check().unwrap();
}

#[test]
fn nested_paths_delete_and_rename() {
    let f = File::in_memory().unwrap();
    let r = f.root();
    let deep = (0..50)
        .map(|i| format!("l{i}"))
        .collect::<Vec<_>>()
        .join("/");
    r.create_group(&deep).unwrap();
    assert!(r.contains(&deep).unwrap());
    r.create_dataset("a/b/d", &DatasetOptions::new(Datatype::uint(1), &[3]))
        .unwrap();
    assert!(matches!(
        r.create_group("a/b"),
        Err(Error::AlreadyExists(_))
    ));
    assert!(matches!(
        r.create_group("a/b/d/x"),
        Err(Error::InvalidArgument(_))
    ));
    r.rename("a/b", "c").unwrap();
    assert!(!r.contains("a/b").unwrap());
    assert_eq!(r.dataset("/c/d").unwrap().shape().unwrap(), vec![3]);
    assert!(matches!(
        r.rename("c", "c/inner"),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(r.rename("nope", "x"), Err(Error::NotFound(_))));
    assert!(matches!(r.rename("c", "a"), Err(Error::AlreadyExists(_))));
    r.delete("c").unwrap();
    assert!(!r.contains("c/d").unwrap());
    assert!(matches!(r.delete("c"), Err(Error::NotFound(_))));
    let mut seen = vec![];
    r.visit(&mut |p, k| {
        seen.push((p.to_string(), k));
        Ok(())
    })
    .unwrap();
    assert_eq!(seen[0], ("a".to_string(), ObjectKind::Group));
    assert_eq!(seen[1], ("l0".to_string(), ObjectKind::Group));
    assert_eq!(seen.len(), 51);
    let g = r.require_group("l0/l1").unwrap();
    assert_eq!(g.path(), "/l0/l1");
    assert!(r.require_group("a").is_ok());
}

#[test]
fn deleting_everything_frees_the_space() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("del.arca");
    let f = File::create(&path).unwrap();
    let ds = f
        .root()
        .create_dataset("x", &DatasetOptions::new(Datatype::float(8), &[100_000]))
        .unwrap();
    ds.write_all(&vec![1.0f64; 100_000]).unwrap();
    let before = f.stat().unwrap();
    assert_eq!(before.data_bytes, 800_000);
    f.root().delete("x").unwrap();
    let after = f.stat().unwrap();
    assert_eq!(after.datasets, 0);
    assert_eq!(after.data_bytes, 0);
    f.close().unwrap();
    assert!(std::fs::metadata(&path).unwrap().len() < before.file_bytes);
}

#[test]
fn attributes_of_every_kind() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("attrs.arca");
    let f = File::create(&path).unwrap();
    let ds = f
        .root()
        .create_dataset("d", &DatasetOptions::new(Datatype::int(2), &[2]))
        .unwrap();
    let a = ds.attrs();
    a.set("i8", &AttrValue::scalar(-3i8)).unwrap();
    a.set("u64", &AttrValue::scalar(u64::MAX)).unwrap();
    a.set(
        "f32s",
        &AttrValue::array(&[2, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap(),
    )
    .unwrap();
    let big: Vec<f64> = (0..10_000).map(|x| x as f64 * 0.5).collect();
    a.set("big", &AttrValue::array(&[10_000], &big).unwrap())
        .unwrap();
    a.set("s", &AttrValue::string("hello")).unwrap();
    let be = Datatype::Int {
        size: 4,
        order: ByteOrder::Big,
    };
    a.set(
        "be",
        &AttrValue::new(
            be.clone(),
            &[2],
            [7i32, -7].iter().flat_map(|x| x.to_ne_bytes()).collect(),
        )
        .unwrap(),
    )
    .unwrap();
    assert!(matches!(
        a.create("s", &AttrValue::scalar(1u8)),
        Err(Error::AlreadyExists(_))
    ));
    assert!(AttrValue::array(&[3], &[1u8, 2]).is_err());
    f.root()
        .attrs()
        .set("root", &AttrValue::scalar(1.25f64))
        .unwrap();
    f.close().unwrap();

    let f = File::open_rw(&path).unwrap();
    let a = f.root().dataset("d").unwrap().attrs();
    assert_eq!(
        a.names().unwrap(),
        vec!["be", "big", "f32s", "i8", "s", "u64"]
    );
    assert_eq!(a.get("i8").unwrap().to_vec::<i8>().unwrap(), vec![-3]);
    assert_eq!(
        a.get("u64").unwrap().to_vec::<u64>().unwrap(),
        vec![u64::MAX]
    );
    let v = a.get("f32s").unwrap();
    assert_eq!(v.shape, vec![2, 3]);
    assert_eq!(v.to_vec::<f32>().unwrap()[5], 6.0);
    assert_eq!(a.get("big").unwrap().to_vec::<f64>().unwrap(), big);
    assert_eq!(a.get("s").unwrap().as_string().unwrap(), "hello");
    assert_eq!(a.get("be").unwrap().to_vec::<i32>().unwrap(), vec![7, -7]);
    assert_eq!(a.get("be").unwrap().dtype, be);
    a.rename("big", "huge").unwrap();
    a.set("huge", &AttrValue::scalar(0u8)).unwrap();
    a.delete("i8").unwrap();
    assert!(matches!(a.get("i8"), Err(Error::NotFound(_))));
    assert_eq!(a.len().unwrap(), 5);
    assert_eq!(
        f.root()
            .attrs()
            .get("root")
            .unwrap()
            .to_vec::<f64>()
            .unwrap(),
        vec![1.25]
    );
    f.check().unwrap();
}

#[test]
fn read_only_files_refuse_writes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ro.arca");
    File::create(&path).unwrap().close().unwrap();
    let f = File::open(&path).unwrap();
    assert!(matches!(f.root().create_group("x"), Err(Error::ReadOnly)));
    assert!(matches!(
        f.root().attrs().set("a", &AttrValue::scalar(1u8)),
        Err(Error::ReadOnly)
    ));
    assert!(matches!(
        File::options().mode(arca::Mode::CreateNew).open(&path),
        Err(Error::AlreadyExists(_))
    ));
}

/// A create that fails (the name exists) leaves no storage behind: every
/// byte of the file is still live or free (found by `ops_with_faults`).
#[test]
fn failed_create_gives_early_storage_back() {
    let f = File::in_memory().unwrap();
    let o = DatasetOptions::new(Datatype::uint(1), &[8833]).allocate_early(true);
    f.root().create_dataset("d", &o).unwrap();
    let e = f.root().create_dataset("d", &o).unwrap_err();
    assert!(matches!(e, Error::AlreadyExists(_)), "{e}");
    f.check().unwrap();
    f.root().delete("d").unwrap();
    f.check().unwrap();
}

#[test]
fn times_are_tracked_when_asked_and_kept_by_repack() {
    use arca::GroupOptions;
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.arca"), dir.path().join("b.arca"));
    let f = arca::File::create(&a).unwrap();
    let root = f.root();
    let g = root
        .create_group_with("g", &GroupOptions::new().track_times(true))
        .unwrap();
    let o = DatasetOptions::new(Datatype::float(8), &[4]).track_times(true);
    let d = g.create_dataset("d", &o).unwrap();
    let plain = root
        .create_dataset("p", &DatasetOptions::new(Datatype::float(8), &[4]))
        .unwrap();
    let t = d.times().unwrap().unwrap();
    assert!(t.created > 1_600_000_000 && t.modified >= t.created);
    assert!(g.times().unwrap().is_some());
    assert_eq!(plain.times().unwrap(), None);
    d.attrs().set("u", &arca::AttrValue::scalar(1i64)).unwrap();
    assert!(d.times().unwrap().unwrap().modified >= t.created);
    f.check().unwrap();
    f.close().unwrap();
    arca::repack(&a, &b, &mut |_, _| {}).unwrap();
    let (f, r) = (arca::File::open(&a).unwrap(), arca::File::open(&b).unwrap());
    for p in ["g", "g/d"] {
        let (x, y) = (f.root().object(p).unwrap(), r.root().object(p).unwrap());
        let times = |o: arca::Object| match o {
            arca::Object::Group(g) => g.times().unwrap(),
            arca::Object::Dataset(d) => d.times().unwrap(),
            arca::Object::Datatype(t) => t.times().unwrap(),
        };
        assert_eq!(times(x), times(y), "{p}");
    }
    assert_eq!(r.root().dataset("p").unwrap().times().unwrap(), None);
    r.check().unwrap();
}

#[test]
fn check_reports_progress_through_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let f = File::create(dir.path().join("p.arca")).unwrap();
    let o = DatasetOptions::new(Datatype::uint(1), &[64 * 1024])
        .chunks(&[4096])
        .filters(&[arca::Filter::Zstd(1)]);
    let d = f.root().create_dataset("g/d", &o).unwrap();
    // Noise, which zstd cannot shrink: the chunks' bytes are most of the file.
    let data = common::Rng(7).noise(64 * 1024);
    d.write_all(&data).unwrap();
    f.flush().unwrap();
    let mut seen = vec![];
    let st = f
        .check_with_progress(&mut |done, total| seen.push((done, total)))
        .unwrap();
    assert!(
        seen.len() as u64 >= st.chunks + 3,
        "each object and chunk: {seen:?}"
    );
    assert!(seen.windows(2).all(|w| w[0].0 <= w[1].0), "{seen:?}");
    assert!(seen
        .iter()
        .all(|&(done, total)| done <= total && total == st.file_bytes));
    assert!(
        seen.last().unwrap().0 > 60_000 / 2,
        "the chunks' bytes are counted"
    );
}
