//! Chunks as stored: listing a chunked dataset's chunks and moving their
//! filtered bytes in and out unchanged, so that a copy between files (an
//! HDF5 import or export, a repack) never decompresses and recompresses.

use super::dataset::Dataset;
use super::handle::lock;
use super::session::Session;
use super::storage::{engine, flush_cache, CacheKey};
use crate::chunk::{Cache, Chunked, Source};
use crate::error::{Error, Result};
use crate::filter::Filter;
use crate::format::chunk_index::ChunkRef;
use crate::format::object_header::{Header, Layout};
use crate::store::Store;

/// One stored chunk of a chunked dataset.
///
/// ```
/// use arca::{Datatype, DatasetOptions, File, Filter, Selection};
/// let f = File::in_memory().unwrap();
/// let ds = f.root().create_dataset("x", &DatasetOptions::new(Datatype::uint(2), &[10])
///     .chunks(&[4]).filters(&[Filter::Zstd(3)])).unwrap();
/// ds.write_bytes(&Selection::from_ranges(&[(4, 6, 1)]).unwrap(), &[1, 0, 2, 0]).unwrap();
/// let c = ds.stored_chunks().unwrap();
/// assert_eq!(c.len(), 1);
/// assert_eq!(c[0].offset, vec![4]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredChunk {
    /// The chunk's first element, per dimension (a multiple of the chunk shape).
    pub offset: Vec<u64>,
    /// Bytes stored (after the filters).
    pub size: u64,
    /// Which filters were applied: 0 all of them, `u32::MAX` none (the
    /// bytes are the chunk's elements as they are, in the dataset's byte
    /// order).
    pub mask: u32,
}

/// What moving a chunked dataset's stored chunks needs to know of it.
pub(super) struct ChunkLayout {
    pub(super) chunk: Vec<u64>,
    pub(super) dims: Vec<u64>,
    /// A chunk's decoded size.
    pub(super) bytes: u64,
    pub(super) filters: Vec<Filter>,
}

/// The [`ChunkLayout`] of the chunked dataset at `addr`.
pub(super) fn chunk_layout(g: &mut Session, addr: u64) -> Result<ChunkLayout> {
    let h = Header::load(&mut g.st, addr)?;
    let m = h
        .dataset
        .as_ref()
        .ok_or_else(|| Error::invalid("not a dataset"))?;
    let Layout::Chunked { chunk, .. } = &m.layout else {
        return Err(Error::invalid("the dataset is not chunked"));
    };
    if m.dtype.has_vlen() {
        return Err(Error::invalid(
            "chunks of a dataset with variable-length values hold records that point into its \
             vector; copy its elements instead",
        ));
    }
    let bytes = chunk
        .iter()
        .fold(m.dtype.size() as u64, |a, &c| a.saturating_mul(c));
    Ok(ChunkLayout {
        chunk: chunk.to_vec(),
        dims: m.dims.to_vec(),
        bytes,
        filters: m.filters.to_vec(),
    })
}

/// The grid coordinates of the chunk whose first element is `offset`.
pub(super) fn coords_of(offset: &[u64], chunk: &[u64], dims: &[u64]) -> Result<Vec<u64>> {
    if offset.len() != chunk.len() {
        return Err(Error::invalid(format!(
            "a chunk offset of rank {} for a dataset of rank {}",
            offset.len(),
            chunk.len()
        )));
    }
    offset
        .iter()
        .zip(chunk)
        .zip(dims)
        .map(|((&o, &c), &d)| {
            if o % c != 0 || o >= d {
                Err(Error::invalid(format!(
                    "chunk offset {offset:?} is not the start of a chunk inside the extent {dims:?}"
                )))
            } else {
                Ok(o / c)
            }
        })
        .collect()
}

impl Dataset {
    /// Every stored chunk of a chunked dataset, in grid order; chunks never
    /// written (which read as the fill value) are not listed.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a dataset that is not chunked or
    /// holds variable-length values; [`Error::Corrupt`] for a damaged index.
    pub fn stored_chunks(&self) -> Result<Vec<StoredChunk>> {
        let mut g = lock(&self.file)?;
        let addr = self.addr;
        self.flush_chunks(&mut g)?;
        let chunk = chunk_layout(&mut g, addr)?.chunk;
        let h = Header::load(&mut g.st, addr)?;
        let m = h
            .dataset
            .as_ref()
            .ok_or_else(|| Error::invalid("not a dataset"))?;
        let Layout::Chunked { index, .. } = &m.layout else {
            return Err(Error::invalid("the dataset is not chunked"));
        };
        let entries = engine(m, &chunk, *index, &[]).entries(&mut g.st)?;
        Ok(entries
            .into_iter()
            .map(|(c, r)| StoredChunk {
                offset: c.iter().zip(&chunk).map(|(i, n)| i * n).collect(),
                size: r.size,
                mask: r.mask,
            })
            .collect())
    }

    /// The bytes stored for the chunk whose first element is `offset`, as
    /// they are in the file (after the filters), with its filter mask
    /// ([`StoredChunk::mask`]); `None` if that chunk was never written.
    /// The bytes are checked against the chunk's checksum.
    ///
    /// ```
    /// use arca::{Datatype, DatasetOptions, File, Filter};
    /// let f = File::in_memory().unwrap();
    /// let o = DatasetOptions::new(Datatype::uint(1), &[8]).chunks(&[4]).filters(&[Filter::Deflate(6)]);
    /// let a = f.root().create_dataset("a", &o).unwrap();
    /// a.write_all(&[7u8; 8]).unwrap();
    /// let (bytes, mask) = a.read_chunk_stored(&[4]).unwrap().unwrap();
    /// let b = f.root().create_dataset("b", &o).unwrap();
    /// b.write_chunk_stored(&[4], &bytes, mask).unwrap();
    /// assert_eq!(b.read_all::<u8>().unwrap(), [0, 0, 0, 0, 7, 7, 7, 7]);
    /// ```
    ///
    /// # Errors
    /// As for [`Dataset::stored_chunks`], and [`Error::InvalidArgument`] for
    /// an offset that does not start a chunk inside the extent.
    pub fn read_chunk_stored(&self, offset: &[u64]) -> Result<Option<(Vec<u8>, u32)>> {
        let (buf, found) = self.read_chunks_stored(&[offset.to_vec()])?;
        Ok(found[0].map(|(_, mask)| (buf, mask)))
    }

    /// [`Dataset::read_chunk_stored`] for many chunks under one lock, their
    /// bytes back to back in one buffer: for each offset, `Some((stored
    /// bytes, mask))` in order, or `None` for a chunk never written. Copies
    /// between files read batches of chunks this way.
    ///
    /// ```
    /// use arca::{Datatype, DatasetOptions, File};
    /// let f = File::in_memory().unwrap();
    /// let o = DatasetOptions::new(Datatype::uint(1), &[12]).chunks(&[4]);
    /// let a = f.root().create_dataset("a", &o).unwrap();
    /// a.write_all(&[5u8; 12]).unwrap();
    /// let (buf, found) = a.read_chunks_stored(&[vec![0], vec![8]]).unwrap();
    /// assert_eq!((buf.len(), found), (8, vec![Some((4, 0)), Some((4, 0))]));
    /// ```
    ///
    /// # Errors
    /// As for [`Dataset::read_chunk_stored`].
    #[allow(clippy::type_complexity)]
    pub fn read_chunks_stored(
        &self,
        offsets: &[Vec<u64>],
    ) -> Result<(Vec<u8>, Vec<Option<(usize, u32)>>)> {
        let mut g = lock(&self.file)?;
        let (refs, total) = self.locate(&mut g, offsets)?;
        let mut buf = vec![0u8; total];
        let found = read_located(&mut g, &refs, &mut buf)?;
        Ok((buf, found))
    }

    /// [`Dataset::read_chunks_stored`] into a buffer the caller keeps: the
    /// chunks' bytes go back to back at the start of `out`, which must hold
    /// them all. A copy reusing one buffer pays for its memory once.
    ///
    /// # Errors
    /// As for [`Dataset::read_chunks_stored`], and [`Error::InvalidArgument`]
    /// if `out` is too short.
    pub fn read_chunks_stored_into(
        &self,
        offsets: &[Vec<u64>],
        out: &mut [u8],
    ) -> Result<Vec<Option<(usize, u32)>>> {
        let mut g = lock(&self.file)?;
        let (refs, total) = self.locate(&mut g, offsets)?;
        let len = out.len();
        let out = out.get_mut(..total).ok_or_else(|| {
            Error::invalid(format!(
                "a buffer of {len} bytes for {total} bytes of chunks"
            ))
        })?;
        read_located(&mut g, &refs, out)
    }

    /// The index entries of the chunks at `offsets` (None where never
    /// written), each checked to lie in live space, and their total size.
    fn locate(
        &self,
        g: &mut Session,
        offsets: &[Vec<u64>],
    ) -> Result<(Vec<Option<ChunkRef>>, usize)> {
        let addr = self.addr;
        self.flush_chunks(g)?;
        let ChunkLayout { chunk, dims, .. } = chunk_layout(g, addr)?;
        let h = Header::load(&mut g.st, addr)?;
        let m = h
            .dataset
            .as_ref()
            .ok_or_else(|| Error::invalid("not a dataset"))?;
        let Layout::Chunked { index, .. } = &m.layout else {
            return Err(Error::invalid("the dataset is not chunked"));
        };
        let e = engine(m, &chunk, *index, &[]);
        let mut refs = Vec::with_capacity(offsets.len());
        let mut total = 0usize;
        for offset in offsets {
            let coords = coords_of(offset, &chunk, &dims)?;
            let r = e.entry(&mut g.st, &coords)?;
            if let Some(r) = &r {
                g.st.check_live("chunk", r.addr, r.size)?;
                total = total
                    .checked_add(r.size as usize)
                    .ok_or_else(|| Error::invalid("chunks larger than memory"))?;
            }
            refs.push(r);
        }
        Ok((refs, total))
    }

    /// Store `bytes` as the chunk whose first element is `offset`, exactly
    /// as given: already through the dataset's filters (`mask` 0), or the
    /// chunk's elements unfiltered in the dataset's byte order (`mask`
    /// `u32::MAX`, the only choice without filters). Under an HDF5
    /// pipeline ([`Filter::Hdf5`]) `mask` may also be HDF5's own: bit `i`
    /// set when filter `i` was skipped. The bytes are
    /// checksummed as they are; reads decode and check them as any chunk.
    ///
    /// # Errors
    /// As for [`Dataset::read_chunk_stored`]; [`Error::InvalidArgument`] for
    /// another mask, unfiltered bytes that are not exactly one chunk, or
    /// filtered bytes of an implausible size; [`Error::ReadOnly`].
    pub fn write_chunk_stored(&self, offset: &[u64], bytes: &[u8], mask: u32) -> Result<()> {
        self.write_chunks_stored(&[(offset, bytes, mask)])
    }

    /// [`Dataset::write_chunk_stored`] for many chunks under one lock: each
    /// `(offset, bytes, mask)` in turn. Every chunk is checked before any is
    /// stored.
    ///
    /// ```
    /// use arca::{Datatype, DatasetOptions, File};
    /// let f = File::in_memory().unwrap();
    /// let o = DatasetOptions::new(Datatype::uint(1), &[8]).chunks(&[4]);
    /// let a = f.root().create_dataset("a", &o).unwrap();
    /// a.write_chunks_stored(&[(&[0], &[1, 2, 3, 4], 0), (&[4], &[5, 6, 7, 8], 0)]).unwrap();
    /// assert_eq!(a.read_all::<u8>().unwrap(), [1, 2, 3, 4, 5, 6, 7, 8]);
    /// ```
    ///
    /// # Errors
    /// As for [`Dataset::write_chunk_stored`].
    pub fn write_chunks_stored(&self, chunks: &[(&[u64], &[u8], u32)]) -> Result<()> {
        let items: Vec<(&[u64], Source, u32)> = chunks
            .iter()
            .map(|&(o, b, m)| (o, Source::Bytes(b), m))
            .collect();
        self.put_chunks(items)
    }

    /// [`Dataset::write_chunks_stored`] with each chunk's stored bytes taken
    /// from `src`: `(offset, position in src, length, mask)`: runs of
    /// chunks adjacent in both files are copied as one, through the
    /// driver's [`crate::io::Driver::copy_from_file`], while their
    /// checksums are computed on the other core. An import of another
    /// format's file copies its chunks this way.
    ///
    /// ```
    /// use arca::{Datatype, DatasetOptions, File};
    /// use std::io::Write;
    /// let dir = tempfile::tempdir().unwrap();
    /// let mut other = std::fs::File::create(dir.path().join("other")).unwrap();
    /// other.write_all(b"..abcd").unwrap();
    /// let src = std::fs::File::open(dir.path().join("other")).unwrap();
    /// let f = File::create(dir.path().join("a.arca")).unwrap();
    /// let o = DatasetOptions::new(Datatype::uint(1), &[4]).chunks(&[4]);
    /// let a = f.root().create_dataset("a", &o).unwrap();
    /// a.write_chunks_from_file(&src, &[(&[0], 2, 4, 0)]).unwrap();
    /// assert_eq!(a.read_all::<u8>().unwrap(), b"abcd");
    /// ```
    ///
    /// # Errors
    /// As for [`Dataset::write_chunk_stored`]; [`Error::Io`] when `src` cannot
    /// be read there.
    pub fn write_chunks_from_file(
        &self,
        src: &std::fs::File,
        chunks: &[(&[u64], u64, u64, u32)],
    ) -> Result<()> {
        // The checksums are computed on a second thread while the bytes are
        // copied; the index entries are written once both are done.
        let crcs = || -> Result<Vec<u32>> {
            use std::os::unix::fs::FileExt;
            let mut buf = Vec::new();
            let mut out = Vec::with_capacity(chunks.len());
            for &(_, pos, len, _) in chunks {
                let n =
                    usize::try_from(len).map_err(|_| Error::invalid("chunk larger than memory"))?;
                if n > buf.len() {
                    buf.resize(n, 0);
                }
                src.read_exact_at(&mut buf[..n], pos).map_err(|e| {
                    Error::io(format!("reading {len} bytes at {pos} of the source"), e)
                })?;
                out.push(crc32c::crc32c(&buf[..n]));
            }
            Ok(out)
        };
        let items: Vec<(&[u64], Source, u32)> = chunks
            .iter()
            .map(|&(o, pos, len, m)| {
                (
                    o,
                    Source::File {
                        file: src,
                        pos,
                        len,
                        crc: 0,
                    },
                    m,
                )
            })
            .collect();
        self.put_chunks_with(items, Some(&crcs))
    }

    /// Check every chunk, then store them all under one lock.
    fn put_chunks(&self, chunks: Vec<(&[u64], Source, u32)>) -> Result<()> {
        self.put_chunks_with(chunks, None)
    }

    /// [`Dataset::put_chunks`]; with `crcs`, every chunk comes from one
    /// file and `crcs` gives their checksums: it runs on a second thread
    /// while the copies are made, copies of chunks that follow each other
    /// in both files are made as one, and the index is written after.
    #[allow(clippy::type_complexity)]
    fn put_chunks_with(
        &self,
        chunks: Vec<(&[u64], Source, u32)>,
        crcs: Option<&(dyn Fn() -> Result<Vec<u32>> + Sync)>,
    ) -> Result<()> {
        let mut g = lock(&self.file)?;
        g.st.check_writable()?;
        let addr = self.addr;
        self.flush_chunks(&mut g)?;
        let layout = chunk_layout(&mut g, addr)?;
        let mut todo = Vec::with_capacity(chunks.len());
        for (offset, src, mask) in chunks {
            let coords = coords_of(offset, &layout.chunk, &layout.dims)?;
            let mask = check_stored(&layout, offset, src.len(), mask)?;
            todo.push((coords, src, mask));
        }
        let placed_from_file = crcs.is_some();
        let r = with_index(&mut g, addr, &layout.chunk, |e, st| match crcs {
            None => todo
                .into_iter()
                .try_for_each(|(coords, src, mask)| e.put_from(st, &coords, src, mask)),
            Some(crcs) => {
                let (sums, placed) = crate::par::join(crcs, || copy_runs(e, st, &todo));
                placed.and_then(|placed| {
                    let sums = sums?;
                    for ((coords, addr, size, mask, old), crc) in placed.into_iter().zip(sums) {
                        let entry = ChunkRef {
                            addr,
                            size,
                            mask,
                            crc,
                        };
                        e.record(st, &coords, entry, old)?;
                    }
                    Ok(())
                })
            }
        });
        if r.is_err() && placed_from_file {
            // Chunks were placed (old ones freed) but not all are indexed:
            // nothing of this may reach a commit.
            g.poison();
        }
        r
    }

    /// Write this dataset's cached chunks and drop them: the stored-chunk
    /// calls read and replace what is in the file.
    pub(super) fn flush_chunks(&self, g: &mut Session) -> Result<()> {
        let key = CacheKey::Dataset(self.addr);
        let mut cache = g.caches().take(key);
        let r = if cache.is_dirty() {
            flush_cache(&mut g.st, key, &mut cache)
        } else {
            Ok(())
        };
        g.caches().put(key, Cache::new(cache.capacity));
        r
    }
}

/// Run `f` on the chunk engine of the chunked dataset whose header is at
/// `addr`, then save the index's new root, even after a failure, so that
/// chunks already recorded stay owned.
pub(super) fn with_index<T>(
    g: &mut Session,
    addr: u64,
    chunk: &[u64],
    f: impl FnOnce(&mut Chunked<'_>, &mut Store) -> Result<T>,
) -> Result<T> {
    let mut h = Header::load(&mut g.st, addr)?;
    let m = h
        .dataset
        .as_mut()
        .ok_or_else(|| Error::invalid("not a dataset"))?;
    let Layout::Chunked { index, .. } = &m.layout else {
        return Err(Error::invalid("the dataset is not chunked"));
    };
    let root = *index;
    let mut e = engine(m, chunk, root, &[]);
    let r = f(&mut e, &mut g.st);
    let new_root = e.index;
    if new_root != root {
        if let Some(Layout::Chunked { index, .. }) = h.dataset.as_mut().map(|m| &mut m.layout) {
            *index = new_root;
        }
        h.save(&mut g.st, addr)?;
    }
    r
}

/// Check a chunk's stored length and filter mask against the dataset's
/// layout; the mask to record (0 without filters, as the engine's own
/// writes record).
pub(super) fn check_stored(
    layout: &ChunkLayout,
    offset: &[u64],
    len: u64,
    mask: u32,
) -> Result<u32> {
    let filters = &layout.filters;
    if !Filter::mask_valid(filters, mask) {
        return Err(Error::invalid(format!(
            "filter mask {mask:#x}: 0 (every filter applied), 0xffffffff (none) or, \
             under HDF5 filters, bits for the {} filters skipped",
            filters.len()
        )));
    }
    let chunk_bytes = layout.bytes;
    let unfiltered = Filter::unfiltered(filters, mask);
    let plausible = if unfiltered {
        len == chunk_bytes
    } else {
        len > 0 && len <= chunk_bytes.saturating_mul(2).saturating_add(1 << 16)
    };
    if !plausible {
        return Err(Error::invalid(format!(
            "{len} bytes for a chunk of {chunk_bytes} bytes{} at {offset:?}",
            if unfiltered { " stored unfiltered" } else { "" }
        )));
    }
    Ok(if filters.is_empty() { 0 } else { mask })
}

/// A chunk placed and copied, waiting for its index entry: coordinates,
/// address, size, mask, and the entry it replaces.
type Placed = (Vec<u64>, u64, u64, u32, Option<ChunkRef>);

/// Window and copy chunks whose bytes come from one file, copying each run
/// of chunks that follow each other in both files with one call.
fn copy_runs(
    e: &mut Chunked,
    st: &mut Store,
    todo: &[(Vec<u64>, Source, u32)],
) -> Result<Vec<Placed>> {
    let mut placed = Vec::with_capacity(todo.len());
    // The run being gathered: source file, its position, address, length.
    let mut run: Option<(&std::fs::File, u64, u64, u64)> = None;
    for (coords, src, mask) in todo {
        let Source::File { file, pos, len, .. } = *src else {
            return Err(Error::invalid(
                "chunks from memory among chunks from a file",
            ));
        };
        let (addr, old) = e.place(st, coords, len)?;
        run = match run {
            Some((f, p, a, l)) if std::ptr::eq(f, file) && p + l == pos && a + l == addr => {
                Some((f, p, a, l + len))
            }
            Some((f, p, a, l)) => {
                st.write_data_from_file("chunk", (a, l), f, p, l)?;
                Some((file, pos, addr, len))
            }
            None => Some((file, pos, addr, len)),
        };
        placed.push((coords.clone(), addr, len, *mask, old));
    }
    if let Some((f, p, a, l)) = run {
        st.write_data_from_file("chunk", (a, l), f, p, l)?;
    }
    Ok(placed)
}

/// Read located chunks back to back into `out` (exactly their total size),
/// checking each against its checksum.
fn read_located(
    g: &mut Session,
    refs: &[Option<ChunkRef>],
    out: &mut [u8],
) -> Result<Vec<Option<(usize, u32)>>> {
    let mut at = 0usize;
    let mut found = Vec::with_capacity(refs.len());
    for r in refs {
        match r {
            None => found.push(None),
            Some(r) => {
                let n = r.size as usize;
                let dst = &mut out[at..at + n];
                g.st.driver().read_at(r.addr, dst)?;
                g.st.stats.chunk(r.size);
                crate::chunk::verify(r, dst)?;
                found.push(Some((n, r.mask)));
                at += n;
            }
        }
    }
    Ok(found)
}
