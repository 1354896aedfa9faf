//! Paths inside a file: splitting them into link names, joining them.

use crate::error::{Error, Result};

/// Split a path into its non-empty components, rejecting names a link cannot have.
pub(crate) fn components(path: &str) -> Result<Vec<&str>> {
    let parts: Vec<&str> = path
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    for p in &parts {
        if p.len() > crate::format::btree::MAX_KEY {
            return Err(Error::invalid(format!(
                "name longer than {} bytes",
                crate::format::btree::MAX_KEY
            )));
        }
        if *p == ".." {
            return Err(Error::invalid("'..' is not supported in paths"));
        }
    }
    Ok(parts)
}

/// The path of `name` inside the group at path `base`.
pub(crate) fn join(base: &str, name: &str) -> String {
    if base.ends_with('/') {
        format!("{base}{name}")
    } else {
        format!("{base}/{name}")
    }
}
