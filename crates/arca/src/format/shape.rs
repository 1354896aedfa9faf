//! Dataspaces: the shape of a dataset's or an attribute's elements, as the
//! object header (message 4) and attribute records both keep it.
//!
//! ```text
//! +0  u8          rank      0 = a scalar, 1..=MAX_RANK dimensions, or
//!                           0xFF = a null dataspace: no elements at all and
//!                           no dims (format version 3)
//! +1  rank × u64  dims
//! then, in the object header only:
//!     rank × u64  maxdims   u64::MAX = unlimited; each at least its dim
//! ```

use crate::error::Result;
use crate::format::codec::{Reader, Writer};
use crate::pool::lists::EXTENTS;
use crate::pool::PooledVec;

/// Highest rank a dataset may have.
pub const MAX_RANK: usize = 32;
/// The rank byte of a null dataspace.
pub(crate) const NULL_RANK: u8 = 0xFF;

/// A vector decoded extents go into: a plain one, or one from a free list
/// (a dataset's header is decoded again by every dataset call).
pub(crate) trait Extents {
    /// An empty vector with room for `n` extents.
    fn with_room(n: usize) -> Self;
    fn push(&mut self, v: u64);
    fn as_slice(&self) -> &[u64];
}

impl Extents for Vec<u64> {
    fn with_room(n: usize) -> Self {
        Vec::with_capacity(n)
    }
    fn push(&mut self, v: u64) {
        Vec::push(self, v)
    }
    fn as_slice(&self) -> &[u64] {
        self
    }
}

impl Extents for PooledVec<u64> {
    fn with_room(n: usize) -> Self {
        EXTENTS.take(n)
    }
    fn push(&mut self, v: u64) {
        Vec::push(self, v)
    }
    fn as_slice(&self) -> &[u64] {
        self
    }
}

/// A decoded dataspace.
#[derive(Debug)]
pub(crate) struct Dataspace<V> {
    /// A null dataspace (then `dims` is empty).
    pub(crate) null: bool,
    pub(crate) dims: V,
}

/// The rank byte and dims, as an attribute record keeps them.
pub(crate) fn encode(w: &mut Writer, null: bool, dims: &[u64]) {
    w.u8(if null { NULL_RANK } else { dims.len() as u8 });
    for &d in dims {
        w.u64(d);
    }
}

/// The rank byte, dims and maxdims, as the object header keeps them.
pub(crate) fn encode_with_max(w: &mut Writer, null: bool, dims: &[u64], maxdims: &[u64]) {
    encode(w, null, dims);
    for &m in maxdims {
        w.u64(m);
    }
}

/// Decode the rank byte and dims ([`encode`]).
pub(crate) fn decode<V: Extents>(r: &mut Reader) -> Result<Dataspace<V>> {
    let rank = r.u8()?;
    let null = rank == NULL_RANK;
    let rank = if null { 0 } else { rank as usize };
    if rank > MAX_RANK {
        return Err(r.corrupt(format!("rank {rank}")));
    }
    Ok(Dataspace {
        null,
        dims: read_extents(r, rank)?,
    })
}

/// Decode the rank byte, dims and maxdims ([`encode_with_max`]), checking
/// no dim exceeds its maximum.
pub(crate) fn decode_with_max<V: Extents>(r: &mut Reader) -> Result<(Dataspace<V>, V)> {
    let space: Dataspace<V> = decode(r)?;
    let maxdims: V = read_extents(r, space.dims.as_slice().len())?;
    let (dims, max) = (space.dims.as_slice(), maxdims.as_slice());
    if dims.iter().zip(max).any(|(d, m)| d > m) {
        return Err(r.corrupt("dimension larger than its maximum"));
    }
    Ok((space, maxdims))
}

fn read_extents<V: Extents>(r: &mut Reader, n: usize) -> Result<V> {
    let mut v = V::with_room(n);
    for _ in 0..n {
        v.push(r.u64()?);
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    fn decoded(b: &[u8]) -> Result<Dataspace<Vec<u64>>> {
        let mut r = Reader::new(b, "dataspace", 0);
        let s = decode(&mut r)?;
        assert_eq!(r.remaining(), 0);
        Ok(s)
    }

    fn decoded_with_max(b: &[u8]) -> Result<(Dataspace<Vec<u64>>, Vec<u64>)> {
        let mut r = Reader::new(b, "dataspace", 0);
        let s = decode_with_max(&mut r)?;
        assert_eq!(r.remaining(), 0);
        Ok(s)
    }

    fn corrupt(e: Result<impl std::fmt::Debug>) -> String {
        match e {
            Err(e @ Error::Corrupt { .. }) => e.to_string(),
            other => panic!("expected a corrupt error, got {other:?}"),
        }
    }

    #[test]
    fn round_trips() {
        for dims in [vec![], vec![7], vec![1, 2, 3], vec![u64::MAX; MAX_RANK]] {
            let mut w = Writer::new();
            encode(&mut w, false, &dims);
            assert_eq!(w.buf.len(), 1 + 8 * dims.len());
            let s = decoded(&w.buf).unwrap();
            assert_eq!((s.null, s.dims), (false, dims.clone()));

            let max: Vec<u64> = dims.iter().map(|d| d.saturating_add(1)).collect();
            let mut w = Writer::new();
            encode_with_max(&mut w, false, &dims, &max);
            let (s, m) = decoded_with_max(&w.buf).unwrap();
            assert_eq!((s.null, s.dims, m), (false, dims, max));
        }
        let mut w = Writer::new();
        encode_with_max(&mut w, true, &[], &[]);
        assert_eq!(w.buf, [NULL_RANK]);
        let (s, m) = decoded_with_max(&w.buf).unwrap();
        assert!(s.null && s.dims.is_empty() && m.is_empty());
    }

    #[test]
    fn pooled_extents_decode_alike() {
        let mut w = Writer::new();
        encode_with_max(&mut w, false, &[2, 3], &[4, u64::MAX]);
        let mut r = Reader::new(&w.buf, "dataspace", 0);
        let (s, m): (Dataspace<PooledVec<u64>>, _) = decode_with_max(&mut r).unwrap();
        assert_eq!((&s.dims[..], &m[..]), (&[2, 3][..], &[4, u64::MAX][..]));
    }

    #[test]
    fn every_damage_is_refused() {
        // A rank above the limit (but not the null rank).
        for rank in [MAX_RANK as u8 + 1, 0xFE] {
            let mut b = vec![rank];
            b.resize(1 + 16 * rank as usize, 0);
            assert!(corrupt(decoded(&b)).contains(&format!("rank {rank}")));
        }
        // No rank byte.
        corrupt(decoded(&[]));
        // Dims cut short.
        let mut w = Writer::new();
        encode(&mut w, false, &[1, 2]);
        corrupt(decoded(&w.buf[..w.buf.len() - 1]));
        // Maxdims missing or cut short.
        corrupt(decoded_with_max(&w.buf));
        let mut w = Writer::new();
        encode_with_max(&mut w, false, &[1, 2], &[1, 2]);
        corrupt(decoded_with_max(&w.buf[..w.buf.len() - 3]));
        // A dim above its maximum.
        let mut w = Writer::new();
        encode_with_max(&mut w, false, &[1, 5], &[1, 4]);
        assert!(corrupt(decoded_with_max(&w.buf)).contains("larger than its maximum"));
    }
}
