//! Variable-length values of datasets: the dataset methods over the byte
//! vector (`crate::vlen`), one file per job. `records` reads and checks the
//! `[offset, length]` records and runs every vector operation under the
//! file's lock with the vector's cache; `ragged` writes and reads values
//! as slices, strings and byte strings; `info` reports on a vector and
//! checks its records; `direct` serves writers that put values in the file
//! themselves; `repack` rewrites a vector with only its live values;
//! `fill` keeps a fill value's items in the vector.
//! `options` (how a vector is stored) sits below the dataset handle,
//! which takes it at creation.

pub(super) mod direct;
pub(crate) mod fill;
pub(super) mod info;
pub(super) mod options;
pub(super) mod proof;
pub(super) mod ragged;
pub(super) mod records;
pub(super) mod repack;
