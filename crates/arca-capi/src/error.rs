//! Status codes, the thread-local error message and the guard that every
//! entry point runs its body in.

use std::any::Any;
use std::cell::RefCell;
use std::ffi::{c_char, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use arca_core::Error;

/// Success.
pub const ARCA_OK: i32 = 0;
/// The operating system refused a read, write, sync or open.
pub const ARCA_ERR_IO: i32 = -1;
/// A structure in the file is damaged.
pub const ARCA_ERR_CORRUPT: i32 = -2;
/// No object, attribute or file by that name.
pub const ARCA_ERR_NOT_FOUND: i32 = -3;
/// An object or attribute by that name exists already.
pub const ARCA_ERR_EXISTS: i32 = -4;
/// An argument does not fit the object it is applied to.
pub const ARCA_ERR_INVALID: i32 = -5;
/// The file uses a feature this version does not know, or the C API does
/// not offer it (variable-length types).
pub const ARCA_ERR_UNSUPPORTED: i32 = -6;
/// The file was opened read-only.
pub const ARCA_ERR_READ_ONLY: i32 = -7;
/// Another process holds the file.
pub const ARCA_ERR_LOCKED: i32 = -8;
/// An earlier write failure left the file handle unusable.
pub const ARCA_ERR_POISONED: i32 = -9;
/// A required pointer argument was NULL.
pub const ARCA_ERR_NULL: i32 = -10;
/// arca panicked; the message says where. The handles stay valid.
pub const ARCA_ERR_PANIC: i32 = -11;
/// The file has a journal left by an interrupted writer that this process
/// may not roll back (a read-only open without write permission).
pub const ARCA_ERR_NEEDS_RECOVERY: i32 = -12;
/// An error kind newer than this version of the C API.
pub const ARCA_ERR_OTHER: i32 = -13;

/// A failure on its way to C: a status code and a message.
#[derive(Debug)]
pub(crate) struct Fail {
    pub(crate) code: i32,
    pub(crate) msg: String,
}

pub(crate) type R<T> = Result<T, Fail>;

impl Fail {
    pub(crate) fn new(code: i32, msg: impl Into<String>) -> Self {
        Fail {
            code,
            msg: msg.into(),
        }
    }

    pub(crate) fn invalid(msg: impl Into<String>) -> Self {
        Fail::new(ARCA_ERR_INVALID, msg)
    }

    pub(crate) fn null(what: &str) -> Self {
        Fail::new(ARCA_ERR_NULL, format!("{what} is NULL"))
    }

    pub(crate) fn unsupported(msg: impl Into<String>) -> Self {
        Fail::new(ARCA_ERR_UNSUPPORTED, msg)
    }
}

/// The status code of a core error: one per variant.
pub(crate) fn code_of(e: &Error) -> i32 {
    match e {
        Error::Io { .. } => ARCA_ERR_IO,
        Error::Corrupt { .. } => ARCA_ERR_CORRUPT,
        Error::NotFound(_) => ARCA_ERR_NOT_FOUND,
        Error::AlreadyExists(_) => ARCA_ERR_EXISTS,
        Error::InvalidArgument(_) => ARCA_ERR_INVALID,
        Error::Unsupported(_) => ARCA_ERR_UNSUPPORTED,
        Error::ReadOnly => ARCA_ERR_READ_ONLY,
        Error::Locked(_) => ARCA_ERR_LOCKED,
        Error::NeedsRecovery(_) => ARCA_ERR_NEEDS_RECOVERY,
        Error::Poisoned => ARCA_ERR_POISONED,
        // The core's error enum is non-exhaustive.
        _ => ARCA_ERR_OTHER,
    }
}

impl From<Error> for Fail {
    fn from(e: Error) -> Self {
        Fail::new(code_of(&e), e.to_string())
    }
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_last_error(msg: &str) {
    // A message cannot carry NUL into C; show it instead of truncating.
    let c = CString::new(msg.replace('\0', "\\0")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = c);
}

fn panic_message(p: &(dyn Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic payload".to_string()
    }
}

/// Run an entry point's body: map its error to a status code and message,
/// and stop any panic at the boundary (unwinding into C is undefined).
pub(crate) fn guard(f: impl FnOnce() -> R<()>) -> i32 {
    // Handles hold only Arc<Mutex<..>> state that the core re-checks
    // (poisoned mutexes become ARCA_ERR_POISONED), so resuming is sound.
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => ARCA_OK,
        Ok(Err(e)) => {
            set_last_error(&e.msg);
            e.code
        }
        Err(p) => {
            set_last_error(&format!("internal panic: {}", panic_message(&*p)));
            ARCA_ERR_PANIC
        }
    }
}

/// The message of the most recent failed call on this thread ("" if none).
///
/// Ownership: the string belongs to the library; it stays valid until the
/// next failing arca call on the same thread. Copy it to keep it.
///
/// ```c
/// if (arca_group_open(root, "missing", &g) == ARCA_ERR_NOT_FOUND)
///     fprintf(stderr, "%s\n", arca_last_error());
/// ```
#[no_mangle]
pub extern "C" fn arca_last_error() -> *const c_char {
    // Reading a thread-local cannot fail except during thread teardown,
    // where a static empty string is the honest answer.
    LAST_ERROR
        .try_with(|e| e.borrow().as_ptr())
        .unwrap_or(c"".as_ptr())
}

/// The name of a status code, e.g. `"ARCA_ERR_NOT_FOUND"`, or
/// `"ARCA_ERR_UNKNOWN"` for a value that is not one.
///
/// Ownership: a static string; do not free it.
///
/// ```c
/// printf("%s\n", arca_error_name(ARCA_ERR_LOCKED)); /* ARCA_ERR_LOCKED */
/// ```
#[no_mangle]
pub extern "C" fn arca_error_name(code: i32) -> *const c_char {
    let s: &'static std::ffi::CStr = match code {
        ARCA_OK => c"ARCA_OK",
        ARCA_ERR_IO => c"ARCA_ERR_IO",
        ARCA_ERR_CORRUPT => c"ARCA_ERR_CORRUPT",
        ARCA_ERR_NOT_FOUND => c"ARCA_ERR_NOT_FOUND",
        ARCA_ERR_EXISTS => c"ARCA_ERR_EXISTS",
        ARCA_ERR_INVALID => c"ARCA_ERR_INVALID",
        ARCA_ERR_UNSUPPORTED => c"ARCA_ERR_UNSUPPORTED",
        ARCA_ERR_READ_ONLY => c"ARCA_ERR_READ_ONLY",
        ARCA_ERR_LOCKED => c"ARCA_ERR_LOCKED",
        ARCA_ERR_POISONED => c"ARCA_ERR_POISONED",
        ARCA_ERR_NULL => c"ARCA_ERR_NULL",
        ARCA_ERR_PANIC => c"ARCA_ERR_PANIC",
        ARCA_ERR_NEEDS_RECOVERY => c"ARCA_ERR_NEEDS_RECOVERY",
        ARCA_ERR_OTHER => c"ARCA_ERR_OTHER",
        _ => c"ARCA_ERR_UNKNOWN",
    };
    s.as_ptr()
}

/// The library version, e.g. `"0.1.0"`.
///
/// Ownership: a static string; do not free it.
///
/// ```c
/// printf("arca %s\n", arca_version());
/// ```
#[no_mangle]
pub extern "C" fn arca_version() -> *const c_char {
    const V: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");
    V.as_ptr().cast()
}

/// Release the memory held by the library's free lists; returns the bytes
/// released. Never fails.
///
/// ```c
/// uint64_t freed = arca_gc();
/// ```
#[no_mangle]
pub extern "C" fn arca_gc() -> u64 {
    arca_core::gc() as u64
}
