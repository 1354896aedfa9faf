//! The shape of `src/`: the layer order in `LAYERS` holds (no module names a
//! module of a layer above its own), and no files depend on each other in a
//! loop, inside a layer or across.
//!
//! A file's dependencies are the modules its code names: `crate::a::b`,
//! `super::x` (from a file `a/b.rs`, `a::x`), `self::x`, a child module by
//! its bare name (`dataset::Dataset` in `object.rs`), and items `lib.rs`
//! re-exports (`crate::Dataset` is wherever `lib.rs` takes it from). A path
//! resolves to the deepest file it reaches: `super::lock` from
//! `object/dataset.rs` is a dependency on `object.rs` itself, which is why a
//! parent that re-exports its children cannot also lend them items. Comments,
//! string literals and `#[cfg(test)]` modules are not code here.

use std::collections::{BTreeMap, BTreeSet, HashMap};
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

/// The layer of module `m` (`format::page`, `object::file`, …): its most
/// specific entry in `LAYERS`.
fn rank_of(ranks: &HashMap<String, usize>, m: &str) -> Option<usize> {
    let mut parts: Vec<&str> = m.split("::").collect();
    while !parts.is_empty() {
        if let Some(&r) = ranks.get(&parts.join("::")) {
            return Some(r);
        }
        parts.pop();
    }
    None
}

/// `src` with comments, string and char literals blanked (newlines kept, so
/// line numbers survive) and `#[cfg(test)]` items removed.
fn code_of(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    let blank = |s: &[u8], out: &mut String| {
        for &c in s {
            out.push(if c == b'\n' { '\n' } else { ' ' });
        }
    };
    while i < b.len() {
        let rest = &b[i..];
        if rest.starts_with(b"//") {
            let end = rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len());
            blank(&rest[..end], &mut out);
            i += end;
        } else if rest.starts_with(b"/*") {
            let mut depth = 0;
            let mut j = 0;
            while j < rest.len() {
                if rest[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if rest[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            blank(&rest[..j], &mut out);
            i += j;
        } else if rest[0] == b'"' || rest.starts_with(b"r\"") || rest.starts_with(b"r#") {
            // Raw strings end at `"` followed by as many `#` as they began with.
            let hashes = if rest[0] == b'r' {
                rest[1..].iter().take_while(|&&c| c == b'#').count()
            } else {
                0
            };
            let raw = rest[0] == b'r';
            let open = if raw { 2 + hashes } else { 1 };
            if raw && rest.get(1 + hashes) != Some(&b'"') {
                out.push(rest[0] as char);
                i += 1;
                continue;
            }
            let mut j = open;
            while j < rest.len() {
                if !raw && rest[j] == b'\\' {
                    j += 2;
                    continue;
                }
                if rest[j] == b'"' && rest[j + 1..].iter().take(hashes).all(|&c| c == b'#') {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            blank(&rest[..j.min(rest.len())], &mut out);
            i += j.min(rest.len());
        } else if rest[0] == b'\'' && char_literal_len(rest).is_some() {
            let n = char_literal_len(rest).unwrap_or(1);
            blank(&rest[..n], &mut out);
            i += n;
        } else {
            // Identifiers are copied whole, so `br"..."` or `x'` never start
            // a literal in the middle of a word.
            let n = if rest[0].is_ascii_alphanumeric() || rest[0] == b'_' {
                rest.iter()
                    .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
                    .count()
            } else {
                1
            };
            out.push_str(&src[i..i + n]);
            i += n;
        }
    }
    strip_visibility(&strip_test_modules(&out))
}

/// `code` with visibilities (`pub(super)`, `pub(in crate::x)`) blanked: they
/// name modules without depending on them.
fn strip_visibility(code: &str) -> String {
    let mut out = code.to_string();
    let mut from = 0;
    while let Some(i) = out[from..].find("pub(") {
        let at = from + i + 3;
        let Some(len) = out[at..].find(')') else {
            break;
        };
        let blanked = " ".repeat(len + 1);
        out.replace_range(at..at + len + 1, &blanked);
        from = at + len + 1;
    }
    out
}

/// Length of the char literal `rest` starts with (`'a'`, `'\n'`, `'\''`),
/// or None for a lifetime (`'a`).
fn char_literal_len(rest: &[u8]) -> Option<usize> {
    if rest.get(1) == Some(&b'\\') {
        let end = rest[2..].iter().position(|&c| c == b'\'')?;
        Some(end + 3)
    } else {
        let ch = std::str::from_utf8(&rest[1..rest.len().min(6)])
            .or_else(|e| std::str::from_utf8(&rest[1..1 + e.valid_up_to()]))
            .ok()?
            .chars()
            .next()?;
        let n = ch.len_utf8();
        (rest.get(1 + n) == Some(&b'\'')).then_some(n + 2)
    }
}

/// `code` without the items that follow a `#[cfg(test)]` attribute (a
/// `mod tests { … }` or a single item up to its `;` or closing brace).
fn strip_test_modules(code: &str) -> String {
    let mut out = code.to_string();
    while let Some(at) = out.find("#[cfg(test)]") {
        let b = out.as_bytes();
        let mut j = at + "#[cfg(test)]".len();
        let mut depth = 0usize;
        while j < b.len() {
            match b[j] {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        j += 1;
                        break;
                    }
                }
                b';' if depth == 0 => {
                    j += 1;
                    break;
                }
                _ => {}
            }
            j += 1;
        }
        let blanked: String = out[at..j]
            .chars()
            .map(|c| if c == '\n' { '\n' } else { ' ' })
            .collect();
        out.replace_range(at..j, &blanked);
    }
    out
}

/// A path's segments from `at` in `code`: `a::b::{c, d::e}` gives
/// `[a, b, c]` and `[a, b, d, e]`. Segments stop at anything that is not an
/// identifier, `::` or a brace group.
fn paths_at(code: &str, at: usize) -> Vec<Vec<String>> {
    fn walk(b: &[u8], mut i: usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
        let mut segs = prefix;
        loop {
            while i < b.len() && b[i].is_ascii_whitespace() {
                i += 1;
            }
            if i < b.len() && b[i] == b'{' {
                i += 1;
                loop {
                    while i < b.len() && (b[i].is_ascii_whitespace() || b[i] == b',') {
                        i += 1;
                    }
                    if i >= b.len() || b[i] == b'}' {
                        return i + 1;
                    }
                    let before = i;
                    i = walk(b, i, segs.clone(), out);
                    if i == before {
                        i += 1;
                    }
                }
            }
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            if i == start {
                break;
            }
            segs.push(String::from_utf8_lossy(&b[start..i]).into_owned());
            let mut k = i;
            while k < b.len() && b[k].is_ascii_whitespace() {
                k += 1;
            }
            if b[k..].starts_with(b"::") {
                i = k + 2;
            } else {
                break;
            }
        }
        if !segs.is_empty() {
            out.push(segs);
        }
        i
    }
    let mut out = vec![];
    walk(code.as_bytes(), at, vec![], &mut out);
    out
}

/// The crate as files: module path (`object::dataset`; the root is "") ->
/// its file and code, and the names each file's `use` items bring in.
struct Tree {
    files: BTreeMap<String, (PathBuf, String)>,
    /// Per module: a name its `use` items bring in -> the path as written.
    imports: HashMap<String, HashMap<String, Vec<String>>>,
}

impl Tree {
    fn read(src: &Path) -> Tree {
        let mut files = BTreeMap::new();
        let mut dirs = vec![src.to_path_buf()];
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    dirs.push(p);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    let rel = p.strip_prefix(src).unwrap().with_extension("");
                    let mut m = rel.to_string_lossy().replace('/', "::");
                    if m == "lib" {
                        m = String::new();
                    }
                    let code = code_of(&std::fs::read_to_string(&p).unwrap());
                    files.insert(m, (p, code));
                }
            }
        }
        let mut imports = HashMap::new();
        for (m, (_, code)) in &files {
            let mut names = HashMap::new();
            let b = code.as_bytes();
            let mut rest = 0;
            while let Some(i) = code[rest..].find("use ") {
                let at = rest + i;
                rest = at + 4;
                if at > 0 && (b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_') {
                    continue;
                }
                for p in paths_at(code, rest) {
                    if let Some(last) = p.last() {
                        names.insert(last.clone(), p.clone());
                    }
                }
            }
            imports.insert(m.clone(), names);
        }
        Tree { files, imports }
    }

    fn is_child(&self, parent: &str, name: &str) -> bool {
        let m = if parent.is_empty() {
            name.to_string()
        } else {
            format!("{parent}::{name}")
        };
        self.files.contains_key(&m)
    }

    /// The file modules `module`'s code names, with the line of each.
    fn deps(&self, module: &str) -> Vec<(usize, String)> {
        let code = &self.files[module].1;
        let b = code.as_bytes();
        let mut out = vec![];
        let mut i = 0;
        while i < b.len() {
            let word_start = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
            let after_colons = i >= 2 && &b[i - 2..i] == b"::";
            if !word_start || after_colons || !(b[i].is_ascii_alphabetic() || b[i] == b'_') {
                i += 1;
                continue;
            }
            let line = code[..i].matches('\n').count() + 1;
            let paths = paths_at(code, i);
            let mut next = i + 1;
            while next < b.len() && (b[next].is_ascii_alphanumeric() || b[next] == b'_') {
                next += 1;
            }
            for segs in paths {
                if segs.len() < 2 && !matches!(segs[0].as_str(), "super" | "self" | "crate") {
                    continue;
                }
                if let Some(target) = self.resolve(module, &segs, 0) {
                    if target != module {
                        out.push((line, target));
                    }
                }
            }
            i = next;
        }
        out.sort();
        out.dedup();
        out
    }

    /// The file a path written in `module` leads to, if it is in the crate.
    /// A path that ends in an item another file only imports (a parent's
    /// `pub use child::Item`, lib.rs's re-exports) leads on to where that
    /// file takes it from.
    fn resolve(&self, module: &str, segs: &[String], depth: usize) -> Option<String> {
        let mut full: Vec<String> = if module.is_empty() {
            vec![]
        } else {
            module.split("::").map(String::from).collect()
        };
        let mut rest = segs;
        match segs[0].as_str() {
            "crate" => {
                full.clear();
                rest = &segs[1..];
            }
            "super" => {
                while rest.first().is_some_and(|s| s == "super") {
                    full.pop()?;
                    rest = &rest[1..];
                }
            }
            "self" => rest = &segs[1..],
            first => {
                // A bare path counts only when it names a child module.
                if !self.is_child(module, first) {
                    return None;
                }
            }
        }
        full.extend(rest.iter().cloned());
        // The deepest file the path reaches, and what is left after it.
        let mut file = String::new();
        let mut used = 0;
        for n in 1..=full.len() {
            let m = full[..n].join("::");
            if self.files.contains_key(&m) {
                file = m;
                used = n;
            }
        }
        let left = &full[used..];
        if let (Some(item), true) = (left.first(), depth < 8) {
            if let Some(path) = self.imports.get(&file).and_then(|u| u.get(item)) {
                let mut onward = path.clone();
                onward.extend(left[1..].iter().cloned());
                if let Some(t) = self.resolve(&file, &onward, depth + 1) {
                    return Some(t);
                }
            }
        }
        Some(file)
    }
}

/// Layer violations as "file:line: a uses b, a layer above".
fn violations(tree: &Tree, ranks: &HashMap<String, usize>) -> Vec<String> {
    let mut out = vec![];
    for (module, (path, _)) in &tree.files {
        if module.is_empty() {
            continue;
        }
        let Some(own) = rank_of(ranks, module) else {
            out.push(format!(
                "{}: module {module} is in no layer",
                path.display()
            ));
            continue;
        };
        for (line, target) in tree.deps(module) {
            if target.is_empty() {
                continue; // the crate root: re-exports only
            }
            match rank_of(ranks, &target) {
                Some(r) if r <= own => {}
                Some(_) => out.push(format!(
                    "{}:{line}: {module} uses {target}, a layer above",
                    path.display()
                )),
                None => out.push(format!(
                    "{}:{line}: {target} is in no layer",
                    path.display()
                )),
            }
        }
    }
    out.sort();
    out
}

/// Groups of files that depend on each other in a loop (strongly connected
/// components of more than one file, by Tarjan's algorithm), each with the
/// edges inside it.
fn cycles(tree: &Tree) -> Vec<Vec<String>> {
    let names: Vec<&String> = tree.files.keys().filter(|m| !m.is_empty()).collect();
    let index_of: HashMap<&str, usize> = names
        .iter()
        .enumerate()
        .map(|(i, m)| (m.as_str(), i))
        .collect();
    let mut edges: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); names.len()];
    let mut lines: HashMap<(usize, usize), usize> = HashMap::new();
    for (i, m) in names.iter().enumerate() {
        for (line, t) in tree.deps(m) {
            if let Some(&j) = index_of.get(t.as_str()) {
                edges[i].insert(j);
                lines.entry((i, j)).or_insert(line);
            }
        }
    }
    // Tarjan, iteratively: (node, next edge position) frames.
    let n = names.len();
    let (mut index, mut low) = (vec![usize::MAX; n], vec![0; n]);
    let (mut on_stack, mut stack, mut next) = (vec![false; n], vec![], 0);
    let mut sccs = vec![];
    for start in 0..n {
        if index[start] != usize::MAX {
            continue;
        }
        let mut frames: Vec<(usize, Vec<usize>, usize)> = vec![];
        index[start] = next;
        low[start] = next;
        next += 1;
        stack.push(start);
        on_stack[start] = true;
        frames.push((start, edges[start].iter().copied().collect(), 0));
        while let Some((v, succ, pos)) = frames.last_mut() {
            let v = *v;
            if *pos < succ.len() {
                let w = succ[*pos];
                *pos += 1;
                if index[w] == usize::MAX {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    frames.push((w, edges[w].iter().copied().collect(), 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            frames.pop();
            if let Some((u, _, _)) = frames.last() {
                low[*u] = low[*u].min(low[v]);
            }
            if low[v] == index[v] {
                let mut scc = vec![];
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    scc.push(w);
                    if w == v {
                        break;
                    }
                }
                if scc.len() > 1 {
                    sccs.push(scc);
                }
            }
        }
    }
    sccs.into_iter()
        .map(|scc| {
            let set: BTreeSet<usize> = scc.iter().copied().collect();
            let mut out = vec![];
            for &i in &set {
                for &j in edges[i].intersection(&set) {
                    out.push(format!(
                        "{} -> {} (line {})",
                        names[i],
                        names[j],
                        lines[&(i, j)]
                    ));
                }
            }
            out
        })
        .collect()
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn no_module_uses_a_layer_above_its_own() {
    let ranks = layers(&std::fs::read_to_string(root().join("LAYERS")).unwrap());
    let tree = Tree::read(&root().join("src"));
    let v = violations(&tree, &ranks);
    assert!(v.is_empty(), "layer violations:\n{}", v.join("\n"));
}

#[test]
fn no_files_depend_on_each_other_in_a_loop() {
    let tree = Tree::read(&root().join("src"));
    let c = cycles(&tree);
    let shown: Vec<String> = c.iter().map(|e| e.join("\n  ")).collect();
    assert!(
        c.is_empty(),
        "{} loop(s) among the files of src/:\n  {}",
        c.len(),
        shown.join("\n\n  ")
    );
}

/// A tree of files in a temporary directory.
fn planted(files: &[(&str, &str)]) -> (tempfile::TempDir, Tree) {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let p = dir.path().join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let tree = Tree::read(dir.path());
    (dir, tree)
}

#[test]
fn the_check_sees_a_layer_violation() {
    let (_d, tree) = planted(&[
        ("lib.rs", "mod store; mod format;\n"),
        (
            "store.rs",
            "use crate::format::btree; // fine in a comment: crate::object\n",
        ),
        ("format.rs", "mod btree; mod page;\n"),
        ("format/btree.rs", ""),
        ("format/page.rs", "pub fn f() { crate::error::g() }\n"),
        ("error.rs", "pub fn g() {}\n"),
        ("object.rs", ""),
    ]);
    let ranks = layers("object\nformat\nstore\nformat::page\nerror\n");
    let v = violations(&tree, &ranks);
    assert_eq!(v.len(), 1, "{v:?}");
    assert!(v[0].contains("store uses format::btree"), "{v:?}");
}

#[test]
fn the_check_sees_planted_loops() {
    // Siblings through `super::`, a child borrowing from the parent that
    // re-exports it, and a loop through an item lib.rs re-exports.
    let (_d, tree) = planted(&[
        (
            "lib.rs",
            "mod object; mod a; mod b;\npub use object::Dataset;\n",
        ),
        (
            "object.rs",
            "mod dataset;\nmod session;\npub use dataset::Dataset;\npub(crate) fn lock() {}\n",
        ),
        (
            "object/dataset.rs",
            "use super::lock;\npub struct Dataset;\n// super::session::x in a comment\n",
        ),
        (
            "object/session.rs",
            "fn f() { let s = \"super::dataset\"; }\n#[cfg(test)]\nmod tests { use super::super::dataset; }\n",
        ),
        ("a.rs", "use crate::b::{x, y::{z}};\npub fn w() {}\n"),
        ("b.rs", "pub fn x() { crate::Dataset::new(); super::a::w() }\n"),
        ("c.rs", "use std::{fmt, io};\n"),
    ]);
    let c = cycles(&tree);
    let text = format!("{c:?}");
    assert_eq!(c.len(), 2, "{text}");
    assert!(text.contains("object -> object::dataset"), "{text}");
    assert!(
        text.contains("object::dataset -> object (line 1)"),
        "{text}"
    );
    assert!(
        text.contains("a -> b (line 1)") && text.contains("b -> a"),
        "{text}"
    );
    // Comments, strings and test modules are not code: session is in no loop.
    assert!(!text.contains("object::session"), "{text}");
    assert!(
        text.contains("b -> object::dataset") || !text.contains("b -> object"),
        "{text}"
    );
}
