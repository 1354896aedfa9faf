//! An in-memory file whose bytes live in a compressed arena (`compll`), so
//! a scratch file costs a fraction of its size in RAM.

use std::sync::Arc;

use compll::{Codec, Config, Handle, SharedArena};

use super::driver::Driver;
use crate::error::{Error, Result};

/// Bytes per page of the file; each page is one node in the arena.
const PAGE: usize = 16 * 1024;

fn arena_err(e: compll::Error) -> Error {
    Error::io("compressed memory", std::io::Error::other(e.to_string()))
}

/// A driver keeping the file in a [`compll::SharedArena`]. Pages never
/// written, or written as zeros, take no space.
///
/// ```
/// use arca::io::{CompressedMemoryDriver, Driver};
/// let mut d = CompressedMemoryDriver::new().unwrap();
/// d.write_at(100_000, &[7; 10]).unwrap();
/// let mut b = [0u8; 11];
/// d.read_at(99_999, &mut b).unwrap();
/// assert_eq!(b, [0, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7]);
/// // Only the one page written holds memory, not the 100 KB before it.
/// assert!(d.stats().uncompressed_bytes + d.stats().compressed_bytes <= 128 * 1024);
/// ```
pub struct CompressedMemoryDriver {
    arena: Arc<SharedArena>,
    pages: Vec<Option<Handle>>,
    len: u64,
}

impl CompressedMemoryDriver {
    /// An empty file in an lz4-compressed arena of 128 KiB blocks.
    ///
    /// # Errors
    /// Only if the arena cannot be set up.
    pub fn new() -> Result<Self> {
        Self::with_config(
            Config::default()
                .codec(Codec::Lz4)
                .block_size(128 * 1024)
                .background_compression(2)
                .readahead(4),
        )
    }

    /// An empty file in an arena configured by the caller (the block size
    /// must hold a 16 KiB page).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a configuration compll rejects.
    pub fn with_config(cfg: Config) -> Result<Self> {
        let arena = SharedArena::new(cfg).map_err(|e| Error::invalid(e.to_string()))?;
        Ok(CompressedMemoryDriver {
            arena: Arc::new(arena),
            pages: vec![],
            len: 0,
        })
    }

    /// The arena's statistics (compressed, uncompressed, overhead bytes).
    pub fn stats(&self) -> compll::Stats {
        self.arena.stats()
    }

    fn page_for_write(&mut self, i: usize) -> Result<Handle> {
        if self.pages.len() <= i {
            self.pages.resize(i + 1, None);
        }
        if let Some(h) = self.pages[i] {
            return Ok(h);
        }
        let h = self.arena.alloc(PAGE).map_err(arena_err)?;
        self.pages[i] = Some(h);
        Ok(h)
    }
}

impl Driver for CompressedMemoryDriver {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        if offset.saturating_add(buf.len() as u64) > self.len {
            return Err(Error::io(
                format!("reading {} bytes at {offset}", buf.len()),
                std::io::ErrorKind::UnexpectedEof.into(),
            ));
        }
        let mut done = 0;
        while done < buf.len() {
            let at = offset as usize + done;
            let (i, o) = (at / PAGE, at % PAGE);
            let n = (PAGE - o).min(buf.len() - done);
            match self.pages.get(i).copied().flatten() {
                Some(h) => self
                    .arena
                    .read_at(h, o, &mut buf[done..done + n])
                    .map_err(arena_err)?,
                None => buf[done..done + n].fill(0),
            }
            done += n;
        }
        Ok(())
    }

    fn write_at(&mut self, offset: u64, data: &[u8]) -> Result<()> {
        let end = offset
            .checked_add(data.len() as u64)
            .ok_or_else(|| Error::invalid("offset overflow"))?;
        let mut done = 0;
        while done < data.len() {
            let at = offset as usize + done;
            let (i, o) = (at / PAGE, at % PAGE);
            let n = (PAGE - o).min(data.len() - done);
            let chunk = &data[done..done + n];
            let absent = self.pages.get(i).copied().flatten().is_none();
            // Zeros into a page that does not exist yet change nothing.
            if !(absent && chunk.iter().all(|&b| b == 0)) {
                let h = self.page_for_write(i)?;
                self.arena.write_at(h, o, chunk).map_err(arena_err)?;
            }
            done += n;
        }
        self.len = self.len.max(end);
        Ok(())
    }

    fn sync(&mut self) -> Result<()> {
        Ok(())
    }

    fn truncate(&mut self, len: u64) -> Result<()> {
        let keep = (len as usize).div_ceil(PAGE);
        for h in self.pages.drain(keep.min(self.pages.len())..).flatten() {
            self.arena.free(h).map_err(arena_err)?;
        }
        // Bytes past the new end in the last page must read as zeros if the file grows again.
        let tail = len as usize % PAGE;
        if tail != 0 && len < self.len {
            if let Some(Some(h)) = self.pages.get(keep - 1) {
                self.arena
                    .write_at(*h, tail, &vec![0u8; PAGE - tail])
                    .map_err(arena_err)?;
            }
        }
        self.len = len;
        Ok(())
    }

    fn len(&self) -> Result<u64> {
        Ok(self.len)
    }

    fn held_bytes(&self) -> Option<u64> {
        Some(
            self.arena.stats().total_bytes()
                + (self.pages.capacity() * std::mem::size_of::<Option<Handle>>()) as u64,
        )
    }
}
