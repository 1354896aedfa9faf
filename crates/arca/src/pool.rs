//! Free lists for arca's own short-lived objects.
//!
//! Reading and rewriting datasets allocates the same few kinds of object
//! over and over: metadata pages, decoded B-tree nodes, chunk buffers,
//! filter outputs, selection scratch. Each kind gets a named free list that
//! keeps freed objects for the next request instead of handing them back to
//! the system allocator. There are three kinds of list:
//!
//! - [`ObjectList`]: single objects of one type (`Box<T>`), reset between uses;
//! - [`ArrayList`]: vectors of one element type, fixed or variable length,
//!   kept by capacity class;
//! - [`BlockList`]: byte blocks by size class — powers of two from 64 to
//!   4096 bytes, quarter steps between powers of two above.
//!
//! The page cache's pages (64 to 4096 bytes in steps of 32) are kept by
//! exact size on a shared variant of the block list (`SharedBlockList`,
//! reported as a block list), which keeps the `Arc` around each page too.
//!
//! Lists are process-wide and thread-safe. Every list records what it holds
//! and how often it served a request ([`pool_stats`]); [`gc`] releases all
//! held memory; [`set_pool_limits`] bounds what a list, and all lists
//! together, may keep (beyond that, freed objects go back to the system
//! allocator); [`set_pooling`] turns pooling off so its effect can be
//! measured.
//!
//! ```
//! use arca::pool::BlockList;
//!
//! static SCRATCH: BlockList = BlockList::new("example scratch");
//! {
//!     let mut b = SCRATCH.take_zeroed(3000);
//!     assert_eq!(b.len(), 3000);
//!     b[0] = 7;
//! } // returned to the list here
//! let b = SCRATCH.take_zeroed(2500); // same size class: reused, and zeroed
//! assert!(b.iter().all(|&x| x == 0));
//! let s = arca::pool_stats().into_iter().find(|s| s.name == "example scratch").unwrap();
//! assert_eq!(s.in_use, 1);
//! ```

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

mod array;
mod block;
pub(crate) mod lists;
mod object;
mod shared;

pub use array::{ArrayList, PooledVec};
pub use block::{BlockList, PooledBuf};
pub use object::{ObjectList, Pooled, Recycle};
pub(crate) use shared::SharedBlockList;

/// Which of the three kinds of free list a list is.
///
/// ```
/// let kinds: Vec<_> = arca::pool_stats().iter().map(|s| s.kind).collect();
/// assert!(kinds.iter().all(|k| matches!(k,
///     arca::PoolKind::Object | arca::PoolKind::Array | arca::PoolKind::Block)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PoolKind {
    /// Single objects of one type.
    Object,
    /// Vectors of one element type.
    Array,
    /// Byte blocks by size class.
    Block,
}

/// What one free list holds and how it has served requests.
///
/// ```
/// for s in arca::pool_stats() {
///     assert!(s.held == 0 || s.held_bytes > 0, "{}", s.name);
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolStats {
    /// The list's name.
    pub name: &'static str,
    /// Its kind.
    pub kind: PoolKind,
    /// Objects kept for reuse.
    pub held: usize,
    /// Bytes of memory those objects occupy.
    pub held_bytes: usize,
    /// Objects handed out and not yet given back.
    pub in_use: usize,
    /// Requests served from the list.
    pub hits: u64,
    /// Requests that had to allocate.
    pub misses: u64,
    /// Freed objects sent back to the system allocator because pooling was
    /// off or a limit was reached.
    pub released: u64,
}

/// Upper bounds on what the free lists keep.
///
/// ```
/// let old = arca::pool_limits();
/// arca::set_pool_limits(arca::PoolLimits { per_list: 1 << 20, total: 4 << 20 });
/// assert_eq!(arca::pool_limits().per_list, 1 << 20);
/// arca::set_pool_limits(old);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolLimits {
    /// Bytes one list may hold.
    pub per_list: usize,
    /// Bytes all lists together may hold.
    pub total: usize,
}

impl Default for PoolLimits {
    fn default() -> Self {
        PoolLimits {
            per_list: DEFAULT_LIST_LIMIT,
            total: DEFAULT_TOTAL_LIMIT,
        }
    }
}

/// Default bytes one list may hold.
pub const DEFAULT_LIST_LIMIT: usize = 8 << 20;
/// Default bytes all lists together may hold.
pub const DEFAULT_TOTAL_LIMIT: usize = 32 << 20;

static ENABLED: AtomicBool = AtomicBool::new(true);
static LIST_LIMIT: AtomicUsize = AtomicUsize::new(DEFAULT_LIST_LIMIT);
static TOTAL_LIMIT: AtomicUsize = AtomicUsize::new(DEFAULT_TOTAL_LIMIT);
static TOTAL_HELD: AtomicUsize = AtomicUsize::new(0);
static REGISTRY: Mutex<Vec<&'static dyn FreeList>> = Mutex::new(Vec::new());

/// A poisoned lock only means another thread panicked while holding it; the
/// lists hold plain memory with no invariant a panic could break.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Turn pooling on or off for the whole process. Turning it off releases
/// everything the lists hold; afterwards every request allocates and every
/// freed object goes straight back to the system allocator.
///
/// ```
/// arca::set_pooling(false);
/// assert!(!arca::pooling_enabled());
/// arca::set_pooling(true);
/// ```
pub fn set_pooling(on: bool) {
    ENABLED.store(on, Ordering::SeqCst);
    if !on {
        gc();
    }
}

/// Whether pooling is on (see [`set_pooling`]).
///
/// ```
/// assert!(arca::pooling_enabled()); // on by default
/// ```
pub fn pooling_enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Release the memory held by every free list to the system allocator;
/// returns the number of bytes released. Objects in use are not affected
/// and return to their lists as usual.
///
/// ```
/// let released = arca::gc();
/// assert!(arca::pool_stats().iter().all(|s| s.held == 0));
/// # let _ = released;
/// ```
pub fn gc() -> usize {
    lists().iter().map(|l| l.trim(0)).sum()
}

/// Set the bytes a list, and all lists together, may hold; lists already
/// over the new limits are trimmed at once.
///
/// ```
/// let old = arca::pool_limits();
/// arca::set_pool_limits(arca::PoolLimits { per_list: 0, total: 0 });
/// assert!(arca::pool_stats().iter().all(|s| s.held == 0));
/// arca::set_pool_limits(old);
/// ```
pub fn set_pool_limits(limits: PoolLimits) {
    LIST_LIMIT.store(limits.per_list, Ordering::SeqCst);
    TOTAL_LIMIT.store(limits.total, Ordering::SeqCst);
    let all = lists();
    for l in &all {
        l.trim(limits.per_list);
    }
    for l in &all {
        if TOTAL_HELD.load(Ordering::SeqCst) <= limits.total {
            break;
        }
        l.trim(0);
    }
}

/// The limits in force (see [`set_pool_limits`]).
///
/// ```
/// let l = arca::pool_limits();
/// assert_eq!(l, arca::PoolLimits { per_list: l.per_list, total: l.total });
/// ```
pub fn pool_limits() -> PoolLimits {
    PoolLimits {
        per_list: LIST_LIMIT.load(Ordering::Relaxed),
        total: TOTAL_LIMIT.load(Ordering::Relaxed),
    }
}

/// Statistics of every list used so far, in the order they were first used.
///
/// ```
/// let stats = arca::pool_stats();
/// let names: std::collections::HashSet<_> = stats.iter().map(|s| s.name).collect();
/// assert_eq!(names.len(), stats.len());
/// ```
pub fn pool_stats() -> Vec<PoolStats> {
    lists()
        .iter()
        .map(|l| {
            let c = l.counters();
            PoolStats {
                name: l.name(),
                kind: l.kind(),
                held: c.held.load(Ordering::Relaxed),
                held_bytes: c.held_bytes.load(Ordering::Relaxed),
                in_use: c.in_use.load(Ordering::Relaxed),
                hits: c.hits.load(Ordering::Relaxed),
                misses: c.misses.load(Ordering::Relaxed),
                released: c.released.load(Ordering::Relaxed),
            }
        })
        .collect()
}

fn lists() -> Vec<&'static dyn FreeList> {
    lock(&REGISTRY).clone()
}

/// What the registry needs from each list.
pub(crate) trait FreeList: Sync {
    fn name(&self) -> &'static str;
    fn kind(&self) -> PoolKind;
    fn counters(&self) -> &Counters;
    /// Release held objects until at most `max_bytes` remain; returns the
    /// bytes released.
    fn trim(&self, max_bytes: usize) -> usize;
}

/// Per-list counters, shared by the three kinds.
pub(crate) struct Counters {
    held: AtomicUsize,
    held_bytes: AtomicUsize,
    in_use: AtomicUsize,
    hits: AtomicU64,
    misses: AtomicU64,
    released: AtomicU64,
    registered: AtomicBool,
}

impl Counters {
    pub(crate) const fn new() -> Self {
        Counters {
            held: AtomicUsize::new(0),
            held_bytes: AtomicUsize::new(0),
            in_use: AtomicUsize::new(0),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            released: AtomicU64::new(0),
            registered: AtomicBool::new(false),
        }
    }

    /// Add `list` to the registry on its first use.
    pub(crate) fn register(&self, list: &'static dyn FreeList) {
        if !self.registered.load(Ordering::Acquire) {
            let mut r = lock(&REGISTRY);
            if !self.registered.swap(true, Ordering::AcqRel) {
                r.push(list);
            }
        }
    }

    /// A request was served (`hit`) or allocated; the object is now in use.
    pub(crate) fn handed_out(&self, hit: bool, bytes: usize) {
        self.in_use.fetch_add(1, Ordering::Relaxed);
        if hit {
            self.hits.fetch_add(1, Ordering::Relaxed);
            self.held.fetch_sub(1, Ordering::Relaxed);
            self.held_bytes.fetch_sub(bytes, Ordering::Relaxed);
            TOTAL_HELD.fetch_sub(bytes, Ordering::Relaxed);
        } else {
            self.misses.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// An object the list did not hand out joins its custody.
    pub(crate) fn adopted(&self) {
        self.in_use.fetch_add(1, Ordering::Relaxed);
    }

    /// An object in use leaves the list's custody for good.
    pub(crate) fn detached(&self) {
        self.release_in_use();
    }

    /// One object fewer in use; saturating, so an object the list never
    /// handed out cannot wrap the count.
    fn release_in_use(&self) {
        let _ = self
            .in_use
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                Some(n.saturating_sub(1))
            });
    }

    /// An object in use comes back: whether the list may keep its `bytes`.
    /// On `true` the caller must store it; on `false` it must drop it.
    pub(crate) fn admit(&self, bytes: usize) -> bool {
        self.release_in_use();
        let keep = pooling_enabled()
            && bytes > 0
            && self.held_bytes.load(Ordering::Relaxed) + bytes
                <= LIST_LIMIT.load(Ordering::Relaxed)
            && reserve_total(bytes);
        if keep {
            self.held.fetch_add(1, Ordering::Relaxed);
            self.held_bytes.fetch_add(bytes, Ordering::Relaxed);
        } else {
            self.released.fetch_add(1, Ordering::Relaxed);
        }
        keep
    }

    /// Held objects of `bytes` were released by a trim.
    pub(crate) fn trimmed(&self, count: usize, bytes: usize) {
        self.held.fetch_sub(count, Ordering::Relaxed);
        self.held_bytes.fetch_sub(bytes, Ordering::Relaxed);
        TOTAL_HELD.fetch_sub(bytes, Ordering::Relaxed);
    }

    pub(crate) fn held_bytes(&self) -> usize {
        self.held_bytes.load(Ordering::Relaxed)
    }

    /// The trim of a list kept as size classes: release held objects,
    /// largest classes first (fewest objects for the most memory), until at
    /// most `max_bytes` remain; returns the bytes released. `bytes_of` is
    /// the size `admit` counted for an object.
    pub(crate) fn trim_classes<V>(
        &self,
        free: &Mutex<BTreeMap<usize, Vec<V>>>,
        max_bytes: usize,
        bytes_of: impl Fn(&V) -> usize,
    ) -> usize {
        let mut released = 0;
        let mut gone = Vec::new();
        {
            let mut free = lock(free);
            for (_, objs) in free.iter_mut().rev() {
                while self.held_bytes().saturating_sub(released) > max_bytes {
                    let Some(o) = objs.pop() else { break };
                    released += bytes_of(&o);
                    gone.push(o);
                }
            }
            free.retain(|_, v| !v.is_empty());
            self.trimmed(gone.len(), released);
        }
        // Freed outside the lock.
        drop(gone);
        released
    }
}

/// Count `bytes` against the total limit, or refuse without counting.
fn reserve_total(bytes: usize) -> bool {
    let before = TOTAL_HELD.fetch_add(bytes, Ordering::Relaxed);
    if before + bytes <= TOTAL_LIMIT.load(Ordering::Relaxed) {
        true
    } else {
        TOTAL_HELD.fetch_sub(bytes, Ordering::Relaxed);
        false
    }
}
