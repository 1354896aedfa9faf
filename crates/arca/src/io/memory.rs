//! Storage in a growable byte vector, for scratch files and tests.

use super::driver::Driver;
use crate::error::{Error, Result};

/// A driver holding the whole file in memory. It grows by an eighth at a
/// time, so it holds at most about 1/8 more than the file's length.
///
/// ```
/// use arca::io::{Driver, MemoryDriver};
/// let d = MemoryDriver::from_bytes(vec![1, 2, 3]);
/// assert_eq!(d.len().unwrap(), 3);
/// let mut d = MemoryDriver::new();
/// for i in 0..1100u64 {
///     d.write_at(i * 4096, &[1; 4096]).unwrap();
/// }
/// let (len, held) = (d.len().unwrap(), d.held_bytes().unwrap());
/// assert!(held >= len && held <= len + len / 8 + 4096);
/// ```
#[derive(Debug, Default, Clone)]
pub struct MemoryDriver {
    bytes: Vec<u8>,
}

impl MemoryDriver {
    /// An empty in-memory file.
    pub fn new() -> Self {
        Self::default()
    }

    /// An in-memory file holding `bytes`.
    pub fn from_bytes(bytes: Vec<u8>) -> Self {
        Self { bytes }
    }

    /// The file's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

fn range(offset: u64, len: usize) -> Option<std::ops::Range<usize>> {
    let start = usize::try_from(offset).ok()?;
    Some(start..start.checked_add(len)?)
}

impl Driver for MemoryDriver {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let src = range(offset, buf.len())
            .and_then(|r| self.bytes.get(r))
            .ok_or_else(|| {
                Error::io(
                    format!("reading {} bytes at {offset}", buf.len()),
                    std::io::ErrorKind::UnexpectedEof.into(),
                )
            })?;
        buf.copy_from_slice(src);
        Ok(())
    }

    fn write_at(&mut self, offset: u64, data: &[u8]) -> Result<()> {
        let r = range(offset, data.len()).ok_or_else(|| Error::invalid("offset overflow"))?;
        if self.bytes.len() < r.end {
            if r.end > self.bytes.capacity() {
                // Grow by an eighth rather than doubling: what the file holds
                // beyond its length stays under 1/8 of it, for a few more
                // reallocations while it grows.
                let want = r.end.max(self.bytes.len() + self.bytes.len() / 8);
                self.bytes.reserve_exact(want - self.bytes.len());
            }
            self.bytes.resize(r.end, 0);
        }
        self.bytes[r].copy_from_slice(data);
        Ok(())
    }

    fn sync(&mut self) -> Result<()> {
        Ok(())
    }

    fn truncate(&mut self, len: u64) -> Result<()> {
        let len = usize::try_from(len).map_err(|_| Error::invalid("length overflow"))?;
        self.bytes.resize(len, 0);
        Ok(())
    }

    fn len(&self) -> Result<u64> {
        Ok(self.bytes.len() as u64)
    }

    fn held_bytes(&self) -> Option<u64> {
        Some(self.bytes.capacity() as u64)
    }
}
