//! Attributes of groups and datasets.

use std::ffi::{c_char, c_void, CString};

use arca_core::{AttrValue, Attributes, Datatype, Error, MAX_RANK};

use crate::dataset::{check_fixed, datatype_from, datatype_to, DatasetHandle, ARCA_DTYPE_STRING};
use crate::error::{guard, Fail, R};
use crate::ffi::{clear, give_handle, handle, put, put_str, slice, slice_mut, take_handle, text};
use crate::group::GroupHandle;

/// The attributes of one group or dataset (`arca_attrs_t` in C).
///
/// ```c
/// arca_attrs_t *a;
/// arca_group_attrs(root, &a);
/// arca_attrs_close(a);
/// ```
pub struct AttrsHandle {
    pub(crate) attrs: Attributes,
}

/// What an attribute holds (`arca_attr_info_t`).
///
/// ```c
/// arca_attr_info_t i;
/// arca_attr_info(a, "gain", &i);
/// ```
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttrInfoC {
    /// `ARCA_DTYPE_*`.
    pub dtype: i32,
    /// `ARCA_ORDER_*` as stored (native for types without a byte order).
    pub order: i32,
    /// Number of dimensions; 0 for a scalar.
    pub rank: i32,
    /// Bytes per element (the string length for `ARCA_DTYPE_STRING`).
    pub elem_size: u32,
    /// The first `rank` entries are the shape.
    pub shape: [u64; MAX_RANK],
    /// Number of elements (1 for a scalar).
    pub nelems: u64,
    /// Bytes `arca_attr_read` writes: `nelems * elem_size`.
    pub nbytes: u64,
}

unsafe fn give(out: *mut *mut AttrsHandle, attrs: Attributes) -> R<()> {
    // Check first: a handle allocated for a NULL out-pointer would leak.
    if out.is_null() {
        return Err(Fail::null("out"));
    }
    // SAFETY: non-NULL, writable per the entry point's contract.
    unsafe { give_handle(out, AttrsHandle { attrs }, "out") }
}

/// The attributes of a group.
///
/// Ownership: `*out` is a new handle to release with `arca_attrs_close`.
///
/// # Safety
/// `g` is NULL or a live group handle; `out` NULL or writable.
///
/// ```c
/// arca_attrs_t *a;
/// arca_group_attrs(root, &a);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_group_attrs(g: *mut GroupHandle, out: *mut *mut AttrsHandle) -> i32 {
    guard(|| {
        // SAFETY: out-pointer supplied by the caller.
        unsafe { clear(out) };
        // SAFETY: per the contract.
        let g = unsafe { handle(g, "group")? };
        // SAFETY: per the contract.
        unsafe { give(out, g.group.attrs()) }
    })
}

/// The attributes of a dataset.
///
/// Ownership: `*out` is a new handle to release with `arca_attrs_close`.
///
/// # Safety
/// `ds` is NULL or a live dataset handle; `out` NULL or writable.
///
/// ```c
/// arca_attrs_t *a;
/// arca_dataset_attrs(ds, &a);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_dataset_attrs(
    ds: *mut DatasetHandle,
    out: *mut *mut AttrsHandle,
) -> i32 {
    guard(|| {
        // SAFETY: out-pointer supplied by the caller.
        unsafe { clear(out) };
        // SAFETY: per the contract.
        let h = unsafe { handle(ds, "dataset")? };
        // SAFETY: per the contract.
        unsafe { give(out, h.ds.attrs()) }
    })
}

/// Free an attributes handle. NULL is a no-op returning `ARCA_OK`.
///
/// Ownership: consumes `a`; the attributes in the file are unaffected.
///
/// # Safety
/// `a` is NULL or a live attributes handle, closed only once.
///
/// ```c
/// arca_attrs_close(a);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_attrs_close(a: *mut AttrsHandle) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        drop(unsafe { take_handle(a) });
        Ok(())
    })
}

unsafe fn attrs_name<'a>(a: *mut AttrsHandle, name: *const c_char) -> R<(&'a Attributes, &'a str)> {
    // SAFETY: forwarded from the entry point's contract.
    let h = unsafe { handle(a, "attrs")? };
    // SAFETY: as above.
    let n = unsafe { text(name, "name")? };
    Ok((&h.attrs, n))
}

/// Create or replace attribute `name` holding `rank` dimensions of `shape`
/// (rank 0 and `shape` NULL for a scalar) of type `dtype`, stored in byte
/// order `order`. `data` holds the elements in native byte order and
/// `data_size` must be exactly their size. For `ARCA_DTYPE_STRING` the
/// element length is `data_size / nelems`.
///
/// Ownership: `shape` and `data` are only read during the call.
///
/// # Safety
/// `a` is NULL or a live attributes handle; `name` NUL-terminated; `shape`
/// NULL or `rank` entries; `data` NULL or `data_size` readable bytes.
///
/// ```c
/// double gain = 1.5;
/// arca_attr_write(a, "gain", ARCA_DTYPE_FLOAT64, ARCA_ORDER_NATIVE, 0, NULL, &gain, sizeof gain);
/// int32_t roi[4] = {0, 0, 64, 64}; uint64_t n = 4;
/// arca_attr_write(a, "roi", ARCA_DTYPE_INT32, ARCA_ORDER_BIG, 1, &n, roi, sizeof roi);
/// ```
#[no_mangle]
#[allow(clippy::too_many_arguments)] // mirrors the C signature
pub unsafe extern "C" fn arca_attr_write(
    a: *mut AttrsHandle,
    name: *const c_char,
    dtype: i32,
    order: i32,
    rank: i32,
    shape: *const u64,
    data: *const c_void,
    data_size: usize,
) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let (attrs, name) = unsafe { attrs_name(a, name)? };
        // SAFETY: per the contract.
        let (shape, data) = unsafe { shape_and_data(rank, shape, data, data_size)? };
        let nelems = shape
            .iter()
            .try_fold(1u64, |a, &d| a.checked_mul(d))
            .ok_or_else(|| Fail::invalid("attribute shape overflows"))?;
        let str_len = if dtype == ARCA_DTYPE_STRING {
            let n = data_size as u64;
            if nelems == 0 || n == 0 || n % nelems != 0 {
                return Err(Fail::invalid(format!(
                    "{data_size} bytes do not divide into {nelems} strings"
                )));
            }
            u32::try_from(n / nelems).map_err(|_| Fail::invalid("string too long"))?
        } else {
            0
        };
        let t = datatype_from(dtype, order, str_len)?;
        let v = AttrValue::new(t, shape, data.to_vec())?;
        Ok(attrs.set(name, &v)?)
    })
}

/// The caller's shape (`rank` entries) and element bytes.
///
/// # Safety
/// `shape` NULL or `rank` readable entries; `data` NULL or `data_size`
/// readable bytes.
unsafe fn shape_and_data<'a>(
    rank: i32,
    shape: *const u64,
    data: *const c_void,
    data_size: usize,
) -> R<(&'a [u64], &'a [u8])> {
    let rank = usize::try_from(rank)
        .ok()
        .filter(|&r| r <= MAX_RANK)
        .ok_or_else(|| Fail::invalid(format!("rank {rank} outside 0..={MAX_RANK}")))?;
    // SAFETY: forwarded from the entry point's contract.
    let shape = unsafe { slice(shape, rank, "shape")? };
    // SAFETY: as above.
    let data = unsafe { slice(data.cast::<u8>(), data_size, "data")? };
    Ok((shape, data))
}

/// Create or replace attribute `name` of any fixed-size type, given as a
/// type string: `rank` dimensions of `shape` (rank 0 and `shape` NULL for
/// a scalar), `data` the elements in native byte order, exactly
/// `data_size` bytes.
///
/// # Safety
/// As [`arca_attr_write`]; `type_str` NUL-terminated.
///
/// ```c
/// struct { double t; int32_t n; int32_t pad; } row = {1.5, 7, 0};
/// arca_attr_write_typed(a, "row", "struct(16){\"t\"@0:<f8,\"n\"@8:<i4}", 0, NULL, &row, sizeof row);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_attr_write_typed(
    a: *mut AttrsHandle,
    name: *const c_char,
    type_str: *const c_char,
    rank: i32,
    shape: *const u64,
    data: *const c_void,
    data_size: usize,
) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let (attrs, name) = unsafe { attrs_name(a, name)? };
        // SAFETY: per the contract.
        let t = Datatype::parse(unsafe { text(type_str, "type_str")? })?;
        check_fixed(&t)?;
        // SAFETY: per the contract.
        let (shape, data) = unsafe { shape_and_data(rank, shape, data, data_size)? };
        let v = AttrValue::new(t, shape, data.to_vec())?;
        Ok(attrs.set(name, &v)?)
    })
}

/// The type string of attribute `name` through a caller buffer (required
/// length in `*needed`, as [`arca_dataset_dtype_str`]).
///
/// # Safety
/// `a` is NULL or a live attributes handle; `name` NUL-terminated; `buf`
/// NULL or `cap` writable bytes; `needed` NULL or writable.
///
/// ```c
/// char t[256]; arca_attr_dtype_str(a, "row", t, sizeof t, NULL);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_attr_dtype_str(
    a: *mut AttrsHandle,
    name: *const c_char,
    buf: *mut c_char,
    cap: usize,
    needed: *mut usize,
) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let (attrs, name) = unsafe { attrs_name(a, name)? };
        let s = attrs.get(name)?.dtype.to_numpy_str();
        // SAFETY: per the contract.
        unsafe { put_str(&s, buf, cap, needed) }
    })
}

/// Create or replace attribute `name` as a scalar string holding `value`
/// (UTF-8, without its NUL).
///
/// # Safety
/// `a` is NULL or a live attributes handle; `name` and `value`
/// NUL-terminated.
///
/// ```c
/// arca_attr_write_string(a, "units", "m/s");
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_attr_write_string(
    a: *mut AttrsHandle,
    name: *const c_char,
    value: *const c_char,
) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let (attrs, name) = unsafe { attrs_name(a, name)? };
        // SAFETY: per the contract.
        let value = unsafe { text(value, "value")? };
        Ok(attrs.set(name, &AttrValue::string(value))?)
    })
}

/// Type and shape of attribute `name`; missing is `ARCA_ERR_NOT_FOUND`.
///
/// # Safety
/// `a` is NULL or a live attributes handle; `name` NUL-terminated; `info`
/// NULL or writable.
///
/// ```c
/// arca_attr_info_t info;
/// arca_attr_info(a, "roi", &info);
/// int32_t *roi = malloc(info.nbytes);
/// arca_attr_read(a, "roi", roi, info.nbytes);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_attr_info(
    a: *mut AttrsHandle,
    name: *const c_char,
    info: *mut AttrInfoC,
) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let (attrs, name) = unsafe { attrs_name(a, name)? };
        if info.is_null() {
            return Err(Fail::null("info"));
        }
        let v = attrs.get(name)?;
        let (dtype, order, size) = datatype_to(&v.dtype);
        let mut shape = [0u64; MAX_RANK];
        let rank = v.shape.len().min(MAX_RANK);
        shape[..rank].copy_from_slice(&v.shape[..rank]);
        let i = AttrInfoC {
            dtype,
            order,
            rank: rank as i32,
            elem_size: size as u32,
            shape,
            nelems: v
                .shape
                .iter()
                .try_fold(1u64, |a, &d| a.checked_mul(d))
                .unwrap_or(u64::MAX),
            nbytes: v.data.len() as u64,
        };
        // SAFETY: checked non-NULL above.
        unsafe { put(info, i, "info") }
    })
}

/// Read attribute `name`'s elements in native byte order into `buf`;
/// `buf_size` must be at least its `nbytes` (see [`arca_attr_info`]).
///
/// # Safety
/// `a` is NULL or a live attributes handle; `name` NUL-terminated; `buf`
/// NULL or `buf_size` writable bytes.
///
/// ```c
/// double gain;
/// arca_attr_read(a, "gain", &gain, sizeof gain);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_attr_read(
    a: *mut AttrsHandle,
    name: *const c_char,
    buf: *mut c_void,
    buf_size: usize,
) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let (attrs, name) = unsafe { attrs_name(a, name)? };
        let v = attrs.get(name)?;
        check_fixed(&v.dtype)?;
        if buf_size < v.data.len() {
            return Err(Fail::invalid(format!(
                "buffer of {buf_size} bytes; attribute {name} has {}",
                v.data.len()
            )));
        }
        if buf.is_null() && !v.data.is_empty() {
            return Err(Fail::null("buf"));
        }
        // SAFETY: at least `len` writable bytes, per the contract.
        unsafe { slice_mut(buf.cast::<u8>(), v.data.len(), "buf")? }.copy_from_slice(&v.data);
        Ok(())
    })
}

fn string_of(attrs: &Attributes, name: &str) -> R<String> {
    Ok(attrs.get(name)?.as_string()?)
}

/// Read string attribute `name` into a caller buffer, NUL-terminated
/// (required-length semantics: `*needed`, may be NULL, gets the length
/// plus the NUL; `buf` NULL only asks; a short buffer is
/// `ARCA_ERR_INVALID`). A non-string attribute is `ARCA_ERR_INVALID`.
///
/// # Safety
/// `a` is NULL or a live attributes handle; `name` NUL-terminated; `buf`
/// NULL or `cap` writable bytes; `needed` NULL or writable.
///
/// ```c
/// char units[64];
/// arca_attr_read_string(a, "units", units, sizeof units, NULL);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_attr_read_string(
    a: *mut AttrsHandle,
    name: *const c_char,
    buf: *mut c_char,
    cap: usize,
    needed: *mut usize,
) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let (attrs, name) = unsafe { attrs_name(a, name)? };
        let s = string_of(attrs, name)?;
        // SAFETY: per the contract.
        unsafe { put_str(&s, buf, cap, needed) }
    })
}

/// Read string attribute `name` into a newly allocated NUL-terminated
/// string. A NUL inside the value is `ARCA_ERR_INVALID` (use
/// `arca_attr_read` for raw bytes).
///
/// Ownership: on success the caller owns `*out` and must free it with
/// `arca_string_free` (not `free`); on failure `*out` is NULL.
///
/// # Safety
/// `a` is NULL or a live attributes handle; `name` NUL-terminated; `out`
/// NULL or writable.
///
/// ```c
/// char *units;
/// if (arca_attr_read_string_alloc(a, "units", &units) == ARCA_OK) {
///     puts(units);
///     arca_string_free(units);
/// }
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_attr_read_string_alloc(
    a: *mut AttrsHandle,
    name: *const c_char,
    out: *mut *mut c_char,
) -> i32 {
    guard(|| {
        // SAFETY: out-pointer supplied by the caller.
        unsafe { clear(out) };
        // SAFETY: per the contract.
        let (attrs, name) = unsafe { attrs_name(a, name)? };
        if out.is_null() {
            return Err(Fail::null("out"));
        }
        let s = string_of(attrs, name)?;
        let c = CString::new(s)
            .map_err(|_| Fail::invalid(format!("attribute {name} holds a NUL byte")))?;
        // SAFETY: checked non-NULL above.
        unsafe { put(out, c.into_raw(), "out") }
    })
}

/// Free a string this library allocated (`arca_attr_read_string_alloc`).
/// NULL is a no-op.
///
/// Ownership: consumes `s`.
///
/// # Safety
/// `s` is NULL or a string from this library, freed only once.
///
/// ```c
/// arca_string_free(units);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_string_free(s: *mut c_char) {
    if !s.is_null() {
        // SAFETY: `s` came from CString::into_raw in this library and is
        // freed once, per the contract. Dropping cannot panic.
        drop(unsafe { CString::from_raw(s) });
    }
}

/// Delete attribute `name`; missing is `ARCA_ERR_NOT_FOUND`.
///
/// # Safety
/// `a` is NULL or a live attributes handle; `name` NUL-terminated.
///
/// ```c
/// arca_attr_delete(a, "obsolete");
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_attr_delete(a: *mut AttrsHandle, name: *const c_char) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let (attrs, name) = unsafe { attrs_name(a, name)? };
        Ok(attrs.delete(name)?)
    })
}

/// Rename attribute `from` to `to`; an existing `to` is `ARCA_ERR_EXISTS`.
///
/// # Safety
/// `a` is NULL or a live attributes handle; `from`, `to` NUL-terminated.
///
/// ```c
/// arca_attr_rename(a, "unit", "units");
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_attr_rename(
    a: *mut AttrsHandle,
    from: *const c_char,
    to: *const c_char,
) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let (attrs, from) = unsafe { attrs_name(a, from)? };
        // SAFETY: per the contract.
        let to = unsafe { text(to, "to")? };
        Ok(attrs.rename(from, to)?)
    })
}

/// Whether attribute `name` exists: `*exists` is 1 or 0.
///
/// # Safety
/// `a` is NULL or a live attributes handle; `name` NUL-terminated;
/// `exists` NULL or writable.
///
/// ```c
/// int32_t e; arca_attr_exists(a, "gain", &e);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_attr_exists(
    a: *mut AttrsHandle,
    name: *const c_char,
    exists: *mut i32,
) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let (attrs, name) = unsafe { attrs_name(a, name)? };
        if exists.is_null() {
            return Err(Fail::null("exists"));
        }
        let e = attrs.contains(name)?;
        // SAFETY: checked non-NULL above.
        unsafe { put(exists, i32::from(e), "exists") }
    })
}

/// The number of attributes.
///
/// # Safety
/// `a` is NULL or a live attributes handle; `n` NULL or writable.
///
/// ```c
/// uint64_t n; arca_attr_count(a, &n);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_attr_count(a: *mut AttrsHandle, n: *mut u64) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let h = unsafe { handle(a, "attrs")? };
        let c = h.attrs.len()?;
        // SAFETY: per the contract.
        unsafe { put(n, c, "n") }
    })
}

/// The name of the `index`-th attribute in name order, through a caller
/// buffer (required-length semantics, as for `arca_attr_read_string`). An
/// index past the end is `ARCA_ERR_NOT_FOUND`.
///
/// # Safety
/// `a` is NULL or a live attributes handle; `buf` NULL or `cap` writable
/// bytes; `needed` NULL or writable.
///
/// ```c
/// char name[256];
/// for (uint64_t i = 0; i < n; i++) {
///     arca_attr_name(a, i, name, sizeof name, NULL);
///     puts(name);
/// }
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_attr_name(
    a: *mut AttrsHandle,
    index: u64,
    buf: *mut c_char,
    cap: usize,
    needed: *mut usize,
) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let h = unsafe { handle(a, "attrs")? };
        let names = h.attrs.names()?;
        let n = usize::try_from(index)
            .ok()
            .and_then(|i| names.get(i))
            .ok_or_else(|| {
                Fail::from(Error::NotFound(format!(
                    "attribute {index} (there are {})",
                    names.len()
                )))
            })?;
        // SAFETY: per the contract.
        unsafe { put_str(n, buf, cap, needed) }
    })
}
