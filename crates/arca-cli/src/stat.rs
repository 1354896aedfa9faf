//! `arca stat`: object counts and where the bytes of a file go, like h5stat.

use std::io::Write;
use std::path::Path;

use arca::Stat;
use serde_json::json;

use crate::error::{CliError, Context};

/// Logical bytes over stored bytes of raw data; `None` when nothing is stored.
pub fn compression_ratio(s: &Stat) -> Option<f64> {
    (s.data_bytes > 0).then(|| s.data_logical_bytes as f64 / s.data_bytes as f64)
}

fn pct(part: u64, whole: u64) -> String {
    if whole == 0 {
        String::new()
    } else {
        format!("{:6.2}%", 100.0 * part as f64 / whole as f64)
    }
}

/// Print the statistics of `file`.
pub fn run(
    file: &Path,
    storage: &[String],
    as_json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let f = crate::target::open_file(file, storage)?;
    let s = f.stat().in_file(file)?;
    let sp = f.space_info().in_file(file)?;
    let ratio = compression_ratio(&s);
    if as_json {
        let v = json!({
            "file": file.display().to_string(),
            "groups": s.groups,
            "datasets": s.datasets,
            "attributes": s.attributes,
            "chunks": s.chunks,
            "file_bytes": s.file_bytes,
            "superblock_bytes": s.superblock_bytes,
            "metadata_bytes": s.metadata_bytes,
            "raw_stored_bytes": s.data_bytes,
            "data_logical_bytes": s.data_logical_bytes,
            "compact_bytes": s.compact_bytes,
            "compression_ratio": ratio,
            "unused_bytes": s.unused_bytes,
            "free_bytes": s.free_bytes,
            "free_sections": s.free_sections,
            "free_space": {
                "sections": sp.sections,
                "free_bytes": sp.free_bytes,
                "largest_section": sp.largest,
                "fragmentation": sp.fragmentation,
                "histogram": sp.histogram.iter().map(|(lo, n, b)| json!({"min_size": lo, "sections": n, "bytes": b})).collect::<Vec<_>>(),
            },
        });
        serde_json::to_writer_pretty(&mut *out, &v).map_err(std::io::Error::from)?;
        writeln!(out)?;
        return Ok(());
    }
    let total = s.file_bytes;
    writeln!(out, "File: {}", file.display())?;
    writeln!(out, "Objects:")?;
    writeln!(out, "  groups                {:>14}", s.groups)?;
    writeln!(out, "  datasets              {:>14}", s.datasets)?;
    writeln!(out, "  attributes            {:>14}", s.attributes)?;
    writeln!(out, "  chunks                {:>14}", s.chunks)?;
    writeln!(out, "Space (bytes):")?;
    for (name, v) in [
        ("superblock", s.superblock_bytes),
        ("metadata", s.metadata_bytes),
        ("raw data (stored)", s.data_bytes),
        ("unused", s.unused_bytes),
    ] {
        writeln!(out, "  {name:<20}  {v:>14}  {}", pct(v, total))?;
    }
    writeln!(out, "  {:<20}  {total:>14}", "file size")?;
    writeln!(out, "Raw data:")?;
    writeln!(out, "  logical bytes         {:>14}", s.data_logical_bytes)?;
    writeln!(out, "  stored bytes          {:>14}", s.data_bytes)?;
    writeln!(out, "  in headers (compact)  {:>14}", s.compact_bytes)?;
    match ratio {
        Some(r) => writeln!(out, "  compression ratio     {r:>14.3}")?,
        None => writeln!(out, "  compression ratio     {:>14}", "-")?,
    }
    writeln!(out, "Free space:")?;
    writeln!(out, "  free sections         {:>14}", sp.sections)?;
    writeln!(out, "  free bytes            {:>14}", sp.free_bytes)?;
    writeln!(out, "  largest section       {:>14}", sp.largest)?;
    writeln!(out, "  fragmentation         {:>14.3}", sp.fragmentation)?;
    if !sp.histogram.is_empty() {
        writeln!(out, "  sections by size:")?;
        for (lo, n, b) in &sp.histogram {
            writeln!(out, "    >= {lo:>12} B  {n:>8} sections  {b:>14} bytes")?;
        }
    }
    Ok(())
}
