//! 64-bit node handles: block index and byte offset packed into one integer.

/// Bits used for the byte offset inside a block (16 MiB maximum block size).
pub(crate) const OFFSET_BITS: u32 = 24;
const OFFSET_MASK: u64 = (1 << OFFSET_BITS) - 1;
/// Largest block index a handle can carry (40 bits).
pub(crate) const MAX_BLOCKS: u64 = (1 << 40) - 1;

/// Identifies one node in an arena.
///
/// Layout: bits 0–23 hold the byte offset of the node's data inside its
/// block, bits 24–63 hold the block index plus one, so the raw value 0 never
/// names a node (the C API uses 0 for "no node").
///
/// ```
/// use compll::{Arena, Config};
/// let arena = Arena::new(Config::default()).unwrap();
/// let h = arena.alloc(10).unwrap();
/// let raw = h.to_raw();
/// assert_ne!(raw, 0);
/// assert_eq!(compll::Handle::from_raw(raw), h);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Handle(u64);

impl Handle {
    /// The "no node" value; every operation on it fails with
    /// [`Error::InvalidHandle`](crate::Error::InvalidHandle).
    ///
    /// ```
    /// assert_eq!(compll::Handle::NULL.to_raw(), 0);
    /// ```
    pub const NULL: Handle = Handle(0);

    pub(crate) fn new(block: u32, offset: u32) -> Handle {
        Handle(((block as u64 + 1) << OFFSET_BITS) | offset as u64)
    }

    /// Rebuilds a handle from [`Handle::to_raw`]. Any value is accepted;
    /// a value that does not name a live node is rejected when used.
    ///
    /// ```
    /// let h = compll::Handle::from_raw(7);
    /// assert_eq!(h.to_raw(), 7);
    /// ```
    pub const fn from_raw(raw: u64) -> Handle {
        Handle(raw)
    }

    /// The handle as a plain integer, e.g. to store inside another node.
    ///
    /// ```
    /// assert_eq!(compll::Handle::NULL.to_raw(), 0);
    /// ```
    pub const fn to_raw(self) -> u64 {
        self.0
    }

    /// True for [`Handle::NULL`].
    ///
    /// ```
    /// assert!(compll::Handle::NULL.is_null());
    /// ```
    pub const fn is_null(self) -> bool {
        self.0 == 0
    }

    /// Block index and byte offset, or `None` if the block part is zero or
    /// out of range.
    pub(crate) fn parts(self) -> Option<(u32, u32)> {
        let b = self.0 >> OFFSET_BITS;
        if b == 0 || b - 1 > u32::MAX as u64 {
            return None;
        }
        Some(((b - 1) as u32, (self.0 & OFFSET_MASK) as u32))
    }
}
