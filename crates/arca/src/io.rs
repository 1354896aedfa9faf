//! The driver interface: the only way bytes reach storage.
//!
//! Every layer above talks to a [`Driver`]; the object model never sees a file
//! descriptor. Drivers are positional (no cursor), so a journal or a fault
//! injector can wrap any of them.

mod compressed;
mod fault;
mod file;
mod memory;

pub use compressed::CompressedMemoryDriver;
pub use fault::{FaultDisk, FaultDriver};
pub use file::FileDriver;
pub use memory::MemoryDriver;

use crate::error::Result;

/// Positional storage for one arca file.
///
/// ```
/// use arca::io::{Driver, MemoryDriver};
/// let mut d = MemoryDriver::new();
/// d.write_at(10, b"abc").unwrap();
/// let mut buf = [0u8; 3];
/// d.read_at(10, &mut buf).unwrap();
/// assert_eq!(&buf, b"abc");
/// assert_eq!(d.len().unwrap(), 13);
/// ```
pub trait Driver: Send {
    /// Fill `buf` from `offset`. Reading past the end is an error.
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()>;
    /// Write `data` at `offset`, growing the storage if needed.
    fn write_at(&mut self, offset: u64, data: &[u8]) -> Result<()>;
    /// Make every completed write durable.
    fn sync(&mut self) -> Result<()>;
    /// Set the storage length, dropping or zero-extending the tail.
    fn truncate(&mut self, len: u64) -> Result<()>;
    /// Current storage length in bytes.
    fn len(&self) -> Result<u64>;
    /// Bytes of memory this driver holds, for drivers that keep the file in
    /// memory (`None` for files on disk).
    fn held_bytes(&self) -> Option<u64> {
        None
    }
    /// Whether the storage holds no bytes at all.
    fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }
}
