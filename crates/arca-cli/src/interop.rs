//! `arca import` and `arca export`: HDF5 and netCDF-4 files in and out.
//!
//! The conversion is the Python package's `arca.interop`, which reads and
//! writes the HDF5 side with the HDF5 library itself (h5py, and hdf5plugin
//! for plugin filters): one implementation, shared with
//! `arca.import_hdf5`/`arca.export_hdf5`. This command runs it with the
//! interpreter named by `ARCA_PYTHON`, else the one whose `arca` entry
//! point started this command, else `python3`, after checking that the
//! interpreter has what the conversion needs.

use std::ffi::OsString;
use std::io::{BufRead, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use indicatif::ProgressBar;

use crate::error::CliError;

/// Which way a conversion goes.
#[derive(Debug, Clone, Copy)]
pub enum Direction {
    /// HDF5 in.
    Import,
    /// HDF5 out.
    Export,
}

/// The interpreter to run: `ARCA_PYTHON`, else `started_by` (the Python
/// that runs the `arca` entry point), else `python3`.
pub(crate) fn python(started_by: Option<&OsString>) -> OsString {
    std::env::var_os("ARCA_PYTHON")
        .filter(|p| !p.is_empty())
        .or_else(|| started_by.cloned())
        .unwrap_or_else(|| "python3".into())
}

/// Convert `src` into `dst`; the exit status is the conversion's (0 done,
/// 1 error, 2 refused by `--strict`).
pub fn run(
    dir: Direction,
    src: &Path,
    dst: &Path,
    strict: bool,
    force: bool,
    quiet: bool,
    started_by: Option<&OsString>,
) -> Result<u8, CliError> {
    let py = python(started_by);
    let shown = Path::new(&py).display();
    let probe = Command::new(&py)
        .args(["-c", "import arca.interop, h5py"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output();
    match probe {
        Err(e) => {
            return Err(CliError::Usage(format!(
                "`arca {}` runs the Python package arca with h5py; could not start {shown}: {e} \
                 (set ARCA_PYTHON to an interpreter that has them)",
                name(dir)
            )))
        }
        Ok(o) if !o.status.success() => {
            let why = String::from_utf8_lossy(&o.stderr);
            let last = why.lines().last().unwrap_or("").trim().to_string();
            return Err(CliError::Usage(format!(
                "`arca {}` runs the Python package arca with h5py, which {shown} cannot import \
                 ({last}); install them (pip install h5py hdf5plugin, and the arca package) or \
                 set ARCA_PYTHON to an interpreter that has them",
                name(dir)
            )));
        }
        Ok(_) => {}
    }
    let mut cmd = Command::new(&py);
    cmd.args(["-m", "arca.interop", name(dir)])
        .arg(src)
        .arg(dst);
    if strict {
        cmd.arg("--strict");
    }
    if force {
        cmd.arg("--force");
    }
    if quiet {
        cmd.arg("--quiet");
    } else {
        // The child reports its progress as marked lines on its stderr;
        // this process draws the bar, as for every long command.
        cmd.arg("--progress-lines").stderr(Stdio::piped());
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| CliError::Usage(format!("could not run {shown} -m arca.interop: {e}")))?;
    if let Some(err) = child.stderr.take() {
        let verb = match dir {
            Direction::Import => "importing",
            Direction::Export => "exporting",
        };
        let bar = crate::progress::bytes_bar(verb, false);
        relay(std::io::BufReader::new(err), &bar, &mut std::io::stderr());
        bar.finish_and_clear();
    }
    let status = child
        .wait()
        .map_err(|e| CliError::Usage(format!("could not run {shown} -m arca.interop: {e}")))?;
    Ok(status.code().unwrap_or(1).clamp(0, 255) as u8)
}

/// The start of a progress line on the child's stderr: `MARK done total`.
const MARK: &str = "\x1earca-progress ";

/// Move `bar` for each progress line of `from` and pass every other line
/// to `to` (above the bar), until `from` ends.
fn relay(from: impl BufRead, bar: &ProgressBar, to: &mut impl Write) {
    for line in from.split(b'\n') {
        let Ok(line) = line else { break };
        let text = String::from_utf8_lossy(&line);
        if let Some((done, total)) = text.strip_prefix(MARK).and_then(parse_progress) {
            bar.set_length(total);
            bar.set_position(done.min(total));
        } else {
            bar.suspend(|| {
                let _ = to.write_all(&line);
                let _ = to.write_all(b"\n");
            });
        }
    }
}

/// `done total` as two numbers.
fn parse_progress(s: &str) -> Option<(u64, u64)> {
    let (a, b) = s.trim().split_once(' ')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

fn name(dir: Direction) -> &'static str {
    match dir {
        Direction::Import => "import",
        Direction::Export => "export",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_lines_move_the_bar_and_the_rest_pass_through() {
        let input = format!("{MARK}10 100\nwarning: something\n{MARK}60 100\n{MARK}bad line\nlast");
        let bar = ProgressBar::hidden();
        let mut out = Vec::new();
        relay(input.as_bytes(), &bar, &mut out);
        assert_eq!(bar.position(), 60);
        assert_eq!(bar.length(), Some(100));
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!("warning: something\n{MARK}bad line\nlast\n")
        );
    }
}
