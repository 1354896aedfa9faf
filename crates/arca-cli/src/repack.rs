//! `arca repack`: write a compact copy of a file, with a progress bar.

use std::path::Path;

use indicatif::{ProgressBar, ProgressStyle};

use crate::error::{CliError, Context};

/// Copy `input` to `output` without free space. The bar shows bytes of
/// dataset elements copied; it is hidden when stderr is not a terminal.
pub fn run(input: &Path, output: &Path, quiet: bool) -> Result<(), CliError> {
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        let b = ProgressBar::new(0);
        b.set_style(
            ProgressStyle::with_template(
                "{spinner} repacking [{bar:40}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        b
    };
    let r = arca::repack(input, output, &mut |done, total| {
        bar.set_length(total);
        bar.set_position(done);
    });
    bar.finish_and_clear();
    r.in_file(input)
}
