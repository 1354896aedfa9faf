//! The link-count B-tree: how many hard links lead to an object that has
//! more than one, or none. Objects not in it have exactly one, so files
//! without second names carry no table (its root in the superblock is 0).
//! A count of 0 is an object made without a name (h5py's anonymous
//! objects): held by an open handle, named by a later link, or freed when
//! a writer closes the file.
//!
//! ```text
//! key    u64 big-endian   the object's header address (so keys sort by address)
//! value  u64              the number of hard links to it: 0, or at least 2
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
    if k.len() != 8 {
        return Err(r.corrupt(format!("key of {} bytes", k.len())));
    }
    let addr = Reader::new(k, "link count", 0).u64_be()?;
    let count = r.u64()?;
    if r.remaining() != 0 || count == 1 || addr < PAGE_SIZE as u64 || addr >= eof {
        return Err(r.corrupt(format!(
            "{count} links to the object at {addr} (entries hold 0 or 2 or more, inside the file)"
        )));
    }
    Ok((addr, count))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_and_damage_is_refused() {
        let (k, v) = (key(8192), encode(3));
        assert_eq!(decode(&k, &v, 1 << 20).unwrap(), (8192, 3));
        assert!(decode(&k[..7], &v, 1 << 20).is_err());
        assert!(decode(&k, &v[..7], 1 << 20).is_err());
        assert!(decode(&k, &encode(1), 1 << 20).is_err());
        assert_eq!(decode(&k, &encode(0), 1 << 20).unwrap(), (8192, 0));
        assert!(decode(&key(1 << 20), &v, 1 << 20).is_err());
        assert!(decode(&key(0), &v, 1 << 20).is_err());
    }
}
