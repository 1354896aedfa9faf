"""Exception classes. The native module raises them; they are re-exported
from :mod:`arca`.

* ``ArcaError(OSError)`` -- base of arca's file-level errors.
* ``CorruptError`` -- a structure in the file is damaged.
* ``ReadOnlyError`` -- a change was attempted on a file opened with mode ``r``.
* ``LockedError`` -- another process holds the file.
* ``NeedsRecoveryError`` -- a crash journal must be rolled back by a writer
  (open with ``r+`` or ``a``) before the file can be read.
* ``PoisonedError`` -- an earlier write failure made the handle unusable.
* ``UnsupportedError`` -- the file uses a feature this version does not know.
* ``RemoteError`` -- a request to object storage failed after its retries
  (the message names the URL and byte range); a missing object is
  ``FileNotFoundError`` instead, as a missing path is.
* ``ConflictError`` -- a file written on object storage could not be
  published: another writer changed the object since this one opened (or
  last published) it, or created it first; this writer's staged local
  file is kept and the message names it.

A change refused because the file is read-only raises ``ReadOnlyError``;
where h5py raises another type for the same refusal (``KeyError`` for a
deletion, ``ValueError`` for a new group, ``RuntimeError`` for a copy),
the error is also of that type (``ReadOnlyKeyError``, ...), so code
written for either catches it.
"""

from ._native import (  # noqa: F401
    ArcaError,
    ConflictError,
    CorruptError,
    LockedError,
    NeedsRecoveryError,
    PoisonedError,
    ReadOnlyError,
    RemoteError,
    UnsupportedError,
)


class ReadOnlyKeyError(ReadOnlyError, KeyError):
    """A deletion refused on a read-only file (h5py raises KeyError)."""


class ReadOnlyValueError(ReadOnlyError, ValueError):
    """A creation or move refused on a read-only file (h5py: ValueError)."""


class ReadOnlyRuntimeError(ReadOnlyError, RuntimeError):
    """A copy refused on a read-only file (h5py: RuntimeError)."""
