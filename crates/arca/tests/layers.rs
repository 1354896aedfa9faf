//! The layer order in `LAYERS` holds: no module of `src/` names a module of
//! a layer above its own (`crate::…` paths in code, not in comments).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Layer rank of each name in `LAYERS` (0 = lowest).
fn layers(text: &str) -> HashMap<String, usize> {
    let rows: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    let n = rows.len();
    let mut out = HashMap::new();
    for (i, row) in rows.iter().enumerate() {
        for name in row.split_whitespace() {
            out.insert(name.to_string(), n - 1 - i);
        }
    }
    out
}

/// The layer of module path `m` (`format::page`, `object::file`, …): its
/// most specific entry. `crate::Name` is an item `lib.rs` re-exports: the
/// error types are the error layer's, the rest the public API's, `object`.
fn rank_of(ranks: &HashMap<String, usize>, m: &str) -> Option<usize> {
    if m.starts_with(|c: char| c.is_ascii_uppercase()) {
        let home = if m.starts_with("Error") || m.starts_with("Result") {
            "error"
        } else {
            "object"
        };
        return ranks.get(home).copied();
    }
    let mut parts: Vec<&str> = m.split("::").collect();
    while !parts.is_empty() {
        if let Some(&r) = ranks.get(&parts.join("::")) {
            return Some(r);
        }
        parts.pop();
    }
    None
}

/// Every `crate::a::b` path in code lines of `src`, as `a::b`.
fn uses(src: &str) -> Vec<(usize, String)> {
    let mut out = vec![];
    for (no, line) in src.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + 7..];
            let path: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            let segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).take(2).collect();
            if !segs.is_empty() {
                out.push((no + 1, segs.join("::")));
            }
        }
    }
    out
}

/// Violations in the files under `src` as "file:line: a uses b".
fn violations(src: &Path, ranks: &HashMap<String, usize>) -> Vec<String> {
    let mut files = vec![];
    let mut dirs = vec![src.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    let mut out = vec![];
    for f in files {
        let rel = f.strip_prefix(src).unwrap().with_extension("");
        let module = rel.to_string_lossy().replace('/', "::");
        if module == "lib" {
            continue;
        }
        let Some(own) = rank_of(ranks, &module) else {
            out.push(format!("{}: module {module} is in no layer", f.display()));
            continue;
        };
        let text = std::fs::read_to_string(&f).unwrap();
        for (line, target) in uses(&text) {
            match rank_of(ranks, &target) {
                Some(r) if r <= own => {}
                Some(_) => out.push(format!(
                    "{}:{line}: {module} uses {target}, a layer above",
                    f.display()
                )),
                None => out.push(format!("{}:{line}: {target} is in no layer", f.display())),
            }
        }
    }
    out.sort();
    out
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn no_module_uses_a_layer_above_its_own() {
    let ranks = layers(&std::fs::read_to_string(root().join("LAYERS")).unwrap());
    let v = violations(&root().join("src"), &ranks);
    assert!(v.is_empty(), "layer violations:\n{}", v.join("\n"));
}

#[test]
fn the_check_sees_a_violation() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::create_dir(src.join("format")).unwrap();
    std::fs::write(
        src.join("store.rs"),
        "use crate::format::btree; // fine in a comment: crate::object\n",
    )
    .unwrap();
    std::fs::write(
        src.join("format/page.rs"),
        "pub fn f() { crate::error::g() }\n",
    )
    .unwrap();
    let ranks = layers("object\nformat\nstore\nformat::page\nerror\n");
    let v = violations(src, &ranks);
    assert_eq!(v.len(), 1, "{v:?}");
    assert!(v[0].contains("store uses format::btree"), "{v:?}");
}
