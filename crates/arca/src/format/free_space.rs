//! The free-space record: the free sections saved at commit so that space
//! freed in one session is reused in the next. Stored as a blob whose
//! address is the superblock's first space slot.
//!
//! ```text
//! +0  [u8; 4] tag "AFSR" ("AHSR" for the held-space record, "ALSR" for
//!             the left-space record, below)
//! +4  u32     n
//! +8  n × { u8 kind (0 metadata, 1 data), u64 addr, u64 size }, in address order
//! ```

use crate::error::{Error, Result};
use crate::format::codec::{Reader, Writer};
use crate::pager::PAGE_SIZE;
use crate::space::{Section, SpaceKind};

/// A record decoder: the record's data, its address, the bytes its blob
/// occupies, the end of file, and extents known live.
pub(crate) type Decoder = fn(&[u8], u64, u64, u64, &[(u64, u64)]) -> Result<Vec<Section>>;

pub(crate) fn encoded_len(n: usize) -> u64 {
    8 + 17 * n as u64
}

pub(crate) fn encode(sections: &[Section]) -> Vec<u8> {
    encode_tagged(b"AFSR", sections)
}

/// The held-space record (superblock space slots 2 and 3, format version
/// 4): sections freed while snapshot readers could still see them, in the
/// same layout under the tag "AHSR"; they may touch (they are not merged).
pub(crate) fn encode_held(sections: &[Section]) -> Vec<u8> {
    encode_tagged(b"AHSR", sections)
}

/// The left-space record (superblock offsets 88 and 96): extents that
/// contiguous data moved away from, neither live nor free until a proof of
/// the file's space takes back what no structure holds (S7 in `space.rs`);
/// the same layout under the tag "ALSR", merged as the free-space record is.
pub(crate) fn encode_left(sections: &[Section]) -> Vec<u8> {
    encode_tagged(b"ALSR", sections)
}

/// Decode a left-space record ([`encode_left`]), checked as [`decode`]
/// checks.
pub(crate) fn decode_left(
    bytes: &[u8],
    at: u64,
    own_len: u64,
    eof: u64,
    live: &[(u64, u64)],
) -> Result<Vec<Section>> {
    decode_tagged("left-space record", b"ALSR", bytes, at, own_len, eof, live)
}

fn encode_tagged(tag: &[u8; 4], sections: &[Section]) -> Vec<u8> {
    let mut w = Writer::new();
    w.bytes(tag).u32(sections.len() as u32);
    for s in sections {
        w.u8(s.kind as u8).u64(s.addr).u64(s.size);
    }
    w.buf
}

/// Decode and validate against the file: in range, sorted, disjoint, not
/// touching (merging was complete), and clear of the record itself and of
/// `live`, extents known to be in use (the root group's header).
pub(crate) fn decode(
    bytes: &[u8],
    at: u64,
    own_len: u64,
    eof: u64,
    live: &[(u64, u64)],
) -> Result<Vec<Section>> {
    decode_tagged("free-space record", b"AFSR", bytes, at, own_len, eof, live)
}

/// Decode a held-space record ([`encode_held`]), checked as [`decode`]
/// checks, except that sections may touch.
pub(crate) fn decode_held(
    bytes: &[u8],
    at: u64,
    own_len: u64,
    eof: u64,
    live: &[(u64, u64)],
) -> Result<Vec<Section>> {
    decode_tagged("held-space record", b"AHSR", bytes, at, own_len, eof, live)
}

fn decode_tagged(
    what: &'static str,
    tag: &[u8; 4],
    bytes: &[u8],
    at: u64,
    own_len: u64,
    eof: u64,
    live: &[(u64, u64)],
) -> Result<Vec<Section>> {
    let mut r = Reader::new(bytes, what, at);
    if r.bytes(4)? != tag {
        return Err(r.corrupt("bad tag"));
    }
    let n = r.u32()? as usize;
    if encoded_len(n) != bytes.len() as u64 {
        return Err(r.corrupt(format!("{n} sections do not fill {} bytes", bytes.len())));
    }
    let mut out = Vec::with_capacity(n);
    let mut prev_end = PAGE_SIZE as u64;
    for i in 0..n {
        let kind = r.u8()?;
        let kind = SpaceKind::from_u8(kind)
            .ok_or_else(|| r.corrupt(format!("section {i}: kind {kind}")))?;
        let addr = r.u64()?;
        let size = r.u64()?;
        let end = addr.checked_add(size).filter(|&e| size > 0 && e <= eof);
        let Some(end) = end else {
            return Err(Error::corrupt(
                what,
                at,
                format!("section {i} ({addr}+{size}) lies outside the file"),
            ));
        };
        let touches = i > 0 && addr == prev_end && tag != b"AHSR";
        if addr < prev_end || touches {
            return Err(Error::corrupt(
                what,
                at,
                format!("section {i} at {addr} overlaps or touches the one before"),
            ));
        }
        if addr < at + own_len && at < end {
            return Err(Error::corrupt(
                what,
                at,
                format!("section {i} overlaps the record itself"),
            ));
        }
        if let Some(&(a, n)) = live
            .iter()
            .find(|&&(a, n)| addr < a.saturating_add(n) && a < end)
        {
            return Err(Error::corrupt(
                what,
                at,
                format!("section {i} ({addr}+{size}) covers the live structure at {a} ({n} bytes)"),
            ));
        }
        prev_end = end;
        out.push(Section { addr, size, kind });
    }
    Ok(out)
}
