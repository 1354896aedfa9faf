//! The block heap: the table of blocks, the cache of uncompressed blocks,
//! and the index used to choose a block for a new node.
//!
//! # Block states
//!
//! ```text
//!                 new block / alloc / free / write
//!        +-----------------------------------------------+
//!        v                                               |
//!  uncompressed-dirty --evict: compress--> compressed-only --access: decompress--> uncompressed-clean
//!        ^                                      ^                                     |   |
//!        |                                      +---------evict: drop the buffer------+   |
//!        +--------------------------alloc / free / write (drop compressed copy)-----------+
//!
//!  uncompressed-dirty with no live node --evict--> vacant (index reused by the next new block)
//! ```
//!
//! A block is compressed only when it leaves the cache dirty, and its
//! compressed copy is kept while it is cached and clean, so reading never
//! costs a compression.
//!
//! # Invariants
//!
//! Per block (checked by [`Layout::check`]):
//! - **C1** chunks tile the block from the first chunk to the sentinel, each at
//!   least the minimum chunk size and a multiple of the alignment.
//! - **C2** each tag's prev-used bit matches the state of the chunk before it.
//! - **C3** no two free chunks are adjacent (frees merge both ways).
//! - **C4** every free chunk ends with a copy of its size (the footer).
//! - **C5** free chunks are zero apart from their links and footer, so new
//!   nodes are zeroed and free space compresses to almost nothing.
//! - **C6** the free list holds exactly the free chunks, ordered by size, with
//!   consistent back links and tail.
//! - **C7** bitmap bits are set exactly at the starts of chunks in use.
//!
//! Across the heap (checked by [`BlockHeap::check_invariants`]):
//! - **H1** a block that is not cached has a compressed copy or waits for
//!   the background compressor (nothing exists only in a buffer that was
//!   let go).
//! - **H2** a cached clean block's compressed copy decompresses to its buffer.
//! - **H3** slot and block table agree: `slots[i].block` names a block whose
//!   `slot` is `i`, and every cached block's slot names it back.
//! - **H4** the cache holds at most its current number of blocks (the
//!   configured one plus at most the configured growth), plus at most one
//!   extra per pinned block (the cache grows rather than failing when
//!   everything is pinned).
//! - **H5** each normal block's recorded largest free size is true, and the
//!   room index holds `(size class of largest free, block)` for exactly the
//!   normal blocks that are not cached and have a free chunk.
//! - **H6** live-node counts match the chunks in use, per block and in total.
//! - **H7** the compressed-bytes counter equals the sum of the copies' sizes.
//! - **H8** vacant blocks hold nothing and are listed for reuse exactly once.
//! - **H9** every node-cache copy names a live node and equals its bytes,
//!   and the cache stays within its byte budget.
//! - **H10** a block waiting for the background compressor is in use, not
//!   cached and not stored, waits once, its image is intact, and no more
//!   blocks wait than the queue allows.
//! - **H11** a block read ahead is in use, stored and not cached, asked for
//!   once, its image (once back) is what its stored form decompresses to,
//!   and no more blocks are read ahead than configured.
//! - **H12** the memory target's totals are true: the live block bytes and
//!   the number of blocks stored in lz4 form.
//! - **H13** a block with lazy frees waiting for its tidy is cached and
//!   dirty; tidied, it passes C1–C7 with a largest free chunk at least
//!   the recorded one (H5 holds with equality for every tidy block).

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::codec::{CodecState, Encoding};
use crate::config::{Config, Resolved};
use crate::error::{Error, Result};
use crate::handle::{Handle, MAX_BLOCKS};
use crate::image::{BlockImage, CompressedImage};
use crate::layout::Layout;
use crate::lru::Lru;
use crate::nodecache::NodeCache;
use crate::pack::Packer;
use crate::stats::Stats;
use crate::worker::Worker;

mod background;
mod budget;
mod check;
mod readahead;

use background::Pending;
use budget::Budget;
use readahead::{Ahead, Direction};

const NO_SLOT: u32 = u32::MAX;

/// Source of arena identities, so block images are only ever taken back by
/// the arena they came from.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A node's bytes for a guard: image, start, length, pin token.
pub(crate) type NodeView = (Arc<Vec<u8>>, usize, usize, Option<u64>);

/// Where a node's bytes were found for reading.
enum NodeRef {
    Copy(Arc<Vec<u8>>),
    Block { slot: usize, off: usize, len: usize },
}

/// Checks that `offset..offset + len` lies inside a node of `node_len`
/// bytes.
pub(crate) fn check_range(offset: usize, len: usize, node_len: usize) -> Result<()> {
    match offset.checked_add(len) {
        Some(end) if end <= node_len => Ok(()),
        _ => Err(Error::OutOfBounds {
            offset,
            len,
            node_len,
        }),
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Vacant,
    Normal,
    /// A node too large for a normal block, alone in a block of its length.
    Large(usize),
}

#[derive(Debug)]
struct BlockMeta {
    kind: Kind,
    comp: Option<Box<[u8]>>,
    enc: Encoding,
    slot: u32,
    largest: u32,
    live: u32,
    /// Number of this block's nodes in the node cache.
    noted: u32,
    /// Bumped whenever the block index is released, so a pin taken on the
    /// block's previous life is not released on its next one.
    gen: u32,
    /// Number of the last read that loaded the block (see `loads`).
    read_at: u32,
    /// Nodes were freed lazily ([`Layout::free_lazy`]) since the block
    /// was last tidied: its tags, free list and largest free chunk wait
    /// for [`Layout::tidy`] (H13). Only a cached block is untidy.
    untidy: bool,
    /// Chunk bytes freed lazily since the last tidy: the recorded largest
    /// free chunk plus this bounds what the tidy can leave, so an
    /// allocation can choose the block before it is tidied.
    lazy_freed: u32,
    /// Frees in this block are eager until it leaves the cache: an
    /// allocation had to tidy it, so allocations and frees alternate
    /// here and lazy frees would cost a tidy per allocation.
    eager: bool,
}

struct Slot {
    block: u32,
    buf: Arc<Vec<u8>>,
    pins: u32,
}

/// The allocator engine behind both arena types. All methods take `&mut
/// self`; the arenas add interior mutability and guards.
pub(crate) struct BlockHeap {
    /// Identity of this arena (see [`BlockImage`]).
    id: u64,
    layout: Layout,
    resolved: Resolved,
    /// Blocks the cache holds now: the configured number plus what it has
    /// grown by (see [`BlockHeap::note_reload`]).
    capacity: usize,
    /// The configured number of cached blocks.
    base_capacity: usize,
    /// How far the cache may grow past `base_capacity`.
    max_growth: usize,
    /// Recently evicted blocks, newest last: a read that has to load one of
    /// them again shows a working set larger than the cache.
    ghosts: std::collections::VecDeque<u32>,
    /// Set while a read looks its node up (reads, not writes, grow the
    /// cache).
    reading: bool,
    blocks: Vec<BlockMeta>,
    vacant: Vec<u32>,
    /// `(size class of the largest free chunk, block)` for every normal
    /// block with room. Classes are coarse (1/64 of a block) so the index
    /// changes only every few allocations, not on each one.
    room: BTreeSet<(u32, u32)>,
    granule: usize,
    /// The block the last node went into: the next one usually fits too.
    cur: u32,
    slots: Vec<Slot>,
    lru: Lru,
    spare: Vec<Vec<u8>>,
    packer: Packer,
    /// The background thread while it runs; it holds a compression
    /// context of its own (and a decompression context once it reads
    /// ahead).
    worker: Option<Worker>,
    /// The codec the background thread is started with; `None` when no
    /// thread is configured, the codec cannot be split (dictionary), or a
    /// thread was lost (then none is started again).
    background_codec: Option<crate::config::Codec>,
    /// Blocks in use from which the thread runs (0: from the first
    /// eviction); it stops below half of this.
    background_from: usize,
    /// Blocks in use (normal and large).
    in_use: usize,
    /// Times the thread was started.
    worker_starts: u64,
    /// Jobs queued for the thread that this thread claimed and did.
    taken_over: u64,
    pending: Vec<Pending>,
    max_pending: usize,
    /// Blocks being or already decompressed ahead by the background thread.
    ahead: Vec<Ahead>,
    max_ahead: usize,
    direction: Direction,
    /// Reads that loaded a block from storage so far.
    loads: u32,
    /// Loads served by a block decompressed ahead.
    ahead_hits: u64,
    next_ver: u64,
    node_cache: NodeCache,
    /// The memory target and what the codecs reach (`Config::target_ratio`).
    budget: Budget,
    /// zstd contexts parked between calls: the background thread's, and
    /// the arena's own that its target has no room to keep; trimmed by
    /// `settle` and `flush` to what the target allows at rest.
    parked: Arc<crate::codec::Spare>,
    compressed_bytes: u64,
    compressions: u64,
    decompressions: u64,
    hits: u64,
    misses: u64,
    live_nodes: u64,
}

impl BlockHeap {
    pub fn new(cfg: &Config) -> Result<BlockHeap> {
        let resolved = cfg.resolve()?;
        let mut codec = CodecState::new(&cfg.codec);
        let spare = Arc::new(crate::codec::Spare::default());
        codec.share_spare(Arc::clone(&spare));
        // The thread is started once the arena has enough blocks
        // (`ensure_worker`); it gets a context of its own, and the arena's
        // thread keeps one too, for blocks it compresses itself while the
        // thread is busy or not running.
        let background_codec = (cfg.background > 0 && codec.can_split()).then(|| cfg.codec.clone());
        Ok(BlockHeap {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            layout: Layout::new(resolved),
            resolved,
            capacity: cfg.uncompressed,
            base_capacity: cfg.uncompressed,
            max_growth: cfg.cache_growth,
            ghosts: std::collections::VecDeque::new(),
            reading: false,
            blocks: Vec::new(),
            vacant: Vec::new(),
            room: BTreeSet::new(),
            granule: (resolved.block_size / 64).max(resolved.align),
            cur: NO_SLOT,
            slots: Vec::new(),
            lru: Lru::default(),
            spare: Vec::new(),
            packer: Packer::new(codec, cfg.group_fields),
            worker: None,
            background_codec,
            background_from: cfg.background_from,
            in_use: 0,
            worker_starts: 0,
            taken_over: 0,
            pending: Vec::new(),
            max_pending: cfg.background,
            ahead: Vec::new(),
            max_ahead: cfg.readahead,
            direction: Direction::default(),
            loads: 0,
            ahead_hits: 0,
            next_ver: 0,
            node_cache: NodeCache::new(cfg.node_cache),
            budget: Budget::new(cfg.target_ratio),
            parked: spare,
            compressed_bytes: 0,
            compressions: 0,
            decompressions: 0,
            hits: 0,
            misses: 0,
            live_nodes: 0,
        })
    }

    pub fn resolved(&self) -> Resolved {
        self.resolved
    }

    pub fn max_block_node(&self) -> usize {
        self.layout.max_node()
    }

    // ---- block choice -------------------------------------------------

    fn class(&self, largest: u32) -> u32 {
        (largest as usize / self.granule) as u32
    }

    /// Records block `b`'s largest free chunk. The room index lists only
    /// blocks that are not cached (cached ones are searched directly), so
    /// the allocations and frees inside a cached block never touch it.
    fn set_largest(&mut self, b: u32, largest: usize) {
        let old = self.blocks[b as usize].largest;
        let new = largest as u32;
        self.blocks[b as usize].largest = new;
        if self.blocks[b as usize].slot != NO_SLOT {
            return;
        }
        let (oc, nc) = (self.class(old), self.class(new));
        if (old > 0) == (new > 0) && oc == nc {
            return;
        }
        if old > 0 {
            self.room.remove(&(oc, b));
        }
        if new > 0 {
            self.room.insert((nc, b));
        }
    }

    /// Picks a block with a free chunk of at least `size` usable bytes, in
    /// this order, none of which looks at every block:
    /// 1. the block the previous node went into;
    /// 2. the best fit among the cached blocks;
    /// 3. from the room index, a compressed block with a sizeable hole
    ///    (decompressing one just to fill a small remainder costs more than
    ///    starting a new block, whose zeroed tail compresses to nothing).
    ///
    /// `None` means a new block is needed.
    fn choose_block(&self, size: usize) -> Option<u32> {
        // What the block's largest free chunk may be: the recorded one, or,
        // for a cached block with lazy frees, at most that plus what was
        // freed since its tidy (the caller tidies it and chooses again if
        // the node does not fit after all).
        let room = |b: u32| {
            let m = &self.blocks[b as usize];
            m.largest as usize + m.lazy_freed as usize
        };
        let fits = |b: u32| {
            // `largest` is 0 when there is no free chunk at all, so even a
            // zero-byte node needs a positive value.
            self.blocks[b as usize].kind == Kind::Normal && room(b) >= size.max(1)
        };
        if self.cur != NO_SLOT && fits(self.cur) && self.blocks[self.cur as usize].slot != NO_SLOT {
            return Some(self.cur);
        }
        let cached = self
            .slots
            .iter()
            .map(|s| s.block)
            .filter(|&b| fits(b))
            .min_by_key(|&b| room(b));
        if cached.is_some() {
            return cached;
        }
        let worth = size.max(self.layout.block_size / 8);
        // Every block in a class above `worth`'s own has room for it.
        let class = worth.div_ceil(self.granule).min(u32::MAX as usize) as u32;
        self.room.range((class, 0)..).next().map(|&(_, b)| b)
    }

    fn new_block_index(&mut self) -> Result<u32> {
        if let Some(b) = self.vacant.pop() {
            return Ok(b);
        }
        if self.blocks.len() as u64 >= MAX_BLOCKS.min(u32::MAX as u64 - 1) {
            return Err(Error::TooManyBlocks);
        }
        if self.blocks.len() == self.blocks.capacity() {
            // Grow by a quarter, not double: the table lives as long as the
            // arena and its spare capacity is pure overhead.
            self.blocks.reserve_exact(self.blocks.len() / 4 + 16);
        }
        self.blocks.push(BlockMeta {
            kind: Kind::Vacant,
            comp: None,
            enc: Encoding::Plain,
            slot: NO_SLOT,
            largest: 0,
            live: 0,
            noted: 0,
            gen: 0,
            read_at: 0,
            untidy: false,
            lazy_freed: 0,
            eager: false,
        });
        Ok(self.blocks.len() as u32 - 1)
    }

    // ---- cache --------------------------------------------------------

    fn take_spare(&mut self) -> Vec<u8> {
        self.spare.pop().unwrap_or_default()
    }

    fn give_spare(&mut self, mut v: Vec<u8>) {
        // Keep at most one normal-sized buffer around for the next load.
        if self.spare.is_empty() && v.capacity() == self.layout.block_size {
            v.clear();
            self.spare.push(v);
        }
    }

    /// Returns a free slot index whose buffer the caller fills, evicting
    /// the least recently used unpinned block if the cache is full.
    fn get_slot(&mut self, block: u32) -> Result<usize> {
        self.drain();
        if self.slots.len() >= self.capacity {
            if let Some(v) = self.lru.victim(|i| self.slots[i].pins > 0) {
                self.evict(v)?;
                self.slots[v].block = block;
                self.lru.touch(v);
                return Ok(v);
            }
        }
        let buf = self.take_spare();
        self.slots.push(Slot {
            block,
            buf: Arc::new(buf),
            pins: 0,
        });
        self.lru.push();
        Ok(self.slots.len() - 1)
    }

    /// Compresses slot `i`'s block if dirty and detaches it from the slot;
    /// the slot keeps its (now meaningless) buffer for reuse.
    fn evict(&mut self, i: usize) -> Result<()> {
        let b = self.slots[i].block as usize;
        let m = &self.blocks[b];
        if m.kind == Kind::Normal && m.live == 0 {
            // Nothing left in it: forget the block instead of compressing.
            self.release_block(b as u32);
            return Ok(());
        }
        if self.blocks[b].untidy {
            // Stored tidy: only a cached block may wait for its tidy.
            self.tidy(b as u32, i);
        }
        if self.blocks[b].comp.is_none() {
            self.ensure_worker();
        }
        let m = &self.blocks[b];
        if m.comp.is_none() && self.worker_here() && !self.compressor_busy() {
            self.hand_over(i, b as u32);
        } else if self.blocks[b].comp.is_none() {
            let m = &self.blocks[b];
            // Both work buffers live only for this call: an arena at rest
            // holds its blocks, its cache and its tables, nothing else.
            let mut out = Vec::new();
            let normal = m.kind == Kind::Normal;
            let fast = self.store_fast(self.slots[i].buf.len());
            self.tune_contexts();
            let (enc, trained) = self.packer.pack(
                &self.layout,
                &self.slots[i].buf,
                (normal, true, fast),
                &mut out,
            );
            self.compressions += 1;
            // An exact-size copy rather than shrinking `out` in place, which
            // would leave a hole behind every stored block.
            let copy: Box<[u8]> = out.as_slice().into();
            drop(out);
            self.compressed_bytes += copy.len() as u64;
            self.note_stored(b as u32, copy.len(), enc);
            let m = &mut self.blocks[b];
            m.comp = Some(copy);
            m.enc = enc;
            if trained {
                self.recompress_plain();
            }
        }
        self.detach(b as u32);
        if self.max_growth > 0 {
            if self.ghosts.len() >= self.base_capacity + self.max_growth {
                self.ghosts.pop_front();
            }
            self.ghosts.push_back(b as u32);
        }
        Ok(())
    }

    /// A read had to load block `b`: if the block was evicted recently, the
    /// cache is smaller than what is being read, so it grows by one block
    /// (up to `max_growth` more than configured).
    fn note_reload(&mut self, b: u32) {
        if self.reading && self.capacity < self.base_capacity + self.max_growth {
            if let Some(p) = self.ghosts.iter().rposition(|&g| g == b) {
                self.ghosts.remove(p);
                self.capacity += 1;
            }
        }
    }

    /// A new block was started: the arena is being filled, not read, so a
    /// cache that grew shrinks by one block towards its configured size.
    fn note_new_block(&mut self) -> Result<()> {
        if self.capacity > self.base_capacity {
            self.capacity -= 1;
            self.trim()?;
        }
        Ok(())
    }

    /// Re-encodes every stored block that was compressed before the
    /// dictionary existed. Runs once, right after training.
    fn recompress_plain(&mut self) {
        let mut img = Vec::new();
        let mut out = Vec::new();
        for b in 0..self.blocks.len() {
            let m = &self.blocks[b];
            let Some(comp) = m.comp.as_deref() else {
                continue;
            };
            if m.enc != Encoding::Plain {
                continue;
            }
            let len = match m.kind {
                Kind::Large(n) => n,
                _ => self.layout.block_size,
            };
            // The stored form is recompressed as it is (grouped or not).
            if self
                .packer
                .codec
                .decompress(m.enc, comp, &mut img, len)
                .is_err()
            {
                continue;
            }
            self.decompressions += 1;
            let (enc, _) = self.packer.codec.compress(&img, &mut out);
            self.compressions += 1;
            if out.len() < comp.len() {
                let copy: Box<[u8]> = out.as_slice().into();
                self.compressed_bytes =
                    self.compressed_bytes - comp.len() as u64 + copy.len() as u64;
                let m = &mut self.blocks[b];
                m.comp = Some(copy);
                m.enc = enc;
            }
        }
    }

    /// Marks block `b` as no longer cached.
    fn detach(&mut self, b: u32) {
        self.blocks[b as usize].slot = NO_SLOT;
        let m = &self.blocks[b as usize];
        if m.kind == Kind::Normal && m.largest > 0 {
            self.room.insert((self.class(m.largest), b));
        }
    }

    /// Marks block `b` as cached in slot `i`.
    fn attach(&mut self, b: u32, i: usize) {
        let m = &self.blocks[b as usize];
        if m.largest > 0 {
            self.room.remove(&(self.class(m.largest), b));
        }
        let m = &mut self.blocks[b as usize];
        m.slot = i as u32;
        m.eager = false;
    }

    /// Brings cached block `b` (in slot `i`) up to date after lazy frees.
    fn tidy(&mut self, b: u32, i: usize) {
        let layout = self.layout;
        let largest = layout.tidy(self.buf_mut(i));
        let m = &mut self.blocks[b as usize];
        m.untidy = false;
        m.lazy_freed = 0;
        self.set_largest(b, largest);
    }

    fn release_block(&mut self, b: u32) {
        self.set_largest(b, 0);
        if let Some(pos) = self.pending_of(b) {
            // Skipped by the thread if it has not started on it.
            crate::worker::claim(&self.pending.swap_remove(pos).claim);
        }
        let slot = self.blocks[b as usize].slot;
        if slot != NO_SLOT {
            self.detach(b);
        }
        self.note_live(b, false);
        let m = &mut self.blocks[b as usize];
        if let Some(c) = m.comp.take() {
            self.compressed_bytes -= c.len() as u64;
            let enc = m.enc;
            self.note_unstored(enc);
        }
        let m = &mut self.blocks[b as usize];
        m.kind = Kind::Vacant;
        m.live = 0;
        m.untidy = false;
        m.lazy_freed = 0;
        m.eager = false;
        m.gen = m.gen.wrapping_add(1);
        self.vacant.push(b);
        self.maybe_stop_worker();
    }

    /// Ensures block `b` is cached and returns its slot.
    fn load(&mut self, b: u32) -> Result<usize> {
        let s = self.blocks[b as usize].slot;
        if s != NO_SLOT {
            self.hits += 1;
            self.lru.touch(s as usize);
            return Ok(s as usize);
        }
        let waiting = self.blocks[b as usize].comp.is_none();
        self.note_reload(b);
        let i = self.get_slot(b)?;
        if waiting {
            // Finding a slot may have installed the block's compression.
            if let Some(pos) = self.pending_of(b) {
                return self.take_back(b, i, pos);
            }
        }
        self.misses += 1;
        self.decompressions += 1;
        if self.take_ahead(b, i) {
            self.attach(b, i);
            self.read_ahead(b);
            return Ok(i);
        }
        let mut buf = std::mem::take(Arc::make_mut(&mut self.slots[i].buf));
        let res = self.unpack_stored(b, &mut buf);
        if let Err(e) = res {
            // Leave the slot empty and free for the next load.
            buf.clear();
            *Arc::make_mut(&mut self.slots[i].buf) = buf;
            self.slots.swap_remove(i);
            self.lru.swap_remove(i);
            self.fix_moved_slot(i);
            return Err(e);
        }
        *Arc::make_mut(&mut self.slots[i].buf) = buf;
        self.attach(b, i);
        self.read_ahead(b);
        Ok(i)
    }

    // ---- read-ahead -----------------------------------------------------

    /// Length of block `b`'s image, and whether it is a normal block (whose
    /// fields may be grouped) rather than one large node.
    fn image_shape(&self, b: u32) -> (usize, bool) {
        match self.blocks[b as usize].kind {
            Kind::Large(n) => (n, false),
            _ => (self.layout.block_size, true),
        }
    }

    /// Unpacks block `b`'s stored copy into `out`, on this thread.
    fn unpack_stored(&mut self, b: u32, out: &mut Vec<u8>) -> Result<()> {
        self.tune_contexts();
        let (len, normal) = self.image_shape(b);
        let m = &self.blocks[b as usize];
        let comp = m.comp.as_deref().unwrap_or(&[]);
        self.packer
            .unpack(&self.layout, (m.enc, comp), len, normal, out)
    }

    fn fix_moved_slot(&mut self, i: usize) {
        if i < self.slots.len() {
            let moved = self.slots[i].block;
            self.blocks[moved as usize].slot = i as u32;
        }
    }

    /// Shrinks the cache back to its configured size after pins that made
    /// it grow have been released.
    fn trim(&mut self) -> Result<()> {
        while self.slots.len() > self.capacity {
            let Some(v) = self.lru.victim(|i| self.slots[i].pins > 0) else {
                break;
            };
            self.evict(v)?;
            let slot = self.slots.swap_remove(v);
            self.lru.swap_remove(v);
            self.fix_moved_slot(v);
            if let Ok(buf) = Arc::try_unwrap(slot.buf) {
                self.give_spare(buf);
            }
        }
        Ok(())
    }

    fn mark_dirty(&mut self, b: u32) {
        if let Some(c) = self.blocks[b as usize].comp.take() {
            self.compressed_bytes -= c.len() as u64;
            self.note_unstored(self.blocks[b as usize].enc);
        }
    }

    fn buf_mut(&mut self, slot: usize) -> &mut Vec<u8> {
        // Copy-on-write: a read guard still holding the old image keeps its
        // snapshot, the block gets a fresh one.
        Arc::make_mut(&mut self.slots[slot].buf)
    }

    // ---- nodes --------------------------------------------------------

    /// Allocates a node and copies `init` (at most the node's length) to
    /// its start.
    pub fn alloc_init(&mut self, size: usize, init: &[u8]) -> Result<Handle> {
        if size > self.layout.max_node() {
            let h = self.alloc_large(size)?;
            if !init.is_empty() {
                let (b, _) = h.parts().expect("fresh handle");
                let slot = self.blocks[b as usize].slot as usize;
                let n = init.len().min(size);
                self.buf_mut(slot)[..n].copy_from_slice(&init[..n]);
            }
            return Ok(h);
        }
        self.alloc_normal(size, init)
    }

    pub fn alloc(&mut self, size: usize) -> Result<Handle> {
        if size > self.layout.max_node() {
            return self.alloc_large(size);
        }
        self.alloc_normal(size, &[])
    }

    /// A node in a normal block, its first bytes copied from `init` (at
    /// most `size` of them).
    fn alloc_normal(&mut self, size: usize, init: &[u8]) -> Result<Handle> {
        let (b, slot) = loop {
            let b = match self.choose_block(size) {
                Some(b) => b,
                None => self.new_normal_block()?,
            };
            let slot = self.load(b)?;
            if !self.blocks[b as usize].untidy {
                break (b, slot);
            }
            self.tidy(b, slot);
            self.blocks[b as usize].eager = true;
            // Chosen by its bound: tidy now, it is chosen again only if
            // the node fits (each pass tidies one more block).
            if self.blocks[b as usize].largest as usize >= size.max(1) {
                break (b, slot);
            }
        };
        let layout = self.layout;
        let buf = self.buf_mut(slot);
        let off = layout
            .alloc(buf, size)
            .ok_or_else(|| Error::Codec("room index out of date".into()))?;
        let n = init.len().min(size);
        buf[off..off + n].copy_from_slice(&init[..n]);
        let largest = layout.largest_free(buf);
        self.mark_dirty(b);
        self.set_largest(b, largest);
        self.blocks[b as usize].live += 1;
        self.live_nodes += 1;
        self.cur = b;
        Ok(Handle::new(b, off as u32))
    }

    fn new_normal_block(&mut self) -> Result<u32> {
        self.note_new_block()?;
        let b = self.new_block_index()?;
        let slot = match self.get_slot(b) {
            Ok(s) => s,
            Err(e) => {
                self.vacant.push(b);
                return Err(e);
            }
        };
        let bs = self.layout.block_size;
        let layout = self.layout;
        let buf = self.buf_mut(slot);
        buf.clear();
        buf.resize(bs, 0);
        layout.format(buf);
        let m = &mut self.blocks[b as usize];
        m.kind = Kind::Normal;
        m.slot = slot as u32;
        m.live = 0;
        m.largest = 0;
        self.note_live(b, true);
        self.set_largest(b, layout.max_node());
        Ok(b)
    }

    fn alloc_large(&mut self, size: usize) -> Result<Handle> {
        if size > isize::MAX as usize / 2 {
            return Err(Error::TooLarge(size));
        }
        let mut data = Vec::new();
        data.try_reserve_exact(size)
            .map_err(|_| Error::OutOfMemory)?;
        data.resize(size, 0);
        let b = self.new_block_index()?;
        let slot = match self.get_slot(b) {
            Ok(s) => s,
            Err(e) => {
                self.vacant.push(b);
                return Err(e);
            }
        };
        let old = std::mem::replace(self.buf_mut(slot), data);
        self.give_spare(old);
        let m = &mut self.blocks[b as usize];
        m.kind = Kind::Large(size);
        m.slot = slot as u32;
        m.live = 1;
        m.largest = 0;
        self.note_live(b, true);
        self.live_nodes += 1;
        Ok(Handle::new(b, 0))
    }

    /// Loads the handle's block and checks the handle; returns block, slot,
    /// data offset and usable length.
    pub fn resolve(&mut self, h: Handle) -> Result<(u32, usize, usize, usize)> {
        let bad = || Error::InvalidHandle(h.to_raw());
        let (b, off) = h.parts().ok_or_else(bad)?;
        let kind = self.blocks.get(b as usize).ok_or_else(bad)?.kind;
        match kind {
            Kind::Vacant => Err(bad()),
            Kind::Large(n) => {
                if off != 0 {
                    return Err(bad());
                }
                let slot = self.load(b)?;
                Ok((b, slot, 0, n))
            }
            Kind::Normal => {
                let slot = self.load(b)?;
                let len = self
                    .layout
                    .node_len(&self.slots[slot].buf, off as usize)
                    .ok_or_else(bad)?;
                Ok((b, slot, off as usize, len))
            }
        }
    }

    // ---- node cache ---------------------------------------------------

    /// Finds a node for reading: in its cached block if there is one, else
    /// in the node cache, else by decompressing the block (then keeping a
    /// copy of the node, since a read from an uncached block hints at
    /// scattered access).
    fn lookup(&mut self, h: Handle) -> Result<NodeRef> {
        let cached = match h.parts() {
            Some((b, _)) => self
                .blocks
                .get(b as usize)
                .is_some_and(|m| m.slot != NO_SLOT),
            None => false,
        };
        if !cached {
            if let Some(copy) = self.node_cache.get(h.to_raw()) {
                return Ok(NodeRef::Copy(copy));
            }
        }
        self.reading = true;
        let r = self.resolve(h);
        self.reading = false;
        let (b, slot, off, len) = r?;
        if !cached && self.node_cache.wants(len) {
            let copy = Arc::new(self.slots[slot].buf[off..off + len].to_vec());
            self.remember(h.to_raw(), copy, b);
        }
        Ok(NodeRef::Block { slot, off, len })
    }

    /// Reads a node for a guard: returns the image, the node's range in it,
    /// and the pin token (`None` for a node-cache copy, which needs no pin).
    pub fn read_node(&mut self, h: Handle) -> Result<NodeView> {
        match self.lookup(h)? {
            NodeRef::Copy(c) => {
                let len = c.len();
                Ok((c, 0, len, None))
            }
            NodeRef::Block { slot, off, len, .. } => {
                let token = self.pin(slot);
                Ok((self.image(slot), off, len, Some(token)))
            }
        }
    }

    /// Copies bytes `offset..offset + out.len()` of a node into `out`.
    pub fn read_into(&mut self, h: Handle, offset: usize, out: &mut [u8]) -> Result<()> {
        let (image, start, len): (&[u8], usize, usize) = match self.lookup(h)? {
            NodeRef::Copy(c) => {
                check_range(offset, out.len(), c.len())?;
                out.copy_from_slice(&c[offset..offset + out.len()]);
                return Ok(());
            }
            NodeRef::Block { slot, off, len, .. } => (&self.slots[slot].buf, off, len),
        };
        check_range(offset, out.len(), len)?;
        let at = start + offset;
        out.copy_from_slice(&image[at..at + out.len()]);
        Ok(())
    }

    fn remember(&mut self, key: u64, copy: Arc<Vec<u8>>, b: u32) {
        let blocks = &mut self.blocks;
        let new = self.node_cache.insert(key, copy, |k| {
            if let Some((kb, _)) = Handle::from_raw(k).parts() {
                blocks[kb as usize].noted -= 1;
            }
        });
        if new {
            self.blocks[b as usize].noted += 1;
        }
    }

    /// Drops the node-cache copy of the node at (`b`, `off`), if any; called
    /// before every change to a node.
    fn forget(&mut self, b: u32, off: usize) {
        let m = &mut self.blocks[b as usize];
        if m.noted > 0 && self.node_cache.remove(Handle::new(b, off as u32).to_raw()) {
            m.noted -= 1;
        }
    }

    pub fn free(&mut self, h: Handle) -> Result<()> {
        let (b, slot, off, _) = self.resolve(h)?;
        self.free_resolved(b, slot, off);
        Ok(())
    }

    /// Copies bytes `offset..offset + out.len()` of a node into `out`, then
    /// frees the node: one lookup for both. Counts as a read for the
    /// cache's growth, as the read it replaces would.
    pub fn read_and_free(&mut self, h: Handle, offset: usize, out: &mut [u8]) -> Result<()> {
        self.reading = true;
        let r = self.resolve(h);
        self.reading = false;
        let (b, slot, off, len) = r?;
        check_range(offset, out.len(), len)?;
        out.copy_from_slice(&self.slots[slot].buf[off + offset..off + offset + out.len()]);
        self.free_resolved(b, slot, off);
        Ok(())
    }

    /// Frees the node at `off` of block `b`, cached in `slot`.
    fn free_resolved(&mut self, b: u32, slot: usize, off: usize) {
        self.forget(b, off);
        match self.blocks[b as usize].kind {
            Kind::Large(_) => {
                self.live_nodes -= 1;
                let i = slot;
                self.detach(b);
                self.release_block(b);
                // The slot now belongs to nobody: drop it, keeping the cache
                // tables dense.
                let s = self.slots.swap_remove(i);
                self.lru.swap_remove(i);
                self.fix_moved_slot(i);
                drop(s);
            }
            _ => {
                let layout = self.layout;
                let eager = self.blocks[b as usize].eager;
                let buf = self.buf_mut(slot);
                if eager {
                    layout.free(buf, off);
                    let largest = layout.largest_free(buf);
                    self.set_largest(b, largest);
                } else {
                    // The recorded largest free chunk stays as it was (an
                    // underestimate) until the block is tidied.
                    let c = layout.free_lazy(buf, off) as u32;
                    let m = &mut self.blocks[b as usize];
                    m.untidy = true;
                    m.lazy_freed = m.lazy_freed.saturating_add(c);
                }
                self.mark_dirty(b);
                self.blocks[b as usize].live -= 1;
                self.live_nodes -= 1;
            }
        }
    }

    /// Current image of the block in `slot` (shared, so a guard can keep it).
    pub fn image(&self, slot: usize) -> Arc<Vec<u8>> {
        Arc::clone(&self.slots[slot].buf)
    }

    pub fn bytes(&self, slot: usize) -> &[u8] {
        &self.slots[slot].buf
    }

    /// Writes `data` at `at` inside block `b` (cached), marking it dirty.
    pub fn write_bytes(&mut self, b: u32, slot: usize, node: usize, at: usize, data: &[u8]) {
        self.forget(b, node);
        self.mark_dirty(b);
        self.buf_mut(slot)[at..at + data.len()].copy_from_slice(data);
    }

    /// Pins the block in `slot`; the returned token names the block in its
    /// current life, for [`BlockHeap::unpin`] and [`BlockHeap::slot_of`].
    pub fn pin(&mut self, slot: usize) -> u64 {
        self.slots[slot].pins += 1;
        let b = self.slots[slot].block;
        ((self.blocks[b as usize].gen as u64) << 32) | b as u64
    }

    fn token_block(&self, token: u64) -> Option<u32> {
        let b = token as u32;
        let m = self.blocks.get(b as usize)?;
        (m.gen == (token >> 32) as u32).then_some(b)
    }

    /// Releases one pin taken by [`BlockHeap::pin`]; a pin on a block index
    /// that has since been released and reused is ignored.
    pub fn unpin(&mut self, token: u64) {
        let Some(b) = self.token_block(token) else {
            return;
        };
        let s = self.blocks[b as usize].slot;
        if s != NO_SLOT {
            let slot = &mut self.slots[s as usize];
            slot.pins = slot.pins.saturating_sub(1);
            if slot.pins == 0 && self.slots.len() > self.capacity {
                // Errors here only mean a block stays cached a bit longer.
                let _ = self.trim();
            }
        }
    }

    /// Block and slot of a pinned block (pinned blocks stay cached).
    pub fn slot_of(&self, token: u64) -> Option<(u32, usize)> {
        let b = self.token_block(token)?;
        let s = self.blocks[b as usize].slot;
        (s != NO_SLOT).then_some((b, s as usize))
    }

    /// Compresses every dirty cached block and empties the cache except for
    /// pinned blocks.
    pub fn flush(&mut self) -> Result<()> {
        let cap = self.capacity;
        self.capacity = 0;
        let r = self.trim();
        self.capacity = cap;
        self.wait_all();
        self.ahead.clear();
        self.parked.trim(self.spare_at_rest());
        r
    }

    /// Waits for every request to the background thread and drops the
    /// images read ahead; the cache stays as it is.
    pub fn settle(&mut self) {
        self.wait_all();
        self.ahead.clear();
        // At rest the arena holds the contexts its target allows, no more.
        self.parked.trim(self.spare_at_rest());
    }

    pub fn stats(&self) -> Stats {
        let uncompressed: usize = self.slots.iter().map(|s| s.buf.capacity()).sum::<usize>()
            + self.spare.iter().map(|v| v.capacity()).sum::<usize>()
            + self.pending.iter().map(|p| p.src.capacity()).sum::<usize>()
            + self
                .ahead
                .iter()
                .filter_map(|a| a.image.as_ref()?.as_ref().map(|v| v.capacity()))
                .sum::<usize>();
        // A B-tree entry costs its 8 bytes plus node overhead; 16 bytes per
        // entry is a fair upper estimate at B-tree fill factors.
        let overhead = self.blocks.capacity() * std::mem::size_of::<BlockMeta>()
            + self.vacant.capacity() * 4
            + self.room.len() * 16
            + self.slots.capacity() * std::mem::size_of::<Slot>()
            + self.lru.capacity_bytes()
            + self.packer.heap_bytes()
            + self.pending.capacity() * std::mem::size_of::<Pending>()
            + self.ahead.capacity() * std::mem::size_of::<Ahead>()
            + self.direction.recent.capacity() * 4
            + self.node_cache.heap_bytes();
        let blocks = self
            .blocks
            .iter()
            .filter(|m| m.kind != Kind::Vacant)
            .count();
        Stats {
            compressed_bytes: self.compressed_bytes,
            uncompressed_bytes: uncompressed as u64,
            overhead_bytes: overhead as u64,
            codec_context_bytes: (self.packer.codec.native_bytes()) as u64
                + self.worker.as_ref().map_or(0, |w| w.ctx_bytes())
                + self.parked.bytes(),
            compressions: self.compressions,
            decompressions: self.decompressions,
            decompressed_ahead: self.ahead_hits,
            hits: self.hits + self.node_cache.hits,
            misses: self.misses,
            blocks: blocks as u64,
            live_nodes: self.live_nodes,
            fast_blocks: self.budget.fast_blocks,
            background_running: self.worker.is_some(),
            background_starts: self.worker_starts,
            taken_over: self.taken_over,
        }
    }

    pub fn dict_len(&self) -> Option<usize> {
        self.packer.codec.dict_len()
    }

    // ---- block images (measuring what the codec costs) ----------------

    /// Uncompressed images of every block in use, in block order: the
    /// cached buffer where there is one (tidied, as it will be stored,
    /// after lazy frees), else the stored copy unpacked.
    /// Changes nothing: no cache movement, no statistics.
    pub fn block_images(&mut self) -> Result<Vec<BlockImage>> {
        let mut out = Vec::new();
        for b in 0..self.blocks.len() {
            let m = &self.blocks[b];
            let (len, normal) = match m.kind {
                Kind::Vacant => continue,
                Kind::Normal => (self.layout.block_size, true),
                Kind::Large(n) => (n, false),
            };
            let bytes = if m.slot != NO_SLOT {
                let mut v = self.slots[m.slot as usize].buf.to_vec();
                if m.untidy {
                    // As it will be stored.
                    self.layout.tidy(&mut v);
                }
                v
            } else if let Some(pos) = self.pending.iter().position(|p| p.block == b as u32) {
                let mut img = Vec::new();
                self.pending_image(pos, &mut img)?;
                img
            } else {
                let comp = m.comp.as_deref().unwrap_or(&[]);
                let mut img = Vec::new();
                self.packer
                    .unpack(&self.layout, (m.enc, comp), len, normal, &mut img)?;
                img
            };
            let m = &self.blocks[b];
            out.push(BlockImage {
                arena: self.id,
                bytes,
                large: !normal,
                fast: m.comp.is_some() && m.enc == Encoding::Fast,
            });
        }
        Ok(out)
    }

    fn own(&self, arena: u64) -> Result<()> {
        if arena == self.id {
            Ok(())
        } else {
            Err(Error::InvalidConfig(
                "block image taken from another arena".into(),
            ))
        }
    }

    /// Stored form of an image, as an eviction would make it, without
    /// dictionary sampling.
    pub fn compress_image(&mut self, img: &BlockImage, fast: bool) -> Result<CompressedImage> {
        self.own(img.arena)?;
        // The codec alone: contexts kept from one image to the next.
        self.packer.codec.set_lean(false);
        let mut out = Vec::new();
        let (enc, _) = self.packer.pack(
            &self.layout,
            &img.bytes,
            (!img.large, false, fast),
            &mut out,
        );
        Ok(CompressedImage {
            arena: self.id,
            bytes: out.as_slice().into(),
            enc,
            len: img.bytes.len(),
            large: img.large,
        })
    }

    /// The image back from its stored form, as a load would rebuild it.
    pub fn decompress_image(&mut self, c: &CompressedImage) -> Result<BlockImage> {
        self.own(c.arena)?;
        self.packer.codec.set_lean(false);
        let mut bytes = Vec::new();
        self.packer
            .unpack(&self.layout, (c.enc, &c.bytes), c.len, !c.large, &mut bytes)?;
        Ok(BlockImage {
            arena: self.id,
            bytes,
            large: c.large,
            fast: c.enc == Encoding::Fast,
        })
    }
}
