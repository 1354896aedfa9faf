//! The free-space record: the free sections saved at commit so that space
//! freed in one session is reused in the next. Stored as a blob whose
//! address is the superblock's first space slot.
//!
//! ```text
//! +0  [u8; 4] tag "AFSR"
//! +4  u32     n
//! +8  n × { u8 kind (0 metadata, 1 raw), u64 addr, u64 size }, in address order
//! ```

use crate::error::{Error, Result};
use crate::format::codec::{Reader, Writer};
use crate::pager::PAGE_SIZE;
use crate::space::{Section, SpaceKind};

pub(crate) fn encoded_len(n: usize) -> u64 {
    8 + 17 * n as u64
}

pub(crate) fn encode(sections: &[Section]) -> Vec<u8> {
    let mut w = Writer::new();
    w.bytes(b"AFSR").u32(sections.len() as u32);
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
    let what = "free-space record";
    let mut r = Reader::new(bytes, what, at);
    if r.bytes(4)? != b"AFSR" {
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
        if addr < prev_end || (i > 0 && addr == prev_end) {
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
