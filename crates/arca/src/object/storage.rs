//! The storage engine of datasets, below every handle: reading and writing
//! a dataset's elements through its layout (compact, contiguous, chunked),
//! the chunk engine of a header, contiguous extents, the extents a
//! dataset's storage occupies, and the chunk caches of datasets and their
//! byte vectors (`Caches`, keyed by [`CacheKey`]) with their write-back.
//!
//! Everything here works on the store and the caches the session owns,
//! never on the session itself: the session's commit writes the caches
//! back through this module.

use std::collections::HashMap;
use std::sync::Arc;

use crate::chunk::{Cache, Chunked};
use crate::error::{Error, Result};
use crate::format::object_header::{DatasetMeta, Fill, Header, Layout};
use crate::pager::Page;
use crate::selection::{selection_runs, Selection};
use crate::space::{Section, SpaceKind};
use crate::store::{Store, BLOB_HEADER};

/// Which chunk cache: a dataset's own, or the one of its byte vector
/// (variable-length values). Both are keyed by the dataset's header address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum CacheKey {
    /// The chunks of the dataset whose header is at this address.
    Dataset(u64),
    /// The chunks of the byte vector of the dataset whose header is here.
    Vector(u64),
}

/// Decoded dataset messages kept: beyond this many, the table starts over.
const METAS: usize = 256;

/// A read-only file's contiguous data read in windows of whole pages of
/// this size, so that short reads near each other cost one system call
/// (HDF5's sieve buffer, smaller: a random element costs one page).
const SIEVE_PAGE: u64 = 4096;
/// Runs longer than this bypass the window.
const SIEVE_MAX: usize = 16 << 10;

/// The chunk caches of one open file, by [`CacheKey`]; each made on first
/// use with the file's default capacity. Beside them, per-read costs paid
/// once: decoded dataset messages (valid while their header page is the
/// one cached), and the sieve window of a read-only file's contiguous data.
pub(crate) struct Caches {
    map: HashMap<CacheKey, Cache>,
    /// Bytes of decoded chunks a new cache may hold.
    capacity: usize,
    /// Header address -> the page it was decoded from and its message.
    metas: HashMap<u64, (Page, Arc<DatasetMeta>)>,
    /// File offset and bytes of the last window of contiguous data read.
    sieve: (u64, Vec<u8>),
}

impl Caches {
    pub(crate) fn new(capacity: usize) -> Self {
        Caches {
            map: HashMap::new(),
            capacity,
            metas: HashMap::new(),
            sieve: (0, Vec::new()),
        }
    }

    /// Take the cache under `key` out of the map (a new, empty one if there
    /// is none), so that it can be used beside the store; hand it back with
    /// [`Caches::put`].
    pub(crate) fn take(&mut self, key: CacheKey) -> Cache {
        self.map
            .remove(&key)
            .unwrap_or_else(|| Cache::new(self.capacity))
    }

    /// Put back a cache taken with [`Caches::take`].
    pub(crate) fn put(&mut self, key: CacheKey, cache: Cache) {
        self.map.insert(key, cache);
    }

    /// Drop every cache, dirty chunks included (a rollback, a close, or a
    /// snapshot reader moving to a newer commit).
    pub(crate) fn clear(&mut self) {
        self.map.clear();
        self.metas.clear();
        self.sieve = (0, Vec::new());
    }

    /// Drop the caches of the dataset at `addr` (it was deleted).
    pub(crate) fn forget(&mut self, addr: u64) {
        self.map.remove(&CacheKey::Dataset(addr));
        self.map.remove(&CacheKey::Vector(addr));
    }

    /// Write every dirty cached chunk to the file, keeping the chunks
    /// cached (clean).
    pub(crate) fn write_back(&mut self, st: &mut Store) -> Result<()> {
        let mut keys: Vec<CacheKey> = self.map.keys().copied().collect();
        // In a fixed order: where the chunks land, and so the file's bytes
        // and its writes, do not depend on the map's hashing.
        keys.sort_unstable();
        for key in keys {
            let mut cache = self.take(key);
            let r = if cache.is_dirty() {
                flush_cache(st, key, &mut cache)
            } else {
                Ok(())
            };
            self.put(key, cache);
            r?;
        }
        Ok(())
    }
}

/// Write the dirty chunks of one cache, saving the owning header if its
/// chunk index (or its vector's) moved.
pub(crate) fn flush_cache(st: &mut Store, key: CacheKey, cache: &mut Cache) -> Result<()> {
    match key {
        CacheKey::Dataset(addr) => with_chunked(st, addr, cache, |c, st, cache| c.flush(st, cache)),
        CacheKey::Vector(owner) => flush_vector(st, owner, cache),
    }
}

/// Flush a byte vector's cache, saving the owner's header if the vector's
/// chunk index moved.
fn flush_vector(st: &mut Store, owner: u64, cache: &mut Cache) -> Result<()> {
    let mut h = Header::load(st, owner)?;
    let Some(m) = h.dataset.as_mut() else {
        return Ok(());
    };
    let item = m.dtype.vector_item().unwrap_or(1);
    let Some(vm) = m.vlen.as_mut() else {
        return Ok(());
    };
    let before = vm.index;
    crate::vlen::vector::flush(st, cache, vm, item)?;
    if vm.index != before {
        h.save(st, owner)?;
    }
    Ok(())
}

/// The dataset message of the header at `addr`, decoded once and kept
/// while the pager holds the very page it was decoded from: a rewrite of
/// the header (or its page leaving the cache) makes a new page, and the
/// next call decodes that.
pub(crate) fn cached_meta(
    st: &mut Store,
    caches: &mut Caches,
    addr: u64,
) -> Result<Arc<DatasetMeta>> {
    if let (Some(page), Some((p, m))) = (st.pager.cached(addr), caches.metas.get(&addr)) {
        if Arc::ptr_eq(&page, p) {
            return Ok(m.clone());
        }
    }
    let m = Arc::new(load_meta(st, addr)?);
    if let Some(page) = st.pager.cached(addr) {
        if caches.metas.len() >= METAS {
            caches.metas.clear();
        }
        caches.metas.insert(addr, (page, m.clone()));
    }
    Ok(m)
}

/// The dataset message of the header at `addr`.
pub(crate) fn load_meta(st: &mut Store, addr: u64) -> Result<DatasetMeta> {
    Header::load(st, addr)?
        .dataset
        .ok_or_else(|| Error::invalid("object is not a dataset"))
}

/// The chunk engine over a chunked dataset's description.
pub(crate) fn engine<'a>(
    meta: &'a DatasetMeta,
    chunk: &'a [u64],
    index: u64,
    fill: &'a [u8],
) -> Chunked<'a> {
    Chunked {
        dims: &meta.dims,
        chunk,
        elem: meta.dtype.size(),
        filters: &meta.filters,
        fill,
        index,
    }
}

/// Run `f` with the chunk engine of the dataset at `addr`, saving the header
/// if the chunk index root moved.
pub(crate) fn with_chunked<T>(
    st: &mut Store,
    addr: u64,
    cache: &mut Cache,
    f: impl FnOnce(&mut Chunked, &mut Store, &mut Cache) -> Result<T>,
) -> Result<T> {
    let mut h = Header::load(st, addr)?;
    let meta = h
        .dataset
        .as_mut()
        .ok_or_else(|| Error::invalid("not a dataset"))?;
    let fill = meta.read_fill_bytes(st)?;
    let Layout::Chunked { chunk, index } = &mut meta.layout else {
        return Err(Error::invalid("dataset is not chunked"));
    };
    let mut c = Chunked {
        dims: &meta.dims,
        chunk,
        elem: meta.dtype.size(),
        filters: &meta.filters,
        fill: &fill,
        index: *index,
    };
    let r = f(&mut c, st, cache);
    let new_index = c.index;
    if new_index != *index {
        *index = new_index;
        h.save(st, addr)?;
    }
    r
}

/// Point the chunked dataset whose header is at `addr` at the chunk index
/// rooted at `index` (after a chunk stored outside [`with_chunked`]).
pub(crate) fn save_chunk_index(st: &mut Store, addr: u64, index: u64) -> Result<()> {
    let mut h = Header::load(st, addr)?;
    let Some(Layout::Chunked { index: at, .. }) = h.dataset.as_mut().map(|m| &mut m.layout) else {
        return Err(Error::invalid("dataset is not chunked"));
    };
    if *at != index {
        *at = index;
        h.save(st, addr)?;
    }
    Ok(())
}

/// Read `sel` of the dataset whose header is at `header` (variable-length
/// ones as records).
pub(crate) fn read_bytes(
    st: &mut Store,
    caches: &mut Caches,
    header: u64,
    sel: &Selection,
    out: &mut [u8],
) -> Result<()> {
    let m = cached_meta(st, caches, header)?;
    read_with_meta(st, caches, header, &m, sel, out)
}

/// [`read_bytes`] with the header's dataset message already loaded.
pub(crate) fn read_with_meta(
    st: &mut Store,
    caches: &mut Caches,
    header: u64,
    m: &DatasetMeta,
    sel: &Selection,
    out: &mut [u8],
) -> Result<()> {
    if m.null {
        return Err(Error::invalid(
            "a dataset with a null dataspace has no elements",
        ));
    }
    sel.check(&m.dims)?;
    let elem = m.dtype.size();
    check_len("buffer", out.len(), sel, elem)?;
    match m.layout {
        Layout::Contiguous { addr: 0, .. } => {
            let fill = m.read_fill_bytes(st)?;
            for e in out.chunks_exact_mut(elem) {
                e.copy_from_slice(&fill);
            }
        }
        Layout::Contiguous { addr: data, size } => {
            st.check_live("contiguous data", data, size)?;
            let d = st.driver();
            // A file this handle cannot write changes only when a snapshot
            // reader moves on, which clears the caches: its data can be
            // kept in the sieve window.
            let sieve = (!st.writable).then_some(&mut caches.sieve);
            match sieve {
                Some(sv) if out.len() <= SIEVE_MAX => {
                    selection_runs(elem, &m.dims, sel, &mut |s, o, n| {
                        sieve_read(d, sv, (data, size), data + s as u64, &mut out[o..o + n])
                    })?;
                }
                _ => {
                    let reader = d.shared_reader();
                    selection_runs(elem, &m.dims, sel, &mut |s, o, n| {
                        read_run(d, reader.as_deref(), data + s as u64, &mut out[o..o + n])
                    })?;
                }
            }
            st.stats.bytes(out.len() as u64);
        }
        Layout::Compact(ref data) => {
            selection_runs(elem, &m.dims, sel, &mut |s, o, n| {
                out[o..o + n].copy_from_slice(&data[s..s + n]);
                Ok(())
            })?;
        }
        Layout::Virtual { .. } => {
            return Err(Error::invalid(
                "a virtual dataset's elements are read through its mappings",
            ))
        }
        Layout::External { .. } => {
            return Err(Error::invalid(
                "an external dataset's elements are read through its dataset handle",
            ))
        }
        Layout::Chunked { .. } => {
            let key = CacheKey::Dataset(header);
            let mut cache = caches.take(key);
            let r = with_chunked(st, header, &mut cache, |c, st, cache| {
                c.read(st, cache, sel, out)
            });
            caches.put(key, cache);
            r?;
        }
    }
    if m.dtype.needs_swap() {
        m.dtype.swap(out);
    }
    Ok(())
}

/// Runs at least this long are read by both cores, half each: one thread
/// alone does not copy out of the page cache as fast as the memory allows.
const SPLIT_READ_BYTES: usize = 8 << 20;

/// Read `buf` from `at`: a long run in two halves at once when the driver
/// offers a reader other threads can use.
fn read_run(
    d: &dyn crate::io::Driver,
    reader: Option<&dyn crate::io::ReadAt>,
    at: u64,
    buf: &mut [u8],
) -> Result<()> {
    match reader {
        Some(r) if buf.len() >= SPLIT_READ_BYTES => {
            let (a, b) = buf.split_at_mut(buf.len() / 2);
            let mid = at + a.len() as u64;
            let (ra, rb) = crate::par::join(|| r.read_at(mid, b), || r.read_at(at, a));
            ra.and(rb)
        }
        _ => d.read_at(at, buf),
    }
}

/// Read `buf` from `at`, inside the contiguous extent `ext`, through the
/// sieve window: from it when it holds those bytes, else by reading the
/// whole pages around them (within the extent) into it first. Longer runs
/// are read directly.
fn sieve_read(
    d: &dyn crate::io::Driver,
    sieve: &mut (u64, Vec<u8>),
    ext: (u64, u64),
    at: u64,
    buf: &mut [u8],
) -> Result<()> {
    let len = buf.len() as u64;
    let (w_at, w) = (sieve.0, &sieve.1);
    if at >= w_at && at + len <= w_at + w.len() as u64 {
        let o = (at - w_at) as usize;
        buf.copy_from_slice(&w[o..o + buf.len()]);
        return Ok(());
    }
    if buf.len() > SIEVE_MAX {
        return d.read_at(at, buf);
    }
    let (lo, hi) = (ext.0, ext.0 + ext.1);
    let start = (at / SIEVE_PAGE * SIEVE_PAGE).max(lo);
    let end = (at + len)
        .div_ceil(SIEVE_PAGE)
        .saturating_mul(SIEVE_PAGE)
        .min(hi);
    let w = &mut sieve.1;
    w.resize((end - start) as usize, 0);
    if let Err(e) = d.read_at(start, w) {
        sieve.1.clear();
        return Err(e);
    }
    sieve.0 = start;
    let o = (at - start) as usize;
    buf.copy_from_slice(&sieve.1[o..o + buf.len()]);
    Ok(())
}

/// Write `sel` of the dataset whose header is at `header` (variable-length
/// ones as records).
pub(crate) fn write_bytes(
    st: &mut Store,
    caches: &mut Caches,
    header: u64,
    sel: &Selection,
    data: &[u8],
) -> Result<()> {
    let mut h = Header::load(st, header)?;
    let m = h
        .dataset
        .as_mut()
        .ok_or_else(|| Error::invalid("not a dataset"))?;
    if m.null {
        return Err(Error::invalid(
            "a dataset with a null dataspace has no elements",
        ));
    }
    sel.check(&m.dims)?;
    let elem = m.dtype.size();
    check_len("data", data.len(), sel, elem)?;
    let swapped;
    let data = if m.dtype.needs_swap() {
        let mut v = data.to_vec();
        m.dtype.swap(&mut v);
        swapped = v;
        &swapped[..]
    } else {
        data
    };
    match m.layout {
        Layout::Compact(ref mut stored) => {
            let dims = m.dims.to_vec();
            selection_runs(elem, &dims, sel, &mut |s, o, n| {
                stored[s..s + n].copy_from_slice(&data[o..o + n]);
                Ok(())
            })?;
            h.save(st, header)
        }
        Layout::Contiguous { addr, size } => {
            let ext = if addr == 0 {
                let fill = m.read_fill_bytes(st)?;
                let a = allocate_contiguous(st, size, &fill, sel.is_all(&m.dims))?;
                m.layout = Layout::Contiguous { addr: a, size };
                (a, size)
            } else {
                (addr, size)
            };
            let dims = m.dims.to_vec();
            if addr == 0 {
                h.save(st, header)?;
            }
            selection_runs(elem, &dims, sel, &mut |s, o, n| {
                st.write_data("contiguous data", ext, ext.0 + s as u64, &data[o..o + n])
            })
        }
        Layout::Chunked { .. } => {
            let key = CacheKey::Dataset(header);
            let mut cache = caches.take(key);
            let r = with_chunked(st, header, &mut cache, |c, st, cache| {
                c.write(st, cache, sel, data)
            });
            caches.put(key, cache);
            r
        }
        Layout::Virtual { .. } => Err(Error::invalid(
            "a virtual dataset is read-only: write to its sources",
        )),
        Layout::External { .. } => Err(Error::invalid(
            "an external dataset's elements are written through its dataset handle",
        )),
    }
}

/// The file extent of a contiguous dataset's elements, allocated (and
/// filled) now if it was not yet; `None` for a chunked or compact dataset.
pub(crate) fn contiguous_extent(st: &mut Store, addr: u64) -> Result<Option<(u64, u64)>> {
    let mut h = Header::load(st, addr)?;
    let m = h
        .dataset
        .as_mut()
        .ok_or_else(|| Error::invalid("not a dataset"))?;
    match m.layout {
        Layout::Chunked { .. }
        | Layout::Compact(_)
        | Layout::Virtual { .. }
        | Layout::External { .. } => Ok(None),
        Layout::Contiguous { addr: 0, size } => {
            let fill = m.read_fill_bytes(st)?;
            let a = allocate_contiguous(st, size, &fill, false)?;
            m.layout = Layout::Contiguous { addr: a, size };
            h.save(st, addr)?;
            Ok(Some((a, size)))
        }
        Layout::Contiguous { addr: a, size } => Ok(Some((a, size))),
    }
}

/// Bytes copied per step when contiguous data moves.
const MOVE_STEP: u64 = 4 << 20;

/// Move the contiguous data of the dataset whose header is at `header` to
/// space this session allocates, with a copy of its bytes (a write that
/// then fails leaves the old values, not stale bytes), and leave the old
/// extent unused until a proof takes it back (S7 in `space.rs`). A write
/// then lands only on bytes this session handed out, whatever the file
/// said about the old extent.
///
/// # Errors
/// `Corrupt` if the old extent is not live or reaches past the space the
/// file named; nothing is written then.
pub(crate) fn relocate_contiguous(st: &mut Store, header: u64) -> Result<()> {
    let mut h = Header::load(st, header)?;
    let m = h
        .dataset
        .as_mut()
        .ok_or_else(|| Error::invalid("not a dataset"))?;
    let Layout::Contiguous { addr: old, size } = m.layout else {
        return Ok(());
    };
    if old == 0 {
        return Ok(());
    }
    st.check_live("contiguous data", old, size)?;
    if old + size > st.space.named_end() {
        return Err(Error::corrupt(
            "contiguous data",
            old,
            format!(
                "{size} bytes at {old} reach past the {} bytes the file named",
                st.space.named_end()
            ),
        ));
    }
    let new = st.space.alloc(SpaceKind::Data, size)?;
    st.pager.extend_limit(new + size);
    let mut buf = vec![0u8; size.min(MOVE_STEP) as usize];
    let mut off = 0;
    while off < size {
        let n = (size - off).min(MOVE_STEP) as usize;
        st.pager.driver().read_at(old + off, &mut buf[..n])?;
        st.write_data("contiguous data", (new, size), new + off, &buf[..n])?;
        off += n as u64;
    }
    m.layout = Layout::Contiguous { addr: new, size };
    h.save(st, header)?;
    // Not freed: the file's word that these bytes held only this data is
    // what is unproven. The next proof takes them back.
    st.space.leave(old, size);
    Ok(())
}

/// Reserve contiguous storage and give it the fill value, unless the caller
/// is about to overwrite all of it.
pub(crate) fn allocate_contiguous(
    st: &mut Store,
    size: u64,
    fill: &[u8],
    overwritten: bool,
) -> Result<u64> {
    let addr = st.space.alloc(SpaceKind::Data, size)?;
    let end = addr + size;
    st.pager.extend_limit(end);
    if overwritten {
        return Ok(addr);
    }
    let len = st.pager.driver().len()?;
    if addr >= len && fill.iter().all(|&b| b == 0) {
        // Fresh space past the end reads as zeros once the file is extended.
        st.pager.driver_mut().truncate(end)?;
    } else {
        write_pattern(st, (addr, size), fill)?;
    }
    Ok(addr)
}

/// Fill the extent `ext` with repeats of one element.
fn write_pattern(st: &mut Store, ext: (u64, u64), elem: &[u8]) -> Result<()> {
    let (addr, size) = ext;
    let e = elem.len().max(1) as u64;
    // At most 1 MiB of pattern, and no more than the extent needs.
    let per = (size.min(1 << 20) / e).max(1) as usize;
    let pattern = elem.repeat(per);
    let mut off = 0;
    while off < size {
        let n = (pattern.len() as u64).min(size - off);
        st.write_data("contiguous data", ext, addr + off, &pattern[..n as usize])?;
        off += n;
    }
    Ok(())
}

/// Every extent a dataset's storage occupies — contiguous data or chunks
/// and their index, the fill blob, the byte vector — for freeing with its
/// header in one batch.
pub(crate) fn storage_extents(
    st: &mut Store,
    meta: &DatasetMeta,
    out: &mut Vec<Section>,
) -> Result<()> {
    match &meta.layout {
        Layout::Contiguous { addr, size } => {
            if *addr != 0 {
                out.push(Section {
                    addr: *addr,
                    size: *size,
                    kind: SpaceKind::Data,
                });
            }
        }
        Layout::Chunked { chunk, index } => {
            engine(meta, chunk, *index, &[]).extents(st, out)?;
        }
        Layout::Compact(_) => {}
        Layout::Virtual { addr, len } | Layout::External { addr, len } => {
            if *addr != 0 {
                out.push(Section {
                    addr: *addr,
                    size: BLOB_HEADER + len,
                    kind: SpaceKind::Meta,
                });
            }
        }
    }
    if let Some(Fill::Blob { addr, len }) = meta.fill {
        out.push(Section {
            addr,
            size: BLOB_HEADER + len,
            kind: SpaceKind::Meta,
        });
    }
    if let Some(v) = &meta.vlen {
        crate::vlen::extents(st, v, out)?;
    }
    Ok(())
}

/// Free a dataset's storage (not its header), all or nothing.
pub(crate) fn free_storage(st: &mut Store, meta: &DatasetMeta) -> Result<()> {
    let mut dead = vec![];
    storage_extents(st, meta, &mut dead)?;
    st.free_structures(&dead)
}

/// Refuse a buffer that does not hold exactly `sel`'s elements.
pub(crate) fn check_len(what: &str, len: usize, sel: &Selection, elem: usize) -> Result<()> {
    let need = sel.len() * elem as u64;
    if len as u64 != need {
        return Err(Error::invalid(format!(
            "{what} holds {len} bytes, selection needs {need}"
        )));
    }
    Ok(())
}
