//! The gate between a file's writer and the threads that read its chunks
//! without the file's lock.
//!
//! A read that runs unlocked first plans, under the lock, which stored
//! extents it will read (each checked live), then takes the gate shared and
//! lets the lock go. Every write, truncation or copy into the storage takes
//! the gate exclusively, so no byte a planned read will fetch can change
//! under it: an extent it names can only be rewritten after being freed and
//! handed out again, which takes a write. The writer holds the file's lock
//! while it waits, so no new read can plan in between; the reads in flight
//! need only the gate to finish.

use std::sync::{Arc, RwLock};

use super::driver::{Driver, ReadAt};
use crate::error::{Error, Result};

/// What a read without the file's lock needs: a reader of the storage and
/// the gate every write below waits at.
pub(crate) type UnlockedReads = (Arc<dyn ReadAt>, Arc<RwLock<()>>);

/// A driver whose writes wait for the unlocked reads in flight.
pub(crate) struct Gated {
    inner: Box<dyn Driver>,
    gate: Arc<RwLock<()>>,
}

impl Gated {
    pub(crate) fn new(inner: Box<dyn Driver>) -> Self {
        Gated {
            inner,
            gate: Arc::new(RwLock::new(())),
        }
    }

    /// The gate unlocked reads hold shared while they run.
    pub(crate) fn gate(&self) -> Arc<RwLock<()>> {
        self.gate.clone()
    }
}

/// Run `f` on `inner` with `gate` held exclusively.
fn exclusive<T>(
    gate: &RwLock<()>,
    inner: &mut dyn Driver,
    f: impl FnOnce(&mut dyn Driver) -> Result<T>,
) -> Result<T> {
    let _g = gate.write().map_err(|_| Error::Poisoned)?;
    f(inner)
}

impl Driver for Gated {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.inner.read_at(offset, buf)
    }

    fn write_at(&mut self, offset: u64, data: &[u8]) -> Result<()> {
        exclusive(&self.gate, &mut *self.inner, |d| d.write_at(offset, data))
    }

    fn sync(&mut self) -> Result<()> {
        self.inner.sync()
    }

    fn truncate(&mut self, len: u64) -> Result<()> {
        exclusive(&self.gate, &mut *self.inner, |d| d.truncate(len))
    }

    fn len(&self) -> Result<u64> {
        self.inner.len()
    }

    fn held_bytes(&self) -> Option<u64> {
        self.inner.held_bytes()
    }

    fn shared_reader(&self) -> Option<Arc<dyn ReadAt>> {
        self.inner.shared_reader()
    }

    fn fetches(&self) -> Option<Arc<super::stats::Fetches>> {
        self.inner.fetches()
    }
}
