//! The crate's one error type.

use std::io;

/// Everything that can go wrong in arca.
///
/// ```
/// use arca::{Error, File};
/// let err = File::open("/no/such/file.arca").unwrap_err();
/// assert!(matches!(err, Error::Io { .. }));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The operating system refused a read, write, sync or open.
    #[error("I/O error while {context}: {source}")]
    Io {
        /// What arca was doing.
        context: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// A structure in the file is damaged: the bytes at `offset` are not a valid `what`.
    #[error("file is damaged: {what} at offset {offset}: {detail}")]
    Corrupt {
        /// The structure that failed to decode or verify.
        what: &'static str,
        /// Its byte offset in the file.
        offset: u64,
        /// Why it was rejected.
        detail: String,
    },
    /// No object, attribute or file by that name.
    #[error("not found: {0}")]
    NotFound(String),
    /// An object or attribute by that name exists already.
    #[error("already exists: {0}")]
    AlreadyExists(String),
    /// An argument does not fit the object it is applied to.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The file uses a feature this version does not know.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// The file was opened read-only.
    #[error("file is open read-only")]
    ReadOnly,
    /// Another process holds the file.
    #[error("file is locked: {0}")]
    Locked(String),
    /// The file has a journal left by an interrupted writer and could not be
    /// rolled back here (a read-only open without write permission).
    #[error("file needs recovery: {0}")]
    NeedsRecovery(String),
    /// An earlier failure while writing left this handle unusable; reopen the file.
    #[error("file handle is poisoned by an earlier write failure; reopen the file")]
    Poisoned,
    /// A request to object storage failed, after its retries: `url` names
    /// the object and `range` the bytes asked for (`None`: the whole request
    /// failed before any range, e.g. building the client).
    #[error("{url}{}: {kind}: {message}", fmt_range(.range))]
    Remote {
        /// The object's URL.
        url: String,
        /// The bytes requested, `start..end`.
        range: Option<std::ops::Range<u64>>,
        /// What went wrong, in one word.
        kind: RemoteKind,
        /// The store's own message.
        message: String,
    },
    /// A file on object storage could not be published: another writer
    /// changed the object since this one opened it or last published it
    /// (its `If-Match` failed), or created it first (`If-None-Match: *`
    /// failed). The staged local copy, if one was made, is kept at
    /// `staged`: nothing written is lost.
    ///
    /// ```
    /// let e = arca::Error::Conflict {
    ///     url: "s3://b/a.arca".into(),
    ///     staged: Some("/tmp/a.arca".into()),
    ///     message: "the object was changed by another writer".into(),
    /// };
    /// assert!(e.to_string().contains("/tmp/a.arca"));
    /// ```
    #[error("{url}: conflict: {message}{}", fmt_staged(.staged))]
    Conflict {
        /// The object's URL.
        url: String,
        /// The local copy holding what this writer committed.
        staged: Option<std::path::PathBuf>,
        /// What the store answered.
        message: String,
    },
}

/// `; the staged file is kept at PATH` for an error message, or nothing.
fn fmt_staged(p: &Option<std::path::PathBuf>) -> String {
    match p {
        Some(p) => format!("; this writer's file is kept at {}", p.display()),
        None => String::new(),
    }
}

/// Why a request to object storage failed ([`Error::Remote`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RemoteKind {
    /// No object at that URL.
    NotFound,
    /// The store refused the credentials, or there were none.
    Denied,
    /// The object was replaced since the file was opened (its ETag no
    /// longer matches): reopen it to read the new one.
    Changed,
    /// Server errors or timeouts that persisted through every retry, or a
    /// connection that could not be made.
    Failed,
}

impl std::fmt::Display for RemoteKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RemoteKind::NotFound => "object not found",
            RemoteKind::Denied => "access denied",
            RemoteKind::Changed => "object changed since it was opened",
            RemoteKind::Failed => "request failed",
        })
    }
}

/// ` bytes a-b` (HTTP's inclusive form) for an error message, or nothing.
fn fmt_range(r: &Option<std::ops::Range<u64>>) -> String {
    match r {
        Some(r) if r.end > r.start => format!(" bytes {}-{}", r.start, r.end - 1),
        Some(r) => format!(" bytes {}-", r.start),
        None => String::new(),
    }
}

/// Shorthand for `std::result::Result<T, arca::Error>`.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub(crate) fn io(context: impl Into<String>, source: io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source,
        }
    }

    pub(crate) fn corrupt(what: &'static str, offset: u64, detail: impl Into<String>) -> Self {
        Error::Corrupt {
            what,
            offset,
            detail: detail.into(),
        }
    }

    pub(crate) fn invalid(msg: impl Into<String>) -> Self {
        Error::InvalidArgument(msg.into())
    }
}
