//! What the allocator and its free lists speak in: kinds of space, sections
//! of it, and the interface every free list implements.

/// What an extent of file space holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SpaceKind {
    /// Pages and blobs: headers, B-tree nodes, large attribute values.
    Meta,
    /// Dataset elements: contiguous storage and chunks.
    Data,
}

impl SpaceKind {
    pub(crate) const ALL: [SpaceKind; 2] = [SpaceKind::Meta, SpaceKind::Data];

    pub(crate) fn index(self) -> usize {
        self as usize
    }

    pub(crate) fn from_u8(v: u8) -> Option<SpaceKind> {
        SpaceKind::ALL.get(v as usize).copied()
    }
}

/// A section of free file space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Section {
    /// First byte.
    pub addr: u64,
    /// Length in bytes.
    pub size: u64,
    /// The kind of space it was freed as.
    pub kind: SpaceKind,
}

impl Section {
    pub(crate) fn end(&self) -> u64 {
        self.addr + self.size
    }
}

/// An index of free sections; both implementations keep S2 themselves.
pub(crate) trait SectionIndex: Send {
    /// Take `size` bytes from the best-fitting section, preferring `kind`;
    /// the unused tail goes back to the list.
    fn take(&mut self, kind: SpaceKind, size: u64) -> Option<u64>;
    /// Add a section, merging with its neighbours; returns the merged section.
    fn give(&mut self, s: Section) -> Section;
    /// Remove the section starting at `addr`, if there is one.
    fn remove(&mut self, addr: u64) -> Option<Section>;
    /// The section that ends exactly at `end`, if any.
    fn ending_at(&self, end: u64) -> Option<Section>;
    /// A section overlapping `[addr, end)`, if any.
    fn overlapping(&self, addr: u64, end: u64) -> Option<Section>;
    /// Every section in address order.
    fn sections(&self) -> Vec<Section>;
    /// Check the index's own invariants (tests and `paranoid` builds).
    #[cfg(any(test, feature = "paranoid"))]
    fn check(&self) -> Result<(), String> {
        Ok(())
    }
}
