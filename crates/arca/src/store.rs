//! The storage context the format layer works in: the page cache, the file
//! allocator and checksummed variable-size blobs, bundled so that one
//! `&mut Store` reaches everything below the object model.
//!
//! Every byte written outside a page goes through [`Store::write_data`]
//! (or [`Store::write_data_from_file`], which copies), which checks that
//! it lands inside the extent its object owns and that the extent is live;
//! every structure read from the file is checked the same way
//! ([`Store::check_live`]) before it is trusted.

use crate::error::{Error, Result};
use crate::format::blob;
use crate::io::Driver;
use crate::pager::Pager;
use crate::space::{FileSpace, Section, SpaceKind};

/// Bytes before a blob's data: tag, checksum, length.
pub(crate) const BLOB_HEADER: u64 = blob::HEADER;

pub(crate) struct Store {
    pub(crate) pager: Pager,
    pub(crate) space: FileSpace,
    /// Whether the file was opened for writing.
    pub(crate) writable: bool,
    /// What reads of this file fetched (shared with reads that run without
    /// the file's lock).
    pub(crate) stats: std::sync::Arc<crate::io::Counters>,
    /// Chunk bytes written since the driver was last asked to start
    /// writing them back.
    pub(crate) unstarted: u64,
}

/// After this many bytes of chunks stored, the driver is asked to start
/// writing them to disk: a large chunked write's commit then finds most of
/// them written while the next ones were being filtered. (Asked for one
/// large contiguous write, the kernel only made the writer wait.)
const WRITEBACK_BYTES: u64 = 8 << 20;

impl Store {
    /// Note `n` bytes of chunks written; every [`WRITEBACK_BYTES`], start
    /// their writeback.
    pub(crate) fn chunk_written(&mut self, n: u64) {
        self.unstarted += n;
        if self.unstarted >= WRITEBACK_BYTES {
            self.unstarted = 0;
            self.pager.driver().start_writeback();
        }
    }

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

    /// Check that a structure read from the file, `len` bytes at `addr`,
    /// may be live: inside the file and clear of free space (S5).
    ///
    /// # Errors
    /// `Corrupt` naming `what`.
    pub(crate) fn check_live(&self, what: &'static str, addr: u64, len: u64) -> Result<()> {
        self.space.check_live(what, addr, len)?;
        if addr.checked_add(len).is_none_or(|e| e > self.pager.limit()) {
            return Err(Error::corrupt(
                what,
                addr,
                format!(
                    "{len} bytes at {addr} run past the file's {} bytes",
                    self.pager.limit()
                ),
            ));
        }
        Ok(())
    }

    /// Write `data` at `at`, inside the extent `(addr, len)` that the
    /// caller's object owns: the one way bytes outside pages (data, chunks,
    /// blobs) reach the file.
    ///
    /// # Errors
    /// `Corrupt` if the write leaves the extent or the extent is not live
    /// (its owner was decoded from a damaged file); nothing is written then.
    pub(crate) fn write_data(
        &mut self,
        what: &'static str,
        ext: (u64, u64),
        at: u64,
        data: &[u8],
    ) -> Result<()> {
        let (addr, len) = ext;
        let inside = at >= addr
            && at
                .checked_add(data.len() as u64)
                .is_some_and(|e| addr.checked_add(len).is_some_and(|x| e <= x));
        if !inside {
            return Err(Error::corrupt(
                what,
                addr,
                format!(
                    "a write of {} bytes at {at} leaves its extent of {len} bytes",
                    data.len()
                ),
            ));
        }
        self.space.check_live(what, addr, len)?;
        self.pager.driver_mut().write_at(at, data)?;
        self.pager.extend_limit(at + data.len() as u64);
        Ok(())
    }

    /// [`Store::write_data`] of `len` bytes taken from `src` at `src_pos`
    /// (see [`crate::io::Driver::copy_from_file`]).
    pub(crate) fn write_data_from_file(
        &mut self,
        what: &'static str,
        ext: (u64, u64),
        src: &std::fs::File,
        src_pos: u64,
        len: u64,
    ) -> Result<()> {
        let (addr, ext_len) = ext;
        if len > ext_len {
            return Err(Error::corrupt(
                what,
                addr,
                format!("a copy of {len} bytes leaves its extent of {ext_len} bytes"),
            ));
        }
        self.space.check_live(what, addr, ext_len)?;
        self.pager
            .driver_mut()
            .copy_from_file(src, src_pos, addr, len)?;
        self.pager.extend_limit(addr + len);
        Ok(())
    }

    /// Space for a metadata page of `size` bytes.
    pub(crate) fn alloc_page(&mut self, size: usize) -> Result<u64> {
        self.space.alloc(SpaceKind::Meta, size as u64)
    }

    /// Give back a page's space; its size comes from its tag.
    pub(crate) fn free_page(&mut self, addr: u64) -> Result<()> {
        let size = self.pager.size_of(addr)?;
        self.space.free(SpaceKind::Meta, addr, size as u64)?;
        self.pager.forget(addr);
        Ok(())
    }

    /// Write `data` as a new checksummed blob and return its address.
    pub(crate) fn write_blob(&mut self, data: &[u8]) -> Result<u64> {
        let len = BLOB_HEADER + data.len() as u64;
        let addr = self.space.alloc(SpaceKind::Meta, len)?;
        self.write_blob_at(addr, data)?;
        Ok(addr)
    }

    /// Write a blob into space the caller already reserved.
    pub(crate) fn write_blob_at(&mut self, addr: u64, data: &[u8]) -> Result<()> {
        let bytes = blob::encode(data);
        self.write_data("blob", (addr, bytes.len() as u64), addr, &bytes)
    }

    /// Read back a blob written by [`Store::write_blob`].
    pub(crate) fn read_blob(&self, addr: u64) -> Result<Vec<u8>> {
        self.check_live("blob", addr, BLOB_HEADER)?;
        let mut head = [0u8; BLOB_HEADER as usize];
        self.driver().read_at(addr, &mut head)?;
        let (crc, len) = blob::decode_header(&head, addr, self.pager.limit())?;
        self.check_live("blob", addr, BLOB_HEADER + len)?;
        let mut data = vec![0u8; len as usize];
        self.driver().read_at(addr + BLOB_HEADER, &mut data)?;
        blob::verify(&head, &data, crc, addr)?;
        Ok(data)
    }

    /// Give back the space of a blob of `len` data bytes.
    pub(crate) fn free_blob(&mut self, addr: u64, len: u64) -> Result<()> {
        self.space.free(SpaceKind::Meta, addr, blob_extent(len)?)
    }

    /// Give back the extents of structures that die together (a deleted
    /// object and all it owns), all or none (S5); cached pages among them
    /// are dropped unwritten.
    pub(crate) fn free_structures(&mut self, extents: &[Section]) -> Result<()> {
        self.space.free_all(extents)?;
        for e in extents.iter().filter(|e| e.kind == SpaceKind::Meta) {
            self.pager.forget(e.addr);
        }
        Ok(())
    }
}

/// Bytes a blob of `len` data bytes occupies.
pub(crate) fn blob_extent(len: u64) -> Result<u64> {
    len.checked_add(BLOB_HEADER)
        .filter(|_| len <= blob::MAX_LEN)
        .ok_or_else(|| Error::corrupt("blob", 0, format!("length {len} is implausible")))
}
