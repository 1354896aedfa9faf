//! Mapping `arca::Error` to Python exceptions, the way h5py does: a missing
//! object is a `KeyError`, a bad argument or a taken name a `ValueError`, and
//! anything about the file itself an `OSError` (an `ArcaError` subclass, or a
//! plain errno-carrying `OSError` so Python picks `FileNotFoundError`,
//! `FileExistsError`, `PermissionError`, ...).
//!
//! ```python
//! try:
//!     _native.File("missing.arca", "r")
//! except FileNotFoundError:
//!     pass
//! ```

use pyo3::exceptions::{PyKeyError, PyOSError, PyValueError};
use pyo3::{create_exception, PyErr};

create_exception!(
    _native,
    ArcaError,
    PyOSError,
    "Base of arca's file-level errors (a subclass of OSError)."
);
create_exception!(
    _native,
    CorruptError,
    ArcaError,
    "A structure in the file is damaged."
);
create_exception!(
    _native,
    ReadOnlyError,
    ArcaError,
    "A change was attempted on a file opened read-only."
);
create_exception!(
    _native,
    LockedError,
    ArcaError,
    "Another process holds the file."
);
create_exception!(
    _native,
    NeedsRecoveryError,
    ArcaError,
    "The file holds a crash journal that must be rolled back by a writer first."
);
create_exception!(
    _native,
    PoisonedError,
    ArcaError,
    "An earlier write failure left the handle unusable; reopen the file."
);
create_exception!(
    _native,
    UnsupportedError,
    ArcaError,
    "The file uses a feature this version does not know."
);

create_exception!(
    _native,
    RemoteError,
    ArcaError,
    "A request to object storage failed after its retries; the message names the URL and the byte range."
);

create_exception!(
    _native,
    ConflictError,
    ArcaError,
    "Another writer changed (or created) a file on object storage first; this writer's staged file is kept and the message names it."
);

/// An errno for an I/O error, so `OSError(errno, msg)` becomes the right subclass.
fn errno_of(e: &std::io::Error) -> Option<i32> {
    use std::io::ErrorKind as K;
    e.raw_os_error().or(match e.kind() {
        K::NotFound => Some(2),
        K::PermissionDenied => Some(13),
        K::AlreadyExists => Some(17),
        _ => None,
    })
}

/// Convert an error from opening a file: a file that exists already is
/// `FileExistsError`, as for Python's own `open(..., "x")`.
pub(crate) fn open_err(e: arca::Error) -> PyErr {
    match e {
        arca::Error::AlreadyExists(ref p) => PyOSError::new_err((17, e.to_string(), p.clone())),
        e => err(e),
    }
}

/// Convert a core error into the matching Python exception.
pub(crate) fn err(e: arca::Error) -> PyErr {
    let msg = e.to_string();
    match e {
        arca::Error::Io { ref source, .. } => match errno_of(source) {
            Some(n) => PyOSError::new_err((n, msg)),
            None => PyOSError::new_err(msg),
        },
        arca::Error::Corrupt { .. } => CorruptError::new_err(msg),
        arca::Error::NotFound(_) => PyKeyError::new_err(msg),
        arca::Error::AlreadyExists(_) | arca::Error::InvalidArgument(_) => {
            PyValueError::new_err(msg)
        }
        arca::Error::Unsupported(_) => UnsupportedError::new_err(msg),
        arca::Error::ReadOnly => ReadOnlyError::new_err(msg),
        arca::Error::Locked(_) => LockedError::new_err(msg),
        arca::Error::NeedsRecovery(_) => NeedsRecoveryError::new_err(msg),
        arca::Error::Poisoned => PoisonedError::new_err(msg),
        // A missing object is FileNotFoundError, as a missing path is.
        arca::Error::Remote {
            kind: arca::RemoteKind::NotFound,
            ..
        } => PyOSError::new_err((2, msg)),
        arca::Error::Remote { .. } => RemoteError::new_err(msg),
        arca::Error::Conflict { .. } => ConflictError::new_err(msg),
        _ => ArcaError::new_err(msg),
    }
}
