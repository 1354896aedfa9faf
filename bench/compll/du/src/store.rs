//! The two backends the workload runs on, behind one trait: plain heap
//! nodes ([`heap::HeapStore`]) and nodes inside a compll arena
//! ([`compll::CompllStore`]); and the browser line both draw.

pub(crate) mod compll;
pub(crate) mod heap;

use std::fmt::Write as _;

use crate::entries::Entry;

/// The operations the workload needs from a node store. Ids are 64-bit,
/// 0 meaning "none", like pointers.
pub(crate) trait Store {
    /// Adds a node linked to `parent` and to its next sibling `next`.
    fn add(&mut self, e: &Entry, parent: u64, next: u64) -> u64;
    fn sub(&self, id: u64) -> u64;
    fn next(&self, id: u64) -> u64;
    /// The node's (first child, next sibling) links, read in one access
    /// as the node is freed.
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

/// Appends one browser line: size, a bar against `max`, and the name.
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

/// `n` bytes in the largest binary unit that keeps the figure at least 1.
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
