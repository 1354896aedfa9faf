//! Tiles byte by byte: the reference the SSE2 kernels are tested against,
//! and the kernels on targets without them.

use super::{load_part, store_part, Tile, TILE};

/// Writes the tile's columns (differences from the previous node's bytes,
/// `prev`, which it updates) to `cols`.
pub(crate) fn group_tile(b: &[u8], t: &Tile, prev: &mut [u8], cols: &mut [u8]) {
    for j in 0..TILE {
        let w = load_part(b, t.st[j] + t.k0, t.n).to_le_bytes();
        for (k, p) in prev.iter_mut().enumerate() {
            cols[(t.k0 + k) * t.stride + t.i0 + j] = w[k].wrapping_sub(*p);
            *p = w[k];
        }
    }
}

/// Inverse of [`group_tile`]: writes the tile's node bytes to `out`.
pub(crate) fn ungroup_tile(cols: &[u8], t: &Tile, prev: &mut [u8], out: &mut [u8]) {
    for j in 0..TILE {
        let mut w = [0u8; 8];
        for (k, p) in prev.iter_mut().enumerate() {
            *p = p.wrapping_add(cols[(t.k0 + k) * t.stride + t.i0 + j]);
            w[k] = *p;
        }
        store_part(out, t.st[j] + t.k0, t.n, u64::from_le_bytes(w));
    }
}
