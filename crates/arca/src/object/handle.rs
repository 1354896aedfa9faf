//! The handle every object of an open file holds: the file's session
//! behind its lock, and the one way to take that lock for a call.

use std::sync::{Arc, Mutex, MutexGuard};

use super::session::Session;
use crate::error::{Error, Result};

/// An open file: its session behind the lock that serialises every call.
/// [`crate::File`], [`crate::Group`], [`crate::Dataset`] and
/// [`crate::Attributes`] each hold one.
pub(crate) type FileHandle = Arc<Mutex<Session>>;

/// Lock the file for one call; refused once the file is closed or
/// poisoned.
pub(crate) fn lock(file: &FileHandle) -> Result<MutexGuard<'_, Session>> {
    let g = file.lock().map_err(|_| Error::Poisoned)?;
    g.check_usable()?;
    Ok(g)
}
