//! Chunks as stored: listing a chunked dataset's chunks and moving their
//! filtered bytes in and out unchanged, so that a copy between files (an
//! HDF5 import or export, a repack) never decompresses and recompresses.

use super::dataset::{engine, flush_cache};
use super::{lock, Dataset, Session};
use crate::chunk::Cache;
use crate::error::{Error, Result};
use crate::filter::MASK_RAW;
use crate::format::object_header::{Header, Layout};

/// One stored chunk of a chunked dataset.
///
/// ```
/// use arca::{Datatype, DatasetOptions, File, Filter, Selection};
/// let f = File::in_memory().unwrap();
/// let ds = f.root().create_dataset("x", &DatasetOptions::new(Datatype::uint(2), &[10])
///     .chunks(&[4]).filters(&[Filter::Zstd(3)])).unwrap();
/// ds.write_raw(&Selection::from_ranges(&[(4, 6, 1)]).unwrap(), &[1, 0, 2, 0]).unwrap();
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

/// The chunk shape and index of the chunked dataset at `addr`, and its
/// chunk's decoded size and whether it has filters.
fn chunk_layout(g: &mut Session, addr: u64) -> Result<(Vec<u64>, Vec<u64>, u64, bool)> {
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
    Ok((
        chunk.to_vec(),
        m.dims.to_vec(),
        bytes,
        !m.filters.is_empty(),
    ))
}

/// The grid coordinates of the chunk whose first element is `offset`.
fn coords_of(offset: &[u64], chunk: &[u64], dims: &[u64]) -> Result<Vec<u64>> {
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
        let mut g = lock(&self.shared)?;
        let addr = self.addr;
        self.flush_chunks(&mut g)?;
        let (chunk, _, _, _) = chunk_layout(&mut g, addr)?;
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
    /// let (bytes, mask) = a.read_chunk_raw(&[4]).unwrap().unwrap();
    /// let b = f.root().create_dataset("b", &o).unwrap();
    /// b.write_chunk_raw(&[4], &bytes, mask).unwrap();
    /// assert_eq!(b.read_all::<u8>().unwrap(), [0, 0, 0, 0, 7, 7, 7, 7]);
    /// ```
    ///
    /// # Errors
    /// As for [`Dataset::stored_chunks`], and [`Error::InvalidArgument`] for
    /// an offset that does not start a chunk inside the extent.
    pub fn read_chunk_raw(&self, offset: &[u64]) -> Result<Option<(Vec<u8>, u32)>> {
        let mut g = lock(&self.shared)?;
        let addr = self.addr;
        self.flush_chunks(&mut g)?;
        let (chunk, dims, _, _) = chunk_layout(&mut g, addr)?;
        let coords = coords_of(offset, &chunk, &dims)?;
        let h = Header::load(&mut g.st, addr)?;
        let m = h
            .dataset
            .as_ref()
            .ok_or_else(|| Error::invalid("not a dataset"))?;
        let Layout::Chunked { index, .. } = &m.layout else {
            return Err(Error::invalid("the dataset is not chunked"));
        };
        let e = engine(m, &chunk, *index, &[]);
        let Some(r) = e.entry(&mut g.st, &coords)? else {
            return Ok(None);
        };
        g.st.check_live("chunk", r.addr, r.size)?;
        let mut buf = vec![0u8; r.size as usize];
        g.st.driver().read_at(r.addr, &mut buf)?;
        crate::chunk::verify(&r, &buf)?;
        Ok(Some((buf, r.mask)))
    }

    /// Store `bytes` as the chunk whose first element is `offset`, exactly
    /// as given: already through the dataset's filters (`mask` 0), or the
    /// chunk's elements unfiltered in the dataset's byte order (`mask`
    /// `u32::MAX`, the only choice without filters). The bytes are
    /// checksummed as they are; reads decode and check them as any chunk.
    ///
    /// # Errors
    /// As for [`Dataset::read_chunk_raw`]; [`Error::InvalidArgument`] for
    /// another mask, unfiltered bytes that are not exactly one chunk, or
    /// filtered bytes of an implausible size; [`Error::ReadOnly`].
    pub fn write_chunk_raw(&self, offset: &[u64], bytes: &[u8], mask: u32) -> Result<()> {
        let mut g = lock(&self.shared)?;
        g.st.check_writable()?;
        let addr = self.addr;
        self.flush_chunks(&mut g)?;
        let (chunk, dims, chunk_bytes, filtered) = chunk_layout(&mut g, addr)?;
        let coords = coords_of(offset, &chunk, &dims)?;
        let raw = mask == MASK_RAW || !filtered;
        if mask != 0 && mask != MASK_RAW {
            return Err(Error::invalid(format!(
                "filter mask {mask:#x}: 0 (every filter applied) or 0xffffffff (none)"
            )));
        }
        let plausible = if raw {
            bytes.len() as u64 == chunk_bytes
        } else {
            !bytes.is_empty()
                && (bytes.len() as u64) <= chunk_bytes.saturating_mul(2).saturating_add(1 << 16)
        };
        if !plausible {
            return Err(Error::invalid(format!(
                "{} bytes for a chunk of {chunk_bytes} bytes{}",
                bytes.len(),
                if raw { " stored unfiltered" } else { "" }
            )));
        }
        let mut h = Header::load(&mut g.st, addr)?;
        let m = h
            .dataset
            .as_mut()
            .ok_or_else(|| Error::invalid("not a dataset"))?;
        let Layout::Chunked { index, .. } = &mut m.layout else {
            return Err(Error::invalid("the dataset is not chunked"));
        };
        let root = *index;
        let mut e = engine(m, &chunk, root, &[]);
        // Without filters the engine records 0, as it does for its own writes.
        let stored = if !filtered { 0 } else { mask };
        e.put(&mut g.st, &coords, bytes, stored)?;
        let new_root = e.index;
        if new_root != root {
            let m = h
                .dataset
                .as_mut()
                .ok_or_else(|| Error::invalid("not a dataset"))?;
            if let Layout::Chunked { index, .. } = &mut m.layout {
                *index = new_root;
            }
            h.save(&mut g.st, addr)?;
        }
        Ok(())
    }

    /// Write this dataset's cached chunks and drop them: raw chunk calls
    /// read and replace what is in the file.
    fn flush_chunks(&self, g: &mut Session) -> Result<()> {
        let mut cache = g.cache(self.addr);
        let r = if cache.is_dirty() {
            flush_cache(g, self.addr, &mut cache)
        } else {
            Ok(())
        };
        g.caches.insert(self.addr, Cache::new(cache.capacity));
        r
    }
}
