//! Counts of what reads fetched from storage: chunks and their stored
//! bytes, contiguous data's bytes, and for files on object storage the
//! requests, bytes and round trips. Each open file keeps its own
//! [`Counters`] (and its driver its [`Fetches`]); every count also goes to
//! the process's.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// What reads have fetched from storage, for one file
/// ([`crate::File::io_stats`]) or the whole process ([`crate::io_stats`]).
///
/// ```
/// use arca::{DatasetOptions, Datatype, File, Selection};
/// let f = File::in_memory().unwrap();
/// let d = f.root().create_dataset("x", &DatasetOptions::new(Datatype::uint(1), &[100])
///     .chunks(&[10])).unwrap();
/// d.write_all(&[1u8; 100]).unwrap();
/// f.flush().unwrap();
/// let before = f.io_stats();
/// let _: Vec<u8> = d.read(&Selection::from_ranges(&[(15, 25, 1)]).unwrap()).unwrap();
/// assert!(f.io_stats().chunks_read - before.chunks_read <= 2);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IoStats {
    /// Chunks read from storage (a chunk served from the chunk cache is
    /// not read again).
    pub chunks_read: u64,
    /// Bytes of data read from storage: chunks as stored, contiguous data.
    pub bytes_read: u64,
    /// Requests sent to object storage (0 for local files). A read served
    /// from the driver's range cache sends none; retries inside one
    /// request are not counted again.
    pub requests: u64,
    /// Bytes those requests brought back.
    pub bytes_fetched: u64,
    /// Times a reader waited for the network: requests sent together
    /// count one round trip.
    pub round_trips: u64,
    /// Conditional PUTs that published a file written on object storage
    /// whole (one per publish below the multipart threshold; see
    /// docs/CLOUD.md, "Writing").
    pub puts: u64,
    /// Bytes those PUTs and the parts of multipart publishes sent.
    pub bytes_put: u64,
    /// Parts sent by multipart publishes.
    pub parts: u64,
    /// Conditional completions of multipart uploads sent (one per
    /// multipart publish, more if the store asked for it again).
    pub completes: u64,
}

/// Live counters of a driver's requests to object storage.
#[derive(Debug, Default)]
pub struct Fetches {
    requests: AtomicU64,
    bytes: AtomicU64,
    round_trips: AtomicU64,
    puts: AtomicU64,
    bytes_put: AtomicU64,
    parts: AtomicU64,
    completes: AtomicU64,
}

/// The process's fetch counters.
static PROCESS_FETCHES: Fetches = Fetches::new();

impl Fetches {
    /// Counters at zero.
    pub const fn new() -> Self {
        Fetches {
            requests: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            round_trips: AtomicU64::new(0),
            puts: AtomicU64::new(0),
            bytes_put: AtomicU64::new(0),
            parts: AtomicU64::new(0),
            completes: AtomicU64::new(0),
        }
    }

    /// One PUT that sent `bytes`.
    pub fn put(&self, bytes: u64) {
        for c in [self, &PROCESS_FETCHES] {
            c.puts.fetch_add(1, Relaxed);
            c.bytes_put.fetch_add(bytes, Relaxed);
        }
    }

    /// One part of a multipart upload that sent `bytes`.
    pub fn part(&self, bytes: u64) {
        for c in [self, &PROCESS_FETCHES] {
            c.parts.fetch_add(1, Relaxed);
            c.bytes_put.fetch_add(bytes, Relaxed);
        }
    }

    /// One completion of a multipart upload sent.
    pub fn complete(&self) {
        for c in [self, &PROCESS_FETCHES] {
            c.completes.fetch_add(1, Relaxed);
        }
    }

    /// One round trip of `requests` requests that brought back `bytes`.
    pub fn round_trip(&self, requests: u64, bytes: u64) {
        self.round_trips(1, requests, bytes);
    }

    /// `trips` round trips of `requests` requests in all that brought back
    /// `bytes` (a batch with more requests than may be in flight at once
    /// waits for the network more than once).
    pub fn round_trips(&self, trips: u64, requests: u64, bytes: u64) {
        for c in [self, &PROCESS_FETCHES] {
            c.requests.fetch_add(requests, Relaxed);
            c.bytes.fetch_add(bytes, Relaxed);
            c.round_trips.fetch_add(trips, Relaxed);
        }
    }

    /// Add these counts to `s`.
    pub fn add_to(&self, s: &mut IoStats) {
        s.requests += self.requests.load(Relaxed);
        s.bytes_fetched += self.bytes.load(Relaxed);
        s.round_trips += self.round_trips.load(Relaxed);
        s.puts += self.puts.load(Relaxed);
        s.bytes_put += self.bytes_put.load(Relaxed);
        s.parts += self.parts.load(Relaxed);
        s.completes += self.completes.load(Relaxed);
    }
}

/// Live counters behind an [`IoStats`].
#[derive(Debug, Default)]
pub(crate) struct Counters {
    chunks: AtomicU64,
    bytes: AtomicU64,
}

/// The process's counters.
static PROCESS: Counters = Counters::new();

impl Counters {
    pub(crate) const fn new() -> Self {
        Counters {
            chunks: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
        }
    }

    /// A chunk of `bytes` stored bytes was read.
    pub(crate) fn chunk(&self, bytes: u64) {
        for c in [self, &PROCESS] {
            c.chunks.fetch_add(1, Relaxed);
            c.bytes.fetch_add(bytes, Relaxed);
        }
    }

    /// `bytes` of contiguous data were read.
    pub(crate) fn bytes(&self, bytes: u64) {
        for c in [self, &PROCESS] {
            c.bytes.fetch_add(bytes, Relaxed);
        }
    }

    pub(crate) fn snapshot(&self) -> IoStats {
        IoStats {
            chunks_read: self.chunks.load(Relaxed),
            bytes_read: self.bytes.load(Relaxed),
            ..IoStats::default()
        }
    }
}

/// What reads of every file have fetched from storage in this process.
pub fn process_stats() -> IoStats {
    let mut s = PROCESS.snapshot();
    PROCESS_FETCHES.add_to(&mut s);
    s
}
