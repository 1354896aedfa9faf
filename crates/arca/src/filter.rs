//! The chunk filter pipeline: shuffle, then at most one compressor.
//!
//! Codecs come from maintained crates (flate2, zstd, lz4); this module
//! only orders them and records what each chunk went through.

use std::io::{Read, Write};

use crate::error::{Error, Result};
use crate::pool::lists::{CHUNKS, FILTER};
use crate::pool::{ObjectList, PooledBuf, Recycle};

mod hdf5;

pub use crate::format::filter_pipeline::Filter;
pub(crate) use crate::format::filter_pipeline::MASK_UNFILTERED;

/// Shuffle `data` into `out` (same length). Element sizes 2, 4, 8, 12 and
/// 16 (complex numbers, 3-vectors of floats) have a specialised (unrolled)
/// transpose.
fn shuffle_into(data: &[u8], size: usize, out: &mut [u8]) {
    match size {
        2 => transpose::<2>(data, out, true),
        4 => transpose4(data, out, true),
        8 => transpose8(data, out, true),
        12 => transpose_blocked::<12>(data, out, true),
        16 => transpose_blocked::<16>(data, out, true),
        _ => transpose_any(data, out, size, true),
    }
}

fn unshuffle_into(data: &[u8], size: usize, out: &mut [u8]) {
    match size {
        2 => transpose::<2>(data, out, false),
        4 => transpose4(data, out, false),
        8 => transpose8(data, out, false),
        12 => transpose_blocked::<12>(data, out, false),
        16 => transpose_blocked::<16>(data, out, false),
        _ => transpose_any(data, out, size, false),
    }
}

#[cfg(test)]
fn shuffle(data: &[u8], size: usize) -> Vec<u8> {
    let mut out = vec![0u8; data.len()];
    shuffle_into(data, size, &mut out);
    out
}

#[cfg(test)]
fn unshuffle(data: &[u8], size: usize) -> Vec<u8> {
    let mut out = vec![0u8; data.len()];
    unshuffle_into(data, size, &mut out);
    out
}

/// Byte transpose between element order and plane order (`forward`:
/// elements to planes). The plane slices are cut to exactly `n` bytes so
/// the unrolled inner loop indexes within known bounds; trailing bytes that
/// do not make a whole element are copied as they are. The planes are kept
/// in an array, not a vector: this runs once per chunk.
fn transpose<const N: usize>(data: &[u8], out: &mut [u8], forward: bool) {
    let n = data.len() / N;
    if forward {
        let (planes, rest) = out.split_at_mut(n * N);
        let mut it = planes.chunks_exact_mut(n.max(1));
        let p: [&mut [u8]; N] = std::array::from_fn(|_| it.next().unwrap_or_default());
        if n > 0 {
            for (i, e) in data[..n * N].chunks_exact(N).enumerate() {
                for b in 0..N {
                    p[b][i] = e[b];
                }
            }
        }
        rest.copy_from_slice(&data[n * N..]);
    } else {
        let mut it = data[..n * N].chunks_exact(n.max(1));
        let planes: [&[u8]; N] = std::array::from_fn(|_| it.next().unwrap_or_default());
        let (elems, rest) = out.split_at_mut(n * N);
        if n > 0 {
            for (i, e) in elems.chunks_exact_mut(N).enumerate() {
                for b in 0..N {
                    e[b] = planes[b][i];
                }
            }
        }
        rest.copy_from_slice(&data[n * N..]);
    }
}

/// Two 4x4 byte transposes at once, one in each 32-bit half of the words:
/// byte `j` of word `k` becomes byte `k` of word `j`. Shuffling 4-byte
/// elements is this transpose on groups of four elements, and so is
/// unshuffling; on whole words it ran about twice as fast as moving the
/// bytes one by one in a one-off timing (1 MiB: 160 µs against 330 µs),
/// and the 4-byte unshuffle had been a third of a zstd float32 read's time
/// (perf); `bench/concurrency` shows the effect on reads.
fn transpose_4x4x2(x: [u64; 4]) -> [u64; 4] {
    const LO: u64 = 0x00FF_00FF_00FF_00FF;
    const HI: u64 = 0xFF00_FF00_FF00_FF00;
    const W_LO: u64 = 0x0000_FFFF_0000_FFFF;
    const W_HI: u64 = 0xFFFF_0000_FFFF_0000;
    // Pairs of bytes first (rows 0/1 and 2/3), then pairs of pairs.
    let t0 = (x[0] & LO) | ((x[1] << 8) & HI);
    let t1 = ((x[0] >> 8) & LO) | (x[1] & HI);
    let t2 = (x[2] & LO) | ((x[3] << 8) & HI);
    let t3 = ((x[2] >> 8) & LO) | (x[3] & HI);
    [
        (t0 & W_LO) | ((t2 << 16) & W_HI),
        (t1 & W_LO) | ((t3 << 16) & W_HI),
        ((t0 >> 16) & W_LO) | (t2 & W_HI),
        ((t1 >> 16) & W_LO) | (t3 & W_HI),
    ]
}

/// [`transpose`] for 4-byte elements, eight elements at a time through
/// [`transpose_4x4x2`]: eight bytes of a plane make a word, and so do two
/// elements four apart. The planes are split apart first and every access
/// is a fixed-size slice, so the loops carry no bounds checks.
fn transpose4(data: &[u8], out: &mut [u8], forward: bool) {
    let n = data.len() / 4;
    let blocks = n / 8;
    let le = |b: &[u8]| u64::from_le_bytes(b.try_into().unwrap_or_default());
    if forward {
        let (planes, rest) = out.split_at_mut(4 * n);
        let (p0, r) = planes.split_at_mut(n);
        let (p1, r) = r.split_at_mut(n);
        let (p2, p3) = r.split_at_mut(n);
        let mut ps = [p0, p1, p2, p3];
        for (k, e) in data[..blocks * 32].chunks_exact(32).enumerate() {
            // Elements j and j + 4 as the halves of word j.
            let x = |j: usize| {
                let h = |o: usize| {
                    u64::from(u32::from_le_bytes(
                        e[o..o + 4].try_into().unwrap_or_default(),
                    ))
                };
                h(4 * j) | h(16 + 4 * j) << 32
            };
            let y = transpose_4x4x2([x(0), x(1), x(2), x(3)]);
            for (p, w) in ps.iter_mut().zip(y) {
                p[k * 8..k * 8 + 8].copy_from_slice(&w.to_le_bytes());
            }
        }
        for i in blocks * 8..n {
            for (b, p) in ps.iter_mut().enumerate() {
                p[i] = data[4 * i + b];
            }
        }
        rest.copy_from_slice(&data[4 * n..]);
    } else {
        let (p0, r) = data[..4 * n].split_at(n);
        let (p1, r) = r.split_at(n);
        let (p2, p3) = r.split_at(n);
        let (elems, rest) = out.split_at_mut(4 * n);
        for (k, o) in elems[..blocks * 32].chunks_exact_mut(32).enumerate() {
            let at = k * 8..k * 8 + 8;
            let y = transpose_4x4x2([
                le(&p0[at.clone()]),
                le(&p1[at.clone()]),
                le(&p2[at.clone()]),
                le(&p3[at]),
            ]);
            for (j, w) in y.into_iter().enumerate() {
                o[4 * j..4 * j + 4].copy_from_slice(&(w as u32).to_le_bytes());
                o[16 + 4 * j..20 + 4 * j].copy_from_slice(&((w >> 32) as u32).to_le_bytes());
            }
        }
        for i in blocks * 8..n {
            for (b, p) in [p0, p1, p2, p3].iter().enumerate() {
                elems[4 * i + b] = p[i];
            }
        }
        rest.copy_from_slice(&data[4 * n..]);
    }
}

/// An 8x8 byte transpose of eight words (byte `j` of word `k` becomes byte
/// `k` of word `j`), in three rounds that swap ever larger blocks between
/// pairs of words.
fn transpose_8x8(x: &mut [u64; 8]) {
    for (shift, mask, pairs) in [
        (
            8,
            0x00FF_00FF_00FF_00FFu64,
            [(0, 1), (2, 3), (4, 5), (6, 7)],
        ),
        (16, 0x0000_FFFF_0000_FFFF, [(0, 2), (1, 3), (4, 6), (5, 7)]),
        (32, 0x0000_0000_FFFF_FFFF, [(0, 4), (1, 5), (2, 6), (3, 7)]),
    ] {
        for (a, b) in pairs {
            let t = ((x[a] >> shift) ^ x[b]) & mask;
            x[b] ^= t;
            x[a] ^= t << shift;
        }
    }
}

/// [`transpose`] for 8-byte elements, eight at a time through
/// [`transpose_8x8`]: eight bytes of a plane make a word, and so does an
/// element (float64 data; 1 MiB in about half the time of byte moves, in
/// a one-off timing).
fn transpose8(data: &[u8], out: &mut [u8], forward: bool) {
    let n = data.len() / 8;
    let blocks = n / 8;
    let le = |b: &[u8]| u64::from_le_bytes(b.try_into().unwrap_or_default());
    let (body, rest) = out.split_at_mut(8 * n);
    for k in 0..blocks {
        let mut x = [0u64; 8];
        for (j, w) in x.iter_mut().enumerate() {
            *w = if forward {
                le(&data[(k * 8 + j) * 8..(k * 8 + j) * 8 + 8])
            } else {
                le(&data[j * n + k * 8..j * n + k * 8 + 8])
            };
        }
        transpose_8x8(&mut x);
        for (j, w) in x.iter().enumerate() {
            let at = if forward {
                j * n + k * 8
            } else {
                (k * 8 + j) * 8
            };
            body[at..at + 8].copy_from_slice(&w.to_le_bytes());
        }
    }
    for i in blocks * 8..n {
        for b in 0..8 {
            if forward {
                body[b * n + i] = data[8 * i + b];
            } else {
                body[8 * i + b] = data[b * n + i];
            }
        }
    }
    rest.copy_from_slice(&data[8 * n..]);
}

/// The transpose for wider elements: a block of elements at a time, one
/// plane after another, so that each plane is written (or read) in runs
/// of a block and the block's elements stay in L1. Writing all N planes
/// byte by byte, as `transpose` does, costs N streams and N bounds checks
/// per element, which for 16-byte elements made the shuffle slower than
/// zstd itself.
fn transpose_blocked<const N: usize>(data: &[u8], out: &mut [u8], forward: bool) {
    const BLOCK: usize = 256;
    let n = data.len() / N;
    let mut base = 0;
    while base < n {
        let m = BLOCK.min(n - base);
        let elems = base * N..(base + m) * N;
        for b in 0..N {
            let plane = b * n + base..b * n + base + m;
            if forward {
                let src = &data[elems.clone()];
                let dst = &mut out[plane];
                for (d, e) in dst.iter_mut().zip(src.chunks_exact(N)) {
                    *d = e[b];
                }
            } else {
                let src = &data[plane];
                let dst = &mut out[elems.clone()];
                for (s, e) in src.iter().zip(dst.chunks_exact_mut(N)) {
                    e[b] = *s;
                }
            }
        }
        base += m;
    }
    out[n * N..].copy_from_slice(&data[n * N..]);
}

fn transpose_any(data: &[u8], out: &mut [u8], size: usize, forward: bool) {
    let n = data.len() / size;
    for i in 0..n {
        for b in 0..size {
            if forward {
                out[b * n + i] = data[i * size + b];
            } else {
                out[i * size + b] = data[b * n + i];
            }
        }
    }
    out[n * size..].copy_from_slice(&data[n * size..]);
}

/// A zstd compression context kept between chunks (creating one costs
/// several allocations inside the codec).
#[derive(Default)]
struct ZstdEncoder(Option<(zstd::bulk::Compressor<'static>, i32)>);

impl Recycle for ZstdEncoder {
    fn recycle(&mut self) {}
}

/// A zstd decompression context kept between chunks.
#[derive(Default)]
struct ZstdDecoder(Option<zstd::bulk::Decompressor<'static>>);

impl Recycle for ZstdDecoder {
    fn recycle(&mut self) {}
}

static ZSTD_ENCODERS: ObjectList<ZstdEncoder> = ObjectList::new("zstd compression contexts");
static ZSTD_DECODERS: ObjectList<ZstdDecoder> = ObjectList::new("zstd decompression contexts");

fn zstd_compress(input: &[u8], level: i32, out: &mut Vec<u8>) -> std::io::Result<()> {
    let mut ctx = ZSTD_ENCODERS.take();
    let c = match &mut ctx.0 {
        Some((c, l)) => {
            if *l != level {
                c.set_compression_level(level)?;
                *l = level;
            }
            c
        }
        slot => &mut slot.insert((zstd::bulk::Compressor::new(level)?, level)).0,
    };
    out.clear();
    out.reserve(zstd::zstd_safe::compress_bound(input.len()));
    c.compress_to_buffer(input, out)?;
    Ok(())
}

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

/// `input` shuffled for `size`-byte elements, in a filter buffer (the
/// shuffle of arca's pipelines and of HDF5's).
fn shuffled(input: &[u8], size: usize) -> PooledBuf {
    if size <= 1 {
        return FILTER.take_copy(input);
    }
    let mut out = FILTER.take_zeroed(input.len());
    shuffle_into(input, size, &mut out);
    out
}

/// [`shuffled`] undone.
fn unshuffled(input: &[u8], size: usize) -> PooledBuf {
    if size <= 1 {
        return FILTER.take_copy(input);
    }
    let mut out = FILTER.take_zeroed(input.len());
    unshuffle_into(input, size, &mut out);
    out
}

/// `input` as a zlib stream at `level` (HDF5's deflate is the same).
fn deflated(input: &[u8], level: u32) -> Result<PooledBuf> {
    let mut out = FILTER.take_empty(input.len() / 2);
    let mut e = flate2::write::ZlibEncoder::new(&mut *out, flate2::Compression::new(level));
    e.write_all(input)
        .and_then(|_| e.finish().map(|_| ()))
        .map_err(|e| Error::io("deflate", e))?;
    Ok(out)
}

/// `input` as one zstd frame at `level` (HDF5's zstd filter is the same).
fn zstd_compressed(input: &[u8], level: i32) -> Result<PooledBuf> {
    let mut out = FILTER.take_empty(zstd::zstd_safe::compress_bound(input.len()));
    zstd_compress(input, level, &mut out).map_err(|e| Error::io("zstd compress", e))?;
    Ok(out)
}

/// Decode a zstd frame into `out` with a pooled context; the bytes written.
fn zstd_decompress(input: &[u8], out: &mut [u8]) -> std::io::Result<usize> {
    let mut ctx = ZSTD_DECODERS.take();
    let d = match &mut ctx.0 {
        Some(d) => d,
        slot => slot.insert(zstd::bulk::Decompressor::new()?),
    };
    d.decompress_to_buffer(input, out)
}

/// Run the pipeline forward. Returns the stored bytes and the mask to record.
#[cfg(test)]
pub(crate) fn encode(filters: &[Filter], elem: usize, plain: &[u8]) -> Result<(Vec<u8>, u32)> {
    let (out, mask) = encode_pooled(filters, elem, plain)?;
    Ok((out.into_vec(), mask))
}

/// [`encode`] into buffers from the filter free list; every stage writes
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
        check_raw(&stored, expect, addr)?;
        return Ok(stored);
    }
    Ok(decode_pooled(filters, mask, elem, &stored, expect, addr)?.into_vec())
}

fn check_raw(stored: &[u8], expect: usize, addr: u64) -> Result<()> {
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
        check_raw(stored, expect, addr)?;
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
        return check_raw(stored, expect, addr);
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

/// Decode one size-prefixed lz4 block into `out`, whose length is the
/// decoded size the chunk must have; returns the bytes written. Bounded by
/// `out`: a damaged block cannot write past it.
fn lz4_decode(input: &[u8], out: &mut [u8]) -> std::result::Result<usize, String> {
    let n = input
        .get(0..4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
        .ok_or("lz4 block too short")?;
    if n != out.len() {
        return Err(format!("lz4 size {n}, expected {}", out.len()));
    }
    let n = i32::try_from(n).map_err(|_| format!("lz4 size {n} too large"))?;
    lz4::block::decompress_to_buffer(&input[4..], Some(n), out).map_err(|e| format!("lz4: {e}"))
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
        out.copy_from_slice(&hdf5::decode(filters, mask, elem, stored, expect, addr)?);
        return Ok(());
    }
    let Some((first, rest)) = filters.split_first().filter(|_| mask != MASK_UNFILTERED) else {
        check_raw(stored, expect, addr)?;
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
            check_raw(input, expect, addr)?;
            if elem > 1 {
                unshuffle_into(input, elem, out);
            } else {
                out.copy_from_slice(input);
            }
            expect
        }
        Filter::Deflate(_) => {
            let mut d = flate2::read::ZlibDecoder::new(input);
            d.read_exact(out)
                .map_err(|e| bad(format!("deflate: {e}")))?;
            let mut extra = [0u8; 1];
            if d.read(&mut extra)
                .map_err(|e| bad(format!("deflate: {e}")))?
                != 0
            {
                return Err(bad(format!("deflate: decodes past {expect} bytes")));
            }
            expect
        }
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
    fn shuffle_matches_a_plain_transpose() {
        for size in [1usize, 2, 3, 4, 8, 12, 16, 36] {
            for len in [0usize, 1, 7, 64, 1001] {
                let data: Vec<u8> = (0..len).map(|i| (i * 31 % 251) as u8).collect();
                let n = len / size;
                let mut want = data.clone();
                for i in 0..n {
                    for b in 0..size {
                        want[b * n + i] = data[i * size + b];
                    }
                }
                let s = shuffle(&data, size);
                assert_eq!(s, want, "size {size} len {len}");
                assert_eq!(unshuffle(&s, size), data);
            }
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
