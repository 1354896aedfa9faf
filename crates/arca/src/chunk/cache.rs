//! The per-dataset chunk cache: decoded chunks by grid coordinates, their
//! bytes counted against a capacity, evicted least recently used first.
//! Finding, using, adding and evicting a chunk each cost O(1): the chunks
//! sit in a slab threaded on a doubly linked list in order of use, and a
//! hash map finds a chunk's slot by its coordinates.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use crate::pool::PooledBuf;

/// Hashes chunk coordinates: a fast hash with a per-process seed. The
/// default SipHash was a tenth of a read that misses the cache.
type Hashing = foldhash::fast::RandomState;

/// Dimensions whose coordinates a key holds inline.
const INLINE: usize = 4;

/// A chunk's coordinates as a cache key: inline up to [`INLINE`]
/// dimensions, so caching a chunk allocates nothing for its key.
#[derive(Clone, Debug)]
pub(crate) enum Key {
    Inline(u8, [u64; INLINE]),
    Heap(Box<[u64]>),
}

impl Key {
    fn new(coords: &[u64]) -> Key {
        if coords.len() <= INLINE {
            let mut a = [0; INLINE];
            a[..coords.len()].copy_from_slice(coords);
            Key::Inline(coords.len() as u8, a)
        } else {
            Key::Heap(coords.into())
        }
    }
}

impl std::ops::Deref for Key {
    type Target = [u64];
    fn deref(&self) -> &[u64] {
        match self {
            Key::Inline(n, a) => &a[..*n as usize],
            Key::Heap(b) => b,
        }
    }
}

impl Borrow<[u64]> for Key {
    fn borrow(&self) -> &[u64] {
        self
    }
}

// Hashed and compared as the slice it holds, as `Borrow` requires.
impl Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (**self).hash(state);
    }
}

impl PartialEq for Key {
    fn eq(&self, other: &Key) -> bool {
        **self == **other
    }
}

impl Eq for Key {}

/// No slot: the end of the list.
const NIL: usize = usize::MAX;

/// One decoded chunk in the cache.
pub(crate) struct Cached {
    pub(crate) data: PooledBuf,
    /// Changed since read or last stored.
    pub(crate) dirty: bool,
    /// The transaction that last appended to it in place (0: none).
    pub(crate) placed: u64,
}

struct Slot {
    key: Key,
    val: Option<Cached>,
    /// Towards the most recently used.
    prev: usize,
    /// Towards the least recently used.
    next: usize,
}

/// Decoded chunks of one dataset, least recently used evicted first.
pub(crate) struct Cache {
    index: HashMap<Key, usize, Hashing>,
    slots: Vec<Slot>,
    free: Vec<usize>,
    /// Most recently used slot.
    head: usize,
    /// Least recently used slot.
    tail: usize,
    /// Bytes of decoded chunks held.
    pub(crate) bytes: usize,
    /// Bytes the cache may hold.
    pub(crate) capacity: usize,
}

impl Cache {
    pub(crate) fn new(capacity: usize) -> Self {
        Cache {
            index: HashMap::default(),
            slots: Vec::new(),
            free: Vec::new(),
            head: NIL,
            tail: NIL,
            bytes: 0,
            capacity,
        }
    }

    /// Whether any cached chunk is dirty.
    pub(crate) fn is_dirty(&self) -> bool {
        self.slots
            .iter()
            .any(|s| s.val.as_ref().is_some_and(|c| c.dirty))
    }

    /// Whether the chunk at `coords` is cached.
    pub(crate) fn contains(&self, coords: &[u64]) -> bool {
        self.index.contains_key(coords)
    }

    /// The chunk at `coords`, without counting a use.
    pub(crate) fn peek(&self, coords: &[u64]) -> Option<&Cached> {
        let &i = self.index.get(coords)?;
        self.slots[i].val.as_ref()
    }

    /// The chunk at `coords`, without counting a use.
    pub(crate) fn peek_mut(&mut self, coords: &[u64]) -> Option<&mut Cached> {
        let &i = self.index.get(coords)?;
        self.slots[i].val.as_mut()
    }

    /// The chunk at `coords`, now the most recently used.
    pub(crate) fn touch(&mut self, coords: &[u64]) -> Option<&mut Cached> {
        let &i = self.index.get(coords)?;
        self.unlink(i);
        self.push_front(i);
        self.slots[i].val.as_mut()
    }

    /// Cache `c` at `coords` as the most recently used; returns the chunk
    /// it replaces. Bytes are counted; eviction is the caller's.
    pub(crate) fn insert(&mut self, coords: &[u64], c: Cached) -> Option<Cached> {
        self.bytes += c.data.len();
        if let Some(&i) = self.index.get(coords) {
            self.unlink(i);
            self.push_front(i);
            let old = self.slots[i].val.replace(c);
            if let Some(o) = &old {
                self.bytes -= o.data.len();
            }
            return old;
        }
        let key = Key::new(coords);
        let slot = Slot {
            key: key.clone(),
            val: Some(c),
            prev: NIL,
            next: NIL,
        };
        let i = match self.free.pop() {
            Some(i) => {
                self.slots[i] = slot;
                i
            }
            None => {
                self.slots.push(slot);
                self.slots.len() - 1
            }
        };
        self.index.insert(key, i);
        self.push_front(i);
        None
    }

    /// Drop the chunk at `coords` from the cache and return it.
    pub(crate) fn remove(&mut self, coords: &[u64]) -> Option<Cached> {
        let i = self.index.remove(coords)?;
        self.release(i).1
    }

    /// Drop the least recently used chunk and return it with its
    /// coordinates.
    pub(crate) fn pop_lru(&mut self) -> Option<(Key, Cached)> {
        if self.tail == NIL {
            return None;
        }
        let i = self.tail;
        let (key, c) = self.release(i);
        self.index.remove(&*key);
        c.map(|c| (key, c))
    }

    /// Every cached chunk, with its coordinates, in no particular order.
    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = (&[u64], &mut Cached)> {
        self.slots
            .iter_mut()
            .filter_map(|s| s.val.as_mut().map(|c| (&*s.key, c)))
    }

    /// Free slot `i` (already gone from the index), uncounting its bytes.
    fn release(&mut self, i: usize) -> (Key, Option<Cached>) {
        self.unlink(i);
        let s = &mut self.slots[i];
        let key = std::mem::replace(&mut s.key, Key::Inline(0, [0; INLINE]));
        let c = s.val.take();
        if let Some(c) = &c {
            self.bytes -= c.data.len();
        }
        self.free.push(i);
        (key, c)
    }

    fn unlink(&mut self, i: usize) {
        let (p, n) = (self.slots[i].prev, self.slots[i].next);
        if p == NIL {
            self.head = n;
        } else {
            self.slots[p].next = n;
        }
        if n == NIL {
            self.tail = p;
        } else {
            self.slots[n].prev = p;
        }
        self.slots[i].prev = NIL;
        self.slots[i].next = NIL;
    }

    fn push_front(&mut self, i: usize) {
        self.slots[i].prev = NIL;
        self.slots[i].next = self.head;
        if self.head != NIL {
            self.slots[self.head].prev = i;
        }
        self.head = i;
        if self.tail == NIL {
            self.tail = i;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Cache, Cached};
    use crate::pool::lists::CHUNKS;

    fn chunk(n: usize) -> Cached {
        Cached {
            data: CHUNKS.take_zeroed(n),
            dirty: false,
            placed: 0,
        }
    }

    #[test]
    fn least_recently_used_goes_first_and_bytes_add_up() {
        let mut c = Cache::new(100);
        for i in 0..4u64 {
            assert!(c.insert(&[i], chunk(10)).is_none());
        }
        assert_eq!(c.bytes, 40);
        c.touch(&[0]).unwrap();
        assert_eq!(*c.pop_lru().unwrap().0, [1]);
        assert!(c.insert(&[2], chunk(5)).is_some());
        assert_eq!(c.bytes, 25);
        assert_eq!(*c.pop_lru().unwrap().0, [3]);
        assert_eq!(*c.pop_lru().unwrap().0, [0]);
        assert!(c.remove(&[2]).is_some());
        assert!(c.pop_lru().is_none());
        assert_eq!(c.bytes, 0);
        // Freed slots are reused.
        c.insert(&[7], chunk(1));
        assert!(c.contains(&[7]) && c.peek(&[7]).is_some());
    }

    #[test]
    fn keys_of_every_rank_find_their_chunk() {
        // Held inline up to four dimensions, on the heap beyond; a key
        // never matches one of another rank with the same leading values.
        let mut c = Cache::new(1 << 20);
        let keys: Vec<Vec<u64>> = (1..9u64)
            .flat_map(|r| (0..3u64).map(move |v| (0..r).map(|d| d * 7 + v).collect()))
            .collect();
        for (i, k) in keys.iter().enumerate() {
            c.insert(k, chunk(i + 1));
        }
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(c.peek(k).map(|x| x.data.len()), Some(i + 1));
        }
        assert!(!c.contains(&[0, 7, 14, 21, 28, 35, 42, 49, 56]));
        assert!(!c.contains(&[0, 7, 14, 21, 0]) && !c.contains(&[0, 7, 14, 0]));
        assert!(c.contains(&[0, 7, 14, 21, 28, 35, 42, 49]) && c.contains(&[2, 9]));
        let mut seen: Vec<Vec<u64>> = c.iter_mut().map(|(k, _)| k.to_vec()).collect();
        seen.sort();
        let mut want = keys.clone();
        want.sort();
        assert_eq!(seen, want);
        while let Some((k, _)) = c.pop_lru() {
            assert!(!c.contains(&k));
        }
        assert_eq!(c.bytes, 0);
    }
}
