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
