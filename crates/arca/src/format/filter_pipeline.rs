//! The filter pipeline message: which filters a chunked dataset's (or a
//! byte vector's) chunks go through, in order.
//!
//! ```text
//! +0  u8   n          number of filters (at most 8)
//! +1  n × { u8 id, i32 level }
//!          id: 1 shuffle, 2 deflate (level 0–9), 3 zstd (level −7–22), 4 lz4
//! ```
//! At most one compressor; levels are checked like the creation options.

use crate::error::{Error, Result};
use crate::format::codec::{Reader, Writer};
use crate::pool::ArrayList;

/// Filter pipelines of decoded dataset headers (every dataset call decodes
/// its header again).
pub(crate) static PIPELINES: ArrayList<Filter> = ArrayList::new("filter pipelines");

/// One stage of a chunked dataset's filter pipeline.
///
/// ```
/// use arca::Filter;
/// let pipeline = [Filter::Shuffle, Filter::Zstd(3)];
/// assert_eq!(pipeline[1].name(), "zstd");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filter {
    /// Byte transposition: groups the k-th byte of every element together,
    /// which makes numeric data far more compressible.
    Shuffle,
    /// zlib/deflate at level 0–9.
    Deflate(u32),
    /// Zstandard at level 1–22 (negative levels are fast modes).
    Zstd(i32),
    /// LZ4 block compression.
    Lz4,
}

impl Filter {
    /// The filter's name as used by the Python and command-line interfaces.
    pub fn name(&self) -> &'static str {
        match self {
            Filter::Shuffle => "shuffle",
            Filter::Deflate(_) => "gzip",
            Filter::Zstd(_) => "zstd",
            Filter::Lz4 => "lz4",
        }
    }

    /// The compression level, where the filter has one.
    pub fn level(&self) -> Option<i32> {
        match *self {
            Filter::Deflate(l) => Some(l as i32),
            Filter::Zstd(l) => Some(l),
            _ => None,
        }
    }

    pub(crate) fn id(&self) -> u8 {
        match self {
            Filter::Shuffle => 1,
            Filter::Deflate(_) => 2,
            Filter::Zstd(_) => 3,
            Filter::Lz4 => 4,
        }
    }

    pub(crate) fn validate_pipeline(filters: &[Filter]) -> Result<()> {
        let compressors = filters.iter().filter(|f| **f != Filter::Shuffle).count();
        if compressors > 1 {
            return Err(Error::invalid("at most one compression filter per dataset"));
        }
        if filters.len() > 8 {
            return Err(Error::invalid("too many filters"));
        }
        for f in filters {
            match *f {
                Filter::Deflate(l) if l > 9 => {
                    return Err(Error::invalid(format!("gzip level {l} outside 0..=9")))
                }
                Filter::Zstd(l) if !(-7..=22).contains(&l) => {
                    return Err(Error::invalid(format!("zstd level {l} outside -7..=22")))
                }
                _ => {}
            }
        }
        Ok(())
    }

    pub(crate) fn encode_list(filters: &[Filter], w: &mut Writer) {
        w.u8(filters.len() as u8);
        for f in filters {
            w.u8(f.id()).i32(f.level().unwrap_or(0));
        }
    }

    pub(crate) fn decode_list(r: &mut Reader) -> Result<Vec<Filter>> {
        let mut out = Vec::new();
        Self::decode_list_into(r, &mut out)?;
        Ok(out)
    }

    /// [`Filter::decode_list`] into `out` (empty; it may be a pooled vector).
    pub(crate) fn decode_list_into(r: &mut Reader, out: &mut Vec<Filter>) -> Result<()> {
        let n = r.u8()?;
        if n > 8 {
            return Err(r.corrupt(format!("{n} filters")));
        }
        for _ in 0..n {
            let id = r.u8()?;
            let level = r.i32()?;
            if matches!(id, 1 | 4) && level != 0 {
                return Err(r.corrupt(format!("filter {id} with level {level}")));
            }
            out.push(match id {
                1 => Filter::Shuffle,
                2 => Filter::Deflate(u32::try_from(level).unwrap_or(u32::MAX)),
                3 => Filter::Zstd(level),
                4 => Filter::Lz4,
                other => return Err(Error::Unsupported(format!("filter id {other}"))),
            });
        }
        Filter::validate_pipeline(out).map_err(|e| r.corrupt(e.to_string()))?;
        Ok(())
    }
}
