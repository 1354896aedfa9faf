//! `arca check`: verify every structure and chunk of a file.

use std::io::Write;
use std::path::Path;

use serde_json::json;

use crate::error::CliError;

/// Check `file`. Success prints a summary (unless `quiet`); damage is an
/// error naming the structure and offset, exit status 2.
pub fn run(
    file: &Path,
    storage: &[String],
    quiet: bool,
    as_json: bool,
    out: &mut dyn Write,
) -> Result<u8, CliError> {
    // The bar shows bytes verified of the file's size (hidden with
    // --quiet or --json, and when stderr is not a terminal).
    let bar = crate::progress::bytes_bar("checking", quiet || as_json);
    let r = match crate::target::open_file(file, storage) {
        Ok(f) => f
            .check_with_progress(&mut crate::progress::follow(&bar))
            .map(|s| (s, f.recovered())),
        // A usage error, or an open that failed: reported as before.
        Err(CliError::Arca { source, .. }) => Err(source),
        Err(e) => return Err(e),
    };
    bar.finish_and_clear();
    match r {
        Ok((s, recovered)) => {
            if as_json {
                let v = json!({
                    "file": file.display().to_string(),
                    "ok": true,
                    "groups": s.groups,
                    "datasets": s.datasets,
                    "attributes": s.attributes,
                    "chunks": s.chunks,
                    "file_bytes": s.file_bytes,
                    "recovered": recovered,
                });
                serde_json::to_writer_pretty(&mut *out, &v).map_err(std::io::Error::from)?;
                writeln!(out)?;
            } else if !quiet {
                writeln!(
                    out,
                    "ok: {}: {} groups, {} datasets, {} attributes, {} chunks, {} bytes verified{}",
                    file.display(),
                    s.groups,
                    s.datasets,
                    s.attributes,
                    s.chunks,
                    s.file_bytes,
                    if recovered {
                        " (after rolling back a transaction a crash left unfinished)"
                    } else {
                        ""
                    }
                )?;
            }
            Ok(0)
        }
        Err(arca::Error::Corrupt {
            what,
            offset,
            detail,
        }) => {
            if as_json {
                let v = json!({
                    "file": file.display().to_string(),
                    "ok": false,
                    "structure": what,
                    "offset": offset,
                    "detail": detail,
                });
                serde_json::to_writer_pretty(&mut *out, &v).map_err(std::io::Error::from)?;
                writeln!(out)?;
            }
            Err(CliError::arca(
                file,
                arca::Error::Corrupt {
                    what,
                    offset,
                    detail,
                },
            ))
        }
        Err(e) => Err(CliError::arca(file, e)),
    }
}
