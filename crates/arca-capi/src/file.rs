//! Files: open, create, flush, close, statistics.

use std::ffi::c_char;

use arca_core::{File, Mode, Stat};

use crate::error::{guard, Fail, R};
use crate::ffi::{clear, give_handle, handle, put, put_opt, put_str, take_handle, text};
use crate::group::GroupHandle;

/// An open file (`arca_file_t` in C).
///
/// ```c
/// arca_file_t *f;
/// arca_file_open("run.arca", "r", &f);
/// arca_file_close(f);
/// ```
pub struct FileHandle {
    pub(crate) file: File,
}

/// Object counts and byte accounting (`arca_stat_t`), as from `arca_stat`.
///
/// ```c
/// arca_stat_t s;
/// arca_stat(f, &s);
/// ```
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StatC {
    /// Groups, the root included.
    pub groups: u64,
    /// Datasets.
    pub datasets: u64,
    /// Attributes on all objects.
    pub attributes: u64,
    /// Stored chunks of all chunked datasets.
    pub chunks: u64,
    /// Logical file length.
    pub file_bytes: u64,
    /// The superblock page.
    pub superblock_bytes: u64,
    /// Object headers, B-tree pages and blobs.
    pub metadata_bytes: u64,
    /// Dataset elements as stored (after compression).
    pub data_bytes: u64,
    /// Dataset elements before compression, for allocated storage.
    pub data_logical_bytes: u64,
    /// Bytes belonging to nothing: space freed and not yet reused.
    pub unused_bytes: u64,
    /// Bytes in free sections known to the free-space manager.
    pub free_bytes: u64,
    /// Number of free sections.
    pub free_sections: u64,
    /// Elements of compact datasets, kept in their headers.
    pub compact_bytes: u64,
}

impl From<Stat> for StatC {
    fn from(s: Stat) -> Self {
        StatC {
            groups: s.groups,
            datasets: s.datasets,
            attributes: s.attributes,
            chunks: s.chunks,
            file_bytes: s.file_bytes,
            superblock_bytes: s.superblock_bytes,
            metadata_bytes: s.metadata_bytes,
            data_bytes: s.data_bytes,
            data_logical_bytes: s.data_logical_bytes,
            unused_bytes: s.unused_bytes,
            free_bytes: s.free_bytes,
            free_sections: s.free_sections,
            compact_bytes: s.compact_bytes,
        }
    }
}

#[cfg(unix)]
unsafe fn path_arg<'a>(p: *const c_char) -> R<&'a std::path::Path> {
    use std::os::unix::ffi::OsStrExt;
    if p.is_null() {
        return Err(Fail::null("path"));
    }
    // SAFETY: non-NULL; the caller promises a NUL-terminated string. Unix
    // paths are bytes, so no UTF-8 check.
    let c = unsafe { std::ffi::CStr::from_ptr(p) };
    Ok(std::path::Path::new(std::ffi::OsStr::from_bytes(
        c.to_bytes(),
    )))
}

#[cfg(not(unix))]
unsafe fn path_arg<'a>(p: *const c_char) -> R<&'a std::path::Path> {
    // SAFETY: forwarded from the caller's promise about `path`.
    Ok(std::path::Path::new(unsafe { text(p, "path")? }))
}

/// Open or create the file at `path`. `mode` is one of `"r"` (read only,
/// must exist), `"r+"` (read/write, must exist), `"w"` (create or
/// truncate), `"w-"` or `"x"` (create, fail if it exists), `"a"` (read/write,
/// create if missing).
///
/// Ownership: on success `*out` is a new handle the caller must release
/// with `arca_file_close`; on failure `*out` is NULL.
///
/// # Safety
/// `path` and `mode` are NUL-terminated strings; `out` is NULL or writable.
///
/// ```c
/// arca_file_t *f;
/// int32_t rc = arca_file_open("data.arca", "a", &f);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_file_open(
    path: *const c_char,
    mode: *const c_char,
    out: *mut *mut FileHandle,
) -> i32 {
    guard(|| {
        // SAFETY: out-pointer supplied by the caller.
        unsafe { clear(out) };
        // SAFETY: `path` is a NUL-terminated string per the contract.
        let path = unsafe { path_arg(path)? };
        // SAFETY: `mode` is a NUL-terminated string per the contract.
        let mode = Mode::parse(unsafe { text(mode, "mode")? })?;
        if out.is_null() {
            return Err(Fail::null("out"));
        }
        let file = File::options().mode(mode).open(path)?;
        // SAFETY: checked non-NULL above.
        unsafe { give_handle(out, FileHandle { file }, "out") }
    })
}

/// Create (or truncate) the file at `path`: `arca_file_open(path, "w", out)`.
///
/// Ownership: as for `arca_file_open`.
///
/// # Safety
/// As for [`arca_file_open`].
///
/// ```c
/// arca_file_t *f;
/// arca_file_create("new.arca", &f);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_file_create(path: *const c_char, out: *mut *mut FileHandle) -> i32 {
    // SAFETY: forwarded under the same contract.
    unsafe { arca_file_open(path, c"w".as_ptr(), out) }
}

/// Flush, close and free the handle. Group, dataset and attribute handles
/// of this file stay allocated (close them too) but fail with
/// `ARCA_ERR_INVALID` from now on. NULL is a no-op returning `ARCA_OK`.
///
/// Ownership: consumes `f` whatever the status; do not use it again.
///
/// # Safety
/// `f` is NULL or a live handle from `arca_file_open`, closed only once.
///
/// ```c
/// if (arca_file_close(f) != ARCA_OK) fprintf(stderr, "%s\n", arca_last_error());
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_file_close(f: *mut FileHandle) -> i32 {
    guard(|| {
        // SAFETY: per the contract, a live handle closed once.
        match unsafe { take_handle(f) } {
            Some(h) => Ok(h.file.close()?),
            None => Ok(()),
        }
    })
}

/// Commit every pending change to disk, atomically.
///
/// # Safety
/// `f` is NULL or a live file handle.
///
/// ```c
/// arca_file_flush(f);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_file_flush(f: *mut FileHandle) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let h = unsafe { handle(f, "file")? };
        Ok(h.file.flush()?)
    })
}

/// Move a file opened read-only to the newest commit of the writer that
/// has it open in another process (or another handle): until then it shows
/// the commit that was newest when it was opened or last refreshed.
/// `*changed` (may be NULL) is 1 if it moved, else 0; for a writable file
/// this does nothing. Group and dataset handles stay valid and read the
/// new state from their next call.
///
/// # Safety
/// `f` is NULL or a live file handle; `changed` is NULL or writable.
///
/// ```c
/// int32_t changed; arca_file_refresh(f, &changed);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_file_refresh(f: *mut FileHandle, changed: *mut i32) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let h = unsafe { handle(f, "file")? };
        let moved = h.file.refresh()?;
        // SAFETY: per the contract.
        unsafe { put_opt(changed, i32::from(moved)) };
        Ok(())
    })
}

/// The generation of the state the file shows: the number of commits it
/// had then.
///
/// # Safety
/// `f` is NULL or a live file handle; `out` is NULL or writable.
///
/// ```c
/// uint64_t g; arca_file_generation(f, &g);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_file_generation(f: *mut FileHandle, out: *mut u64) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let h = unsafe { handle(f, "file")? };
        let g = h.file.generation()?;
        // SAFETY: per the contract.
        unsafe { put(out, g, "out") }
    })
}

/// Open the root group `/`.
///
/// Ownership: `*out` is a new handle to release with `arca_group_close`.
///
/// # Safety
/// `f` is NULL or a live file handle; `out` is NULL or writable.
///
/// ```c
/// arca_group_t *root;
/// arca_file_root(f, &root);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_file_root(f: *mut FileHandle, out: *mut *mut GroupHandle) -> i32 {
    guard(|| {
        // SAFETY: out-pointer supplied by the caller.
        unsafe { clear(out) };
        // SAFETY: per the contract.
        let h = unsafe { handle(f, "file")? };
        if out.is_null() {
            return Err(Fail::null("out"));
        }
        let g = GroupHandle {
            group: h.file.root(),
        };
        // SAFETY: checked non-NULL above.
        unsafe { give_handle(out, g, "out") }
    })
}

/// Whether the file was opened for writing: `*writable` is 1 or 0.
///
/// # Safety
/// `f` is NULL or a live file handle; `writable` is NULL or writable.
///
/// ```c
/// int32_t w; arca_file_is_writable(f, &w);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_file_is_writable(f: *mut FileHandle, writable: *mut i32) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let h = unsafe { handle(f, "file")? };
        // SAFETY: per the contract.
        unsafe { put(writable, i32::from(h.file.is_writable()), "writable") }
    })
}

/// The path the file was opened from, through a caller buffer: `*needed`
/// (may be NULL) receives the length plus the NUL; `buf` NULL only asks for
/// the length; a buffer shorter than that fails with `ARCA_ERR_INVALID`.
///
/// # Safety
/// `f` is NULL or a live file handle; `buf` is NULL or holds `cap` bytes.
///
/// ```c
/// size_t n; arca_file_path(f, NULL, 0, &n);
/// char *p = malloc(n); arca_file_path(f, p, n, NULL);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_file_path(
    f: *mut FileHandle,
    buf: *mut c_char,
    cap: usize,
    needed: *mut usize,
) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let h = unsafe { handle(f, "file")? };
        let p = h
            .file
            .path()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        // SAFETY: per the contract.
        unsafe { put_str(&p, buf, cap, needed) }
    })
}

/// Object counts and where the file's bytes go, from a walk of the file.
///
/// # Safety
/// `f` is NULL or a live file handle; `out` is NULL or writable.
///
/// ```c
/// arca_stat_t s;
/// arca_stat(f, &s);
/// printf("%llu datasets\n", (unsigned long long)s.datasets);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_stat(f: *mut FileHandle, out: *mut StatC) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let h = unsafe { handle(f, "file")? };
        if out.is_null() {
            return Err(Fail::null("out"));
        }
        let s = h.file.stat()?;
        // SAFETY: checked non-NULL above.
        unsafe { put(out, s.into(), "out") }
    })
}

/// Verify every structure and chunk of the file; `out` (may be NULL)
/// receives the same figures as `arca_stat`. Damage is `ARCA_ERR_CORRUPT`.
///
/// # Safety
/// `f` is NULL or a live file handle; `out` is NULL or writable.
///
/// ```c
/// if (arca_file_check(f, NULL) == ARCA_ERR_CORRUPT) puts(arca_last_error());
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_file_check(f: *mut FileHandle, out: *mut StatC) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let h = unsafe { handle(f, "file")? };
        let s = h.file.check()?;
        // SAFETY: per the contract.
        unsafe { put_opt(out, s.into()) };
        Ok(())
    })
}

/// Start a transaction: the changes made until the matching
/// [`arca_file_end_transaction`] are committed together or not at all.
/// Work done before is committed first. Transactions nest; the outermost
/// one decides. A read-only file is `ARCA_ERR_READ_ONLY`.
///
/// # Safety
/// `f` is NULL or a live file handle.
///
/// ```c
/// arca_file_begin_transaction(f);
/// int32_t rc = arca_dataset_write(ds, start, count, NULL, buf, size);
/// arca_file_end_transaction(f, rc == ARCA_OK);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_file_begin_transaction(f: *mut FileHandle) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let h = unsafe { handle(f, "file")? };
        Ok(h.file.begin_transaction()?)
    })
}

/// End the innermost transaction: `commit` nonzero commits it, 0 rolls
/// everything back to the state before the outermost one (an inner
/// rollback makes the outer commit roll back and report it). No
/// transaction open, or a commit of one a failure doomed (it is rolled
/// back), is `ARCA_ERR_INVALID`; a transaction that ends with chunk space
/// reserved and not sealed (`arca_dataset_reserve_chunks`) is rolled back
/// with `ARCA_ERR_INVALID`.
///
/// # Safety
/// `f` is NULL or a live file handle.
///
/// ```c
/// arca_file_end_transaction(f, 1); /* commit */
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_file_end_transaction(f: *mut FileHandle, commit: i32) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let h = unsafe { handle(f, "file")? };
        Ok(h.file.end_transaction(commit != 0)?)
    })
}
