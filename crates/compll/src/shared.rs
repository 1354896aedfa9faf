//! [`SharedArena`]: the arena behind a mutex, usable from many threads.

use std::sync::{Mutex, MutexGuard};

use crate::arena::{
    op_free, op_len, op_read, op_read_and_free, op_read_at, op_write, op_write_at, Host, Inner,
    ReadGuard, WriteGuard,
};
use crate::config::Config;
use crate::error::Result;
use crate::handle::Handle;
use crate::stats::Stats;

/// A compressed arena that is `Send + Sync`: every operation takes an
/// internal lock for its duration. Guards do not hold the lock, only a pin
/// on their block, so other threads keep working while a guard lives.
///
/// ```
/// use compll::{Config, SharedArena};
/// use std::sync::Arc;
/// let arena = Arc::new(SharedArena::new(Config::default()).unwrap());
/// let handles: Vec<_> = (0..4u8)
///     .map(|t| {
///         let a = Arc::clone(&arena);
///         std::thread::spawn(move || {
///             let h = a.alloc(8).unwrap();
///             a.write_at(h, 0, &[t; 8]).unwrap();
///             h
///         })
///     })
///     .map(|j| j.join().unwrap())
///     .collect();
/// for (t, h) in handles.iter().enumerate() {
///     assert_eq!(arena.read(*h).unwrap()[..8], [t as u8; 8]);
/// }
/// ```
pub struct SharedArena {
    inner: Mutex<Inner>,
}

impl SharedArena {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic inside the lock cannot leave the heap half-updated in a way
        // that matters for memory safety, so a poisoned lock is still used.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Host for SharedArena {
    fn with<R>(&self, f: impl FnOnce(&mut Inner) -> Result<R>) -> Result<R> {
        f(&mut self.lock())
    }
}

impl SharedArena {
    /// Creates a shared arena.
    ///
    /// ```
    /// assert!(compll::SharedArena::new(compll::Config::default()).is_ok());
    /// ```
    pub fn new(cfg: Config) -> Result<SharedArena> {
        Ok(SharedArena {
            inner: Mutex::new(Inner::new(&cfg)?),
        })
    }

    /// Allocates a zeroed node (see [`Arena::alloc`](crate::Arena::alloc)).
    ///
    /// ```
    /// let a = compll::SharedArena::new(compll::Config::default()).unwrap();
    /// assert!(a.alloc(10).is_ok());
    /// ```
    pub fn alloc(&self, size: usize) -> Result<Handle> {
        self.lock().heap.alloc(size)
    }

    /// Allocates a node starting with a copy of `init` (see
    /// [`Arena::alloc_init`](crate::Arena::alloc_init)).
    ///
    /// ```
    /// let a = compll::SharedArena::new(compll::Config::default()).unwrap();
    /// let h = a.alloc_init(4, b"abcd").unwrap();
    /// assert_eq!(&a.read(h).unwrap()[..4], b"abcd");
    /// ```
    pub fn alloc_init(&self, size: usize, init: &[u8]) -> Result<Handle> {
        self.lock().heap.alloc_init(size, init)
    }

    /// Frees a node.
    ///
    /// ```
    /// let a = compll::SharedArena::new(compll::Config::default()).unwrap();
    /// let h = a.alloc(10).unwrap();
    /// a.free(h).unwrap();
    /// assert!(a.free(h).is_err());
    /// ```
    pub fn free(&self, h: Handle) -> Result<()> {
        op_free(self, h)
    }

    /// Reads bytes of a node, then frees it, in one lookup (see
    /// [`Arena::read_and_free`](crate::Arena::read_and_free)).
    ///
    /// ```
    /// let a = compll::SharedArena::new(compll::Config::default()).unwrap();
    /// let h = a.alloc(8).unwrap();
    /// let mut b = [1u8; 8];
    /// a.read_and_free(h, 0, &mut b).unwrap();
    /// assert_eq!(b, [0; 8]);
    /// assert!(a.free(h).is_err());
    /// ```
    pub fn read_and_free(&self, h: Handle, offset: usize, out: &mut [u8]) -> Result<()> {
        op_read_and_free(self, h, offset, out)
    }

    /// Usable length of a node.
    ///
    /// ```
    /// let a = compll::SharedArena::new(compll::Config::default()).unwrap();
    /// let h = a.alloc(10).unwrap();
    /// assert!(a.len(h).unwrap() >= 10);
    /// ```
    pub fn len(&self, h: Handle) -> Result<usize> {
        op_len(self, h)
    }

    /// Borrows a node for reading.
    ///
    /// ```
    /// let a = compll::SharedArena::new(compll::Config::default()).unwrap();
    /// let h = a.alloc(10).unwrap();
    /// assert_eq!(a.read(h).unwrap()[0], 0);
    /// ```
    pub fn read(&self, h: Handle) -> Result<ReadGuard<'_>> {
        op_read(self, h)
    }

    /// Borrows a node for writing.
    ///
    /// ```
    /// let a = compll::SharedArena::new(compll::Config::default()).unwrap();
    /// let h = a.alloc(10).unwrap();
    /// a.write(h).unwrap()[0] = 1;
    /// assert_eq!(a.read(h).unwrap()[0], 1);
    /// ```
    pub fn write(&self, h: Handle) -> Result<WriteGuard<'_>> {
        op_write(self, h)
    }

    /// Copies bytes out of a node.
    ///
    /// ```
    /// let a = compll::SharedArena::new(compll::Config::default()).unwrap();
    /// let h = a.alloc(10).unwrap();
    /// let mut b = [9u8; 2];
    /// a.read_at(h, 0, &mut b).unwrap();
    /// assert_eq!(b, [0, 0]);
    /// ```
    pub fn read_at(&self, h: Handle, offset: usize, out: &mut [u8]) -> Result<()> {
        op_read_at(self, h, offset, out)
    }

    /// Copies bytes into a node.
    ///
    /// ```
    /// let a = compll::SharedArena::new(compll::Config::default()).unwrap();
    /// let h = a.alloc(10).unwrap();
    /// a.write_at(h, 8, b"ok").unwrap();
    /// ```
    pub fn write_at(&self, h: Handle, offset: usize, data: &[u8]) -> Result<()> {
        op_write_at(self, h, offset, data)
    }

    /// Memory and activity counters.
    ///
    /// ```
    /// let a = compll::SharedArena::new(compll::Config::default()).unwrap();
    /// assert_eq!(a.stats().blocks, 0);
    /// ```
    pub fn stats(&self) -> Stats {
        self.lock().heap.stats()
    }

    /// Compresses every dirty cached block and empties the cache.
    ///
    /// ```
    /// let a = compll::SharedArena::new(compll::Config::default()).unwrap();
    /// a.flush().unwrap();
    /// ```
    pub fn flush(&self) -> Result<()> {
        self.lock().heap.flush()
    }

    /// Waits until the background thread has done what it was given (see
    /// [`Arena::settle`](crate::Arena::settle)).
    ///
    /// ```
    /// let a = compll::SharedArena::new(compll::Config::default().background_compression(1)).unwrap();
    /// a.alloc(10).unwrap();
    /// a.settle();
    /// ```
    pub fn settle(&self) {
        self.lock().heap.settle();
    }

    /// Checks the heap invariants (slow; for tests).
    ///
    /// ```
    /// let a = compll::SharedArena::new(compll::Config::default()).unwrap();
    /// a.check_invariants().unwrap();
    /// ```
    pub fn check_invariants(&self) -> std::result::Result<(), String> {
        self.lock().heap.check_invariants()
    }
}
