//! A generated tree shaped like a real disk: a camera dump (the large
//! directory the benchmark opens and browses), a maildir, and project trees
//! of source-like names, with neighbouring inodes and shared modification
//! times. The same seed gives the same entries.

use super::Entry;

/// The generator's only source of choices, seeded.
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

/// The entries generated so far and the state the next one is drawn from.
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

/// `total` entries, `big` of them in the camera directory, from `seed`.
pub(crate) fn generate(total: usize, big: usize, seed: u64) -> Vec<Entry> {
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
