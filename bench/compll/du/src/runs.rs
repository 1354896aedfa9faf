//! One measured run of each backend: the heap's figures, and compll's with
//! the arena's own counts and the codec's floor on the scan's blocks.

use compll::{Arena, BlockImage, CompressedImage, Config};
use serde::Serialize;

use crate::entries::Entry;
use crate::measure::{cpu_ns, ms};
use crate::store::compll::CompllStore;
use crate::store::heap::HeapStore;
use crate::workload::{run, Figures, PerOp};

/// One run on a compll arena: its figures and what the arena counted.
#[derive(Serialize, Clone, Default, Debug)]
pub(crate) struct CompllRun {
    #[serde(flatten)]
    pub(crate) figures: Figures,
    pub(crate) compressed_bytes: u64,
    pub(crate) uncompressed_bytes: u64,
    pub(crate) overhead_bytes: u64,
    pub(crate) codec_context_bytes: u64,
    /// The same after delete: with read-ahead, the background thread's
    /// decompression context exists by then.
    pub(crate) codec_context_bytes_at_end: u64,
    pub(crate) compressions: u64,
    pub(crate) decompressions: u64,
    pub(crate) hit_rate: f64,
    /// Blocks and of them stored with lz4 after the scan (the memory
    /// target's choice, `--target-ratio`).
    pub(crate) blocks: u64,
    pub(crate) fast_blocks: u64,
    pub(crate) dictionary_bytes: Option<usize>,
    /// Whether the background thread ran after the scan, how often it was
    /// started over the run, and the jobs queued for it that the arena's
    /// thread did itself.
    pub(crate) background_running: bool,
    pub(crate) background_starts: u64,
    pub(crate) taken_over: u64,
    /// Block decompressions during each operation.
    pub(crate) decompressions_by_operation: PerOp,
    /// Of those, decompressed ahead on the background thread.
    pub(crate) decompressed_ahead_by_operation: PerOp,
    /// Uncompressed block bytes (cache, blocks waiting for the compressor)
    /// held at the end of each operation; the cache may grow during reads
    /// (`--cache-growth`).
    pub(crate) uncompressed_after_operation: PerOp,
    /// The codec alone on the scan's blocks (reported separately).
    #[serde(skip)]
    pub(crate) floor: Option<Floor>,
}

/// What the codec alone costs on exactly the blocks the arena holds after
/// the scan (`Arena::block_images`): each compressed once as an eviction
/// would (field grouping included) and decompressed once as a load would.
#[derive(Serialize, Clone, Copy, Default, Debug)]
pub(crate) struct Floor {
    pub(crate) blocks: usize,
    pub(crate) image_bytes: u64,
    pub(crate) compressed_bytes: u64,
    /// Thread cpu time to compress every block once.
    pub(crate) compress_ms: f64,
    /// Thread cpu time to decompress every block once.
    pub(crate) decompress_ms: f64,
    /// The same work split over two threads, as evenly as the blocks
    /// allow: the larger of the two threads' shares of the measured
    /// per-block times (what two cores allow at best).
    pub(crate) compress_2core_ms: f64,
    pub(crate) decompress_2core_ms: f64,
    /// Blocks the arena held in lz4 form after the scan (the memory
    /// target's choice), and the same four figures with those blocks
    /// stored with lz4 again: the codec work of the arena's own choices
    /// (`Arena::compress_image_as_stored`).
    pub(crate) fast_blocks: usize,
    pub(crate) compress_stored_ms: f64,
    pub(crate) decompress_stored_ms: f64,
    pub(crate) compress_stored_2core_ms: f64,
    pub(crate) decompress_stored_2core_ms: f64,
    /// Distinct blocks holding the nodes open reads.
    pub(crate) open_blocks: usize,
    /// Distinct blocks holding the rows browse shows.
    pub(crate) browse_blocks: usize,
}

/// The least time two threads need for jobs of these durations: each job
/// (longest first) goes to the thread with less work so far; the larger
/// of the two totals.
pub(crate) fn two_core_ns(jobs: &[u64]) -> u64 {
    let mut sorted = jobs.to_vec();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    let mut load = [0u64; 2];
    for j in sorted {
        let k = if load[0] <= load[1] { 0 } else { 1 };
        load[k] += j;
    }
    load[0].max(load[1])
}

/// Per-block thread CPU times of compressing every image once (with `pack`)
/// and of decompressing every result once.
fn time_blocks(
    arena: &Arena,
    images: &[BlockImage],
    pack: impl Fn(&BlockImage) -> CompressedImage,
) -> (Vec<CompressedImage>, Vec<u64>, Vec<u64>) {
    let mut packed: Vec<CompressedImage> = Vec::with_capacity(images.len());
    let mut c_ns = Vec::with_capacity(images.len());
    for i in images {
        let t = cpu_ns();
        packed.push(pack(i));
        c_ns.push(cpu_ns() - t);
    }
    let mut d_ns = Vec::with_capacity(packed.len());
    for p in &packed {
        let t = cpu_ns();
        let back = arena.decompress_image(p).expect("decompress");
        d_ns.push(cpu_ns() - t);
        std::hint::black_box(&back);
    }
    (packed, c_ns, d_ns)
}

/// Compresses every block image once, then decompresses every one once,
/// timing each block (for the two-core split): with the configured codec,
/// and as the arena stored them (lz4 where it chose lz4).
fn measure_floor(arena: &Arena) -> Floor {
    let images = arena.block_images().expect("block images");
    let (packed, c_ns, d_ns) = time_blocks(arena, &images, |i| {
        arena.compress_image(i).expect("compress")
    });
    let (_, cs_ns, ds_ns) = time_blocks(arena, &images, |i| {
        arena.compress_image_as_stored(i).expect("compress")
    });
    let sum = |v: &[u64]| ms(v.iter().sum());
    Floor {
        blocks: images.len(),
        image_bytes: images.iter().map(|i| i.len() as u64).sum(),
        compressed_bytes: packed.iter().map(|p| p.compressed_len() as u64).sum(),
        compress_ms: sum(&c_ns),
        decompress_ms: sum(&d_ns),
        compress_2core_ms: ms(two_core_ns(&c_ns)),
        decompress_2core_ms: ms(two_core_ns(&d_ns)),
        fast_blocks: images.iter().filter(|i| i.is_fast()).count(),
        compress_stored_ms: sum(&cs_ns),
        decompress_stored_ms: sum(&ds_ns),
        compress_stored_2core_ms: ms(two_core_ns(&cs_ns)),
        decompress_stored_2core_ms: ms(two_core_ns(&ds_ns)),
        open_blocks: 0,
        browse_blocks: 0,
    }
}

/// Number of distinct blocks among node handles (a handle's bits 24-63
/// name its block).
fn distinct_blocks(ids: &[u64]) -> usize {
    let mut b: Vec<u64> = ids.iter().map(|id| id >> 24).collect();
    b.sort_unstable();
    b.dedup();
    b.len()
}

/// One run on plain heap nodes.
pub(crate) fn run_heap(entries: &[Entry]) -> Figures {
    // The id table is sized up front so no growth slack is counted against
    // the heap backend.
    run(
        entries,
        || HeapStore::with_capacity(entries.len()),
        |_| 0,
        |_| {},
    )
    .0
}

/// One run on a compll arena; with `floor`, also measures the codec alone
/// on the scan's blocks ([`Floor`]).
pub(crate) fn run_compll(entries: &[Entry], cfg: &Config, floor: bool) -> CompllRun {
    let mut after_scan = None;
    let mut measured = None;
    let (figures, store, trace) = run(
        entries,
        || CompllStore {
            arena: Arena::new(cfg.clone()).expect("valid config"),
        },
        |s: &CompllStore| {
            let st = s.arena.stats();
            after_scan = Some((st, s.arena.dictionary_len()));
            // zstd's contexts live on the C heap, invisible to the counting
            // allocator; add what zstd reports for them.
            st.codec_context_bytes as i64
        },
        |s: &CompllStore| {
            if floor {
                measured = Some(measure_floor(&s.arena));
            }
        },
    );
    let (st, dict) = after_scan.expect("measured");
    let end = store.arena.stats();
    let floor = measured.map(|f| Floor {
        open_blocks: distinct_blocks(&trace.listed),
        browse_blocks: distinct_blocks(&trace.shown),
        ..f
    });
    CompllRun {
        figures,
        compressed_bytes: st.compressed_bytes,
        uncompressed_bytes: st.uncompressed_bytes,
        overhead_bytes: st.overhead_bytes,
        codec_context_bytes: st.codec_context_bytes,
        codec_context_bytes_at_end: end.codec_context_bytes,
        compressions: end.compressions,
        decompressions: end.decompressions,
        hit_rate: end.hit_rate(),
        blocks: st.blocks,
        fast_blocks: st.fast_blocks,
        dictionary_bytes: dict,
        background_running: st.background_running,
        background_starts: end.background_starts,
        taken_over: end.taken_over,
        decompressions_by_operation: trace.decompressions,
        decompressed_ahead_by_operation: trace.ahead,
        uncompressed_after_operation: trace.cached,
        floor,
    }
}

#[cfg(test)]
mod tests {
    use super::two_core_ns;

    #[test]
    fn two_cores_take_the_larger_share_of_a_longest_first_split() {
        assert_eq!(two_core_ns(&[]), 0);
        assert_eq!(two_core_ns(&[5]), 5);
        // Greedy, not the best split (6 = 3+3 / 2+2+2): within one job of
        // it, which for hundreds of similar blocks is what two cores get.
        assert_eq!(two_core_ns(&[3, 3, 2, 2, 2]), 7);
        assert_eq!(two_core_ns(&[10, 1, 1]), 10);
        assert_eq!(two_core_ns(&[4, 4, 4, 4]), 8);
    }
}
