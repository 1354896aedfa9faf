//! The sweep: compll's figures over block size x uncompressed blocks x
//! codec x grouping, each against the heap medians, and the best rows.

use serde::Serialize;

use crate::cli::{config_for, Args};
use crate::entries::Entry;
use crate::measure::malloc_meter;
use crate::report::{floor_report, median_figures, mib, ratios, Ratios};
use crate::runs::{run_compll, CompllRun};
use crate::store::compll::F_NAME;
use crate::workload::Figures;

/// One configuration of the sweep.
#[derive(Serialize, Clone)]
pub(crate) struct SweepRow {
    pub(crate) block_size: usize,
    pub(crate) uncompressed: usize,
    pub(crate) codec: String,
    pub(crate) group_fields: usize,
    pub(crate) mem_bytes: i64,
    pub(crate) mem_malloc_bytes: i64,
    pub(crate) ratios: Ratios,
    /// [`crate::report::FloorReport::scan_vs_heap`] for this configuration.
    pub(crate) floor_scan_vs_heap: f64,
    /// [`crate::report::FloorReport::delete_vs_heap`] for this configuration.
    pub(crate) floor_delete_vs_heap: f64,
}

/// Runs and prints the sweep over the configurations `args` name (or the
/// defaults), `reps` runs each; `heap` holds the heap medians.
pub(crate) fn sweep(
    args: &Args,
    entries: &[Entry],
    heap: &Figures,
    reps: usize,
) -> Result<Vec<SweepRow>, String> {
    let mut sweep = Vec::new();
    let (mut blocks, mut uncs, mut codecs): (&[usize], &[usize], &[&str]) = if args.quick {
        (
            &[8192, 32768],
            &[4, 10],
            &["lz4", "zstd-1", "zlib-5", "zstd-3-dict"],
        )
    } else {
        (
            &[4096, 16384, 32768, 65536],
            &[4, 10, 32],
            &["lz4", "zstd-1", "zstd-3", "zlib-5", "zlib-9", "zstd-3-dict"],
        )
    };
    // Whole nodes, and the node's fixed fields grouped by column.
    let mut groups: &[usize] = &[0, F_NAME];
    let named: Vec<&str> = args.sweep_codecs.iter().map(String::as_str).collect();
    if !args.sweep_blocks.is_empty() {
        blocks = &args.sweep_blocks;
    }
    if !args.sweep_uncompressed.is_empty() {
        uncs = &args.sweep_uncompressed;
    }
    if !named.is_empty() {
        codecs = &named;
    }
    if !args.sweep_groups.is_empty() {
        groups = &args.sweep_groups;
    }
    println!();
    println!("sweep (memory = heap / compll, counted and by {}; times = compll / heap; floors = the codec alone compressing / decompressing every block once, against the heap scan / delete; medians of {reps}, against the heap medians above)", malloc_meter::SOURCE);
    println!(
        "{:>8} {:>6} {:<12} {:>5} {:>9} {:>9} {:>7} {:>8} {:>7} {:>7} {:>7} {:>7} {:>8} {:>8}",
        "block",
        "uncomp",
        "codec",
        "group",
        "mem MiB",
        "malloc MiB",
        "mem x",
        "malloc x",
        "scan",
        "open",
        "browse",
        "delete",
        "fl.scan",
        "fl.del"
    );
    for &b in blocks {
        for &u in uncs {
            for (&c, &g) in codecs
                .iter()
                .flat_map(|c| groups.iter().map(move |g| (c, g)))
            {
                let cfg = config_for(args, b, u, c, g)?;
                let runs: Vec<CompllRun> =
                    (0..reps).map(|_| run_compll(entries, &cfg, true)).collect();
                let f = median_figures(&runs.iter().map(|r| r.figures).collect::<Vec<_>>());
                let rt = ratios(heap, &f);
                let fl = floor_report(&runs, heap).expect("floor measured");
                println!(
                    "{b:>8} {u:>6} {c:<12} {g:>5} {:>9.2} {:>9.2} {:>7.2} {:>8.2} {:>7.2} {:>7.2} {:>7.2} {:>7.2} {:>8.2} {:>8.2}",
                    mib(f.mem_bytes),
                    mib(f.mem_malloc_bytes),
                    rt.memory,
                    rt.memory_with_malloc_overhead,
                    rt.scan,
                    rt.open,
                    rt.browse,
                    rt.delete,
                    fl.scan_vs_heap,
                    fl.delete_vs_heap
                );
                sweep.push(SweepRow {
                    block_size: b,
                    uncompressed: u,
                    codec: c.to_string(),
                    group_fields: g,
                    mem_bytes: f.mem_bytes,
                    mem_malloc_bytes: f.mem_malloc_bytes,
                    ratios: rt,
                    floor_scan_vs_heap: fl.scan_vs_heap,
                    floor_delete_vs_heap: fl.delete_vs_heap,
                });
            }
        }
    }
    let show = |what: &str, r: &SweepRow| {
        println!(
            "{what}: block {} uncompressed {} {} group {}: {:.2}x lower counted, {:.2}x by {}, worst slowdown {:.2}x",
            r.block_size,
            r.uncompressed,
            r.codec,
            r.group_fields,
            r.ratios.memory,
            r.ratios.memory_with_malloc_overhead,
            malloc_meter::SOURCE,
            r.ratios.worst_slowdown()
        );
    };
    let by_counted = |a: &&SweepRow, b: &&SweepRow| a.ratios.memory.total_cmp(&b.ratios.memory);
    let by_malloc = |a: &&SweepRow, b: &&SweepRow| {
        a.ratios
            .memory_with_malloc_overhead
            .total_cmp(&b.ratios.memory_with_malloc_overhead)
    };
    if let Some(best) = sweep.iter().max_by(by_counted) {
        show("best memory (counted)", best);
    }
    if let Some(best) = sweep.iter().max_by(by_malloc) {
        show(&format!("best memory ({})", malloc_meter::SOURCE), best);
    }
    if let Some(best) = sweep
        .iter()
        .filter(|r| r.ratios.worst_slowdown() <= 4.0)
        .max_by(by_counted)
    {
        show(
            "best memory (counted) with every operation at most 4x slower (wall)",
            best,
        );
    }
    Ok(sweep)
}
