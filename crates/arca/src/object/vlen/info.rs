//! What a byte vector holds: [`VlenInfo`] (`Dataset::vlen_info`), and the
//! check that a dataset's records lie inside its vector without sharing
//! bytes; both walk every stored record a band of rows or a chunk at a
//! time.

use super::fill::fill_record;
use super::proof::{prove_free_ranges, stored_selections};
use super::ragged::read_ragged_locked;
use super::records::{load_vlen, read_records, save_vm};
use crate::error::{Error, Result};
use crate::filter::Filter;
use crate::format::datatype::Datatype;
use crate::format::object_header::Header;
use crate::format::region::check_refs;
use crate::object::dataset::Dataset;
use crate::object::session::Session;
use crate::object::storage::CacheKey;
use crate::vlen::vector::{self, FreeRanges, VecMeta};

/// How a variable-length dataset's data is stored.
///
/// ```
/// use arca::{Datatype, DatasetOptions, File, Selection};
/// let f = File::in_memory().unwrap();
/// let ds = f.root().create_dataset("s", &DatasetOptions::new(Datatype::VlenStr, &[2])).unwrap();
/// ds.write_strings(&Selection::all(&[2]), &["hello", "world!"]).unwrap();
/// let info = ds.vlen_info().unwrap().unwrap();
/// assert_eq!(info.vector_bytes, 11);
/// assert_eq!(info.live_bytes, 11);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct VlenInfo {
    /// Bytes in use in the vector (its logical length).
    pub vector_bytes: u64,
    /// Bytes referenced by elements; the rest is garbage left by overwrites.
    pub live_bytes: u64,
    /// Bytes of file space holding the vector's chunks.
    pub stored_bytes: u64,
    /// Bytes of the vector the stored chunks hold (the partly filled last
    /// chunk counts what is in use).
    pub chunk_logical_bytes: u64,
    /// Number of stored chunks.
    pub chunks: u64,
    /// Bytes per chunk.
    pub chunk_bytes: u64,
    /// The vector's filter pipeline.
    pub filters: Vec<Filter>,
    /// Whether freed ranges are reused.
    pub reuse_space: bool,
    /// Bytes in the list of reusable ranges.
    pub free_bytes: u64,
}

impl VlenInfo {
    /// Uncompressed over stored bytes of the chunks (1.0 when empty).
    pub fn compression_ratio(&self) -> f64 {
        if self.stored_bytes == 0 {
            1.0
        } else {
            self.chunk_logical_bytes as f64 / self.stored_bytes as f64
        }
    }
}

/// Bytes the records of the dataset at `addr` refer to, read a band or a
/// stored chunk at a time so that a large dataset needs little memory.
fn live_bytes(
    g: &mut Session,
    addr: u64,
    dims: &[u64],
    vm: &VecMeta,
    dtype: &Datatype,
    fill: Option<[u64; 2]>,
) -> Result<u64> {
    // The fill value's items count once, whatever elements show them.
    let mut total = fill.map_or(0, |f| f[1]);
    for sel in stored_selections(g, addr, dims)? {
        total += read_records(g, addr, &sel, vm, dtype)?
            .iter()
            .filter(|&&r| Some(r) != fill)
            .map(|r| r[1])
            .sum::<u64>();
    }
    Ok(total)
}

/// Check a variable-length dataset's records against its vector: each lies
/// inside it, and in a vector that reuses space no two live elements share
/// bytes and none lies in a free range ([`prove_free_ranges`]). Region
/// references must each decode.
pub(crate) fn check_records(g: &mut Session, addr: u64) -> Result<()> {
    let (_, dtype, dims, _) = load_vlen(g, addr)?;
    if dtype == Datatype::RegionRef {
        for sel in stored_selections(g, addr, &dims)? {
            let key = CacheKey::Vector(addr);
            let mut cache = g.caches().take(key);
            let r = read_ragged_locked(g, addr, &mut cache, &sel, |n| vec![0; n]);
            g.caches().put(key, cache);
            let (values, offsets) = r?;
            check_refs(&values, &offsets)
                .map_err(|e| Error::corrupt("region reference", addr, e.to_string()))?;
        }
    }
    prove_free_ranges(g, addr)
}

impl Dataset {
    /// How the byte vector is stored, or `None` for a fixed-length dataset.
    /// Reads every record to count live bytes.
    ///
    /// # Errors
    /// [`Error::Corrupt`] for damaged storage.
    pub fn vlen_info(&self) -> Result<Option<VlenInfo>> {
        let addr = self.addr;
        self.with_vector(|g, cache| {
            let h = Header::load(&mut g.st, addr)?;
            let fill = fill_record(&g.st, &h)?;
            let Some(m) = h.dataset else {
                return Ok(None);
            };
            let Some(mut vm) = m.vlen else {
                return Ok(None);
            };
            let item = m.dtype.vector_item().unwrap_or(1);
            vector::flush(&mut g.st, cache, &mut vm, item)?;
            save_vm(g, addr, vm.clone())?;
            let chunks = vector::entries(&mut g.st, &vm)?;
            // Records still in the chunk cache count too: the walk below
            // goes by the stored chunks.
            g.write_back()?;
            let live = live_bytes(g, addr, &m.dims, &vm, &m.dtype, fill)?;
            let free = if vm.reuse {
                FreeRanges::load(&g.st, &vm)?.total()
            } else {
                0
            };
            Ok(Some(VlenInfo {
                vector_bytes: vm.len,
                live_bytes: live,
                stored_bytes: chunks.iter().map(|c| c.1.size).sum(),
                chunk_logical_bytes: chunks
                    .iter()
                    .map(|(c, _)| {
                        vm.chunk_bytes
                            .min(vm.len.saturating_sub(c[0] * vm.chunk_bytes))
                    })
                    .sum(),
                chunks: chunks.len() as u64,
                chunk_bytes: vm.chunk_bytes,
                filters: vm.filters.clone(),
                reuse_space: vm.reuse,
                free_bytes: free,
            }))
        })
    }
}
