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
//! The vector is described by object-header message 8 (see
//! `format::vlen_vector`). This module moves bytes in and out of the vector
//! through the store and the chunk engine; the dataset methods over it are
//! in `object::vlen`.

pub(crate) mod vector;

pub(crate) use vector::{account, extents};

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
