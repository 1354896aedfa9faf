//! Variable-length values as slices: the dataset methods that write and
//! read ragged values (Arrow-style values and offsets), strings and byte
//! strings, through the records and the byte vector.

use super::fill::fill_record;
use super::proof::prove_free_ranges;
use super::records::{can_hold, item_size, load_vlen, read_records, save_vm};
use crate::chunk::Cache;
use crate::error::{Error, Result};
use crate::format::datatype::{Datatype, VLEN_RECORD};
use crate::format::region::{check_refs, RegionRef};
use crate::format::vlen_vector::{encode_records, push_record};
use crate::object::dataset::Dataset;
use crate::object::element::{check_element, Element};
use crate::object::session::Session;
use crate::object::storage;
use crate::selection::Selection;
use crate::vlen::vector::{self, FreeRanges};

/// Whether every piece `span[offsets[i] - offsets[0] .. offsets[i + 1] - offsets[0]]`
/// is UTF-8: the whole span is, and no piece starts inside a character.
fn utf8_pieces(span: &[u8], offsets: &[u64]) -> bool {
    if span.len() >= vector::OVERLAP_BYTES && offsets.len() > 2 {
        // Two halves cut at an element boundary, one per core: a cut that
        // is not a character boundary fails the second half, as it should.
        let mid = offsets.len() / 2;
        let Some(cut) = offsets[mid].checked_sub(offsets[0]) else {
            return false;
        };
        let Some((a, b)) = span.split_at_checked(cut as usize) else {
            return false;
        };
        let (first, second) = crate::par::join(
            || utf8_pieces_on(a, &offsets[..=mid]),
            || utf8_pieces_on(b, &offsets[mid..]),
        );
        return first && second;
    }
    utf8_pieces_on(span, offsets)
}

/// [`utf8_pieces`] on the calling thread.
fn utf8_pieces_on(span: &[u8], offsets: &[u64]) -> bool {
    let o0 = offsets.first().copied().unwrap_or(0);
    std::str::from_utf8(span).is_ok()
        && offsets.iter().all(|&o| {
            // A continuation byte is 0b10xx_xxxx; the end of the span is a boundary.
            span.get((o - o0) as usize)
                .is_none_or(|&b| b & 0xC0 != 0x80)
        })
}

/// Check Arrow-style offsets (in items) against `n` elements and `values`.
fn check_offsets(offsets: &[u64], n: usize, values_bytes: usize, item: usize) -> Result<()> {
    if offsets.len() != n + 1 {
        return Err(Error::invalid(format!(
            "{} offsets for {n} elements; need one more than the elements",
            offsets.len()
        )));
    }
    if offsets.windows(2).any(|w| w[1] < w[0]) {
        return Err(Error::invalid("offsets must not decrease"));
    }
    let end = offsets[n]
        .checked_mul(item as u64)
        .ok_or_else(|| Error::invalid("offsets overflow"))?;
    if end > values_bytes as u64 {
        return Err(Error::invalid(format!(
            "offsets reach byte {end} but values hold {values_bytes}"
        )));
    }
    Ok(())
}

pub(super) fn write_ragged_locked(
    g: &mut Session,
    addr: u64,
    cache: &mut Cache,
    sel: &Selection,
    values: &[u8],
    offsets: &[u64],
    fresh: bool,
) -> Result<()> {
    g.st.check_writable()?;
    let (h, dtype, dims, mut vm) = load_vlen(g, addr)?;
    let item = item_size(&dtype)?;
    sel.check(&dims)?;
    let n = sel.len() as usize;
    check_offsets(offsets, n, values.len(), item)?;
    let fill = fill_record(&g.st, &h)?;
    let span = &values[offsets[0] as usize * item..offsets[n] as usize * item];
    if dtype == Datatype::VlenStr && !utf8_pieces(span, offsets) {
        return Err(Error::invalid("string is not valid UTF-8"));
    }
    if dtype == Datatype::RegionRef {
        check_refs(span, offsets)?;
    }
    let swapped;
    let span = if let Some(b) = dtype.base().filter(|b| b.needs_swap()) {
        let mut v = span.to_vec();
        // Item by item as the base lays its numbers out (a compound's
        // members each in their own order).
        b.swap(&mut v);
        swapped = v;
        &swapped[..]
    } else {
        span
    };
    let o0 = offsets[0];
    let r = (|| {
        // The records' extent is proven before any value lands.
        g.prove_contiguous(addr)?;
        if vm.reuse && !fresh {
            let mut recs: Vec<(u64, u64)> = Vec::with_capacity(n);
            let old = read_records(g, addr, sel, &vm, &dtype)?;
            let mut free = FreeRanges::load(&g.st, &vm)?;
            if !g.vector_proven(addr) {
                // The file names these ranges; a damaged one could name a
                // live element's bytes. Proven once they are worth it (an
                // eighth of the vector: the proof reads every record),
                // held until then.
                let named = free.total();
                if named > 0 && named >= vm.len / 8 {
                    prove_free_ranges(g, addr)?;
                    g.mark_vector_proven(addr);
                } else {
                    free.hold_all();
                }
            }
            // An unwritten element's record is the fill value's, which
            // stays: it is every unwritten element's.
            for &[o, l] in old.iter().filter(|&&r| Some(r) != fill) {
                free.give(o, l);
            }
            // Elements that fit a free range go there; the rest are appended
            // together, in one write.
            let base = vm.len;
            let mut tail: Vec<u8> = vec![];
            for w in offsets.windows(2) {
                let (a, b) = ((w[0] - o0) as usize * item, (w[1] - o0) as usize * item);
                let len = (b - a) as u64;
                if len == 0 {
                    recs.push((0, 0));
                } else if let Some(off) = free.take(len) {
                    vector::write(&mut g.st, cache, &mut vm, item, off, &span[a..b])?;
                    recs.push((off, len));
                } else {
                    recs.push((base + tail.len() as u64, len));
                    tail.extend_from_slice(&span[a..b]);
                }
            }
            vector::write(&mut g.st, cache, &mut vm, item, base, &tail)?;
            free.save(&mut g.st, &mut vm)?;
            let (st, caches) = g.storage();
            storage::write_bytes(st, caches, addr, sel, &encode_records(&recs))
        } else {
            let base = vm.len;
            // Encoded straight from the offsets: no per-element tuple list.
            let encode = || {
                let k = item as u64;
                let mut enc = Vec::with_capacity(n * VLEN_RECORD);
                for w in offsets.windows(2) {
                    push_record(&mut enc, base + (w[0] - o0) * k, (w[1] - w[0]) * k);
                }
                enc
            };
            let enc = if span.len() >= vector::OVERLAP_BYTES {
                // The records are built on the other core while the values
                // are copied to the file.
                let (enc, written) = crate::par::join(encode, || {
                    vector::write(&mut g.st, cache, &mut vm, item, base, span)
                });
                written.map(|()| enc)?
            } else {
                vector::write(&mut g.st, cache, &mut vm, item, base, span)?;
                encode()
            };
            let (st, caches) = g.storage();
            storage::write_bytes(st, caches, addr, sel, &enc)
        }
    })();
    // Saved even after a failure, so that chunks already written stay owned.
    let saved = save_vm(g, addr, vm);
    r.and(saved)
}

/// Elements of `sel` as (values, offsets in items), values in native order.
pub(super) fn read_ragged_locked(
    g: &mut Session,
    addr: u64,
    cache: &mut Cache,
    sel: &Selection,
    alloc: impl FnOnce(usize) -> Vec<u8>,
) -> Result<(Vec<u8>, Vec<u64>)> {
    let (_, dtype, dims, mut vm) = load_vlen(g, addr)?;
    let item = item_size(&dtype)?;
    sel.check(&dims)?;
    let n = sel.len() as usize;
    let recs = read_records(g, addr, sel, &vm, &dtype)?;
    let mut offsets = Vec::with_capacity(n + 1);
    let mut total = 0u64;
    offsets.push(0);
    for &[_, l] in &recs {
        total = total.checked_add(l).ok_or_else(|| {
            Error::corrupt("variable-length record", addr, "element lengths overflow")
        })?;
        offsets.push(total / item as u64);
    }
    // Damaged records could claim more than memory holds.
    if !usize::try_from(total).is_ok_and(can_hold) {
        return Err(Error::corrupt(
            "variable-length record",
            addr,
            format!("elements claim {total} bytes, more than can be held in memory"),
        ));
    }
    let mut out = alloc(total as usize);
    if out.len() != total as usize {
        return Err(Error::invalid(format!(
            "the read buffer holds {} bytes, the elements {total}",
            out.len()
        )));
    }
    vector::read_ranges(&mut g.st, cache, &mut vm, item, &recs, &mut out)?;
    if let Some(b) = dtype.base().filter(|b| b.needs_swap()) {
        b.swap(&mut out);
    }
    Ok((out, offsets))
}

impl Dataset {
    /// Write variable-length elements to `sel` from Arrow-style buffers:
    /// element `i` is `values[offsets[i]*k .. offsets[i+1]*k]`, where `k` is
    /// the item size in bytes (1 for strings). Values are in native byte
    /// order; `offsets` has `sel.len() + 1` entries and need not start at 0.
    /// All data of the call is appended to the vector in one write.
    ///
    /// ```
    /// use arca::{Datatype, DatasetOptions, File, Selection};
    /// let f = File::in_memory().unwrap();
    /// let ds = f.root().create_dataset("b", &DatasetOptions::new(Datatype::VlenBytes, &[2])).unwrap();
    /// ds.write_ragged_bytes(&Selection::all(&[2]), b"abcde", &[0, 2, 5]).unwrap();
    /// let (v, o) = ds.read_ragged_bytes(&Selection::all(&[2])).unwrap();
    /// assert_eq!((v, o), (b"abcde".to_vec(), vec![0, 2, 5]));
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a fixed-length dataset, a selection out
    /// of bounds, offsets that decrease or overrun `values`, or invalid
    /// UTF-8 in a string dataset; [`Error::ReadOnly`].
    pub fn write_ragged_bytes(
        &self,
        sel: &Selection,
        values: &[u8],
        offsets: &[u64],
    ) -> Result<()> {
        let addr = self.addr;
        self.with_vector(|g, c| write_ragged_locked(g, addr, c, sel, values, offsets, false))
    }

    /// Read the elements of `sel` as concatenated values (native byte order)
    /// and `sel.len() + 1` offsets in items, starting at 0.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a fixed-length dataset or a selection
    /// out of bounds; [`Error::Corrupt`] for damaged records or chunks.
    pub fn read_ragged_bytes(&self, sel: &Selection) -> Result<(Vec<u8>, Vec<u64>)> {
        self.read_ragged_bytes_with(sel, |n| vec![0u8; n])
    }

    /// [`Dataset::read_ragged_bytes`] into a buffer the caller makes: `alloc`
    /// gets the values' total size in bytes and returns a vector of exactly
    /// that length (its contents are overwritten). Bindings use it to hand
    /// out memory prepared for large reads (huge pages, say).
    ///
    /// ```
    /// use arca::{Datatype, DatasetOptions, File, Selection};
    /// let f = File::in_memory().unwrap();
    /// let ds = f.root().create_dataset("b", &DatasetOptions::new(Datatype::VlenBytes, &[2])).unwrap();
    /// ds.write_ragged_bytes(&Selection::all(&[2]), b"abcde", &[0, 2, 5]).unwrap();
    /// let mut asked = 0;
    /// let (v, _) = ds.read_ragged_bytes_with(&Selection::all(&[2]), |n| { asked = n; vec![0; n] }).unwrap();
    /// assert_eq!((v.as_slice(), asked), (&b"abcde"[..], 5));
    /// ```
    ///
    /// # Errors
    /// As for [`Dataset::read_ragged_bytes`], and [`Error::InvalidArgument`] if
    /// `alloc` returns a vector of another length.
    pub fn read_ragged_bytes_with(
        &self,
        sel: &Selection,
        alloc: impl FnOnce(usize) -> Vec<u8>,
    ) -> Result<(Vec<u8>, Vec<u64>)> {
        let addr = self.addr;
        self.with_vector(|g, c| read_ragged_locked(g, addr, c, sel, alloc))
    }

    /// Write ragged rows of `T` (a sequence type whose base is `T`).
    ///
    /// ```
    /// use arca::{Datatype, DatasetOptions, File, Selection};
    /// let f = File::in_memory().unwrap();
    /// let t = Datatype::vlen(Datatype::float(4)).unwrap();
    /// let ds = f.root().create_dataset("r", &DatasetOptions::new(t, &[3])).unwrap();
    /// ds.write_ragged(&Selection::all(&[3]), &[1.0f32, 2.0, 3.0], &[0, 1, 1, 3]).unwrap();
    /// let (v, o) = ds.read_ragged::<f32>(&Selection::all(&[3])).unwrap();
    /// assert_eq!(o, vec![0, 1, 1, 3]);
    /// assert_eq!(v, vec![1.0, 2.0, 3.0]);
    /// ```
    ///
    /// # Errors
    /// As for [`Dataset::write_ragged_bytes`], and a base type other than `T`.
    pub fn write_ragged<T: Element>(
        &self,
        sel: &Selection,
        values: &[T],
        offsets: &[u64],
    ) -> Result<()> {
        self.check_base::<T>()?;
        self.write_ragged_bytes(sel, bytemuck::cast_slice(values), offsets)
    }

    /// Read ragged rows of `T`: values and offsets in items.
    ///
    /// # Errors
    /// As for [`Dataset::read_ragged_bytes`], and a base type other than `T`.
    pub fn read_ragged<T: Element>(&self, sel: &Selection) -> Result<(Vec<T>, Vec<u64>)> {
        self.check_base::<T>()?;
        let (v, o) = self.read_ragged_bytes(sel)?;
        Ok((bytemuck::pod_collect_to_vec(&v), o))
    }

    fn check_base<T: Element>(&self) -> Result<()> {
        let dt = self.dtype()?;
        let base =
            item_size(&dt).and_then(|_| dt.base().ok_or_else(|| Error::invalid("no base")))?;
        check_element::<T>(&base)
    }

    /// Write strings to a string (or byte-string) dataset.
    ///
    /// ```
    /// use arca::{Datatype, DatasetOptions, File, Selection};
    /// let f = File::in_memory().unwrap();
    /// let ds = f.root().create_dataset("s", &DatasetOptions::new(Datatype::VlenStr, &[2, 2])).unwrap();
    /// ds.write_strings(&Selection::all(&[2, 2]), &["α", "", "βγ", "δ"]).unwrap();
    /// let row = Selection::from_ranges(&[(1, 2, 1), (0, 2, 1)]).unwrap();
    /// assert_eq!(ds.read_strings(&row).unwrap(), vec!["βγ", "δ"]);
    /// ```
    ///
    /// # Errors
    /// As for [`Dataset::write_ragged_bytes`].
    pub fn write_strings<S: AsRef<str>>(&self, sel: &Selection, strings: &[S]) -> Result<()> {
        let (values, offsets) = concat(strings.iter().map(|s| s.as_ref().as_bytes()));
        self.write_ragged_bytes(sel, &values, &offsets)
    }

    /// Read strings from a string dataset.
    ///
    /// # Errors
    /// As for [`Dataset::read_ragged_bytes`]; [`Error::InvalidArgument`] for a
    /// type other than strings; [`Error::Corrupt`] for invalid UTF-8.
    pub fn read_strings(&self, sel: &Selection) -> Result<Vec<String>> {
        if !matches!(self.dtype()?, Datatype::VlenStr | Datatype::VlenBytes) {
            return Err(Error::invalid("dataset does not hold strings"));
        }
        let (v, o) = self.read_ragged_bytes(sel)?;
        o.windows(2)
            .map(|w| {
                String::from_utf8(v[w[0] as usize..w[1] as usize].to_vec())
                    .map_err(|_| Error::invalid("stored string is not valid UTF-8"))
            })
            .collect()
    }

    /// Write byte strings to a byte-string (or string) dataset.
    ///
    /// # Errors
    /// As for [`Dataset::write_ragged_bytes`].
    pub fn write_vlen_bytes<B: AsRef<[u8]>>(&self, sel: &Selection, items: &[B]) -> Result<()> {
        let (values, offsets) = concat(items.iter().map(|b| b.as_ref()));
        self.write_ragged_bytes(sel, &values, &offsets)
    }

    /// Read byte strings.
    ///
    /// # Errors
    /// As for [`Dataset::read_ragged_bytes`].
    pub fn read_vlen_bytes(&self, sel: &Selection) -> Result<Vec<Vec<u8>>> {
        if !matches!(
            self.dtype()?,
            Datatype::VlenStr | Datatype::VlenBytes | Datatype::RegionRef
        ) {
            return Err(Error::invalid("dataset does not hold byte strings"));
        }
        let (v, o) = self.read_ragged_bytes(sel)?;
        Ok(o.windows(2)
            .map(|w| v[w[0] as usize..w[1] as usize].to_vec())
            .collect())
    }

    /// Write region references (`None`: the null reference) to a dataset
    /// of [`Datatype::RegionRef`].
    ///
    /// ```
    /// use arca::{DatasetOptions, Datatype, File, Region, RegionRef, RegionSelection, Selection};
    /// let f = File::in_memory().unwrap();
    /// let d = f.root().create_dataset("d", &DatasetOptions::new(Datatype::int(4), &[8])).unwrap();
    /// let refs = f.root().create_dataset("r", &DatasetOptions::new(Datatype::RegionRef, &[2])).unwrap();
    /// let r = RegionRef { object: d.id(), region: Region::new(vec![8], RegionSelection::Points(vec![vec![3]])).unwrap() };
    /// refs.write_region_refs(&Selection::all(&[2]), &[Some(r.clone()), None]).unwrap();
    /// assert_eq!(refs.read_region_refs(&Selection::all(&[2])).unwrap(), [Some(r), None]);
    /// ```
    ///
    /// # Errors
    /// As for [`Dataset::write_ragged_bytes`].
    pub fn write_region_refs(&self, sel: &Selection, refs: &[Option<RegionRef>]) -> Result<()> {
        if self.dtype()? != Datatype::RegionRef {
            return Err(Error::invalid("dataset does not hold region references"));
        }
        let items: Vec<Vec<u8>> = refs
            .iter()
            .map(|r| r.as_ref().map(RegionRef::to_bytes).unwrap_or_default())
            .collect();
        self.write_vlen_bytes(sel, &items)
    }

    /// Read region references (`None`: the null reference).
    ///
    /// # Errors
    /// As for [`Dataset::read_ragged_bytes`]; [`Error::Corrupt`] for a
    /// stored reference that does not decode.
    pub fn read_region_refs(&self, sel: &Selection) -> Result<Vec<Option<RegionRef>>> {
        if self.dtype()? != Datatype::RegionRef {
            return Err(Error::invalid("dataset does not hold region references"));
        }
        let (v, o) = self.read_ragged_bytes(sel)?;
        o.windows(2)
            .map(|w| match &v[w[0] as usize..w[1] as usize] {
                [] => Ok(None),
                b => RegionRef::from_bytes(b).map(Some),
            })
            .collect()
    }
}

/// Concatenate byte slices into Arrow-style values and offsets.
fn concat<'a>(items: impl Iterator<Item = &'a [u8]>) -> (Vec<u8>, Vec<u64>) {
    let mut values = vec![];
    let mut offsets = vec![0u64];
    for b in items {
        values.extend_from_slice(b);
        offsets.push(values.len() as u64);
    }
    (values, offsets)
}
