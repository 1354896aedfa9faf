//! The object model: files, groups, datasets and attributes.
//!
//! This module only declares its files and re-exports the public API; no
//! file below names it (see the layout in `docs/ARCHITECTURE.md`).

mod attrs;
mod dataset;
mod element;
mod file;
mod group;
mod handle;
mod links;
mod open;
mod path;
mod repack;
mod reserved;
mod rows;
mod session;
mod stat;
mod storage;
mod stored_chunks;
mod vlen;

pub use crate::vlen::vector::VlenExtent;
pub use attrs::{AttrValue, Attributes};
pub use dataset::{Dataset, DatasetOptions, StorageLayout, COMPACT_AUTO_BYTES};
pub use element::Element;
pub use file::File;
pub use group::{Group, Object, MAX_SOFT_LINK_HOPS};
pub use links::{GroupOptions, Link};
pub use open::{journal_is_hot, journal_path, Mode, OpenOptions};
pub use repack::{repack, Progress};
pub use reserved::WrittenChunk;
pub use stat::{Extent, Stat};
pub use stored_chunks::StoredChunk;
pub use vlen::info::VlenInfo;
pub use vlen::options::{VlenOptions, DEFAULT_VLEN_CHUNK};
