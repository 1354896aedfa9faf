//! Selections of a dataspace as stored: what a region reference holds
//! (after the dataset it refers to) and both sides of each mapping of a
//! virtual dataset.
//!
//! ```text
//! +0  u8   rank            0 ..= 32
//!     rank × u64 dims      the extent the selection was made in
//!     u8   kind            0 none, 1 all, 2 points, 3 hyperslab, 4 blocks
//!  kind 2 (rank ≥ 1): u64 n, then n × rank × u64: the points, in the
//!          selection's order
//!  kind 3 (rank ≥ 1): rank × (u64 start, u64 stride, u64 count, u64 block):
//!          per dimension `count` blocks of `block` indices, `stride` apart
//!          (count u64::MAX: unlimited, in virtual mappings only)
//!  kind 4 (rank ≥ 1): u64 n, then n × rank × (u64 start, u64 count): boxes,
//!          the selection is their union
//! ```
//! A region reference is `u64` the dataset's header address (not 0), then
//! a selection. Elements of a selection are taken in row-major order of
//! the dataspace (kinds 1, 3 and 4) or in the order listed (kind 2); the
//! n-th element of one side of a virtual mapping is the n-th of the other.
//!
//! Decoding checks every point, block and box against `dims`, counts
//! against the bytes that hold them, strides that keep blocks apart, and
//! that `dims` has fewer than 2^64 elements.

use crate::error::{Error, Result};
use crate::format::codec::{Reader, Writer};
use crate::format::shape::MAX_RANK;

/// A hyperslab count that grows with the source (virtual mappings).
pub const UNLIMITED: u64 = u64::MAX;

/// Most elements a selection is enumerated for (points of a box union, the
/// elements a virtual mapping pairs one by one), 2^24.
pub const MAX_ENUMERATED: u64 = 1 << 24;

/// One dimension of a regular hyperslab: `count` blocks of `block`
/// consecutive indices, the first at `start`, each `stride` after the last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SlabDim {
    /// First index.
    pub start: u64,
    /// Distance between the starts of blocks (≥ `block` when `count` > 1).
    pub stride: u64,
    /// Number of blocks ([`UNLIMITED`]: as many as the source holds).
    pub count: u64,
    /// Indices per block (≥ 1).
    pub block: u64,
}

/// What a [`Region`] selects of its dataspace.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RegionSelection {
    /// Nothing.
    None,
    /// Every element.
    All,
    /// These points, in this order (each one index per dimension).
    Points(Vec<Vec<u64>>),
    /// A regular hyperslab, one [`SlabDim`] per dimension.
    Hyperslab(Vec<SlabDim>),
    /// The union of boxes, each `(start, count)` per dimension.
    Blocks(Vec<(Vec<u64>, Vec<u64>)>),
}

/// A selection of a dataspace of extent `dims` (HDF5's dataspace with a
/// selection): what region references and virtual mappings hold.
///
/// ```
/// use arca::{Region, RegionSelection, SlabDim};
/// let r = Region::new(
///     vec![10, 10],
///     RegionSelection::Hyperslab(vec![
///         SlabDim { start: 1, stride: 4, count: 2, block: 2 },
///         SlabDim { start: 0, stride: 1, count: 3, block: 1 },
///     ]),
/// )
/// .unwrap();
/// assert_eq!(r.len().unwrap(), 12);
/// assert_eq!(r.linear().unwrap()[..4], [10, 11, 12, 20]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Region {
    /// The dataspace's extent.
    pub dims: Vec<u64>,
    /// What is selected.
    pub selection: RegionSelection,
}

fn bad(m: impl Into<String>) -> String {
    m.into()
}

impl Region {
    /// A region, checked (points, blocks and boxes inside `dims`; an
    /// unlimited count is refused: see [`Region::new_unlimited`]).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a selection that does not fit `dims`.
    pub fn new(dims: Vec<u64>, selection: RegionSelection) -> Result<Region> {
        let r = Region { dims, selection };
        r.check(false).map_err(Error::invalid)?;
        Ok(r)
    }

    /// As [`Region::new`], but hyperslab counts may be [`UNLIMITED`] (one
    /// side of a virtual mapping).
    ///
    /// # Errors
    /// As [`Region::new`].
    pub fn new_unlimited(dims: Vec<u64>, selection: RegionSelection) -> Result<Region> {
        let r = Region { dims, selection };
        r.check(true).map_err(Error::invalid)?;
        Ok(r)
    }

    /// Whether a hyperslab count is [`UNLIMITED`].
    pub fn is_unlimited(&self) -> bool {
        matches!(&self.selection, RegionSelection::Hyperslab(d) if d.iter().any(|s| s.count == UNLIMITED))
    }

    /// The region with every unlimited count set to `count`.
    pub fn with_count(&self, count: u64) -> Region {
        let mut r = self.clone();
        if let RegionSelection::Hyperslab(d) = &mut r.selection {
            for s in d.iter_mut().filter(|s| s.count == UNLIMITED) {
                s.count = count;
            }
        }
        r
    }

    /// Number of elements selected (a union of boxes counts each once).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an unlimited count, or a union of
    /// boxes of more than [`MAX_ENUMERATED`] elements in all.
    pub fn len(&self) -> Result<u64> {
        fn total(v: impl Iterator<Item = u64>) -> Result<u64> {
            let mut v = v;
            v.try_fold(1u64, |a, x| a.checked_mul(x))
                .ok_or_else(|| Error::invalid("selection of more than 2^64 elements"))
        }
        match &self.selection {
            RegionSelection::None => Ok(0),
            RegionSelection::All => total(self.dims.iter().copied()),
            RegionSelection::Points(p) => Ok(p.len() as u64),
            RegionSelection::Hyperslab(d) => {
                if self.is_unlimited() {
                    return Err(Error::invalid("an unlimited selection has no fixed size"));
                }
                total(d.iter().map(|s| s.count.saturating_mul(s.block)))
            }
            RegionSelection::Blocks(_) => Ok(self.linear()?.len() as u64),
        }
    }

    /// Whether nothing is selected.
    ///
    /// # Errors
    /// As [`Region::len`].
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }

    /// The selected indices of each dimension, as `(first, n, step)`
    /// progressions in increasing order, for selections that are the
    /// product of one index set per dimension (all, hyperslab); `None`
    /// for points and boxes, and for unlimited counts.
    pub fn product(&self) -> Option<Vec<Vec<(u64, u64, u64)>>> {
        match &self.selection {
            RegionSelection::All => Some(self.dims.iter().map(|&d| vec![(0, d, 1)]).collect()),
            RegionSelection::Hyperslab(d) if !self.is_unlimited() => Some(
                d.iter()
                    .map(|s| {
                        if s.count == 0 {
                            vec![]
                        } else if s.block == 1 {
                            vec![(s.start, s.count, s.stride)]
                        } else if s.stride == s.block || s.count == 1 {
                            vec![(s.start, s.count * s.block, 1)]
                        } else {
                            (0..s.count)
                                .map(|i| (s.start + i * s.stride, s.block, 1))
                                .collect()
                        }
                    })
                    .collect(),
            ),
            _ => None,
        }
    }

    /// The selected elements as row-major indices into `dims`, in the
    /// selection's order.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for more than [`MAX_ENUMERATED`]
    /// elements, or an unlimited count.
    pub fn linear(&self) -> Result<Vec<u64>> {
        let too_many = || {
            Error::invalid(format!(
                "a selection of more than {MAX_ENUMERATED} elements taken one by one"
            ))
        };
        let strides = row_strides(&self.dims);
        let at = |c: &[u64]| c.iter().zip(&strides).map(|(a, b)| a * b).sum::<u64>();
        match &self.selection {
            RegionSelection::None => Ok(vec![]),
            RegionSelection::Points(p) => Ok(p.iter().map(|c| at(c)).collect()),
            RegionSelection::Blocks(b) => {
                let mut total = 0u64;
                for (_, count) in b {
                    total = total
                        .checked_add(count.iter().product::<u64>())
                        .filter(|&t| t <= MAX_ENUMERATED)
                        .ok_or_else(too_many)?;
                }
                let mut out = Vec::with_capacity(total as usize);
                for (start, count) in b {
                    let sets: Vec<Vec<(u64, u64, u64)>> = start
                        .iter()
                        .zip(count)
                        .map(|(&s, &n)| vec![(s, n, 1)])
                        .collect();
                    product_linear(&sets, &strides, &mut out);
                }
                out.sort_unstable();
                out.dedup();
                Ok(out)
            }
            _ => {
                let sets = self
                    .product()
                    .ok_or_else(|| Error::invalid("an unlimited selection has no fixed size"))?;
                if self.len()? > MAX_ENUMERATED {
                    return Err(too_many());
                }
                let mut out = vec![];
                product_linear(&sets, &strides, &mut out);
                Ok(out)
            }
        }
    }

    pub(crate) fn encode(&self, w: &mut Writer) {
        w.u8(self.dims.len() as u8);
        self.dims.iter().for_each(|&d| {
            w.u64(d);
        });
        match &self.selection {
            RegionSelection::None => {
                w.u8(0);
            }
            RegionSelection::All => {
                w.u8(1);
            }
            RegionSelection::Points(p) => {
                w.u8(2).u64(p.len() as u64);
                p.iter().flatten().for_each(|&c| {
                    w.u64(c);
                });
            }
            RegionSelection::Hyperslab(d) => {
                w.u8(3);
                for s in d {
                    w.u64(s.start).u64(s.stride).u64(s.count).u64(s.block);
                }
            }
            RegionSelection::Blocks(b) => {
                w.u8(4).u64(b.len() as u64);
                for (start, count) in b {
                    for (s, n) in start.iter().zip(count) {
                        w.u64(*s).u64(*n);
                    }
                }
            }
        }
    }

    /// The encoding (see the module's layout).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = Writer::new();
        self.encode(&mut w);
        w.buf
    }

    /// Decode and check a region; `unlimited` allows unlimited counts.
    pub(crate) fn decode(r: &mut Reader, unlimited: bool) -> Result<Region> {
        let rank = r.u8()? as usize;
        if rank > MAX_RANK {
            return Err(r.corrupt(format!("selection of rank {rank}")));
        }
        let mut dims = Vec::with_capacity(rank);
        for _ in 0..rank {
            dims.push(r.u64()?);
        }
        let kind = r.u8()?;
        // A count bounded by the bytes that must follow it.
        let count = |r: &mut Reader, each: usize| -> Result<usize> {
            let n = r.u64()?;
            match usize::try_from(n).ok().filter(|&n| {
                n.checked_mul(each)
                    .is_some_and(|b| b <= r.remaining() && each > 0)
            }) {
                Some(n) => Ok(n),
                None => Err(r.corrupt(format!("{n} entries of {each} bytes do not fit"))),
            }
        };
        let selection = match kind {
            0 => RegionSelection::None,
            1 => RegionSelection::All,
            2 => {
                let n = count(r, 8 * rank)?;
                let mut p = Vec::with_capacity(n);
                for _ in 0..n {
                    let mut c = Vec::with_capacity(rank);
                    for _ in 0..rank {
                        c.push(r.u64()?);
                    }
                    p.push(c);
                }
                RegionSelection::Points(p)
            }
            3 => {
                let mut d = Vec::with_capacity(rank);
                for _ in 0..rank {
                    d.push(SlabDim {
                        start: r.u64()?,
                        stride: r.u64()?,
                        count: r.u64()?,
                        block: r.u64()?,
                    });
                }
                RegionSelection::Hyperslab(d)
            }
            4 => {
                let n = count(r, 16 * rank)?;
                let mut b = Vec::with_capacity(n);
                for _ in 0..n {
                    let (mut s, mut c) = (Vec::with_capacity(rank), Vec::with_capacity(rank));
                    for _ in 0..rank {
                        s.push(r.u64()?);
                        c.push(r.u64()?);
                    }
                    b.push((s, c));
                }
                RegionSelection::Blocks(b)
            }
            k => return Err(r.corrupt(format!("selection kind {k}"))),
        };
        let region = Region { dims, selection };
        region.check(unlimited).map_err(|e| r.corrupt(e))?;
        Ok(region)
    }

    /// Decode a region from `bytes`, all of them.
    ///
    /// # Errors
    /// [`Error::Corrupt`] for bytes that are not a whole, sane region.
    pub fn from_bytes(bytes: &[u8]) -> Result<Region> {
        let mut r = Reader::new(bytes, "region", 0);
        let region = Region::decode(&mut r, true)?;
        if r.remaining() != 0 {
            return Err(r.corrupt(format!("{} bytes after the region", r.remaining())));
        }
        Ok(region)
    }

    /// Whether the selection fits its dataspace (see the module comment).
    fn check(&self, unlimited: bool) -> std::result::Result<(), String> {
        let rank = self.dims.len();
        if rank > MAX_RANK {
            return Err(bad(format!("selection of rank {rank}")));
        }
        if self
            .dims
            .iter()
            .try_fold(1u64, |a, &d| a.checked_mul(d))
            .is_none()
        {
            return Err(bad("a dataspace of 2^64 elements or more"));
        }
        let inside = |c: &[u64]| c.len() == rank && c.iter().zip(&self.dims).all(|(x, d)| x < d);
        match &self.selection {
            RegionSelection::None | RegionSelection::All => Ok(()),
            _ if rank == 0 => Err(bad("a scalar dataspace selects all or none")),
            RegionSelection::Points(p) => match p.iter().find(|c| !inside(c)) {
                Some(c) => Err(bad(format!("point {c:?} outside {:?}", self.dims))),
                None => Ok(()),
            },
            RegionSelection::Hyperslab(d) => {
                if d.len() != rank {
                    return Err(bad(format!("hyperslab of rank {} in rank {rank}", d.len())));
                }
                for (s, &n) in d.iter().zip(&self.dims) {
                    if s.stride == 0 || s.block == 0 {
                        return Err(bad(format!("hyperslab {s:?}: zero stride or block")));
                    }
                    if s.count == UNLIMITED {
                        if !unlimited {
                            return Err(bad("an unlimited count outside a virtual mapping"));
                        }
                        if s.block > s.stride {
                            return Err(bad(format!("hyperslab {s:?}: blocks overlap")));
                        }
                        continue;
                    }
                    if s.count > 1 && s.block > s.stride {
                        return Err(bad(format!("hyperslab {s:?}: blocks overlap")));
                    }
                    if s.count == 0 {
                        continue;
                    }
                    let end = (s.count - 1)
                        .checked_mul(s.stride)
                        .and_then(|x| x.checked_add(s.start))
                        .and_then(|x| x.checked_add(s.block));
                    if end.is_none_or(|e| e > n) {
                        return Err(bad(format!("hyperslab {s:?} outside an extent of {n}")));
                    }
                }
                Ok(())
            }
            RegionSelection::Blocks(b) => {
                for (start, count) in b {
                    let fits = start.len() == rank
                        && count.len() == rank
                        && start
                            .iter()
                            .zip(count)
                            .zip(&self.dims)
                            .all(|((&s, &c), &d)| {
                                c >= 1 && s.checked_add(c).is_some_and(|e| e <= d)
                            });
                    if !fits {
                        return Err(bad(format!(
                            "box at {start:?} of {count:?} outside {:?}",
                            self.dims
                        )));
                    }
                }
                Ok(())
            }
        }
    }
}

/// Elements between consecutive indices of each dimension of a row-major
/// array of `dims`.
pub(crate) fn row_strides(dims: &[u64]) -> Vec<u64> {
    let mut s = vec![1u64; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1].saturating_mul(dims[i + 1]);
    }
    s
}

/// Append the row-major indices of the product of per-dimension index
/// progressions `(first, n, step)` to `out`, in row-major order.
fn product_linear(sets: &[Vec<(u64, u64, u64)>], strides: &[u64], out: &mut Vec<u64>) {
    let indices: Vec<Vec<u64>> = sets
        .iter()
        .map(|runs| {
            runs.iter()
                .flat_map(|&(a, n, s)| (0..n).map(move |i| a + i * s))
                .collect()
        })
        .collect();
    if indices.iter().any(|v| v.is_empty()) {
        return;
    }
    let rank = indices.len();
    if rank == 0 {
        out.push(0);
        return;
    }
    let mut pos = vec![0usize; rank];
    loop {
        let base: u64 = (0..rank - 1).map(|d| indices[d][pos[d]] * strides[d]).sum();
        let last = &indices[rank - 1];
        out.extend(last.iter().map(|&x| base + x * strides[rank - 1]));
        let mut d = rank - 1;
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            pos[d] += 1;
            if pos[d] < indices[d].len() {
                break;
            }
            pos[d] = 0;
        }
    }
}

/// A region reference: a dataset (by its header address, its id) and a
/// selection of it.
///
/// ```
/// use arca::{Region, RegionRef, RegionSelection};
/// let r = RegionRef { object: 8192, region: Region::new(vec![4], RegionSelection::All).unwrap() };
/// assert_eq!(RegionRef::from_bytes(&r.to_bytes()).unwrap(), r);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RegionRef {
    /// The dataset's id ([`crate::Dataset::id`]).
    pub object: u64,
    /// What of it is selected.
    pub region: Region,
}

impl RegionRef {
    /// The stored form: `u64` object, then the region.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = Writer::new();
        w.u64(self.object);
        self.region.encode(&mut w);
        w.buf
    }

    /// Decode a stored region reference, all of `bytes`.
    ///
    /// # Errors
    /// [`Error::Corrupt`] for a null object, an unlimited count or bytes
    /// that are not a whole, sane region.
    pub fn from_bytes(bytes: &[u8]) -> Result<RegionRef> {
        let mut r = Reader::new(bytes, "region reference", 0);
        let object = r.u64()?;
        if object == 0 {
            return Err(r.corrupt("a region reference to no object"));
        }
        let region = Region::decode(&mut r, false)?;
        if r.remaining() != 0 {
            return Err(r.corrupt(format!("{} bytes after the region", r.remaining())));
        }
        Ok(RegionRef { object, region })
    }
}

/// Refuse region-reference elements (`offsets` into `values`, each empty
/// or one encoded reference) that do not decode.
pub(crate) fn check_refs(values: &[u8], offsets: &[u64]) -> Result<()> {
    let base = offsets.first().copied().unwrap_or(0);
    for w in offsets.windows(2) {
        let piece = w[0]
            .checked_sub(base)
            .zip(w[1].checked_sub(base))
            .and_then(|(a, b)| values.get(a as usize..b as usize))
            .ok_or_else(|| Error::invalid("offsets past the values"))?;
        if !piece.is_empty() {
            RegionRef::from_bytes(piece)
                .map_err(|e| Error::invalid(format!("not a region reference: {e}")))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slab(start: u64, stride: u64, count: u64, block: u64) -> SlabDim {
        SlabDim {
            start,
            stride,
            count,
            block,
        }
    }

    #[test]
    fn every_kind_round_trips() {
        let all = [
            Region::new(vec![], RegionSelection::All).unwrap(),
            Region::new(vec![3, 4], RegionSelection::None).unwrap(),
            Region::new(
                vec![3, 4],
                RegionSelection::Points(vec![vec![2, 3], vec![0, 0]]),
            )
            .unwrap(),
            Region::new(
                vec![10, 4],
                RegionSelection::Hyperslab(vec![slab(1, 3, 3, 2), slab(0, 1, 4, 1)]),
            )
            .unwrap(),
            Region::new(
                vec![10, 4],
                RegionSelection::Blocks(vec![(vec![0, 0], vec![2, 2]), (vec![1, 1], vec![2, 3])]),
            )
            .unwrap(),
        ];
        for r in all {
            assert_eq!(Region::from_bytes(&r.to_bytes()).unwrap(), r);
            let rr = RegionRef {
                object: 4096,
                region: r,
            };
            assert_eq!(RegionRef::from_bytes(&rr.to_bytes()).unwrap(), rr);
        }
    }

    #[test]
    fn elements_in_selection_order() {
        let h = Region::new(
            vec![6, 3],
            RegionSelection::Hyperslab(vec![slab(0, 3, 2, 2), slab(1, 1, 2, 1)]),
        )
        .unwrap();
        assert_eq!(h.linear().unwrap(), [1, 2, 4, 5, 10, 11, 13, 14]);
        assert_eq!(h.len().unwrap(), 8);
        let p = Region::new(vec![5], RegionSelection::Points(vec![vec![4], vec![1]])).unwrap();
        assert_eq!(p.linear().unwrap(), [4, 1]);
        // Overlapping boxes count each element once, in row-major order.
        let b = Region::new(
            vec![3, 3],
            RegionSelection::Blocks(vec![(vec![1, 1], vec![2, 2]), (vec![0, 0], vec![2, 2])]),
        )
        .unwrap();
        assert_eq!(b.linear().unwrap(), [0, 1, 3, 4, 5, 7, 8]);
        assert_eq!(b.len().unwrap(), 7);
        let u = Region::new_unlimited(
            vec![10],
            RegionSelection::Hyperslab(vec![slab(1, 2, UNLIMITED, 1)]),
        )
        .unwrap();
        assert!(u.is_unlimited() && u.len().is_err());
        assert_eq!(u.with_count(3).linear().unwrap(), [1, 3, 5]);
    }

    #[test]
    fn damaged_regions_are_refused() {
        let bad = [
            Region {
                dims: vec![4],
                selection: RegionSelection::Points(vec![vec![4]]),
            },
            Region {
                dims: vec![4],
                selection: RegionSelection::Points(vec![vec![1, 1]]),
            },
            Region {
                dims: vec![10],
                selection: RegionSelection::Hyperslab(vec![slab(0, 1, 2, 2)]),
            },
            Region {
                dims: vec![10],
                selection: RegionSelection::Hyperslab(vec![slab(5, 3, 2, 3)]),
            },
            Region {
                dims: vec![10],
                selection: RegionSelection::Hyperslab(vec![slab(0, 0, 1, 1)]),
            },
            Region {
                dims: vec![10],
                selection: RegionSelection::Hyperslab(vec![slab(u64::MAX - 1, 1, 1, 2)]),
            },
            Region {
                dims: vec![10],
                selection: RegionSelection::Blocks(vec![(vec![9], vec![2])]),
            },
            Region {
                dims: vec![10],
                selection: RegionSelection::Blocks(vec![(vec![0], vec![0])]),
            },
            Region {
                dims: vec![],
                selection: RegionSelection::Points(vec![vec![]]),
            },
            Region {
                dims: vec![u64::MAX, 2],
                selection: RegionSelection::All,
            },
        ];
        for r in bad {
            let e = Region::from_bytes(&r.to_bytes()).unwrap_err();
            assert!(matches!(e, Error::Corrupt { .. }), "{r:?}: {e}");
        }
        // Counts that claim more than the bytes hold, unknown kinds, a
        // reference to no object, an unlimited count in a reference.
        let mut w = Writer::new();
        w.u8(1).u64(10).u8(2).u64(u64::MAX / 2);
        assert!(Region::from_bytes(&w.buf).is_err());
        assert!(Region::from_bytes(&[0, 9]).is_err());
        assert!(Region::from_bytes(&[0, 1, 0]).is_err());
        let all = Region::new(vec![2], RegionSelection::All).unwrap();
        let none = RegionRef {
            object: 0,
            region: all,
        };
        assert!(RegionRef::from_bytes(&none.to_bytes()).is_err());
        let u = Region::new_unlimited(
            vec![10],
            RegionSelection::Hyperslab(vec![slab(0, 1, UNLIMITED, 1)]),
        )
        .unwrap();
        let r = RegionRef {
            object: 4096,
            region: u,
        };
        assert!(RegionRef::from_bytes(&r.to_bytes()).is_err());
    }
}
