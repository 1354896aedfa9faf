//! The records of variable-length values: each element's (or each slot's)
//! `[offset, length]` into the dataset's byte vector, read and checked
//! against the vector; loading and saving the vector's description; and
//! the lock and cache every vector operation runs under.

use crate::chunk::Cache;
use crate::error::{Error, Result};
use crate::format::datatype::{Datatype, VLEN_RECORD};
use crate::format::object_header::Header;
use crate::format::rows::{check_nested, fixed_len, item_records, record_at, records};
use crate::format::vlen_vector::decode_records;
use crate::object::dataset::Dataset;
use crate::object::handle::lock;
use crate::object::session::Session;
use crate::object::storage::{self, CacheKey};
use crate::selection::Selection;
use crate::vlen::vector::VecMeta;

/// The size of one item of a variable-length type's values (1 for
/// strings); refused for other types, naming the methods they take.
pub(crate) fn item_size(dtype: &Datatype) -> Result<usize> {
    let plain = dtype.base().filter(|_| !dtype.nests_vlen());
    plain.map(|b| b.size()).ok_or_else(|| {
        Error::invalid(if dtype.has_vlen() {
            format!("dataset type {dtype} has variable-length members; use read_rows/write_rows")
        } else {
            format!("dataset type {dtype} is not variable-length; use read/write")
        })
    })
}

/// Whether `bytes` could be allocated. Sizes here come from a file's
/// records or extents and may be absurd: failing is an error, not an abort.
/// The probe is never touched, so it costs no page faults, and the buffer
/// made afterwards comes zeroed from the allocator without a pass over it.
pub(crate) fn can_hold(bytes: usize) -> bool {
    Vec::<u8>::new().try_reserve_exact(bytes).is_ok()
}

/// The records of `sel` as `[offset, length]` pairs, checked against the
/// vector: one per element for a variable-length type, one per slot of each
/// element (element by element) for a compound with such members. Plain
/// records are read straight into the pairs and converted in place: a large
/// read holds one copy of its records, not two.
pub(crate) fn read_records(
    g: &mut Session,
    addr: u64,
    sel: &Selection,
    vm: &VecMeta,
    dtype: &Datatype,
) -> Result<Vec<[u64; 2]>> {
    if !dtype.is_vlen() || dtype.nests_vlen() {
        let (elems, mut recs) = read_slot_records(g, addr, sel, vm, dtype)?;
        drop(elems);
        if dtype.nests_vlen() {
            // The records inside the values too: they own vector bytes.
            let typed = with_slot_types(dtype, &recs);
            let key = CacheKey::Vector(addr);
            let mut cache = g.caches().take(key);
            let mut vm = vm.clone();
            let inner = inner_records(g, &mut cache, &mut vm, addr, &typed);
            g.caches().put(key, cache);
            recs.extend(inner?);
        }
        return Ok(recs);
    }
    let item = item_size(dtype)?;
    // A selection of a huge, sparsely written dataset can ask for more
    // records than memory holds.
    let n = usize::try_from(sel.len())
        .ok()
        .filter(|&n| n.checked_mul(VLEN_RECORD).is_some_and(can_hold))
        .ok_or_else(|| too_many(sel))?;
    let mut recs = vec![[0u64; 2]; n];
    let (st, caches) = g.storage();
    storage::read_bytes(st, caches, addr, sel, bytemuck::cast_slice_mut(&mut recs))?;
    decode_records(&mut recs, item as u64, vm.len, addr)?;
    Ok(recs)
}

/// The error for a selection whose records memory cannot hold.
pub(crate) fn too_many(sel: &Selection) -> Error {
    Error::invalid(format!(
        "{} elements' records are more than can be held in memory; read a smaller selection",
        sel.len()
    ))
}

pub(crate) fn load_vlen(
    g: &mut Session,
    addr: u64,
) -> Result<(Header, Datatype, Vec<u64>, VecMeta)> {
    let h = Header::load(&mut g.st, addr)?;
    let m = h
        .dataset
        .as_ref()
        .ok_or_else(|| Error::invalid("not a dataset"))?;
    if !m.dtype.has_vlen() {
        item_size(&m.dtype)?;
    }
    let vm = m.vlen.clone().ok_or_else(|| {
        Error::corrupt(
            "dataset header",
            addr,
            "variable-length type without a vector",
        )
    })?;
    let (dt, dims) = (m.dtype.clone(), m.dims.to_vec());
    Ok((h, dt, dims, vm))
}

/// Put `vm` back into the header at `addr` (reloaded: the primary write may
/// have changed it).
pub(crate) fn save_vm(g: &mut Session, addr: u64, vm: VecMeta) -> Result<()> {
    let mut h = Header::load(&mut g.st, addr)?;
    if let Some(m) = h.dataset.as_mut() {
        if m.vlen.as_ref() != Some(&vm) {
            m.vlen = Some(vm);
            h.save(&mut g.st, addr)?;
        }
    }
    Ok(())
}

/// The elements of `sel` (fixed part, native order, records as stored)
/// and their slots' records as `[offset, length]`, each checked to be whole
/// items inside the vector.
pub(crate) fn read_slot_records(
    g: &mut Session,
    addr: u64,
    sel: &Selection,
    vm: &VecMeta,
    dtype: &Datatype,
) -> Result<(Vec<u8>, Vec<[u64; 2]>)> {
    let slots = dtype.vlen_slots().len();
    let bytes = fixed_len(dtype, sel.len()).map_err(|_| too_many(sel))?;
    let n_recs = (sel.len() as usize).saturating_mul(slots);
    if !can_hold(bytes) || !n_recs.checked_mul(VLEN_RECORD).is_some_and(can_hold) {
        return Err(too_many(sel));
    }
    let mut elems = vec![0u8; bytes];
    let (st, caches) = g.storage();
    storage::read_bytes(st, caches, addr, sel, &mut elems)?;
    let mut recs = Vec::with_capacity(n_recs);
    for (_, o, l, item) in records(dtype, &elems) {
        if !l.is_multiple_of(item as u64) || o.checked_add(l).is_none_or(|e| e > vm.len) {
            return Err(Error::corrupt(
                "variable-length record",
                addr,
                format!(
                    "member value at offset {o} of {l} bytes does not fit a vector of {} bytes",
                    vm.len
                ),
            ));
        }
        recs.push([o, l]);
    }
    Ok((elems, recs))
}

impl Dataset {
    /// Run `f` under the file's lock with this dataset's vector cache, taken
    /// out of the session's caches for the call and put back after.
    pub(crate) fn with_vector<T>(
        &self,
        f: impl FnOnce(&mut Session, &mut Cache) -> Result<T>,
    ) -> Result<T> {
        let mut g = lock(&self.file)?;
        let key = CacheKey::Vector(self.addr);
        let mut cache = g.caches().take(key);
        let r = f(&mut g, &mut cache);
        g.caches().put(key, cache);
        r
    }
}

/// Records read element by element with their slots' types.
pub(crate) fn with_slot_types(dtype: &Datatype, recs: &[[u64; 2]]) -> Vec<([u64; 2], Datatype)> {
    let slots = dtype.vlen_slots();
    recs.iter()
        .zip(slots.iter().cycle())
        .map(|(r, (_, t))| (*r, t.clone()))
        .collect()
}

/// Every record inside the values `top` names (vector records with their
/// slot types), at every depth: the values of a sequence of compounds with
/// variable-length members hold records of their own, into the same
/// vector. Each is checked to be whole items inside it; as in a sound
/// vector no two live values share bytes, more bytes than the vector holds
/// is damage (and bounds the walk).
pub(crate) fn inner_records(
    g: &mut Session,
    cache: &mut Cache,
    vm: &mut VecMeta,
    addr: u64,
    top: &[([u64; 2], Datatype)],
) -> Result<Vec<[u64; 2]>> {
    let mut out = vec![];
    let mut frontier: Vec<([u64; 2], Datatype)> = top
        .iter()
        .filter_map(|(r, t)| t.base().filter(|b| b.has_vlen()).map(|b| (*r, b)))
        .filter(|(r, _)| r[1] > 0)
        .collect();
    let mut seen = 0u64;
    while !frontier.is_empty() {
        let total: u64 = frontier.iter().map(|(r, _)| r[1]).sum();
        seen = seen.saturating_add(total);
        if seen > vm.len || !usize::try_from(total).is_ok_and(can_hold) {
            return Err(nested_overlap(addr));
        }
        let ranges: Vec<[u64; 2]> = frontier.iter().map(|(r, _)| *r).collect();
        let mut bytes = vec![0u8; total as usize];
        crate::vlen::vector::read_ranges(&mut g.st, cache, vm, 1, &ranges, &mut bytes)?;
        let mut next = vec![];
        let mut pos = 0usize;
        for ([_, l], base) in &frontier {
            let count = *l as usize / base.size().max(1);
            for (at, t) in item_records(base, pos, count) {
                let (o, len) = record_at(&bytes, at);
                check_nested(o, len, &t, vm.len, addr)?;
                out.push([o, len]);
                if let Some(b) = t.base().filter(|b| b.has_vlen() && len > 0) {
                    next.push(([o, len], b));
                }
            }
            pos += *l as usize;
        }
        frontier = next;
    }
    Ok(out)
}

/// The error for nested values that claim more bytes than their vector.
pub(crate) fn nested_overlap(addr: u64) -> Error {
    Error::corrupt(
        "variable-length record",
        addr,
        "nested values claim more bytes than the vector holds (records share bytes)",
    )
}
