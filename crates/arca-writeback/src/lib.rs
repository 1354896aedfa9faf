//! Start writing a file's dirty pages to disk without waiting for them.
//!
//! Linux offers this as `sync_file_range(2)` with `SYNC_FILE_RANGE_WRITE`;
//! neither the standard library nor nix nor rustix wraps it, and calling it
//! takes `unsafe`. It lives here, alone, so that the `arca` crate can
//! forbid unsafe code outright. Elsewhere than Linux the call does nothing.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

use std::fs::File;
use std::io;

/// Ask the kernel to start writing back the dirty pages of `len` bytes of
/// `file` from `offset` (`len` 0: to the end of the file), without waiting.
/// Only a hint: no data is made durable by it, and a later `fsync` still
/// must run; it only finds less left to do.
///
/// ```
/// use std::io::Write;
/// let mut f = tempfile::tempfile().unwrap();
/// f.write_all(b"abc").unwrap();
/// arca_writeback::start_writeback(&f, 0, 0).unwrap();
/// ```
///
/// # Errors
/// What the system call reports (a bad descriptor, a range past what the
/// kernel accepts).
pub fn start_writeback(file: &File, offset: u64, len: u64) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let too_far = || io::Error::from(io::ErrorKind::InvalidInput);
        let offset = libc::off64_t::try_from(offset).map_err(|_| too_far())?;
        let len = libc::off64_t::try_from(len).map_err(|_| too_far())?;
        // SAFETY: the call takes a descriptor and three integers and touches
        // no memory of ours; `file` is borrowed for the whole call, so the
        // descriptor stays open and is not reused under it.
        let r = unsafe {
            libc::sync_file_range(file.as_raw_fd(), offset, len, libc::SYNC_FILE_RANGE_WRITE)
        };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (file, offset, len);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_too_far_is_refused_not_wrapped() {
        let f = tempfile::tempfile().unwrap();
        if cfg!(target_os = "linux") {
            let e = start_writeback(&f, u64::MAX, 1).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        }
        start_writeback(&f, 0, 0).unwrap();
    }
}
