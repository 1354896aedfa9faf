//! `arca repack`: write a compact copy of a file, with a progress bar.

use std::path::Path;

use crate::error::{CliError, Context};
use crate::progress::{bytes_bar, follow};

/// Copy `input` to `output` without free space (`cloud`: metadata first).
/// The bar shows bytes of dataset elements copied; it is hidden when
/// stderr is not a terminal.
pub fn run(input: &Path, output: &Path, cloud: bool, quiet: bool) -> Result<(), CliError> {
    let bar = bytes_bar("repacking", quiet);
    let opts = arca::RepackOptions::new().cloud(cloud);
    let r = arca::repack_with(input, output, &opts, &mut follow(&bar));
    bar.finish_and_clear();
    r.in_file(input)
}
