//! Reading and writing elements of a compound with variable-length members
//! (`format::rows` describes the buffer): the fixed part goes through the
//! dataset's own layout, the values through its byte vector.

use super::dataset::Dataset;
use super::session::Session;
use super::storage;
use super::vlen::records::{can_hold, load_vlen, read_slot_records, save_vm};
use crate::chunk::Cache;
use crate::error::{Error, Result};
use crate::format::datatype::swap::swap_in_place;
use crate::format::datatype::{Datatype, VLEN_RECORD};
use crate::format::rows::{check_rows, fixed_len, record_at, records, set_record};
use crate::selection::Selection;
use crate::vlen::vector::{self, FreeRanges};

/// The elements of `sel` in the rows form, numbers in native order.
pub(super) fn read_rows_locked(
    g: &mut Session,
    addr: u64,
    cache: &mut Cache,
    sel: &Selection,
) -> Result<Vec<u8>> {
    let (_, dtype, dims, mut vm) = load_vlen(g, addr)?;
    sel.check(&dims)?;
    let (mut elems, recs) = read_slot_records(g, addr, sel, &vm, &dtype)?;
    let total = recs
        .iter()
        .try_fold(0u64, |t, r| t.checked_add(r[1]))
        .filter(|&t| usize::try_from(t).is_ok_and(can_hold))
        .ok_or_else(|| {
            Error::corrupt(
                "variable-length record",
                addr,
                "member values claim more bytes than can be held in memory",
            )
        })?;
    let mut values = vec![0u8; total as usize];
    vector::read_ranges(&mut g.st, cache, &mut vm, 1, &recs, &mut values)?;
    // Records now point into the values that follow the elements.
    let mut pos = 0u64;
    let mut at = vec![];
    for (a, _, l, item) in records(&dtype, &elems) {
        at.push((a, pos, l, item));
        pos += l;
    }
    for (a, p, l, _) in &at {
        set_record(&mut elems, *a, *p, *l);
    }
    elems.extend_from_slice(&values);
    let n = sel.len();
    swap_values(&dtype, n, &mut elems);
    Ok(elems)
}

/// Swap each slot's items between file and native order; the elements'
/// numbers are the dataset layer's to convert.
fn swap_values(dtype: &Datatype, n: u64, rows: &mut [u8]) {
    let head = n as usize * dtype.size();
    if !dtype
        .vlen_slots()
        .iter()
        .any(|(_, t)| t.base().is_some_and(|b| b.needs_swap()))
    {
        return;
    }
    let (fixed, values) = rows.split_at_mut(head);
    for (_, o, l, item) in records(dtype, fixed) {
        swap_in_place(&mut values[o as usize..(o + l) as usize], item);
    }
}

/// Write a rows buffer to `sel`: values into the vector (into freed ranges
/// first when the vector reuses space, else appended in one write), then
/// the elements with their records pointing there.
pub(super) fn write_rows_locked(
    g: &mut Session,
    addr: u64,
    cache: &mut Cache,
    sel: &Selection,
    rows: &[u8],
    fresh: bool,
) -> Result<()> {
    g.st.check_writable()?;
    let (_, dtype, dims, mut vm) = load_vlen(g, addr)?;
    sel.check(&dims)?;
    let n = sel.len();
    check_rows(&dtype, n, rows)?;
    let head = fixed_len(&dtype, n)?;
    let mut rows = rows.to_vec();
    swap_values(&dtype, n, &mut rows);
    let (fixed, values) = rows.split_at_mut(head);
    let r = (|| {
        let mut free = if vm.reuse && !fresh {
            let (_, old) = read_slot_records(g, addr, sel, &vm, &dtype)?;
            let mut f = FreeRanges::load(&g.st, &vm)?;
            for [o, l] in old {
                f.give(o, l);
            }
            Some(f)
        } else {
            None
        };
        let base = vm.len;
        let mut tail: Vec<u8> = Vec::with_capacity(values.len());
        let recs: Vec<(usize, u64, u64, usize)> = records(&dtype, fixed).collect();
        for (at, o, l, _) in recs {
            let v = &values[o as usize..(o + l) as usize];
            let to = if l == 0 {
                0
            } else if let Some(off) = free.as_mut().and_then(|f| f.take(l)) {
                vector::write(&mut g.st, cache, &mut vm, 1, off, v)?;
                off
            } else {
                tail.extend_from_slice(v);
                base + (tail.len() - v.len()) as u64
            };
            set_record(fixed, at, to, l);
        }
        vector::write(&mut g.st, cache, &mut vm, 1, base, &tail)?;
        if let Some(f) = free {
            f.save(&mut g.st, &mut vm)?;
        }
        let (st, caches) = g.storage();
        storage::write_bytes(st, caches, addr, sel, fixed)
    })();
    // Saved even after a failure, so that chunks already written stay owned.
    let saved = save_vm(g, addr, vm);
    r.and(saved)
}

impl Dataset {
    /// Write elements of a type with variable-length members — a compound
    /// holding strings or ragged sequences — from one buffer: `sel.len()`
    /// elements whose variable-length slots ([`Datatype::vlen_slots`]) each
    /// hold a record, u64 offset and u64 length (little-endian), in bytes
    /// of the values that follow the elements. Numbers, in the elements and
    /// the values, are in native byte order. Works for variable-length
    /// types too (one slot per element).
    ///
    /// ```
    /// use arca::{Datatype, DatasetOptions, File, Selection};
    /// let f = File::in_memory().unwrap();
    /// let t = Datatype::packed(&[("id", Datatype::uint(2)), ("name", Datatype::VlenStr)]).unwrap();
    /// let ds = f.root().create_dataset("people", &DatasetOptions::new(t, &[1])).unwrap();
    /// let mut row = vec![7, 0];
    /// row.extend(0u64.to_le_bytes());
    /// row.extend(3u64.to_le_bytes());
    /// row.extend(b"Ada");
    /// ds.write_rows(&Selection::all(&[1]), &row).unwrap();
    /// assert_eq!(ds.read_rows(&Selection::all(&[1])).unwrap(), row);
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a type without variable-length
    /// values, a selection out of bounds, or a buffer whose records do not
    /// lie inside its values, hold whole items or valid UTF-8 for strings,
    /// or share bytes; [`Error::ReadOnly`].
    pub fn write_rows(&self, sel: &Selection, rows: &[u8]) -> Result<()> {
        let addr = self.addr;
        let dtype = self.dtype()?;
        if dtype.is_vlen() {
            // One slot per element: as values and offsets, in record order.
            check_rows(&dtype, sel.len(), rows)?;
            let head = fixed_len(&dtype, sel.len())?;
            let item = dtype.base().map_or(1, |b| b.size()) as u64;
            let (mut values, mut offsets) = (Vec::new(), vec![0u64]);
            for r in rows[..head].chunks_exact(VLEN_RECORD) {
                let (o, l) = record_at(r, 0);
                values.extend_from_slice(&rows[head + o as usize..head + (o + l) as usize]);
                offsets.push(values.len() as u64 / item);
            }
            return self.write_ragged_bytes(sel, &values, &offsets);
        }
        if !dtype.has_vlen() {
            return Err(Error::invalid(format!(
                "dataset type {dtype} has no variable-length values; use write_bytes"
            )));
        }
        self.with_vector(|g, c| write_rows_locked(g, addr, c, sel, rows, false))
    }

    /// Read the elements of `sel` in the form [`Dataset::write_rows`]
    /// takes, values packed in element order after the elements.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a type without variable-length values
    /// or a selection out of bounds; [`Error::Corrupt`] for damaged records
    /// or chunks.
    pub fn read_rows(&self, sel: &Selection) -> Result<Vec<u8>> {
        let addr = self.addr;
        let dtype = self.dtype()?;
        if dtype.is_vlen() {
            let (values, offsets) = self.read_ragged_bytes(sel)?;
            let item = dtype.base().map_or(1, |b| b.size()) as u64;
            let mut out = Vec::with_capacity(offsets.len() * VLEN_RECORD + values.len());
            for w in offsets.windows(2) {
                out.extend_from_slice(&(w[0] * item).to_le_bytes());
                out.extend_from_slice(&((w[1] - w[0]) * item).to_le_bytes());
            }
            out.extend_from_slice(&values);
            return Ok(out);
        }
        if !dtype.has_vlen() {
            return Err(Error::invalid(format!(
                "dataset type {dtype} has no variable-length values; use read_bytes"
            )));
        }
        self.with_vector(|g, c| read_rows_locked(g, addr, c, sel))
    }
}
