//! The storage calls that make a session atomic, in one place.

use std::path::Path;

use arca::{File, Mode};

use crate::Atomic;

/// Open `path` for writing. `no` turns the journal off; the other levels
/// keep it and ask for byte-exact rollback, so an aborted `yes` session
/// leaves every byte of the file as it was.
pub(crate) fn open(path: &Path, atomic: Atomic) -> arca::Result<File> {
    let journal = atomic != Atomic::No;
    File::options()
        .mode(Mode::ReadWrite)
        .journal(journal)
        .exact_rollback(journal)
        .open(path)
}

/// Run `f` as one transaction: committed on `Ok`, rolled back on `Err`.
pub(crate) fn transaction<T>(
    file: &File,
    f: impl FnOnce(&File) -> arca::Result<T>,
) -> arca::Result<T> {
    file.transaction(f)
}

/// Commit what has been applied so far.
pub(crate) fn commit(file: &File) -> arca::Result<()> {
    file.flush()
}
