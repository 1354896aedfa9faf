//! c-blosc2's two zlib calls (`compress2`, `uncompress`; renamed by
//! `csrc/zlib/zlib.h`), answered with flate2, the deflate the rest of arca
//! uses: Blosc2 blocks coded with zlib read and write without a C zlib.
//!
//! The contract is zlib's: a zlib stream (header, deflate data, Adler-32)
//! in and out, `*dest_len` in bytes of room and out bytes written; `Z_OK`
//! for a whole stream, `Z_BUF_ERROR` when the room is short, `Z_DATA_ERROR`
//! for damaged input.

use std::os::raw::{c_int, c_ulong};

use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};

const Z_OK: c_int = 0;
const Z_DATA_ERROR: c_int = -3;
const Z_BUF_ERROR: c_int = -5;

/// The buffers of one call, or `None` for null pointers or lengths that do
/// not fit in memory.
///
/// # Safety
/// Non-null `dest` must be writable for `*dest_len` bytes and non-null
/// `source` readable for `source_len` bytes, neither aliasing the other.
unsafe fn buffers<'a>(
    dest: *mut u8,
    dest_len: *mut c_ulong,
    source: *const u8,
    source_len: c_ulong,
) -> Option<(&'a mut [u8], &'a [u8])> {
    if dest.is_null() || dest_len.is_null() || (source.is_null() && source_len != 0) {
        return None;
    }
    // SAFETY: checked non-null; the caller vouches for the lengths.
    unsafe {
        let room = usize::try_from(*dest_len).ok()?;
        let n = usize::try_from(source_len).ok()?;
        let src: &[u8] = if n == 0 {
            &[]
        } else {
            std::slice::from_raw_parts(source, n)
        };
        Some((std::slice::from_raw_parts_mut(dest, room), src))
    }
}

/// zlib's `compress2`: `source` as a zlib stream at `level` (0-9).
///
/// # Safety
/// As zlib's: `dest` writable for `*dest_len` bytes, `source` readable for
/// `source_len`.
#[no_mangle]
pub unsafe extern "C" fn arca_blosc2_zlib_compress2(
    dest: *mut u8,
    dest_len: *mut c_ulong,
    source: *const u8,
    source_len: c_ulong,
    level: c_int,
) -> c_int {
    // SAFETY: passed on from the caller.
    let Some((out, src)) = (unsafe { buffers(dest, dest_len, source, source_len) }) else {
        return Z_BUF_ERROR;
    };
    let level = u32::try_from(level).map_or(Compression::default(), |l| Compression::new(l.min(9)));
    let mut c = Compress::new(level, true);
    match c.compress(src, out, FlushCompress::Finish) {
        Ok(Status::StreamEnd) => {
            // SAFETY: checked non-null in `buffers`.
            unsafe { *dest_len = c.total_out() as c_ulong };
            Z_OK
        }
        _ => Z_BUF_ERROR,
    }
}

/// zlib's `uncompress`: the zlib stream `source` into `dest`.
///
/// # Safety
/// As zlib's: `dest` writable for `*dest_len` bytes, `source` readable for
/// `source_len`.
#[no_mangle]
pub unsafe extern "C" fn arca_blosc2_zlib_uncompress(
    dest: *mut u8,
    dest_len: *mut c_ulong,
    source: *const u8,
    source_len: c_ulong,
) -> c_int {
    // SAFETY: passed on from the caller.
    let Some((out, src)) = (unsafe { buffers(dest, dest_len, source, source_len) }) else {
        return Z_DATA_ERROR;
    };
    let room = out.len();
    let mut d = Decompress::new(true);
    match d.decompress(src, out, FlushDecompress::Finish) {
        Ok(Status::StreamEnd) => {
            // SAFETY: checked non-null in `buffers`.
            unsafe { *dest_len = d.total_out() as c_ulong };
            Z_OK
        }
        Ok(_) if d.total_out() as usize == room => Z_BUF_ERROR,
        _ => Z_DATA_ERROR,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_round_trip_and_damage_and_short_room_are_refused() {
        let plain: Vec<u8> = (0..50_000u32).map(|i| (i % 251 / 7) as u8).collect();
        let mut packed = vec![0u8; plain.len()];
        let mut n = packed.len() as c_ulong;
        let rc = unsafe {
            arca_blosc2_zlib_compress2(
                packed.as_mut_ptr(),
                &mut n,
                plain.as_ptr(),
                plain.len() as c_ulong,
                5,
            )
        };
        assert_eq!(rc, Z_OK);
        packed.truncate(n as usize);
        // A stream any zlib reads (flate2's reader checks the same format).
        let mut back = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::ZlibDecoder::new(&packed[..]), &mut back)
            .unwrap();
        assert_eq!(back, plain);
        let mut out = vec![0u8; plain.len()];
        let mut m = out.len() as c_ulong;
        let rc =
            unsafe { arca_blosc2_zlib_uncompress(out.as_mut_ptr(), &mut m, packed.as_ptr(), n) };
        assert_eq!((rc, m as usize), (Z_OK, plain.len()));
        assert_eq!(out, plain);
        let mut m = 100 as c_ulong;
        let rc =
            unsafe { arca_blosc2_zlib_uncompress(out.as_mut_ptr(), &mut m, packed.as_ptr(), n) };
        assert_eq!(rc, Z_BUF_ERROR);
        let mut bad = packed.clone();
        bad[n as usize / 2] ^= 0x55;
        let mut m = out.len() as c_ulong;
        let rc = unsafe { arca_blosc2_zlib_uncompress(out.as_mut_ptr(), &mut m, bad.as_ptr(), n) };
        assert_ne!(rc, Z_OK);
        let mut tiny = [0u8; 8];
        let mut t = tiny.len() as c_ulong;
        let rc = unsafe {
            arca_blosc2_zlib_compress2(
                tiny.as_mut_ptr(),
                &mut t,
                plain.as_ptr(),
                plain.len() as c_ulong,
                5,
            )
        };
        assert_eq!(rc, Z_BUF_ERROR);
    }
}
