//! A simulated disk for crash tests: several files whose writes stay
//! volatile until synced, and a crash at a chosen write or sync.
//!
//! At the crash, each file's durable image becomes its last synced state
//! plus a random subset of the writes made since, in order, some of them
//! torn (only a prefix lands) — the failure modes of a real disk's cache.
//! After the crash every operation fails, like a process that has died.
//!
//! It can also return an error and let the process go on
//! ([`FaultDisk::failing_at`]): a full disk (`ENOSPC`, which stays full
//! until [`FaultDisk::make_room`]) or an `EIO`. A failing write may land in
//! part; a failing sync loses the durability of every write it was to make
//! durable, as Linux does (the pages are marked clean: a later sync that
//! succeeds does not write them), while reads still see them.

use std::sync::{Arc, Mutex};

use super::driver::Driver;
use crate::error::{Error, Result};

enum Pending {
    Write(u64, Vec<u8>),
    Truncate(u64),
}

#[derive(Default)]
struct SimFile {
    durable: Vec<u8>,
    current: Vec<u8>,
    pending: Vec<Pending>,
}

struct DiskState {
    files: Vec<SimFile>,
    ops: u64,
    crash_at: Option<u64>,
    crashed: bool,
    /// The operation that returns an error, and which.
    fail_at: Option<(u64, DiskError)>,
    /// No room: writes and truncates that grow a file fail with `ENOSPC`.
    full: bool,
    rng: u64,
    /// Which unsynced writes the crash keeps.
    keep: Keep,
}

/// An error a [`FaultDisk`] operation returns, the process going on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiskError {
    /// `ENOSPC`: the disk is full, and stays full until
    /// [`FaultDisk::make_room`].
    NoSpace,
    /// `EIO`: this one operation fails.
    Io,
}

impl DiskError {
    fn error(self, doing: &str) -> Error {
        let errno = match self {
            DiskError::NoSpace => nix::errno::Errno::ENOSPC,
            DiskError::Io => nix::errno::Errno::EIO,
        };
        Error::io(
            format!("simulated {doing}"),
            std::io::Error::from_raw_os_error(errno as i32),
        )
    }
}

#[derive(Clone, Copy)]
enum Keep {
    /// A random subset of each file's, some torn.
    Random,
    /// None.
    Nothing,
    /// All of every file's but this one's.
    AllBut(usize),
}

impl DiskState {
    fn next(&mut self) -> u64 {
        // xorshift64*: deterministic per seed, so a failing case replays.
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        self.rng.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Count one write or sync; crash if it is the chosen one. Returns the
    /// error this operation is to fail with, if it is the failing one.
    fn tick(&mut self) -> Result<Option<DiskError>> {
        if self.crashed {
            return Err(dead());
        }
        self.ops += 1;
        if self.crash_at == Some(self.ops) {
            self.crash();
            return Err(dead());
        }
        match self.fail_at {
            Some((at, e)) if at == self.ops => {
                if e == DiskError::NoSpace {
                    self.full = true;
                }
                Ok(Some(e))
            }
            _ => Ok(None),
        }
    }

    fn crash(&mut self) {
        for i in 0..self.files.len() {
            let pending = std::mem::take(&mut self.files[i].pending);
            let mut img = std::mem::take(&mut self.files[i].durable);
            for p in pending {
                let r = self.next();
                let (lost, torn) = match self.keep {
                    Keep::Random => (r.is_multiple_of(2), r.is_multiple_of(3)),
                    Keep::Nothing => (true, false),
                    Keep::AllBut(f) => (f == i, false),
                };
                if lost {
                    continue; // this write never reached the platter
                }
                match p {
                    Pending::Write(off, data) => {
                        let keep = if torn {
                            (self.next() as usize) % (data.len() + 1)
                        } else {
                            data.len()
                        };
                        apply(&mut img, off, &data[..keep]);
                    }
                    Pending::Truncate(len) => img.resize(len as usize, 0),
                }
            }
            self.files[i].durable = img.clone();
            self.files[i].current = img;
        }
        self.crashed = true;
    }
}

fn apply(img: &mut Vec<u8>, off: u64, data: &[u8]) {
    let end = off as usize + data.len();
    if img.len() < end {
        img.resize(end, 0);
    }
    img[off as usize..end].copy_from_slice(data);
}

fn dead() -> Error {
    Error::io(
        "simulated crash",
        std::io::Error::other("the process was stopped"),
    )
}

/// A disk shared by the drivers of one simulated process.
///
/// ```
/// use arca::io::{Driver, FaultDisk};
/// let disk = FaultDisk::new(Some(2), 7);
/// let mut d = disk.driver();
/// d.write_at(0, b"synced").unwrap();
/// assert!(d.sync().is_err()); // the second operation crashes
/// assert!(disk.crashed());
/// ```
#[derive(Clone)]
pub struct FaultDisk {
    state: Arc<Mutex<DiskState>>,
}

impl FaultDisk {
    /// A disk that crashes at the `crash_at`-th write or sync (never if
    /// `None`); `seed` picks which unsynced writes survive.
    pub fn new(crash_at: Option<u64>, seed: u64) -> Self {
        FaultDisk {
            state: Arc::new(Mutex::new(DiskState {
                files: vec![],
                ops: 0,
                crash_at,
                crashed: false,
                fail_at: None,
                full: false,
                rng: seed | 1,
                keep: Keep::Random,
            })),
        }
    }

    /// Make the crash lose every write not yet synced (a power failure
    /// before the disk wrote anything back), instead of a random subset.
    ///
    /// ```
    /// use arca::io::{Driver, FaultDisk};
    /// let disk = FaultDisk::new(Some(3), 7).losing_unsynced();
    /// let mut d = disk.driver();
    /// d.write_at(0, b"kept").unwrap();
    /// d.sync().unwrap();
    /// assert!(d.write_at(0, b"lost").is_err()); // the third operation crashes
    /// assert_eq!(disk.durable_images()[0], b"kept");
    /// ```
    pub fn losing_unsynced(self) -> Self {
        if let Ok(mut s) = self.state.lock() {
            s.keep = Keep::Nothing;
        }
        self
    }

    /// Make the crash keep every unsynced write, whole, except those of
    /// file number `lost` (in creation order), which are all lost: a disk
    /// that wrote one file's cache back and not the other's.
    pub fn losing_unsynced_of(self, lost: usize) -> Self {
        if let Ok(mut s) = self.state.lock() {
            s.keep = Keep::AllBut(lost);
        }
        self
    }

    /// Make the `at`-th write, sync or truncate return `error` instead of
    /// crashing; the process goes on.
    ///
    /// ```
    /// use arca::io::{DiskError, Driver, FaultDisk};
    /// let disk = FaultDisk::new(None, 7).failing_at(2, DiskError::NoSpace);
    /// let mut d = disk.driver();
    /// d.write_at(0, b"fits").unwrap();
    /// assert!(d.write_at(4, b"more").is_err()); // full from now on
    /// assert!(d.write_at(8, b"tail").is_err());
    /// d.write_at(0, b"FITS").unwrap(); // overwriting needs no room
    /// disk.make_room();
    /// d.write_at(8, b"tail").unwrap();
    /// ```
    pub fn failing_at(self, at: u64, error: DiskError) -> Self {
        if let Ok(mut s) = self.state.lock() {
            s.fail_at = Some((at, error));
        }
        self
    }

    /// Free space on a full disk: writes that grow files succeed again.
    pub fn make_room(&self) {
        if let Ok(mut s) = self.state.lock() {
            s.full = false;
        }
    }

    /// What a reader would see now without a crash: each file's current bytes.
    pub fn current_images(&self) -> Vec<Vec<u8>> {
        self.state
            .lock()
            .map(|s| s.files.iter().map(|f| f.current.clone()).collect())
            .unwrap_or_default()
    }

    /// Crash now, as a power failure after the last operation: each file
    /// keeps what the crash policy lets survive of its unsynced writes.
    pub fn power_off(&self) {
        if let Ok(mut s) = self.state.lock() {
            if !s.crashed {
                s.crash();
            }
        }
    }

    /// A new empty file on this disk.
    pub fn driver(&self) -> FaultDriver {
        self.driver_with(vec![])
    }

    /// A new file on this disk holding `bytes`, already durable.
    pub fn driver_with(&self, bytes: Vec<u8>) -> FaultDriver {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        s.files.push(SimFile {
            durable: bytes.clone(),
            current: bytes,
            pending: vec![],
        });
        FaultDriver {
            disk: self.clone(),
            id: s.files.len() - 1,
        }
    }

    /// Writes and syncs performed so far.
    pub fn ops(&self) -> u64 {
        self.state.lock().map(|s| s.ops).unwrap_or(0)
    }

    /// Whether the crash happened.
    pub fn crashed(&self) -> bool {
        self.state.lock().map(|s| s.crashed).unwrap_or(true)
    }

    /// What a restart would find: each file's durable bytes.
    pub fn durable_images(&self) -> Vec<Vec<u8>> {
        self.state
            .lock()
            .map(|s| s.files.iter().map(|f| f.durable.clone()).collect())
            .unwrap_or_default()
    }
}

/// One file on a [`FaultDisk`].
pub struct FaultDriver {
    disk: FaultDisk,
    id: usize,
}

impl FaultDriver {
    fn with<T>(&self, f: impl FnOnce(&mut DiskState, usize) -> Result<T>) -> Result<T> {
        let mut s = self.disk.state.lock().map_err(|_| dead())?;
        f(&mut s, self.id)
    }
}

impl Driver for FaultDriver {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.with(|s, id| {
            if s.crashed {
                return Err(dead());
            }
            let cur = &s.files[id].current;
            let src = usize::try_from(offset)
                .ok()
                .and_then(|o| cur.get(o..o.checked_add(buf.len())?))
                .ok_or_else(|| {
                    Error::io("simulated read", std::io::ErrorKind::UnexpectedEof.into())
                })?;
            buf.copy_from_slice(src);
            Ok(())
        })
    }

    fn write_at(&mut self, offset: u64, data: &[u8]) -> Result<()> {
        self.with(|s, id| {
            if s.crash_at == Some(s.ops + 1) {
                // The crashing write itself may land partly.
                s.files[id]
                    .pending
                    .push(Pending::Write(offset, data.to_vec()));
            }
            let fail = s.tick()?;
            let grows = offset.saturating_add(data.len() as u64) > s.files[id].current.len() as u64;
            let landed = match fail {
                // A short write: a prefix may land before the error.
                Some(_) => (s.next() as usize) % (data.len() + 1),
                None if s.full && grows => 0,
                None => data.len(),
            };
            if landed > 0 {
                let f = &mut s.files[id];
                apply(&mut f.current, offset, &data[..landed]);
                f.pending
                    .push(Pending::Write(offset, data[..landed].to_vec()));
            }
            match fail {
                Some(e) => Err(e.error("write")),
                None if s.full && grows => Err(DiskError::NoSpace.error("write")),
                None => Ok(()),
            }
        })
    }

    fn sync(&mut self) -> Result<()> {
        self.with(|s, id| {
            let fail = s.tick()?;
            let f = &mut s.files[id];
            let pending = std::mem::take(&mut f.pending);
            if let Some(e) = fail {
                // The writes stay readable but will never be durable.
                return Err(e.error("sync"));
            }
            for p in pending {
                match p {
                    Pending::Write(off, data) => apply(&mut f.durable, off, &data),
                    Pending::Truncate(len) => f.durable.resize(len as usize, 0),
                }
            }
            Ok(())
        })
    }

    fn truncate(&mut self, len: u64) -> Result<()> {
        self.with(|s, id| {
            let fail = s.tick()?;
            let grows = len > s.files[id].current.len() as u64;
            if let Some(e) = fail {
                return Err(e.error("truncate"));
            }
            if s.full && grows {
                return Err(DiskError::NoSpace.error("truncate"));
            }
            let f = &mut s.files[id];
            f.current.resize(len as usize, 0);
            f.pending.push(Pending::Truncate(len));
            Ok(())
        })
    }

    fn len(&self) -> Result<u64> {
        self.with(|s, id| {
            if s.crashed {
                return Err(dead());
            }
            Ok(s.files[id].current.len() as u64)
        })
    }
}
