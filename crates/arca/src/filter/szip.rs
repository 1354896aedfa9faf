//! HDF5's szip filter (id 4): the CCSDS 121.0-B-3 adaptive entropy coder
//! (libaec's algorithm) from two pure-Rust crates, each used where the
//! other misreads what libaec writes:
//!
//! - tensogram-szip (ECMWF's) encodes, and decodes streams without the
//!   preprocessor. Its decoder pairs the samples of a second-extension
//!   block that carries a reference sample from the reference on, where
//!   libaec pairs them after it; only preprocessed streams have reference
//!   samples, and its encoder never writes such a block.
//! - rust-aec decodes preprocessed streams. It loses its place after a
//!   run of zero blocks that fills an interval without a reference
//!   sample, which again only streams without the preprocessor have.
//!
//! A stored chunk is u32 LE the decoded size, then the coded stream. The
//! filter's client-data values, from HDF5's `set_local`: options mask,
//! pixels per block, bits per pixel, pixels per scanline. They map onto
//! the coder's parameters as szip's interface (libaec's `sz_compat`)
//! maps them: option 16 is most-significant-byte first, option 32 the
//! nearest-neighbour preprocessor; 32- and 64-bit pixels are coded as
//! bytes, the bytes of each pixel first gathered into planes; a scanline
//! not a whole number of blocks is padded to one (with its last pixel
//! under the preprocessor, else zeros).

use tensogram_szip::{
    aec_compress_no_offsets, aec_decompress, AecParams, AEC_DATA_MSB, AEC_DATA_PREPROCESS,
    AEC_NOT_ENFORCE,
};

const MSB: u32 = 16;
const NN: u32 = 32;

struct Params {
    aec: AecParams,
    /// Bytes of a pixel as coded.
    pixel: usize,
    /// Pixel width in bytes when pixels are coded as byte planes.
    interleave: Option<usize>,
    /// Pixels in a scanline, and the coded padding after each (bytes).
    scanline: usize,
    pad: usize,
}

fn params(p: &[u32]) -> Result<Params, String> {
    let [mask, ppb, bpp, ppsl] = *p.get(..4).ok_or("fewer than 4 values")? else {
        return Err("fewer than 4 values".into());
    };
    if !(1..=32).contains(&ppb) || ppsl == 0 || !matches!(bpp, 1..=24 | 32 | 64) {
        return Err(format!(
            "{ppb} pixels a block, {bpp} bits a pixel, {ppsl} pixels a scanline"
        ));
    }
    let interleave = matches!(bpp, 32 | 64).then_some(bpp as usize / 8);
    let bits = if interleave.is_some() { 8 } else { bpp };
    let pixel = match bits {
        17.. => 4,
        9.. => 2,
        _ => 1,
    };
    let mut flags = 0;
    if mask & MSB != 0 {
        flags |= AEC_DATA_MSB;
    }
    if mask & NN != 0 {
        flags |= AEC_DATA_PREPROCESS;
    }
    let rsi = ppsl.div_ceil(ppb);
    Ok(Params {
        aec: AecParams {
            bits_per_sample: bits,
            block_size: ppb,
            rsi,
            flags,
        },
        pixel,
        interleave,
        scanline: ppsl as usize,
        pad: (rsi * ppb - ppsl) as usize * pixel,
    })
}

/// Decode a chunk; `limit` bounds its size.
pub(super) fn decode(p: &[u32], input: &[u8], limit: usize) -> Result<Vec<u8>, String> {
    let q = params(p)?;
    let head = input.get(..4).ok_or("shorter than its size")?;
    let n = u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as usize;
    if n > limit {
        return Err(format!("claims {n} bytes, more than {limit}"));
    }
    let line = q.scanline * q.pixel;
    let lines = (n / q.pixel).div_ceil(q.scanline);
    let coded = if q.pad > 0 { lines * (line + q.pad) } else { n };
    let mut buf = if q.aec.flags & AEC_DATA_PREPROCESS != 0 {
        let mut flags = rust_aec::AecFlags::DATA_PREPROCESS;
        if q.aec.flags & AEC_DATA_MSB != 0 {
            flags |= rust_aec::AecFlags::MSB;
        }
        let bits = q.aec.bits_per_sample as u8;
        let params = rust_aec::AecParams::new(bits, q.aec.block_size, q.aec.rsi, flags);
        rust_aec::decode(&input[4..], params, coded / q.pixel).map_err(|e| e.to_string())?
    } else {
        aec_decompress(&input[4..], coded, &q.aec).map_err(|e| e.to_string())?
    };
    if buf.len() < coded {
        return Err(format!("decodes to {} bytes, not {coded}", buf.len()));
    }
    if q.pad > 0 {
        let mut packed = Vec::with_capacity(lines * line);
        for l in buf.chunks(line + q.pad) {
            packed.extend_from_slice(&l[..line.min(l.len())]);
        }
        buf = packed;
    }
    buf.truncate(n);
    if buf.len() < n {
        return Err(format!("decodes to {} bytes, not {n}", buf.len()));
    }
    Ok(match q.interleave {
        Some(w) => {
            // Byte planes back into pixels.
            let count = n / w;
            let mut out = vec![0u8; n];
            for i in 0..count {
                for j in 0..w {
                    out[i * w + j] = buf[j * count + i];
                }
            }
            out[count * w..].copy_from_slice(&buf[count * w..]);
            out
        }
        None => buf,
    })
}

/// Encode a chunk.
pub(super) fn encode(p: &[u32], plain: &[u8]) -> Result<Vec<u8>, String> {
    let q = params(p)?;
    let n = plain.len();
    let src = match q.interleave {
        Some(w) => {
            let count = n / w;
            let mut v = vec![0u8; n];
            for i in 0..count {
                for j in 0..w {
                    v[j * count + i] = plain[i * w + j];
                }
            }
            v[count * w..].copy_from_slice(&plain[count * w..]);
            v
        }
        None => plain.to_vec(),
    };
    let line = q.scanline * q.pixel;
    let lines = (n / q.pixel).div_ceil(q.scanline);
    let mut padded = Vec::with_capacity(lines * (line + q.pad));
    for l in src.chunks(line) {
        padded.extend_from_slice(l);
        let fill: Vec<u8> = if q.aec.flags & AEC_DATA_PREPROCESS != 0 && l.len() >= q.pixel {
            l[l.len() - q.pixel..].to_vec()
        } else {
            vec![0; q.pixel]
        };
        let mut k = 0;
        while k < line + q.pad - l.len() {
            let take = q.pixel.min(line + q.pad - l.len() - k);
            padded.extend_from_slice(&fill[..take]);
            k += take;
        }
    }
    let aec = AecParams {
        flags: q.aec.flags | AEC_NOT_ENFORCE,
        ..q.aec
    };
    let coded = aec_compress_no_offsets(&padded, &aec).map_err(|e| e.to_string())?;
    let mut out = Vec::with_capacity(coded.len() + 4);
    out.extend_from_slice(&(n as u32).to_le_bytes());
    out.extend_from_slice(&coded);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn szip_roundtrips_with_every_option() {
        for (mask, bpp, size) in [
            (NN | 8, 16, 2),
            (NN | MSB, 32, 4),
            (8, 64, 8),
            (MSB | NN, 8, 1),
        ] {
            for ppsl in [64u32, 100] {
                let n = 1000;
                let plain: Vec<u8> = (0..n * size)
                    .map(|i| ((i / size) / 3 + i % size) as u8)
                    .collect();
                let p = [mask | 128, 16, bpp, ppsl];
                let enc = encode(&p, &plain).unwrap();
                assert_eq!(
                    decode(&p, &enc, plain.len()).unwrap(),
                    plain,
                    "{mask} {bpp} {ppsl}"
                );
                assert!(decode(&p, &enc[..enc.len() / 2], plain.len()).is_err());
                assert!(decode(&p, &enc, plain.len() - 1).is_err(), "over the limit");
            }
        }
        assert!(decode(&[0, 0, 8, 8], &[0; 8], 8).is_err());
    }
}
