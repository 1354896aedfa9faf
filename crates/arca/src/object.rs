//! The object model: files, groups, datasets and attributes.
//!
//! This module only declares its files and re-exports the public API; no
//! file below names it. The files, each naming only files listed before
//! it, so that they form no cycle:
//! - `path`, `element`: path splitting; the Rust types of typed reads.
//! - `storage`: the storage engine of datasets over the store and the chunk
//!   caches (`Caches`, keyed by `CacheKey::Dataset` / `CacheKey::Vector`):
//!   element reads and writes through a layout, chunk engines, contiguous
//!   extents, the extents a dataset owns, cache write-back.
//! - `external_io`: elements kept in external files (HDF5's external raw
//!   storage), their files found as HDF5 finds them.
//! - `session`: one open file's state, its transactions (a state machine
//!   checked in debug builds) and the commit protocol, which writes the
//!   caches back through `storage`.
//! - `handle`: `FileHandle`, the session behind its lock, and `lock`.
//! - `vlen/options`, `dataset/options`, `links`, `attrs`, `open`: how
//!   vectors and datasets are created; link counts and the link view;
//!   attributes; opening a path or drivers into a session.
//! - `lookup`: following links to an object, opening the other files
//!   external links and virtual datasets name.
//! - `dataset`: the `Dataset` handle. Files above add `impl Dataset`
//!   blocks, one job each. `named_type`: the `NamedType` handle of a
//!   committed datatype.
//! - `group`: groups and links; it opens the files external links lead
//!   to through `open`. `walk`: `Group::walk`, the links below a group
//!   one at a time, and `visit`/`visit_links` over it.
//! - `stored_chunks` (chunks as stored), `reserved` (room for chunks other
//!   processes write), `vlen/records`, `rows` (compounds with
//!   variable-length members), `vlen/ragged`, `vlen/info`, `vlen/direct`,
//!   `vlen/repack`.
//! - `stat` (whole-file walks), `file` (the `File` handle), `repack`.

mod attrs;
mod dataset;
mod element;
mod external_io;
mod file;
mod group;
mod handle;
mod links;
mod lookup;
mod named_type;
mod open;
mod path;
mod repack;
mod reserved;
mod rows;
mod session;
mod stat;
mod storage;
mod stored_chunks;
mod times;
mod unnamed;
mod virtual_read;
mod vlen;
mod walk;

pub use crate::vlen::vector::VlenExtent;
pub use attrs::{AttrValue, Attributes};
pub use dataset::options::{DatasetOptions, StorageLayout, COMPACT_AUTO_BYTES};
pub use dataset::Dataset;
pub use element::Element;
pub use file::File;
pub use group::{Group, Object};
pub use links::{GroupOptions, Link};
pub use lookup::MAX_SOFT_LINK_HOPS;
pub use named_type::NamedType;
pub use open::{journal_is_hot, journal_path, Mode, OpenOptions};
pub use repack::{repack, repack_with, Progress, RepackOptions};
pub use reserved::WrittenChunk;
pub use stat::{Extent, Stat};
pub use stored_chunks::StoredChunk;
pub use vlen::info::VlenInfo;
pub use vlen::options::{VlenOptions, DEFAULT_VLEN_CHUNK};
pub use walk::{Walk, WalkOrder, WalkStep};
