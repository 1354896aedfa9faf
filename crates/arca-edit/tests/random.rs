//! Random sessions with one failing command: `yes` restores the bytes,
//! `inc` and `no` leave exactly what the commands before it make.

use std::path::{Path, PathBuf};

use arca::{AttrValue, DatasetOptions, Datatype, File, ObjectKind, Selection};
use arca_edit::{run, Atomic, EditError};

/// A small deterministic generator (xorshift), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const TYPES: &[(&str, i64, i64)] = &[
    ("H5T_STD_I8BE", -128, 127),
    ("H5T_STD_U16LE", 0, 65535),
    ("H5T_STD_I32BE", -2_000_000, 2_000_000),
    ("H5T_STD_U64BE", 0, 1 << 40),
    ("H5T_IEEE_F32LE", -1000, 1000),
    ("H5T_IEEE_F64BE", -1000, 1000),
    ("H5T_NATIVE_SHORT", -300, 300),
];

struct Attr {
    object: String,
    name: String,
    ty: usize,
    count: usize,
}

/// What exists, so generated commands are valid.
struct Model {
    groups: Vec<String>,
    attrs: Vec<Attr>,
    next: usize,
}

impl Model {
    fn fresh(&mut self, prefix: &str) -> String {
        self.next += 1;
        format!("{prefix}{}", self.next)
    }
}

fn values(rng: &mut Rng, ty: usize, n: usize) -> String {
    let (_, lo, hi) = TYPES[ty];
    let v: Vec<String> = (0..n)
        .map(|_| (lo + (rng.next() % (hi - lo + 1) as u64) as i64).to_string())
        .collect();
    v.join(", ")
}

fn valid_command(rng: &mut Rng, m: &mut Model) -> String {
    loop {
        match rng.below(8) {
            0 => {
                let parent = m.groups[rng.below(m.groups.len())].clone();
                let name = m.fresh("g");
                let path = if parent == "/" {
                    format!("/{name}")
                } else {
                    format!("{parent}/{name}")
                };
                m.groups.push(path.clone());
                return format!("CREATE GROUP {path};");
            }
            1 | 2 => {
                let object = m.groups[rng.below(m.groups.len())].clone();
                let name = m.fresh("a");
                let ty = rng.below(TYPES.len());
                let count = 1 + rng.below(5);
                let data = values(rng, ty, count);
                let cmd = format!(
                    "CREATE GROUP {object} {name} {{{} ({count}) DATA {{{data}}}}};",
                    TYPES[ty].0
                );
                m.attrs.push(Attr {
                    object,
                    name,
                    ty,
                    count,
                });
                return cmd;
            }
            3 if !m.attrs.is_empty() => {
                let a = &m.attrs[rng.below(m.attrs.len())];
                let data = values(rng, a.ty, a.count);
                return format!("MODIFY GROUP {} {} {{{data}}};", a.object, a.name);
            }
            4 if !m.attrs.is_empty() => {
                let i = rng.below(m.attrs.len());
                let new = m.fresh("r");
                let a = &mut m.attrs[i];
                let cmd = format!("RENAME GROUP {} {} {new};", a.object, a.name);
                a.name = new;
                return cmd;
            }
            5 if !m.attrs.is_empty() => {
                let a = m.attrs.remove(rng.below(m.attrs.len()));
                return format!("DELETE GROUP {} {};", a.object, a.name);
            }
            6 if !m.attrs.is_empty() => {
                let i = rng.below(m.attrs.len());
                let to = m.groups[rng.below(m.groups.len())].clone();
                let name = m.fresh("c");
                let a = &m.attrs[i];
                let cmd = format!("COPY GROUP {} {} GROUP {to} {name};", a.object, a.name);
                let (ty, count) = (a.ty, a.count);
                m.attrs.push(Attr {
                    object: to,
                    name,
                    ty,
                    count,
                });
                return cmd;
            }
            7 => {
                let parent = m.groups[rng.below(m.groups.len())].clone();
                let name = m.fresh("d");
                let path = if parent == "/" {
                    format!("/{name}")
                } else {
                    format!("{parent}/{name}")
                };
                let ty = rng.below(TYPES.len());
                let n = 1 + rng.below(300);
                let data = values(rng, ty, n);
                return format!(
                    "CREATE DATASET {path} {{{} ({n}) DATA {{{data}}}}};",
                    TYPES[ty].0
                );
            }
            _ => {}
        }
    }
}

fn failing_command(rng: &mut Rng, m: &Model) -> String {
    let g = &m.groups[rng.below(m.groups.len())];
    match rng.below(4) {
        0 => format!("DELETE GROUP {g} no_such_attribute;"),
        1 => format!("CREATE GROUP {g} x {{H5T_STD_U8LE (2) DATA {{1, 256}}}};"),
        2 => format!("CREATE DATASET {g}/new/deep {{H5T_STD_I8LE (3) DATA {{1, 2}}}};"),
        _ => "RENAME /no/such /x;".to_string(),
    }
}

/// Everything the file holds, as text.
fn snapshot(path: &Path) -> String {
    let f = File::open(path).unwrap();
    let root = f.root();
    let mut paths = vec![(String::new(), ObjectKind::Group)];
    root.visit(&mut |p, k| {
        paths.push((p.to_string(), k));
        Ok(())
    })
    .unwrap();
    let mut out = String::new();
    for (p, kind) in paths {
        let full = format!("/{p}");
        let attrs = match root.object(&full).unwrap() {
            arca::Object::Group(g) => g.attrs(),
            arca::Object::Datatype(t) => t.attrs(),
            arca::Object::Dataset(d) => {
                let shape = d.shape().unwrap();
                let dtype = d.dtype().unwrap();
                let n: u64 = shape.iter().product();
                let mut bytes = vec![0u8; n as usize * dtype.size()];
                d.read_bytes(&Selection::all(&shape), &mut bytes).unwrap();
                out.push_str(&format!("{full} {dtype:?} {shape:?} {bytes:?}\n"));
                d.attrs()
            }
        };
        out.push_str(&format!("{full} {kind:?}\n"));
        for name in attrs.names().unwrap() {
            let AttrValue {
                dtype, shape, data, ..
            } = attrs.get(&name).unwrap();
            out.push_str(&format!("  {name} {dtype:?} {shape:?} {data:?}\n"));
        }
    }
    out
}

fn base(dir: &Path) -> PathBuf {
    let path = dir.join("base.arca");
    let f = File::create(&path).unwrap();
    f.root()
        .attrs()
        .set("title", &AttrValue::string("random sessions"))
        .unwrap();
    let g = f.root().create_group("base").unwrap();
    g.create_dataset("d0", &DatasetOptions::new(Datatype::float(8), &[64]))
        .unwrap()
        .write_all(&[0.5f64; 64])
        .unwrap();
    f.close().unwrap();
    path
}

fn copy(from: &Path, dir: &Path, name: &str) -> PathBuf {
    let to = dir.join(name);
    std::fs::copy(from, &to).unwrap();
    to
}

#[test]
fn random_sessions_with_a_failure() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for round in 0..12 {
        let dir = tempfile::tempdir().unwrap();
        let base = base(dir.path());
        let mut m = Model {
            groups: vec!["/".into(), "/base".into()],
            attrs: vec![],
            next: 0,
        };
        let n = 5 + rng.below(20);
        let fail_at = rng.below(n);
        let mut cmds = vec![];
        for i in 0..n {
            if i == fail_at {
                cmds.push(failing_command(&mut rng, &m));
            } else {
                cmds.push(valid_command(&mut rng, &mut m));
            }
        }
        let session = cmds.join("\n");
        let prefix = cmds[..fail_at].join("\n");
        let ctx = format!("round {round}, failing command {}:\n{session}", fail_at + 1);

        // The state the commands before the failure make.
        let expected = copy(&base, dir.path(), "expected.arca");
        run(&expected, &prefix, Atomic::Yes).unwrap_or_else(|e| panic!("{ctx}\n{e}"));
        let expected = snapshot(&expected);

        let yes = copy(&base, dir.path(), "yes.arca");
        let before = std::fs::read(&yes).unwrap();
        let e = run(&yes, &session, Atomic::Yes).unwrap_err();
        assert!(
            matches!(&e, EditError::Command(c) if c.index == fail_at + 1),
            "{ctx}\n{e}"
        );
        assert_eq!(std::fs::read(&yes).unwrap(), before, "{ctx}");

        for (atomic, name) in [(Atomic::Inc, "inc.arca"), (Atomic::No, "no.arca")] {
            let p = copy(&base, dir.path(), name);
            let e = run(&p, &session, atomic).unwrap_err();
            assert!(
                matches!(&e, EditError::Command(c) if c.index == fail_at + 1 && c.kept == fail_at),
                "{ctx}\n{e}"
            );
            assert_eq!(snapshot(&p), expected, "{atomic}: {ctx}");
            File::open(&p).unwrap().check().unwrap();
        }

        // Without the failing command every level ends in the same state.
        let mut good = cmds.clone();
        good.remove(fail_at);
        let good = good.join("\n");
        let mut states = vec![];
        for (atomic, name) in [
            (Atomic::Yes, "y2.arca"),
            (Atomic::Inc, "i2.arca"),
            (Atomic::No, "n2.arca"),
        ] {
            let p = copy(&base, dir.path(), name);
            assert_eq!(run(&p, &good, atomic).unwrap().applied, n - 1, "{ctx}");
            File::open(&p).unwrap().check().unwrap();
            states.push(snapshot(&p));
        }
        assert_eq!(states[0], states[1], "{ctx}");
        assert_eq!(states[0], states[2], "{ctx}");
    }
}
