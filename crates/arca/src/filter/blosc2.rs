//! The blosc2 filter (HDF5 id 32026): each chunk a Blosc2 frame, read and
//! written by c-blosc2 through `arca-blosc2` (the only place that calls
//! it, so this crate stays free of unsafe code).
//!
//! The filter's client-data values: filter version, block size, type size,
//! chunk bytes (from its `set_local`), then level, shuffle (0 none, 1 byte,
//! 2 bit) and codec (0 blosclz, 1 lz4, 2 lz4hc, 4 zlib, 5 zstd; all read
//! and written); for chunks of rank 2 to 8 also the rank and the chunk's
//! shape, and such chunks are stored as B2ND arrays. Chunks written here
//! are frames of one Blosc2 chunk, which HDF5's filter reads whatever the
//! rank.

use arca_blosc2::Blosc2Error;

/// Why a frame could not be read: a typed message, and whether the codec
/// is missing (as opposed to damage).
pub(super) enum Failure {
    Corrupt(String),
    Codec(String),
}

fn failure(e: Blosc2Error) -> Failure {
    match e {
        Blosc2Error::Corrupt(s) => Failure::Corrupt(s),
        Blosc2Error::Codec(s) => Failure::Codec(s),
    }
}

/// Decode a frame; `limit` bounds its size.
pub(super) fn decode(input: &[u8], limit: usize) -> Result<Vec<u8>, Failure> {
    arca_blosc2::decode_frame(input, limit).map_err(failure)
}

/// Encode a chunk with the filter's settings.
pub(super) fn encode(p: &[u32], elem: usize, plain: &[u8]) -> Result<Vec<u8>, Failure> {
    let typesize = match p.get(2).copied().unwrap_or(elem as u32) as usize {
        t if (1..=255).contains(&t) => t,
        _ => 1,
    };
    let blocksize = p.get(1).copied().unwrap_or(0) as usize;
    let level = p.get(4).copied().unwrap_or(5).min(9) as u8;
    let shuffle = p.get(5).copied().unwrap_or(1).min(2) as u8;
    let codec = p.get(6).copied().unwrap_or(0);
    let codec =
        u8::try_from(codec).map_err(|_| Failure::Codec(format!("blosc2: codec {codec}")))?;
    arca_blosc2::encode_frame(plain, typesize, level, shuffle, codec, blocksize).map_err(failure)
}
