//! The `arca` command inside the extension, so the package's `arca` entry
//! point (`arca._cli`) runs the same command as the Rust binary.

use std::ffi::OsString;

use pyo3::prelude::*;

/// Run the `arca` command with `argv` (program name first) and return its
/// exit status; `python` is the interpreter `arca import`/`export` use
/// unless `ARCA_PYTHON` is set. The GIL is released while it runs.
#[pyfunction]
pub(crate) fn cli_main(py: Python<'_>, argv: Vec<OsString>, python: Option<OsString>) -> u8 {
    py.detach(|| arca_cli::main_with(argv, python))
}
