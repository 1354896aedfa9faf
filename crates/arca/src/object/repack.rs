//! Copying a whole file into a new, compact one.

use std::collections::HashMap;
use std::path::Path;

use super::attrs::{AttrValue, Attributes};
use super::dataset::options::DatasetOptions;
use super::dataset::Dataset;
use super::file::File;
use super::group::{Group, Object};
use super::links::{GroupOptions, Link};
use super::named_type::NamedType;
use super::open::Mode;
use super::vlen::repack::{with_committed, Committed};
use crate::error::Result;
use crate::format::datatype::Datatype;
use crate::format::region::RegionRef;
use crate::format::rows::record_at;
use crate::selection::Selection;

/// Bytes moved per read/write step of a contiguous dataset.
const STEP_BYTES: u64 = 64 << 20;

pub use super::stat::Progress;

/// How [`repack_with`] lays out the copy.
///
/// ```
/// let opts = arca::RepackOptions::new().cloud(true);
/// assert!(opts.is_cloud());
/// ```
#[derive(Debug, Clone, Default)]
pub struct RepackOptions {
    cloud: bool,
}

impl RepackOptions {
    /// A plain compact copy.
    pub fn new() -> Self {
        Self::default()
    }

    /// Lay out every structure before the data (superblock, headers,
    /// attributes, chunk indexes, then chunks and contiguous data), so a
    /// reader on object storage finds the metadata in the open's first
    /// read (`head_bytes`) and reaches any chunk with one more request.
    pub fn cloud(mut self, on: bool) -> Self {
        self.cloud = on;
        self
    }

    /// Whether the copy is laid out for object storage.
    pub fn is_cloud(&self) -> bool {
        self.cloud
    }
}

/// Write a compact copy of the file at `src` to `dst`: the same groups,
/// datasets (type, shape, chunking, filters, fill value), committed
/// datatypes (and which datasets use them), attributes and values, laid out without free space. Chunks that hold only the fill
/// value are not stored. `progress(done, total)` is called as elements are
/// copied.
///
/// ```
/// use arca::{DatasetOptions, Datatype, File};
/// let dir = tempfile::tempdir().unwrap();
/// let (a, b) = (dir.path().join("a.arca"), dir.path().join("b.arca"));
/// let f = File::create(&a).unwrap();
/// for i in 0..10 {
///     let d = f.root().create_dataset(&format!("d{i}"), &DatasetOptions::new(Datatype::uint(1), &[100_000])).unwrap();
///     d.write_all(&vec![i as u8; 100_000]).unwrap();
/// }
/// for i in 0..9 {
///     f.root().delete(&format!("d{i}")).unwrap();
/// }
/// f.close().unwrap();
/// arca::repack(&a, &b, &mut |_, _| {}).unwrap();
/// assert!(std::fs::metadata(&b).unwrap().len() < std::fs::metadata(&a).unwrap().len() / 5);
/// ```
///
/// # Errors
/// Errors reading `src` or writing `dst`; `dst` must not exist.
pub fn repack(src: &Path, dst: &Path, progress: &mut Progress) -> Result<()> {
    repack_with(src, dst, &RepackOptions::new(), progress)
}

/// [`repack`], laid out as `opts` says.
///
/// ```
/// use arca::{DatasetOptions, Datatype, File, RepackOptions};
/// let dir = tempfile::tempdir().unwrap();
/// let (a, b) = (dir.path().join("a.arca"), dir.path().join("b.arca"));
/// let f = File::create(&a).unwrap();
/// let d = f.root().create_dataset("x",
///     &DatasetOptions::new(Datatype::int(4), &[1 << 16]).chunks(&[1024])).unwrap();
/// d.write_all(&vec![7i32; 1 << 16]).unwrap();
/// f.close().unwrap();
/// arca::repack_with(&a, &b, &RepackOptions::new().cloud(true), &mut |_, _| {}).unwrap();
/// File::open(&b).unwrap().check().unwrap();
/// ```
///
/// # Errors
/// As for [`repack`].
pub fn repack_with(
    src: &Path,
    dst: &Path,
    opts: &RepackOptions,
    progress: &mut Progress,
) -> Result<()> {
    let from = File::open(src)?;
    let to = File::options()
        .mode(Mode::CreateNew)
        .track_order(from.root().track_order()?)
        .open(dst)?;
    if opts.cloud {
        // The copy's metadata is about the source's, but B-tree nodes
        // that grow move to larger pages as they are built, and the pages
        // they leave are not all reused: twice the source's, so that the
        // region rarely runs out. What is left becomes free space.
        let meta = from.stat()?.metadata_bytes;
        to.reserve_metadata(2 * meta + (64 << 10))?;
    }
    let mut total = 0u64;
    let mut datasets = vec![];
    from.root().visit(&mut |p, k| {
        if k == crate::format::object_header::ObjectKind::Dataset {
            datasets.push(p.to_string());
        }
        Ok(())
    })?;
    for p in &datasets {
        let d = from.root().dataset(p)?;
        if !d.is_virtual()? && d.external_segments()?.is_empty() {
            total += d.len()? * d.dtype()?.size() as u64;
        }
    }
    let mut done = 0u64;
    let mut c = Copy {
        done: &mut done,
        total,
        progress,
        copied: HashMap::new(),
        types: HashMap::new(),
        ref_attrs: vec![],
        ref_datasets: vec![],
    };
    let root = to.root();
    c.copied
        .insert(from.root().id(), (root.path().to_string(), root.id()));
    copy_attrs(&from.root().attrs(), &root.attrs(), &mut c)?;
    copy_group(&from.root(), &root, &mut c)?;
    c.fix_references()?;
    // The handles it kept go before the file closes.
    drop(c);
    drop(root);
    to.close()?;
    progress(total, total);
    Ok(())
}

/// Replace each reference in the elements of `buf` (`size` bytes each,
/// references at `offsets`) by the id `map` gives it; one to nothing the
/// copy holds becomes null.
fn remap(map: &HashMap<u64, u64>, buf: &mut [u8], size: usize, offsets: &[usize]) {
    for e in buf.chunks_exact_mut(size.max(1)) {
        for &o in offsets {
            let old = u64::from_ne_bytes(e[o..o + 8].try_into().unwrap_or([0; 8]));
            let new = map.get(&old).copied().unwrap_or(0);
            e[o..o + 8].copy_from_slice(&new.to_ne_bytes());
        }
    }
}

/// Region references (`values` cut by `offsets`, each empty or one
/// reference) pointed at the copies; one to a dataset the copy does not
/// hold becomes the null reference.
fn remap_regions(map: &HashMap<u64, u64>, values: &[u8], offsets: &[u64]) -> Vec<Vec<u8>> {
    offsets
        .windows(2)
        .map(|w| {
            let piece = values.get(w[0] as usize..w[1] as usize).unwrap_or(&[]);
            match RegionRef::from_bytes(piece) {
                Ok(mut r) => match map.get(&r.object) {
                    Some(&new) => {
                        r.object = new;
                        r.to_bytes()
                    }
                    None => vec![],
                },
                Err(_) => vec![],
            }
        })
        .collect()
}

/// [`remap`] over a rows buffer of `n` elements: references in the
/// elements, and the items of every sequence-of-references member.
fn remap_rows(map: &HashMap<u64, u64>, dtype: &Datatype, n: usize, rows: &mut [u8]) {
    let size = dtype.size();
    let (fixed, values) = rows.split_at_mut((n * size).min(rows.len()));
    remap(map, fixed, size, &dtype.ref_offsets());
    for (off, t) in dtype.vlen_slots() {
        if t.base() == Some(Datatype::Reference) {
            for e in fixed.chunks_exact(size) {
                let (o, l) = record_at(e, off);
                if let Some(v) = values.get_mut(o as usize..(o + l) as usize) {
                    remap(map, v, 8, &[0]);
                }
            }
        }
    }
}

fn copy_attrs(from: &Attributes, to: &Attributes, c: &mut Copy) -> Result<()> {
    for name in from.names()? {
        let v: AttrValue = from.get(&name)?;
        to.create(&name, &v)?;
        if v.dtype.holds_refs() {
            c.ref_attrs.push((to.clone(), name, v));
        }
    }
    Ok(())
}

/// What a copy carries along: progress; where each object already copied
/// went (its path and new id), so a second name becomes a second link
/// again; and what holds references, to point them at the copies once
/// every object has its new id.
struct Copy<'a> {
    done: &'a mut u64,
    total: u64,
    progress: &'a mut Progress<'a>,
    copied: HashMap<u64, (String, u64)>,
    /// Committed datatypes copied (by their id in the source), named or
    /// not yet: a dataset may come before the type it uses.
    types: HashMap<u64, NamedType>,
    ref_attrs: Vec<(Attributes, String, AttrValue)>,
    ref_datasets: Vec<Dataset>,
}

impl Copy<'_> {
    /// Objects have new ids in the copy: references follow them.
    fn fix_references(&mut self) -> Result<()> {
        let map: HashMap<u64, u64> = self.copied.iter().map(|(o, (_, n))| (*o, *n)).collect();
        for (attrs, name, v) in &mut self.ref_attrs {
            if v.dtype == Datatype::RegionRef {
                let (values, offsets) = v.to_ragged_bytes()?;
                let items = remap_regions(&map, &values, &offsets);
                *v = AttrValue::vlen_bytes(&v.shape, &items)?;
                v.dtype = Datatype::RegionRef;
            } else if v.dtype.is_vlen() {
                // n lengths (u64 each), then the items: references.
                let n = v.shape.iter().product::<u64>() as usize;
                let at = (8 * n).min(v.data.len());
                remap(&map, &mut v.data[at..], 8, &[0]);
            } else if v.dtype.has_vlen() {
                let n = v.shape.iter().product::<u64>() as usize;
                remap_rows(&map, &v.dtype, n, &mut v.data);
            } else {
                let size = v.dtype.size();
                remap(&map, &mut v.data, size, &v.dtype.ref_offsets());
            }
            attrs.set(name, v)?;
        }
        for d in &self.ref_datasets {
            let dt = d.dtype()?;
            let all = Selection::all(&d.shape()?);
            if dt == Datatype::RegionRef {
                let (values, offsets) = d.read_ragged_bytes(&all)?;
                d.write_vlen_bytes(&all, &remap_regions(&map, &values, &offsets))?;
            } else if dt.is_vlen() {
                let (mut values, offsets) = d.read_ragged_bytes(&all)?;
                remap(&map, &mut values, 8, &[0]);
                d.write_ragged_bytes(&all, &values, &offsets)?;
            } else if dt.has_vlen() {
                let mut rows = d.read_rows(&all)?;
                remap_rows(&map, &dt, d.len()? as usize, &mut rows);
                d.write_rows(&all, &rows)?;
            } else {
                let mut buf = vec![0u8; d.len()? as usize * dt.size()];
                d.read_bytes(&all, &mut buf)?;
                remap(&map, &mut buf, dt.size(), &dt.ref_offsets());
                d.write_bytes(&all, &buf)?;
            }
        }
        Ok(())
    }
}

fn copy_group(from: &Group, to: &Group, c: &mut Copy) -> Result<()> {
    for (name, link) in from.links()? {
        match link {
            Link::Soft(target) => to.link_soft(&name, &target)?,
            Link::External { file, path } => to.link_external(&name, &file, &path)?,
            Link::Hard(_) => {
                let obj = from.object(&name)?;
                if let Some((first, _)) = c.copied.get(&obj.id()) {
                    to.link_hard(first, &name)?;
                    continue;
                }
                match obj {
                    Object::Datatype(t) => {
                        // A type copied for a dataset met first gets its name now.
                        let nt = match c.types.get(&t.id()) {
                            Some(nt) => {
                                to.link_type(&name, nt)?;
                                to.named_type(&name)?
                            }
                            None => to.commit_type(&name, &t.dtype()?)?,
                        };
                        c.copied.insert(t.id(), (nt.path().to_string(), nt.id()));
                        c.types.insert(t.id(), nt.clone());
                        copy_attrs(&t.attrs(), &nt.attrs(), c)?;
                    }
                    Object::Group(g) => {
                        let times = g.times()?;
                        let opts = GroupOptions::new()
                            .track_order(g.track_order()?)
                            .track_attr_order(g.attrs().track_order()?)
                            .track_times(times.is_some());
                        let ng = to.create_group_with(&name, &opts)?;
                        c.copied.insert(g.id(), (ng.path().to_string(), ng.id()));
                        copy_attrs(&g.attrs(), &ng.attrs(), c)?;
                        copy_group(&g, &ng, c)?;
                        // After its members: each link made rewrote it.
                        super::times::keep(&ng.file, ng.id(), times)?;
                    }
                    Object::Dataset(d) => {
                        // A committed type met first here is made with the
                        // dataset, nameless until its link is met.
                        let used = d.committed_type()?;
                        let committed = match &used {
                            Some(t) => Some(c.types.get(&t.id()).cloned().ok_or(())),
                            None => None,
                        };
                        let nd = copy_dataset(
                            &d,
                            to,
                            &name,
                            committed.as_ref(),
                            c.done,
                            c.total,
                            c.progress,
                        )?;
                        if let (Some(t), Some(Err(()))) = (&used, &committed) {
                            if let Some(nt) = nd.committed_type()? {
                                c.types.insert(t.id(), nt);
                            }
                        }
                        c.copied.insert(d.id(), (nd.path().to_string(), nd.id()));
                        copy_attrs(&d.attrs(), &nd.attrs(), c)?;
                        super::times::keep(&nd.file, nd.id(), d.times()?)?;
                        if nd.dtype()?.holds_refs() {
                            c.ref_datasets.push(nd);
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

fn copy_dataset(
    d: &Dataset,
    to: &Group,
    name: &str,
    committed: Option<&Committed>,
    done: &mut u64,
    total: u64,
    progress: &mut Progress,
) -> Result<Dataset> {
    let dtype = d.dtype()?;
    if dtype.has_vlen() {
        return super::vlen::repack::copy_dataset(d, to, name, committed, done, total, progress);
    }
    if d.is_null()? {
        let mut o = DatasetOptions::empty(dtype).track_order(d.attrs().track_order()?);
        o = with_committed(o.track_times(d.times()?.is_some()), committed);
        return to.create_dataset(name, &o);
    }
    if d.is_virtual()? {
        // The mappings, not the elements: sources are named as they were
        // ("." is the copy itself), so the copy reads what the original did.
        let maps = d.virtual_mappings()?;
        let shape = match maps.first() {
            Some(m) => m.virtual_region.dims.clone(),
            None => d.shape()?,
        };
        let mut o = DatasetOptions::new(dtype, &shape)
            .track_order(d.attrs().track_order()?)
            .maxshape(&d.maxshape()?)
            .virtual_mappings(&maps);
        if d.has_fill_value()? {
            o = o.fill_value(&d.fill_value()?);
        }
        o = with_committed(o.track_times(d.times()?.is_some()), committed);
        return to.create_dataset(name, &o.fill_time(d.fill_time()?));
    }
    let segs = d.external_segments()?;
    if !segs.is_empty() {
        // The list, not the elements: they stay in the external files, named
        // as they were, so the copy reads what the original did.
        let mut o = DatasetOptions::new(dtype, &d.shape()?)
            .track_order(d.attrs().track_order()?)
            .maxshape(&d.maxshape()?)
            .external(&segs);
        if d.has_fill_value()? {
            o = o.fill_value(&d.fill_value()?);
        }
        o = with_committed(o.track_times(d.times()?.is_some()), committed);
        return to.create_dataset(name, &o.fill_time(d.fill_time()?));
    }
    let shape = d.shape()?;
    let fill = d.fill_value()?;
    // The layout is kept as it was, compact and contiguous included.
    let mut o = DatasetOptions::new(dtype.clone(), &shape)
        .track_order(d.attrs().track_order()?)
        .fill_value(&fill)
        .fill_time(d.fill_time()?)
        .layout(d.layout()?);
    let chunks = d.chunks()?;
    if let Some(c) = &chunks {
        o = o.chunks(c).maxshape(&d.maxshape()?).filters(&d.filters()?);
    }
    o = with_committed(o.track_times(d.times()?.is_some()), committed);
    let nd = to.create_dataset(name, &o)?;
    let elem = dtype.size() as u64;
    if shape.contains(&0) {
        return Ok(nd);
    }
    if let (Some(c), false) = (&chunks, dtype.holds_refs()) {
        // Stored chunks are copied as they are: nothing is decoded and
        // encoded again, and chunks through HDF5 filters arca has no codec
        // for survive too.
        let chunk_bytes = c.iter().product::<u64>() * elem;
        let stored = d.stored_chunks()?;
        // Batches of about STEP_BYTES stored bytes.
        let mut batches = vec![];
        let (mut start, mut held) = (0, 0u64);
        for (i, s) in stored.iter().enumerate() {
            held += s.size;
            if held >= STEP_BYTES || i + 1 == stored.len() {
                batches.push(&stored[start..=i]);
                (start, held) = (i + 1, 0);
            }
        }
        for batch in batches {
            let offsets: Vec<Vec<u64>> = batch.iter().map(|s| s.offset.clone()).collect();
            let (bytes, found) = d.read_chunks_stored(&offsets)?;
            let mut at = 0;
            let mut items = Vec::with_capacity(batch.len());
            for (off, f) in offsets.iter().zip(found) {
                if let Some((len, mask)) = f {
                    items.push((&off[..], &bytes[at..at + len], mask));
                    at += len;
                }
            }
            nd.write_chunks_stored(&items)?;
            *done += chunk_bytes * batch.len() as u64;
            progress((*done).min(total), total);
        }
        return Ok(nd);
    }
    // Copy piece by piece: chunk by chunk, or bands of whole rows along
    // the first axis.
    let piece: Vec<u64> = match &chunks {
        Some(c) => c.clone(),
        None => {
            // A scalar is one piece of its one element.
            let row: u64 = shape.iter().skip(1).product::<u64>().max(1) * elem;
            let mut b = shape.clone();
            if let Some(first) = b.first_mut() {
                *first = (STEP_BYTES / row).clamp(1, shape[0]);
            }
            b
        }
    };
    let grid: Vec<u64> = shape
        .iter()
        .zip(&piece)
        .map(|(s, b)| s.div_ceil(*b))
        .collect();
    let mut idx = vec![0u64; shape.len()];
    let mut buf = vec![];
    loop {
        let ranges: Vec<(u64, u64, u64)> = idx
            .iter()
            .zip(&piece)
            .zip(&shape)
            .map(|((i, b), s)| (i * b, ((i + 1) * b).min(*s), 1))
            .collect();
        let sel = Selection::from_ranges(&ranges)?;
        buf.resize((sel.len() * elem) as usize, 0);
        d.read_bytes(&sel, &mut buf)?;
        // Chunks holding only the fill value stay unstored, as in the source.
        let only_fill = chunks.is_some() && buf.chunks_exact(elem as usize).all(|e| e == &fill[..]);
        if !only_fill {
            nd.write_bytes(&sel, &buf)?;
        }
        *done += sel.len() * elem;
        progress(*done, total);
        let mut k = idx.len();
        loop {
            if k == 0 {
                return Ok(nd);
            }
            k -= 1;
            idx[k] += 1;
            if idx[k] < grid[k] {
                break;
            }
            idx[k] = 0;
        }
    }
}
