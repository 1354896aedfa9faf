//! HDF5's scale-offset filter (id 6): integers stored as their difference
//! from the chunk's minimum in the fewest bits that hold every difference;
//! floats first scaled by 10^D and rounded (lossy, HDF5's "D-scale").
//!
//! The filter's twenty client-data values (written by HDF5's `set_local`):
//!
//! ```text
//! [0] scale type (0 float D-scale, 1 float E-scale: never implemented, 2 integer)
//! [1] scale factor (D for floats; for integers the bits asked for, 0: fewest)
//! [2] elements in a chunk  [3] 0 integer, 1 float  [4] element size
//! [5] 1 signed  [6] byte order (0 LE, 1 BE)  [7] 1 when a fill value is given
//! [8..20] the fill value's bytes, little-endian, four to a value
//! ```
//! A stored chunk: u32 LE `minbits`, u8 the size of `minval` (8), `minval`
//! (u64 LE; a float minimum's own bytes), zeros up to byte 21, then each
//! element's `minbits` low bits, most significant first, end to end (the
//! elements as they are, little-endian, when `minbits` is the full width).
//! Under a fill value the all-ones pattern stands for it.

use super::bits::{load, mask, store, BitReader, BitWriter};

const HEADER: usize = 21;

struct Params {
    float: bool,
    d: i32,
    n: usize,
    size: usize,
    be: bool,
    fill: Option<u64>,
    /// Integers whose asked-for width is the full width: stored as they are.
    as_is: bool,
}

fn params(p: &[u32]) -> Result<Params, String> {
    if p.len() != 20 {
        return Err(format!("{} values, not 20", p.len()));
    }
    let size = p[4] as usize;
    let float = match p[3] {
        0 => false,
        1 => true,
        c => return Err(format!("type class {c}")),
    };
    if float && !matches!(size, 4 | 8) || !float && !matches!(size, 1 | 2 | 4 | 8) {
        return Err(format!(
            "{}-byte {}",
            size,
            if float { "floats" } else { "integers" }
        ));
    }
    match (float, p[0]) {
        (true, 0) | (false, 2) => {}
        (true, 1) => return Err("E-scale, which HDF5 never implemented".into()),
        (_, t) => return Err(format!("scale type {t}")),
    }
    let be = match p[6] {
        0 => false,
        1 => true,
        o => return Err(format!("byte order {o}")),
    };
    let fill = (p[7] == 1).then(|| {
        let bytes: Vec<u8> = p[8..].iter().flat_map(|v| v.to_le_bytes()).collect();
        load(&bytes[..size], false)
    });
    let factor = p[1] as i32;
    Ok(Params {
        float,
        d: factor,
        n: p[2] as usize,
        size,
        be,
        fill,
        as_is: !float && factor >= 0 && factor as usize == 8 * size,
    })
}

/// Sign-extend the low `bytes` bytes of `v`.
fn signed(v: u64, bytes: usize) -> i64 {
    let shift = 64 - 8 * bytes as u32;
    ((v << shift) as i64) >> shift
}

/// Undo the filter; `limit` bounds the chunk's size.
pub(super) fn decode(p: &[u32], input: &[u8], limit: usize) -> Result<Vec<u8>, String> {
    let q = params(p)?;
    if q.as_is {
        return Ok(input.to_vec());
    }
    let expect =
        q.n.checked_mul(q.size)
            .filter(|&t| t <= limit)
            .ok_or_else(|| format!("{} elements of {} bytes, more than {limit}", q.n, q.size))?;
    let head = input.get(..HEADER).ok_or("shorter than its header")?;
    let minbits = u32::from_le_bytes([head[0], head[1], head[2], head[3]]);
    let width = 8 * q.size as u32;
    if minbits > width {
        return Err(format!("{minbits} bits for {}-byte values", q.size));
    }
    let mvs = usize::from(head[4]).min(8);
    let minval = load(&head[5..5 + mvs], false);
    let mut out = vec![0u8; expect];
    let body = &input[HEADER..];
    if minbits == width {
        let raw = body.get(..expect).ok_or("full-width values end early")?;
        out.copy_from_slice(raw);
        if q.be {
            for e in out.chunks_exact_mut(q.size) {
                e.reverse();
            }
        }
        return Ok(out);
    }
    let mut r = BitReader::new(body);
    let all_ones = mask(minbits);
    let scale = |x: u64| -> u64 {
        if q.float {
            if q.size == 4 {
                let min = f32::from_le_bytes((minval as u32).to_le_bytes());
                let v = (x as i32 as f32) / 10f32.powf(q.d as f32) + min;
                u64::from(v.to_bits())
            } else {
                let min = f64::from_bits(minval);
                ((x as i64 as f64) / 10f64.powf(f64::from(q.d)) + min).to_bits()
            }
        } else {
            x.wrapping_add(minval) & mask(width)
        }
    };
    for e in out.chunks_exact_mut(q.size) {
        let x = if minbits == 0 {
            0
        } else {
            r.read(minbits).ok_or("packed values end early")?
        };
        let v = match q.fill {
            Some(f) if minbits > 0 && x == all_ones => f,
            _ => scale(x),
        };
        store(v, e, q.be);
    }
    Ok(out)
}

/// The fewest bits that hold `span` distinct values (0 for one).
fn bits_for(span: u128) -> u32 {
    if span <= 1 {
        0
    } else {
        128 - (span - 1).leading_zeros()
    }
}

/// Run the filter forward. Integers are stored losslessly in the fewest
/// bits; floats scaled by 10^D and rounded, as HDF5 does (lossy).
pub(super) fn encode(p: &[u32], plain: &[u8]) -> Result<Vec<u8>, String> {
    let q = params(p)?;
    if q.as_is {
        return Ok(plain.to_vec());
    }
    if q.n.checked_mul(q.size) != Some(plain.len()) {
        return Err(format!(
            "{} elements of {} bytes, given {}",
            q.n,
            q.size,
            plain.len()
        ));
    }
    let width = 8 * q.size as u32;
    let vals: Vec<u64> = plain.chunks_exact(q.size).map(|e| load(e, q.be)).collect();
    let as_float = |v: u64| {
        if q.size == 4 {
            f64::from(f32::from_bits(v as u32))
        } else {
            f64::from_bits(v)
        }
    };
    // As HDF5: a float within 10^-D of the fill value is the fill value.
    let tolerance = 10f64.powi(-q.d);
    let is_fill = |v: u64| match q.fill {
        Some(f) if q.float => (as_float(v) - as_float(f)).abs() < tolerance,
        f => f == Some(v),
    };
    // Each element as an integer to store before the minimum is taken off
    // (floats: scaled and rounded), and the minimum to record.
    let (ints, minval): (Vec<i128>, u64) = if q.float {
        let f = as_float;
        let min = vals
            .iter()
            .filter(|v| !is_fill(**v))
            .map(|v| f(*v))
            .fold(f64::INFINITY, f64::min);
        let min = if min.is_finite() { min } else { 0.0 };
        let scale = 10f64.powi(q.d);
        let ints = vals
            .iter()
            .map(|&v| {
                if is_fill(v) {
                    0
                } else {
                    ((f(v) - min) * scale).round() as i128
                }
            })
            .collect();
        let minval = if q.size == 4 {
            u64::from((min as f32).to_bits())
        } else {
            min.to_bits()
        };
        (ints, minval)
    } else {
        let signed_ints = p[5] == 1;
        let as_int = |v: u64| {
            if signed_ints {
                i128::from(signed(v, q.size))
            } else {
                i128::from(v)
            }
        };
        let min = vals
            .iter()
            .filter(|v| !is_fill(**v))
            .map(|v| as_int(*v))
            .min()
            .unwrap_or(0);
        let ints = vals.iter().map(|&v| as_int(v) - min).collect();
        (ints, (min as i64) as u64)
    };
    let max = ints
        .iter()
        .zip(&vals)
        .filter(|(_, v)| !is_fill(**v))
        .map(|(i, _)| *i)
        .max()
        .unwrap_or(0);
    let span = max.max(0) as u128 + 1 + u128::from(q.fill.is_some());
    // Integers keep the bits asked for (HDF5 drops the higher ones, so a
    // too-small width loses data, as the user chose); else as few as hold
    // the chunk's span.
    let minbits = if !q.float && q.d > 0 {
        (q.d as u32).min(width)
    } else {
        bits_for(span).min(width)
    };
    let mut out = Vec::with_capacity(HEADER + plain.len() + 1);
    out.extend_from_slice(&minbits.to_le_bytes());
    out.push(8);
    out.extend_from_slice(&minval.to_le_bytes());
    out.resize(HEADER, 0);
    if minbits == width {
        // Lossless integers only reach here; HDF5 keeps them little-endian.
        for &v in &vals {
            let mut e = [0u8; 8];
            store(v, &mut e[..q.size], false);
            out.extend_from_slice(&e[..q.size]);
        }
        return Ok(out);
    }
    {
        let mut w = BitWriter::new(&mut out);
        for (i, &v) in ints.iter().zip(&vals) {
            let x = if is_fill(v) {
                mask(minbits)
            } else {
                (*i).max(0) as u64
            };
            w.write(x & mask(minbits), minbits);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params_for(
        float: bool,
        d: i32,
        n: usize,
        size: usize,
        signed: bool,
        be: bool,
        fill: Option<u64>,
    ) -> Vec<u32> {
        let mut p = vec![0u32; 20];
        p[0] = if float { 0 } else { 2 };
        p[1] = d as u32;
        p[2] = n as u32;
        p[3] = u32::from(float);
        p[4] = size as u32;
        p[5] = u32::from(signed);
        p[6] = u32::from(be);
        if let Some(f) = fill {
            p[7] = 1;
            p[8] = f as u32;
            p[9] = (f >> 32) as u32;
        }
        p
    }

    #[test]
    fn integers_roundtrip_exactly() {
        for (size, signed, be) in [
            (1, false, false),
            (2, true, true),
            (4, true, false),
            (8, false, true),
        ] {
            let vals: Vec<i64> = (0..300)
                .map(|i| (i * 7 % 50) - if signed { 20 } else { 0 })
                .collect();
            let mut plain = Vec::new();
            for v in &vals {
                let mut e = [0u8; 8];
                store(*v as u64 & mask(8 * size as u32), &mut e[..size], be);
                plain.extend_from_slice(&e[..size]);
            }
            for fill in [None, Some(3u64)] {
                let p = params_for(false, 0, vals.len(), size, signed, be, fill);
                let enc = encode(&p, &plain).unwrap();
                assert!(enc.len() < plain.len() || size == 1);
                assert_eq!(
                    decode(&p, &enc, plain.len()).unwrap(),
                    plain,
                    "{size} {signed} {be}"
                );
            }
        }
    }

    #[test]
    fn floats_keep_d_decimals() {
        let vals: Vec<f64> = (0..100).map(|i| f64::from(i) * 0.25 - 3.0).collect();
        for be in [false, true] {
            let plain: Vec<u8> = vals
                .iter()
                .flat_map(|v| if be { v.to_be_bytes() } else { v.to_le_bytes() })
                .collect();
            let p = params_for(true, 2, vals.len(), 8, true, be, None);
            let back = decode(&p, &encode(&p, &plain).unwrap(), plain.len()).unwrap();
            for (a, b) in vals.iter().zip(back.chunks_exact(8)) {
                let b = if be {
                    f64::from_be_bytes(b.try_into().unwrap())
                } else {
                    f64::from_le_bytes(b.try_into().unwrap())
                };
                assert!((a - b).abs() < 0.006, "{a} {b}");
            }
        }
    }

    #[test]
    fn damage_is_an_error() {
        let p = params_for(false, 0, 10, 4, false, false, None);
        assert!(decode(&p, &[0; 10], 40).is_err(), "short header");
        let mut head = vec![0u8; HEADER];
        head[0] = 33;
        assert!(decode(&p, &head, 40).is_err(), "minbits past the width");
        head[0] = 7;
        assert!(decode(&p, &head, 40).is_err(), "values end early");
        assert!(decode(&p, &head, 36).is_err(), "over the limit");
        let mut q = p.clone();
        q[0] = 1;
        assert!(decode(&q, &head, 40).is_err());
        q.pop();
        assert!(decode(&q, &head, 40).is_err());
    }
}
