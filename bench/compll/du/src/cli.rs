//! The command line, and the arena configuration it describes.

use std::path::PathBuf;

use clap::Parser;
use compll::{Codec, Config};

use crate::store::compll::F_NAME;

#[derive(Parser, Debug, Clone)]
#[command(about = "ncdu-like workload: heap nodes vs a compll arena")]
pub(crate) struct Args {
    /// Scan this directory for the entries.
    #[arg(long)]
    pub(crate) scan: Option<PathBuf>,
    /// Import an ncdu JSON export.
    #[arg(long)]
    pub(crate) import: Option<PathBuf>,
    /// Generate this many entries (default 300000, or 40000 with --quick).
    #[arg(long)]
    pub(crate) generate: Option<usize>,
    /// Entries in the largest directory (the one opened and browsed).
    #[arg(long)]
    pub(crate) big_dir: Option<usize>,
    /// Generator seed.
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
    /// Write the entries as an ncdu JSON export and exit.
    #[arg(long)]
    pub(crate) export: Option<PathBuf>,
    /// Print the tree's shape (entries, depth, names per directory, name
    /// length and entropy) and exit.
    #[arg(long)]
    pub(crate) shape: bool,
    /// Print the Markdown table of these reports (written with --json,
    /// one per tree) and exit.
    #[arg(long, num_args = 1..)]
    pub(crate) table: Vec<PathBuf>,
    /// Small sizes: a run of seconds.
    #[arg(long)]
    pub(crate) quick: bool,
    /// Block size in bytes.
    #[arg(long, default_value_t = 32 * 1024)]
    pub(crate) block_size: usize,
    /// Blocks kept uncompressed.
    #[arg(long, default_value_t = 4)]
    pub(crate) uncompressed: usize,
    /// Blocks that may wait for the background compressor
    /// (`Config::background_compression`; 0: compress on the benchmark's
    /// thread). While as many wait, the benchmark's thread compresses the
    /// next block itself.
    #[arg(long, default_value_t = 2)]
    pub(crate) background: usize,
    /// Blocks in use from which the background thread runs
    /// (`Config::background_from`): a smaller arena compresses on the
    /// benchmark's thread and holds no context for the thread; the thread
    /// stops when the arena shrinks below half of this. 0 (the default):
    /// from the first eviction; an arena whose memory target has no room
    /// for the thread's codec contexts frees them after every job
    /// (`Config::target_ratio`), so the thread costs no memory at rest.
    #[arg(long, default_value_t = 0)]
    pub(crate) background_from: usize,
    /// Busy processes beside the measurement: this many children of
    /// compll-du spin on integer arithmetic (seeded by --seed) from before
    /// the first run to after the last, so figures under load can be
    /// reproduced on any machine. 0: none.
    #[arg(long, default_value_t = 0)]
    pub(crate) load: usize,
    /// Run only the arena's side this many times, no heap runs and no
    /// floors, printing each run's wall and thread times per operation:
    /// for a profiler (`perf record -- compll-du --profile 20 ...`).
    #[arg(long, hide = true)]
    pub(crate) profile: Option<usize>,
    /// Internal: be one of --load's spinning processes.
    #[arg(long, hide = true)]
    pub(crate) spin: Option<u64>,
    /// Blocks the background thread may decompress ahead of reads that
    /// walk the arena one way (`Config::readahead`; 0: none).
    #[arg(long, default_value_t = 4)]
    pub(crate) readahead: usize,
    /// Blocks the cache may grow by while reads reload blocks it has just
    /// evicted (`Config::cache_growth`; 0: fixed).
    #[arg(long, default_value_t = 64)]
    pub(crate) cache_growth: usize,
    /// The arena's memory target (`Config::target_ratio`): it holds about
    /// its live block bytes / this, and while it holds less it stores
    /// blocks with lz4 instead of --codec. The
    /// heap backend holds about 1.2x the arena's block bytes (malloc's
    /// per-node overhead), so 5 keeps compll near 6x below the heap on
    /// every tree. 0: off.
    #[arg(long, default_value_t = 5.0)]
    pub(crate) target_ratio: f64,
    /// Codec: lz4, zstd-N, zstd-N-dict, zstd-N-mM-bK (minimum match M,
    /// zstd blocks of K KiB; either may be left out), zlib-N, copy.
    #[arg(long, default_value = "zstd-1-m5-b16")]
    pub(crate) codec: String,
    /// Node cache budget in bytes (0 disables it).
    #[arg(long, default_value_t = 32 * 1024)]
    pub(crate) node_cache: usize,
    /// Leading node bytes the arena stores column by column when it
    /// compresses a block (`Config::group_fields`; 0: whole nodes). The
    /// default is the node's fixed fields (74 bytes, all but the name).
    #[arg(long, default_value_t = F_NAME)]
    pub(crate) group_fields: usize,
    /// Repetitions; medians are reported.
    #[arg(long, default_value_t = 1)]
    pub(crate) reps: usize,
    /// Print the table over block size x uncompressed count x codec x
    /// grouping (none, or the 74 fixed bytes).
    #[arg(long)]
    pub(crate) sweep: bool,
    /// Block sizes the sweep tries (default 4096,16384,32768,65536; with
    /// --quick 8192,32768).
    #[arg(long, value_delimiter = ',')]
    pub(crate) sweep_blocks: Vec<usize>,
    /// Uncompressed block counts the sweep tries (default 4,10,32; with
    /// --quick 4,10).
    #[arg(long, value_delimiter = ',')]
    pub(crate) sweep_uncompressed: Vec<usize>,
    /// Codecs the sweep tries (default lz4,zstd-1,zstd-3,zlib-5,zlib-9,
    /// zstd-3-dict; with --quick lz4,zstd-1,zlib-5,zstd-3-dict).
    #[arg(long, value_delimiter = ',')]
    pub(crate) sweep_codecs: Vec<String>,
    /// Grouped node bytes the sweep tries (default 0,74).
    #[arg(long, value_delimiter = ',')]
    pub(crate) sweep_groups: Vec<usize>,
    /// Also write the figures as one JSON object to this file ("-" for
    /// standard output).
    #[arg(long)]
    pub(crate) json: Option<String>,
}

/// The arena configuration for `args`, with the block size, cache size,
/// codec and grouping given (the sweep varies them).
pub(crate) fn config_for(
    args: &Args,
    block: usize,
    unc: usize,
    codec: &str,
    group: usize,
) -> Result<Config, String> {
    let c = Codec::parse(codec).map_err(|e| e.to_string())?;
    Ok(Config::default()
        .background_compression(args.background)
        .background_from(args.background_from)
        .readahead(args.readahead)
        .cache_growth(args.cache_growth)
        .block_size(block)
        .uncompressed_blocks(unc)
        .node_cache(args.node_cache)
        .group_fields(group)
        .target_ratio(args.target_ratio)
        .codec(c))
}
