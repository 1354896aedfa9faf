//! The table of several reports (`compll-du --table A.json B.json ..`):
//! one row per tree with every operation's wall-clock and CPU-time ratio
//! and the memory ratios, the load beside the runs (spinning processes,
//! the machine's 1-minute load average at the start and end), then the
//! trees' shapes, as Markdown.

use std::path::PathBuf;

use serde_json::Value;

/// A number at `path` in a report (0 when missing).
fn num(v: &Value, path: &[&str]) -> f64 {
    path.iter()
        .try_fold(v, |v, k| v.get(k))
        .and_then(Value::as_f64)
        .unwrap_or(0.0)
}

/// The tree's name: the report's file name without `.json`.
fn name(p: &std::path::Path) -> String {
    p.file_stem()
        .map_or_else(|| p.display().to_string(), |s| s.to_string_lossy().into())
}

/// Prints the table of the reports in `files`.
pub(crate) fn print_table(files: &[PathBuf]) -> Result<(), String> {
    let mut reports = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(f).map_err(|e| format!("{}: {e}", f.display()))?;
        let v: Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", f.display()))?;
        reports.push((name(f), v));
    }
    println!("Each operation: wall-clock ratio (process CPU ratio / the arena's own thread's CPU ratio), compll / heap.");
    println!();
    println!("| tree | entries | reps | memory × (counted / mallinfo2) | scan | open | browse | delete | worst | --load / load avg |");
    println!("| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- |");
    for (n, v) in &reports {
        let r = |k: &str| num(v, &["ratios", k]);
        let op = |k: &str| {
            format!(
                "{:.2}× ({:.2}× / {:.2}×)",
                r(k),
                r(&format!("{k}_cpu")),
                r(&format!("{k}_thread"))
            )
        };
        let worst = ["scan", "open", "browse", "delete"]
            .iter()
            .map(|k| r(k))
            .fold(0.0, f64::max);
        let la = |k: &str| {
            v.get(k)
                .and_then(|l| l.get(0))
                .and_then(Value::as_f64)
                .map_or("?".to_string(), |x| format!("{x:.1}"))
        };
        println!(
            "| {n} | {} | {} | {:.2} / {:.2} | {} | {} | {} | {} | {:.2}× | {} / {}–{} |",
            num(v, &["entries"]),
            num(v, &["reps"]),
            r("memory"),
            r("memory_with_malloc_overhead"),
            op("scan"),
            op("open"),
            op("browse"),
            op("delete"),
            worst,
            num(v, &["load"]),
            la("loadavg_start"),
            la("loadavg_end")
        );
    }
    println!();
    println!("| tree | heap scan / open / browse / delete ms | compll scan / open / browse / delete ms | compll CPU ms | heap / compll counted MiB |");
    println!("| --- | --- | --- | --- | --- |");
    for (n, v) in &reports {
        let ms = |who: &str| {
            ["scan_ms", "open_ms", "browse_ms", "delete_ms"]
                .iter()
                .map(|k| format!("{:.2}", num(v, &[who, k])))
                .collect::<Vec<_>>()
                .join(" / ")
        };
        let cpu = [
            "scan_cpu_ms",
            "open_cpu_ms",
            "browse_cpu_ms",
            "delete_cpu_ms",
        ]
        .iter()
        .map(|k| format!("{:.2}", num(v, &["compll", k])))
        .collect::<Vec<_>>()
        .join(" / ");
        println!(
            "| {n} | {} | {} | {cpu} | {:.2} / {:.2} |",
            ms("heap"),
            ms("compll"),
            num(v, &["heap", "mem_bytes"]) / 1048576.0,
            num(v, &["compll", "mem_bytes"]) / 1048576.0,
        );
    }
    println!();
    println!("Floors: the codec alone on the arena's blocks after the scan, on one core and split over two, against the heap's wall time (and its CPU time).");
    println!();
    println!("| tree | scan floor 1 core | scan floor 2 cores | delete floor 1 core | delete floor 2 cores | as stored (lz4 blocks): scan / delete, 2 cores | compll thread CPU scan / delete |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (n, v) in &reports {
        let f = |k: &str| num(v, &["floor", k]);
        let h = |k: &str| num(v, &["heap", k]).max(1e-9);
        let both =
            |ms: f64, wall: &str, cpu: &str| format!("{:.2}× ({:.2}×)", ms / h(wall), ms / h(cpu));
        println!(
            "| {n} | {} | {} | {} | {} | ({} of {}) {} / {} | {:.2}× / {:.2}× |",
            both(f("compress_ms"), "scan_ms", "scan_thread_ms"),
            both(f("compress_2core_ms"), "scan_ms", "scan_thread_ms"),
            both(f("decompress_ms"), "delete_ms", "delete_thread_ms"),
            both(f("decompress_2core_ms"), "delete_ms", "delete_thread_ms"),
            f("fast_blocks"),
            f("blocks"),
            both(f("compress_stored_2core_ms"), "scan_ms", "scan_thread_ms"),
            both(
                f("decompress_stored_2core_ms"),
                "delete_ms",
                "delete_thread_ms"
            ),
            num(v, &["ratios", "scan_thread"]),
            num(v, &["ratios", "delete_thread"]),
        );
    }
    println!();
    println!("| tree | directories | depth max / mean | names per directory median / p99 / max | name length mean / p99 | name entropy bits/byte |");
    println!("| --- | ---: | --- | --- | --- | ---: |");
    for (n, v) in &reports {
        let s = |k: &str| num(v, &["shape", k]);
        println!(
            "| {n} | {} | {} / {:.1} | {} / {} / {} | {:.1} / {} | {:.2} |",
            s("dirs"),
            s("max_depth"),
            s("mean_depth"),
            s("names_per_dir_median"),
            s("names_per_dir_p99"),
            s("names_per_dir_max"),
            s("name_len_mean"),
            s("name_len_p99"),
            s("name_entropy_bits")
        );
    }
    Ok(())
}
