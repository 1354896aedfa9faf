//! Groups: create, open, delete, move, list, and the kind of a path.

use std::ffi::{c_char, c_void, CString};

use arca_core::{Error, Group, GroupOptions, Link, Object, ObjectKind};

use crate::error::{guard, Fail, R};
use crate::ffi::{clear, give_handle, handle, put, put_opt, put_str, take_handle, text};

/// An open group (`arca_group_t` in C).
///
/// ```c
/// arca_group_t *root;
/// arca_file_root(f, &root);
/// arca_group_close(root);
/// ```
pub struct GroupHandle {
    pub(crate) group: Group,
}

/// The object is a group.
pub const ARCA_KIND_GROUP: i32 = 1;
/// The object is a dataset.
pub const ARCA_KIND_DATASET: i32 = 2;
/// A soft or external link that does not lead to an object in this file
/// (dangling, or into another file); see `arca_link_info`.
pub const ARCA_KIND_LINK: i32 = 3;
/// The object is a committed datatype (a type kept as an object; the C
/// API lists it but opens no handle to it).
pub const ARCA_KIND_DATATYPE: i32 = 4;

/// Every link of `g` in its order, with the kind of what it leads to in
/// this file (soft links followed) or `ARCA_KIND_LINK`.
fn entries(g: &Group) -> R<Vec<(String, i32)>> {
    let links = g.links()?;
    Ok(links
        .into_iter()
        .map(|(name, l)| {
            let k = match l {
                Link::Hard(k) => kind_code(k),
                Link::Soft(_) => match g.object(&name) {
                    Ok(o) => kind_code(o.kind()),
                    Err(_) => ARCA_KIND_LINK,
                },
                Link::External { .. } => ARCA_KIND_LINK,
            };
            (name, k)
        })
        .collect())
}

/// `int32_t (*)(const char *name, int32_t kind, void *user)`: return 0 to
/// go on, anything else to stop (the iteration then returns that value).
pub type IterateFn = unsafe extern "C" fn(*const c_char, i32, *mut c_void) -> i32;

pub(crate) fn kind_code(k: ObjectKind) -> i32 {
    match k {
        ObjectKind::Group => ARCA_KIND_GROUP,
        ObjectKind::Dataset => ARCA_KIND_DATASET,
        ObjectKind::Datatype => ARCA_KIND_DATATYPE,
    }
}

/// The group and path arguments most group calls start with.
unsafe fn loc_path<'a>(loc: *mut GroupHandle, path: *const c_char) -> R<(&'a Group, &'a str)> {
    // SAFETY: forwarded from the entry point's contract.
    let g = unsafe { handle(loc, "group")? };
    // SAFETY: as above.
    let p = unsafe { text(path, "path")? };
    Ok((&g.group, p))
}

/// Hand a group to the caller through `out`, or drop it when `out` is NULL
/// and `required` is false.
unsafe fn give(out: *mut *mut GroupHandle, group: Group, required: bool) -> R<()> {
    if out.is_null() {
        return if required {
            Err(Fail::null("out"))
        } else {
            Ok(())
        };
    }
    // SAFETY: non-NULL, writable per the entry point's contract.
    unsafe { give_handle(out, GroupHandle { group }, "out") }
}

/// Create a group at `path` (relative to `loc`, or absolute), creating
/// missing intermediate groups.
///
/// Ownership: if `out` is not NULL, `*out` is a new handle to release with
/// `arca_group_close`; pass NULL when no handle is wanted.
///
/// # Safety
/// `loc` is NULL or a live group handle; `path` a NUL-terminated string;
/// `out` NULL or writable.
///
/// ```c
/// arca_group_create(root, "run1/detector", NULL);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_group_create(
    loc: *mut GroupHandle,
    path: *const c_char,
    out: *mut *mut GroupHandle,
) -> i32 {
    guard(|| {
        // SAFETY: out-pointer supplied by the caller.
        unsafe { clear(out) };
        // SAFETY: per the contract.
        let (g, p) = unsafe { loc_path(loc, path)? };
        let new = g.create_group(p)?;
        // SAFETY: per the contract.
        unsafe { give(out, new, false) }
    })
}

/// Open the group at `path`. A dataset there is `ARCA_ERR_NOT_FOUND`.
///
/// Ownership: `*out` is a new handle to release with `arca_group_close`.
///
/// # Safety
/// As for [`arca_group_create`]; `out` must not be NULL.
///
/// ```c
/// arca_group_t *det;
/// arca_group_open(root, "run1/detector", &det);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_group_open(
    loc: *mut GroupHandle,
    path: *const c_char,
    out: *mut *mut GroupHandle,
) -> i32 {
    guard(|| {
        // SAFETY: out-pointer supplied by the caller.
        unsafe { clear(out) };
        // SAFETY: per the contract.
        let (g, p) = unsafe { loc_path(loc, path)? };
        if out.is_null() {
            return Err(Fail::null("out"));
        }
        let found = g.group(p)?;
        // SAFETY: per the contract.
        unsafe { give(out, found, true) }
    })
}

/// Open the group at `path`, creating it (and missing parents) if absent.
/// A dataset there is `ARCA_ERR_INVALID`.
///
/// Ownership: as for [`arca_group_create`] (`out` may be NULL).
///
/// # Safety
/// As for [`arca_group_create`].
///
/// ```c
/// arca_group_t *g;
/// arca_group_require(root, "cache", &g);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_group_require(
    loc: *mut GroupHandle,
    path: *const c_char,
    out: *mut *mut GroupHandle,
) -> i32 {
    guard(|| {
        // SAFETY: out-pointer supplied by the caller.
        unsafe { clear(out) };
        // SAFETY: per the contract.
        let (g, p) = unsafe { loc_path(loc, path)? };
        let found = g.require_group(p)?;
        // SAFETY: per the contract.
        unsafe { give(out, found, false) }
    })
}

/// Free a group handle. NULL is a no-op returning `ARCA_OK`.
///
/// Ownership: consumes `g`; the group in the file is unaffected.
///
/// # Safety
/// `g` is NULL or a live group handle, closed only once.
///
/// ```c
/// arca_group_close(g);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_group_close(g: *mut GroupHandle) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        drop(unsafe { take_handle(g) });
        Ok(())
    })
}

/// Delete the object at `path` and everything below it. Handles already
/// open on deleted objects fail from then on.
///
/// # Safety
/// `loc` is NULL or a live group handle; `path` a NUL-terminated string.
///
/// ```c
/// arca_delete(root, "run1/scratch");
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_delete(loc: *mut GroupHandle, path: *const c_char) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let (g, p) = unsafe { loc_path(loc, path)? };
        Ok(g.delete(p)?)
    })
}

/// Move or rename the object at `from` to `to` (both relative to `loc` or
/// absolute; the destination's parent group must exist).
///
/// # Safety
/// `loc` is NULL or a live group handle; `from`, `to` NUL-terminated.
///
/// ```c
/// arca_move(root, "run1/raw", "archive/raw");
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_move(
    loc: *mut GroupHandle,
    from: *const c_char,
    to: *const c_char,
) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let (g, from) = unsafe { loc_path(loc, from)? };
        // SAFETY: per the contract.
        let to = unsafe { text(to, "to")? };
        Ok(g.rename(from, to)?)
    })
}

/// The number of direct members of `g`.
///
/// # Safety
/// `g` is NULL or a live group handle; `n` NULL or writable.
///
/// ```c
/// uint64_t n; arca_group_count(root, &n);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_group_count(g: *mut GroupHandle, n: *mut u64) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let g = unsafe { handle(g, "group")? };
        let count = g.group.len()?;
        // SAFETY: per the contract.
        unsafe { put(n, count, "n") }
    })
}

/// The `index`-th direct member in name order: its name through a caller
/// buffer (required-length semantics: `*needed`, may be NULL, receives the
/// length plus the NUL; `name` NULL only asks for it) and its kind
/// (`ARCA_KIND_*`, `kind` may be NULL). An index past the end is
/// `ARCA_ERR_NOT_FOUND`. Each call lists the group, so for large groups
/// prefer `arca_group_iterate`.
///
/// # Safety
/// `g` is NULL or a live group handle; `name` NULL or `cap` writable bytes;
/// `needed` and `kind` NULL or writable.
///
/// ```c
/// char name[256]; int32_t kind;
/// for (uint64_t i = 0; i < n; i++)
///     if (arca_group_member(root, i, name, sizeof name, NULL, &kind) == ARCA_OK)
///         puts(name);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_group_member(
    g: *mut GroupHandle,
    index: u64,
    name: *mut c_char,
    cap: usize,
    needed: *mut usize,
    kind: *mut i32,
) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let g = unsafe { handle(g, "group")? };
        let members = entries(&g.group)?;
        let (n, k) = usize::try_from(index)
            .ok()
            .and_then(|i| members.get(i))
            .ok_or_else(|| {
                Fail::from(Error::NotFound(format!(
                    "member {index} of {} (it has {})",
                    g.group.path(),
                    members.len()
                )))
            })?;
        // SAFETY: per the contract.
        unsafe { put_opt(kind, *k) };
        // SAFETY: per the contract.
        unsafe { put_str(n, name, cap, needed) }
    })
}

/// Name to hand a callback; a NUL inside a name is shown as `\0`.
fn c_name(s: &str) -> CString {
    CString::new(s.replace('\0', "\\0")).unwrap_or_default()
}

/// Call `cb(name, kind, user)` for each direct member of `g` in name order.
/// Returns `ARCA_OK` after the last member, or the first nonzero value the
/// callback returns (which stops the iteration). The callback may call
/// other arca functions, but must not close `g`.
///
/// Ownership: `name` belongs to the library and is valid only during the
/// callback; copy it to keep it.
///
/// # Safety
/// `g` is NULL or a live group handle; `cb` NULL or a function that does
/// not unwind; `user` is passed through untouched.
///
/// ```c
/// static int32_t print(const char *name, int32_t kind, void *user) {
///     printf("%s %s\n", kind == ARCA_KIND_GROUP ? "G" : "D", name);
///     return 0;
/// }
/// arca_group_iterate(root, print, NULL);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_group_iterate(
    g: *mut GroupHandle,
    cb: Option<IterateFn>,
    user: *mut c_void,
) -> i32 {
    let mut stop = 0;
    let rc = guard(|| {
        // SAFETY: per the contract.
        let g = unsafe { handle(g, "group")? };
        let cb = cb.ok_or_else(|| Fail::null("callback"))?;
        for (name, kind) in entries(&g.group)? {
            let c = c_name(&name);
            // SAFETY: a valid NUL-terminated name; `cb` and `user` are the
            // caller's, per the contract.
            let r = unsafe { cb(c.as_ptr(), kind, user) };
            if r != 0 {
                stop = r;
                break;
            }
        }
        Ok(())
    });
    if rc == 0 {
        stop
    } else {
        rc
    }
}

/// Like [`arca_group_iterate`] but recursive: every object below `g`,
/// named by its path relative to `g`, depth first in name order, each group
/// before what lies below it (`"a"`, `"a/x"`, `"a/x/y"`, `"b"`, `"b/z"`).
///
/// # Safety
/// As for [`arca_group_iterate`].
///
/// ```c
/// arca_group_visit(root, print, NULL);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_group_visit(
    g: *mut GroupHandle,
    cb: Option<IterateFn>,
    user: *mut c_void,
) -> i32 {
    let mut stop = 0;
    let rc = guard(|| {
        // SAFETY: per the contract.
        let g = unsafe { handle(g, "group")? };
        let cb = cb.ok_or_else(|| Fail::null("callback"))?;
        let r = g.group.visit(&mut |name, kind| {
            let c = c_name(name);
            // SAFETY: as in `arca_group_iterate`.
            let r = unsafe { cb(c.as_ptr(), kind_code(kind), user) };
            if r != 0 {
                stop = r;
                // The walk stops on an error; `stop` tells it from a real one.
                return Err(Error::InvalidArgument("stopped by the callback".into()));
            }
            Ok(())
        });
        match r {
            Err(_) if stop != 0 => Ok(()),
            r => Ok(r?),
        }
    });
    if rc == 0 {
        stop
    } else {
        rc
    }
}

/// The kind of the object at `path`: `*kind` is `ARCA_KIND_GROUP` or
/// `ARCA_KIND_DATASET`; nothing there is `ARCA_ERR_NOT_FOUND`.
///
/// # Safety
/// `loc` is NULL or a live group handle; `path` NUL-terminated; `kind`
/// NULL or writable.
///
/// ```c
/// int32_t kind;
/// if (arca_kind(root, "run1/frame", &kind) == ARCA_OK && kind == ARCA_KIND_DATASET) { }
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_kind(
    loc: *mut GroupHandle,
    path: *const c_char,
    kind: *mut i32,
) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let (g, p) = unsafe { loc_path(loc, path)? };
        if kind.is_null() {
            return Err(Fail::null("kind"));
        }
        let k = kind_code(g.object(p)?.kind());
        // SAFETY: per the contract.
        unsafe { put(kind, k, "kind") }
    })
}

/// Whether anything exists at `path`: `*exists` is 1 or 0.
///
/// # Safety
/// As for [`arca_kind`].
///
/// ```c
/// int32_t e; arca_exists(root, "run1", &e);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_exists(
    loc: *mut GroupHandle,
    path: *const c_char,
    exists: *mut i32,
) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let (g, p) = unsafe { loc_path(loc, path)? };
        if exists.is_null() {
            return Err(Fail::null("exists"));
        }
        let e = g.contains(p)?;
        // SAFETY: per the contract.
        unsafe { put(exists, i32::from(e), "exists") }
    })
}

/// The absolute path `g` was opened by, through a caller buffer
/// (required-length semantics, as for [`arca_group_member`]).
///
/// # Safety
/// `g` is NULL or a live group handle; `buf` NULL or `cap` writable bytes;
/// `needed` NULL or writable.
///
/// ```c
/// char p[256]; arca_group_path(g, p, sizeof p, NULL);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_group_path(
    g: *mut GroupHandle,
    buf: *mut c_char,
    cap: usize,
    needed: *mut usize,
) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let g = unsafe { handle(g, "group")? };
        // SAFETY: per the contract.
        unsafe { put_str(g.group.path(), buf, cap, needed) }
    })
}

/// Link kind codes (`arca_link_kind`).
pub const ARCA_LINK_HARD: i32 = 1;
/// A soft link: a path followed when used.
pub const ARCA_LINK_SOFT: i32 = 2;
/// An external link: a path in another file.
pub const ARCA_LINK_EXTERNAL: i32 = 3;

/// Create a group whose members are listed in creation order (kept on
/// reopen); otherwise as [`arca_group_create`].
///
/// # Safety
/// As for [`arca_group_create`].
///
/// ```c
/// arca_group_create_ordered(root, "steps", NULL);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_group_create_ordered(
    loc: *mut GroupHandle,
    path: *const c_char,
    out: *mut *mut GroupHandle,
) -> i32 {
    guard(|| {
        // SAFETY: out-pointer supplied by the caller.
        unsafe { clear(out) };
        // SAFETY: per the contract.
        let (g, p) = unsafe { loc_path(loc, path)? };
        let new = g.create_group_with(p, &GroupOptions::new().track_order(true))?;
        // SAFETY: per the contract.
        unsafe { give(out, new, false) }
    })
}

/// Make `path` a soft link to `target` (absolute, or relative to the
/// link's group); the target need not exist.
///
/// # Safety
/// `loc` is NULL or a live group handle; `path` and `target` NUL-terminated.
///
/// ```c
/// arca_link_soft(root, "latest", "/runs/42");
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_link_soft(
    loc: *mut GroupHandle,
    path: *const c_char,
    target: *const c_char,
) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let (g, p) = unsafe { loc_path(loc, path)? };
        // SAFETY: per the contract.
        let t = unsafe { text(target, "target")? };
        Ok(g.link_soft(p, t)?)
    })
}

/// Make `path` an external link to `target` inside `file` (relative to
/// this file's directory, or absolute).
///
/// # Safety
/// As for [`arca_link_soft`]; `file` NUL-terminated.
///
/// ```c
/// arca_link_external(root, "calib", "calib.arca", "/v3");
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_link_external(
    loc: *mut GroupHandle,
    path: *const c_char,
    file: *const c_char,
    target: *const c_char,
) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let (g, p) = unsafe { loc_path(loc, path)? };
        // SAFETY: per the contract.
        let f = unsafe { text(file, "file")? };
        // SAFETY: per the contract.
        let t = unsafe { text(target, "target")? };
        Ok(g.link_external(p, f, t)?)
    })
}

/// Give the object at `existing` a second name `path` (a hard link); it
/// lives until its last name is deleted.
///
/// # Safety
/// As for [`arca_link_soft`]; `existing` NUL-terminated.
///
/// ```c
/// arca_link_hard(root, "runs/42/frames", "frames_latest");
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_link_hard(
    loc: *mut GroupHandle,
    existing: *const c_char,
    path: *const c_char,
) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let (g, p) = unsafe { loc_path(loc, path)? };
        // SAFETY: per the contract.
        let e = unsafe { text(existing, "existing")? };
        Ok(g.link_hard(e, p)?)
    })
}

/// What the link at `path` is (its last component not followed):
/// `*kind` is `ARCA_LINK_*`; for soft and external links the target path
/// goes to `target` and, for external ones, the file name to `file`
/// (caller buffers, required lengths in `*target_needed` / `*file_needed`;
/// any of them may be NULL). A missing link is `ARCA_ERR_NOT_FOUND`.
///
/// # Safety
/// `loc` is NULL or a live group handle; `path` NUL-terminated; buffers
/// NULL or of their stated capacity; the others NULL or writable.
///
/// ```c
/// int32_t kind; char t[512];
/// arca_link_info(root, "latest", &kind, t, sizeof t, NULL, NULL, 0, NULL);
/// ```
#[no_mangle]
#[allow(clippy::too_many_arguments)] // mirrors the C signature
pub unsafe extern "C" fn arca_link_info(
    loc: *mut GroupHandle,
    path: *const c_char,
    kind: *mut i32,
    target: *mut c_char,
    target_cap: usize,
    target_needed: *mut usize,
    file: *mut c_char,
    file_cap: usize,
    file_needed: *mut usize,
) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let (g, p) = unsafe { loc_path(loc, path)? };
        let (k, t, f) = match g.link(p)? {
            Link::Hard(_) => (ARCA_LINK_HARD, String::new(), String::new()),
            Link::Soft(t) => (ARCA_LINK_SOFT, t, String::new()),
            Link::External { file, path } => (ARCA_LINK_EXTERNAL, path, file),
        };
        if !kind.is_null() {
            // SAFETY: non-NULL and writable per the contract.
            unsafe { put(kind, k, "kind")? };
        }
        if !target.is_null() || !target_needed.is_null() {
            // SAFETY: per the contract.
            unsafe { put_str(&t, target, target_cap, target_needed)? };
        }
        if !file.is_null() || !file_needed.is_null() {
            // SAFETY: per the contract.
            unsafe { put_str(&f, file, file_cap, file_needed)? };
        }
        Ok(())
    })
}

/// `*id` = the identity of the object at `path` (what an object reference,
/// `ARCA_DTYPE_REFERENCE`, holds; equal for all its names).
///
/// # Safety
/// `loc` is NULL or a live group handle; `path` NUL-terminated; `id`
/// writable.
///
/// ```c
/// uint64_t id; arca_object_id(root, "runs/42", &id);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_object_id(
    loc: *mut GroupHandle,
    path: *const c_char,
    id: *mut u64,
) -> i32 {
    guard(|| {
        // SAFETY: per the contract.
        let (g, p) = unsafe { loc_path(loc, path)? };
        let o = g.object(p)?;
        // SAFETY: per the contract.
        unsafe { put(id, o.id(), "id") }
    })
}

/// Open the object an id (an object reference) leads to: `*kind` is
/// `ARCA_KIND_GROUP` with a new handle in `*group`, or `ARCA_KIND_DATASET`
/// with one in `*dataset`, or `ARCA_KIND_DATATYPE` with neither (the
/// other is set to NULL; release with
/// `arca_group_close` / `arca_dataset_close`). Id 0 (the null reference)
/// is `ARCA_ERR_INVALID`; an id no link leads to is `ARCA_ERR_NOT_FOUND`.
///
/// # Safety
/// `loc` is NULL or a live group handle of the file; the out-pointers
/// writable.
///
/// ```c
/// int32_t k; arca_group_t *g; arca_dataset_t *d;
/// arca_dereference(root, id, &k, &g, &d);
/// ```
#[no_mangle]
pub unsafe extern "C" fn arca_dereference(
    loc: *mut GroupHandle,
    id: u64,
    kind: *mut i32,
    group: *mut *mut GroupHandle,
    dataset: *mut *mut crate::dataset::DatasetHandle,
) -> i32 {
    guard(|| {
        // SAFETY: out-pointers supplied by the caller.
        unsafe {
            clear(group);
            clear(dataset);
        }
        if kind.is_null() || group.is_null() || dataset.is_null() {
            return Err(Fail::null("kind, group and dataset"));
        }
        // SAFETY: per the contract.
        let g = unsafe { handle(loc, "group")? };
        match g.group.dereference(id)? {
            Object::Group(x) => {
                // SAFETY: non-NULL per the check above.
                unsafe {
                    put(kind, ARCA_KIND_GROUP, "kind")?;
                    give(group, x, true)
                }
            }
            Object::Dataset(d) => {
                // SAFETY: non-NULL per the check above.
                unsafe {
                    put(kind, ARCA_KIND_DATASET, "kind")?;
                    give_handle(dataset, crate::dataset::DatasetHandle { ds: d }, "dataset")
                }
            }
            // SAFETY: non-NULL per the check above; both handles stay NULL.
            Object::Datatype(_) => unsafe { put(kind, ARCA_KIND_DATATYPE, "kind") },
        }
    })
}
