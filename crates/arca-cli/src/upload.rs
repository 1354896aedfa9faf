//! Commands that write a new file to a URL (`arca repack IN s3://…`,
//! `arca import IN s3://…`): the file is written locally, in a directory
//! of its own, then uploaded with one conditional PUT, so the object
//! appears whole or not at all, and an object that exists (or appears
//! meanwhile) is not overwritten unless asked.

use std::path::{Path, PathBuf};

use crate::error::{CliError, Context};
use crate::target::cloud_options;

/// Whether `p` names a URL rather than a path.
pub fn is_url(p: &Path) -> bool {
    arca::io::is_url(&p.to_string_lossy())
}

/// A new directory for the local copy.
fn local_dir() -> Result<PathBuf, CliError> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let dir = std::env::temp_dir().join(format!("arca-upload-{}-{stamp:x}", std::process::id()));
    std::fs::create_dir(&dir)
        .map_err(|e| CliError::Usage(format!("making {}: {e}", dir.display())))?;
    Ok(dir)
}

/// Run `make` on a local path, and when it returns 0 upload the file it
/// wrote to `url` (`replace`: in place of an existing object, which must
/// not change meanwhile; else only as a new object), with a spinner unless
/// `quiet` (one PUT reports no progress of its own). Returns `make`'s
/// status. The local copy goes, unless the upload failed: then the error
/// names it.
///
/// # Errors
/// `make`'s; the library's for the upload (a conflict when the object
/// exists).
pub fn to_url(
    url: &Path,
    storage: &[String],
    replace: bool,
    quiet: bool,
    make: impl FnOnce(&Path) -> Result<u8, CliError>,
) -> Result<u8, CliError> {
    let cloud = cloud_options(url, storage)?;
    let dir = local_dir()?;
    let name = url
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "out.arca".into());
    let local = dir.join(name);
    let status = make(&local);
    match status {
        Ok(0) => {}
        other => {
            let _ = std::fs::remove_dir_all(&dir);
            return other;
        }
    }
    let size = std::fs::metadata(&local).map(|m| m.len()).unwrap_or(0);
    let spin = crate::progress::spinner(&format!("uploading to {}", url.display()), size, quiet);
    let sent = arca::io::upload(&local, &url.to_string_lossy(), &cloud, replace);
    spin.finish_and_clear();
    sent.in_file(url)?;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(0)
}
