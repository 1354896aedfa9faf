//! Chunks written by other processes: space placed for filtered chunks
//! inside a transaction, written by whoever holds the bytes (the ranks of
//! an MPI job, each with its own file descriptor), then sealed into the
//! dataset's index with their checksums. Compression and the bulk writes
//! then run in every process at once; only the index is written by the
//! process that holds the file.
//!
//! The chunks of one placement stay pending in the session until
//! [`Dataset::seal_chunks`]: a transaction that ends with chunks pending
//! is rolled back, since their old space is already freed and their new
//! space not yet indexed.

use super::chunks::{check_raw, chunk_layout, coords_of, Placed};
use super::dataset::engine;
use super::{lock, Dataset, Session};
use crate::error::{Error, Result};
use crate::format::chunk_index::ChunkRef;
use crate::format::object_header::{Header, Layout};

/// Chunks placed for one dataset and not sealed yet.
#[derive(Debug)]
pub(crate) struct Pending {
    /// The dataset's header address.
    dataset: u64,
    /// Grid coordinates, address, size, mask and the entry each replaces.
    chunks: Vec<Placed>,
}

impl Session {
    /// Whether chunks were placed and not sealed (a commit must not
    /// happen: see the module comment).
    pub(crate) fn chunks_pending(&self) -> bool {
        !self.pending.is_empty()
    }
}

impl Dataset {
    /// Place chunks whose stored bytes another process will write: for
    /// each `(offset, stored length, mask)` (as for
    /// [`Dataset::write_chunks_raw`]) the file address where its bytes
    /// go. Needs an open transaction; the caller writes every chunk's
    /// bytes at its address, makes sure they reached the file (a write,
    /// not necessarily a sync: the commit syncs the file), then calls
    /// [`Dataset::seal_chunks`] before the transaction ends.
    ///
    /// ```
    /// use arca::{Datatype, DatasetOptions, File, Filter};
    /// use std::os::unix::fs::FileExt;
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("p.arca");
    /// let f = File::create(&path).unwrap();
    /// let o = DatasetOptions::new(Datatype::uint(1), &[8]).chunks(&[8]).filters(&[Filter::Zstd(1)]);
    /// let ds = f.root().create_dataset("x", &o).unwrap();
    /// let (bytes, mask) = arca::encode_chunk(&[Filter::Zstd(1)], 1, &[7; 8]).unwrap();
    /// f.begin_transaction().unwrap();
    /// let at = ds.place_chunks(&[(&[0], bytes.len() as u64, mask)]).unwrap();
    /// // Another process would do this with its own descriptor.
    /// std::fs::OpenOptions::new().write(true).open(&path).unwrap()
    ///     .write_all_at(&bytes, at[0]).unwrap();
    /// ds.seal_chunks(&[crc32c::crc32c(&bytes)]).unwrap();
    /// f.end_transaction(true).unwrap();
    /// assert_eq!(ds.read_all::<u8>().unwrap(), [7; 8]);
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] outside a transaction, for chunks of this
    /// dataset already pending, a chunk named twice, or a chunk
    /// [`Dataset::write_chunks_raw`] would refuse; [`Error::ReadOnly`].
    pub fn place_chunks(&self, chunks: &[(&[u64], u64, u32)]) -> Result<Vec<u64>> {
        let mut g = lock(&self.shared)?;
        g.st.check_writable()?;
        let addr = self.addr;
        if g.tx_depth == 0 {
            return Err(Error::invalid(
                "chunks are placed inside a transaction, which their seal must end before",
            ));
        }
        if g.pending.iter().any(|p| p.dataset == addr) {
            return Err(Error::invalid(
                "chunks of this dataset are placed and not sealed yet",
            ));
        }
        self.flush_chunks(&mut g)?;
        let layout = chunk_layout(&mut g, addr)?;
        let mut todo = Vec::with_capacity(chunks.len());
        let mut seen = std::collections::HashSet::with_capacity(chunks.len());
        for &(offset, len, mask) in chunks {
            let coords = coords_of(offset, &layout.chunk, &layout.dims)?;
            let mask = check_raw(&layout, offset, len, mask)?;
            if !seen.insert(coords.clone()) {
                return Err(Error::invalid(format!(
                    "the chunk at {offset:?} is placed twice"
                )));
            }
            todo.push((coords, len, mask));
        }
        let h = Header::load(&mut g.st, addr)?;
        let m = h
            .dataset
            .as_ref()
            .ok_or_else(|| Error::invalid("not a dataset"))?;
        let Layout::Chunked { index, .. } = &m.layout else {
            return Err(Error::invalid("the dataset is not chunked"));
        };
        let mut e = engine(m, &layout.chunk, *index, &[]);
        let mut placed = Vec::with_capacity(todo.len());
        for (coords, len, mask) in todo {
            // Inside a transaction the journal is on, so place() never
            // hands back the old extent: nothing live is written over.
            match e.place(&mut g.st, &coords, len) {
                Ok((at, old)) => placed.push((coords, at, len, mask, old)),
                Err(err) => {
                    // Old chunks may already be freed: nothing of this
                    // transaction may commit.
                    g.tx_doomed = true;
                    return Err(err);
                }
            }
        }
        // J7: the caller writes at once, maybe into space the last commit
        // freed, whose invalidation must be durable first.
        g.st.pager.journal().settle()?;
        let out = placed.iter().map(|p| p.1).collect();
        g.pending.push(Pending {
            dataset: addr,
            chunks: placed,
        });
        Ok(out)
    }

    /// Index the chunks [`Dataset::place_chunks`] placed for this dataset,
    /// now that their bytes are written: `crcs` holds each one's CRC32C
    /// (Castagnoli), in the order they were placed. Reads check every
    /// chunk against it.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when no chunks of this dataset are
    /// pending or `crcs` has the wrong length; a failure while indexing
    /// dooms the transaction.
    pub fn seal_chunks(&self, crcs: &[u32]) -> Result<()> {
        let mut g = lock(&self.shared)?;
        g.st.check_writable()?;
        let addr = self.addr;
        let i = g
            .pending
            .iter()
            .position(|p| p.dataset == addr)
            .ok_or_else(|| Error::invalid("no chunks of this dataset are placed"))?;
        if g.pending[i].chunks.len() != crcs.len() {
            return Err(Error::invalid(format!(
                "{} checksums for {} placed chunks",
                crcs.len(),
                g.pending[i].chunks.len()
            )));
        }
        let p = g.pending.swap_remove(i);
        let r = seal(&mut g, addr, p, crcs);
        if r.is_err() {
            g.tx_doomed = true;
        }
        r
    }
}

/// Record every pending chunk in the index and save its root.
fn seal(g: &mut Session, addr: u64, p: Pending, crcs: &[u32]) -> Result<()> {
    let layout = chunk_layout(g, addr)?;
    let mut h = Header::load(&mut g.st, addr)?;
    let m = h
        .dataset
        .as_mut()
        .ok_or_else(|| Error::invalid("not a dataset"))?;
    let Layout::Chunked { index, .. } = &m.layout else {
        return Err(Error::invalid("the dataset is not chunked"));
    };
    let root = *index;
    let mut e = engine(m, &layout.chunk, root, &[]);
    for ((coords, at, size, mask, old), &crc) in p.chunks.into_iter().zip(crcs) {
        let entry = ChunkRef {
            addr: at,
            size,
            mask,
            crc,
        };
        e.record(&mut g.st, &coords, entry, old)?;
    }
    let new_root = e.index;
    if new_root != root {
        if let Some(Layout::Chunked { index, .. }) = h.dataset.as_mut().map(|m| &mut m.layout) {
            *index = new_root;
        }
        h.save(&mut g.st, addr)?;
    }
    Ok(())
}
