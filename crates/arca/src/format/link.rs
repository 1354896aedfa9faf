//! Group links: the values of a group's link B-tree, keyed by name.
//!
//! ```text
//! +0  u8   kind    1 group, 2 dataset, 5 committed datatype (hard
//!                  links), 3 soft, 4 external;
//!                  bit 7 set: a creation index follows (groups that track
//!                  creation order, and only they, set it on every link)
//! [+1 u64  index   creation order within the group]
//!  then, by kind:
//!  1, 2, 5  u64 addr   the object's header
//!  3     path          UTF-8, 1 to 512 bytes: absolute, or relative to
//!                      the group holding the link
//!  4     u16 n, file   UTF-8 file name (n = 1 to 512 bytes), then the
//!                      path inside that file, 1 to 512 bytes
//! ```
//! Kinds 3 and 4 and the creation index came with format version 3; kind
//! 5 with committed datatypes (a reader that predates it refuses the link
//! as damaged, never misreads it).

use crate::error::Result;
use crate::format::codec::{Reader, Writer};
use crate::format::object_header::ObjectKind;
use crate::pager::PAGE_SIZE;

/// Longest soft-link path or external file name or path, in bytes.
pub const MAX_LINK_PATH: usize = 512;

const ORDERED: u8 = 0x80;

/// Where a link leads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    /// An object in this file, by its header address.
    Hard { kind: ObjectKind, addr: u64 },
    /// A path, resolved when the link is followed.
    Soft(String),
    /// A path in another file.
    External { file: String, path: String },
}

/// One decoded link value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Link {
    pub(crate) target: Target,
    /// Creation index, in groups that track creation order.
    pub(crate) order: Option<u64>,
}

pub(crate) fn encode(link: &Link) -> Vec<u8> {
    let mut w = Writer::new();
    let kind = match link.target {
        Target::Hard {
            kind: ObjectKind::Group,
            ..
        } => 1,
        Target::Hard {
            kind: ObjectKind::Dataset,
            ..
        } => 2,
        Target::Hard {
            kind: ObjectKind::Datatype,
            ..
        } => 5,
        Target::Soft(_) => 3,
        Target::External { .. } => 4,
    };
    w.u8(kind | if link.order.is_some() { ORDERED } else { 0 });
    if let Some(o) = link.order {
        w.u64(o);
    }
    match &link.target {
        Target::Hard { addr, .. } => {
            w.u64(*addr);
        }
        Target::Soft(p) => {
            w.bytes(p.as_bytes());
        }
        Target::External { file, path } => {
            w.u16(file.len() as u16)
                .bytes(file.as_bytes())
                .bytes(path.as_bytes());
        }
    }
    w.buf
}

/// Check a soft-link path or external file name or path.
pub(crate) fn check_path(p: &str, what: &str) -> std::result::Result<(), String> {
    if p.is_empty() || p.len() > MAX_LINK_PATH || p.contains('\0') {
        return Err(format!(
            "{what} of {} bytes (1 to {MAX_LINK_PATH}, no NUL)",
            p.len()
        ));
    }
    Ok(())
}

/// Decode a link of the group at `owner` in a file of `eof` bytes; the
/// group tracks creation order exactly when `ordered`.
pub(crate) fn decode(b: &[u8], owner: u64, eof: u64, ordered: bool) -> Result<Link> {
    let mut r = Reader::new(b, "group link", owner);
    let first = r.u8()?;
    if (first & ORDERED != 0) != ordered {
        return Err(r.corrupt(if ordered {
            "link without a creation index in a group that tracks order"
        } else {
            "link with a creation index in a group that does not track order"
        }));
    }
    let order = if ordered { Some(r.u64()?) } else { None };
    let text = |r: &mut Reader<'_>, n: usize, what: &str| -> Result<String> {
        let bytes = r.bytes(n)?;
        let s = std::str::from_utf8(bytes)
            .map_err(|_| r.corrupt(format!("{what} is not UTF-8")))?
            .to_string();
        check_path(&s, what).map_err(|e| r.corrupt(e))?;
        Ok(s)
    };
    let target = match first & !ORDERED {
        k @ (1 | 2 | 5) => {
            let addr = r.u64()?;
            if r.remaining() != 0 {
                return Err(r.corrupt(format!("hard link of {} bytes", b.len())));
            }
            // A group may hold a hard link to itself (as in HDF5); a link
            // of another kind to the group's own header is damage.
            if addr < PAGE_SIZE as u64 || addr >= eof || (addr == owner && k != 1) {
                return Err(r.corrupt(format!(
                    "link to {addr}, outside the file or to its own group as a non-group"
                )));
            }
            let kind = match k {
                1 => ObjectKind::Group,
                2 => ObjectKind::Dataset,
                _ => ObjectKind::Datatype,
            };
            Target::Hard { kind, addr }
        }
        3 => {
            let n = r.remaining();
            Target::Soft(text(&mut r, n, "soft link path")?)
        }
        4 => {
            let n = r.u16()? as usize;
            let file = text(&mut r, n, "external file name")?;
            let n = r.remaining();
            let path = text(&mut r, n, "external link path")?;
            Target::External { file, path }
        }
        k => return Err(r.corrupt(format!("link kind {k}"))),
    };
    Ok(Link { target, order })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_round_trips() {
        for order in [None, Some(7)] {
            for target in [
                Target::Hard {
                    kind: ObjectKind::Dataset,
                    addr: 8192,
                },
                Target::Hard {
                    kind: ObjectKind::Datatype,
                    addr: 8192,
                },
                Target::Soft("/a/b".into()),
                Target::External {
                    file: "other.arca".into(),
                    path: "/x".into(),
                },
            ] {
                let l = Link { target, order };
                let b = encode(&l);
                assert_eq!(decode(&b, 4096, 1 << 20, order.is_some()).unwrap(), l);
                assert!(decode(&b, 4096, 1 << 20, order.is_none()).is_err());
            }
        }
        assert!(decode(&[3], 4096, 1 << 20, false).is_err());
        assert!(decode(&[4, 0, 0, b'x'], 4096, 1 << 20, false).is_err());
        assert!(decode(&[3, 0xff], 4096, 1 << 20, false).is_err());
    }
}
