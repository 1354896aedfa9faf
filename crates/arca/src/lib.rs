//! # arca
//!
//! Embedded storage for hierarchical scientific data: groups, typed
//! n-dimensional datasets, attributes, chunking and compression, in one
//! checksummed file.
//!
//! ```
//! use arca::{AttrValue, Datatype, DatasetOptions, File, Filter, Selection};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("run.arca");
//! let f = File::create(&path).unwrap();
//! let g = f.root().create_group("detector").unwrap();
//! g.attrs().set("gain", &AttrValue::scalar(1.5f64)).unwrap();
//! let opts = DatasetOptions::new(Datatype::uint(2), &[1000, 1000])
//!     .chunks(&[100, 1000])
//!     .filters(&[Filter::Shuffle, Filter::Zstd(3)]);
//! let ds = g.create_dataset("frame", &opts).unwrap();
//! let row: Vec<u16> = (0..1000).collect();
//! ds.write(&Selection::from_ranges(&[(5, 6, 1), (0, 1000, 1)]).unwrap(), &row).unwrap();
//! f.close().unwrap();
//!
//! let f = File::open(&path).unwrap();
//! let ds = f.root().dataset("/detector/frame").unwrap();
//! let back: Vec<u16> = ds.read(&Selection::from_ranges(&[(5, 6, 1), (0, 1000, 1)]).unwrap()).unwrap();
//! assert_eq!(back, row);
//! ```
//!
//! Layers, top to bottom: the object model ([`File`], [`Group`], [`Dataset`],
//! [`Attributes`]); chunking and filters; the on-disk format; file space; the
//! page cache; and the [`io::Driver`] interface. See `docs/ARCHITECTURE.md`
//! and `docs/FORMAT.md`.
// The one system call no safe wrapper offers (sync_file_range, for
// `io::write_out`) lives in the arca-writeback crate.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod chunk;
mod error;
mod filter;
mod format;
pub mod io;
mod journal;
mod object;
mod pager;
mod par;
pub mod pool;
mod selection;
mod slab;
mod snapshot;
mod space;
mod store;
mod vlen;

pub use error::{Error, RemoteKind, Result};
pub use filter::{decode_chunk, encode_chunk};
pub use format::datatype::extended::{extended_to_f64, f64_to_extended};
pub use format::datatype::{
    ArrayType, BaseClass, ByteOrder, Charset, CompoundType, Datatype, EnumType, Field, StrPad,
    MAX_ELEMENT_BYTES, MAX_FIXED_BYTES, VLEN_RECORD,
};
pub use format::external_list::ExternalSegment;
pub use format::filter_pipeline::{Filter, Hdf5Filter};
pub use format::object_header::{FillTime, ObjectKind, Times};
pub use format::region::{Region, RegionRef, RegionSelection, SlabDim, UNLIMITED};
pub use format::shape::MAX_RANK;
pub use format::superblock::VERSION as FORMAT_VERSION;
pub use format::virtual_map::VirtualMapping;
pub use io::{process_stats as io_stats, IoStats};
pub use object::{journal_is_hot, journal_path, repack, repack_with, Progress, RepackOptions};
pub use object::{
    AttrValue, Attributes, Dataset, DatasetOptions, Element, Extent, File, Group, GroupOptions,
    Link, Mode, NamedType, Object, OpenOptions, Stat, StorageLayout, StoredChunk, VlenExtent,
    VlenInfo, VlenOptions, Walk, WalkOrder, WalkStep, WrittenChunk, COMPACT_AUTO_BYTES,
    DEFAULT_VLEN_CHUNK, MAX_SOFT_LINK_HOPS,
};
pub use pager::{CacheStats, PAGE_SIZE};
pub use pool::{
    gc, pool_limits, pool_stats, pooling_enabled, set_pool_limits, set_pooling, PoolKind,
    PoolLimits, PoolStats,
};
pub use selection::Selection;
pub use slab::{encode_slab, EncodedChunk, EncodedSlab};
pub use space::{FreeListKind, Section, SpaceInfo, SpaceKind};
