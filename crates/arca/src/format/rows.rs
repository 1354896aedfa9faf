//! Elements of a type with variable-length members (a compound holding
//! strings or ragged sequences) in one buffer, the *rows* form:
//! ```text
//! n × size   the elements; each variable-length slot holds a record,
//!            u64 offset and u64 length (little-endian) in bytes of the
//!            values area below
//! values     the slots' items, each in its base type's byte order
//! ```
//! Attributes of such types store their value this way; datasets take and
//! return it ([`crate::Dataset::write_rows`]) and keep the values in their
//! byte vector instead, the records pointing there.

use crate::error::{Error, Result};
use crate::format::datatype::swap::swap_in_place;
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

/// Check that `data` is a well-formed rows buffer of `n` elements: every
/// record lies inside the values, holds whole items, is UTF-8 for a string
/// slot, and no two records share bytes (so that swapping or moving one
/// cannot touch another).
pub(crate) fn check_rows(dtype: &Datatype, n: u64, data: &[u8]) -> Result<()> {
    let head = fixed_len(dtype, n)?;
    if head > data.len() {
        return Err(Error::invalid(format!(
            "rows of {} bytes are shorter than their {n} elements ({head} bytes)",
            data.len()
        )));
    }
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

/// Convert a checked rows buffer between file and native byte order (the
/// same swap both ways): the elements' numbers, then each value's items.
pub(crate) fn swap_rows(dtype: &Datatype, n: u64, data: &mut [u8]) {
    let head = n as usize * dtype.size();
    let (fixed, values) = data.split_at_mut(head);
    let slots: Vec<(usize, usize)> = dtype
        .vlen_slots()
        .iter()
        .filter_map(|(off, t)| {
            t.base()
                .filter(|b| b.needs_swap())
                .map(|b| (*off, b.size()))
        })
        .collect();
    if !slots.is_empty() {
        for e in fixed.chunks_exact(dtype.size()) {
            for &(off, item) in &slots {
                let (o, l) = record_at(e, off);
                swap_in_place(&mut values[o as usize..(o + l) as usize], item);
            }
        }
    }
    dtype.swap(fixed);
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
