//! Objects made without a name, as h5py's `create_group(None)` and
//! `create_dataset(None, ...)` make them. Each is recorded in the
//! link-count tree with a count of 0, so every commit accounts for it
//! (`check` walks it as it walks the root). A link made to one names it
//! ([`Group::link_object`]); a writer's close frees those still without a
//! name, with everything only they lead to — leftovers of a session that
//! ended without closing included.

use super::dataset::options::DatasetOptions;
use super::dataset::Dataset;
use super::group::{collect, free_dead, group_header, Dead, Group, Object};
use super::handle::lock;
use super::links::{self, GroupOptions};
use super::session::Session;
use crate::error::{Error, Result};
use crate::format::link::Target;

impl Group {
    /// Create a group with no name: it lives while the file is open, and
    /// is kept if a link is made to it ([`Group::link_object`]) before a
    /// writer closes the file. Its path is empty.
    ///
    /// ```
    /// use arca::{File, GroupOptions, Object};
    /// let f = File::in_memory().unwrap();
    /// let g = f.root().create_anonymous_group(&GroupOptions::new()).unwrap();
    /// assert_eq!(g.path(), "");
    /// f.root().link_object("kept", &Object::Group(g)).unwrap();
    /// assert!(f.root().contains("kept").unwrap());
    /// ```
    ///
    /// # Errors
    /// [`Error::ReadOnly`].
    pub fn create_anonymous_group(&self, opts: &GroupOptions) -> Result<Group> {
        let mut g = lock(&self.file)?;
        g.st.check_writable()?;
        let addr = group_header(opts).create(&mut g.st)?;
        links::set_count(&mut g, addr, 0)?;
        Ok(Group::new(self.file.clone(), addr, String::new()))
    }

    /// Create a dataset with no name, as [`Group::create_anonymous_group`]
    /// makes a group.
    ///
    /// ```
    /// use arca::{DatasetOptions, Datatype, File, Object};
    /// let f = File::in_memory().unwrap();
    /// let d = f.root()
    ///     .create_anonymous_dataset(&DatasetOptions::new(Datatype::int(4), &[3]))
    ///     .unwrap();
    /// assert_eq!(d.path(), "");
    /// f.root().link_object("x", &Object::Dataset(d)).unwrap();
    /// ```
    ///
    /// # Errors
    /// As for [`Group::create_dataset`].
    pub fn create_anonymous_dataset(&self, opts: &DatasetOptions) -> Result<Dataset> {
        let addr = self.make_dataset(None, opts)?;
        Ok(Dataset::new(self.file.clone(), addr, String::new()))
    }

    /// Make `path` a hard link to `obj`, an object of this file reached
    /// by a handle: a second name for a named object, the first for one
    /// made without a name.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an object of another file or the
    /// root group, [`Error::AlreadyExists`], [`Error::ReadOnly`].
    pub fn link_object(&self, path: &str, obj: &Object) -> Result<()> {
        if !self.in_same_file(obj) {
            return Err(Error::invalid("a hard link stays inside its file"));
        }
        let addr = obj.id();
        if addr == lock(&self.file)?.sb.root {
            return Err(Error::invalid("the root group cannot have a second name"));
        }
        self.add_link(
            path,
            Target::Hard {
                kind: obj.kind(),
                addr,
            },
        )
    }
}

/// Free every object without a name, and what only it leads to; called
/// when a writer closes the file.
pub(crate) fn release(g: &mut Session) -> Result<()> {
    if !g.st.writable || g.sb.links == 0 {
        return Ok(());
    }
    let unnamed: Vec<u64> = links::all_counts(g)?
        .into_iter()
        .filter(|&(_, n)| n == 0)
        .map(|(a, _)| a)
        .collect();
    for addr in unnamed {
        let mut dead = Dead::default();
        collect(g, addr, &mut dead)?;
        g.st.space.check_free(&dead.extents)?;
        free_dead(g, &dead)?;
        // Its entry goes with it (1 is "no entry").
        links::set_count(g, addr, 1)?;
    }
    Ok(())
}
