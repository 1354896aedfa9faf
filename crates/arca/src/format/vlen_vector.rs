//! The byte vector of a variable-length dataset: object-header message 8,
//! and the 16-byte element records that point into the vector.
//!
//! Message 8 (must understand):
//! ```text
//! +0  u64 len          bytes in use; appends go here
//! +8  u64 chunk bytes  bytes per chunk (a multiple of the item size)
//! +16 u64 index        chunk-index B-tree root (0 = no chunks yet)
//! +24 u8  flags        bit 0: reuse freed ranges
//! +25 u64 free addr    blob of free ranges (0 = none): n × (u64 offset, u64 len)
//! +33 u64 free len     bytes in that blob
//! +41 filters          the filter pipeline message's body
//! ```
//! An element's record, in the dataset itself: `u64 offset, u64 length`,
//! little-endian bytes of the vector.

use crate::error::{Error, Result};
use crate::format::blob;
use crate::format::chunk_index::MAX_CHUNK_BYTES;
use crate::format::codec::{Reader, Writer};
use crate::format::datatype::VLEN_RECORD;
use crate::format::filter_pipeline::Filter;
use crate::pager::PAGE_SIZE;

/// Bytes of one free-range entry.
pub(crate) const FREE_RANGE: u64 = 16;

const FLAG_REUSE: u8 = 1;

/// The vector's description, as kept in message 8.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct VecMeta {
    /// Bytes in use; the next append starts here.
    pub(crate) len: u64,
    /// Bytes per chunk.
    pub(crate) chunk_bytes: u64,
    /// Chunk-index root.
    pub(crate) index: u64,
    pub(crate) filters: Vec<Filter>,
    /// Whether freed ranges are reused.
    pub(crate) reuse: bool,
    /// Blob holding the free ranges (0 = none) and its length.
    pub(crate) free_addr: u64,
    pub(crate) free_len: u64,
}

impl VecMeta {
    pub(crate) fn new(chunk_bytes: u64, filters: Vec<Filter>, reuse: bool) -> Self {
        VecMeta {
            len: 0,
            chunk_bytes,
            index: 0,
            filters,
            reuse,
            free_addr: 0,
            free_len: 0,
        }
    }

    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut w = Writer::new();
        w.u64(self.len)
            .u64(self.chunk_bytes)
            .u64(self.index)
            .u8(if self.reuse { FLAG_REUSE } else { 0 })
            .u64(self.free_addr)
            .u64(self.free_len);
        Filter::encode_list(&self.filters, &mut w);
        w.buf
    }

    /// Decode message 8 of the header at `addr`, whose file has `eof`
    /// bytes; `item` is the item size of the dataset's type.
    pub(crate) fn decode(body: &[u8], addr: u64, item: usize, eof: u64) -> Result<Self> {
        let mut r = Reader::new(body, "variable-length vector", addr);
        let len = r.u64()?;
        let chunk_bytes = r.u64()?;
        let index = r.u64()?;
        let flags = r.u8()?;
        let free_addr = r.u64()?;
        let free_len = r.u64()?;
        let filters = Filter::decode_list(&mut r)?;
        if Filter::is_hdf5(&filters) {
            return Err(r.corrupt("a byte vector with HDF5 filters"));
        }
        if flags & !FLAG_REUSE != 0 {
            return Err(Error::Unsupported(format!(
                "variable-length vector flags {flags:#x}"
            )));
        }
        let reuse = flags & FLAG_REUSE != 0;
        let item = item as u64;
        if chunk_bytes == 0 || chunk_bytes % item != 0 || chunk_bytes > MAX_CHUNK_BYTES {
            return Err(r.corrupt(format!("chunk of {chunk_bytes} bytes")));
        }
        if len % item != 0 {
            return Err(r.corrupt(format!("length {len} is not whole items")));
        }
        // Each chunk's entry takes file space, so there are fewer chunks
        // than bytes in the file: a bound that keeps offset arithmetic far
        // from overflow.
        if len / chunk_bytes > eof {
            return Err(r.corrupt(format!("length {len} for a file of {eof} bytes")));
        }
        let in_file = |a: u64| a == 0 || (a >= PAGE_SIZE as u64 && a < eof);
        if !in_file(index) || !in_file(free_addr) {
            return Err(r.corrupt(format!(
                "index at {index} or free-range list at {free_addr} outside the file \
                 (which ends at {eof})"
            )));
        }
        if free_len % FREE_RANGE != 0 || free_len > blob::MAX_LEN {
            return Err(r.corrupt("free-range list length is not whole entries"));
        }
        if (free_addr == 0) != (free_len == 0) || (!reuse && free_addr != 0) {
            return Err(r.corrupt("free-range list without space reuse, or the reverse"));
        }
        Ok(VecMeta {
            len,
            chunk_bytes,
            index,
            filters,
            reuse,
            free_addr,
            free_len,
        })
    }
}

/// Append the record of an element of `len` bytes at vector offset `off`.
pub(crate) fn push_record(out: &mut Vec<u8>, off: u64, len: u64) {
    out.extend_from_slice(&off.to_le_bytes());
    out.extend_from_slice(&len.to_le_bytes());
}

/// Records for `(offset, length)` pairs.
pub(crate) fn encode_records(recs: &[(u64, u64)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(recs.len() * VLEN_RECORD);
    for &(o, l) in recs {
        push_record(&mut out, o, l);
    }
    out
}

/// Turn records read as little-endian `[offset, length]` words into native
/// numbers in place, checking each names whole items inside a vector of
/// `vlen` bytes.
pub(crate) fn decode_records(
    recs: &mut [[u64; 2]],
    item: u64,
    vlen: u64,
    owner: u64,
) -> Result<()> {
    for r in recs.iter_mut() {
        let (off, len) = (u64::from_le(r[0]), u64::from_le(r[1]));
        *r = [off, len];
        if len % item != 0 || off.checked_add(len).is_none_or(|e| e > vlen) {
            return Err(Error::corrupt(
                "variable-length record",
                owner,
                format!(
                    "element at offset {off} of {len} bytes does not fit a vector of {vlen} bytes"
                ),
            ));
        }
    }
    Ok(())
}

/// Encode a free-range list: `(offset, length)` pairs in offset order.
pub(crate) fn encode_free_ranges(ranges: impl Iterator<Item = (u64, u64)>) -> Vec<u8> {
    let mut w = Writer::new();
    for (o, l) in ranges {
        w.u64(o).u64(l);
    }
    w.buf
}

/// Decode a free-range list stored at `at` for a vector of `vlen` bytes:
/// sorted, non-empty, disjoint ranges inside the vector.
pub(crate) fn decode_free_ranges(b: &[u8], at: u64, vlen: u64) -> Result<Vec<(u64, u64)>> {
    let what = "variable-length free ranges";
    if !(b.len() as u64).is_multiple_of(FREE_RANGE) {
        return Err(Error::corrupt(what, at, "length is not whole entries"));
    }
    let mut r = Reader::new(b, what, at);
    let mut out = Vec::with_capacity(b.len() / FREE_RANGE as usize);
    let mut end = 0;
    for _ in 0..b.len() / FREE_RANGE as usize {
        let (o, l) = (r.u64()?, r.u64()?);
        if l == 0 || o < end || o.checked_add(l).is_none_or(|e| e > vlen) {
            return Err(r.corrupt("ranges overlap, are empty or lie past the vector's end"));
        }
        end = o + l;
        out.push((o, l));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_roundtrip_and_checks() {
        let mut m = VecMeta::new(4096, vec![Filter::Shuffle, Filter::Zstd(3)], true);
        m.len = 400;
        m.index = 8192;
        let b = m.encode();
        assert_eq!(VecMeta::decode(&b, 0, 4, 1 << 20).unwrap(), m);
        assert!(VecMeta::decode(&b, 0, 3, 1 << 20).is_err());
        assert!(VecMeta::decode(&b[..20], 0, 4, 1 << 20).is_err());
        // The index past the end of the file.
        assert!(VecMeta::decode(&b, 0, 4, 8192).is_err());
        let mut f = m.clone();
        f.reuse = false;
        f.free_addr = 8192;
        f.free_len = 16;
        assert!(VecMeta::decode(&f.encode(), 0, 4, 1 << 20).is_err());
    }

    #[test]
    fn free_ranges_roundtrip_and_checks() {
        let b = encode_free_ranges([(0u64, 4u64), (8, 8)].into_iter());
        assert_eq!(decode_free_ranges(&b, 0, 16).unwrap(), vec![(0, 4), (8, 8)]);
        assert!(decode_free_ranges(&b, 0, 15).is_err());
        let b = encode_free_ranges([(0u64, 8u64), (4, 8)].into_iter());
        assert!(decode_free_ranges(&b, 0, 16).is_err());
    }
}
