//! Elements of a type with variable-length members (a compound holding
//! strings or ragged sequences) in one buffer, the *rows* form:
//! ```text
//! n × size   the elements; each variable-length slot holds a record,
//!            u64 offset and u64 length (little-endian) in bytes of the
//!            values area below
//! values     the slots' items, each in its base type's byte order; an
//!            item of a compound with variable-length members holds
//!            records too, pointing into the same values area
//! ```
//! Attributes of such types store their value this way; datasets take and
//! return it ([`crate::Dataset::write_rows`]) and keep the values in their
//! byte vector instead, the records pointing there.

use std::collections::BTreeMap;

use crate::error::{Error, Result};
use crate::format::datatype::{Datatype, VLEN_RECORD};

/// The `(offset, length)` record at `at` of `buf`.
pub(crate) fn record_at(buf: &[u8], at: usize) -> (u64, u64) {
    let word = |i: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&buf[i..i + 8]);
        u64::from_le_bytes(w)
    };
    (word(at), word(at + 8))
}

/// Check a nested record `(o, len)` of type `t` against a vector of
/// `vector_len` bytes (of the dataset at `addr`): whole items, inside it.
pub(crate) fn check_nested(
    o: u64,
    len: u64,
    t: &Datatype,
    vector_len: u64,
    addr: u64,
) -> Result<()> {
    let item = t.base().map_or(1, |b| b.size()) as u64;
    if !len.is_multiple_of(item) || o.checked_add(len).is_none_or(|e| e > vector_len) {
        return Err(Error::corrupt(
            "variable-length record",
            addr,
            format!(
                "a nested value at offset {o} of {len} bytes does not fit a vector of \
                 {vector_len} bytes"
            ),
        ));
    }
    Ok(())
}

/// Store `(offset, length)` at `at` of `buf`.
pub(crate) fn set_record(buf: &mut [u8], at: usize, off: u64, len: u64) {
    buf[at..at + 8].copy_from_slice(&off.to_le_bytes());
    buf[at + 8..at + 16].copy_from_slice(&len.to_le_bytes());
}

/// Bytes of the elements part of `n` elements of `dtype`, if it is a
/// size memory could hold.
pub(crate) fn fixed_len(dtype: &Datatype, n: u64) -> Result<usize> {
    n.checked_mul(dtype.size() as u64)
        .and_then(|b| usize::try_from(b).ok())
        .ok_or_else(|| Error::invalid(format!("{n} elements of {dtype} overflow memory")))
}

/// The records inside `count` items of `base` at byte `at` of a buffer:
/// each slot's record position and variable-length type, item by item.
pub(crate) fn item_records(base: &Datatype, at: usize, count: usize) -> Vec<(usize, Datatype)> {
    let slots = base.vlen_slots();
    let size = base.size();
    let mut out = Vec::with_capacity(count * slots.len());
    for k in 0..count {
        for (off, t) in &slots {
            out.push((at + k * size + off, t.clone()));
        }
    }
    out
}

/// Check that `data` is a well-formed rows buffer of `n` elements: every
/// record lies inside the values, holds whole items, is UTF-8 for a string
/// slot, and no two records share bytes (so that swapping or moving one
/// cannot touch another). Records inside values (a sequence of compounds
/// with variable-length members) are followed and checked the same way;
/// since no two share bytes, the walk is bounded by the buffer.
pub(crate) fn check_rows(dtype: &Datatype, n: u64, data: &[u8]) -> Result<()> {
    let head = fixed_len(dtype, n)?;
    if head > data.len() {
        return Err(Error::invalid(format!(
            "rows of {} bytes are shorter than their {n} elements ({head} bytes)",
            data.len()
        )));
    }
    if !dtype.nests_vlen() {
        return check_flat(dtype, n, head, data);
    }
    let values = data.len() - head;
    let size = dtype.size().max(1);
    let mut stack = item_records(dtype, 0, n as usize);
    stack.reverse();
    let mut used: BTreeMap<u64, u64> = BTreeMap::new();
    while let Some((at, t)) = stack.pop() {
        let (o, l) = record_at(data, at);
        let whose = if at < head {
            format!("element {}", at / size)
        } else {
            format!("a nested value at byte {}", at - head)
        };
        let item = t.base().map_or(1, |b| b.size()) as u64;
        let end = o.checked_add(l).filter(|&end| end <= values as u64);
        let Some(end) = end.filter(|_| l % item == 0) else {
            return Err(Error::invalid(format!(
                "{whose}: a value at {o} of {l} bytes is not whole items inside the \
                 {values} bytes of values"
            )));
        };
        let bytes = &data[head + o as usize..head + end as usize];
        if t == Datatype::VlenStr && std::str::from_utf8(bytes).is_err() {
            return Err(Error::invalid(format!(
                "{whose}: a string is not valid UTF-8"
            )));
        }
        if l == 0 {
            continue;
        }
        let before = used.range(..end).next_back();
        if before.is_some_and(|(_, &e)| e > o) {
            return Err(Error::invalid(
                "two variable-length values share bytes; give each its own",
            ));
        }
        used.insert(o, end);
        if let Some(b) = t.base().filter(|b| b.has_vlen()) {
            let mut inner = item_records(&b, head + o as usize, (l / item) as usize);
            inner.reverse();
            stack.extend(inner);
        }
    }
    Ok(())
}

/// [`check_rows`] of values that hold no records: every record is in the
/// elements part, checked in one pass, then sorted for sharing.
fn check_flat(dtype: &Datatype, n: u64, head: usize, data: &[u8]) -> Result<()> {
    let (fixed, values) = data.split_at(head);
    let slots = dtype.vlen_slots();
    let size = dtype.size();
    let mut used: Vec<(u64, u64)> = Vec::with_capacity(n as usize * slots.len());
    for e in 0..n as usize {
        for (off, t) in &slots {
            let (o, l) = record_at(fixed, e * size + off);
            let item = t.base().map_or(1, |b| b.size()) as u64;
            let end = o.checked_add(l).filter(|&end| end <= values.len() as u64);
            let Some(end) = end.filter(|_| l % item == 0) else {
                return Err(Error::invalid(format!(
                    "element {e}: a value at {o} of {l} bytes is not whole items \
                     inside the {} bytes of values",
                    values.len()
                )));
            };
            if *t == Datatype::VlenStr
                && std::str::from_utf8(&values[o as usize..end as usize]).is_err()
            {
                return Err(Error::invalid(format!(
                    "element {e}: a string is not valid UTF-8"
                )));
            }
            if l > 0 {
                used.push((o, end));
            }
        }
    }
    used.sort_unstable();
    if used.windows(2).any(|w| w[1].0 < w[0].1) {
        return Err(Error::invalid(
            "two variable-length values share bytes; give each its own",
        ));
    }
    Ok(())
}

/// Call `f(position, offset, length, slot type)` for every record of a
/// checked rows buffer of `n` elements, nested ones included (each after
/// the record whose values hold it).
pub(crate) fn walk_rows(
    dtype: &Datatype,
    n: u64,
    data: &[u8],
    f: &mut dyn FnMut(usize, u64, u64, &Datatype),
) {
    let head = n as usize * dtype.size();
    let mut stack = item_records(dtype, 0, n as usize);
    while let Some((at, t)) = stack.pop() {
        let (o, l) = record_at(data, at);
        f(at, o, l, &t);
        if let Some(b) = t.base().filter(|b| b.has_vlen()) {
            let count = l as usize / b.size().max(1);
            stack.extend(item_records(&b, head + o as usize, count));
        }
    }
}

/// Convert the values of a checked rows buffer between file and native
/// byte order (the same swap both ways), item by item as each base lays
/// out its numbers; records, always little-endian, stay.
pub(crate) fn swap_values(dtype: &Datatype, n: u64, data: &mut [u8]) {
    if !dtype
        .vlen_slots()
        .iter()
        .any(|(_, t)| t.base().is_some_and(|b| b.needs_swap() || b.has_vlen()))
    {
        return;
    }
    let head = n as usize * dtype.size();
    if !dtype.nests_vlen() {
        // Every record in the elements part: one pass, no walk.
        let (fixed, values) = data.split_at_mut(head);
        let slots: Vec<(usize, Datatype)> = dtype
            .vlen_slots()
            .into_iter()
            .filter_map(|(off, t)| t.base().filter(|b| b.needs_swap()).map(|b| (off, b)))
            .collect();
        for e in fixed.chunks_exact(dtype.size().max(1)) {
            for (off, b) in &slots {
                let (o, l) = record_at(e, *off);
                b.swap(&mut values[o as usize..(o + l) as usize]);
            }
        }
        return;
    }
    let mut runs = vec![];
    walk_rows(dtype, n, data, &mut |_, o, l, t| {
        if let Some(b) = t.base().filter(|b| b.needs_swap()) {
            runs.push((o, l, b));
        }
    });
    for (o, l, b) in runs {
        b.swap(&mut data[head + o as usize..head + (o + l) as usize]);
    }
}

/// Convert a checked rows buffer between file and native byte order (the
/// same swap both ways): the elements' numbers, then each value's items.
pub(crate) fn swap_rows(dtype: &Datatype, n: u64, data: &mut [u8]) {
    swap_values(dtype, n, data);
    let head = n as usize * dtype.size();
    dtype.swap(&mut data[..head]);
}

/// Every slot's record of a rows buffer's elements part, element by
/// element, with the slot's item size.
pub(crate) fn records<'a>(
    dtype: &'a Datatype,
    fixed: &'a [u8],
) -> impl Iterator<Item = (usize, u64, u64, usize)> + 'a {
    let slots: Vec<(usize, usize)> = dtype
        .vlen_slots()
        .iter()
        .map(|(off, t)| (*off, t.base().map_or(1, |b| b.size())))
        .collect();
    let size = dtype.size().max(1);
    (0..fixed.len() / size).flat_map(move |e| {
        let slots = slots.clone();
        slots.into_iter().map(move |(off, item)| {
            let at = e * size + off;
            let (o, l) = record_at(fixed, at);
            (at, o, l, item)
        })
    })
}

const _: () = assert!(VLEN_RECORD == 16);

#[cfg(test)]
mod tests {
    use super::*;

    fn row_type() -> Datatype {
        Datatype::parse(r#"struct(37){"a"@0:>i4,"s"@4:vlen:str,"v"@20:vlen:>u2,"b"@36:|u1}"#)
            .unwrap()
    }

    fn one_row(s: &[u8], v: &[u8]) -> Vec<u8> {
        let t = row_type();
        let mut buf = vec![0u8; t.size()];
        buf[..4].copy_from_slice(&[0, 0, 0, 7]);
        set_record(&mut buf, 4, 0, s.len() as u64);
        set_record(&mut buf, 20, s.len() as u64, v.len() as u64);
        buf.extend_from_slice(s);
        buf.extend_from_slice(v);
        buf
    }

    #[test]
    fn swaps_numbers_and_items_not_records() {
        let t = row_type();
        let mut b = one_row(b"hi", &[1, 2, 3, 4]);
        check_rows(&t, 1, &b).unwrap();
        swap_rows(&t, 1, &mut b);
        if cfg!(target_endian = "little") {
            assert_eq!(&b[..4], &[7, 0, 0, 0]);
            assert_eq!(&b[37..], b"hi\x02\x01\x04\x03");
            assert_eq!(record_at(&b, 20), (2, 4));
        }
    }

    #[test]
    fn bad_rows_refused() {
        let t = row_type();
        assert!(check_rows(&t, 1, &one_row(b"hi", &[1, 2, 3])).is_err()); // half an item
        assert!(check_rows(&t, 1, &one_row(b"\xff", &[])).is_err()); // not UTF-8
        assert!(check_rows(&t, 2, &one_row(b"hi", &[])).is_err()); // too short
        let mut b = one_row(b"hi", &[1, 2]);
        set_record(&mut b, 20, 1, 2); // overlaps the string
        assert!(check_rows(&t, 1, &b).is_err());
        set_record(&mut b, 20, 3, u64::MAX); // overflows
        assert!(check_rows(&t, 1, &b).is_err());
    }
}
