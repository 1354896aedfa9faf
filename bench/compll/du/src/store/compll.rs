//! Nodes inside a compll arena, each a record of fixed fields and a name.

use compll::{Arena, Handle};

use super::{draw_row, Store};
use crate::entries::Entry;

// compll node layout (little endian):
//   0 size, 8 asize, 16 ino, 24 dev, 32 mtime, 40 parent, 48 next, 56 sub,
//   64 hlnk (u64 each), 72 flags (u8), 73 name length (u8), 74 name.
const F_ASIZE: usize = 8;
const F_NEXT: usize = 48;
const F_SUB: usize = 56;
const F_HLNK: usize = 64;
const F_FLAGS: usize = 72;
/// Where the name starts: the node's fixed fields are the bytes before it.
pub(crate) const F_NAME: usize = 74;

/// The nodes, each one arena allocation named by its handle.
pub(crate) struct CompllStore {
    pub(crate) arena: Arena,
}

/// The little-endian u64 at `at` in a node's bytes.
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
