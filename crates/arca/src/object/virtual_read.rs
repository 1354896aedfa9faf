//! Virtual datasets read: the elements of a selection assembled from the
//! sources the dataset's mappings name (format/virtual_map.rs), in this
//! file or others, over the fill value.
//!
//! Sources are found as HDF5 finds them: `"."` is the virtual dataset's own
//! file; a relative name is looked for beside that file, then from the
//! current directory; an absolute one as given, then by its last component
//! beside the file. A source file that is missing or cannot be opened, or
//! that holds no dataset at the path, leaves its part as the fill value;
//! so do a source's elements beyond its current extent. Each source file
//! is opened once per file handle, read-only.
//!
//! A mapping whose two selections are boxes of one index set per axis
//! (all, hyperslabs) with the same extents, axes of one index aside, is
//! read as one hyperslab of its source per run of those index sets (one
//! read for the usual strided or blocked mapping); any other is taken
//! element by element, its source read as the box that bounds what the
//! read needs.

use super::handle::{lock, FileHandle};
use super::lookup::{open_first, resolve, Found};
use super::path::components;
use super::storage::{load_meta, read_with_meta};
use crate::error::{Error, Result};
use crate::format::datatype::Datatype;
use crate::format::object_header::{DatasetMeta, Layout, ObjectKind};
use crate::format::region::{Region, RegionSelection, UNLIMITED};
use crate::format::virtual_map::{self, VirtualMapping};
use crate::selection::{copy_box, Selection, Window};
use crate::store::Store;

/// Virtual datasets whose sources are virtual, nested deeper than this,
/// are refused: a mapping chain that long is a loop.
const MAX_DEPTH: usize = 8;

/// The mappings of a virtual dataset's header (`None` for other layouts).
pub(crate) fn mappings(st: &mut Store, m: &DatasetMeta) -> Result<Option<Vec<VirtualMapping>>> {
    match m.layout {
        Layout::Virtual { addr: 0, .. } => Ok(Some(vec![])),
        Layout::Virtual { addr, .. } => {
            let b = st.read_blob(addr)?;
            Ok(Some(virtual_map::decode(&b, addr, &m.dims)?))
        }
        _ => Ok(None),
    }
}

/// A source dataset as found for one read.
struct Source {
    file: FileHandle,
    addr: u64,
    dims: Vec<u64>,
    dtype: Datatype,
}

/// Where to look for a mapping's source file, in order.
fn candidates(here: Option<&std::path::Path>, file: &str) -> Vec<std::path::PathBuf> {
    let named = std::path::Path::new(file);
    let dir = here.and_then(|p| p.parent());
    let mut out = vec![];
    if named.is_absolute() {
        out.push(named.to_path_buf());
        if let (Some(d), Some(base)) = (dir, named.file_name()) {
            out.push(d.join(base));
        }
    } else {
        if let Some(d) = dir {
            out.push(d.join(named));
        }
        out.push(named.to_path_buf());
    }
    out
}

/// Find the source of `map`: `None` when it is missing (see the module
/// comment).
fn source(this: &FileHandle, map: &VirtualMapping, depth: usize) -> Result<Option<Source>> {
    let file = if map.file == "." {
        this.clone()
    } else {
        let mut g = lock(this)?;
        let c = candidates(g.path(), &map.file);
        match open_first(&mut g, this, &c, Some(false)) {
            Ok(Some(f)) => f,
            // A file that will not open is a missing source, as in HDF5.
            Ok(None) | Err(_) => return Ok(None),
        }
    };
    let parts = components(&map.dataset)?;
    let mut g = lock(&file)?;
    let root = g.sb.root;
    let addr = match resolve(&mut g.st, root, root, &parts, &map.dataset) {
        Ok(Found::Local(ObjectKind::Dataset, a)) => a,
        Ok(_) | Err(Error::NotFound(_)) => return Ok(None),
        Err(e) => return Err(e),
    };
    let m = load_meta(&mut g.st, addr)?;
    if m.null {
        return Ok(None);
    }
    if m.dtype.has_vlen() {
        return Err(Error::invalid(format!(
            "virtual source {}:{} holds variable-length values",
            map.file, map.dataset
        )));
    }
    let maps = mappings(&mut g.st, &m)?;
    drop(g);
    let dims = match maps {
        Some(maps) => dims_with(&file, &m, &maps, depth + 1)?,
        None => m.dims.to_vec(),
    };
    Ok(Some(Source {
        file,
        addr,
        dims,
        dtype: m.dtype,
    }))
}

/// How many blocks an unlimited hyperslab dimension `s` takes from an
/// extent of `n`.
fn blocks_in(start: u64, stride: u64, block: u64, n: u64) -> u64 {
    match start.checked_add(block) {
        Some(end) if end <= n => (n - end) / stride + 1,
        _ => 0,
    }
}

/// A mapping with its unlimited counts resolved against the source's
/// extent `src`: `(virtual side, source side)`.
fn resolved(map: &VirtualMapping, src: &[u64]) -> (Region, Region) {
    let RegionSelection::Hyperslab(d) = &map.source_region.selection else {
        return (map.virtual_region.clone(), map.source_region.clone());
    };
    let n = d
        .iter()
        .zip(src)
        .find(|(s, _)| s.count == UNLIMITED)
        .map_or(0, |(s, &n)| blocks_in(s.start, s.stride, s.block, n));
    (
        map.virtual_region.with_count(n),
        map.source_region.with_count(n),
    )
}

/// The extent of a virtual dataset now: along an axis an unlimited
/// mapping fills, as far as the last element its sources hold (within
/// `maxdims`); elsewhere its shape.
pub(crate) fn dims_with(
    this: &FileHandle,
    m: &DatasetMeta,
    maps: &[VirtualMapping],
    depth: usize,
) -> Result<Vec<u64>> {
    let mut dims = m.dims.to_vec();
    if !maps.iter().any(|x| x.virtual_region.is_unlimited()) {
        return Ok(dims);
    }
    if depth > MAX_DEPTH {
        return Err(Error::invalid(format!(
            "virtual datasets nested more than {MAX_DEPTH} deep (a loop?)"
        )));
    }
    let mut reach: Vec<Option<u64>> = vec![None; dims.len()];
    for map in maps.iter().filter(|x| x.virtual_region.is_unlimited()) {
        let RegionSelection::Hyperslab(vd) = &map.virtual_region.selection else {
            continue;
        };
        let src = match source(this, map, depth)? {
            Some(s) => s.dims,
            None => map.source_region.dims.clone(),
        };
        let (v, _) = resolved(map, &src);
        let RegionSelection::Hyperslab(rd) = &v.selection else {
            continue;
        };
        for (ax, (orig, now)) in vd.iter().zip(rd).enumerate() {
            if orig.count != UNLIMITED {
                continue;
            }
            let end = if now.count == 0 {
                0
            } else {
                (now.count - 1)
                    .saturating_mul(now.stride)
                    .saturating_add(now.start)
                    .saturating_add(now.block)
            };
            reach[ax] = Some(reach[ax].map_or(end, |r| r.max(end)));
        }
    }
    for (ax, r) in reach.into_iter().enumerate() {
        if let Some(r) = r {
            dims[ax] = r.min(m.maxdims[ax]);
        }
    }
    Ok(dims)
}

/// Read `sel` of the virtual dataset whose header holds `m` (its mappings
/// `maps`, its extent now `dims`) into `out`, native byte order; `fill` is
/// one element of the fill value, native order.
pub(crate) fn read(
    this: &FileHandle,
    m: &DatasetMeta,
    maps: &[VirtualMapping],
    dims: &[u64],
    fill: &[u8],
    sel: &Selection,
    out: &mut [u8],
) -> Result<()> {
    read_at_depth(this, m, maps, dims, fill, sel, out, 0)
}

#[allow(clippy::too_many_arguments)]
fn read_at_depth(
    this: &FileHandle,
    m: &DatasetMeta,
    maps: &[VirtualMapping],
    dims: &[u64],
    fill: &[u8],
    sel: &Selection,
    out: &mut [u8],
    depth: usize,
) -> Result<()> {
    if depth > MAX_DEPTH {
        return Err(Error::invalid(format!(
            "virtual datasets nested more than {MAX_DEPTH} deep (a loop?)"
        )));
    }
    sel.check(dims)?;
    let elem = m.dtype.size();
    super::storage::check_len("buffer", out.len(), sel, elem)?;
    for e in out.chunks_exact_mut(elem.max(1)) {
        e.copy_from_slice(fill);
    }
    if sel.is_empty() {
        return Ok(());
    }
    let want = m.dtype.native();
    for map in maps {
        let Some(src) = source(this, map, depth)? else {
            continue;
        };
        let (vreg, sreg) = resolved(map, &src.dims);
        let reader = SourceReader {
            src: &src,
            want: &want,
            depth,
        };
        match pairing(&vreg, &sreg) {
            Some(p) => read_product(&reader, &p, dims, sel, out, elem)?,
            None => read_elements(&reader, &vreg, &sreg, dims, sel, out, elem)?,
        }
    }
    Ok(())
}

/// Reads hyperslabs of one source, converted to the virtual type.
struct SourceReader<'a> {
    src: &'a Source,
    want: &'a Datatype,
    depth: usize,
}

impl SourceReader<'_> {
    /// The elements of `s` (inside the source's extent), native order, as
    /// the virtual dataset's type.
    fn read(&self, s: &Selection) -> Result<Vec<u8>> {
        let src = self.src;
        let have = src.dtype.native();
        let mut buf = vec![0u8; s.len() as usize * have.size()];
        let mut g = lock(&src.file)?;
        let m = load_meta(&mut g.st, src.addr)?;
        if matches!(m.layout, Layout::Virtual { .. }) {
            let maps = mappings(&mut g.st, &m)?.unwrap_or_default();
            let mut fill = m.read_fill_bytes(&g.st)?.to_vec();
            if m.dtype.needs_swap() {
                m.dtype.swap(&mut fill);
            }
            drop(g);
            read_at_depth(
                &src.file,
                &m,
                &maps,
                &src.dims,
                &fill,
                s,
                &mut buf,
                self.depth + 1,
            )?;
        } else {
            let (st, caches) = g.storage();
            read_with_meta(st, caches, src.addr, &m, s, &mut buf)?;
        }
        convert(&have, self.want, buf)
    }
}

/// Values of `from` (native order) as `to` (native order): the same bytes
/// for the same type; numbers converted between integer, float32/64 and
/// bool types (integers wrap, floats truncate, as a C cast); anything
/// else refused.
fn convert(from: &Datatype, to: &Datatype, buf: Vec<u8>) -> Result<Vec<u8>> {
    if from == to {
        return Ok(buf);
    }
    enum Num {
        I(i128),
        F(f64),
    }
    let get = |t: &Datatype, b: &[u8]| -> Option<Num> {
        let le = |k: usize| {
            let mut x = [0u8; 16];
            x[..k].copy_from_slice(&b[..k]);
            if cfg!(target_endian = "big") {
                x[..k].reverse();
            }
            x
        };
        Some(match *t {
            Datatype::Bool => Num::I((b[0] != 0) as i128),
            Datatype::UInt { size, .. } => Num::I(u128::from_le_bytes(le(size as usize)) as i128),
            Datatype::Int { size, .. } => {
                let s = size as u32 * 8;
                let v = u128::from_le_bytes(le(size as usize)) as i128;
                Num::I((v << (128 - s)) >> (128 - s))
            }
            Datatype::Float { size: 4, .. } => {
                Num::F(f32::from_ne_bytes(b[..4].try_into().ok()?) as f64)
            }
            Datatype::Float { size: 8, .. } => Num::F(f64::from_ne_bytes(b[..8].try_into().ok()?)),
            _ => return None,
        })
    };
    let put = |t: &Datatype, v: Num, b: &mut [u8]| -> Option<()> {
        let as_int = |v: &Num| match v {
            Num::I(i) => *i,
            Num::F(f) => *f as i128,
        };
        let as_f = |v: &Num| match v {
            Num::I(i) => *i as f64,
            Num::F(f) => *f,
        };
        match *t {
            Datatype::Bool => b[0] = (as_int(&v) != 0) as u8,
            Datatype::UInt { size, .. } | Datatype::Int { size, .. } => {
                let k = size as usize;
                let bytes = as_int(&v).to_le_bytes();
                b[..k].copy_from_slice(&bytes[..k]);
                if cfg!(target_endian = "big") {
                    b[..k].reverse();
                }
            }
            Datatype::Float { size: 4, .. } => b.copy_from_slice(&(as_f(&v) as f32).to_ne_bytes()),
            Datatype::Float { size: 8, .. } => b.copy_from_slice(&as_f(&v).to_ne_bytes()),
            _ => return None,
        }
        Some(())
    };
    let refuse = || {
        Error::invalid(format!(
            "a virtual dataset of {to} cannot take elements of {from} from its source"
        ))
    };
    let (fs, ts) = (from.size(), to.size());
    let n = buf.len() / fs.max(1);
    let mut out = vec![0u8; n * ts];
    for (a, b) in buf.chunks_exact(fs).zip(out.chunks_exact_mut(ts)) {
        let v = get(from, a).ok_or_else(refuse)?;
        put(to, v, b).ok_or_else(refuse)?;
    }
    Ok(out)
}

/// Index runs `(first, n, step)` of one axis of a box selection.
type Runs = Vec<(u64, u64, u64)>;

/// How the axes of a mapping's two sides pair up, when both are boxes
/// with the same extents on their axes of more than one index.
struct Pairing {
    /// Per virtual axis: its runs, and the source axis paired with it
    /// (`None` when the axis holds one index).
    virt: Vec<(Runs, Option<usize>)>,
    /// Per source axis: its runs.
    src: Vec<Runs>,
}

fn pairing(v: &Region, s: &Region) -> Option<Pairing> {
    let (vp, sp) = (v.product()?, s.product()?);
    let total = |r: &Runs| r.iter().map(|x| x.1).sum::<u64>();
    let vbig: Vec<usize> = (0..vp.len()).filter(|&i| total(&vp[i]) != 1).collect();
    let sbig: Vec<usize> = (0..sp.len()).filter(|&i| total(&sp[i]) != 1).collect();
    if vbig.len() != sbig.len()
        || vbig
            .iter()
            .zip(&sbig)
            .any(|(&a, &b)| total(&vp[a]) != total(&sp[b]))
    {
        return None;
    }
    let mut virt: Vec<(Runs, Option<usize>)> = vp.into_iter().map(|r| (r, None)).collect();
    for (&a, &b) in vbig.iter().zip(&sbig) {
        virt[a].1 = Some(b);
    }
    Some(Pairing { virt, src: sp })
}

/// The first index of a one-index axis.
fn only(r: &Runs) -> Option<u64> {
    r.first().map(|x| x.0)
}

/// One piece of a paired axis: `n` positions where the virtual index is
/// `v0 + i·vs` and the source index `s0 + i·ss`.
#[derive(Clone, Copy)]
struct Piece {
    v0: u64,
    vs: u64,
    s0: u64,
    ss: u64,
    n: u64,
}

/// Cut two run lists of equal total length into pieces that are one run
/// on both sides.
fn pieces(v: &Runs, s: &Runs) -> Vec<Piece> {
    let mut out = vec![];
    let (mut i, mut j, mut vi, mut si) = (0, 0, 0u64, 0u64);
    while i < v.len() && j < s.len() {
        let (va, vn, vst) = v[i];
        let (sa, sn, sst) = s[j];
        let n = (vn - vi).min(sn - si);
        if n > 0 {
            out.push(Piece {
                v0: va + vi * vst,
                vs: vst,
                s0: sa + si * sst,
                ss: sst,
                n,
            });
        }
        vi += n;
        si += n;
        if vi == vn {
            (i, vi) = (i + 1, 0);
        }
        if si == sn {
            (j, si) = (j + 1, 0);
        }
    }
    out
}

/// The part of `p` whose virtual indices the request `(r0, rc, rs)` takes
/// and whose source indices lie below `limit`: `(source start, source step,
/// request position, request step, count)`.
fn clip(p: &Piece, r0: u64, rc: u64, rs: u64, limit: u64) -> Option<(u64, u64, u64, u64, u64)> {
    if rc == 0 || p.n == 0 {
        return None;
    }
    let r_last = r0 + (rc - 1) * rs;
    let v_last = p.v0 + (p.n - 1) * p.vs;
    if v_last < r0 || p.v0 > r_last {
        return None;
    }
    // Positions whose virtual index lies in [r0, r_last].
    let lo = if p.v0 >= r0 {
        0
    } else {
        (r0 - p.v0).div_ceil(p.vs)
    };
    let hi = ((r_last - p.v0) / p.vs).min(p.n - 1);
    if lo > hi {
        return None;
    }
    // Of those, the ones on the request's grid: a progression of period
    // rs / gcd(vs, rs), found by trying one period.
    let g = gcd(p.vs, rs);
    let period = rs / g;
    let t0 = (lo..=hi.min(lo + period - 1)).find(|&t| (p.v0 + t * p.vs - r0).is_multiple_of(rs))?;
    let mut count = (hi - t0) / period + 1;
    let s_start = p.s0 + t0 * p.ss;
    let s_step = p.ss * period;
    // Source indices past its current extent stay the fill value.
    if s_start >= limit {
        return None;
    }
    count = count.min((limit - 1 - s_start) / s_step + 1);
    let j0 = (p.v0 + t0 * p.vs - r0) / rs;
    let jstep = p.vs / g;
    Some((s_start, s_step, j0, jstep, count))
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a.max(1)
    } else {
        gcd(b, a % b)
    }
}

/// A mapping of boxes: one source hyperslab per combination of pieces.
fn read_product(
    r: &SourceReader,
    p: &Pairing,
    _dims: &[u64],
    sel: &Selection,
    out: &mut [u8],
    elem: usize,
) -> Result<()> {
    let rank = p.virt.len();
    let src_rank = p.src.len();
    // Per virtual axis, its choices: (source axis and its start/step, or
    // none; request position, step; count).
    type Choice = (Option<(usize, u64, u64)>, u64, u64, u64);
    let mut per_axis: Vec<Vec<Choice>> = Vec::with_capacity(rank);
    let mut fixed_src: Vec<Option<u64>> = vec![None; src_rank];
    for (e, runs) in p.src.iter().enumerate() {
        if runs.iter().map(|x| x.1).sum::<u64>() == 1 {
            fixed_src[e] = only(runs);
        }
    }
    for (d, (runs, paired)) in p.virt.iter().enumerate() {
        let (r0, rc, rs) = (sel.start[d], sel.count[d], sel.step[d]);
        let mut choices = vec![];
        match paired {
            None => {
                let Some(v) = only(runs) else { return Ok(()) };
                if v >= r0 && (v - r0) % rs == 0 && (v - r0) / rs < rc {
                    choices.push((None, (v - r0) / rs, 1, 1));
                }
            }
            Some(e) => {
                for pc in pieces(runs, &p.src[*e]) {
                    if let Some((s0, ss, j0, js, n)) = clip(&pc, r0, rc, rs, r.src.dims[*e]) {
                        choices.push((Some((*e, s0, ss)), j0, js, n));
                    }
                }
            }
        }
        if choices.is_empty() {
            return Ok(());
        }
        per_axis.push(choices);
    }
    // A fixed source index past the source's extent: nothing to read.
    if fixed_src
        .iter()
        .zip(&r.src.dims)
        .any(|(f, &n)| f.is_some_and(|f| f >= n))
    {
        return Ok(());
    }
    let mut pick = vec![0usize; rank];
    loop {
        let mut start = vec![0u64; src_rank];
        let mut step = vec![1u64; src_rank];
        let mut count = vec![1u64; src_rank];
        for (e, f) in fixed_src.iter().enumerate() {
            if let Some(f) = f {
                start[e] = *f;
            }
        }
        let (mut ostart, mut ostep, mut ocount) =
            (vec![0u64; rank], vec![1u64; rank], vec![1u64; rank]);
        for d in 0..rank {
            let (src, j0, js, n) = per_axis[d][pick[d]];
            (ostart[d], ostep[d], ocount[d]) = (j0, js, n);
            if let Some((e, s0, ss)) = src {
                (start[e], step[e], count[e]) = (s0, ss, n);
            }
        }
        let s = Selection::new(start, count, step)?;
        let data = r.read(&s)?;
        let zeros = vec![0u64; rank];
        let ones = vec![1u64; rank];
        copy_box(
            elem,
            &ocount,
            &data,
            &Window {
                dims: &ocount,
                start: &zeros,
                step: &ones,
            },
            out,
            &Window {
                dims: &sel.count,
                start: &ostart,
                step: &ostep,
            },
        )?;
        let mut d = rank;
        loop {
            if d == 0 {
                return Ok(());
            }
            d -= 1;
            pick[d] += 1;
            if pick[d] < per_axis[d].len() {
                break;
            }
            pick[d] = 0;
        }
    }
}

/// Row-major coordinates of linear index `i` in `dims`.
fn unravel(mut i: u64, dims: &[u64], c: &mut [u64]) {
    for (k, &d) in dims.iter().enumerate().rev() {
        c[k] = i.checked_rem(d).unwrap_or(0);
        i = i.checked_div(d).unwrap_or(0);
    }
}

/// Any other mapping: element by element.
#[allow(clippy::too_many_arguments)]
fn read_elements(
    r: &SourceReader,
    v: &Region,
    s: &Region,
    dims: &[u64],
    sel: &Selection,
    out: &mut [u8],
    elem: usize,
) -> Result<()> {
    let (vl, sl) = (v.linear()?, s.linear()?);
    if vl.len() != sl.len() {
        return Err(Error::invalid(format!(
            "a virtual mapping pairs {} elements with {}",
            vl.len(),
            sl.len()
        )));
    }
    let rank = dims.len();
    let srank = s.dims.len();
    let mut vc = vec![0u64; rank];
    let mut sc = vec![0u64; srank];
    // (source coordinates, output element) of what the read takes.
    let mut need: Vec<(Vec<u64>, usize)> = vec![];
    'each: for (&vi, &si) in vl.iter().zip(&sl) {
        unravel(vi, &v.dims, &mut vc);
        let mut o = 0u64;
        for (d, &c) in vc.iter().enumerate() {
            let (a, n, st) = (sel.start[d], sel.count[d], sel.step[d]);
            if c < a || !(c - a).is_multiple_of(st) || (c - a) / st >= n {
                continue 'each;
            }
            o = o * n + (c - a) / st;
        }
        unravel(si, &s.dims, &mut sc);
        if sc.iter().zip(&r.src.dims).any(|(c, &n)| *c >= n) {
            continue;
        }
        need.push((sc.clone(), o as usize));
    }
    if need.is_empty() {
        return Ok(());
    }
    // The box bounding what is needed, read at once when it is not much
    // larger than that; else one element at a time.
    let lo: Vec<u64> = (0..srank)
        .map(|k| need.iter().map(|n| n.0[k]).min().unwrap_or(0))
        .collect();
    let hi: Vec<u64> = (0..srank)
        .map(|k| need.iter().map(|n| n.0[k]).max().unwrap_or(0))
        .collect();
    let span: Vec<u64> = lo.iter().zip(&hi).map(|(a, b)| b - a + 1).collect();
    let boxed = span.iter().try_fold(1u64, |a, &x| a.checked_mul(x));
    if boxed.is_some_and(|b| b <= (need.len() as u64).saturating_mul(4).max(1 << 16)) {
        let data = r.read(&Selection::new(lo.clone(), span.clone(), vec![1; srank])?)?;
        for (c, o) in &need {
            let k = c
                .iter()
                .zip(&lo)
                .zip(&span)
                .fold(0u64, |acc, ((c, a), n)| acc * n + (c - a)) as usize;
            out[o * elem..(o + 1) * elem].copy_from_slice(&data[k * elem..(k + 1) * elem]);
        }
    } else {
        for (c, o) in &need {
            let data = r.read(&Selection::new(c.clone(), vec![1; srank], vec![1; srank])?)?;
            out[o * elem..(o + 1) * elem].copy_from_slice(&data[..elem]);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clipping_follows_the_request_grid() {
        // Virtual indices 1, 4, 7, ..., 28 (source 0..10) against a request
        // of every other index from 3: 7, 13, 19, 25 are taken.
        let p = Piece {
            v0: 1,
            vs: 3,
            s0: 0,
            ss: 1,
            n: 10,
        };
        let (s0, ss, j0, js, n) = clip(&p, 3, 20, 2, 100).unwrap();
        assert_eq!((s0, ss, j0, js, n), (2, 2, 2, 3, 4));
        // A source of 4 elements holds only the first two of those.
        assert_eq!(clip(&p, 3, 20, 2, 4).unwrap().4, 1);
        assert!(clip(&p, 2, 1, 1, 100).is_none());
        assert_eq!(
            pieces(&vec![(0, 4, 1), (10, 2, 1)], &vec![(5, 3, 2), (20, 3, 1)]).len(),
            3
        );
    }

    #[test]
    fn sources_are_looked_for_as_hdf5_does() {
        let here = std::path::Path::new("/data/v.arca");
        assert_eq!(
            candidates(Some(here), "raw/a.arca"),
            ["/data/raw/a.arca", "raw/a.arca"].map(std::path::PathBuf::from)
        );
        assert_eq!(
            candidates(Some(here), "/old/b.arca"),
            ["/old/b.arca", "/data/b.arca"].map(std::path::PathBuf::from)
        );
        assert_eq!(
            candidates(None, "c.arca"),
            ["c.arca"].map(std::path::PathBuf::from)
        );
    }
}
