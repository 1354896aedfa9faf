//! The memory target (`Config::target_ratio`): what the arena may hold,
//! and how it spends what it does not need on speed (blocks stored with
//! lz4 instead of the configured codec).

use super::{BlockHeap, Kind};
use crate::codec::Encoding;

/// What the arena knows of its codecs: the ratio (image bytes per stored
/// byte) each has reached on this arena's blocks, as a running average.
#[derive(Clone, Copy, Debug)]
pub(super) struct Budget {
    /// Live block bytes divided by this is what the arena may hold; 0: off.
    pub(super) target: f64,
    /// Image bytes of every block in use (normal and large; H12).
    pub(super) live_bytes: u64,
    /// Running ratios of lz4 and of the configured codec; 0 until measured.
    fast_ratio: f64,
    dense_ratio: f64,
    /// Blocks held in lz4 form.
    pub(super) fast_blocks: u64,
}

/// Which codec contexts the arena keeps between uses (see
/// [`BlockHeap::kept_contexts`]) and the bytes reserved for them.
struct Kept {
    decompress: bool,
    compress: bool,
    thread: bool,
    reserved: u64,
}

/// Weight of the newest block in the running ratios.
const NEWEST: f64 = 1.0 / 16.0;

/// Before lz4 has stored a block here, its ratio is taken to be this
/// fraction of the configured codec's (about what it reaches against
/// zstd-1 on tree nodes).
const FAST_GUESS: f64 = 0.7;

impl Budget {
    pub(super) fn new(target: f64) -> Budget {
        Budget {
            target,
            live_bytes: 0,
            fast_ratio: 0.0,
            dense_ratio: 0.0,
            fast_blocks: 0,
        }
    }

    /// The bytes the arena may hold (`u64::MAX` without a target).
    pub(super) fn allowed(&self) -> u64 {
        if self.target > 0.0 {
            (self.live_bytes as f64 / self.target) as u64
        } else {
            u64::MAX
        }
    }

    /// Records that `len` image bytes were stored in `stored` bytes by
    /// `enc`.
    pub(super) fn note_stored(&mut self, len: usize, stored: usize, enc: Encoding) {
        let r = len as f64 / stored.max(1) as f64;
        let avg = match enc {
            Encoding::Fast => &mut self.fast_ratio,
            Encoding::Plain | Encoding::Dict => &mut self.dense_ratio,
            Encoding::Raw => return,
        };
        *avg = if *avg == 0.0 {
            r
        } else {
            *avg + (r - *avg) * NEWEST
        };
    }

    /// Bytes the lz4 blocks take beyond what the configured codec would
    /// store them in (`len`-byte images; 0 before both have been seen).
    fn fast_extra(&self, len: usize) -> u64 {
        if self.fast_ratio <= 0.0 || self.dense_ratio <= 0.0 {
            return 0;
        }
        let each = len as f64 / self.fast_ratio - len as f64 / self.dense_ratio;
        (each.max(0.0) * self.fast_blocks as f64) as u64
    }

    /// What lz4 is expected to store a `len`-byte image in (`None` before
    /// either codec has stored a block here).
    fn fast_estimate(&self, len: usize) -> Option<u64> {
        let r = if self.fast_ratio > 0.0 {
            self.fast_ratio
        } else if self.dense_ratio > 0.0 {
            self.dense_ratio * FAST_GUESS
        } else {
            return None;
        };
        Some((len as f64 / r) as u64)
    }
}

impl BlockHeap {
    /// Bytes the arena holds besides its stored blocks and its codec
    /// contexts: the cache, blocks waiting for the compressor and the
    /// block table (the small tables are left out; `stats` counts
    /// everything).
    fn held_besides_contexts(&self) -> u64 {
        self.held_besides_contexts_with(self.slots.len().max(self.capacity))
    }

    /// [`BlockHeap::held_besides_contexts`] with a cache of `cached`
    /// blocks.
    fn held_besides_contexts_with(&self, cached: usize) -> u64 {
        let cache = cached * self.layout.block_size;
        let pending: usize = self.pending.iter().map(|p| p.src.len()).sum();
        (cache + pending) as u64
            + (self.blocks.capacity() * std::mem::size_of::<super::BlockMeta>()) as u64
            + self.room.len() as u64 * 16
    }

    /// Which codec contexts are kept between uses rather than freed after
    /// every use, and the bytes reserved for them (at the largest size
    /// they have had). With a memory target, contexts come before lz4
    /// blocks: a context is reserved room when it would fit were every
    /// block stored with the configured codec, in this order: the
    /// arena's own decompression context (loads are the critical path
    /// of every read), its compression context, then the background
    /// thread's (which works off the critical path);
    /// [`BlockHeap::store_fast`] spends only what is left, and a reserved
    /// context is kept once it fits. A kept context saves its set-up,
    /// about a fifth of a block's work, on every block its thread
    /// handles. A small arena, or one whose nodes leave no margin, holds
    /// no context at rest, and its margin, if any, goes to lz4 blocks.
    fn kept_contexts(&self) -> Kept {
        if self.budget.target <= 0.0 {
            return Kept {
                decompress: true,
                compress: true,
                thread: true,
                reserved: 0,
            };
        }
        // The cache as configured: what it grows by while reads reload
        // blocks it has just evicted (`Config::cache_growth`) is the
        // reads' working set, which it gives back when blocks are
        // created; a context kept through those reads saves its set-up
        // on every block they load.
        let base = self.compressed_bytes + self.held_besides_contexts_with(self.base_capacity);
        let dense = base.saturating_sub(self.budget.fast_extra(self.layout.block_size));
        let allowed = self.budget.allowed();
        let (c, d) = self.packer.codec.ctx_peaks();
        let parts = [
            d as u64,
            c as u64,
            self.worker.as_ref().map_or(0, |w| w.ctx_peak()),
        ];
        // Each part in turn: room with every block dense, then room now.
        let (mut fits, mut keep, mut sum) = ([false; 3], [false; 3], 0);
        for (k, part) in parts.iter().enumerate() {
            sum += part;
            fits[k] = (k == 0 || fits[k - 1]) && dense + sum <= allowed;
            keep[k] = fits[k] && (k == 0 || keep[k - 1]) && base + sum <= allowed;
        }
        let reserved = parts
            .iter()
            .zip(fits)
            .filter(|(_, f)| *f)
            .map(|(p, _)| p)
            .sum();
        Kept {
            decompress: keep[0],
            compress: keep[1],
            thread: keep[2],
            reserved,
        }
    }

    /// Contexts of each kind the spare keeps at rest (see
    /// [`crate::codec::Spare`]): the background thread parks its own
    /// there after every job, and they stay when the target has room for
    /// them.
    pub(super) fn spare_at_rest(&self) -> usize {
        usize::from(self.kept_contexts().thread)
    }

    /// Sets the arena's own codec contexts lean or not for the call about
    /// to be made ([`BlockHeap::kept_contexts`]).
    pub(super) fn tune_contexts(&mut self) {
        let k = self.kept_contexts();
        self.packer.codec.set_lean_parts(!k.compress, !k.decompress);
    }

    /// Whether the `len`-byte image about to be compressed may be stored
    /// with lz4: only while everything held, this block's lz4 form and
    /// the contexts kept included, stays within the target.
    pub(super) fn store_fast(&self, len: usize) -> bool {
        if self.budget.target <= 0.0 {
            return false;
        }
        let Some(est) = self.budget.fast_estimate(len) else {
            return false;
        };
        let kept = self.kept_contexts().reserved;
        self.compressed_bytes + est + self.held_besides_contexts() + kept <= self.budget.allowed()
    }

    /// Block `b` got a stored copy of `stored` bytes in form `enc`.
    pub(super) fn note_stored(&mut self, b: u32, stored: usize, enc: Encoding) {
        let (len, _) = self.image_shape(b);
        self.budget.note_stored(len, stored, enc);
        if enc == Encoding::Fast {
            self.budget.fast_blocks += 1;
        }
    }

    /// Block `b`'s stored copy (in form `enc`) is dropped.
    pub(super) fn note_unstored(&mut self, enc: Encoding) {
        if enc == Encoding::Fast {
            self.budget.fast_blocks -= 1;
        }
    }

    /// Block `b` comes into use (`true`) or goes out of it: its image
    /// bytes count towards what the arena may hold.
    pub(super) fn note_live(&mut self, b: u32, live: bool) {
        let len = match self.blocks[b as usize].kind {
            Kind::Vacant => return,
            Kind::Normal => self.layout.block_size,
            Kind::Large(n) => n,
        } as u64;
        if live {
            self.budget.live_bytes += len;
            self.in_use += 1;
        } else {
            self.budget.live_bytes -= len;
            self.in_use -= 1;
        }
    }
}
