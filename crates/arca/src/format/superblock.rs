//! The superblock: the first page of every arca file.
//!
//! ```text
//! +0   [u8; 8] magic      89 'A' 'R' 'C' 'A' 0D 0A 1A
//! +8   u32     crc32c     of bytes [12, SUPERBLOCK_LEN)
//! +12  u32     version    format version (4; 1 to 3 are read and
//!                         upgraded to 4 at the first commit)
//! +16  u32     page size  4096
//! +20  u32     flags      0
//! +24  u64     root       address of the root group's object header
//! +32  u64     eof        logical end of file: every allocated byte lies below it
//! +40  u64 × 4 space      free-space record address and length; held-space
//!                         record address and length (version 4; 0 = none)
//! +72  u64     generation incremented by every commit
//! +80  u64     links      root of the link-count B-tree: objects with more
//!                         than one hard link (0 = none; version 3)
//! +88  u64 × 2 left       left-space record address and length: extents
//!                         contiguous data moved away from, unused until a
//!                         proof (0 = none; zero in older files)
//! +104 u64     meta_end   one past the metadata region a writer laid out
//!                         first: below it lie only the superblock, metadata
//!                         and unused bytes (0 = unknown; zero in older files)
//! +112 ..      reserved, zero up to SUPERBLOCK_LEN
//! ```
//! The superblock occupies the whole first page, so the first page-aligned
//! object starts at 4096.

use crate::error::{Error, Result};
use crate::format::codec::{Reader, Writer};
use crate::format::page::PAGE_SIZE;

/// The file signature; the 0x89 and the CR LF / SUB bytes catch text-mode mangling.
pub const MAGIC: [u8; 8] = [0x89, b'A', b'R', b'C', b'A', 0x0D, 0x0A, 0x1A];
/// The format version this library writes. Version 2 added pages of any
/// multiple of 32 bytes and compact datasets; version 3 soft, external and
/// second hard links and creation order; version 4 space held for snapshot
/// readers (and it keeps libraries that do not serve them from writing). Older files are read as they are.
pub const VERSION: u32 = 4;
/// The oldest format version this library reads.
pub const OLDEST_VERSION: u32 = 1;
/// Bytes the superblock covers with its checksum.
pub(crate) const SUPERBLOCK_LEN: usize = 128;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Superblock {
    pub(crate) root: u64,
    pub(crate) eof: u64,
    pub(crate) space: [u64; 4],
    pub(crate) generation: u64,
    /// Root of the link-count B-tree (0: every object has one link).
    pub(crate) links: u64,
    /// The left-space record's address and length (0: none).
    pub(crate) left: [u64; 2],
    /// One past the metadata region laid out first (0: unknown). No data
    /// lies below it; metadata may also lie past it. A remote reader
    /// fetches the file's first `meta_end` bytes at once.
    pub(crate) meta_end: u64,
}

impl Superblock {
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut body = Writer::new();
        body.u32(VERSION)
            .u32(PAGE_SIZE as u32)
            .u32(0)
            .u64(self.root)
            .u64(self.eof);
        for s in self.space {
            body.u64(s);
        }
        body.u64(self.generation)
            .u64(self.links)
            .u64(self.left[0])
            .u64(self.left[1])
            .u64(self.meta_end);
        body.buf.resize(SUPERBLOCK_LEN - 12, 0);
        let mut w = Writer::new();
        w.bytes(&MAGIC)
            .u32(crc32c::crc32c(&body.buf))
            .bytes(&body.buf);
        w.buf
    }

    /// Decode and verify; `file_len` is the actual length of the storage.
    pub(crate) fn decode(bytes: &[u8], file_len: u64) -> Result<Superblock> {
        let what = "superblock";
        if bytes.len() < 8 || bytes[0..8] != MAGIC {
            if is_hdf5(bytes) {
                return Err(Error::Unsupported(
                    "this is an HDF5 file (netCDF-4 files are HDF5 too), not an arca file: \
                     convert it with `arca import FILE OUT.arca` (in Python, \
                     arca.import_hdf5(FILE, OUT))"
                        .into(),
                ));
            }
            return Err(Error::corrupt(what, 0, "not an arca file (bad signature)"));
        }
        if bytes.len() < SUPERBLOCK_LEN {
            return Err(Error::corrupt(what, 0, "shorter than a superblock"));
        }
        let mut r = Reader::new(bytes, what, 0);
        r.bytes(8)?;
        let crc = r.u32()?;
        if crc != crc32c::crc32c(&bytes[12..SUPERBLOCK_LEN]) {
            return Err(Error::corrupt(what, 0, "checksum mismatch"));
        }
        let version = r.u32()?;
        if !(OLDEST_VERSION..=VERSION).contains(&version) {
            return Err(Error::Unsupported(format!(
                "format version {version} (this library reads {OLDEST_VERSION} to {VERSION})"
            )));
        }
        let page = r.u32()?;
        if page as usize != PAGE_SIZE {
            return Err(r.corrupt(format!("page size {page}")));
        }
        r.u32()?;
        let root = r.u64()?;
        let eof = r.u64()?;
        let mut space = [0u64; 4];
        for s in space.iter_mut() {
            *s = r.u64()?;
        }
        let generation = r.u64()?;
        // Reserved (zero) before version 3.
        let links = r.u64()?;
        if links != 0 && (links < PAGE_SIZE as u64 || links >= eof) {
            return Err(r.corrupt(format!("link-count tree at {links} outside the file")));
        }
        // Reserved (zero) in older files.
        let left = [r.u64()?, r.u64()?];
        if (left[0] == 0) != (left[1] == 0)
            || (left[0] != 0 && (left[0] < PAGE_SIZE as u64 || left[0] >= eof))
        {
            return Err(r.corrupt(format!(
                "left-space record at {} ({} bytes) outside the file",
                left[0], left[1]
            )));
        }
        // Reserved (zero) in older files.
        let meta_end = r.u64()?;
        if meta_end != 0 && (meta_end < PAGE_SIZE as u64 || meta_end > eof) {
            return Err(r.corrupt(format!(
                "metadata region ending at {meta_end} outside the file (eof {eof})"
            )));
        }
        if eof > file_len {
            return Err(r.corrupt(format!(
                "file is truncated: {file_len} bytes, but data extends to {eof}"
            )));
        }
        if root < PAGE_SIZE as u64 || root >= eof {
            return Err(r.corrupt(format!("root object address {root} outside the file")));
        }
        Ok(Superblock {
            root,
            eof,
            space,
            generation,
            links,
            left,
            meta_end,
        })
    }
}

/// HDF5's signature, found at offset 0 or after a user block of 512 bytes
/// times a power of two.
const HDF5_MAGIC: [u8; 8] = *b"\x89HDF\r\n\x1a\n";

/// Whether the first bytes of a file are an HDF5 file's.
fn is_hdf5(bytes: &[u8]) -> bool {
    [0usize, 512, 1024, 2048]
        .iter()
        .any(|&at| bytes.get(at..at + 8) == Some(&HDF5_MAGIC[..]))
}

/// The generation in a superblock's bytes, if they verify.
pub(crate) fn generation_in(b: &[u8]) -> Option<u64> {
    let covered = b.get(12..SUPERBLOCK_LEN)?;
    let mut r = Reader::new(b, "superblock", 0);
    if r.bytes(8).ok()? != MAGIC || r.u32().ok()? != crc32c::crc32c(covered) {
        return None;
    }
    // Version, page size, flags, root, eof and the space slots: 60 bytes.
    r.bytes(60).ok()?;
    r.u64().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_hdf5_file_is_named_with_how_to_convert_it() {
        let mut b = vec![0u8; 4096];
        b[..8].copy_from_slice(&HDF5_MAGIC);
        let e = Superblock::decode(&b, 4096).unwrap_err().to_string();
        assert!(e.contains("HDF5") && e.contains("arca import"), "{e}");
        let mut b = vec![0u8; 4096];
        b[512..520].copy_from_slice(&HDF5_MAGIC);
        assert!(matches!(
            Superblock::decode(&b, 4096),
            Err(Error::Unsupported(_))
        ));
        let e = Superblock::decode(&[1u8; 4096], 4096).unwrap_err();
        assert!(matches!(e, Error::Corrupt { .. }));
    }

    #[test]
    fn generation_is_read_only_from_a_verified_superblock() {
        let sb = Superblock {
            root: 4096,
            eof: 8192,
            space: [0; 4],
            generation: 77,
            links: 0,
            left: [5000, 8],
            meta_end: 6000,
        };
        let mut b = sb.encode();
        assert_eq!(b.len(), SUPERBLOCK_LEN);
        assert_eq!(generation_in(&b), Some(77));
        assert_eq!(Superblock::decode(&b, 8192).unwrap(), sb);
        assert_eq!(generation_in(&b[..SUPERBLOCK_LEN - 1]), None);
        b[100] ^= 1;
        assert_eq!(generation_in(&b), None);
    }

    #[test]
    fn a_metadata_region_past_the_end_of_file_is_damage() {
        let sb = |meta_end| Superblock {
            root: 4096,
            eof: 8192,
            space: [0; 4],
            generation: 1,
            links: 0,
            left: [0; 2],
            meta_end,
        };
        for ok in [0, 4096, 8192] {
            assert_eq!(Superblock::decode(&sb(ok).encode(), 8192).unwrap(), sb(ok));
        }
        for bad in [1, 4095, 8193, u64::MAX] {
            let e = Superblock::decode(&sb(bad).encode(), 1 << 20).unwrap_err();
            assert!(matches!(e, Error::Corrupt { .. }), "{bad}: {e}");
        }
    }
}
