//! The object model: files, groups, datasets and attributes.

mod attrs;
mod chunks;
mod dataset;
mod file;
mod group;
mod links;
mod placement;
mod repack;
mod rows;
mod session;
mod stat;
mod storage;
mod vlen;

pub use attrs::{AttrValue, Attributes};
pub use chunks::StoredChunk;
pub use dataset::{Dataset, DatasetOptions, Element, StorageLayout, COMPACT_AUTO_BYTES};
pub use file::{journal_is_hot, journal_path, File, Mode, OpenOptions};
pub use group::{Group, Object, MAX_SOFT_LINK_HOPS};
pub use links::{GroupOptions, Link};
pub use placement::WrittenChunk;
pub use repack::{repack, Progress};
pub use stat::{Extent, Stat};
pub use vlen::{VlenExtent, VlenInfo, VlenOptions, DEFAULT_VLEN_CHUNK};

use std::sync::{Arc, Mutex, MutexGuard};

use crate::error::{Error, Result};
pub(crate) use session::Session;
use session::State;

pub(crate) type Shared = Arc<Mutex<Session>>;

pub(crate) fn lock(shared: &Shared) -> Result<MutexGuard<'_, Session>> {
    let g = shared.lock().map_err(|_| Error::Poisoned)?;
    match g.state {
        State::Open => Ok(g),
        State::Poisoned => Err(Error::Poisoned),
        State::Closed => Err(Error::invalid("the file is closed")),
    }
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
