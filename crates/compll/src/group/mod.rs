//! Field grouping ("grouping elements"): before a normal block is
//! compressed, the first `width` bytes of every node in use are moved out
//! of the nodes and stored column by column at the end of the image (byte 0
//! of every node, then byte 1, ...), each byte as its difference from the
//! same byte of the previous node. Fixed-layout records then turn into runs
//! of equal or slowly changing bytes, which compress far better and faster
//! than interleaved records. Everything else (header, bitmap, tags, the rest
//! of each node, free space) keeps its order at the front.
//!
//! Nodes at least `width` bytes long come first, in address order, then
//! the shorter ones (their columns hold only the bytes they have).
//!
//! Every block is grouped when it is compressed and ungrouped when it is
//! loaded, so both directions work on tiles of sixteen nodes by eight
//! bytes: on x86-64 a byte transpose in SSE2 registers ([`sse2`]),
//! elsewhere byte by byte ([`scalar`]); both write the same image.

#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
mod scalar;
#[cfg(target_arch = "x86_64")]
mod sse2;

#[cfg(not(target_arch = "x86_64"))]
use scalar as kernel;
#[cfg(target_arch = "x86_64")]
use sse2 as kernel;

use crate::layout::Layout;

/// Nodes per tile.
pub(crate) const TILE: usize = 16;

/// Where a tile's columns go (or come from) in the grouped image: column
/// `k` of the tile's first node is at `cols[k * stride + i0]`.
#[derive(Clone, Copy)]
pub(crate) struct Tile {
    /// Starts of the tile's sixteen nodes in the block.
    pub st: [usize; TILE],
    /// First column (node byte) of the tile.
    pub k0: usize,
    /// Columns in the tile (8, or fewer in the last tile of a width that
    /// is not a multiple of 8).
    pub n: usize,
    /// Index of the tile's first node among the full nodes.
    pub i0: usize,
    /// Number of full nodes (the length of a column).
    pub stride: usize,
}

#[inline(always)]
pub(crate) fn load(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

#[inline(always)]
pub(crate) fn store(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// Copies `src` to `dst` (same length): the gaps between fields are a
/// tag and the rest of a node, a few dozen bytes, which two overlapping
/// fixed-size moves copy faster than a call to `memcpy`.
#[inline(always)]
fn copy_gap(dst: &mut [u8], src: &[u8]) {
    let n = src.len();
    if (16..=32).contains(&n) {
        dst[..16].copy_from_slice(&src[..16]);
        dst[n - 16..].copy_from_slice(&src[n - 16..]);
    } else if (8..16).contains(&n) {
        dst[..8].copy_from_slice(&src[..8]);
        dst[n - 8..].copy_from_slice(&src[n - 8..]);
    } else {
        dst.copy_from_slice(src);
    }
}

/// Bytes `at..at + n` of `b` (n <= 8) as the low bytes of a word: one load
/// and a mask where eight bytes fit, byte by byte at the block's end.
#[inline(always)]
pub(crate) fn load_part(b: &[u8], at: usize, n: usize) -> u64 {
    if n == 8 {
        load(b, at)
    } else if at + 8 <= b.len() {
        load(b, at) & ((1u64 << (8 * n)) - 1)
    } else {
        b[at..at + n]
            .iter()
            .rev()
            .fold(0, |w, &v| (w << 8) | v as u64)
    }
}

/// Writes the low `n` bytes (n <= 8) of `v` to `b[at..at + n]`, keeping the
/// bytes after them.
#[inline(always)]
pub(crate) fn store_part(b: &mut [u8], at: usize, n: usize, v: u64) {
    if n == 8 {
        store(b, at, v);
    } else if at + 8 <= b.len() {
        let m = (1u64 << (8 * n)) - 1;
        let old = load(b, at);
        store(b, at, (v & m) | (old & !m));
    } else {
        for (i, x) in b[at..at + n].iter_mut().enumerate() {
            *x = (v >> (8 * i)) as u8;
        }
    }
}

/// Calls `f` with every tile of the first `full` nodes (those at least
/// `width` long), sixteen nodes and eight columns at a time; returns how
/// many nodes the tiles covered (the rest are done one by one).
#[inline(always)]
fn for_each_tile(
    nodes: &[(usize, usize)],
    full: usize,
    width: usize,
    mut f: impl FnMut(&Tile),
) -> usize {
    let mut i0 = 0;
    while i0 + TILE <= full {
        let st = std::array::from_fn(|j| nodes[i0 + j].0);
        for k0 in (0..width).step_by(8) {
            f(&Tile {
                st,
                k0,
                n: (width - k0).min(8),
                i0,
                stride: full,
            });
        }
        i0 += TILE;
    }
    i0
}

impl Layout {
    /// Writes block `b` grouped into `out` (same length); see the module
    /// documentation. `nodes` and `rows` are scratch.
    pub fn group(
        &self,
        b: &[u8],
        width: usize,
        out: &mut Vec<u8>,
        nodes: &mut Vec<(usize, usize)>,
        rows: &mut Vec<u8>,
    ) {
        nodes.clear();
        self.used_starts(b, |s| nodes.push((s, 0)));
        out.clear();
        out.reserve(b.len());
        let mut cur = 0;
        let mut short = false;
        for n in nodes.iter_mut() {
            let s = n.0;
            n.1 = self.size(b, s) - self.t;
            out.extend_from_slice(&b[cur..s]);
            cur = s + width.min(n.1);
            short |= n.1 < width;
        }
        out.extend_from_slice(&b[cur..]);
        if short {
            // Nodes at least `width` long first (a stable partition).
            nodes.sort_by_key(|x| x.1 < width);
        }
        let full = nodes.iter().take_while(|x| x.1 >= width).count();
        let base = out.len();
        out.resize(base + full * width, 0);
        let cols = &mut out[base..];
        // The previous node's byte of every column.
        rows.clear();
        rows.resize(width, 0);
        let i0 = for_each_tile(nodes, full, width, |t| {
            kernel::group_tile(b, t, &mut rows[t.k0..t.k0 + t.n], cols)
        });
        for (i, &(s, _)) in nodes[..full].iter().enumerate().skip(i0) {
            for (k, (&v, p)) in b[s..s + width].iter().zip(rows.iter_mut()).enumerate() {
                cols[k * full + i] = v.wrapping_sub(*p);
                *p = v;
            }
        }
        // Shorter nodes: their bytes, column by column, continuing each
        // column's differences from the last full node.
        let rest = &nodes[full..];
        for (k, &p) in rows.iter().enumerate() {
            let mut prev = p;
            for &(s, len) in rest {
                if len > k {
                    let v = b[s + k];
                    out.push(v.wrapping_sub(prev));
                    prev = v;
                }
            }
        }
    }

    /// Inverse of [`Layout::group`]: rebuilds the block image in `out` from
    /// the grouped image `g`. A damaged image gives an error, never a
    /// panic. `nodes` and `rows` are scratch.
    pub fn ungroup(
        &self,
        g: &[u8],
        width: usize,
        out: &mut Vec<u8>,
        nodes: &mut Vec<(usize, usize)>,
        rows: &mut Vec<u8>,
    ) -> Result<(), String> {
        let bad = || "grouped block image damaged".to_string();
        if g.len() != self.block_size {
            return Err(bad());
        }
        // Every byte of `out` is written below (header, the gaps between
        // fields, the fields), so a reused buffer is not cleared first.
        out.resize(g.len(), 0);
        // The header (with the bitmap) comes first and unchanged.
        out[..self.first].copy_from_slice(&g[..self.first]);
        nodes.clear();
        self.used_starts(out, |s| nodes.push((s, 0)));
        // Walk the nodes in address order: every node's tag lies before
        // its fields and is restored before it is read.
        let (mut cur, mut src) = (0usize, 0usize);
        let mut short = false;
        for n in nodes.iter_mut() {
            let s = n.0;
            if s < self.first || s < cur + self.t {
                return Err(bad());
            }
            let len = s - cur;
            copy_gap(&mut out[cur..s], g.get(src..src + len).ok_or_else(bad)?);
            src += len;
            let c = self.size(out, s);
            if c < self.t + 1 || s + c > self.end {
                return Err(bad());
            }
            n.1 = c - self.t;
            cur = s + width.min(n.1);
            short |= n.1 < width;
        }
        let len = g.len() - cur;
        out[cur..].copy_from_slice(g.get(src..src + len).ok_or_else(bad)?);
        src += len;
        if short {
            nodes.sort_by_key(|x| x.1 < width);
        }
        let full = nodes.iter().take_while(|x| x.1 >= width).count();
        let rest = &nodes[full..];
        let cols: usize = width * full + rest.iter().map(|&(_, len)| width.min(len)).sum::<usize>();
        if g.len() - src != cols {
            return Err(bad());
        }
        let cols = &g[src..src + full * width];
        rows.clear();
        rows.resize(width, 0);
        let i0 = for_each_tile(nodes, full, width, |t| {
            kernel::ungroup_tile(cols, t, &mut rows[t.k0..t.k0 + t.n], out)
        });
        for (i, &(s, _)) in nodes[..full].iter().enumerate().skip(i0) {
            for (k, p) in rows.iter_mut().enumerate() {
                *p = p.wrapping_add(cols[k * full + i]);
            }
            out[s..s + width].copy_from_slice(rows);
        }
        src += full * width;
        for (k, &p) in rows.iter().enumerate() {
            let mut prev = p;
            for &(s, len) in rest {
                if len > k {
                    prev = prev.wrapping_add(g[src]);
                    src += 1;
                    out[s + k] = prev;
                }
            }
        }
        Ok(())
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Resolved;

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
    }

    fn layout(bs: usize, a: usize) -> Layout {
        let tag = if bs / a > 1 << 15 { 4 } else { 2 };
        Layout::new(Resolved {
            block_size: bs,
            align: a,
            tag,
        })
    }

    /// A block with nodes of mixed sizes (some shorter than any width
    /// tried), random contents and some nodes freed again.
    fn block(l: &Layout, rng: &mut Rng) -> Vec<u8> {
        block_of(l, rng, 4)
    }

    /// As [`block`], with one node in `short_every` shorter than 16 bytes
    /// (0: none, so every node is at least 70 bytes long).
    fn block_of(l: &Layout, rng: &mut Rng, short_every: u64) -> Vec<u8> {
        let mut b = vec![0u8; l.block_size];
        l.format(&mut b);
        let mut live = Vec::new();
        for _ in 0..400 {
            let size = if short_every > 0 && rng.next().is_multiple_of(short_every) {
                (rng.next() % 16) as usize
            } else {
                70 + (rng.next() % 60) as usize
            };
            let Some(s) = l.alloc(&mut b, size) else {
                break;
            };
            for x in &mut b[s..s + size] {
                *x = rng.next() as u8;
            }
            live.push(s);
            if rng.next().is_multiple_of(5) {
                let i = (rng.next() as usize) % live.len();
                l.free(&mut b, live.swap_remove(i));
            }
        }
        l.check(&b).unwrap();
        b
    }

    /// The grouped image as the module documentation defines it, one byte
    /// at a time.
    fn reference_group(l: &Layout, b: &[u8], width: usize) -> Vec<u8> {
        let mut nodes = Vec::new();
        l.used_starts(b, |s| nodes.push((s, l.size(b, s) - l.t)));
        let mut out = Vec::new();
        let mut cur = 0;
        for &(s, len) in &nodes {
            out.extend_from_slice(&b[cur..s]);
            cur = s + width.min(len);
        }
        out.extend_from_slice(&b[cur..]);
        let mut order: Vec<(usize, usize)> =
            nodes.iter().filter(|n| n.1 >= width).copied().collect();
        order.extend(nodes.iter().filter(|n| n.1 < width));
        let full = nodes.iter().filter(|n| n.1 >= width).count();
        let mut prev = vec![0u8; width];
        for (k, p) in prev.iter_mut().enumerate() {
            for &(s, _) in &order[..full] {
                out.push(b[s + k].wrapping_sub(*p));
                *p = b[s + k];
            }
        }
        for (k, p) in prev.iter_mut().enumerate() {
            for &(s, len) in &order[full..] {
                if len > k {
                    out.push(b[s + k].wrapping_sub(*p));
                    *p = b[s + k];
                }
            }
        }
        out
    }

    #[test]
    fn grouping_matches_the_definition() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let (mut g, mut out, mut nodes, mut rows) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (bs, a) in [(1024, 1), (4096, 8), (32 * 1024, 8), (70_000, 16)] {
            let l = layout(bs, a);
            for short_every in [0, 3, 4] {
                for width in [0, 1, 7, 8, 9, 16, 74, 75, 200] {
                    let b = block_of(&l, &mut rng, short_every);
                    l.group(&b, width, &mut g, &mut nodes, &mut rows);
                    assert!(
                        g == reference_group(&l, &b, width),
                        "block {bs}/{a}, width {width}, short {short_every}"
                    );
                    l.ungroup(&g, width, &mut out, &mut nodes, &mut rows)
                        .unwrap();
                    assert!(out == b, "block {bs}/{a}, width {width}");
                }
            }
        }
    }

    #[test]
    fn group_then_ungroup_restores_the_block() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let (mut g, mut out, mut nodes, mut rows) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (bs, a) in [
            (1024, 1),
            (4096, 8),
            (32 * 1024, 8),
            (70_000, 16),
            (300_000, 8),
        ] {
            let l = layout(bs, a);
            for width in [0, 1, 7, 8, 74, 200, 4096] {
                let b = block(&l, &mut rng);
                l.group(&b, width, &mut g, &mut nodes, &mut rows);
                assert_eq!(g.len(), b.len());
                l.ungroup(&g, width, &mut out, &mut nodes, &mut rows)
                    .unwrap();
                assert!(out == b, "block {bs}/{a}, width {width}");
            }
        }
    }

    #[test]
    fn damaged_grouped_images_give_errors_not_panics() {
        let mut rng = Rng(12345);
        let l = layout(4096, 8);
        let (mut g, mut out, mut nodes, mut rows) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let b = block(&l, &mut rng);
        l.group(&b, 74, &mut g, &mut nodes, &mut rows);
        // Wrong length.
        assert!(l
            .ungroup(&g[..g.len() - 1], 74, &mut out, &mut nodes, &mut rows)
            .is_err());
        // Flipped bytes anywhere, and pure noise: never a panic.
        for i in 0..2000 {
            let mut d = g.clone();
            let at = (rng.next() as usize) % d.len();
            d[at] ^= 1 << (i % 8);
            let _ = l.ungroup(&d, 74, &mut out, &mut nodes, &mut rows);
            let noise: Vec<u8> = (0..g.len()).map(|_| rng.next() as u8).collect();
            let _ = l.ungroup(&noise, 74, &mut out, &mut nodes, &mut rows);
        }
    }

    /// The SSE2 kernels against the byte-by-byte ones, on random tiles of
    /// every column count (the scalar ones are the reference elsewhere).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn sse2_tiles_match_scalar_tiles() {
        let mut rng = Rng(0x0123_4567_89ab_cdef);
        let b: Vec<u8> = (0..4096).map(|_| rng.next() as u8).collect();
        for n in 1..=8 {
            for _ in 0..50 {
                let stride = TILE + (rng.next() % 20) as usize;
                let i0 = (rng.next() as usize) % (stride - TILE + 1);
                let k0 = 8 * (rng.next() % 3) as usize;
                // Starts anywhere, the last ones close to the end so that
                // partial words are read and written byte by byte there.
                let st = std::array::from_fn(|j| {
                    if j >= 14 {
                        b.len() - k0 - n - j + 14
                    } else {
                        (rng.next() as usize) % (b.len() - 64)
                    }
                });
                let t = Tile {
                    st,
                    k0,
                    n,
                    i0,
                    stride,
                };
                let prev: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
                let (mut p1, mut p2) = (prev.clone(), prev.clone());
                let mut c1 = vec![0u8; (k0 + 8) * stride];
                let mut c2 = c1.clone();
                scalar::group_tile(&b, &t, &mut p1, &mut c1);
                sse2::group_tile(&b, &t, &mut p2, &mut c2);
                assert_eq!((&p1, &c1), (&p2, &c2), "group, {n} columns");
                let (mut q1, mut q2) = (prev.clone(), prev.clone());
                let mut o1 = b.clone();
                let mut o2 = b.clone();
                scalar::ungroup_tile(&c1, &t, &mut q1, &mut o1);
                sse2::ungroup_tile(&c1, &t, &mut q2, &mut o2);
                assert_eq!(q1, q2, "ungroup, {n} columns");
                assert!(o1 == o2, "ungroup, {n} columns");
            }
        }
    }
}
