//! The external file list of a dataset whose elements live outside the
//! file (HDF5's external raw storage). Kept in a blob (format/blob.rs) that
//! the dataset's layout message (class 4) names.
//!
//! ```text
//! +0  u32  n               number of segments, at least 1
//!     n × {
//!         u16 len, name    the file (UTF-8, 1 to 4096 bytes, no NUL)
//!         u64 offset       where the segment starts in that file
//!         u64 size         its bytes; u64::MAX = unlimited (last only)
//!     }
//! ```
//! The segments, in order, hold the dataset's elements as one row-major
//! run of bytes, as contiguous storage would: element byte `b` lies in the
//! first segment whose running total passes `b`. Together they hold at
//! least the dataset's bytes at its largest shape (an unlimited maximum
//! needs an unlimited last segment); only the first dimension may grow.

use crate::error::{Error, Result};
use crate::format::codec::{Reader, Writer};

/// Longest external file name, in bytes.
pub const MAX_EXTERNAL_NAME: usize = 4096;

/// One part of a dataset's elements in an external file: `size` bytes from
/// `offset` of the file `name`.
///
/// ```
/// use arca::ExternalSegment;
/// let s = ExternalSegment::new("raw.bin", 0, ExternalSegment::UNLIMITED);
/// assert!(s.is_unlimited());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ExternalSegment {
    /// The file: absolute, or relative to the dataset's external prefix
    /// (see [`Dataset::with_external_prefix`]) or, without one, to the
    /// current directory, as HDF5 resolves it.
    ///
    /// [`Dataset::with_external_prefix`]: crate::Dataset::with_external_prefix
    pub name: String,
    /// Byte offset of the segment in the file.
    pub offset: u64,
    /// Bytes of the segment; [`ExternalSegment::UNLIMITED`] for no end
    /// (the last segment only).
    pub size: u64,
}

impl ExternalSegment {
    /// The size of a segment with no end (HDF5's `H5F_UNLIMITED`).
    pub const UNLIMITED: u64 = u64::MAX;

    /// A segment of `size` bytes at `offset` of `name`.
    pub fn new(name: impl Into<String>, offset: u64, size: u64) -> Self {
        ExternalSegment {
            name: name.into(),
            offset,
            size,
        }
    }

    /// Whether the segment has no end.
    pub fn is_unlimited(&self) -> bool {
        self.size == Self::UNLIMITED
    }
}

/// Check a list on its own: at least one segment, names of 1 to 4096 bytes
/// without NUL, only the last unlimited, no segment past 2^64 in its file.
/// Returns the bytes the segments hold together (`u64::MAX`: unlimited).
pub(crate) fn check_list(segs: &[ExternalSegment]) -> std::result::Result<u64, String> {
    if segs.is_empty() {
        return Err("an external file list of no segments".into());
    }
    if u32::try_from(segs.len()).is_err() {
        return Err("more than 2^32 external segments".into());
    }
    let mut total: u64 = 0;
    for (i, s) in segs.iter().enumerate() {
        if s.name.is_empty() || s.name.len() > MAX_EXTERNAL_NAME || s.name.contains('\0') {
            return Err(format!(
                "segment {i}: a name of {} bytes (1 to {MAX_EXTERNAL_NAME}, no NUL)",
                s.name.len()
            ));
        }
        if s.is_unlimited() {
            if i + 1 != segs.len() {
                return Err(format!(
                    "segment {i} is unlimited but not the last (a later one could never be reached)"
                ));
            }
            return Ok(u64::MAX);
        }
        if s.offset.checked_add(s.size).is_none() {
            return Err(format!(
                "segment {i}: {} bytes at offset {} end past 2^64",
                s.size, s.offset
            ));
        }
        total = total
            .checked_add(s.size)
            .filter(|&t| t != u64::MAX)
            .ok_or_else(|| format!("segment {i}: the segments hold more than 2^64 bytes"))?;
    }
    Ok(total)
}

/// Check a list against a dataset of `dims` up to `maxdims` and `elem`-byte
/// elements: only the first dimension may grow, and the segments hold the
/// dataset at its largest (an unlimited first dimension needs an
/// unlimited segment).
pub(crate) fn check_fits(
    segs: &[ExternalSegment],
    dims: &[u64],
    maxdims: &[u64],
    elem: u64,
) -> std::result::Result<(), String> {
    let total = check_list(segs)?;
    if dims.iter().zip(maxdims).skip(1).any(|(d, m)| d != m) {
        return Err("only the first dimension of an external dataset can grow".into());
    }
    if maxdims.first() == Some(&u64::MAX) {
        if total != u64::MAX {
            return Err(format!(
                "an unlimited first dimension over {total} bytes of external storage \
                 (the last segment must be unlimited)"
            ));
        }
        return Ok(());
    }
    let need = maxdims.iter().try_fold(elem, |a, &d| a.checked_mul(d));
    match need {
        Some(n) if n <= total => Ok(()),
        _ => Err(format!(
            "the dataset needs {} bytes, its external segments hold {total}",
            need.map_or("more than 2^64".to_string(), |n| n.to_string())
        )),
    }
}

/// Encode a list (the blob's data).
pub(crate) fn encode(segs: &[ExternalSegment]) -> Vec<u8> {
    let mut w = Writer::new();
    w.u32(segs.len() as u32);
    for s in segs {
        w.u16(s.name.len() as u16).bytes(s.name.as_bytes());
        w.u64(s.offset).u64(s.size);
    }
    w.buf
}

/// Decode the list in the blob at `addr` of a dataset of `dims` up to
/// `maxdims`, checked on its own and against the dataset (a failure names
/// the segment).
pub(crate) fn decode(
    b: &[u8],
    addr: u64,
    dims: &[u64],
    maxdims: &[u64],
    elem: u64,
) -> Result<Vec<ExternalSegment>> {
    let mut r = Reader::new(b, "external file list", addr);
    let n = r.u32()? as usize;
    // Each segment takes at least 2 + 1 + 8 + 8 bytes.
    if n > r.remaining() / 19 {
        return Err(r.corrupt(format!("{n} segments in {} bytes", b.len())));
    }
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let len = r.u16()? as usize;
        let name = std::str::from_utf8(r.bytes(len)?)
            .map(str::to_string)
            .map_err(|_| r.corrupt(format!("segment {i}: a name that is not UTF-8")))?;
        out.push(ExternalSegment {
            name,
            offset: r.u64()?,
            size: r.u64()?,
        });
    }
    if r.remaining() != 0 {
        return Err(r.corrupt(format!("{} bytes after the segments", r.remaining())));
    }
    check_fits(&out, dims, maxdims, elem).map_err(|e| r.corrupt(e))?;
    Ok(out)
}

/// Check a list a caller gives for a dataset (as [`check_fits`]).
pub(crate) fn validate(
    segs: &[ExternalSegment],
    dims: &[u64],
    maxdims: &[u64],
    elem: u64,
) -> Result<()> {
    check_fits(segs, dims, maxdims, elem).map_err(Error::invalid)
}

/// Where the byte run `[at, at + n)` of the elements lies: `(segment, offset
/// in its file, bytes, offset in the run)` pieces, in order. The run lies
/// inside the segments (the list was checked against the dataset).
pub(crate) fn pieces(segs: &[ExternalSegment], at: u64, n: u64) -> Vec<(usize, u64, u64, u64)> {
    let mut out = vec![];
    let (mut start, mut done) = (0u64, 0u64);
    for (i, s) in segs.iter().enumerate() {
        if done == n {
            break;
        }
        let end = start.saturating_add(s.size);
        let pos = at + done;
        if pos < end {
            let take = (end - pos).min(n - done);
            out.push((i, s.offset + (pos - start), take, done));
            done += take;
        }
        start = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(name: &str, offset: u64, size: u64) -> ExternalSegment {
        ExternalSegment::new(name, offset, size)
    }

    #[test]
    fn lists_round_trip() {
        let segs = vec![
            seg("a.bin", 0, 16),
            seg("ρ/b.bin", 100, ExternalSegment::UNLIMITED),
        ];
        let b = encode(&segs);
        assert_eq!(decode(&b, 4096, &[4], &[u64::MAX], 4).unwrap(), segs);
    }

    #[test]
    fn damaged_lists_are_refused() {
        let corrupt = |b: Vec<u8>, dims: &[u64], max: &[u64]| {
            let e = decode(&b, 4096, dims, max, 4).unwrap_err();
            assert!(matches!(e, Error::Corrupt { .. }), "{e}");
        };
        // Too small, unlimited not last, unlimited maximum over a finite
        // list, a second dimension that grows, no segments, an empty name,
        // a count past the bytes, bytes left over.
        corrupt(encode(&[seg("a", 0, 15)]), &[4], &[4]);
        corrupt(
            encode(&[seg("a", 0, u64::MAX), seg("b", 0, 16)]),
            &[4],
            &[4],
        );
        corrupt(encode(&[seg("a", 0, 1 << 20)]), &[4], &[u64::MAX]);
        corrupt(encode(&[seg("a", 0, 1 << 20)]), &[4, 4], &[4, 8]);
        corrupt(encode(&[]), &[4], &[4]);
        corrupt(encode(&[seg("", 0, 16)]), &[4], &[4]);
        corrupt(vec![0xff, 0xff, 0, 0, 1], &[4], &[4]);
        corrupt(encode(&[seg("a", u64::MAX - 4, 16)]), &[4], &[4]);
        let mut b = encode(&[seg("a", 0, 16)]);
        b.push(0);
        corrupt(b, &[4], &[4]);
    }

    #[test]
    fn runs_split_across_segments() {
        let segs = [seg("a", 10, 4), seg("b", 0, 4), seg("c", 7, u64::MAX)];
        assert_eq!(
            pieces(&segs, 2, 8),
            vec![(0, 12, 2, 0), (1, 0, 4, 2), (2, 7, 2, 6)]
        );
        assert_eq!(pieces(&segs, 9, 3), vec![(2, 8, 3, 0)]);
    }
}
