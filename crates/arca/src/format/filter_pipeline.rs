//! The filter pipeline message: which filters a chunked dataset's (or a
//! byte vector's) chunks go through, in order.
//!
//! ```text
//! +0  u8   n          number of filters (at most 32)
//! +1  n × { u8 id, i32 level }
//!          id: 1 shuffle, 2 deflate (level 0–9), 3 zstd (level −7–22), 4 lz4
//!          id 5: a filter of HDF5's, kept as HDF5 recorded it; `level` is
//!          the length L of what follows:
//!            u16 HDF5 filter id, u16 flags (bit 0: optional),
//!            u8 name length, name (UTF-8), u16 m, m × u32 parameters
//! ```
//! A pipeline is either arca's own (at most 8 filters, at most one
//! compressor; levels are checked like the creation options) or HDF5's
//! (only id 5, at most 32 filters: HDF5's limit). HDF5 pipelines come from
//! imported files whose chunks are kept exactly as stored; their chunks may
//! carry HDF5's per-filter skip mask (bit i: filter i skipped).
//!
//! A chunk's mask (kept in its chunk-index entry) is 0 when every filter
//! was applied and [`MASK_UNFILTERED`] when the chunk is stored unfiltered.

use crate::error::{Error, Result};
use crate::format::codec::{Reader, Writer};
use crate::pool::ArrayList;

/// The chunk mask (in a chunk-index entry) of a chunk stored with every
/// filter skipped, because the filters did not shrink it.
pub(crate) const MASK_UNFILTERED: u32 = u32::MAX;

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
#[derive(Debug, Clone, PartialEq, Eq)]
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
    /// A filter of HDF5's, as an HDF5 file records it: chunks imported
    /// from HDF5 through a pipeline arca does not share are kept exactly
    /// as stored, and exported back unchanged. Decoded where arca has the
    /// codec (see [`Hdf5Filter::decodable`]).
    Hdf5(Hdf5Filter),
}

/// One stage of an HDF5 filter pipeline.
///
/// ```
/// use arca::{Filter, Hdf5Filter};
/// let f = Hdf5Filter::new(32000, true, "lzf", &[4, 261, 4000]);
/// assert!(f.decodable());
/// assert_eq!(Filter::Hdf5(f).name(), "lzf");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hdf5Filter {
    /// HDF5's filter id (1 deflate, 2 shuffle, 3 fletcher32, 32000 lzf, ...).
    pub id: u16,
    /// HDF5's flags; bit 0 set: optional (a chunk may skip it).
    pub flags: u16,
    /// The name HDF5 recorded (may be empty).
    pub label: String,
    /// The filter's client-data values.
    pub params: Vec<u32>,
}

/// HDF5 filter ids arca knows by name.
const HDF5_NAMES: &[(u16, &str)] = &[
    (1, "deflate"),
    (2, "shuffle"),
    (3, "fletcher32"),
    (4, "szip"),
    (5, "nbit"),
    (6, "scaleoffset"),
    (307, "bzip2"),
    (32000, "lzf"),
    (32001, "blosc"),
    (32004, "lz4"),
    (32008, "bitshuffle"),
    (32015, "zstd"),
    (32017, "sz"),
    (32026, "blosc2"),
];

/// HDF5 filters whose stored bytes arca can decode and encode.
const HDF5_CODECS: &[u16] = &[1, 2, 3, 4, 5, 6, 32000, 32001, 32004, 32008, 32015, 32026];

/// Most client-data values an HDF5 filter may carry here.
const MAX_PARAMS: usize = 4096;

impl Hdf5Filter {
    /// An HDF5 filter; `optional` sets HDF5's optional flag.
    pub fn new(id: u16, optional: bool, label: &str, params: &[u32]) -> Self {
        Hdf5Filter {
            id,
            flags: u16::from(optional),
            label: label.to_string(),
            params: params.to_vec(),
        }
    }

    /// Whether a chunk may skip this filter (HDF5's optional flag).
    pub fn optional(&self) -> bool {
        self.flags & 1 != 0
    }

    /// The filter's usual name, or the one recorded, or `filter <id>`.
    pub fn name(&self) -> String {
        match HDF5_NAMES.iter().find(|(i, _)| *i == self.id) {
            Some((_, n)) => (*n).to_string(),
            None if !self.label.is_empty() => self.label.clone(),
            None => format!("filter {}", self.id),
        }
    }

    /// Whether arca can decode (and encode) this filter's bytes itself:
    /// deflate, shuffle, fletcher32, szip, n-bit, scale-offset, lzf, blosc,
    /// lz4, bitshuffle, zstd and blosc2 (every codec of blosc's and
    /// blosc2's). Chunks through any other filter are kept and copied, and
    /// reading them is an [`crate::Error::Unsupported`] naming the filter.
    pub fn decodable(&self) -> bool {
        HDF5_CODECS.contains(&self.id)
    }

    /// Whether the filter codes any bytes, whatever the element type they
    /// hold: every decodable one but szip, n-bit and scale-offset, which
    /// code numbers as the type HDF5 records in their values describes.
    /// Only such filters can compress the records of a variable-length
    /// dataset (arca's own records, not HDF5's).
    ///
    /// ```
    /// use arca::Hdf5Filter;
    /// assert!(Hdf5Filter::new(32001, true, "blosc", &[2, 2, 4, 0, 5, 1, 0]).codes_any_bytes());
    /// assert!(!Hdf5Filter::new(6, false, "", &[0, 0]).codes_any_bytes());
    /// ```
    pub fn codes_any_bytes(&self) -> bool {
        self.decodable() && !matches!(self.id, 4..=6)
    }

    fn encode(&self, w: &mut Writer) {
        let name = self.label.as_bytes();
        let name = &name[..name.len().min(255)];
        let len = 2 + 2 + 1 + name.len() + 2 + 4 * self.params.len();
        w.u8(5).i32(len as i32);
        w.u16(self.id)
            .u16(self.flags)
            .u8(name.len() as u8)
            .bytes(name);
        w.u16(self.params.len() as u16);
        for &p in &self.params {
            w.u32(p);
        }
    }

    fn decode(r: &mut Reader, len: i32) -> Result<Self> {
        let start = r.remaining();
        let id = r.u16()?;
        let flags = r.u16()?;
        let n = r.u8()? as usize;
        let label = std::str::from_utf8(r.bytes(n)?)
            .map_err(|_| r.corrupt(format!("HDF5 filter {id}: name is not UTF-8")))?
            .to_string();
        let m = r.u16()? as usize;
        if m > MAX_PARAMS {
            return Err(r.corrupt(format!("HDF5 filter {id} with {m} parameters")));
        }
        let params = (0..m).map(|_| r.u32()).collect::<Result<Vec<_>>>()?;
        if i64::from(len) != (start - r.remaining()) as i64 {
            return Err(r.corrupt(format!(
                "HDF5 filter {id}: record of {len} bytes holds {}",
                start - r.remaining()
            )));
        }
        if flags & !1 != 0 {
            return Err(r.corrupt(format!("HDF5 filter {id} with flags {flags:#x}")));
        }
        Ok(Hdf5Filter {
            id,
            flags,
            label,
            params,
        })
    }
}

impl Filter {
    /// The filter's name as used by the Python and command-line interfaces.
    pub fn name(&self) -> std::borrow::Cow<'static, str> {
        match self {
            Filter::Shuffle => "shuffle".into(),
            Filter::Deflate(_) => "gzip".into(),
            Filter::Zstd(_) => "zstd".into(),
            Filter::Lz4 => "lz4".into(),
            Filter::Hdf5(h) => h.name().into(),
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
            Filter::Hdf5(_) => 5,
        }
    }

    /// Whether `filters` is an HDF5 pipeline (every stage HDF5's).
    pub(crate) fn is_hdf5(filters: &[Filter]) -> bool {
        matches!(filters.first(), Some(Filter::Hdf5(_)))
    }

    /// Whether `mask` may be recorded for a chunk of this pipeline: 0 (every
    /// filter applied) or `MASK_UNFILTERED` (none); in an HDF5 pipeline also any
    /// set of skipped filters (HDF5 records a skip for any filter a chunk
    /// was written past, optional or not).
    pub(crate) fn mask_valid(filters: &[Filter], mask: u32) -> bool {
        mask == 0
            || mask == MASK_UNFILTERED
            || (Self::is_hdf5(filters) && u64::from(mask) < 1u64 << filters.len())
    }

    /// Whether a chunk stored with `mask` holds its elements as they are.
    pub(crate) fn unfiltered(filters: &[Filter], mask: u32) -> bool {
        filters.is_empty()
            || mask == MASK_UNFILTERED
            || (Self::is_hdf5(filters)
                && filters.len() < 32
                && u64::from(mask) == (1u64 << filters.len()) - 1)
    }

    pub(crate) fn validate_pipeline(filters: &[Filter]) -> Result<()> {
        if Self::is_hdf5(filters) {
            if filters.len() > 32 {
                return Err(Error::invalid("more than 32 HDF5 filters"));
            }
            for f in filters {
                match f {
                    Filter::Hdf5(h) if h.params.len() > MAX_PARAMS => {
                        return Err(Error::invalid(format!(
                            "HDF5 filter {} with {} parameters",
                            h.id,
                            h.params.len()
                        )))
                    }
                    Filter::Hdf5(h) if h.flags & !1 != 0 => {
                        return Err(Error::invalid(format!(
                            "HDF5 filter {} with flags {:#x} (only bit 0, optional, is kept)",
                            h.id, h.flags
                        )))
                    }
                    Filter::Hdf5(_) => {}
                    _ => {
                        return Err(Error::invalid(
                            "an HDF5 filter pipeline cannot also hold arca's own filters",
                        ))
                    }
                }
            }
            return Ok(());
        }
        if filters.iter().any(|f| matches!(f, Filter::Hdf5(_))) {
            return Err(Error::invalid(
                "an HDF5 filter pipeline cannot also hold arca's own filters",
            ));
        }
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
            match f {
                Filter::Hdf5(h) => h.encode(w),
                f => {
                    w.u8(f.id()).i32(f.level().unwrap_or(0));
                }
            }
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
        if n > 32 {
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
                5 => Filter::Hdf5(Hdf5Filter::decode(r, level)?),
                other => return Err(Error::Unsupported(format!("filter id {other}"))),
            });
        }
        Filter::validate_pipeline(out).map_err(|e| r.corrupt(e.to_string()))?;
        Ok(())
    }
}
