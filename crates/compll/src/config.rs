//! Arena configuration: block size, alignment, cache size and codec.

use std::fmt;
use std::sync::Arc;

use crate::error::{Error, Result};

/// Smallest supported block size (1 KiB).
///
/// ```
/// assert_eq!(compll::MIN_BLOCK_SIZE, 1024);
/// ```
pub const MIN_BLOCK_SIZE: usize = 1024;
/// Largest supported block size (16 MiB; handles carry a 24-bit offset).
///
/// ```
/// assert_eq!(compll::MAX_BLOCK_SIZE, 16 << 20);
/// ```
pub const MAX_BLOCK_SIZE: usize = 16 << 20;

/// A user-supplied block compressor, the Rust form of the original compll library's pair of
/// callbacks.
///
/// ```
/// use compll::{BlockCodec, Codec, Config, Arena};
/// use std::sync::Arc;
/// struct Identity;
/// impl BlockCodec for Identity {
///     fn compress(&self, src: &[u8], dst: &mut Vec<u8>) -> Result<(), String> {
///         dst.extend_from_slice(src);
///         Ok(())
///     }
///     fn decompress(&self, src: &[u8], dst: &mut [u8]) -> Result<(), String> {
///         dst.copy_from_slice(src);
///         Ok(())
///     }
/// }
/// let cfg = Config::default().codec(Codec::Custom(Arc::new(Identity)));
/// let arena = Arena::new(cfg).unwrap();
/// assert!(arena.alloc(8).is_ok());
/// ```
pub trait BlockCodec: Send + Sync {
    /// Appends the compressed form of `src` to `dst` (which arrives empty).
    fn compress(&self, src: &[u8], dst: &mut Vec<u8>) -> std::result::Result<(), String>;
    /// Fills all of `dst` (exactly the uncompressed length) from `src`.
    fn decompress(&self, src: &[u8], dst: &mut [u8]) -> std::result::Result<(), String>;
}

/// Which compressor blocks go through.
///
/// ```
/// use compll::Codec;
/// let c = Codec::Zstd { level: 3 };
/// assert_eq!(c.name(), "zstd-3");
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub enum Codec {
    /// LZ4 block format (`lz4_flex`): fastest, weakest.
    Lz4,
    /// Zstandard at the given level (1–22; negative levels are fast modes).
    Zstd {
        /// Compression level.
        level: i32,
    },
    /// Zstandard with a dictionary trained on the arena's own first blocks:
    /// a piece of each of the first `train_blocks` compressed blocks is kept
    /// as a training sample; then a dictionary of `dict_size` bytes is
    /// trained, the blocks stored so far are recompressed with it, and every
    /// later compression uses it. Lets small blocks compress almost as well
    /// as large ones.
    ZstdDict {
        /// Compression level.
        level: i32,
        /// Number of blocks sampled before training.
        train_blocks: u32,
        /// Target dictionary size in bytes.
        dict_size: usize,
    },
    /// Zstandard at the given level, tuned for small blocks of small
    /// records (name `zstd-N[-mM][-bK]`):
    ///
    /// * `min_match` (3–7; 0 keeps the level's own): level 1 uses 6 for
    ///   inputs of 128 KiB and less; on 32 KiB blocks of small records, 5
    ///   finds the short repeats between neighbouring records (1.7 % smaller
    ///   on the `compll-du` tree) for about 6 % more compression time.
    /// * `block_kib` (1–128; 0 keeps zstd's own, the whole arena block up
    ///   to 128 KiB): the size of zstd's own blocks inside a frame, each
    ///   with its own entropy tables. Halving it halves the buffers a
    ///   compression context keeps (sequences and literals) and lets the
    ///   tables follow a grouped image's parts: 16 on 32 KiB arena blocks
    ///   shrinks the `compll-du` tree's blocks by 1.6 % and each context by
    ///   about 60 KiB, for a few per cent more time.
    ///
    /// ```
    /// let c = compll::Codec::parse("zstd-1-m5-b16").unwrap();
    /// assert_eq!(c.name(), "zstd-1-m5-b16");
    /// ```
    ZstdTuned {
        /// Compression level.
        level: i32,
        /// Minimum match length (0: the level's).
        min_match: u32,
        /// zstd block size in KiB (0: zstd's).
        block_kib: u32,
    },
    /// zlib (`flate2`) at the given level (0–9).
    Zlib {
        /// Compression level.
        level: u32,
    },
    /// No compression: blocks are copied as they are. Useful to measure the
    /// allocator's own overhead.
    Copy,
    /// A user-supplied compressor.
    Custom(Arc<dyn BlockCodec>),
}

impl Codec {
    /// Short name used in reports, e.g. `"zlib-5"`.
    ///
    /// ```
    /// assert_eq!(compll::Codec::Lz4.name(), "lz4");
    /// ```
    pub fn name(&self) -> String {
        match self {
            Codec::Lz4 => "lz4".into(),
            Codec::Zstd { level } => format!("zstd-{level}"),
            Codec::ZstdDict { level, .. } => format!("zstd-{level}-dict"),
            Codec::ZstdTuned {
                level,
                min_match,
                block_kib,
            } => {
                let mut n = format!("zstd-{level}");
                if *min_match > 0 {
                    n += &format!("-m{min_match}");
                }
                if *block_kib > 0 {
                    n += &format!("-b{block_kib}");
                }
                n
            }
            Codec::Zlib { level } => format!("zlib-{level}"),
            Codec::Copy => "copy".into(),
            Codec::Custom(_) => "custom".into(),
        }
    }

    /// Parses the names printed by [`Codec::name`] (`lz4`, `zstd-N`,
    /// `zstd-N-dict`, `zstd-N-mM`, `zstd-N-bK`, `zstd-N-mM-bK`, `zlib-N`,
    /// `copy`).
    ///
    /// ```
    /// assert_eq!(compll::Codec::parse("zlib-5").unwrap().name(), "zlib-5");
    /// assert_eq!(compll::Codec::parse("zstd-1-m5").unwrap().name(), "zstd-1-m5");
    /// assert!(compll::Codec::parse("rar").is_err());
    /// ```
    pub fn parse(s: &str) -> Result<Codec> {
        let bad = || Error::InvalidConfig(format!("unknown codec {s:?}"));
        if s == "lz4" {
            return Ok(Codec::Lz4);
        }
        if s == "copy" {
            return Ok(Codec::Copy);
        }
        if let Some(rest) = s.strip_prefix("zstd-") {
            // A level (possibly negative: `zstd--3`), then options.
            let (sign, body) = match rest.strip_prefix('-') {
                Some(b) => (-1, b),
                None => (1, rest),
            };
            let mut parts = body.split('-');
            let first = parts.next().unwrap_or("");
            let opts: Vec<&str> = parts.collect();
            if !opts.is_empty() && opts != ["dict"] {
                let level: i32 = first.parse().map_err(|_| bad())?;
                let (mut min_match, mut block_kib) = (0, 0);
                for o in opts {
                    let num = |x: &str| x.parse::<u32>().map_err(|_| bad());
                    match o.split_at(1) {
                        ("m", v) if min_match == 0 => min_match = num(v)?,
                        ("b", v) if block_kib == 0 => block_kib = num(v)?,
                        _ => return Err(bad()),
                    }
                }
                return Ok(Codec::ZstdTuned {
                    level: sign * level,
                    min_match,
                    block_kib,
                });
            }
            if let Some(l) = rest.strip_suffix("-dict") {
                let level = l.parse().map_err(|_| bad())?;
                return Ok(Codec::ZstdDict {
                    level,
                    train_blocks: 256,
                    dict_size: 16 * 1024,
                });
            }
            return Ok(Codec::Zstd {
                level: rest.parse().map_err(|_| bad())?,
            });
        }
        if let Some(rest) = s.strip_prefix("zlib-") {
            return Ok(Codec::Zlib {
                level: rest.parse().map_err(|_| bad())?,
            });
        }
        Err(bad())
    }
}

impl fmt::Debug for Codec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// Arena configuration, built with chained setters and checked by
/// [`Arena::new`](crate::Arena::new).
///
/// Defaults: 32 KiB blocks, 8-byte alignment, 10 uncompressed blocks, zstd
/// level 1.
///
/// ```
/// use compll::{Config, Codec};
/// let cfg = Config::default()
///     .block_size(64 * 1024)
///     .alignment(4)
///     .uncompressed_blocks(16)
///     .codec(Codec::Zlib { level: 5 });
/// assert_eq!(cfg.get_block_size(), 64 * 1024);
/// ```
#[derive(Clone, Debug)]
pub struct Config {
    pub(crate) block_size: usize,
    pub(crate) alignment: usize,
    pub(crate) uncompressed: usize,
    pub(crate) codec: Codec,
    pub(crate) node_cache: usize,
    pub(crate) group_fields: usize,
    pub(crate) background: usize,
    pub(crate) background_from: usize,
    pub(crate) readahead: usize,
    pub(crate) cache_growth: usize,
    pub(crate) target_ratio: f64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            block_size: 32 * 1024,
            alignment: 8,
            uncompressed: 10,
            codec: Codec::Zstd { level: 1 },
            node_cache: 32 * 1024,
            group_fields: 0,
            background: 0,
            background_from: 0,
            readahead: 0,
            cache_growth: 0,
            target_ratio: 0.0,
        }
    }
}

impl Config {
    /// Sets the block size in bytes (1 KiB – 16 MiB).
    ///
    /// ```
    /// let cfg = compll::Config::default().block_size(4096);
    /// assert_eq!(cfg.get_block_size(), 4096);
    /// ```
    pub fn block_size(mut self, bytes: usize) -> Self {
        self.block_size = bytes;
        self
    }

    /// Sets the minimum node alignment (1, 2, 4, 8 or 16). The arena may
    /// raise it where the block size needs a coarser unit.
    ///
    /// ```
    /// let cfg = compll::Config::default().alignment(16);
    /// assert_eq!(cfg.get_alignment(), 16);
    /// ```
    pub fn alignment(mut self, bytes: usize) -> Self {
        self.alignment = bytes;
        self
    }

    /// Sets how many blocks are kept uncompressed (at least 1).
    ///
    /// ```
    /// let cfg = compll::Config::default().uncompressed_blocks(4);
    /// assert_eq!(cfg.get_uncompressed_blocks(), 4);
    /// ```
    pub fn uncompressed_blocks(mut self, count: usize) -> Self {
        self.uncompressed = count;
        self
    }

    /// Sets the byte budget of the node cache: copies of single nodes read
    /// from blocks that were not cached. Scattered reads (a sorted view of
    /// a large directory, say) then stop decompressing a whole block per
    /// node on every pass. 0 disables it. Default 32 KiB.
    ///
    /// ```
    /// let cfg = compll::Config::default().node_cache(0);
    /// assert_eq!(cfg.get_node_cache(), 0);
    /// ```
    pub fn node_cache(mut self, bytes: usize) -> Self {
        self.node_cache = bytes;
        self
    }

    /// The node cache budget in bytes.
    ///
    /// ```
    /// assert_eq!(compll::Config::default().get_node_cache(), 32 * 1024);
    /// ```
    pub fn get_node_cache(&self) -> usize {
        self.node_cache
    }

    /// Stores the first `bytes` bytes of every node column by column when
    /// a block is compressed ("grouping elements"): byte 0 of every node in
    /// the block, then byte 1, and so on, each as the difference from the
    /// previous node's. For nodes that start with fixed-layout fields
    /// (integers, links) this compresses much better than whole nodes side
    /// by side; the block in memory is unchanged, only its compressed form
    /// differs. 0 (the default) compresses blocks as they are. At most 4096.
    ///
    /// ```
    /// let cfg = compll::Config::default().group_fields(72);
    /// assert_eq!(cfg.get_group_fields(), 72);
    /// ```
    pub fn group_fields(mut self, bytes: usize) -> Self {
        self.group_fields = bytes;
        self
    }

    /// The number of leading node bytes grouped by column (0: none).
    ///
    /// ```
    /// assert_eq!(compll::Config::default().get_group_fields(), 0);
    /// ```
    pub fn get_group_fields(&self) -> usize {
        self.group_fields
    }

    /// Compresses evicted blocks on a background thread, with at most
    /// `pending` blocks waiting for it; 0 (the default) compresses on the
    /// calling thread. The thread has a compression context of its own
    /// (counted in [`Stats::codec_context_bytes`](crate::Stats)); the
    /// calling thread keeps its contexts, groups fields, decompresses, and
    /// compresses the next evicted block itself while `pending` blocks are
    /// waiting, so both cores compress while the arena is being filled. A
    /// waiting block keeps its image (counted in
    /// [`Stats::uncompressed_bytes`](crate::Stats)) and is taken back as it
    /// is if it is needed before its compression ends. See also
    /// [`Config::readahead`] and [`Arena::settle`](crate::Arena::settle).
    /// Ignored for [`Codec::ZstdDict`], whose training needs both halves of
    /// the codec on one thread. At most 1024.
    ///
    /// ```
    /// use compll::{Arena, Config};
    /// let a = Arena::new(Config::default().uncompressed_blocks(1).background_compression(1)).unwrap();
    /// let x = a.alloc(20_000).unwrap();
    /// let y = a.alloc(20_000).unwrap(); // evicts x's block to the compressor
    /// a.write_at(x, 0, b"back").unwrap(); // taken back, compressed or not
    /// a.flush().unwrap();                 // waits for every compression
    /// assert_eq!(&a.read(x).unwrap()[..4], b"back");
    /// assert!(a.stats().compressions >= 1);
    /// # let _ = y;
    /// ```
    pub fn background_compression(mut self, pending: usize) -> Self {
        self.background = pending;
        self
    }

    /// Lets the background thread (see
    /// [`Config::background_compression`], which must be on) decompress up
    /// to `blocks` blocks ahead of reads that walk the arena in one
    /// direction: nodes allocated one after another share blocks, so a list
    /// or tree walked in allocation order, or backwards, loads neighbouring
    /// blocks one after another, a few back and forth. When recent loads
    /// by reads move steadily one way, the next blocks that way not read
    /// lately are decompressed on the other core, and the read that needs
    /// one takes its image instead of decompressing. Writes and allocation
    /// never start it. Images waiting to be read are counted in
    /// [`Stats::uncompressed_bytes`](crate::Stats); the thread's
    /// decompression context is created on its first such job. 0 (the
    /// default): off. At most 64.
    ///
    /// ```
    /// use compll::{Arena, Config};
    /// let a = Arena::new(
    ///     Config::default()
    ///         .uncompressed_blocks(1)
    ///         .background_compression(1)
    ///         .readahead(4),
    /// )
    /// .unwrap();
    /// let hs: Vec<_> = (0..40).map(|_| a.alloc(8000).unwrap()).collect();
    /// a.flush().unwrap();
    /// for h in hs.iter().rev() {
    ///     a.read(*h).unwrap(); // walking back: later blocks come ahead
    /// }
    /// let s = a.stats();
    /// // Each block asked for came from the thread, or, where the thread
    /// // had not started on it yet, was unpacked by the reading thread.
    /// assert!(s.decompressed_ahead + s.taken_over > 0);
    /// ```
    pub fn readahead(mut self, blocks: usize) -> Self {
        self.readahead = blocks;
        self
    }

    /// How many blocks may be decompressed ahead of reads (0: none).
    ///
    /// ```
    /// assert_eq!(compll::Config::default().get_readahead(), 0);
    /// ```
    pub fn get_readahead(&self) -> usize {
        self.readahead
    }

    /// Starts the background thread (see
    /// [`Config::background_compression`]) only once the arena holds
    /// `blocks` blocks, and stops it (its contexts freed) when the arena
    /// shrinks below half of that. The thread's compression context (about
    /// 0.1 MiB for zstd) and its decompression context cost a small arena
    /// more than its nodes compress to, and a small arena has little to
    /// hand over; 0 (the default) starts it at the first block evicted.
    /// [`Stats::background_running`](crate::Stats) and
    /// [`Stats::background_starts`](crate::Stats) say what it did.
    ///
    /// ```
    /// use compll::{Arena, Config};
    /// let a = Arena::new(
    ///     Config::default()
    ///         .uncompressed_blocks(1)
    ///         .background_compression(2)
    ///         .background_from(64),
    /// )
    /// .unwrap();
    /// let hs: Vec<_> = (0..8).map(|_| a.alloc(20_000).unwrap()).collect();
    /// a.flush().unwrap();
    /// let s = a.stats();
    /// assert!(!s.background_running);   // 8 blocks: compressed here
    /// assert_eq!(s.background_starts, 0);
    /// # let _ = hs;
    /// ```
    pub fn background_from(mut self, blocks: usize) -> Self {
        self.background_from = blocks;
        self
    }

    /// Blocks in use from which the background thread runs (0: at once).
    ///
    /// ```
    /// assert_eq!(compll::Config::default().get_background_from(), 0);
    /// ```
    pub fn get_background_from(&self) -> usize {
        self.background_from
    }

    /// The background compressor's queue length (0: none).
    ///
    /// ```
    /// assert_eq!(compll::Config::default().get_background_compression(), 0);
    /// ```
    pub fn get_background_compression(&self) -> usize {
        self.background
    }

    /// Lets the cache of uncompressed blocks grow by up to `blocks` more
    /// than [`Config::uncompressed_blocks`] while reads keep loading blocks
    /// it evicted shortly before (one more block per such reload; the
    /// arena remembers as many evicted blocks as the cache can hold at
    /// most). Starting a new block, which is what filling the arena does,
    /// shrinks it back by one block. Writes never make it grow. 0 (the
    /// default): a fixed cache. What the cache holds is in
    /// [`Stats::uncompressed_bytes`](crate::Stats) at every moment.
    ///
    /// ```
    /// let cfg = compll::Config::default().cache_growth(60);
    /// assert_eq!(cfg.get_cache_growth(), 60);
    /// ```
    pub fn cache_growth(mut self, blocks: usize) -> Self {
        self.cache_growth = blocks;
        self
    }

    /// How far the cache may grow past its configured size.
    ///
    /// ```
    /// assert_eq!(compll::Config::default().get_cache_growth(), 0);
    /// ```
    pub fn get_cache_growth(&self) -> usize {
        self.cache_growth
    }

    /// Lets the arena spend memory it does not need on speed: it keeps
    /// what it holds (stored blocks, cached blocks, codec contexts, tables)
    /// at about its live block bytes divided by `ratio`, and while it holds
    /// less it stores blocks with lz4 (several times faster to compress
    /// and to decompress than zstd, but larger) instead of the configured
    /// codec.
    /// The choice is made per block, as each is compressed, from the
    /// totals the arena keeps and the ratios each codec has reached on its
    /// own blocks so far, so it follows the data: a tree that compresses
    /// well gets mostly lz4 blocks, one that does not gets only the
    /// configured codec. [`Stats::fast_blocks`](crate::Stats) counts the
    /// lz4 blocks held. The codec contexts (zstd's, about 0.1 MiB each,
    /// on both threads) come first: each is kept between uses only while
    /// it fits within the target; otherwise it is parked between calls
    /// (at most two of each kind, shared by both threads, so a block does
    /// not pay for setting a context up) and freed by
    /// [`Arena::settle`](crate::Arena::settle) and
    /// [`Arena::flush`](crate::Arena::flush), so a small arena holds none
    /// at rest ([`Stats::codec_context_bytes`](crate::Stats)). 0 (the default):
    /// off, every block uses the configured codec and contexts are kept.
    /// Otherwise at least 1.
    ///
    /// ```
    /// use compll::{Arena, Config};
    /// let a = Arena::new(Config::default().uncompressed_blocks(1).target_ratio(2.0)).unwrap();
    /// for i in 0..50_000u32 {
    ///     a.alloc_init(64, &i.to_le_bytes()).unwrap(); // mostly zeros
    /// }
    /// a.flush().unwrap();
    /// let s = a.stats();
    /// assert!(s.fast_blocks > 0);
    /// ```
    pub fn target_ratio(mut self, ratio: f64) -> Self {
        self.target_ratio = ratio;
        self
    }

    /// The memory target set by [`Config::target_ratio`] (0: off).
    ///
    /// ```
    /// assert_eq!(compll::Config::default().get_target_ratio(), 0.0);
    /// ```
    pub fn get_target_ratio(&self) -> f64 {
        self.target_ratio
    }

    /// Sets the codec.
    ///
    /// ```
    /// let cfg = compll::Config::default().codec(compll::Codec::Lz4);
    /// assert_eq!(cfg.get_codec().name(), "lz4");
    /// ```
    pub fn codec(mut self, codec: Codec) -> Self {
        self.codec = codec;
        self
    }

    /// The configured block size.
    ///
    /// ```
    /// assert_eq!(compll::Config::default().get_block_size(), 32 * 1024);
    /// ```
    pub fn get_block_size(&self) -> usize {
        self.block_size
    }

    /// The configured (requested) alignment.
    ///
    /// ```
    /// assert_eq!(compll::Config::default().get_alignment(), 8);
    /// ```
    pub fn get_alignment(&self) -> usize {
        self.alignment
    }

    /// The configured number of uncompressed blocks.
    ///
    /// ```
    /// assert_eq!(compll::Config::default().get_uncompressed_blocks(), 10);
    /// ```
    pub fn get_uncompressed_blocks(&self) -> usize {
        self.uncompressed
    }

    /// The configured codec.
    ///
    /// ```
    /// assert_eq!(compll::Config::default().get_codec().name(), "zstd-1");
    /// ```
    pub fn get_codec(&self) -> &Codec {
        &self.codec
    }

    /// Checks ranges and works out the effective layout parameters.
    pub(crate) fn resolve(&self) -> Result<Resolved> {
        if !(MIN_BLOCK_SIZE..=MAX_BLOCK_SIZE).contains(&self.block_size) {
            return Err(Error::InvalidConfig(format!(
                "block size {} outside {MIN_BLOCK_SIZE}..={MAX_BLOCK_SIZE}",
                self.block_size
            )));
        }
        if !matches!(self.alignment, 1 | 2 | 4 | 8 | 16) {
            return Err(Error::InvalidConfig(format!(
                "alignment {} is not 1, 2, 4, 8 or 16",
                self.alignment
            )));
        }
        if self.uncompressed == 0 || self.uncompressed > 1 << 20 {
            return Err(Error::InvalidConfig(format!(
                "uncompressed block count {} outside 1..=1048576",
                self.uncompressed
            )));
        }
        if self.cache_growth > 1 << 20 {
            return Err(Error::InvalidConfig(format!(
                "cache growth {} > 1048576",
                self.cache_growth
            )));
        }
        if self.readahead > 64 {
            return Err(Error::InvalidConfig(format!(
                "readahead {} > 64 blocks",
                self.readahead
            )));
        }
        if self.background > 1024 {
            return Err(Error::InvalidConfig(format!(
                "background queue {} > 1024",
                self.background
            )));
        }
        if !(self.target_ratio == 0.0 || self.target_ratio >= 1.0 && self.target_ratio.is_finite())
        {
            return Err(Error::InvalidConfig(format!(
                "target ratio {} is neither 0 nor a finite number >= 1",
                self.target_ratio
            )));
        }
        if self.group_fields > 4096 {
            return Err(Error::InvalidConfig(format!(
                "group_fields {} > 4096",
                self.group_fields
            )));
        }
        match &self.codec {
            Codec::Zlib { level } if *level > 9 => {
                return Err(Error::InvalidConfig(format!("zlib level {level} > 9")))
            }
            Codec::ZstdTuned { min_match, .. }
                if *min_match != 0 && !(3..=7).contains(min_match) =>
            {
                return Err(Error::InvalidConfig(format!(
                    "zstd minimum match {min_match} outside 3..=7"
                )))
            }
            Codec::ZstdTuned { block_kib, .. } if *block_kib > 128 => {
                return Err(Error::InvalidConfig(format!(
                    "zstd block size {block_kib} KiB outside 1..=128"
                )))
            }
            Codec::Zstd { level }
            | Codec::ZstdDict { level, .. }
            | Codec::ZstdTuned { level, .. }
                if !(-7..=22).contains(level) =>
            {
                return Err(Error::InvalidConfig(format!(
                    "zstd level {level} outside -7..=22"
                )))
            }
            Codec::ZstdDict {
                train_blocks,
                dict_size,
                ..
            } if *train_blocks == 0 || *dict_size < 256 => {
                return Err(Error::InvalidConfig(
                    "zstd dictionary needs train_blocks >= 1 and dict_size >= 256".into(),
                ))
            }
            _ => {}
        }
        // Two-byte tags store sizes and offsets in alignment units with 15
        // bits, so big blocks need a coarser unit; past 16-byte units the
        // tags widen to four bytes instead of raising the alignment further.
        let mut align = self.alignment;
        while self.block_size / align > 1 << 15 && align < 16 {
            align *= 2;
        }
        let tag = if self.block_size / align > 1 << 15 {
            align = self.alignment;
            4
        } else {
            2
        };
        Ok(Resolved {
            block_size: self.block_size,
            align,
            tag,
        })
    }
}

/// Effective layout parameters after validation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Resolved {
    pub block_size: usize,
    pub align: usize,
    pub tag: usize,
}
