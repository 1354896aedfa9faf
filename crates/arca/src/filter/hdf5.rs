//! HDF5 filter pipelines: chunks imported from HDF5 through filters arca
//! does not share keep HDF5's stored bytes, and this module decodes (and
//! encodes) them: deflate, shuffle, fletcher32, lzf, lz4 (in HDF5's
//! framing) and zstd here; szip, n-bit, scale-offset, blosc, blosc2 and
//! bitshuffle in modules of their own. Any other filter's chunks are kept
//! and copied; reading them is a typed error naming it.
//!
//! Stages run as HDF5 runs them: forward in order, each optional stage
//! that fails (does not shrink the data) skipped and its bit set in the
//! chunk's mask; backward in reverse, skipping the stages the mask names.

use super::codecs::{
    deflated, inflate_into, shuffled, unshuffled, zstd_compressed, zstd_decompress, Inflated,
};
use super::{bitshuffle, blosc, blosc2, nbit, scaleoffset, szip};
use crate::error::{Error, Result};
use crate::format::filter_pipeline::{Filter, Hdf5Filter};
use crate::pool::lists::{CHUNKS, FILTER};
use crate::pool::PooledBuf;

/// Bytes a stage may add over the chunk's size (a checksum, a frame
/// header) before its output is implausible.
const STAGE_SLACK: usize = 64;

fn stages(filters: &[Filter]) -> impl DoubleEndedIterator<Item = (usize, &Hdf5Filter)> {
    filters.iter().enumerate().filter_map(|(i, f)| match f {
        Filter::Hdf5(h) => Some((i, h)),
        _ => None,
    })
}

fn unsupported(h: &Hdf5Filter, addr: u64, doing: &str) -> Error {
    Error::Unsupported(format!(
        "chunk at {addr}: HDF5 filter {} ({}) cannot be {doing} by arca; its chunks are kept \
         exactly as stored, and `arca export` gives them back to HDF5, which can",
        h.id,
        h.name()
    ))
}

/// The stages a chunk went through, in the order they are undone (the
/// stages its mask skips left out).
fn to_undo(filters: &[Filter], mask: u32) -> Vec<&Hdf5Filter> {
    stages(filters)
        .rev()
        .filter(|&(i, _)| !(i < 32 && mask & (1 << i) != 0))
        .map(|(_, h)| h)
        .collect()
}

/// Undo one stage of an HDF5 pipeline; `limit` bounds its output.
fn undo(h: &Hdf5Filter, elem: usize, input: &[u8], limit: usize, addr: u64) -> Result<PooledBuf> {
    let bad = |d: String| Error::corrupt("chunk", addr, format!("{}: {d}", h.name()));
    Ok(match h.id {
        1 => inflate(input, limit).map_err(bad)?,
        2 => unshuffled(input, h.params.first().map_or(elem, |&s| s as usize)),
        3 => fletcher32_check(input).map_err(bad)?,
        32000 => lzf_decode(input, limit).map_err(bad)?,
        32004 => lz4_decode(input, limit).map_err(bad)?,
        32015 => {
            let mut out = FILTER.take_zeroed(limit);
            let n = zstd_decompress(input, &mut out).map_err(|e| bad(e.to_string()))?;
            out.truncate(n);
            out
        }
        4 => pooled(szip::decode(&h.params, input, limit).map_err(bad)?),
        5 => pooled(nbit::decode(&h.params, input, limit).map_err(bad)?),
        6 => pooled(scaleoffset::decode(&h.params, input, limit).map_err(bad)?),
        32001 => blosc::decode(input, limit).map_err(bad)?,
        32008 => pooled(bitshuffle::decode(&h.params, elem, input, limit).map_err(bad)?),
        32026 => match blosc2::decode(input, limit) {
            Ok(v) => pooled(v),
            Err(blosc2::Failure::Corrupt(d)) => return Err(bad(d)),
            Err(blosc2::Failure::Codec(d)) => {
                return Err(Error::Unsupported(format!("chunk at {addr}: {d}")))
            }
        },
        _ => return Err(unsupported(h, addr, "decoded")),
    })
}

/// Whether the stage can be undone straight into the caller's buffer
/// (no buffer of its own, no copy): blosc, the stage a PyTables file's
/// chunks go through.
fn direct(h: &Hdf5Filter) -> bool {
    h.id == 32001
}

/// Undo an HDF5 pipeline into a chunk of `expect` bytes.
pub(super) fn decode(
    filters: &[Filter],
    mask: u32,
    elem: usize,
    stored: &[u8],
    expect: usize,
    addr: u64,
) -> Result<PooledBuf> {
    let todo = to_undo(filters, mask);
    if todo.last().is_some_and(|h| direct(h)) {
        let mut out = CHUNKS.take_zeroed(expect);
        decode_into(filters, mask, elem, stored, addr, &mut out)?;
        return Ok(out);
    }
    let limit = expect.saturating_add(STAGE_SLACK * filters.len());
    let mut buf: Option<PooledBuf> = None;
    for h in todo {
        let input: &[u8] = buf.as_deref().map_or(stored, |b| &b[..]);
        buf = Some(undo(h, elem, input, limit, addr)?);
    }
    let got = buf.as_deref().map_or(stored, |b| &b[..]);
    check_size(got.len(), expect, addr)?;
    Ok(CHUNKS.take_copy(got))
}

fn check_size(got: usize, expect: usize, addr: u64) -> Result<()> {
    if got != expect {
        return Err(Error::corrupt(
            "chunk",
            addr,
            format!("HDF5 filters decode to {got} bytes, expected {expect}"),
        ));
    }
    Ok(())
}

/// [`decode`] into `out` (the chunk's size): the last stage undone writes
/// straight into it where it can.
pub(super) fn decode_into(
    filters: &[Filter],
    mask: u32,
    elem: usize,
    stored: &[u8],
    addr: u64,
    out: &mut [u8],
) -> Result<()> {
    let todo = to_undo(filters, mask);
    let Some((&last, rest)) = todo.split_last().filter(|(h, _)| direct(h)) else {
        out.copy_from_slice(&decode(filters, mask, elem, stored, out.len(), addr)?);
        return Ok(());
    };
    let limit = out.len().saturating_add(STAGE_SLACK * filters.len());
    let mut buf: Option<PooledBuf> = None;
    for &h in rest {
        let input: &[u8] = buf.as_deref().map_or(stored, |b| &b[..]);
        buf = Some(undo(h, elem, input, limit, addr)?);
    }
    let input: &[u8] = buf.as_deref().map_or(stored, |b| &b[..]);
    blosc::decode_into(input, out)
        .map_err(|d| Error::corrupt("chunk", addr, format!("{}: {d}", last.name())))
}

/// Run an HDF5 pipeline forward; returns the stored bytes and HDF5's mask
/// of skipped stages.
pub(super) fn encode(filters: &[Filter], elem: usize, raw: &[u8]) -> Result<(PooledBuf, u32)> {
    let mut buf: Option<PooledBuf> = None;
    let mut mask = 0u32;
    for (i, h) in stages(filters) {
        let input: &[u8] = buf.as_deref().map_or(raw, |b| &b[..]);
        let out = match h.id {
            1 => Some(deflated(
                input,
                h.params.first().copied().unwrap_or(6).min(9),
            )?),
            2 => Some(shuffled(
                input,
                h.params.first().map_or(elem, |&s| s as usize),
            )),
            3 => {
                let mut out = FILTER.take_copy(input);
                out.extend_from_slice(&fletcher32(input).to_le_bytes());
                Some(out)
            }
            32000 => lzf_encode(input),
            32004 => Some(lz4_encode(input, h.params.first().copied().unwrap_or(0))?),
            32015 => Some(zstd_compressed(
                input,
                h.params.first().map_or(3, |&l| l as i32).clamp(-7, 22),
            )?),
            4 => Some(pooled(
                szip::encode(&h.params, input).map_err(|e| stage_error(h, e))?,
            )),
            5 => Some(pooled(
                nbit::encode(&h.params, input).map_err(|e| stage_error(h, e))?,
            )),
            6 => Some(pooled(
                scaleoffset::encode(&h.params, input).map_err(|e| stage_error(h, e))?,
            )),
            32001 => blosc::encode(&h.params, elem, input)
                .map_err(|e| stage_error(h, e))?
                .map(pooled),
            32008 => Some(pooled(bitshuffle::encode(&h.params, elem, input)?)),
            32026 => match blosc2::encode(&h.params, elem, input) {
                Ok(v) => Some(pooled(v)),
                Err(blosc2::Failure::Corrupt(d)) => return Err(stage_error(h, d)),
                Err(blosc2::Failure::Codec(d)) => return Err(Error::Unsupported(d)),
            },
            _ => return Err(unsupported(h, 0, "encoded")),
        };
        // An optional compressor that does not shrink the data is skipped,
        // as HDF5 skips it.
        let compressor = matches!(h.id, 1 | 4 | 32000 | 32001 | 32004 | 32015 | 32026);
        match out {
            Some(out) if !(h.optional() && compressor && out.len() >= input.len()) => {
                buf = Some(out)
            }
            _ if h.optional() => mask |= 1 << i,
            _ => {
                return Err(Error::invalid(format!(
                    "{}: the data does not compress and the filter is not optional",
                    h.name()
                )))
            }
        }
    }
    Ok((buf.unwrap_or_else(|| FILTER.take_copy(raw)), mask))
}

/// A stage's output in a filter buffer.
fn pooled(v: Vec<u8>) -> PooledBuf {
    FILTER.take_copy(&v)
}

/// A stage that refuses to encode (values it cannot work with).
fn stage_error(h: &Hdf5Filter, e: String) -> Error {
    Error::invalid(format!("{}: {e}", h.name()))
}

fn inflate(input: &[u8], limit: usize) -> std::result::Result<PooledBuf, String> {
    let mut out = FILTER.take_zeroed(limit);
    match inflate_into(input, &mut out) {
        Ok(n) => out.truncate(n),
        Err(Inflated::TooLong) => return Err(format!("decodes past {limit} bytes")),
        Err(Inflated::Damaged(e)) => return Err(e),
    }
    Ok(out)
}

/// HDF5's Fletcher-32: 16-bit big-endian words summed in blocks of 360,
/// an odd last byte as the high half of a word.
fn fletcher32(data: &[u8]) -> u32 {
    let (mut s1, mut s2) = (0u32, 0u32);
    let mut words = data.chunks_exact(2);
    loop {
        let mut n = 0;
        for w in words.by_ref().take(360) {
            s1 += u32::from(w[0]) << 8 | u32::from(w[1]);
            s2 += s1;
            n += 1;
        }
        if n == 0 {
            break;
        }
        s1 = (s1 & 0xffff) + (s1 >> 16);
        s2 = (s2 & 0xffff) + (s2 >> 16);
    }
    if let [last] = words.remainder() {
        s1 += u32::from(*last) << 8;
        s2 += s1;
        s1 = (s1 & 0xffff) + (s1 >> 16);
        s2 = (s2 & 0xffff) + (s2 >> 16);
    }
    s1 = (s1 & 0xffff) + (s1 >> 16);
    s2 = (s2 & 0xffff) + (s2 >> 16);
    s2 << 16 | s1
}

/// Strip and check the trailing checksum. HDF5 also accepts the sum with
/// the bytes of each half swapped, which some of its old versions wrote.
fn fletcher32_check(input: &[u8]) -> std::result::Result<PooledBuf, String> {
    let Some(n) = input.len().checked_sub(4) else {
        return Err("shorter than its checksum".into());
    };
    let stored = u32::from_le_bytes([input[n], input[n + 1], input[n + 2], input[n + 3]]);
    let sum = fletcher32(&input[..n]);
    let b = sum.to_le_bytes();
    let reversed = u32::from_le_bytes([b[1], b[0], b[3], b[2]]);
    if stored != sum && stored != reversed {
        return Err(format!("checksum {stored:#010x}, computed {sum:#010x}"));
    }
    Ok(FILTER.take_copy(&input[..n]))
}

/// LZF: a control byte below 32 starts a run of that many plus one
/// literals; otherwise its top three bits are a match length (7: more in
/// the next byte) and the rest with the next byte a distance back.
fn lzf_decode(input: &[u8], limit: usize) -> std::result::Result<PooledBuf, String> {
    let mut out = FILTER.take_empty(limit.min(input.len().saturating_mul(8)));
    let mut i = 0;
    let next = |i: &mut usize| -> std::result::Result<usize, String> {
        let b = *input.get(*i).ok_or("stream ends inside a token")?;
        *i += 1;
        Ok(usize::from(b))
    };
    while i < input.len() {
        let ctrl = next(&mut i)?;
        if ctrl < 32 {
            let run = input
                .get(i..i + ctrl + 1)
                .ok_or("literal run past the end of the stream")?;
            out.extend_from_slice(run);
            i += ctrl + 1;
        } else {
            let mut len = ctrl >> 5;
            if len == 7 {
                len += next(&mut i)?;
            }
            let back = ((ctrl & 0x1f) << 8) + next(&mut i)? + 1;
            let from = out
                .len()
                .checked_sub(back)
                .ok_or("match reaches before the start")?;
            for k in 0..len + 2 {
                let b = out[from + k];
                out.push(b);
            }
        }
        if out.len() > limit {
            return Err(format!("decodes past {limit} bytes"));
        }
    }
    Ok(out)
}

/// LZF compression (a hash of the next three bytes finds an earlier
/// occurrence at most 8 KiB back; matches of 3 to 264 bytes). None when
/// the output would not be smaller than the input.
fn lzf_encode(input: &[u8]) -> Option<PooledBuf> {
    const HASH_BITS: u32 = 14;
    const MAX_BACK: usize = 1 << 13;
    const MAX_LEN: usize = 264;
    let mut table = vec![usize::MAX; 1 << HASH_BITS];
    let mut out = FILTER.take_empty(input.len());
    let mut lit_start = 0; // the literal run waiting to be written
    let flush = |out: &mut PooledBuf, lits: &[u8]| {
        for run in lits.chunks(32) {
            out.push((run.len() - 1) as u8);
            out.extend_from_slice(run);
        }
    };
    let mut i = 0;
    while i + 2 < input.len() {
        let h =
            (u32::from(input[i]) << 16 | u32::from(input[i + 1]) << 8 | u32::from(input[i + 2]))
                .wrapping_mul(2_654_435_761)
                >> (32 - HASH_BITS);
        let cand = std::mem::replace(&mut table[h as usize], i);
        if cand < i && i - cand <= MAX_BACK && input[cand..cand + 3] == input[i..i + 3] {
            let max = MAX_LEN.min(input.len() - i);
            let mut len = 3;
            while len < max && input[cand + len] == input[i + len] {
                len += 1;
            }
            flush(&mut out, &input[lit_start..i]);
            let (l, off) = (len - 2, i - cand - 1);
            if l < 7 {
                out.push((l << 5 | off >> 8) as u8);
            } else {
                out.push((7 << 5 | off >> 8) as u8);
                out.push((l - 7) as u8);
            }
            out.push((off & 0xff) as u8);
            i += len;
            lit_start = i;
        } else {
            i += 1;
        }
        if out.len() >= input.len() {
            return None;
        }
    }
    flush(&mut out, &input[lit_start..]);
    (out.len() < input.len()).then_some(out)
}

/// hdf5plugin's lz4 framing: u64 BE size, u32 BE block size, then per
/// block a u32 BE compressed size and the block (stored as it is when its
/// compressed size would be the block's size or more).
fn lz4_decode(input: &[u8], limit: usize) -> std::result::Result<PooledBuf, String> {
    let head = input.get(..12).ok_or("shorter than its header")?;
    let total = u64::from_be_bytes(head[..8].try_into().unwrap_or_default());
    let block = u32::from_be_bytes(head[8..12].try_into().unwrap_or_default()) as usize;
    if total > limit as u64 {
        return Err(format!("claims {total} bytes, more than {limit}"));
    }
    let total = total as usize;
    if block == 0 && total > 0 {
        return Err("block size 0".into());
    }
    let mut out = FILTER.take_zeroed(total);
    let (mut at, mut done) = (12, 0);
    while done < total {
        let n = block.min(total - done);
        let size = input
            .get(at..at + 4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize)
            .ok_or("block header past the end")?;
        let data = input
            .get(at + 4..at + 4 + size)
            .ok_or("block past the end")?;
        let dst = &mut out[done..done + n];
        if size == n {
            dst.copy_from_slice(data);
        } else {
            let got = lz4::block::decompress_to_buffer(data, Some(n as i32), dst)
                .map_err(|e| e.to_string())?;
            if got != n {
                return Err(format!("block decodes to {got} bytes, not {n}"));
            }
        }
        at += 4 + size;
        done += n;
    }
    if at != input.len() {
        return Err(format!("{} bytes after the last block", input.len() - at));
    }
    Ok(out)
}

fn lz4_encode(input: &[u8], block: u32) -> Result<PooledBuf> {
    let block = match block as usize {
        0 => 1 << 30,
        b => b,
    }
    .min(input.len().max(1));
    let mut out = FILTER.take_empty(input.len() + 16);
    out.extend_from_slice(&(input.len() as u64).to_be_bytes());
    out.extend_from_slice(&(block as u32).to_be_bytes());
    let mut tmp = vec![0u8; lz4::block::compress_bound(block).map_err(|e| Error::io("lz4", e))?];
    for part in input.chunks(block) {
        let n = lz4::block::compress_to_buffer(part, None, false, &mut tmp)
            .map_err(|e| Error::io("lz4 compress", e))?;
        if n == 0 || n >= part.len() {
            out.extend_from_slice(&(part.len() as u32).to_be_bytes());
            out.extend_from_slice(part);
        } else {
            out.extend_from_slice(&(n as u32).to_be_bytes());
            out.extend_from_slice(&tmp[..n]);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::codecs::XorShift;
    use super::*;

    fn h(id: u16, params: &[u32]) -> Filter {
        Filter::Hdf5(Hdf5Filter::new(id, id >= 32000, "", params))
    }

    #[test]
    fn every_codec_roundtrips_and_skips_what_does_not_shrink() {
        let raw: Vec<u8> = (0..20_000u32).flat_map(|i| (i / 9).to_le_bytes()).collect();
        let noise = XorShift(0x9e37_79b9_7f4a_7c15).noise(4099);
        for p in [
            vec![h(2, &[4]), h(1, &[6]), h(3, &[])],
            vec![h(32000, &[4, 261, 80_000])],
            vec![h(2, &[4]), h(32004, &[0])],
            vec![h(32004, &[1000])],
            vec![h(32015, &[5]), h(3, &[])],
        ] {
            for data in [&raw[..], &noise[..], &[][..]] {
                let (enc, mask) = encode(&p, 4, data).unwrap();
                let back = decode(&p, mask, 4, &enc, data.len(), 0).unwrap();
                assert_eq!(&back[..], data, "{p:?} mask {mask}");
            }
            let (enc, mask) = encode(&p, 4, &raw).unwrap();
            assert!(enc.len() < raw.len() / 3, "{p:?}");
            let mut cut = enc.to_vec();
            cut.truncate(enc.len() - 5);
            assert!(decode(&p, mask, 4, &cut, raw.len(), 9).is_err(), "{p:?}");
        }
        let (_, mask) = encode(&[h(32000, &[])], 1, &noise).unwrap();
        assert_eq!(mask, 1, "incompressible data skips the optional lzf");
    }

    /// Every filter decoded here, with the values HDF5 would record for
    /// 4-byte elements and a 4000-byte chunk.
    fn every_filter() -> Vec<Vec<Filter>> {
        let mut so = vec![2, 0, 1000, 0, 4, 1, 0, 0];
        so.resize(20, 0);
        vec![
            vec![h(32001, &[2, 2, 4, 4000, 5, 1, 0])],
            vec![h(32001, &[2, 2, 4, 4000, 5, 2, 1])],
            vec![h(32001, &[2, 2, 4, 4000, 5, 1, 3])],
            vec![h(32001, &[2, 2, 4, 4000, 5, 0, 4])],
            vec![h(32001, &[2, 2, 4, 4000, 5, 2, 5])],
            vec![h(32008, &[0, 3, 4, 0, 2])],
            vec![h(32008, &[0, 3, 4, 0, 3, 3])],
            vec![h(32008, &[0, 3, 4])],
            vec![h(32026, &[1, 0, 4, 4000, 5, 1, 0])],
            vec![h(4, &[128 | 32 | 8, 16, 32, 100])],
            vec![h(4, &[128 | 8, 8, 32, 100])],
            vec![h(6, &so)],
            vec![h(5, &[8, 0, 1000, 1, 4, 0, 20, 3])],
        ]
    }

    #[test]
    fn damaged_chunks_of_every_filter_are_errors_never_panics() {
        let raw: Vec<u8> = (0..1000u32)
            .flat_map(|i| (i / 3 % 4000).to_le_bytes())
            .collect();
        let mut gen = XorShift(0x2545_f491_4f6c_dd1d);
        let mut rnd = move || gen.next();
        for p in every_filter() {
            let (enc, mask) = encode(&p, 4, &raw).unwrap();
            if p[0].name() != "nbit" {
                let back = decode(&p, mask, 4, &enc, raw.len(), 0).unwrap();
                assert_eq!(&back[..], &raw[..], "{p:?}");
            }
            for _ in 0..300 {
                let mut bad = enc.to_vec();
                match rnd() % 3 {
                    0 => bad.truncate(rnd() as usize % (bad.len() + 1)),
                    1 => {
                        let i = rnd() as usize % bad.len();
                        bad[i] ^= (rnd() >> 40) as u8 | 1;
                    }
                    _ => bad = (0..rnd() % 300).map(|_| rnd() as u8).collect(),
                }
                if let Ok(v) = decode(&p, mask, 4, &bad, raw.len(), 8) {
                    assert_eq!(v.len(), raw.len(), "{p:?}");
                }
                let mut out = vec![0u8; raw.len()];
                let _ = super::super::decode_into(&p, mask, 4, &bad, 8, &mut out);
            }
        }
    }

    #[test]
    fn fletcher32_is_hdf5s() {
        // Worked by hand from HDF5's definition: one word; two words and
        // an odd byte.
        assert_eq!(fletcher32(b"ab"), 0x6162_6162);
        assert_eq!(fletcher32(b"abcde"), 0x4ff0_29c7);
        let even = fletcher32(b"abcdef");
        let mut stored = b"abcdef".to_vec();
        stored.extend_from_slice(&even.to_le_bytes());
        assert_eq!(&fletcher32_check(&stored).unwrap()[..], b"abcdef");
        stored[0] ^= 1;
        assert!(fletcher32_check(&stored).is_err());
    }

    #[test]
    fn filters_arca_lacks_are_named() {
        let p = [Filter::Hdf5(Hdf5Filter::new(307, true, "bzip2", &[9]))];
        let e = decode(&p, 0, 4, b"xxxx", 4, 4096).unwrap_err();
        assert!(matches!(e, Error::Unsupported(_)) && e.to_string().contains("307 (bzip2)"));
        // Skipped by the chunk's mask, it is not needed.
        assert_eq!(&decode(&p, 1, 4, b"xxxx", 4, 4096).unwrap()[..], b"xxxx");
        assert!(encode(&p, 4, b"xxxx").is_err());
    }
}
