//! The link-count B-tree: how many hard links lead to an object that has
//! more than one. Objects not in it have exactly one, so files without
//! second names carry no table (its root in the superblock is 0).
//!
//! ```text
//! key    u64 big-endian   the object's header address (so keys sort by address)
//! value  u64              the number of hard links to it, at least 2
//! ```

use crate::error::Result;
use crate::format::codec::{Reader, Writer};
use crate::pager::PAGE_SIZE;

pub(crate) fn key(addr: u64) -> [u8; 8] {
    addr.to_be_bytes()
}

pub(crate) fn encode(count: u64) -> Vec<u8> {
    let mut w = Writer::new();
    w.u64(count);
    w.buf
}

/// Decode one entry of a file of `eof` bytes: `(address, count)`.
pub(crate) fn decode(k: &[u8], v: &[u8], eof: u64) -> Result<(u64, u64)> {
    let mut r = Reader::new(v, "link count", 0);
    let addr = <[u8; 8]>::try_from(k)
        .map(u64::from_be_bytes)
        .map_err(|_| r.corrupt(format!("key of {} bytes", k.len())))?;
    let count = r.u64()?;
    if r.remaining() != 0 || count < 2 || addr < PAGE_SIZE as u64 || addr >= eof {
        return Err(r.corrupt(format!(
            "{count} links to the object at {addr} (entries hold 2 or more, inside the file)"
        )));
    }
    Ok((addr, count))
}
