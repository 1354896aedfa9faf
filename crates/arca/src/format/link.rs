//! Group links: the values of a group's link B-tree, keyed by name.
//!
//! ```text
//! +0  u8   kind   1 group, 2 dataset
//! +1  u64  addr   the object's header
//! ```

use crate::error::Result;
use crate::format::codec::{Reader, Writer};
use crate::format::object_header::ObjectKind;
use crate::pager::PAGE_SIZE;

pub(crate) fn encode(kind: ObjectKind, addr: u64) -> Vec<u8> {
    let mut w = Writer::new();
    w.u8(match kind {
        ObjectKind::Group => 1,
        ObjectKind::Dataset => 2,
    })
    .u64(addr);
    w.buf
}

/// Decode a link of the group at `owner` in a file of `eof` bytes.
pub(crate) fn decode(b: &[u8], owner: u64, eof: u64) -> Result<(ObjectKind, u64)> {
    let mut r = Reader::new(b, "group link", owner);
    let kind = match r.u8()? {
        1 => ObjectKind::Group,
        2 => ObjectKind::Dataset,
        k => return Err(r.corrupt(format!("link kind {k}"))),
    };
    let addr = r.u64()?;
    if b.len() != 9 {
        return Err(r.corrupt(format!("link of {} bytes", b.len())));
    }
    if addr < PAGE_SIZE as u64 || addr >= eof || addr == owner {
        return Err(r.corrupt(format!("link to {addr}, outside the file or to itself")));
    }
    Ok((kind, addr))
}
