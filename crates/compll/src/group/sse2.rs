//! Tiles in SSE2 registers (part of every x86-64 processor): sixteen nodes'
//! eight bytes become eight 16-byte columns in four rounds of byte
//! interleaving, and back in three; the differences between neighbouring
//! nodes are a byte shift and a subtraction per column, their running sums
//! two additions per pair of nodes.

use safe_arch::{
    add_i8_m128i, byte_shl_imm_u128_m128i, get_i64_from_m128i_s, load_unaligned_m128i, m128i,
    set_i64_m128i_s, set_splat_i64_m128i, store_unaligned_m128i, sub_i8_m128i,
    unpack_high_i64_m128i, unpack_high_i8_m128i, unpack_low_i8_m128i,
};

use super::{load_part, store_part, Tile, TILE};

/// Byte 15 of `v`.
#[inline(always)]
fn last_byte(v: m128i) -> u8 {
    (get_i64_from_m128i_s(unpack_high_i64_m128i(v, v)) >> 56) as u8
}

/// Interleaves the bytes of `a[i]` and `a[i + d]` for every `i` with bit
/// `d` clear: the low halves' into `i`, the high halves' into `i + d`.
#[inline(always)]
fn round(a: &[m128i; 8], d: usize) -> [m128i; 8] {
    let mut r = [m128i::default(); 8];
    for i in 0..8 {
        if i & d == 0 {
            r[i] = unpack_low_i8_m128i(a[i], a[i + d]);
            r[i + d] = unpack_high_i8_m128i(a[i], a[i + d]);
        }
    }
    r
}

/// Writes the tile's columns (differences from the previous node's bytes,
/// `prev`, which it updates) to `cols`.
#[inline(always)]
pub(crate) fn group_tile(b: &[u8], t: &Tile, prev: &mut [u8], cols: &mut [u8]) {
    let v: [m128i; TILE] =
        std::array::from_fn(|j| set_i64_m128i_s(load_part(b, t.st[j] + t.k0, t.n) as i64));
    // Node j's byte k ends up at position j of column k: the first round
    // pairs node j with node j + 8 (byte k at 2k and 2k + 1), each later
    // round moves one more bit of the node number into the position.
    let r1: [m128i; 8] = std::array::from_fn(|j| unpack_low_i8_m128i(v[j], v[j + 8]));
    let c = round(&round(&round(&r1, 4), 2), 1);
    for (k, p) in prev.iter_mut().enumerate() {
        let x = c[k];
        let before = add_i8_m128i(byte_shl_imm_u128_m128i::<1>(x), set_i64_m128i_s(*p as i64));
        *p = last_byte(x);
        let at = (t.k0 + k) * t.stride + t.i0;
        let dst: &mut [u8; 16] = (&mut cols[at..at + 16]).try_into().expect("16 bytes");
        store_unaligned_m128i(dst, sub_i8_m128i(x, before));
    }
}

/// Inverse of [`group_tile`]: writes the tile's node bytes to `out`.
#[inline(always)]
pub(crate) fn ungroup_tile(cols: &[u8], t: &Tile, prev: &mut [u8], out: &mut [u8]) {
    let mut c = [m128i::default(); 8];
    for (k, x) in c[..t.n].iter_mut().enumerate() {
        let at = (t.k0 + k) * t.stride + t.i0;
        let src: &[u8; 16] = cols[at..at + 16].try_into().expect("16 bytes");
        *x = load_unaligned_m128i(src);
    }
    // Columns k and k + 4, then k and k + 2, then k and k + 1 interleaved:
    // vector i then holds node 2i's differences in its low half, node
    // 2i + 1's in its high one. The running sums are then taken a node
    // (eight columns) at a time: the low half added into the high one,
    // and the previous node's bytes into both.
    let r = round(&round(&round(&c, 4), 2), 1);
    let mut carry = set_splat_i64_m128i(load_part(prev, 0, t.n) as i64);
    for (i, &d) in r.iter().enumerate() {
        let x = add_i8_m128i(add_i8_m128i(d, byte_shl_imm_u128_m128i::<8>(d)), carry);
        carry = unpack_high_i64_m128i(x, x);
        let lo = get_i64_from_m128i_s(x) as u64;
        let hi = get_i64_from_m128i_s(carry) as u64;
        store_part(out, t.st[2 * i] + t.k0, t.n, lo);
        store_part(out, t.st[2 * i + 1] + t.k0, t.n, hi);
    }
    store_part(prev, 0, t.n, get_i64_from_m128i_s(carry) as u64);
}
