//! `compll`: a compressed in-memory allocator for large numbers of small
//! nodes (trees, linked lists, page stores).
//!
//! Nodes are packed into fixed-size blocks. A few blocks stay uncompressed
//! in a least-recently-used cache; the rest are held compressed (zstd, lz4,
//! zlib or a codec of your own). Nodes are named by 64-bit [`Handle`]s and
//! accessed through guards that pin their block, so no reference can
//! outlive the uncompressed copy it points into, and a bad handle is an
//! error, never undefined behaviour.
//!
//! ```
//! use compll::{Arena, Codec, Config};
//!
//! let arena = Arena::new(Config::default().codec(Codec::Lz4)).unwrap();
//! let mut list = compll::Handle::NULL;
//! for i in 0..1000u64 {
//!     // node: [next handle: u64][value: u64]
//!     let n = arena.alloc(16).unwrap();
//!     arena.write_at(n, 0, &list.to_raw().to_le_bytes()).unwrap();
//!     arena.write_at(n, 8, &i.to_le_bytes()).unwrap();
//!     list = n;
//! }
//! let mut sum = 0;
//! let mut cur = list;
//! while !cur.is_null() {
//!     let g = arena.read(cur).unwrap();
//!     sum += u64::from_le_bytes(g[8..16].try_into().unwrap());
//!     cur = compll::Handle::from_raw(u64::from_le_bytes(g[0..8].try_into().unwrap()));
//! }
//! assert_eq!(sum, 999 * 1000 / 2);
//! assert!(arena.free(list).is_ok());
//! assert!(arena.free(list).is_err()); // double free is an error
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod arena;
mod codec;
mod config;
mod error;
mod group;
mod handle;
mod heap;
mod image;
mod layout;
mod lru;
mod nodecache;
mod pack;
mod shared;
mod stats;
mod worker;

pub use arena::{Arena, ReadGuard, WriteGuard};
pub use config::{BlockCodec, Codec, Config, MAX_BLOCK_SIZE, MIN_BLOCK_SIZE};
pub use error::{Error, Result};
pub use handle::Handle;
pub use image::{BlockImage, CompressedImage};
pub use shared::SharedArena;
pub use stats::Stats;
