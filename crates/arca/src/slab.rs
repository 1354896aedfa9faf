//! A slab (a box) of an array cut along a dataset's chunk grid: the chunks the
//! slab covers whole are filtered here, in the caller's process, and the
//! parts of the chunks it covers only in part are named for a merge by
//! whoever holds the file. Each rank of an MPI job compresses its own
//! slab this way, in parallel with the others, then writes the bytes
//! into space from [`crate::Dataset::reserve_chunks`].

use crate::error::{Error, Result};
use crate::filter::{encode_pooled, Filter};
use crate::selection::{copy_box, fill_box, Window};

/// One whole chunk of an [`EncodedSlab`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodedChunk {
    /// The chunk's first element, per dimension.
    pub offset: Vec<u64>,
    /// Stored bytes, after the filters.
    pub len: u64,
    /// The filter mask to store it with (see
    /// [`crate::Dataset::write_chunk_stored`]).
    pub mask: u32,
    /// CRC32C (Castagnoli) of the stored bytes.
    pub crc: u32,
}

/// What [`encode_slab`] makes of a slab.
#[derive(Debug, Default)]
pub struct EncodedSlab {
    /// The whole chunks' stored bytes, back to back, in the order of
    /// `chunks`.
    pub bytes: Vec<u8>,
    /// The chunks the slab covers whole, in grid order.
    pub chunks: Vec<EncodedChunk>,
    /// The slab's parts in chunks it covers only in part, as
    /// `(start, count)` in the dataset's coordinates.
    pub partial: Vec<(Vec<u64>, Vec<u64>)>,
}

/// Cut `slab`, the row-major elements (`elem` bytes each) of the box
/// `start`..`start + count` of a dataset of extent `dims` chunked by
/// `chunk`, into the chunks it covers whole, each through `filters`; a
/// chunk that runs past the extent is whole when the slab covers its part
/// inside, the rest being `fill` (one element; empty for zeros).
///
/// ```
/// use arca::{encode_slab, Filter};
/// let slab: Vec<u8> = (0..6 * 4).map(|i| i as u8).collect();
/// // Rows 2..8 of a 10 x 4 byte array chunked 4 x 4: chunk 4..8 is whole.
/// let e = encode_slab(&[Filter::Zstd(1)], 1, &[10, 4], &[4, 4], &[2, 0], &[6, 4], &slab, &[])
///     .unwrap();
/// assert_eq!(e.chunks.len(), 1);
/// assert_eq!(e.chunks[0].offset, vec![4, 0]);
/// assert_eq!(e.partial, vec![(vec![2, 0], vec![2, 4])]);
/// ```
///
/// # Errors
/// [`Error::InvalidArgument`] when the ranks differ, the box leaves the
/// extent, `slab` or `fill` has the wrong length, a chunk dimension is 0,
/// or the pipeline is one a dataset could not have.
#[allow(clippy::too_many_arguments)]
pub fn encode_slab(
    filters: &[Filter],
    elem: usize,
    dims: &[u64],
    chunk: &[u64],
    start: &[u64],
    count: &[u64],
    slab: &[u8],
    fill: &[u8],
) -> Result<EncodedSlab> {
    Filter::validate_pipeline(filters)?;
    let rank = dims.len();
    if chunk.len() != rank || start.len() != rank || count.len() != rank {
        return Err(Error::invalid(format!(
            "extent, chunk, start and count of ranks {}, {}, {} and {}",
            rank,
            chunk.len(),
            start.len(),
            count.len()
        )));
    }
    if elem == 0 || chunk.contains(&0) {
        return Err(Error::invalid(
            "elements and chunk dimensions must not be empty",
        ));
    }
    if start
        .iter()
        .zip(count)
        .zip(dims)
        .any(|((&s, &c), &d)| s.checked_add(c).is_none_or(|e| e > d))
    {
        return Err(Error::invalid(format!(
            "the box at {start:?} of {count:?} leaves the extent {dims:?}"
        )));
    }
    let elements = count
        .iter()
        .try_fold(1u64, |a, &c| a.checked_mul(c))
        .and_then(|n| n.checked_mul(elem as u64));
    if elements != Some(slab.len() as u64) {
        return Err(Error::invalid(format!(
            "{} bytes for a box of {count:?} elements of {elem} bytes",
            slab.len()
        )));
    }
    if !fill.is_empty() && fill.len() != elem {
        return Err(Error::invalid(format!(
            "a fill value of {} bytes for elements of {elem}",
            fill.len()
        )));
    }
    let mut out = EncodedSlab::default();
    if count.contains(&0) {
        return Ok(out);
    }
    let chunk_elems = chunk
        .iter()
        .try_fold(1u64, |a, &c| a.checked_mul(c))
        .and_then(|n| n.checked_mul(elem as u64))
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| Error::invalid("a chunk larger than memory"))?;
    let zero = vec![0u8; elem];
    let fill = if fill.is_empty() { &zero[..] } else { fill };
    let ones = vec![1u64; rank];
    let zeros = vec![0u64; rank];
    // The grid range the box touches, per dimension.
    let first: Vec<u64> = start.iter().zip(chunk).map(|(s, c)| s / c).collect();
    let last: Vec<u64> = start
        .iter()
        .zip(count)
        .zip(chunk)
        .map(|((s, n), c)| (s + n - 1) / c)
        .collect();
    let mut idx = first.clone();
    let mut plain = vec![0u8; chunk_elems];
    loop {
        let c0: Vec<u64> = idx.iter().zip(chunk).map(|(i, c)| i * c).collect();
        let c1: Vec<u64> = c0
            .iter()
            .zip(chunk)
            .zip(dims)
            .map(|((a, c), d)| (a + c).min(*d))
            .collect();
        let s0: Vec<u64> = c0.iter().zip(start).map(|(a, b)| *a.max(b)).collect();
        let s1: Vec<u64> = c1
            .iter()
            .zip(start.iter().zip(count))
            .map(|(a, (s, n))| (*a).min(s + n))
            .collect();
        let n: Vec<u64> = s1.iter().zip(&s0).map(|(e, b)| e - b).collect();
        if s0 == c0 && s1 == c1 {
            let from: Vec<u64> = s0.iter().zip(start).map(|(a, b)| a - b).collect();
            // A chunk that is whole rows of the slab lies in it as one
            // run: filtered from there, without a copy.
            let unclipped = n.iter().zip(chunk).all(|(a, b)| a == b);
            let rows = n.iter().zip(count).skip(1).all(|(a, b)| a == b);
            let elements = if unclipped && rows {
                let at = (from[0] * count[1..].iter().product::<u64>()) as usize * elem;
                &slab[at..at + chunk_elems]
            } else {
                // The chunk's own frame: the whole chunk from its corner.
                let whole = Window {
                    dims: chunk,
                    start: &zeros,
                    step: &ones,
                };
                if !unclipped {
                    fill_box(elem, chunk, fill, &mut plain, &whole)?;
                }
                let src = Window {
                    dims: count,
                    start: &from,
                    step: &ones,
                };
                copy_box(elem, &n, slab, &src, &mut plain, &whole)?;
                &plain[..]
            };
            let (enc, mask) = encode_pooled(filters, elem, elements)?;
            out.chunks.push(EncodedChunk {
                offset: c0,
                len: enc.len() as u64,
                mask,
                crc: crc32c::crc32c(&enc),
            });
            out.bytes.extend_from_slice(&enc);
        } else {
            out.partial.push((s0, n));
        }
        // Odometer over the grid range, last dimension fastest.
        let mut k = rank;
        loop {
            if k == 0 {
                return Ok(out);
            }
            k -= 1;
            idx[k] += 1;
            if idx[k] <= last[k] {
                break;
            }
            idx[k] = first[k];
        }
    }
}
