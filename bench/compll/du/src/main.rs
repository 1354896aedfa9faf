//! `compll-du`: an ncdu-like disk-usage tree built twice, once from plain
//! heap nodes and once inside a compll arena, timing the four operations of
//! the original study (scan, open, browse, delete) and measuring the memory
//! each backend really holds on the heap: counted through the Rust
//! allocator and, on Linux with glibc, as malloc itself reports it.
//! Times are wall clock, with the whole process's CPU time beside (the
//! arena may compress on a second thread). `bench/compll/run.sh` builds
//! and runs it; docs/COMPLL.md describes the workload and the figures.
//!
//! ```text
//! compll-du [--generate N | --scan DIR | --import FILE] [--quick] [--json FILE]
//!           [--block-size B] [--uncompressed N] [--codec NAME] [--group-fields N]
//!           [--node-cache B] [--background N] [--background-from N] [--readahead N]
//!           [--cache-growth N] [--reps N] [--load N]
//!           [--shape] [--table REPORT.json..]
//!           [--sweep [--sweep-blocks B,..] [--sweep-uncompressed N,..]
//!                    [--sweep-codecs NAME,..] [--sweep-groups N,..]]
//! ```

mod cli;
mod entries;
mod load;
mod measure;
mod report;
mod runs;
mod store;
mod sweep;
mod table;
mod workload;

use clap::Parser;
use compll::Arena;

use cli::{config_for, Args};
use entries::{export_ncdu, largest_dir, shape};
use measure::malloc_meter;
use report::{floor_report, median_figures, print_summary, ratios, write_json, Report};
use runs::{run_compll, run_heap, CompllRun};
use workload::Figures;

fn main() {
    let args = Args::parse();
    if let Some(seed) = args.spin {
        load::spin(seed);
    }
    if let Err(e) = real_main(args) {
        eprintln!("compll-du: {e}");
        std::process::exit(1);
    }
}

fn real_main(args: Args) -> Result<(), String> {
    if !args.table.is_empty() {
        return table::print_table(&args.table);
    }
    let (entries, source) = entries::from_args(&args)?;
    if let Some(p) = &args.export {
        export_ncdu(&entries, p).map_err(|e| e.to_string())?;
        println!("wrote {} entries to {}", entries.len(), p.display());
        return Ok(());
    }
    if args.shape {
        println!("{source}: {}", shape(&entries));
        return Ok(());
    }
    if entries.is_empty() {
        return Err("no entries".into());
    }
    let largest_dir = largest_dir(&entries);
    let cfg = config_for(
        &args,
        args.block_size,
        args.uncompressed,
        &args.codec,
        args.group_fields,
    )?;
    // Checked without starting a compressor thread (see below).
    Arena::new(cfg.clone().background_compression(0)).map_err(|e| e.to_string())?;
    if let Some(n) = args.profile {
        for _ in 0..n {
            let r = run_compll(&entries, &cfg, false);
            let (f, d, a) = (
                r.figures,
                r.decompressions_by_operation,
                r.decompressed_ahead_by_operation,
            );
            println!(
                "wall scan {:.1} open {:.2} browse {:.2} delete {:.1} | thread scan {:.1} open {:.2} browse {:.2} delete {:.1} | cpu scan {:.1} delete {:.1} ms | loads {}/{}/{}/{} ahead {}/{}/{}/{} | {:.2} MiB, {} lz4, ctx {:.2}",
                f.scan_ms, f.open_ms, f.browse_ms, f.delete_ms,
                f.scan_thread_ms, f.open_thread_ms, f.browse_thread_ms, f.delete_thread_ms,
                f.scan_cpu_ms, f.delete_cpu_ms,
                d.scan, d.open, d.browse, d.delete, a.scan, a.open, a.browse, a.delete,
                f.mem_bytes as f64 / 1048576.0, r.fast_blocks, r.codec_context_bytes as f64 / 1048576.0
            );
        }
        return Ok(());
    }
    let reps = args.reps.max(1);
    let loadavg_start = load::loadavg();
    let spinning = load::Load::start(args.load, args.seed)?;

    // One unmeasured run of each backend first: the first run in a process
    // pays for faulting in the pages malloc takes from the kernel (the heap
    // backend's first scan took about twice as long as the later ones),
    // which would otherwise weigh on the heap figures of a single-rep run.
    //
    // Every heap run comes before the first compll run: an arena with a
    // background compressor starts a thread, and from then on glibc's
    // malloc takes its multi-threaded (locking) paths for the rest of the
    // process, which made the heap backend's scan some 40 % slower when
    // the runs alternated. The heap figures are those of a program that
    // never starts a thread.
    run_heap(&entries);
    let heap_runs: Vec<Figures> = (0..reps).map(|_| run_heap(&entries)).collect();
    run_compll(&entries, &cfg, false);
    let compll_runs: Vec<CompllRun> = (0..reps)
        .map(|_| run_compll(&entries, &cfg, true))
        .collect();
    let loadavg_end = load::loadavg();
    let heap = median_figures(&heap_runs);
    let mut compll = compll_runs[0].clone();
    compll.figures = median_figures(&compll_runs.iter().map(|r| r.figures).collect::<Vec<_>>());
    let rat = ratios(&heap, &compll.figures);
    let floor = floor_report(&compll_runs, &heap);

    let mut report = Report {
        source,
        malloc_source: malloc_meter::SOURCE,
        entries: entries.len(),
        shape: shape(&entries),
        largest_dir,
        reps,
        block_size: args.block_size,
        uncompressed: args.uncompressed,
        codec: args.codec.clone(),
        group_fields: args.group_fields,
        heap,
        compll,
        ratios: rat,
        floor,
        sweep: Vec::new(),
        load: spinning.len(),
        loadavg_start,
        loadavg_end,
    };
    print_summary(&report, &args);
    if args.sweep {
        report.sweep = sweep::sweep(&args, &entries, &report.heap, reps)?;
    }
    drop(spinning);
    if let Some(j) = &args.json {
        write_json(&report, j)?;
    }
    Ok(())
}
