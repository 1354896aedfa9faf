//! The header every metadata page starts with. A page is any multiple of
//! 32 bytes from 64 to 4096, so a structure takes the space it needs:
//!
//! ```text
//! +0  [u8; 3] family   three letters naming the structure ("AOH", "ABL", "ABI")
//! +3  u8      size     0x80 + size / 32 - 1 (0x81 = 64 bytes .. 0xFF = 4096);
//!                      files of format version 1 also hold '0'..'3', the
//!                      power-of-two sizes 512 << (byte - '0')
//! +4  u32     crc32c   of bytes [0, 4) followed by [8, page size)
//! +8  ..      payload
//! ```
//! A byte layout only: the pager reads and writes pages with it.

/// Size of the largest metadata page, and of the superblock's region.
pub const PAGE_SIZE: usize = 4096;
/// Bytes of payload in the largest page after its tag and checksum.
pub const PAGE_PAYLOAD: usize = PAGE_SIZE - HEADER;
/// Size of the smallest page.
pub const MIN_PAGE: usize = 64;
/// Page sizes are multiples of this.
pub const PAGE_GRAIN: usize = 32;
/// Bytes before the payload.
pub(crate) const HEADER: usize = 8;
/// The size byte of the first new-style code (a 32-byte page, never written).
const CODE_BASE: u8 = 0x80;

/// Three letters naming the structure a page holds.
pub(crate) type Family = [u8; 3];

/// The smallest page whose payload holds `len` bytes.
pub(crate) fn size_for(len: usize) -> Option<usize> {
    let size = len
        .checked_add(HEADER)?
        .next_multiple_of(PAGE_GRAIN)
        .max(MIN_PAGE);
    (size <= PAGE_SIZE).then_some(size)
}

/// The page size a page header names, if it is one.
pub(crate) fn size_of(head: &[u8]) -> Option<usize> {
    match *head.get(3)? {
        c @ b'0'..=b'3' => Some(512 << (c - b'0')),
        c if c > CODE_BASE => Some((usize::from(c - CODE_BASE) + 1) * PAGE_GRAIN),
        _ => None,
    }
}

/// Whether `size` is a size the page holding `used` payload bytes may
/// have: the smallest multiple of 32 (at least 64) that holds them, or, for
/// pages a version-1 writer sized (a class digit, or a new size byte that a
/// later rewrite of such a page wrote), the smallest `512 << k`.
pub(crate) fn size_holds(page: &[u8], size: usize, used: usize) -> bool {
    let need = used + HEADER;
    let class = (0..4)
        .map(|k| 512usize << k)
        .find(|&s| s >= need)
        .unwrap_or(PAGE_SIZE);
    match page.get(3) {
        Some(&c) if is_class_code(c) => size == class,
        _ => size == size_for(used).unwrap_or(PAGE_SIZE) || size == class,
    }
}

/// Whether a size byte is a version-1 class digit ('0'..'3').
pub(crate) fn is_class_code(code: u8) -> bool {
    (b'0'..=b'3').contains(&code)
}

/// Whether `size` is a size a page may have.
pub(crate) fn valid_size(size: usize) -> bool {
    (MIN_PAGE..=PAGE_SIZE).contains(&size) && size.is_multiple_of(PAGE_GRAIN)
}

/// Write the family and the page's size (its length, which must be a
/// [`valid_size`]); the checksum is stamped at write-out.
pub(crate) fn write_header(page: &mut [u8], family: &Family) {
    debug_assert!(valid_size(page.len()));
    page[0..3].copy_from_slice(family);
    page[3] = CODE_BASE + (page.len() / PAGE_GRAIN - 1) as u8;
    page[4..8].fill(0);
}

/// A page's payload, the bytes after its header (none if the page is
/// shorter than a header, which a page the pager verified never is).
pub(crate) fn payload(page: &[u8]) -> &[u8] {
    page.get(HEADER..).unwrap_or_default()
}

fn checksum(page: &[u8]) -> u32 {
    let c = crc32c::crc32c(&page[0..4]);
    crc32c::crc32c_append(c, &page[HEADER..])
}

/// Fill in the checksum of a whole page.
pub(crate) fn stamp(page: &mut [u8]) {
    let crc = checksum(page);
    page[4..8].copy_from_slice(&crc.to_le_bytes());
}

/// Whether a whole page's checksum verifies.
pub(crate) fn verifies(page: &[u8]) -> bool {
    page.len() >= HEADER
        && u32::from_le_bytes([page[4], page[5], page[6], page[7]]) == checksum(page)
}

/// A printable name for a page family.
pub(crate) fn family_name(family: &Family) -> &'static str {
    match family {
        b"ABL" => "B-tree leaf page",
        b"ABI" => "B-tree internal page",
        b"AOH" => "object header",
        _ => "metadata page",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamped_pages_verify_and_name_their_size() {
        for size in (MIN_PAGE..=PAGE_SIZE).step_by(PAGE_GRAIN) {
            let mut p = vec![0u8; size];
            write_header(&mut p, b"AOH");
            p[HEADER] = 7;
            stamp(&mut p);
            assert!(verifies(&p));
            assert_eq!(size_of(&p), Some(size));
            p[HEADER + 1] ^= 1;
            assert!(!verifies(&p));
        }
        assert_eq!(size_of(b"AOH0"), Some(512));
        assert_eq!(size_of(b"AOH3"), Some(4096));
        assert_eq!(size_of(b"AOH4"), None);
        assert_eq!(size_of(b"AOH\x80"), None);
        assert_eq!(size_for(0), Some(64));
        assert_eq!(size_for(56), Some(64));
        assert_eq!(size_for(57), Some(96));
        assert_eq!(size_for(PAGE_PAYLOAD), Some(PAGE_SIZE));
        assert_eq!(size_for(PAGE_PAYLOAD + 1), None);
        assert!(!valid_size(32) && !valid_size(100) && valid_size(96));
        // A page's own size: the smallest that holds its contents, in
        // either size scheme; a larger one takes in a neighbour.
        assert!(size_holds(b"AOH\x81", 64, 40) && !size_holds(b"AOH\x82", 96, 40));
        assert!(size_holds(b"AOH\x8f", 512, 40) && size_holds(b"AOH0", 512, 40));
        assert!(!size_holds(b"AOH1", 1024, 40) && size_holds(b"AOH1", 1024, 600));
    }
}
