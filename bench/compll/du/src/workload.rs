//! The workload of the original study, on either backend: build the tree
//! (scan), sort the largest directory by size (open), redraw a scrolling
//! window of it (browse), free everything (delete); [`run`] times the four
//! and measures the memory the tree holds after the scan.

use std::collections::HashMap;

use serde::Serialize;

use crate::entries::Entry;
use crate::measure::{heap_in_use, malloc_meter, span, stamp, MALLOC_OVERHEAD};
use crate::store::Store;

/// One run's times and memory on one backend.
#[derive(Serialize, Clone, Copy, Default, Debug)]
pub(crate) struct Figures {
    /// Wall-clock time of each operation.
    pub(crate) scan_ms: f64,
    pub(crate) open_ms: f64,
    pub(crate) browse_ms: f64,
    pub(crate) delete_ms: f64,
    /// CPU time of the whole process (all threads) during each operation.
    pub(crate) scan_cpu_ms: f64,
    pub(crate) open_cpu_ms: f64,
    pub(crate) browse_cpu_ms: f64,
    pub(crate) delete_cpu_ms: f64,
    /// CPU time of the thread that runs the operation (for compll the
    /// arena's own thread; the rest of the process CPU is the background
    /// thread's). For the heap the same as the process CPU.
    pub(crate) scan_thread_ms: f64,
    pub(crate) open_thread_ms: f64,
    pub(crate) browse_thread_ms: f64,
    pub(crate) delete_thread_ms: f64,
    /// Bytes requested through the Rust allocator (plus, for zstd, the
    /// context sizes zstd reports), live after the scan.
    pub(crate) mem_bytes: i64,
    /// Bytes malloc has in use after the scan minus before it (mallinfo2),
    /// or `mem_bytes` plus an estimated overhead per allocation where
    /// mallinfo2 is not available (see the report's `malloc_source`).
    pub(crate) mem_malloc_bytes: i64,
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

/// Per operation counts (block decompressions).
#[derive(Serialize, Clone, Copy, Default, Debug)]
pub(crate) struct PerOp {
    pub(crate) scan: u64,
    pub(crate) open: u64,
    pub(crate) browse: u64,
    pub(crate) delete: u64,
}

/// What a run saw besides its figures.
pub(crate) struct Trace {
    /// Ids of the nodes open lists (the whole directory).
    pub(crate) listed: Vec<u64>,
    /// Ids of the rows browse shows.
    pub(crate) shown: Vec<u64>,
    pub(crate) decompressions: PerOp,
    /// Of those, done ahead on the background thread.
    pub(crate) ahead: PerOp,
    /// Uncompressed bytes held at the end of each operation.
    pub(crate) cached: PerOp,
}

/// Runs the four operations on one store; `make` creates it after the
/// memory baseline so everything it allocates is counted. `extra_mem`
/// adds bytes the counting allocator cannot see; `probe` runs after the
/// scan has been measured, outside every timed operation.
pub(crate) fn run<S: Store>(
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
    let (scan, open, browse, delete) = (span(t0, t1), span(t2, t3), span(t3b, t4), span(t4b, t5));
    (
        Figures {
            scan_ms: scan.wall,
            open_ms: open.wall,
            browse_ms: browse.wall,
            delete_ms: delete.wall,
            scan_cpu_ms: scan.cpu,
            open_cpu_ms: open.cpu,
            browse_cpu_ms: browse.cpu,
            delete_cpu_ms: delete.cpu,
            scan_thread_ms: scan.thread,
            open_thread_ms: open.thread,
            browse_thread_ms: browse.thread,
            delete_thread_ms: delete.thread,
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

#[cfg(test)]
mod tests {
    use compll::{Arena, Config};

    use super::*;
    use crate::entries::{generate, largest_dir};
    use crate::store::compll::CompllStore;
    use crate::store::heap::HeapStore;

    /// Builds the tree, lists its largest directory and draws every row of
    /// it (sorted: equal sizes may list in either order), then deletes it.
    fn rows<S: Store>(s: &mut S, entries: &[Entry]) -> Vec<String> {
        let (root, big) = build(s, entries);
        let (list, _, max) = open(s, big, 0);
        assert_eq!(list.len(), largest_dir(entries));
        let mut out = String::new();
        for &id in &list {
            s.row(id, max, &mut out);
        }
        delete(s, root);
        let mut rows: Vec<String> = out.lines().map(str::to_string).collect();
        rows.sort();
        rows
    }

    #[test]
    fn both_backends_hold_the_same_tree() {
        let entries = generate(3000, 300, 7);
        let heap = rows(&mut HeapStore::with_capacity(entries.len()), &entries);
        let arena = Arena::new(Config::default().background_compression(0)).unwrap();
        let compll = rows(&mut CompllStore { arena }, &entries);
        assert_eq!(heap.len(), 300);
        assert_eq!(heap, compll);
    }
}
