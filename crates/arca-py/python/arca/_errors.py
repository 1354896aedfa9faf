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
"""

from ._native import (  # noqa: F401
    ArcaError,
    CorruptError,
    LockedError,
    NeedsRecoveryError,
    PoisonedError,
    ReadOnlyError,
    UnsupportedError,
)
