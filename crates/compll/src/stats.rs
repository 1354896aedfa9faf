//! Counters describing what an arena holds and how its cache behaves.

/// A snapshot of an arena's memory use and activity.
///
/// ```
/// use compll::{Arena, Config};
/// let arena = Arena::new(Config::default()).unwrap();
/// let h = arena.alloc(100).unwrap();
/// let s = arena.stats();
/// assert_eq!(s.live_nodes, 1);
/// assert!(s.uncompressed_bytes > 0);
/// # let _ = h;
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Stats {
    /// Bytes of compressed block copies held.
    pub compressed_bytes: u64,
    /// Bytes of uncompressed block images held (the cache, plus spare
    /// buffers kept for reuse).
    pub uncompressed_bytes: u64,
    /// Bytes of bookkeeping: block table, room index, cache slots, the node
    /// cache, the compression scratch buffer and the codec's training
    /// samples (not the codec's C-side contexts and dictionaries, see
    /// [`Stats::codec_context_bytes`]).
    pub overhead_bytes: u64,
    /// Bytes held by native codec contexts outside the Rust heap, as
    /// reported by the codec library (zstd only; 0 otherwise).
    pub codec_context_bytes: u64,
    /// Number of block compressions performed.
    pub compressions: u64,
    /// Number of block decompressions performed (on either thread).
    pub decompressions: u64,
    /// Of those, loads served by a block the background thread had
    /// decompressed ahead ([`Config::readahead`](crate::Config::readahead)).
    pub decompressed_ahead: u64,
    /// Block lookups that found the block uncompressed, plus reads served
    /// from the node cache.
    pub hits: u64,
    /// Block lookups that had to decompress.
    pub misses: u64,
    /// Blocks currently in use (normal and large).
    pub blocks: u64,
    /// Live nodes.
    pub live_nodes: u64,
    /// Blocks held in lz4 form because memory was to spare (see
    /// [`Config::target_ratio`](crate::Config::target_ratio)).
    pub fast_blocks: u64,
    /// Whether the background thread runs now (see
    /// [`Config::background_from`](crate::Config::background_from): it
    /// starts once the arena holds enough blocks and stops when it
    /// shrinks).
    pub background_running: bool,
    /// Times the background thread was started.
    pub background_starts: u64,
    /// Jobs queued for the background thread (a compression, a load
    /// ahead) that the arena's thread did itself because it needed the
    /// result before the thread had started on it.
    pub taken_over: u64,
}

impl Stats {
    /// Fraction of block lookups served without decompression (1.0 when
    /// nothing was looked up yet).
    ///
    /// ```
    /// let s = compll::Stats::default();
    /// assert_eq!(s.hit_rate(), 1.0);
    /// ```
    pub fn hit_rate(&self) -> f64 {
        let total = self.hits + self.misses;
        if total == 0 {
            1.0
        } else {
            self.hits as f64 / total as f64
        }
    }

    /// Total bytes the arena holds: compressed + uncompressed + overhead +
    /// codec contexts.
    ///
    /// ```
    /// let s = compll::Stats::default();
    /// assert_eq!(s.total_bytes(), 0);
    /// ```
    pub fn total_bytes(&self) -> u64 {
        self.compressed_bytes
            + self.uncompressed_bytes
            + self.overhead_bytes
            + self.codec_context_bytes
    }
}
