//! The storage context the format layer works in: the page cache, the file
//! allocator and checksummed variable-size blobs, bundled so that one
//! `&mut Store` reaches everything below the object model.

use crate::error::{Error, Result};
use crate::format::codec::{Reader, Writer};
use crate::io::Driver;
use crate::pager::{class_size, Pager};
use crate::space::{FileSpace, SpaceKind};

/// Bytes before a blob's data: tag, checksum, length.
pub(crate) const BLOB_HEADER: u64 = 16;
/// Largest blob accepted when reading, so a damaged length cannot force a
/// huge allocation.
pub(crate) const MAX_BLOB: u64 = 1 << 32;

pub(crate) struct Store {
    pub(crate) pager: Pager,
    pub(crate) space: FileSpace,
    /// Whether the file was opened for writing.
    pub(crate) writable: bool,
}

impl Store {
    pub(crate) fn driver(&self) -> &dyn Driver {
        self.pager.driver()
    }

    pub(crate) fn check_writable(&self) -> Result<()> {
        if self.writable {
            Ok(())
        } else {
            Err(Error::ReadOnly)
        }
    }

    /// Space for a metadata page of `class`.
    pub(crate) fn alloc_page(&mut self, class: u8) -> Result<u64> {
        self.space.alloc(SpaceKind::Meta, class_size(class) as u64)
    }

    /// Give back a page's space; its size comes from its tag.
    pub(crate) fn free_page(&mut self, addr: u64) -> Result<()> {
        let size = self.pager.size_of(addr)?;
        self.pager.forget(addr);
        self.space.free(SpaceKind::Meta, addr, size as u64);
        Ok(())
    }

    /// Write `data` as a new checksummed blob and return its address.
    pub(crate) fn write_blob(&mut self, data: &[u8]) -> Result<u64> {
        let addr = self
            .space
            .alloc(SpaceKind::Meta, BLOB_HEADER + data.len() as u64)?;
        self.write_blob_at(addr, data)?;
        Ok(addr)
    }

    /// Write a blob into space the caller already reserved.
    pub(crate) fn write_blob_at(&mut self, addr: u64, data: &[u8]) -> Result<()> {
        let mut w = Writer::new();
        w.bytes(b"ABLB");
        let mut body = Writer::new();
        body.u64(data.len() as u64).bytes(data);
        let crc = crc32c::crc32c(&body.buf);
        w.u32(crc).bytes(&body.buf);
        let end = addr + w.buf.len() as u64;
        self.pager.driver_mut().write_at(addr, &w.buf)?;
        self.pager.extend_limit(end);
        Ok(())
    }

    /// Read back a blob written by [`Store::write_blob`].
    pub(crate) fn read_blob(&self, addr: u64) -> Result<Vec<u8>> {
        let what = "blob";
        let limit = self.pager.limit();
        if addr == 0 || addr.saturating_add(BLOB_HEADER) > limit {
            return Err(Error::corrupt(what, addr, "address outside the file"));
        }
        let mut head = [0u8; BLOB_HEADER as usize];
        self.driver().read_at(addr, &mut head)?;
        let mut r = Reader::new(&head, what, addr);
        if r.bytes(4)? != b"ABLB" {
            return Err(Error::corrupt(what, addr, "bad tag"));
        }
        let crc = r.u32()?;
        let len = r.u64()?;
        if len > MAX_BLOB || addr + BLOB_HEADER + len > limit {
            return Err(Error::corrupt(
                what,
                addr,
                format!("length {len} runs past the file"),
            ));
        }
        let mut data = vec![0u8; len as usize];
        self.driver().read_at(addr + BLOB_HEADER, &mut data)?;
        let c = crc32c::crc32c_append(crc32c::crc32c(&head[8..16]), &data);
        if c != crc {
            return Err(Error::corrupt(what, addr, "checksum mismatch"));
        }
        Ok(data)
    }

    pub(crate) fn free_blob(&mut self, addr: u64, len: u64) {
        self.space.free(SpaceKind::Meta, addr, BLOB_HEADER + len);
    }
}
