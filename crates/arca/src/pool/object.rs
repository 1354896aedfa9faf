//! Single objects of one type.

use std::ops::{Deref, DerefMut};
use std::sync::Mutex;

use super::registry::{lock, pooling_enabled, Counters, FreeList, PoolKind};

/// How a pooled object is reset between uses.
///
/// ```
/// use arca::pool::Recycle;
/// #[derive(Default)]
/// struct Scratch { items: Vec<u64> }
/// impl Recycle for Scratch {
///     fn recycle(&mut self) { self.items.clear() } // keeps the capacity
///     fn heap_bytes(&self) -> usize { self.items.capacity() * 8 }
/// }
/// ```
pub trait Recycle: Default + Send + 'static {
    /// Return to the state `Default` gives, keeping owned capacity.
    fn recycle(&mut self);
    /// Heap bytes the object owns besides itself (for the statistics and limits).
    fn heap_bytes(&self) -> usize {
        0
    }
}

/// A named free list of boxed objects of one type.
///
/// ```
/// use arca::pool::{ObjectList, Recycle};
/// #[derive(Default)]
/// struct Scratch { items: Vec<u64> }
/// impl Recycle for Scratch {
///     fn recycle(&mut self) { self.items.clear() }
/// }
/// static SCRATCH: ObjectList<Scratch> = ObjectList::new("doc scratch objects");
/// let mut s = SCRATCH.take();
/// s.items.push(1);
/// drop(s);
/// assert!(SCRATCH.take().items.is_empty());
/// ```
pub struct ObjectList<T: Recycle> {
    name: &'static str,
    counters: Counters,
    free: Mutex<Vec<Box<T>>>,
}

impl<T: Recycle> ObjectList<T> {
    /// A new, empty list; it joins the registry on first use.
    ///
    /// ```
    /// #[derive(Default)]
    /// struct S;
    /// impl arca::pool::Recycle for S { fn recycle(&mut self) {} }
    /// static L: arca::pool::ObjectList<S> = arca::pool::ObjectList::new("doc obj");
    /// ```
    pub const fn new(name: &'static str) -> Self {
        ObjectList {
            name,
            counters: Counters::new(),
            free: Mutex::new(Vec::new()),
        }
    }

    fn bytes_of(t: &T) -> usize {
        std::mem::size_of::<T>() + t.heap_bytes()
    }

    /// An object in its `Default` state.
    ///
    /// ```
    /// #[derive(Default)]
    /// struct S(u8);
    /// impl arca::pool::Recycle for S { fn recycle(&mut self) { self.0 = 0 } }
    /// static L: arca::pool::ObjectList<S> = arca::pool::ObjectList::new("doc obj take");
    /// assert_eq!(L.take().0, 0);
    /// ```
    pub fn take(&'static self) -> Pooled<T> {
        self.counters.register(self);
        let got = if pooling_enabled() {
            lock(&self.free).pop()
        } else {
            None
        };
        let obj = match got {
            Some(b) => {
                self.counters.handed_out(true, Self::bytes_of(&b));
                b
            }
            None => {
                self.counters.handed_out(false, 0);
                Box::default()
            }
        };
        Pooled {
            obj: Some(obj),
            list: self,
        }
    }

    fn give_back(&'static self, mut obj: Box<T>) {
        obj.recycle();
        if self.counters.admit(Self::bytes_of(&obj)) {
            lock(&self.free).push(obj);
        }
    }
}

impl<T: Recycle> FreeList for ObjectList<T> {
    fn name(&self) -> &'static str {
        self.name
    }
    fn kind(&self) -> PoolKind {
        PoolKind::Object
    }
    fn counters(&self) -> &Counters {
        &self.counters
    }
    fn trim(&self, max_bytes: usize) -> usize {
        let mut released = 0;
        let mut gone = Vec::new();
        {
            let mut free = lock(&self.free);
            while self.counters.held_bytes().saturating_sub(released) > max_bytes {
                let Some(o) = free.pop() else { break };
                released += Self::bytes_of(&o);
                gone.push(o);
            }
            self.counters.trimmed(gone.len(), released);
        }
        drop(gone);
        released
    }
}

/// An object on loan from an [`ObjectList`]; derefs to `T` and goes back
/// (recycled) to its list when dropped.
///
/// ```
/// #[derive(Default)]
/// struct S(Vec<u8>);
/// impl arca::pool::Recycle for S { fn recycle(&mut self) { self.0.clear() } }
/// static L: arca::pool::ObjectList<S> = arca::pool::ObjectList::new("doc pooled");
/// let mut s = L.take();
/// s.0.push(1);
/// assert_eq!(s.0, [1]);
/// ```
pub struct Pooled<T: Recycle> {
    obj: Option<Box<T>>,
    list: &'static ObjectList<T>,
}

impl<T: Recycle> Deref for Pooled<T> {
    type Target = T;
    fn deref(&self) -> &T {
        // Only `drop` empties the option.
        self.obj
            .as_deref()
            .expect("pooled object present until dropped")
    }
}

impl<T: Recycle> DerefMut for Pooled<T> {
    fn deref_mut(&mut self) -> &mut T {
        self.obj
            .as_deref_mut()
            .expect("pooled object present until dropped")
    }
}

impl<T: Recycle> Drop for Pooled<T> {
    fn drop(&mut self) {
        if let Some(o) = self.obj.take() {
            self.list.give_back(o);
        }
    }
}

impl<T: Recycle + std::fmt::Debug> std::fmt::Debug for Pooled<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.obj.fmt(f)
    }
}
