//! The dataset handle: [`Dataset`], its description (shape, type, layout,
//! fill value), typed and byte reads and writes of selections, resizing
//! and its chunk cache's size. How a dataset is created is in
//! `dataset/options.rs`; the storage engine under the handle in
//! `storage.rs`.

pub(super) mod options;

use super::attrs::Attributes;
use super::element::{check_element, Element};
use super::external_io;
use super::handle::{lock, FileHandle};
use super::session::Session;
use super::storage::{
    cached_meta, check_len, engine, load_meta, read_with_meta, save_chunk_index, with_chunked,
    write_bytes, CacheKey,
};
use super::virtual_read;
use crate::chunk::Chunked;
use crate::error::{Error, Result};
use crate::filter::Filter;
use crate::format::datatype::Datatype;
use crate::format::external_list::ExternalSegment;
use crate::format::object_header::{DatasetMeta, Header, Layout};
use crate::pool::lists::EXTENTS;
use crate::selection::Selection;
use options::{check_size, StorageLayout};

/// Stored bytes of unfiltered chunks a chunked read fetches with the
/// session held (see `Dataset::read_chunked_unlocked`): a few small
/// chunks, which take less time to read than letting the session go and
/// taking it back.
const HELD_READ_BYTES: u64 = 64 << 10;

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
    /// Where relative external file names are looked for (HDF5's
    /// `efile_prefix`, an access property: not kept in the file).
    ext_prefix: Option<std::sync::Arc<str>>,
}

impl std::fmt::Debug for Dataset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dataset").field("path", &self.path).finish()
    }
}

impl Dataset {
    pub(crate) fn new(file: FileHandle, addr: u64, path: String) -> Self {
        Dataset {
            file,
            addr,
            path,
            ext_prefix: None,
        }
    }

    /// This dataset, with relative names of its external files (see
    /// [`DatasetOptions::external`]) looked for under `prefix` instead of
    /// the current directory; `${ORIGIN}` in `prefix` stands for the
    /// directory of the file holding the dataset (HDF5's `efile_prefix`).
    /// The prefix belongs to this handle, not to the file.
    ///
    /// ```
    /// use arca::{DatasetOptions, Datatype, ExternalSegment, File};
    /// let dir = std::env::temp_dir().join(format!("arca-doc-prefix-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let f = File::create(dir.join("f.arca")).unwrap();
    /// let o = DatasetOptions::new(Datatype::int(4), &[3])
    ///     .external(&[ExternalSegment::new("raw.bin", 0, ExternalSegment::UNLIMITED)]);
    /// let d = f.root().create_dataset("d", &o).unwrap().with_external_prefix("${ORIGIN}");
    /// d.write_all(&[1i32, 2, 3]).unwrap();
    /// assert_eq!(std::fs::read(dir.join("raw.bin")).unwrap().len(), 12);
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    pub fn with_external_prefix(&self, prefix: &str) -> Dataset {
        Dataset {
            ext_prefix: Some(prefix.into()),
            ..self.clone()
        }
    }

    /// The external prefix of this handle (see
    /// [`Dataset::with_external_prefix`]).
    pub fn external_prefix(&self) -> Option<&str> {
        self.ext_prefix.as_deref()
    }

    /// The segments of external files holding the elements, in order
    /// (empty unless the dataset was made with
    /// [`DatasetOptions::external`]).
    ///
    /// # Errors
    /// [`Error::Corrupt`] for a damaged list, naming what is wrong.
    pub fn external_segments(&self) -> Result<Vec<ExternalSegment>> {
        let mut g = lock(&self.file)?;
        let m = load_meta(&mut g.st, self.addr)?;
        Ok(external_io::segments(&mut g.st, &m)?.unwrap_or_default())
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

    /// The dataset message, decoded once while its header is unchanged.
    fn meta(&self) -> Result<std::sync::Arc<DatasetMeta>> {
        let mut g = lock(&self.file)?;
        let (st, caches) = g.storage();
        cached_meta(st, caches, self.addr)
    }

    /// The extent now: a virtual dataset's grows with the sources of its
    /// unlimited mappings.
    fn dims_now(&self, m: &DatasetMeta) -> Result<Vec<u64>> {
        if !matches!(m.layout, Layout::Virtual { .. }) {
            return Ok(m.dims.to_vec());
        }
        let maps = {
            let mut g = lock(&self.file)?;
            virtual_read::mappings(&mut g.st, m)?.unwrap_or_default()
        };
        virtual_read::dims_with(&self.file, m, &maps, 0)
    }

    /// Current extent per dimension.
    ///
    /// # Errors
    /// [`Error::Corrupt`] if the header is damaged.
    pub fn shape(&self) -> Result<Vec<u64>> {
        let m = self.meta()?;
        self.dims_now(&m)
    }

    /// Whether the elements are assembled from other datasets (a virtual
    /// dataset, [`DatasetOptions::virtual_mappings`]).
    ///
    /// # Errors
    /// As for [`Dataset::shape`].
    ///
    /// [`DatasetOptions::virtual_mappings`]: crate::DatasetOptions::virtual_mappings
    pub fn is_virtual(&self) -> Result<bool> {
        Ok(matches!(self.meta()?.layout, Layout::Virtual { .. }))
    }

    /// A virtual dataset's mappings, in the order they apply (empty for
    /// other datasets).
    ///
    /// # Errors
    /// [`Error::Corrupt`] for damaged mappings, naming what is wrong.
    pub fn virtual_mappings(&self) -> Result<Vec<crate::VirtualMapping>> {
        let mut g = lock(&self.file)?;
        let m = load_meta(&mut g.st, self.addr)?;
        Ok(virtual_read::mappings(&mut g.st, &m)?.unwrap_or_default())
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
        Ok(self.meta()?.dtype.clone())
    }

    /// Chunk shape, or `None` for contiguous storage.
    ///
    /// # Errors
    /// As for [`Dataset::shape`].
    pub fn chunks(&self) -> Result<Option<Vec<u64>>> {
        Ok(match &self.meta()?.layout {
            Layout::Chunked { chunk, .. } => Some(chunk.to_vec()),
            Layout::Contiguous { .. }
            | Layout::Compact(_)
            | Layout::Virtual { .. }
            | Layout::External { .. } => None,
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
            Layout::Virtual { .. } => StorageLayout::Virtual,
            Layout::External { .. } => StorageLayout::External,
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

    /// When HDF5 would write the fill value into new storage (see
    /// [`DatasetOptions::fill_time`](crate::DatasetOptions::fill_time)).
    ///
    /// ```
    /// use arca::{Datatype, DatasetOptions, File, FillTime};
    /// let f = File::in_memory().unwrap();
    /// let d = f.root().create_dataset("a", &DatasetOptions::new(Datatype::uint(1), &[4])).unwrap();
    /// assert_eq!(d.fill_time().unwrap(), FillTime::IfSet);
    /// ```
    ///
    /// # Errors
    /// As for [`Dataset::shape`].
    pub fn fill_time(&self) -> Result<crate::FillTime> {
        let mut g = lock(&self.file)?;
        Ok(load_meta(&mut g.st, self.addr)?.fill_time)
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
            // Its elements are its sources', or in other files.
            Layout::Virtual { .. } | Layout::External { .. } => 0,
        })
    }

    /// Number of elements.
    ///
    /// # Errors
    /// As for [`Dataset::shape`].
    pub fn len(&self) -> Result<u64> {
        let m = self.meta()?;
        Ok(if m.null {
            0
        } else {
            self.dims_now(&m)?.iter().product()
        })
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
        if m.null {
            return Ok(None);
        }
        Ok(Some(self.dims_now(&m)?))
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
        let m = {
            let (st, caches) = g.storage();
            cached_meta(st, caches, self.addr)?
        };
        reject_vlen(&m.dtype)?;
        if matches!(m.layout, Layout::Virtual { .. }) {
            // Assembled from sources, with this file's lock let go: a
            // source may be in this file.
            let maps = virtual_read::mappings(&mut g.st, &m)?.unwrap_or_default();
            let mut fill = m.read_fill_bytes(&g.st)?.to_vec();
            if m.dtype.needs_swap() {
                m.dtype.swap(&mut fill);
            }
            drop(g);
            let dims = virtual_read::dims_with(&self.file, &m, &maps, 0)?;
            return virtual_read::read(&self.file, &m, &maps, &dims, &fill, sel, out);
        }
        if matches!(m.layout, Layout::External { .. }) {
            sel.check(&m.dims)?;
            check_len("buffer", out.len(), sel, m.dtype.size())?;
            let segs = external_io::segments(&mut g.st, &m)?.unwrap_or_default();
            let here = g.path().map(|p| p.to_path_buf());
            drop(g);
            let r = external_io::read(&m, &segs, self.external_prefix(), here.as_deref(), sel, out);
            return r;
        }
        if matches!(m.layout, Layout::Chunked { .. }) && !m.null {
            if let Some((io, gate)) = g.st.pager.unlocked_reads() {
                return self.read_chunked_unlocked(g, m, sel, out, &*io, &gate);
            }
        }
        let (st, caches) = g.storage();
        read_with_meta(st, caches, self.addr, &m, sel, out)
    }

    /// A chunked read that holds the file's lock only to plan: chunks are
    /// fetched, checked and decoded with the lock released (under the
    /// writers' gate, see `io::Gated`), so threads reading one file run in
    /// parallel. Small decoded chunks are offered to the cache afterwards.
    fn read_chunked_unlocked(
        &self,
        mut g: std::sync::MutexGuard<'_, Session>,
        m: std::sync::Arc<DatasetMeta>,
        sel: &Selection,
        out: &mut [u8],
        io: &dyn crate::io::ReadAt,
        gate: &std::sync::RwLock<()>,
    ) -> Result<()> {
        sel.check(&m.dims)?;
        let elem = m.dtype.size();
        check_len("buffer", out.len(), sel, elem)?;
        let fill = m.read_fill_bytes(&g.st)?;
        let Layout::Chunked { chunk, index } = &m.layout else {
            return Err(Error::invalid("dataset is not chunked"));
        };
        let mut c = Chunked {
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
        let plan = match plan {
            Ok(p) => p,
            Err(e) => {
                g.caches().put(key, cache);
                return Err(e);
            }
        };
        if !plan.is_done() && m.filters.is_empty() && plan.stored_bytes() <= HELD_READ_BYTES {
            // A few small unfiltered chunks (a point, a short slice): read
            // with the session still held, as the lookup held it. Letting
            // it go and taking it back to cache them would cost more than
            // the reads (a header load and another index lookup per
            // chunk); nothing can have changed their entries meanwhile.
            // Chunks to decode are left to the unlocked path, so threads
            // reading one file decode in parallel.
            let r = c
                .fetch_planned(io, &g.st.stats, plan, sel, out)
                .and_then(|kept| c.cache_fetched(&mut g.st, &mut cache, kept));
            g.caches().put(key, cache);
            r?;
            if c.index != *index {
                // Caching stored an evicted dirty chunk.
                save_chunk_index(&mut g.st, self.addr, c.index)?;
            }
        } else {
            g.caches().put(key, cache);
            if plan.is_done() {
                drop(g);
            } else {
                self.fetch_unlocked(g, &c, plan, sel, out, io, gate)?;
            }
        }
        if m.dtype.needs_swap() {
            m.dtype.swap(out);
        }
        Ok(())
    }

    /// The fetch of a planned chunked read with the session let go (under
    /// the writers' gate), then the decoded chunks offered to the cache.
    #[allow(clippy::too_many_arguments)]
    fn fetch_unlocked(
        &self,
        g: std::sync::MutexGuard<'_, Session>,
        c: &Chunked,
        plan: crate::chunk::ReadPlan,
        sel: &Selection,
        out: &mut [u8],
        io: &dyn crate::io::ReadAt,
        gate: &std::sync::RwLock<()>,
    ) -> Result<()> {
        let key = CacheKey::Dataset(self.addr);
        {
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
        Ok(())
    }

    /// Write `data` (native byte order, `sel.len()` elements) to `sel`.
    ///
    /// # Errors
    /// As for [`Dataset::read_bytes`], plus [`Error::ReadOnly`].
    pub fn write_bytes(&self, sel: &Selection, data: &[u8]) -> Result<()> {
        let mut g = lock(&self.file)?;
        g.st.check_writable()?;
        let m = load_meta(&mut g.st, self.addr)?;
        reject_vlen(&m.dtype)?;
        if matches!(m.layout, Layout::External { .. }) {
            sel.check(&m.dims)?;
            check_len("data", data.len(), sel, m.dtype.size())?;
            let segs = external_io::segments(&mut g.st, &m)?.unwrap_or_default();
            let here = g.path().map(|p| p.to_path_buf());
            drop(g);
            return external_io::write(
                &m,
                &segs,
                self.external_prefix(),
                here.as_deref(),
                sel,
                data,
            );
        }
        g.prove_layout(self.addr, &m.layout)?;
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
    /// are gone; growing shows the fill value. An external dataset grows
    /// along its first dimension within its segments, and shows what its
    /// files hold there (zeros past their ends), as in HDF5.
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
        if matches!(m.layout, Layout::External { .. }) {
            if shape.iter().zip(&m.maxdims).skip(1).any(|(s, mx)| s != mx) {
                return Err(Error::invalid(
                    "an external dataset changes only its first dimension",
                ));
            }
            // The segments hold the largest shape (checked at creation):
            // nothing moves, only the extent changes.
            let mut h = Header::load(&mut g.st, self.addr)?;
            if let Some(m) = h.dataset.as_mut() {
                m.dims = EXTENTS.take_copy(shape);
            }
            return h.save(&mut g.st, self.addr);
        }
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
