//! The object model: files, groups, datasets and attributes.

mod attrs;
mod dataset;
mod file;
mod group;
mod repack;
mod stat;

pub use attrs::{AttrValue, Attributes};
pub(crate) use dataset::{
    check_element, contiguous_extent, read_locked as dataset_read_locked,
    write_locked as dataset_write_locked, MAX_CHUNK_BYTES,
};
pub use dataset::{Dataset, DatasetOptions, Element};
pub use file::{journal_is_hot, journal_path, File, Mode, OpenOptions};
pub use group::{Group, Object};
pub use repack::{repack, Progress};
pub use stat::{Extent, Stat};

use std::sync::{Arc, Mutex, MutexGuard};

use crate::error::{Error, Result};
pub(crate) use file::Inner;

pub(crate) type Shared = Arc<Mutex<Inner>>;

pub(crate) fn lock(shared: &Shared) -> Result<MutexGuard<'_, Inner>> {
    let g = shared.lock().map_err(|_| Error::Poisoned)?;
    if g.poisoned {
        return Err(Error::Poisoned);
    }
    if !g.open {
        return Err(Error::invalid("the file is closed"));
    }
    Ok(g)
}

/// Split a path into its non-empty components, rejecting names a link cannot have.
pub(crate) fn components(path: &str) -> Result<Vec<&str>> {
    let parts: Vec<&str> = path
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    for p in &parts {
        if p.len() > crate::format::btree::MAX_KEY {
            return Err(Error::invalid(format!(
                "name longer than {} bytes",
                crate::format::btree::MAX_KEY
            )));
        }
        if *p == ".." {
            return Err(Error::invalid("'..' is not supported in paths"));
        }
    }
    Ok(parts)
}

pub(crate) fn join(base: &str, name: &str) -> String {
    if base.ends_with('/') {
        format!("{base}{name}")
    } else {
        format!("{base}/{name}")
    }
}
