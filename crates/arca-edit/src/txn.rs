//! The storage calls that make a session atomic, in one place.

use std::path::Path;

use arca::{File, Mode};

use crate::Atomic;

/// Open `path` for writing. `no` turns the journal off; the other levels
/// keep it and ask for byte-exact rollback, so an aborted `yes` session
/// leaves every byte of the file as it was. With the `cloud` feature, a URL
/// (`s3://…`) is staged locally and each commit published with one
/// conditional PUT (credentials and endpoint from the environment).
pub(crate) fn open(path: &Path, atomic: Atomic) -> arca::Result<File> {
    let journal = atomic != Atomic::No;
    let mut o = File::options();
    o.mode(Mode::ReadWrite)
        .journal(journal)
        .exact_rollback(journal);
    #[cfg(feature = "cloud")]
    if let Some(url) = path.to_str().filter(|p| arca::io::is_url(p)) {
        return o.open_url(url, &arca::io::CloudOptions::new());
    }
    o.open(path)
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
