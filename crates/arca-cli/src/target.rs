//! `FILE[:/path]` arguments: a file and an object inside it.

use std::path::{Path, PathBuf};

use arca::{File, Object};

use crate::error::{CliError, Context};

/// A file and the path of an object in it (`/` when none is given).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The file on disk.
    pub file: PathBuf,
    /// Absolute object path inside the file.
    pub path: String,
}

impl Target {
    /// Split `arg` at the first `:` whose left side is an existing file, so
    /// file names containing `:` still work; with no such file, at the first
    /// `:` (the open then reports the missing file).
    pub fn parse(arg: &str) -> Target {
        let whole = || Target {
            file: PathBuf::from(arg),
            path: "/".into(),
        };
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
                }
            }
            _ => whole(),
        }
    }

    /// Open the file read-only.
    pub fn open(&self) -> Result<File, CliError> {
        File::open(&self.file).in_file(&self.file)
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
