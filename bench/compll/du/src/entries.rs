//! The entries the tree is built from, in pre-order: generated
//! (`generate`), scanned from a directory, or imported from an ncdu JSON
//! export (which [`export_ncdu`] also writes).

mod generate;
mod shape;

use std::collections::HashMap;
use std::path::Path;

pub(crate) use generate::generate;
pub(crate) use shape::{shape, Shape};

use crate::cli::Args;

/// One file or directory as read from the source, in pre-order.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    pub(crate) name: String,
    pub(crate) depth: u32,
    pub(crate) dir: bool,
    pub(crate) size: u64,
    pub(crate) asize: u64,
    pub(crate) ino: u64,
    pub(crate) dev: u64,
    pub(crate) mtime: i64,
    pub(crate) nlink: u32,
}

/// The entries `args` name (a scan, an import, or generated), and how they
/// were obtained, for the report.
pub(crate) fn from_args(args: &Args) -> Result<(Vec<Entry>, String), String> {
    Ok(if let Some(d) = &args.scan {
        (
            scan_dir(d).map_err(|e| e.to_string())?,
            format!("scan {}", d.display()),
        )
    } else if let Some(f) = &args.import {
        (import_ncdu(f)?, format!("import {}", f.display()))
    } else {
        let n = args
            .generate
            .unwrap_or(if args.quick { 40_000 } else { 300_000 });
        let big = args
            .big_dir
            .unwrap_or(if args.quick { 5_000 } else { 25_000 })
            .min(n / 2);
        (
            generate(n, big, args.seed),
            format!("generated seed {}", args.seed),
        )
    })
}

/// The number of entries in the largest directory.
pub(crate) fn largest_dir(entries: &[Entry]) -> usize {
    let mut counts: HashMap<usize, usize> = HashMap::new();
    let mut stack: Vec<usize> = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        stack.truncate(e.depth as usize);
        if let Some(&p) = stack.last() {
            *counts.entry(p).or_default() += 1;
        }
        if e.dir {
            stack.push(i);
        }
    }
    counts.values().copied().max().unwrap_or(0)
}

/// The entries under `root`, staying on its file system.
fn scan_dir(root: &Path) -> std::io::Result<Vec<Entry>> {
    use std::os::unix::fs::MetadataExt;
    let mut out = Vec::new();
    fn entry(name: String, depth: u32, md: &std::fs::Metadata) -> Entry {
        Entry {
            name,
            depth,
            dir: md.is_dir(),
            size: md.size(),
            asize: md.blocks() * 512,
            ino: md.ino(),
            dev: md.dev(),
            mtime: md.mtime(),
            nlink: md.nlink() as u32,
        }
    }
    fn walk(dir: &Path, depth: u32, dev: u64, out: &mut Vec<Entry>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let Ok(md) = e.metadata() else { continue };
            let name = e.file_name().to_string_lossy().into_owned();
            out.push(entry(name, depth, &md));
            // Stay on one file system, like ncdu -x.
            if md.is_dir() && md.dev() == dev {
                walk(&e.path(), depth + 1, dev, out);
            }
        }
    }
    let md = std::fs::symlink_metadata(root)?;
    out.push(entry(root.display().to_string(), 0, &md));
    walk(root, 1, md.dev(), &mut out);
    Ok(out)
}

/// The entries of an ncdu JSON export (`[major, minor, meta, root]`).
fn import_ncdu(path: &Path) -> Result<Vec<Entry>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let root = v
        .as_array()
        .and_then(|a| a.get(3))
        .ok_or("not an ncdu export: expected [major, minor, meta, root]")?;
    let mut out = Vec::new();
    fn info(o: &serde_json::Value, depth: u32, dir: bool) -> Entry {
        let n = |k: &str| o.get(k).and_then(|x| x.as_u64()).unwrap_or(0);
        Entry {
            name: o
                .get("name")
                .and_then(|x| x.as_str())
                .unwrap_or("?")
                .to_string(),
            depth,
            dir,
            size: n("asize"),
            asize: n("dsize"),
            ino: n("ino"),
            dev: n("dev"),
            mtime: n("mtime") as i64,
            nlink: n("nlink").max(1) as u32,
        }
    }
    fn walk(v: &serde_json::Value, depth: u32, out: &mut Vec<Entry>) {
        match v {
            serde_json::Value::Array(items) => {
                if let Some(first) = items.first() {
                    out.push(info(first, depth, true));
                }
                for c in items.iter().skip(1) {
                    walk(c, depth + 1, out);
                }
            }
            o => out.push(info(o, depth, false)),
        }
    }
    walk(root, 0, &mut out);
    Ok(out)
}

/// Writes the entries as an ncdu JSON export.
pub(crate) fn export_ncdu(entries: &[Entry], path: &Path) -> std::io::Result<()> {
    let mut s = String::from("[1,2,{\"progname\":\"compll-du\",\"progver\":\"0.1\"},\n");
    let mut open: Vec<u32> = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        while open.last().is_some_and(|&d| d >= e.depth) {
            s.push(']');
            open.pop();
        }
        if i > 0 {
            s.push_str(",\n");
        }
        let obj = serde_json::json!({
            "name": e.name, "asize": e.size, "dsize": e.asize, "ino": e.ino,
            "dev": e.dev, "mtime": e.mtime, "nlink": e.nlink,
        });
        if e.dir {
            s.push('[');
            open.push(e.depth);
        }
        s.push_str(&obj.to_string());
    }
    for _ in open {
        s.push(']');
    }
    s.push_str("]\n");
    std::fs::write(path, s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(e: &Entry) -> (&str, u32, bool, u64, u64, u64, u64, i64, u32) {
        (
            &e.name, e.depth, e.dir, e.size, e.asize, e.ino, e.dev, e.mtime, e.nlink,
        )
    }

    #[test]
    fn an_export_imports_as_the_same_entries() {
        let entries = generate(2000, 200, 3);
        let path = std::env::temp_dir().join(format!("compll-du-{}.json", std::process::id()));
        export_ncdu(&entries, &path).unwrap();
        let back = import_ncdu(&path);
        std::fs::remove_file(&path).unwrap();
        let back = back.unwrap();
        assert_eq!(back.len(), entries.len());
        for (a, b) in entries.iter().zip(&back) {
            assert_eq!(fields(a), fields(b));
        }
    }

    #[test]
    fn the_same_seed_generates_the_same_entries() {
        let (a, b) = (generate(1000, 100, 9), generate(1000, 100, 9));
        assert!(a.iter().zip(&b).all(|(x, y)| fields(x) == fields(y)));
        assert_eq!(largest_dir(&a), 100);
    }
}
