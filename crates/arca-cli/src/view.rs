//! `arca view`: serve a file to h5web's viewer in the browser, through
//! h5grove's HTTP API implemented over arca's own reading path.
//!
//! `dtype` maps types, `slice` parses selections, `entity` resolves paths
//! and links, `array` reads and encodes values, `stats` sums them up,
//! `api` answers the endpoints, `server` speaks HTTP (token, `Host`,
//! the app's files). See docs/VIEW.md.

mod api;
mod array;
mod dtype;
mod entity;
mod error;
mod server;
mod slice;
mod stats;

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub use server::{Options, Server};

use crate::error::CliError;

/// The viewer app's files: `dir` when given, else `$ARCA_VIEW_ASSETS`,
/// else `viewer/` in the Python package `arca` of the interpreter
/// `arca import` uses. None when none of them holds an `index.html`.
pub fn find_assets(dir: Option<&Path>, python: Option<&OsString>) -> Option<PathBuf> {
    let has_app = |p: &Path| p.join("index.html").is_file();
    if let Some(d) = dir {
        return Some(d.to_path_buf());
    }
    if let Some(d) = std::env::var_os("ARCA_VIEW_ASSETS").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d));
    }
    let out = Command::new(crate::interop::python(python))
        .args([
            "-c",
            "import os, arca; print(os.path.join(os.path.dirname(arca.__file__), 'viewer'))",
        ])
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let p = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    (out.status.success() && has_app(&p)).then_some(p)
}

/// Ask the desktop to open `url` in the browser; false if it could not.
fn open_browser(url: &str) -> bool {
    let mut cmd = if cfg!(target_os = "macos") {
        Command::new("open")
    } else if cfg!(windows) {
        let mut c = Command::new("cmd");
        c.args(["/c", "start", ""]);
        c
    } else {
        Command::new("xdg-open")
    };
    cmd.arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .is_ok()
}

/// `arca view`: serve `file` until the process is stopped.
pub fn run(
    file: &Path,
    opts: &Options,
    browser: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let server = Server::start(file, opts)?;
    if opts.assets.is_none() {
        eprintln!(
            "arca view: the viewer app's files were not found (pass --assets DIR); \
             the API still answers"
        );
    }
    writeln!(
        out,
        "arca view: serving {} (Ctrl-C to stop)",
        file.display()
    )?;
    writeln!(out, "{}", server.url())?;
    out.flush()?;
    if browser && !open_browser(server.url()) {
        eprintln!("arca view: could not start a browser; open the address above");
    }
    server.wait(None);
    Ok(())
}
