//! Committed (named) datatypes: a [`Datatype`] stored as an object of its
//! own, with names and attributes, that datasets may be made with
//! ([`crate::DatasetOptions::committed`]). A dataset made so records the
//! type object it uses, and that use counts as one of the type's links:
//! the type lives while a dataset uses it, even once its last name is gone
//! (as in HDF5).

use super::attrs::Attributes;
use super::handle::{lock, FileHandle};
use crate::error::{Error, Result};
use crate::format::datatype::Datatype;
use crate::format::object_header::Header;

/// A committed datatype in an open file.
///
/// ```
/// use arca::{DatasetOptions, Datatype, File};
/// let f = File::in_memory().unwrap();
/// let t = f.root().commit_type("pixel", &Datatype::uint(2)).unwrap();
/// assert_eq!(t.dtype().unwrap(), Datatype::uint(2));
/// let o = DatasetOptions::new(t.dtype().unwrap(), &[4]).committed(&t);
/// let d = f.root().create_dataset("frame", &o).unwrap();
/// assert_eq!(d.committed_type().unwrap().unwrap().id(), t.id());
/// ```
#[derive(Clone)]
pub struct NamedType {
    pub(crate) file: FileHandle,
    pub(crate) addr: u64,
    path: String,
}

impl std::fmt::Debug for NamedType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NamedType")
            .field("path", &self.path)
            .finish()
    }
}

impl NamedType {
    pub(crate) fn new(file: FileHandle, addr: u64, path: String) -> Self {
        NamedType { file, addr, path }
    }

    /// The object's identity in its file: equal for every name it has.
    pub fn id(&self) -> u64 {
        self.addr
    }

    /// The absolute path this type was opened by (empty for a type reached
    /// from a dataset that uses it, which may have no name left).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The last path component.
    pub fn name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or("")
    }

    /// This type's attributes.
    pub fn attrs(&self) -> Attributes {
        Attributes::new(self.file.clone(), self.addr)
    }

    /// The type it holds.
    ///
    /// # Errors
    /// [`Error::Corrupt`] if the header is damaged.
    pub fn dtype(&self) -> Result<Datatype> {
        let mut g = lock(&self.file)?;
        load_type(&mut g.st, self.addr)
    }

    /// Whether `file` is the file this type lives in.
    pub(crate) fn in_file(&self, file: &FileHandle) -> bool {
        std::sync::Arc::ptr_eq(&self.file, file)
    }
}

/// The type held by the committed datatype whose header is at `addr`.
pub(crate) fn load_type(st: &mut crate::store::Store, addr: u64) -> Result<Datatype> {
    Header::load(st, addr)?
        .named
        .ok_or_else(|| Error::invalid("object is not a committed datatype"))
}
