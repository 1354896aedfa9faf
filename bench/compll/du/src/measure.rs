//! What the benchmark measures with: the counting allocator behind the
//! memory figures, malloc's own count of its bytes in use, and the clocks
//! (wall, process CPU, thread CPU).

use std::alloc::System;

use stats_alloc::{StatsAlloc, INSTRUMENTED_SYSTEM};

// Counting allocator: every byte the process allocates through Rust is seen,
// so the memory figures cover compressed blocks, the cache, every table and
// the heap nodes alike.
#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Bytes and number of allocations live on the Rust heap.
pub(crate) fn heap_in_use() -> (i64, i64) {
    // stats_alloc already books reallocations into both byte counters.
    let s = GLOBAL.stats();
    (
        s.bytes_allocated as i64 - s.bytes_deallocated as i64,
        s.allocations as i64 - s.deallocations as i64,
    )
}

/// The second memory figure: bytes the C allocator has in use, including
/// its own chunk headers and rounding and whatever C code (zstd) allocates
/// with `malloc` directly, as the original study measured it.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub(crate) mod malloc_meter {
    /// How the figure is obtained, for the report.
    pub(crate) const SOURCE: &str = "mallinfo2";
    pub(crate) const DESCRIPTION: &str =
        "malloc in use (glibc mallinfo2: uordblks + hblkhd, chunk headers and rounding included)";

    /// Bytes in chunks malloc has handed out and not had back: `uordblks`
    /// (heap chunks in use, over all arenas) plus `hblkhd` (chunks served
    /// by mmap, such as tables of more than 128 KiB). `None`: measured
    /// here, not estimated.
    pub(crate) fn in_use() -> Option<i64> {
        // SAFETY: mallinfo2 takes no arguments, only reads glibc's
        // allocator statistics (under its own locks) and returns a plain
        // struct by value; glibc >= 2.33 provides it.
        let m = unsafe { libc::mallinfo2() };
        Some((m.uordblks + m.hblkhd) as i64)
    }
}

/// Elsewhere the malloc figure is an estimate: the counted bytes plus
/// [`MALLOC_OVERHEAD`] per live allocation.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub(crate) mod malloc_meter {
    pub(crate) const SOURCE: &str = "estimate";
    pub(crate) const DESCRIPTION: &str =
        "malloc estimate (counted + 16 B per live allocation; mallinfo2 needs Linux with glibc)";
    pub(crate) fn in_use() -> Option<i64> {
        None
    }
}

/// What malloc adds to each live allocation on top of the requested bytes,
/// on average: glibc keeps an 8-byte header and rounds chunks to 16 bytes.
/// Used only where malloc cannot be asked ([`malloc_meter`]).
#[cfg_attr(all(target_os = "linux", target_env = "gnu"), allow(dead_code))]
pub(crate) const MALLOC_OVERHEAD: i64 = 16;

/// CPU time of this thread in nanoseconds (the clock the kernel keeps per
/// thread, so other processes on the machine do not inflate it).
pub(crate) fn cpu_ns() -> u64 {
    cpu_time::ThreadTime::now().as_duration().as_nanos() as u64
}

/// A point in time for the operations: wall clock, the CPU time of the
/// whole process (every thread, so the background compressor's work is
/// in it) and the CPU time of the calling thread (the arena's own: the
/// critical path while the background thread keeps up).
#[derive(Clone, Copy)]
pub(crate) struct Stamp {
    wall: std::time::Instant,
    cpu: u64,
    thread: u64,
}

/// The wall clock, the process's and this thread's CPU time now.
pub(crate) fn stamp() -> Stamp {
    Stamp {
        wall: std::time::Instant::now(),
        cpu: cpu_time::ProcessTime::now().as_duration().as_nanos() as u64,
        thread: cpu_ns(),
    }
}

/// Milliseconds from `a` to `b`: wall, process CPU, this thread's CPU.
#[derive(Clone, Copy)]
pub(crate) struct Span {
    pub(crate) wall: f64,
    pub(crate) cpu: f64,
    pub(crate) thread: f64,
}

/// What passed from `a` to `b` on each clock.
pub(crate) fn span(a: Stamp, b: Stamp) -> Span {
    Span {
        wall: b.wall.duration_since(a.wall).as_secs_f64() * 1e3,
        cpu: ms(b.cpu.saturating_sub(a.cpu)),
        thread: ms(b.thread.saturating_sub(a.thread)),
    }
}

/// Nanoseconds as milliseconds.
pub(crate) fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}
