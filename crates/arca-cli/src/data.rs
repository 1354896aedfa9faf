//! Reading runs of a dataset's elements, and the walk over a file's tree.

use arca::{AttrValue, Dataset, Datatype, Group, Link, Object, Selection};

use crate::error::{CliError, Context};
use crate::values::{self, Elements};

/// Deepest group nesting followed; deeper means the links form a cycle.
pub const MAX_DEPTH: usize = 1024;

/// Elements read per hyperslab batch when streaming a dataset out, so memory
/// stays bounded however large the dataset.
pub const BATCH: u64 = 1 << 16;

/// Hyperslabs `(start, count)` covering the row-major flat indices
/// `begin..end` of an array of shape `dims`, in order: at most two per
/// dimension.
pub fn slabs(dims: &[u64], begin: u64, end: u64) -> Vec<(Vec<u64>, Vec<u64>)> {
    let mut out = vec![];
    if begin >= end {
        return out;
    }
    let Some((&d0, rest)) = dims.split_first() else {
        out.push((vec![], vec![]));
        return out;
    };
    let inner: u64 = rest.iter().product();
    let sub = |row: u64, b: u64, e: u64, out: &mut Vec<(Vec<u64>, Vec<u64>)>| {
        for (mut s, mut c) in slabs(rest, b, e) {
            s.insert(0, row);
            c.insert(0, 1);
            out.push((s, c));
        }
    };
    let (mut b, e) = (begin, end.min(d0.saturating_mul(inner)));
    if inner == 0 || b >= e {
        return out;
    }
    if b % inner != 0 {
        let row = b / inner;
        let stop = e.min((row + 1) * inner);
        sub(row, b % inner, stop - row * inner, &mut out);
        b = stop;
    }
    let full = e / inner;
    if b < e && b / inner < full {
        let mut s = vec![b / inner];
        let mut c = vec![full - b / inner];
        s.resize(dims.len(), 0);
        c.extend_from_slice(rest);
        out.push((s, c));
        b = full * inner;
    }
    if b < e {
        sub(full, 0, e - full * inner, &mut out);
    }
    out
}

/// Elements `begin..end` (row-major flat indices) of `ds`, of type `dt` and
/// shape `dims`.
pub fn read_range(
    ds: &Dataset,
    dt: &Datatype,
    dims: &[u64],
    begin: u64,
    end: u64,
) -> arca::Result<Elements> {
    let mut out = Elements::empty(dt.clone());
    for (start, count) in slabs(dims, begin, end) {
        let rank = start.len();
        let sel = Selection::new(start, count, vec![1; rank])?;
        if values::is_fixed(dt) {
            let mut data = vec![0u8; sel.len() as usize * dt.size()];
            ds.read_bytes(&sel, &mut data)?;
            out.extend(Elements::Fixed {
                dt: dt.clone(),
                data,
            });
        } else if dt.takes_rows() {
            let mut data = ds.read_rows(&sel)?;
            let values = data.split_off(sel.len() as usize * dt.size());
            out.extend(Elements::Rows {
                dt: dt.clone(),
                data,
                values,
            });
        } else {
            let (values, offsets) = ds.read_ragged_bytes(&sel)?;
            out.extend(Elements::Vlen {
                dt: dt.clone(),
                values,
                offsets,
            });
        }
    }
    Ok(out)
}

/// An attribute's elements.
pub fn attr_elements(v: &AttrValue) -> arca::Result<Elements> {
    if values::is_fixed(&v.dtype) {
        Ok(Elements::Fixed {
            dt: v.dtype.clone(),
            data: v.data.clone(),
        })
    } else if v.dtype.takes_rows() {
        let n = v.shape.iter().product::<u64>() as usize;
        let mut data = v.data.clone();
        let values = data.split_off((n * v.dtype.size()).min(data.len()));
        Ok(Elements::Rows {
            dt: v.dtype.clone(),
            data,
            values,
        })
    } else {
        let (values, offsets) = v.to_ragged_bytes()?;
        Ok(Elements::Vlen {
            dt: v.dtype.clone(),
            values,
            offsets,
        })
    }
}

/// A member of a group as the listings show it.
pub enum Member {
    /// An object, reached by a hard link.
    Object(Object),
    /// A soft link (not followed).
    Soft(String),
    /// An external link (not followed).
    External {
        /// The other file.
        file: String,
        /// The path inside it.
        path: String,
    },
}

/// The direct members of `g` in its order, hard links opened.
pub fn children(g: &Group, file: &std::path::Path) -> Result<Vec<(String, Member)>, CliError> {
    let links = g.links().in_file(file)?;
    links
        .into_iter()
        .map(|(n, l)| {
            Ok(match l {
                Link::Hard(_) => {
                    let o = g.object(&n).in_file(file)?;
                    (n, Member::Object(o))
                }
                Link::Soft(t) => (n, Member::Soft(t)),
                Link::External { file, path } => (n, Member::External { file, path }),
            })
        })
        .collect()
}

/// Objects already shown, by identity, with the path they were shown at:
/// an object with several names is listed once, then referred to.
#[derive(Default)]
pub struct Seen(std::collections::HashMap<u64, String>);

impl Seen {
    /// The path `o` was first shown at, or None (and remember it) if new.
    pub fn first(&mut self, o: &Object, path: &str) -> Option<String> {
        match self.0.entry(o.id()) {
            std::collections::hash_map::Entry::Occupied(e) => Some(e.get().clone()),
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(path.to_string());
                None
            }
        }
    }
}

/// Refuse to descend past [`MAX_DEPTH`].
pub fn check_depth(depth: usize, file: &std::path::Path, path: &str) -> Result<(), CliError> {
    if depth > MAX_DEPTH {
        return Err(CliError::Damaged {
            file: file.to_path_buf(),
            msg: format!("groups nested more than {MAX_DEPTH} deep at {path} (a link cycle?)"),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arca::{DatasetOptions, Datatype, File};

    /// Every range `b..e` with `e <= n` reads the right elements.
    fn check(dims: &[u64], n: u64) {
        let f = File::in_memory().unwrap();
        let total: u64 = dims.iter().product();
        let ds = f
            .root()
            .create_dataset("d", &DatasetOptions::new(Datatype::uint(4), dims))
            .unwrap();
        if total > 0 {
            let vals: Vec<u32> = (0..total as u32).collect();
            ds.write_all(&vals).unwrap();
        }
        for b in 0..=total {
            for e in b..=n {
                let Elements::Fixed { data, .. } =
                    read_range(&ds, &Datatype::uint(4), dims, b, e).unwrap()
                else {
                    panic!("fixed-size elements expected");
                };
                let got: Vec<u32> = data
                    .chunks_exact(4)
                    .map(|c| u32::from_ne_bytes(c.try_into().unwrap()))
                    .collect();
                let want: Vec<u32> = (b.min(total) as u32..e.min(total) as u32).collect();
                assert_eq!(got, want, "dims {dims:?} range {b}..{e}");
                let slabs = slabs(dims, b, e);
                assert!(slabs.len() <= 2 * dims.len().max(1), "{slabs:?}");
            }
        }
    }

    #[test]
    fn every_range() {
        for dims in [
            &[7u64][..],
            &[3, 4],
            &[2, 3, 5],
            &[1, 1, 4],
            &[4, 1, 1],
            &[2, 2, 2, 3],
        ] {
            let total: u64 = dims.iter().product();
            check(dims, total + 2);
        }
    }

    #[test]
    fn empty_dataset() {
        check(&[0, 4], 10);
        assert!(slabs(&[3, 0, 2], 0, 10).is_empty());
    }

    #[test]
    fn scalar() {
        assert_eq!(slabs(&[], 0, 1), vec![(vec![], vec![])]);
        assert!(slabs(&[], 1, 1).is_empty());
    }

    #[test]
    fn variable_length_prefixes() {
        let f = File::in_memory().unwrap();
        let ds = f
            .root()
            .create_dataset("s", &DatasetOptions::new(Datatype::VlenStr, &[2, 3]))
            .unwrap();
        let words = ["a", "bb", "", "dddd", "e", "ff"];
        ds.write_strings(&Selection::all(&[2, 3]), &words).unwrap();
        for n in 0..=7u64 {
            let e = read_range(&ds, &Datatype::VlenStr, &[2, 3], 0, n).unwrap();
            let got: Vec<serde_json::Value> = e.json_list();
            let want: Vec<serde_json::Value> = words[..(n as usize).min(6)]
                .iter()
                .map(|w| serde_json::json!(w))
                .collect();
            assert_eq!(got, want, "n {n}");
        }
    }
}
