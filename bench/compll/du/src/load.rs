//! Load beside the measurement, so figures "on a busy machine" can be
//! reproduced anywhere: `--load N` starts N child processes of this
//! program, each spinning on integer arithmetic (a seeded xorshift) on
//! whatever core the scheduler gives it, before the first measured run,
//! and stops them after the last. They are processes, not threads of the
//! benchmark: the measured process stays as other programs' builds would
//! leave it (a thread would switch malloc to its multi-threaded paths, see
//! `main`). Each child ends by itself when its standard input closes, so
//! none outlives the benchmark even if it is killed. Also reads the
//! machine's load average, printed beside every report.

use std::io::{Read, Write};
use std::process::{Child, Command, Stdio};

/// The spinning children; stopped when dropped.
pub(crate) struct Load {
    children: Vec<Child>,
}

impl Load {
    /// Starts `n` spinning children (seeds `seed`, `seed + 1`, ...) and
    /// returns once every one has said it is spinning.
    pub(crate) fn start(n: usize, seed: u64) -> Result<Load, String> {
        let exe = std::env::current_exe().map_err(|e| format!("--load: {e}"))?;
        let mut load = Load {
            children: Vec::new(),
        };
        for i in 0..n {
            let child = Command::new(&exe)
                .arg("--spin")
                .arg((seed.wrapping_add(i as u64)).to_string())
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .map_err(|e| format!("--load: starting a spinning process: {e}"))?;
            load.children.push(child);
        }
        for c in &mut load.children {
            // The child writes one byte once it spins: waiting on that
            // event, not on a delay.
            let mut b = [0u8; 1];
            let out = c.stdout.as_mut().ok_or("--load: no pipe")?;
            out.read_exact(&mut b)
                .map_err(|e| format!("--load: a spinning process did not start: {e}"))?;
        }
        Ok(load)
    }

    /// Number of spinning processes.
    pub(crate) fn len(&self) -> usize {
        self.children.len()
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        for c in &mut self.children {
            // Closing its stdin ends it; kill it too in case it is slow to
            // be scheduled, then reap it.
            drop(c.stdin.take());
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// The body of a spinning child (`compll-du --spin SEED`): spins until its
/// standard input closes, then exits.
pub(crate) fn spin(seed: u64) -> ! {
    std::thread::spawn(|| {
        let mut sink = Vec::new();
        let _ = std::io::stdin().read_to_end(&mut sink);
        std::process::exit(0);
    });
    let mut out = std::io::stdout();
    let _ = out.write_all(b"s");
    let _ = out.flush();
    let mut x = seed | 1;
    loop {
        for _ in 0..1_000_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        std::hint::black_box(x);
    }
}

/// The machine's load averages over 1, 5 and 15 minutes
/// (`/proc/loadavg`); `None` where there is no such file.
pub(crate) fn loadavg() -> Option<[f64; 3]> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    let mut it = text.split_whitespace().map(|w| w.parse::<f64>().ok());
    Some([it.next()??, it.next()??, it.next()??])
}
