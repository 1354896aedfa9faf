//! Variable-length data: byte strings, UTF-8 strings and ragged arrays.
//!
//! Every dataset of a variable-length type owns a secondary *byte vector*:
//! a 1-D chunked array with its own chunk index, filter pipeline and chunk
//! cache. Each element of the dataset is a 16-byte record, `u64 offset, u64
//! length` (little-endian, bytes), naming its datum's place in the vector.
//! New data is appended, so data written together lies together and is
//! read back sequentially. With the `reuse` option the vector keeps a list
//! of free ranges (left by overwritten elements) and fills them first.
//!
//! The vector is described by object-header message 8 (must understand):
//! ```text
//! +0  u64 len          bytes in use; appends go here
//! +8  u64 chunk        bytes per chunk (a multiple of the item size)
//! +16 u64 index        chunk-index B-tree root (0 = no chunks yet)
//! +24 u8  flags        bit 0: reuse freed ranges
//! +25 u64 free addr    blob of free ranges (0 = none): n × (u64 offset, u64 len)
//! +33 u64 free len     bytes in that blob
//! +41 filters          u8 n, n × (u8 id, i32 level), as message 6
//! ```

mod api;
mod attr;
mod vector;

pub(crate) use api::copy_dataset;
pub use api::{VlenExtent, VlenInfo, VlenOptions, DEFAULT_VLEN_CHUNK};
pub(crate) use attr::{check_attr_payload, payload, split, swap_attr_payload};
pub(crate) use vector::{account, destroy, flush_cache_entry, VecMeta};

/// Object-header message type of the byte-vector description.
pub(crate) const MSG_VECTOR: u16 = 8;

/// The byte vector's chunk cache lives beside its dataset's under this key:
/// file addresses never reach bit 63, so keys cannot collide.
const CACHE_BIT: u64 = 1 << 63;

/// Key of the vector chunk cache of the dataset whose header is at `addr`.
pub(crate) fn cache_key(addr: u64) -> u64 {
    addr | CACHE_BIT
}

/// The dataset header address of a vector cache key, if it is one.
pub(crate) fn owner_of_key(key: u64) -> Option<u64> {
    (key & CACHE_BIT != 0).then_some(key & !CACHE_BIT)
}
