//! The bitshuffle filter (HDF5 id 32008) and the bit transpose it shares
//! with blosc's bit shuffle.
//!
//! Bit-shuffling `n` elements (`n` a multiple of 8) of `s` bytes makes
//! `8 * s` rows of `n / 8` bytes: row `8 * j + b` holds bit `b` of byte
//! `j` of every element, element `8 * t + m` in bit `m` of the row's byte
//! `t`. The filter's client-data values (its `set_local` puts the first
//! three in front of the caller's):
//!
//! ```text
//! [0] major version  [1] minor version  [2] element size
//! [3] block size in elements (0: 8192 bytes' worth, a multiple of 8, at least 128)
//! [4] compression: 0 none, 2 lz4, 3 zstd  [5] zstd level
//! ```
//! Data is cut into blocks of that many elements; the last, shorter block
//! rounded down to a multiple of 8 elements; the elements left over copied
//! as they are at the end. Uncompressed, the blocks' rows follow each
//! other. Compressed: u64 BE the chunk's size, u32 BE the block size in
//! bytes, then per block a u32 BE length and the block's rows as one lz4
//! block or zstd frame, then the left-over bytes.

use crate::error::{Error, Result};

/// HDF5's 8x8 bit transpose of a word: bit `8 * r + c` goes to `8 * c + r`.
fn transpose8x8(mut x: u64) -> u64 {
    let t = (x ^ (x >> 7)) & 0x00AA_00AA_00AA_00AA;
    x = x ^ t ^ (t << 7);
    let t = (x ^ (x >> 14)) & 0x0000_CCCC_0000_CCCC;
    x = x ^ t ^ (t << 14);
    let t = (x ^ (x >> 28)) & 0x0000_0000_F0F0_F0F0;
    x ^ t ^ (t << 28)
}

/// Bit-shuffle `n` elements (`n % 8 == 0`) of `s` bytes from `input` into
/// `out` (both `n * s` bytes).
pub(super) fn bitshuffle_block(input: &[u8], out: &mut [u8], n: usize, s: usize) {
    let row = n / 8;
    for j in 0..s {
        for t in 0..row {
            let mut w = [0u8; 8];
            for (m, b) in w.iter_mut().enumerate() {
                *b = input[(8 * t + m) * s + j];
            }
            let x = transpose8x8(u64::from_le_bytes(w)).to_le_bytes();
            for (b, &v) in x.iter().enumerate() {
                out[(8 * j + b) * row + t] = v;
            }
        }
    }
}

/// [`bitshuffle_block`] undone.
pub(super) fn bitunshuffle_block(input: &[u8], out: &mut [u8], n: usize, s: usize) {
    let row = n / 8;
    for j in 0..s {
        for t in 0..row {
            let mut w = [0u8; 8];
            for (b, v) in w.iter_mut().enumerate() {
                *v = input[(8 * j + b) * row + t];
            }
            let x = transpose8x8(u64::from_le_bytes(w)).to_le_bytes();
            for (m, &v) in x.iter().enumerate() {
                out[(8 * t + m) * s + j] = v;
            }
        }
    }
}

/// The filter's default block size for `s`-byte elements.
pub(super) fn default_block(s: usize) -> usize {
    (8192 / s.max(1) / 8 * 8).max(128)
}

struct Params {
    elem: usize,
    block: usize,
    comp: u32,
    level: i32,
}

fn params(p: &[u32], elem: usize) -> std::result::Result<Params, String> {
    let s = match p.get(2) {
        Some(&s) if s > 0 => s as usize,
        Some(_) => return Err("element size 0".into()),
        None => elem,
    };
    let block = match p.get(3).copied().unwrap_or(0) as usize {
        0 => default_block(s),
        b if b % 8 == 0 => b,
        b => return Err(format!("block of {b} elements, not a multiple of 8")),
    };
    let comp = p.get(4).copied().unwrap_or(0);
    if !matches!(comp, 0 | 2 | 3) {
        return Err(format!("compression {comp}"));
    }
    Ok(Params {
        elem: s,
        block,
        comp,
        level: p.get(5).map_or(0, |&l| l as i32),
    })
}

/// The blocks of `n` elements: (first element, elements) pairs, and the
/// elements left over at the end.
fn blocks(n: usize, block: usize) -> (Vec<(usize, usize)>, usize) {
    let mut out: Vec<(usize, usize)> = (0..n / block).map(|i| (i * block, block)).collect();
    let last = n % block / 8 * 8;
    if last > 0 {
        out.push((n / block * block, last));
    }
    let done = n / block * block + last;
    (out, n - done)
}

/// Undo the filter; `limit` bounds the decoded size.
pub(super) fn decode(
    p: &[u32],
    elem: usize,
    input: &[u8],
    limit: usize,
) -> std::result::Result<Vec<u8>, String> {
    let q = params(p, elem)?;
    let s = q.elem;
    if q.comp == 0 {
        if !input.len().is_multiple_of(s) {
            return Err(format!("{} bytes of {s}-byte elements", input.len()));
        }
        let mut out = vec![0u8; input.len()];
        let (bl, _) = blocks(input.len() / s, q.block);
        let mut end = 0;
        for (first, k) in bl {
            let r = first * s..(first + k) * s;
            bitunshuffle_block(&input[r.clone()], &mut out[r.clone()], k, s);
            end = r.end;
        }
        out[end..].copy_from_slice(&input[end..]);
        return Ok(out);
    }
    let head = input.get(..12).ok_or("shorter than its header")?;
    let total = u64::from_be_bytes(head[..8].try_into().unwrap_or_default());
    let bbytes = u32::from_be_bytes(head[8..12].try_into().unwrap_or_default()) as usize;
    if total > limit as u64 {
        return Err(format!("claims {total} bytes, more than {limit}"));
    }
    let total = total as usize;
    if !total.is_multiple_of(s)
        || !bbytes.is_multiple_of(s)
        || !(bbytes / s).is_multiple_of(8)
        || bbytes == 0
    {
        return Err(format!(
            "{total} bytes in blocks of {bbytes} for {s}-byte elements"
        ));
    }
    let (bl, _) = blocks(total / s, bbytes / s);
    let mut out = vec![0u8; total];
    let mut tmp = vec![0u8; bbytes.min(total)];
    let mut at = 12usize;
    let mut end = 0;
    for (first, k) in bl {
        let len = input
            .get(at..at + 4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize)
            .ok_or("block header past the end")?;
        let data = input
            .get(at + 4..at + 4 + len)
            .ok_or("block past the end")?;
        at += 4 + len;
        let n = k * s;
        let got = if q.comp == 2 {
            lz4::block::decompress_to_buffer(data, Some(n as i32), &mut tmp[..n])
                .map_err(|e| format!("lz4: {e}"))?
        } else {
            super::codecs::zstd_decompress(data, &mut tmp[..n]).map_err(|e| format!("zstd: {e}"))?
        };
        if got != n {
            return Err(format!("block decodes to {got} bytes, not {n}"));
        }
        let r = first * s..first * s + n;
        bitunshuffle_block(&tmp[..n], &mut out[r.clone()], k, s);
        end = r.end;
    }
    let rest = total - end;
    let tail = input
        .get(at..at + rest)
        .ok_or("left-over bytes past the end")?;
    out[end..].copy_from_slice(tail);
    if at + rest != input.len() {
        return Err(format!("{} bytes after the data", input.len() - at - rest));
    }
    Ok(out)
}

/// Run the filter forward.
pub(super) fn encode(p: &[u32], elem: usize, plain: &[u8]) -> Result<Vec<u8>> {
    let q = params(p, elem).map_err(|e| Error::invalid(format!("bitshuffle: {e}")))?;
    let s = q.elem;
    if !plain.len().is_multiple_of(s) {
        return Err(Error::invalid(format!(
            "bitshuffle: {} bytes of {s}-byte elements",
            plain.len()
        )));
    }
    let (bl, _) = blocks(plain.len() / s, q.block);
    if q.comp == 0 {
        let mut out = vec![0u8; plain.len()];
        let mut end = 0;
        for (first, k) in bl {
            let r = first * s..(first + k) * s;
            bitshuffle_block(&plain[r.clone()], &mut out[r.clone()], k, s);
            end = r.end;
        }
        out[end..].copy_from_slice(&plain[end..]);
        return Ok(out);
    }
    let mut out = Vec::with_capacity(plain.len() / 2 + 64);
    out.extend_from_slice(&(plain.len() as u64).to_be_bytes());
    out.extend_from_slice(&((q.block * s) as u32).to_be_bytes());
    let mut tmp = vec![0u8; q.block * s];
    let mut end = 0;
    for (first, k) in bl {
        let r = first * s..(first + k) * s;
        let n = k * s;
        bitshuffle_block(&plain[r.clone()], &mut tmp[..n], k, s);
        let c = if q.comp == 2 {
            lz4::block::compress(&tmp[..n], None, false)
                .map_err(|e| Error::io("lz4 compress", e))?
        } else {
            let mut v = Vec::new();
            super::codecs::zstd_compress(&tmp[..n], q.level.clamp(-7, 22), &mut v)
                .map_err(|e| Error::io("zstd compress", e))?;
            v
        };
        out.extend_from_slice(&(c.len() as u32).to_be_bytes());
        out.extend_from_slice(&c);
        end = r.end;
    }
    out.extend_from_slice(&plain[end..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bit-shuffle as its definition says, one bit at a time.
    fn by_definition(input: &[u8], n: usize, s: usize) -> Vec<u8> {
        let mut out = vec![0u8; n * s];
        for e in 0..n {
            for j in 0..s {
                for b in 0..8 {
                    if input[e * s + j] >> b & 1 == 1 {
                        out[(8 * j + b) * (n / 8) + e / 8] |= 1 << (e % 8);
                    }
                }
            }
        }
        out
    }

    #[test]
    fn transpose_matches_the_definition() {
        for (n, s) in [(8, 1), (16, 4), (64, 3), (24, 8)] {
            let input: Vec<u8> = (0..n * s).map(|i| (i * 37 % 251) as u8).collect();
            let mut out = vec![0u8; n * s];
            bitshuffle_block(&input, &mut out, n, s);
            assert_eq!(out, by_definition(&input, n, s), "{n} {s}");
            let mut back = vec![0u8; n * s];
            bitunshuffle_block(&out, &mut back, n, s);
            assert_eq!(back, input);
        }
    }

    #[test]
    fn every_mode_roundtrips_and_damage_is_an_error() {
        let plain: Vec<u8> = (0..10_003u32)
            .flat_map(|i| (i / 5).to_le_bytes())
            .take(40_004)
            .collect();
        for p in [
            vec![0, 3, 4],
            vec![0, 3, 4, 0, 2],
            vec![0, 3, 4, 256, 3, 5],
            vec![0, 3, 4, 64, 0],
        ] {
            let enc = encode(&p, 4, &plain).unwrap();
            assert_eq!(decode(&p, 4, &enc, plain.len()).unwrap(), plain, "{p:?}");
            if p.len() > 4 && p[4] != 0 {
                assert!(enc.len() < plain.len() / 2);
                for cut in [0, 11, 20, enc.len() - 1] {
                    assert!(
                        decode(&p, 4, &enc[..cut], plain.len()).is_err(),
                        "{p:?} {cut}"
                    );
                }
                assert!(
                    decode(&p, 4, &enc, plain.len() - 4).is_err(),
                    "size over the limit"
                );
                let mut bad = enc.clone();
                bad[8..12].copy_from_slice(&13u32.to_be_bytes());
                assert!(decode(&p, 4, &bad, plain.len()).is_err(), "odd block size");
            }
        }
        assert!(decode(&[0, 3, 4, 12], 4, &plain, plain.len()).is_err());
        assert!(decode(&[0, 3, 4, 0, 7], 4, &plain, plain.len()).is_err());
    }
}
