//! `Group::walk`: every link below a group one step at a time, in name
//! or group order, each object walked into once, loops ended, links
//! changed during the walk followed.

use arca::{DatasetOptions, Datatype, File, GroupOptions, Link, ObjectKind, WalkOrder, WalkStep};

fn data(f: &File, path: &str) {
    f.root()
        .create_dataset(path, &DatasetOptions::new(Datatype::uint(1), &[2]))
        .unwrap();
}

fn steps(f: &File, order: WalkOrder) -> Vec<WalkStep> {
    f.root()
        .walk(order)
        .unwrap()
        .collect::<arca::Result<Vec<_>>>()
        .unwrap()
}

fn paths(f: &File, order: WalkOrder) -> Vec<String> {
    steps(f, order).into_iter().map(|s| s.path).collect()
}

/// What `Group::visit` lists: hard links met first.
fn visited(f: &File) -> Vec<String> {
    let mut out = vec![];
    f.root()
        .visit(&mut |p, _| {
            out.push(p.to_string());
            Ok(())
        })
        .unwrap();
    out
}

#[test]
fn name_order_is_depth_first_with_members_sorted_in_every_group() {
    let f = File::in_memory().unwrap();
    let r = f.root();
    let log = r
        .create_group_with("log", &GroupOptions::new().track_order(true))
        .unwrap();
    for name in ["z", "a", "m"] {
        log.create_group(name).unwrap();
    }
    data(&f, "log/a/x");
    data(&f, "b-c");
    r.create_group("b/c").unwrap();
    r.link_soft("soft", "/log").unwrap();
    r.link_external("ext", "other.arca", "/x").unwrap();

    let s = steps(&f, WalkOrder::Name);
    let p: Vec<&str> = s.iter().map(|s| s.path.as_str()).collect();
    assert_eq!(
        p,
        ["b", "b/c", "b-c", "ext", "log", "log/a", "log/a/x", "log/m", "log/z", "soft"]
    );
    // Sorting whole paths by their parts gives the same order.
    let mut sorted = p.clone();
    sorted.sort_by(|a, b| a.split('/').cmp(b.split('/')));
    assert_eq!(p, sorted);
    assert_eq!(s[0].link, Link::Hard(ObjectKind::Group));
    assert_eq!(s[2].link, Link::Hard(ObjectKind::Dataset));
    assert!(matches!(s[3].link, Link::External { .. }) && !s[3].first);
    assert_eq!(
        (s[9].link.clone(), s[9].first),
        (Link::Soft("/log".into()), false)
    );

    // Group order keeps the tracked group's creation order, as `visit`.
    let g = paths(&f, WalkOrder::Group);
    assert_eq!(
        g,
        ["b", "b/c", "b-c", "ext", "log", "log/z", "log/a", "log/a/x", "log/m", "soft"]
    );
    let hard: Vec<String> = steps(&f, WalkOrder::Group)
        .into_iter()
        .filter(|s| s.first)
        .map(|s| s.path)
        .collect();
    assert_eq!(hard, visited(&f));
}

#[test]
fn objects_with_several_names_are_walked_into_once_and_loops_end() {
    let f = File::in_memory().unwrap();
    let r = f.root();
    data(&f, "top/mid/d");
    r.link_hard("top", "top/mid/up").unwrap();
    r.link_hard("top/mid/d", "a2").unwrap();
    r.link_hard("top/mid", "top/mid/self").unwrap();
    let s = steps(&f, WalkOrder::Name);
    let got: Vec<(&str, bool)> = s.iter().map(|s| (s.path.as_str(), s.first)).collect();
    assert_eq!(
        got,
        [
            ("a2", true),
            ("top", true),
            ("top/mid", true),
            ("top/mid/d", false),
            ("top/mid/self", false),
            ("top/mid/up", false),
        ]
    );
    // A walk from a group inside a loop ends too.
    let mid = r.group("top/mid").unwrap();
    let inner: Vec<String> = mid
        .walk(WalkOrder::Name)
        .unwrap()
        .map(|s| s.unwrap().path)
        .collect();
    assert_eq!(inner, ["d", "self", "up", "up/mid"]);
}

#[test]
fn a_walk_goes_step_by_step_and_attribute_changes_leave_it_as_it_was() {
    // Steps are produced on demand: a walk taken a few steps, then
    // dropped, reads only the groups on its way.
    let f = File::in_memory().unwrap();
    let r = f.root();
    for i in 0..50 {
        for j in 0..20 {
            data(&f, &format!("g{i:02}/d{j:02}"));
        }
    }
    let mut w = r.walk(WalkOrder::Name).unwrap();
    let first: Vec<String> = w.by_ref().take(3).map(|s| s.unwrap().path).collect();
    assert_eq!(first, ["g00", "g00/d00", "g00/d01"]);
    // Changes between steps that touch no link leave the walk as it was.
    r.dataset("g00/d05")
        .unwrap()
        .attrs()
        .set("k", &arca::AttrValue::scalar(1i64))
        .unwrap();
    let rest = w.count();
    assert_eq!(3 + rest, 50 * 21);
}

#[test]
fn links_changed_during_the_walk_are_followed() {
    let f = File::in_memory().unwrap();
    let r = f.root();
    for g in ["a", "b", "c"] {
        for d in ["x", "y", "z"] {
            data(&f, &format!("{g}/{d}"));
        }
    }
    let w = r.walk(WalkOrder::Name).unwrap();
    let mut seen = vec![];
    for s in w {
        let p = s.unwrap().path;
        match p.as_str() {
            // A member ahead goes; the group the walk is inside goes; a
            // group ahead goes and comes back under a new name's place.
            "a/x" => r.delete("a/y").unwrap(),
            "b/x" => {
                r.delete("b").unwrap();
                r.delete("c").unwrap();
                data(&f, "c/new");
            }
            _ => {}
        }
        seen.push(p);
    }
    assert_eq!(seen, ["a", "a/x", "a/z", "b", "b/x", "c", "c/new"]);
    f.check().unwrap();

    // A rolled back transaction changes links too.
    let mut w = r.walk(WalkOrder::Name).unwrap();
    assert_eq!(w.next().unwrap().unwrap().path, "a");
    let undone: arca::Result<()> = f.transaction(|f| {
        f.root().delete("c")?;
        Err(arca::Error::InvalidArgument("undo".into()))
    });
    assert!(undone.is_err());
    let rest: Vec<String> = w.map(|s| s.unwrap().path).collect();
    assert_eq!(rest, ["a/x", "a/z", "c", "c/new"]);
}
