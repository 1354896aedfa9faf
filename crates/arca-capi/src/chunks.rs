//! Chunks written by other processes: space reserved inside a
//! transaction, slabs of an array cut into filtered chunks without the
//! file, the bytes written through a plain descriptor, and the chunks
//! sealed into the dataset's index. These are the pieces of a collective
//! write from every rank of an MPI job (`arca_mpi.h`), where only rank 0
//! has the file open through arca.

use std::ffi::{c_char, c_void};

use arca_core::{encode_slab, Datatype, EncodedSlab, Filter, WrittenChunk};

use crate::dataset::{check_fixed, filter_from, rank_arg, DatasetHandle, FilterC};
use crate::error::{guard, Fail, R};
use crate::ffi::{clear, give_handle, handle, put, put_opt, slice, slice_mut, take_handle, text};

/// One chunk written into reserved space (`arca_written_chunk_t`), for
/// [`arca_dataset_seal_chunks`].
///
/// ```c
/// uint64_t off[2] = {16, 0};
/// arca_written_chunk_t w = {off, addr, len, mask, crc};
/// ```
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct WrittenChunkC {
    /// The chunk's first element: one entry per dimension.
    pub offset: *const u64,
    /// Where its stored bytes begin in the file.
    pub addr: u64,
    /// Stored bytes.
    pub len: u64,
    /// Its filter mask, as `arca_slab_chunk` gives it.
    pub mask: u32,
    /// CRC32C (Castagnoli) of its stored bytes.
    pub crc: u32,
}

/// What [`arca_encode_slab_desc`] needs to know of a dataset
/// (`arca_slab_desc_t`), for processes that do not have it open.
///
/// ```c
/// arca_slab_desc_t d = {"<f4", 4, 2, dims, chunks, filters, 2, &fill, 4};
/// ```
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct SlabDescC {
    /// NULL, or the element type as `arca_dataset_dtype_str` gives it:
    /// elements and fill value are then in native byte order and converted
    /// to the type's. NULL: they are taken as stored, `elem_size` bytes each.
    pub type_str: *const c_char,
    /// Bytes per element; with a type string, 0 or its size.
    pub elem_size: usize,
    /// Number of dimensions, 1 to `ARCA_MAX_RANK`.
    pub rank: i32,
    /// `rank` extents.
    pub dims: *const u64,
    /// `rank` chunk extents.
    pub chunks: *const u64,
    /// NULL or `nfilters` stages, the dataset's pipeline.
    pub filters: *const FilterC,
    /// Number of filter stages.
    pub nfilters: usize,
    /// NULL (zeros) or one element, `fill_size` bytes.
    pub fill_value: *const c_void,
    /// Bytes at `fill_value`.
    pub fill_size: usize,
}

/// A slab cut into filtered chunks (`arca_slab_t`), from
/// [`arca_encode_slab`] or [`arca_encode_slab_desc`].
///
/// ```c
/// arca_slab_t *b;
/// arca_encode_slab(ds, start, count, buf, size, &b);
/// arca_slab_free(b);
/// ```
pub struct SlabHandle {
    pub(crate) slab: EncodedSlab,
    rank: usize,
}

/// Elements in native byte order as `t` stores them: a copy when they
/// differ, else the same bytes.
fn as_stored<'a>(t: &Datatype, native: &'a [u8]) -> std::borrow::Cow<'a, [u8]> {
    if !t.needs_swap() {
        return std::borrow::Cow::Borrowed(native);
    }
    let mut v = native.to_vec();
    t.swap(&mut v);
    std::borrow::Cow::Owned(v)
}

/// The box's start and count (`rank` entries each) and its bytes.
unsafe fn slab_box(
    rank: usize,
    elem: usize,
    start: *const u64,
    count: *const u64,
) -> R<(Vec<u64>, Vec<u64>, usize)> {
    if start.is_null() && rank > 0 {
        return Err(Fail::null("start"));
    }
    if count.is_null() && rank > 0 {
        return Err(Fail::null("count"));
    }
    // SAFETY: non-NULL with `rank` entries, per the caller's contract.
    let s = unsafe { slice(start, rank, "start")? }.to_vec();
    // SAFETY: as above.
    let c = unsafe { slice(count, rank, "count")? }.to_vec();
    let bytes = c
        .iter()
        .try_fold(elem as u64, |a, &n| a.checked_mul(n))
        .and_then(|b| usize::try_from(b).ok())
        .filter(|&b| b <= isize::MAX as usize)
        .ok_or_else(|| Fail::invalid("slab is too large for memory"))?;
    Ok((s, c, bytes))
}

/// Borrow the caller's slab of exactly `bytes` bytes (`slab_size`).
unsafe fn slab_bytes<'a>(slab: *const c_void, slab_size: usize, bytes: usize) -> R<&'a [u8]> {
    if slab_size != bytes {
        return Err(Fail::invalid(format!(
            "slab of {slab_size} bytes; the box holds {bytes}"
        )));
    }
    // SAFETY: NULL only when empty, else `bytes` readable bytes, per the
    // caller's contract.
    unsafe { slice(slab.cast::<u8>(), bytes, "slab") }
}

/// Reserve `nbytes` bytes of the file for chunks of `ds` that other
/// processes write, inside a transaction (`arca_file_begin_transaction`):
/// `*addr` is where the region begins. The writers put each chunk's stored
/// bytes anywhere inside it without overlaps (`arca_write_out`), then
/// [`arca_dataset_seal_chunks`] indexes them and frees what they left
/// unused, before the transaction ends. A filtered chunk never stores more
/// than its raw size, so `chunks x chunk bytes` always suffices.
/// Outside a transaction, for a dataset that is not chunked, or for 0
/// bytes: `ARCA_ERR_INVALID`.
///
/// # Safety
/// `ds` is NULL or a live dataset handle; `addr` NULL or writable.
///
/// ```c
/// uint64_t at;
/// arca_file_begin_transaction(f);
/// arca_dataset_reserve_chunks(ds, 4 * 16 * 8 * sizeof(float), &at);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_dataset_reserve_chunks(
    ds: *mut DatasetHandle,
    nbytes: u64,
    addr: *mut u64,
) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let h = unsafe { handle(ds, "dataset")? };
        if addr.is_null() {
            return Err(Fail::null("addr"));
        }
        let at = h.ds.reserve_chunks(nbytes)?;
        // SAFETY: checked non-NULL above.
        unsafe { put(addr, at, "addr") }
    })
}

/// Index the `n` chunks written into the space reserved for `ds`
/// ([`arca_dataset_reserve_chunks`]), replacing any stored before, and
/// free the reserved bytes no chunk holds. Every region reserved for `ds`
/// is sealed at once, so call it once, with every chunk. Each `offset`
/// has one entry per dimension. A chunk outside the regions, overlapping
/// another, named twice or off the chunk grid is `ARCA_ERR_INVALID`, and
/// nothing is indexed; nothing reserved is `ARCA_ERR_INVALID`.
///
/// # Safety
/// `ds` is NULL or a live dataset handle; `chunks` NULL (only for `n` 0)
/// or `n` entries whose offsets hold the dataset's rank entries.
///
/// ```c
/// uint64_t off[2] = {0, 0};
/// arca_written_chunk_t w = {off, at, len, mask, crc};
/// arca_dataset_seal_chunks(ds, &w, 1);
/// arca_file_end_transaction(f, 1);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_dataset_seal_chunks(
    ds: *mut DatasetHandle,
    chunks: *const WrittenChunkC,
    n: usize,
) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let h = unsafe { handle(ds, "dataset")? };
        let rank = h.ds.shape()?.len();
        // SAFETY: per the contract.
        let cs = unsafe { slice(chunks, n, "chunks")? };
        let w = cs
            .iter()
            .map(|c| {
                if c.offset.is_null() && rank > 0 {
                    return Err(Fail::null("chunk offset"));
                }
                Ok(WrittenChunk {
                    // SAFETY: `rank` entries, per the contract.
                    offset: unsafe { slice(c.offset, rank, "offset")? }.to_vec(),
                    addr: c.addr,
                    len: c.len,
                    mask: c.mask,
                    crc: c.crc,
                })
            })
            .collect::<R<Vec<_>>>()?;
        Ok(h.ds.seal_chunks(&w)?)
    })
}

/// Cut `slab`, the elements of the box `start`..`start + count` of the
/// chunked dataset `ds` (native byte order, row-major, packed, exactly
/// `slab_size` bytes), into the chunks it covers whole, each filtered
/// through the dataset's pipeline, and name the parts of the chunks it
/// covers only in part. A chunk running past the extent is whole when the
/// slab covers its part inside (the rest is the fill value). Nothing is
/// written to the file: write the bytes into reserved space, or read them
/// back with the accessors. A box outside the extent, a wrong
/// `slab_size` or a contiguous dataset is `ARCA_ERR_INVALID`.
///
/// Ownership: `*out` is a new slab to free with [`arca_slab_free`];
/// NULL on failure.
///
/// # Safety
/// `ds` is NULL or a live dataset handle; `start` and `count` rank-sized;
/// `slab` NULL or `slab_size` readable bytes; `out` NULL or writable.
///
/// ```c
/// uint64_t start[2] = {16, 0}, count[2] = {32, 24};
/// arca_slab_t *b;
/// arca_encode_slab(ds, start, count, rows, sizeof rows, &b);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_encode_slab(
    ds: *mut DatasetHandle,
    start: *const u64,
    count: *const u64,
    slab: *const c_void,
    slab_size: usize,
    out: *mut *mut SlabHandle,
) -> i32 {
    guard(|| {
        // SAFETY: out-pointer supplied by the caller.
        unsafe { clear(out) };
        // SAFETY: per the contract.
        let h = unsafe { handle(ds, "dataset")? };
        if out.is_null() {
            return Err(Fail::null("out"));
        }
        let t = h.ds.dtype()?;
        check_fixed(&t)?;
        let chunk =
            h.ds.chunks()?
                .ok_or_else(|| Fail::invalid("the dataset is not chunked"))?;
        let dims = h.ds.shape()?;
        let filters = h.ds.filters()?;
        let fill = h.ds.fill_value()?;
        // SAFETY: per the contract.
        let (s, c, bytes) = unsafe { slab_box(dims.len(), t.size(), start, count)? };
        // SAFETY: per the contract.
        let data = unsafe { slab_bytes(slab, slab_size, bytes)? };
        let b = encode(&t, &filters, &dims, &chunk, &s, &c, data, &fill)?;
        // SAFETY: checked non-NULL above.
        unsafe { give_handle(out, b, "out") }
    })
}

/// Cut a slab into chunks as [`encode_slab`] does, from elements in
/// native order (swapped to `t`'s order here).
#[allow(clippy::too_many_arguments)]
fn encode(
    t: &Datatype,
    filters: &[Filter],
    dims: &[u64],
    chunk: &[u64],
    start: &[u64],
    count: &[u64],
    data: &[u8],
    fill: &[u8],
) -> R<SlabHandle> {
    let data = as_stored(t, data);
    let fill = if fill.is_empty() {
        std::borrow::Cow::Borrowed(fill)
    } else {
        as_stored(t, fill)
    };
    let slab = encode_slab(filters, t.size(), dims, chunk, start, count, &data, &fill)?;
    Ok(SlabHandle {
        slab,
        rank: dims.len(),
    })
}

/// [`arca_encode_slab`] for a process that does not have the file open
/// (the ranks other than 0 of an MPI job): the dataset is described by
/// `desc` — element type or size, extents, chunk shape, filters and fill
/// value, as rank 0 reads them from the dataset. With `desc->type_str`
/// the slab and fill value are in native byte order; without it they
/// are taken as stored. Bad descriptions are `ARCA_ERR_INVALID`.
///
/// Ownership: as for [`arca_encode_slab`]; `desc` is only read.
///
/// # Safety
/// `desc` NULL or a valid description whose arrays hold `rank` (filters:
/// `nfilters`) entries; otherwise as for [`arca_encode_slab`].
///
/// ```c
/// uint64_t dims[2] = {100, 24}, chunks[2] = {16, 8};
/// arca_filter_t fl[2] = {{ARCA_FILTER_SHUFFLE, 0}, {ARCA_FILTER_ZSTD, 3}};
/// float fill = -1;
/// arca_slab_desc_t d = {"<f4", 4, 2, dims, chunks, fl, 2, &fill, sizeof fill};
/// arca_slab_t *b;
/// arca_encode_slab_desc(&d, start, count, rows, sizeof rows, &b);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_encode_slab_desc(
    desc: *const SlabDescC,
    start: *const u64,
    count: *const u64,
    slab: *const c_void,
    slab_size: usize,
    out: *mut *mut SlabHandle,
) -> i32 {
    guard(|| {
        // SAFETY: out-pointer supplied by the caller.
        unsafe { clear(out) };
        // SAFETY: per the contract.
        let d = unsafe { handle(desc, "desc")? };
        if out.is_null() {
            return Err(Fail::null("out"));
        }
        let t = if d.type_str.is_null() {
            if d.elem_size == 0 {
                return Err(Fail::invalid("elem_size is 0 and no type string is given"));
            }
            let len = u32::try_from(d.elem_size)
                .map_err(|_| Fail::invalid(format!("elem_size {} is too large", d.elem_size)))?;
            // Bytes taken as they are: nothing to swap.
            Datatype::Opaque {
                len,
                tag: String::new(),
            }
        } else {
            // SAFETY: per the contract, a NUL-terminated string.
            let t = Datatype::parse(unsafe { text(d.type_str, "type_str")? })?;
            check_fixed(&t)?;
            if d.elem_size != 0 && d.elem_size != t.size() {
                return Err(Fail::invalid(format!(
                    "elem_size {} for a type of {} bytes",
                    d.elem_size,
                    t.size()
                )));
            }
            t
        };
        let rank = rank_arg(d.rank)?;
        if rank == 0 {
            return Err(Fail::invalid("a scalar has no chunks"));
        }
        if d.dims.is_null() {
            return Err(Fail::null("dims"));
        }
        if d.chunks.is_null() {
            return Err(Fail::null("chunks"));
        }
        // SAFETY (three reads): `rank` and `nfilters` entries, per the contract.
        let dims = unsafe { slice(d.dims, rank, "dims")? };
        // SAFETY: as above.
        let chunk = unsafe { slice(d.chunks, rank, "chunks")? };
        // SAFETY: as above.
        let fs = unsafe { slice(d.filters, d.nfilters, "filters")? };
        let filters = fs.iter().map(filter_from).collect::<R<Vec<_>>>()?;
        // SAFETY: `fill_size` bytes, per the contract.
        let fill = unsafe { slice(d.fill_value.cast::<u8>(), d.fill_size, "fill_value")? };
        if !d.fill_value.is_null() && fill.len() != t.size() {
            return Err(Fail::invalid(format!(
                "fill value has {} bytes; one element has {}",
                fill.len(),
                t.size()
            )));
        }
        // SAFETY: per the contract.
        let (s, c, bytes) = unsafe { slab_box(rank, t.size(), start, count)? };
        // SAFETY: per the contract.
        let data = unsafe { slab_bytes(slab, slab_size, bytes)? };
        let b = encode(&t, &filters, dims, chunk, &s, &c, data, fill)?;
        // SAFETY: checked non-NULL above.
        unsafe { give_handle(out, b, "out") }
    })
}

/// The stored bytes of the slab's whole chunks, back to back in the
/// order of [`arca_slab_chunk`]: `*bytes` (NULL when there are none)
/// and `*len`. They belong to the slab: valid until [`arca_slab_free`].
///
/// # Safety
/// `b` is NULL or a live slab; `bytes` and `len` NULL or writable.
///
/// ```c
/// const void *p; size_t n;
/// arca_slab_bytes(b, &p, &n);
/// arca_write_out(fd, p, n, at);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_slab_bytes(
    b: *const SlabHandle,
    bytes: *mut *const c_void,
    len: *mut usize,
) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let h = unsafe { handle(b, "slab")? };
        if bytes.is_null() {
            return Err(Fail::null("bytes"));
        }
        let v = &h.slab.bytes;
        let p = if v.is_empty() {
            std::ptr::null()
        } else {
            v.as_ptr().cast::<c_void>()
        };
        // SAFETY: per the contract.
        unsafe { put_opt(len, v.len()) };
        // SAFETY: checked non-NULL above.
        unsafe { put(bytes, p, "bytes") }
    })
}

/// The number of whole chunks in the slab (`*n`).
///
/// # Safety
/// `b` is NULL or a live slab; `n` NULL or writable.
///
/// ```c
/// size_t n; arca_slab_nchunks(b, &n);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_slab_nchunks(b: *const SlabHandle, n: *mut usize) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let h = unsafe { handle(b, "slab")? };
        // SAFETY: per the contract.
        unsafe { put(n, h.slab.chunks.len(), "n") }
    })
}

/// Whole chunk `i` (in grid order; its bytes follow those of chunk
/// `i - 1` in [`arca_slab_bytes`]): its first element into `offset`
/// (rank entries), its stored length, filter mask and CRC32C. Each
/// out-pointer may be NULL. `i` past the end is `ARCA_ERR_INVALID`.
///
/// # Safety
/// `b` is NULL or a live slab; `offset` NULL or rank writable entries;
/// the others NULL or writable.
///
/// ```c
/// uint64_t off[2], len; uint32_t mask, crc;
/// arca_slab_chunk(b, 0, off, &len, &mask, &crc);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_slab_chunk(
    b: *const SlabHandle,
    i: usize,
    offset: *mut u64,
    len: *mut u64,
    mask: *mut u32,
    crc: *mut u32,
) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let h = unsafe { handle(b, "slab")? };
        let c = h.slab.chunks.get(i).ok_or_else(|| {
            Fail::invalid(format!("chunk {i} of a slab of {}", h.slab.chunks.len()))
        })?;
        if !offset.is_null() {
            // SAFETY: `rank` writable entries, per the contract.
            unsafe { slice_mut(offset, h.rank, "offset")? }.copy_from_slice(&c.offset);
        }
        // SAFETY (three writes): optional out-pointers, per the contract.
        unsafe { put_opt(len, c.len) };
        // SAFETY: as above.
        unsafe { put_opt(mask, c.mask) };
        // SAFETY: as above.
        unsafe { put_opt(crc, c.crc) };
        Ok(())
    })
}

/// The number of parts of chunks the slab covers only in part (`*n`):
/// whoever holds the file writes them (`arca_dataset_write`), merging
/// them with what other slabs put in the same chunks.
///
/// # Safety
/// `b` is NULL or a live slab; `n` NULL or writable.
///
/// ```c
/// size_t n; arca_slab_npartial(b, &n);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_slab_npartial(b: *const SlabHandle, n: *mut usize) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let h = unsafe { handle(b, "slab")? };
        // SAFETY: per the contract.
        unsafe { put(n, h.slab.partial.len(), "n") }
    })
}

/// Part `i` of a chunk the slab covers only in part, as a box in the
/// dataset's coordinates: `start` and `count` (rank entries each; either
/// may be NULL). `i` past the end is `ARCA_ERR_INVALID`.
///
/// # Safety
/// `b` is NULL or a live slab; `start` and `count` NULL or rank writable
/// entries.
///
/// ```c
/// uint64_t s[2], c[2];
/// arca_slab_partial(b, 0, s, c);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_slab_partial(
    b: *const SlabHandle,
    i: usize,
    start: *mut u64,
    count: *mut u64,
) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let h = unsafe { handle(b, "slab")? };
        let (s, c) = h.slab.partial.get(i).ok_or_else(|| {
            Fail::invalid(format!("part {i} of a slab of {}", h.slab.partial.len()))
        })?;
        if !start.is_null() {
            // SAFETY: `rank` writable entries, per the contract.
            unsafe { slice_mut(start, h.rank, "start")? }.copy_from_slice(s);
        }
        if !count.is_null() {
            // SAFETY: as above.
            unsafe { slice_mut(count, h.rank, "count")? }.copy_from_slice(c);
        }
        Ok(())
    })
}

/// Free a slab. NULL is a no-op.
///
/// Ownership: consumes `b`; pointers from [`arca_slab_bytes`] die with it.
///
/// # Safety
/// `b` is NULL or a live slab, freed once.
///
/// ```c
/// arca_slab_free(b);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_slab_free(b: *mut SlabHandle) {
    // SAFETY: per the contract.
    drop(unsafe { take_handle(b) });
}

/// Write `len` bytes from `buf` at byte `at` of the file open as `fd`
/// (all of them, retrying short writes) and start their writeback
/// without waiting for it, so that the commit's sync finds little left
/// to do. For chunk bytes written into reserved space by a process that
/// does not hold the file through arca. The descriptor stays the
/// caller's. A failed write is `ARCA_ERR_IO`; a negative `fd`
/// `ARCA_ERR_INVALID`.
///
/// # Safety
/// `fd` is an open descriptor or negative; `buf` NULL (only for `len` 0)
/// or `len` readable bytes.
///
/// ```c
/// int fd = open("run.arca", O_WRONLY);
/// arca_write_out(fd, p, n, at);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_write_out(fd: i32, buf: *const c_void, len: usize, at: u64) -> i32 {
    guard(|| {
        if fd < 0 {
            return Err(Fail::invalid(format!("descriptor {fd}")));
        }
        // SAFETY: per the contract.
        let bytes = unsafe { slice(buf.cast::<u8>(), len, "buf")? };
        write_fd(fd, bytes, at)
    })
}

#[cfg(unix)]
fn write_fd(fd: i32, bytes: &[u8], at: u64) -> R<()> {
    use std::os::fd::FromRawFd;
    // SAFETY: the caller's open descriptor, borrowed for this call and
    // never closed here (ManuallyDrop).
    let file = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
    Ok(arca_core::io::write_out(&file, bytes, at)?)
}

#[cfg(not(unix))]
fn write_fd(_fd: i32, _bytes: &[u8], _at: u64) -> R<()> {
    Err(Fail::unsupported("arca_write_out needs a Unix descriptor"))
}
