//! What the readers' sidecar files share: their names beside the data file,
//! and the torn-read-proof pair every value they publish is written as.

use std::path::{Path, PathBuf};

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
}
