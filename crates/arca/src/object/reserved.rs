//! Chunks written by other processes: space reserved for filtered chunks
//! inside a transaction, filled by whoever holds the bytes (the ranks of
//! an MPI job, each with its own file descriptor, packing their chunks
//! into one region as they compress them), then sealed into the dataset's
//! index with the chunks' addresses and checksums. Compression and the
//! bulk writes then run in every process at once; only the index is
//! written by the process that holds the file.
//!
//! The session keeps the regions reserved until [`Dataset::seal_chunks`]:
//! a transaction that ends with space still reserved is rolled back, since
//! that space is owned by nothing yet.

use super::dataset::Dataset;
use super::handle::lock;
use super::session::Session;
use super::stored_chunks::{check_stored, chunk_layout, coords_of, with_index, ChunkLayout};
use crate::error::{Error, Result};
use crate::format::chunk_index::ChunkRef;
use crate::space::SpaceKind;

/// One chunk written into reserved space, for [`Dataset::seal_chunks`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenChunk {
    /// The chunk's first element, per dimension.
    pub offset: Vec<u64>,
    /// Where its stored bytes begin in the file.
    pub addr: u64,
    /// Stored bytes.
    pub len: u64,
    /// Its filter mask (see [`Dataset::write_chunk_stored`]).
    pub mask: u32,
    /// CRC32C (Castagnoli) of its stored bytes.
    pub crc: u32,
}

impl Dataset {
    /// Reserve `len` bytes of the file for this dataset's chunks, which
    /// other processes will write: the region's address. Needs an open
    /// transaction. The writers put each chunk's stored bytes (from
    /// [`crate::encode_chunk`] or [`crate::encode_slab`]) anywhere inside
    /// the region, without overlaps, make sure they reached the file (a
    /// write, not a sync: the commit syncs the file), then
    /// [`Dataset::seal_chunks`] indexes them and gives back what they left
    /// unused, before the transaction ends.
    ///
    /// ```
    /// use arca::{Datatype, DatasetOptions, File, Filter, WrittenChunk};
    /// use std::os::unix::fs::FileExt;
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("p.arca");
    /// let f = File::create(&path).unwrap();
    /// let o = DatasetOptions::new(Datatype::uint(1), &[8]).chunks(&[8]).filters(&[Filter::Zstd(1)]);
    /// let ds = f.root().create_dataset("x", &o).unwrap();
    /// let (bytes, mask) = arca::encode_chunk(&[Filter::Zstd(1)], 1, &[7; 8]).unwrap();
    /// f.begin_transaction().unwrap();
    /// let at = ds.reserve_chunks(8).unwrap(); // a chunk never stores more than its elements
    /// // Another process would do this with its own descriptor.
    /// std::fs::OpenOptions::new().write(true).open(&path).unwrap()
    ///     .write_all_at(&bytes, at).unwrap();
    /// let crc = crc32c::crc32c(&bytes);
    /// ds.seal_chunks(&[WrittenChunk { offset: vec![0], addr: at, len: bytes.len() as u64, mask, crc }])
    ///     .unwrap();
    /// f.end_transaction(true).unwrap();
    /// assert_eq!(ds.read_all::<u8>().unwrap(), [7; 8]);
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] outside a transaction, for a dataset that
    /// is not chunked or an empty region; [`Error::ReadOnly`].
    pub fn reserve_chunks(&self, len: u64) -> Result<u64> {
        let mut g = lock(&self.file)?;
        g.st.check_writable()?;
        let addr = self.addr;
        if !g.in_transaction() {
            return Err(Error::invalid(
                "chunk space is reserved inside a transaction, which their seal must end before",
            ));
        }
        if len == 0 {
            return Err(Error::invalid("an empty region reserved for chunks"));
        }
        self.flush_chunks(&mut g)?;
        chunk_layout(&mut g, addr)?;
        let at = g.st.space.alloc(SpaceKind::Data, len)?;
        // J7: the writers write at once, maybe into space the last commit
        // freed, whose invalidation must be durable first.
        g.st.pager.journal().settle()?;
        g.reserve(addr, (at, len));
        Ok(at)
    }

    /// Index the chunks written into the space [`Dataset::reserve_chunks`]
    /// reserved for this dataset, replacing any stored before, and give
    /// back the reserved bytes no chunk holds. Every region this dataset
    /// reserved is sealed at once. Reads check each chunk against `crc`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when nothing is reserved, or for a chunk
    /// outside the reserved regions, overlapping another, named twice, or
    /// one [`Dataset::write_chunks_stored`] would refuse; nothing is indexed
    /// then and the space stays reserved. A failure while indexing dooms
    /// the transaction.
    pub fn seal_chunks(&self, chunks: &[WrittenChunk]) -> Result<()> {
        let mut g = lock(&self.file)?;
        g.st.check_writable()?;
        let addr = self.addr;
        let regions = g
            .reserved(addr)
            .map(<[_]>::to_vec)
            .ok_or_else(|| Error::invalid("no chunk space of this dataset is reserved"))?;
        // Cached chunks would hide the sealed ones from reads.
        self.flush_chunks(&mut g)?;
        let layout = chunk_layout(&mut g, addr)?;
        let todo = check_written(&layout, &regions, chunks)?;
        g.take_reserved(addr);
        let r = seal(&mut g, addr, &layout.chunk, regions, todo);
        if r.is_err() {
            g.doom();
        }
        r
    }
}

/// Check every written chunk against the layout and the regions; their
/// grid coordinates, and the chunks in address order.
fn check_written<'a>(
    layout: &ChunkLayout,
    regions: &[(u64, u64)],
    chunks: &'a [WrittenChunk],
) -> Result<Vec<(Vec<u64>, &'a WrittenChunk, u32)>> {
    let mut todo = Vec::with_capacity(chunks.len());
    let mut seen = std::collections::HashSet::with_capacity(chunks.len());
    for c in chunks {
        let coords = coords_of(&c.offset, &layout.chunk, &layout.dims)?;
        let mask = check_stored(layout, &c.offset, c.len, c.mask)?;
        let inside = c
            .addr
            .checked_add(c.len)
            .is_some_and(|end| regions.iter().any(|&(a, l)| c.addr >= a && end <= a + l));
        if !inside {
            return Err(Error::invalid(format!(
                "the chunk at {:?} ({} bytes at {}) lies outside the space reserved",
                c.offset, c.len, c.addr
            )));
        }
        if !seen.insert(coords.clone()) {
            return Err(Error::invalid(format!(
                "the chunk at {:?} is written twice",
                c.offset
            )));
        }
        todo.push((coords, c, mask));
    }
    todo.sort_by_key(|t| t.1.addr);
    for w in todo.windows(2) {
        if w[0].1.addr + w[0].1.len > w[1].1.addr {
            return Err(Error::invalid(format!(
                "the chunks at {:?} and {:?} overlap in the file",
                w[0].1.offset, w[1].1.offset
            )));
        }
    }
    Ok(todo)
}

/// Free the reserved bytes no chunk holds, then record every written
/// chunk in the index (freeing what each replaces) and save its root.
fn seal(
    g: &mut Session,
    addr: u64,
    chunk: &[u64],
    regions: Vec<(u64, u64)>,
    todo: Vec<(Vec<u64>, &WrittenChunk, u32)>,
) -> Result<()> {
    // The regions' unused bytes first, between and after the chunks, so
    // that the index's new pages can take them and the room's end, at the
    // end of the file, is cut there at the commit.
    let mut regions = regions;
    regions.sort_unstable();
    let mut k = 0;
    for (a, l) in regions {
        let mut at = a;
        while k < todo.len() && todo[k].1.addr < a + l {
            let c = todo[k].1;
            if c.addr > at {
                g.st.space.free(SpaceKind::Data, at, c.addr - at)?;
            }
            at = c.addr + c.len;
            k += 1;
        }
        if a + l > at {
            g.st.space.free(SpaceKind::Data, at, a + l - at)?;
        }
    }
    with_index(g, addr, chunk, |e, st| {
        for (coords, c, mask) in &todo {
            let old = e.entry(st, coords)?;
            if let Some(o) = old {
                st.check_live("chunk", o.addr, o.size)?;
                st.space.free(SpaceKind::Data, o.addr, o.size)?;
            }
            let entry = ChunkRef {
                addr: c.addr,
                size: c.len,
                mask: *mask,
                crc: c.crc,
            };
            e.record(st, coords, entry, old)?;
        }
        Ok(())
    })
}
