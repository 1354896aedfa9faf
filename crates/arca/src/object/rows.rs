//! Reading and writing elements of a compound with variable-length members
//! (`format::rows` describes the buffer): the fixed part goes through the
//! dataset's own layout, the values through its byte vector.

use super::dataset::Dataset;
use super::session::Session;
use super::storage;
use super::vlen::records::{
    can_hold, inner_records, load_vlen, nested_overlap, read_slot_records, save_vm, with_slot_types,
};
use crate::chunk::Cache;
use crate::error::{Error, Result};
use crate::format::datatype::{Datatype, VLEN_RECORD};
use crate::format::rows::{
    check_nested, check_rows, fixed_len, item_records, record_at, records, set_record, swap_values,
};
use crate::selection::Selection;
use crate::vlen::vector::{self, FreeRanges, VecMeta};

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
    let head = elems.len();
    elems.extend_from_slice(&values);
    drop(values);
    if dtype.nests_vlen() {
        read_nested(g, addr, cache, &mut vm, &dtype, head, &mut elems)?;
    }
    let n = sel.len();
    swap_values(&dtype, n, &mut elems);
    Ok(elems)
}

/// Fetch the values that values read so far point to (a sequence of
/// compounds with variable-length members), level by level, appending
/// them to `rows` and pointing their records there.
fn read_nested(
    g: &mut Session,
    addr: u64,
    cache: &mut Cache,
    vm: &mut VecMeta,
    dtype: &Datatype,
    head: usize,
    rows: &mut Vec<u8>,
) -> Result<()> {
    // Values (start in `rows`, bytes, base type) whose items hold records.
    let mut frontier: Vec<(usize, u64, Datatype)> = vec![];
    for (_, o, l, t) in typed_records(dtype, &rows[..head]) {
        if let Some(b) = t.base().filter(|b| b.has_vlen() && l > 0) {
            frontier.push((head + o as usize, l, b));
        }
    }
    let mut seen = (rows.len() - head) as u64;
    while !frontier.is_empty() {
        let mut inner = vec![];
        for (start, l, base) in &frontier {
            let count = *l as usize / base.size().max(1);
            for (at, t) in item_records(base, *start, count) {
                let (o, len) = record_at(rows, at);
                check_nested(o, len, &t, vm.len, addr)?;
                inner.push((at, [o, len], t));
            }
        }
        let total: u64 = inner.iter().map(|(_, r, _)| r[1]).sum();
        seen = seen.saturating_add(total);
        if seen > vm.len || !usize::try_from(total).is_ok_and(can_hold) {
            return Err(nested_overlap(addr));
        }
        let ranges: Vec<[u64; 2]> = inner.iter().map(|(_, r, _)| *r).collect();
        let mut bytes = vec![0u8; total as usize];
        vector::read_ranges(&mut g.st, cache, vm, 1, &ranges, &mut bytes)?;
        let mut pos = (rows.len() - head) as u64;
        let mut next = vec![];
        for (at, [_, len], t) in inner {
            set_record(rows, at, pos, len);
            if let Some(b) = t.base().filter(|b| b.has_vlen() && len > 0) {
                next.push((head + pos as usize, len, b));
            }
            pos += len;
        }
        rows.extend_from_slice(&bytes);
        frontier = next;
    }
    Ok(())
}

/// The top-level records of an elements part with their slots' types.
fn typed_records(dtype: &Datatype, fixed: &[u8]) -> Vec<(usize, u64, u64, Datatype)> {
    let n = fixed.len() / dtype.size().max(1);
    item_records(dtype, 0, n)
        .into_iter()
        .map(|(at, t)| {
            let (o, l) = record_at(fixed, at);
            (at, o, l, t)
        })
        .collect()
}

/// Where values go as a rows buffer is written: freed ranges first when
/// the vector reuses space, else appended after `base`, in one write.
struct Placer<'a> {
    free: Option<FreeRanges>,
    base: u64,
    tail: Vec<u8>,
    vm: &'a mut VecMeta,
}

impl Placer<'_> {
    /// Place the value at `o` of `l` bytes of `values` (a slot of type
    /// `t`), the values its items point to first; its vector offset.
    fn place(
        &mut self,
        g: &mut Session,
        cache: &mut Cache,
        values: &mut [u8],
        o: u64,
        l: u64,
        t: &Datatype,
    ) -> Result<u64> {
        if l == 0 {
            return Ok(0);
        }
        if let Some(b) = t.base().filter(|b| b.has_vlen()) {
            let count = l as usize / b.size().max(1);
            for (at, it) in item_records(&b, o as usize, count) {
                let (o2, l2) = record_at(values, at);
                let to = self.place(g, cache, values, o2, l2, &it)?;
                set_record(values, at, to, l2);
            }
        }
        let v = &values[o as usize..(o + l) as usize];
        if let Some(off) = self.free.as_mut().and_then(|f| f.take(l)) {
            vector::write(&mut g.st, cache, self.vm, 1, off, v)?;
            return Ok(off);
        }
        self.tail.extend_from_slice(v);
        Ok(self.base + (self.tail.len() - v.len()) as u64)
    }
}

/// Write a rows buffer to `sel`: values into the vector (into freed ranges
/// first when the vector reuses space, else appended in one write), then
/// the elements with their records pointing there. Values nested in values
/// go first, their records pointing into the vector too.
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
        // The records' extent is proven before any value lands.
        g.prove_contiguous(addr)?;
        let free = if vm.reuse && !fresh {
            let (_, mut old) = read_slot_records(g, addr, sel, &vm, &dtype)?;
            if dtype.nests_vlen() {
                let typed = with_slot_types(&dtype, &old);
                old.extend(inner_records(g, cache, &mut vm, addr, &typed)?);
            }
            let mut f = FreeRanges::load(&g.st, &vm)?;
            for [o, l] in old {
                f.give(o, l);
            }
            Some(f)
        } else {
            None
        };
        let base = vm.len;
        let mut p = Placer {
            free,
            base,
            tail: Vec::with_capacity(values.len()),
            vm: &mut vm,
        };
        for (at, o, l, t) in typed_records(&dtype, fixed) {
            let to = p.place(g, cache, values, o, l, &t)?;
            set_record(fixed, at, to, l);
        }
        let (free, tail) = (p.free.take(), std::mem::take(&mut p.tail));
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
        if dtype.is_vlen() && !dtype.nests_vlen() {
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
        if dtype.is_vlen() && !dtype.nests_vlen() {
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
