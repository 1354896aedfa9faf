//! How a dataset is created: [`DatasetOptions`] and [`StorageLayout`], and
//! the dataset message built (and checked) from them, with its layout,
//! chunk shape and fill value chosen.

use crate::error::{Error, Result};
use crate::filter::Filter;
use crate::format::chunk_index::MAX_CHUNK_BYTES;
use crate::format::datatype::Datatype;
use crate::format::external_list::{self, ExternalSegment};
use crate::format::filter_pipeline::PIPELINES;
use crate::format::object_header::{DatasetMeta, FillTime, Layout};
use crate::format::shape::MAX_RANK;
use crate::format::virtual_map::{self, VirtualMapping};
use crate::object::named_type::NamedType;
use crate::object::storage::allocate_contiguous;
use crate::object::vlen::options::{write_fill, VlenOptions};
use crate::pool::lists::EXTENTS;
use crate::store::Store;

/// Chunk size aimed at when chunks are chosen automatically.
const AUTO_CHUNK_BYTES: u64 = 1 << 20;

/// Datasets of fixed shape up to this many bytes are stored compact (in
/// their header) unless a layout is asked for: one page holds the whole
/// object, and reading it is one read.
pub const COMPACT_AUTO_BYTES: u64 = 1024;

/// How a dataset's elements are stored.
///
/// ```
/// use arca::{Datatype, DatasetOptions, File, StorageLayout};
/// let f = File::in_memory().unwrap();
/// let small = f.root().create_dataset("s", &DatasetOptions::new(Datatype::float(8), &[4])).unwrap();
/// assert_eq!(small.layout().unwrap(), StorageLayout::Compact);
/// let o = DatasetOptions::new(Datatype::float(8), &[4]).layout(StorageLayout::Contiguous);
/// let big = f.root().create_dataset("c", &o).unwrap();
/// assert_eq!(big.layout().unwrap(), StorageLayout::Contiguous);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StorageLayout {
    /// The elements live in the dataset's header: for small datasets of
    /// fixed shape (HDF5's compact layout). At most about 4 KiB.
    Compact,
    /// One extent of the file, allocated at the first write.
    Contiguous,
    /// Fixed-shape chunks found through a B-tree; needed for resizing and
    /// filters.
    Chunked,
    /// Elements assembled from selections of other datasets, in this file
    /// or others (HDF5's virtual datasets; see
    /// [`DatasetOptions::virtual_mappings`]). Read-only.
    Virtual,
    /// Elements kept in segments of files outside this one, laid out as
    /// contiguous storage would (HDF5's external raw storage; see
    /// [`DatasetOptions::external`]).
    External,
}

/// How to create a dataset.
///
/// ```
/// use arca::{Datatype, DatasetOptions, File, Filter};
/// let f = File::in_memory().unwrap();
/// let opts = DatasetOptions::new(Datatype::int(4), &[0, 64])
///     .maxshape(&[None, Some(64)])
///     .chunks(&[128, 64])
///     .filters(&[Filter::Shuffle, Filter::Zstd(3)])
///     .fill_value(&(-1i32).to_ne_bytes());
/// let ds = f.root().create_dataset("events", &opts).unwrap();
/// ds.resize(&[10, 64]).unwrap();
/// assert_eq!(ds.read_all::<i32>().unwrap()[0], -1);
/// ```
#[derive(Debug, Clone)]
pub struct DatasetOptions {
    pub(crate) dtype: Datatype,
    shape: Vec<u64>,
    maxshape: Option<Vec<Option<u64>>>,
    chunks: Option<Vec<u64>>,
    filters: Vec<Filter>,
    fill: Option<Vec<u8>>,
    fill_time: FillTime,
    early: bool,
    layout: Option<StorageLayout>,
    vlen: VlenOptions,
    null: bool,
    pub(crate) track_order: bool,
    pub(crate) track_times: bool,
    pub(crate) committed: Option<NamedType>,
    pub(crate) commit_new: bool,
    /// Boxed: most datasets have neither, and options travel by value.
    elsewhere: Option<Box<Elsewhere>>,
}

/// Where the elements of a dataset that keeps none itself come from.
#[derive(Debug, Clone)]
enum Elsewhere {
    /// Assembled from other datasets.
    Virtual(Vec<VirtualMapping>),
    /// Kept in segments of external files.
    External(Vec<ExternalSegment>),
}

impl DatasetOptions {
    /// A dataset of `dtype` and `shape`, of fixed shape and unfiltered
    /// unless more is said: compact up to [`COMPACT_AUTO_BYTES`],
    /// contiguous above.
    pub fn new(dtype: Datatype, shape: &[u64]) -> Self {
        DatasetOptions {
            dtype,
            shape: shape.to_vec(),
            maxshape: None,
            chunks: None,
            filters: vec![],
            fill: None,
            fill_time: FillTime::IfSet,
            early: false,
            layout: None,
            vlen: VlenOptions::default(),
            null: false,
            track_order: false,
            track_times: false,
            committed: None,
            commit_new: false,
            elsewhere: None,
        }
    }

    /// Keep the elements outside the file, in `segments` of other files
    /// taken in order as one row-major run of bytes (HDF5's external raw
    /// storage). The segments must hold the dataset at its largest shape:
    /// only the first dimension may grow, and an unlimited one needs an
    /// unlimited last segment. No chunks or filters; fixed-size types.
    /// Relative names are found as HDF5 finds them (see
    /// [`Dataset::with_external_prefix`]); the files are made at the first
    /// write and written in place, outside the file's transactions.
    ///
    /// ```
    /// use arca::{DatasetOptions, Datatype, ExternalSegment, File, StorageLayout};
    /// let dir = std::env::temp_dir().join(format!("arca-doc-ext-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let raw = dir.join("raw.bin").to_string_lossy().into_owned();
    /// let f = File::in_memory().unwrap();
    /// let o = DatasetOptions::new(Datatype::uint(1), &[6])
    ///     .external(&[ExternalSegment::new(&raw, 10, 4), ExternalSegment::new(&raw, 0, 2)]);
    /// let d = f.root().create_dataset("d", &o).unwrap();
    /// assert_eq!(d.layout().unwrap(), StorageLayout::External);
    /// d.write_all(&[1u8, 2, 3, 4, 5, 6]).unwrap();
    /// assert_eq!(std::fs::read(&raw).unwrap(), [5, 6, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4]);
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    ///
    /// [`Dataset::with_external_prefix`]: crate::Dataset::with_external_prefix
    pub fn external(mut self, segments: &[ExternalSegment]) -> Self {
        self.elsewhere = Some(Box::new(Elsewhere::External(segments.to_vec())));
        self.layout = Some(StorageLayout::External);
        self
    }

    /// Make the dataset with the committed datatype `t` (of the same file,
    /// holding this dataset's type): the dataset records it, and `t` lives
    /// while the dataset does.
    ///
    /// ```
    /// use arca::{DatasetOptions, Datatype, File};
    /// let f = File::in_memory().unwrap();
    /// let t = f.root().commit_type("t", &Datatype::float(4)).unwrap();
    /// let o = DatasetOptions::new(Datatype::float(4), &[2]).committed(&t);
    /// f.root().create_dataset("d", &o).unwrap();
    /// f.root().delete("t").unwrap();
    /// let d = f.root().dataset("d").unwrap();
    /// assert_eq!(d.committed_type().unwrap().unwrap().dtype().unwrap(), Datatype::float(4));
    /// ```
    pub fn committed(mut self, t: &NamedType) -> Self {
        self.committed = Some(t.clone());
        self
    }

    /// Make a virtual dataset: its elements are assembled, at each read,
    /// from the selections of other datasets (in this file or others) the
    /// mappings name, later mappings over earlier ones, the fill value
    /// where none reaches or a source is missing (see
    /// [`VirtualMapping`]). Each mapping's virtual selection is made in
    /// this dataset's shape; a `maxshape` with unlimited axes lets
    /// unlimited mappings grow it with their sources. Read-only; fixed-size
    /// types only.
    ///
    /// ```
    /// use arca::{DatasetOptions, Datatype, File, Region, RegionSelection, Selection, SlabDim, VirtualMapping};
    /// let f = File::in_memory().unwrap();
    /// let src = f.root().create_dataset("src", &DatasetOptions::new(Datatype::int(4), &[4])).unwrap();
    /// src.write_all(&[1i32, 2, 3, 4]).unwrap();
    /// let m = VirtualMapping {
    ///     file: ".".into(),
    ///     dataset: "/src".into(),
    ///     virtual_region: Region::new(vec![6], RegionSelection::Hyperslab(vec![
    ///         SlabDim { start: 1, stride: 1, count: 4, block: 1 },
    ///     ])).unwrap(),
    ///     source_region: Region::new(vec![4], RegionSelection::All).unwrap(),
    /// };
    /// let o = DatasetOptions::new(Datatype::int(4), &[6])
    ///     .fill_value(&(-1i32).to_ne_bytes())
    ///     .virtual_mappings(&[m]);
    /// let v = f.root().create_dataset("v", &o).unwrap();
    /// assert_eq!(v.read_all::<i32>().unwrap(), [-1, 1, 2, 3, 4, -1]);
    /// ```
    pub fn virtual_mappings(mut self, maps: &[VirtualMapping]) -> Self {
        self.elsewhere = Some(Box::new(Elsewhere::Virtual(maps.to_vec())));
        self.layout = Some(StorageLayout::Virtual);
        self
    }

    /// Commit the dataset's type as a new committed datatype of no name,
    /// which the dataset uses (HDF5's anonymous commit): reach it through
    /// [`crate::Dataset::committed_type`], name it with
    /// [`crate::Group::link_type`], make other datasets with it. Ignored
    /// when [`DatasetOptions::committed`] names a type.
    pub fn commit_type(mut self) -> Self {
        self.commit_new = true;
        self
    }

    /// List the dataset's attributes in the order they were created (kept
    /// on reopen), as h5py's `track_order`.
    ///
    /// ```
    /// use arca::{AttrValue, DatasetOptions, Datatype, File};
    /// let f = File::in_memory().unwrap();
    /// let o = DatasetOptions::new(Datatype::float(8), &[3]).track_order(true);
    /// let d = f.root().create_dataset("d", &o).unwrap();
    /// d.attrs().set("z", &AttrValue::scalar(1i64)).unwrap();
    /// d.attrs().set("a", &AttrValue::scalar(2i64)).unwrap();
    /// assert_eq!(d.attrs().names().unwrap(), ["z", "a"]);
    /// ```
    pub fn track_order(mut self, on: bool) -> Self {
        self.track_order = on;
        self
    }

    /// Record when the dataset was made and when its header last changed
    /// (HDF5's `track_times`; off by default, so files of equal content
    /// are equal bytes); read back by [`Dataset::times`](crate::Dataset::times).
    ///
    /// ```
    /// use arca::{DatasetOptions, Datatype, File};
    /// let f = File::in_memory().unwrap();
    /// let o = DatasetOptions::new(Datatype::float(8), &[3]).track_times(true);
    /// let d = f.root().create_dataset("d", &o).unwrap();
    /// assert!(d.times().unwrap().unwrap().created > 0);
    /// ```
    pub fn track_times(mut self, on: bool) -> Self {
        self.track_times = on;
        self
    }

    /// A dataset with a type and no elements at all: a null dataspace
    /// (h5py's `Empty`), as distinct from a zero-length array.
    ///
    /// ```
    /// use arca::{DatasetOptions, Datatype, File};
    /// let f = File::in_memory().unwrap();
    /// let d = f.root().create_dataset("e", &DatasetOptions::empty(Datatype::float(4))).unwrap();
    /// assert!(d.is_null().unwrap());
    /// assert_eq!(d.len().unwrap(), 0);
    /// ```
    pub fn empty(dtype: Datatype) -> Self {
        DatasetOptions {
            null: true,
            ..DatasetOptions::new(dtype, &[])
        }
    }
    /// Store the elements this way rather than as chosen automatically.
    /// `Compact` and `Contiguous` refuse chunks, filters and a maxshape
    /// beyond the shape; `Chunked` without [`DatasetOptions::chunks`]
    /// picks a chunk shape.
    pub fn layout(mut self, layout: StorageLayout) -> Self {
        self.layout = Some(layout);
        self
    }
    /// How the byte vector of a variable-length dataset is stored (chunk
    /// size, filters, space reuse); ignored for other types.
    pub fn vlen(mut self, opts: VlenOptions) -> Self {
        self.vlen = opts;
        self
    }
    /// Reserve (and fill) contiguous storage when the dataset is created,
    /// instead of at its first write.
    pub fn allocate_early(mut self, early: bool) -> Self {
        self.early = early;
        self
    }
    /// Largest extent per dimension; `None` is unlimited. Implies chunking.
    pub fn maxshape(mut self, maxshape: &[Option<u64>]) -> Self {
        self.maxshape = Some(maxshape.to_vec());
        self
    }
    /// Chunk shape; makes the dataset chunked.
    pub fn chunks(mut self, chunks: &[u64]) -> Self {
        self.chunks = Some(chunks.to_vec());
        self
    }
    /// Filter pipeline; implies chunking.
    pub fn filters(mut self, filters: &[Filter]) -> Self {
        self.filters = filters.to_vec();
        self
    }
    /// One element, in native byte order, shown where nothing was written;
    /// for a variable-length type, the element's items (UTF-8 for strings),
    /// kept in the dataset's byte vector (compounds with variable-length
    /// members take none).
    pub fn fill_value(mut self, fill: &[u8]) -> Self {
        self.fill = Some(fill.to_vec());
        self
    }
    /// When HDF5 would write the fill value into new storage (kept for
    /// files going back to HDF5; arca never writes it). With
    /// [`FillTime::Never`] unwritten elements read as zeros, the fill value
    /// only recorded.
    ///
    /// ```
    /// use arca::{DatasetOptions, Datatype, File, FillTime};
    /// let f = File::in_memory().unwrap();
    /// let o = DatasetOptions::new(Datatype::int(4), &[4]).chunks(&[2])
    ///     .fill_value(&7i32.to_ne_bytes()).fill_time(FillTime::Never);
    /// let d = f.root().create_dataset("x", &o).unwrap();
    /// assert_eq!(d.fill_time().unwrap(), FillTime::Never);
    /// assert_eq!(d.fill_value().unwrap(), 7i32.to_ne_bytes());
    /// ```
    pub fn fill_time(mut self, when: FillTime) -> Self {
        self.fill_time = when;
        self
    }
}

/// Refuse a shape whose bytes do not fit a u64 (a file could not hold it,
/// and its element arithmetic would overflow); returns the byte count.
pub(crate) fn check_size(shape: &[u64], elem: u64) -> Result<u64> {
    shape
        .iter()
        .try_fold(elem, |a, &d| a.checked_mul(d))
        .ok_or_else(|| Error::invalid(format!("a dataset of shape {shape:?} is too large")))
}

/// Pick a chunk shape near [`AUTO_CHUNK_BYTES`] by halving the largest dimension.
fn auto_chunks(shape: &[u64], maxdims: &[u64], elem: u64) -> Vec<u64> {
    let mut c: Vec<u64> = shape
        .iter()
        .zip(maxdims)
        .map(|(&s, &m)| {
            if s == 0 {
                if m == u64::MAX {
                    1024
                } else {
                    m.clamp(1, 1024)
                }
            } else {
                s
            }
        })
        .collect();
    while c.iter().product::<u64>() * elem > AUTO_CHUNK_BYTES {
        let i = (0..c.len()).max_by_key(|&i| c[i]).unwrap_or(0);
        if c[i] == 1 {
            break;
        }
        c[i] = c[i].div_ceil(2);
    }
    c
}

pub(crate) fn build_meta(st: &mut Store, o: &DatasetOptions) -> Result<DatasetMeta> {
    o.dtype.validate()?;
    if o.null {
        if o.dtype.has_vlen()
            || o.chunks.is_some()
            || !o.filters.is_empty()
            || o.maxshape.is_some()
            || o.fill.is_some()
            || matches!(o.layout, Some(l) if l != StorageLayout::Compact)
        {
            return Err(Error::invalid(
                "a null dataspace takes no chunks, filters, maxshape, fill value or \
                 variable-length type",
            ));
        }
        return Ok(DatasetMeta {
            dtype: o.dtype.clone(),
            dims: EXTENTS.take(0),
            maxdims: EXTENTS.take(0),
            layout: Layout::Compact(vec![]),
            filters: PIPELINES.take(0),
            fill: None,
            fill_time: o.fill_time,
            vlen: None,
            null: true,
        });
    }
    let rank = o.shape.len();
    if rank > MAX_RANK {
        return Err(Error::invalid(format!(
            "rank {rank} above the limit {MAX_RANK}"
        )));
    }
    let elem = o.dtype.size() as u64;
    let maxdims: Vec<u64> = match &o.maxshape {
        None => o.shape.clone(),
        Some(m) if m.len() == rank => m.iter().map(|x| x.unwrap_or(u64::MAX)).collect(),
        Some(_) => return Err(Error::invalid("maxshape must have one entry per dimension")),
    };
    if o.shape.iter().zip(&maxdims).any(|(s, m)| s > m) {
        return Err(Error::invalid("shape exceeds maxshape"));
    }
    let bytes = check_size(&o.shape, elem)?;
    Filter::validate_pipeline(&o.filters)?;
    // The records of variable-length data are arca's own, so an HDF5
    // pipeline over them can only be of filters that code any bytes.
    let any_bytes = |f: &Filter| matches!(f, Filter::Hdf5(h) if h.codes_any_bytes());
    if Filter::is_hdf5(&o.filters) && o.dtype.has_vlen() && !o.filters.iter().all(any_bytes) {
        return Err(Error::invalid(
            "variable-length data takes arca's own filters, or HDF5's that code any bytes \
             (deflate, shuffle, fletcher32, lzf, blosc, lz4, bitshuffle, zstd, blosc2)",
        ));
    }
    if o.layout == Some(StorageLayout::Virtual) {
        return build_virtual(st, o, &maxdims);
    }
    if o.layout == Some(StorageLayout::External) {
        return build_external(st, o, &maxdims);
    }
    let needs_chunks = o.chunks.is_some() || !o.filters.is_empty() || maxdims != o.shape;
    let chunked = needs_chunks || o.layout == Some(StorageLayout::Chunked);
    if needs_chunks && matches!(o.layout, Some(l) if l != StorageLayout::Chunked) {
        return Err(Error::invalid(
            "chunks, filters and a maxshape beyond the shape need the chunked layout",
        ));
    }
    // The fill value in the file's byte order. A variable-length one goes
    // to the vector once it exists (see `vlen::fill`).
    let mut vlen_fill = None;
    let fill = match &o.fill {
        None => None,
        Some(_) if o.dtype.nests_vlen() => {
            return Err(Error::invalid(
                "variable-length values holding more variable-length values take no fill \
                 value (unwritten elements are empty)",
            ))
        }
        Some(f) if o.dtype.is_vlen() => {
            vlen_fill = Some(f.clone());
            None
        }
        // An all-zero record is the empty member; no other fill is kept.
        Some(_) if o.dtype.has_vlen() => {
            return Err(Error::invalid(
                "compounds with variable-length members take no fill value (unwritten \
                 elements have empty members)",
            ))
        }
        Some(f) => Some(stored_fill(o, f)?),
    };
    // A compact header holds the elements beside the type, the shape and
    // the fill value; with a wide compound or a large fill they may not
    // fit one page, and then the automatic choice is contiguous.
    let beside = o.dtype.encoded_len() as u64
        + fill.as_ref().map_or(0, |f| f.len() as u64)
        + 96
        + 16 * rank as u64;
    let fits_header = bytes.saturating_add(beside) <= crate::pager::PAGE_SIZE as u64;
    let compact = !chunked
        && match o.layout {
            Some(StorageLayout::Compact) => {
                if o.dtype.has_vlen() {
                    return Err(Error::invalid(
                        "a variable-length dataset cannot be compact",
                    ));
                }
                if !fits_header {
                    return Err(Error::invalid(format!(
                        "a compact dataset keeps its {bytes} bytes of elements in its \
                         header, beside about {beside} bytes of type, shape and fill \
                         value; together they must fit 4096 bytes"
                    )));
                }
                true
            }
            Some(_) => false,
            None => !o.dtype.has_vlen() && bytes <= COMPACT_AUTO_BYTES && fits_header,
        };
    let layout = if compact {
        let n = usize::try_from(bytes)
            .ok()
            .filter(|&b| b < crate::pager::PAGE_SIZE)
            .ok_or_else(|| Error::invalid("a compact dataset holds less than 4 KiB"))?;
        // Unwritten elements read as the fill value, as in other layouts
        // (zeros when it is never written).
        Layout::Compact(match &fill {
            Some(f) if o.fill_time != FillTime::Never => {
                f.iter().copied().cycle().take(n).collect()
            }
            _ => vec![0; n],
        })
    } else if chunked {
        let chunk = match &o.chunks {
            Some(c) => c.clone(),
            None => auto_chunks(&o.shape, &maxdims, elem),
        };
        if chunk.len() != rank || chunk.contains(&0) {
            return Err(Error::invalid("chunks must be positive, one per dimension"));
        }
        if rank == 0 {
            return Err(Error::invalid("a scalar dataset cannot be chunked"));
        }
        let bytes = chunk.iter().try_fold(elem, |a, &c| a.checked_mul(c));
        if bytes.is_none_or(|b| b > MAX_CHUNK_BYTES) {
            return Err(Error::invalid("chunk larger than 2 GiB"));
        }
        Layout::Chunked {
            chunk: EXTENTS.take_copy(&chunk),
            index: 0,
        }
    } else {
        Layout::Contiguous {
            addr: 0,
            size: bytes,
        }
    };
    let mut vlen = if o.dtype.has_vlen() {
        Some(o.vlen.build(&o.dtype)?)
    } else {
        None
    };
    let fill = match (vlen_fill, vlen.as_mut()) {
        (Some(items), Some(vm)) => Some(write_fill(st, vm, &o.dtype, &items)?),
        _ => fill,
    };
    let fill = DatasetMeta::make_fill(st, fill)?;
    let mut meta = DatasetMeta {
        dtype: o.dtype.clone(),
        dims: EXTENTS.take_copy(&o.shape),
        maxdims: EXTENTS.take_copy(&maxdims),
        layout,
        filters: PIPELINES.take_copy(&o.filters),
        fill,
        fill_time: o.fill_time,
        vlen,
        null: false,
    };
    if let Layout::Contiguous { size, .. } = meta.layout {
        if o.early && size > 0 {
            let fill = meta.read_fill_bytes(st)?;
            let addr = allocate_contiguous(st, size, &fill, false)?;
            meta.layout = Layout::Contiguous { addr, size };
        }
    }
    Ok(meta)
}

/// A fixed-size fill value as stored: one element, in the type's byte order.
fn stored_fill(o: &DatasetOptions, f: &[u8]) -> Result<Vec<u8>> {
    if f.len() != o.dtype.size() {
        return Err(Error::invalid("fill value must be exactly one element"));
    }
    let mut f = f.to_vec();
    if o.dtype.needs_swap() {
        o.dtype.swap(&mut f);
    }
    Ok(f)
}

/// The dataset message of a virtual dataset: its mappings checked and
/// written to a blob (none for no mappings).
fn build_virtual(st: &mut Store, o: &DatasetOptions, maxdims: &[u64]) -> Result<DatasetMeta> {
    let Some(Elsewhere::Virtual(maps)) = o.elsewhere.as_deref() else {
        return Err(Error::invalid(
            "the virtual layout needs mappings: DatasetOptions::virtual_mappings",
        ));
    };
    if o.dtype.has_vlen() {
        return Err(Error::invalid(
            "a virtual dataset holds fixed-size elements, not variable-length ones",
        ));
    }
    if o.chunks.is_some() || !o.filters.is_empty() {
        return Err(Error::invalid(
            "a virtual dataset takes no chunks or filters: its elements are its sources'",
        ));
    }
    virtual_map::validate(maps, &o.shape)?;
    let fill = o.fill.as_deref().map(|f| stored_fill(o, f)).transpose()?;
    let layout = if maps.is_empty() {
        Layout::Virtual { addr: 0, len: 0 }
    } else {
        let data = virtual_map::encode(maps);
        Layout::Virtual {
            addr: st.write_blob(&data)?,
            len: data.len() as u64,
        }
    };
    Ok(DatasetMeta {
        dtype: o.dtype.clone(),
        dims: EXTENTS.take_copy(&o.shape),
        maxdims: EXTENTS.take_copy(maxdims),
        layout,
        filters: PIPELINES.take(0),
        fill: DatasetMeta::make_fill(st, fill)?,
        fill_time: o.fill_time,
        vlen: None,
        null: false,
    })
}

/// The dataset message of an external dataset: its segment list checked
/// against its shape and written to a blob.
fn build_external(st: &mut Store, o: &DatasetOptions, maxdims: &[u64]) -> Result<DatasetMeta> {
    let Some(Elsewhere::External(segs)) = o.elsewhere.as_deref() else {
        return Err(Error::invalid(
            "the external layout needs segments: DatasetOptions::external",
        ));
    };
    if o.dtype.has_vlen() {
        return Err(Error::invalid(
            "an external dataset holds fixed-size elements, not variable-length ones",
        ));
    }
    if o.chunks.is_some() || !o.filters.is_empty() {
        return Err(Error::invalid(
            "external storage is contiguous: it takes no chunks or filters",
        ));
    }
    external_list::validate(segs, &o.shape, maxdims, o.dtype.size() as u64)?;
    let fill = o.fill.as_deref().map(|f| stored_fill(o, f)).transpose()?;
    let data = external_list::encode(segs);
    Ok(DatasetMeta {
        dtype: o.dtype.clone(),
        dims: EXTENTS.take_copy(&o.shape),
        maxdims: EXTENTS.take_copy(maxdims),
        layout: Layout::External {
            addr: st.write_blob(&data)?,
            len: data.len() as u64,
        },
        filters: PIPELINES.take(0),
        fill: DatasetMeta::make_fill(st, fill)?,
        fill_time: o.fill_time,
        vlen: None,
        null: false,
    })
}
