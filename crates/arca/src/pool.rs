//! Free lists for arca's own short-lived objects.
//!
//! Reading and rewriting datasets allocates the same few kinds of object
//! over and over: metadata pages, decoded B-tree nodes, chunk buffers,
//! filter outputs, selection scratch. Each kind gets a named free list that
//! keeps freed objects for the next request instead of handing them back to
//! the system allocator. There are three kinds of list:
//!
//! - [`ObjectList`]: single objects of one type (`Box<T>`), reset between uses;
//! - [`ArrayList`]: vectors of one element type, fixed or variable length,
//!   kept by capacity class;
//! - [`BlockList`]: byte blocks by size class — powers of two from 64 to
//!   4096 bytes, quarter steps between powers of two above.
//!
//! The page cache's pages (64 to 4096 bytes in steps of 32) are kept by
//! exact size on a shared variant of the block list (`SharedBlockList`,
//! reported as a block list), which keeps the `Arc` around each page too.
//!
//! Lists are process-wide and thread-safe. Every list records what it holds
//! and how often it served a request ([`pool_stats`]); [`gc`] releases all
//! held memory; [`set_pool_limits`] bounds what a list, and all lists
//! together, may keep (beyond that, freed objects go back to the system
//! allocator); [`set_pooling`] turns pooling off so its effect can be
//! measured.
//!
//! ```
//! use arca::pool::BlockList;
//!
//! static SCRATCH: BlockList = BlockList::new("example scratch");
//! {
//!     let mut b = SCRATCH.take_zeroed(3000);
//!     assert_eq!(b.len(), 3000);
//!     b[0] = 7;
//! } // returned to the list here
//! let b = SCRATCH.take_zeroed(2500); // same size class: reused, and zeroed
//! assert!(b.iter().all(|&x| x == 0));
//! let s = arca::pool_stats().into_iter().find(|s| s.name == "example scratch").unwrap();
//! assert_eq!(s.in_use, 1);
//! ```

mod array;
mod block;
pub(crate) mod lists;
mod object;
mod registry;
mod shared;

pub use array::{ArrayList, PooledVec};
pub use block::{BlockList, PooledBuf};
pub use object::{ObjectList, Pooled, Recycle};
pub use registry::{
    gc, pool_limits, pool_stats, pooling_enabled, set_pool_limits, set_pooling, PoolKind,
    PoolLimits, PoolStats, DEFAULT_LIST_LIMIT, DEFAULT_TOTAL_LIMIT,
};
pub(crate) use shared::SharedBlockList;
