//! Plain heap nodes, the backend compll is measured against.

use super::{draw_row, Store};
use crate::entries::Entry;

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

/// The heap nodes, by id - 1; freed nodes leave `None`.
pub(crate) struct HeapStore {
    nodes: Vec<Option<Box<HeapNode>>>,
}

impl HeapStore {
    /// A store whose id table holds `n` nodes without growing.
    pub(crate) fn with_capacity(n: usize) -> Self {
        HeapStore {
            nodes: Vec::with_capacity(n),
        }
    }
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
