//! The undo journal's byte layout (the sidecar `PATH-journal`), and the two
//! things both the journal and the snapshot readers need from it: whether a
//! journal is hot, and a fresh salt.
//!
//! ```text
//! header (32 bytes at 0; its page holds nothing else, J10):
//!   +0   [u8; 8]  "ARCAJNL1"
//!   +8   u64      the data file's length when the transaction began
//!   +16  u64      salt of the transaction (seeds every record's CRC, J5)
//!   +24  u32      page where the records start (0: right after the header)
//!   +28  u32      CRC32C of bytes 0..28
//! records, one after another from their start:
//!   +0   u64      offset in the data file
//!   +8   u32      length n (1..=PAGE_SIZE)
//!   +12  u32      CRC32C of (salt, offset, n, data)
//!   +16  [u8; n]  the bytes at offset as they were when the transaction began
//! ```
//!
//! A journal is *hot* when its header verifies: a writer stopped inside a
//! transaction, and the next writer rolls the records back. A zeroed, torn
//! or missing header is cold. The only I/O here is [`sidecar_is_hot`]'s
//! read of the header; the journal itself reads and writes through a driver.

use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::error::{Error, Result};
use crate::format::codec::Reader;

const MAGIC: &[u8; 8] = b"ARCAJNL1";
/// Bytes of the header.
pub(crate) const HEADER_LEN: u64 = 32;
/// Bytes before a record's data.
pub(crate) const RECORD_HEAD: u64 = 16;

/// A journal header: a hot journal's transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Header {
    /// The data file's length when the transaction began.
    pub(crate) orig_len: u64,
    /// Seeds every record's checksum (J5).
    pub(crate) salt: u64,
    /// Page where the records start; 0: right after the header.
    pub(crate) first_page: u32,
}

impl Header {
    pub(crate) fn encode(&self) -> [u8; HEADER_LEN as usize] {
        let mut h = [0u8; HEADER_LEN as usize];
        h[0..8].copy_from_slice(MAGIC);
        h[8..16].copy_from_slice(&self.orig_len.to_le_bytes());
        h[16..24].copy_from_slice(&self.salt.to_le_bytes());
        h[24..28].copy_from_slice(&self.first_page.to_le_bytes());
        let crc = crc32c::crc32c(&h[0..28]);
        h[28..32].copy_from_slice(&crc.to_le_bytes());
        h
    }

    /// The header in `b`, or None when it does not verify (the journal is
    /// cold).
    pub(crate) fn decode(b: &[u8]) -> Option<Header> {
        let mut r = Reader::new(b, "journal header", 0);
        let magic = r.bytes(MAGIC.len()).ok()?;
        let (orig_len, salt, first_page) = (r.u64().ok()?, r.u64().ok()?, r.u32().ok()?);
        let crc = r.u32().ok()?;
        let covered = b.get(0..28)?;
        (magic == MAGIC && crc32c::crc32c(covered) == crc).then_some(Header {
            orig_len,
            salt,
            first_page,
        })
    }

    /// Where the first record starts, with pages of `page_size` bytes.
    pub(crate) fn records_start(&self, page_size: u64) -> u64 {
        match self.first_page {
            0 => HEADER_LEN,
            p => p as u64 * page_size,
        }
    }
}

/// A record's head: where its bytes go, how many, and their checksum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RecordHead {
    pub(crate) offset: u64,
    pub(crate) len: u32,
    pub(crate) crc: u32,
}

impl RecordHead {
    pub(crate) fn decode(b: &[u8; RECORD_HEAD as usize]) -> RecordHead {
        let [o0, o1, o2, o3, o4, o5, o6, o7, l0, l1, l2, l3, c0, c1, c2, c3] = *b;
        RecordHead {
            offset: u64::from_le_bytes([o0, o1, o2, o3, o4, o5, o6, o7]),
            len: u32::from_le_bytes([l0, l1, l2, l3]),
            crc: u32::from_le_bytes([c0, c1, c2, c3]),
        }
    }

    /// Whether `data` is this record's, written in the transaction salted
    /// `salt` (J5: a stale or torn record does not verify).
    pub(crate) fn verifies(&self, salt: u64, data: &[u8]) -> bool {
        data.len() == self.len as usize && record_crc(salt, self.offset, data) == self.crc
    }
}

/// Append the record of the original `data` at `offset` to `out`.
pub(crate) fn encode_record(out: &mut Vec<u8>, salt: u64, offset: u64, data: &[u8]) {
    out.extend_from_slice(&offset.to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out.extend_from_slice(&record_crc(salt, offset, data).to_le_bytes());
    out.extend_from_slice(data);
}

fn record_crc(salt: u64, offset: u64, data: &[u8]) -> u32 {
    let mut c = crc32c::crc32c(&salt.to_le_bytes());
    c = crc32c::crc32c_append(c, &offset.to_le_bytes());
    c = crc32c::crc32c_append(c, &(data.len() as u32).to_le_bytes());
    crc32c::crc32c_append(c, data)
}

/// Whether the journal at `sidecar` is hot: left by a writer that stopped
/// inside a transaction. A missing or short file is cold.
///
/// # Errors
/// [`Error::Io`] when the file exists but cannot be read.
pub(crate) fn sidecar_is_hot(sidecar: &Path) -> Result<bool> {
    if !sidecar.exists() {
        return Ok(false);
    }
    let f = std::fs::File::open(sidecar)
        .map_err(|e| Error::io(format!("opening {}", sidecar.display()), e))?;
    let len = f
        .metadata()
        .map_err(|e| Error::io("reading the file size", e))?
        .len();
    if len < HEADER_LEN {
        return Ok(false);
    }
    let mut h = [0u8; HEADER_LEN as usize];
    f.read_exact_at(&mut h, 0)
        .map_err(|e| Error::io(format!("reading {HEADER_LEN} bytes at 0"), e))?;
    Ok(Header::decode(&h).is_some())
}

/// A salt no earlier writer of this file is likely to have used: the time
/// and the process id. Seeds a session's transaction salts (J5) and a
/// history's epochs (R5).
pub(crate) fn salt() -> u64 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    t ^ ((std::process::id() as u64) << 32) ^ 0x9E37_79B9_7F4A_7C15
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips_and_a_damaged_one_is_cold() {
        let h = Header {
            orig_len: 123_456,
            salt: 0xDEAD_BEEF,
            first_page: 3,
        };
        let b = h.encode();
        assert_eq!(Header::decode(&b), Some(h));
        assert_eq!(h.records_start(4096), 3 * 4096);
        for i in 0..b.len() {
            let mut bad = b;
            bad[i] ^= 1;
            assert_eq!(Header::decode(&bad), None, "byte {i} flipped");
        }
        assert_eq!(Header::decode(&[0u8; 32]), None, "zeroed: invalidated");
        assert_eq!(Header::decode(&b[..31]), None, "short");
    }

    #[test]
    fn records_verify_only_under_their_salt() {
        let mut out = vec![];
        encode_record(&mut out, 7, 4096, b"original");
        let head: [u8; 16] = out[..16].try_into().unwrap();
        let r = RecordHead::decode(&head);
        assert_eq!((r.offset, r.len), (4096, 8));
        assert!(r.verifies(7, &out[16..]));
        assert!(!r.verifies(8, &out[16..]), "a stale salt");
        assert!(!r.verifies(7, b"originaX"));
    }

    #[test]
    fn missing_short_and_zeroed_sidecars_are_cold() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f-journal");
        assert!(!sidecar_is_hot(&p).unwrap());
        std::fs::write(&p, [0u8; 10]).unwrap();
        assert!(!sidecar_is_hot(&p).unwrap());
        std::fs::write(&p, [0u8; 64]).unwrap();
        assert!(!sidecar_is_hot(&p).unwrap());
        let h = Header {
            orig_len: 1,
            salt: 2,
            first_page: 0,
        };
        std::fs::write(&p, h.encode()).unwrap();
        assert!(sidecar_is_hot(&p).unwrap());
    }
}
