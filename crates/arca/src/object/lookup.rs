//! Finding objects by path: links followed from a group (hard, soft, and
//! where they lead out of the file), and the other files external links
//! and virtual datasets name, opened once per file handle.

use super::handle::FileHandle;
use super::open::{Mode, OpenOptions};
use super::path::{components, join};
use super::session::Session;
use crate::error::{Error, Result};
use crate::format::btree;
use crate::format::link::{self as link_fmt, Target};
use crate::format::object_header::{Header, ObjectKind};
use crate::store::Store;

/// Soft and external links followed in one lookup, together, before it is
/// given up (as HDF5's default limit): a longer chain is almost surely a
/// loop, within a file or through files.
pub const MAX_SOFT_LINK_HOPS: u32 = 16;

/// What a kind of object is called in messages.
pub(crate) fn kind_word(k: ObjectKind) -> &'static str {
    match k {
        ObjectKind::Group => "group",
        ObjectKind::Dataset => "dataset",
        ObjectKind::Datatype => "committed datatype",
    }
}

/// Where a path leads.
pub(crate) enum Found {
    /// An object in this file.
    Local(ObjectKind, u64),
    /// A path in another file.
    External { file: String, path: String },
}

/// Load the group at `addr` and its link `name`, decoded.
pub(crate) fn get_link(st: &mut Store, addr: u64, name: &str) -> Result<Option<link_fmt::Link>> {
    let h = Header::load(st, addr)?;
    if h.kind != ObjectKind::Group {
        return Err(Error::invalid("not a group"));
    }
    match btree::get(st, h.links.root, name.as_bytes())? {
        Some(v) => Ok(Some(link_fmt::decode(
            &v,
            addr,
            st.space.eof(),
            h.order.is_some(),
        )?)),
        None => Ok(None),
    }
}

/// Follow `parts` from the group at `addr` through hard and soft links;
/// `root` is the root group's address, for absolute soft links.
pub(crate) fn resolve(
    st: &mut Store,
    root: u64,
    addr: u64,
    parts: &[&str],
    full: &str,
) -> Result<Found> {
    resolve_hops(st, root, addr, parts, full, &mut 0)
}

pub(crate) fn resolve_hops(
    st: &mut Store,
    root: u64,
    mut addr: u64,
    parts: &[&str],
    full: &str,
    hops: &mut u32,
) -> Result<Found> {
    let mut kind = ObjectKind::Group;
    for (i, p) in parts.iter().enumerate() {
        if kind != ObjectKind::Group {
            return Err(Error::NotFound(format!(
                "{full}: {} is a {}",
                parts[..i].join("/"),
                kind_word(kind)
            )));
        }
        let l = get_link(st, addr, p)?.ok_or_else(|| Error::NotFound(full.to_string()))?;
        let rest = &parts[i + 1..];
        match l.target {
            Target::Hard { kind: k, addr: a } => (kind, addr) = (k, a),
            Target::Soft(target) => {
                *hops += 1;
                if *hops > MAX_SOFT_LINK_HOPS {
                    return Err(Error::NotFound(format!(
                        "{full}: more than {MAX_SOFT_LINK_HOPS} soft links (a loop?)"
                    )));
                }
                let tparts = components(&target)?;
                let from = if target.starts_with('/') { root } else { addr };
                match resolve_hops(st, root, from, &tparts, full, hops)? {
                    Found::Local(k, a) => (kind, addr) = (k, a),
                    Found::External { file, path } => {
                        return Ok(Found::External {
                            file,
                            path: rest.iter().fold(path, |acc, r| join(&acc, r)),
                        })
                    }
                }
            }
            Target::External { file, path } => {
                return Ok(Found::External {
                    file,
                    path: rest.iter().fold(path, |acc, r| join(&acc, r)),
                })
            }
        }
    }
    Ok(Found::Local(kind, addr))
}

/// Open (once per file, read-only) the file an external link names:
/// relative names are looked for beside this file, then in the current
/// directory. A missing file is `NotFound`.
pub(crate) fn external_file(
    g: &mut Session,
    this: &FileHandle,
    file: &str,
    write: Option<bool>,
) -> Result<FileHandle> {
    let named = std::path::Path::new(file);
    let mut candidates = vec![];
    if named.is_absolute() {
        candidates.push(named.to_path_buf());
    } else {
        if let Some(dir) = g.path().and_then(|p| p.parent()) {
            candidates.push(dir.join(named));
        }
        candidates.push(named.to_path_buf());
    }
    open_first(g, this, &candidates, write)?
        .ok_or_else(|| Error::NotFound(format!("external file {file} not found")))
}

/// Open (once per file and intent) the first of `candidates` that exists;
/// this file itself when it is that one. `None` when none exists. `write`
/// asks for writing or not; `None` passes this file's intent along, as
/// HDF5 does: a file reached from a writable one opens for writing too
/// and, when that fails (another writer holds it, no write permission),
/// read-only, so the link still reads.
pub(crate) fn open_first(
    g: &mut Session,
    this: &FileHandle,
    candidates: &[std::path::PathBuf],
    write: Option<bool>,
) -> Result<Option<FileHandle>> {
    let want = write.unwrap_or(g.st.writable);
    if want && !g.st.writable {
        return Err(Error::invalid(
            "a file opened read-only cannot open external files for writing",
        ));
    }
    for c in candidates {
        let Ok(canon) = std::fs::canonicalize(c) else {
            continue;
        };
        if g.path().and_then(|p| std::fs::canonicalize(p).ok()) == Some(canon.clone()) {
            return Ok(Some(this.clone()));
        }
        if let Some(s) = g.external(&canon, want) {
            return Ok(Some(s));
        }
        let s = if want {
            let mut rw = OpenOptions::default();
            rw.mode(Mode::ReadWrite);
            match rw.open_path(&canon) {
                Ok(s) => s,
                // Asked for explicitly, writing must succeed; passed along,
                // the link still reads.
                Err(e) if write == Some(true) => return Err(e),
                Err(_) => OpenOptions::default().open_path(&canon)?,
            }
        } else {
            OpenOptions::default().open_path(&canon)?
        };
        g.add_external(canon, want, s.clone());
        return Ok(Some(s));
    }
    Ok(None)
}
