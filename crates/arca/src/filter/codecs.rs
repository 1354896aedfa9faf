//! The codecs under both kinds of pipeline (arca's and HDF5's kept from
//! imports): shuffle, deflate, zstd with pooled contexts, lz4 blocks. Each
//! takes bytes and gives bytes in a pooled buffer; which stages run, and in
//! what order, is the pipelines' business.

use std::io::Write;

use crate::error::{Error, Result};
use crate::pool::lists::FILTER;
use crate::pool::{ObjectList, PooledBuf, Recycle};

/// Shuffle `data` into `out` (same length). Element sizes 2, 4, 8, 12 and
/// 16 (complex numbers, 3-vectors of floats) have a specialised (unrolled)
/// transpose.
pub(crate) fn shuffle_into(data: &[u8], size: usize, out: &mut [u8]) {
    match size {
        2 => transpose::<2>(data, out, true),
        4 => transpose4(data, out, true),
        8 => transpose8(data, out, true),
        12 => transpose_blocked::<12>(data, out, true),
        16 => transpose_blocked::<16>(data, out, true),
        _ => transpose_any(data, out, size, true),
    }
}

pub(crate) fn unshuffle_into(data: &[u8], size: usize, out: &mut [u8]) {
    match size {
        2 => transpose::<2>(data, out, false),
        4 => transpose4(data, out, false),
        8 => transpose8(data, out, false),
        12 => transpose_blocked::<12>(data, out, false),
        16 => transpose_blocked::<16>(data, out, false),
        _ => transpose_any(data, out, size, false),
    }
}

/// A seeded xorshift64 generator for the filter tests: noise no codec
/// can shrink, and damage at reproducible places.
#[cfg(test)]
pub(super) struct XorShift(pub(super) u64);

#[cfg(test)]
impl XorShift {
    pub(super) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// `n` bytes taken from the high half of successive values.
    pub(super) fn noise(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| (self.next() >> 32) as u8).collect()
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

pub(crate) fn zstd_compress(input: &[u8], level: i32, out: &mut Vec<u8>) -> std::io::Result<()> {
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

/// `input` shuffled for `size`-byte elements, in a filter buffer (the
/// shuffle of arca's pipelines and of HDF5's).
pub(crate) fn shuffled(input: &[u8], size: usize) -> PooledBuf {
    if size <= 1 {
        return FILTER.take_copy(input);
    }
    let mut out = FILTER.take_zeroed(input.len());
    shuffle_into(input, size, &mut out);
    out
}

/// [`shuffled`] undone.
pub(crate) fn unshuffled(input: &[u8], size: usize) -> PooledBuf {
    if size <= 1 {
        return FILTER.take_copy(input);
    }
    let mut out = FILTER.take_zeroed(input.len());
    unshuffle_into(input, size, &mut out);
    out
}

/// `input` as a zlib stream at `level` (HDF5's deflate is the same).
pub(crate) fn deflated(input: &[u8], level: u32) -> Result<PooledBuf> {
    let mut out = FILTER.take_empty(input.len() / 2);
    let mut e = flate2::write::ZlibEncoder::new(&mut *out, flate2::Compression::new(level));
    e.write_all(input)
        .and_then(|_| e.finish().map(|_| ()))
        .map_err(|e| Error::io("deflate", e))?;
    Ok(out)
}

/// `input` as one zstd frame at `level` (HDF5's zstd filter is the same).
pub(crate) fn zstd_compressed(input: &[u8], level: i32) -> Result<PooledBuf> {
    let mut out = FILTER.take_empty(zstd::zstd_safe::compress_bound(input.len()));
    zstd_compress(input, level, &mut out).map_err(|e| Error::io("zstd compress", e))?;
    Ok(out)
}

/// Decode a zstd frame into `out` with a pooled context; the bytes written.
pub(crate) fn zstd_decompress(input: &[u8], out: &mut [u8]) -> std::io::Result<usize> {
    let mut ctx = ZSTD_DECODERS.take();
    let d = match &mut ctx.0 {
        Some(d) => d,
        slot => slot.insert(zstd::bulk::Decompressor::new()?),
    };
    d.decompress_to_buffer(input, out)
}

/// A zlib decoder kept between chunks: a fresh one allocates and clears
/// tens of KiB of state, which costs a small chunk more than its decode.
#[derive(Default)]
struct Inflater(Option<flate2::Decompress>);

impl Recycle for Inflater {
    fn recycle(&mut self) {}
}

static INFLATERS: ObjectList<Inflater> = ObjectList::new("zlib decompression contexts");

/// What [`inflate_into`] found wrong.
pub(crate) enum Inflated {
    /// Not a whole zlib stream.
    Damaged(String),
    /// The stream goes on past `out`.
    TooLong,
}

/// Decode the zlib stream `input` into `out` in one call, with a pooled
/// decoder; the bytes written (the stream's end; bytes after it are
/// ignored, as a streaming reader ignores them).
pub(crate) fn inflate_into(input: &[u8], out: &mut [u8]) -> std::result::Result<usize, Inflated> {
    let mut ctx = INFLATERS.take();
    let d = match &mut ctx.0 {
        Some(d) => {
            d.reset(true);
            d
        }
        slot => slot.insert(flate2::Decompress::new(true)),
    };
    let status = d
        .decompress(input, out, flate2::FlushDecompress::Finish)
        .map_err(|e| Inflated::Damaged(e.to_string()))?;
    let n = d.total_out() as usize;
    match status {
        flate2::Status::StreamEnd => Ok(n),
        _ if n == out.len() => Err(Inflated::TooLong),
        _ => Err(Inflated::Damaged("the stream ends early".into())),
    }
}

/// Decode one size-prefixed lz4 block into `out`, whose length is the
/// decoded size the chunk must have; returns the bytes written. Bounded by
/// `out`: a damaged block cannot write past it.
pub(crate) fn lz4_decode(input: &[u8], out: &mut [u8]) -> std::result::Result<usize, String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inflate_into_takes_whole_streams_of_the_size_only() {
        let plain: Vec<u8> = (0..5000u32).flat_map(|i| (i / 9).to_le_bytes()).collect();
        let z = deflated(&plain, 6).unwrap();
        // Twice, so the second decode runs on a reused decoder.
        for _ in 0..2 {
            let mut out = vec![0u8; plain.len()];
            assert_eq!(inflate_into(&z, &mut out).ok(), Some(plain.len()));
            assert_eq!(out, plain);
        }
        let mut short = vec![0u8; plain.len() - 1];
        assert!(matches!(
            inflate_into(&z, &mut short),
            Err(Inflated::TooLong)
        ));
        let mut long = vec![0u8; plain.len() + 1];
        assert_eq!(inflate_into(&z, &mut long).ok(), Some(plain.len()));
        let mut out = vec![0u8; plain.len()];
        assert!(matches!(
            inflate_into(&z[..z.len() / 2], &mut out),
            Err(Inflated::Damaged(_))
        ));
        let mut bad = z.to_vec();
        bad[0] ^= 0xff;
        assert!(matches!(
            inflate_into(&bad, &mut out),
            Err(Inflated::Damaged(_))
        ));
        assert!(matches!(
            inflate_into(&[], &mut out),
            Err(Inflated::Damaged(_))
        ));
        // After failures the pooled decoder still decodes.
        assert_eq!(inflate_into(&z, &mut out).ok(), Some(plain.len()));
        assert_eq!(out, plain);
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
}
