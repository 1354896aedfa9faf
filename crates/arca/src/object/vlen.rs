//! Reading and writing variable-length elements: the dataset methods over
//! the byte vector (`crate::vlen`), on slices.

use super::dataset::Dataset;
use super::element::Element;
use super::handle::lock;
use super::session::Session;
use super::storage::{self, CacheKey};
use crate::chunk::Cache;
use crate::error::{Error, Result};
use crate::filter::Filter;
use crate::format::datatype::{swap_in_place, Datatype, VLEN_RECORD};
use crate::format::object_header::Header;
use crate::format::vlen_vector::{decode_records, encode_records, push_record};
use crate::selection::Selection;
pub use crate::vlen::vector::VlenExtent;
use crate::vlen::vector::{self, FreeRanges, VecMeta};

/// Default bytes per chunk of a byte vector.
pub const DEFAULT_VLEN_CHUNK: u64 = 1 << 20;

/// How a variable-length dataset's byte vector is stored; set through
/// [`crate::DatasetOptions::vlen`].
///
/// ```
/// use arca::{Datatype, DatasetOptions, File, Filter, VlenOptions};
/// let f = File::in_memory().unwrap();
/// let opts = DatasetOptions::new(Datatype::VlenStr, &[3]).vlen(
///     VlenOptions::default().chunk_bytes(1 << 16).filters(&[Filter::Zstd(3)]).reuse_space(true),
/// );
/// let ds = f.root().create_dataset("names", &opts).unwrap();
/// ds.write_strings(&arca::Selection::all(&[3]), &["a", "bb", "ccc"]).unwrap();
/// assert!(ds.vlen_info().unwrap().unwrap().reuse_space);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VlenOptions {
    pub(crate) chunk_bytes: u64,
    pub(crate) filters: Vec<Filter>,
    pub(crate) reuse: bool,
}

impl Default for VlenOptions {
    fn default() -> Self {
        VlenOptions {
            chunk_bytes: DEFAULT_VLEN_CHUNK,
            filters: vec![],
            reuse: false,
        }
    }
}

impl VlenOptions {
    /// Bytes per chunk of the vector (rounded down to whole items; default 1 MiB).
    pub fn chunk_bytes(mut self, bytes: u64) -> Self {
        self.chunk_bytes = bytes;
        self
    }
    /// The vector's filter pipeline (default none).
    pub fn filters(mut self, filters: &[Filter]) -> Self {
        self.filters = filters.to_vec();
        self
    }
    /// Keep a list of ranges freed by overwrites and fill them before
    /// appending (default off: everything is appended).
    pub fn reuse_space(mut self, on: bool) -> Self {
        self.reuse = on;
        self
    }

    /// The vector description for a dataset of `dtype`.
    pub(crate) fn build(&self, dtype: &Datatype) -> Result<VecMeta> {
        let item = dtype
            .vector_item()
            .ok_or_else(|| Error::invalid("vector options need a variable-length type"))?
            as u64;
        Filter::validate_pipeline(&self.filters)?;
        if Filter::is_hdf5(&self.filters) {
            return Err(Error::invalid(
                "a byte vector takes arca's own filters, not HDF5's",
            ));
        }
        let chunk = self.chunk_bytes / item * item;
        if chunk == 0 || chunk > super::dataset::MAX_CHUNK_BYTES {
            return Err(Error::invalid(format!(
                "vector chunk of {} bytes: must hold one item and at most 2 GiB",
                self.chunk_bytes
            )));
        }
        Ok(VecMeta::new(chunk, self.filters.clone(), self.reuse))
    }
}

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

fn item_size(dtype: &Datatype) -> Result<usize> {
    dtype.base().map(|b| b.size()).ok_or_else(|| {
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
pub(super) fn can_hold(bytes: usize) -> bool {
    Vec::<u8>::new().try_reserve_exact(bytes).is_ok()
}

/// The records of `sel` as `[offset, length]` pairs, checked against the
/// vector: one per element for a variable-length type, one per slot of each
/// element (element by element) for a compound with such members. Plain
/// records are read straight into the pairs and converted in place: a large
/// read holds one copy of its records, not two.
pub(super) fn read_records(
    g: &mut Session,
    addr: u64,
    sel: &Selection,
    vm: &VecMeta,
    dtype: &Datatype,
) -> Result<Vec<[u64; 2]>> {
    if !dtype.is_vlen() {
        let (elems, recs) = super::rows::read_slot_records(g, addr, sel, vm, dtype)?;
        drop(elems);
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
    storage::read_bytes(
        &mut g.st,
        &mut g.caches,
        addr,
        sel,
        bytemuck::cast_slice_mut(&mut recs),
    )?;
    decode_records(&mut recs, item as u64, vm.len, addr)?;
    Ok(recs)
}

/// The error for a selection whose records memory cannot hold.
pub(super) fn too_many(sel: &Selection) -> Error {
    Error::invalid(format!(
        "{} elements' records are more than can be held in memory; read a smaller selection",
        sel.len()
    ))
}

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

pub(super) fn load_vlen(
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
pub(super) fn save_vm(g: &mut Session, addr: u64, vm: VecMeta) -> Result<()> {
    let mut h = Header::load(&mut g.st, addr)?;
    if let Some(m) = h.dataset.as_mut() {
        if m.vlen.as_ref() != Some(&vm) {
            m.vlen = Some(vm);
            h.save(&mut g.st, addr)?;
        }
    }
    Ok(())
}

fn write_locked(
    g: &mut Session,
    addr: u64,
    cache: &mut Cache,
    sel: &Selection,
    values: &[u8],
    offsets: &[u64],
    fresh: bool,
) -> Result<()> {
    g.st.check_writable()?;
    let (_, dtype, dims, mut vm) = load_vlen(g, addr)?;
    let item = item_size(&dtype)?;
    sel.check(&dims)?;
    let n = sel.len() as usize;
    check_offsets(offsets, n, values.len(), item)?;
    let span = &values[offsets[0] as usize * item..offsets[n] as usize * item];
    if dtype == Datatype::VlenStr && !utf8_pieces(span, offsets) {
        return Err(Error::invalid("string is not valid UTF-8"));
    }
    let swapped;
    let span = if dtype.base().is_some_and(|b| b.needs_swap()) {
        let mut v = span.to_vec();
        swap_in_place(&mut v, item);
        swapped = v;
        &swapped[..]
    } else {
        span
    };
    let o0 = offsets[0];
    let r = (|| {
        if vm.reuse && !fresh {
            let mut recs: Vec<(u64, u64)> = Vec::with_capacity(n);
            let old = read_records(g, addr, sel, &vm, &dtype)?;
            let mut free = FreeRanges::load(&g.st, &vm)?;
            for &[o, l] in &old {
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
            storage::write_bytes(&mut g.st, &mut g.caches, addr, sel, &encode_records(&recs))
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
            storage::write_bytes(&mut g.st, &mut g.caches, addr, sel, &enc)
        }
    })();
    // Saved even after a failure, so that chunks already written stay owned.
    let saved = save_vm(g, addr, vm);
    r.and(saved)
}

/// Elements of `sel` as (values, offsets in items), values in native order.
fn read_locked(
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
    if dtype.base().is_some_and(|b| b.needs_swap()) {
        swap_in_place(&mut out, item);
    }
    Ok((out, offsets))
}

/// Bytes the records of the dataset at `addr` refer to, read a slab or a
/// stored chunk at a time so that a large dataset needs little memory.
fn live_bytes(
    g: &mut Session,
    addr: u64,
    dims: &[u64],
    vm: &VecMeta,
    dtype: &Datatype,
) -> Result<u64> {
    let mut total = 0;
    for sel in stored_selections(g, addr, dims)? {
        total += read_records(g, addr, &sel, vm, dtype)?
            .iter()
            .map(|r| r[1])
            .sum::<u64>();
    }
    Ok(total)
}

/// Check a variable-length dataset's records against its vector: each lies
/// inside it (checked as records are read), and in a vector that reuses
/// space no two live elements share bytes and none lies in a free range —
/// either would let the next write overwrite a live element.
pub(crate) fn check_records(g: &mut Session, addr: u64) -> Result<()> {
    let (_, dtype, dims, vm) = load_vlen(g, addr)?;
    let free = FreeRanges::load(&g.st, &vm)?;
    let mut live: Vec<(u64, u64)> = vec![];
    for sel in stored_selections(g, addr, &dims)? {
        let recs = read_records(g, addr, &sel, &vm, &dtype)?;
        if vm.reuse {
            live.extend(recs.iter().filter(|r| r[1] > 0).map(|r| (r[0], r[1])));
        }
    }
    if !vm.reuse {
        return Ok(());
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
fn stored_selections(g: &mut Session, addr: u64, dims: &[u64]) -> Result<Vec<Selection>> {
    let h = Header::load(&mut g.st, addr)?;
    let Some(m) = h.dataset.as_ref() else {
        return Err(Error::invalid("not a dataset"));
    };
    let crate::format::object_header::Layout::Chunked { chunk, index } = &m.layout else {
        let mut v = vec![];
        for_each_slab(dims, |sel| {
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

/// Call `f` with selections of the whole of `dims` in slabs along the first
/// axis of at most about 65,536 elements, so a large dataset needs little
/// memory.
fn for_each_slab(dims: &[u64], mut f: impl FnMut(&Selection) -> Result<()>) -> Result<()> {
    const SLAB: u64 = 1 << 16;
    if dims.is_empty() {
        return f(&Selection::all(dims));
    }
    let row = dims[1..].iter().product::<u64>().max(1);
    let step = (SLAB / row).max(1);
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

impl Dataset {
    pub(super) fn with_vector<T>(
        &self,
        f: impl FnOnce(&mut Session, &mut Cache) -> Result<T>,
    ) -> Result<T> {
        let mut g = lock(&self.file)?;
        let key = CacheKey::Vector(self.addr);
        let mut cache = g.caches.take(key);
        let r = f(&mut g, &mut cache);
        g.caches.put(key, cache);
        r
    }

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
        self.with_vector(|g, c| write_locked(g, addr, c, sel, values, offsets, false))
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
        self.with_vector(|g, c| read_locked(g, addr, c, sel, alloc))
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
        super::element::check_element::<T>(&base)
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
        if !matches!(self.dtype()?, Datatype::VlenStr | Datatype::VlenBytes) {
            return Err(Error::invalid("dataset does not hold byte strings"));
        }
        let (v, o) = self.read_ragged_bytes(sel)?;
        Ok(o.windows(2)
            .map(|w| v[w[0] as usize..w[1] as usize].to_vec())
            .collect())
    }

    /// How the byte vector is stored, or `None` for a fixed-length dataset.
    /// Reads every record to count live bytes.
    ///
    /// # Errors
    /// [`Error::Corrupt`] for damaged storage.
    pub fn vlen_info(&self) -> Result<Option<VlenInfo>> {
        let addr = self.addr;
        self.with_vector(|g, cache| {
            let h = Header::load(&mut g.st, addr)?;
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
            let live = live_bytes(g, addr, &m.dims, &vm, &m.dtype)?;
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

    /// Rewrite the byte vector with only the data elements refer to, in
    /// element order, reclaiming space left by overwrites. Holds the live
    /// data in memory while it runs.
    ///
    /// ```
    /// use arca::{Datatype, DatasetOptions, File, Selection};
    /// let f = File::in_memory().unwrap();
    /// let ds = f.root().create_dataset("s", &DatasetOptions::new(Datatype::VlenStr, &[1])).unwrap();
    /// let all = Selection::all(&[1]);
    /// ds.write_strings(&all, &["first"]).unwrap();
    /// ds.write_strings(&all, &["second"]).unwrap();
    /// assert_eq!(ds.vlen_info().unwrap().unwrap().vector_bytes, 11);
    /// ds.vlen_repack().unwrap();
    /// assert_eq!(ds.vlen_info().unwrap().unwrap().vector_bytes, 6);
    /// assert_eq!(ds.read_strings(&all).unwrap(), vec!["second"]);
    /// ```
    ///
    /// # Errors
    /// [`Error::ReadOnly`]; [`Error::InvalidArgument`] for a fixed-length
    /// dataset; [`Error::Corrupt`] for damaged storage.
    pub fn vlen_repack(&self) -> Result<()> {
        let addr = self.addr;
        self.with_vector(|g, cache| {
            g.st.check_writable()?;
            let (_, dtype, dims, mut vm) = load_vlen(g, addr)?;
            let all = Selection::all(&dims);
            if !dtype.is_vlen() {
                let rows = super::rows::read_locked(g, addr, cache, &all)?;
                *cache = Cache::new(cache.capacity);
                let dead = vector::detach(&mut g.st, &mut vm)?;
                save_vm(g, addr, vm)?;
                g.st.free_structures(&dead)?;
                return super::rows::write_locked(g, addr, cache, &all, &rows, true);
            }
            let (values, offsets) = read_locked(g, addr, cache, &all, |n| vec![0u8; n])?;
            *cache = Cache::new(cache.capacity);
            let dead = vector::detach(&mut g.st, &mut vm)?;
            save_vm(g, addr, vm)?;
            g.st.free_structures(&dead)?;
            // The old records point into the vector just destroyed.
            write_locked(g, addr, cache, &all, &values, &offsets, true)
        })
    }
}

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
            storage::write_bytes(&mut g.st, &mut g.caches, addr, sel, &encode_records(&pairs))
        })
    }
}

/// Copy a dataset with variable-length values into `to` as `name` (for
/// repacking): same type, shape, layout and vector options, with only live
/// data, in element order. Works in slabs along the first axis of about
/// [`REPACK_STEP`] element bytes; `progress` gets element bytes (16 per
/// record) as fixed-length copies count them.
pub(crate) fn copy_dataset(
    d: &Dataset,
    to: &super::group::Group,
    name: &str,
    done: &mut u64,
    total: u64,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Dataset> {
    let dtype = d.dtype()?;
    let shape = d.shape()?;
    let info = d
        .vlen_info()?
        .ok_or_else(|| Error::invalid("not a variable-length dataset"))?;
    let v = VlenOptions::default()
        .chunk_bytes(info.chunk_bytes)
        .filters(&info.filters)
        .reuse_space(info.reuse_space);
    let mut o = super::dataset::DatasetOptions::new(dtype.clone(), &shape)
        .vlen(v)
        .track_order(d.attrs().track_order()?);
    if let Some(c) = d.chunks()? {
        o = o.chunks(&c).maxshape(&d.maxshape()?).filters(&d.filters()?);
    }
    let nd = to.create_dataset(name, &o)?;
    if shape.iter().product::<u64>() == 0 {
        return Ok(nd);
    }
    let rows = !dtype.is_vlen();
    let elem = dtype.size() as u64;
    // One slab: unwritten ones stay unwritten, as fill-only chunks do.
    let copy = |sel: &Selection| -> Result<()> {
        if rows {
            let r = d.read_rows(sel)?;
            if r.iter().any(|&b| b != 0) {
                nd.write_rows(sel, &r)?;
            }
        } else {
            let (v, off) = d.read_ragged_bytes(sel)?;
            if off.last().is_some_and(|&e| e > 0) {
                nd.write_ragged_bytes(sel, &v, &off)?;
            }
        }
        Ok(())
    };
    if shape.is_empty() {
        copy(&Selection::all(&[]))?;
        *done += elem;
        progress(*done, total);
        return Ok(nd);
    }
    let row = shape[1..].iter().product::<u64>().max(1);
    let step = (REPACK_STEP / (row * elem)).clamp(1, shape[0]);
    let mut i = 0;
    while i < shape[0] {
        let j = (i + step).min(shape[0]);
        let mut ranges = vec![(i, j, 1)];
        ranges.extend(shape[1..].iter().map(|&n| (0, n, 1)));
        let sel = Selection::from_ranges(&ranges)?;
        copy(&sel)?;
        *done += sel.len() * elem;
        progress(*done, total);
        i = j;
    }
    Ok(nd)
}

/// Record bytes per slab of [`copy_dataset`].
pub(crate) const REPACK_STEP: u64 = 4 << 20;

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
