//! Byte blocks by size class.

use std::collections::BTreeMap;
use std::ops::{Deref, DerefMut};
use std::sync::Mutex;

use super::registry::{lock, pooling_enabled, Counters, FreeList, PoolKind};

/// Smallest block class.
const MIN_CLASS: usize = 64;
/// Up to this size classes are powers of two; above it, four per power of
/// two.
const POW2_UP_TO: usize = 4096;

/// The size class serving a request of `len` bytes: a power of two up to
/// 4096 bytes, then four classes between consecutive powers of two, so a
/// block wastes at most a quarter of its size.
pub(crate) fn class_of(len: usize) -> usize {
    if len <= MIN_CLASS {
        return MIN_CLASS;
    }
    if len <= POW2_UP_TO {
        return len.next_power_of_two();
    }
    let step = len.next_power_of_two() / 8;
    len.div_ceil(step) * step
}

/// The largest class a block of `cap` bytes can serve, if any.
pub(crate) fn floor_class(cap: usize) -> Option<usize> {
    if cap < MIN_CLASS {
        return None;
    }
    let p = 1usize << (usize::BITS - 1 - cap.leading_zeros());
    if cap <= POW2_UP_TO {
        return Some(p);
    }
    let step = p / 4;
    Some(p + (cap - p) / step * step)
}

/// A named free list of byte blocks, kept by size class.
///
/// ```
/// use arca::pool::BlockList;
/// static BUFS: BlockList = BlockList::new("doc blocks");
/// let mut b = BUFS.take_empty(100);
/// b.extend_from_slice(b"hello");
/// assert_eq!(&b[..], b"hello");
/// assert!(b.capacity() >= 100);
/// ```
pub struct BlockList {
    name: &'static str,
    counters: Counters,
    free: Mutex<BTreeMap<usize, Vec<Vec<u8>>>>,
}

impl BlockList {
    /// A new, empty list; it joins the registry on first use.
    ///
    /// ```
    /// static L: arca::pool::BlockList = arca::pool::BlockList::new("doc new");
    /// ```
    pub const fn new(name: &'static str) -> Self {
        BlockList {
            name,
            counters: Counters::new(),
            free: Mutex::new(BTreeMap::new()),
        }
    }

    fn pop(&'static self, len: usize) -> (Vec<u8>, bool) {
        self.counters.register(self);
        let class = class_of(len);
        let got = if pooling_enabled() {
            // The request's class, or failing that a block up to twice as
            // big: buffers that grew past their class still get reused,
            // and a large block never serves a tiny request.
            lock(&self.free)
                .range_mut(class..=class.saturating_mul(2))
                .find_map(|(_, v)| v.pop())
        } else {
            None
        };
        match got {
            Some(b) => {
                self.counters.handed_out(true, b.capacity());
                (b, true)
            }
            None => {
                self.counters.handed_out(false, 0);
                (Vec::new(), false)
            }
        }
    }

    /// A block of exactly `len` bytes, all zero.
    ///
    /// ```
    /// static L: arca::pool::BlockList = arca::pool::BlockList::new("doc zeroed");
    /// let b = L.take_zeroed(10);
    /// assert_eq!(&b[..], &[0; 10]);
    /// ```
    pub fn take_zeroed(&'static self, len: usize) -> PooledBuf {
        let (mut buf, hit) = self.pop(len);
        if hit {
            buf.clear();
            buf.resize(len, 0);
        } else if pooling_enabled() {
            buf = Vec::with_capacity(class_of(len));
            buf.resize(len, 0);
        } else {
            // Pooling off: exactly what plain code would allocate.
            buf = vec![0; len];
        }
        PooledBuf {
            buf,
            list: Some(self),
        }
    }

    /// An empty block with room for at least `cap` bytes; its previous
    /// contents are not visible (the length is 0).
    ///
    /// ```
    /// static L: arca::pool::BlockList = arca::pool::BlockList::new("doc empty");
    /// let b = L.take_empty(10);
    /// assert!(b.is_empty() && b.capacity() >= 10);
    /// ```
    pub fn take_empty(&'static self, cap: usize) -> PooledBuf {
        let (mut buf, hit) = self.pop(cap);
        if hit {
            buf.clear();
        } else if pooling_enabled() {
            buf = Vec::with_capacity(class_of(cap));
        } else {
            buf = Vec::with_capacity(cap);
        }
        PooledBuf {
            buf,
            list: Some(self),
        }
    }

    /// A copy of `data` in a pooled block.
    ///
    /// ```
    /// static L: arca::pool::BlockList = arca::pool::BlockList::new("doc copy");
    /// assert_eq!(&L.take_copy(b"abc")[..], b"abc");
    /// ```
    pub fn take_copy(&'static self, data: &[u8]) -> PooledBuf {
        let mut b = self.take_empty(data.len());
        b.extend_from_slice(data);
        b
    }

    /// Put a plain vector in this list's custody: it returns to the list
    /// when the guard drops.
    ///
    /// ```
    /// static L: arca::pool::BlockList = arca::pool::BlockList::new("doc adopt");
    /// let b = L.adopt(vec![1, 2, 3]);
    /// assert_eq!(b.len(), 3);
    /// ```
    pub fn adopt(&'static self, buf: Vec<u8>) -> PooledBuf {
        self.counters.register(self);
        self.counters.adopted();
        PooledBuf {
            buf,
            list: Some(self),
        }
    }

    fn give_back(&'static self, buf: Vec<u8>) {
        let cap = buf.capacity();
        let Some(class) = floor_class(cap) else {
            self.counters.admit(0);
            return;
        };
        if self.counters.admit(cap) {
            lock(&self.free).entry(class).or_default().push(buf);
        }
    }
}

impl FreeList for BlockList {
    fn name(&self) -> &'static str {
        self.name
    }
    fn kind(&self) -> PoolKind {
        PoolKind::Block
    }
    fn counters(&self) -> &Counters {
        &self.counters
    }
    fn trim(&self, max_bytes: usize) -> usize {
        self.counters
            .trim_classes(&self.free, max_bytes, |b| b.capacity())
    }
}

/// A byte block on loan from a [`BlockList`]; derefs to `Vec<u8>` and goes
/// back to its list when dropped.
///
/// ```
/// static L: arca::pool::BlockList = arca::pool::BlockList::new("doc guard");
/// let mut b = L.take_zeroed(4);
/// b.push(9);
/// let v: Vec<u8> = b.into_vec(); // leaves the list for good
/// assert_eq!(v, [0, 0, 0, 0, 9]);
/// ```
pub struct PooledBuf {
    buf: Vec<u8>,
    list: Option<&'static BlockList>,
}

impl PooledBuf {
    /// A block that belongs to no list (dropping it just frees it).
    ///
    /// ```
    /// let b = arca::pool::PooledBuf::unpooled(vec![1]);
    /// assert_eq!(b[0], 1);
    /// ```
    pub fn unpooled(buf: Vec<u8>) -> Self {
        PooledBuf { buf, list: None }
    }

    /// Take the vector out of the list's custody.
    ///
    /// ```
    /// let v = arca::pool::PooledBuf::unpooled(vec![1]).into_vec();
    /// assert_eq!(v, [1]);
    /// ```
    pub fn into_vec(mut self) -> Vec<u8> {
        if let Some(l) = self.list.take() {
            l.counters.detached();
        }
        std::mem::take(&mut self.buf)
    }

    /// The name of the list this block returns to, if any.
    ///
    /// ```
    /// static L: arca::pool::BlockList = arca::pool::BlockList::new("doc owner");
    /// assert_eq!(L.take_zeroed(1).list_name(), Some("doc owner"));
    /// ```
    pub fn list_name(&self) -> Option<&'static str> {
        self.list.map(|l| l.name)
    }
}

impl Deref for PooledBuf {
    type Target = Vec<u8>;
    fn deref(&self) -> &Vec<u8> {
        &self.buf
    }
}

impl DerefMut for PooledBuf {
    fn deref_mut(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }
}

impl Drop for PooledBuf {
    fn drop(&mut self) {
        if let Some(l) = self.list.take() {
            l.give_back(std::mem::take(&mut self.buf));
        }
    }
}

impl std::fmt::Debug for PooledBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PooledBuf")
            .field("len", &self.buf.len())
            .field("list", &self.list_name())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_are_consistent() {
        for len in [
            1,
            63,
            64,
            65,
            511,
            512,
            513,
            4096,
            4097,
            5000,
            8192,
            8193,
            1 << 20,
            999_999,
        ] {
            let c = class_of(len);
            assert!(c >= len, "{len}");
            assert!(c - len <= c / 4 || len <= 4096, "{len} -> {c}");
            assert_eq!(floor_class(c), Some(c), "{len} -> {c}");
        }
        for c in [512, 1024, 2048, 4096] {
            assert_eq!(class_of(c), c);
        }
        assert_eq!(floor_class(63), None);
        assert_eq!(floor_class(5000), Some(4096));
        assert_eq!(floor_class(5120), Some(5120));
    }
}
