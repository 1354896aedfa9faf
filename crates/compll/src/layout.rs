//! Layout of one normal block: boundary tags, the size-ordered free list and
//! the node-start bitmap. Everything here works on a plain byte slice, so the
//! block can be compressed as it is.
//!
//! ```text
//! 0        t        2t             2t+bm            F-t   F
//! +--------+--------+---------------+----------------+-----+--------------
//! | head   | tail   | node bitmap   | zero padding   | tag | node data ...
//! +--------+--------+---------------+----------------+-----+--------------
//! ```
//!
//! `t` is the tag width (2 bytes, or 4 for blocks too large for 15-bit size
//! fields), `a` the alignment. Every node ("chunk") starts at a multiple of
//! `a`; its size `c` is the distance to the next chunk's start, so it covers
//! the node's data and the next chunk's tag. The tag in front of a chunk
//! holds `c / a` shifted left by one, with the low bit telling whether the
//! *previous* chunk is in use (as in Doug Lea's allocator): a free node can
//! then be merged backwards by reading the size copy ("footer") the previous
//! free chunk keeps in its last data bytes. The last `t` bytes before the
//! usable end `E` hold a sentinel tag of size 0.
//!
//! A free chunk holds, in its data, the offsets (in units of `a`) of the next
//! and previous free chunk of a doubly linked list ordered by size (so the
//! first fit found walking from the head is the best fit) and the footer.
//! All other free bytes are zero, which is why `alloc` returns zeroed memory
//! and why free space costs almost nothing once compressed.
//!
//! The bitmap has one bit per alignment unit, set exactly at the starts of
//! chunks in use; it lets any handle be checked in constant time.

use crate::config::Resolved;

/// Derived geometry of a normal block.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout {
    pub block_size: usize,
    pub a: usize,
    pub t: usize,
    /// Usable end: the block size rounded down to the alignment.
    pub end: usize,
    /// Offset of the first chunk's data.
    pub first: usize,
    /// Smallest chunk that can hold the free-list links and footer.
    pub min_chunk: usize,
    bitmap_at: usize,
    /// log2 of `a` (a power of two): tags, links and the bitmap convert
    /// between bytes and alignment units on every node operation, and a
    /// shift costs a cycle where a division by a run-time value costs
    /// dozens.
    sh: u32,
}

fn round_up(x: usize, a: usize) -> usize {
    x.div_ceil(a) * a
}

/// Result of checking one block, for the heap's invariant checker.
#[derive(Debug, Default)]
pub(crate) struct BlockCheck {
    pub used: u32,
    pub largest_free: usize,
}

impl Layout {
    pub fn new(r: Resolved) -> Layout {
        let a = r.align;
        debug_assert!(a.is_power_of_two(), "alignment {a}");
        let t = r.tag;
        let end = r.block_size / a * a;
        let units = end / a;
        let bitmap_at = 2 * t;
        let bitmap_len = units.div_ceil(8);
        let first = round_up(bitmap_at + bitmap_len + t, a);
        Layout {
            block_size: r.block_size,
            a,
            t,
            end,
            first,
            min_chunk: round_up(4 * t, a),
            bitmap_at,
            sh: a.trailing_zeros(),
        }
    }

    /// Largest node (usable bytes) a normal block can hold.
    pub fn max_node(&self) -> usize {
        self.end - self.first - self.t
    }

    /// Chunk size needed for a node of `size` usable bytes.
    pub fn chunk_for(&self, size: usize) -> usize {
        // `a` is a power of two (checked by the configuration).
        ((size + self.t + self.a - 1) & !(self.a - 1)).max(self.min_chunk)
    }

    // Tags and links are read and written on every node operation: kept
    // inline, as plain loads and stores of their width.
    #[inline(always)]
    fn get(&self, b: &[u8], at: usize) -> usize {
        if self.t == 2 {
            u16::from_le_bytes([b[at], b[at + 1]]) as usize
        } else {
            u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]) as usize
        }
    }

    #[inline(always)]
    fn put(&self, b: &mut [u8], at: usize, v: usize) {
        if self.t == 2 {
            b[at..at + 2].copy_from_slice(&(v as u16).to_le_bytes());
        } else {
            b[at..at + 4].copy_from_slice(&(v as u32).to_le_bytes());
        }
    }

    #[inline]
    fn zero(&self, b: &mut [u8], at: usize) {
        self.put(b, at, 0);
    }

    // Offsets in links are stored in alignment units; 0 means none (no chunk
    // starts at offset 0, the header is there).
    #[inline]
    fn link(&self, b: &[u8], at: usize) -> usize {
        self.get(b, at) << self.sh
    }
    #[inline]
    fn set_link(&self, b: &mut [u8], at: usize, off: usize) {
        self.put(b, at, off >> self.sh)
    }

    /// Chunk size of the chunk starting at `s`.
    #[inline]
    pub fn size(&self, b: &[u8], s: usize) -> usize {
        (self.get(b, s - self.t) >> 1) << self.sh
    }
    #[inline]
    fn prev_used(&self, b: &[u8], s: usize) -> bool {
        self.get(b, s - self.t) & 1 == 1
    }
    #[inline]
    fn set_tag(&self, b: &mut [u8], s: usize, size: usize, prev_used: bool) {
        self.put(b, s - self.t, ((size >> self.sh) << 1) | prev_used as usize)
    }
    #[inline]
    fn set_prev_used(&self, b: &mut [u8], s: usize, used: bool) {
        let v = self.get(b, s - self.t);
        self.put(b, s - self.t, (v & !1) | used as usize)
    }

    #[inline]
    fn bit(&self, b: &[u8], s: usize) -> bool {
        let u = s >> self.sh;
        b[self.bitmap_at + u / 8] & (1 << (u % 8)) != 0
    }
    #[inline]
    fn set_bit(&self, b: &mut [u8], s: usize, on: bool) {
        let u = s >> self.sh;
        let byte = &mut b[self.bitmap_at + u / 8];
        if on {
            *byte |= 1 << (u % 8);
        } else {
            *byte &= !(1 << (u % 8));
        }
    }

    // Free chunk fields: next link at s, prev link at s+t, footer at end-2t.
    fn next_free(&self, b: &[u8], s: usize) -> usize {
        self.link(b, s)
    }
    fn prev_free(&self, b: &[u8], s: usize) -> usize {
        self.link(b, s + self.t)
    }
    fn head(&self, b: &[u8]) -> usize {
        self.link(b, 0)
    }
    fn tail(&self, b: &[u8]) -> usize {
        self.link(b, self.t)
    }

    /// Formats `b` (already zeroed) as an empty block: one free chunk
    /// spanning everything.
    pub fn format(&self, b: &mut [u8]) {
        let s = self.first;
        let c = self.end - s;
        // Nothing precedes the first chunk, so it is treated as "in use" to
        // stop backward merges.
        self.set_tag(b, s, c, true);
        self.set_tag(b, self.end, 0, false);
        self.put(b, s + c - 2 * self.t, c >> self.sh);
        self.set_link(b, 0, s);
        self.set_link(b, self.t, s);
    }

    /// Usable bytes of the largest free chunk (0 if none).
    pub fn largest_free(&self, b: &[u8]) -> usize {
        let tail = self.tail(b);
        if tail == 0 {
            0
        } else {
            self.size(b, tail) - self.t
        }
    }

    fn rm_free(&self, b: &mut [u8], s: usize) {
        let n = self.next_free(b, s);
        let p = self.prev_free(b, s);
        if p == 0 {
            self.set_link(b, 0, n);
        } else {
            self.set_link(b, p, n);
        }
        if n == 0 {
            self.set_link(b, self.t, p);
        } else {
            self.set_link(b, n + self.t, p);
        }
        self.zero(b, s);
        self.zero(b, s + self.t);
    }

    fn add_free(&self, b: &mut [u8], s: usize, c: usize) {
        // Walk from the small end; appending at the tail is the common case
        // for a freshly merged large chunk, so check it first.
        let tail = self.tail(b);
        let next = if tail != 0 && self.size(b, tail) <= c {
            0
        } else {
            let mut cur = self.head(b);
            while cur != 0 && self.size(b, cur) < c {
                cur = self.next_free(b, cur);
            }
            cur
        };
        let prev = if next == 0 {
            tail
        } else {
            self.prev_free(b, next)
        };
        self.set_link(b, s, next);
        self.set_link(b, s + self.t, prev);
        if prev == 0 {
            self.set_link(b, 0, s);
        } else {
            self.set_link(b, prev, s);
        }
        if next == 0 {
            self.set_link(b, self.t, s);
        } else {
            self.set_link(b, next + self.t, s);
        }
        self.put(b, s + c - 2 * self.t, c >> self.sh);
    }

    /// Allocates a node of `size` usable bytes (best fit); returns its data
    /// offset, or `None` if no free chunk is large enough. The node's bytes
    /// are zero.
    pub fn alloc(&self, b: &mut [u8], size: usize) -> Option<usize> {
        let need = self.chunk_for(size);
        let mut s = self.head(b);
        while s != 0 && self.size(b, s) < need {
            s = self.next_free(b, s);
        }
        if s == 0 {
            return None;
        }
        let have = self.size(b, s);
        self.rm_free(b, s);
        self.zero(b, s + have - 2 * self.t);
        let prev_used = self.prev_used(b, s);
        if have - need >= self.min_chunk {
            let r = s + need;
            self.set_tag(b, s, need, prev_used);
            self.set_tag(b, r, have - need, true);
            self.add_free(b, r, have - need);
        } else {
            self.set_tag(b, s, have, prev_used);
            self.set_prev_used(b, s + have, true);
        }
        self.set_bit(b, s, true);
        Some(s)
    }

    /// Usable length of the node at `s` if `s` is the start of a node in
    /// use, else `None`.
    pub fn node_len(&self, b: &[u8], s: usize) -> Option<usize> {
        if s < self.first || s >= self.end || s & (self.a - 1) != 0 || !self.bit(b, s) {
            return None;
        }
        Some(self.size(b, s) - self.t)
    }

    /// Frees the node at `s` (which must have passed [`Layout::node_len`]),
    /// zeroing its bytes and merging with free neighbours on both sides.
    pub fn free(&self, b: &mut [u8], s: usize) {
        let mut s = s;
        let mut c = self.size(b, s);
        b[s..s + c - self.t].fill(0);
        self.set_bit(b, s, false);
        let prev_used = self.prev_used(b, s);
        let n = s + c;
        if n < self.end && !self.bit(b, n) {
            let cn = self.size(b, n);
            self.rm_free(b, n);
            self.zero(b, n + cn - 2 * self.t);
            self.zero(b, n - self.t);
            c += cn;
        }
        if !prev_used {
            let cp = self.get(b, s - 2 * self.t) << self.sh;
            let p = s - cp;
            self.rm_free(b, p);
            self.zero(b, s - 2 * self.t);
            self.zero(b, s - self.t);
            s = p;
            c += cp;
        }
        // A free chunk always follows a chunk in use (neighbours merge).
        self.set_tag(b, s, c, true);
        self.set_prev_used(b, s + c, false);
        self.add_free(b, s, c);
    }

    /// Frees the node at `s` (which must have passed [`Layout::node_len`])
    /// without merging it or listing it: its bytes are zeroed and its
    /// bitmap bit cleared, so its handle is refused at once, but the
    /// block's tags, free list and largest free chunk are brought up to
    /// date only by [`Layout::tidy`], once for all such frees. A block
    /// being emptied (a structure torn down) then costs a bit per node
    /// instead of a merge and a sorted insertion.
    /// Returns the freed chunk's size.
    pub fn free_lazy(&self, b: &mut [u8], s: usize) -> usize {
        let c = self.size(b, s);
        b[s..s + c - self.t].fill(0);
        self.set_bit(b, s, false);
        c
    }

    /// Rebuilds a block after [`Layout::free_lazy`] calls: neighbouring
    /// chunks not in use are merged, prev-used bits set, footers written
    /// and the free list relinked in size order (C1–C7 hold again). One
    /// pass over the chunks plus a sort of the free ones; returns the
    /// usable bytes of the largest free chunk.
    pub fn tidy(&self, b: &mut [u8]) -> usize {
        let t = self.t;
        let mut frees: Vec<(usize, usize)> = Vec::new();
        let mut s = self.first;
        let mut prev_used = true;
        while s < self.end {
            let c = self.size(b, s);
            if self.bit(b, s) {
                self.set_prev_used(b, s, prev_used);
                prev_used = true;
                s += c;
                continue;
            }
            // A run of chunks not in use: one free chunk. Their links,
            // footers and the tags inside the run are zeroed (C5).
            let start = s;
            let mut total = 0;
            while s < self.end && !self.bit(b, s) {
                let cq = self.size(b, s);
                self.zero(b, s);
                self.zero(b, s + t);
                self.zero(b, s + cq - 2 * t);
                if s != start {
                    self.zero(b, s - t);
                }
                total += cq;
                s += cq;
            }
            // The chunk before a free run is in use (or the run starts
            // the block, which counts as in use).
            self.set_tag(b, start, total, true);
            self.put(b, start + total - 2 * t, total >> self.sh);
            frees.push((total, start));
            prev_used = false;
        }
        self.set_prev_used(b, self.end, prev_used);
        frees.sort_unstable();
        let mut prev = 0;
        for (k, &(_, f)) in frees.iter().enumerate() {
            let next = frees.get(k + 1).map_or(0, |x| x.1);
            self.set_link(b, f, next);
            self.set_link(b, f + t, prev);
            prev = f;
        }
        self.set_link(b, 0, frees.first().map_or(0, |x| x.1));
        self.set_link(b, t, prev);
        self.largest_free(b)
    }

    /// Walks the whole block and checks invariants C1–C6 (see the heap
    /// module); returns a description of the first violation.
    pub fn check(&self, b: &[u8]) -> Result<BlockCheck, String> {
        let mut out = BlockCheck::default();
        if b.len() != self.block_size {
            return Err(format!("block length {} != {}", b.len(), self.block_size));
        }
        let mut frees = Vec::new();
        let mut starts = Vec::new();
        let mut s = self.first;
        let mut prev_used = true;
        let mut prev_free_chunk = false;
        while s < self.end {
            let c = self.size(b, s);
            if c < self.min_chunk || c & (self.a - 1) != 0 || s + c > self.end {
                return Err(format!("C1: chunk at {s} has bad size {c}"));
            }
            if self.prev_used(b, s) != prev_used {
                return Err(format!("C2: prev-used bit wrong at {s}"));
            }
            let used = self.bit(b, s);
            if !used {
                if prev_free_chunk {
                    return Err(format!("C3: adjacent free chunks at {s}"));
                }
                if self.get(b, s + c - 2 * self.t) * self.a != c {
                    return Err(format!("C4: footer of free chunk {s} wrong"));
                }
                let body = &b[s + 2 * self.t..s + c - 2 * self.t];
                if body.iter().any(|&x| x != 0) {
                    return Err(format!("C5: free chunk {s} not zeroed"));
                }
                frees.push((c, s));
                out.largest_free = out.largest_free.max(c - self.t);
            } else {
                out.used += 1;
            }
            starts.push(s);
            prev_used = used;
            prev_free_chunk = !used;
            s += c;
        }
        if s != self.end || self.size(b, self.end) != 0 || self.prev_used(b, self.end) != prev_used
        {
            return Err("C1: chunks do not end at the sentinel".into());
        }
        // C6: the free list holds exactly the free chunks, ordered by size,
        // with consistent back links and tail.
        let mut listed = Vec::new();
        let mut cur = self.head(b);
        let mut prev = 0;
        while cur != 0 {
            if listed.len() > frees.len() {
                return Err("C6: free list longer than the free chunks (cycle?)".into());
            }
            if self.prev_free(b, cur) != prev {
                return Err(format!("C6: back link wrong at {cur}"));
            }
            listed.push((self.size(b, cur), cur));
            prev = cur;
            cur = self.next_free(b, cur);
        }
        if self.tail(b) != prev {
            return Err("C6: tail link wrong".into());
        }
        if listed.windows(2).any(|w| w[0].0 > w[1].0) {
            return Err("C6: free list not ordered by size".into());
        }
        let mut l = listed.clone();
        l.sort_unstable_by_key(|x| x.1);
        if l != frees {
            return Err("C6: free list differs from the free chunks".into());
        }
        // C7: bitmap bits are set exactly at chunks in use.
        for u in 0..self.end / self.a {
            let off = u * self.a;
            let want = starts.binary_search(&off).is_ok() && off >= self.first && self.bit(b, off);
            if self.bit(b, off) != want {
                return Err(format!("C7: stray bitmap bit at {off}"));
            }
        }
        Ok(out)
    }

    /// Calls `f` with the start of every node in use, in address order,
    /// read from the bitmap (which lies in the header, before any node).
    pub(crate) fn used_starts(&self, b: &[u8], mut f: impl FnMut(usize)) {
        let units = self.end / self.a;
        for (i, &byte) in b[self.bitmap_at..self.bitmap_at + units.div_ceil(8)]
            .iter()
            .enumerate()
        {
            let mut m = byte;
            while m != 0 {
                let u = i * 8 + m.trailing_zeros() as usize;
                m &= m - 1;
                if u < units {
                    f(u * self.a);
                }
            }
        }
    }
}
