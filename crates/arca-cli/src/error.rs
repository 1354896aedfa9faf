//! The tool's errors and the exit status each one maps to.

use std::fmt;
use std::path::PathBuf;

/// Exit status for a damaged file or one that is not an arca file.
pub const EXIT_DAMAGED: u8 = 2;
/// Exit status for usage and I/O errors and missing objects.
pub const EXIT_ERROR: u8 = 1;

/// Why a command failed.
#[derive(Debug)]
pub enum CliError {
    /// The library refused: `file` names the file it was working on.
    Arca {
        /// The file.
        file: PathBuf,
        /// What went wrong.
        source: arca::Error,
    },
    /// Damage the tool itself noticed, such as groups nested without end.
    Damaged {
        /// The file.
        file: PathBuf,
        /// What is wrong.
        msg: String,
    },
    /// A bad argument found after parsing (e.g. an existing output file).
    Usage(String),
    /// Writing to stdout failed.
    Output(std::io::Error),
}

impl CliError {
    /// Wrap a library error met while working on `file`.
    pub fn arca(file: impl Into<PathBuf>, source: arca::Error) -> Self {
        CliError::Arca {
            file: file.into(),
            source,
        }
    }

    /// The process exit status for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Arca {
                source: arca::Error::Corrupt { .. },
                ..
            } => EXIT_DAMAGED,
            CliError::Damaged { .. } => EXIT_DAMAGED,
            _ => EXIT_ERROR,
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Arca { file, source } => {
                // One line: the library's Io error carries its cause separately.
                write!(f, "{}: {source}", file.display())
            }
            CliError::Damaged { file, msg } => {
                write!(f, "{}: file is damaged: {msg}", file.display())
            }
            CliError::Usage(m) => f.write_str(m),
            CliError::Output(e) => write!(f, "writing output: {e}"),
        }
    }
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        CliError::Output(e)
    }
}

/// Attach a file name to library results.
pub trait Context<T> {
    /// Map the error to [`CliError::Arca`] for `file`.
    fn in_file(self, file: &std::path::Path) -> Result<T, CliError>;
}

impl<T> Context<T> for arca::Result<T> {
    fn in_file(self, file: &std::path::Path) -> Result<T, CliError> {
        self.map_err(|e| CliError::arca(file, e))
    }
}
