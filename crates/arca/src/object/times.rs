//! When objects were made and last changed, for those made with times
//! tracked ([`DatasetOptions::track_times`](crate::DatasetOptions::track_times),
//! [`GroupOptions::track_times`](crate::GroupOptions::track_times)).

use super::dataset::Dataset;
use super::group::Group;
use super::handle::{lock, FileHandle};
use super::named_type::NamedType;
use crate::error::Result;
use crate::format::object_header::{Header, Times};

impl Group {
    /// When this group was made and last changed; None unless it tracks
    /// times.
    ///
    /// ```
    /// use arca::{File, GroupOptions};
    /// let f = File::in_memory().unwrap();
    /// let g = f.root().create_group_with("g", &GroupOptions::new().track_times(true)).unwrap();
    /// assert!(g.times().unwrap().is_some());
    /// assert!(f.root().create_group("h").unwrap().times().unwrap().is_none());
    /// ```
    ///
    /// # Errors
    /// [`crate::Error::Corrupt`] if the header is damaged.
    pub fn times(&self) -> Result<Option<Times>> {
        load(&self.file, self.addr)
    }
}

impl Dataset {
    /// When this dataset was made and its header last changed; None
    /// unless it tracks times (see [`crate::DatasetOptions::track_times`]).
    ///
    /// # Errors
    /// [`crate::Error::Corrupt`] if the header is damaged.
    pub fn times(&self) -> Result<Option<Times>> {
        load(&self.file, self.addr)
    }
}

impl NamedType {
    /// When this committed datatype was made and last changed; None
    /// unless it tracks times.
    ///
    /// # Errors
    /// [`crate::Error::Corrupt`] if the header is damaged.
    pub fn times(&self) -> Result<Option<Times>> {
        load(&self.file, self.addr)
    }
}

fn load(file: &FileHandle, addr: u64) -> Result<Option<Times>> {
    let mut g = lock(file)?;
    Ok(Header::load(&mut g.st, addr)?.times)
}

/// Give the object at `addr` exactly these times (a copy keeping its
/// original's).
pub(crate) fn keep(file: &FileHandle, addr: u64, times: Option<Times>) -> Result<()> {
    let mut g = lock(file)?;
    let mut h = Header::load(&mut g.st, addr)?;
    if h.times != times {
        h.times = times;
        h.save_exact(&mut g.st, addr)?;
    }
    Ok(())
}
