//! The on-disk B+tree behind group links, attributes and chunk indexes.
//!
//! Keys and values are byte strings ordered by bytes; each node is one page
//! of 64 to 4096 bytes.
//!
//! Leaf page payload:
//! ```text
//! +0  u16  n            number of entries
//! +2  n × { u16 klen, u16 vlen, key[klen], value[vlen] }
//! ```
//! Internal page payload:
//! ```text
//! +0  u16  n            number of separator keys
//! +2  u64  child[0]
//! +10 n × { u16 klen, key[klen], u64 child[i+1] }
//! ```
//! `child[i+1]` holds keys `>= key[i]`.
//!
//! Invariants:
//! - B1: keys within a node are strictly increasing.
//! - B2: every node fits its page; a node that outgrows its page moves to a
//!   larger one (at least twice its size, up to 4096 bytes) and splits only past 4096. Entries are
//!   bounded by [`MAX_KEY`] and [`MAX_VALUE`] so a split always yields two
//!   nodes that fit.
//! - B3: all leaves are at the same depth; an internal node has at least one
//!   child; the root is a leaf or has at least two children.
//! - B4: no node is empty except a root leaf, and an empty tree has root 0.
//!
//! A node that overflows splits in two halves by bytes, except on an
//! append (a key past every key of the tree): then the node keeps what it
//! held, full, and the new key starts a right sibling (for an internal
//! node: the new separator moves up and its child alone starts the
//! sibling, which thus has one child and no key). An appended tree is so
//! filled to its pages, not half of them.
//!
//! Deletion removes emptied nodes but does not rebalance half-empty ones,
//! so depth stays bounded by the largest size the tree has had.

use crate::error::{Error, Result};
use crate::format::codec::Reader;
use crate::format::page::{payload, HEADER as PAGE_HEADER};
use crate::pager::{size_for, Family, Page, PAGE_PAYLOAD, PAGE_SIZE};
use crate::pool::lists::ENCODE;
use crate::pool::{ObjectList, Pooled, PooledBuf, Recycle};
use crate::space::{Section, SpaceKind};
use crate::store::Store;

/// Longest key a tree accepts.
pub const MAX_KEY: usize = 256;
/// Longest value a tree accepts.
pub const MAX_VALUE: usize = 600;
/// Deeper than this can only be a cycle in a damaged file.
const MAX_DEPTH: usize = 48;

const LEAF: &Family = b"ABL";
const INTERNAL: &Family = b"ABI";

/// Where one entry's key and value live in [`Node::bytes`].
#[derive(Debug, Clone, Copy, Default)]
struct Entry {
    key: u32,
    key_len: u16,
    val: u32,
    val_len: u16,
}

/// A decoded node. Keys and values share one byte buffer (a `Vec` per key
/// was the hottest allocation churn of a rewrite), and nodes come from a
/// free list, so loading a node allocates nothing once the list is warm.
/// Bytes of replaced or removed entries stay in `bytes` until the node is
/// dropped; `entries` alone says what the node holds.
#[derive(Debug, Default)]
struct Node {
    leaf: bool,
    bytes: Vec<u8>,
    entries: Vec<Entry>,
    children: Vec<u64>,
    /// For a node read from the file: the smallest page that held its
    /// entries then, the bytes it proved its own (0 for a new node).
    held: usize,
}

impl Recycle for Node {
    fn recycle(&mut self) {
        self.leaf = false;
        self.bytes.clear();
        self.entries.clear();
        self.children.clear();
        self.held = 0;
    }
    fn heap_bytes(&self) -> usize {
        self.bytes.capacity()
            + self.entries.capacity() * std::mem::size_of::<Entry>()
            + self.children.capacity() * 8
    }
}

static NODES: ObjectList<Node> = ObjectList::new("B-tree nodes");

impl Node {
    fn new(leaf: bool) -> Pooled<Node> {
        let mut n = NODES.take();
        n.leaf = leaf;
        n
    }

    fn len(&self) -> usize {
        self.entries.len()
    }

    fn key(&self, i: usize) -> &[u8] {
        let e = self.entries[i];
        &self.bytes[e.key as usize..e.key as usize + e.key_len as usize]
    }

    fn val(&self, i: usize) -> &[u8] {
        let e = self.entries[i];
        &self.bytes[e.val as usize..e.val as usize + e.val_len as usize]
    }

    /// Append `key` and `val` to the byte buffer; entries are bounded by
    /// [`MAX_KEY`] and [`MAX_VALUE`], so the lengths fit a u16.
    fn entry(&mut self, key: &[u8], val: &[u8]) -> Entry {
        let k = self.bytes.len();
        self.bytes.extend_from_slice(key);
        let v = self.bytes.len();
        self.bytes.extend_from_slice(val);
        Entry {
            key: k as u32,
            key_len: key.len() as u16,
            val: v as u32,
            val_len: val.len() as u16,
        }
    }

    fn insert_entry(&mut self, i: usize, key: &[u8], val: &[u8]) {
        let e = self.entry(key, val);
        self.entries.insert(i, e);
    }

    fn set_val(&mut self, i: usize, val: &[u8]) {
        let v = self.bytes.len();
        self.bytes.extend_from_slice(val);
        self.entries[i].val = v as u32;
        self.entries[i].val_len = val.len() as u16;
    }

    /// Index of the first key `>= key`, and whether it is equal.
    fn search(&self, key: &[u8]) -> std::result::Result<usize, usize> {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            match key_cmp(self.key(mid), key) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Ok(mid),
            }
        }
        Err(lo)
    }

    fn encoded_len(&self) -> usize {
        let keys: usize = self.entries.iter().map(|e| e.key_len as usize).sum();
        if self.leaf {
            let vals: usize = self.entries.iter().map(|e| e.val_len as usize).sum();
            2 + 4 * self.len() + keys + vals
        } else {
            2 + 8 + 10 * self.len() + keys
        }
    }

    fn encode(&self) -> PooledBuf {
        let mut w = ENCODE.take_empty(self.encoded_len());
        w.extend_from_slice(&(self.len() as u16).to_le_bytes());
        if self.leaf {
            for i in 0..self.len() {
                let (k, v) = (self.key(i), self.val(i));
                w.extend_from_slice(&(k.len() as u16).to_le_bytes());
                w.extend_from_slice(&(v.len() as u16).to_le_bytes());
                w.extend_from_slice(k);
                w.extend_from_slice(v);
            }
        } else {
            w.extend_from_slice(&self.children[0].to_le_bytes());
            for i in 0..self.len() {
                let k = self.key(i);
                w.extend_from_slice(&(k.len() as u16).to_le_bytes());
                w.extend_from_slice(k);
                w.extend_from_slice(&self.children[i + 1].to_le_bytes());
            }
        }
        w
    }

    fn load(st: &mut Store, addr: u64) -> Result<Pooled<Node>> {
        let (leaf, what, page) = read_node(st, addr)?;
        let eof = st.space.eof();
        let mut r = Reader::new(payload(&page), what, addr);
        let n = r.u16()? as usize;
        let mut node = Node::new(leaf);
        let key = |r: &mut Reader, kl: usize| {
            if kl == 0 || kl > MAX_KEY {
                return Err(r.corrupt(format!("key of {kl} bytes")));
            }
            Ok(())
        };
        let child = |r: &mut Reader| -> Result<u64> {
            let c = r.u64()?;
            if c < crate::pager::PAGE_SIZE as u64 || c >= eof || c == addr {
                return Err(r.corrupt(format!("child at {c} outside the file or the node itself")));
            }
            Ok(c)
        };
        if leaf {
            for _ in 0..n {
                let kl = r.u16()? as usize;
                let vl = r.u16()? as usize;
                key(&mut r, kl)?;
                if vl > MAX_VALUE {
                    return Err(r.corrupt(format!("value of {vl} bytes")));
                }
                let k = r.bytes(kl)?;
                let v = r.bytes(vl)?;
                let e = node.entry(k, v);
                node.entries.push(e);
            }
        } else {
            node.children.push(child(&mut r)?);
            for _ in 0..n {
                let kl = r.u16()? as usize;
                key(&mut r, kl)?;
                let k = r.bytes(kl)?;
                let e = node.entry(k, b"");
                node.entries.push(e);
                node.children.push(child(&mut r)?);
            }
        }
        if (1..node.len()).any(|i| node.key(i - 1) >= node.key(i)) {
            return Err(r.corrupt("keys out of order"));
        }
        // A node is rewritten in place over its whole page, so a size byte
        // that claims more than the node's own page would write over its
        // neighbours: the writer leaves the room after the entries zero,
        // and a page whose tail holds anything else takes in bytes that
        // belong to another structure.
        node.held = size_for(payload(&page).len() - r.remaining()).unwrap_or(PAGE_SIZE);
        check_room_is_empty(&mut r, page.len())?;
        Ok(node)
    }

    fn family(&self) -> &'static Family {
        if self.leaf {
            LEAF
        } else {
            INTERNAL
        }
    }

    /// Write to a new page of at least `min` bytes, sized with room to grow.
    fn write_new(&self, st: &mut Store, min: usize) -> Result<u64> {
        let enc = self.encode();
        // A quarter more than needed, so a node that grows moves rarely;
        // a small tree (one object's few attributes) stays small.
        let size = size_for(enc.len() + enc.len() / 4)
            .or_else(|| size_for(enc.len()))
            .unwrap_or(PAGE_SIZE)
            .max(min);
        let addr = st.alloc_page(size)?;
        st.pager.write_new(addr, self.family(), size, &enc)?;
        Ok(addr)
    }

    /// Write back at `addr`, or move to a larger page if the node outgrew it;
    /// returns where the node now lives (B2).
    fn rewrite(&self, st: &mut Store, addr: u64) -> Result<u64> {
        let enc = self.encode();
        let mut size = st.pager.size_of(addr)?;
        if self.held != 0 && self.held < size && st.space.is_named(addr) {
            // A page of an earlier session, its space not proven: past the
            // bytes its entries held when read, the room its size byte
            // claims may be a neighbour's zeros (a contiguous dataset of
            // zeros) as well as its own slack. It gives up that room, set
            // aside until a proof, and never writes there (S7).
            let family = self.family();
            st.pager.write_new(addr, family, self.held, &[])?;
            st.space.free(
                SpaceKind::Meta,
                addr + self.held as u64,
                (size - self.held) as u64,
            )?;
            size = self.held;
        }
        if enc.len() + PAGE_HEADER <= size {
            st.pager.write(addr, self.family(), &enc)?;
            return Ok(addr);
        }
        // At least double, so a node that keeps growing moves O(log) times.
        let new = self.write_new(st, (size * 2).min(PAGE_SIZE))?;
        st.free_page(addr)?;
        Ok(new)
    }

    /// Index of the child that may hold `key`.
    fn child_index(&self, key: &[u8]) -> usize {
        match self.search(key) {
            Ok(i) => i + 1,
            Err(i) => i,
        }
    }

    /// Split off the last entry (a leaf's) or the last child (an internal
    /// node's, whose last key moves up) as a new right node; returns
    /// (separator, right). What stays is what the node held before its
    /// last entry was added, so it fits the page it had.
    fn split_last(&mut self) -> (Vec<u8>, Pooled<Node>) {
        let at = self.len() - 1;
        let sep = self.key(at).to_vec();
        let mut right = Node::new(self.leaf);
        if self.leaf {
            let e = right.entry(self.key(at), self.val(at));
            right.entries.push(e);
        } else if let Some(&c) = self.children.last() {
            right.children.push(c);
            self.children.pop();
        }
        self.entries.truncate(at);
        (sep, right)
    }

    /// Split an over-full node in two by bytes; returns (separator, right).
    fn split(&mut self) -> (Vec<u8>, Pooled<Node>) {
        let total = self.encoded_len();
        let mut acc = 2;
        let mut at = 1;
        for (i, e) in self.entries.iter().enumerate() {
            acc += e.key_len as usize
                + if self.leaf {
                    4 + e.val_len as usize
                } else {
                    10
                };
            if acc >= total / 2 {
                at = i.max(1);
                break;
            }
        }
        let at = at.min(self.len() - 1);
        let mut right = Node::new(self.leaf);
        if self.leaf {
            for i in at..self.len() {
                let e = right.entry(self.key(i), self.val(i));
                right.entries.push(e);
            }
            let sep = self.key(at).to_vec();
            self.entries.truncate(at);
            (sep, right)
        } else {
            // The key at `at` moves up as the separator.
            for i in at + 1..self.len() {
                let e = right.entry(self.key(i), b"");
                right.entries.push(e);
            }
            let sep = self.key(at).to_vec();
            self.entries.truncate(at);
            right.children.extend_from_slice(&self.children[at + 1..]);
            self.children.truncate(at + 1);
            (sep, right)
        }
    }
}

/// Bytewise order of two keys, their first eight bytes compared as one
/// number: lookups compare a key with every entry of a leaf they pass,
/// and a chunk index's keys (big-endian coordinates) mostly differ there.
fn key_cmp(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    if let (Some(x), Some(y)) = (a.first_chunk::<8>(), b.first_chunk::<8>()) {
        let (x, y) = (u64::from_be_bytes(*x), u64::from_be_bytes(*y));
        if x != y {
            return x.cmp(&y);
        }
    }
    a.cmp(b)
}

fn check_entry(key: &[u8], val: &[u8]) -> Result<()> {
    if key.is_empty() || key.len() > MAX_KEY {
        return Err(Error::invalid(format!(
            "key length {} outside 1..={MAX_KEY}",
            key.len()
        )));
    }
    if val.len() > MAX_VALUE {
        return Err(Error::invalid(format!(
            "value longer than {MAX_VALUE} bytes"
        )));
    }
    Ok(())
}

/// Look up `key`, scanning page bytes in place (no per-entry allocation).
pub(crate) fn get(st: &mut Store, root: u64, key: &[u8]) -> Result<Option<Vec<u8>>> {
    get_with(st, root, key, |v| v.to_vec())
}

/// Look up `key` and hand its value, still in the page, to `f`.
pub(crate) fn get_with<R>(
    st: &mut Store,
    root: u64,
    key: &[u8],
    f: impl FnOnce(&[u8]) -> R,
) -> Result<Option<R>> {
    if root == 0 {
        return Ok(None);
    }
    let mut addr = root;
    for _ in 0..MAX_DEPTH {
        let (leaf, what, page) = read_node(st, addr)?;
        let mut r = Reader::new(payload(&page), what, addr);
        let n = r.u16()? as usize;
        if leaf {
            for _ in 0..n {
                let kl = r.u16()? as usize;
                let vl = r.u16()? as usize;
                let k = r.bytes(kl)?;
                let v = r.bytes(vl)?;
                match key_cmp(k, key) {
                    std::cmp::Ordering::Less => {}
                    std::cmp::Ordering::Equal => return Ok(Some(f(v))),
                    std::cmp::Ordering::Greater => return Ok(None),
                }
            }
            return Ok(None);
        }
        // The child left of the first separator greater than `key`.
        let mut child = r.u64()?;
        for _ in 0..n {
            let kl = r.u16()? as usize;
            let k = r.bytes(kl)?;
            let c = r.u64()?;
            if key_cmp(k, key).is_gt() {
                break;
            }
            child = c;
        }
        addr = child;
    }
    Err(Error::corrupt(
        "B-tree internal page",
        addr,
        "tree deeper than any valid tree",
    ))
}

/// Look up `key` in a tree whose entries all have keys of `key.len()`
/// bytes and values of `val_len` (a chunk index), and hand its value,
/// still in the page, to `f`. Entries of one size lie at a fixed stride in
/// a page, so each node is binary searched in place instead of scanned
/// (a 4 KiB leaf of a chunk index holds 113 entries, an internal node
/// over 200 separators). An entry of another size is damage.
pub(crate) fn get_fixed_with<R>(
    st: &mut Store,
    root: u64,
    key: &[u8],
    val_len: usize,
    f: impl FnOnce(&[u8]) -> R,
) -> Result<Option<R>> {
    if root == 0 {
        return Ok(None);
    }
    check_entry(key, &[])?;
    if val_len > MAX_VALUE {
        return Err(Error::invalid(format!(
            "value longer than {MAX_VALUE} bytes"
        )));
    }
    let kl = key.len();
    let mut addr = root;
    for _ in 0..MAX_DEPTH {
        let (leaf, what, page) = read_node(st, addr)?;
        let p = payload(&page);
        let bad = |detail: &str| Error::corrupt(what, addr, detail.to_string());
        let u16_at = |at: usize| p.get(at..at + 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
        let u64_at = |at: usize| {
            p.get(at..at + 8)
                .and_then(|b| b.try_into().ok())
                .map(u64::from_le_bytes)
        };
        let n = u16_at(0).ok_or_else(|| bad("page too short"))? as usize;
        // Leaf entry: u16 klen, u16 vlen, key, value; internal: u16 klen,
        // key, u64 child, after child[0].
        let (first, head, stride) = if leaf {
            (2, 4, 4 + kl + val_len)
        } else {
            (10, 2, 2 + kl + 8)
        };
        if first + n * stride > p.len() {
            return Err(bad("entries run past the page"));
        }
        // The key of entry `i`, its sizes checked.
        let key_at = |i: usize| -> Result<&[u8]> {
            let at = first + i * stride;
            let sizes_ok =
                u16_at(at) == Some(kl as u16) && (!leaf || u16_at(at + 2) == Some(val_len as u16));
            if !sizes_ok {
                return Err(bad("an entry's size differs from the index's"));
            }
            Ok(&p[at + head..at + head + kl])
        };
        // The first entry whose key is greater than `key`, and whether the
        // one before it is equal.
        let (mut lo, mut hi) = (0, n);
        let mut equal = None;
        while lo < hi {
            let mid = (lo + hi) / 2;
            match key_cmp(key_at(mid)?, key) {
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => {
                    equal = Some(mid);
                    lo = mid + 1;
                    break;
                }
                std::cmp::Ordering::Less => lo = mid + 1,
            }
        }
        if leaf {
            return Ok(equal.map(|i| {
                let at = first + i * stride + head + kl;
                f(&p[at..at + val_len])
            }));
        }
        // The child right of the last separator `<= key`: child[lo].
        let child_at = if lo == 0 {
            2
        } else {
            first + (lo - 1) * stride + head + kl
        };
        let child = u64_at(child_at).ok_or_else(|| bad("page too short"))?;
        if child < PAGE_SIZE as u64 || child == addr {
            return Err(bad("child outside the file or the node itself"));
        }
        addr = child;
    }
    Err(Error::corrupt(
        "B-tree internal page",
        addr,
        "tree deeper than any valid tree",
    ))
}

/// Bring into the page cache every page a lookup of each of `keys`
/// (sorted, ascending) reads, a level of the tree at a time: on object
/// storage each level is one batch of requests (see
/// [`crate::pager::Pager::prefetch`]), so finding any number of keys costs
/// one round trip per level rather than one per page. Elsewhere it does
/// nothing. Damage is left for the lookups themselves to report.
pub(crate) fn prefetch(st: &mut Store, root: u64, keys: &[&[u8]]) -> Result<()> {
    if root == 0 || keys.is_empty() || !st.pager.batches() {
        return Ok(());
    }
    // Each node of the level with the range of `keys` that passes it.
    let mut level = vec![(root, 0..keys.len())];
    for _ in 0..MAX_DEPTH {
        let addrs: Vec<u64> = level.iter().map(|(a, _)| *a).collect();
        st.pager.prefetch(&addrs)?;
        let mut next: Vec<(u64, std::ops::Range<usize>)> = Vec::new();
        for (addr, range) in level {
            let Ok(node) = Node::load(st, addr) else {
                return Ok(());
            };
            if node.leaf {
                return Ok(());
            }
            for k in range {
                let child = node.children[node.child_index(keys[k])];
                match next.last_mut() {
                    Some((c, r)) if *c == child => r.end = k + 1,
                    _ => next.push((child, k..k + 1)),
                }
            }
        }
        level = next;
    }
    Ok(())
}

/// What happened to an insert.
pub(crate) enum Inserted {
    /// The key was new.
    New,
    /// The key existed and its value was replaced.
    Replaced,
    /// The key existed and `replace` was false; nothing changed.
    Exists,
}

/// Insert, or replace when `replace`; returns the (possibly new) root.
pub(crate) fn insert(
    st: &mut Store,
    root: u64,
    key: &[u8],
    val: &[u8],
    replace: bool,
) -> Result<(u64, Inserted)> {
    check_entry(key, val)?;
    if root == 0 {
        let mut node = Node::new(true);
        node.insert_entry(0, key, val);
        return Ok((node.write_new(st, 0)?, Inserted::New));
    }
    let op = Op { key, val, replace };
    let (outcome, split, root) = insert_rec(st, root, &op, 0, true)?;
    match split {
        None => Ok((root, outcome)),
        Some((sep, right)) => {
            let mut node = Node::new(false);
            node.insert_entry(0, &sep, b"");
            node.children.extend_from_slice(&[root, right]);
            Ok((node.write_new(st, 0)?, outcome))
        }
    }
}

/// One insert, as passed down the tree.
struct Op<'a> {
    key: &'a [u8],
    val: &'a [u8],
    replace: bool,
}

type Split = Option<(Vec<u8>, u64)>;

/// Returns the outcome, a split to record in the parent, and where this
/// node now lives (it may have moved to a larger page). `rightmost`: every
/// node above took its last child, so a key added after this node's last
/// is past every key of the tree (an append).
fn insert_rec(
    st: &mut Store,
    addr: u64,
    op: &Op,
    depth: usize,
    rightmost: bool,
) -> Result<(Inserted, Split, u64)> {
    if depth >= MAX_DEPTH {
        return Err(Error::corrupt(
            "B-tree internal page",
            addr,
            "tree too deep",
        ));
    }
    let mut node = Node::load(st, addr)?;
    let outcome;
    // Whether the entry added here went after every other in the tree.
    let mut appended = false;
    if node.leaf {
        match node.search(op.key) {
            Ok(i) => {
                if !op.replace {
                    return Ok((Inserted::Exists, None, addr));
                }
                if node.val(i) == op.val {
                    // Same value: nothing to write.
                    return Ok((Inserted::Replaced, None, addr));
                }
                node.set_val(i, op.val);
                outcome = Inserted::Replaced;
            }
            Err(i) => {
                appended = rightmost && i == node.len();
                node.insert_entry(i, op.key, op.val);
                outcome = Inserted::New;
            }
        }
    } else {
        let i = node.child_index(op.key);
        let last = i + 1 == node.children.len();
        let (o, split, moved) = insert_rec(st, node.children[i], op, depth + 1, rightmost && last)?;
        if split.is_none() && moved == node.children[i] {
            return Ok((o, None, addr));
        }
        node.children[i] = moved;
        if let Some((sep, right)) = split {
            appended = rightmost && last;
            node.insert_entry(i, &sep, b"");
            node.children.insert(i + 1, right);
        }
        outcome = o;
    }
    if node.encoded_len() <= PAGE_PAYLOAD {
        let at = node.rewrite(st, addr)?;
        return Ok((outcome, None, at));
    }
    if appended {
        // An append: the node keeps all it held, full, and the new entry
        // starts a right sibling on a whole page, where the appends that
        // follow go. Splitting in half would leave every node of an
        // appended tree half empty.
        let (sep, right) = node.split_last();
        // A leaf is left as it is on disk; an internal node may have had
        // its last child move.
        let at = if node.leaf {
            addr
        } else {
            node.rewrite(st, addr)?
        };
        let right_addr = right.write_new(st, PAGE_SIZE)?;
        return Ok((outcome, Some((sep, right_addr)), at));
    }
    let (sep, right) = node.split();
    let at = node.rewrite(st, addr)?;
    let right_addr = right.write_new(st, 0)?;
    Ok((outcome, Some((sep, right_addr)), at))
}

/// One node on the right edge of a tree being appended to: the node, the
/// page it has (0: none yet), that page's size, whether the page was read
/// from the file (rather than allocated here, not yet written), and
/// whether the node changed since.
struct Edge {
    node: Pooled<Node>,
    addr: u64,
    size: usize,
    loaded: bool,
    dirty: bool,
}

impl Edge {
    /// Write the node out (if it changed); returns where it now lives: its
    /// page, or a larger one if it outgrew it, or a first one sized to it.
    fn finish(&mut self, st: &mut Store) -> Result<u64> {
        if !self.dirty {
            return Ok(self.addr);
        }
        self.dirty = false;
        let enc = self.node.encode();
        if self.addr != 0 && enc.len() + PAGE_HEADER <= self.size {
            if self.loaded {
                st.pager.write(self.addr, self.node.family(), &enc)?;
            } else {
                st.pager
                    .write_new(self.addr, self.node.family(), self.size, &enc)?;
                self.loaded = true;
            }
            return Ok(self.addr);
        }
        // As `rewrite` moves a node: to at least twice its page.
        let min = if self.addr == 0 {
            0
        } else {
            (self.size * 2).min(PAGE_SIZE)
        };
        let new = self.node.write_new(st, min)?;
        if self.addr != 0 {
            if self.loaded {
                st.free_page(self.addr)?;
            } else {
                st.space
                    .free(SpaceKind::Meta, self.addr, self.size as u64)?;
            }
        }
        self.addr = new;
        self.size = st.pager.size_of(new)?;
        self.loaded = true;
        Ok(new)
    }
}

/// Append `items`, whose keys ascend and all lie past every key of the
/// tree, in one pass: the nodes of the tree's right edge are read once and
/// written once, instead of once per entry, and the tree takes the shape
/// appending one at a time with [`insert`] gives it (nodes filled to their
/// pages). Returns the (possibly new) root, or None, having changed
/// nothing, if the keys do not ascend past the tree's last key (the caller
/// then inserts them one by one).
pub(crate) fn append(st: &mut Store, root: u64, items: &[(&[u8], &[u8])]) -> Result<Option<u64>> {
    for (k, v) in items {
        check_entry(k, v)?;
    }
    let Some(&(first, _)) = items.first() else {
        return Ok(Some(root));
    };
    if items.windows(2).any(|w| key_cmp(w[0].0, w[1].0).is_ge()) {
        return Ok(None);
    }
    // The right edge, root first.
    let mut edge: Vec<Edge> = Vec::new();
    if root == 0 {
        edge.push(Edge {
            node: Node::new(true),
            addr: 0,
            size: 0,
            loaded: false,
            dirty: true,
        });
    } else {
        let mut addr = root;
        loop {
            if edge.len() >= MAX_DEPTH {
                return Err(Error::corrupt(
                    "B-tree internal page",
                    addr,
                    "tree too deep",
                ));
            }
            let node = Node::load(st, addr)?;
            if node.len() > 0 && key_cmp(node.key(node.len() - 1), first).is_ge() {
                return Ok(None);
            }
            let size = st.pager.size_of(addr)?;
            let next = (!node.leaf).then(|| node.children.last().copied());
            edge.push(Edge {
                node,
                addr,
                size,
                loaded: true,
                dirty: false,
            });
            match next {
                None => break,
                Some(Some(c)) => addr = c,
                Some(None) => {
                    return Err(Error::corrupt(
                        "B-tree internal page",
                        addr,
                        "internal node without children",
                    ))
                }
            }
        }
    }
    for &(k, v) in items {
        let leaf = edge.len() - 1;
        let e = &mut edge[leaf];
        let en = e.node.entry(k, v);
        e.node.entries.push(en);
        e.dirty = true;
        if e.node.encoded_len() > PAGE_PAYLOAD {
            split_edge(st, &mut edge, leaf)?;
        }
    }
    // Bottom up: each node's page is known before its parent is written.
    for i in (0..edge.len()).rev() {
        let at = edge[i].finish(st)?;
        if i > 0 {
            let parent = &mut edge[i - 1];
            if let Some(c) = parent.node.children.last_mut() {
                if *c != at {
                    *c = at;
                    parent.dirty = true;
                }
            }
        }
    }
    Ok(Some(edge[0].addr))
}

/// Split the edge node at level `i`, over-full by its last entry (or
/// child): what it held before stays, written out, and the last entry
/// starts a new node on a whole page, as [`insert_rec`] splits on an
/// append; the separator goes up, splitting the parent in turn or making
/// a new root.
fn split_edge(st: &mut Store, edge: &mut Vec<Edge>, i: usize) -> Result<()> {
    let (sep, right) = edge[i].node.split_last();
    edge[i].dirty = true;
    let left = edge[i].finish(st)?;
    let right_addr = st.alloc_page(PAGE_SIZE)?;
    edge[i] = Edge {
        node: right,
        addr: right_addr,
        size: PAGE_SIZE,
        loaded: false,
        dirty: true,
    };
    if i == 0 {
        let mut top = Node::new(false);
        top.insert_entry(0, &sep, b"");
        top.children.extend_from_slice(&[left, right_addr]);
        edge.insert(
            0,
            Edge {
                node: top,
                addr: 0,
                size: 0,
                loaded: false,
                dirty: true,
            },
        );
        if edge.len() > MAX_DEPTH {
            return Err(Error::corrupt(
                "B-tree internal page",
                left,
                "tree too deep",
            ));
        }
        return Ok(());
    }
    let parent = &mut edge[i - 1];
    if let Some(c) = parent.node.children.last_mut() {
        *c = left;
    }
    let en = parent.node.entry(&sep, b"");
    parent.node.entries.push(en);
    parent.node.children.push(right_addr);
    parent.dirty = true;
    if parent.node.encoded_len() > PAGE_PAYLOAD {
        split_edge(st, edge, i - 1)?;
    }
    Ok(())
}

/// Remove `key`; returns the (possibly new) root and the old value.
pub(crate) fn remove(st: &mut Store, root: u64, key: &[u8]) -> Result<(u64, Option<Vec<u8>>)> {
    if root == 0 {
        return Ok((0, None));
    }
    let (old, empty) = remove_rec(st, root, key, 0)?;
    if empty {
        st.free_page(root)?;
        return Ok((0, old));
    }
    // Collapse a root left with a single child (B3).
    let mut root = root;
    loop {
        let node = Node::load(st, root)?;
        if node.leaf || node.children.len() > 1 {
            return Ok((root, old));
        }
        st.free_page(root)?;
        root = node.children[0];
    }
}

/// Returns the removed value and whether this node is now empty.
fn remove_rec(
    st: &mut Store,
    addr: u64,
    key: &[u8],
    depth: usize,
) -> Result<(Option<Vec<u8>>, bool)> {
    if depth >= MAX_DEPTH {
        return Err(Error::corrupt(
            "B-tree internal page",
            addr,
            "tree too deep",
        ));
    }
    let mut node = Node::load(st, addr)?;
    if node.leaf {
        let Ok(i) = node.search(key) else {
            return Ok((None, false));
        };
        let old = node.val(i).to_vec();
        node.entries.remove(i);
        if node.entries.is_empty() {
            return Ok((Some(old), true));
        }
        // A node only shrinks here, so it still fits its page.
        node.rewrite(st, addr)?;
        return Ok((Some(old), false));
    }
    let i = node.child_index(key);
    let child = node.children[i];
    let (old, child_empty) = remove_rec(st, child, key, depth + 1)?;
    if !child_empty {
        return Ok((old, false));
    }
    st.free_page(child)?;
    node.children.remove(i);
    if !node.entries.is_empty() {
        node.entries.remove(i.saturating_sub(1));
    }
    if node.children.is_empty() {
        return Ok((old, true));
    }
    node.rewrite(st, addr)?;
    Ok((old, false))
}

/// Called with each (key, value); returns `false` to stop the scan.
pub(crate) type Visitor<'a> = dyn FnMut(&[u8], &[u8]) -> Result<bool> + 'a;

/// Visit entries in key order, starting at the first key `>= from`; the
/// visitor returns `false` to stop.
///
/// A whole-tree walk checks what a single lookup cannot: no node is
/// reached twice (a damaged tree could share a subtree and make a walk
/// exponential), every leaf lies at the same depth (B3), and each child's
/// keys lie between the separators around it (so keys are globally
/// ordered and unique).
pub(crate) fn scan(st: &mut Store, root: u64, from: &[u8], visit: &mut Visitor) -> Result<()> {
    if root != 0 {
        let mut w = Walk::default();
        scan_rec(st, root, from, visit, &mut w, 0, None, None)?;
    }
    Ok(())
}

/// Nodes a walk remembers in place before it needs a hash set: a scan
/// that stops after a few entries (a look for the first key at or after
/// one) allocates nothing.
const FEW: usize = 8;

/// What a whole-tree walk has seen.
#[derive(Default)]
struct Walk {
    few: [u64; FEW],
    nfew: usize,
    more: std::collections::HashSet<u64>,
    leaf_depth: Option<usize>,
}

impl Walk {
    /// Remember `addr`; false if it was seen before.
    fn first_visit(&mut self, addr: u64) -> bool {
        if self.few[..self.nfew].contains(&addr) {
            return false;
        }
        if self.nfew < FEW {
            self.few[self.nfew] = addr;
            self.nfew += 1;
            return true;
        }
        self.more.insert(addr)
    }

    fn enter(&mut self, addr: u64, depth: usize, leaf: bool) -> Result<()> {
        let what = "B-tree internal page";
        if depth >= MAX_DEPTH {
            return Err(Error::corrupt(what, addr, "tree too deep"));
        }
        if !self.first_visit(addr) {
            return Err(Error::corrupt(
                what,
                addr,
                "node reached twice: the tree has a cycle or a shared subtree",
            ));
        }
        if leaf && *self.leaf_depth.get_or_insert(depth) != depth {
            return Err(Error::corrupt(
                "B-tree leaf page",
                addr,
                "leaves at different depths",
            ));
        }
        Ok(())
    }
}

/// Check that `node`'s keys lie in `[lo, hi)`.
fn check_bounds(node: &Node, addr: u64, lo: Option<&[u8]>, hi: Option<&[u8]>) -> Result<()> {
    if node.len() == 0 {
        return Ok(());
    }
    let (first, last) = (node.key(0), node.key(node.len() - 1));
    if lo.is_some_and(|l| first < l) || hi.is_some_and(|h| last >= h) {
        return Err(Error::corrupt(
            "B-tree page",
            addr,
            "keys outside the range its parent gives it",
        ));
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn scan_rec(
    st: &mut Store,
    addr: u64,
    from: &[u8],
    visit: &mut Visitor,
    w: &mut Walk,
    depth: usize,
    lo: Option<&[u8]>,
    hi: Option<&[u8]>,
) -> Result<bool> {
    let node = Node::load(st, addr)?;
    w.enter(addr, depth, node.leaf)?;
    check_bounds(&node, addr, lo, hi)?;
    if node.leaf {
        let start = match node.search(from) {
            Ok(i) | Err(i) => i,
        };
        for i in start..node.len() {
            if !visit(node.key(i), node.val(i))? {
                return Ok(false);
            }
        }
        return Ok(true);
    }
    // Children left of the one that may hold `from` hold only smaller keys.
    let first = node.child_index(from);
    for i in first..node.children.len() {
        let clo = if i == 0 { lo } else { Some(node.key(i - 1)) };
        let chi = if i < node.len() {
            Some(node.key(i))
        } else {
            hi
        };
        if !scan_rec(st, node.children[i], from, visit, w, depth + 1, clo, chi)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Every page of the tree as (address, size), for freeing and accounting;
/// checked as [`scan`] checks a tree.
pub(crate) fn pages(st: &mut Store, root: u64, out: &mut Vec<(u64, u64)>) -> Result<()> {
    fn rec(
        st: &mut Store,
        addr: u64,
        out: &mut Vec<(u64, u64)>,
        w: &mut Walk,
        depth: usize,
        lo: Option<&[u8]>,
        hi: Option<&[u8]>,
    ) -> Result<()> {
        let node = Node::load(st, addr)?;
        w.enter(addr, depth, node.leaf)?;
        check_bounds(&node, addr, lo, hi)?;
        out.push((addr, st.pager.size_of(addr)? as u64));
        for (i, &c) in node.children.iter().enumerate() {
            let clo = if i == 0 { lo } else { Some(node.key(i - 1)) };
            let chi = if i < node.len() {
                Some(node.key(i))
            } else {
                hi
            };
            rec(st, c, out, w, depth + 1, clo, chi)?;
        }
        Ok(())
    }
    if root != 0 {
        rec(st, root, out, &mut Walk::default(), 0, None, None)?;
    }
    Ok(())
}

/// Every page of the tree as metadata extents, for freeing it with the
/// structures around it in one batch.
pub(crate) fn extents(st: &mut Store, root: u64, out: &mut Vec<Section>) -> Result<()> {
    let mut pages_of = Vec::new();
    pages(st, root, &mut pages_of)?;
    out.extend(pages_of.into_iter().map(|(addr, size)| Section {
        addr,
        size,
        kind: SpaceKind::Meta,
    }));
    Ok(())
}

/// The bytes after a page's entries or messages, `r`'s remainder, are the
/// zeros its writer left there: a page whose size byte claims more takes
/// in another structure's bytes.
pub(crate) fn check_room_is_empty(r: &mut Reader, size: usize) -> Result<()> {
    let left = r.remaining();
    let rest = r.bytes(left)?;
    // Or-ed a block at a time (which vectorises): this runs for every
    // node loaded, over most of a page for a node just started.
    if rest
        .chunks(64)
        .all(|b| b.iter().fold(0, |a, &x| a | x) == 0)
    {
        return Ok(());
    }
    if let Some(i) = rest.iter().position(|&b| b != 0) {
        return Err(r.corrupt(format!(
            "its {size}-byte page holds other bytes {} bytes after its contents end: the page claims its neighbour's space",
            i
        )));
    }
    Ok(())
}

/// The node page at `addr`, a leaf or an internal page, checked to lie in
/// live space: whether it is a leaf, its name for messages, the page.
fn read_node(st: &mut Store, addr: u64) -> Result<(bool, &'static str, Page)> {
    let (which, page) = st.pager.read_any(addr, &[LEAF, INTERNAL])?;
    let leaf = which == 0;
    let what = if leaf {
        "B-tree leaf page"
    } else {
        "B-tree internal page"
    };
    st.check_live(what, addr, page.len() as u64)?;
    Ok((leaf, what, page))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::MemoryDriver;
    #[allow(unused_imports)]
    use crate::pager::MIN_PAGE;
    use crate::pager::{Pager, PAGE_SIZE};
    use crate::space::{FileSpace, FreeListKind};
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    fn store() -> Store {
        Store {
            pager: Pager::new(
                crate::journal::Journaled::new(
                    Box::new(MemoryDriver::new()),
                    crate::journal::JournalStore::Off,
                )
                .unwrap(),
                64,
            )
            .unwrap(),
            space: FileSpace::new(PAGE_SIZE as u64, FreeListKind::Managed),
            writable: true,
            stats: Default::default(),
            unstarted: 0,
        }
    }

    fn all(st: &mut Store, root: u64) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut v = vec![];
        scan(st, root, b"", &mut |k, val| {
            v.push((k.to_vec(), val.to_vec()));
            Ok(true)
        })
        .unwrap();
        v
    }

    #[test]
    fn many_inserts_and_removes_match_a_model() {
        let mut st = store();
        let mut model = BTreeMap::new();
        let mut root = 0;
        for i in 0..5000u32 {
            let k = format!("key{:08}", (i * 7919) % 5000).into_bytes();
            let v = vec![i as u8; (i % 50) as usize];
            root = insert(&mut st, root, &k, &v, true).unwrap().0;
            model.insert(k, v);
        }
        assert_eq!(
            all(&mut st, root),
            model.clone().into_iter().collect::<Vec<_>>()
        );
        for i in (0..5000u32).step_by(2) {
            let k = format!("key{:08}", i).into_bytes();
            let (r, old) = remove(&mut st, root, &k).unwrap();
            root = r;
            assert_eq!(old, model.remove(&k));
        }
        assert_eq!(
            all(&mut st, root),
            model.clone().into_iter().collect::<Vec<_>>()
        );
        for k in model.keys() {
            assert!(get(&mut st, root, k).unwrap().is_some());
        }
        let keys: Vec<_> = model.keys().cloned().collect();
        for k in keys {
            root = remove(&mut st, root, &k).unwrap().0;
        }
        assert_eq!(root, 0);
    }

    #[test]
    fn scan_from_the_middle() {
        let mut st = store();
        let mut root = 0;
        for i in 0..2000u32 {
            root = insert(&mut st, root, &i.to_be_bytes(), b"v", false)
                .unwrap()
                .0;
        }
        let mut seen = vec![];
        scan(&mut st, root, &1500u32.to_be_bytes(), &mut |k, _| {
            seen.push(u32::from_be_bytes(k.try_into().unwrap()));
            Ok(seen.len() < 10)
        })
        .unwrap();
        assert_eq!(seen, (1500..1510).collect::<Vec<_>>());
    }

    /// Every page of the tree, checked as a whole-tree walk checks it.
    fn tree_bytes(st: &mut Store, root: u64) -> u64 {
        let mut pages = vec![];
        super::pages(st, root, &mut pages).unwrap();
        pages.iter().map(|&(_, n)| n).sum()
    }

    #[test]
    fn appended_trees_fill_their_pages() {
        // Chunk-index shaped entries: an 8-byte key, a 24-byte value, 36
        // bytes encoded. Appended, the leaves are full (113 to a page),
        // and so are the internal nodes above them.
        let mut st = store();
        let mut root = 0;
        let n = 60_000u64;
        for i in 0..n {
            root = insert(&mut st, root, &i.to_be_bytes(), &[7; 24], true)
                .unwrap()
                .0;
        }
        let per = tree_bytes(&mut st, root) as f64 / n as f64;
        assert!(per < 36.5, "{per} bytes per entry");
        let got = all(&mut st, root);
        assert_eq!(got.len(), n as usize);
        assert!(got
            .iter()
            .enumerate()
            .all(|(i, (k, _))| k == &(i as u64).to_be_bytes()));
        // Removals, of whole appended runs too (internal nodes left with
        // one child), then appends again.
        for i in (0..n).step_by(3) {
            root = remove(&mut st, root, &i.to_be_bytes()).unwrap().0;
        }
        for i in (n - 5000..n).rev() {
            root = remove(&mut st, root, &i.to_be_bytes()).unwrap().0;
        }
        let left: Vec<u64> = (0..n - 5000).filter(|i| i % 3 != 0).collect();
        let got = all(&mut st, root);
        assert_eq!(got.len(), left.len());
        for i in n - 5000..n {
            root = insert(&mut st, root, &i.to_be_bytes(), b"again", false)
                .unwrap()
                .0;
        }
        assert_eq!(all(&mut st, root).len(), left.len() + 5000);
        tree_bytes(&mut st, root);
    }

    #[test]
    fn batched_appends_fill_pages_as_single_appends_do() {
        // Chunk-index shaped entries, appended in runs of various lengths
        // onto trees of every depth so far, against the same keys appended
        // one at a time.
        let n = 60_000u64;
        let (mut one, mut batched) = (store(), store());
        let (mut r1, mut r2) = (0, 0);
        for i in 0..n {
            r1 = insert(&mut one, r1, &i.to_be_bytes(), &[7; 24], true)
                .unwrap()
                .0;
        }
        let mut i = 0u64;
        let mut len = 1u64;
        while i < n {
            let end = (i + len).min(n);
            let keys: Vec<[u8; 8]> = (i..end).map(|k| k.to_be_bytes()).collect();
            let items: Vec<(&[u8], &[u8])> =
                keys.iter().map(|k| (&k[..], &[7u8; 24][..])).collect();
            r2 = append(&mut batched, r2, &items).unwrap().unwrap();
            i = end;
            len = len * 3 % 9973 + 1;
        }
        assert_eq!(all(&mut one, r1), all(&mut batched, r2));
        let (b1, b2) = (tree_bytes(&mut one, r1), tree_bytes(&mut batched, r2));
        assert!(b2 <= b1, "{b2} bytes batched, {b1} one at a time");
        assert!((b2 as f64 / n as f64) < 36.5);
        for k in [0u64, 1, 112, 113, 30_000, n - 1] {
            assert_eq!(
                get(&mut batched, r2, &k.to_be_bytes()).unwrap(),
                Some(vec![7; 24])
            );
        }
        // Keys not past the last one, or not ascending: refused.
        let (a, b) = (5u64.to_be_bytes(), n.to_be_bytes());
        assert_eq!(append(&mut batched, r2, &[(&a[..], b"x")]).unwrap(), None);
        assert_eq!(
            append(&mut batched, r2, &[(&b[..], b"x"), (&b[..], b"y")]).unwrap(),
            None
        );
        assert_eq!(all(&mut batched, r2).len(), n as usize);
    }

    #[test]
    fn fixed_size_lookups_match_the_scan() {
        // Two-part keys (a 2-D chunk index), sparse, so that missing keys
        // fall before, between and after stored ones, on every level.
        let mut st = store();
        let mut root = 0;
        let key = |a: u64, b: u64| [a.to_be_bytes(), b.to_be_bytes()].concat();
        for a in (0..300u64).step_by(3) {
            for b in (0..90u64).step_by(2) {
                let v = [(a + b) as u8; 24];
                root = insert(&mut st, root, &key(a, b), &v, true).unwrap().0;
            }
        }
        assert!(!Node::load(&mut st, root).unwrap().leaf);
        for a in 0..302u64 {
            for b in 0..92u64 {
                let k = key(a, b);
                let want = get(&mut st, root, &k).unwrap();
                let got = get_fixed_with(&mut st, root, &k, 24, |v| v.to_vec()).unwrap();
                assert_eq!(got, want, "{a} {b}");
                assert_eq!(
                    want.is_some(),
                    a % 3 == 0 && b % 2 == 0 && a < 300 && b < 90
                );
            }
        }
        assert_eq!(
            get_fixed_with(&mut st, 0, &key(0, 0), 24, |_| ()).unwrap(),
            None
        );
        // Entries of another size than asked for are damage, not a miss.
        assert!(get_fixed_with(&mut st, root, &key(3, 4), 20, |_| ()).is_err());
        assert!(get_fixed_with(&mut st, root, &key(3, 4)[..8], 24, |_| ()).is_err());
        let mut mixed = 0;
        for k in 0..50u32 {
            let k = format!("k{k}").into_bytes();
            mixed = insert(&mut st, mixed, &k, b"vv", true).unwrap().0;
        }
        assert!(get_fixed_with(&mut st, mixed, b"k10", 2, |_| ()).is_err());
    }

    /// One step of a random workload: insert or replace a key anywhere,    /// One step of a random workload: insert or replace a key anywhere,
    /// remove one, or append a run of keys past the largest.
    #[derive(Debug, Clone)]
    enum Step {
        Put(u32, usize),
        Remove(u32),
        Append(u16, usize),
        /// As `Append`, in one [`append`] call.
        AppendBatch(u16, usize),
        /// An [`append`] of keys that do not all lie past the tree's last
        /// key: refused, the tree unchanged.
        AppendInside(u32),
    }

    fn steps() -> impl Strategy<Value = Vec<Step>> {
        let len = prop_oneof![4 => 0usize..40, 1 => 40usize..=MAX_VALUE];
        prop::collection::vec(
            prop_oneof![
                3 => (0u32..4000, len.clone()).prop_map(|(k, l)| Step::Put(k, l)),
                2 => (0u32..4000).prop_map(Step::Remove),
                2 => (1u16..400, len.clone()).prop_map(|(n, l)| Step::Append(n, l)),
                2 => (1u16..600, len).prop_map(|(n, l)| Step::AppendBatch(n, l)),
                1 => (0u32..4000).prop_map(Step::AppendInside),
            ],
            1..60,
        )
    }

    fn run(steps: &[Step]) {
        let mut st = store();
        let mut model: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
        let mut root = 0;
        let val = |k: u32, l: usize| vec![k as u8; l];
        for s in steps {
            match *s {
                Step::Put(k, l) => {
                    let key = k.to_be_bytes().to_vec();
                    root = insert(&mut st, root, &key, &val(k, l), true).unwrap().0;
                    model.insert(key, val(k, l));
                }
                Step::Remove(k) => {
                    let key = k.to_be_bytes().to_vec();
                    let (r, old) = remove(&mut st, root, &key).unwrap();
                    root = r;
                    assert_eq!(old, model.remove(&key));
                }
                Step::Append(n, l) => {
                    let from = model
                        .keys()
                        .next_back()
                        .map_or(0, |k| u32::from_be_bytes(k[..].try_into().unwrap()) + 1);
                    for k in from..from + n as u32 {
                        let key = k.to_be_bytes().to_vec();
                        let v = val(k, l + (k as usize % 3));
                        let v = &v[..v.len().min(MAX_VALUE)];
                        root = insert(&mut st, root, &key, v, false).unwrap().0;
                        model.insert(key, v.to_vec());
                    }
                }
                Step::AppendBatch(n, l) => {
                    let from = model
                        .keys()
                        .next_back()
                        .map_or(0, |k| u32::from_be_bytes(k[..].try_into().unwrap()) + 1);
                    let owned: Vec<(Vec<u8>, Vec<u8>)> = (from..from + n as u32)
                        .map(|k| {
                            let v = val(k, l + (k as usize % 3));
                            let v = v[..v.len().min(MAX_VALUE)].to_vec();
                            (k.to_be_bytes().to_vec(), v)
                        })
                        .collect();
                    let items: Vec<(&[u8], &[u8])> =
                        owned.iter().map(|(k, v)| (&k[..], &v[..])).collect();
                    root = append(&mut st, root, &items).unwrap().unwrap();
                    model.extend(owned);
                }
                Step::AppendInside(k) => {
                    let keys = [k.to_be_bytes(), (k + 1).to_be_bytes()];
                    let items: Vec<(&[u8], &[u8])> =
                        keys.iter().map(|k| (&k[..], &b"x"[..])).collect();
                    let past = model
                        .keys()
                        .next_back()
                        .is_none_or(|last| last[..] < keys[0][..]);
                    let got = append(&mut st, root, &items).unwrap();
                    if past {
                        root = got.unwrap();
                        for key in keys {
                            model.insert(key.to_vec(), b"x".to_vec());
                        }
                    } else {
                        assert_eq!(got, None);
                    }
                }
            }
            // `pages` walks the whole tree with every structural check.
            tree_bytes(&mut st, root);
        }
        assert_eq!(
            all(&mut st, root),
            model.clone().into_iter().collect::<Vec<_>>()
        );
        for (k, v) in &model {
            assert_eq!(get(&mut st, root, k).unwrap().as_ref(), Some(v));
        }
        assert_eq!(get(&mut st, root, &u32::MAX.to_be_bytes()).unwrap(), None);
        for k in model.keys() {
            root = remove(&mut st, root, k).unwrap().0;
        }
        assert_eq!(root, 0, "emptied tree has root 0");
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            rng_seed: proptest::test_runner::RngSeed::Fixed(0xb7ee_5eed),
            ..ProptestConfig::with_cases(48)
        })]
        #[test]
        fn inserts_removes_and_appends_match_a_model(steps in steps()) {
            run(&steps);
        }
    }

    #[test]
    fn a_node_reached_twice_is_damage() {
        // A root over 17 leaves; then one child pointer made to repeat an
        // earlier one, among the first nodes a walk meets and past them.
        for (dup, of) in [(1, 0), (16, 12)] {
            let mut st = store();
            let mut root = 0;
            for i in 0..2000u64 {
                root = insert(&mut st, root, &i.to_be_bytes(), &[1; 24], true)
                    .unwrap()
                    .0;
            }
            let mut node = Node::load(&mut st, root).unwrap();
            assert!(!node.leaf && node.children.len() > dup);
            node.children[dup] = node.children[of];
            node.rewrite(&mut st, root).unwrap();
            let e = scan(&mut st, root, b"", &mut |_, _| Ok(true)).unwrap_err();
            assert!(e.to_string().contains("reached twice"), "{e}");
        }
    }

    #[test]
    fn keys_order_bytewise() {
        let keys: [&[u8]; 9] = [
            b"a",
            b"abcdefgh",
            b"abcdefgh\0",
            b"abcdefghi",
            b"abcdefgi",
            b"b",
            &[0xff; 8],
            &[0xff; 9],
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0],
        ];
        for a in keys {
            for b in keys {
                assert_eq!(key_cmp(a, b), a.cmp(b), "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn oversized_entries_rejected() {
        let mut st = store();
        assert!(insert(&mut st, 0, &[1; MAX_KEY + 1], b"", false).is_err());
        assert!(insert(&mut st, 0, b"k", &[0; MAX_VALUE + 1], false).is_err());
        assert!(insert(&mut st, 0, b"", b"", false).is_err());
    }
}
