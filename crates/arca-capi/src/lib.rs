//! C API for arca: `libarca.a` / `libarca.so`, declared in `include/arca.h`.
//!
//! The header is the reference for C users: every function, its ownership
//! rules and an example are documented there. This crate is the only place
//! in arca with `unsafe` code; it turns C pointers into references and
//! slices at the boundary and hands the rest to the safe core crate.
//!
//! Conventions, in short:
//! - handles (`arca_file_t*`, `arca_group_t*`, `arca_dataset_t*`,
//!   `arca_attrs_t*`) are opaque boxes released by the matching
//!   `arca_*_close`;
//! - every function returns an `int32_t` status: 0 on success, a negative
//!   `ARCA_ERR_*` code otherwise, with the message in [`arca_last_error`];
//! - every entry point checks its pointers and catches panics.
//!
//! ```c
//! arca_file_t *f;
//! if (arca_file_open("run.arca", "w", &f) != ARCA_OK)
//!     fprintf(stderr, "%s\n", arca_last_error());
//! arca_file_close(f);
//! ```

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

mod attr;
mod chunks;
mod dataset;
mod error;
mod ffi;
mod file;
mod group;
#[cfg(test)]
mod tests;

pub use attr::*;
pub use chunks::*;
pub use dataset::*;
pub use error::*;
pub use file::*;
pub use group::*;
