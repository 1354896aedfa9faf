//! Variable-length attribute values. Attributes are small, so they keep
//! their data in the record itself instead of a byte vector:
//! ```text
//! n × u64 length   bytes of each element (little-endian), row-major
//! data             the elements' items, concatenated
//! ```
//! [`crate::AttrValue::data`] holds the same layout with items in native order.

use crate::error::{Error, Result};
use crate::format::datatype::Datatype;

/// Check that `data` is a well-formed payload of `n` elements of `dtype`.
pub(crate) fn check_attr_payload(dtype: &Datatype, n: u64, data: &[u8]) -> Result<()> {
    let item = dtype.base().map_or(1, |b| b.size()) as u64;
    let head = n
        .checked_mul(8)
        .filter(|&h| h <= data.len() as u64)
        .ok_or_else(|| Error::invalid("variable-length value shorter than its lengths"))?;
    let mut pos = head;
    for c in data[..head as usize].chunks_exact(8) {
        let mut a = [0u8; 8];
        a.copy_from_slice(c);
        let l = u64::from_le_bytes(a);
        if l % item != 0 {
            return Err(Error::invalid("element length is not whole items"));
        }
        let end = pos
            .checked_add(l)
            .filter(|&e| e <= data.len() as u64)
            .ok_or_else(|| Error::invalid("element lengths overrun the value"))?;
        if *dtype == Datatype::VlenStr
            && std::str::from_utf8(&data[pos as usize..end as usize]).is_err()
        {
            return Err(Error::invalid("string is not valid UTF-8"));
        }
        pos = end;
    }
    if pos != data.len() as u64 {
        return Err(Error::invalid("bytes after the last element"));
    }
    Ok(())
}

/// Swap the items of a checked payload between file and native order.
pub(crate) fn swap_attr_payload(dtype: &Datatype, n: u64, data: &mut [u8]) {
    if let Some(b) = dtype.base().filter(|b| b.needs_swap()) {
        b.swap(&mut data[n as usize * 8..]);
    }
}

/// Build a payload from Arrow-style values and offsets (in items).
pub(crate) fn payload(values: &[u8], offsets: &[u64], item: usize) -> Result<Vec<u8>> {
    if offsets.is_empty() || offsets.windows(2).any(|w| w[1] < w[0]) {
        return Err(Error::invalid(
            "offsets must be one more than the elements and not decrease",
        ));
    }
    let n = offsets.len() - 1;
    let (a, b) = (offsets[0] as usize * item, offsets[n] as usize * item);
    if b > values.len() {
        return Err(Error::invalid("offsets overrun the values"));
    }
    let mut out = Vec::with_capacity(n * 8 + b - a);
    for w in offsets.windows(2) {
        out.extend_from_slice(&((w[1] - w[0]) * item as u64).to_le_bytes());
    }
    out.extend_from_slice(&values[a..b]);
    Ok(out)
}

/// Split a checked payload of `n` elements into values and offsets in items.
pub(crate) fn split(data: &[u8], n: u64, item: usize) -> (Vec<u8>, Vec<u64>) {
    let head = n as usize * 8;
    let mut offsets = Vec::with_capacity(n as usize + 1);
    let mut total = 0u64;
    offsets.push(0);
    for c in data[..head].chunks_exact(8) {
        let mut a = [0u8; 8];
        a.copy_from_slice(c);
        total += u64::from_le_bytes(a);
        offsets.push(total / item as u64);
    }
    (data[head..].to_vec(), offsets)
}
