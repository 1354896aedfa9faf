//! The mappings of a virtual dataset: where each part of its elements comes
//! from. Kept in a blob (format/blob.rs) that the dataset's layout message
//! (class 3) names.
//!
//! ```text
//! +0  u32  n               number of mappings
//!     n × {
//!         u16 len, file    the source file (UTF-8, 1 to 4096 bytes; "." is
//!                          the file holding the virtual dataset; a relative
//!                          name is looked for beside it)
//!         u16 len, path    the source dataset's path in it (UTF-8, 1 to 4096)
//!         selection        the virtual side (format/region.rs): dims = the
//!                          virtual dataset's shape at creation
//!         selection        the source side: dims = the source's shape
//!     }
//! ```
//! The n-th element of a mapping's virtual side takes the n-th of its
//! source side; where mappings overlap, the later one wins; elements no
//! mapping reaches (and those of missing sources) read as the fill value.
//! A hyperslab count may be unlimited on both sides or neither (the
//! source's current extent decides how many blocks there are); otherwise
//! both sides select the same number of elements.

use crate::error::{Error, Result};
use crate::format::codec::{Reader, Writer};
use crate::format::region::Region;

/// Longest source file name or dataset path, in bytes.
pub const MAX_VIRTUAL_NAME: usize = 4096;

/// Where one part of a virtual dataset's elements comes from: a selection
/// of a dataset in this or another file.
///
/// ```
/// use arca::{Region, RegionSelection, SlabDim, VirtualMapping};
/// let rows = |start| RegionSelection::Hyperslab(vec![
///     SlabDim { start, stride: 1, count: 10, block: 1 },
/// ]);
/// let m = VirtualMapping {
///     file: "raw_1.arca".into(),
///     dataset: "/data".into(),
///     virtual_region: Region::new(vec![20], rows(10)).unwrap(),
///     source_region: Region::new(vec![10], RegionSelection::All).unwrap(),
/// };
/// assert!(m.check(1).is_ok());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct VirtualMapping {
    /// The source file: `"."` for the file holding the virtual dataset, a
    /// name relative to its directory, or an absolute path.
    pub file: String,
    /// The source dataset's path in that file.
    pub dataset: String,
    /// The elements of the virtual dataset this mapping fills.
    pub virtual_region: Region,
    /// The source's elements they take, in the same order.
    pub source_region: Region,
}

impl VirtualMapping {
    /// Check the mapping against a virtual dataset of `rank` dimensions
    /// (names, ranks, element counts, unlimited counts on both sides).
    ///
    /// # Errors
    /// The reason, as text.
    pub fn check(&self, rank: usize) -> std::result::Result<(), String> {
        for (what, s) in [
            ("source file name", &self.file),
            ("source dataset", &self.dataset),
        ] {
            if s.is_empty() || s.len() > MAX_VIRTUAL_NAME || s.contains('\0') {
                return Err(format!(
                    "{what} of {} bytes (1 to {MAX_VIRTUAL_NAME}, no NUL)",
                    s.len()
                ));
            }
        }
        let v = &self.virtual_region;
        if v.dims.len() != rank {
            return Err(format!(
                "a virtual selection of rank {} for a dataset of rank {rank}",
                v.dims.len()
            ));
        }
        match (v.is_unlimited(), self.source_region.is_unlimited()) {
            (true, true) => Ok(()),
            (false, false) => {
                let (a, b) = (
                    v.len().map_err(|e| e.to_string())?,
                    self.source_region.len(),
                );
                let b = b.map_err(|e| e.to_string())?;
                if a == b {
                    Ok(())
                } else {
                    Err(format!(
                        "the virtual selection has {a} elements, the source selection {b}"
                    ))
                }
            }
            _ => Err("an unlimited selection on one side of a mapping only".into()),
        }
    }
}

/// Encode mappings (the blob's data).
pub(crate) fn encode(maps: &[VirtualMapping]) -> Vec<u8> {
    let mut w = Writer::new();
    w.u32(maps.len() as u32);
    for m in maps {
        w.u16(m.file.len() as u16).bytes(m.file.as_bytes());
        w.u16(m.dataset.len() as u16).bytes(m.dataset.as_bytes());
        m.virtual_region.encode(&mut w);
        m.source_region.encode(&mut w);
    }
    w.buf
}

/// Decode the mappings of a virtual dataset of shape `dims` from its blob
/// at `addr`, checking each (see [`VirtualMapping::check`]) and that every
/// virtual selection was made in `dims`.
pub(crate) fn decode(b: &[u8], addr: u64, dims: &[u64]) -> Result<Vec<VirtualMapping>> {
    let mut r = Reader::new(b, "virtual mapping", addr);
    let n = r.u32()? as usize;
    // Each mapping takes at least 2 + 1 + 2 + 1 + 2 × 2 bytes.
    if n > r.remaining() / 10 {
        return Err(r.corrupt(format!("{n} mappings in {} bytes", b.len())));
    }
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let text = |r: &mut Reader| -> Result<String> {
            let len = r.u16()? as usize;
            let s = r.bytes(len)?;
            std::str::from_utf8(s)
                .map(str::to_string)
                .map_err(|_| r.corrupt(format!("mapping {i}: a name that is not UTF-8")))
        };
        // Whatever is wrong names the mapping.
        let at = |e: Error| match e {
            Error::Corrupt { detail, .. } => {
                Error::corrupt("virtual mapping", addr, format!("mapping {i}: {detail}"))
            }
            e => e,
        };
        let file = text(&mut r).map_err(at)?;
        let dataset = text(&mut r).map_err(at)?;
        let virtual_region = Region::decode(&mut r, true).map_err(at)?;
        let source_region = Region::decode(&mut r, true).map_err(at)?;
        let m = VirtualMapping {
            file,
            dataset,
            virtual_region,
            source_region,
        };
        m.check(dims.len())
            .map_err(|e| r.corrupt(format!("mapping {i}: {e}")))?;
        if m.virtual_region.dims != dims {
            return Err(r.corrupt(format!(
                "mapping {i}: a virtual selection made in {:?}, the dataset is {dims:?}",
                m.virtual_region.dims
            )));
        }
        out.push(m);
    }
    if r.remaining() != 0 {
        return Err(r.corrupt(format!("{} bytes after the mappings", r.remaining())));
    }
    Ok(out)
}

/// Check mappings given by a caller for a virtual dataset of shape `dims`.
pub(crate) fn validate(maps: &[VirtualMapping], dims: &[u64]) -> Result<()> {
    if u32::try_from(maps.len()).is_err() {
        return Err(Error::invalid("more than 2^32 mappings"));
    }
    for (i, m) in maps.iter().enumerate() {
        m.check(dims.len())
            .map_err(|e| Error::invalid(format!("mapping {i}: {e}")))?;
        if m.virtual_region.dims != dims {
            return Err(Error::invalid(format!(
                "mapping {i}: a virtual selection made in {:?} for a dataset of shape {dims:?}",
                m.virtual_region.dims
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::region::{RegionSelection, SlabDim, UNLIMITED};

    fn rows(dims: u64, start: u64, count: u64) -> Region {
        Region::new_unlimited(
            vec![dims],
            RegionSelection::Hyperslab(vec![SlabDim {
                start,
                stride: 1,
                count,
                block: 1,
            }]),
        )
        .unwrap()
    }

    fn map(v: Region, s: Region) -> VirtualMapping {
        VirtualMapping {
            file: ".".into(),
            dataset: "/src".into(),
            virtual_region: v,
            source_region: s,
        }
    }

    #[test]
    fn mappings_round_trip() {
        let maps = vec![
            map(rows(20, 0, 10), rows(10, 0, 10)),
            map(rows(20, 10, UNLIMITED), rows(5, 0, UNLIMITED)),
            VirtualMapping {
                file: "other/ρ.arca".into(),
                ..map(
                    rows(20, 12, 3),
                    Region::new(vec![1, 3], RegionSelection::All).unwrap(),
                )
            },
        ];
        let b = encode(&maps);
        assert_eq!(decode(&b, 4096, &[20]).unwrap(), maps);
        assert_eq!(decode(&encode(&[]), 4096, &[20]).unwrap(), vec![]);
    }

    #[test]
    fn damaged_mappings_are_refused() {
        let corrupt = |b: Vec<u8>, dims: &[u64]| {
            let e = decode(&b, 4096, dims).unwrap_err();
            assert!(matches!(e, Error::Corrupt { .. }), "{e}");
        };
        // Counts that differ, unlimited on one side, another rank, dims
        // that are not the dataset's, an empty name, a count past the bytes.
        corrupt(encode(&[map(rows(20, 0, 10), rows(10, 0, 9))]), &[20]);
        corrupt(
            encode(&[map(rows(20, 0, UNLIMITED), rows(10, 0, 9))]),
            &[20],
        );
        corrupt(encode(&[map(rows(20, 0, 10), rows(10, 0, 10))]), &[20, 1]);
        corrupt(encode(&[map(rows(20, 0, 10), rows(10, 0, 10))]), &[30]);
        let mut m = map(rows(20, 0, 10), rows(10, 0, 10));
        m.file = String::new();
        corrupt(encode(&[m]), &[20]);
        corrupt(vec![0xff, 0xff, 0, 0, 1], &[20]);
        let mut b = encode(&[map(rows(20, 0, 10), rows(10, 0, 10))]);
        b.push(0);
        corrupt(b, &[20]);
    }
}
