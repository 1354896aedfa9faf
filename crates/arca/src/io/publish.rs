//! [`Publish`]: how a file written in a local stand-in reaches where it
//! really lives. A file opened for writing on object storage is staged in
//! a local file; each commit (and the close) hands the committed state to
//! its publisher, which uploads it.

use std::sync::Arc;

use super::stats::Fetches;
use crate::error::Result;

/// What a writable session calls after each commit and at close, when its
/// file is a local stand-in for another (a file on object storage).
pub(crate) trait Publish: Send {
    /// Make the stand-in's committed state the published one.
    fn publish(&mut self) -> Result<()>;

    /// The file closed with everything published: let the stand-in go.
    fn finish(self: Box<Self>) -> Result<()>;

    /// The counters of the requests made, for `io_stats`.
    fn fetches(&self) -> Arc<Fetches>;
}
