//! The driver interface: the only way bytes reach storage.
//!
//! Every layer above talks to a [`Driver`]; the object model never sees a file
//! descriptor. Drivers are positional (no cursor), so a journal or a fault
//! injector can wrap any of them.

#[cfg(feature = "cloud")]
mod cloud;
mod compressed;
mod driver;
mod fault;
mod file;
mod gate;
mod memory;
mod points;
mod publish;
mod stats;

#[cfg(feature = "cloud")]
pub use cloud::{is_url, memory_store, object_store, upload, CloudDriver, CloudOptions};
#[cfg(feature = "cloud")]
pub(crate) use cloud::{Intent, Staged};
pub use compressed::CompressedMemoryDriver;
pub use driver::{Driver, ReadAt};
pub use fault::{DiskError, FaultDisk, FaultDriver};
pub use file::{write_out, FileDriver};
pub(crate) use gate::{Gated, UnlockedReads};
pub use memory::MemoryDriver;
pub use points::fault_points_passed;
pub(crate) use points::{point as fault_point, write_point as fault_write_point};
pub(crate) use publish::Publish;
pub(crate) use stats::Counters;
pub use stats::{process_stats, Fetches, IoStats};
