//! Links beyond the first name: how many hard links lead to each object
//! (the link-count B-tree, root in the superblock), and the public view of
//! a group's links.

use crate::error::{Error, Result};
use crate::format::btree;
use crate::format::link::{self, Target};
use crate::format::link_count;
use crate::format::object_header::ObjectKind;

use super::session::Session;

/// What a link in a group leads to.
///
/// ```
/// use arca::{File, Link, ObjectKind};
/// let f = File::in_memory().unwrap();
/// let root = f.root();
/// root.create_group("data").unwrap();
/// root.link_soft("latest", "/data").unwrap();
/// assert_eq!(root.link("latest").unwrap(), Link::Soft("/data".into()));
/// assert_eq!(root.link("data").unwrap(), Link::Hard(ObjectKind::Group));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Link {
    /// An object in this file; every hard link to it is a name of equal
    /// standing, and the object lives until its last one goes.
    Hard(ObjectKind),
    /// A path in this file, absolute or relative to the link's group,
    /// followed when used; it may dangle.
    Soft(String),
    /// A path in another file, named relative to this file's directory
    /// (or absolute); objects reached through it are opened read-only.
    External {
        /// The other file.
        file: String,
        /// The path inside it.
        path: String,
    },
}

impl Link {
    pub(crate) fn from_target(t: &Target) -> Link {
        match t {
            Target::Hard { kind, .. } => Link::Hard(*kind),
            Target::Soft(p) => Link::Soft(p.clone()),
            Target::External { file, path } => Link::External {
                file: file.clone(),
                path: path.clone(),
            },
        }
    }
}

/// Options for a new group.
///
/// ```
/// use arca::{File, GroupOptions};
/// let f = File::in_memory().unwrap();
/// let g = f.root().create_group_with("log", &GroupOptions::new().track_order(true)).unwrap();
/// for name in ["z", "a", "m"] {
///     g.create_group(name).unwrap();
/// }
/// assert_eq!(g.member_names().unwrap(), ["z", "a", "m"]);
/// ```
#[derive(Debug, Clone, Default)]
pub struct GroupOptions {
    pub(crate) track_order: bool,
    pub(crate) attr_order: Option<bool>,
    pub(crate) track_times: bool,
}

impl GroupOptions {
    /// Defaults: members listed in name order.
    pub fn new() -> Self {
        Self::default()
    }

    /// List members and attributes in the order they were created (kept
    /// on reopen), as h5py's `track_order`.
    pub fn track_order(mut self, on: bool) -> Self {
        self.track_order = on;
        self
    }

    /// Whether attributes alone are listed in creation order, apart from
    /// members (HDF5 records the two separately; an import keeps both).
    pub fn track_attr_order(mut self, on: bool) -> Self {
        self.attr_order = Some(on);
        self
    }

    /// Record when the group was made and last changed (HDF5's
    /// `track_times`), read back by [`Group::times`](crate::Group::times).
    pub fn track_times(mut self, on: bool) -> Self {
        self.track_times = on;
        self
    }
}

/// How many hard links lead to the object at `addr` (1 unless recorded).
pub(crate) fn count(g: &mut Session, addr: u64) -> Result<u64> {
    let root = g.sb.links;
    if root == 0 {
        return Ok(1);
    }
    match btree::get(&mut g.st, root, &link_count::key(addr))? {
        Some(v) => Ok(link_count::decode(&link_count::key(addr), &v, g.st.space.eof())?.1),
        None => Ok(1),
    }
}

/// Record that `n` hard links lead to the object at `addr` (0: an object
/// without a name, held by a handle).
pub(crate) fn set_count(g: &mut Session, addr: u64, n: u64) -> Result<()> {
    let key = link_count::key(addr);
    if n != 1 {
        let (root, _) = btree::insert(&mut g.st, g.sb.links, &key, &link_count::encode(n), true)?;
        g.sb.links = root;
    } else if g.sb.links != 0 {
        let (root, _) = btree::remove(&mut g.st, g.sb.links, &key)?;
        g.sb.links = root;
    }
    Ok(())
}

/// Every recorded count, `(address, links)`, in address order.
pub(crate) fn all_counts(g: &mut Session) -> Result<Vec<(u64, u64)>> {
    let mut out = vec![];
    let root = g.sb.links;
    if root == 0 {
        return Ok(out);
    }
    let eof = g.st.space.eof();
    btree::scan(&mut g.st, root, b"", &mut |k, v| {
        out.push(link_count::decode(k, v, eof)?);
        Ok(true)
    })?;
    Ok(out)
}

/// Check a soft-link or external path given by a caller.
pub(crate) fn check_path(p: &str, what: &str) -> Result<()> {
    link::check_path(p, what).map_err(Error::invalid)
}

/// The objects a walk has met, kept only for those it can meet more than
/// once: objects with a recorded link count (other than 1). An object
/// with one name is met once, so a walk over a million of them keeps
/// nothing per object; a link that loops back to a group with one
/// recorded name is caught by the walk checking the groups it is inside.
pub(crate) struct Met {
    /// `(address, links)` of every counted object, in address order.
    counts: Vec<(u64, u64)>,
    /// Arrivals so far at counted objects, through their names.
    times: std::collections::HashMap<u64, u64>,
    /// The group the walk began at: met before any of its names.
    start: u64,
    /// Whether arrivals beyond an object's count are damage; off once
    /// links changed during the walk (a name met, then removed).
    strict: bool,
}

impl Met {
    /// Nothing met yet but `start`, the group the walk begins at.
    pub(crate) fn new(g: &mut Session, start: u64) -> Result<Self> {
        Ok(Met {
            counts: all_counts(g)?,
            times: std::collections::HashMap::new(),
            start,
            strict: true,
        })
    }

    /// Links changed: read the counts again, keep what was met.
    pub(crate) fn links_changed(&mut self, g: &mut Session) -> Result<()> {
        self.counts = all_counts(g)?;
        self.strict = false;
        Ok(())
    }

    /// Record an arrival at the object at `addr` through a hard link:
    /// whether the object is met for the first time. Always true for an
    /// object with one name: a second arrival at one is a loop, which
    /// the walk finds among the groups it is inside.
    ///
    /// # Errors
    /// [`Error::Corrupt`] when more links than the object's count arrived
    /// at it (links that loop).
    pub(crate) fn arrive(&mut self, addr: u64) -> Result<bool> {
        let Ok(i) = self.counts.binary_search_by_key(&addr, |c| c.0) else {
            return Ok(true);
        };
        let n = self.counts[i].1;
        let times = self.times.entry(addr).or_insert(0);
        *times += 1;
        if self.strict && *times > n {
            return Err(Error::corrupt(
                "group link",
                addr,
                format!("object reached {times} times but it has {n} links: links form a cycle"),
            ));
        }
        Ok(*times == 1 && addr != self.start)
    }
}
