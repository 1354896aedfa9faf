//! Files on object storage (feature `cloud`): a read-only [`CloudDriver`]
//! over the `object_store` crate, opened by URL (`s3://`, `gs://`, `az://`,
//! `http(s)://`, `file://`, `memory://`), and files written there: staged
//! in a local file and published by conditional PUT (`staged.rs`), or on
//! S3 from `multipart_threshold` up by a multipart upload whose completion
//! carries the condition (`multipart.rs`, its two signed requests in
//! `s3_signed.rs`).
//!
//! Opening sends one ranged GET of the file's head (the object's size comes
//! back in its `Content-Range`, so there is no HEAD or LIST); later reads
//! fetch aligned blocks into a bounded cache, all the blocks one read misses
//! in one round trip of parallel requests.

mod blocks;
mod driver;
mod multipart;
mod options;
mod runtime;
mod s3_signed;
mod staged;
mod store;

pub use driver::CloudDriver;
pub use options::CloudOptions;
pub use staged::upload;
pub(crate) use staged::{Intent, Staged};
pub use store::{is_url, memory_store, object_store};
