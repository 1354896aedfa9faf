//! Elements kept outside the file (layout class 4, HDF5's external raw
//! storage): the segment list read from its blob, the segments' files found
//! as HDF5 finds them, and selections read and written through them.
//!
//! The external files are read and written in place, outside the file's
//! transactions (as HDF5 does): a rollback does not undo what was written
//! there. A missing file is an error when read; bytes past the end of a
//! short one read as zeros (what was never written), as in HDF5.

use std::collections::HashMap;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::format::external_list::{self, ExternalSegment};
use crate::format::object_header::{DatasetMeta, Layout};
use crate::selection::{selection_runs, Selection};
use crate::store::Store;

/// What `${ORIGIN}` in an external prefix stands for: the directory of
/// the file holding the dataset.
pub(crate) const ORIGIN: &str = "${ORIGIN}";

/// The external file list of a dataset (`None` for other layouts), checked
/// against its shape.
pub(crate) fn segments(st: &mut Store, m: &DatasetMeta) -> Result<Option<Vec<ExternalSegment>>> {
    let Layout::External { addr, len } = m.layout else {
        return Ok(None);
    };
    let b = st.read_blob(addr)?;
    if b.len() as u64 != len {
        return Err(Error::corrupt(
            "external file list",
            addr,
            format!("a blob of {} bytes where the layout says {len}", b.len()),
        ));
    }
    Ok(Some(external_list::decode(
        &b,
        addr,
        &m.dims,
        &m.maxdims,
        m.dtype.size() as u64,
    )?))
}

/// Where the segment named `name` is: an absolute name as it is; else
/// under `prefix` when one is given (`${ORIGIN}` in it stands for the
/// directory of `file`, the file holding the dataset); else relative to
/// the current directory, as HDF5 resolves it.
///
/// # Errors
/// `InvalidArgument` for `${ORIGIN}` in a file that has no path (in
/// memory).
pub(crate) fn resolve(name: &str, prefix: Option<&str>, file: Option<&Path>) -> Result<PathBuf> {
    let named = Path::new(name);
    let prefix = prefix.filter(|p| !p.is_empty());
    let Some(prefix) = prefix.filter(|_| !named.is_absolute()) else {
        return Ok(named.to_path_buf());
    };
    let prefix = if prefix.contains(ORIGIN) {
        let dir = file
            .map(|f| match f.parent() {
                Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                _ => PathBuf::from("."),
            })
            .ok_or_else(|| {
                Error::invalid(format!(
                    "external prefix {prefix}: a file in memory has no directory"
                ))
            })?;
        prefix.replace(ORIGIN, &dir.to_string_lossy())
    } else {
        prefix.to_string()
    };
    Ok(Path::new(&prefix).join(named))
}

/// The external files of one read or write, each opened once.
struct Files<'a> {
    segs: &'a [ExternalSegment],
    paths: Vec<PathBuf>,
    open: HashMap<usize, std::fs::File>,
    write: bool,
}

impl<'a> Files<'a> {
    fn new(segs: &'a [ExternalSegment], prefix: Option<&str>, file: Option<&Path>) -> Result<Self> {
        let paths = segs
            .iter()
            .map(|s| resolve(&s.name, prefix, file))
            .collect::<Result<_>>()?;
        Ok(Files {
            segs,
            paths,
            open: HashMap::new(),
            write: false,
        })
    }

    fn get(&mut self, i: usize) -> Result<&std::fs::File> {
        if !self.open.contains_key(&i) {
            let p = &self.paths[i];
            let f = if self.write {
                // Made when first written, as HDF5 does; never truncated.
                std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create(true)
                    .truncate(false)
                    .open(p)
            } else {
                std::fs::File::open(p)
            }
            .map_err(|e| Error::io(format!("opening external file {}", p.display()), e))?;
            self.open.insert(i, f);
        }
        Ok(&self.open[&i])
    }

    /// Read the element bytes `[at, at + buf.len())`; bytes past the end of
    /// a file read as zeros.
    fn read(&mut self, at: u64, buf: &mut [u8]) -> Result<()> {
        for (i, off, n, o) in external_list::pieces(self.segs, at, buf.len() as u64) {
            let part = &mut buf[o as usize..(o + n) as usize];
            let path = self.paths[i].clone();
            let f = self.get(i)?;
            let mut done = 0;
            while done < part.len() {
                match f.read_at(&mut part[done..], off + done as u64) {
                    Ok(0) => break,
                    Ok(k) => done += k,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        return Err(Error::io(
                            format!("reading external file {}", path.display()),
                            e,
                        ))
                    }
                }
            }
            part[done..].fill(0);
        }
        Ok(())
    }

    /// Write `data` to the element bytes from `at`.
    fn write(&mut self, at: u64, data: &[u8]) -> Result<()> {
        for (i, off, n, o) in external_list::pieces(self.segs, at, data.len() as u64) {
            let path = self.paths[i].clone();
            self.get(i)?
                .write_all_at(&data[o as usize..(o + n) as usize], off)
                .map_err(|e| Error::io(format!("writing external file {}", path.display()), e))?;
        }
        Ok(())
    }
}

/// Read `sel` of an external dataset into `out` (native byte order).
pub(crate) fn read(
    m: &DatasetMeta,
    segs: &[ExternalSegment],
    prefix: Option<&str>,
    file: Option<&Path>,
    sel: &Selection,
    out: &mut [u8],
) -> Result<()> {
    let elem = m.dtype.size();
    let mut files = Files::new(segs, prefix, file)?;
    selection_runs(elem, &m.dims, sel, &mut |s, o, n| {
        files.read(s as u64, &mut out[o..o + n])
    })?;
    if m.dtype.needs_swap() {
        m.dtype.swap(out);
    }
    Ok(())
}

/// Write `data` (native byte order) to `sel` of an external dataset.
pub(crate) fn write(
    m: &DatasetMeta,
    segs: &[ExternalSegment],
    prefix: Option<&str>,
    file: Option<&Path>,
    sel: &Selection,
    data: &[u8],
) -> Result<()> {
    let swapped;
    let data = if m.dtype.needs_swap() {
        let mut v = data.to_vec();
        m.dtype.swap(&mut v);
        swapped = v;
        &swapped[..]
    } else {
        data
    };
    let mut files = Files::new(segs, prefix, file)?;
    files.write = true;
    selection_runs(m.dtype.size(), &m.dims, sel, &mut |s, o, n| {
        files.write(s as u64, &data[o..o + n])
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve_as_hdf5_does() {
        let here = Some(Path::new("/data/run/f.arca"));
        assert_eq!(
            resolve("a.bin", None, here).unwrap(),
            PathBuf::from("a.bin")
        );
        assert_eq!(
            resolve("/x/a.bin", Some("/p"), here).unwrap(),
            PathBuf::from("/x/a.bin")
        );
        assert_eq!(
            resolve("a.bin", Some("/p"), here).unwrap(),
            PathBuf::from("/p/a.bin")
        );
        assert_eq!(
            resolve("a.bin", Some("${ORIGIN}/raw"), here).unwrap(),
            PathBuf::from("/data/run/raw/a.bin")
        );
        assert_eq!(
            resolve("a.bin", Some("${ORIGIN}"), Some(Path::new("f.arca"))).unwrap(),
            PathBuf::from("./a.bin")
        );
        assert!(resolve("a.bin", Some("${ORIGIN}"), None).is_err());
    }
}
