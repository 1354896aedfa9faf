//! # arca-edit
//!
//! `arca edit`: change the attributes, groups and datasets of an arca file
//! with h5edit's command language, so existing h5edit command files work.
//!
//! ```
//! use arca_edit::{run, Atomic};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("obs.arca");
//! arca::File::create(&path).unwrap().close().unwrap();
//!
//! run(&path, r#"
//!     CREATE /newattrI32BE {H5T_STD_I32BE (1, 2, 3) DATA {11, 12, 21, 22, 31, 32}};
//!     CREATE /station {{"Summit"}};   # a string attribute
//! "#, Atomic::Yes).unwrap();
//!
//! let f = arca::File::open(&path).unwrap();
//! let a = f.root().attrs().get("newattrI32BE").unwrap();
//! assert_eq!(a.shape, vec![1, 2, 3]);
//! assert_eq!(a.to_vec::<i32>().unwrap(), vec![11, 12, 21, 22, 31, 32]);
//! assert_eq!(f.root().attrs().get("station").unwrap().as_string().unwrap(), "Summit");
//! ```
//!
//! Three atomicity levels ([`Atomic`]): `yes` runs the whole session as one
//! transaction, `inc` commits each command, `no` writes without a journal
//! but still checks each command fully before touching the file. See
//! `docs/EDIT.md` for the language and the exit codes.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod ast;
mod error;
mod exec;
mod lexer;
mod parser;
mod txn;
mod types;

use std::io::Read;
use std::path::{Path, PathBuf};

use indicatif::{ProgressBar, ProgressStyle};

pub use ast::{AttrName, Command, Definition, Modify, ObjKind, Op, Space, TypeSpec, Value};
pub use error::{
    CommandError, EditError, ParseError, EXIT_DAMAGED, EXIT_OK, EXIT_PARSE, EXIT_SEMANTIC,
    EXIT_USAGE,
};
pub use exec::Report;
pub use lexer::Pos;
pub use parser::parse;
pub use types::{type_by_name, TYPE_NAMES};

/// How much of a session is undone when a command fails.
///
/// ```
/// use arca_edit::Atomic;
/// assert_eq!("inc".parse::<Atomic>().unwrap(), Atomic::Inc);
/// assert_eq!(Atomic::default(), Atomic::Yes);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Atomic {
    /// No journal; a failing command changes nothing, earlier ones stay.
    No,
    /// All or nothing: any failure leaves the file exactly as it was.
    #[default]
    Yes,
    /// Each command commits on success; a failure keeps the earlier ones.
    Inc,
}

impl std::str::FromStr for Atomic {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "no" => Ok(Atomic::No),
            "yes" => Ok(Atomic::Yes),
            "inc" => Ok(Atomic::Inc),
            _ => Err(format!("atomicity must be no, yes or inc, not {s:?}")),
        }
    }
}

impl std::fmt::Display for Atomic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Atomic::No => "no",
            Atomic::Yes => "yes",
            Atomic::Inc => "inc",
        })
    }
}

/// Parse `commands` and apply them to the arca file at `path`.
///
/// Nothing is opened if the commands do not parse.
///
/// ```
/// use arca_edit::{run, Atomic, EditError};
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("t.arca");
/// arca::File::create(&path).unwrap().close().unwrap();
/// let e = run(&path, "CREATE /a {{1}}; DELETE /nope;", Atomic::Yes).unwrap_err();
/// assert_eq!(e.exit_code(), 3);
/// // `yes`: the first command was undone too.
/// assert!(!arca::File::open(&path).unwrap().root().attrs().contains("a").unwrap());
/// ```
///
/// # Errors
/// [`EditError`]; its [`EditError::exit_code`] is the status `arca edit`
/// exits with.
pub fn run(path: impl AsRef<Path>, commands: &str, atomic: Atomic) -> Result<Report, EditError> {
    let cmds = parse(commands)?;
    exec::run_commands(path.as_ref(), &cmds, atomic, &mut |_, _| {})
}

/// Arguments of `arca edit`, for mounting as a subcommand.
///
/// ```
/// use clap::Parser;
/// #[derive(Parser)]
/// struct Cli {
///     #[command(flatten)]
///     edit: arca_edit::EditArgs,
/// }
/// let cli = Cli::parse_from(["arca", "--atomic", "inc", "-c", "DELETE /x;", "f.arca"]);
/// assert_eq!(cli.edit.atomic, arca_edit::Atomic::Inc);
/// ```
#[derive(Debug, Clone, clap::Args)]
pub struct EditArgs {
    /// What a failing command undoes: yes = the whole session, inc = only
    /// that command (earlier ones stay), no = no journal (a failing command
    /// still changes nothing).
    #[arg(long, value_enum, ignore_case = true, default_value_t = Atomic::Yes, value_name = "LEVEL")]
    pub atomic: Atomic,
    /// Commands to run, e.g. 'CREATE /units {{"m/s"}};'.
    #[arg(
        short = 'c',
        long = "command",
        value_name = "COMMANDS",
        conflicts_with = "command_file",
        required_unless_present = "command_file"
    )]
    pub command: Option<String>,
    /// Read the commands from this file ("-" for standard input).
    #[arg(long = "command-file", value_name = "F")]
    pub command_file: Option<PathBuf>,
    /// No progress bar (it is drawn on a terminal only, for scripts of
    /// more than one command).
    #[arg(long)]
    pub quiet: bool,
    /// The arca file to edit.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
}

fn read_commands(args: &EditArgs) -> Result<String, EditError> {
    match (&args.command, &args.command_file) {
        (Some(c), None) => Ok(c.clone()),
        (None, Some(p)) if p.as_os_str() == "-" => {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .map_err(|e| EditError::Io(format!("reading commands from standard input: {e}")))?;
            Ok(s)
        }
        (None, Some(p)) => std::fs::read_to_string(p)
            .map_err(|e| EditError::Io(format!("reading command file {}: {e}", p.display()))),
        _ => Err(EditError::Usage(
            "give the commands with either -c COMMANDS or --command-file F".into(),
        )),
    }
}

/// Run `arca edit` with parsed arguments: errors go to standard error, and
/// the return value is the exit status (see [`EditError::exit_code`]).
///
/// ```
/// let args = arca_edit::EditArgs {
///     atomic: arca_edit::Atomic::Yes,
///     command: Some("DELETE /x;".into()),
///     command_file: None,
///     quiet: true,
///     file: "/no/such/file.arca".into(),
/// };
/// assert_eq!(arca_edit::main_with(args), 1);
/// ```
pub fn main_with(args: EditArgs) -> i32 {
    let r = read_commands(&args).and_then(|src| {
        let cmds = parse(&src)?;
        let bar = if args.quiet || cmds.len() < 2 {
            ProgressBar::hidden()
        } else {
            let b = ProgressBar::new(cmds.len() as u64);
            b.set_style(
                ProgressStyle::with_template(
                    "{spinner} editing [{bar:40}] {pos}/{len} commands {per_sec} eta {eta}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
            );
            b
        };
        let r = exec::run_commands(&args.file, &cmds, args.atomic, &mut |done, _| {
            bar.set_position(done)
        });
        bar.finish_and_clear();
        r
    });
    if let Err(EditError::Parse(e)) = &r {
        // Name where the commands came from so the line can be found.
        let from = match &args.command_file {
            Some(p) if p.as_os_str() != "-" => p.display().to_string(),
            Some(_) => "<stdin>".into(),
            None => "-c".into(),
        };
        eprintln!("arca edit: parse error in {from}, {e}");
        return EXIT_PARSE;
    }
    match r {
        Ok(_) => EXIT_OK,
        Err(e) => {
            eprintln!("arca edit: {e}");
            e.exit_code()
        }
    }
}
