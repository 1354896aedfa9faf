//! The byte vector: a growable 1-D chunked array reached through the common
//! chunk engine, plus its optional list of free ranges.

use crate::chunk::{Cache, ChunkRef, Chunked};
use crate::error::{Error, Result};
use crate::filter;
use crate::format::btree;
use crate::format::chunk_index::key;
pub(crate) use crate::format::vlen_vector::VecMeta;
use crate::format::vlen_vector::{decode_free_ranges, encode_free_ranges};
use crate::par::par_map;
use crate::selection::Selection;
use crate::space::{Section, SpaceKind};
use crate::store::{Store, BLOB_HEADER};

/// Run `f` with a chunk engine over the first `items` items of the vector.
fn with_engine<T>(
    vm: &mut VecMeta,
    item: usize,
    items: u64,
    f: impl FnOnce(&mut Chunked) -> Result<T>,
) -> Result<T> {
    let dims = [items];
    let chunk = [vm.chunk_bytes / item as u64];
    let zero = vec![0u8; item];
    let mut c = Chunked {
        dims: &dims,
        chunk: &chunk,
        elem: item,
        filters: &vm.filters,
        fill: &zero,
        index: vm.index,
    };
    let r = f(&mut c);
    vm.index = c.index;
    r
}

/// Write `data` at byte `off` of the vector, growing it if needed.
pub(crate) fn write(
    st: &mut Store,
    cache: &mut Cache,
    vm: &mut VecMeta,
    item: usize,
    off: u64,
    data: &[u8],
) -> Result<()> {
    if data.is_empty() {
        return Ok(());
    }
    let c = vm.chunk_bytes;
    // An append into the stored last chunk of an unfiltered vector lands
    // in place: rewriting the whole chunk elsewhere would cost a chunk's
    // bytes (and, beside snapshot readers, hold a chunk's space) for every
    // small append.
    let (off, data) = if vm.filters.is_empty() && off >= vm.len && !vm.len.is_multiple_of(c) {
        let k = vm.len / c;
        let part = ((k + 1) * c).saturating_sub(off).min(data.len() as u64) as usize;
        if part > 0 && append_in_place(st, cache, vm, item, k, off, &data[..part])? {
            vm.len = vm.len.max(off + part as u64);
            (off + part as u64, &data[part..])
        } else {
            (off, data)
        }
    } else {
        (off, data)
    };
    if data.is_empty() {
        return Ok(());
    }
    let end = off + data.len() as u64;
    let new_len = vm.len.max(end);
    // Whole chunks past the old end of an unfiltered vector were never
    // stored or cached: they go straight from `data` to the file.
    let lo = off.max(vm.len).div_ceil(c) * c;
    let hi = end / c * c;
    if vm.filters.is_empty() && lo < hi {
        let at = |x: u64| (x - off) as usize;
        engine_write(st, cache, vm, item, new_len, off, &data[..at(lo)])?;
        put_direct(st, vm, lo, &data[at(lo)..at(hi)])?;
        engine_write(st, cache, vm, item, new_len, hi, &data[at(hi)..])?;
    } else {
        engine_write(st, cache, vm, item, new_len, off, data)?;
    }
    vm.len = new_len;
    Ok(())
}

/// Write `part` at byte `off` of the unfiltered vector, inside its stored
/// chunk `k`, in place: the bytes are written where they go (journaled as
/// any overwrite of committed bytes is) and the chunk's checksum updated.
/// Once per chunk and transaction: a second append in one transaction
/// goes through the cache like any write (the chunk is then stored whole
/// at commit, as often as before), so appends in a loop cost no more than
/// they did. Returns false, writing nothing, when the engine should write.
fn append_in_place(
    st: &mut Store,
    cache: &mut Cache,
    vm: &mut VecMeta,
    item: usize,
    k: u64,
    off: u64,
    part: &[u8],
) -> Result<bool> {
    let tx = st.pager.journal().transaction();
    let cached = cache.state(&[k]);
    if matches!(cached, Some((true, _))) || matches!(cached, Some((false, p)) if p == tx) {
        return Ok(false);
    }
    let c = vm.chunk_bytes;
    let items = vm.len.max((k + 1) * c) / item as u64;
    let Some(entry) = with_engine(vm, item, items, |e| e.entry(st, &[k]))? else {
        return Ok(false);
    };
    if entry.size != c || entry.mask != 0 {
        return Ok(false);
    }
    let at = (off - k * c) as usize;
    let dst = (entry.addr, c);
    // The file first, then the cache: a failed write leaves the cache as
    // the file is.
    let crc = if cached.is_some() {
        st.write_data("vlen chunk", dst, entry.addr + at as u64, part)?;
        match cache.patch_clean(&[k], at, part, tx) {
            Some(crc) => crc,
            None => {
                return Err(Error::invalid(
                    "a cached vector chunk changed under an append",
                ))
            }
        }
    } else {
        let Some((_, mut bytes)) = with_engine(vm, item, items, |e| e.load_stored(st, &[k]))?
        else {
            return Ok(false);
        };
        bytes[at..at + part.len()].copy_from_slice(part);
        let crc = crc32c::crc32c(&bytes);
        st.write_data("vlen chunk", dst, entry.addr + at as u64, part)?;
        with_engine(vm, item, items, |e| {
            e.cache_placed(st, cache, &[k], bytes, tx)
        })?;
        crc
    };
    let updated = ChunkRef { crc, ..entry };
    vm.index = btree::insert(st, vm.index, &key(&[k]), &updated.encode(), true)?.0;
    Ok(true)
}

fn engine_write(
    st: &mut Store,
    cache: &mut Cache,
    vm: &mut VecMeta,
    item: usize,
    new_len: u64,
    off: u64,
    data: &[u8],
) -> Result<()> {
    if data.is_empty() {
        return Ok(());
    }
    let i = item as u64;
    let end = off + data.len() as u64;
    let sel = Selection::from_ranges(&[(off / i, end / i, 1)])?;
    with_engine(vm, item, new_len / i, |c| c.write(st, cache, &sel, data))
}

/// Store whole unfiltered chunks starting at byte `at` (chunk-aligned) in
/// one extent with one write, then index each.
fn put_direct(st: &mut Store, vm: &mut VecMeta, at: u64, data: &[u8]) -> Result<()> {
    let c = vm.chunk_bytes;
    let len = data.len() as u64;
    let addr = st.space.alloc(SpaceKind::Data, len)?;
    let crcs = if data.len() >= OVERLAP_BYTES {
        // The write runs on this thread; the sums take the other core
        // meanwhile instead of following it.
        let (sums, written) = crate::par::join(
            || chunk_crcs_on(data, c as usize, 1),
            || st.write_data("vlen chunk", (addr, len), addr, data),
        );
        written.map(|()| sums)?
    } else {
        st.write_data("vlen chunk", (addr, len), addr, data)?;
        chunk_crcs(data, c as usize)
    };
    for (k, crc) in crcs.into_iter().enumerate() {
        let entry = ChunkRef {
            addr: addr + k as u64 * c,
            size: c,
            mask: 0,
            crc,
        };
        index_put(st, vm, at / c + k as u64, &entry)?;
    }
    Ok(())
}

/// Point the vector's chunk `coord` at `entry`, freeing a chunk it replaces.
fn index_put(st: &mut Store, vm: &mut VecMeta, coord: u64, entry: &ChunkRef) -> Result<()> {
    // Checked before the index changes: a damaged old entry fails the call.
    let old = with_engine(
        vm,
        1,
        vm.len
            .max(coord.saturating_add(1).saturating_mul(vm.chunk_bytes)),
        |e| e.entry(st, &[coord]),
    )?;
    if let Some(o) = old {
        st.space.check_free(&[Section {
            addr: o.addr,
            size: o.size,
            kind: SpaceKind::Data,
        }])?;
    }
    vm.index = btree::insert(st, vm.index, &key(&[coord]), &entry.encode(), true)?.0;
    if let Some(o) = old {
        st.space.free(SpaceKind::Data, o.addr, o.size)?;
    }
    Ok(())
}

/// CRC32C of each `c`-byte chunk of `data`, on two threads when there is
/// enough to share: summing is a fair part of an unfiltered write or read.
fn chunk_crcs(data: &[u8], c: usize) -> Vec<u32> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |x| x.get())
        .min(4);
    chunk_crcs_on(data, c, threads)
}

/// A write this large overlaps its checksums (and its caller, its
/// records) with its copy to the file.
pub(crate) const OVERLAP_BYTES: usize = 16 << 20;

/// [`chunk_crcs`] on at most `threads` threads.
fn chunk_crcs_on(data: &[u8], c: usize, threads: usize) -> Vec<u32> {
    let n = data.len() / c;
    if threads < 2 || data.len() < OVERLAP_BYTES {
        return data.chunks_exact(c).map(crc32c::crc32c).collect();
    }
    let per = n.div_ceil(threads);
    let parts: Vec<&[u8]> = data[..n * c].chunks(per * c).collect();
    par_map(parts, |part| {
        part.chunks_exact(c)
            .map(crc32c::crc32c)
            .collect::<Vec<u32>>()
    })
    .into_iter()
    .flatten()
    .collect()
}

/// Reserve whole chunks for `len` bytes at chunk-aligned vector offset
/// `at` in one extent, zero its padding, index the chunks (checksums come
/// with [`seal_direct`]) and return the extent's file address.
pub(crate) fn extend_direct(st: &mut Store, vm: &mut VecMeta, at: u64, len: u64) -> Result<u64> {
    let c = vm.chunk_bytes;
    let n = len.div_ceil(c);
    let total = n
        .checked_mul(c)
        .ok_or_else(|| Error::invalid("extension too large"))?;
    let addr = st.space.alloc(SpaceKind::Data, total)?;
    st.pager.extend_limit(addr + total);
    let pad = (total - len) as usize;
    if pad > 0 {
        st.write_data("vlen chunk", (addr, total), addr + len, &vec![0u8; pad])?;
    }
    let d = st.pager.driver_mut();
    if d.len()? < addr + total {
        d.truncate(addr + total)?;
    }
    vm.len = vm.len.max(at + total);
    for k in 0..n {
        let entry = ChunkRef {
            addr: addr + k * c,
            size: c,
            mask: 0,
            crc: 0,
        };
        index_put(st, vm, at / c + k, &entry)?;
    }
    vm.len = at + len;
    Ok(addr)
}

/// A range appended to a byte vector by `Dataset::vlen_extend`, whose
/// bytes callers write straight into the file (parallel writers do).
///
/// Vector byte `offset + i` lives at file address `addr + i` for
/// `i < len`; chunks of `chunk_bytes` start at `offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VlenExtent {
    /// First vector byte of the range (a chunk boundary).
    pub offset: u64,
    /// File address of that byte.
    pub addr: u64,
    /// Bytes in the range.
    pub len: u64,
    /// Bytes per vector chunk.
    pub chunk_bytes: u64,
}

/// Fill in the checksums of an extent's chunks: given ones as they are,
/// the others computed from the file.
pub(crate) fn seal_direct(
    st: &mut Store,
    vm: &mut VecMeta,
    ext: &VlenExtent,
    crcs: &[(u64, u32)],
) -> Result<()> {
    let c = vm.chunk_bytes;
    if ext.chunk_bytes != c || !ext.offset.is_multiple_of(c) || ext.offset + ext.len > vm.len {
        return Err(Error::invalid("extent does not belong to this vector"));
    }
    let n = ext.len.div_ceil(c);
    let known: std::collections::HashMap<u64, u32> = crcs.iter().copied().collect();
    if known.keys().any(|&k| k >= n) {
        return Err(Error::invalid("checksum for a chunk outside the extent"));
    }
    let mut buf = vec![];
    let items = vm.len;
    for k in 0..n {
        let coord = ext.offset / c + k;
        let r = with_engine(vm, 1, items, |e| e.entry(st, &[coord]))?
            .ok_or_else(|| Error::invalid("extent chunk is not in the vector"))?;
        if r.addr != ext.addr + k * c || r.size != c {
            return Err(Error::invalid("extent does not match the vector's chunks"));
        }
        let crc = match known.get(&k) {
            Some(&x) => x,
            None => {
                buf.resize(c as usize, 0);
                st.driver().read_at(r.addr, &mut buf)?;
                crc32c::crc32c(&buf)
            }
        };
        let entry = ChunkRef { crc, ..r };
        vm.index = btree::insert(st, vm.index, &key(&[coord]), &entry.encode(), true)?.0;
    }
    Ok(())
}

/// Read byte ranges `[offset, len]` of the vector into `out`, one after
/// another. Ranges that continue each other are read as one.
pub(crate) fn read_ranges(
    st: &mut Store,
    cache: &mut Cache,
    vm: &mut VecMeta,
    item: usize,
    ranges: &[[u64; 2]],
    out: &mut [u8],
) -> Result<()> {
    let i = item as u64;
    let items = vm.len / i;
    let c = vm.chunk_bytes;
    let direct = vm.filters.is_empty();
    if direct {
        // Cached dirty chunks must reach the file before it is read directly.
        flush(st, cache, vm, item)?;
    }
    let vm0 = vm.clone();
    with_engine(vm, item, items, |e| {
        let mut engine_read = |st: &mut Store, cache: &mut Cache, start: u64, dst: &mut [u8]| {
            if dst.is_empty() {
                return Ok(());
            }
            let end = start + dst.len() as u64;
            let sel = Selection::from_ranges(&[(start / i, end / i, 1)])?;
            // Items are moved as they are stored; the caller swaps them.
            e.read(st, cache, &sel, dst)
        };
        let mut pos = 0usize;
        let mut k = 0;
        while k < ranges.len() {
            let [start, mut len] = ranges[k];
            k += 1;
            while k < ranges.len() && ranges[k][0] == start + len {
                len += ranges[k][1];
                k += 1;
            }
            if len == 0 {
                continue;
            }
            let dst = &mut out[pos..pos + len as usize];
            pos += len as usize;
            let end = start + len;
            let (lo, hi) = (start.div_ceil(c) * c, end / c * c);
            if direct && lo < hi {
                let at = |x: u64| (x - start) as usize;
                let (head, rest) = dst.split_at_mut(at(lo));
                let (body, tail) = rest.split_at_mut((hi - lo) as usize);
                engine_read(st, cache, start, head)?;
                read_direct(st, &vm0, c, lo, body)?;
                engine_read(st, cache, hi, tail)?;
            } else {
                engine_read(st, cache, start, dst)?;
            }
        }
        Ok(())
    })
}

/// Read whole unfiltered chunks starting at byte `at` straight into `out`,
/// one read per run of chunks lying back to back in the file.
fn read_direct(st: &mut Store, vm: &VecMeta, c: u64, at: u64, out: &mut [u8]) -> Result<()> {
    let n = out.len() as u64 / c;
    let mut refs = Vec::with_capacity(n as usize);
    with_engine(&mut vm.clone(), 1, vm.len, |e| {
        for k in 0..n {
            let r = e.entry(st, &[at / c + k])?;
            if let Some(r) = &r {
                st.check_live("vlen chunk", r.addr, r.size)?;
            }
            refs.push(r);
        }
        Ok(())
    })?;
    let mut k = 0usize;
    while k < refs.len() {
        let Some(first) = refs[k] else {
            out[k * c as usize..(k + 1) * c as usize].fill(0);
            k += 1;
            continue;
        };
        let mut j = k + 1;
        while j < refs.len() && refs[j].is_some_and(|r| r.addr == first.addr + (j - k) as u64 * c) {
            j += 1;
        }
        let buf = &mut out[k * c as usize..j * c as usize];
        st.driver().read_at(first.addr, buf)?;
        for r in refs[k..j].iter().flatten() {
            st.stats.chunk(r.size);
        }
        for (m, crc) in chunk_crcs(buf, c as usize).into_iter().enumerate() {
            if let Some(r) = &refs[k + m] {
                if crc != r.crc {
                    return Err(Error::corrupt("chunk", r.addr, "checksum mismatch"));
                }
            }
        }
        k = j;
    }
    Ok(())
}

/// Store the vector's dirty cached chunks.
pub(crate) fn flush(
    st: &mut Store,
    cache: &mut Cache,
    vm: &mut VecMeta,
    item: usize,
) -> Result<()> {
    let items = vm.len / item as u64;
    with_engine(vm, item, items, |c| c.flush(st, cache))
}

/// Every chunk of the vector in order, each entry checked.
pub(crate) fn entries(st: &mut Store, vm: &VecMeta) -> Result<Vec<(Vec<u64>, ChunkRef)>> {
    with_engine(&mut vm.clone(), 1, vm.len, |e| e.entries(st))
}

/// Every extent the vector occupies — chunks, the chunk index, the
/// free-range blob — for freeing with its dataset in one batch.
pub(crate) fn extents(st: &mut Store, vm: &VecMeta, out: &mut Vec<Section>) -> Result<()> {
    out.extend(entries(st, vm)?.into_iter().map(|(_, r)| Section {
        addr: r.addr,
        size: r.size,
        kind: SpaceKind::Data,
    }));
    btree::extents(st, vm.index, out)?;
    if vm.free_addr != 0 {
        out.push(Section {
            addr: vm.free_addr,
            size: BLOB_HEADER + vm.free_len,
            kind: SpaceKind::Meta,
        });
    }
    Ok(())
}

/// Leave `vm` an empty vector and return the extents it held (every chunk,
/// the chunk index, the free-range blob) for the caller to free once the
/// header no longer names them: freed first, they could shrink the file
/// below addresses the header still holds, which a reload of the header
/// rightly refuses.
pub(crate) fn detach(st: &mut Store, vm: &mut VecMeta) -> Result<Vec<Section>> {
    let mut dead = vec![];
    extents(st, vm, &mut dead)?;
    *vm = VecMeta::new(vm.chunk_bytes, vm.filters.clone(), vm.reuse);
    Ok(dead)
}

/// Free ranges of a reusing vector, never touching: by offset for merging,
/// by (length, offset) for best fit, so both stay logarithmic. Ranges
/// the file names that no proof has cleared yet are `held`: kept in the
/// list, never handed out.
#[derive(Default)]
pub(crate) struct FreeRanges {
    by_off: std::collections::BTreeMap<u64, u64>,
    by_len: std::collections::BTreeSet<(u64, u64)>,
    held: Vec<(u64, u64)>,
}

impl FreeRanges {
    pub(crate) fn load(st: &Store, vm: &VecMeta) -> Result<Self> {
        let mut f = FreeRanges::default();
        if vm.free_addr == 0 {
            return Ok(f);
        }
        let b = st.read_blob(vm.free_addr)?;
        if b.len() as u64 != vm.free_len {
            return Err(Error::corrupt(
                "variable-length free ranges",
                vm.free_addr,
                "length differs from the vector's record",
            ));
        }
        for (o, l) in decode_free_ranges(&b, vm.free_addr, vm.len)? {
            f.insert(o, l);
        }
        Ok(f)
    }

    /// Keep every range for the stored list but hand none out: the file
    /// named them, and no proof has shown them clear of live elements.
    pub(crate) fn hold_all(&mut self) {
        self.held.extend(self.by_off.iter().map(|(&o, &l)| (o, l)));
        self.by_off.clear();
        self.by_len.clear();
    }

    /// Replace the stored list with this one (held ranges included).
    pub(crate) fn save(&self, st: &mut Store, vm: &mut VecMeta) -> Result<()> {
        if vm.free_addr != 0 {
            st.free_blob(vm.free_addr, vm.free_len)?;
            vm.free_addr = 0;
            vm.free_len = 0;
        }
        // Held ranges may touch (or, in a damaged file, overlap) the
        // ones given since: stored merged, as the list must be. Without
        // held ranges the list is stored as it is, with no rebuild.
        let merged;
        let list = if self.held.is_empty() {
            self
        } else {
            let mut all = FreeRanges::default();
            for (o, l) in self.ranges().chain(self.held.iter().copied()) {
                all.give(o, l);
            }
            merged = all;
            &merged
        };
        if !list.by_off.is_empty() {
            let b = encode_free_ranges(list.ranges());
            vm.free_addr = st.write_blob(&b)?;
            vm.free_len = b.len() as u64;
        }
        Ok(())
    }

    /// The ranges in offset order.
    pub(crate) fn ranges(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.by_off.iter().map(|(&o, &l)| (o, l))
    }

    fn insert(&mut self, off: u64, len: u64) {
        self.by_off.insert(off, len);
        self.by_len.insert((len, off));
    }

    fn remove(&mut self, off: u64) -> Option<u64> {
        let len = self.by_off.remove(&off)?;
        self.by_len.remove(&(len, off));
        Some(len)
    }

    /// Add a range, merging with the ranges it touches or overlaps.
    pub(crate) fn give(&mut self, off: u64, len: u64) {
        if len == 0 {
            return;
        }
        let (mut start, mut end) = (off, off + len);
        if let Some((&o, &l)) = self.by_off.range(..=start).next_back() {
            if o + l >= start {
                start = o;
                end = end.max(o + l);
                self.remove(o);
            }
        }
        while let Some((&o, &l)) = self.by_off.range(start..=end).next() {
            end = end.max(o + l);
            self.remove(o);
        }
        self.insert(start, end - start);
    }

    /// Take `len` bytes from the smallest range that holds them.
    pub(crate) fn take(&mut self, len: u64) -> Option<u64> {
        let &(l, o) = self.by_len.range((len, 0)..).next()?;
        self.remove(o);
        if l > len {
            self.insert(o + len, l - len);
        }
        Some(o)
    }

    /// Bytes in every range, held ones included.
    pub(crate) fn total(&self) -> u64 {
        self.by_off.values().sum::<u64>() + self.held.iter().map(|r| r.1).sum::<u64>()
    }
}

/// Figures of the vector for `Stat`: pages, chunks, stored and logical
/// bytes, pushing every live extent for the space accounting.
pub(crate) struct Accounted {
    pub(crate) metadata: u64,
    pub(crate) chunks: u64,
    pub(crate) data: u64,
    pub(crate) logical: u64,
}

/// Walk the vector's storage; with `verify`, read and decode every chunk.
pub(crate) fn account(
    st: &mut Store,
    vm: &VecMeta,
    item: usize,
    verify: bool,
    extents: &mut Vec<(u64, u64, &'static str)>,
) -> Result<Accounted> {
    let mut a = Accounted {
        metadata: 0,
        chunks: 0,
        data: 0,
        logical: 0,
    };
    let mut pages = vec![];
    btree::pages(st, vm.index, &mut pages)?;
    for &(p, n) in &pages {
        a.metadata += n;
        extents.push((p, n, "B-tree page"));
    }
    if vm.free_addr != 0 {
        a.metadata += BLOB_HEADER + vm.free_len;
        extents.push((vm.free_addr, BLOB_HEADER + vm.free_len, "vlen free ranges"));
        if verify {
            FreeRanges::load(st, vm)?;
        }
    }
    let expect = vm.chunk_bytes as usize;
    for (_, r) in entries(st, vm)? {
        a.chunks += 1;
        a.data += r.size;
        a.logical += vm.chunk_bytes;
        extents.push((r.addr, r.size, "vlen chunk"));
        st.check_live("vlen chunk", r.addr, r.size)?;
        if verify {
            let mut buf = vec![0u8; r.size as usize];
            st.driver().read_at(r.addr, &mut buf)?;
            crate::chunk::verify(&r, &buf)?;
            filter::decode(&vm.filters, r.mask, item, buf, expect, r.addr)?;
        }
    }
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_ranges_merge_and_best_fit() {
        let mut f = FreeRanges::default();
        f.give(10, 5);
        f.give(30, 10);
        f.give(15, 5); // touches 10..15
        assert_eq!(f.ranges().collect::<Vec<_>>(), vec![(10, 10), (30, 10)]);
        f.give(20, 10); // bridges both
        assert_eq!(f.ranges().collect::<Vec<_>>(), vec![(10, 30)]);
        f.give(100, 4);
        f.give(200, 8);
        assert_eq!(f.take(4), Some(100));
        assert_eq!(f.take(5), Some(200)); // best fit: 8 bytes, not 30
        assert_eq!(f.ranges().collect::<Vec<_>>(), vec![(10, 30), (205, 3)]);
        assert_eq!(f.take(31), None);
        assert_eq!(f.take(30), Some(10));
        assert_eq!(f.total(), 3);
    }
}
