//! Chunk-index entries: one per stored chunk, in a B-tree keyed by the
//! chunk's grid coordinates. Chunked datasets and variable-length byte
//! vectors both index their chunks this way.
//!
//! Key: the grid coordinates, each a big-endian u64 (so byte order is
//! coordinate order), `8 × rank` bytes. Value (24 bytes):
//! ```text
//! +0  u64 addr   file address of the stored chunk
//! +8  u64 size   stored (filtered) bytes
//! +16 u32 mask   0 = every filter applied; u32::MAX = stored unfiltered;
//!                under an HDF5 pipeline also HDF5's mask (bit i: filter i
//!                skipped, optional or not); format/filter_pipeline.rs says
//!                which masks a pipeline allows
//! +20 u32 crc    CRC32C of the stored bytes
//! ```
//! Chunks carry a checksum like metadata does, so damaged data is reported
//! with its address instead of being decoded into wrong values.

use crate::error::{Error, Result};
use crate::format::codec::Reader;
use crate::format::filter_pipeline::Filter;
use crate::format::shape::MAX_RANK;

/// Largest chunk, in bytes (of a dataset or a byte vector).
pub const MAX_CHUNK_BYTES: u64 = 1 << 31;
/// Bytes of an entry's value.
pub(crate) const ENTRY_LEN: usize = 24;
/// Longest key: one u64 per dimension.
pub(crate) const MAX_KEY: usize = 8 * MAX_RANK;
/// Slack a compressor may add over a chunk's unfiltered size before an entry's
/// size is implausible.
const SLACK: u64 = 1 << 16;

/// Where one chunk is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ChunkRef {
    pub(crate) addr: u64,
    pub(crate) size: u64,
    pub(crate) mask: u32,
    pub(crate) crc: u32,
}

impl ChunkRef {
    pub(crate) fn encode(&self) -> [u8; ENTRY_LEN] {
        // Built in place: an entry is encoded for every chunk written.
        let mut b = [0u8; ENTRY_LEN];
        b[0..8].copy_from_slice(&self.addr.to_le_bytes());
        b[8..16].copy_from_slice(&self.size.to_le_bytes());
        b[16..20].copy_from_slice(&self.mask.to_le_bytes());
        b[20..24].copy_from_slice(&self.crc.to_le_bytes());
        b
    }

    /// Decode an entry of the index whose root is at `root` and check it
    /// against its chunk: `chunk_bytes` decoded, through the owner's
    /// `filters`.
    pub(crate) fn decode(
        b: &[u8],
        root: u64,
        chunk_bytes: u64,
        filters: &[Filter],
    ) -> Result<Self> {
        let mut r = Reader::new(b, "chunk index entry", root);
        let e = ChunkRef {
            addr: r.u64()?,
            size: r.u64()?,
            mask: r.u32()?,
            crc: r.u32()?,
        };
        if b.len() != ENTRY_LEN {
            return Err(r.corrupt(format!("entry of {} bytes, not {ENTRY_LEN}", b.len())));
        }
        if !Filter::mask_valid(filters, e.mask) {
            return Err(r.corrupt(format!("filter mask {:#x}", e.mask)));
        }
        // Unfiltered chunks are stored exactly as they are read.
        let unfiltered = Filter::unfiltered(filters, e.mask);
        let plausible = if unfiltered {
            e.size == chunk_bytes
        } else {
            e.size > 0 && e.size <= chunk_bytes.saturating_mul(2).saturating_add(SLACK)
        };
        if !plausible {
            return Err(r.corrupt(format!(
                "chunk at {} of {} stored bytes for {chunk_bytes} bytes of data",
                e.addr, e.size
            )));
        }
        Ok(e)
    }
}

/// The index key of `coords`, built in `buf` (no allocation per chunk).
pub(crate) fn key_into<'b>(coords: &[u64], buf: &'b mut [u8; MAX_KEY]) -> Result<&'b [u8]> {
    if coords.len() > MAX_RANK {
        return Err(Error::invalid(format!(
            "rank {} exceeds {MAX_RANK}",
            coords.len()
        )));
    }
    for (c, slot) in coords.iter().zip(buf.chunks_exact_mut(8)) {
        slot.copy_from_slice(&c.to_be_bytes());
    }
    Ok(&buf[..coords.len() * 8])
}

/// The index key of `coords`.
pub(crate) fn key(coords: &[u64]) -> Vec<u8> {
    coords.iter().flat_map(|c| c.to_be_bytes()).collect()
}

/// Decode a key of an index of `rank` dimensions and check it lies in the
/// chunk grid `grid` (chunks per dimension).
pub(crate) fn decode_key(k: &[u8], grid: &[u64], root: u64) -> Result<Vec<u64>> {
    if k.len() != grid.len() * 8 {
        return Err(Error::corrupt(
            "chunk index",
            root,
            "key length does not match rank",
        ));
    }
    let mut r = Reader::new(k, "chunk index", root);
    let coords = (0..grid.len())
        .map(|_| r.u64_be())
        .collect::<Result<Vec<u64>>>()?;
    if coords.iter().zip(grid).any(|(c, g)| c >= g) {
        return Err(Error::corrupt(
            "chunk index",
            root,
            format!("chunk {coords:?} lies outside the grid {grid:?}"),
        ));
    }
    Ok(coords)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::filter_pipeline::{Hdf5Filter, MASK_UNFILTERED};

    fn native() -> Vec<Filter> {
        vec![Filter::Zstd(3)]
    }

    #[test]
    fn entries_are_checked_against_their_chunk() {
        let e = ChunkRef {
            addr: 8192,
            size: 100,
            mask: 0,
            crc: 7,
        };
        assert_eq!(ChunkRef::decode(&e.encode(), 0, 400, &native()).unwrap(), e);
        // Unfiltered, the stored size is the chunk's size.
        assert!(ChunkRef::decode(&e.encode(), 0, 400, &[]).is_err());
        let unfiltered = ChunkRef {
            mask: MASK_UNFILTERED,
            ..e
        };
        assert!(ChunkRef::decode(&unfiltered.encode(), 0, 400, &native()).is_err());
        let bad = ChunkRef { mask: 3, ..e };
        assert!(ChunkRef::decode(&bad.encode(), 0, 400, &native()).is_err());
        let huge = ChunkRef {
            size: u64::MAX,
            ..e
        };
        assert!(ChunkRef::decode(&huge.encode(), 0, 400, &native()).is_err());
        assert!(ChunkRef::decode(&e.encode()[..20], 0, 400, &native()).is_err());
        assert_eq!(decode_key(&key(&[1, 2]), &[2, 3], 0).unwrap(), vec![1, 2]);
        assert!(decode_key(&key(&[2, 2]), &[2, 3], 0).is_err());
        assert!(decode_key(&key(&[1]), &[2, 3], 0).is_err());
    }

    #[test]
    fn hdf5_masks_name_skipped_optional_filters() {
        let h5 = vec![
            Filter::Hdf5(Hdf5Filter::new(2, false, "", &[4])),
            Filter::Hdf5(Hdf5Filter::new(32000, true, "lzf", &[4, 261, 400])),
        ];
        let e = ChunkRef {
            addr: 8192,
            size: 100,
            mask: 2,
            crc: 7,
        };
        // lzf skipped: a filtered chunk of any plausible size.
        assert_eq!(ChunkRef::decode(&e.encode(), 0, 400, &h5).unwrap(), e);
        // A bit past the pipeline is not a filter; arca's pipelines know
        // only all or nothing.
        assert!(ChunkRef::decode(&ChunkRef { mask: 4, ..e }.encode(), 0, 400, &h5).is_err());
        assert!(!Filter::mask_valid(&native(), 2));
        // Every filter skipped: the chunk's own size.
        let all = ChunkRef { mask: 3, ..e };
        assert!(ChunkRef::decode(&all.encode(), 0, 400, &h5).is_err());
        assert!(ChunkRef::decode(&ChunkRef { size: 400, ..all }.encode(), 0, 400, &h5).is_ok());
        assert!(Filter::unfiltered(&h5, 3) && !Filter::unfiltered(&h5, 2));
    }
}
