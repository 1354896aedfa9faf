//! The header every metadata page starts with. A page is 512, 1024, 2048 or
//! 4096 bytes (its *class*, 0–3):
//!
//! ```text
//! +0  [u8; 3] family   three letters naming the structure ("AOH", "ABL", "ABI")
//! +3  u8      class    ASCII '0' + class
//! +4  u32     crc32c   of bytes [0, 4) followed by [8, page size)
//! +8  ..      payload
//! ```
//! A byte layout only: the pager reads and writes pages with it.

/// Size of the largest metadata page, and of the superblock's region.
pub const PAGE_SIZE: usize = 4096;
/// Bytes of payload in the largest page after its tag and checksum.
pub const PAGE_PAYLOAD: usize = PAGE_SIZE - HEADER;
/// Size of the smallest page (class 0).
pub const MIN_PAGE: usize = 512;
/// Number of page classes: 512, 1024, 2048, 4096 bytes.
pub const PAGE_CLASSES: u8 = 4;
/// Bytes before the payload.
pub(crate) const HEADER: usize = 8;

/// Three letters naming the structure a page holds.
pub(crate) type Family = [u8; 3];

/// Bytes in a page of `class`.
pub(crate) fn class_size(class: u8) -> usize {
    MIN_PAGE << class
}

/// The smallest class whose payload holds `len` bytes.
pub(crate) fn class_for(len: usize) -> Option<u8> {
    (0..PAGE_CLASSES).find(|&c| class_size(c) - HEADER >= len)
}

/// The class a page header names, if it is one.
pub(crate) fn class_of(head: &[u8]) -> Option<u8> {
    let c = head.get(3)?.wrapping_sub(b'0');
    (c < PAGE_CLASSES).then_some(c)
}

/// Write the family and class; the checksum is stamped at write-out.
pub(crate) fn write_header(page: &mut [u8], family: &Family, class: u8) {
    page[0..3].copy_from_slice(family);
    page[3] = b'0' + class;
    page[4..8].fill(0);
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
    fn stamped_pages_verify_and_name_their_class() {
        let mut p = vec![0u8; class_size(1)];
        write_header(&mut p, b"AOH", 1);
        p[HEADER] = 7;
        stamp(&mut p);
        assert!(verifies(&p));
        assert_eq!(class_of(&p), Some(1));
        p[HEADER + 1] ^= 1;
        assert!(!verifies(&p));
        assert_eq!(class_of(b"AOH9"), None);
        assert_eq!(class_for(504), Some(0));
        assert_eq!(class_for(505), Some(1));
        assert_eq!(class_for(PAGE_PAYLOAD + 1), None);
    }
}
