//! Datasets: element types, creation options, hyperslab I/O, resizing.

use std::ffi::{c_char, c_void};

use arca_core::{
    ByteOrder, Dataset, DatasetOptions, Datatype, Filter, Selection, StorageLayout, MAX_RANK,
};

use crate::error::{guard, Fail, R};
use crate::ffi::{
    clear, give_handle, handle, put, put_opt, put_str, slice, slice_mut, take_handle, text,
};
use crate::group::GroupHandle;

/// An open dataset (`arca_dataset_t` in C).
///
/// ```c
/// arca_dataset_t *ds;
/// arca_dataset_open(root, "frames", &ds);
/// arca_dataset_close(ds);
/// ```
pub struct DatasetHandle {
    pub(crate) ds: Dataset,
}

/// Element type code (`arca_dtype_t`): one byte, 0 or 1.
pub const ARCA_DTYPE_BOOL: i32 = 1;
/// `int8_t`.
pub const ARCA_DTYPE_INT8: i32 = 2;
/// `int16_t`.
pub const ARCA_DTYPE_INT16: i32 = 3;
/// `int32_t`.
pub const ARCA_DTYPE_INT32: i32 = 4;
/// `int64_t`.
pub const ARCA_DTYPE_INT64: i32 = 5;
/// `uint8_t`.
pub const ARCA_DTYPE_UINT8: i32 = 6;
/// `uint16_t`.
pub const ARCA_DTYPE_UINT16: i32 = 7;
/// `uint32_t`.
pub const ARCA_DTYPE_UINT32: i32 = 8;
/// `uint64_t`.
pub const ARCA_DTYPE_UINT64: i32 = 9;
/// `float`.
pub const ARCA_DTYPE_FLOAT32: i32 = 10;
/// `double`.
pub const ARCA_DTYPE_FLOAT64: i32 = 11;
/// Fixed-length byte string, zero-padded; the length is given separately.
pub const ARCA_DTYPE_STRING: i32 = 12;
/// Variable-length strings or sequences: reported, not readable here.
pub const ARCA_DTYPE_VLEN: i32 = 13;
/// IEEE half-precision float (2 bytes).
pub const ARCA_DTYPE_FLOAT16: i32 = 14;
/// Two `float`s, real part first (C's `float complex`).
pub const ARCA_DTYPE_COMPLEX64: i32 = 15;
/// Two `double`s, real part first (C's `double complex`).
pub const ARCA_DTYPE_COMPLEX128: i32 = 16;
/// Opaque bytes; the length is given separately (`str_len`).
pub const ARCA_DTYPE_OPAQUE: i32 = 17;
/// An integer with named values: created from a type string.
pub const ARCA_DTYPE_ENUM: i32 = 18;
/// A fixed-shape array per element: created from a type string.
pub const ARCA_DTYPE_ARRAY: i32 = 19;
/// A record of named members: created from a type string.
pub const ARCA_DTYPE_COMPOUND: i32 = 20;
/// Two half-precision floats.
pub const ARCA_DTYPE_COMPLEX32: i32 = 21;
/// An object reference: a `uint64_t` object id (0 = none).
pub const ARCA_DTYPE_REFERENCE: i32 = 22;
/// Extended precision in 16 bytes: x86-64's `long double` (x87, 80 bits).
pub const ARCA_DTYPE_LONGDOUBLE: i32 = 23;
/// Two extended-precision floats, real first (`long double complex`).
pub const ARCA_DTYPE_CLONGDOUBLE: i32 = 24;
/// An HDF5 bitfield of 1, 2, 4 or 8 bytes (the size in `str_len`), read
/// and written as an unsigned integer of that size.
pub const ARCA_DTYPE_BITFIELD: i32 = 25;
/// An HDF5 time of 4 or 8 bytes (the size in `str_len`), read and written
/// as an unsigned integer of that size.
pub const ARCA_DTYPE_TIME: i32 = 26;

/// Byte order of the machine.
pub const ARCA_ORDER_NATIVE: i32 = 0;
/// Least significant byte first.
pub const ARCA_ORDER_LITTLE: i32 = 1;
/// Most significant byte first.
pub const ARCA_ORDER_BIG: i32 = 2;

/// Shuffle filter (byte transposition); no level.
pub const ARCA_FILTER_SHUFFLE: i32 = 1;
/// zlib/deflate, level 0..9.
pub const ARCA_FILTER_GZIP: i32 = 2;
/// Zstandard, level -7..22.
pub const ARCA_FILTER_ZSTD: i32 = 3;
/// LZ4 block compression; no level.
pub const ARCA_FILTER_LZ4: i32 = 4;
/// A filter of an imported HDF5 file (level: HDF5's filter id); reported only.
pub const ARCA_FILTER_HDF5: i32 = 5;

/// A `maxdims` entry meaning "no limit".
pub const ARCA_UNLIMITED: u64 = u64::MAX;

/// Layout chosen by the library: compact when small, else contiguous, or
/// chunked when maxdims, chunks or filters need it.
pub const ARCA_LAYOUT_AUTO: i32 = 0;
/// Elements kept in the dataset's header (small fixed-shape datasets).
pub const ARCA_LAYOUT_COMPACT: i32 = 1;
/// One extent of the file.
pub const ARCA_LAYOUT_CONTIGUOUS: i32 = 2;
/// Chunks found through a B-tree.
pub const ARCA_LAYOUT_CHUNKED: i32 = 3;
/// Assembled from other datasets (a virtual dataset; read-only; made
/// through the Rust, Python or HDF5 import paths, not at creation here).
pub const ARCA_LAYOUT_VIRTUAL: i32 = 4;
/// Kept in segments of files outside this one (HDF5's external raw
/// storage; made through the Rust, Python or HDF5 import paths).
pub const ARCA_LAYOUT_EXTERNAL: i32 = 5;

/// One filter stage (`arca_filter_t`).
///
/// ```c
/// arca_filter_t fl[2] = {{ARCA_FILTER_SHUFFLE, 0}, {ARCA_FILTER_GZIP, 6}};
/// ```
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FilterC {
    /// `ARCA_FILTER_*`.
    pub id: i32,
    /// Compression level for gzip and zstd; ignored otherwise.
    pub level: i32,
}

/// Dataset creation options (`arca_dataset_opts_t`).
///
/// ```c
/// arca_dataset_opts_t o;
/// arca_dataset_opts_init(&o, ARCA_DTYPE_INT16, 1, dims);
/// o.order = ARCA_ORDER_BIG;
/// ```
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct DatasetOptsC {
    /// `ARCA_DTYPE_*` (not `ARCA_DTYPE_VLEN`).
    pub dtype: i32,
    /// `ARCA_ORDER_*`: the byte order on disk.
    pub order: i32,
    /// Bytes per element for `ARCA_DTYPE_STRING`; ignored otherwise.
    pub str_len: u32,
    /// Number of dimensions, 0 (scalar) to `ARCA_MAX_RANK`.
    pub rank: i32,
    /// `rank` extents.
    pub dims: *const u64,
    /// NULL (fixed size) or `rank` limits, `ARCA_UNLIMITED` for none.
    pub maxdims: *const u64,
    /// NULL (contiguous unless chunking is needed, then chosen
    /// automatically) or `rank` chunk extents.
    pub chunks: *const u64,
    /// NULL or `nfilters` stages, applied in order.
    pub filters: *const FilterC,
    /// Number of filter stages.
    pub nfilters: usize,
    /// NULL (zeros) or one element in native byte order, `fill_size` bytes.
    pub fill_value: *const c_void,
    /// Bytes at `fill_value`.
    pub fill_size: usize,
    /// `ARCA_LAYOUT_*`; `ARCA_LAYOUT_AUTO` lets the library choose.
    pub layout: i32,
    /// NULL, or a type string (`struct(12){"t"@0:<f8,"n"@8:<i4}`) that
    /// gives the element type instead of `dtype`, `order` and `str_len`.
    pub type_str: *const c_char,
    /// Nonzero: the dataset's attributes are listed in creation order.
    pub track_order: i32,
}

fn order_from(code: i32) -> R<ByteOrder> {
    match code {
        ARCA_ORDER_NATIVE => Ok(ByteOrder::NATIVE),
        ARCA_ORDER_LITTLE => Ok(ByteOrder::Little),
        ARCA_ORDER_BIG => Ok(ByteOrder::Big),
        o => Err(Fail::invalid(format!("unknown byte order code {o}"))),
    }
}

/// The core type for a C type code, byte order and string length.
pub(crate) fn datatype_from(code: i32, order: i32, str_len: u32) -> R<Datatype> {
    let order = order_from(order)?;
    let t = match code {
        ARCA_DTYPE_BOOL => Datatype::Bool,
        ARCA_DTYPE_INT8 => Datatype::Int { size: 1, order },
        ARCA_DTYPE_INT16 => Datatype::Int { size: 2, order },
        ARCA_DTYPE_INT32 => Datatype::Int { size: 4, order },
        ARCA_DTYPE_INT64 => Datatype::Int { size: 8, order },
        ARCA_DTYPE_UINT8 => Datatype::UInt { size: 1, order },
        ARCA_DTYPE_UINT16 => Datatype::UInt { size: 2, order },
        ARCA_DTYPE_UINT32 => Datatype::UInt { size: 4, order },
        ARCA_DTYPE_UINT64 => Datatype::UInt { size: 8, order },
        ARCA_DTYPE_FLOAT32 => Datatype::Float { size: 4, order },
        ARCA_DTYPE_FLOAT64 => Datatype::Float { size: 8, order },
        ARCA_DTYPE_STRING => Datatype::bytes(str_len),
        ARCA_DTYPE_FLOAT16 => Datatype::Float { size: 2, order },
        ARCA_DTYPE_COMPLEX32 => Datatype::Complex { size: 4, order },
        ARCA_DTYPE_COMPLEX64 => Datatype::Complex { size: 8, order },
        ARCA_DTYPE_COMPLEX128 => Datatype::Complex { size: 16, order },
        ARCA_DTYPE_LONGDOUBLE => Datatype::Float { size: 16, order },
        ARCA_DTYPE_CLONGDOUBLE => Datatype::Complex { size: 32, order },
        ARCA_DTYPE_REFERENCE => Datatype::Reference,
        ARCA_DTYPE_OPAQUE => Datatype::Opaque {
            len: str_len,
            tag: String::new(),
        },
        ARCA_DTYPE_BITFIELD | ARCA_DTYPE_TIME => {
            let size = u8::try_from(str_len)
                .map_err(|_| Fail::invalid(format!("a {str_len}-byte bitfield or time")))?;
            if code == ARCA_DTYPE_TIME {
                Datatype::Time { size, order }
            } else {
                Datatype::Bitfield { size, order }
            }
        }
        ARCA_DTYPE_ENUM | ARCA_DTYPE_ARRAY | ARCA_DTYPE_COMPOUND => {
            return Err(Fail::invalid(format!(
                "type code {code} needs its members: give a type string"
            )))
        }
        ARCA_DTYPE_VLEN => {
            return Err(Fail::unsupported(
                "variable-length types are not available through the C API",
            ))
        }
        c => return Err(Fail::invalid(format!("unknown dtype code {c}"))),
    };
    t.validate()?;
    Ok(t)
}

/// The C type code, byte order code and element size of a core type.
/// Types without a byte order (one byte, strings) report native.
pub(crate) fn datatype_to(t: &Datatype) -> (i32, i32, usize) {
    let code = match *t {
        Datatype::Bool => ARCA_DTYPE_BOOL,
        Datatype::Int { size: 1, .. } => ARCA_DTYPE_INT8,
        Datatype::Int { size: 2, .. } => ARCA_DTYPE_INT16,
        Datatype::Int { size: 4, .. } => ARCA_DTYPE_INT32,
        Datatype::Int { .. } => ARCA_DTYPE_INT64,
        Datatype::UInt { size: 1, .. } => ARCA_DTYPE_UINT8,
        Datatype::UInt { size: 2, .. } => ARCA_DTYPE_UINT16,
        Datatype::UInt { size: 4, .. } => ARCA_DTYPE_UINT32,
        Datatype::UInt { .. } => ARCA_DTYPE_UINT64,
        Datatype::Float { size: 2, .. } => ARCA_DTYPE_FLOAT16,
        Datatype::Float { size: 4, .. } => ARCA_DTYPE_FLOAT32,
        Datatype::Float { size: 16, .. } => ARCA_DTYPE_LONGDOUBLE,
        Datatype::Float { .. } => ARCA_DTYPE_FLOAT64,
        Datatype::Complex { size: 4, .. } => ARCA_DTYPE_COMPLEX32,
        Datatype::Complex { size: 8, .. } => ARCA_DTYPE_COMPLEX64,
        Datatype::Complex { size: 32, .. } => ARCA_DTYPE_CLONGDOUBLE,
        Datatype::Complex { .. } => ARCA_DTYPE_COMPLEX128,
        Datatype::FixedBytes { .. } => ARCA_DTYPE_STRING,
        Datatype::Opaque { .. } => ARCA_DTYPE_OPAQUE,
        Datatype::Enum(_) => ARCA_DTYPE_ENUM,
        Datatype::Array(_) => ARCA_DTYPE_ARRAY,
        Datatype::Compound(_) => ARCA_DTYPE_COMPOUND,
        Datatype::Reference => ARCA_DTYPE_REFERENCE,
        Datatype::Bitfield { .. } => ARCA_DTYPE_BITFIELD,
        Datatype::Time { .. } => ARCA_DTYPE_TIME,
        // A region reference is a variable-length element of its own kind:
        // its type string ("vlen:region") tells it apart.
        Datatype::VlenBytes
        | Datatype::VlenStr
        | Datatype::RegionRef
        | Datatype::Vlen { .. }
        | Datatype::VlenOf(_) => ARCA_DTYPE_VLEN,
    };
    let size = t.size();
    // Compounds and arrays have an order per member: see the type string.
    let ordered = size > 1
        && matches!(
            code,
            ARCA_DTYPE_INT8
                ..=ARCA_DTYPE_FLOAT64
                    | ARCA_DTYPE_FLOAT16
                    | ARCA_DTYPE_COMPLEX32
                    | ARCA_DTYPE_COMPLEX64
                    | ARCA_DTYPE_COMPLEX128
                    | ARCA_DTYPE_ENUM
                    | ARCA_DTYPE_BITFIELD
                    | ARCA_DTYPE_TIME
        );
    let order = match t.order() {
        _ if !ordered => ARCA_ORDER_NATIVE,
        ByteOrder::Little => ARCA_ORDER_LITTLE,
        ByteOrder::Big => ARCA_ORDER_BIG,
    };
    (code, order, size)
}

/// Reject types whose elements the C API cannot move as plain bytes.
pub(crate) fn check_fixed(t: &Datatype) -> R<()> {
    if t.has_vlen() {
        return Err(Fail::unsupported(format!(
            "{t} holds variable-length values: use arca_dataset_read_rows and \
             arca_dataset_write_rows"
        )));
    }
    Ok(())
}

pub(crate) fn filter_from(f: &FilterC) -> R<Filter> {
    Ok(match f.id {
        ARCA_FILTER_SHUFFLE => Filter::Shuffle,
        ARCA_FILTER_GZIP => Filter::Deflate(
            u32::try_from(f.level)
                .map_err(|_| Fail::invalid(format!("gzip level {} outside 0..=9", f.level)))?,
        ),
        ARCA_FILTER_ZSTD => Filter::Zstd(f.level),
        ARCA_FILTER_LZ4 => Filter::Lz4,
        ARCA_FILTER_HDF5 => {
            return Err(Fail::invalid(
                "HDF5 filters come with imported files (arca import); new datasets take \
                 ARCA_FILTER_SHUFFLE, _GZIP, _ZSTD or _LZ4",
            ))
        }
        id => return Err(Fail::invalid(format!("unknown filter id {id}"))),
    })
}

fn filter_to(f: &Filter) -> FilterC {
    let id = match f {
        Filter::Shuffle => ARCA_FILTER_SHUFFLE,
        Filter::Deflate(_) => ARCA_FILTER_GZIP,
        Filter::Zstd(_) => ARCA_FILTER_ZSTD,
        Filter::Lz4 => ARCA_FILTER_LZ4,
        Filter::Hdf5(h) => {
            return FilterC {
                id: ARCA_FILTER_HDF5,
                level: i32::from(h.id),
            }
        }
    };
    FilterC {
        id,
        level: f.level().unwrap_or(0),
    }
}

pub(crate) fn rank_arg(rank: i32) -> R<usize> {
    usize::try_from(rank)
        .ok()
        .filter(|&r| r <= MAX_RANK)
        .ok_or_else(|| Fail::invalid(format!("rank {rank} outside 0..={MAX_RANK}")))
}

/// Build core options from the C struct.
unsafe fn options_from(o: &DatasetOptsC) -> R<DatasetOptions> {
    let dtype = if o.type_str.is_null() {
        datatype_from(o.dtype, o.order, o.str_len)?
    } else {
        // SAFETY: per the contract, a NUL-terminated string.
        Datatype::parse(unsafe { text(o.type_str, "type_str")? })?
    };
    let rank = rank_arg(o.rank)?;
    // SAFETY (this and the next reads): the struct's pointers are NULL or
    // hold `rank` / `nfilters` / `fill_size` elements, per the contract.
    let dims = unsafe { slice(o.dims, rank, "dims")? };
    let mut opts = DatasetOptions::new(dtype.clone(), dims).track_order(o.track_order != 0);
    if !o.maxdims.is_null() {
        // SAFETY: as above.
        let m = unsafe { slice(o.maxdims, rank, "maxdims")? };
        let m: Vec<Option<u64>> = m
            .iter()
            .map(|&x| (x != ARCA_UNLIMITED).then_some(x))
            .collect();
        opts = opts.maxshape(&m);
    }
    if !o.chunks.is_null() {
        // SAFETY: as above.
        opts = opts.chunks(unsafe { slice(o.chunks, rank, "chunks")? });
    }
    // SAFETY: as above.
    let filters = unsafe { slice(o.filters, o.nfilters, "filters")? };
    if !filters.is_empty() {
        let fs = filters.iter().map(filter_from).collect::<R<Vec<_>>>()?;
        opts = opts.filters(&fs);
    }
    if !o.fill_value.is_null() {
        // SAFETY: as above.
        let fill = unsafe { slice(o.fill_value.cast::<u8>(), o.fill_size, "fill_value")? };
        if fill.len() != dtype.size() {
            return Err(Fail::invalid(format!(
                "fill value has {} bytes; one element of this type has {}",
                fill.len(),
                dtype.size()
            )));
        }
        opts = opts.fill_value(fill);
    }
    let layout = match o.layout {
        ARCA_LAYOUT_AUTO => None,
        ARCA_LAYOUT_COMPACT => Some(StorageLayout::Compact),
        ARCA_LAYOUT_CONTIGUOUS => Some(StorageLayout::Contiguous),
        ARCA_LAYOUT_CHUNKED => Some(StorageLayout::Chunked),
        l => return Err(Fail::invalid(format!("unknown layout code {l}"))),
    };
    if let Some(l) = layout {
        opts = opts.layout(l);
    }
    Ok(opts)
}

/// Fill `o` with defaults for a contiguous dataset of `dtype` in native
/// byte order: no maxdims, chunks, filters or fill value. `dims` is
/// borrowed, not copied: it must outlive the create call.
///
/// # Safety
/// `o` is NULL or writable.
///
/// ```c
/// uint64_t dims[2] = {100, 200};
/// arca_dataset_opts_t o;
/// arca_dataset_opts_init(&o, ARCA_DTYPE_FLOAT64, 2, dims);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_dataset_opts_init(
    o: *mut DatasetOptsC,
    dtype: i32,
    rank: i32,
    dims: *const u64,
) -> i32 {
    guard(|| {
        let v = DatasetOptsC {
            dtype,
            order: ARCA_ORDER_NATIVE,
            str_len: 0,
            rank,
            dims,
            maxdims: std::ptr::null(),
            chunks: std::ptr::null(),
            filters: std::ptr::null(),
            nfilters: 0,
            fill_value: std::ptr::null(),
            fill_size: 0,
            layout: ARCA_LAYOUT_AUTO,
            type_str: std::ptr::null(),
            track_order: 0,
        };
        // SAFETY: per the contract.
        unsafe { put(o, v, "opts") }
    })
}

/// The size in bytes of one element of a type code (`str_len` for
/// `ARCA_DTYPE_STRING`).
///
/// # Safety
/// `size` is NULL or writable.
///
/// ```c
/// size_t s; arca_dtype_size(ARCA_DTYPE_INT32, 0, &s); /* 4 */
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_dtype_size(dtype: i32, str_len: u32, size: *mut usize) -> i32 {
    guard(|| {
        let t = datatype_from(dtype, ARCA_ORDER_NATIVE, str_len)?;
        // SAFETY: per the contract.
        unsafe { put(size, t.size(), "size") }
    })
}

/// The size in bytes of one element of a type string, which is checked.
///
/// # Safety
/// `type_str` NUL-terminated; `size` NULL or writable.
///
/// ```c
/// size_t s; arca_type_size("struct(12){\"t\"@0:<f8,\"n\"@8:<i4}", &s); /* 12 */
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_type_size(type_str: *const c_char, size: *mut usize) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let t = Datatype::parse(unsafe { text(type_str, "type_str")? })?;
        // SAFETY: per the contract.
        unsafe { put(size, t.size(), "size") }
    })
}

/// Create a dataset at `path` (relative to `loc` or absolute; missing
/// parent groups are created).
///
/// Ownership: `opts` and the arrays it points to are only read during the
/// call. If `out` is not NULL, `*out` is a new handle to release with
/// `arca_dataset_close`.
///
/// # Safety
/// `loc` is NULL or a live group handle; `path` NUL-terminated; `opts` NULL
/// or a valid options struct; `out` NULL or writable.
///
/// ```c
/// uint64_t dims[2] = {0, 1024}, maxd[2] = {ARCA_UNLIMITED, 1024}, chunk[2] = {64, 1024};
/// arca_filter_t fl[2] = {{ARCA_FILTER_SHUFFLE, 0}, {ARCA_FILTER_ZSTD, 3}};
/// arca_dataset_opts_t o;
/// arca_dataset_opts_init(&o, ARCA_DTYPE_FLOAT32, 2, dims);
/// o.maxdims = maxd; o.chunks = chunk; o.filters = fl; o.nfilters = 2;
/// arca_dataset_t *ds;
/// arca_dataset_create(root, "frames", &o, &ds);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_dataset_create(
    loc: *mut GroupHandle,
    path: *const c_char,
    opts: *const DatasetOptsC,
    out: *mut *mut DatasetHandle,
) -> i32 {
    guard(|| {
        // SAFETY: out-pointer supplied by the caller.
        unsafe { clear(out) };
        // SAFETY: per the contract.
        let g = unsafe { handle(loc, "group")? };
        // SAFETY: per the contract.
        let p = unsafe { text(path, "path")? };
        // SAFETY: per the contract.
        let o = unsafe { handle(opts, "opts")? };
        // SAFETY: per the contract.
        let o = unsafe { options_from(o)? };
        let ds = g.group.create_dataset(p, &o)?;
        if !out.is_null() {
            // SAFETY: non-NULL and writable, per the contract.
            unsafe { give_handle(out, DatasetHandle { ds }, "out")? };
        }
        Ok(())
    })
}

/// Open the dataset at `path`. A group there is `ARCA_ERR_NOT_FOUND`.
///
/// Ownership: `*out` is a new handle to release with `arca_dataset_close`.
///
/// # Safety
/// `loc` is NULL or a live group handle; `path` NUL-terminated; `out` NULL
/// or writable.
///
/// ```c
/// arca_dataset_t *ds;
/// arca_dataset_open(root, "run1/frame", &ds);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_dataset_open(
    loc: *mut GroupHandle,
    path: *const c_char,
    out: *mut *mut DatasetHandle,
) -> i32 {
    guard(|| {
        // SAFETY: out-pointer supplied by the caller.
        unsafe { clear(out) };
        // SAFETY: per the contract.
        let g = unsafe { handle(loc, "group")? };
        // SAFETY: per the contract.
        let p = unsafe { text(path, "path")? };
        if out.is_null() {
            return Err(Fail::null("out"));
        }
        let ds = g.group.dataset(p)?;
        // SAFETY: checked non-NULL above.
        unsafe { give_handle(out, DatasetHandle { ds }, "out") }
    })
}

/// Free a dataset handle. NULL is a no-op returning `ARCA_OK`.
///
/// Ownership: consumes `ds`; written data stays pending until the file is
/// flushed or closed.
///
/// # Safety
/// `ds` is NULL or a live dataset handle, closed only once.
///
/// ```c
/// arca_dataset_close(ds);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_dataset_close(ds: *mut DatasetHandle) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        drop(unsafe { take_handle(ds) });
        Ok(())
    })
}

/// How the elements are stored: `ARCA_LAYOUT_COMPACT`, `_CONTIGUOUS`,
/// `_CHUNKED` or `_VIRTUAL`.
///
/// # Safety
/// `ds` is NULL or a live dataset handle; `layout` NULL or writable.
///
/// ```c
/// int32_t layout; arca_dataset_layout(ds, &layout);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_dataset_layout(ds: *mut DatasetHandle, layout: *mut i32) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let h = unsafe { handle(ds, "dataset")? };
        let l = match h.ds.layout()? {
            StorageLayout::Compact => ARCA_LAYOUT_COMPACT,
            StorageLayout::Contiguous => ARCA_LAYOUT_CONTIGUOUS,
            StorageLayout::Chunked => ARCA_LAYOUT_CHUNKED,
            StorageLayout::Virtual => ARCA_LAYOUT_VIRTUAL,
            StorageLayout::External => ARCA_LAYOUT_EXTERNAL,
        };
        // SAFETY: per the contract.
        unsafe { put(layout, l, "layout") }
    })
}

/// The number of dimensions (0 for a scalar).
///
/// # Safety
/// `ds` is NULL or a live dataset handle; `rank` NULL or writable.
///
/// ```c
/// int32_t rank; arca_dataset_rank(ds, &rank);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_dataset_rank(ds: *mut DatasetHandle, rank: *mut i32) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let h = unsafe { handle(ds, "dataset")? };
        let r = h.ds.shape()?.len();
        // SAFETY: per the contract.
        unsafe { put(rank, r as i32, "rank") }
    })
}

/// The current extents into `dims` and, if `maxdims` is not NULL, the
/// limits (`ARCA_UNLIMITED` for none). Both arrays hold `cap` entries; a
/// `cap` below the rank is `ARCA_ERR_INVALID`. For a scalar both may be NULL.
///
/// # Safety
/// `ds` is NULL or a live dataset handle; `dims` NULL or `cap` writable
/// entries; `maxdims` likewise.
///
/// ```c
/// uint64_t dims[ARCA_MAX_RANK], maxd[ARCA_MAX_RANK];
/// arca_dataset_dims(ds, dims, maxd, ARCA_MAX_RANK);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_dataset_dims(
    ds: *mut DatasetHandle,
    dims: *mut u64,
    maxdims: *mut u64,
    cap: usize,
) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let h = unsafe { handle(ds, "dataset")? };
        let shape = h.ds.shape()?;
        if dims.is_null() && !shape.is_empty() {
            return Err(Fail::null("dims"));
        }
        if cap < shape.len() {
            return Err(Fail::invalid(format!(
                "arrays of {cap} entries; the rank is {}",
                shape.len()
            )));
        }
        // SAFETY: non-NULL with `cap >= rank` entries, per the contract.
        unsafe { slice_mut(dims, shape.len(), "dims")? }.copy_from_slice(&shape);
        if !maxdims.is_null() {
            let m: Vec<u64> =
                h.ds.maxshape()?
                    .iter()
                    .map(|x| x.unwrap_or(ARCA_UNLIMITED))
                    .collect();
            // SAFETY: as for `dims`.
            unsafe { slice_mut(maxdims, m.len(), "maxdims")? }.copy_from_slice(&m);
        }
        Ok(())
    })
}

/// The element type: `*dtype` an `ARCA_DTYPE_*` code, `*order` the byte
/// order on disk (`ARCA_ORDER_LITTLE`/`_BIG`, or `ARCA_ORDER_NATIVE` for
/// types without one), `*elem_size` bytes per element (the string length
/// for `ARCA_DTYPE_STRING`). Any of the three may be NULL.
///
/// # Safety
/// `ds` is NULL or a live dataset handle; the others NULL or writable.
///
/// ```c
/// int32_t t, order; size_t size;
/// arca_dataset_dtype(ds, &t, &order, &size);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_dataset_dtype(
    ds: *mut DatasetHandle,
    dtype: *mut i32,
    order: *mut i32,
    elem_size: *mut usize,
) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let h = unsafe { handle(ds, "dataset")? };
        let (c, o, s) = datatype_to(&h.ds.dtype()?);
        // SAFETY (three writes): optional out-pointers, per the contract.
        unsafe { put_opt(dtype, c) };
        // SAFETY: as above.
        unsafe { put_opt(order, o) };
        // SAFETY: as above.
        unsafe { put_opt(elem_size, s) };
        Ok(())
    })
}

/// The element type as a numpy-style string (`"<f8"`, `"|S16"`,
/// `"vlen:str"`, ...) through a caller buffer (required-length semantics:
/// `*needed` gets the length plus the NUL; `buf` NULL only asks).
///
/// # Safety
/// `ds` is NULL or a live dataset handle; `buf` NULL or `cap` writable
/// bytes; `needed` NULL or writable.
///
/// ```c
/// char t[32]; arca_dataset_dtype_str(ds, t, sizeof t, NULL);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_dataset_dtype_str(
    ds: *mut DatasetHandle,
    buf: *mut c_char,
    cap: usize,
    needed: *mut usize,
) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let h = unsafe { handle(ds, "dataset")? };
        let s = h.ds.dtype()?.to_numpy_str();
        // SAFETY: per the contract.
        unsafe { put_str(&s, buf, cap, needed) }
    })
}

/// The chunk shape into `chunks` (`cap` entries, at least the rank) and
/// `*chunked` 1; for contiguous storage `*chunked` is 0 and `chunks` is
/// untouched. `chunks` may be NULL to ask only whether it is chunked.
///
/// # Safety
/// `ds` is NULL or a live dataset handle; `chunks` NULL or `cap` writable
/// entries; `chunked` NULL or writable.
///
/// ```c
/// uint64_t c[ARCA_MAX_RANK]; int32_t chunked;
/// arca_dataset_chunks(ds, c, ARCA_MAX_RANK, &chunked);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_dataset_chunks(
    ds: *mut DatasetHandle,
    chunks: *mut u64,
    cap: usize,
    chunked: *mut i32,
) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let h = unsafe { handle(ds, "dataset")? };
        let c = h.ds.chunks()?;
        // SAFETY: per the contract.
        unsafe { put_opt(chunked, i32::from(c.is_some())) };
        if let (Some(c), false) = (c, chunks.is_null()) {
            if cap < c.len() {
                return Err(Fail::invalid(format!(
                    "array of {cap} entries; the rank is {}",
                    c.len()
                )));
            }
            // SAFETY: non-NULL with `cap >= rank` entries.
            unsafe { slice_mut(chunks, c.len(), "chunks")? }.copy_from_slice(&c);
        }
        Ok(())
    })
}

/// The filter pipeline: up to `cap` stages into `out`, and the number of
/// stages into `*n` (may be NULL). `out` NULL only asks for the number; a
/// `cap` below it is `ARCA_ERR_INVALID`.
///
/// # Safety
/// `ds` is NULL or a live dataset handle; `out` NULL or `cap` writable
/// entries; `n` NULL or writable.
///
/// ```c
/// arca_filter_t fl[8]; size_t n;
/// arca_dataset_filters(ds, fl, 8, &n);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_dataset_filters(
    ds: *mut DatasetHandle,
    out: *mut FilterC,
    cap: usize,
    n: *mut usize,
) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let h = unsafe { handle(ds, "dataset")? };
        let fs: Vec<FilterC> = h.ds.filters()?.iter().map(filter_to).collect();
        // SAFETY: per the contract.
        unsafe { put_opt(n, fs.len()) };
        if out.is_null() {
            return Ok(());
        }
        if cap < fs.len() {
            return Err(Fail::invalid(format!(
                "array of {cap} entries; the pipeline has {}",
                fs.len()
            )));
        }
        // SAFETY: non-NULL with `cap >= len` entries.
        unsafe { slice_mut(out, fs.len(), "filters")? }.copy_from_slice(&fs);
        Ok(())
    })
}

/// The fill value, one element in native byte order, into `buf`
/// (`buf_size` at least the element size).
///
/// # Safety
/// `ds` is NULL or a live dataset handle; `buf` NULL or `buf_size`
/// writable bytes.
///
/// ```c
/// double fill; arca_dataset_fill_value(ds, &fill, sizeof fill);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_dataset_fill_value(
    ds: *mut DatasetHandle,
    buf: *mut c_void,
    buf_size: usize,
) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let h = unsafe { handle(ds, "dataset")? };
        if buf.is_null() {
            return Err(Fail::null("buf"));
        }
        check_fixed(&h.ds.dtype()?)?;
        let f = h.ds.fill_value()?;
        if buf_size < f.len() {
            return Err(Fail::invalid(format!(
                "buffer of {buf_size} bytes; one element has {}",
                f.len()
            )));
        }
        // SAFETY: non-NULL with `buf_size >= len` writable bytes.
        unsafe { slice_mut(buf.cast::<u8>(), f.len(), "buf")? }.copy_from_slice(&f);
        Ok(())
    })
}

/// Bytes of file space holding the dataset's elements (after compression).
///
/// # Safety
/// `ds` is NULL or a live dataset handle; `bytes` NULL or writable.
///
/// ```c
/// uint64_t b; arca_dataset_storage_size(ds, &b);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_dataset_storage_size(ds: *mut DatasetHandle, bytes: *mut u64) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let h = unsafe { handle(ds, "dataset")? };
        let b = h.ds.storage_size()?;
        // SAFETY: per the contract.
        unsafe { put(bytes, b, "bytes") }
    })
}

/// A caller's buffer of `buf_size` bytes must hold the selection's `bytes`
/// and may be NULL only when they are none.
fn check_buffer(null: bool, buf_size: usize, bytes: usize) -> R<()> {
    if buf_size < bytes {
        return Err(Fail::invalid(format!(
            "buffer of {buf_size} bytes; the selection needs {bytes}"
        )));
    }
    if null && bytes > 0 {
        return Err(Fail::null("buf"));
    }
    Ok(())
}

/// Build the selection for a read or write and return its size in bytes.
unsafe fn selection(
    ds: &Dataset,
    start: *const u64,
    count: *const u64,
    step: *const u64,
) -> R<(Selection, usize)> {
    let t = ds.dtype()?;
    check_fixed(&t)?;
    // SAFETY: per the caller's contract.
    unsafe { selection_of(ds, &t, start, count, step) }
}

/// [`selection`] for any type: the selection and the bytes of its elements.
unsafe fn selection_of(
    ds: &Dataset,
    t: &Datatype,
    start: *const u64,
    count: *const u64,
    step: *const u64,
) -> R<(Selection, usize)> {
    let dims = ds.shape()?;
    let rank = dims.len();
    // SAFETY (three reads): each array is NULL or holds `rank` entries.
    let start = if start.is_null() {
        vec![0; rank]
    } else {
        unsafe { slice(start, rank, "start")? }.to_vec()
    };
    let step = if step.is_null() {
        vec![1; rank]
    } else {
        // SAFETY: as above.
        unsafe { slice(step, rank, "step")? }.to_vec()
    };
    if let Some(d) = step.iter().position(|&s| s == 0) {
        return Err(Fail::invalid(format!("step is 0 in dimension {d}")));
    }
    let count = if count.is_null() {
        // To the end of each dimension.
        (0..rank)
            .map(|d| {
                dims[d]
                    .checked_sub(start[d])
                    .map(|n| n.div_ceil(step[d]))
                    .ok_or_else(|| {
                        Fail::invalid(format!(
                            "start {} beyond extent {} in dimension {d}",
                            start[d], dims[d]
                        ))
                    })
            })
            .collect::<R<Vec<u64>>>()?
    } else {
        // SAFETY: as above.
        unsafe { slice(count, rank, "count")? }.to_vec()
    };
    let bytes = count
        .iter()
        .try_fold(t.size() as u64, |a, &c| a.checked_mul(c))
        .and_then(|b| usize::try_from(b).ok())
        .filter(|&b| b <= isize::MAX as usize)
        .ok_or_else(|| Fail::invalid("selection is too large for memory"))?;
    let sel = Selection::new(start, count, step)?;
    Ok((sel, bytes))
}

/// Read a hyperslab into `buf` in native byte order, row-major, packed.
/// `start`, `count` and `step` each hold one entry per dimension; NULL
/// `start` means all zeros, NULL `step` all ones, NULL `count` "to the end".
/// `buf_size` must be at least `product(count) * element size`. A
/// selection outside the extent is `ARCA_ERR_INVALID`; variable-length
/// datasets are `ARCA_ERR_UNSUPPORTED`.
///
/// Ownership: `buf` is the caller's; nothing is kept.
///
/// # Safety
/// `ds` is NULL or a live dataset handle; the arrays NULL or rank-sized;
/// `buf` NULL or `buf_size` writable bytes.
///
/// ```c
/// uint64_t start[2] = {10, 0}, count[2] = {5, 100}, step[2] = {2, 1};
/// float out[500];
/// arca_dataset_read(ds, start, count, step, out, sizeof out);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_dataset_read(
    ds: *mut DatasetHandle,
    start: *const u64,
    count: *const u64,
    step: *const u64,
    buf: *mut c_void,
    buf_size: usize,
) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let h = unsafe { handle(ds, "dataset")? };
        // SAFETY: per the contract.
        let (sel, bytes) = unsafe { selection(&h.ds, start, count, step)? };
        check_buffer(buf.is_null(), buf_size, bytes)?;
        // SAFETY: at least `bytes` writable bytes, per the contract.
        let out = unsafe { slice_mut(buf.cast::<u8>(), bytes, "buf")? };
        Ok(h.ds.read_bytes(&sel, out)?)
    })
}

/// Write a hyperslab from `buf` (native byte order, row-major, packed);
/// arguments as for [`arca_dataset_read`]. A read-only file is
/// `ARCA_ERR_READ_ONLY`.
///
/// Ownership: `buf` is only read during the call.
///
/// # Safety
/// `ds` is NULL or a live dataset handle; the arrays NULL or rank-sized;
/// `buf` NULL or `buf_size` readable bytes.
///
/// ```c
/// uint64_t start[2] = {0, 0}, count[2] = {1, 100};
/// float row[100] = {0};
/// arca_dataset_write(ds, start, count, NULL, row, sizeof row);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_dataset_write(
    ds: *mut DatasetHandle,
    start: *const u64,
    count: *const u64,
    step: *const u64,
    buf: *const c_void,
    buf_size: usize,
) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let h = unsafe { handle(ds, "dataset")? };
        // SAFETY: per the contract.
        let (sel, bytes) = unsafe { selection(&h.ds, start, count, step)? };
        check_buffer(buf.is_null(), buf_size, bytes)?;
        // SAFETY: at least `bytes` readable bytes, per the contract.
        let data = unsafe { slice(buf.cast::<u8>(), bytes, "buf")? };
        Ok(h.ds.write_bytes(&sel, data)?)
    })
}

/// Write elements of a type that holds variable-length values — a
/// compound with string or sequence members (`struct(40){"t"@0:<f8,
/// "name"@8:vlen:str,...}`), or a variable-length type — from one buffer:
/// the selected elements, row-major, numbers in native order, each
/// variable-length member a record of two little-endian `uint64_t`, the
/// offset and length in bytes of its items in the values that follow the
/// elements. Arguments otherwise as for [`arca_dataset_write`]. A record
/// outside the values, items that are not whole or not UTF-8 for a string,
/// or two records over the same bytes are `ARCA_ERR_INVALID`.
///
/// Ownership: `rows` is only read during the call.
///
/// # Safety
/// `ds` is NULL or a live dataset handle; the arrays NULL or rank-sized;
/// `rows` NULL or `rows_size` readable bytes.
///
/// ```c
/// /* struct(24){"id"@0:<u8,"name"@8:vlen:str}: one element, then "Ada" */
/// unsigned char row[27] = {7};
/// uint64_t rec[2] = {0, 3};
/// memcpy(row + 8, rec, 16);
/// memcpy(row + 24, "Ada", 3);
/// uint64_t one = 1;
/// arca_dataset_write_rows(ds, NULL, &one, NULL, row, sizeof row);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_dataset_write_rows(
    ds: *mut DatasetHandle,
    start: *const u64,
    count: *const u64,
    step: *const u64,
    rows: *const c_void,
    rows_size: usize,
) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let h = unsafe { handle(ds, "dataset")? };
        let t = h.ds.dtype()?;
        // SAFETY: per the contract.
        let (sel, bytes) = unsafe { selection_of(&h.ds, &t, start, count, step)? };
        check_buffer(rows.is_null(), rows_size, bytes)?;
        // SAFETY: `rows_size` readable bytes, per the contract.
        let data = unsafe { slice(rows.cast::<u8>(), rows_size, "rows")? };
        Ok(h.ds.write_rows(&sel, data)?)
    })
}

/// Read elements of a type that holds variable-length values into a buffer
/// this library allocates, in the form [`arca_dataset_write_rows`] takes
/// (the values packed in element order after the elements). `*rows` and
/// `*rows_size` receive it; free it with `arca_buffer_free(*rows,
/// *rows_size)`. On failure `*rows` is NULL.
///
/// # Safety
/// `ds` is NULL or a live dataset handle; the arrays NULL or rank-sized;
/// `rows` and `rows_size` NULL or writable.
///
/// ```c
/// void *rows; size_t n;
/// if (arca_dataset_read_rows(ds, NULL, NULL, NULL, &rows, &n) == ARCA_OK)
///     arca_buffer_free(rows, n);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_dataset_read_rows(
    ds: *mut DatasetHandle,
    start: *const u64,
    count: *const u64,
    step: *const u64,
    rows: *mut *mut c_void,
    rows_size: *mut usize,
) -> i32 {
    guard(|| {
        // SAFETY: out-pointer supplied by the caller.
        unsafe { clear(rows) };
        // SAFETY: per the contract.
        let h = unsafe { handle(ds, "dataset")? };
        let t = h.ds.dtype()?;
        // SAFETY: per the contract.
        let (sel, _) = unsafe { selection_of(&h.ds, &t, start, count, step)? };
        if rows.is_null() || rows_size.is_null() {
            return Err(Fail::null("rows"));
        }
        let buf = h.ds.read_rows(&sel)?.into_boxed_slice();
        let n = buf.len();
        let p = Box::into_raw(buf).cast::<c_void>();
        // SAFETY: both checked non-NULL above.
        unsafe {
            put(rows_size, n, "rows_size")?;
            put(rows, p, "rows")
        }
    })
}

/// Free a buffer this library allocated (`arca_dataset_read_rows`), given
/// with its size. NULL is a no-op.
///
/// Ownership: consumes `p`.
///
/// # Safety
/// `p` is NULL or a buffer from this library of `size` bytes, freed once.
///
/// ```c
/// arca_buffer_free(rows, n);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_buffer_free(p: *mut c_void, size: usize) {
    if !p.is_null() {
        // SAFETY: `p` came from Box::into_raw of a boxed slice of `size`
        // bytes in this library and is freed once, per the contract.
        drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(p.cast::<u8>(), size)) });
    }
}

/// Change the extents to `dims` (one entry per dimension, within maxdims).
/// Growing shows the fill value; shrinking drops the cut elements. Only
/// chunked datasets can be resized.
///
/// # Safety
/// `ds` is NULL or a live dataset handle; `dims` NULL or rank-sized.
///
/// ```c
/// uint64_t nd[2] = {128, 1024};
/// arca_dataset_resize(ds, nd);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_dataset_resize(ds: *mut DatasetHandle, dims: *const u64) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let h = unsafe { handle(ds, "dataset")? };
        let rank = h.ds.shape()?.len();
        if dims.is_null() {
            return Err(Fail::null("dims"));
        }
        // SAFETY: non-NULL with `rank` entries, per the contract.
        let d = unsafe { slice(dims, rank, "dims")? };
        Ok(h.ds.resize(d)?)
    })
}

/// The absolute path `ds` was opened by, through a caller buffer
/// (required-length semantics, as for `arca_group_path`).
///
/// # Safety
/// `ds` is NULL or a live dataset handle; `buf` NULL or `cap` writable
/// bytes; `needed` NULL or writable.
///
/// ```c
/// char p[256]; arca_dataset_path(ds, p, sizeof p, NULL);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_dataset_path(
    ds: *mut DatasetHandle,
    buf: *mut c_char,
    cap: usize,
    needed: *mut usize,
) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let h = unsafe { handle(ds, "dataset")? };
        // SAFETY: per the contract.
        unsafe { put_str(h.ds.path(), buf, cap, needed) }
    })
}
