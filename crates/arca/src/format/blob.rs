//! Blobs: checksummed byte strings of any length in metadata space (large
//! attribute values and fill values, the free-space record, the free
//! ranges of a variable-length vector).
//!
//! ```text
//! +0   [u8; 4] tag     "ABLB"
//! +4   u32     crc32c  of bytes [8, 16 + len): the length field and the data
//! +8   u64     len
//! +16  ..      data
//! ```
//! A byte layout only: the store reads and writes blobs with it.

use crate::error::{Error, Result};
use crate::format::codec::{Reader, Writer};

/// Bytes before a blob's data.
pub(crate) const HEADER: u64 = 16;
/// Largest blob accepted when reading, so a damaged length cannot force a
/// huge allocation.
pub(crate) const MAX_LEN: u64 = 1 << 32;
const TAG: &[u8; 4] = b"ABLB";
const WHAT: &str = "blob";

/// The whole blob: header and data.
pub(crate) fn encode(data: &[u8]) -> Vec<u8> {
    let mut body = Writer::new();
    body.u64(data.len() as u64).bytes(data);
    let mut w = Writer::new();
    w.bytes(TAG).u32(crc32c::crc32c(&body.buf)).bytes(&body.buf);
    w.buf
}

/// Check a blob's header read at `addr` in a file of `limit` bytes; returns
/// the checksum and the data length.
pub(crate) fn decode_header(head: &[u8], addr: u64, limit: u64) -> Result<(u32, u64)> {
    let mut r = Reader::new(head, WHAT, addr);
    if r.bytes(4)? != TAG {
        return Err(r.corrupt("bad tag"));
    }
    let crc = r.u32()?;
    let len = r.u64()?;
    let fits = addr
        .checked_add(HEADER)
        .and_then(|a| a.checked_add(len))
        .is_some_and(|end| end <= limit);
    if len > MAX_LEN || !fits {
        return Err(r.corrupt(format!("length {len} runs past the file")));
    }
    Ok((crc, len))
}

/// Check the data read after a header against its checksum.
pub(crate) fn verify(head: &[u8], data: &[u8], crc: u32, addr: u64) -> Result<()> {
    let len_field = head
        .get(8..HEADER as usize)
        .ok_or_else(|| Error::corrupt(WHAT, addr, "header cut short"))?;
    let c = crc32c::crc32c_append(crc32c::crc32c(len_field), data);
    if c != crc {
        return Err(Error::corrupt(WHAT, addr, "checksum mismatch"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_and_damage() {
        let b = encode(b"hello");
        let (crc, len) = decode_header(&b[..16], 4096, 4096 + 21).unwrap();
        assert_eq!(len, 5);
        verify(&b[..16], &b[16..], crc, 4096).unwrap();
        assert!(verify(&b[..16], b"hellO", crc, 4096).is_err());
        assert!(decode_header(&b[..16], 4096, 4096 + 20).is_err());
        assert!(decode_header(&b[..16], u64::MAX - 3, u64::MAX).is_err());
    }
}
