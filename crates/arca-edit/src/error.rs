//! Errors and the exit codes they map to.

use std::fmt;

use crate::lexer::Pos;
use crate::Atomic;

/// Exit code: success.
pub const EXIT_OK: i32 = 0;
/// Exit code: bad command line, unreadable command file, file not found.
pub const EXIT_USAGE: i32 = 1;
/// Exit code: the commands do not parse; the file was not opened.
pub const EXIT_PARSE: i32 = 2;
/// Exit code: a command cannot be applied (no such object, attribute
/// exists, DATA does not fit the type or shape).
pub const EXIT_SEMANTIC: i32 = 3;
/// Exit code: the file is damaged, locked by another process, or needs
/// recovery this process cannot do.
pub const EXIT_DAMAGED: i32 = 4;

/// A syntax error, with the line and column of the offending token and the
/// source line it is on. `Display` prints the line with a caret under the
/// column.
///
/// ```
/// let e = arca_edit::parse("CREATE /a {H5T_STD_I8LE DATA {1}}").unwrap_err();
/// assert_eq!((e.line, e.column), (1, 34));
/// assert!(e.to_string().contains("expected ';'"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line of the error.
    pub line: usize,
    /// 1-based column (in characters) of the error.
    pub column: usize,
    /// What was wrong.
    pub message: String,
    /// The whole source line the error is on, without its newline.
    pub source_line: String,
}

impl ParseError {
    pub(crate) fn at(src: &str, pos: Pos, message: impl Into<String>) -> Self {
        let source_line = src
            .lines()
            .nth(pos.line - 1)
            .unwrap_or("")
            .trim_end_matches('\r')
            .to_string();
        ParseError {
            line: pos.line,
            column: pos.column,
            message: message.into(),
            source_line,
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "line {}, column {}: {}",
            self.line, self.column, self.message
        )?;
        writeln!(f, "    {}", self.source_line)?;
        // Keep tabs so the caret lines up under tab-indented text.
        let pad: String = self
            .source_line
            .chars()
            .take(self.column.saturating_sub(1))
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        write!(f, "    {pad}^")
    }
}

impl std::error::Error for ParseError {}

/// Why a command could not be applied, and where it stands in the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandError {
    /// 1-based number of the failing command in the session.
    pub index: usize,
    /// Line the command starts on.
    pub line: usize,
    /// The command's source text, up to and including its `;`.
    pub text: String,
    /// What was wrong.
    pub message: String,
    /// How many commands before it are in the file now (0 for `yes`).
    pub kept: usize,
    /// The level the session ran at.
    pub atomic: Atomic,
}

impl fmt::Display for CommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "command {} (line {}) failed: {}",
            self.index, self.line, self.message
        )?;
        writeln!(f, "    {}", self.text)?;
        match self.atomic {
            Atomic::Yes => write!(f, "no command was applied; the file is unchanged"),
            Atomic::Inc | Atomic::No if self.kept == 0 => {
                write!(f, "no earlier command was applied")
            }
            Atomic::Inc | Atomic::No if self.kept == 1 => write!(
                f,
                "command 1 was applied and is kept; fix command {} and run it and the rest again",
                self.index
            ),
            Atomic::Inc | Atomic::No => write!(
                f,
                "commands 1-{} were applied and are kept; fix command {} and run it and the rest again",
                self.kept, self.index
            ),
        }
    }
}

/// Everything `arca edit` can fail with; [`EditError::exit_code`] gives the
/// process exit status.
///
/// ```
/// use arca_edit::{run, Atomic, EditError};
/// let e = run("/no/such/file.arca", "DELETE /x;", Atomic::Yes).unwrap_err();
/// assert!(matches!(e, EditError::Io(_)));
/// assert_eq!(e.exit_code(), 1);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditError {
    /// Bad arguments (exit 1).
    Usage(String),
    /// The file or command file could not be read or written (exit 1).
    Io(String),
    /// The commands do not parse (exit 2); the file was not touched.
    Parse(ParseError),
    /// A command cannot be applied (exit 3).
    Command(CommandError),
    /// The file is damaged, locked, or needs recovery (exit 4).
    Damaged(String),
}

impl EditError {
    /// The process exit status for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            EditError::Usage(_) | EditError::Io(_) => EXIT_USAGE,
            EditError::Parse(_) => EXIT_PARSE,
            EditError::Command(_) => EXIT_SEMANTIC,
            EditError::Damaged(_) => EXIT_DAMAGED,
        }
    }

    /// Classify an error from the storage layer met outside any command.
    pub(crate) fn from_arca(context: &str, e: arca::Error) -> Self {
        match e {
            arca::Error::Io { .. } => EditError::Io(format!("{context}: {e}")),
            _ => EditError::Damaged(format!("{context}: {e}")),
        }
    }
}

impl fmt::Display for EditError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EditError::Usage(m) | EditError::Io(m) | EditError::Damaged(m) => f.write_str(m),
            EditError::Parse(p) => write!(f, "parse error at {p}"),
            EditError::Command(c) => c.fmt(f),
        }
    }
}

impl std::error::Error for EditError {}

impl From<ParseError> for EditError {
    fn from(e: ParseError) -> Self {
        EditError::Parse(e)
    }
}
