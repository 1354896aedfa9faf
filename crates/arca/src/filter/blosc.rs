//! The blosc filter (HDF5 id 32001): chunks in c-blosc 1's format, read and
//! written here from its published layout, each block's bytes through the
//! codec the chunk names: blosclz (here), lz4 and lz4hc (liblz4), snappy
//! (snap), zlib (flate2), zstd (libzstd).
//!
//! c-blosc 1 and c-blosc 2 cannot be linked into one program (both define
//! `blosclz_compress` and more, with different signatures), and c-blosc 2
//! writes a header version c-blosc 1 refuses, so HDF5's blosc filter
//! (c-blosc 1) could not read chunks it made: the format is simple enough
//! to own.
//!
//! ```text
//! header (16 bytes): u8 version (2), u8 codec format version, u8 flags,
//!   u8 type size, u32 LE bytes, u32 LE block size, u32 LE stored size
//!   flags: 0x01 byte shuffle, 0x02 stored as is (after the header),
//!          0x04 bit shuffle, 0x08 reserved, 0x10 blocks not split,
//!          0xe0 codec (0 blosclz, 1 lz4/lz4hc, 2 snappy, 3 zlib, 4 zstd)
//! then u32 LE start of each block, then the blocks: a block is split into
//!   one stream per byte of the type (type size up to 16, at least 128
//!   elements, not the last short block, and flag 0x10 clear), else one
//!   stream; a stream is u32 LE length and that many bytes, the block's
//!   bytes as they are when the length is the stream's size
//! ```
//! The HDF5 filter's client-data values: filter version, format version,
//! type size, chunk bytes (those four from its `set_local`), then level,
//! shuffle (0 none, 1 byte, 2 bit) and codec (0 blosclz, 1 lz4, 2 lz4hc,
//! 3 snappy, 4 zlib, 5 zstd).

use std::io::Write;

use super::bitshuffle::{bitshuffle_block, bitunshuffle_block};
use super::codecs::{shuffle_into, unshuffle_into, zstd_compress, zstd_decompress};
use crate::pool::lists::FILTER;
use crate::pool::PooledBuf;

const HEADER: usize = 16;
const MAX_SPLITS: usize = 16;
const MIN_BUFFERSIZE: usize = 128;
/// c-blosc's largest block.
const MAX_BLOCKSIZE: usize = 1 << 30;

fn rd32(b: &[u8], at: usize) -> Option<usize> {
    let s = b.get(at..at + 4)?;
    Some(u32::from_le_bytes([s[0], s[1], s[2], s[3]]) as usize)
}

/// The name of a codec by the chunk's format number, for messages.
fn format_name(f: u8) -> &'static str {
    ["blosclz", "lz4", "snappy", "zlib", "zstd"]
        .get(usize::from(f))
        .copied()
        .unwrap_or("unknown codec")
}

/// The header's fields: flags, type size, bytes, block size, stored size.
fn header(input: &[u8]) -> Result<(u8, usize, usize, usize, usize), String> {
    let head = input.get(..HEADER).ok_or("shorter than its header")?;
    let (version, flags, typesize) = (head[0], head[2], usize::from(head[3]));
    let nbytes = rd32(head, 4).unwrap_or(0);
    let blocksize = rd32(head, 8).unwrap_or(0);
    let cbytes = rd32(head, 12).unwrap_or(0);
    if version != 2 {
        return Err(format!("format version {version}"));
    }
    if flags & 0x08 != 0 {
        return Err("flags from a later format".into());
    }
    if cbytes > input.len() || cbytes < HEADER {
        return Err(format!(
            "records {cbytes} stored bytes, holds {}",
            input.len()
        ));
    }
    Ok((flags, typesize, nbytes, blocksize, cbytes))
}

/// Decode a blosc chunk into a filter buffer; `limit` bounds its size.
pub(super) fn decode(input: &[u8], limit: usize) -> Result<PooledBuf, String> {
    let (_, _, nbytes, _, _) = header(input)?;
    if nbytes > limit {
        return Err(format!("claims {nbytes} bytes, more than {limit}"));
    }
    let mut out = FILTER.take_zeroed(nbytes);
    decode_into(input, &mut out)?;
    Ok(out)
}

/// Decode a blosc chunk into `out`, which must be its size.
pub(super) fn decode_into(input: &[u8], out: &mut [u8]) -> Result<(), String> {
    let (flags, typesize, nbytes, blocksize, cbytes) = header(input)?;
    if nbytes != out.len() {
        return Err(format!("holds {nbytes} bytes, expected {}", out.len()));
    }
    let src = &input[..cbytes];
    if nbytes == 0 {
        return Ok(());
    }
    if typesize == 0 || blocksize == 0 || blocksize > MAX_BLOCKSIZE {
        return Err(format!("type size {typesize}, block size {blocksize}"));
    }
    if flags & 0x02 != 0 {
        if cbytes != nbytes + HEADER {
            return Err(format!("{cbytes} bytes stored as is for {nbytes}"));
        }
        out.copy_from_slice(&src[HEADER..]);
        return Ok(());
    }
    let codec = flags >> 5;
    if codec > 4 {
        return Err(format!("codec {codec}"));
    }
    let nblocks = nbytes.div_ceil(blocksize);
    if nblocks > (cbytes - HEADER) / 4 {
        return Err(format!("{nblocks} blocks in {cbytes} bytes"));
    }
    let dont_split = flags & 0x10 != 0;
    let mut tmp = FILTER.take_zeroed(blocksize.min(nbytes));
    for (j, dst) in out.chunks_mut(blocksize).enumerate() {
        let bsize = dst.len();
        let leftover = bsize < blocksize;
        let mut at = rd32(src, HEADER + 4 * j).ok_or("block start past the end")?;
        let nsplits = if !dont_split
            && typesize <= MAX_SPLITS
            && blocksize / typesize >= MIN_BUFFERSIZE
            && !leftover
        {
            typesize
        } else {
            1
        };
        if bsize % nsplits != 0 {
            return Err(format!("block of {bsize} bytes in {nsplits} streams"));
        }
        let neblock = bsize / nsplits;
        let doshuffle = flags & 0x01 != 0 && typesize > 1;
        let dobitshuffle = flags & 0x04 != 0 && bsize >= typesize;
        let filtered = doshuffle || dobitshuffle;
        {
            let target: &mut [u8] = if filtered {
                &mut tmp[..bsize]
            } else {
                &mut *dst
            };
            for part in target.chunks_mut(neblock) {
                let len = rd32(src, at).ok_or("stream length past the end")?;
                let data = src.get(at + 4..at + 4 + len).ok_or("stream past the end")?;
                at += 4 + len;
                if len == neblock {
                    part.copy_from_slice(data);
                } else {
                    let got = decode_stream(codec, data, part)
                        .map_err(|e| format!("{}: {e}", format_name(codec)))?;
                    if got != neblock {
                        return Err(format!(
                            "{} stream decodes to {got} bytes, not {neblock}",
                            format_name(codec)
                        ));
                    }
                }
            }
        }
        if doshuffle {
            unshuffle_into(&tmp[..bsize], typesize, dst);
        } else if dobitshuffle {
            let n = bsize / typesize;
            if n % 8 == 0 {
                bitunshuffle_block(&tmp[..n * typesize], &mut dst[..n * typesize], n, typesize);
                dst[n * typesize..].copy_from_slice(&tmp[n * typesize..bsize]);
            } else {
                dst.copy_from_slice(&tmp[..bsize]);
            }
        }
    }
    Ok(())
}

/// One stream through its codec into `out`; the bytes written.
fn decode_stream(codec: u8, data: &[u8], out: &mut [u8]) -> Result<usize, String> {
    match codec {
        0 => blosclz_decode(data, out),
        1 => {
            let n = i32::try_from(out.len()).map_err(|_| "block too large")?;
            lz4::block::decompress_to_buffer(data, Some(n), out).map_err(|e| e.to_string())
        }
        2 => {
            let n = snap::raw::decompress_len(data).map_err(|e| e.to_string())?;
            if n != out.len() {
                return Err(format!("{n} bytes, not {}", out.len()));
            }
            snap::raw::Decoder::new()
                .decompress(data, out)
                .map_err(|e| e.to_string())
        }
        3 => {
            let mut d = flate2::Decompress::new(true);
            match d.decompress(data, out, flate2::FlushDecompress::Finish) {
                Ok(flate2::Status::StreamEnd) => Ok(d.total_out() as usize),
                Ok(_) => Err("stream does not end where the block does".into()),
                Err(e) => Err(e.to_string()),
            }
        }
        _ => zstd_decompress(data, out).map_err(|e| e.to_string()),
    }
}

/// blosclz: a token below 32 starts a run of that many plus one literals;
/// else its top three bits give a match length (7: more in the bytes that
/// follow, each 255 adding and going on) and its low five with the next
/// byte a distance (31 and 255: a far distance in the next two bytes, big
/// endian, past 8191). The first token is always literals; a match that
/// ends the stream is not copied, as c-blosc reads it.
fn blosclz_decode(input: &[u8], out: &mut [u8]) -> Result<usize, String> {
    const MAX_DISTANCE: usize = 8191;
    if input.is_empty() {
        return Ok(0);
    }
    let mut ip = 1usize;
    let mut op = 0usize;
    let mut ctrl = usize::from(input[0] & 31);
    let next = |ip: &mut usize| -> Result<usize, String> {
        let b = *input.get(*ip).ok_or("stream ends inside a token")?;
        *ip += 1;
        Ok(usize::from(b))
    };
    loop {
        if ctrl >= 32 {
            let mut len = (ctrl >> 5) - 1;
            let ofs = (ctrl & 31) << 8;
            if len == 6 {
                loop {
                    let code = next(&mut ip)?;
                    len += code;
                    if code != 255 {
                        break;
                    }
                }
            }
            let code = next(&mut ip)?;
            len += 3;
            let mut back = ofs + code;
            if code == 255 && ofs == 31 << 8 {
                let hi = next(&mut ip)?;
                let lo = next(&mut ip)?;
                back = (hi << 8 | lo) + MAX_DISTANCE;
            }
            let back = back + 1;
            if op + len > out.len() {
                return Err("match past the block's end".into());
            }
            if back > op {
                return Err("match reaches before the block".into());
            }
            if ip >= input.len() {
                break;
            }
            ctrl = next(&mut ip)?;
            if back >= len {
                out.copy_within(op - back..op - back + len, op);
            } else if back == 1 {
                let b = out[op - 1];
                out[op..op + len].fill(b);
            } else {
                // Overlapping: the bytes repeat with period `back`.
                for k in 0..len {
                    out[op + k] = out[op + k - back];
                }
            }
            op += len;
        } else {
            let run = ctrl + 1;
            if op + run > out.len() {
                return Err("literals past the block's end".into());
            }
            let lit = input
                .get(ip..ip + run)
                .ok_or("literals past the stream's end")?;
            out[op..op + run].copy_from_slice(lit);
            op += run;
            ip += run;
            if ip >= input.len() {
                break;
            }
            ctrl = next(&mut ip)?;
        }
    }
    Ok(op)
}

/// blosclz compression (a hash of the next three bytes finds an earlier
/// occurrence at most 8191 bytes back); the stream always ends with
/// literals, which is how c-blosc reads it.
fn blosclz_encode(input: &[u8]) -> Vec<u8> {
    const HASH_BITS: u32 = 14;
    const MAX_BACK: usize = 8191;
    let mut table = vec![usize::MAX; 1 << HASH_BITS];
    let mut out = Vec::with_capacity(input.len());
    let flush = |out: &mut Vec<u8>, lits: &[u8]| {
        for run in lits.chunks(32) {
            out.push((run.len() - 1) as u8);
            out.extend_from_slice(run);
        }
    };
    let mut lit_start = 0;
    let mut i = 0;
    // Matches stop short of the last byte, which stays a literal.
    while i + 3 < input.len() {
        let h =
            (u32::from(input[i]) << 16 | u32::from(input[i + 1]) << 8 | u32::from(input[i + 2]))
                .wrapping_mul(2_654_435_761)
                >> (32 - HASH_BITS);
        let cand = std::mem::replace(&mut table[h as usize], i);
        if i > 0 && cand < i && i - cand <= MAX_BACK && input[cand..cand + 3] == input[i..i + 3] {
            let max = input.len() - 1 - i;
            let mut len = 3;
            while len < max && input[cand + len] == input[i + len] {
                len += 1;
            }
            flush(&mut out, &input[lit_start..i]);
            let d = i - cand - 1;
            let (l, mut extra) = if len <= 8 {
                (len - 2, None)
            } else {
                (7, Some(len - 9))
            };
            out.push((l << 5 | d >> 8) as u8);
            if let Some(e) = extra.as_mut() {
                while *e >= 255 {
                    out.push(255);
                    *e -= 255;
                }
                out.push(*e as u8);
            }
            out.push((d & 0xff) as u8);
            i += len;
            lit_start = i;
            if out.len() >= input.len() {
                break;
            }
        } else {
            i += 1;
        }
    }
    flush(&mut out, &input[lit_start..]);
    out
}

/// The filter's settings from its values: type size, level, shuffle, codec.
fn settings(p: &[u32], elem: usize) -> (usize, u32, u32, u32) {
    let typesize = match p.get(2).copied().unwrap_or(elem as u32) as usize {
        t if (1..=255).contains(&t) => t,
        _ => 1,
    };
    let level = p.get(4).copied().unwrap_or(5).min(9);
    let shuffle = p.get(5).copied().unwrap_or(1);
    let codec = p.get(6).copied().unwrap_or(0);
    (typesize, level, shuffle, codec)
}

/// Whether this module writes blosc's codec `codec` (values' numbering).
pub(super) fn codec_known(codec: u32) -> bool {
    codec <= 5
}

fn encode_stream(codec: u32, level: u32, data: &[u8]) -> Result<Vec<u8>, String> {
    Ok(match codec {
        0 => blosclz_encode(data),
        1 => lz4::block::compress(data, None, false).map_err(|e| e.to_string())?,
        2 => lz4::block::compress(
            data,
            Some(lz4::block::CompressionMode::HIGHCOMPRESSION(level as i32)),
            false,
        )
        .map_err(|e| e.to_string())?,
        3 => snap::raw::Encoder::new()
            .compress_vec(data)
            .map_err(|e| e.to_string())?,
        4 => {
            let mut e =
                flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(level));
            e.write_all(data).map_err(|e| e.to_string())?;
            e.finish().map_err(|e| e.to_string())?
        }
        _ => {
            let mut v = Vec::new();
            let zl = if level < 9 {
                (2 * level as i32 - 1).max(1)
            } else {
                22
            };
            zstd_compress(data, zl, &mut v).map_err(|e| e.to_string())?;
            v
        }
    })
}

/// Compress a chunk as HDF5's blosc filter does; `None` when it does not
/// shrink (the optional filter is then skipped, as HDF5 skips it).
pub(super) fn encode(p: &[u32], elem: usize, plain: &[u8]) -> Result<Option<Vec<u8>>, String> {
    let (typesize, level, shuffle, codec) = settings(p, elem);
    if !codec_known(codec) {
        return Err(format!("codec {codec}"));
    }
    if shuffle > 2 {
        return Err(format!("shuffle {shuffle}"));
    }
    let nbytes = plain.len();
    if nbytes > MAX_BLOCKSIZE * 2 {
        return Err("chunk too large".into());
    }
    if level == 0 || nbytes < MIN_BUFFERSIZE {
        return Ok(None);
    }
    // Blocks of whole groups of eight elements (so bit shuffle applies),
    // about 128 KiB.
    let unit = 8 * typesize;
    let blocksize = ((128 << 10) / unit * unit).max(unit).min(nbytes);
    let format: u8 = [0, 1, 1, 2, 3, 4][codec as usize];
    let split = codec != 5 && typesize <= MAX_SPLITS && blocksize / typesize >= MIN_BUFFERSIZE;
    let mut flags = format << 5 | u8::from(!split) << 4;
    match shuffle {
        1 if typesize > 1 => flags |= 0x01,
        2 => flags |= 0x04,
        _ => {}
    }
    let nblocks = nbytes.div_ceil(blocksize);
    let mut out = vec![0u8; HEADER + 4 * nblocks];
    let mut tmp = vec![0u8; blocksize];
    for (j, block) in plain.chunks(blocksize).enumerate() {
        let start = out.len() as u32;
        out[HEADER + 4 * j..HEADER + 4 * j + 4].copy_from_slice(&start.to_le_bytes());
        let bsize = block.len();
        let t = &mut tmp[..bsize];
        if flags & 0x01 != 0 {
            shuffle_into(block, typesize, t);
        } else if flags & 0x04 != 0 && bsize >= typesize && (bsize / typesize) % 8 == 0 {
            let n = bsize / typesize;
            bitshuffle_block(&block[..n * typesize], &mut t[..n * typesize], n, typesize);
            t[n * typesize..].copy_from_slice(&block[n * typesize..]);
        } else {
            t.copy_from_slice(block);
        }
        let nsplits = if split && bsize == blocksize {
            typesize
        } else {
            1
        };
        for part in t.chunks(bsize / nsplits) {
            let c = encode_stream(codec, level, part)?;
            if c.is_empty() || c.len() >= part.len() {
                out.extend_from_slice(&(part.len() as u32).to_le_bytes());
                out.extend_from_slice(part);
            } else {
                out.extend_from_slice(&(c.len() as u32).to_le_bytes());
                out.extend_from_slice(&c);
            }
        }
        if out.len() >= nbytes {
            return Ok(None);
        }
    }
    let cbytes = out.len() as u32;
    out[..HEADER].copy_from_slice(
        &[
            [2, 1, flags, typesize as u8],
            (nbytes as u32).to_le_bytes(),
            (blocksize as u32).to_le_bytes(),
            cbytes.to_le_bytes(),
        ]
        .concat(),
    );
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::super::codecs::XorShift;
    use super::*;

    #[test]
    fn blosclz_roundtrips_long_and_short_matches() {
        let mut data: Vec<u8> = (0..5000u32).map(|i| (i / 40) as u8).collect();
        data.extend(std::iter::repeat_n(7u8, 1000));
        data.extend((0..300u32).map(|i| (i * 13) as u8));
        let enc = blosclz_encode(&data);
        assert!(enc.len() < data.len() / 4);
        let mut out = vec![0u8; data.len()];
        assert_eq!(blosclz_decode(&enc, &mut out).unwrap(), data.len());
        assert_eq!(out, data);
    }

    #[test]
    fn every_codec_and_shuffle_roundtrips() {
        let plain: Vec<u8> = (0..70_001u32).flat_map(|i| (i / 9).to_le_bytes()).collect();
        for codec in 0..=5 {
            for shuffle in 0..=2 {
                let p = [2, 2, 4, plain.len() as u32, 5, shuffle, codec];
                let enc = encode(&p, 4, &plain).unwrap().expect("compresses");
                assert!(enc.len() < plain.len() / 3, "{codec} {shuffle}");
                let back = decode(&enc, plain.len()).unwrap();
                assert_eq!(&back[..], &plain[..], "{codec} {shuffle}");
            }
        }
        let noise = XorShift(0x2545_f491_4f6c_dd1d).noise(4096);
        assert!(encode(&[2, 2, 1, 4096, 5, 0, 0], 1, &noise)
            .unwrap()
            .is_none());
    }

    #[test]
    fn damaged_chunks_are_errors_never_panics() {
        let plain: Vec<u8> = (0..20_000u32).flat_map(|i| (i / 9).to_le_bytes()).collect();
        for codec in 0..=5 {
            let enc = encode(&[2, 2, 4, 0, 5, 1, codec], 4, &plain)
                .unwrap()
                .unwrap();
            for cut in [0, 15, 16, 40, enc.len() / 2, enc.len() - 1] {
                assert!(
                    decode(&enc[..cut], plain.len()).is_err(),
                    "{codec} cut {cut}"
                );
            }
            assert!(decode(&enc, plain.len() - 1).is_err(), "over the limit");
            let mut gen = XorShift(0x9e37_79b9_7f4a_7c15 ^ u64::from(codec));
            for _ in 0..500 {
                let x = gen.next();
                let mut bad = enc.clone();
                let i = x as usize % bad.len();
                bad[i] ^= (x >> 40) as u8 | 1;
                if let Ok(v) = decode(&bad, plain.len()) {
                    assert!(v.len() <= plain.len());
                }
            }
        }
    }
}
