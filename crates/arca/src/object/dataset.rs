//! Datasets: creation options, hyperslab reads and writes, resizing.

use super::attrs::Attributes;
use super::element::{check_element, Element};
use super::handle::{lock, FileHandle};
use super::session::Session;
use super::storage::{
    allocate_contiguous, check_len, engine, load_meta, read_with_meta, with_chunked, write_bytes,
    CacheKey,
};
use super::vlen::options::VlenOptions;
use crate::chunk::Chunked;
use crate::error::{Error, Result};
use crate::filter::Filter;
use crate::format::datatype::Datatype;
use crate::format::filter_pipeline::PIPELINES;
use crate::format::object_header::{DatasetMeta, Header, Layout, MAX_RANK};
use crate::pool::lists::EXTENTS;
use crate::selection::Selection;
use crate::store::Store;

pub use crate::format::object_header::MAX_CHUNK_BYTES;
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
    dtype: Datatype,
    shape: Vec<u64>,
    maxshape: Option<Vec<Option<u64>>>,
    chunks: Option<Vec<u64>>,
    filters: Vec<Filter>,
    fill: Option<Vec<u8>>,
    early: bool,
    layout: Option<StorageLayout>,
    vlen: VlenOptions,
    null: bool,
    pub(crate) track_order: bool,
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
            early: false,
            layout: None,
            vlen: VlenOptions::default(),
            null: false,
            track_order: false,
        }
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
    /// One element, in native byte order, shown where nothing was written.
    pub fn fill_value(mut self, fill: &[u8]) -> Self {
        self.fill = Some(fill.to_vec());
        self
    }
}

/// Refuse a shape whose bytes do not fit a u64 (a file could not hold it,
/// and its element arithmetic would overflow); returns the byte count.
fn check_size(shape: &[u64], elem: u64) -> Result<u64> {
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
    if Filter::is_hdf5(&o.filters) && o.dtype.has_vlen() {
        return Err(Error::invalid(
            "HDF5 filters apply to fixed-size types; variable-length data takes arca's own",
        ));
    }
    let needs_chunks = o.chunks.is_some() || !o.filters.is_empty() || maxdims != o.shape;
    let chunked = needs_chunks || o.layout == Some(StorageLayout::Chunked);
    if needs_chunks && matches!(o.layout, Some(l) if l != StorageLayout::Chunked) {
        return Err(Error::invalid(
            "chunks, filters and a maxshape beyond the shape need the chunked layout",
        ));
    }
    // The fill value in the file's byte order.
    let fill = match &o.fill {
        None => None,
        // An all-zero record is the empty element; no other fill makes sense.
        Some(_) if o.dtype.has_vlen() => {
            return Err(Error::invalid(
                "variable-length datasets take no fill value (unwritten elements are empty)",
            ))
        }
        Some(f) if f.len() == elem as usize => {
            let mut f = f.clone();
            if o.dtype.needs_swap() {
                o.dtype.swap(&mut f);
            }
            Some(f)
        }
        Some(_) => return Err(Error::invalid("fill value must be exactly one element")),
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
        // Unwritten elements read as the fill value, as in other layouts.
        Layout::Compact(match &fill {
            Some(f) => f.iter().copied().cycle().take(n).collect(),
            None => vec![0; n],
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
    let vlen = if o.dtype.has_vlen() {
        Some(o.vlen.build(&o.dtype)?)
    } else {
        None
    };
    let fill = DatasetMeta::make_fill(st, fill)?;
    let mut meta = DatasetMeta {
        dtype: o.dtype.clone(),
        dims: EXTENTS.take_copy(&o.shape),
        maxdims: EXTENTS.take_copy(&maxdims),
        layout,
        filters: PIPELINES.take_copy(&o.filters),
        fill,
        vlen,
        null: false,
    };
    if let Layout::Contiguous { size, .. } = meta.layout {
        if o.early && size > 0 {
            let fill = meta.fill_bytes(st)?;
            let addr = allocate_contiguous(st, size, &fill, false)?;
            meta.layout = Layout::Contiguous { addr, size };
        }
    }
    Ok(meta)
}

/// A dataset in an open file.
///
/// ```
/// use arca::{Datatype, DatasetOptions, File, Selection};
/// let f = File::in_memory().unwrap();
/// let ds = f.root()
///     .create_dataset("m", &DatasetOptions::new(Datatype::float(4), &[4, 4]).chunks(&[2, 2]))
///     .unwrap();
/// ds.write_all(&(0..16).map(|x| x as f32).collect::<Vec<_>>()).unwrap();
/// let col: Vec<f32> = ds.read(&Selection::from_ranges(&[(0, 4, 1), (1, 2, 1)]).unwrap()).unwrap();
/// assert_eq!(col, vec![1.0, 5.0, 9.0, 13.0]);
/// ```
#[derive(Clone)]
pub struct Dataset {
    pub(crate) file: FileHandle,
    pub(crate) addr: u64,
    path: String,
}

impl std::fmt::Debug for Dataset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dataset").field("path", &self.path).finish()
    }
}

impl Dataset {
    pub(crate) fn new(file: FileHandle, addr: u64, path: String) -> Self {
        Dataset { file, addr, path }
    }

    /// The dataset's identity in its file: equal for every name it has,
    /// stable until the file is repacked.
    pub fn id(&self) -> u64 {
        self.addr
    }

    /// The absolute path this dataset was opened by.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The last path component.
    pub fn name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or("")
    }

    /// This dataset's attributes.
    pub fn attrs(&self) -> Attributes {
        Attributes::new(self.file.clone(), self.addr)
    }

    fn meta(&self) -> Result<DatasetMeta> {
        let mut g = lock(&self.file)?;
        load_meta(&mut g.st, self.addr)
    }

    /// Current extent per dimension.
    ///
    /// # Errors
    /// [`Error::Corrupt`] if the header is damaged.
    pub fn shape(&self) -> Result<Vec<u64>> {
        Ok(self.meta()?.dims.to_vec())
    }

    /// Largest extent per dimension; `None` is unlimited.
    ///
    /// # Errors
    /// As for [`Dataset::shape`].
    pub fn maxshape(&self) -> Result<Vec<Option<u64>>> {
        Ok(self
            .meta()?
            .maxdims
            .iter()
            .map(|&m| (m != u64::MAX).then_some(m))
            .collect())
    }

    /// The element type as stored.
    ///
    /// # Errors
    /// As for [`Dataset::shape`].
    pub fn dtype(&self) -> Result<Datatype> {
        Ok(self.meta()?.dtype)
    }

    /// Chunk shape, or `None` for contiguous storage.
    ///
    /// # Errors
    /// As for [`Dataset::shape`].
    pub fn chunks(&self) -> Result<Option<Vec<u64>>> {
        Ok(match self.meta()?.layout {
            Layout::Chunked { chunk, .. } => Some(chunk.to_vec()),
            Layout::Contiguous { .. } | Layout::Compact(_) => None,
        })
    }

    /// How the elements are stored.
    ///
    /// # Errors
    /// As for [`Dataset::shape`].
    pub fn layout(&self) -> Result<StorageLayout> {
        Ok(match self.meta()?.layout {
            Layout::Chunked { .. } => StorageLayout::Chunked,
            Layout::Contiguous { .. } => StorageLayout::Contiguous,
            Layout::Compact(_) => StorageLayout::Compact,
        })
    }

    /// The filter pipeline.
    ///
    /// # Errors
    /// As for [`Dataset::shape`].
    pub fn filters(&self) -> Result<Vec<Filter>> {
        Ok(self.meta()?.filters.to_vec())
    }

    /// The fill value, one element in native byte order.
    ///
    /// # Errors
    /// As for [`Dataset::shape`].
    pub fn fill_value(&self) -> Result<Vec<u8>> {
        let mut g = lock(&self.file)?;
        let m = load_meta(&mut g.st, self.addr)?;
        let mut f = m.fill_bytes(&g.st)?.to_vec();
        if m.dtype.needs_swap() {
            m.dtype.swap(&mut f);
        }
        Ok(f)
    }

    /// Whether a fill value was given at creation (even one of zeros), as
    /// HDF5 tells a user-defined fill from its default.
    ///
    /// ```
    /// use arca::{Datatype, DatasetOptions, File};
    /// let f = File::in_memory().unwrap();
    /// let a = f.root().create_dataset("a", &DatasetOptions::new(Datatype::uint(1), &[4])).unwrap();
    /// let b = f.root().create_dataset("b", &DatasetOptions::new(Datatype::uint(1), &[4]).fill_value(&[0])).unwrap();
    /// assert!(!a.has_fill_value().unwrap() && b.has_fill_value().unwrap());
    /// ```
    ///
    /// # Errors
    /// As for [`Dataset::shape`].
    pub fn has_fill_value(&self) -> Result<bool> {
        let mut g = lock(&self.file)?;
        Ok(load_meta(&mut g.st, self.addr)?.fill.is_some())
    }

    /// Bytes of file space holding this dataset's elements.
    ///
    /// # Errors
    /// As for [`Dataset::shape`].
    pub fn storage_size(&self) -> Result<u64> {
        let mut g = lock(&self.file)?;
        g.write_back()?;
        let m = load_meta(&mut g.st, self.addr)?;
        Ok(match m.layout {
            Layout::Contiguous { addr, size } => {
                if addr == 0 {
                    0
                } else {
                    size
                }
            }
            Layout::Chunked { ref chunk, index } => engine(&m, chunk, index, &[])
                .entries(&mut g.st)?
                .iter()
                .map(|(_, r)| r.size)
                .sum(),
            Layout::Compact(ref data) => data.len() as u64,
        })
    }

    /// Number of elements.
    ///
    /// # Errors
    /// As for [`Dataset::shape`].
    pub fn len(&self) -> Result<u64> {
        let m = self.meta()?;
        Ok(if m.null { 0 } else { m.dims.iter().product() })
    }

    /// The shape, or `None` for a null dataspace: [`Dataset::shape`] and
    /// [`Dataset::is_null`] in one header read.
    ///
    /// ```
    /// use arca::{DatasetOptions, Datatype, File};
    /// let f = File::in_memory().unwrap();
    /// let e = f.root().create_dataset("e", &DatasetOptions::empty(Datatype::int(4))).unwrap();
    /// assert_eq!(e.extent().unwrap(), None);
    /// ```
    ///
    /// # Errors
    /// As for [`Dataset::shape`].
    pub fn extent(&self) -> Result<Option<Vec<u64>>> {
        let m = self.meta()?;
        Ok((!m.null).then(|| m.dims.to_vec()))
    }

    /// Whether the dataset has a null dataspace: a type and no elements
    /// (see [`DatasetOptions::empty`]).
    ///
    /// # Errors
    /// As for [`Dataset::shape`].
    pub fn is_null(&self) -> Result<bool> {
        Ok(self.meta()?.null)
    }

    /// Whether the dataset has no elements.
    ///
    /// # Errors
    /// As for [`Dataset::shape`].
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }

    /// Read `sel` into `out`, which must hold `sel.len()` elements; values
    /// arrive in native byte order.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a selection out of bounds or a buffer of
    /// the wrong size; [`Error::Corrupt`] for damaged storage.
    pub fn read_bytes(&self, sel: &Selection, out: &mut [u8]) -> Result<()> {
        let mut g = lock(&self.file)?;
        let m = load_meta(&mut g.st, self.addr)?;
        reject_vlen(&m.dtype)?;
        if matches!(m.layout, Layout::Chunked { .. }) && !m.null {
            if let Some((io, gate)) = g.st.pager.unlocked_reads() {
                return self.read_chunked_unlocked(g, m, sel, out, &*io, &gate);
            }
        }
        let (st, caches) = g.storage();
        read_with_meta(st, caches, self.addr, m, sel, out)
    }

    /// A chunked read that holds the file's lock only to plan: chunks are
    /// fetched, checked and decoded with the lock released (under the
    /// writers' gate, see `io::Gated`), so threads reading one file run in
    /// parallel. Small decoded chunks are offered to the cache afterwards.
    fn read_chunked_unlocked(
        &self,
        mut g: std::sync::MutexGuard<'_, Session>,
        m: DatasetMeta,
        sel: &Selection,
        out: &mut [u8],
        io: &dyn crate::io::ReadAt,
        gate: &std::sync::RwLock<()>,
    ) -> Result<()> {
        sel.check(&m.dims)?;
        let elem = m.dtype.size();
        check_len("buffer", out.len(), sel, elem)?;
        let fill = m.fill_bytes(&g.st)?;
        let Layout::Chunked { chunk, index } = &m.layout else {
            return Err(Error::invalid("dataset is not chunked"));
        };
        let c = Chunked {
            dims: &m.dims,
            chunk,
            elem,
            filters: &m.filters,
            fill: &fill,
            index: *index,
        };
        let key = CacheKey::Dataset(self.addr);
        let mut cache = g.caches().take(key);
        let plan = c.plan_read(&mut g.st, &mut cache, sel, out);
        g.caches().put(key, cache);
        let plan = plan?;
        if !plan.is_done() {
            let stats = g.st.stats.clone();
            let kept = {
                let _reading = gate.read().map_err(|_| Error::Poisoned)?;
                drop(g);
                c.fetch_planned(io, &stats, plan, sel, out)?
            };
            if !kept.is_empty() {
                // Offered to the cache against the dataset as it is now
                // (caching may evict, and so write, a dirty chunk).
                let mut g = lock(&self.file)?;
                let mut cache = g.caches().take(key);
                let r = with_chunked(&mut g.st, self.addr, &mut cache, |c, st, cache| {
                    c.cache_decoded(st, cache, kept)
                });
                g.caches().put(key, cache);
                r?;
            }
        }
        if m.dtype.needs_swap() {
            m.dtype.swap(out);
        }
        Ok(())
    }

    /// Write `data` (native byte order, `sel.len()` elements) to `sel`.
    ///
    /// # Errors
    /// As for [`Dataset::read_bytes`], plus [`Error::ReadOnly`].
    pub fn write_bytes(&self, sel: &Selection, data: &[u8]) -> Result<()> {
        let mut g = lock(&self.file)?;
        g.st.check_writable()?;
        reject_vlen(&load_meta(&mut g.st, self.addr)?.dtype)?;
        let (st, caches) = g.storage();
        write_bytes(st, caches, self.addr, sel, data)
    }
}

/// Variable-length elements go through their own API, never as raw records.
fn reject_vlen(dt: &Datatype) -> Result<()> {
    if dt.is_vlen() {
        return Err(Error::invalid(format!(
            "dataset type {dt} is variable-length: use the ragged, string or bytes methods"
        )));
    }
    if dt.has_vlen() {
        return Err(Error::invalid(format!(
            "dataset type {dt} has variable-length members: use read_rows/write_rows"
        )));
    }
    Ok(())
}

impl Dataset {
    /// Read a selection as typed values.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if `T` does not match the dataset's type.
    pub fn read<T: Element>(&self, sel: &Selection) -> Result<Vec<T>> {
        check_element::<T>(&self.dtype()?)?;
        let mut out = vec![T::zeroed(); sel.len() as usize];
        self.read_bytes(sel, bytemuck::cast_slice_mut(&mut out))?;
        Ok(out)
    }

    /// Read every element.
    ///
    /// # Errors
    /// As for [`Dataset::read`].
    pub fn read_all<T: Element>(&self) -> Result<Vec<T>> {
        self.read(&Selection::all(&self.shape()?))
    }

    /// Write typed values to a selection.
    ///
    /// # Errors
    /// As for [`Dataset::write_bytes`], and a type mismatch.
    pub fn write<T: Element>(&self, sel: &Selection, data: &[T]) -> Result<()> {
        check_element::<T>(&self.dtype()?)?;
        self.write_bytes(sel, bytemuck::cast_slice(data))
    }

    /// Write every element.
    ///
    /// # Errors
    /// As for [`Dataset::write`].
    pub fn write_all<T: Element>(&self, data: &[T]) -> Result<()> {
        self.write(&Selection::all(&self.shape()?), data)
    }

    /// Change the extent, within `maxshape`. Elements cut off by shrinking
    /// are gone; growing shows the fill value.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] beyond maxshape or for contiguous datasets.
    pub fn resize(&self, shape: &[u64]) -> Result<()> {
        let mut g = lock(&self.file)?;
        g.st.check_writable()?;
        let m = load_meta(&mut g.st, self.addr)?;
        if shape.len() != m.dims.len() || m.null {
            return Err(Error::invalid("new shape must keep the rank"));
        }
        if shape.iter().zip(&m.maxdims).any(|(s, mx)| s > mx) {
            return Err(Error::invalid(format!(
                "new shape {shape:?} exceeds maxshape"
            )));
        }
        check_size(shape, m.dtype.size() as u64)?;
        if !matches!(m.layout, Layout::Chunked { .. }) {
            return Err(Error::invalid("only chunked datasets can be resized"));
        }
        let shrinks = shape.iter().zip(&m.dims).any(|(n, o)| n < o);
        let key = CacheKey::Dataset(self.addr);
        let mut cache = g.caches().take(key);
        let r = (|| {
            if shrinks {
                with_chunked(&mut g.st, self.addr, &mut cache, |c, st, cache| {
                    c.shrink(st, cache, shape)
                })?;
            }
            let mut h = Header::load(&mut g.st, self.addr)?;
            if let Some(m) = h.dataset.as_mut() {
                m.dims = EXTENTS.take_copy(shape);
            }
            h.save(&mut g.st, self.addr)
        })();
        g.caches().put(key, cache);
        r
    }

    /// Set this dataset's chunk cache size in bytes.
    ///
    /// # Errors
    /// Only if the file is closed.
    pub fn set_chunk_cache(&self, bytes: usize) -> Result<()> {
        let mut g = lock(&self.file)?;
        let key = CacheKey::Dataset(self.addr);
        let mut c = g.caches().take(key);
        c.capacity = bytes;
        g.caches().put(key, c);
        Ok(())
    }
}
