//! The single-threaded [`Arena`], the guards through which node bytes are
//! borrowed, and the operations both arena types share.

use std::cell::RefCell;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use crate::config::Config;
use crate::error::{Error, Result};
use crate::handle::Handle;
use crate::heap::{check_range, BlockHeap};
use crate::stats::Stats;

/// State behind either arena type.
pub(crate) struct Inner {
    pub heap: BlockHeap,
    /// Nodes with a live [`WriteGuard`], as (block, offset): such a node
    /// cannot be freed or written through a second guard, since the guard
    /// writes its copy back when dropped.
    writers: Vec<(u32, usize)>,
}

impl Inner {
    /// `Busy` while the node at `h` has a live write guard (which writes its
    /// copy back when dropped, so the node may not be freed or written).
    fn check_not_written(&self, h: Handle) -> Result<()> {
        match h.parts() {
            Some((b, off)) if self.writers.contains(&(b, off as usize)) => {
                Err(Error::Busy("node has a live write guard"))
            }
            _ => Ok(()),
        }
    }

    pub fn new(cfg: &Config) -> Result<Inner> {
        Ok(Inner {
            heap: BlockHeap::new(cfg)?,
            writers: Vec::new(),
        })
    }
}

/// Access to the shared state, with whatever locking the arena type uses.
pub(crate) trait Host {
    fn with<R>(&self, f: impl FnOnce(&mut Inner) -> Result<R>) -> Result<R>;
}

/// What a guard needs when it is dropped (object-safe so one guard type
/// serves both arenas).
pub(crate) trait Release {
    /// Drops the pin `token`, first writing `write_back` (offset, bytes)
    /// into the pinned block.
    fn release(&self, token: u64, write_back: Option<(usize, &[u8])>);
}

impl<H: Host> Release for H {
    fn release(&self, token: u64, write_back: Option<(usize, &[u8])>) {
        // A failure here (only possible if the guard is dropped inside a
        // codec callback) leaves a pin behind, which only keeps a block
        // cached; it never invalidates memory.
        let _ = self.with(|inner| {
            if let Some((off, data)) = write_back {
                if let Some((block, slot)) = inner.heap.slot_of(token) {
                    inner.heap.write_bytes(block, slot, off, off, data);
                    if let Some(p) = inner.writers.iter().position(|w| *w == (block, off)) {
                        inner.writers.swap_remove(p);
                    }
                }
            }
            inner.heap.unpin(token);
            Ok(())
        });
    }
}

/// Read access to one node; the node's block stays pinned in the cache
/// until the guard is dropped. Dereferences to the node's bytes.
///
/// The guard holds its own reference to the block image, so the bytes it
/// shows can never be released under it. If the node is changed (or
/// freed) while the guard lives, the guard keeps showing the bytes as they
/// were when it was taken.
///
/// ```
/// use compll::{Arena, Config};
/// let arena = Arena::new(Config::default()).unwrap();
/// let h = arena.alloc(4).unwrap();
/// arena.write_at(h, 0, b"abcd").unwrap();
/// let g = arena.read(h).unwrap();
/// assert_eq!(&g[..4], b"abcd");
/// ```
pub struct ReadGuard<'a> {
    host: &'a dyn Release,
    image: Arc<Vec<u8>>,
    /// Pin on the block; `None` when the bytes are a node-cache copy.
    token: Option<u64>,
    start: usize,
    len: usize,
}

impl Deref for ReadGuard<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.image[self.start..self.start + self.len]
    }
}

impl Drop for ReadGuard<'_> {
    fn drop(&mut self) {
        if let Some(t) = self.token {
            self.host.release(t, None);
        }
    }
}

impl std::fmt::Debug for ReadGuard<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadGuard").field("len", &self.len).finish()
    }
}

/// Write access to one node: a working copy of the node's bytes that is
/// written back into the (pinned) block when the guard is dropped.
///
/// While it lives, the node cannot be freed or taken by a second
/// `WriteGuard` ([`Error::Busy`]); other nodes, even in the same block, stay
/// fully usable.
///
/// ```
/// use compll::{Arena, Config};
/// let arena = Arena::new(Config::default()).unwrap();
/// let h = arena.alloc(4).unwrap();
/// {
///     let mut g = arena.write(h).unwrap();
///     g[..2].copy_from_slice(b"hi");
/// }
/// assert_eq!(&arena.read(h).unwrap()[..2], b"hi");
/// ```
pub struct WriteGuard<'a> {
    host: &'a dyn Release,
    data: Vec<u8>,
    token: u64,
    start: usize,
}

impl Deref for WriteGuard<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.data
    }
}

impl DerefMut for WriteGuard<'_> {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.data
    }
}

impl Drop for WriteGuard<'_> {
    fn drop(&mut self) {
        self.host
            .release(self.token, Some((self.start, self.data.as_slice())));
    }
}

impl std::fmt::Debug for WriteGuard<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriteGuard")
            .field("len", &self.data.len())
            .finish()
    }
}

// Operations shared by both arena types.

pub(crate) fn op_free<H: Host>(host: &H, h: Handle) -> Result<()> {
    host.with(|i| {
        i.check_not_written(h)?;
        i.heap.free(h)
    })
}

pub(crate) fn op_read_and_free<H: Host>(
    host: &H,
    h: Handle,
    offset: usize,
    out: &mut [u8],
) -> Result<()> {
    host.with(|i| {
        i.check_not_written(h)?;
        i.heap.read_and_free(h, offset, out)
    })
}

pub(crate) fn op_len<H: Host>(host: &H, h: Handle) -> Result<usize> {
    host.with(|i| i.heap.resolve(h).map(|r| r.3))
}

pub(crate) fn op_read<'a, H: Host>(host: &'a H, h: Handle) -> Result<ReadGuard<'a>> {
    let (image, start, len, token) = host.with(|i| i.heap.read_node(h))?;
    Ok(ReadGuard {
        host,
        image,
        token,
        start,
        len,
    })
}

pub(crate) fn op_write<'a, H: Host>(host: &'a H, h: Handle) -> Result<WriteGuard<'a>> {
    let (data, token, start) = host.with(|i| {
        let (b, slot, off, len) = i.heap.resolve(h)?;
        if i.writers.contains(&(b, off)) {
            return Err(Error::Busy("node already has a write guard"));
        }
        let mut data = Vec::new();
        data.try_reserve_exact(len)
            .map_err(|_| Error::OutOfMemory)?;
        data.extend_from_slice(&i.heap.bytes(slot)[off..off + len]);
        let token = i.heap.pin(slot);
        i.writers.push((b, off));
        Ok((data, token, off))
    })?;
    Ok(WriteGuard {
        host,
        data,
        token,
        start,
    })
}

pub(crate) fn op_read_at<H: Host>(
    host: &H,
    h: Handle,
    offset: usize,
    out: &mut [u8],
) -> Result<()> {
    host.with(|i| i.heap.read_into(h, offset, out))
}

pub(crate) fn op_write_at<H: Host>(host: &H, h: Handle, offset: usize, data: &[u8]) -> Result<()> {
    host.with(|i| {
        let (b, slot, off, len) = i.heap.resolve(h)?;
        check_range(offset, data.len(), len)?;
        if i.writers.contains(&(b, off)) {
            return Err(Error::Busy("node has a live write guard"));
        }
        i.heap.write_bytes(b, slot, off, off + offset, data);
        Ok(())
    })
}

/// A compressed arena for one thread.
///
/// All methods take `&self`, so nodes can be read, written, allocated and
/// freed while guards on other nodes are alive. Neither `Send` nor `Sync`;
/// see [`SharedArena`](crate::SharedArena) for a thread-safe one.
///
/// ```
/// use compll::{Arena, Config};
/// let arena = Arena::new(Config::default()).unwrap();
/// let a = arena.alloc(16).unwrap();
/// let b = arena.alloc(16).unwrap();
/// arena.write_at(a, 0, &b.to_raw().to_le_bytes()).unwrap();
/// let mut link = [0u8; 8];
/// arena.read_at(a, 0, &mut link).unwrap();
/// assert_eq!(u64::from_le_bytes(link), b.to_raw());
/// arena.free(a).unwrap();
/// assert!(arena.free(a).is_err());
/// ```
pub struct Arena {
    inner: RefCell<Inner>,
}

impl Host for Arena {
    fn with<R>(&self, f: impl FnOnce(&mut Inner) -> Result<R>) -> Result<R> {
        let mut g = self
            .inner
            .try_borrow_mut()
            .map_err(|_| Error::Busy("arena used from inside a codec callback"))?;
        f(&mut g)
    }
}

impl Arena {
    /// Creates an arena; fails with [`Error::InvalidConfig`] on out-of-range
    /// settings.
    ///
    /// ```
    /// use compll::{Arena, Config};
    /// assert!(Arena::new(Config::default()).is_ok());
    /// assert!(Arena::new(Config::default().block_size(10)).is_err());
    /// ```
    pub fn new(cfg: Config) -> Result<Arena> {
        Ok(Arena {
            inner: RefCell::new(Inner::new(&cfg)?),
        })
    }

    /// Allocates a zeroed node of at least `size` bytes. Nodes larger than
    /// [`Arena::max_block_node`] get a block of their own.
    ///
    /// ```
    /// let arena = compll::Arena::new(compll::Config::default()).unwrap();
    /// let h = arena.alloc(100).unwrap();
    /// assert!(arena.read(h).unwrap().iter().all(|&b| b == 0));
    /// ```
    pub fn alloc(&self, size: usize) -> Result<Handle> {
        self.with(|i| i.heap.alloc(size))
    }

    /// Allocates a node of at least `size` bytes whose first bytes are a
    /// copy of `init` (at most `size` of them), the rest zero: one call
    /// instead of `alloc` plus `write_at`.
    ///
    /// ```
    /// let arena = compll::Arena::new(compll::Config::default()).unwrap();
    /// let h = arena.alloc_init(8, b"name").unwrap();
    /// assert_eq!(&arena.read(h).unwrap()[..5], b"name\0");
    /// ```
    pub fn alloc_init(&self, size: usize, init: &[u8]) -> Result<Handle> {
        self.with(|i| i.heap.alloc_init(size, init))
    }

    /// Frees a node, merging its space with free neighbours.
    ///
    /// ```
    /// let arena = compll::Arena::new(compll::Config::default()).unwrap();
    /// let h = arena.alloc(10).unwrap();
    /// arena.free(h).unwrap();
    /// assert!(arena.read(h).is_err());
    /// ```
    pub fn free(&self, h: Handle) -> Result<()> {
        op_free(self, h)
    }

    /// Copies bytes `offset..offset + out.len()` of a node into `out`, then
    /// frees it, in one lookup: for tearing down linked structures, where
    /// each node's links are read just before the node goes. Nothing is
    /// freed if the range is outside the node.
    ///
    /// ```
    /// let arena = compll::Arena::new(compll::Config::default()).unwrap();
    /// let h = arena.alloc(16).unwrap();
    /// arena.write_at(h, 8, &7u64.to_le_bytes()).unwrap();
    /// let mut next = [0u8; 8];
    /// arena.read_and_free(h, 8, &mut next).unwrap();
    /// assert_eq!(u64::from_le_bytes(next), 7);
    /// assert!(arena.read(h).is_err());
    /// ```
    pub fn read_and_free(&self, h: Handle, offset: usize, out: &mut [u8]) -> Result<()> {
        op_read_and_free(self, h, offset, out)
    }

    /// Usable length of a node: the requested size rounded up to the
    /// alignment (and to the minimum node size).
    ///
    /// ```
    /// let arena = compll::Arena::new(compll::Config::default()).unwrap();
    /// let h = arena.alloc(10).unwrap();
    /// assert!(arena.len(h).unwrap() >= 10);
    /// ```
    pub fn len(&self, h: Handle) -> Result<usize> {
        op_len(self, h)
    }

    /// Borrows a node for reading.
    ///
    /// ```
    /// let arena = compll::Arena::new(compll::Config::default()).unwrap();
    /// let h = arena.alloc(3).unwrap();
    /// assert_eq!(arena.read(h).unwrap()[0], 0);
    /// ```
    pub fn read(&self, h: Handle) -> Result<ReadGuard<'_>> {
        op_read(self, h)
    }

    /// Borrows a node for writing; changes land when the guard drops.
    ///
    /// ```
    /// let arena = compll::Arena::new(compll::Config::default()).unwrap();
    /// let h = arena.alloc(3).unwrap();
    /// arena.write(h).unwrap()[0] = 7;
    /// assert_eq!(arena.read(h).unwrap()[0], 7);
    /// ```
    pub fn write(&self, h: Handle) -> Result<WriteGuard<'_>> {
        op_write(self, h)
    }

    /// Copies `out.len()` bytes starting at `offset` inside the node into
    /// `out`, without creating a guard.
    ///
    /// ```
    /// let arena = compll::Arena::new(compll::Config::default()).unwrap();
    /// let h = arena.alloc(8).unwrap();
    /// let mut b = [1u8; 4];
    /// arena.read_at(h, 4, &mut b).unwrap();
    /// assert_eq!(b, [0; 4]);
    /// assert!(arena.read_at(h, 1000, &mut b).is_err());
    /// ```
    pub fn read_at(&self, h: Handle, offset: usize, out: &mut [u8]) -> Result<()> {
        op_read_at(self, h, offset, out)
    }

    /// Copies `data` into the node at `offset`, without creating a guard.
    ///
    /// ```
    /// let arena = compll::Arena::new(compll::Config::default()).unwrap();
    /// let h = arena.alloc(8).unwrap();
    /// arena.write_at(h, 2, b"xy").unwrap();
    /// assert_eq!(&arena.read(h).unwrap()[2..4], b"xy");
    /// ```
    pub fn write_at(&self, h: Handle, offset: usize, data: &[u8]) -> Result<()> {
        op_write_at(self, h, offset, data)
    }

    /// Runs `f` on the node's bytes (through a read guard, so `f` may use
    /// the arena itself).
    ///
    /// ```
    /// let arena = compll::Arena::new(compll::Config::default()).unwrap();
    /// let h = arena.alloc(8).unwrap();
    /// assert_eq!(arena.read_with(h, |b| b.len()).unwrap(), arena.len(h).unwrap());
    /// ```
    pub fn read_with<R>(&self, h: Handle, f: impl FnOnce(&[u8]) -> R) -> Result<R> {
        let g = self.read(h)?;
        Ok(f(&g))
    }

    /// Memory and activity counters.
    ///
    /// ```
    /// let arena = compll::Arena::new(compll::Config::default()).unwrap();
    /// assert_eq!(arena.stats().live_nodes, 0);
    /// ```
    pub fn stats(&self) -> Stats {
        self.with(|i| Ok(i.heap.stats())).unwrap_or_default()
    }

    /// Effective alignment (the configured one, raised where the block size
    /// needs it).
    ///
    /// ```
    /// use compll::{Arena, Config};
    /// let a = Arena::new(Config::default().block_size(512 * 1024).alignment(1)).unwrap();
    /// assert_eq!(a.alignment(), 16);
    /// ```
    pub fn alignment(&self) -> usize {
        self.with(|i| Ok(i.heap.resolved().align)).unwrap_or(0)
    }

    /// Largest node that fits in a normal block; larger nodes get a block
    /// of their own.
    ///
    /// ```
    /// let a = compll::Arena::new(compll::Config::default()).unwrap();
    /// assert!(a.max_block_node() < 32 * 1024);
    /// ```
    pub fn max_block_node(&self) -> usize {
        self.with(|i| Ok(i.heap.max_block_node())).unwrap_or(0)
    }

    /// Compresses every dirty cached block and empties the cache (pinned
    /// blocks stay); codec contexts parked between calls (those the
    /// memory target, [`Config::target_ratio`], has no room to keep) are
    /// freed.
    ///
    /// ```
    /// let a = compll::Arena::new(compll::Config::default()).unwrap();
    /// let h = a.alloc(10).unwrap();
    /// a.flush().unwrap();
    /// assert_eq!(a.stats().compressions, 1);
    /// # let _ = h;
    /// ```
    pub fn flush(&self) -> Result<()> {
        self.with(|i| i.heap.flush())
    }

    /// Waits until the background thread has done what it was given:
    /// every block waiting for compression is stored and its image freed,
    /// and images decompressed ahead of reads are dropped. Unlike
    /// [`Arena::flush`] the cache stays as it is. Without a background
    /// thread there is nothing to wait for. Codec contexts parked between
    /// calls (those the memory target, [`Config::target_ratio`], has no
    /// room to keep) are freed. For an arena at rest after a burst of
    /// work (its memory as it will stay).
    ///
    /// ```
    /// use compll::{Arena, Config};
    /// let a = Arena::new(Config::default().uncompressed_blocks(1).background_compression(4)).unwrap();
    /// for _ in 0..8 {
    ///     a.alloc(20_000).unwrap();
    /// }
    /// a.settle();
    /// // One cached block, the other seven stored.
    /// assert_eq!(a.stats().uncompressed_bytes, 32 * 1024);
    /// ```
    pub fn settle(&self) {
        let _ = self.with(|i| {
            i.heap.settle();
            Ok(())
        });
    }

    /// Uncompressed copies of every block in use, in block order: cached
    /// blocks as they are, the others unpacked from their stored form.
    /// Nothing in the arena changes (no cache movement, no statistics).
    ///
    /// With [`Arena::compress_image`] and [`Arena::decompress_image`] this
    /// measures what the codec (and field grouping) alone costs on exactly
    /// the bytes the arena holds, e.g. the least time any workload that
    /// compresses every block once must spend. Costs one block
    /// decompression per uncached block and a copy of every block.
    ///
    /// ```
    /// use compll::{Arena, Codec, Config};
    /// use std::time::Instant;
    /// let arena = Arena::new(Config::default().codec(Codec::Zstd { level: 1 })).unwrap();
    /// for i in 0..10_000u64 {
    ///     arena.alloc_init(24, &i.to_le_bytes()).unwrap();
    /// }
    /// let images = arena.block_images().unwrap();
    /// assert_eq!(images.len() as u64, arena.stats().blocks);
    /// let t = Instant::now();
    /// let packed: Vec<_> = images.iter().map(|i| arena.compress_image(i).unwrap()).collect();
    /// let compress_all = t.elapsed();
    /// let t = Instant::now();
    /// for (p, i) in packed.iter().zip(&images) {
    ///     assert_eq!(&arena.decompress_image(p).unwrap(), i);
    /// }
    /// let decompress_all = t.elapsed();
    /// # let _ = (compress_all, decompress_all);
    /// ```
    pub fn block_images(&self) -> Result<Vec<crate::BlockImage>> {
        self.with(|i| i.heap.block_images())
    }

    /// Compresses a block image the way evicting the block does: the node
    /// fields grouped by column (normal blocks, if
    /// [`Config::group_fields`](crate::Config::group_fields) is set), then
    /// the codec, with the arena's codec contexts and trained dictionary.
    /// A dictionary codec does not sample the image and no statistics
    /// change. An image from another arena is refused
    /// ([`Error::InvalidConfig`]).
    ///
    /// ```
    /// use compll::{Arena, Config};
    /// let a = Arena::new(Config::default()).unwrap();
    /// a.alloc(10).unwrap();
    /// a.flush().unwrap();
    /// let c = a.compress_image(&a.block_images().unwrap()[0]).unwrap();
    /// assert_eq!(c.compressed_len() as u64, a.stats().compressed_bytes);
    /// let other = Arena::new(Config::default()).unwrap();
    /// assert!(other.compress_image(&a.block_images().unwrap()[0]).is_err());
    /// ```
    pub fn compress_image(&self, image: &crate::BlockImage) -> Result<crate::CompressedImage> {
        self.with(|i| i.heap.compress_image(image, false))
    }

    /// [`Arena::compress_image`], but a block the arena held in lz4 form
    /// ([`BlockImage::is_fast`](crate::BlockImage::is_fast), the memory
    /// target's choice) is stored with lz4 again: what storing the blocks
    /// costs with the codecs the arena chose.
    ///
    /// ```
    /// use compll::{Arena, Config};
    /// let a = Arena::new(Config::default()).unwrap();
    /// a.alloc(10).unwrap();
    /// let img = &a.block_images().unwrap()[0];
    /// let c = a.compress_image_as_stored(img).unwrap();
    /// assert_eq!(&a.decompress_image(&c).unwrap(), img);
    /// ```
    pub fn compress_image_as_stored(
        &self,
        image: &crate::BlockImage,
    ) -> Result<crate::CompressedImage> {
        self.with(|i| i.heap.compress_image(image, image.fast))
    }

    /// Rebuilds a block image from [`Arena::compress_image`]'s output the
    /// way loading the block does (codec, then the grouped fields put
    /// back). An image from another arena is refused
    /// ([`Error::InvalidConfig`]).
    ///
    /// ```
    /// use compll::{Arena, Config};
    /// let a = Arena::new(Config::default().group_fields(8)).unwrap();
    /// a.alloc_init(16, b"fields..").unwrap();
    /// let img = &a.block_images().unwrap()[0];
    /// let back = a.decompress_image(&a.compress_image(img).unwrap()).unwrap();
    /// assert_eq!(&back, img);
    /// ```
    pub fn decompress_image(&self, image: &crate::CompressedImage) -> Result<crate::BlockImage> {
        self.with(|i| i.heap.decompress_image(image))
    }

    /// Size of the dictionary trained by [`Codec::ZstdDict`](crate::Codec),
    /// once trained.
    ///
    /// ```
    /// let a = compll::Arena::new(compll::Config::default()).unwrap();
    /// assert_eq!(a.dictionary_len(), None);
    /// ```
    pub fn dictionary_len(&self) -> Option<usize> {
        self.with(|i| Ok(i.heap.dict_len())).ok().flatten()
    }

    /// Checks the heap's invariants (see the `heap` module documentation:
    /// C1–C7 per block, H1–H11 across blocks). Slow; meant for tests.
    ///
    /// ```
    /// let a = compll::Arena::new(compll::Config::default()).unwrap();
    /// a.alloc(5).unwrap();
    /// a.check_invariants().unwrap();
    /// ```
    pub fn check_invariants(&self) -> std::result::Result<(), String> {
        self.with(|i| Ok(i.heap.check_invariants()))
            .unwrap_or_else(|e| Err(e.to_string()))
    }
}
