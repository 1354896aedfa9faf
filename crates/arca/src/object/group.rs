//! Groups: named links to groups and datasets, held in a B-tree.
//!
//! Link value (9 bytes): u8 kind (1 group, 2 dataset), u64 object header address.

use super::dataset::{self, Dataset, DatasetOptions};
use super::{components, join, lock, Attributes, Shared};
use crate::error::{Error, Result};
use crate::format::btree::{self, Inserted};
use crate::format::link;
use crate::format::object_header::{Header, ObjectKind};
use crate::space::{Section, SpaceKind};
use crate::store::Store;

/// A group or a dataset.
pub enum Object {
    /// A group.
    Group(Group),
    /// A dataset.
    Dataset(Dataset),
}

impl Object {
    /// Which kind of object this is.
    pub fn kind(&self) -> ObjectKind {
        match self {
            Object::Group(_) => ObjectKind::Group,
            Object::Dataset(_) => ObjectKind::Dataset,
        }
    }
}

/// A group in an open file.
///
/// ```
/// use arca::File;
/// let f = File::in_memory().unwrap();
/// let g = f.root().create_group("a/b/c").unwrap();
/// assert_eq!(g.path(), "/a/b/c");
/// assert!(f.root().contains("a/b").unwrap());
/// f.root().rename("a/b", "a/z").unwrap();
/// assert_eq!(f.root().group("a").unwrap().member_names().unwrap(), vec!["z"]);
/// ```
#[derive(Clone)]
pub struct Group {
    shared: Shared,
    addr: u64,
    path: String,
}

/// Follow `parts` from the group at `addr`; returns the kind and address.
pub(crate) fn resolve(
    st: &mut Store,
    mut addr: u64,
    parts: &[&str],
    full: &str,
) -> Result<(ObjectKind, u64)> {
    let mut kind = ObjectKind::Group;
    for (i, p) in parts.iter().enumerate() {
        if kind != ObjectKind::Group {
            return Err(Error::NotFound(format!(
                "{full}: {} is a dataset",
                parts[..i].join("/")
            )));
        }
        let h = Header::load(st, addr)?;
        let v = btree::get(st, h.links.root, p.as_bytes())?
            .ok_or_else(|| Error::NotFound(full.to_string()))?;
        (kind, addr) = link::decode(&v, addr, st.space.eof())?;
    }
    Ok((kind, addr))
}

impl std::fmt::Debug for Group {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Group").field("path", &self.path).finish()
    }
}

impl Group {
    pub(crate) fn new(shared: Shared, addr: u64, path: String) -> Self {
        Group { shared, addr, path }
    }

    /// The absolute path this group was opened by.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The last path component (`/` for the root).
    pub fn name(&self) -> &str {
        self.path.rsplit('/').find(|s| !s.is_empty()).unwrap_or("/")
    }

    /// This group's attributes.
    pub fn attrs(&self) -> Attributes {
        Attributes::new(self.shared.clone(), self.addr)
    }

    fn start(&self, path: &str) -> (u64, String) {
        if path.starts_with('/') {
            let root = self.shared.lock().map(|g| g.sb.root).unwrap_or(self.addr);
            (root, "/".into())
        } else {
            (self.addr, self.path.clone())
        }
    }

    fn abs(&self, base: &str, parts: &[&str]) -> String {
        parts.iter().fold(base.to_string(), |acc, p| join(&acc, p))
    }

    /// Open any object by a path relative to this group (or absolute).
    ///
    /// # Errors
    /// [`Error::NotFound`] if there is nothing at `path`.
    pub fn object(&self, path: &str) -> Result<Object> {
        let (start, base) = self.start(path);
        let parts = components(path)?;
        let mut g = lock(&self.shared)?;
        let (kind, addr) = resolve(&mut g.st, start, &parts, path)?;
        drop(g);
        let p = self.abs(&base, &parts);
        Ok(match kind {
            ObjectKind::Group => Object::Group(Group::new(self.shared.clone(), addr, p)),
            ObjectKind::Dataset => Object::Dataset(Dataset::new(self.shared.clone(), addr, p)),
        })
    }

    /// Open a group by path.
    ///
    /// # Errors
    /// [`Error::NotFound`] if there is no group at `path`.
    pub fn group(&self, path: &str) -> Result<Group> {
        match self.object(path)? {
            Object::Group(g) => Ok(g),
            Object::Dataset(_) => Err(Error::NotFound(format!("{path} is a dataset, not a group"))),
        }
    }

    /// Open a dataset by path.
    ///
    /// # Errors
    /// [`Error::NotFound`] if there is no dataset at `path`.
    pub fn dataset(&self, path: &str) -> Result<Dataset> {
        match self.object(path)? {
            Object::Dataset(d) => Ok(d),
            Object::Group(_) => Err(Error::NotFound(format!("{path} is a group, not a dataset"))),
        }
    }

    /// Whether something exists at `path`.
    ///
    /// # Errors
    /// Only for damage met on the way.
    pub fn contains(&self, path: &str) -> Result<bool> {
        match self.object(path) {
            Ok(_) => Ok(true),
            Err(Error::NotFound(_)) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Resolve the parent of `path`, creating missing groups when `create`.
    fn parent_of<'p>(&self, path: &'p str, create: bool) -> Result<(u64, String, &'p str)> {
        let (start, base) = self.start(path);
        let parts = components(path)?;
        let Some((last, dirs)) = parts.split_last() else {
            return Err(Error::invalid("empty name"));
        };
        let mut g = lock(&self.shared)?;
        g.st.check_writable()
            .or_else(|e| if create { Err(e) } else { Ok(()) })?;
        let mut addr = start;
        for (i, d) in dirs.iter().enumerate() {
            let h = Header::load(&mut g.st, addr)?;
            match btree::get(&mut g.st, h.links.root, d.as_bytes())? {
                Some(v) => {
                    let (kind, a) = link::decode(&v, addr, g.st.space.eof())?;
                    if kind != ObjectKind::Group {
                        return Err(Error::invalid(format!(
                            "{} is a dataset",
                            dirs[..=i].join("/")
                        )));
                    }
                    addr = a;
                }
                None if create => addr = insert_new(&mut g.st, addr, d, Header::group())?,
                None => return Err(Error::NotFound(path.to_string())),
            }
        }
        Ok((addr, self.abs(&base, dirs), last))
    }

    /// Create a group; missing intermediate groups are created too.
    ///
    /// # Errors
    /// [`Error::AlreadyExists`] if the name is taken, [`Error::ReadOnly`].
    pub fn create_group(&self, path: &str) -> Result<Group> {
        let (parent, base, name) = self.parent_of(path, true)?;
        let mut g = lock(&self.shared)?;
        let addr = insert_new(&mut g.st, parent, name, Header::group()).map_err(|e| match e {
            Error::AlreadyExists(_) => Error::AlreadyExists(path.to_string()),
            e => e,
        })?;
        Ok(Group::new(self.shared.clone(), addr, join(&base, name)))
    }

    /// Open the group at `path`, creating it if it does not exist.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if a dataset is there.
    pub fn require_group(&self, path: &str) -> Result<Group> {
        match self.object(path) {
            Ok(Object::Group(g)) => Ok(g),
            Ok(Object::Dataset(_)) => {
                Err(Error::invalid(format!("{path} exists and is a dataset")))
            }
            Err(Error::NotFound(_)) => self.create_group(path),
            Err(e) => Err(e),
        }
    }

    /// Create a dataset.
    ///
    /// # Errors
    /// [`Error::AlreadyExists`], [`Error::InvalidArgument`] for inconsistent
    /// options, [`Error::ReadOnly`].
    pub fn create_dataset(&self, path: &str, opts: &DatasetOptions) -> Result<Dataset> {
        let (parent, base, name) = self.parent_of(path, true)?;
        let mut g = lock(&self.shared)?;
        let meta = dataset::build_meta(&mut g.st, opts)?;
        // Storage allocated early must not outlive a failed insert (a name
        // that exists, say): give it back before reporting the error.
        let storage = meta.clone();
        let addr = match insert_new(&mut g.st, parent, name, Header::dataset(meta)) {
            Ok(a) => a,
            Err(e) => {
                dataset::free_storage(&mut g.st, &storage)?;
                return Err(match e {
                    Error::AlreadyExists(_) => Error::AlreadyExists(path.to_string()),
                    e => e,
                });
            }
        };
        Ok(Dataset::new(self.shared.clone(), addr, join(&base, name)))
    }

    /// Delete the object at `path` and everything below it, freeing its space.
    ///
    /// # Errors
    /// [`Error::NotFound`], [`Error::ReadOnly`].
    pub fn delete(&self, path: &str) -> Result<()> {
        let (parent, _, name) = self.parent_of(path, false)?;
        let mut g = lock(&self.shared)?;
        g.st.check_writable()?;
        let mut h = Header::load(&mut g.st, parent)?;
        let v = btree::get(&mut g.st, h.links.root, name.as_bytes())?
            .ok_or_else(|| Error::NotFound(path.to_string()))?;
        let (_, addr) = link::decode(&v, parent, g.st.space.eof())?;
        // Everything the object owns is found and checked before the link
        // goes: a damaged object fails the delete with the file unchanged.
        let mut dead = Dead::default();
        collect(&mut g.st, addr, &mut dead)?;
        g.st.space.check_free(&dead.extents)?;
        let (root, _) = btree::remove(&mut g.st, h.links.root, name.as_bytes())?;
        h.links.root = root;
        h.links.count = h.links.count.saturating_sub(1);
        h.save(&mut g.st, parent)?;
        for d in &dead.datasets {
            g.caches.remove(d);
            g.caches.remove(&crate::vlen::cache_key(*d));
        }
        g.st.free_structures(&dead.extents)
    }

    /// Move or rename the object at `from` to `to` (paths relative to this
    /// group or absolute; the destination's parent must exist).
    ///
    /// # Errors
    /// [`Error::NotFound`], [`Error::AlreadyExists`], [`Error::InvalidArgument`]
    /// when moving a group into itself.
    pub fn rename(&self, from: &str, to: &str) -> Result<()> {
        let (src_parent, src_base, src_name) = self.parent_of(from, false)?;
        let (dst_parent, dst_base, dst_name) = self.parent_of(to, false)?;
        let src_full = join(&src_base, src_name);
        let dst_full = join(&dst_base, dst_name);
        if dst_full.starts_with(&format!("{src_full}/")) {
            return Err(Error::invalid(format!(
                "cannot move {src_full} into itself"
            )));
        }
        let mut g = lock(&self.shared)?;
        g.st.check_writable()?;
        let h = Header::load(&mut g.st, src_parent)?;
        let link = btree::get(&mut g.st, h.links.root, src_name.as_bytes())?
            .ok_or_else(|| Error::NotFound(from.to_string()))?;
        let mut dh = Header::load(&mut g.st, dst_parent)?;
        if btree::get(&mut g.st, dh.links.root, dst_name.as_bytes())?.is_some() {
            return Err(Error::AlreadyExists(to.to_string()));
        }
        dh.links.root =
            btree::insert(&mut g.st, dh.links.root, dst_name.as_bytes(), &link, false)?.0;
        dh.links.count += 1;
        dh.save(&mut g.st, dst_parent)?;
        // Reload: the source parent may be the destination parent.
        let mut sh = Header::load(&mut g.st, src_parent)?;
        sh.links.root = btree::remove(&mut g.st, sh.links.root, src_name.as_bytes())?.0;
        sh.links.count = sh.links.count.saturating_sub(1);
        sh.save(&mut g.st, src_parent)
    }

    /// Names and kinds of the direct members, in name order.
    ///
    /// # Errors
    /// [`Error::Corrupt`] if the link index is damaged.
    pub fn members(&self) -> Result<Vec<(String, ObjectKind)>> {
        let mut g = lock(&self.shared)?;
        members(&mut g.st, self.addr)
    }

    /// Names of the direct members, in name order.
    ///
    /// # Errors
    /// As for [`Group::members`].
    pub fn member_names(&self) -> Result<Vec<String>> {
        Ok(self.members()?.into_iter().map(|(n, _)| n).collect())
    }

    /// Number of direct members.
    ///
    /// # Errors
    /// [`Error::Corrupt`] if the header is damaged.
    pub fn len(&self) -> Result<u64> {
        let mut g = lock(&self.shared)?;
        Ok(Header::load(&mut g.st, self.addr)?.links.count)
    }

    /// Whether the group has no members.
    ///
    /// # Errors
    /// As for [`Group::len`].
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }

    /// Call `f(relative path, kind)` for every object below this group,
    /// depth first in name order.
    ///
    /// # Errors
    /// Errors from `f` or from damage met on the way.
    pub fn visit(&self, f: &mut dyn FnMut(&str, ObjectKind) -> Result<()>) -> Result<()> {
        type Level = (Vec<(String, ObjectKind, u64)>, usize, String);
        let first = {
            let mut g = lock(&self.shared)?;
            members_with_addr(&mut g.st, self.addr)?
        };
        let mut stack: Vec<Level> = vec![(first, 0, String::new())];
        let mut seen = std::collections::HashSet::new();
        // Pre-order, depth first, members in name order (as h5py visits).
        while let Some((members, next, prefix)) = stack.last_mut() {
            let Some((name, kind, addr)) = members.get(*next).cloned() else {
                stack.pop();
                continue;
            };
            *next += 1;
            let p = if prefix.is_empty() {
                name
            } else {
                format!("{prefix}/{name}")
            };
            f(&p, kind)?;
            if kind == ObjectKind::Group {
                if !seen.insert(addr) {
                    return Err(Error::corrupt(
                        "group link",
                        addr,
                        "group reached twice: links form a cycle",
                    ));
                }
                let ms = {
                    let mut g = lock(&self.shared)?;
                    members_with_addr(&mut g.st, addr)?
                };
                stack.push((ms, 0, p));
            }
        }
        Ok(())
    }
}

pub(crate) fn members_with_addr(
    st: &mut Store,
    addr: u64,
) -> Result<Vec<(String, ObjectKind, u64)>> {
    let h = Header::load(st, addr)?;
    let mut out = vec![];
    let eof = st.space.eof();
    btree::scan(st, h.links.root, b"", &mut |k, v| {
        let (kind, a) = link::decode(v, addr, eof)?;
        out.push((String::from_utf8_lossy(k).into_owned(), kind, a));
        Ok(true)
    })?;
    Ok(out)
}

fn members(st: &mut Store, addr: u64) -> Result<Vec<(String, ObjectKind)>> {
    Ok(members_with_addr(st, addr)?
        .into_iter()
        .map(|(n, k, _)| (n, k))
        .collect())
}

/// Write a new object header and link it into `parent` as `name`.
fn insert_new(st: &mut Store, parent: u64, name: &str, header: Header) -> Result<u64> {
    st.check_writable()?;
    let mut ph = Header::load(st, parent)?;
    if ph.kind != ObjectKind::Group {
        return Err(Error::invalid("parent is not a group"));
    }
    if btree::get(st, ph.links.root, name.as_bytes())?.is_some() {
        return Err(Error::AlreadyExists(name.to_string()));
    }
    let addr = header.create(st)?;
    let (root, ins) = btree::insert(
        st,
        ph.links.root,
        name.as_bytes(),
        &link::encode(header.kind, addr),
        false,
    )?;
    debug_assert!(matches!(ins, Inserted::New));
    ph.links.root = root;
    ph.links.count += 1;
    ph.save(st, parent)?;
    Ok(addr)
}

/// What deleting an object frees: every extent it and its members own,
/// and the datasets among them (whose caches go too).
#[derive(Default)]
struct Dead {
    extents: Vec<Section>,
    datasets: Vec<u64>,
    seen: std::collections::HashSet<u64>,
}

/// Gather everything the object at `addr` owns, recursively.
fn collect(st: &mut Store, addr: u64, dead: &mut Dead) -> Result<()> {
    if !dead.seen.insert(addr) {
        return Err(Error::corrupt(
            "group link",
            addr,
            "object reached twice: links form a cycle",
        ));
    }
    let h = Header::load(st, addr)?;
    dead.extents.push(Section {
        addr,
        size: st.pager.size_of(addr)? as u64,
        kind: SpaceKind::Meta,
    });
    if h.kind == ObjectKind::Group {
        for (_, _, child) in members_with_addr(st, addr)? {
            collect(st, child, dead)?;
        }
        btree::extents(st, h.links.root, &mut dead.extents)?;
    }
    super::attrs::extents(st, h.attrs.root, addr, &mut dead.extents)?;
    if let Some(meta) = &h.dataset {
        dead.datasets.push(addr);
        dataset::storage_extents(st, meta, &mut dead.extents)?;
    }
    Ok(())
}
