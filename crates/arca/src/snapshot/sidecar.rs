//! What the readers' sidecar files share: their names beside the data file,
//! and the torn-read-proof pair every value they publish is written as.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::error::Result;

/// The sidecar of the file at `path` named by `suffix` ("-readers").
pub(crate) fn sidecar(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// A value and its complement: a torn read of the 16 bytes shows.
pub(crate) fn pair(v: u64) -> [u8; 16] {
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&v.to_le_bytes());
    b[8..].copy_from_slice(&(!v).to_le_bytes());
    b
}

/// Decode [`pair`]; None if torn (or `b` is short).
pub(crate) fn unpair(b: &[u8]) -> Option<u64> {
    let v = u64::from_le_bytes(b.get(..8)?.try_into().ok()?);
    let c = u64::from_le_bytes(b.get(8..16)?.try_into().ok()?);
    (v == !c).then_some(v)
}

/// How long a published pair may stay torn before its writer is taken for
/// dead in the middle of writing it.
const SETTLE_LIMIT: Duration = Duration::from_secs(5);
/// Retries by yielding before waiting by short sleeps.
const SETTLE_YIELDS: u32 = 100;
const SETTLE_NAP: Duration = Duration::from_micros(200);

/// Call `attempt` until it reads whole (returns `Some`), for at most
/// [`SETTLE_LIMIT`]; `None` if it never did.
///
/// A torn pair is a write in progress, over in microseconds, so the first
/// retries only yield. The bound is a time, not a count: a live writer
/// preempted between the two halves of its 16-byte write on a loaded
/// machine can stay torn for many scheduler slices (thousands of yields),
/// and must not be mistaken for a dead one. Only a writer that died
/// mid-write leaves the pair torn for seconds.
pub(crate) fn settle<T>(mut attempt: impl FnMut() -> Result<Option<T>>) -> Result<Option<T>> {
    // Read first, the clock only once torn: this runs on every read of a
    // snapshot, nearly always whole at once.
    if let Some(v) = attempt()? {
        return Ok(Some(v));
    }
    let start = Instant::now();
    let mut tries = 0u32;
    loop {
        if let Some(v) = attempt()? {
            return Ok(Some(v));
        }
        if start.elapsed() >= SETTLE_LIMIT {
            return Ok(None);
        }
        tries = tries.saturating_add(1);
        if tries < SETTLE_YIELDS {
            std::thread::yield_now();
        } else {
            std::thread::sleep(SETTLE_NAP);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_torn_pair_does_not_decode() {
        let b = pair(42);
        assert_eq!(unpair(&b), Some(42));
        let mut torn = b;
        torn[8..].copy_from_slice(&pair(7)[8..]);
        assert_eq!(unpair(&torn), None);
        assert_eq!(unpair(&b[..15]), None);
    }

    #[test]
    fn settle_retries_until_whole() {
        let mut n = 0;
        let got = settle(|| {
            n += 1;
            Ok((n == 300).then_some(n))
        })
        .unwrap();
        assert_eq!(got, Some(300));
    }
}
