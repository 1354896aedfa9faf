//! The proof that a space-reusing vector's free ranges hold no live
//! element: every stored record is read and the live extents checked
//! against each other and against the ranges. A writer runs it before it
//! hands out ranges a file names (they may be damage behind valid
//! checksums); `check` runs it on every vector.

use super::fill::fill_record;
use super::records::{load_vlen, read_records};
use crate::error::{Error, Result};
use crate::format::object_header::Header;
use crate::object::session::Session;
use crate::object::storage;
use crate::selection::Selection;
use crate::vlen::vector::FreeRanges;

/// Check that in the vector of the dataset at `addr`, if it reuses space,
/// no two live elements share bytes and no free range covers a live
/// element: either would let the next write overwrite one. Reads every
/// stored record, a band of rows or a chunk at a time.
///
/// # Errors
/// `Corrupt` naming the element and the range (or the two elements).
pub(crate) fn prove_free_ranges(g: &mut Session, addr: u64) -> Result<()> {
    let (h, dtype, dims, vm) = load_vlen(g, addr)?;
    if !vm.reuse {
        // Read anyway: each record must lie inside the vector.
        for sel in stored_selections(g, addr, &dims)? {
            read_records(g, addr, &sel, &vm, &dtype)?;
        }
        return Ok(());
    }
    let free = FreeRanges::load(&g.st, &vm)?;
    // The fill value's items are shared by every element showing them.
    let fill = fill_record(&g.st, &h)?;
    let mut live: Vec<(u64, u64)> = fill
        .iter()
        .filter(|r| r[1] > 0)
        .map(|r| (r[0], r[1]))
        .collect();
    for sel in stored_selections(g, addr, &dims)? {
        let recs = read_records(g, addr, &sel, &vm, &dtype)?;
        live.extend(
            recs.iter()
                .filter(|&&r| r[1] > 0 && Some(r) != fill)
                .map(|r| (r[0], r[1])),
        );
    }
    live.sort_unstable();
    let bad = |d: String| Error::corrupt("variable-length record", addr, d);
    for w in live.windows(2) {
        if w[1].0 < w[0].0 + w[0].1 {
            return Err(bad(format!(
                "elements at {} and {} of a space-reusing vector share bytes",
                w[0].0, w[1].0
            )));
        }
    }
    let mut k = 0;
    for (o, l) in free.ranges() {
        while k < live.len() && live[k].0 + live[k].1 <= o {
            k += 1;
        }
        if k < live.len() && live[k].0 < o + l {
            return Err(bad(format!(
                "free range at {o} of {l} bytes covers the element at {}",
                live[k].0
            )));
        }
    }
    Ok(())
}

/// Selections covering every stored record: the whole dataset when it is
/// contiguous (its size is bounded by the file's), else each stored chunk's
/// box — a huge sparse dataset has few — since unwritten records are empty.
pub(super) fn stored_selections(
    g: &mut Session,
    addr: u64,
    dims: &[u64],
) -> Result<Vec<Selection>> {
    let h = Header::load(&mut g.st, addr)?;
    let Some(m) = h.dataset.as_ref() else {
        return Err(Error::invalid("not a dataset"));
    };
    let crate::format::object_header::Layout::Chunked { chunk, index } = &m.layout else {
        let mut v = vec![];
        for_each_band(dims, |sel| {
            v.push(sel.clone());
            Ok(())
        })?;
        return Ok(v);
    };
    let entries = storage::engine(m, chunk, *index, &[]).entries(&mut g.st)?;
    entries
        .iter()
        .map(|(c, _)| {
            let ranges: Vec<(u64, u64, u64)> = c
                .iter()
                .zip(chunk.iter())
                .zip(dims)
                .map(|((&c, &n), &d)| (c * n, (c * n + n).min(d), 1))
                .collect();
            Selection::from_ranges(&ranges)
        })
        .collect()
}

/// Call `f` with selections of the whole of `dims` in bands of whole rows
/// along the first axis, of at most about 65,536 elements each, so a large
/// dataset needs little memory.
fn for_each_band(dims: &[u64], mut f: impl FnMut(&Selection) -> Result<()>) -> Result<()> {
    const BAND: u64 = 1 << 16;
    if dims.is_empty() {
        return f(&Selection::all(dims));
    }
    let row = dims[1..].iter().product::<u64>().max(1);
    let step = (BAND / row).max(1);
    let mut i = 0;
    while i < dims[0] {
        let j = (i + step).min(dims[0]);
        let mut ranges = vec![(i, j, 1)];
        ranges.extend(dims[1..].iter().map(|&n| (0, n, 1)));
        f(&Selection::from_ranges(&ranges)?)?;
        i = j;
    }
    Ok(())
}
