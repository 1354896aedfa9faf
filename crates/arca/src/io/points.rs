//! Fault points for crash tests of real processes (feature `fault-points`).
//!
//! Every write, sync and truncation of a file arca keeps (the data file,
//! its journal, the readers' history and table) passes a point, counted
//! per process. With `ARCA_ABORT_AT_IO=n` in the environment the process
//! aborts at its n-th point, before the operation; with `ARCA_ABORT_TORN=1`
//! too, a write at that point first lands half its bytes (a write torn by
//! the kill). Without the feature, points compile to nothing.

#[cfg(feature = "fault-points")]
mod on {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::OnceLock;

    static PASSED: AtomicU64 = AtomicU64::new(0);

    fn settings() -> (u64, bool) {
        static AT: OnceLock<(u64, bool)> = OnceLock::new();
        *AT.get_or_init(|| {
            let at = std::env::var("ARCA_ABORT_AT_IO")
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
            (at, std::env::var("ARCA_ABORT_TORN").is_ok_and(|v| v == "1"))
        })
    }

    /// Count a point; true if this one is where the process dies.
    pub(crate) fn reached() -> Option<bool> {
        let n = PASSED.fetch_add(1, Ordering::SeqCst) + 1;
        let (at, torn) = settings();
        (at == n).then_some(torn)
    }

    pub(crate) fn passed() -> u64 {
        PASSED.load(Ordering::SeqCst)
    }
}

/// A sync or truncation is about to happen.
#[inline]
pub(crate) fn point() {
    #[cfg(feature = "fault-points")]
    if on::reached().is_some() {
        std::process::abort();
    }
}

/// A write of `data` is about to happen; `write` lands a prefix of it when
/// the kill tears the write.
#[inline]
pub(crate) fn write_point(data: &[u8], write: impl FnOnce(&[u8])) {
    #[cfg(feature = "fault-points")]
    if let Some(torn) = on::reached() {
        if torn {
            write(&data[..data.len() / 2]);
        }
        std::process::abort();
    }
    #[cfg(not(feature = "fault-points"))]
    let _ = (data, write);
}

/// How many fault points this process has passed (0 without the feature).
///
/// ```
/// let before = arca::io::fault_points_passed();
/// assert!(arca::io::fault_points_passed() >= before);
/// ```
pub fn fault_points_passed() -> u64 {
    #[cfg(feature = "fault-points")]
    return on::passed();
    #[cfg(not(feature = "fault-points"))]
    0
}
