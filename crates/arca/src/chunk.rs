//! Chunked storage: the chunk grid, the chunk index (a B-tree keyed by chunk
//! coordinates), the per-dataset chunk cache and the read/write engine that
//! moves hyperslabs through them.
//!
//! Each stored chunk has an entry in the chunk index (see
//! `format::chunk_index`), which carries its checksum.

use crate::error::{Error, Result};
use crate::filter::{self, Filter};
use crate::format::btree::{self, Inserted};
pub(crate) use crate::format::chunk_index::ChunkRef;
use crate::format::chunk_index::{decode_key, key, key_into, ENTRY_LEN, MAX_KEY};
use crate::io::{Counters, ReadAt};
use crate::par::par_map;
use crate::pool::lists::{CHUNKS, DIMS, FILTER};
use crate::pool::{ArrayList, PooledBuf, PooledVec};
use crate::selection::{copy_box, fill_box, Selection, Window};
use crate::space::{Section, SpaceKind};
use crate::store::Store;

/// Check stored chunk bytes against the checksum in their index entry.
pub(crate) fn verify(r: &ChunkRef, stored: &[u8]) -> Result<()> {
    if crc32c::crc32c(stored) != r.crc {
        return Err(Error::corrupt("chunk", r.addr, "checksum mismatch"));
    }
    Ok(())
}

mod cache;

pub(crate) use cache::Cache;
use cache::Cached;

impl Cache {
    /// Whether the chunk at `coords` is cached: `Some((dirty, the
    /// transaction that last appended to it in place))`.
    pub(crate) fn state(&self, coords: &[u64]) -> Option<(bool, u64)> {
        self.peek(coords).map(|c| (c.dirty, c.placed))
    }

    /// Write `part` at byte `at` of the clean cached chunk at `coords`
    /// (the caller writes the same bytes to the file) and note `tx` as the
    /// transaction that did; returns the chunk's new checksum.
    pub(crate) fn patch_clean(
        &mut self,
        coords: &[u64],
        at: usize,
        part: &[u8],
        tx: u64,
    ) -> Option<u32> {
        let c = self.peek_mut(coords).filter(|c| !c.dirty)?;
        c.data.get_mut(at..at + part.len())?.copy_from_slice(part);
        c.placed = tx;
        Some(crc32c::crc32c(&c.data))
    }
}

/// Everything the engine needs to know about one chunked dataset.
pub(crate) struct Chunked<'a> {
    pub(crate) dims: &'a [u64],
    pub(crate) chunk: &'a [u64],
    pub(crate) elem: usize,
    pub(crate) filters: &'a [Filter],
    /// One element of fill value, in file byte order.
    pub(crate) fill: &'a [u8],
    /// Root of the chunk index; updated as chunks are added.
    pub(crate) index: u64,
}

/// One chunk's share of a selection: four per-dimension vectors in one
/// pooled array (chunk coordinates, first selection index, number of
/// selected elements, position of the first selected element in the chunk).
struct Overlap {
    dims: PooledVec<u64>,
    rank: usize,
    /// Whether the selection covers every in-bounds element of the chunk.
    full: bool,
}

impl Overlap {
    fn coords(&self) -> &[u64] {
        &self.dims[..self.rank]
    }
    fn sel_lo(&self) -> &[u64] {
        &self.dims[self.rank..2 * self.rank]
    }
    fn sel_n(&self) -> &[u64] {
        &self.dims[2 * self.rank..3 * self.rank]
    }
    fn in_chunk(&self) -> &[u64] {
        &self.dims[3 * self.rank..4 * self.rank]
    }
}

/// (chunk coordinate, first selection index, count, offset in chunk, full).
type DimOverlap = (u64, u64, u64, u64, bool);

/// Whole chunks waiting to be filtered and stored, with their coordinates.
type BatchItem = (PooledVec<u64>, PooledBuf);

/// Adjacent stored chunks are gathered into one write up to this size.
const RUN_BYTES: usize = 1 << 20;

/// Stored chunks that lie side by side in the file, waiting to be written
/// in one call and then indexed: where they start, their bytes, and per
/// chunk its coordinates, new entry and the entry it replaces.
#[derive(Default)]
struct Run {
    at: u64,
    bytes: Vec<u8>,
    entries: Vec<(PooledVec<u64>, ChunkRef, Option<ChunkRef>)>,
}

thread_local! {
    /// The last run's buffers, kept so that warm rewrites allocate nothing.
    static SPARE_RUN: std::cell::RefCell<Run> = std::cell::RefCell::new(Run::default());
}

impl Run {
    /// An empty run, with the buffers the thread's last run left.
    fn take() -> Run {
        SPARE_RUN.with(|r| std::mem::take(&mut *r.borrow_mut()))
    }

    /// Keep this run's (emptied) buffers for the thread's next run.
    fn give_back(mut self) {
        self.bytes.clear();
        self.entries.clear();
        SPARE_RUN.with(|r| *r.borrow_mut() = self);
    }
}
/// Stored chunks waiting to be decoded: overlap index, entry, stored bytes,
/// and the byte offset in the output when the chunk is decoded straight
/// into it.
type PendingRead = (usize, ChunkRef, PooledBuf, Option<usize>);

/// A read planned under the session (see [`Chunked::plan_read`]): the
/// selection's overlaps with the chunk grid, and the stored chunks still to
/// fetch, each with its overlap, its checked index entry and where it lands
/// whole in the output, if it does.
pub(crate) struct ReadPlan {
    ovs: PooledVec<Overlap>,
    stored: Vec<(usize, ChunkRef, Option<usize>)>,
    cache_capacity: usize,
}

impl ReadPlan {
    /// Whether anything is left to fetch.
    pub(crate) fn is_done(&self) -> bool {
        self.stored.is_empty()
    }

    /// Stored bytes left to fetch.
    pub(crate) fn stored_bytes(&self) -> u64 {
        self.stored.iter().map(|(_, r, _)| r.size).sum()
    }
}

/// A chunk decoded without the session: its coordinates, the index entry
/// it came from, its bytes.
pub(crate) type Decoded = (PooledVec<u64>, ChunkRef, PooledBuf);

static OVERLAPS: ArrayList<Overlap> = ArrayList::new("chunk overlaps");
static DIM_OVERLAPS: ArrayList<DimOverlap> = ArrayList::new("per-dimension overlaps");
static BATCHES: ArrayList<BatchItem> = ArrayList::new("chunk batches");
static PENDING: ArrayList<PendingRead> = ArrayList::new("pending chunk reads");

fn coords_buf(c: &[u64]) -> PooledVec<u64> {
    let mut v = DIMS.take(c.len());
    v.extend_from_slice(c);
    v
}

fn overlaps(dims: &[u64], chunk: &[u64], sel: &Selection) -> PooledVec<Overlap> {
    let rank = dims.len();
    let mut out = OVERLAPS.take(0);
    if sel.is_empty() {
        return out;
    }
    // Per dimension, the list of (chunk coord, sel_lo, sel_n, in_chunk,
    // full), all dimensions in one flat array; `bounds[d]..bounds[d + 1]`
    // is dimension d's share.
    let mut per_dim = DIM_OVERLAPS.take(rank * 2);
    let mut bounds = DIMS.take(rank + 1);
    bounds.push(0);
    for d in 0..rank {
        let (s, n, st, c) = (sel.start[d], sel.count[d], sel.step[d], chunk[d]);
        let last = s + (n - 1) * st;
        let mut cc = s / c;
        while cc <= last / c {
            let lo = cc * c;
            let hi = lo + c; // exclusive
            let i0 = if lo <= s { 0 } else { (lo - s).div_ceil(st) };
            let i1 = ((hi - 1).min(last) - s) / st + 1;
            if i0 < i1 {
                let first = s + i0 * st;
                let in_bounds = hi.min(dims[d]) - lo;
                let full = st == 1 && first == lo && i1 - i0 == in_bounds;
                per_dim.push((cc, i0, i1 - i0, first - lo, full));
                cc += 1;
            } else {
                // No selected index in this chunk: jump to the next selected one.
                let next = s + i0 * st;
                cc = next / c;
            }
        }
        bounds.push(per_dim.len() as u64);
    }
    let mut idx = DIMS.take_filled(rank, 0);
    loop {
        let mut v = DIMS.take_filled(4 * rank, 0);
        let mut full = true;
        for d in 0..rank {
            let (cc, lo, n, ic, f) = per_dim[bounds[d] as usize + idx[d] as usize];
            v[d] = cc;
            v[rank + d] = lo;
            v[2 * rank + d] = n;
            v[3 * rank + d] = ic;
            full &= f;
        }
        out.push(Overlap {
            dims: v,
            rank,
            full,
        });
        let mut k = rank;
        loop {
            if k == 0 {
                return out;
            }
            k -= 1;
            idx[k] += 1;
            if idx[k] < bounds[k + 1] - bounds[k] {
                break;
            }
            idx[k] = 0;
        }
    }
}

/// Pair each item (sorted by its offset) with its `expect`-byte run of
/// `out`, at the byte offset `at(item)` gives.
fn split_runs<T>(
    out: &mut [u8],
    expect: usize,
    items: Vec<T>,
    at: impl Fn(&T) -> Option<usize>,
) -> Result<Vec<(T, &mut [u8])>> {
    let mut jobs = Vec::with_capacity(items.len());
    let mut rest: &mut [u8] = out;
    let mut base = 0usize;
    for p in items {
        let off = at(&p).unwrap_or(base);
        let tail = std::mem::take(&mut rest);
        // Runs are disjoint and inside `out` by construction; checked anyway.
        let Some(tail) = off
            .checked_sub(base)
            .and_then(|skip| tail.get_mut(skip..))
            .filter(|t| t.len() >= expect)
        else {
            return Err(Error::invalid("chunk runs overlap or leave the output"));
        };
        let (mine, tail) = tail.split_at_mut(expect);
        jobs.push((p, mine));
        rest = tail;
        base = off + expect;
    }
    Ok(jobs)
}

/// Decode whole chunks straight into their runs of `out` (in parallel when
/// the batch is big enough); each item carries its byte offset there.
fn decode_direct(
    filters: &[Filter],
    elem: usize,
    expect: usize,
    out: &mut [u8],
    mut items: Vec<PendingRead>,
) -> Result<()> {
    items.sort_by_key(|p| p.3);
    let jobs = split_runs(out, expect, items, |p| p.3)?;
    let run = |((_, r, stored, _), dst): (PendingRead, &mut [u8])| {
        verify(&r, &stored)
            .and_then(|_| filter::decode_into(filters, r.mask, elem, &stored, r.addr, dst))
    };
    if jobs.len() * expect < PARALLEL_MIN_BYTES || jobs.len() < 2 {
        return jobs.into_iter().try_for_each(run);
    }
    par_map(jobs, run).into_iter().collect()
}

/// Read, check and decode whole chunks straight into their runs of `out`,
/// each thread its own share: the reads run on every core as the decoding
/// does. Each item carries its byte offset in `out`.
fn fetch_direct(
    io: &dyn ReadAt,
    stats: &Counters,
    filters: &[Filter],
    elem: usize,
    expect: usize,
    out: &mut [u8],
    mut items: Vec<(usize, ChunkRef, Option<usize>)>,
) -> Result<()> {
    items.sort_by_key(|p| p.2);
    let jobs = split_runs(out, expect, items, |p| p.2)?;
    if io.batches() {
        return fetch_direct_batched(io, stats, filters, elem, expect, jobs);
    }
    let run = |((_, r, _), dst): ((usize, ChunkRef, Option<usize>), &mut [u8])| -> Result<()> {
        if filters.is_empty() && r.size == expect as u64 {
            // Stored as it is read: no buffer, no copy.
            io.read_at(r.addr, dst)?;
            stats.chunk(r.size);
            return verify(&r, dst);
        }
        let bytes = read_stored(io, stats, &r)?;
        filter::decode_into(filters, r.mask, elem, &bytes, r.addr, dst)
    };
    if jobs.len() * expect < PARALLEL_MIN_BYTES || jobs.len() < 2 {
        return jobs.into_iter().try_for_each(run);
    }
    par_map(jobs, run).into_iter().collect()
}

/// A chunk of a direct read: its entry, and where it lands in the output.
type DirectJob<'a> = ((usize, ChunkRef, Option<usize>), &'a mut [u8]);

/// [`fetch_direct`] through a reader whose reads are round trips: a
/// batch's worth of chunks fetched at once, then decoded on every core
/// while the next batch is fetched.
fn fetch_direct_batched(
    io: &dyn ReadAt,
    stats: &Counters,
    filters: &[Filter],
    elem: usize,
    expect: usize,
    mut jobs: Vec<DirectJob<'_>>,
) -> Result<()> {
    let per = (BATCH_BYTES / expect.max(1)).max(1);
    let mut groups = Vec::new();
    while !jobs.is_empty() {
        let rest = jobs.split_off(per.min(jobs.len()));
        groups.push(std::mem::replace(&mut jobs, rest));
    }
    // Stored as it is read: straight into the output, nothing to decode.
    let as_read = |g: &[DirectJob<'_>]| {
        filters.is_empty() && g.iter().all(|((_, r, _), _)| r.size == expect as u64)
    };
    let refs =
        |g: &[DirectJob<'_>]| -> Vec<ChunkRef> { g.iter().map(|((_, r, _), _)| *r).collect() };
    let mut fetched: Option<Vec<PooledBuf>> = None;
    let mut groups = groups.into_iter().peekable();
    while let Some(mut group) = groups.next() {
        if as_read(&group) {
            let mut reads: Vec<(u64, &mut [u8])> = group
                .iter_mut()
                .map(|((_, r, _), dst)| (r.addr, &mut **dst))
                .collect();
            io.read_batch(&mut reads)?;
            for ((_, r, _), dst) in &group {
                stats.chunk(r.size);
                verify(r, dst)?;
            }
            continue;
        }
        let stored = match fetched.take() {
            Some(s) => s,
            None => read_stored_batch(io, stats, &refs(&group))?,
        };
        let next = groups.peek().filter(|g| !as_read(g)).map(|g| refs(g));
        let run = |(((_, r, _), dst), bytes): (DirectJob<'_>, PooledBuf)| {
            filter::decode_into(filters, r.mask, elem, &bytes, r.addr, dst)
        };
        let work: Vec<_> = group.into_iter().zip(stored).collect();
        let decode = || -> Result<()> {
            if work.len() * expect < PARALLEL_MIN_BYTES || work.len() < 2 {
                work.into_iter().try_for_each(run)
            } else {
                par_map(work, run).into_iter().collect()
            }
        };
        // The next batch is fetched while this one decodes: on object
        // storage the two take comparable time.
        let (decoded, ahead) = std::thread::scope(|s| {
            let ahead = next.map(|n| s.spawn(move || read_stored_batch(io, stats, &n)));
            let decoded = decode();
            let ahead = ahead.map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
            (decoded, ahead)
        });
        decoded?;
        fetched = ahead.transpose()?;
    }
    Ok(())
}

/// The stored bytes of the chunks `refs`, fetched in one batch through
/// `io` and each checked against its entry.
fn read_stored_batch(
    io: &dyn ReadAt,
    stats: &Counters,
    refs: &[ChunkRef],
) -> Result<Vec<PooledBuf>> {
    let mut stored: Vec<PooledBuf> = refs
        .iter()
        .map(|r| FILTER.take_zeroed(r.size as usize))
        .collect();
    let mut reads: Vec<(u64, &mut [u8])> = refs
        .iter()
        .zip(stored.iter_mut())
        .map(|(r, b)| (r.addr, &mut b[..]))
        .collect();
    io.read_batch(&mut reads)?;
    for (r, b) in refs.iter().zip(&stored) {
        stats.chunk(r.size);
        verify(r, b)?;
    }
    Ok(stored)
}

/// A chunk's stored bytes, read through `io` and checked against its entry.
fn read_stored(io: &dyn ReadAt, stats: &Counters, r: &ChunkRef) -> Result<PooledBuf> {
    let mut bytes = FILTER.take_zeroed(r.size as usize);
    io.read_at(r.addr, &mut bytes)?;
    stats.chunk(r.size);
    verify(r, &bytes)?;
    Ok(bytes)
}

/// Where the stored bytes of a chunk being written come from.
pub(crate) enum Source<'a> {
    /// Bytes in memory.
    Bytes(&'a [u8]),
    /// `len` bytes of `file` at `pos`, whose CRC32C the caller computed.
    File {
        file: &'a std::fs::File,
        pos: u64,
        len: u64,
        crc: u32,
    },
}

impl Source<'_> {
    pub(crate) fn len(&self) -> u64 {
        match self {
            Source::Bytes(b) => b.len() as u64,
            Source::File { len, .. } => *len,
        }
    }
}

/// Bytes buffered before a batch of chunks is filtered in parallel.
const BATCH_BYTES: usize = 64 << 20;
/// Filtered chunks a write may hold ahead of its file writes.
const WINDOW_BYTES: usize = 16 << 20;
/// Batches smaller than this are filtered on the calling thread: starting
/// threads costs more than filtering a few small chunks.
const PARALLEL_MIN_BYTES: usize = 1 << 20;

impl Chunked<'_> {
    /// Chunks per dimension: every stored chunk's coordinates lie below.
    fn grid(&self) -> Vec<u64> {
        self.dims
            .iter()
            .zip(self.chunk)
            .map(|(&d, &c)| d.div_ceil(c))
            .collect()
    }

    /// The index entry of the chunk at `coords`, checked against the chunk.
    pub(crate) fn entry(&self, st: &mut Store, coords: &[u64]) -> Result<Option<ChunkRef>> {
        let mut kb = [0u8; MAX_KEY];
        let (root, bytes, filters) = (self.index, self.chunk_bytes() as u64, self.filters);
        btree::get_fixed_with(st, root, key_into(coords, &mut kb)?, ENTRY_LEN, |v| {
            ChunkRef::decode(v, root, bytes, filters)
        })?
        .transpose()
    }

    /// On object storage, fetch the index pages the chunks of `ovs` that
    /// `cache` lacks are found through, a tree level per round trip,
    /// before they are looked up one by one.
    fn prefetch_index(&self, st: &mut Store, cache: &Cache, ovs: &[Overlap]) -> Result<()> {
        if self.index == 0 || ovs.len() < 2 || !st.pager.batches() {
            return Ok(());
        }
        let mut keys: Vec<Vec<u8>> = ovs
            .iter()
            .filter(|o| !cache.contains(o.coords()))
            .map(|o| key(o.coords()))
            .collect();
        keys.sort_unstable();
        let keys: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
        btree::prefetch(st, self.index, &keys)
    }

    /// Every stored chunk, in coordinate order, each checked against the
    /// chunk grid and the chunk's size.
    pub(crate) fn entries(&self, st: &mut Store) -> Result<Vec<(Vec<u64>, ChunkRef)>> {
        let grid = self.grid();
        let (root, bytes, filters) = (self.index, self.chunk_bytes() as u64, self.filters);
        let mut out = vec![];
        btree::scan(st, root, b"", &mut |k, v| {
            out.push((
                decode_key(k, &grid, root)?,
                ChunkRef::decode(v, root, bytes, filters)?,
            ));
            Ok(true)
        })?;
        Ok(out)
    }

    fn chunk_elems(&self) -> usize {
        self.chunk.iter().product::<u64>() as usize
    }

    pub(crate) fn chunk_bytes(&self) -> usize {
        self.chunk_elems() * self.elem
    }

    fn filled_chunk(&self) -> PooledBuf {
        if self.fill.iter().all(|&b| b == 0) {
            CHUNKS.take_zeroed(self.chunk_bytes())
        } else {
            let mut b = CHUNKS.take_empty(self.chunk_bytes());
            for _ in 0..self.chunk_elems() {
                b.extend_from_slice(self.fill);
            }
            b
        }
    }

    /// Read and decode one chunk (fill if it was never written).
    fn load(&mut self, st: &mut Store, coords: &[u64]) -> Result<PooledBuf> {
        match self.entry(st, coords)? {
            None => Ok(self.filled_chunk()),
            Some(r) => {
                let stored = self.read_stored(st, &r)?;
                verify(&r, &stored)?;
                filter::decode_pooled(
                    self.filters,
                    r.mask,
                    self.elem,
                    &stored,
                    self.chunk_bytes(),
                    r.addr,
                )
            }
        }
    }

    /// The index entry and verified stored bytes of the chunk at
    /// `coords`, if it is stored.
    pub(crate) fn load_stored(
        &self,
        st: &mut Store,
        coords: &[u64],
    ) -> Result<Option<(ChunkRef, PooledBuf)>> {
        let Some(r) = self.entry(st, coords)? else {
            return Ok(None);
        };
        let stored = self.read_stored(st, &r)?;
        verify(&r, &stored)?;
        Ok(Some((r, stored)))
    }

    /// Cache `data`, which matches what is stored, for the chunk at
    /// `coords`, as appended to in place by transaction `tx`.
    pub(crate) fn cache_placed(
        &mut self,
        st: &mut Store,
        cache: &mut Cache,
        coords: &[u64],
        data: PooledBuf,
        tx: u64,
    ) -> Result<()> {
        self.cache_insert(st, cache, coords, data, false)?;
        if let Some(c) = cache.peek_mut(coords) {
            c.placed = tx;
        }
        Ok(())
    }

    fn read_stored(&self, st: &Store, r: &ChunkRef) -> Result<PooledBuf> {
        self.check_ref(st, r)?;
        let mut stored = FILTER.take_zeroed(r.size as usize);
        // The caller verifies the checksum (in parallel, for batches).
        st.driver().read_at(r.addr, &mut stored)?;
        st.stats.chunk(r.size);
        Ok(stored)
    }

    /// Read an unfiltered chunk straight to `out[off..]` and check its sum
    /// there.
    fn read_unfiltered_into(
        &self,
        st: &Store,
        r: &ChunkRef,
        out: &mut [u8],
        off: usize,
    ) -> Result<()> {
        self.check_ref(st, r)?;
        let dst = off
            .checked_add(self.chunk_bytes())
            .and_then(|end| out.get_mut(off..end))
            .ok_or_else(|| Error::invalid("chunk run leaves the output"))?;
        st.driver().read_at(r.addr, dst)?;
        st.stats.chunk(r.size);
        verify(r, dst)
    }

    /// Refuse an index entry whose chunk does not lie in live space (its
    /// size was checked when the entry was decoded).
    fn check_ref(&self, st: &Store, r: &ChunkRef) -> Result<()> {
        st.check_live("chunk", r.addr, r.size)
    }

    /// Store one chunk's bytes (from memory or from another file) in its
    /// place and index it.
    pub(crate) fn put_from(
        &mut self,
        st: &mut Store,
        coords: &[u64],
        src: Source,
        mask: u32,
    ) -> Result<()> {
        let size = src.len();
        let (addr, old) = self.place(st, coords, size)?;
        let crc = match src {
            Source::Bytes(bytes) => {
                st.write_data("chunk", (addr, size), addr, bytes)?;
                st.chunk_written(size);
                crc32c::crc32c(bytes)
            }
            Source::File {
                file,
                pos,
                len,
                crc,
            } => {
                st.write_data_from_file("chunk", (addr, size), file, pos, len)?;
                crc
            }
        };
        let entry = ChunkRef {
            addr,
            size,
            mask,
            crc,
        };
        self.record(st, coords, entry, old)
    }

    /// Where a chunk of `size` stored bytes goes: its old extent when that
    /// is big enough (and no journal asks for copy on write), else new
    /// space; with the entry it replaces.
    pub(crate) fn place(
        &mut self,
        st: &mut Store,
        coords: &[u64],
        size: u64,
    ) -> Result<(u64, Option<ChunkRef>)> {
        let old = self.entry(st, coords)?;
        let addr = match old {
            // Under a journal, chunks are rewritten elsewhere (copy on write):
            // an overwrite in place would have to copy the old chunk first.
            Some(o) if o.size >= size && !st.pager.journal().enabled() => {
                st.check_live("chunk", o.addr, o.size)?;
                if o.size > size {
                    st.space
                        .free(SpaceKind::Data, o.addr + size, o.size - size)?;
                }
                o.addr
            }
            Some(o) => {
                st.space.free(SpaceKind::Data, o.addr, o.size)?;
                st.space.alloc(SpaceKind::Data, size)?
            }
            None => st.space.alloc(SpaceKind::Data, size)?,
        };
        Ok((addr, old))
    }

    /// Point the index at a chunk placed by [`Chunked::place`] and written.
    pub(crate) fn record(
        &mut self,
        st: &mut Store,
        coords: &[u64],
        entry: ChunkRef,
        old: Option<ChunkRef>,
    ) -> Result<()> {
        if old != Some(entry) {
            let mut kb = [0u8; MAX_KEY];
            let k = key_into(coords, &mut kb)?;
            let (root, ins) = btree::insert(st, self.index, k, &entry.encode(), true)?;
            debug_assert!(!matches!(ins, Inserted::Exists));
            self.index = root;
        }
        Ok(())
    }

    /// Filter and store a batch of whole chunks (in parallel when it is big
    /// enough to pay for the threads); leaves `batch` empty. Chunks placed
    /// side by side in the file are written in one call; a batch lying past
    /// every stored chunk (an append, a new dataset) looks none up.
    fn store_batch(&mut self, st: &mut Store, batch: &mut Vec<BatchItem>) -> Result<()> {
        let (filters, elem) = (self.filters, self.elem);
        let Some(first) = batch.iter().map(|(c, _)| &c[..]).min() else {
            return Ok(());
        };
        // One chunk costs one lookup either way.
        let fresh = batch.len() > 1 && self.nothing_from(st, first)?;
        let mut run = Run::take();
        let bytes: usize = batch.iter().map(|(_, plain)| plain.len()).sum();
        if bytes < PARALLEL_MIN_BYTES || batch.len() < 2 {
            for (c, plain) in batch.drain(..) {
                let (enc, mask) = filter::encode_pooled(filters, elem, &plain)?;
                drop(plain);
                self.put_in_run(st, &mut run, fresh, c, &enc, mask)?;
            }
            let r = self.write_run(st, &mut run);
            run.give_back();
            return r;
        }
        // Drained, not taken: the pooled vector keeps its capacity.
        #[allow(clippy::drain_collect)]
        let items: Vec<BatchItem> = batch.drain(..).collect();
        let encoded = par_map(items, |(c, plain)| {
            (c, filter::encode_pooled(filters, elem, &plain))
        });
        for (c, enc) in encoded {
            let (bytes, mask) = enc?;
            self.put_in_run(st, &mut run, fresh, c, &bytes, mask)?;
        }
        let r = self.write_run(st, &mut run);
        run.give_back();
        r
    }

    /// Whether the index holds no chunk at or after `coords` in key order
    /// (keys order as coordinates do): one lookup for a whole batch.
    fn nothing_from(&self, st: &mut Store, coords: &[u64]) -> Result<bool> {
        if self.index == 0 {
            return Ok(true);
        }
        let mut kb = [0u8; MAX_KEY];
        let k = key_into(coords, &mut kb)?;
        let mut found = false;
        btree::scan(st, self.index, k, &mut |_, _| {
            found = true;
            Ok(false)
        })?;
        Ok(!found)
    }

    /// Place one chunk of a batch (`fresh`: none of the batch is stored,
    /// so nothing is replaced) and add it to `run`, writing the run first
    /// when this chunk does not continue it. A batch holds each chunk once.
    fn put_in_run(
        &mut self,
        st: &mut Store,
        run: &mut Run,
        fresh: bool,
        coords: PooledVec<u64>,
        bytes: &[u8],
        mask: u32,
    ) -> Result<()> {
        let size = bytes.len() as u64;
        let (addr, old) = if fresh {
            (st.space.alloc(SpaceKind::Data, size)?, None)
        } else {
            self.place(st, &coords, size)?
        };
        let end = run.at + run.bytes.len() as u64;
        if !run.entries.is_empty() && (addr != end || run.bytes.len() >= RUN_BYTES) {
            self.write_run(st, run)?;
        }
        let entry = ChunkRef {
            addr,
            size,
            mask,
            crc: crc32c::crc32c(bytes),
        };
        if bytes.len() >= RUN_BYTES / 4 {
            // Big enough to be worth its own call: written from where it
            // is, never copied.
            self.write_run(st, run)?;
            st.write_data("chunk", (addr, size), addr, bytes)?;
            st.chunk_written(size);
            return self.record(st, &coords, entry, old);
        }
        if run.entries.is_empty() {
            run.at = addr;
        }
        run.bytes.extend_from_slice(bytes);
        st.chunk_written(size);
        run.entries.push((coords, entry, old));
        Ok(())
    }

    /// Write the chunks of `run` in one call, then index them.
    fn write_run(&mut self, st: &mut Store, run: &mut Run) -> Result<()> {
        if run.entries.is_empty() {
            return Ok(());
        }
        let len = run.bytes.len() as u64;
        st.write_data("chunk", (run.at, len), run.at, &run.bytes)?;
        run.bytes.clear();
        if run.entries.len() > 1 && self.append_run(st, run)? {
            run.entries.clear();
            return Ok(());
        }
        for (c, entry, old) in run.entries.drain(..) {
            self.record(st, &c, entry, old)?;
        }
        Ok(())
    }

    /// Index the chunks of `run` in one pass over the index's right edge
    /// when none replaces a stored one and they come after every stored
    /// chunk in key order (an append, a new dataset written whole): a
    /// B-tree insert per chunk would read and rewrite the same last leaf
    /// each time. False, with nothing changed, when they do not.
    fn append_run(&mut self, st: &mut Store, run: &Run) -> Result<bool> {
        if run.entries.iter().any(|(_, _, old)| old.is_some()) {
            return Ok(false);
        }
        let rank = self.dims.len();
        if rank == 0 {
            return Ok(false);
        }
        let mut keys = vec![0u8; run.entries.len() * rank * 8];
        let mut vals = vec![0u8; run.entries.len() * ENTRY_LEN];
        for ((c, entry, _), (k, v)) in run.entries.iter().zip(
            keys.chunks_exact_mut(rank * 8)
                .zip(vals.chunks_exact_mut(ENTRY_LEN)),
        ) {
            if c.len() != rank {
                return Ok(false);
            }
            for (x, slot) in c.iter().zip(k.chunks_exact_mut(8)) {
                slot.copy_from_slice(&x.to_be_bytes());
            }
            v.copy_from_slice(&entry.encode());
        }
        let items: Vec<(&[u8], &[u8])> = keys
            .chunks_exact(rank * 8)
            .zip(vals.chunks_exact(ENTRY_LEN))
            .collect();
        match btree::append(st, self.index, &items)? {
            Some(root) => {
                self.index = root;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    fn store_one(&mut self, st: &mut Store, coords: &[u64], data: PooledBuf) -> Result<()> {
        let mut batch = BATCHES.take(1);
        batch.push((coords_buf(coords), data));
        self.store_batch(st, &mut batch)
    }

    fn evict(&mut self, st: &mut Store, cache: &mut Cache) -> Result<()> {
        while cache.bytes > cache.capacity {
            let Some((victim, c)) = cache.pop_lru() else {
                break;
            };
            if c.dirty {
                self.store_one(st, &victim, c.data)?;
            }
        }
        Ok(())
    }

    fn cache_insert(
        &mut self,
        st: &mut Store,
        cache: &mut Cache,
        coords: &[u64],
        data: PooledBuf,
        dirty: bool,
    ) -> Result<()> {
        if data.len() > cache.capacity {
            if dirty {
                self.store_one(st, coords, data)?;
            }
            return Ok(());
        }
        let c = Cached {
            data,
            dirty,
            placed: 0,
        };
        cache.insert(coords, c);
        self.evict(st, cache)
    }

    /// Store every dirty cached chunk.
    pub(crate) fn flush(&mut self, st: &mut Store, cache: &mut Cache) -> Result<()> {
        let mut batch = BATCHES.take(0);
        for (k, c) in cache.iter_mut() {
            if c.dirty {
                batch.push((coords_buf(k), CHUNKS.take_copy(&c.data)));
                c.dirty = false;
            }
        }
        batch.sort_by(|a, b| a.0.cmp(&b.0));
        self.store_batch(st, &mut batch)
    }

    /// The overlap `o` as laid out in the chunk and in the selection's
    /// dense buffer, for copying between the two.
    fn views<'p>(
        &'p self,
        o: &'p Overlap,
        sel: &'p Selection,
        ones: &'p [u64],
    ) -> (Window<'p>, Window<'p>) {
        (
            Window {
                dims: self.chunk,
                start: o.in_chunk(),
                step: &sel.step,
            },
            Window {
                dims: &sel.count,
                start: o.sel_lo(),
                step: ones,
            },
        )
    }

    /// Read `sel` into `out` (`sel.len() * elem` bytes, in the file's byte
    /// order: the caller swaps).
    pub(crate) fn read(
        &mut self,
        st: &mut Store,
        cache: &mut Cache,
        sel: &Selection,
        out: &mut [u8],
    ) -> Result<()> {
        let ones = DIMS.take_filled(self.dims.len(), 1);
        let ovs = overlaps(self.dims, self.chunk, sel);
        self.prefetch_index(st, cache, &ovs)?;
        let mut pending = PENDING.take(0);
        let mut pending_bytes = 0;
        for (i, o) in ovs.iter().enumerate() {
            if let Some((r, direct)) = self.serve_or_locate(st, cache, o, sel, out, &ones)? {
                if let Some(off) = direct {
                    if self.filters.is_empty() && r.size == self.chunk_bytes() as u64 {
                        // Stored as it is read: no buffer, no copy.
                        self.read_unfiltered_into(st, &r, out, off)?;
                        continue;
                    }
                }
                let stored = self.read_stored(st, &r)?;
                pending_bytes += self.chunk_bytes();
                pending.push((i, r, stored, direct));
            }
            if pending_bytes >= BATCH_BYTES {
                self.drain_reads(st, cache, &ovs, sel, out, &mut pending)?;
                pending_bytes = 0;
            }
        }
        self.drain_reads(st, cache, &ovs, sel, out, &mut pending)?;
        Ok(())
    }

    /// One chunk's share of a read, as far as it needs no stored bytes: a
    /// cached chunk is copied out and an unstored one filled (None);
    /// otherwise its index entry, and where it lands whole in `out` if it
    /// would not stay cached (too big, or the read streams through more
    /// than the cache holds) and lands there in one run.
    fn serve_or_locate(
        &self,
        st: &mut Store,
        cache: &mut Cache,
        o: &Overlap,
        sel: &Selection,
        out: &mut [u8],
        ones: &[u64],
    ) -> Result<Option<(ChunkRef, Option<usize>)>> {
        if let Some(c) = cache.touch(o.coords()) {
            let (src, dst) = self.views(o, sel, ones);
            copy_box(self.elem, o.sel_n(), &c.data, &src, out, &dst)?;
            return Ok(None);
        }
        let Some(r) = self.entry(st, o.coords())? else {
            let (_, dst) = self.views(o, sel, ones);
            fill_box(self.elem, o.sel_n(), self.fill, out, &dst)?;
            return Ok(None);
        };
        let streaming = self.chunk_bytes() * 4 > cache.capacity || out.len() > cache.capacity;
        Ok(Some((
            r,
            if streaming {
                self.direct_offset(o, sel)
            } else {
                None
            },
        )))
    }

    /// The part of a read that needs the session, for reads that fetch and
    /// decode their chunks without it ([`Chunked::fetch_planned`]): chunks
    /// in the cache (dirty ones included) are copied out and unstored ones
    /// filled here; stored ones are located, checked live and returned.
    pub(crate) fn plan_read(
        &self,
        st: &mut Store,
        cache: &mut Cache,
        sel: &Selection,
        out: &mut [u8],
    ) -> Result<ReadPlan> {
        let ones = DIMS.take_filled(self.dims.len(), 1);
        let ovs = overlaps(self.dims, self.chunk, sel);
        self.prefetch_index(st, cache, &ovs)?;
        let mut stored = Vec::new();
        for (i, o) in ovs.iter().enumerate() {
            if let Some((r, direct)) = self.serve_or_locate(st, cache, o, sel, out, &ones)? {
                self.check_ref(st, &r)?;
                stored.push((i, r, direct));
            }
        }
        Ok(ReadPlan {
            ovs,
            stored,
            cache_capacity: cache.capacity,
        })
    }

    /// Fetch, check and decode the stored chunks of `plan` through `io`
    /// into `out`, without the session (the caller holds the writer's
    /// gate). Returns the decoded chunks small enough to cache, for the
    /// caller to offer the cache once it has the session again.
    pub(crate) fn fetch_planned(
        &self,
        io: &dyn ReadAt,
        stats: &Counters,
        plan: ReadPlan,
        sel: &Selection,
        out: &mut [u8],
    ) -> Result<Vec<Decoded>> {
        let ones = DIMS.take_filled(self.dims.len(), 1);
        let (filters, elem, expect) = (self.filters, self.elem, self.chunk_bytes());
        let (direct, rest): (Vec<_>, Vec<_>) = plan.stored.into_iter().partition(|p| p.2.is_some());
        fetch_direct(io, stats, filters, elem, expect, out, direct)?;
        // The rest: each read, checked and decoded on a core, a batch at a
        // time, then copied out here.
        let mut keep = Vec::new();
        let fetch = |&(i, r, _): &(usize, ChunkRef, Option<usize>)| {
            let d = read_stored(io, stats, &r).and_then(|bytes| {
                filter::decode_pooled(filters, r.mask, elem, &bytes, expect, r.addr)
            });
            (i, r, d)
        };
        for group in rest.chunks((BATCH_BYTES / expect.max(1)).max(1)) {
            let decoded: Vec<_> = if io.batches() {
                // The group's stored bytes in one batch, then decoded.
                let refs: Vec<ChunkRef> = group.iter().map(|p| p.1).collect();
                let stored = read_stored_batch(io, stats, &refs)?;
                let decode =
                    |(&(i, r, _), bytes): (&(usize, ChunkRef, Option<usize>), PooledBuf)| {
                        let d =
                            filter::decode_pooled(filters, r.mask, elem, &bytes, expect, r.addr);
                        (i, r, d)
                    };
                let work: Vec<_> = group.iter().zip(stored).collect();
                if work.len() * expect < PARALLEL_MIN_BYTES || work.len() < 2 {
                    work.into_iter().map(decode).collect()
                } else {
                    par_map(work, decode)
                }
            } else if group.len() * expect < PARALLEL_MIN_BYTES || group.len() < 2 {
                group.iter().map(fetch).collect()
            } else {
                par_map(group.iter().collect(), fetch)
            };
            for (i, r, data) in decoded {
                let data = data?;
                let o = &plan.ovs[i];
                let (src, dst) = self.views(o, sel, &ones);
                copy_box(elem, o.sel_n(), &data, &src, out, &dst)?;
                if data.len() * 4 <= plan.cache_capacity {
                    keep.push((coords_buf(o.coords()), r, data));
                }
            }
        }
        Ok(keep)
    }

    /// Offer chunks decoded by [`Chunked::fetch_planned`] to the cache:
    /// each only if its index entry is still the one it was decoded from
    /// (a write in between leaves the newer bytes alone) and the cache has
    /// not had it since.
    pub(crate) fn cache_decoded(
        &mut self,
        st: &mut Store,
        cache: &mut Cache,
        decoded: Vec<Decoded>,
    ) -> Result<()> {
        for (coords, r, data) in decoded {
            if !cache.contains(&coords[..]) && self.entry(st, &coords)? == Some(r) {
                self.cache_insert(st, cache, &coords, data, false)?;
            }
        }
        Ok(())
    }

    /// Cache chunks decoded by [`Chunked::fetch_planned`] while the
    /// session stayed held from [`Chunked::plan_read`] on: their index
    /// entries are still the ones planned, so none is looked up again.
    pub(crate) fn cache_fetched(
        &mut self,
        st: &mut Store,
        cache: &mut Cache,
        decoded: Vec<Decoded>,
    ) -> Result<()> {
        for (coords, _, data) in decoded {
            if !cache.contains(&coords[..]) {
                self.cache_insert(st, cache, &coords, data, false)?;
            }
        }
        Ok(())
    }

    /// Where a chunk that `sel` covers whole lands in the output, if it
    /// lands in one contiguous run: extents of 1 up to some dimension, and
    /// the selection's whole extent after it.
    fn direct_offset(&self, o: &Overlap, sel: &Selection) -> Option<usize> {
        let n = o.sel_n();
        // `full` implies unit steps; edge chunks are cut by the dataset's end.
        if !o.full || n != self.chunk {
            return None;
        }
        let k = n.iter().position(|&x| x != 1).unwrap_or(n.len());
        if (k + 1..n.len()).any(|d| n[d] != sel.count[d]) {
            return None;
        }
        let lin = o
            .sel_lo()
            .iter()
            .zip(&sel.count)
            .try_fold(0u64, |acc, (&lo, &c)| acc.checked_mul(c)?.checked_add(lo))?;
        usize::try_from(lin).ok()?.checked_mul(self.elem)
    }

    /// Decode a batch of stored chunks (in parallel when it is big enough)
    /// and copy them out; leaves `pending` empty.
    fn drain_reads(
        &mut self,
        st: &mut Store,
        cache: &mut Cache,
        ovs: &[Overlap],
        sel: &Selection,
        out: &mut [u8],
        pending: &mut Vec<PendingRead>,
    ) -> Result<()> {
        let (filters, elem, expect) = (self.filters, self.elem, self.chunk_bytes());
        if pending.iter().any(|p| p.3.is_some()) {
            let mut direct: Vec<PendingRead> = Vec::with_capacity(pending.len());
            let mut k = 0;
            while k < pending.len() {
                if pending[k].3.is_some() {
                    direct.push(pending.remove(k));
                } else {
                    k += 1;
                }
            }
            decode_direct(filters, elem, expect, out, direct)?;
        }
        let decode = |(i, r, stored, _): PendingRead| {
            let d = verify(&r, &stored).and_then(|_| {
                filter::decode_pooled(filters, r.mask, elem, &stored, expect, r.addr)
            });
            (i, d)
        };
        if pending.len() * expect < PARALLEL_MIN_BYTES || pending.len() < 2 {
            for p in pending.drain(..) {
                let (i, data) = decode(p);
                self.copy_out(st, cache, &ovs[i], sel, out, data?)?;
            }
            return Ok(());
        }
        // Drained, not taken: the pooled vector keeps its capacity.
        #[allow(clippy::drain_collect)]
        let items: Vec<PendingRead> = pending.drain(..).collect();
        for (i, data) in par_map(items, decode) {
            self.copy_out(st, cache, &ovs[i], sel, out, data?)?;
        }
        Ok(())
    }

    /// Copy a decoded chunk's share of `sel` out, and cache the chunk.
    fn copy_out(
        &mut self,
        st: &mut Store,
        cache: &mut Cache,
        o: &Overlap,
        sel: &Selection,
        out: &mut [u8],
        data: PooledBuf,
    ) -> Result<()> {
        let ones = DIMS.take_filled(self.dims.len(), 1);
        let (src, dst) = self.views(o, sel, &ones);
        copy_box(self.elem, o.sel_n(), &data, &src, out, &dst)?;
        // Keep small reads cached; a streaming read would only churn the cache.
        if data.len() * 4 <= cache.capacity {
            self.cache_insert(st, cache, o.coords(), data, false)?;
        }
        Ok(())
    }

    /// Write `data` (file byte order, `sel.len() * elem` bytes) to `sel`.
    pub(crate) fn write(
        &mut self,
        st: &mut Store,
        cache: &mut Cache,
        sel: &Selection,
        data: &[u8],
    ) -> Result<()> {
        let ones = DIMS.take_filled(self.dims.len(), 1);
        let ovs = overlaps(self.dims, self.chunk, sel);
        // Indexes of the overlaps that are whole chunks (a pooled list: a
        // rewrite allocates nothing).
        let mut whole = DIMS.take(0);
        for (k, o) in ovs.iter().enumerate() {
            if o.full {
                // Whole chunk replaced: no need to read what was there.
                cache.remove(o.coords());
                whole.push(k as u64);
                continue;
            }
            // Built here, not by views(): that would borrow self across
            // the load below.
            let src = Window {
                dims: &sel.count,
                start: o.sel_lo(),
                step: &ones,
            };
            let dst = Window {
                dims: self.chunk,
                start: o.in_chunk(),
                step: &sel.step,
            };
            if let Some(c) = cache.touch(o.coords()) {
                c.dirty = true;
                copy_box(self.elem, o.sel_n(), data, &src, &mut c.data, &dst)?;
                continue;
            }
            let mut buf = self.load(st, o.coords())?;
            copy_box(self.elem, o.sel_n(), data, &src, &mut buf, &dst)?;
            self.cache_insert(st, cache, o.coords(), buf, true)?;
        }
        self.store_whole(st, &ovs, &whole, sel, data)
    }

    /// Filter and store the chunks `sel` covers whole: filtered on every
    /// core and stored in grid order as each is done, so that the file
    /// writes overlap the filtering of the chunks after them.
    fn store_whole(
        &mut self,
        st: &mut Store,
        ovs: &[Overlap],
        whole: &[u64],
        sel: &Selection,
        data: &[u8],
    ) -> Result<()> {
        let Some(first) = whole.iter().map(|&k| ovs[k as usize].coords()).min() else {
            return Ok(());
        };
        let fresh = whole.len() > 1 && self.nothing_from(st, first)?;
        let mut run = Run::take();
        if whole.len() * self.chunk_bytes() < PARALLEL_MIN_BYTES || whole.len() < 2 {
            for &k in whole {
                let o = &ovs[k as usize];
                let (enc, mask) = self.encode_whole(o, sel, data)?;
                self.put_in_run(st, &mut run, fresh, coords_buf(o.coords()), &enc, mask)?;
            }
            let r = self.write_run(st, &mut run);
            run.give_back();
            return r;
        }
        // The workers read the dataset's description; only this thread
        // stores.
        let ro = Chunked {
            dims: self.dims,
            chunk: self.chunk,
            elem: self.elem,
            filters: self.filters,
            fill: self.fill,
            index: self.index,
        };
        let window = (WINDOW_BYTES / self.chunk_bytes().max(1)).max(8);
        crate::par::ordered(
            whole,
            window,
            |&k| ro.encode_whole(&ovs[k as usize], sel, data),
            |i, r| {
                let (enc, mask) = r?;
                let c = coords_buf(ovs[whole[i] as usize].coords());
                self.put_in_run(st, &mut run, fresh, c, &enc, mask)
            },
        )?;
        let r = self.write_run(st, &mut run);
        run.give_back();
        r
    }

    /// One chunk `sel` covers whole, filtered: straight from `data` when the
    /// chunk lies there as one run (whole rows of the selection), else
    /// gathered into a chunk buffer first.
    fn encode_whole(&self, o: &Overlap, sel: &Selection, data: &[u8]) -> Result<(PooledBuf, u32)> {
        let n = o.sel_n();
        let run = sel.step.iter().all(|&s| s == 1)
            && n == self.chunk
            && n.iter().zip(&sel.count).skip(1).all(|(a, b)| a == b);
        if run {
            let row: u64 = sel.count[1..].iter().product();
            let at = (o.sel_lo()[0] * row) as usize * self.elem;
            let bytes = data
                .get(at..at + self.chunk_bytes())
                .ok_or_else(|| Error::invalid("source buffer too small for the selection"))?;
            return filter::encode_pooled(self.filters, self.elem, bytes);
        }
        let ones = DIMS.take_filled(self.dims.len(), 1);
        let (dst, src) = self.views(o, sel, &ones);
        let mut buf = self.filled_chunk();
        copy_box(self.elem, n, data, &src, &mut buf, &dst)?;
        filter::encode_pooled(self.filters, self.elem, &buf)
    }

    /// After `dims` shrank to `new_dims`: drop chunks wholly outside, and
    /// reset the outside part of edge chunks to the fill value so that a
    /// later grow shows fill, not old data.
    pub(crate) fn shrink(
        &mut self,
        st: &mut Store,
        cache: &mut Cache,
        new_dims: &[u64],
    ) -> Result<()> {
        self.flush(st, cache)?;
        let rank = new_dims.len();
        for (coords, r) in self.entries(st)? {
            let lo: Vec<u64> = coords.iter().zip(self.chunk).map(|(c, n)| c * n).collect();
            if lo.iter().zip(new_dims).any(|(l, d)| l >= d) {
                st.space.free(SpaceKind::Data, r.addr, r.size)?;
                self.index = btree::remove(st, self.index, &key(&coords))?.0;
                cache.remove(&coords);
                continue;
            }
            let inside = lo
                .iter()
                .zip(self.chunk)
                .zip(new_dims)
                .all(|((l, n), d)| l + n <= *d);
            if inside {
                continue;
            }
            cache.remove(&coords);
            let mut buf = self.load(st, &coords)?;
            // Walk every element of the chunk; reset those outside new_dims.
            let n = self.chunk_elems();
            let mut idx = vec![0u64; rank];
            for e in 0..n {
                if idx
                    .iter()
                    .zip(&lo)
                    .zip(new_dims)
                    .any(|((i, l), d)| i + l >= *d)
                {
                    buf[e * self.elem..(e + 1) * self.elem].copy_from_slice(self.fill);
                }
                let mut k = rank;
                while k > 0 {
                    k -= 1;
                    idx[k] += 1;
                    if idx[k] < self.chunk[k] {
                        break;
                    }
                    idx[k] = 0;
                }
            }
            self.store_one(st, &coords, buf)?;
        }
        Ok(())
    }

    /// Every extent the chunks and the index occupy: what destroying the
    /// dataset frees.
    pub(crate) fn extents(&self, st: &mut Store, out: &mut Vec<Section>) -> Result<()> {
        for (_, r) in self.entries(st)? {
            out.push(Section {
                addr: r.addr,
                size: r.size,
                kind: SpaceKind::Data,
            });
        }
        btree::extents(st, self.index, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlaps_cover_selection_exactly() {
        let dims = [10u64, 7];
        let chunk = [3u64, 4];
        let sel = Selection::from_ranges(&[(1, 10, 4), (0, 7, 1)]).unwrap();
        let ovs = overlaps(&dims, &chunk, &sel);
        let total: u64 = ovs.iter().map(|o| o.sel_n().iter().product::<u64>()).sum();
        assert_eq!(total, sel.len());
        // rows 1, 5, 9 live in chunk rows 0, 1, 3 (chunk row 2 holds rows 6..9, none selected)
        let rows: Vec<u64> = ovs.iter().map(|o| o.coords()[0]).collect();
        assert_eq!(rows, vec![0, 0, 1, 1, 3, 3]);
        assert!(ovs.iter().all(|o| !o.full));
        let all = Selection::all(&dims);
        let ovs = overlaps(&dims, &chunk, &all);
        assert_eq!(ovs.len(), 8);
        assert!(ovs.iter().all(|o| o.full));
    }
}
