//! The `arca` binary: see the library's `main_with` for the command.

use std::process::ExitCode;

fn main() -> ExitCode {
    ExitCode::from(arca_cli::main_with(std::env::args_os(), None))
}
