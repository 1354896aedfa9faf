//! What the benchmark reports: medians over the repetitions, the ratios of
//! compll to the heap, the codec's floor, the printed summary and the JSON
//! report.

use serde::Serialize;

use crate::cli::Args;
use crate::entries::Shape;
use crate::measure::malloc_meter;
use crate::runs::{CompllRun, Floor};
use crate::sweep::SweepRow;
use crate::workload::{Figures, PerOp};

/// The median, the mean of the middle two for an even count (0 for none).
pub(crate) fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    let n = xs.len();
    if n == 0 {
        0.0
    } else if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

/// Each figure's median over the runs.
pub(crate) fn median_figures(runs: &[Figures]) -> Figures {
    let m = |f: fn(&Figures) -> f64| median(runs.iter().map(f).collect());
    Figures {
        scan_ms: m(|f| f.scan_ms),
        open_ms: m(|f| f.open_ms),
        browse_ms: m(|f| f.browse_ms),
        delete_ms: m(|f| f.delete_ms),
        scan_cpu_ms: m(|f| f.scan_cpu_ms),
        open_cpu_ms: m(|f| f.open_cpu_ms),
        browse_cpu_ms: m(|f| f.browse_cpu_ms),
        delete_cpu_ms: m(|f| f.delete_cpu_ms),
        scan_thread_ms: m(|f| f.scan_thread_ms),
        open_thread_ms: m(|f| f.open_thread_ms),
        browse_thread_ms: m(|f| f.browse_thread_ms),
        delete_thread_ms: m(|f| f.delete_thread_ms),
        mem_bytes: m(|f| f.mem_bytes as f64) as i64,
        mem_malloc_bytes: m(|f| f.mem_malloc_bytes as f64) as i64,
    }
}

/// compll against the heap: memory as heap / compll, times as compll / heap.
#[derive(Serialize, Clone, Copy, Debug)]
pub(crate) struct Ratios {
    /// Heap backend / compll, counted bytes.
    pub(crate) memory: f64,
    /// Heap backend / compll, malloc's figure (mallinfo2, or the estimate).
    pub(crate) memory_with_malloc_overhead: f64,
    /// Wall-clock time, compll / heap (what the aims are judged on).
    pub(crate) scan: f64,
    pub(crate) open: f64,
    pub(crate) browse: f64,
    pub(crate) delete: f64,
    /// Process CPU time (all threads), compll / heap.
    pub(crate) scan_cpu: f64,
    pub(crate) open_cpu: f64,
    pub(crate) browse_cpu: f64,
    pub(crate) delete_cpu: f64,
    /// CPU time of the operation's own thread (compll: the arena's
    /// thread, without the background thread), compll / heap.
    pub(crate) scan_thread: f64,
    pub(crate) open_thread: f64,
    pub(crate) browse_thread: f64,
    pub(crate) delete_thread: f64,
}

/// The ratios of compll's figures `c` to the heap's `h`.
pub(crate) fn ratios(h: &Figures, c: &Figures) -> Ratios {
    let r = |a: f64, b: f64| if a > 0.0 { b / a } else { 0.0 };
    Ratios {
        memory: r(c.mem_bytes as f64, h.mem_bytes as f64),
        memory_with_malloc_overhead: r(c.mem_malloc_bytes as f64, h.mem_malloc_bytes as f64),
        scan: r(h.scan_ms, c.scan_ms),
        open: r(h.open_ms, c.open_ms),
        browse: r(h.browse_ms, c.browse_ms),
        delete: r(h.delete_ms, c.delete_ms),
        scan_cpu: r(h.scan_cpu_ms, c.scan_cpu_ms),
        open_cpu: r(h.open_cpu_ms, c.open_cpu_ms),
        browse_cpu: r(h.browse_cpu_ms, c.browse_cpu_ms),
        delete_cpu: r(h.delete_cpu_ms, c.delete_cpu_ms),
        scan_thread: r(h.scan_thread_ms, c.scan_thread_ms),
        open_thread: r(h.open_thread_ms, c.open_thread_ms),
        browse_thread: r(h.browse_thread_ms, c.browse_thread_ms),
        delete_thread: r(h.delete_thread_ms, c.delete_thread_ms),
    }
}

impl Ratios {
    /// The largest of the four wall-clock time ratios.
    pub(crate) fn worst_slowdown(&self) -> f64 {
        self.scan.max(self.open).max(self.browse).max(self.delete)
    }
}

/// Everything one invocation measured; written by `--json`.
#[derive(Serialize)]
pub(crate) struct Report {
    pub(crate) source: String,
    /// How `mem_malloc_bytes` was obtained: "mallinfo2" or "estimate".
    pub(crate) malloc_source: &'static str,
    pub(crate) entries: usize,
    /// The tree's shape (depth, names per directory, name lengths).
    pub(crate) shape: Shape,
    pub(crate) largest_dir: usize,
    pub(crate) reps: usize,
    pub(crate) block_size: usize,
    pub(crate) uncompressed: usize,
    pub(crate) codec: String,
    pub(crate) group_fields: usize,
    pub(crate) heap: Figures,
    pub(crate) compll: CompllRun,
    pub(crate) ratios: Ratios,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) floor: Option<FloorReport>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) sweep: Vec<SweepRow>,
    /// Spinning processes beside the runs (`--load`).
    pub(crate) load: usize,
    /// The machine's load averages (1, 5, 15 minutes) before the first
    /// run and after the last (`None`: not available here).
    pub(crate) loadavg_start: Option<[f64; 3]>,
    pub(crate) loadavg_end: Option<[f64; 3]>,
}

/// The floor against the heap backend: the least time each operation
/// would take if the codec were all compll added (medians over the runs).
#[derive(Serialize, Clone, Copy, Debug)]
pub(crate) struct FloorReport {
    #[serde(flatten)]
    pub(crate) floor: Floor,
    /// One block decompression: `decompress_ms / blocks`.
    pub(crate) decompress_block_ms: f64,
    /// `open_blocks` decompressions.
    pub(crate) open_ms: f64,
    /// `browse_blocks` decompressions.
    pub(crate) browse_ms: f64,
    /// `compress_ms` / the heap scan.
    pub(crate) scan_vs_heap: f64,
    /// `open_ms` / the heap open.
    pub(crate) open_vs_heap: f64,
    /// `browse_ms` / the heap browse.
    pub(crate) browse_vs_heap: f64,
    /// `decompress_ms` / the heap delete.
    pub(crate) delete_vs_heap: f64,
    /// The two-core floors against the heap scan and delete.
    pub(crate) scan_2core_vs_heap: f64,
    pub(crate) delete_2core_vs_heap: f64,
    /// The one-core floors against the heap's thread CPU time (steadier
    /// than its wall time on a busy machine).
    pub(crate) scan_vs_heap_cpu: f64,
    pub(crate) delete_vs_heap_cpu: f64,
}

/// The floor of the runs (medians of its times), against the heap medians;
/// `None` if no run measured it.
pub(crate) fn floor_report(runs: &[CompllRun], heap: &Figures) -> Option<FloorReport> {
    let floors: Vec<Floor> = runs.iter().filter_map(|r| r.floor).collect();
    let first = *floors.first()?;
    let f = Floor {
        compress_ms: median(floors.iter().map(|f| f.compress_ms).collect()),
        decompress_ms: median(floors.iter().map(|f| f.decompress_ms).collect()),
        compress_2core_ms: median(floors.iter().map(|f| f.compress_2core_ms).collect()),
        decompress_2core_ms: median(floors.iter().map(|f| f.decompress_2core_ms).collect()),
        compress_stored_ms: median(floors.iter().map(|f| f.compress_stored_ms).collect()),
        decompress_stored_ms: median(floors.iter().map(|f| f.decompress_stored_ms).collect()),
        compress_stored_2core_ms: median(
            floors.iter().map(|f| f.compress_stored_2core_ms).collect(),
        ),
        decompress_stored_2core_ms: median(
            floors
                .iter()
                .map(|f| f.decompress_stored_2core_ms)
                .collect(),
        ),
        ..first
    };
    let per = f.decompress_ms / f.blocks.max(1) as f64;
    let x = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
    let (open_ms, browse_ms) = (per * f.open_blocks as f64, per * f.browse_blocks as f64);
    Some(FloorReport {
        floor: f,
        decompress_block_ms: per,
        open_ms,
        browse_ms,
        scan_vs_heap: x(f.compress_ms, heap.scan_ms),
        open_vs_heap: x(open_ms, heap.open_ms),
        browse_vs_heap: x(browse_ms, heap.browse_ms),
        delete_vs_heap: x(f.decompress_ms, heap.delete_ms),
        scan_2core_vs_heap: x(f.compress_2core_ms, heap.scan_ms),
        delete_2core_vs_heap: x(f.decompress_2core_ms, heap.delete_ms),
        scan_vs_heap_cpu: x(f.compress_ms, heap.scan_thread_ms),
        delete_vs_heap_cpu: x(f.decompress_ms, heap.delete_thread_ms),
    })
}

/// Prints the floor, each line beside what compll took.
pub(crate) fn print_floor(r: &FloorReport, heap: &Figures, rat: &Ratios, d: &PerOp, reps: usize) {
    let f = &r.floor;
    println!(
        "floor = the codec alone on the arena's own blocks after the scan ({} blocks, {:.2} MiB -> {:.2} MiB; Arena::block_images, cpu time of one thread, median of {reps}; against the heap's wall times):",
        f.blocks,
        mib(f.image_bytes as i64),
        mib(f.compressed_bytes as i64)
    );
    println!(
        "floor: compressing the scan's {} blocks once = {:.1} ms = {:.2}x the heap scan ({:.1} ms; one thread's work: the background compressor can take part of it off the scan; compll took {:.2}x)",
        f.blocks, f.compress_ms, r.scan_vs_heap, heap.scan_ms, rat.scan
    );
    println!(
        "floor: decompressing all {} blocks once (delete) = {:.1} ms = {:.2}x the heap delete ({:.1} ms; compll took {:.2}x)",
        f.blocks, f.decompress_ms, r.delete_vs_heap, heap.delete_ms, rat.delete
    );
    println!(
        "floor on 2 cores (the same codec work split over two threads, blocks dealt longest first to the less busy one): scan {:.1} ms = {:.2}x the heap scan, delete {:.1} ms = {:.2}x the heap delete",
        f.compress_2core_ms, r.scan_2core_vs_heap, f.decompress_2core_ms, r.delete_2core_vs_heap
    );
    println!(
        "floor against the heap's cpu time (scan {:.1} ms, delete {:.1} ms): one core scan {:.2}x, delete {:.2}x; two cores scan {:.2}x, delete {:.2}x; compll's own thread took scan {:.2}x, delete {:.2}x",
        heap.scan_thread_ms,
        heap.delete_thread_ms,
        r.scan_vs_heap_cpu,
        r.delete_vs_heap_cpu,
        f.compress_2core_ms / heap.scan_thread_ms.max(1e-9),
        f.decompress_2core_ms / heap.delete_thread_ms.max(1e-9),
        rat.scan_thread,
        rat.delete_thread
    );
    let (hs, hd) = (
        heap.scan_thread_ms.max(1e-9),
        heap.delete_thread_ms.max(1e-9),
    );
    println!(
        "floor as stored ({} of {} blocks in lz4 form, as the arena chose; against the heap's cpu time): compressing once {:.1} ms = {:.2}x on one core, {:.1} ms = {:.2}x on two; decompressing once {:.1} ms = {:.2}x on one core, {:.1} ms = {:.2}x on two",
        f.fast_blocks,
        f.blocks,
        f.compress_stored_ms,
        f.compress_stored_ms / hs,
        f.compress_stored_2core_ms,
        f.compress_stored_2core_ms / hs,
        f.decompress_stored_ms,
        f.decompress_stored_ms / hd,
        f.decompress_stored_2core_ms,
        f.decompress_stored_2core_ms / hd
    );
    println!(
        "floor: open reads nodes in {} distinct blocks x one decompression ({:.4} ms) = {:.2} ms = {:.2}x the heap open ({:.2} ms; compll took {:.2}x with {} decompressions)",
        f.open_blocks, r.decompress_block_ms, r.open_ms, r.open_vs_heap, heap.open_ms, rat.open, d.open
    );
    println!(
        "floor: browse shows rows from {} distinct blocks x one decompression = {:.2} ms = {:.2}x the heap browse ({:.2} ms; compll took {:.2}x with {} decompressions)",
        f.browse_blocks, r.browse_ms, r.browse_vs_heap, heap.browse_ms, rat.browse, d.browse
    );
}

/// Bytes as MiB.
pub(crate) fn mib(b: i64) -> f64 {
    b as f64 / (1024.0 * 1024.0)
}

/// Prints the figures of both backends, their ratios, compll's own counts
/// and the floor (everything but the sweep).
pub(crate) fn print_summary(r: &Report, args: &Args) {
    let (source, largest_dir, reps) = (&r.source, r.largest_dir, r.reps);
    let (heap, compll, rat) = (&r.heap, &r.compll, &r.ratios);
    println!(
        "compll-du: {} entries ({source}), largest directory {largest_dir} entries, median of {reps}",
        r.entries
    );
    println!("shape: {}", r.shape);
    let la = |l: Option<[f64; 3]>| {
        l.map_or("unknown".to_string(), |l| {
            format!("{:.2} / {:.2} / {:.2}", l[0], l[1], l[2])
        })
    };
    println!(
        "load: {} spinning processes beside the runs (--load); machine load average (1 / 5 / 15 min) {} at the start, {} at the end",
        r.load,
        la(r.loadavg_start),
        la(r.loadavg_end)
    );
    println!(
        "config: block {} B, {} uncompressed, codec {}, {} node bytes grouped, {} blocks may wait for the background compressor (its thread runs from {} blocks), {} read ahead",
        args.block_size, args.uncompressed, args.codec, args.group_fields, args.background, args.background_from, args.readahead
    );
    println!("times: wall clock (what the ratios and aims use); cpu = CPU time of the whole process, all threads; thread = CPU time of the arena's own thread (the critical path while the background thread keeps up); other = cpu - thread (the background thread)");
    println!(
        "memory after the scan: counted = bytes requested through the Rust allocator (+ zstd's context sizes); {}",
        malloc_meter::DESCRIPTION
    );
    println!(
        "{:<10} {:>10} {:>10} {:>10} {:>10} {:>12} {:>15}",
        "backend",
        "scan ms",
        "open ms",
        "browse ms",
        "delete ms",
        "counted MiB",
        if malloc_meter::SOURCE == "mallinfo2" {
            "mallinfo2 MiB"
        } else {
            "malloc est MiB"
        }
    );
    for (name, f) in [("heap", heap), ("compll", &compll.figures)] {
        println!(
            "{name:<10} {:>10.1} {:>10.2} {:>10.2} {:>10.1} {:>12.2} {:>15.2}",
            f.scan_ms,
            f.open_ms,
            f.browse_ms,
            f.delete_ms,
            mib(f.mem_bytes),
            mib(f.mem_malloc_bytes)
        );
    }
    for (name, f) in [("heap cpu", heap), ("compll cpu", &compll.figures)] {
        println!(
            "{name:<10} {:>10.1} {:>10.2} {:>10.2} {:>10.1}",
            f.scan_cpu_ms, f.open_cpu_ms, f.browse_cpu_ms, f.delete_cpu_ms,
        );
    }
    let c = &compll.figures;
    println!(
        "{:<10} {:>10.1} {:>10.2} {:>10.2} {:>10.1}",
        "compll thr", c.scan_thread_ms, c.open_thread_ms, c.browse_thread_ms, c.delete_thread_ms,
    );
    println!(
        "{:<10} {:>10.1} {:>10.2} {:>10.2} {:>10.1}",
        "compll oth",
        c.scan_cpu_ms - c.scan_thread_ms,
        c.open_cpu_ms - c.open_thread_ms,
        c.browse_cpu_ms - c.browse_thread_ms,
        c.delete_cpu_ms - c.delete_thread_ms,
    );
    println!(
        "{:<10} {:>9.2}x {:>9.2}x {:>9.2}x {:>9.2}x {:>11.2}x {:>14.2}x  (times: compll/heap, memory: heap/compll)",
        "ratio",
        rat.scan,
        rat.open,
        rat.browse,
        rat.delete,
        rat.memory,
        rat.memory_with_malloc_overhead
    );
    println!(
        "{:<10} {:>9.2}x {:>9.2}x {:>9.2}x {:>9.2}x  (process cpu time: compll/heap)",
        "ratio cpu", rat.scan_cpu, rat.open_cpu, rat.browse_cpu, rat.delete_cpu
    );
    println!(
        "{:<10} {:>9.2}x {:>9.2}x {:>9.2}x {:>9.2}x  (cpu time of the arena's own thread: compll/heap)",
        "ratio thr", rat.scan_thread, rat.open_thread, rat.browse_thread, rat.delete_thread
    );
    println!(
        "compll after scan: compressed {:.2} MiB, uncompressed {:.2} MiB, overhead {:.2} MiB, codec contexts {:.2} MiB (arena's own count {:.2} MiB of {:.2} MiB measured); {} compressions, {} decompressions, hit rate {:.3}; {} of {} blocks in lz4 form",
        mib(compll.compressed_bytes as i64),
        mib(compll.uncompressed_bytes as i64),
        mib(compll.overhead_bytes as i64),
        mib(compll.codec_context_bytes as i64),
        mib((compll.compressed_bytes + compll.uncompressed_bytes + compll.overhead_bytes + compll.codec_context_bytes) as i64),
        mib(compll.figures.mem_bytes),
        compll.compressions,
        compll.decompressions,
        compll.hit_rate,
        compll.fast_blocks,
        compll.blocks
    );
    println!(
        "compll background thread: running after the scan {}, started {} times; {} jobs queued for it done by the arena's thread (it had not started on them)",
        compll.background_running, compll.background_starts, compll.taken_over
    );
    let d = compll.decompressions_by_operation;
    let a = compll.decompressed_ahead_by_operation;
    println!(
        "compll decompressions by operation: scan {}, open {}, browse {}, delete {} (of which read ahead on the other core: {}, {}, {}, {})",
        d.scan, d.open, d.browse, d.delete, a.scan, a.open, a.browse, a.delete
    );
    println!(
        "compll codec contexts: {:.3} MiB after the scan, {:.3} MiB after delete (the background thread's decompression context is created on its first read-ahead)",
        mib(compll.codec_context_bytes as i64),
        mib(compll.codec_context_bytes_at_end as i64)
    );
    let u = compll.uncompressed_after_operation;
    println!(
        "compll uncompressed blocks held at the end of each operation (cache + waiting for the compressor): scan {:.2} MiB, open {:.2} MiB, browse {:.2} MiB, delete {:.2} MiB",
        mib(u.scan as i64),
        mib(u.open as i64),
        mib(u.browse as i64),
        mib(u.delete as i64)
    );
    if let Some(f) = &r.floor {
        print_floor(f, heap, rat, &d, reps);
    }
}

/// Writes the report as JSON to `to` ("-": standard output).
pub(crate) fn write_json(r: &Report, to: &str) -> Result<(), String> {
    let text = serde_json::to_string_pretty(r).map_err(|e| e.to_string())?;
    if to == "-" {
        println!("{text}");
    } else {
        std::fs::write(to, text + "\n").map_err(|e| e.to_string())?;
    }
    Ok(())
}
