//! Pointer checks at the boundary. Each helper turns one kind of C
//! argument into a Rust value, with NULL and UTF-8 checked, so entry points
//! hold no raw pointer arithmetic of their own.

use std::ffi::{c_char, CStr};

use crate::error::{Fail, R};

/// Borrow a handle. `p` must be NULL or a live pointer this library returned.
pub(crate) unsafe fn handle<'a, T>(p: *const T, what: &str) -> R<&'a T> {
    // SAFETY: the caller passes NULL or a live handle from Box::into_raw.
    unsafe { p.as_ref() }.ok_or_else(|| Fail::null(what))
}

/// Turn a value into a handle the caller owns.
pub(crate) fn into_handle<T>(v: T) -> *mut T {
    Box::into_raw(Box::new(v))
}

/// Hand a new handle to the caller through a required out-pointer. The
/// NULL check comes before boxing so a refused call allocates nothing.
pub(crate) unsafe fn give_handle<T>(out: *mut *mut T, v: T, what: &str) -> R<()> {
    if out.is_null() {
        return Err(Fail::null(what));
    }
    // SAFETY: non-NULL, and the caller promises it is writable.
    unsafe { put(out, into_handle(v), what) }
}

/// Take back a handle for freeing; NULL gives `None`.
pub(crate) unsafe fn take_handle<T>(p: *mut T) -> Option<Box<T>> {
    if p.is_null() {
        return None;
    }
    // SAFETY: non-NULL handles come from `into_handle` and are closed once.
    Some(unsafe { Box::from_raw(p) })
}

/// Borrow a NUL-terminated UTF-8 string.
pub(crate) unsafe fn text<'a>(p: *const c_char, what: &str) -> R<&'a str> {
    if p.is_null() {
        return Err(Fail::null(what));
    }
    // SAFETY: non-NULL, and the caller promises a NUL-terminated string
    // that outlives this call.
    let c = unsafe { CStr::from_ptr(p) };
    c.to_str()
        .map_err(|_| Fail::invalid(format!("{what} is not valid UTF-8")))
}

/// Borrow `n` elements. NULL is allowed only for `n == 0`.
pub(crate) unsafe fn slice<'a, T>(p: *const T, n: usize, what: &str) -> R<&'a [T]> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(Fail::null(what));
    }
    check_len::<T>(n, what)?;
    // SAFETY: non-NULL, and the caller promises `n` readable elements.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// Borrow `n` writable elements. NULL is allowed only for `n == 0`.
pub(crate) unsafe fn slice_mut<'a, T>(p: *mut T, n: usize, what: &str) -> R<&'a mut [T]> {
    if n == 0 {
        return Ok(&mut []);
    }
    if p.is_null() {
        return Err(Fail::null(what));
    }
    check_len::<T>(n, what)?;
    // SAFETY: non-NULL, and the caller promises `n` writable elements
    // that nothing else accesses during the call.
    Ok(unsafe { std::slice::from_raw_parts_mut(p, n) })
}

/// Slices may not exceed isize::MAX bytes; a larger length is a caller bug.
fn check_len<T>(n: usize, what: &str) -> R<()> {
    let ok = n
        .checked_mul(std::mem::size_of::<T>().max(1))
        .is_some_and(|b| b <= isize::MAX as usize);
    if ok {
        Ok(())
    } else {
        Err(Fail::invalid(format!("{what}: length {n} is too large")))
    }
}

/// Store a result through a required out-pointer.
pub(crate) unsafe fn put<T>(p: *mut T, v: T, what: &str) -> R<()> {
    if p.is_null() {
        return Err(Fail::null(what));
    }
    // SAFETY: non-NULL, and the caller promises it points to writable T.
    unsafe { p.write(v) };
    Ok(())
}

/// Store a result through an optional out-pointer (NULL: not wanted).
pub(crate) unsafe fn put_opt<T>(p: *mut T, v: T) {
    if !p.is_null() {
        // SAFETY: non-NULL, and the caller promises it points to writable T.
        unsafe { p.write(v) };
    }
}

/// Clear an out-pointer on entry so a failed call leaves NULL behind.
pub(crate) unsafe fn clear<T>(p: *mut *mut T) {
    // SAFETY: as for `put_opt`.
    unsafe { put_opt(p, std::ptr::null_mut()) };
}

/// Copy `s` into a caller buffer with required-length semantics: `needed`
/// (optional) gets `strlen(s) + 1`; a NULL `buf` only asks for the length;
/// a buffer shorter than that is an error and is left untouched.
pub(crate) unsafe fn put_str(s: &str, buf: *mut c_char, cap: usize, needed: *mut usize) -> R<()> {
    let n = s.len() + 1;
    // SAFETY: optional out-pointer, as for `put_opt`.
    unsafe { put_opt(needed, n) };
    if buf.is_null() {
        return Ok(());
    }
    if cap < n {
        return Err(Fail::invalid(format!(
            "buffer of {cap} bytes is too small: {n} needed"
        )));
    }
    // SAFETY: non-NULL with `cap >= n` writable bytes, as the caller promises.
    let out = unsafe { slice_mut(buf.cast::<u8>(), n, "buffer")? };
    out[..s.len()].copy_from_slice(s.as_bytes());
    out[s.len()] = 0;
    Ok(())
}
