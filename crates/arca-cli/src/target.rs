//! `FILE[:/path]` arguments: a file (a path, or a URL on object storage)
//! and an object inside it.

use std::path::{Path, PathBuf};

use arca::{File, Object};

use crate::error::{CliError, Context};

/// A file and the path of an object in it (`/` when none is given).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The file on disk, or its URL.
    pub file: PathBuf,
    /// Absolute object path inside the file.
    pub path: String,
    /// `KEY=VALUE` storage options for a URL (`--storage-option`).
    pub storage: Vec<String>,
}

/// Open `file` read-only: a URL (`s3://…`, `https://…`, …) through the
/// object-store driver with `storage` options (`KEY=VALUE`), a path as
/// usual.
///
/// # Errors
/// [`CliError::Usage`] for an option without `=`, the library's error
/// (naming the file) otherwise.
pub fn open_file(file: &Path, storage: &[String]) -> Result<File, CliError> {
    let name = file.to_string_lossy();
    if !arca::io::is_url(&name) {
        if let Some(o) = storage.first() {
            return Err(CliError::Usage(format!(
                "--storage-option {o}: options apply to URLs (s3://, gs://, az://, http(s)://), not to {}",
                file.display()
            )));
        }
        return File::open(file).in_file(file);
    }
    File::options()
        .open_url(&name, &cloud_options(file, storage)?)
        .in_file(file)
}

/// The options of a URL from `--storage-option KEY=VALUE` arguments.
///
/// # Errors
/// [`CliError::Usage`] for an option without `=`, the library's error for
/// a bad value.
pub fn cloud_options(file: &Path, storage: &[String]) -> Result<arca::io::CloudOptions, CliError> {
    let mut cloud = arca::io::CloudOptions::new();
    for o in storage {
        let (k, v) = o
            .split_once('=')
            .ok_or_else(|| CliError::Usage(format!("--storage-option {o}: expected KEY=VALUE")))?;
        cloud = cloud.set(k.trim(), v).in_file(file)?;
    }
    Ok(cloud)
}

impl Target {
    /// Split `arg` at the first `:` whose left side is an existing file, so
    /// file names containing `:` still work; with no such file, at the first
    /// `:` (the open then reports the missing file).
    pub fn parse(arg: &str) -> Target {
        let whole = || Target {
            file: PathBuf::from(arg),
            path: "/".into(),
            storage: Vec::new(),
        };
        if arca::io::is_url(arg) {
            // In a URL the object's path follows the first `:/` after the
            // host (a port's colon is followed by digits).
            let after = arg.find("://").map_or(0, |i| i + 3);
            return match arg[after..].find(":/") {
                Some(i) => Target {
                    file: PathBuf::from(&arg[..after + i]),
                    path: arg[after + i + 1..].to_string(),
                    storage: Vec::new(),
                },
                None => whole(),
            };
        }
        if Path::new(arg).is_file() {
            return whole();
        }
        let splits: Vec<usize> = arg.match_indices(':').map(|(i, _)| i).collect();
        let pick = splits
            .iter()
            .copied()
            .find(|&i| Path::new(&arg[..i]).is_file())
            .or_else(|| splits.first().copied());
        match pick {
            Some(i) if i > 0 => {
                let p = &arg[i + 1..];
                let path = if p.starts_with('/') {
                    p.to_string()
                } else {
                    format!("/{p}")
                };
                Target {
                    file: PathBuf::from(&arg[..i]),
                    path,
                    storage: Vec::new(),
                }
            }
            _ => whole(),
        }
    }

    /// Open the file read-only.
    pub fn open(&self) -> Result<File, CliError> {
        open_file(&self.file, &self.storage)
    }

    /// Open the file and the object the target names.
    pub fn object(&self, f: &File) -> Result<Object, CliError> {
        if self.path.trim_matches('/').is_empty() {
            return Ok(Object::Group(f.root()));
        }
        f.root().object(&self.path).in_file(&self.file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_file_and_object_paths() {
        let t = Target::parse("nonexistent.arca");
        assert_eq!(t.file, PathBuf::from("nonexistent.arca"));
        assert_eq!(t.path, "/");
        let t = Target::parse("nonexistent.arca:/a/b");
        assert_eq!(t.file, PathBuf::from("nonexistent.arca"));
        assert_eq!(t.path, "/a/b");
        let t = Target::parse("x.arca:a");
        assert_eq!(t.path, "/a");
    }

    #[test]
    fn urls_and_their_object_paths() {
        let t = Target::parse("http://127.0.0.1:8000/d/x.arca:/g/a");
        assert_eq!(t.file, PathBuf::from("http://127.0.0.1:8000/d/x.arca"));
        assert_eq!(t.path, "/g/a");
        let t = Target::parse("s3://bucket/x.arca");
        assert_eq!(t.file, PathBuf::from("s3://bucket/x.arca"));
        assert_eq!(t.path, "/");
    }

    #[test]
    fn colon_in_an_existing_file_name() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a:b.arca");
        std::fs::write(&p, b"").unwrap();
        let s = p.to_str().unwrap();
        assert_eq!(Target::parse(s).file, p);
        let t = Target::parse(&format!("{s}:/g"));
        assert_eq!(t.file, p);
        assert_eq!(t.path, "/g");
    }
}
