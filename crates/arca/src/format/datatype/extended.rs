//! Extended precision: the 16-byte float (numpy's `longdouble` on x86-64,
//! HDF5's native long double there) holds an x87 80-bit number in its low
//! 10 bytes, little-endian: a 64-bit significand with its integer bit
//! explicit, then 15 bits of exponent (bias 16383) and the sign. The other
//! 6 bytes carry nothing. Conversions to and from `f64` serve tools that
//! show or take such numbers as text; values keep their full precision in
//! files and in native reads and writes.

/// The `f64` nearest an extended-precision number in native order (its
/// first 10 bytes, little-endian layout); `b` shorter than 10 bytes reads
/// as 0.
///
/// ```
/// let one = arca::f64_to_extended(1.5);
/// assert_eq!(arca::extended_to_f64(&one), 1.5);
/// ```
pub fn extended_to_f64(b: &[u8]) -> f64 {
    let Some(b) = b.get(..10) else {
        return 0.0;
    };
    let mut m = [0u8; 8];
    m.copy_from_slice(&b[..8]);
    let mant = u64::from_le_bytes(m);
    let se = u16::from_le_bytes([b[8], b[9]]);
    let sign = if se & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from(se & 0x7fff);
    if exp == 0x7fff {
        return if mant << 1 == 0 {
            sign * f64::INFINITY
        } else {
            f64::NAN
        };
    }
    // value = mant / 2^63 * 2^(exp - 16383); denormals have exponent 1.
    let e = if exp == 0 { 1 - 16383 } else { exp - 16383 };
    sign * (mant as f64 / 9_223_372_036_854_775_808.0) * pow2(e)
}

/// 2^k as an `f64`: infinite above its range, subnormal or 0 below.
fn pow2(k: i32) -> f64 {
    if k > 1023 {
        f64::INFINITY
    } else if k >= -1022 {
        f64::from_bits(((k + 1023) as u64) << 52)
    } else if k >= -1074 {
        f64::from_bits(1u64 << (k + 1074))
    } else {
        0.0
    }
}

/// An `f64` as an extended-precision number, 16 bytes in native order
/// (the padding zero). Exact: every `f64` is one.
pub fn f64_to_extended(x: f64) -> [u8; 16] {
    let bits = x.to_bits();
    let sign = ((bits >> 63) as u16) << 15;
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1 << 52) - 1);
    let (e, mant) = if exp == 0x7ff {
        (
            0x7fff,
            if frac == 0 {
                1 << 63
            } else {
                (1 << 63) | (frac << 11)
            },
        )
    } else if exp == 0 && frac == 0 {
        (0, 0)
    } else if exp == 0 {
        // An f64 denormal (frac × 2^-1074) is normal here: its leading one
        // moves up to the explicit integer bit.
        let lz = frac.leading_zeros();
        (63 - lz as i32 - 1074 + 16383, frac << lz)
    } else {
        (exp - 1023 + 16383, (1 << 63) | (frac << 11))
    };
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&mant.to_le_bytes());
    out[8..10].copy_from_slice(&(sign | e as u16).to_le_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f64_values_round_trip() {
        for x in [
            0.0,
            -0.0,
            1.0,
            -2.5,
            1e300,
            -1e-300,
            f64::MIN_POSITIVE,
            5e-324,
            f64::MAX,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            let e = f64_to_extended(x);
            assert_eq!(extended_to_f64(&e).to_bits(), x.to_bits(), "{x}");
        }
        assert!(extended_to_f64(&f64_to_extended(f64::NAN)).is_nan());
        // 1.0 in x87 form: the integer bit set, exponent 16383.
        assert_eq!(
            f64_to_extended(1.0)[..10],
            [0, 0, 0, 0, 0, 0, 0, 0x80, 0xff, 0x3f]
        );
    }
}
