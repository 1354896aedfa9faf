//! Vectors of one element type, kept by capacity class.

use std::collections::BTreeMap;
use std::ops::{Deref, DerefMut};
use std::sync::Mutex;

use super::registry::{lock, pooling_enabled, Counters, FreeList, PoolKind};

/// Capacity class (in elements) for a request of `n`.
fn class_of(n: usize) -> usize {
    n.max(4).next_power_of_two()
}

/// Largest class a vector of capacity `cap` can serve.
fn floor_class(cap: usize) -> Option<usize> {
    if cap < 4 {
        return None;
    }
    Some(1usize << (usize::BITS - 1 - cap.leading_zeros()))
}

/// A named free list of `Vec<T>`, for arrays of fixed or varying length.
///
/// ```
/// use arca::pool::ArrayList;
/// static OFFSETS: ArrayList<u32> = ArrayList::new("doc offsets");
/// let mut v = OFFSETS.take(10);
/// v.extend([1, 2, 3]);
/// assert_eq!(&v[..], &[1, 2, 3]);
/// drop(v);
/// assert!(OFFSETS.take(8).is_empty()); // reused vectors come back empty
/// ```
pub struct ArrayList<T: Send + 'static> {
    name: &'static str,
    counters: Counters,
    free: Mutex<BTreeMap<usize, Vec<Vec<T>>>>,
}

impl<T: Send + 'static> ArrayList<T> {
    /// A new, empty list; it joins the registry on first use.
    ///
    /// ```
    /// static L: arca::pool::ArrayList<u64> = arca::pool::ArrayList::new("doc arr");
    /// ```
    pub const fn new(name: &'static str) -> Self {
        ArrayList {
            name,
            counters: Counters::new(),
            free: Mutex::new(BTreeMap::new()),
        }
    }

    /// An empty vector with room for at least `cap` elements.
    ///
    /// ```
    /// static L: arca::pool::ArrayList<u64> = arca::pool::ArrayList::new("doc take");
    /// assert!(L.take(5).capacity() >= 5);
    /// ```
    pub fn take(&'static self, cap: usize) -> PooledVec<T> {
        self.counters.register(self);
        let class = class_of(cap);
        let got = if pooling_enabled() {
            lock(&self.free).get_mut(&class).and_then(|v| v.pop())
        } else {
            None
        };
        let vec = match got {
            Some(v) => {
                self.counters
                    .handed_out(true, v.capacity() * std::mem::size_of::<T>());
                v
            }
            None => {
                self.counters.handed_out(false, 0);
                if pooling_enabled() {
                    Vec::with_capacity(class)
                } else {
                    Vec::with_capacity(cap)
                }
            }
        };
        PooledVec {
            vec,
            list: Some(self),
        }
    }

    /// A vector of `n` copies of `value`.
    ///
    /// ```
    /// static L: arca::pool::ArrayList<u64> = arca::pool::ArrayList::new("doc filled");
    /// assert_eq!(&L.take_filled(3, 7)[..], &[7, 7, 7]);
    /// ```
    pub fn take_filled(&'static self, n: usize, value: T) -> PooledVec<T>
    where
        T: Clone,
    {
        let mut v = self.take(n);
        v.resize(n, value);
        v
    }

    /// A copy of `items` in a pooled vector.
    ///
    /// ```
    /// static L: arca::pool::ArrayList<u64> = arca::pool::ArrayList::new("doc copy");
    /// assert_eq!(&L.take_copy(&[1, 2])[..], &[1, 2]);
    /// ```
    pub fn take_copy(&'static self, items: &[T]) -> PooledVec<T>
    where
        T: Clone,
    {
        let mut v = self.take(items.len());
        v.extend_from_slice(items);
        v
    }

    fn give_back(&'static self, mut vec: Vec<T>) {
        vec.clear();
        let cap = vec.capacity();
        let bytes = cap * std::mem::size_of::<T>();
        let Some(class) = floor_class(cap) else {
            self.counters.admit(0);
            return;
        };
        if self.counters.admit(bytes) {
            lock(&self.free).entry(class).or_default().push(vec);
        }
    }
}

impl<T: Send + 'static> FreeList for ArrayList<T> {
    fn name(&self) -> &'static str {
        self.name
    }
    fn kind(&self) -> PoolKind {
        PoolKind::Array
    }
    fn counters(&self) -> &Counters {
        &self.counters
    }
    fn trim(&self, max_bytes: usize) -> usize {
        self.counters.trim_classes(&self.free, max_bytes, |v| {
            v.capacity() * std::mem::size_of::<T>()
        })
    }
}

/// A vector on loan from an [`ArrayList`]; derefs to `Vec<T>` and goes back
/// (emptied) to its list when dropped.
///
/// ```
/// static L: arca::pool::ArrayList<u8> = arca::pool::ArrayList::new("doc pv");
/// let mut v = L.take(2);
/// v.push(1);
/// assert_eq!(v.len(), 1);
/// ```
pub struct PooledVec<T: Send + 'static> {
    vec: Vec<T>,
    list: Option<&'static ArrayList<T>>,
}

impl<T: Send + 'static> PooledVec<T> {
    /// Take the vector out of the list's custody.
    ///
    /// ```
    /// static L: arca::pool::ArrayList<u8> = arca::pool::ArrayList::new("doc pv into");
    /// let v: Vec<u8> = L.take_filled(2, 1).into_vec();
    /// assert_eq!(v, [1, 1]);
    /// ```
    pub fn into_vec(mut self) -> Vec<T> {
        if let Some(l) = self.list.take() {
            l.counters.detached();
        }
        std::mem::take(&mut self.vec)
    }
}

impl<T: Send + 'static> Deref for PooledVec<T> {
    type Target = Vec<T>;
    fn deref(&self) -> &Vec<T> {
        &self.vec
    }
}

impl<T: Send + 'static> DerefMut for PooledVec<T> {
    fn deref_mut(&mut self) -> &mut Vec<T> {
        &mut self.vec
    }
}

impl<T: Send + 'static> Drop for PooledVec<T> {
    fn drop(&mut self) {
        if let Some(l) = self.list.take() {
            l.give_back(std::mem::take(&mut self.vec));
        }
    }
}

impl<'a, T: Send + 'static> IntoIterator for &'a PooledVec<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.vec.iter()
    }
}

/// A clone comes from the same list as the original.
///
/// ```
/// static L: arca::pool::ArrayList<u64> = arca::pool::ArrayList::new("doc clone");
/// let a = L.take_copy(&[3, 4]);
/// let b = a.clone();
/// assert_eq!(a, b);
/// let s = arca::pool_stats().into_iter().find(|s| s.name == "doc clone").unwrap();
/// assert_eq!(s.in_use, 2);
/// ```
impl<T: Clone + Send + 'static> Clone for PooledVec<T> {
    fn clone(&self) -> Self {
        match self.list {
            Some(l) => l.take_copy(&self.vec),
            None => PooledVec {
                vec: self.vec.clone(),
                list: None,
            },
        }
    }
}

/// Compared by contents; the list they return to does not matter.
impl<T: PartialEq + Send + 'static> PartialEq for PooledVec<T> {
    fn eq(&self, other: &Self) -> bool {
        self.vec == other.vec
    }
}

impl<T: Eq + Send + 'static> Eq for PooledVec<T> {}

impl<T: Send + std::fmt::Debug + 'static> std::fmt::Debug for PooledVec<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.vec.fmt(f)
    }
}
