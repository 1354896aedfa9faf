//! `compll-du`: an ncdu-like disk-usage tree built twice, once from plain
//! heap nodes and once inside a compll arena, timing the four operations of
//! the original study (scan, open, browse, delete) and measuring the memory
//! each backend really holds on the heap: counted through the Rust
//! allocator and, on Linux with glibc, as malloc itself reports it.
//! Times are wall clock, with the whole process's CPU time beside (the
//! arena may compress on a second thread).
//!
//! ```text
//! compll-du [--generate N | --scan DIR | --import FILE] [--quick] [--json FILE]
//!           [--block-size B] [--uncompressed N] [--codec NAME] [--group-fields N]
//!           [--node-cache B] [--background N] [--readahead N] [--cache-growth N] [--reps N]
//!           [--sweep [--sweep-blocks B,..] [--sweep-uncompressed N,..]
//!                    [--sweep-codecs NAME,..] [--sweep-groups N,..]]
//! ```

use std::alloc::System;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::Parser;
use compll::{Arena, Codec, CompressedImage, Config, Handle};
use serde::Serialize;
use stats_alloc::{StatsAlloc, INSTRUMENTED_SYSTEM};

// Counting allocator: every byte the process allocates through Rust is seen,
// so the memory figures cover compressed blocks, the cache, every table and
// the heap nodes alike.
#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Bytes and number of allocations live on the Rust heap.
fn heap_in_use() -> (i64, i64) {
    // stats_alloc already books reallocations into both byte counters.
    let s = GLOBAL.stats();
    (
        s.bytes_allocated as i64 - s.bytes_deallocated as i64,
        s.allocations as i64 - s.deallocations as i64,
    )
}

/// The second memory figure: bytes the C allocator has in use, including
/// its own chunk headers and rounding and whatever C code (zstd) allocates
/// with `malloc` directly, as the original study measured it.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod malloc_meter {
    /// How the figure is obtained, for the report.
    pub const SOURCE: &str = "mallinfo2";
    pub const DESCRIPTION: &str =
        "malloc in use (glibc mallinfo2: uordblks + hblkhd, chunk headers and rounding included)";

    /// Bytes in chunks malloc has handed out and not had back: `uordblks`
    /// (heap chunks in use, over all arenas) plus `hblkhd` (chunks served
    /// by mmap, such as tables of more than 128 KiB). `None`: measured
    /// here, not estimated.
    pub fn in_use() -> Option<i64> {
        // SAFETY: mallinfo2 takes no arguments, only reads glibc's
        // allocator statistics (under its own locks) and returns a plain
        // struct by value; glibc >= 2.33 provides it.
        let m = unsafe { libc::mallinfo2() };
        Some((m.uordblks + m.hblkhd) as i64)
    }
}

/// Elsewhere the malloc figure is an estimate: the counted bytes plus
/// [`MALLOC_OVERHEAD`] per live allocation.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
mod malloc_meter {
    pub const SOURCE: &str = "estimate";
    pub const DESCRIPTION: &str =
        "malloc estimate (counted + 16 B per live allocation; mallinfo2 needs Linux with glibc)";
    pub fn in_use() -> Option<i64> {
        None
    }
}

/// What malloc adds to each live allocation on top of the requested bytes,
/// on average: glibc keeps an 8-byte header and rounds chunks to 16 bytes.
/// Used only where malloc cannot be asked ([`malloc_meter`]).
#[cfg_attr(all(target_os = "linux", target_env = "gnu"), allow(dead_code))]
const MALLOC_OVERHEAD: i64 = 16;

/// CPU time of this thread in nanoseconds (the clock the kernel keeps per
/// thread, so other processes on the machine do not inflate it).
fn cpu_ns() -> u64 {
    cpu_time::ThreadTime::now().as_duration().as_nanos() as u64
}

/// A point in time for the operations: wall clock, and the CPU time of the
/// whole process (every thread, so the background compressor's work is
/// in it).
#[derive(Clone, Copy)]
struct Stamp {
    wall: std::time::Instant,
    cpu: u64,
}

fn stamp() -> Stamp {
    Stamp {
        wall: std::time::Instant::now(),
        cpu: cpu_time::ProcessTime::now().as_duration().as_nanos() as u64,
    }
}

/// Wall and process-CPU milliseconds from `a` to `b`.
fn span(a: Stamp, b: Stamp) -> (f64, f64) {
    (
        b.wall.duration_since(a.wall).as_secs_f64() * 1e3,
        ms(b.cpu - a.cpu),
    )
}

#[derive(Parser, Debug, Clone)]
#[command(about = "ncdu-like workload: heap nodes vs a compll arena")]
struct Args {
    /// Scan this directory for the entries.
    #[arg(long)]
    scan: Option<PathBuf>,
    /// Import an ncdu JSON export.
    #[arg(long)]
    import: Option<PathBuf>,
    /// Generate this many entries (default 300000, or 40000 with --quick).
    #[arg(long)]
    generate: Option<usize>,
    /// Entries in the largest directory (the one opened and browsed).
    #[arg(long)]
    big_dir: Option<usize>,
    /// Generator seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Write the entries as an ncdu JSON export and exit.
    #[arg(long)]
    export: Option<PathBuf>,
    /// Small sizes: a run of seconds.
    #[arg(long)]
    quick: bool,
    /// Block size in bytes.
    #[arg(long, default_value_t = 32 * 1024)]
    block_size: usize,
    /// Blocks kept uncompressed.
    #[arg(long, default_value_t = 4)]
    uncompressed: usize,
    /// Blocks that may wait for the background compressor
    /// (`Config::background_compression`; 0: compress on the benchmark's
    /// thread). While as many wait, the benchmark's thread compresses the
    /// next block itself.
    #[arg(long, default_value_t = 2)]
    background: usize,
    /// Blocks the background thread may decompress ahead of reads that
    /// walk the arena one way (`Config::readahead`; 0: none).
    #[arg(long, default_value_t = 4)]
    readahead: usize,
    /// Blocks the cache may grow by while reads reload blocks it has just
    /// evicted (`Config::cache_growth`; 0: fixed).
    #[arg(long, default_value_t = 64)]
    cache_growth: usize,
    /// Codec: lz4, zstd-N, zstd-N-dict, zstd-N-mM-bK (minimum match M,
    /// zstd blocks of K KiB; either may be left out), zlib-N, copy.
    #[arg(long, default_value = "zstd-1-m5-b16")]
    codec: String,
    /// Node cache budget in bytes (0 disables it).
    #[arg(long, default_value_t = 32 * 1024)]
    node_cache: usize,
    /// Leading node bytes the arena stores column by column when it
    /// compresses a block (`Config::group_fields`; 0: whole nodes). The
    /// default is the node's fixed fields (74 bytes, all but the name).
    #[arg(long, default_value_t = F_NAME)]
    group_fields: usize,
    /// Repetitions; medians are reported.
    #[arg(long, default_value_t = 1)]
    reps: usize,
    /// Print the table over block size x uncompressed count x codec x
    /// grouping (none, or the 74 fixed bytes).
    #[arg(long)]
    sweep: bool,
    /// Block sizes the sweep tries (default 4096,16384,32768,65536; with
    /// --quick 8192,32768).
    #[arg(long, value_delimiter = ',')]
    sweep_blocks: Vec<usize>,
    /// Uncompressed block counts the sweep tries (default 4,10,32; with
    /// --quick 4,10).
    #[arg(long, value_delimiter = ',')]
    sweep_uncompressed: Vec<usize>,
    /// Codecs the sweep tries (default lz4,zstd-1,zstd-3,zlib-5,zlib-9,
    /// zstd-3-dict; with --quick lz4,zstd-1,zlib-5,zstd-3-dict).
    #[arg(long, value_delimiter = ',')]
    sweep_codecs: Vec<String>,
    /// Grouped node bytes the sweep tries (default 0,74).
    #[arg(long, value_delimiter = ',')]
    sweep_groups: Vec<usize>,
    /// Also write the figures as one JSON object to this file ("-" for
    /// standard output).
    #[arg(long)]
    json: Option<String>,
}

// ---------------------------------------------------------------- entries

/// One file or directory as read from the source, in pre-order.
#[derive(Clone, Debug)]
struct Entry {
    name: String,
    depth: u32,
    dir: bool,
    size: u64,
    asize: u64,
    ino: u64,
    dev: u64,
    mtime: i64,
    nlink: u32,
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        // splitmix64: small, deterministic, good enough for test data.
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len() as u64) as usize]
    }
    /// Log-uniform file size between 0 and ~256 MB, with some empty files.
    fn size(&mut self) -> u64 {
        if self.below(20) == 0 {
            return 0;
        }
        let bits = self.below(28);
        self.below(1 << bits)
    }
}

const WORDS: &[&str] = &[
    "alpha", "archive", "backup", "build", "cache", "client", "common", "config", "core", "data",
    "debug", "default", "driver", "engine", "event", "export", "filter", "format", "graph",
    "handler", "helper", "image", "index", "input", "kernel", "layout", "loader", "main",
    "manager", "model", "module", "network", "object", "output", "parser", "plugin", "render",
    "report", "request", "runtime", "schema", "server", "service", "session", "shader", "socket",
    "source", "stream", "style", "table", "test", "theme", "thread", "token", "update", "user",
    "util", "value", "vector", "view", "widget", "worker",
];
const EXTS: &[&str] = &[
    "c", "h", "rs", "py", "js", "ts", "json", "md", "txt", "html", "css", "o", "so", "go", "java",
    "class", "xml", "yaml", "toml", "png", "svg", "sh", "pyc", "d", "rlib",
];
const TOP: &[&str] = &[
    "home", "usr", "var", "srv", "opt", "projects", "media", "backup", "build", "share",
];
const SUBDIRS: &[&str] = &[
    "src",
    "include",
    "lib",
    "tests",
    "docs",
    "examples",
    "bin",
    "assets",
    "scripts",
    "vendor",
    "node_modules",
    "target",
    "dist",
    "tools",
    "config",
    "locale",
    "static",
];

struct Gen {
    rng: Rng,
    out: Vec<Entry>,
    ino: u64,
    mtime: i64,
    want: usize,
}

impl Gen {
    fn push(&mut self, name: String, depth: u32, dir: bool, size: u64) {
        // Files unpacked or created together get neighbouring inodes and
        // mostly the same modification time, as on real file systems.
        self.ino += if self.rng.below(10) == 0 {
            1 + self.rng.below(5000)
        } else {
            1
        };
        let mtime = if self.rng.below(4) == 0 {
            self.mtime + self.rng.below(86_400 * 30) as i64
        } else {
            self.mtime
        };
        let nlink = if !dir && self.rng.below(200) == 0 {
            2
        } else {
            1
        };
        self.out.push(Entry {
            name,
            depth,
            dir,
            size,
            asize: size.div_ceil(4096) * 4096,
            ino: self.ino,
            dev: 2049,
            mtime,
            nlink,
        });
    }

    fn file_name(&mut self) -> String {
        let r = self.rng.below(10);
        let w1 = self.rng.pick(WORDS);
        let w2 = self.rng.pick(WORDS);
        let ext = self.rng.pick(EXTS);
        match r {
            0..=3 => format!("{w1}_{w2}.{ext}"),
            4..=5 => format!("{w1}.{ext}"),
            6 => format!(
                "{w1}-{}.{}.{}.{ext}",
                self.rng.below(4),
                self.rng.below(20),
                self.rng.below(10)
            ),
            7 => format!("{w1}{}{}.{ext}", w2[..1].to_uppercase(), &w2[1..]),
            8 => format!("test_{w1}_{w2}_{}.{ext}", self.rng.below(100)),
            _ => format!("{:08x}.{ext}", self.rng.next() as u32),
        }
    }

    /// A directory of ordinary project files with nested subdirectories.
    fn project(&mut self, depth: u32, budget: usize) {
        self.mtime += self.rng.below(86_400 * 20) as i64;
        let files = (self.rng.below(40) + 3) as usize;
        for _ in 0..files.min(budget) {
            let n = self.file_name();
            let s = self.rng.size() / 256;
            self.push(n, depth, false, s);
        }
        let mut left = budget.saturating_sub(files);
        while left > 0 && self.out.len() < self.want {
            let sub = self.rng.pick(SUBDIRS).to_string();
            let w = self.rng.pick(WORDS);
            let name = if self.rng.below(3) == 0 {
                format!("{sub}-{w}")
            } else {
                sub
            };
            self.push(name, depth, true, 0);
            let take = left.min((self.rng.below(400) + 20) as usize);
            if depth < 8 {
                self.project(depth + 1, take);
            }
            left -= take;
        }
    }

    /// A camera dump: the large directory the "open" and "browse"
    /// operations work on.
    fn photos(&mut self, depth: u32, n: usize) {
        let mut t = 1_546_300_800i64 + self.rng.below(10_000_000) as i64;
        for i in 0..n {
            t += 1 + self.rng.below(600) as i64;
            let (d, s) = (t / 86400, t % 86400);
            let (y, m, dd) = civil(d);
            let ext = if i % 9 == 0 { "mp4" } else { "jpg" };
            let name = format!(
                "IMG_{y:04}{m:02}{dd:02}_{:02}{:02}{:02}.{ext}",
                s / 3600,
                s / 60 % 60,
                s % 60
            );
            let size = 1_500_000 + self.rng.below(6_000_000);
            self.push(name, depth, false, size);
        }
    }

    /// Maildir-style names.
    fn mail(&mut self, depth: u32, n: usize) {
        for _ in 0..n {
            let t = 1_500_000_000 + self.rng.below(200_000_000);
            let name = format!(
                "{t}.M{}P{}.mailhost,S={}:2,S",
                self.rng.below(1_000_000),
                self.rng.below(40_000),
                self.rng.below(200_000)
            );
            let s = self.rng.below(200_000);
            self.push(name, depth, false, s);
        }
    }
}

/// Days since 1970-01-01 to (year, month, day).
fn civil(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + (m <= 2) as i64, m, d)
}

fn generate(total: usize, big: usize, seed: u64) -> Vec<Entry> {
    let mut g = Gen {
        rng: Rng(seed),
        out: Vec::with_capacity(total + 64),
        ino: 1000,
        mtime: 1_546_300_800,
        want: total,
    };
    g.push("/data".into(), 0, true, 0);
    g.push("photos".into(), 1, true, 0);
    g.push("camera".into(), 2, true, 0);
    g.photos(3, big);
    g.push("mail".into(), 1, true, 0);
    g.push("cur".into(), 2, true, 0);
    let nmail = (total / 20).min(total.saturating_sub(g.out.len()));
    g.mail(3, nmail);
    let mut i = 0;
    while g.out.len() < total {
        let top = format!(
            "{}{}",
            TOP[i % TOP.len()],
            if i >= TOP.len() {
                format!("{}", i / TOP.len())
            } else {
                String::new()
            }
        );
        g.push(top, 1, true, 0);
        let budget = (total - g.out.len()).min(2000 + g.rng.below(8000) as usize);
        let mut left = budget;
        while left > 0 && g.out.len() < total {
            let w1 = g.rng.pick(WORDS);
            let w2 = g.rng.pick(WORDS);
            g.push(format!("{w1}-{w2}"), 2, true, 0);
            let take = left.min(200 + g.rng.below(1500) as usize);
            g.project(3, take);
            left -= take;
        }
        i += 1;
    }
    g.out
}

fn scan_dir(root: &Path) -> std::io::Result<Vec<Entry>> {
    use std::os::unix::fs::MetadataExt;
    let mut out = Vec::new();
    fn entry(name: String, depth: u32, md: &std::fs::Metadata) -> Entry {
        Entry {
            name,
            depth,
            dir: md.is_dir(),
            size: md.size(),
            asize: md.blocks() * 512,
            ino: md.ino(),
            dev: md.dev(),
            mtime: md.mtime(),
            nlink: md.nlink() as u32,
        }
    }
    fn walk(dir: &Path, depth: u32, dev: u64, out: &mut Vec<Entry>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let Ok(md) = e.metadata() else { continue };
            let name = e.file_name().to_string_lossy().into_owned();
            out.push(entry(name, depth, &md));
            // Stay on one file system, like ncdu -x.
            if md.is_dir() && md.dev() == dev {
                walk(&e.path(), depth + 1, dev, out);
            }
        }
    }
    let md = std::fs::symlink_metadata(root)?;
    out.push(entry(root.display().to_string(), 0, &md));
    walk(root, 1, md.dev(), &mut out);
    Ok(out)
}

fn import_ncdu(path: &Path) -> Result<Vec<Entry>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let root = v
        .as_array()
        .and_then(|a| a.get(3))
        .ok_or("not an ncdu export: expected [major, minor, meta, root]")?;
    let mut out = Vec::new();
    fn info(o: &serde_json::Value, depth: u32, dir: bool) -> Entry {
        let n = |k: &str| o.get(k).and_then(|x| x.as_u64()).unwrap_or(0);
        Entry {
            name: o
                .get("name")
                .and_then(|x| x.as_str())
                .unwrap_or("?")
                .to_string(),
            depth,
            dir,
            size: n("asize"),
            asize: n("dsize"),
            ino: n("ino"),
            dev: n("dev"),
            mtime: n("mtime") as i64,
            nlink: n("nlink").max(1) as u32,
        }
    }
    fn walk(v: &serde_json::Value, depth: u32, out: &mut Vec<Entry>) {
        match v {
            serde_json::Value::Array(items) => {
                if let Some(first) = items.first() {
                    out.push(info(first, depth, true));
                }
                for c in items.iter().skip(1) {
                    walk(c, depth + 1, out);
                }
            }
            o => out.push(info(o, depth, false)),
        }
    }
    walk(root, 0, &mut out);
    Ok(out)
}

fn export_ncdu(entries: &[Entry], path: &Path) -> std::io::Result<()> {
    let mut s = String::from("[1,2,{\"progname\":\"compll-du\",\"progver\":\"0.1\"},\n");
    let mut open: Vec<u32> = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        while open.last().is_some_and(|&d| d >= e.depth) {
            s.push(']');
            open.pop();
        }
        if i > 0 {
            s.push_str(",\n");
        }
        let obj = serde_json::json!({
            "name": e.name, "asize": e.size, "dsize": e.asize, "ino": e.ino,
            "dev": e.dev, "mtime": e.mtime, "nlink": e.nlink,
        });
        if e.dir {
            s.push('[');
            open.push(e.depth);
        }
        s.push_str(&obj.to_string());
    }
    for _ in open {
        s.push(']');
    }
    s.push_str("]\n");
    std::fs::write(path, s)
}

// ---------------------------------------------------------------- backends

/// The operations the workload needs from a node store. Ids are 64-bit,
/// 0 meaning "none", like pointers.
trait Store {
    /// Adds a node linked to `parent` and to its next sibling `next`.
    fn add(&mut self, e: &Entry, parent: u64, next: u64) -> u64;
    fn sub(&self, id: u64) -> u64;
    fn next(&self, id: u64) -> u64;
    /// `(sub, next)` in one access.
    /// The node's (first child, next sibling) links; frees the node.
    fn take_links(&mut self, id: u64) -> (u64, u64);
    fn size(&self, id: u64) -> u64;
    fn hlnk(&self, id: u64) -> u64;
    fn set_hlnk(&mut self, id: u64, to: u64);
    /// Stores a finished directory's totals and its first child.
    fn set_totals(&mut self, id: u64, size: u64, asize: u64, sub: u64);
    /// Appends one browser line for the node to `out`.
    fn row(&self, id: u64, max: u64, out: &mut String);
    /// Bytes of uncompressed block images held now (0 for the heap).
    fn cached_bytes(&self) -> u64 {
        0
    }
    /// Waits for work the store finishes in the background (compressions);
    /// part of the scan, so that the memory measured after it is what the
    /// tree keeps.
    fn settle(&self) {}
    /// Block decompressions so far (0 for stores without blocks).
    fn decompressions(&self) -> u64 {
        0
    }
    /// Of those, done ahead on the background thread.
    fn decompressed_ahead(&self) -> u64 {
        0
    }
}

fn draw_row(out: &mut String, size: u64, max: u64, dir: bool, name: &[u8]) {
    let bar = size.saturating_mul(10).checked_div(max).unwrap_or(0) as usize;
    let (v, unit) = human(size);
    let _ = write!(
        out,
        "{v:>6.1} {unit} [{:<10}] {}",
        "#".repeat(bar),
        if dir { "/" } else { " " }
    );
    out.push_str(&String::from_utf8_lossy(name));
    out.push('\n');
}

fn human(n: u64) -> (f64, &'static str) {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    (v, units[u])
}

/// Plain heap nodes: one allocation per node plus one for its name, linked
/// by ids that index a table of owning pointers (the safe-Rust stand-in for
/// raw pointers; it costs 8 bytes per node).
struct HeapNode {
    name: Box<str>,
    size: u64,
    asize: u64,
    ino: u64,
    dev: u64,
    mtime: i64,
    parent: u64,
    next: u64,
    sub: u64,
    hlnk: u64,
    dir: bool,
}

#[derive(Default)]
struct HeapStore {
    nodes: Vec<Option<Box<HeapNode>>>,
}

impl HeapStore {
    fn node(&self, id: u64) -> &HeapNode {
        self.nodes[id as usize - 1].as_ref().expect("live node")
    }
    fn node_mut(&mut self, id: u64) -> &mut HeapNode {
        self.nodes[id as usize - 1].as_mut().expect("live node")
    }
}

impl Store for HeapStore {
    fn add(&mut self, e: &Entry, parent: u64, next: u64) -> u64 {
        self.nodes.push(Some(Box::new(HeapNode {
            name: e.name.as_str().into(),
            size: e.size,
            asize: e.asize,
            ino: e.ino,
            dev: e.dev,
            mtime: e.mtime,
            parent,
            next,
            sub: 0,
            hlnk: 0,
            dir: e.dir,
        })));
        self.nodes.len() as u64
    }
    fn sub(&self, id: u64) -> u64 {
        self.node(id).sub
    }
    fn next(&self, id: u64) -> u64 {
        self.node(id).next
    }
    fn take_links(&mut self, id: u64) -> (u64, u64) {
        let n = self.nodes[id as usize - 1].take().expect("live node");
        (n.sub, n.next)
    }
    fn size(&self, id: u64) -> u64 {
        self.node(id).asize
    }
    fn hlnk(&self, id: u64) -> u64 {
        self.node(id).hlnk
    }
    fn set_hlnk(&mut self, id: u64, to: u64) {
        self.node_mut(id).hlnk = to;
    }
    fn set_totals(&mut self, id: u64, size: u64, asize: u64, sub: u64) {
        let n = self.node_mut(id);
        n.size = size;
        n.asize = asize;
        n.sub = sub;
    }
    fn row(&self, id: u64, max: u64, out: &mut String) {
        let n = self.node(id);
        // Touch every field the real browser shows or uses.
        let _ = (n.ino, n.dev, n.mtime, n.parent, n.size);
        draw_row(out, n.asize, max, n.dir, n.name.as_bytes());
    }
}

// compll node layout (little endian):
//   0 size, 8 asize, 16 ino, 24 dev, 32 mtime, 40 parent, 48 next, 56 sub,
//   64 hlnk (u64 each), 72 flags (u8), 73 name length (u8), 74 name.
const F_ASIZE: usize = 8;
const F_NEXT: usize = 48;
const F_SUB: usize = 56;
const F_HLNK: usize = 64;
const F_FLAGS: usize = 72;
const F_NAME: usize = 74;

struct CompllStore {
    arena: Arena,
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

impl CompllStore {
    fn get(&self, id: u64, at: usize) -> u64 {
        let mut b = [0u8; 8];
        self.arena
            .read_at(Handle::from_raw(id), at, &mut b)
            .expect("live node");
        u64::from_le_bytes(b)
    }
    fn put(&self, id: u64, at: usize, v: u64) {
        self.arena
            .write_at(Handle::from_raw(id), at, &v.to_le_bytes())
            .expect("live node");
    }
}

impl Store for CompllStore {
    fn add(&mut self, e: &Entry, parent: u64, next: u64) -> u64 {
        let name = &e.name.as_bytes()[..e.name.len().min(255)];
        let mut rec = [0u8; F_NAME + 255];
        let fields = [
            e.size,
            e.asize,
            e.ino,
            e.dev,
            e.mtime as u64,
            parent,
            next,
            0,
            0,
        ];
        for (i, f) in fields.iter().enumerate() {
            rec[i * 8..i * 8 + 8].copy_from_slice(&f.to_le_bytes());
        }
        rec[F_FLAGS] = e.dir as u8;
        rec[F_FLAGS + 1] = name.len() as u8;
        rec[F_NAME..F_NAME + name.len()].copy_from_slice(name);
        let len = F_NAME + name.len();
        let h = self.arena.alloc_init(len, &rec[..len]).expect("alloc");
        h.to_raw()
    }
    fn sub(&self, id: u64) -> u64 {
        self.get(id, F_SUB)
    }
    fn next(&self, id: u64) -> u64 {
        self.get(id, F_NEXT)
    }
    fn take_links(&mut self, id: u64) -> (u64, u64) {
        let mut b = [0u8; 16];
        self.arena
            .read_and_free(Handle::from_raw(id), F_NEXT, &mut b)
            .expect("live node");
        (u64_at(&b, 8), u64_at(&b, 0))
    }
    fn size(&self, id: u64) -> u64 {
        self.get(id, F_ASIZE)
    }
    fn hlnk(&self, id: u64) -> u64 {
        self.get(id, F_HLNK)
    }
    fn set_hlnk(&mut self, id: u64, to: u64) {
        self.put(id, F_HLNK, to)
    }
    fn set_totals(&mut self, id: u64, size: u64, asize: u64, sub: u64) {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&size.to_le_bytes());
        b[8..].copy_from_slice(&asize.to_le_bytes());
        self.arena
            .write_at(Handle::from_raw(id), 0, &b)
            .expect("live node");
        self.put(id, F_SUB, sub);
    }
    fn row(&self, id: u64, max: u64, out: &mut String) {
        self.arena
            .read_with(Handle::from_raw(id), |b| {
                let n = b[F_FLAGS + 1] as usize;
                draw_row(
                    out,
                    u64_at(b, F_ASIZE),
                    max,
                    b[F_FLAGS] & 1 == 1,
                    &b[F_NAME..F_NAME + n],
                );
            })
            .expect("live node");
    }
    fn settle(&self) {
        self.arena.settle();
    }
    fn decompressions(&self) -> u64 {
        self.arena.stats().decompressions
    }
    fn decompressed_ahead(&self) -> u64 {
        self.arena.stats().decompressed_ahead
    }
    fn cached_bytes(&self) -> u64 {
        self.arena.stats().uncompressed_bytes
    }
}

// ---------------------------------------------------------------- workload

#[derive(Serialize, Clone, Copy, Default, Debug)]
struct Figures {
    /// Wall-clock time of each operation.
    scan_ms: f64,
    open_ms: f64,
    browse_ms: f64,
    delete_ms: f64,
    /// CPU time of the whole process (all threads) during each operation.
    scan_cpu_ms: f64,
    open_cpu_ms: f64,
    browse_cpu_ms: f64,
    delete_cpu_ms: f64,
    /// Bytes requested through the Rust allocator (plus, for zstd, the
    /// context sizes zstd reports), live after the scan.
    mem_bytes: i64,
    /// Bytes malloc has in use after the scan minus before it (mallinfo2),
    /// or `mem_bytes` plus an estimated overhead per allocation where
    /// mallinfo2 is not available (see the report's `malloc_source`).
    mem_malloc_bytes: i64,
}

/// Builds the tree; returns the root and the id of the largest directory.
fn build<S: Store>(s: &mut S, entries: &[Entry]) -> (u64, u64) {
    // (id, size, asize, children, first child) of the directories on the
    // current path. Children are prepended, as in ncdu; a directory's first
    // child is stored once, when the directory is complete.
    type Open = (u64, u64, u64, usize, u64);
    let mut stack: Vec<Open> = Vec::new();
    let mut links: HashMap<(u64, u64), u64> = HashMap::new();
    let mut root = 0;
    let mut big = (0usize, 0u64);
    let close = |s: &mut S, stack: &mut Vec<Open>, big: &mut (usize, u64)| {
        let (id, size, asize, n, first) = stack.pop().expect("open dir");
        s.set_totals(id, size, asize, first);
        if n > big.0 {
            *big = (n, id);
        }
        if let Some(p) = stack.last_mut() {
            p.1 += size;
            p.2 += asize;
        }
    };
    for e in entries {
        while stack.len() > e.depth as usize {
            close(s, &mut stack, &mut big);
        }
        let (parent, next) = stack.last().map_or((0, 0), |p| (p.0, p.4));
        let id = s.add(e, parent, next);
        if let Some(p) = stack.last_mut() {
            p.3 += 1;
            p.4 = id;
        }
        if parent == 0 {
            root = id;
        }
        if e.nlink > 1 && !e.dir {
            // Hard links form a ring, as in ncdu.
            match links.get(&(e.dev, e.ino)) {
                Some(&first) => {
                    let after = s.hlnk(first);
                    s.set_hlnk(id, after);
                    s.set_hlnk(first, id);
                }
                None => {
                    s.set_hlnk(id, id);
                    links.insert((e.dev, e.ino), id);
                }
            }
        }
        if e.dir {
            stack.push((id, e.size, e.asize, 0, 0));
        } else if let Some(p) = stack.last_mut() {
            p.1 += e.size;
            p.2 += e.asize;
        }
    }
    while !stack.is_empty() {
        close(s, &mut stack, &mut big);
    }
    (root, big.1)
}

/// Sorts a directory by size and finds the selected item.
fn open<S: Store>(s: &S, dir: u64, selected: u64) -> (Vec<u64>, usize, u64) {
    let mut items = Vec::new();
    let mut c = s.sub(dir);
    while c != 0 {
        items.push((s.size(c), c));
        c = s.next(c);
    }
    items.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let max = items.first().map_or(0, |x| x.0);
    let pos = items.iter().position(|x| x.1 == selected).unwrap_or(0);
    (items.into_iter().map(|x| x.1).collect(), pos, max)
}

/// 100 redraws of a 50-line window, scrolling one line each time.
/// Rows on the browse screen, and redraws per browse.
const ROWS: usize = 50;
const REDRAWS: usize = 100;

/// First row of redraw `r` when browsing from `start`: one line further
/// each time, stopping where the last screen is full.
fn window_start(len: usize, start: usize, r: usize) -> usize {
    (start + r).min(len.saturating_sub(ROWS))
}

/// The rows a browse from `start` shows, each once.
fn browsed(list: &[u64], start: usize) -> &[u64] {
    let lo = window_start(list.len(), start, 0);
    let hi = (window_start(list.len(), start, REDRAWS - 1) + ROWS).min(list.len());
    &list[lo..hi]
}

fn browse<S: Store>(s: &S, list: &[u64], start: usize, max: u64) -> usize {
    let mut screen = String::with_capacity(ROWS * 80);
    let mut total = 0;
    for r in 0..REDRAWS {
        screen.clear();
        let from = window_start(list.len(), start, r);
        for &id in list.iter().skip(from).take(ROWS) {
            s.row(id, max, &mut screen);
        }
        total += screen.len();
    }
    total
}

/// Frees the whole tree, depth first.
fn delete<S: Store>(s: &mut S, root: u64) {
    let mut stack = vec![root];
    while let Some(id) = stack.pop() {
        // Its links are read as the node is freed.
        let (sub, next) = s.take_links(id);
        let next = if id == root { 0 } else { next };
        if next != 0 {
            stack.push(next);
        }
        if sub != 0 {
            stack.push(sub);
        }
    }
}

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// Per operation counts (block decompressions).
#[derive(Serialize, Clone, Copy, Default, Debug)]
struct PerOp {
    scan: u64,
    open: u64,
    browse: u64,
    delete: u64,
}

/// What a run saw besides its figures.
struct Trace {
    /// Ids of the nodes open lists (the whole directory).
    listed: Vec<u64>,
    /// Ids of the rows browse shows.
    shown: Vec<u64>,
    decompressions: PerOp,
    /// Of those, done ahead on the background thread.
    ahead: PerOp,
    /// Uncompressed bytes held at the end of each operation.
    cached: PerOp,
}

/// Runs the four operations on one store; `make` creates it after the
/// memory baseline so everything it allocates is counted. `extra_mem`
/// adds bytes the counting allocator cannot see; `probe` runs after the
/// scan has been measured, outside every timed operation.
fn run<S: Store>(
    entries: &[Entry],
    make: impl FnOnce() -> S,
    extra_mem: impl FnOnce(&S) -> i64,
    probe: impl FnOnce(&S),
) -> (Figures, S, Trace) {
    let (base, base_allocs) = heap_in_use();
    let malloc_base = malloc_meter::in_use();
    let t0 = stamp();
    let mut s = make();
    let (root, big) = build(&mut s, entries);
    s.settle();
    let t1 = stamp();
    let malloc_now = malloc_meter::in_use();
    let (now, allocs) = heap_in_use();
    let mem = now - base + extra_mem(&s);
    let mem_malloc = match (malloc_base, malloc_now) {
        (Some(b), Some(n)) => n - b,
        _ => mem + (allocs - base_allocs) * MALLOC_OVERHEAD,
    };
    let d1 = s.decompressions();
    let a1 = s.decompressed_ahead();
    let c1 = s.cached_bytes();
    probe(&s);
    // The selected item: one from the middle of the directory.
    let mut sel = s.sub(big);
    for _ in 0..entries.len().min(1000) {
        let n = s.next(sel);
        if n == 0 {
            break;
        }
        sel = n;
    }
    let d2 = s.decompressions();
    let a2 = s.decompressed_ahead();
    let t2 = stamp();
    let (list, pos, max) = open(&s, big, sel);
    let t3 = stamp();
    let d3 = s.decompressions();
    let a3 = s.decompressed_ahead();
    let c3 = s.cached_bytes();
    let t3b = stamp();
    let drawn = browse(&s, &list, pos, max);
    let t4 = stamp();
    let d4 = s.decompressions();
    let a4 = s.decompressed_ahead();
    let c4 = s.cached_bytes();
    assert!(drawn > 0 || list.is_empty());
    let shown = browsed(&list, pos).to_vec();
    let t4b = stamp();
    delete(&mut s, root);
    let t5 = stamp();
    let d5 = s.decompressions();
    let a5 = s.decompressed_ahead();
    let c5 = s.cached_bytes();
    let (scan, scan_cpu) = span(t0, t1);
    let (open, open_cpu) = span(t2, t3);
    let (browse, browse_cpu) = span(t3b, t4);
    let (delete, delete_cpu) = span(t4b, t5);
    (
        Figures {
            scan_ms: scan,
            open_ms: open,
            browse_ms: browse,
            delete_ms: delete,
            scan_cpu_ms: scan_cpu,
            open_cpu_ms: open_cpu,
            browse_cpu_ms: browse_cpu,
            delete_cpu_ms: delete_cpu,
            mem_bytes: mem,
            mem_malloc_bytes: mem_malloc,
        },
        s,
        Trace {
            listed: list,
            shown,
            decompressions: PerOp {
                scan: d1,
                open: d3 - d2,
                browse: d4 - d3,
                delete: d5 - d4,
            },
            ahead: PerOp {
                scan: a1,
                open: a3 - a2,
                browse: a4 - a3,
                delete: a5 - a4,
            },
            cached: PerOp {
                scan: c1,
                open: c3,
                browse: c4,
                delete: c5,
            },
        },
    )
}

#[derive(Serialize, Clone, Default, Debug)]
struct CompllRun {
    #[serde(flatten)]
    figures: Figures,
    compressed_bytes: u64,
    uncompressed_bytes: u64,
    overhead_bytes: u64,
    codec_context_bytes: u64,
    /// The same after delete: with read-ahead, the background thread's
    /// decompression context exists by then.
    codec_context_bytes_at_end: u64,
    compressions: u64,
    decompressions: u64,
    hit_rate: f64,
    dictionary_bytes: Option<usize>,
    /// Block decompressions during each operation.
    decompressions_by_operation: PerOp,
    /// Of those, decompressed ahead on the background thread.
    decompressed_ahead_by_operation: PerOp,
    /// Uncompressed block bytes (cache, blocks waiting for the compressor)
    /// held at the end of each operation; the cache may grow during reads
    /// (`--cache-growth`).
    uncompressed_after_operation: PerOp,
    /// The codec alone on the scan's blocks (reported separately).
    #[serde(skip)]
    floor: Option<Floor>,
}

/// What the codec alone costs on exactly the blocks the arena holds after
/// the scan (`Arena::block_images`): each compressed once as an eviction
/// would (field grouping included) and decompressed once as a load would.
#[derive(Serialize, Clone, Copy, Default, Debug)]
struct Floor {
    blocks: usize,
    image_bytes: u64,
    compressed_bytes: u64,
    /// Thread cpu time to compress every block once.
    compress_ms: f64,
    /// Thread cpu time to decompress every block once.
    decompress_ms: f64,
    /// Distinct blocks holding the nodes open reads.
    open_blocks: usize,
    /// Distinct blocks holding the rows browse shows.
    browse_blocks: usize,
}

/// Compresses every block image once, then decompresses every one once.
fn measure_floor(arena: &Arena) -> Floor {
    let images = arena.block_images().expect("block images");
    let t0 = cpu_ns();
    let packed: Vec<CompressedImage> = images
        .iter()
        .map(|i| arena.compress_image(i).expect("compress"))
        .collect();
    let t1 = cpu_ns();
    for p in &packed {
        let back = arena.decompress_image(p).expect("decompress");
        std::hint::black_box(&back);
    }
    let t2 = cpu_ns();
    Floor {
        blocks: images.len(),
        image_bytes: images.iter().map(|i| i.len() as u64).sum(),
        compressed_bytes: packed.iter().map(|p| p.compressed_len() as u64).sum(),
        compress_ms: ms(t1 - t0),
        decompress_ms: ms(t2 - t1),
        open_blocks: 0,
        browse_blocks: 0,
    }
}

/// Number of distinct blocks among node handles (a handle's bits 24-63
/// name its block).
fn distinct_blocks(ids: &[u64]) -> usize {
    let mut b: Vec<u64> = ids.iter().map(|id| id >> 24).collect();
    b.sort_unstable();
    b.dedup();
    b.len()
}

fn run_heap(entries: &[Entry]) -> Figures {
    // The id table is sized up front so no growth slack is counted against
    // the heap backend.
    run(
        entries,
        || HeapStore {
            nodes: Vec::with_capacity(entries.len()),
        },
        |_| 0,
        |_| {},
    )
    .0
}

/// One run on a compll arena; with `floor`, also measures the codec alone
/// on the scan's blocks ([`Floor`]).
fn run_compll(entries: &[Entry], cfg: &Config, floor: bool) -> CompllRun {
    let mut after_scan = None;
    let mut measured = None;
    let (figures, store, trace) = run(
        entries,
        || CompllStore {
            arena: Arena::new(cfg.clone()).expect("valid config"),
        },
        |s: &CompllStore| {
            let st = s.arena.stats();
            after_scan = Some((st, s.arena.dictionary_len()));
            // zstd's contexts live on the C heap, invisible to the counting
            // allocator; add what zstd reports for them.
            st.codec_context_bytes as i64
        },
        |s: &CompllStore| {
            if floor {
                measured = Some(measure_floor(&s.arena));
            }
        },
    );
    let (st, dict) = after_scan.expect("measured");
    let end = store.arena.stats();
    let floor = measured.map(|f| Floor {
        open_blocks: distinct_blocks(&trace.listed),
        browse_blocks: distinct_blocks(&trace.shown),
        ..f
    });
    CompllRun {
        figures,
        compressed_bytes: st.compressed_bytes,
        uncompressed_bytes: st.uncompressed_bytes,
        overhead_bytes: st.overhead_bytes,
        codec_context_bytes: st.codec_context_bytes,
        codec_context_bytes_at_end: end.codec_context_bytes,
        compressions: end.compressions,
        decompressions: end.decompressions,
        hit_rate: end.hit_rate(),
        dictionary_bytes: dict,
        decompressions_by_operation: trace.decompressions,
        decompressed_ahead_by_operation: trace.ahead,
        uncompressed_after_operation: trace.cached,
        floor,
    }
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    let n = xs.len();
    if n == 0 {
        0.0
    } else if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

fn median_figures(runs: &[Figures]) -> Figures {
    let m = |f: fn(&Figures) -> f64| median(runs.iter().map(f).collect());
    Figures {
        scan_ms: m(|f| f.scan_ms),
        open_ms: m(|f| f.open_ms),
        browse_ms: m(|f| f.browse_ms),
        delete_ms: m(|f| f.delete_ms),
        scan_cpu_ms: m(|f| f.scan_cpu_ms),
        open_cpu_ms: m(|f| f.open_cpu_ms),
        browse_cpu_ms: m(|f| f.browse_cpu_ms),
        delete_cpu_ms: m(|f| f.delete_cpu_ms),
        mem_bytes: m(|f| f.mem_bytes as f64) as i64,
        mem_malloc_bytes: m(|f| f.mem_malloc_bytes as f64) as i64,
    }
}

#[derive(Serialize, Clone, Copy, Debug)]
struct Ratios {
    /// Heap backend / compll, counted bytes.
    memory: f64,
    /// Heap backend / compll, malloc's figure (mallinfo2, or the estimate).
    memory_with_malloc_overhead: f64,
    /// Wall-clock time, compll / heap (what the aims are judged on).
    scan: f64,
    open: f64,
    browse: f64,
    delete: f64,
    /// Process CPU time (all threads), compll / heap.
    scan_cpu: f64,
    open_cpu: f64,
    browse_cpu: f64,
    delete_cpu: f64,
}

fn ratios(h: &Figures, c: &Figures) -> Ratios {
    let r = |a: f64, b: f64| if a > 0.0 { b / a } else { 0.0 };
    Ratios {
        memory: r(c.mem_bytes as f64, h.mem_bytes as f64),
        memory_with_malloc_overhead: r(c.mem_malloc_bytes as f64, h.mem_malloc_bytes as f64),
        scan: r(h.scan_ms, c.scan_ms),
        open: r(h.open_ms, c.open_ms),
        browse: r(h.browse_ms, c.browse_ms),
        delete: r(h.delete_ms, c.delete_ms),
        scan_cpu: r(h.scan_cpu_ms, c.scan_cpu_ms),
        open_cpu: r(h.open_cpu_ms, c.open_cpu_ms),
        browse_cpu: r(h.browse_cpu_ms, c.browse_cpu_ms),
        delete_cpu: r(h.delete_cpu_ms, c.delete_cpu_ms),
    }
}

impl Ratios {
    fn worst_slowdown(&self) -> f64 {
        self.scan.max(self.open).max(self.browse).max(self.delete)
    }
}

#[derive(Serialize)]
struct Report {
    source: String,
    /// How `mem_malloc_bytes` was obtained: "mallinfo2" or "estimate".
    malloc_source: &'static str,
    entries: usize,
    largest_dir: usize,
    reps: usize,
    block_size: usize,
    uncompressed: usize,
    codec: String,
    group_fields: usize,
    heap: Figures,
    compll: CompllRun,
    ratios: Ratios,
    #[serde(skip_serializing_if = "Option::is_none")]
    floor: Option<FloorReport>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    sweep: Vec<SweepRow>,
}

/// The floor against the heap backend: the least time each operation
/// would take if the codec were all compll added (medians over the runs).
#[derive(Serialize, Clone, Copy, Debug)]
struct FloorReport {
    #[serde(flatten)]
    floor: Floor,
    /// One block decompression: `decompress_ms / blocks`.
    decompress_block_ms: f64,
    /// `open_blocks` decompressions.
    open_ms: f64,
    /// `browse_blocks` decompressions.
    browse_ms: f64,
    /// `compress_ms` / the heap scan.
    scan_vs_heap: f64,
    /// `open_ms` / the heap open.
    open_vs_heap: f64,
    /// `browse_ms` / the heap browse.
    browse_vs_heap: f64,
    /// `decompress_ms` / the heap delete.
    delete_vs_heap: f64,
}

fn floor_report(runs: &[CompllRun], heap: &Figures) -> Option<FloorReport> {
    let floors: Vec<Floor> = runs.iter().filter_map(|r| r.floor).collect();
    let first = *floors.first()?;
    let f = Floor {
        compress_ms: median(floors.iter().map(|f| f.compress_ms).collect()),
        decompress_ms: median(floors.iter().map(|f| f.decompress_ms).collect()),
        ..first
    };
    let per = f.decompress_ms / f.blocks.max(1) as f64;
    let x = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
    let (open_ms, browse_ms) = (per * f.open_blocks as f64, per * f.browse_blocks as f64);
    Some(FloorReport {
        floor: f,
        decompress_block_ms: per,
        open_ms,
        browse_ms,
        scan_vs_heap: x(f.compress_ms, heap.scan_ms),
        open_vs_heap: x(open_ms, heap.open_ms),
        browse_vs_heap: x(browse_ms, heap.browse_ms),
        delete_vs_heap: x(f.decompress_ms, heap.delete_ms),
    })
}

fn print_floor(r: &FloorReport, heap: &Figures, rat: &Ratios, d: &PerOp, reps: usize) {
    let f = &r.floor;
    println!(
        "floor = the codec alone on the arena's own blocks after the scan ({} blocks, {:.2} MiB -> {:.2} MiB; Arena::block_images, cpu time of one thread, median of {reps}; against the heap's wall times):",
        f.blocks,
        mib(f.image_bytes as i64),
        mib(f.compressed_bytes as i64)
    );
    println!(
        "floor: compressing the scan's {} blocks once = {:.1} ms = {:.2}x the heap scan ({:.1} ms; one thread's work: the background compressor can take part of it off the scan; compll took {:.2}x)",
        f.blocks, f.compress_ms, r.scan_vs_heap, heap.scan_ms, rat.scan
    );
    println!(
        "floor: decompressing all {} blocks once (delete) = {:.1} ms = {:.2}x the heap delete ({:.1} ms; compll took {:.2}x)",
        f.blocks, f.decompress_ms, r.delete_vs_heap, heap.delete_ms, rat.delete
    );
    println!(
        "floor: open reads nodes in {} distinct blocks x one decompression ({:.4} ms) = {:.2} ms = {:.2}x the heap open ({:.2} ms; compll took {:.2}x with {} decompressions)",
        f.open_blocks, r.decompress_block_ms, r.open_ms, r.open_vs_heap, heap.open_ms, rat.open, d.open
    );
    println!(
        "floor: browse shows rows from {} distinct blocks x one decompression = {:.2} ms = {:.2}x the heap browse ({:.2} ms; compll took {:.2}x with {} decompressions)",
        f.browse_blocks, r.browse_ms, r.browse_vs_heap, heap.browse_ms, rat.browse, d.browse
    );
}

#[derive(Serialize, Clone)]
struct SweepRow {
    block_size: usize,
    uncompressed: usize,
    codec: String,
    group_fields: usize,
    mem_bytes: i64,
    mem_malloc_bytes: i64,
    ratios: Ratios,
    /// [`FloorReport::scan_vs_heap`] for this configuration.
    floor_scan_vs_heap: f64,
    /// [`FloorReport::delete_vs_heap`] for this configuration.
    floor_delete_vs_heap: f64,
}

fn mib(b: i64) -> f64 {
    b as f64 / (1024.0 * 1024.0)
}

/// The arena configuration for `args`, with the block size, cache size,
/// codec and grouping given (the sweep varies them).
fn config_for(
    args: &Args,
    block: usize,
    unc: usize,
    codec: &str,
    group: usize,
) -> Result<Config, String> {
    let c = Codec::parse(codec).map_err(|e| e.to_string())?;
    Ok(Config::default()
        .background_compression(args.background)
        .readahead(args.readahead)
        .cache_growth(args.cache_growth)
        .block_size(block)
        .uncompressed_blocks(unc)
        .node_cache(args.node_cache)
        .group_fields(group)
        .codec(c))
}

fn main() {
    let args = Args::parse();
    if let Err(e) = real_main(args) {
        eprintln!("compll-du: {e}");
        std::process::exit(1);
    }
}

fn real_main(args: Args) -> Result<(), String> {
    let (entries, source) = if let Some(d) = &args.scan {
        (
            scan_dir(d).map_err(|e| e.to_string())?,
            format!("scan {}", d.display()),
        )
    } else if let Some(f) = &args.import {
        (import_ncdu(f)?, format!("import {}", f.display()))
    } else {
        let n = args
            .generate
            .unwrap_or(if args.quick { 40_000 } else { 300_000 });
        let big = args
            .big_dir
            .unwrap_or(if args.quick { 5_000 } else { 25_000 })
            .min(n / 2);
        (
            generate(n, big, args.seed),
            format!("generated seed {}", args.seed),
        )
    };
    if let Some(p) = &args.export {
        export_ncdu(&entries, p).map_err(|e| e.to_string())?;
        println!("wrote {} entries to {}", entries.len(), p.display());
        return Ok(());
    }
    if entries.is_empty() {
        return Err("no entries".into());
    }
    let largest_dir = {
        let mut counts: HashMap<usize, usize> = HashMap::new();
        let mut stack: Vec<usize> = Vec::new();
        for (i, e) in entries.iter().enumerate() {
            stack.truncate(e.depth as usize);
            if let Some(&p) = stack.last() {
                *counts.entry(p).or_default() += 1;
            }
            if e.dir {
                stack.push(i);
            }
        }
        counts.values().copied().max().unwrap_or(0)
    };
    let cfg = config_for(
        &args,
        args.block_size,
        args.uncompressed,
        &args.codec,
        args.group_fields,
    )?;
    // Checked without starting a compressor thread (see below).
    Arena::new(cfg.clone().background_compression(0)).map_err(|e| e.to_string())?;
    let reps = args.reps.max(1);

    // One unmeasured run of each backend first: the first run in a process
    // pays for faulting in the pages malloc takes from the kernel (the heap
    // backend's first scan took about twice as long as the later ones),
    // which would otherwise weigh on the heap figures of a single-rep run.
    //
    // Every heap run comes before the first compll run: an arena with a
    // background compressor starts a thread, and from then on glibc's
    // malloc takes its multi-threaded (locking) paths for the rest of the
    // process, which made the heap backend's scan some 40 % slower when
    // the runs alternated. The heap figures are those of a program that
    // never starts a thread.
    run_heap(&entries);
    let heap_runs: Vec<Figures> = (0..reps).map(|_| run_heap(&entries)).collect();
    run_compll(&entries, &cfg, false);
    let compll_runs: Vec<CompllRun> = (0..reps)
        .map(|_| run_compll(&entries, &cfg, true))
        .collect();
    let heap = median_figures(&heap_runs);
    let mut compll = compll_runs[0].clone();
    compll.figures = median_figures(&compll_runs.iter().map(|r| r.figures).collect::<Vec<_>>());
    let rat = ratios(&heap, &compll.figures);
    let floor = floor_report(&compll_runs, &heap);

    println!(
        "compll-du: {} entries ({source}), largest directory {largest_dir} entries, median of {reps}",
        entries.len()
    );
    println!(
        "config: block {} B, {} uncompressed, codec {}, {} node bytes grouped, {} blocks may wait for the background compressor, {} read ahead",
        args.block_size, args.uncompressed, args.codec, args.group_fields, args.background, args.readahead
    );
    println!("times: wall clock (what the ratios and aims use); cpu = CPU time of the whole process, all threads");
    println!(
        "memory after the scan: counted = bytes requested through the Rust allocator (+ zstd's context sizes); {}",
        malloc_meter::DESCRIPTION
    );
    println!(
        "{:<10} {:>10} {:>10} {:>10} {:>10} {:>12} {:>15}",
        "backend",
        "scan ms",
        "open ms",
        "browse ms",
        "delete ms",
        "counted MiB",
        if malloc_meter::SOURCE == "mallinfo2" {
            "mallinfo2 MiB"
        } else {
            "malloc est MiB"
        }
    );
    for (name, f) in [("heap", &heap), ("compll", &compll.figures)] {
        println!(
            "{name:<10} {:>10.1} {:>10.2} {:>10.2} {:>10.1} {:>12.2} {:>15.2}",
            f.scan_ms,
            f.open_ms,
            f.browse_ms,
            f.delete_ms,
            mib(f.mem_bytes),
            mib(f.mem_malloc_bytes)
        );
    }
    for (name, f) in [("heap cpu", &heap), ("compll cpu", &compll.figures)] {
        println!(
            "{name:<10} {:>10.1} {:>10.2} {:>10.2} {:>10.1}",
            f.scan_cpu_ms, f.open_cpu_ms, f.browse_cpu_ms, f.delete_cpu_ms,
        );
    }
    println!(
        "{:<10} {:>9.2}x {:>9.2}x {:>9.2}x {:>9.2}x {:>11.2}x {:>14.2}x  (times: compll/heap, memory: heap/compll)",
        "ratio",
        rat.scan,
        rat.open,
        rat.browse,
        rat.delete,
        rat.memory,
        rat.memory_with_malloc_overhead
    );
    println!(
        "{:<10} {:>9.2}x {:>9.2}x {:>9.2}x {:>9.2}x  (process cpu time: compll/heap)",
        "ratio cpu", rat.scan_cpu, rat.open_cpu, rat.browse_cpu, rat.delete_cpu
    );
    println!(
        "compll after scan: compressed {:.2} MiB, uncompressed {:.2} MiB, overhead {:.2} MiB, codec contexts {:.2} MiB (arena's own count {:.2} MiB of {:.2} MiB measured); {} compressions, {} decompressions, hit rate {:.3}",
        mib(compll.compressed_bytes as i64),
        mib(compll.uncompressed_bytes as i64),
        mib(compll.overhead_bytes as i64),
        mib(compll.codec_context_bytes as i64),
        mib((compll.compressed_bytes + compll.uncompressed_bytes + compll.overhead_bytes + compll.codec_context_bytes) as i64),
        mib(compll.figures.mem_bytes),
        compll.compressions,
        compll.decompressions,
        compll.hit_rate
    );
    let d = compll.decompressions_by_operation;
    let a = compll.decompressed_ahead_by_operation;
    println!(
        "compll decompressions by operation: scan {}, open {}, browse {}, delete {} (of which read ahead on the other core: {}, {}, {}, {})",
        d.scan, d.open, d.browse, d.delete, a.scan, a.open, a.browse, a.delete
    );
    println!(
        "compll codec contexts: {:.3} MiB after the scan, {:.3} MiB after delete (the background thread's decompression context is created on its first read-ahead)",
        mib(compll.codec_context_bytes as i64),
        mib(compll.codec_context_bytes_at_end as i64)
    );
    let u = compll.uncompressed_after_operation;
    println!(
        "compll uncompressed blocks held at the end of each operation (cache + waiting for the compressor): scan {:.2} MiB, open {:.2} MiB, browse {:.2} MiB, delete {:.2} MiB",
        mib(u.scan as i64),
        mib(u.open as i64),
        mib(u.browse as i64),
        mib(u.delete as i64)
    );
    if let Some(f) = &floor {
        print_floor(f, &heap, &rat, &d, reps);
    }

    let mut sweep = Vec::new();
    if args.sweep {
        let (mut blocks, mut uncs, mut codecs): (&[usize], &[usize], &[&str]) = if args.quick {
            (
                &[8192, 32768],
                &[4, 10],
                &["lz4", "zstd-1", "zlib-5", "zstd-3-dict"],
            )
        } else {
            (
                &[4096, 16384, 32768, 65536],
                &[4, 10, 32],
                &["lz4", "zstd-1", "zstd-3", "zlib-5", "zlib-9", "zstd-3-dict"],
            )
        };
        // Whole nodes, and the node's fixed fields grouped by column.
        let mut groups: &[usize] = &[0, F_NAME];
        let named: Vec<&str> = args.sweep_codecs.iter().map(String::as_str).collect();
        if !args.sweep_blocks.is_empty() {
            blocks = &args.sweep_blocks;
        }
        if !args.sweep_uncompressed.is_empty() {
            uncs = &args.sweep_uncompressed;
        }
        if !named.is_empty() {
            codecs = &named;
        }
        if !args.sweep_groups.is_empty() {
            groups = &args.sweep_groups;
        }
        println!();
        println!("sweep (memory = heap / compll, counted and by {}; times = compll / heap; floors = the codec alone compressing / decompressing every block once, against the heap scan / delete; medians of {reps}, against the heap medians above)", malloc_meter::SOURCE);
        println!(
            "{:>8} {:>6} {:<12} {:>5} {:>9} {:>9} {:>7} {:>8} {:>7} {:>7} {:>7} {:>7} {:>8} {:>8}",
            "block",
            "uncomp",
            "codec",
            "group",
            "mem MiB",
            "malloc MiB",
            "mem x",
            "malloc x",
            "scan",
            "open",
            "browse",
            "delete",
            "fl.scan",
            "fl.del"
        );
        for &b in blocks {
            for &u in uncs {
                for (&c, &g) in codecs
                    .iter()
                    .flat_map(|c| groups.iter().map(move |g| (c, g)))
                {
                    let cfg = config_for(&args, b, u, c, g)?;
                    let runs: Vec<CompllRun> = (0..reps)
                        .map(|_| run_compll(&entries, &cfg, true))
                        .collect();
                    let f = median_figures(&runs.iter().map(|r| r.figures).collect::<Vec<_>>());
                    let rt = ratios(&heap, &f);
                    let fl = floor_report(&runs, &heap).expect("floor measured");
                    println!(
                        "{b:>8} {u:>6} {c:<12} {g:>5} {:>9.2} {:>9.2} {:>7.2} {:>8.2} {:>7.2} {:>7.2} {:>7.2} {:>7.2} {:>8.2} {:>8.2}",
                        mib(f.mem_bytes),
                        mib(f.mem_malloc_bytes),
                        rt.memory,
                        rt.memory_with_malloc_overhead,
                        rt.scan,
                        rt.open,
                        rt.browse,
                        rt.delete,
                        fl.scan_vs_heap,
                        fl.delete_vs_heap
                    );
                    sweep.push(SweepRow {
                        block_size: b,
                        uncompressed: u,
                        codec: c.to_string(),
                        group_fields: g,
                        mem_bytes: f.mem_bytes,
                        mem_malloc_bytes: f.mem_malloc_bytes,
                        ratios: rt,
                        floor_scan_vs_heap: fl.scan_vs_heap,
                        floor_delete_vs_heap: fl.delete_vs_heap,
                    });
                }
            }
        }
        let show = |what: &str, r: &SweepRow| {
            println!(
                "{what}: block {} uncompressed {} {} group {}: {:.2}x lower counted, {:.2}x by {}, worst slowdown {:.2}x",
                r.block_size,
                r.uncompressed,
                r.codec,
                r.group_fields,
                r.ratios.memory,
                r.ratios.memory_with_malloc_overhead,
                malloc_meter::SOURCE,
                r.ratios.worst_slowdown()
            );
        };
        let by_counted = |a: &&SweepRow, b: &&SweepRow| a.ratios.memory.total_cmp(&b.ratios.memory);
        let by_malloc = |a: &&SweepRow, b: &&SweepRow| {
            a.ratios
                .memory_with_malloc_overhead
                .total_cmp(&b.ratios.memory_with_malloc_overhead)
        };
        if let Some(best) = sweep.iter().max_by(by_counted) {
            show("best memory (counted)", best);
        }
        if let Some(best) = sweep.iter().max_by(by_malloc) {
            show(&format!("best memory ({})", malloc_meter::SOURCE), best);
        }
        if let Some(best) = sweep
            .iter()
            .filter(|r| r.ratios.worst_slowdown() <= 4.0)
            .max_by(by_counted)
        {
            show(
                "best memory (counted) with every operation at most 4x slower (wall)",
                best,
            );
        }
    }

    if let Some(j) = &args.json {
        let report = Report {
            source,
            malloc_source: malloc_meter::SOURCE,
            entries: entries.len(),
            largest_dir,
            reps,
            block_size: args.block_size,
            uncompressed: args.uncompressed,
            codec: args.codec.clone(),
            group_fields: args.group_fields,
            heap,
            compll,
            ratios: rat,
            floor,
            sweep,
        };
        let text = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
        if j == "-" {
            println!("{text}");
        } else {
            std::fs::write(j, text + "\n").map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}
