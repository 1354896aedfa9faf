//! `arca`: list, dump, measure and check arca files from the shell.
//!
//! ```text
//! arca create-example run.arca
//! arca ls -r run.arca
//! arca dump run.arca:/experiment/raw/events
//! arca stat --json run.arca
//! arca check run.arca
//! arca view run.arca
//! ```
//!
//! Exit codes: 0 success, 1 usage or I/O error (or no such object), 2 the
//! file is damaged or is not an arca file.
//!
//! The command is this library's [`main_with`], called by the `arca` binary
//! and by the Python package's `arca` entry point (so installing the package
//! puts the same command on the environment's PATH).

mod check;
mod data;
mod dump;
mod error;
mod example;
mod interop;
mod ls;
mod progress;
mod repack;
mod stat;
mod target;
mod upload;
mod values;
pub mod view;

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand};

use error::CliError;

/// The exit status section shared by the help of most commands.
macro_rules! exit_codes {
    () => {
        "Exit status:\n  \
         0  success\n  \
         1  usage error, I/O error, or no object at the given path\n  \
         2  the file is damaged or is not an arca file"
    };
}

/// Inspect arca files: list members, dump values, measure space, verify integrity.
#[derive(Debug, Parser)]
#[command(
    name = "arca",
    version,
    propagate_version = true,
    after_help = concat!(
        "Examples:\n",
        "  arca create-example example.arca\n",
        "  arca ls -r example.arca\n",
        "  arca dump example.arca:/experiment/raw/events\n",
        "  arca stat example.arca\n",
        "  arca check example.arca\n\n",
        "Objects inside a file are named FILE:/path (e.g. run.arca:/detector/frame).\n\n",
        exit_codes!(),
        "\n(arca edit has statuses of its own: see arca edit --help)"
    )
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List the members of a group (name, kind; shape, type, chunks and filters of datasets).
    #[command(after_help = concat!(
        "Examples:\n",
        "  arca ls example.arca                    members of the root group\n",
        "  arca ls -r example.arca                 every object, with full paths\n",
        "  arca ls example.arca:/experiment/raw    members of one group\n",
        "  arca ls --json -r example.arca | jq '.[].path'\n\n",
        exit_codes!()
    ))]
    Ls(LsArgs),
    /// Print groups, attributes and datasets with their values, like h5dump.
    #[command(after_help = concat!(
        "Examples:\n",
        "  arca dump example.arca                          the whole file\n",
        "  arca dump example.arca:/experiment/temperature  one dataset\n",
        "  arca dump -H example.arca                       structure only, no values\n",
        "  arca dump --max-elements 0 example.arca         every element, no limit\n",
        "  arca dump --json example.arca:/experiment | jq .\n\n",
        exit_codes!()
    ))]
    Dump(DumpArgs),
    /// Count objects and show where the file's bytes go.
    #[command(after_help = concat!(
        "Examples:\n",
        "  arca stat example.arca\n",
        "  arca stat --json example.arca | jq .raw_stored_bytes\n\n",
        "Exit status:\n",
        "  0  success\n",
        "  1  usage or I/O error\n",
        "  2  the file is damaged or is not an arca file"
    ))]
    Stat(StatArgs),
    /// Read every structure and chunk, verifying checksums; report the first damage.
    #[command(after_help = concat!(
        "Examples:\n",
        "  arca check example.arca\n",
        "  arca check -q example.arca && echo intact\n",
        "  arca check --json example.arca\n\n",
        "Exit status:\n",
        "  0  the file is intact\n",
        "  1  usage or I/O error (the file could not be read)\n",
        "  2  the file is damaged or is not an arca file; the damaged\n",
        "     structure and its byte offset are printed"
    ))]
    Check(CheckArgs),
    /// Write a small example file: nested groups, typed datasets, filters, attributes.
    #[command(
        visible_alias = "demo",
        after_help = concat!(
            "Examples:\n",
            "  arca create-example example.arca\n",
            "  arca create-example --force example.arca   replace an existing file\n",
            "  arca demo example.arca && arca ls -r example.arca\n\n",
            "Exit status:\n",
            "  0  success\n",
            "  1  usage or I/O error, or FILE exists and --force was not given"
        )
    )]
    CreateExample(ExampleArgs),
    /// Change attributes, groups and datasets with h5edit's command language.
    #[command(after_help = concat!(
        "Examples:\n",
        "  arca edit -c 'CREATE /g/units {{\"m/s\"}};' example.arca\n",
        "  arca edit --atomic inc --command-file cmds.txt example.arca\n\n",
        "Exit status: 0 success, 1 usage or I/O error, 2 parse error,\n",
        "3 a command cannot be applied, 4 the file is damaged or locked.\n",
        "The language is described in docs/EDIT.md."
    ))]
    Edit(arca_edit::EditArgs),
    /// Write a compact copy of a file: the same objects and values, no free space.
    #[command(after_help = concat!(
        "Examples:\n",
        "  arca repack big.arca compact.arca\n",
        "  arca repack -q big.arca compact.arca && mv compact.arca big.arca\n\n",
        "Deleted data already gives its space back to later writes; repack is for\n",
        "closing the holes between live objects. OUTPUT must not exist.\n\n",
        exit_codes!()
    ))]
    Repack(RepackArgs),
    /// Convert an HDF5 or netCDF-4 file into a new arca file, chunks copied as stored.
    #[command(after_help = concat!(
        "Examples:\n",
        "  arca import run.h5 run.arca\n",
        "  arca import --strict data.nc data.arca   refuse anything that would not map one to one\n\n",
        "Every group, dataset, attribute, link, dimension scale, type, fill value,\n",
        "chunk shape, maxshape and filter maps one to one; chunks whose filters arca\n",
        "shares with HDF5 (shuffle, gzip, zstd, lz4) are copied as stored. What does\n",
        "not map is listed by path with what was done to it. Runs the Python package\n",
        "arca.interop (h5py) with $ARCA_PYTHON (default python3). No partial OUTPUT\n",
        "is ever left behind.\n\n",
        "Exit status:\n",
        "  0  converted (notes, if any, on stdout)\n",
        "  1  usage or I/O error, OUTPUT exists without --force, or Python lacks arca/h5py\n",
        "  2  refused by --strict"
    ))]
    Import(ConvertArgs),
    /// Convert an arca file into a new HDF5 file (readable by h5py, netCDF4 and HDF5 tools).
    #[command(after_help = concat!(
        "Examples:\n",
        "  arca export run.arca run.h5\n",
        "  arca export --force data.arca data.nc\n\n",
        "The reverse of arca import, with the same mapping; chunks are copied as stored.\n\n",
        "Exit status:\n",
        "  0  converted\n",
        "  1  usage or I/O error, OUTPUT exists without --force, or Python lacks arca/h5py\n",
        "  2  refused by --strict"
    ))]
    Export(ConvertArgs),
    /// Show a file in the browser: h5web's viewer over a local h5grove-compatible server.
    #[command(after_help = concat!(
        "Examples:\n",
        "  arca view run.arca                       open the browser on the file\n",
        "  arca view --no-browser --port 8000 run.arca\n",
        "  arca view --host 0.0.0.0 run.arca        reachable from other machines\n\n",
        "The server answers h5grove's HTTP API at /api/ and the viewer app at /.\n",
        "Every request must carry the random token printed in the address; the\n",
        "server listens on 127.0.0.1 only unless --host says otherwise. It runs\n",
        "until stopped (Ctrl-C). See docs/VIEW.md.\n\n",
        "Exit status:\n",
        "  0  stopped\n",
        "  1  usage or I/O error (the file cannot be opened, the port is taken)\n",
        "  2  the file is damaged or is not an arca file"
    ))]
    View(ViewArgs),
}

#[derive(Debug, Args)]
struct ViewArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// Port to listen on (0: any free port).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Print the address without opening a browser.
    #[arg(long)]
    no_browser: bool,
    /// The viewer app's built files (default: the Python package's).
    #[arg(long, value_name = "DIR")]
    assets: Option<PathBuf>,
    /// An option for a URL on object storage (repeatable), e.g.
    /// `aws_endpoint=http://127.0.0.1:9000`.
    #[arg(long = "storage-option", value_name = "KEY=VALUE")]
    storage_option: Vec<String>,
    /// The file to show: a path, or a URL (s3://, gs://, az://, http(s)://).
    #[arg(value_name = "FILE")]
    file: PathBuf,
}

#[derive(Debug, Args)]
struct ConvertArgs {
    /// Refuse the file if anything would not map one to one.
    #[arg(long)]
    strict: bool,
    /// Replace OUTPUT if it exists.
    #[arg(short, long)]
    force: bool,
    /// No progress display.
    #[arg(short, long)]
    quiet: bool,
    /// The file to convert.
    #[arg(value_name = "INPUT")]
    input: PathBuf,
    /// The file to create (import: also a URL, s3://, gs://, az://,
    /// written locally and uploaded whole).
    #[arg(value_name = "OUTPUT")]
    output: PathBuf,
    /// A storage option for a URL OUTPUT, KEY=VALUE (repeatable); see
    /// docs/CLOUD.md.
    #[arg(long = "storage-option", value_name = "KEY=VALUE")]
    storage_option: Vec<String>,
}

#[derive(Debug, Args)]
struct RepackArgs {
    /// No progress bar.
    #[arg(short, long)]
    quiet: bool,
    /// Lay out every structure before the data, for object storage: the
    /// open's first read holds the metadata, and any chunk is one more
    /// request away.
    #[arg(long)]
    cloud: bool,
    /// The file to copy.
    #[arg(value_name = "INPUT")]
    input: PathBuf,
    /// The compact copy to create: a path, or a URL (s3://, gs://, az://)
    /// written locally and uploaded whole, as a new object.
    #[arg(value_name = "OUTPUT")]
    output: PathBuf,
    /// A storage option for a URL OUTPUT, KEY=VALUE (repeatable); see
    /// docs/CLOUD.md.
    #[arg(long = "storage-option", value_name = "KEY=VALUE")]
    storage_option: Vec<String>,
}

#[derive(Debug, Args)]
struct LsArgs {
    /// Recurse into subgroups, printing full paths.
    #[arg(short, long)]
    recursive: bool,
    /// Print a JSON array of objects instead of text.
    #[arg(long)]
    json: bool,
    /// The file (a path or a URL: s3://, gs://, az://, http(s)://),
    /// optionally followed by `:/path` of a group or dataset in it.
    #[arg(value_name = "FILE[:/path]")]
    target: String,
    /// A storage option for a URL, KEY=VALUE (repeatable): the store's
    /// keys (aws_endpoint, aws_region, aws_allow_http, ...) or arca's
    /// (head_bytes, cache_bytes, max_retries, ...); see docs/CLOUD.md.
    #[arg(long = "storage-option", value_name = "KEY=VALUE")]
    storage_option: Vec<String>,
}

#[derive(Debug, Args)]
struct DumpArgs {
    /// Print at most N elements of each dataset and attribute (0: no limit);
    /// a note marks each truncated one.
    #[arg(short = 'n', long, value_name = "N", default_value_t = dump::DEFAULT_MAX_ELEMENTS)]
    max_elements: u64,
    /// Header only: types, shapes, layout and attributes, no dataset values.
    #[arg(short = 'H', long)]
    header: bool,
    /// Print JSON instead of h5dump-style text.
    #[arg(long)]
    json: bool,
    /// The file (a path or a URL: s3://, gs://, az://, http(s)://),
    /// optionally followed by `:/path` of a group or dataset in it.
    #[arg(value_name = "FILE[:/path]")]
    target: String,
    /// A storage option for a URL, KEY=VALUE (repeatable): the store's
    /// keys (aws_endpoint, aws_region, aws_allow_http, ...) or arca's
    /// (head_bytes, cache_bytes, max_retries, ...); see docs/CLOUD.md.
    #[arg(long = "storage-option", value_name = "KEY=VALUE")]
    storage_option: Vec<String>,
}

#[derive(Debug, Args)]
struct StatArgs {
    /// Print a JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// The file (a path or a URL: s3://, gs://, az://, http(s)://).
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// A storage option for a URL, KEY=VALUE (repeatable): the store's
    /// keys (aws_endpoint, aws_region, aws_allow_http, ...) or arca's
    /// (head_bytes, cache_bytes, max_retries, ...); see docs/CLOUD.md.
    #[arg(long = "storage-option", value_name = "KEY=VALUE")]
    storage_option: Vec<String>,
}

#[derive(Debug, Args)]
struct CheckArgs {
    /// Print nothing on success; damage is still reported on stderr.
    #[arg(short, long)]
    quiet: bool,
    /// Print a JSON report on stdout (the exit status is the same).
    #[arg(long)]
    json: bool,
    /// The file (a path or a URL: s3://, gs://, az://, http(s)://).
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// A storage option for a URL, KEY=VALUE (repeatable): the store's
    /// keys (aws_endpoint, aws_region, aws_allow_http, ...) or arca's
    /// (head_bytes, cache_bytes, max_retries, ...); see docs/CLOUD.md.
    #[arg(long = "storage-option", value_name = "KEY=VALUE")]
    storage_option: Vec<String>,
}

#[derive(Debug, Args)]
struct ExampleArgs {
    /// Replace FILE if it exists.
    #[arg(short, long)]
    force: bool,
    /// Where to write the example file.
    #[arg(value_name = "FILE")]
    file: PathBuf,
}

fn run(cli: Cli, python: Option<&OsString>, out: &mut dyn Write) -> Result<u8, CliError> {
    match cli.command {
        Command::Ls(a) => {
            let mut t = target::Target::parse(&a.target);
            t.storage = a.storage_option;
            ls::run(&t, a.recursive, a.json, out)?;
        }
        Command::Dump(a) => {
            let mut t = target::Target::parse(&a.target);
            t.storage = a.storage_option;
            let opts = dump::Options {
                max_elements: a.max_elements,
                header_only: a.header,
            };
            if a.json {
                dump::run_json(&t, &opts, out)?;
            } else {
                dump::run_text(&t, &opts, out)?;
            }
        }
        Command::Stat(a) => stat::run(&a.file, &a.storage_option, a.json, out)?,
        Command::Check(a) => return check::run(&a.file, &a.storage_option, a.quiet, a.json, out),
        Command::CreateExample(a) => example::run(&a.file, a.force)?,
        Command::Edit(a) => return Ok(arca_edit::main_with(a).clamp(0, 255) as u8),
        Command::Repack(a) => {
            local_input("repack", &a.input)?;
            if upload::is_url(&a.output) {
                return upload::to_url(&a.output, &a.storage_option, false, a.quiet, |p| {
                    repack::run(&a.input, p, a.cloud, a.quiet).map(|()| 0)
                });
            }
            no_storage_options(&a.storage_option)?;
            repack::run(&a.input, &a.output, a.cloud, a.quiet)?
        }
        Command::Import(a) => {
            local_input("import", &a.input)?;
            let convert = |out: &Path, force: bool| {
                interop::run(
                    interop::Direction::Import,
                    &a.input,
                    out,
                    a.strict,
                    force,
                    a.quiet,
                    python,
                )
            };
            if upload::is_url(&a.output) {
                // --force: replace the object, if it has not changed since
                // the upload began.
                return upload::to_url(&a.output, &a.storage_option, a.force, a.quiet, |p| {
                    convert(p, false)
                });
            }
            no_storage_options(&a.storage_option)?;
            return convert(&a.output, a.force);
        }
        Command::View(a) => {
            let opts = view::Options {
                host: a.host,
                port: a.port,
                assets: view::find_assets(a.assets.as_deref(), python),
                token: None,
                storage: a.storage_option,
            };
            view::run(&a.file, &opts, !a.no_browser, out)?;
        }
        Command::Export(a) => {
            local_input("export", &a.input)?;
            if upload::is_url(&a.output) {
                return Err(CliError::Usage(format!(
                    "arca export writes a local HDF5 file, not {}; export to a path, then upload it",
                    a.output.display()
                )));
            }
            no_storage_options(&a.storage_option)?;
            return interop::run(
                interop::Direction::Export,
                &a.input,
                &a.output,
                a.strict,
                a.force,
                a.quiet,
                python,
            );
        }
    }
    Ok(0)
}

/// Refuse a URL where `command` reads a local file.
fn local_input(command: &str, input: &Path) -> Result<(), CliError> {
    if upload::is_url(input) {
        return Err(CliError::Usage(format!(
            "arca {command} reads a local file, not {}; copy it here first",
            input.display()
        )));
    }
    Ok(())
}

/// Refuse storage options given for a local OUTPUT.
fn no_storage_options(storage: &[String]) -> Result<(), CliError> {
    match storage.first() {
        Some(o) => Err(CliError::Usage(format!(
            "--storage-option {o}: options apply to a URL OUTPUT (s3://, gs://, az://)"
        ))),
        None => Ok(()),
    }
}

/// Run the `arca` command with `args` (the first is the program name) and
/// return its exit status. `python` is the interpreter `arca import` and
/// `arca export` run (`ARCA_PYTHON` overrides it; `python3` when neither).
///
/// ```no_run
/// let status = arca_cli::main_with(["arca", "check", "run.arca"], None);
/// std::process::exit(i32::from(status));
/// ```
pub fn main_with<I, T>(args: I, python: Option<OsString>) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    // clap exits with 2 on usage errors; 2 is reserved for damaged files here.
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return u8::from(e.use_stderr());
        }
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let r = run(cli, python.as_ref(), &mut out).and_then(|code| {
        out.flush().map_err(CliError::Output)?;
        Ok(code)
    });
    match r {
        Ok(code) => code,
        // A closed pipe (`arca dump f | head`) is the reader's choice, not a failure.
        Err(CliError::Output(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => 0,
        Err(e) => {
            drop(out);
            eprintln!("arca: {e}");
            e.exit_code()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn every_help_shows_an_example_and_exit_codes() {
        let mut cmd = Cli::command();
        let top = cmd.render_long_help().to_string();
        assert!(
            top.contains("Examples:") && top.contains("Exit status:"),
            "{top}"
        );
        for sub in cmd.get_subcommands_mut().filter(|s| s.get_name() != "help") {
            let help = sub.render_long_help().to_string();
            assert!(help.contains("Examples:"), "{help}");
            assert!(help.contains("Exit status:"), "{help}");
        }
    }
}
