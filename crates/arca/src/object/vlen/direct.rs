//! Writes that bypass the library: a vector grown by whole chunks for
//! other processes to write into the file themselves, sealed with their
//! checksums afterwards, and records pointed at what they wrote.

use super::records::{item_size, load_vlen, save_vm};
use crate::error::{Error, Result};
use crate::format::vlen_vector::encode_records;
use crate::object::dataset::Dataset;
use crate::object::storage;
use crate::selection::Selection;
use crate::vlen::vector::{self, VlenExtent};

impl Dataset {
    /// Grow an unfiltered, append-only vector by `len` bytes in one extent
    /// of whole chunks, starting at the next chunk boundary, and return where
    /// it lies. The caller writes the bytes at `addr` itself, then calls
    /// [`Dataset::vlen_seal`] to checksum the chunks and
    /// [`Dataset::write_vlen_records`] to point elements at them. Bytes
    /// between the old end and the boundary stay unused.
    ///
    /// ```
    /// use arca::{Datatype, DatasetOptions, File, Selection};
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("x.arca");
    /// let f = File::create(&path).unwrap();
    /// let ds = f.root().create_dataset("s", &DatasetOptions::new(Datatype::VlenStr, &[2])).unwrap();
    /// let ext = ds.vlen_extend(8).unwrap();
    /// std::os::unix::fs::FileExt::write_all_at(
    ///     &std::fs::OpenOptions::new().write(true).open(&path).unwrap(), b"abcdefgh", ext.addr,
    /// ).unwrap();
    /// ds.vlen_seal(&ext, &[]).unwrap();
    /// ds.write_vlen_records(&Selection::all(&[2]), &[ext.offset, 3, ext.offset + 3, 5]).unwrap();
    /// assert_eq!(ds.read_strings(&Selection::all(&[2])).unwrap(), vec!["abc", "defgh"]);
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a filtered or space-reusing vector (its
    /// writes must go through [`Dataset::write_ragged_bytes`]) or a length that
    /// is not whole items; [`Error::ReadOnly`].
    pub fn vlen_extend(&self, len: u64) -> Result<VlenExtent> {
        let addr = self.addr;
        self.with_vector(|g, cache| {
            g.st.check_writable()?;
            let (_, dtype, _, mut vm) = load_vlen(g, addr)?;
            let item = item_size(&dtype)?;
            if !vm.filters.is_empty() || vm.reuse {
                return Err(Error::invalid(
                    "direct extension needs an unfiltered, append-only vector",
                ));
            }
            if !len.is_multiple_of(item as u64) {
                return Err(Error::invalid("extension is not whole items"));
            }
            vector::flush(&mut g.st, cache, &mut vm, item)?;
            let c = vm.chunk_bytes;
            let offset = vm.len.div_ceil(c) * c;
            let ext = vector::extend_direct(&mut g.st, &mut vm, offset, len)?;
            save_vm(g, addr, vm)?;
            // J7: the caller writes the extent itself, at once; it may lie in
            // space the last commit freed, so that commit's invalidation
            // must be durable first (arca may have written nothing here that
            // would have synced it).
            g.st.pager.journal().settle()?;
            Ok(VlenExtent {
                offset,
                addr: ext,
                len,
                chunk_bytes: c,
            })
        })
    }

    /// Record the checksums of an extent's chunks once their bytes are in
    /// the file: `crcs` gives `(chunk number within the extent, CRC32C)` for
    /// chunks the caller checksummed; the rest are read back and summed here.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an extent this vector does not hold.
    pub fn vlen_seal(&self, ext: &VlenExtent, crcs: &[(u64, u32)]) -> Result<()> {
        let addr = self.addr;
        self.with_vector(|g, _| {
            g.st.check_writable()?;
            let (_, _, _, mut vm) = load_vlen(g, addr)?;
            vector::seal_direct(&mut g.st, &mut vm, ext, crcs)?;
            save_vm(g, addr, vm)
        })
    }

    /// Where the records of a contiguous variable-length dataset lie in the
    /// file, `(addr, bytes)`, allocating them first if needed; `None` when
    /// the records are chunked. Element `i` (row-major) is the 16 bytes at
    /// `addr + 16·i`: little-endian u64 offset, u64 length. Their current
    /// contents are journaled first, so that a rollback of the transaction
    /// also undoes records written there directly (parallel writers do).
    ///
    /// # Errors
    /// [`Error::ReadOnly`]; [`Error::InvalidArgument`] for a fixed-length
    /// dataset or a space-reusing vector.
    pub fn vlen_record_extent(&self) -> Result<Option<(u64, u64)>> {
        let addr = self.addr;
        self.with_vector(|g, _| {
            g.st.check_writable()?;
            let (_, _, _, vm) = load_vlen(g, addr)?;
            if vm.reuse {
                return Err(Error::invalid(
                    "records of a space-reusing vector are written by write_ragged",
                ));
            }
            g.prove_contiguous(addr)?;
            let ext = storage::contiguous_extent(&mut g.st, addr)?;
            if let Some(e) = ext {
                g.st.pager.journal().preserve(&[e])?;
            }
            Ok(ext)
        })
    }

    /// Point the elements of `sel` at vector ranges: `records` holds
    /// `(offset, length)` byte pairs, flattened, one pair per element.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a range outside the vector, a length
    /// that is not whole items, the wrong number of pairs, or a vector that
    /// reuses space (its free list would not know of the old ranges).
    pub fn write_vlen_records(&self, sel: &Selection, records: &[u64]) -> Result<()> {
        let addr = self.addr;
        self.with_vector(|g, _| {
            g.st.check_writable()?;
            let (_, dtype, dims, vm) = load_vlen(g, addr)?;
            let item = item_size(&dtype)? as u64;
            sel.check(&dims)?;
            if vm.reuse {
                return Err(Error::invalid(
                    "records of a space-reusing vector are written by write_ragged",
                ));
            }
            if records.len() as u64 != 2 * sel.len() {
                return Err(Error::invalid(format!(
                    "{} numbers for {} elements; need an offset and a length each",
                    records.len(),
                    sel.len()
                )));
            }
            let pairs: Vec<(u64, u64)> = records.chunks_exact(2).map(|p| (p[0], p[1])).collect();
            if pairs
                .iter()
                .any(|&(o, l)| l % item != 0 || o.checked_add(l).is_none_or(|e| e > vm.len))
            {
                return Err(Error::invalid(
                    "record outside the vector or not whole items",
                ));
            }
            g.prove_contiguous(addr)?;
            let (st, caches) = g.storage();
            storage::write_bytes(st, caches, addr, sel, &encode_records(&pairs))
        })
    }
}
