//! Whole-file walks: statistics by kind of space, and a full integrity check.

use super::group::{links_of, members_with_addr};
use super::session::Session;
use crate::error::{Error, Result};
use crate::filter;
use crate::format::attribute::{AttrData, AttrRecord};
use crate::format::btree;
use crate::format::object_header::{Fill, Header, Layout, ObjectKind};
use crate::pager::PAGE_SIZE;
use crate::store::{Store, BLOB_HEADER};

/// Object counts and where the file's bytes go.
///
/// ```
/// use arca::File;
/// let f = File::in_memory().unwrap();
/// f.root().create_group("g").unwrap();
/// let s = f.stat().unwrap();
/// assert_eq!(s.groups, 2); // the root and g
/// assert_eq!(s.file_bytes, s.superblock_bytes + s.metadata_bytes + s.data_bytes + s.unused_bytes);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stat {
    /// Groups, the root included.
    pub groups: u64,
    /// Datasets.
    pub datasets: u64,
    /// Committed datatypes.
    pub datatypes: u64,
    /// Attributes on all objects.
    pub attributes: u64,
    /// Stored chunks of all chunked datasets.
    pub chunks: u64,
    /// Logical file length.
    pub file_bytes: u64,
    /// The superblock page.
    pub superblock_bytes: u64,
    /// Object headers, B-tree pages and blobs.
    pub metadata_bytes: u64,
    /// Dataset elements as stored (after compression).
    pub data_bytes: u64,
    /// Dataset elements before compression, for allocated storage.
    pub data_logical_bytes: u64,
    /// Elements of compact datasets, kept inside their headers (so also
    /// counted in `metadata_bytes`).
    pub compact_bytes: u64,
    /// Bytes belonging to nothing: space freed and not yet reused.
    pub unused_bytes: u64,
    /// Bytes in free sections known to the free-space manager.
    pub free_bytes: u64,
    /// Number of free sections.
    pub free_sections: u64,
}

fn tree_pages(
    st: &mut Store,
    root: u64,
    extents: &mut Vec<(u64, u64, &'static str)>,
) -> Result<u64> {
    let mut pages = vec![];
    btree::pages(st, root, &mut pages)?;
    extents.extend(pages.iter().map(|&(p, n)| (p, n, "B-tree page")));
    Ok(pages.iter().map(|&(_, n)| n).sum())
}

/// Live extents, free sections and reserved aggregator space must tile the
/// file after the superblock exactly: no overlaps, no byte unaccounted for.
/// The stretches of `[PAGE_SIZE, the last structure's end)` that no extent
/// of `extents` (sorted) covers, as extents of their own.
fn gaps(extents: &[(u64, u64, &'static str)]) -> Vec<(u64, u64, &'static str)> {
    let mut out = vec![];
    let mut pos = PAGE_SIZE as u64;
    for &(a, l, _) in extents {
        if a > pos {
            out.push((pos, a - pos, "left unused"));
        }
        pos = pos.max(a.saturating_add(l));
    }
    out
}

fn account(extents: &[(u64, u64, &'static str)], eof: u64) -> Result<()> {
    let mut pos = PAGE_SIZE as u64;
    for &(a, l, what) in extents.iter() {
        if a < pos {
            return Err(Error::corrupt(
                what,
                a,
                format!("overlaps another structure (which ends at {pos})"),
            ));
        }
        if a > pos {
            return Err(Error::corrupt(
                "file space",
                pos,
                format!("{} bytes belong to nothing (leaked)", a - pos),
            ));
        }
        pos = a + l;
    }
    if pos != eof {
        return Err(Error::corrupt(
            "file space",
            pos,
            format!("structures end at {pos}, the file at {eof}"),
        ));
    }
    Ok(())
}

/// One extent of the file and what it holds, as [`crate::File::space_map`]
/// lists them.
///
/// ```
/// use arca::File;
/// let f = File::in_memory().unwrap();
/// f.root().create_group("g").unwrap();
/// let map = f.space_map().unwrap();
/// assert_eq!((map[0].addr, map[0].what), (0, "superblock"));
/// assert!(map.windows(2).all(|w| w[0].addr + w[0].len == w[1].addr));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extent {
    /// First byte.
    pub addr: u64,
    /// Length in bytes.
    pub len: u64,
    /// What lives there: "superblock", "object header", "B-tree page",
    /// "attribute blob", "fill blob", "free-space record", "chunk",
    /// "contiguous data", "vlen chunk", "vlen free ranges", "free section",
    /// "aggregator", "left unused" (bytes moved contiguous data left until
    /// a proof of the file's space takes them back).
    pub what: &'static str,
}

/// Creation indices of one object's links or attributes are distinct and
/// below the object's next index (else the next creation would repeat one).
fn check_indices(mut seen: Vec<u64>, next: u64, addr: u64, what: &str) -> Result<()> {
    seen.sort_unstable();
    let repeated = seen.windows(2).any(|w| w[0] == w[1]);
    if repeated || seen.last().is_some_and(|&l| l >= next) {
        return Err(Error::corrupt(
            "object header",
            addr,
            format!("{what} creation indices repeat or reach the next index {next}"),
        ));
    }
    Ok(())
}

/// Progress of long work: bytes done so far, of the total (a
/// [`repack`](crate::repack) counts dataset elements copied,
/// [`File::check_with_progress`](crate::File::check_with_progress) bytes
/// verified of the file's size).
pub type Progress<'a> = dyn FnMut(u64, u64) + 'a;

fn walk(g: &mut Session, verify: bool, progress: &mut Progress) -> Result<Stat> {
    walk_extents(g, verify, progress).map(|(s, _)| s)
}

/// The whole-file walk: figures, and every extent (live, free and
/// reserved) in address order; `verify` also checks that they tile the file.
/// `progress` hears the bytes walked so far (structures and chunks) of the
/// file's size, after each object and each verified chunk.
fn walk_extents(
    g: &mut Session,
    verify: bool,
    progress: &mut Progress,
) -> Result<(Stat, Vec<Extent>)> {
    g.load_space_once()?;
    // Every live extent, for the accounting check: (addr, len, what).
    let mut extents: Vec<(u64, u64, &'static str)> = vec![];
    let mut s = Stat {
        superblock_bytes: PAGE_SIZE as u64,
        file_bytes: g.st.space.eof(),
        ..Stat::default()
    };
    let mut stack = vec![g.sb.root];
    // Hard links that arrive at each object: once for most, as many as its
    // link count for objects with several names (each is walked once).
    let mut arrivals = std::collections::HashMap::<u64, u64>::new();
    let counts: std::collections::HashMap<u64, u64> =
        super::links::all_counts(g)?.into_iter().collect();
    // Objects without a name (a count of 0) are reached once, from their
    // entry, as the root is from the superblock.
    stack.extend(counts.iter().filter(|(_, &n)| n == 0).map(|(&a, _)| a));
    s.metadata_bytes += tree_pages(&mut g.st, g.sb.links, &mut extents)?;
    while let Some(addr) = stack.pop() {
        progress(s.metadata_bytes + s.data_bytes, s.file_bytes);
        let met = {
            let m = arrivals.entry(addr).or_insert(0);
            *m += 1;
            *m
        };
        let links = counts.get(&addr).copied().unwrap_or(1).max(1);
        if met > links || arrivals.len() as u64 > s.file_bytes / crate::pager::MIN_PAGE as u64 + 1 {
            return Err(Error::corrupt(
                "group link",
                addr,
                format!("object reached more often than its {links} link(s): links form a cycle"),
            ));
        }
        if met > 1 {
            continue;
        }
        let st = &mut g.st;
        let eof = st.space.eof();
        let h = Header::load(st, addr)?;
        let hsize = st.pager.size_of(addr)? as u64;
        s.metadata_bytes += hsize;
        extents.push((addr, hsize, "object header"));
        s.attributes += h.attrs.count;
        s.metadata_bytes += tree_pages(st, h.attrs.root, &mut extents)?;
        let mut recs = vec![];
        let ordered = h.attr_order.is_some();
        btree::scan(st, h.attrs.root, b"", &mut |_, v| {
            recs.push(AttrRecord::decode(v, addr, eof, ordered)?);
            Ok(true)
        })?;
        if let Some(next) = h.attr_order {
            let seen = recs.iter().filter_map(|r| r.order).collect();
            check_indices(seen, next, addr, "attribute")?;
        }
        if let (ObjectKind::Group, Some(next)) = (h.kind, h.order) {
            let seen = links_of(st, addr)?
                .iter()
                .filter_map(|(_, l)| l.order)
                .collect();
            check_indices(seen, next, addr, "link")?;
        }
        for r in recs {
            if let AttrData::Blob { addr: a, len } = r.data {
                s.metadata_bytes += BLOB_HEADER + len;
                extents.push((a, BLOB_HEADER + len, "attribute blob"));
            }
            if verify {
                let b = r.bytes(st)?;
                if r.dtype == crate::format::datatype::Datatype::RegionRef && !r.null {
                    let n = r.shape.iter().product();
                    crate::format::vlen_attr::check_attr_payload(&r.dtype, n, &b)?;
                    let (values, offsets) = crate::format::vlen_attr::split(&b, n, 1);
                    crate::format::region::check_refs(&values, &offsets)
                        .map_err(|e| Error::corrupt("region reference", addr, e.to_string()))?;
                }
            }
        }
        if let Some(t) = h.committed {
            // A dataset's committed type: reached as by a link (its use is
            // counted with the type's links), holding the dataset's type.
            stack.push(t);
            if verify {
                let same = super::named_type::load_type(st, t)
                    .ok()
                    .zip(h.dataset.as_ref())
                    .is_some_and(|(named, m)| named == m.dtype);
                if !same {
                    return Err(Error::corrupt(
                        "object header",
                        addr,
                        format!(
                            "the committed datatype at {t} is not one holding the dataset's type"
                        ),
                    ));
                }
            }
        }
        match h.kind {
            ObjectKind::Datatype => s.datatypes += 1,
            ObjectKind::Group => {
                s.groups += 1;
                s.metadata_bytes += tree_pages(st, h.links.root, &mut extents)?;
                for (_, _, child) in members_with_addr(st, addr)? {
                    stack.push(child);
                }
            }
            ObjectKind::Dataset => {
                s.datasets += 1;
                let Some(m) = h.dataset else { continue };
                if let Some(Fill::Blob { addr: a, len }) = m.fill {
                    s.metadata_bytes += BLOB_HEADER + len;
                    extents.push((a, BLOB_HEADER + len, "fill blob"));
                }
                if verify {
                    m.fill_bytes(st)?;
                }
                match &m.layout {
                    Layout::Contiguous { addr: a, size } => {
                        if *a != 0 {
                            st.check_live("contiguous data", *a, *size)?;
                            s.data_bytes += size;
                            s.data_logical_bytes += size;
                            extents.push((*a, *size, "contiguous data"));
                        }
                    }
                    Layout::Compact(data) => s.compact_bytes += data.len() as u64,
                    Layout::Virtual { addr: a, len } => {
                        if *a != 0 {
                            s.metadata_bytes += BLOB_HEADER + len;
                            extents.push((*a, BLOB_HEADER + len, "virtual mappings"));
                            if verify {
                                let b = st.read_blob(*a)?;
                                crate::format::virtual_map::decode(&b, *a, &m.dims)?;
                            }
                        }
                    }
                    Layout::External { addr: a, len } => {
                        s.metadata_bytes += BLOB_HEADER + len;
                        extents.push((*a, BLOB_HEADER + len, "external file list"));
                        if verify {
                            super::external_io::segments(st, &m)?;
                        }
                    }
                    Layout::Chunked { chunk, index } => {
                        s.metadata_bytes += tree_pages(st, *index, &mut extents)?;
                        let elem = m.dtype.size();
                        let c = super::storage::engine(&m, chunk, *index, &[]);
                        let expect = c.chunk_bytes();
                        for (_, r) in c.entries(st)? {
                            s.chunks += 1;
                            s.data_bytes += r.size;
                            extents.push((r.addr, r.size, "chunk"));
                            s.data_logical_bytes += expect as u64;
                            st.check_live("chunk", r.addr, r.size)?;
                            if verify {
                                progress(s.metadata_bytes + s.data_bytes, s.file_bytes);
                                let mut buf = vec![0u8; r.size as usize];
                                st.driver().read_at(r.addr, &mut buf)?;
                                crate::chunk::verify(&r, &buf)?;
                                // A chunk through an HDF5 filter arca has no
                                // codec for is proven by its checksum alone.
                                match filter::decode(&m.filters, r.mask, elem, buf, expect, r.addr)
                                {
                                    Err(Error::Unsupported(_)) => {}
                                    r => {
                                        r?;
                                    }
                                }
                            }
                        }
                    }
                }
                if let (Some(v), Some(item)) = (&m.vlen, m.dtype.vector_item()) {
                    let a = crate::vlen::account(st, v, item, verify, &mut extents)?;
                    s.metadata_bytes += a.metadata;
                    s.chunks += a.chunks;
                    s.data_bytes += a.data;
                    s.data_logical_bytes += a.logical;
                    if verify {
                        super::vlen::info::check_records(g, addr)?;
                    }
                }
            }
        }
    }
    for (&addr, &n) in &counts {
        let met = arrivals.get(&addr).copied().unwrap_or(0);
        if met != n.max(1) {
            return Err(Error::corrupt(
                "link count",
                addr,
                format!("{n} links recorded, {met} found"),
            ));
        }
    }
    if g.sb.space[0] != 0 {
        let len = BLOB_HEADER + g.sb.space[1];
        s.metadata_bytes += len;
        extents.push((g.sb.space[0], len, "free-space record"));
    }
    if g.sb.space[2] != 0 {
        let len = BLOB_HEADER + g.sb.space[3];
        s.metadata_bytes += len;
        extents.push((g.sb.space[2], len, "held-space record"));
    }
    if g.sb.left[0] != 0 {
        let len = BLOB_HEADER + g.sb.left[1];
        s.metadata_bytes += len;
        extents.push((g.sb.left[0], len, "left-space record"));
    }
    extents.extend(
        g.st.space
            .held()
            .iter()
            .map(|h| (h.addr, h.size, "space held for snapshot readers")),
    );
    let sections = g.st.space.sections();
    s.free_sections = sections.len() as u64;
    s.free_bytes = sections.iter().map(|x| x.size).sum();
    if verify {
        if let Some(e) = g.space_error() {
            return Err(Error::corrupt(
                "free-space record",
                g.sb.space[0],
                e.to_string(),
            ));
        }
    }
    let mut reserved = g.st.space.reserved();
    reserved.extend(g.st.space.pending().iter().map(|p| (p.addr, p.size)));
    extents.extend(sections.iter().map(|f| (f.addr, f.size, "free section")));
    extents.extend(reserved.iter().map(|&(a, l)| (a, l, "aggregator")));
    extents.sort_unstable();
    // Bytes no structure holds: where moved contiguous data was (the
    // left-space record names them, S7 in `space.rs`); anywhere else they
    // leaked.
    let gaps = gaps(&extents);
    if verify {
        let left = g.st.space.left();
        for &(at, n, _) in &gaps {
            let i = left.partition_point(|s| s.end() <= at);
            if !left
                .get(i)
                .is_some_and(|s| s.addr <= at && at + n <= s.end())
            {
                return Err(Error::corrupt(
                    "file space",
                    at,
                    format!("{n} bytes belong to nothing (leaked)"),
                ));
            }
        }
    }
    if !gaps.is_empty() {
        extents.extend(gaps);
        extents.sort_unstable();
    }
    if verify {
        account(&extents, s.file_bytes)?;
    }
    let used = s.superblock_bytes + s.metadata_bytes + s.data_bytes;
    if used > s.file_bytes {
        return Err(Error::corrupt(
            "file",
            0,
            format!(
                "structures claim {used} bytes of a {}-byte file",
                s.file_bytes
            ),
        ));
    }
    s.unused_bytes = s.file_bytes - used;
    let mut map = Vec::with_capacity(extents.len() + 1);
    map.push(Extent {
        addr: 0,
        len: PAGE_SIZE as u64,
        what: "superblock",
    });
    map.extend(
        extents
            .into_iter()
            .map(|(addr, len, what)| Extent { addr, len, what }),
    );
    Ok((s, map))
}

/// Prove the file's free space (S7 in `space.rs`): walk every live
/// structure, check them clear of each other and of the free and held
/// sections the file names, then let those be reused. Costs a walk, as
/// [`stat`] does.
///
/// # Errors
/// `Corrupt` naming both structures of the first overlap, or what the walk
/// meets; the space stays unproven then.
pub(crate) fn prove_space(g: &mut Session) -> Result<()> {
    g.write_back()?;
    let (_, map) = walk_extents(g, false, &mut |_, _| {})?;
    let mut live: Vec<(u64, u64, &'static str)> = map
        .iter()
        .filter(|e| e.len > 0 && !NOT_LIVE.contains(&e.what))
        .map(|e| (e.addr, e.len, e.what))
        .collect();
    g.st.space.prove(&mut live)?;
    g.set_space_proven();
    Ok(())
}

/// What the space map lists that holds nothing live.
const NOT_LIVE: [&str; 4] = [
    "free section",
    "aggregator",
    "space held for snapshot readers",
    "left unused",
];

pub(crate) fn space_map(g: &mut Session) -> Result<Vec<Extent>> {
    walk_extents(g, false, &mut |_, _| {}).map(|(_, m)| m)
}

pub(crate) fn stat(g: &mut Session) -> Result<Stat> {
    walk(g, false, &mut |_, _| {})
}

pub(crate) fn check(g: &mut Session, progress: &mut Progress) -> Result<Stat> {
    walk(g, true, progress)
}
