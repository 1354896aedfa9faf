//! The crate's single error type.

/// Everything that can go wrong in `compll`.
///
/// Misuse (bad handles, bad sizes, bad configuration) is reported here rather
/// than by panicking, so a C caller or a long-running process can recover.
///
/// ```
/// use compll::{Arena, Config, Error, Handle};
/// let arena = Arena::new(Config::default()).unwrap();
/// assert!(matches!(arena.free(Handle::from_raw(12345)), Err(Error::InvalidHandle(_))));
/// ```
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A configuration value is out of range.
    #[error("invalid configuration: {0}")]
    InvalidConfig(String),
    /// The handle does not name a live node: never allocated, already freed,
    /// or not pointing at the start of a node.
    #[error("invalid or freed handle {0:#x}")]
    InvalidHandle(u64),
    /// A byte range lies (partly) outside the node.
    #[error("range {offset}+{len} is outside the node of {node_len} bytes")]
    OutOfBounds {
        /// Start of the requested range within the node.
        offset: usize,
        /// Length of the requested range.
        len: usize,
        /// Usable length of the node.
        node_len: usize,
    },
    /// The requested size cannot be allocated at all.
    #[error("size {0} is too large")]
    TooLarge(usize),
    /// The system allocator refused memory.
    #[error("out of memory")]
    OutOfMemory,
    /// The node is currently borrowed for writing (or the arena is in use by
    /// a callback on this thread), so the operation would conflict with it.
    #[error("node or arena is busy: {0}")]
    Busy(&'static str),
    /// The codec failed; for decompression this means the stored block is
    /// damaged or the codec is not the one that compressed it.
    #[error("codec error: {0}")]
    Codec(String),
    /// The number of blocks exceeded what a handle can address.
    #[error("too many blocks")]
    TooManyBlocks,
}

/// Shorthand for `Result<T, compll::Error>`.
pub type Result<T> = std::result::Result<T, Error>;
