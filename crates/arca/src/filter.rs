//! The chunk filter pipeline: shuffle, then at most one compressor.
//!
//! Codecs come from maintained crates (flate2, zstd, lz4); this module
//! only orders them and records what each chunk went through.

use crate::error::{Error, Result};
use crate::pool::lists::{CHUNKS, FILTER};
use crate::pool::PooledBuf;

mod bits;
mod bitshuffle;
mod blosc;
mod blosc2;
mod codecs;
mod hdf5;
mod nbit;
mod scaleoffset;
mod szip;

use codecs::{
    deflated, inflate_into, lz4_decode, shuffled, unshuffle_into, zstd_compressed, zstd_decompress,
    Inflated,
};

pub use crate::format::filter_pipeline::Filter;
pub(crate) use crate::format::filter_pipeline::MASK_UNFILTERED;

/// A chunk's elements (`plain`, `element_size`-byte elements in the dataset's
/// byte order) through `filters`, as a write would store them: the stored
/// bytes and the mask to record with
/// [`crate::Dataset::write_chunk_stored`]. Lets the chunks of one dataset be
/// compressed elsewhere (other processes, other machines) and stored as
/// they are.
///
/// ```
/// use arca::{encode_chunk, Filter};
/// let plain: Vec<u8> = (0..4096u32).flat_map(|i| (i / 8).to_le_bytes()).collect();
/// let (stored, mask) = encode_chunk(&[Filter::Shuffle, Filter::Zstd(3)], 4, &plain).unwrap();
/// assert!(stored.len() < plain.len() / 4 && mask == 0);
/// ```
///
/// # Errors
/// [`Error::InvalidArgument`] for a pipeline a dataset could not have;
/// [`Error::Unsupported`] for an HDF5 filter arca cannot encode.
pub fn encode_chunk(
    filters: &[Filter],
    element_size: usize,
    plain: &[u8],
) -> Result<(Vec<u8>, u32)> {
    Filter::validate_pipeline(filters)?;
    let (out, mask) = encode_pooled(filters, element_size.max(1), plain)?;
    Ok((out.into_vec(), mask))
}

/// [`encode_chunk`] undone: the `nbytes` bytes of a chunk's elements from
/// its stored bytes and filter mask, checked as a read checks them.
///
/// ```
/// use arca::{decode_chunk, encode_chunk, Filter};
/// let plain: Vec<u8> = (0..4096u32).flat_map(|i| (i / 8).to_le_bytes()).collect();
/// let fs = [Filter::Shuffle, Filter::Zstd(3)];
/// let (stored, mask) = encode_chunk(&fs, 4, &plain).unwrap();
/// assert_eq!(decode_chunk(&fs, 4, &stored, mask, plain.len()).unwrap(), plain);
/// ```
///
/// # Errors
/// [`Error::Corrupt`] for bytes that do not decode to `nbytes`;
/// [`Error::InvalidArgument`] for a pipeline a dataset could not have.
pub fn decode_chunk(
    filters: &[Filter],
    element_size: usize,
    stored: &[u8],
    mask: u32,
    nbytes: usize,
) -> Result<Vec<u8>> {
    Filter::validate_pipeline(filters)?;
    decode(
        filters,
        mask,
        element_size.max(1),
        stored.to_vec(),
        nbytes,
        0,
    )
}

/// Run the pipeline forward. Returns the stored bytes and the mask to record.
#[cfg(test)]
pub(crate) fn encode(filters: &[Filter], elem: usize, plain: &[u8]) -> Result<(Vec<u8>, u32)> {
    let (out, mask) = encode_pooled(filters, elem, plain)?;
    Ok((out.into_vec(), mask))
}

/// The pipeline run forward, into buffers from the filter free list; every stage writes
/// into a reused buffer, so a warm pipeline allocates nothing.
pub(crate) fn encode_pooled(
    filters: &[Filter],
    elem: usize,
    plain: &[u8],
) -> Result<(PooledBuf, u32)> {
    if filters.is_empty() {
        return Ok((FILTER.take_copy(plain), 0));
    }
    if Filter::is_hdf5(filters) {
        return hdf5::encode(filters, elem, plain);
    }
    let mut buf: Option<PooledBuf> = None;
    for f in filters {
        let input: &[u8] = buf.as_deref().map_or(plain, |b| &b[..]);
        let out = match f {
            Filter::Shuffle => shuffled(input, elem),
            Filter::Deflate(level) => deflated(input, *level)?,
            Filter::Zstd(level) => zstd_compressed(input, *level)?,
            Filter::Lz4 => {
                // The block format with a u32 LE size prefix, as stored since
                // the first version. liblz4 rather than lz4_flex: decoding
                // shuffled floats took half of a 64 MiB lz4 read's CPU time
                // with lz4_flex and 3% with liblz4 (perf).
                let bound = 4 + lz4::block::compress_bound(input.len())
                    .map_err(|e| Error::io("lz4 compress", e))?;
                let mut out = FILTER.take_zeroed(bound);
                let n = lz4::block::compress_to_buffer(input, None, true, &mut out)
                    .map_err(|e| Error::io("lz4 compress", e))?;
                out.truncate(n);
                out
            }
            Filter::Hdf5(_) => unreachable_hdf5()?,
        };
        buf = Some(out);
    }
    match buf {
        Some(out) if out.len() < plain.len() => Ok((out, 0)),
        // Incompressible: store as is rather than pay to decode on every read.
        _ => Ok((FILTER.take_copy(plain), MASK_UNFILTERED)),
    }
}

/// Undo the pipeline; `expect` is the decoded chunk size, which bounds every
/// decompressor so that damaged input cannot ask for unbounded memory.
pub(crate) fn decode(
    filters: &[Filter],
    mask: u32,
    elem: usize,
    stored: Vec<u8>,
    expect: usize,
    addr: u64,
) -> Result<Vec<u8>> {
    if Filter::unfiltered(filters, mask) {
        check_unfiltered(&stored, expect, addr)?;
        return Ok(stored);
    }
    Ok(decode_pooled(filters, mask, elem, &stored, expect, addr)?.into_vec())
}

fn check_unfiltered(stored: &[u8], expect: usize, addr: u64) -> Result<()> {
    if stored.len() != expect {
        return Err(Error::corrupt(
            "chunk",
            addr,
            format!("holds {} bytes, expected {expect}", stored.len()),
        ));
    }
    Ok(())
}

/// [`decode`] from borrowed stored bytes into a chunk buffer from the chunk
/// free list, with intermediate stages in filter buffers.
pub(crate) fn decode_pooled(
    filters: &[Filter],
    mask: u32,
    elem: usize,
    stored: &[u8],
    expect: usize,
    addr: u64,
) -> Result<PooledBuf> {
    if Filter::unfiltered(filters, mask) {
        check_unfiltered(stored, expect, addr)?;
        return Ok(CHUNKS.take_copy(stored));
    }
    if Filter::is_hdf5(filters) {
        return hdf5::decode(filters, mask, elem, stored, expect, addr);
    }
    check_expansion(filters, stored, expect, addr)?;
    let mut buf: Option<PooledBuf> = None;
    for (i, f) in filters.iter().enumerate().rev() {
        let input: &[u8] = buf.as_deref().map_or(stored, |b| &b[..]);
        // Every stage decodes to the chunk's size; the last one undone
        // writes the chunk itself.
        let list = if i == 0 { &CHUNKS } else { &FILTER };
        let mut out = list.take_zeroed(expect);
        decode_stage(f, elem, input, addr, &mut out)?;
        buf = Some(out);
    }
    Ok(buf.unwrap_or_else(|| CHUNKS.take_copy(stored)))
}

/// Refuse stored bytes that could not decode to `expect` bytes before a
/// buffer of that size is made: a chunk shape from a damaged header may
/// claim gigabytes for a few stored bytes. The compressor's own record of
/// the size is checked (zstd's frame, lz4's prefix), or deflate's largest
/// possible ratio.
fn check_expansion(filters: &[Filter], stored: &[u8], expect: usize, addr: u64) -> Result<()> {
    let bad = |d: String| Err(Error::corrupt("chunk", addr, d));
    let Some(c) = filters.iter().rev().find(|f| **f != Filter::Shuffle) else {
        return check_unfiltered(stored, expect, addr);
    };
    match c {
        Filter::Zstd(_) => match zstd::zstd_safe::get_frame_content_size(stored) {
            Ok(Some(n)) if n == expect as u64 => Ok(()),
            Ok(Some(n)) => bad(format!("zstd frame of {n} bytes, expected {expect}")),
            // Frames without a size are checked as they decode.
            Ok(None) => Ok(()),
            Err(_) => bad("not a zstd frame".into()),
        },
        Filter::Lz4 => match stored.get(0..4) {
            Some(b) if u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize == expect => Ok(()),
            _ => bad(format!("lz4 block does not hold {expect} bytes")),
        },
        Filter::Deflate(_) => {
            // Deflate expands at most about 1032:1.
            if expect as u64 > stored.len() as u64 * 1100 + 4096 {
                return bad(format!(
                    "{} deflated bytes cannot hold {expect}",
                    stored.len()
                ));
            }
            Ok(())
        }
        Filter::Shuffle | Filter::Hdf5(_) => Ok(()),
    }
}

/// HDF5 pipelines are whole (never mixed with arca's filters, checked
/// when a pipeline is made or read) and run by `hdf5`; reaching an HDF5
/// stage in arca's own pipeline code is a broken invariant, reported
/// rather than panicked on.
fn unreachable_hdf5<T>() -> Result<T> {
    Err(Error::invalid(
        "an HDF5 filter inside one of arca's own pipelines",
    ))
}

/// [`decode_pooled`] with the last stage writing straight into `out`
/// (`out.len()` is the decoded chunk size): a chunk that lands contiguously
/// in the caller's buffer is never copied.
pub(crate) fn decode_into(
    filters: &[Filter],
    mask: u32,
    elem: usize,
    stored: &[u8],
    addr: u64,
    out: &mut [u8],
) -> Result<()> {
    let expect = out.len();
    if Filter::is_hdf5(filters) && !Filter::unfiltered(filters, mask) {
        return hdf5::decode_into(filters, mask, elem, stored, addr, out);
    }
    let Some((first, rest)) = filters.split_first().filter(|_| mask != MASK_UNFILTERED) else {
        check_unfiltered(stored, expect, addr)?;
        out.copy_from_slice(stored);
        return Ok(());
    };
    // Every stage but the first is undone into pooled buffers; each of
    // those stages preserves the chunk's size.
    let mid = if rest.is_empty() {
        None
    } else {
        Some(decode_pooled(rest, mask, elem, stored, expect, addr)?)
    };
    decode_stage(
        first,
        elem,
        mid.as_deref().map_or(stored, |b| &b[..]),
        addr,
        out,
    )
}

/// Undo one filter from `input` into `out`, whose length is the size the
/// stage must decode to (every stage preserves the chunk's size); damaged or
/// mis-sized input is an error naming the chunk at `addr`.
fn decode_stage(f: &Filter, elem: usize, input: &[u8], addr: u64, out: &mut [u8]) -> Result<()> {
    let expect = out.len();
    let bad = |d: String| Error::corrupt("chunk", addr, d);
    let got = match f {
        Filter::Shuffle => {
            check_unfiltered(input, expect, addr)?;
            if elem > 1 {
                unshuffle_into(input, elem, out);
            } else {
                out.copy_from_slice(input);
            }
            expect
        }
        Filter::Deflate(_) => match inflate_into(input, out) {
            Ok(n) => n,
            Err(Inflated::TooLong) => {
                return Err(bad(format!("deflate: decodes past {expect} bytes")))
            }
            Err(Inflated::Damaged(e)) => return Err(bad(format!("deflate: {e}"))),
        },
        Filter::Zstd(_) => zstd_decompress(input, out).map_err(|e| bad(format!("zstd: {e}")))?,
        Filter::Lz4 => lz4_decode(input, out).map_err(bad)?,
        Filter::Hdf5(_) => unreachable_hdf5()?,
    };
    if got != expect {
        return Err(bad(format!("decodes to {got} bytes, expected {expect}")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pipeline_roundtrips() {
        let plain: Vec<u8> = (0..10_000u32).flat_map(|i| (i / 7).to_le_bytes()).collect();
        let pipelines: Vec<Vec<Filter>> = vec![
            vec![],
            vec![Filter::Shuffle],
            vec![Filter::Deflate(6)],
            vec![Filter::Shuffle, Filter::Zstd(3)],
            vec![Filter::Lz4],
            vec![Filter::Shuffle, Filter::Lz4],
        ];
        for p in pipelines {
            let (enc, mask) = encode(&p, 4, &plain).unwrap();
            if p.len() > 1 {
                assert!(enc.len() < plain.len() / 4, "{p:?}");
            }
            let mut direct = vec![0u8; plain.len()];
            decode_into(&p, mask, 4, &enc, 0, &mut direct).unwrap();
            assert_eq!(direct, plain, "{p:?} decoded in place");
            assert_eq!(decode(&p, mask, 4, enc, plain.len(), 0).unwrap(), plain);
        }
    }

    #[test]
    fn decoding_in_place_checks_size_and_damage() {
        let plain: Vec<u8> = (0..4096u32).map(|i| (i / 3) as u8).collect();
        for p in [
            vec![Filter::Deflate(1)],
            vec![Filter::Zstd(1)],
            vec![Filter::Lz4],
            vec![Filter::Shuffle, Filter::Zstd(1)],
            vec![Filter::Shuffle, Filter::Lz4],
        ] {
            let (enc, mask) = encode(&p, 4, &plain).unwrap();
            // A chunk that decodes to more or fewer bytes than its place.
            for len in [plain.len() - 4, plain.len() + 4] {
                let mut out = vec![0u8; len];
                assert!(
                    decode_into(&p, mask, 4, &enc, 7, &mut out).is_err(),
                    "{p:?} {len}"
                );
            }
            let mut cut = enc.clone();
            cut.truncate(enc.len() / 2);
            let mut out = vec![0u8; plain.len()];
            let e = decode_into(&p, mask, 4, &cut, 7, &mut out).unwrap_err();
            assert!(e.to_string().contains("chunk"), "{p:?}: {e}");
        }
    }

    #[test]
    fn damaged_chunk_is_an_error() {
        let plain = vec![5u8; 4096];
        let (mut enc, mask) = encode(&[Filter::Zstd(1)], 1, &plain).unwrap();
        enc.truncate(enc.len() / 2);
        assert!(decode(&[Filter::Zstd(1)], mask, 1, enc, 4096, 0).is_err());
        assert!(decode(&[Filter::Lz4], 0, 1, vec![1, 2], 4096, 0).is_err());
    }
}
