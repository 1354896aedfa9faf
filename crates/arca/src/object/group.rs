//! Groups: named links to groups, datasets and committed datatypes (and
//! soft and external links), held in a B-tree keyed by name (see
//! `format::link`).

use super::attrs::Attributes;
use super::dataset::options::{build_meta, DatasetOptions};
use super::dataset::Dataset;
use super::handle::{lock, FileHandle};
use super::links::{self, GroupOptions, Link};
use super::lookup::{
    external_file, get_link, kind_word, resolve, resolve_hops, Found, MAX_SOFT_LINK_HOPS,
};
use super::named_type::{load_type, NamedType};
use super::path::{components, join};
use super::session::Session;
use super::storage;
use crate::error::{Error, Result};
use crate::format::btree::{self, Inserted};
use crate::format::datatype::Datatype;
use crate::format::link::{self as link_fmt, Target};
use crate::format::object_header::{self, Header, ObjectKind, Times};
use crate::space::{Section, SpaceKind};
use crate::store::Store;

/// A group, a dataset or a committed datatype.
pub enum Object {
    /// A group.
    Group(Group),
    /// A dataset.
    Dataset(Dataset),
    /// A committed datatype.
    Datatype(NamedType),
}

impl Object {
    /// The handle of the file this object lies in (see `Object::file`,
    /// defined beside `File`, which sits above this module).
    pub(crate) fn handle(&self) -> &FileHandle {
        match self {
            Object::Group(g) => &g.file,
            Object::Dataset(d) => &d.file,
            Object::Datatype(t) => &t.file,
        }
    }

    /// Which kind of object this is.
    pub fn kind(&self) -> ObjectKind {
        match self {
            Object::Group(_) => ObjectKind::Group,
            Object::Dataset(_) => ObjectKind::Dataset,
            Object::Datatype(_) => ObjectKind::Datatype,
        }
    }

    /// The object's identity in its file: equal for every name it has,
    /// stable until the file is repacked.
    pub fn id(&self) -> u64 {
        match self {
            Object::Group(g) => g.addr,
            Object::Dataset(d) => d.addr,
            Object::Datatype(t) => t.addr,
        }
    }

    /// The absolute path the object was opened by.
    pub fn path(&self) -> &str {
        match self {
            Object::Group(g) => g.path(),
            Object::Dataset(d) => d.path(),
            Object::Datatype(t) => t.path(),
        }
    }

    /// The object's attributes.
    pub fn attrs(&self) -> Attributes {
        match self {
            Object::Group(g) => g.attrs(),
            Object::Dataset(d) => d.attrs(),
            Object::Datatype(t) => t.attrs(),
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
    pub(super) file: FileHandle,
    pub(super) addr: u64,
    path: String,
}

/// The links one lookup has followed: their number (soft and external
/// together, at most [`MAX_SOFT_LINK_HOPS`]) and the external links taken,
/// so that a lookup coming back to a link it already took says it loops.
#[derive(Default)]
struct Hops {
    count: u32,
    taken: Vec<(String, String, String)>,
    /// How files behind external links open: `None` passes this file's
    /// intent along.
    write: Option<bool>,
}

impl Hops {
    /// Count the external link at `path` of the file `here`, which leads to
    /// `inner` in `file`.
    fn external(&mut self, path: &str, here: &str, file: &str, inner: &str) -> Result<()> {
        let link = (here.to_string(), file.to_string(), inner.to_string());
        if self.taken.contains(&link) {
            let chain: Vec<String> = self
                .taken
                .iter()
                .map(|(_, f, p)| format!("{f}:{p}"))
                .collect();
            return Err(Error::NotFound(format!(
                "{path}: external links loop ({} -> {file}:{inner})",
                chain.join(" -> ")
            )));
        }
        self.taken.push(link);
        self.count += 1;
        if self.count > MAX_SOFT_LINK_HOPS {
            return Err(Error::NotFound(format!(
                "{path}: more than {MAX_SOFT_LINK_HOPS} soft and external links (a loop?)"
            )));
        }
        Ok(())
    }
}

impl std::fmt::Debug for Group {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Group").field("path", &self.path).finish()
    }
}

impl Group {
    pub(crate) fn new(file: FileHandle, addr: u64, path: String) -> Self {
        Group { file, addr, path }
    }

    /// Whether `o` lies in this group's file, not behind an external link.
    pub fn in_same_file(&self, o: &Object) -> bool {
        std::sync::Arc::ptr_eq(&self.file, o.handle())
    }

    /// The absolute path this group was opened by.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The last path component (`/` for the root).
    pub fn name(&self) -> &str {
        self.path.rsplit('/').find(|s| !s.is_empty()).unwrap_or("/")
    }

    /// The group's identity in its file (see [`Object::id`]).
    pub fn id(&self) -> u64 {
        self.addr
    }

    /// This group's attributes.
    pub fn attrs(&self) -> Attributes {
        Attributes::new(self.file.clone(), self.addr)
    }

    fn start(&self, path: &str) -> (u64, String) {
        if path.starts_with('/') {
            let root = self.file.lock().map(|g| g.sb.root).unwrap_or(self.addr);
            (root, "/".into())
        } else {
            (self.addr, self.path.clone())
        }
    }

    fn abs(&self, base: &str, parts: &[&str]) -> String {
        parts.iter().fold(base.to_string(), |acc, p| join(&acc, p))
    }

    /// Open any object by a path relative to this group (or absolute),
    /// following soft and external links.
    ///
    /// # Errors
    /// [`Error::NotFound`] if there is nothing at `path`, a link dangles or
    /// soft links loop.
    pub fn object(&self, path: &str) -> Result<Object> {
        self.object_via(path, &mut Hops::default())
    }

    /// [`Group::object`], opening files behind external links for writing
    /// or read-only as asked (h5py's `elink_mode`), rather than with this
    /// file's intent.
    ///
    /// ```
    /// use arca::File;
    /// let dir = tempfile::tempdir().unwrap();
    /// File::create(dir.path().join("b.arca")).unwrap().root().create_group("g").unwrap();
    /// let a = File::create(dir.path().join("a.arca")).unwrap();
    /// a.root().link_external("ext", "b.arca", "/g").unwrap();
    /// let g = a.root().object_with_external_intent("ext", false).unwrap();
    /// assert!(!g.file().is_writable());
    /// ```
    ///
    /// # Errors
    /// As [`Group::object`]; [`Error::InvalidArgument`] when asking for
    /// writing from a read-only file; the open's error when the other file
    /// cannot open for writing.
    pub fn object_with_external_intent(&self, path: &str, write: bool) -> Result<Object> {
        let mut hops = Hops {
            write: Some(write),
            ..Hops::default()
        };
        self.object_via(path, &mut hops)
    }

    /// [`Group::object`], counting the links followed so far in `hops`:
    /// an external link continues the lookup in its file with the same
    /// count, so a chain through files stops as a soft-link chain does.
    fn object_via(&self, path: &str, hops: &mut Hops) -> Result<Object> {
        let (start, base) = self.start(path);
        let parts = components(path)?;
        let mut g = lock(&self.file)?;
        let root = g.sb.root;
        match resolve_hops(&mut g.st, root, start, &parts, path, &mut hops.count)? {
            Found::Local(kind, addr) => {
                drop(g);
                let p = self.abs(&base, &parts);
                Ok(match kind {
                    ObjectKind::Group => Object::Group(Group::new(self.file.clone(), addr, p)),
                    ObjectKind::Dataset => {
                        Object::Dataset(Dataset::new(self.file.clone(), addr, p))
                    }
                    ObjectKind::Datatype => {
                        Object::Datatype(NamedType::new(self.file.clone(), addr, p))
                    }
                })
            }
            Found::External { file, path: inner } => {
                let other = external_file(&mut g, &self.file, &file, hops.write)?;
                let here = g
                    .path()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default();
                drop(g);
                hops.external(path, &here, &file, &inner)?;
                let root = {
                    let g = lock(&other)?;
                    g.sb.root
                };
                Group::new(other, root, "/".into()).object_via(&inner, hops)
            }
        }
    }

    /// Open the object with this id (what a [`Datatype::Reference`] holds)
    /// by the first path a walk from the root meets.
    ///
    /// ```
    /// use arca::{DatasetOptions, Datatype, File};
    /// let f = File::in_memory().unwrap();
    /// let d = f.root().create_dataset("a/x", &DatasetOptions::new(Datatype::int(4), &[2])).unwrap();
    /// let again = f.root().dereference(d.id()).unwrap();
    /// assert_eq!(again.id(), d.id());
    /// ```
    ///
    /// [`Datatype::Reference`]: crate::Datatype::Reference
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for the null reference (0),
    /// [`Error::NotFound`] for an id that no link in the file leads to.
    pub fn dereference(&self, id: u64) -> Result<Object> {
        if id == 0 {
            return Err(Error::invalid("a null reference leads nowhere"));
        }
        let (root, path) = {
            let mut g = lock(&self.file)?;
            (g.sb.root, first_path(&mut g, id)?)
        };
        let path = path.ok_or_else(|| {
            Error::NotFound(format!("no object with id {id} is linked in this file"))
        })?;
        let top = Group::new(self.file.clone(), root, "/".into());
        if id == root {
            return Ok(Object::Group(top));
        }
        top.object(&path)
    }

    /// How many hard links lead to the object with this id (1 for most).
    ///
    /// # Errors
    /// [`Error::Corrupt`] if the link-count tree is damaged.
    pub fn link_count(&self, id: u64) -> Result<u64> {
        let mut g = lock(&self.file)?;
        links::count(&mut g, id)
    }

    /// Open a group by path.
    ///
    /// # Errors
    /// [`Error::NotFound`] if there is no group at `path`.
    pub fn group(&self, path: &str) -> Result<Group> {
        match self.object(path)? {
            Object::Group(g) => Ok(g),
            o => Err(Error::NotFound(format!(
                "{path} is a {}, not a group",
                kind_word(o.kind())
            ))),
        }
    }

    /// Open a dataset by path.
    ///
    /// # Errors
    /// [`Error::NotFound`] if there is no dataset at `path`.
    pub fn dataset(&self, path: &str) -> Result<Dataset> {
        match self.object(path)? {
            Object::Dataset(d) => Ok(d),
            o => Err(Error::NotFound(format!(
                "{path} is a {}, not a dataset",
                kind_word(o.kind())
            ))),
        }
    }

    /// Open a committed datatype by path.
    ///
    /// # Errors
    /// [`Error::NotFound`] if there is no committed datatype at `path`.
    pub fn named_type(&self, path: &str) -> Result<NamedType> {
        match self.object(path)? {
            Object::Datatype(t) => Ok(t),
            o => Err(Error::NotFound(format!(
                "{path} is a {}, not a committed datatype",
                kind_word(o.kind())
            ))),
        }
    }

    /// Store `dtype` as a committed datatype named `path` (missing
    /// intermediate groups are created): an object with attributes that
    /// datasets can be made with ([`DatasetOptions::committed`]).
    ///
    /// ```
    /// use arca::{Datatype, File, Object};
    /// let f = File::in_memory().unwrap();
    /// f.root().commit_type("types/u8", &Datatype::uint(1)).unwrap();
    /// assert!(matches!(f.root().object("types/u8").unwrap(), Object::Datatype(_)));
    /// ```
    ///
    /// # Errors
    /// [`Error::AlreadyExists`], [`Error::InvalidArgument`] for a type that
    /// is not whole, [`Error::ReadOnly`].
    pub fn commit_type(&self, path: &str, dtype: &Datatype) -> Result<NamedType> {
        dtype.validate()?;
        let (parent, base, name) = self.parent_of(path, true)?;
        let mut g = lock(&self.file)?;
        g.forget_names();
        let addr = insert_new(&mut g.st, parent, name, Header::datatype(dtype.clone()))
            .map_err(|e| rename_exists(e, path))?;
        Ok(NamedType::new(self.file.clone(), addr, join(&base, name)))
    }

    /// Whether an object exists at `path` (a dangling link is not one).
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

    /// Resolve the parent of `path`, creating missing groups when `create`;
    /// returns its address, its path and the last component.
    fn parent_of<'p>(&self, path: &'p str, create: bool) -> Result<(u64, String, &'p str)> {
        let (start, base) = self.start(path);
        let parts = components(path)?;
        let Some((last, dirs)) = parts.split_last() else {
            return Err(Error::invalid("empty name"));
        };
        let mut g = lock(&self.file)?;
        g.st.check_writable()
            .or_else(|e| if create { Err(e) } else { Ok(()) })?;
        let root = g.sb.root;
        let mut addr = start;
        for (i, d) in dirs.iter().enumerate() {
            let here = &dirs[..=i].join("/");
            match resolve(&mut g.st, root, addr, &[d], here) {
                Ok(Found::Local(ObjectKind::Group, a)) => addr = a,
                Ok(Found::Local(k, _)) => {
                    return Err(Error::invalid(format!("{here} is a {}", kind_word(k))))
                }
                Ok(Found::External { .. }) => {
                    return Err(Error::invalid(format!(
                        "{here} is an external link: objects in other files are read-only here"
                    )))
                }
                Err(Error::NotFound(_)) if create && get_link(&mut g.st, addr, d)?.is_none() => {
                    addr = insert_new(&mut g.st, addr, d, Header::group())?
                }
                Err(e) => return Err(e),
            }
        }
        Ok((addr, self.abs(&base, dirs), last))
    }

    /// Create a group; missing intermediate groups are created too.
    ///
    /// # Errors
    /// [`Error::AlreadyExists`] if the name is taken, [`Error::ReadOnly`].
    pub fn create_group(&self, path: &str) -> Result<Group> {
        self.create_group_with(path, &GroupOptions::new())
    }

    /// Create a group with options (creation-order tracking).
    ///
    /// # Errors
    /// As for [`Group::create_group`].
    pub fn create_group_with(&self, path: &str, opts: &GroupOptions) -> Result<Group> {
        let (parent, base, name) = self.parent_of(path, true)?;
        let mut g = lock(&self.file)?;
        g.forget_names();
        let addr =
            insert_new(&mut g.st, parent, name, group_header(opts)).map_err(|e| match e {
                Error::AlreadyExists(_) => Error::AlreadyExists(path.to_string()),
                e => e,
            })?;
        Ok(Group::new(self.file.clone(), addr, join(&base, name)))
    }

    /// Whether this group lists its members in creation order (its
    /// attributes: [`crate::Attributes::track_order`]).
    ///
    /// # Errors
    /// [`Error::Corrupt`] if the header is damaged.
    pub fn track_order(&self) -> Result<bool> {
        let mut g = lock(&self.file)?;
        Ok(Header::load(&mut g.st, self.addr)?.order.is_some())
    }

    /// Open the group at `path`, creating it if it does not exist.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if a dataset is there.
    pub fn require_group(&self, path: &str) -> Result<Group> {
        match self.object(path) {
            Ok(Object::Group(g)) => Ok(g),
            Ok(o) => Err(Error::invalid(format!(
                "{path} exists and is a {}",
                kind_word(o.kind())
            ))),
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
        let addr = self
            .make_dataset(Some((parent, name)), opts)
            .map_err(|e| match e {
                Error::AlreadyExists(_) => Error::AlreadyExists(path.to_string()),
                e => e,
            })?;
        Ok(Dataset::new(self.file.clone(), addr, join(&base, name)))
    }

    /// Write a new dataset's header (its storage and committed type too)
    /// and link it as `name` in `parent`, or leave it without a name
    /// (`None`: counted with no links); its address.
    pub(super) fn make_dataset(
        &self,
        place: Option<(u64, &str)>,
        opts: &DatasetOptions,
    ) -> Result<u64> {
        let mut g = lock(&self.file)?;
        g.forget_names();
        // A committed type is of this file, and the type the dataset takes.
        let committed = match &opts.committed {
            None if opts.commit_new => {
                opts.dtype.validate()?;
                let t = Header::datatype(opts.dtype.clone()).create(&mut g.st)?;
                Some(t)
            }
            Some(t) => {
                if !t.in_file(&self.file) {
                    return Err(Error::invalid(
                        "a committed datatype of another file cannot type this dataset",
                    ));
                }
                if load_type(&mut g.st, t.addr)? != opts.dtype {
                    return Err(Error::invalid(
                        "the dataset's type differs from the committed datatype's",
                    ));
                }
                Some(t.addr)
            }
            None => None,
        };
        let meta = build_meta(&mut g.st, opts)?;
        // Storage allocated early must not outlive a failed insert (a name
        // that exists, say): give it back before reporting the error.
        let storage = meta.clone();
        let mut h = Header::dataset(meta);
        if opts.track_order {
            h.attr_order = Some(0);
        }
        h.times = opts.track_times.then(Times::now);
        h.committed = committed;
        let made = match place {
            Some((parent, name)) => insert_new(&mut g.st, parent, name, h),
            None => h
                .create(&mut g.st)
                .and_then(|a| links::set_count(&mut g, a, 0).map(|_| a)),
        };
        let addr = match made {
            Ok(a) => a,
            Err(e) => {
                storage::free_storage(&mut g.st, &storage)?;
                if let (Some(t), true) = (committed, opts.commit_new) {
                    let size = g.st.pager.size_of(t)? as u64;
                    g.st.free_structures(&[Section {
                        addr: t,
                        size,
                        kind: SpaceKind::Meta,
                    }])?;
                }
                return Err(e);
            }
        };
        if let (Some(t), false) = (committed, opts.commit_new) {
            // The dataset's use counts as a link: the type outlives its
            // names. (A type made for this dataset has that one link.)
            let n = links::count(&mut g, t)?;
            links::set_count(&mut g, t, n + 1)?;
        }
        Ok(addr)
    }

    /// Make `path` a soft link to `target` (absolute, or relative to the
    /// group that holds the link); the target need not exist.
    ///
    /// # Errors
    /// [`Error::AlreadyExists`] if the name is taken, [`Error::InvalidArgument`]
    /// for an empty or over-long target, [`Error::ReadOnly`].
    pub fn link_soft(&self, path: &str, target: &str) -> Result<()> {
        links::check_path(target, "soft link target")?;
        components(target)?;
        self.add_link(path, Target::Soft(target.to_string()))
    }

    /// Make `path` an external link to `target` inside `file` (a path
    /// relative to this file's directory, or absolute). Following it opens
    /// that file once per open file, writable when this one is and it can
    /// be (as HDF5 passes its intent along), read-only otherwise.
    ///
    /// # Errors
    /// As for [`Group::link_soft`].
    pub fn link_external(&self, path: &str, file: &str, target: &str) -> Result<()> {
        links::check_path(file, "external file name")?;
        links::check_path(target, "external link path")?;
        components(target)?;
        self.add_link(
            path,
            Target::External {
                file: file.to_string(),
                path: target.to_string(),
            },
        )
    }

    /// Give the object at `existing` a second name, `path`: a hard link.
    /// Both names are equal; the object lives until its last name is
    /// deleted.
    ///
    /// ```
    /// use arca::File;
    /// let f = File::in_memory().unwrap();
    /// let root = f.root();
    /// root.create_group("a").unwrap();
    /// root.link_hard("a", "b").unwrap();
    /// root.delete("a").unwrap();
    /// assert!(root.contains("b").unwrap());
    /// ```
    ///
    /// # Errors
    /// [`Error::NotFound`] if nothing is at `existing` (or it is in another
    /// file), [`Error::AlreadyExists`], [`Error::ReadOnly`].
    pub fn link_hard(&self, existing: &str, path: &str) -> Result<()> {
        let (kind, addr) = {
            let (start, _) = self.start(existing);
            let parts = components(existing)?;
            let mut g = lock(&self.file)?;
            let root = g.sb.root;
            match resolve(&mut g.st, root, start, &parts, existing)? {
                Found::Local(k, a) => (k, a),
                Found::External { .. } => {
                    return Err(Error::invalid(format!(
                        "{existing} is in another file: a hard link stays inside its file"
                    )))
                }
            }
        };
        if addr == self.file.lock().map(|g| g.sb.root).unwrap_or(0) {
            return Err(Error::invalid("the root group cannot have a second name"));
        }
        self.add_link(path, Target::Hard { kind, addr })
    }

    /// Give the committed datatype `t` (of this file) the name `path`: a
    /// hard link, as [`Group::link_hard`] makes, for a type that may have
    /// no name yet ([`DatasetOptions::commit_type`]).
    ///
    /// ```
    /// use arca::{DatasetOptions, Datatype, File};
    /// let f = File::in_memory().unwrap();
    /// let o = DatasetOptions::new(Datatype::int(8), &[3]).commit_type();
    /// let d = f.root().create_dataset("d", &o).unwrap();
    /// let t = d.committed_type().unwrap().unwrap();
    /// assert_eq!(t.path(), "");
    /// f.root().link_type("types/i8", &t).unwrap();
    /// assert_eq!(d.committed_type().unwrap().unwrap().path(), "/types/i8");
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a type of another file,
    /// [`Error::AlreadyExists`], [`Error::ReadOnly`].
    pub fn link_type(&self, path: &str, t: &NamedType) -> Result<()> {
        if !t.in_file(&self.file) {
            return Err(Error::invalid("a hard link stays inside its file"));
        }
        self.add_link(
            path,
            Target::Hard {
                kind: ObjectKind::Datatype,
                addr: t.addr,
            },
        )
    }

    /// Insert a link at `path` (missing parents are created) and, for a
    /// hard link, count it.
    pub(super) fn add_link(&self, path: &str, target: Target) -> Result<()> {
        let (parent, _, name) = self.parent_of(path, true)?;
        let mut g = lock(&self.file)?;
        g.forget_names();
        if let Target::Hard { addr, .. } = target {
            // A group may hold a link to itself, as in HDF5: walks visit
            // each object once, so the loop ends like any other cycle.
            let n = links::count(&mut g, addr)?;
            insert_link(&mut g.st, parent, name, target).map_err(|e| rename_exists(e, path))?;
            links::set_count(&mut g, addr, n + 1)
        } else {
            insert_link(&mut g.st, parent, name, target).map_err(|e| rename_exists(e, path))
        }
    }

    /// What the link `path` (its last component not followed) leads to.
    ///
    /// # Errors
    /// [`Error::NotFound`] if there is no such link.
    pub fn link(&self, path: &str) -> Result<Link> {
        let (parent, _, name) = self.parent_of(path, false)?;
        let mut g = lock(&self.file)?;
        let l =
            get_link(&mut g.st, parent, name)?.ok_or_else(|| Error::NotFound(path.to_string()))?;
        Ok(Link::from_target(&l.target))
    }

    /// Every link in this group, in its order (creation order when it
    /// tracks it, else name order).
    ///
    /// # Errors
    /// [`Error::Corrupt`] if the link index is damaged.
    pub fn links(&self) -> Result<Vec<(String, Link)>> {
        let mut g = lock(&self.file)?;
        Ok(links_of(&mut g.st, self.addr)?
            .into_iter()
            .map(|(n, l)| (n, Link::from_target(&l.target)))
            .collect())
    }

    /// Remove the link at `path`. The object it led to is deleted, with
    /// everything below it and its space, when this was its last hard
    /// link; a soft or external link goes alone.
    ///
    /// # Errors
    /// [`Error::NotFound`], [`Error::ReadOnly`].
    pub fn delete(&self, path: &str) -> Result<()> {
        let (parent, _, name) = self.parent_of(path, false)?;
        let mut g = lock(&self.file)?;
        g.st.check_writable()?;
        g.forget_names();
        let l =
            get_link(&mut g.st, parent, name)?.ok_or_else(|| Error::NotFound(path.to_string()))?;
        // Everything that dies is found and checked before the link goes:
        // a damaged object fails the delete with the file unchanged.
        let mut dead = Dead::default();
        if let Target::Hard { addr, .. } = l.target {
            collect(&mut g, addr, &mut dead)?;
            if dead.counts.iter().any(|(_, &(removed, n))| removed < n) {
                // Something outlives the link by another name: if that
                // name sits in a cycle only the removed link reached, the
                // cycle is garbage (HDF5 would leak it).
                collect_cycles(&mut g, (parent, name), addr, &mut dead)?;
            }
        }
        g.st.space.check_free(&dead.extents)?;
        let mut h = Header::load(&mut g.st, parent)?;
        let (root, _) = btree::remove(&mut g.st, h.links.root, name.as_bytes())?;
        h.links.root = root;
        h.links.count = h.links.count.saturating_sub(1);
        h.save(&mut g.st, parent)?;
        free_dead(&mut g, &dead)
    }

    /// Move or rename the link at `from` to `to` (paths relative to this
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
        let mut g = lock(&self.file)?;
        g.st.check_writable()?;
        g.forget_names();
        let l = get_link(&mut g.st, src_parent, src_name)?
            .ok_or_else(|| Error::NotFound(from.to_string()))?;
        if let Target::Hard { addr, kind } = l.target {
            // Paths show a move into the object's own subtree, unless a
            // second name leads there: then look for the destination in it.
            let inside = addr == dst_parent
                || (kind == ObjectKind::Group
                    && g.sb.links != 0
                    && reaches(&mut g.st, addr, dst_parent)?);
            if inside {
                return Err(Error::invalid(format!(
                    "cannot move {src_full} into itself"
                )));
            }
        }
        insert_link(&mut g.st, dst_parent, dst_name, l.target).map_err(|e| rename_exists(e, to))?;
        // Reload: the source parent may be the destination parent.
        let mut sh = Header::load(&mut g.st, src_parent)?;
        sh.links.root = btree::remove(&mut g.st, sh.links.root, src_name.as_bytes())?.0;
        sh.links.count = sh.links.count.saturating_sub(1);
        sh.save(&mut g.st, src_parent)
    }

    /// Names and kinds of the members: every link that leads to an object
    /// in this file (soft links followed; dangling and external links are
    /// in [`Group::links`]), in the group's order.
    ///
    /// # Errors
    /// [`Error::Corrupt`] if the link index is damaged.
    pub fn members(&self) -> Result<Vec<(String, ObjectKind)>> {
        let mut g = lock(&self.file)?;
        let root = g.sb.root;
        let mut out = vec![];
        for (name, l) in links_of(&mut g.st, self.addr)? {
            match l.target {
                Target::Hard { kind, .. } => out.push((name, kind)),
                Target::Soft(_) => {
                    if let Ok(Found::Local(kind, _)) =
                        resolve(&mut g.st, root, self.addr, &[&name], &name)
                    {
                        out.push((name, kind));
                    }
                }
                Target::External { .. } => {}
            }
        }
        Ok(out)
    }

    /// Names of every link, in the group's order.
    ///
    /// # Errors
    /// As for [`Group::links`].
    pub fn member_names(&self) -> Result<Vec<String>> {
        let mut g = lock(&self.file)?;
        Ok(links_of(&mut g.st, self.addr)?
            .into_iter()
            .map(|(n, _)| n)
            .collect())
    }

    /// Number of links.
    ///
    /// # Errors
    /// [`Error::Corrupt`] if the header is damaged.
    pub fn len(&self) -> Result<u64> {
        let mut g = lock(&self.file)?;
        Ok(Header::load(&mut g.st, self.addr)?.links.count)
    }

    /// Whether the group has no links.
    ///
    /// # Errors
    /// As for [`Group::len`].
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }
}

/// The first path a walk from the root meets to the object at `id`, if a
/// link leads there (the walk is kept until the next change of links).
fn first_path(g: &mut Session, id: u64) -> Result<Option<String>> {
    let root = g.sb.root;
    if g.names().is_none() {
        let mut names = std::collections::HashMap::new();
        names.insert(root, "/".to_string());
        let mut stack = vec![(root, String::new())];
        while let Some((addr, prefix)) = stack.pop() {
            for (name, kind, a) in members_with_addr(&mut g.st, addr)? {
                if names.contains_key(&a) {
                    continue;
                }
                let p = format!("{prefix}/{name}");
                names.insert(a, p.clone());
                if kind == ObjectKind::Group {
                    stack.push((a, p));
                }
            }
        }
        g.set_names(names);
    }
    Ok(g.names().and_then(|n| n.get(&id).cloned()))
}

impl Dataset {
    /// The committed datatype this dataset was made with, if any, by the
    /// first path that leads to it (an empty path when no name is left).
    ///
    /// # Errors
    /// [`Error::Corrupt`] if the header is damaged.
    pub fn committed_type(&self) -> Result<Option<NamedType>> {
        let mut g = lock(&self.file)?;
        let Some(t) = Header::load(&mut g.st, self.addr)?.committed else {
            return Ok(None);
        };
        let path = first_path(&mut g, t)?.unwrap_or_default();
        Ok(Some(NamedType::new(self.file.clone(), t, path)))
    }
}

/// Whether the group at `target` lies in the subtree of the group at `from`.
fn reaches(st: &mut Store, from: u64, target: u64) -> Result<bool> {
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![from];
    while let Some(addr) = stack.pop() {
        if addr == target {
            return Ok(true);
        }
        if !seen.insert(addr) {
            continue;
        }
        for (_, kind, child) in members_with_addr(st, addr)? {
            if kind == ObjectKind::Group {
                stack.push(child);
            }
        }
    }
    Ok(false)
}

fn rename_exists(e: Error, path: &str) -> Error {
    match e {
        Error::AlreadyExists(_) => Error::AlreadyExists(path.to_string()),
        e => e,
    }
}

/// The links of the group at `addr`, decoded, in its order: creation
/// order when it tracks it, else name order.
pub(crate) fn links_of(st: &mut Store, addr: u64) -> Result<Vec<(String, link_fmt::Link)>> {
    let h = Header::load(st, addr)?;
    let ordered = h.order.is_some();
    let mut out = vec![];
    let eof = st.space.eof();
    btree::scan(st, h.links.root, b"", &mut |k, v| {
        let l = link_fmt::decode(v, addr, eof, ordered)?;
        out.push((String::from_utf8_lossy(k).into_owned(), l));
        Ok(true)
    })?;
    if ordered {
        out.sort_by_key(|(_, l)| l.order);
    }
    Ok(out)
}

/// The hard links of the group at `addr`: `(name, kind, address)`.
pub(crate) fn members_with_addr(
    st: &mut Store,
    addr: u64,
) -> Result<Vec<(String, ObjectKind, u64)>> {
    Ok(links_of(st, addr)?
        .into_iter()
        .filter_map(|(n, l)| match l.target {
            Target::Hard { kind, addr } => Some((n, kind, addr)),
            _ => None,
        })
        .collect())
}

/// Load the group at `parent` to take a new link `name`; refused if the
/// name is taken.
fn parent_for(st: &mut Store, parent: u64, name: &str) -> Result<Header> {
    st.check_writable()?;
    let ph = Header::load(st, parent)?;
    if ph.kind != ObjectKind::Group {
        return Err(Error::invalid("parent is not a group"));
    }
    if btree::get(st, ph.links.root, name.as_bytes())?.is_some() {
        return Err(Error::AlreadyExists(name.to_string()));
    }
    // Before the new object is allocated: the index after this link's must exist.
    if let Some(order) = ph.order {
        object_header::next_index(order, parent, "link")?;
    }
    Ok(ph)
}

/// Add `name` → `target` to the group `ph` at `parent` (checked by
/// [`parent_for`]), taking the next creation index when it tracks order.
fn link_into(
    st: &mut Store,
    parent: u64,
    mut ph: Header,
    name: &str,
    target: Target,
) -> Result<()> {
    let order = ph.order;
    let next = order
        .map(|o| object_header::next_index(o, parent, "link"))
        .transpose()?;
    let value = link_fmt::encode(&link_fmt::Link { target, order });
    let (root, ins) = btree::insert(st, ph.links.root, name.as_bytes(), &value, false)?;
    debug_assert!(matches!(ins, Inserted::New));
    ph.links.root = root;
    ph.links.count += 1;
    ph.order = next;
    ph.save(st, parent)
}

/// Insert `name` → `target` into the group at `parent`.
fn insert_link(st: &mut Store, parent: u64, name: &str, target: Target) -> Result<()> {
    let ph = parent_for(st, parent, name)?;
    link_into(st, parent, ph, name, target)
}

/// A new group's header, as `opts` asks.
pub(super) fn group_header(opts: &GroupOptions) -> Header {
    let mut h = Header::group();
    if opts.track_order {
        h.order = Some(0);
    }
    if opts.attr_order.unwrap_or(opts.track_order) {
        h.attr_order = Some(0);
    }
    h.times = opts.track_times.then(Times::now);
    h
}

/// Write a new object header and link it into `parent` as `name`.
fn insert_new(st: &mut Store, parent: u64, name: &str, header: Header) -> Result<u64> {
    let ph = parent_for(st, parent, name)?;
    let addr = header.create(st)?;
    let target = Target::Hard {
        kind: header.kind,
        addr,
    };
    link_into(st, parent, ph, name, target)?;
    Ok(addr)
}

/// Give back what `dead` holds: counts of survivors lowered, entries of
/// the dead dropped, their caches and extents freed.
pub(super) fn free_dead(g: &mut Session, dead: &Dead) -> Result<()> {
    for (&addr, &(removed, count)) in &dead.counts {
        // Survivors keep their other names; the dead drop their entry.
        let left = if dead.seen.contains(&addr) {
            1
        } else {
            count - removed
        };
        if left != count {
            links::set_count(g, addr, left)?;
        }
    }
    for d in &dead.datasets {
        g.caches().forget(*d);
    }
    // An object of an earlier session dies on the count the file gave it,
    // which a hostile or buggy producer may have left out for a second
    // name: the commit proves the space before writing it (S7).
    if dead.seen.iter().any(|&a| g.st.space.is_named(a)) {
        g.st.space.doubt();
    }
    g.st.free_structures(&dead.extents)
}

/// What removing a link frees: every extent owned by the objects that lose
/// their last name (and everything only they lead to), the datasets among
/// them (whose caches go too), and the link counts that change.
#[derive(Default)]
pub(super) struct Dead {
    pub(super) extents: Vec<Section>,
    datasets: Vec<u64>,
    /// Objects that die.
    seen: std::collections::HashSet<u64>,
    /// For objects with several names: (links removed, links it had).
    counts: std::collections::HashMap<u64, (u64, u64)>,
}

/// The objects reachable from `start` by hard links (and datasets' uses
/// of committed types), leaving out the link `skip` (group, name).
fn reachable(
    st: &mut Store,
    start: u64,
    skip: Option<(u64, &str)>,
) -> Result<std::collections::HashSet<u64>> {
    let mut seen = std::collections::HashSet::from([start]);
    let mut pending = vec![start];
    while let Some(addr) = pending.pop() {
        let h = Header::load(st, addr)?;
        let mut next = vec![];
        if h.kind == ObjectKind::Group {
            for (n, _, child) in members_with_addr(st, addr)? {
                if skip != Some((addr, n.as_str())) {
                    next.push(child);
                }
            }
        }
        next.extend(h.committed);
        for c in next {
            if seen.insert(c) {
                pending.push(c);
            }
        }
    }
    Ok(seen)
}

/// Redo [`collect`] for a removal that leaves survivors: everything the
/// removed link `skip` reached that the root no longer reaches dies,
/// cycles of hard links included, and each survivor loses the links the
/// dead held to it. A walk of the whole file, paid only when an object
/// with several names survives a removal.
fn collect_cycles(g: &mut Session, skip: (u64, &str), first: u64, dead: &mut Dead) -> Result<()> {
    let root = g.sb.root;
    let mut live = reachable(&mut g.st, root, Some(skip))?;
    // Objects without a name hold what they lead to as the root does.
    for (addr, n) in links::all_counts(g)? {
        if n == 0 && !live.contains(&addr) {
            live.extend(reachable(&mut g.st, addr, Some(skip))?);
        }
    }
    let under = reachable(&mut g.st, first, None)?;
    let mut out = Dead::default();
    // Links into survivors, from the dead and the removed one.
    let mut removed: std::collections::HashMap<u64, u64> = std::collections::HashMap::new();
    *removed.entry(first).or_default() += 1;
    let mut dying: Vec<u64> = under
        .iter()
        .copied()
        .filter(|a| !live.contains(a))
        .collect();
    dying.sort_unstable();
    for &addr in &dying {
        out.seen.insert(addr);
        let st = &mut g.st;
        let h = Header::load(st, addr)?;
        out.extents.push(Section {
            addr,
            size: st.pager.size_of(addr)? as u64,
            kind: SpaceKind::Meta,
        });
        let mut targets = vec![];
        if h.kind == ObjectKind::Group {
            targets.extend(members_with_addr(st, addr)?.into_iter().map(|(_, _, c)| c));
            btree::extents(st, h.links.root, &mut out.extents)?;
        }
        targets.extend(h.committed);
        for t in targets {
            *removed.entry(t).or_default() += 1;
        }
        super::attrs::extents(st, &h, addr, &mut out.extents)?;
        if let Some(meta) = &h.dataset {
            out.datasets.push(addr);
            storage::storage_extents(st, meta, &mut out.extents)?;
        }
    }
    for (addr, r) in removed {
        let n = links::count(g, addr)?;
        if out.seen.contains(&addr) {
            if n > 1 {
                out.counts.insert(addr, (n, n));
            }
        } else if r > n {
            return Err(Error::corrupt(
                "group link",
                addr,
                format!("{r} links lead to an object counted with {n}"),
            ));
        } else {
            out.counts.insert(addr, (r, n));
        }
    }
    *dead = out;
    Ok(())
}

/// Gather what dies when one hard link to the object at `first` goes: an
/// object dies when every link to it is gone, and then so does each link
/// it holds.
pub(super) fn collect(g: &mut Session, first: u64, dead: &mut Dead) -> Result<()> {
    let mut pending = vec![first];
    while let Some(addr) = pending.pop() {
        let n = links::count(g, addr)?;
        if n > 1 {
            let e = dead.counts.entry(addr).or_insert((0, n));
            e.0 += 1;
            if e.0 < n {
                continue;
            }
        }
        if !dead.seen.insert(addr) {
            return Err(Error::corrupt(
                "group link",
                addr,
                format!("object reached more often than its {n} link(s): links form a cycle"),
            ));
        }
        let st = &mut g.st;
        let h = Header::load(st, addr)?;
        dead.extents.push(Section {
            addr,
            size: st.pager.size_of(addr)? as u64,
            kind: SpaceKind::Meta,
        });
        if h.kind == ObjectKind::Group {
            for (_, _, child) in members_with_addr(st, addr)? {
                pending.push(child);
            }
            btree::extents(st, h.links.root, &mut dead.extents)?;
        }
        super::attrs::extents(st, &h, addr, &mut dead.extents)?;
        if let Some(t) = h.committed {
            // The dataset's use of its committed type goes with it.
            pending.push(t);
        }
        if let Some(meta) = &h.dataset {
            dead.datasets.push(addr);
            storage::storage_extents(st, meta, &mut dead.extents)?;
        }
    }
    Ok(())
}
