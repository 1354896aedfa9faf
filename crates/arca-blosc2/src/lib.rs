//! Blosc2 frames through c-blosc2, behind a safe interface.
//!
//! HDF5's blosc2 filter (id 32026) stores each chunk as a Blosc2 *frame*
//! (a super-chunk serialised with its metalayers): chunks of rank 2 to 8 as
//! a B2ND array (the chunk cut into n-dimensional blocks), others as a
//! frame of one Blosc2 chunk. Reading one takes the frame parser, the
//! codecs and the B2ND layout of c-blosc2; calling it takes `unsafe`, so it
//! lives here, alone, and the `arca` crate forbids unsafe code outright.
//!
//! c-blosc2 is compiled here (see `build.rs`) against the zstd of
//! `zstd-sys` and the lz4 of `lz4-sys`, the ones the rest of arca links, and
//! its zlib calls are answered by flate2 (see [`zlib`]): every codec a
//! Blosc2 frame names (blosclz, lz4, lz4hc, zlib, zstd) reads and writes,
//! and each of those libraries is in the program once. A frame naming any
//! other codec is refused by name ([`Blosc2Error::Codec`]), never misread.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::Once;

// Linked for their symbols only: c-blosc2 calls zstd and lz4 through them.
use lz4_sys as _;
use zstd_sys as _;

mod zlib;

/// Why a frame could not be read or written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Blosc2Error {
    /// The bytes are not a frame c-blosc2 reads, or do not decode to the
    /// size asked for.
    Corrupt(String),
    /// The frame's blocks went through a codec this build lacks.
    Codec(String),
}

impl std::fmt::Display for Blosc2Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Blosc2Error::Corrupt(s) | Blosc2Error::Codec(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for Blosc2Error {}

/// c-blosc2's super-chunk, handled only through pointers.
#[repr(C)]
struct RawSchunk {
    _opaque: [u8; 0],
}
/// A B2ND array, handled only through pointers.
#[repr(C)]
struct RawB2nd {
    _opaque: [u8; 0],
}

extern "C" {
    fn blosc2_init();
    fn blosc2_schunk_from_buffer(cframe: *mut u8, len: i64, copy: bool) -> *mut RawSchunk;
    fn blosc2_schunk_free(schunk: *mut RawSchunk) -> c_int;
    fn blosc2_schunk_decompress_chunk(
        schunk: *mut RawSchunk,
        nchunk: i64,
        dest: *mut c_void,
        nbytes: i32,
    ) -> c_int;
    fn blosc2_schunk_append_buffer(schunk: *mut RawSchunk, src: *const c_void, nbytes: i32) -> i64;
    fn blosc2_schunk_to_buffer(
        schunk: *mut RawSchunk,
        cframe: *mut *mut u8,
        needs_free: *mut bool,
    ) -> i64;
    fn b2nd_from_schunk(schunk: *mut RawSchunk, array: *mut *mut RawB2nd) -> c_int;
    fn b2nd_to_cbuffer(array: *const RawB2nd, buffer: *mut c_void, buffersize: i64) -> c_int;
    fn b2nd_free(array: *mut RawB2nd) -> c_int;
    // csrc/glue.c: the super-chunk's fields, read where its layout is known.
    fn arca_blosc2_schunk_info(
        s: *const RawSchunk,
        typesize: *mut i32,
        nbytes: *mut i64,
        nchunks: *mut i64,
        compcode: *mut u8,
    );
    fn arca_blosc2_schunk_meta(
        s: *const RawSchunk,
        name: *const c_char,
        len: *mut i32,
    ) -> *const u8;
    fn arca_blosc2_schunk_new(
        typesize: i32,
        clevel: u8,
        shuffle: u8,
        codec: u8,
        blocksize: i32,
    ) -> *mut RawSchunk;
}

fn init() {
    static INIT: Once = Once::new();
    // SAFETY: blosc2_init sets up the library's global state once, before
    // any other call.
    INIT.call_once(|| unsafe { blosc2_init() });
}

/// Codec names by Blosc2's codec code, for messages.
fn codec_name(code: u8) -> String {
    match code {
        0 => "blosclz".into(),
        1 => "lz4".into(),
        2 => "lz4hc".into(),
        4 => "zlib".into(),
        5 => "zstd".into(),
        c => format!("codec {c}"),
    }
}

/// Whether this build decodes and encodes Blosc2's codec `code`.
pub fn has_codec(code: u8) -> bool {
    matches!(code, 0..=2 | 4 | 5)
}

/// A super-chunk, freed on drop (one read from a frame is dropped before
/// the buffer it reads).
struct Schunk {
    ptr: *mut RawSchunk,
}

impl Drop for Schunk {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from c-blosc2 and is freed once.
        unsafe { blosc2_schunk_free(self.ptr) };
    }
}

/// A super-chunk's item size, bytes, chunk count and codec.
struct Info {
    typesize: i32,
    nbytes: i64,
    nchunks: i64,
    compcode: u8,
}

impl Schunk {
    fn info(&self) -> Info {
        let mut i = Info {
            typesize: 0,
            nbytes: 0,
            nchunks: 0,
            compcode: 0,
        };
        // SAFETY: `ptr` is a live super-chunk; the four outputs are ours.
        unsafe {
            arca_blosc2_schunk_info(
                self.ptr,
                &mut i.typesize,
                &mut i.nbytes,
                &mut i.nchunks,
                &mut i.compcode,
            )
        };
        i
    }

    /// The content of the frame's metalayer named `name`, if it has one.
    fn meta(&self, name: &CStr) -> Option<&[u8]> {
        let mut len = 0i32;
        // SAFETY: `ptr` is a live super-chunk and `name` NUL-terminated;
        // a non-null answer points to `len` bytes of the super-chunk's own,
        // alive as long as it (the borrow of `self`).
        unsafe {
            let p = arca_blosc2_schunk_meta(self.ptr, name.as_ptr(), &mut len);
            if p.is_null() {
                return None;
            }
            Some(std::slice::from_raw_parts(p, usize::try_from(len).ok()?))
        }
    }
}

/// The number of items of a B2ND array from its metalayer (msgpack: an
/// array of version, rank, then the shape as an array of int64).
fn b2nd_items(meta: &[u8]) -> Option<u64> {
    let ndim = usize::from(*meta.get(2)?);
    if ndim == 0 || ndim > 8 || *meta.first()? & 0xf0 != 0x90 || *meta.get(3)? != 0x90 + ndim as u8
    {
        return None;
    }
    let mut items = 1u64;
    for d in 0..ndim {
        let at = 4 + 9 * d;
        let v = meta.get(at..at + 9)?;
        if v[0] != 0xd3 {
            return None;
        }
        let n = i64::from_be_bytes(v[1..9].try_into().ok()?);
        items = items.checked_mul(u64::try_from(n).ok()?)?;
    }
    Some(items)
}

/// The bytes a Blosc2 frame holds (at most `limit`): a B2ND array in C
/// order, else its chunks one after another.
///
/// ```
/// let plain: Vec<u8> = (0..4000u32).flat_map(|i| (i / 3).to_le_bytes()).collect();
/// let frame = arca_blosc2::encode_frame(&plain, 4, 5, 1, 5, 0).unwrap();
/// assert_eq!(arca_blosc2::decode_frame(&frame, plain.len()).unwrap(), plain);
/// assert!(arca_blosc2::decode_frame(&frame, plain.len() - 1).is_err());
/// ```
///
/// # Errors
/// [`Blosc2Error::Corrupt`] for bytes that are not such a frame;
/// [`Blosc2Error::Codec`] for a codec this build lacks.
pub fn decode_frame(frame: &[u8], limit: usize) -> Result<Vec<u8>, Blosc2Error> {
    let bad = |s: &str| Blosc2Error::Corrupt(format!("blosc2: {s}"));
    init();
    // c-blosc2 reads the magic past the header's first bytes and the
    // trailer at its end; a frame shorter than its fixed header is refused
    // here, before any of that.
    if frame.len() < 64 || i64::try_from(frame.len()).is_err() {
        return Err(bad("not a frame"));
    }
    // Declared before the super-chunk, so dropped after it.
    let mut buf = frame.to_vec();
    // SAFETY: `buf` is a live buffer of its length; with copy=false the
    // super-chunk reads it in place and never frees it (c-blosc2 marks
    // such frames not to be freed).
    let ptr = unsafe { blosc2_schunk_from_buffer(buf.as_mut_ptr(), buf.len() as i64, false) };
    if ptr.is_null() {
        return Err(bad("not a frame"));
    }
    let sc = Schunk { ptr };
    let s = sc.info();
    let typesize = u64::try_from(s.typesize).unwrap_or(0);
    let b2nd = sc.meta(c"b2nd").or_else(|| sc.meta(c"caterva"));
    let size = match b2nd {
        Some(m) => b2nd_items(m)
            .and_then(|n| n.checked_mul(typesize))
            .ok_or_else(|| bad("B2ND metalayer unreadable"))?,
        None => u64::try_from(s.nbytes).map_err(|_| bad("negative size"))?,
    };
    if size > limit as u64 || size > i32::MAX as u64 {
        return Err(bad(&format!("frame of {size} bytes, more than {limit}")));
    }
    let expect = size as usize;
    if s.nchunks < 0 || s.nchunks > expect as i64 + 1 {
        return Err(bad(&format!("{} chunks", s.nchunks)));
    }
    if !has_codec(s.compcode) {
        return Err(Blosc2Error::Codec(format!(
            "blosc2: the frame's codec is {}, which this build of c-blosc2 lacks",
            codec_name(s.compcode)
        )));
    }
    let mut out = vec![0u8; expect];
    if b2nd.is_some() {
        let mut arr: *mut RawB2nd = std::ptr::null_mut();
        // SAFETY: the super-chunk is alive; on success the array takes it
        // over (freed with the array), so `sc` must not free it again.
        let rc = unsafe { b2nd_from_schunk(sc.ptr, &mut arr) };
        if rc < 0 || arr.is_null() {
            return Err(bad("B2ND metalayer unreadable"));
        }
        std::mem::forget(sc);
        // SAFETY: `arr` is a live array; `out` has `expect` writable
        // bytes, the size passed, which c-blosc2 checks against the
        // array's own (its items times their size, `expect` itself)
        // before writing.
        let rc = unsafe { b2nd_to_cbuffer(arr, out.as_mut_ptr().cast(), expect as i64) };
        // SAFETY: freed once, with the super-chunk it owns.
        unsafe { b2nd_free(arr) };
        if rc < 0 {
            return Err(bad(&format!("B2ND array does not decode (error {rc})")));
        }
        return Ok(out);
    }
    let mut at = 0usize;
    for i in 0..s.nchunks {
        let room = &mut out[at..];
        // SAFETY: `room` is writable for its length, which c-blosc2 is
        // given and does not write past.
        let n = unsafe {
            blosc2_schunk_decompress_chunk(sc.ptr, i, room.as_mut_ptr().cast(), room.len() as i32)
        };
        if n < 0 {
            return Err(bad(&format!("chunk {i} does not decode (error {n})")));
        }
        at += n as usize;
        if at > expect {
            return Err(bad("decodes past its size"));
        }
    }
    if at != expect {
        return Err(bad(&format!("decodes to {at} bytes, expected {expect}")));
    }
    Ok(out)
}

/// `plain` as a Blosc2 frame of one chunk, as HDF5's blosc2 filter reads
/// it: `typesize`-byte items, compression level `clevel` (0-9), `shuffle`
/// (0 none, 1 byte, 2 bit), codec `codec` (0 blosclz, 1 lz4, 2 lz4hc, 4
/// zlib, 5 zstd) and
/// `blocksize` bytes per block (0: the library's choice).
///
/// # Errors
/// [`Blosc2Error::Codec`] for a codec this build lacks;
/// [`Blosc2Error::Corrupt`] when c-blosc2 refuses the parameters.
pub fn encode_frame(
    plain: &[u8],
    typesize: usize,
    clevel: u8,
    shuffle: u8,
    codec: u8,
    blocksize: usize,
) -> Result<Vec<u8>, Blosc2Error> {
    let bad = |s: String| Blosc2Error::Corrupt(format!("blosc2: {s}"));
    init();
    if !has_codec(codec) {
        return Err(Blosc2Error::Codec(format!(
            "blosc2: codec {} is not in this build of c-blosc2",
            codec_name(codec)
        )));
    }
    let nbytes = i32::try_from(plain.len()).map_err(|_| bad("chunk over 2 GiB".into()))?;
    let typesize = i32::try_from(typesize.clamp(1, 255)).unwrap_or(1);
    let blocksize = i32::try_from(blocksize).unwrap_or(0);
    // SAFETY: plain values in; a null answer is checked.
    let ptr = unsafe {
        arca_blosc2_schunk_new(typesize, clevel.min(9), shuffle.min(2), codec, blocksize)
    };
    if ptr.is_null() {
        return Err(bad("cannot make a super-chunk".into()));
    }
    let sc = Schunk { ptr };
    // SAFETY: `plain` is readable for `nbytes` bytes.
    let rc = unsafe { blosc2_schunk_append_buffer(sc.ptr, plain.as_ptr().cast(), nbytes) };
    if rc < 0 {
        return Err(bad(format!("cannot compress (error {rc})")));
    }
    let mut out: *mut u8 = std::ptr::null_mut();
    let mut needs_free = false;
    // SAFETY: on success `out` points to `len` bytes, owned by us when
    // `needs_free`, else by the super-chunk (alive until `sc` drops).
    let len = unsafe { blosc2_schunk_to_buffer(sc.ptr, &mut out, &mut needs_free) };
    if len < 0 || out.is_null() {
        return Err(bad(format!("cannot serialise the frame (error {len})")));
    }
    // SAFETY: as above: `len` readable bytes at `out`.
    let frame = unsafe { std::slice::from_raw_parts(out, len as usize) }.to_vec();
    if needs_free {
        // SAFETY: c-blosc2 allocated it with malloc and handed it over.
        unsafe { libc::free(out.cast()) };
    }
    Ok(frame)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_roundtrip_and_damage_is_refused() {
        let plain: Vec<u8> = (0..20_000u32).flat_map(|i| (i / 7).to_le_bytes()).collect();
        for codec in [0, 1, 2, 4, 5] {
            for shuffle in 0..=2 {
                let f = encode_frame(&plain, 4, 5, shuffle, codec, 0).unwrap();
                assert!(f.len() < plain.len() / 4);
                assert_eq!(decode_frame(&f, plain.len()).unwrap(), plain);
                assert!(decode_frame(&f, plain.len() - 4).is_err());
                for cut in [0, 10, 63, f.len() / 2, f.len() - 1] {
                    assert!(decode_frame(&f[..cut], plain.len()).is_err(), "cut {cut}");
                }
            }
        }
        assert!(matches!(
            encode_frame(&plain, 4, 5, 1, 3, 0),
            Err(Blosc2Error::Codec(_))
        ));
    }

    #[test]
    fn flipped_bytes_never_crash() {
        let plain: Vec<u8> = (0..5000u32).flat_map(|i| (i % 97).to_le_bytes()).collect();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        // blosclz, lz4, zlib (flate2) and zstd (zstd-sys) blocks, each
        // shuffle.
        let frames: Vec<Vec<u8>> = [0, 1, 4, 5]
            .iter()
            .flat_map(|&c| (0..3).map(move |s| (c, s)))
            .map(|(c, s)| encode_frame(&plain, 4, 5, s, c, 0).unwrap())
            .collect();
        for k in 0..8000 {
            let f = &frames[k % frames.len()];
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let mut g = f.clone();
            let i = (x as usize) % g.len();
            g[i] ^= (x >> 40) as u8 | 1;
            if let Ok(v) = decode_frame(&g, plain.len()) {
                assert_eq!(v.len(), plain.len());
            }
        }
    }
}
