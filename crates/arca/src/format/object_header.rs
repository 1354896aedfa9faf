//! Object headers: one page per group, dataset or committed datatype, a
//! list of typed messages.
//!
//! Page payload:
//! ```text
//! +0  u8   kind        1 group, 2 dataset, 3 committed datatype
//! +1  u8   reserved
//! +2  u16  n           number of messages
//! +4  n × { u16 type, u16 flags, u32 len, body[len] }
//! ```
//! Message types (bodies little-endian):
//! ```text
//! 1 links     u64 B-tree root, u64 count            (groups)
//! 2 attrs     u64 B-tree root, u64 count            (all objects)
//! 3 datatype  the datatype's encoding (format/datatype/codec.rs): 8
//!             bytes and more for the classes that go on (datasets and
//!             committed datatypes)
//! 4 shape     the dataspace with its maxima (format/shape.rs): u8 rank,
//!             rank × u64 dims, rank × u64 maxdims (u64::MAX = unlimited);
//!             rank 0xFF: a null dataspace, no elements at all (version 3)
//! 5 layout    u8 class; 0 contiguous: u64 addr (0 = unallocated), u64 size;
//!             1 chunked: rank × u64 chunk dims, u64 chunk-index root;
//!             2 compact: the elements themselves, shape × element size
//!             bytes in the datatype's byte order (format version 2);
//!             3 virtual: u64 blob addr, u64 blob len (0, 0: no mappings),
//!             the mappings of format/virtual_map.rs; 4 external: u64
//!             blob addr, u64 blob len (> 0), the external file list of
//!             format/external_list.rs
//! 6 filters   the filter pipeline (format/filter_pipeline.rs): u8 n, n
//!             filters; HDF5 pipelines only over fixed-size types
//! 7 fill      u8 where (0 inline, 1 blob); inline: u32 len, bytes; blob: u64 addr, u64 len;
//!             a variable-length dataset's is the record of its fill value
//! 8 vector    the byte vector of a variable-length dataset
//!             (format/vlen_vector.rs)
//! 9 order     u64 the next creation index (groups that track creation
//!             order; their links carry their index; format version 3)
//! 10 attr order u64 the next attribute creation index (objects whose
//!             attributes are listed in creation order; their attribute
//!             records carry their index; must be understood, so a
//!             reader without it refuses the object rather than misorder)
//! 11 committed u64 the header address of the committed datatype whose
//!             type message 3 repeats (datasets made with a committed
//!             type); the dataset holds a reference to that object, counted
//!             with its hard links, so the type lives while it is used
//! 12 times    u64 created, u64 modified: seconds since 1970 (objects
//!             made with times tracked, HDF5's track_times; modified is
//!             renewed whenever the header is rewritten); readers without
//!             it carry it along
//! 13 fill time u8: 1 fill at allocation, 2 never (HDF5's H5D_FILL_TIME_ALLOC
//!             and _NEVER; absent: "if set", the default). Never: unwritten
//!             elements read as zeros, the fill value (message 7) is only
//!             recorded; readers without it carry it along
//! ```
//! Flag bit 0 marks a message a reader must understand; unknown messages
//! without it are carried along untouched, so later versions can add
//! messages without a format break. Each known message appears at most
//! once; groups hold 1 and 2, datasets 2 to 5 at least, committed
//! datatypes 2 and 3 (and 10) and nothing else.

use crate::error::{Error, Result};
use crate::format::chunk_index::MAX_CHUNK_BYTES;
use crate::format::codec::{Reader, Writer};
use crate::format::datatype::Datatype;
use crate::format::filter_pipeline::{Filter, PIPELINES};
use crate::format::page::payload;
use crate::format::shape::{self, MAX_RANK};
use crate::format::vlen_vector::VecMeta;
use crate::pager::PAGE_SIZE;
use crate::pool::lists::{EXTENTS, FILL};
use crate::pool::{PooledBuf, PooledVec};
use crate::store::{Store, BLOB_HEADER};

pub(crate) const TAG: &crate::pager::Family = b"AOH";
/// Fill values up to this size live in the header itself.
const FILL_INLINE: usize = 1024;
const MUST_UNDERSTAND: u16 = 1;

// Message types (see the layout above).
const MSG_LINKS: u16 = 1;
const MSG_ATTRS: u16 = 2;
const MSG_DATATYPE: u16 = 3;
const MSG_SHAPE: u16 = 4;
const MSG_LAYOUT: u16 = 5;
const MSG_FILTERS: u16 = 6;
const MSG_FILL: u16 = 7;
const MSG_VECTOR: u16 = 8;
const MSG_ORDER: u16 = 9;
const MSG_ATTR_ORDER: u16 = 10;
const MSG_COMMITTED: u16 = 11;
const MSG_TIMES: u16 = 12;
const MSG_FILL_TIME: u16 = 13;
/// Highest message type this version knows.
const MSG_LAST: u16 = MSG_FILL_TIME;

/// What kind of object a header describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ObjectKind {
    /// A group: named links to other objects.
    Group,
    /// A dataset: an n-dimensional array of typed elements.
    Dataset,
    /// A committed (named) datatype: a type stored as an object of its
    /// own, with a name and attributes, that datasets may be made with.
    Datatype,
}

impl ObjectKind {
    /// The header's kind byte.
    fn code(self) -> u8 {
        match self {
            ObjectKind::Group => 1,
            ObjectKind::Dataset => 2,
            ObjectKind::Datatype => 3,
        }
    }

    /// Whether a header of this kind may hold message `t` (a known one).
    fn holds(self, t: u16) -> bool {
        match t {
            MSG_LINKS | MSG_ORDER => self == ObjectKind::Group,
            MSG_ATTRS | MSG_ATTR_ORDER | MSG_TIMES => true,
            MSG_DATATYPE => self != ObjectKind::Group,
            _ => self == ObjectKind::Dataset,
        }
    }
}

/// Where a B-tree starts and how many entries it holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Index {
    pub(crate) root: u64,
    pub(crate) count: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Layout {
    Contiguous {
        addr: u64,
        size: u64,
    },
    Chunked {
        chunk: PooledVec<u64>,
        index: u64,
    },
    /// The elements, kept in the header itself.
    Compact(Vec<u8>),
    /// Elements assembled from other datasets by the mappings in the blob
    /// at `addr` (`len` bytes of data; both 0 for no mappings).
    Virtual {
        addr: u64,
        len: u64,
    },
    /// Elements kept in files outside this one, in the segments of the
    /// external file list in the blob at `addr` (`len` bytes of data).
    External {
        addr: u64,
        len: u64,
    },
}

/// When HDF5 writes a dataset's fill value into newly allocated storage
/// (its `H5Pset_fill_time`). arca never writes fill values into storage;
/// it keeps the choice so files come back to HDF5 as they were, and with
/// [`FillTime::Never`] unwritten elements read as zeros, as in HDF5.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum FillTime {
    /// When a fill value was given (HDF5's default).
    #[default]
    IfSet,
    /// Always, at allocation.
    Alloc,
    /// Never: unwritten elements are not the fill value (zeros here).
    Never,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Fill {
    Inline(Vec<u8>),
    Blob { addr: u64, len: u64 },
}

/// A dataset's header messages, decoded. Headers are decoded again by
/// every dataset call, so the per-dimension arrays and the filter list come
/// from free lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DatasetMeta {
    pub(crate) dtype: Datatype,
    pub(crate) dims: PooledVec<u64>,
    pub(crate) maxdims: PooledVec<u64>,
    pub(crate) layout: Layout,
    pub(crate) filters: PooledVec<Filter>,
    pub(crate) fill: Option<Fill>,
    /// When HDF5 would write the fill value (message 13).
    pub(crate) fill_time: FillTime,
    /// The byte vector, for variable-length types.
    pub(crate) vlen: Option<VecMeta>,
    /// A null dataspace: a type and no elements (stored compact, empty).
    pub(crate) null: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Header {
    pub(crate) kind: ObjectKind,
    pub(crate) links: Index,
    pub(crate) attrs: Index,
    /// The next creation index, for a group that tracks creation order.
    pub(crate) order: Option<u64>,
    /// The next attribute creation index, for an object whose attributes
    /// are listed in creation order.
    pub(crate) attr_order: Option<u64>,
    pub(crate) dataset: Option<DatasetMeta>,
    /// The type a committed datatype holds.
    pub(crate) named: Option<Datatype>,
    /// The committed datatype a dataset was made with (its header address).
    pub(crate) committed: Option<u64>,
    /// When the object was made and last changed, if it tracks times.
    pub(crate) times: Option<Times>,
    /// Messages this version does not know, kept verbatim.
    pub(crate) other: Vec<(u16, u16, Vec<u8>)>,
}

/// An object's times, in seconds since 1970 (HDF5's creation and
/// modification times, kept when times are tracked).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Times {
    /// When the object was made.
    pub created: u64,
    /// When its header last changed.
    pub modified: u64,
}

impl Times {
    /// Both times now.
    pub(crate) fn now() -> Times {
        let t = now_secs();
        Times {
            created: t,
            modified: t,
        }
    }
}

/// Seconds since 1970 by the system clock (0 for a clock set before it).
fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The creation index after `this` (of a `what`: link or attribute) in the
/// object at `addr`. An index at its maximum can come only from a damaged or
/// crafted file; wrapping would repeat index 0, so it is refused.
pub(crate) fn next_index(this: u64, addr: u64, what: &str) -> Result<u64> {
    this.checked_add(1).ok_or_else(|| {
        Error::corrupt(
            "object header",
            addr,
            format!("the next {what} creation index is {this}, the largest there is"),
        )
    })
}

impl Header {
    pub(crate) fn group() -> Self {
        Header {
            kind: ObjectKind::Group,
            links: Index::default(),
            attrs: Index::default(),
            order: None,
            attr_order: None,
            dataset: None,
            named: None,
            committed: None,
            times: None,
            other: vec![],
        }
    }

    /// The header of a committed datatype holding `dtype`.
    pub(crate) fn datatype(dtype: Datatype) -> Self {
        Header {
            kind: ObjectKind::Datatype,
            named: Some(dtype),
            ..Header::group()
        }
    }

    pub(crate) fn dataset(meta: DatasetMeta) -> Self {
        Header {
            kind: ObjectKind::Dataset,
            dataset: Some(meta),
            ..Header::group()
        }
    }

    pub(crate) fn load(st: &mut Store, addr: u64) -> Result<Header> {
        let page = st.pager.read(addr, TAG)?;
        st.check_live("object header", addr, page.len() as u64)?;
        let (h, used) = Self::decode_used(payload(&page), addr, st.space.eof())?;
        // A header never changes size after creation and takes the
        // smallest page that holds it (`create`; 512 bytes and up in
        // version 1): a size byte claiming more would have a rewrite cover
        // its neighbours.
        if !crate::format::page::size_holds(&page, page.len(), used) {
            return Err(Error::corrupt(
                "object header",
                addr,
                format!(
                    "its page claims {} bytes, more than its {used} bytes of messages take: the page would take in its neighbour's space",
                    page.len()
                ),
            ));
        }
        Ok(h)
    }

    /// Rewrite an existing header in place (its size never changes after
    /// creation, so it fits its page).
    pub(crate) fn save(&self, st: &mut Store, addr: u64) -> Result<()> {
        // A rewrite is a change: an object that tracks times records it.
        let times = self.times.map(|t| Times {
            modified: now_secs().max(t.created),
            ..t
        });
        let enc = self.encode_with(times);
        st.pager.write(addr, TAG, &enc)
    }

    /// Rewrite an existing header with its times as they are (copies that
    /// keep an object's times).
    pub(crate) fn save_exact(&self, st: &mut Store, addr: u64) -> Result<()> {
        st.pager.write(addr, TAG, &self.encode())
    }

    /// Write a new header in the smallest page that holds it.
    pub(crate) fn create(&self, st: &mut Store) -> Result<u64> {
        let enc = self.encode();
        let size = crate::pager::size_for(enc.len()).ok_or_else(|| {
            Error::invalid(format!(
                "object header of {} bytes does not fit a {}-byte page",
                enc.len(),
                crate::pager::PAGE_SIZE
            ))
        })?;
        let addr = st.alloc_page(size)?;
        st.pager.write_new(addr, TAG, size, &enc)?;
        Ok(addr)
    }

    fn encode(&self) -> Vec<u8> {
        self.encode_with(self.times)
    }

    fn encode_with(&self, times: Option<Times>) -> Vec<u8> {
        let mut msgs: Vec<(u16, u16, Vec<u8>)> = vec![];
        if let Some(t) = times {
            let mut w = Writer::new();
            w.u64(t.created).u64(t.modified);
            msgs.push((MSG_TIMES, 0, w.buf));
        }
        let index = |i: &Index| {
            let mut w = Writer::new();
            w.u64(i.root).u64(i.count);
            w.buf
        };
        if self.kind == ObjectKind::Group {
            msgs.push((MSG_LINKS, MUST_UNDERSTAND, index(&self.links)));
            if let Some(next) = self.order {
                let mut w = Writer::new();
                w.u64(next);
                msgs.push((MSG_ORDER, MUST_UNDERSTAND, w.buf));
            }
        }
        msgs.push((MSG_ATTRS, MUST_UNDERSTAND, index(&self.attrs)));
        if let Some(next) = self.attr_order {
            let mut w = Writer::new();
            w.u64(next);
            msgs.push((MSG_ATTR_ORDER, MUST_UNDERSTAND, w.buf));
        }
        if let Some(t) = &self.named {
            let mut w = Writer::new();
            t.encode(&mut w);
            msgs.push((MSG_DATATYPE, MUST_UNDERSTAND, w.buf));
        }
        if let Some(d) = &self.dataset {
            let mut w = Writer::new();
            d.dtype.encode(&mut w);
            msgs.push((MSG_DATATYPE, MUST_UNDERSTAND, w.buf));
            if let Some(t) = self.committed {
                let mut w = Writer::new();
                w.u64(t);
                msgs.push((MSG_COMMITTED, MUST_UNDERSTAND, w.buf));
            }
            let mut w = Writer::new();
            shape::encode_with_max(&mut w, d.null, &d.dims, &d.maxdims);
            msgs.push((MSG_SHAPE, MUST_UNDERSTAND, w.buf));
            let mut w = Writer::new();
            match &d.layout {
                Layout::Contiguous { addr, size } => {
                    w.u8(0).u64(*addr).u64(*size);
                }
                Layout::Chunked { chunk, index } => {
                    w.u8(1);
                    chunk.iter().for_each(|&c| {
                        w.u64(c);
                    });
                    w.u64(*index);
                }
                Layout::Compact(data) => {
                    w.u8(2).bytes(data);
                }
                Layout::Virtual { addr, len } => {
                    w.u8(3).u64(*addr).u64(*len);
                }
                Layout::External { addr, len } => {
                    w.u8(4).u64(*addr).u64(*len);
                }
            }
            msgs.push((MSG_LAYOUT, MUST_UNDERSTAND, w.buf));
            if !d.filters.is_empty() {
                let mut w = Writer::new();
                Filter::encode_list(&d.filters, &mut w);
                msgs.push((MSG_FILTERS, MUST_UNDERSTAND, w.buf));
            }
            if let Some(fill) = &d.fill {
                let mut w = Writer::new();
                match fill {
                    Fill::Inline(b) => {
                        w.u8(0).u32(b.len() as u32).bytes(b);
                    }
                    Fill::Blob { addr, len } => {
                        w.u8(1).u64(*addr).u64(*len);
                    }
                }
                msgs.push((MSG_FILL, MUST_UNDERSTAND, w.buf));
            }
            let time = match d.fill_time {
                FillTime::IfSet => None,
                FillTime::Alloc => Some(1),
                FillTime::Never => Some(2),
            };
            if let Some(code) = time {
                let mut w = Writer::new();
                w.u8(code);
                msgs.push((MSG_FILL_TIME, 0, w.buf));
            }
            if let Some(v) = &d.vlen {
                msgs.push((MSG_VECTOR, MUST_UNDERSTAND, v.encode()));
            }
        }
        msgs.extend(self.other.iter().cloned());
        let mut w = Writer::new();
        w.u8(self.kind.code()).u8(0).u16(msgs.len() as u16);
        for (t, f, body) in msgs {
            w.u16(t).u16(f).u32(body.len() as u32).bytes(&body);
        }
        w.buf
    }

    /// Decode the payload of the header page at `addr` in a file of `eof`
    /// bytes, checking every message against the others and the file.
    /// Decode a header's page payload, with the payload bytes its messages take; the
    /// rest of the page must be the zeros its writer left.
    fn decode_used(payload: &[u8], addr: u64, eof: u64) -> Result<(Header, usize)> {
        let what = "object header";
        let mut r = Reader::new(payload, what, addr);
        let h = Self::decode_from(&mut r, addr, eof)?;
        let used = payload.len() - r.remaining();
        crate::format::btree::check_room_is_empty(&mut r, payload.len() + 8)?;
        Ok((h, used))
    }

    #[cfg(test)]
    fn decode(payload: &[u8], addr: u64, eof: u64) -> Result<Header> {
        Self::decode_used(payload, addr, eof).map(|(h, _)| h)
    }

    fn decode_from(r: &mut Reader, addr: u64, eof: u64) -> Result<Header> {
        let what = "object header";
        let kind = match r.u8()? {
            1 => ObjectKind::Group,
            2 => ObjectKind::Dataset,
            3 => ObjectKind::Datatype,
            k => return Err(r.corrupt(format!("object kind {k}"))),
        };
        r.u8()?;
        let n = r.u16()?;
        let mut h = Header {
            kind,
            ..Header::group()
        };
        let mut dtype = None;
        let mut dims_max = None;
        let mut layout = None;
        let mut filters = PIPELINES.take(0);
        let mut fill = None;
        let mut fill_time = FillTime::IfSet;
        let mut vlen_body = None;
        let mut null = false;
        let mut seen = 0u32;
        let in_file = |a: u64| a == 0 || (a >= PAGE_SIZE as u64 && a < eof && a != addr);
        for _ in 0..n {
            let t = r.u16()?;
            let flags = r.u16()?;
            let len = r.u32()? as usize;
            let body = r.bytes(len)?;
            let known = (MSG_LINKS..=MSG_LAST).contains(&t);
            if known {
                if seen & (1 << t) != 0 {
                    return Err(r.corrupt(format!("message {t} appears twice")));
                }
                seen |= 1 << t;
                if !kind.holds(t) {
                    return Err(r.corrupt(format!("message {t} in a {kind:?} header")));
                }
            }
            let mut m = Reader::new(body, what, addr);
            match t {
                MSG_LINKS | MSG_ATTRS => {
                    let i = Index {
                        root: m.u64()?,
                        count: m.u64()?,
                    };
                    let plausible = if i.root == 0 {
                        i.count == 0
                    } else {
                        in_file(i.root) && i.count > 0 && i.count <= eof
                    };
                    if !plausible {
                        return Err(m.corrupt(format!(
                            "index at {} with {} entries does not fit the file",
                            i.root, i.count
                        )));
                    }
                    if t == MSG_LINKS {
                        h.links = i
                    } else {
                        h.attrs = i
                    }
                }
                MSG_DATATYPE => dtype = Some(Datatype::decode(&mut m)?),
                MSG_SHAPE => {
                    let (space, maxdims) = shape::decode_with_max::<PooledVec<u64>>(&mut m)?;
                    null = space.null;
                    dims_max = Some((space.dims, maxdims));
                }
                MSG_LAYOUT => {
                    layout = Some(match m.u8()? {
                        0 => Layout::Contiguous {
                            addr: m.u64()?,
                            size: m.u64()?,
                        },
                        1 => {
                            // The rank is the shape's, checked below.
                            let k = m.remaining() / 8;
                            if k == 0 || k > MAX_RANK + 1 {
                                return Err(m.corrupt("chunked layout of no dimensions"));
                            }
                            let mut chunk = EXTENTS.take(k - 1);
                            for _ in 0..k - 1 {
                                chunk.push(m.u64()?);
                            }
                            Layout::Chunked {
                                chunk,
                                index: m.u64()?,
                            }
                        }
                        // Its length is checked against the shape below.
                        2 => Layout::Compact(m.bytes(m.remaining())?.to_vec()),
                        3 => Layout::Virtual {
                            addr: m.u64()?,
                            len: m.u64()?,
                        },
                        4 => Layout::External {
                            addr: m.u64()?,
                            len: m.u64()?,
                        },
                        c => return Err(m.corrupt(format!("layout class {c}"))),
                    })
                }
                MSG_FILTERS => {
                    filters.clear();
                    Filter::decode_list_into(&mut m, &mut filters)?;
                }
                MSG_FILL => {
                    fill = Some(match m.u8()? {
                        0 => {
                            let n = m.u32()? as usize;
                            Fill::Inline(m.bytes(n)?.to_vec())
                        }
                        1 => Fill::Blob {
                            addr: m.u64()?,
                            len: m.u64()?,
                        },
                        w => return Err(m.corrupt(format!("fill storage {w}"))),
                    })
                }
                MSG_FILL_TIME => {
                    fill_time = match m.u8()? {
                        1 => FillTime::Alloc,
                        2 => FillTime::Never,
                        c => return Err(m.corrupt(format!("fill time {c}"))),
                    }
                }
                MSG_VECTOR => {
                    vlen_body = Some(body);
                    m.bytes(m.remaining())?;
                }
                MSG_ORDER => {
                    h.order = Some(m.u64()?);
                }
                MSG_ATTR_ORDER => {
                    h.attr_order = Some(m.u64()?);
                }
                MSG_TIMES => {
                    h.times = Some(Times {
                        created: m.u64()?,
                        modified: m.u64()?,
                    });
                }
                MSG_COMMITTED => {
                    let t = m.u64()?;
                    if t < PAGE_SIZE as u64 || t >= eof || t == addr {
                        return Err(m.corrupt(format!(
                            "committed datatype at {t}, outside the file or the dataset itself"
                        )));
                    }
                    h.committed = Some(t);
                }
                _ if flags & MUST_UNDERSTAND != 0 => {
                    return Err(Error::Unsupported(format!(
                        "object header at {addr} has message type {t} this version does not know"
                    )))
                }
                _ => h.other.push((t, flags, body.to_vec())),
            }
            if known && m.remaining() != 0 {
                return Err(m.corrupt(format!("message {t} has {} bytes left over", m.remaining())));
            }
        }
        let required = match kind {
            ObjectKind::Group => (1 << MSG_LINKS) | (1 << MSG_ATTRS),
            ObjectKind::Dataset => {
                (1 << MSG_ATTRS) | (1 << MSG_DATATYPE) | (1 << MSG_SHAPE) | (1 << MSG_LAYOUT)
            }
            ObjectKind::Datatype => (1 << MSG_ATTRS) | (1 << MSG_DATATYPE),
        };
        if seen & required != required {
            return Err(r.corrupt(format!("{kind:?} header lacks a required message")));
        }
        if kind == ObjectKind::Datatype {
            h.named = dtype.take();
        }
        if kind == ObjectKind::Dataset {
            let (Some(dtype), Some((dims, maxdims)), Some(layout)) = (dtype, dims_max, layout)
            else {
                return Err(r.corrupt("dataset header lacks type, shape or layout"));
            };
            let vitem = dtype.vector_item();
            let meta = DatasetMeta {
                dtype,
                dims,
                maxdims,
                layout,
                filters,
                fill,
                fill_time,
                vlen: None,
                null,
            };
            let vlen = match (vitem, vlen_body) {
                (Some(item), Some(body)) => Some(VecMeta::decode(body, addr, item, eof)?),
                (None, None) => None,
                _ => {
                    return Err(
                        r.corrupt("a byte vector without a variable-length type, or the reverse")
                    )
                }
            };
            let meta = DatasetMeta { vlen, ..meta };
            meta.check(addr, eof).map_err(|d| r.corrupt(d))?;
            h.dataset = Some(meta);
        }
        Ok(h)
    }
}

impl DatasetMeta {
    /// Check the dataset's messages against each other and the file.
    fn check(&self, addr: u64, eof: u64) -> std::result::Result<(), String> {
        let elem = self.dtype.size() as u64;
        let bytes = self
            .dims
            .iter()
            .try_fold(elem, |a, &d| a.checked_mul(d))
            .ok_or("the dataset's size overflows")?;
        if self.null {
            // No elements: kept compact and empty, with nothing beside.
            let empty = matches!(&self.layout, Layout::Compact(d) if d.is_empty());
            if !empty || self.vlen.is_some() || !self.filters.is_empty() {
                return Err("a null dataspace with storage".into());
            }
            return Ok(());
        }
        if Filter::is_hdf5(&self.filters)
            && self.vlen.is_some()
            && !self
                .filters
                .iter()
                .all(|f| matches!(f, Filter::Hdf5(h) if h.codes_any_bytes()))
        {
            return Err(
                "HDF5 filters that read an element type over a byte vector's records".into(),
            );
        }
        let in_file =
            |a: u64, n: u64| a >= PAGE_SIZE as u64 && a.checked_add(n).is_some_and(|e| e <= eof);
        match &self.layout {
            Layout::Contiguous { addr: a, size } => {
                if *size != bytes {
                    return Err(format!(
                        "contiguous storage of {size} bytes for {bytes} bytes of elements"
                    ));
                }
                if *a != 0 && !in_file(*a, *size) {
                    return Err(format!("contiguous storage at {a} lies outside the file"));
                }
                if self.dims != self.maxdims {
                    return Err("a contiguous dataset cannot be resizable".into());
                }
                if !self.filters.is_empty() {
                    return Err("a contiguous dataset has filters".into());
                }
            }
            Layout::Chunked { chunk, index } => {
                if chunk.len() != self.dims.len() || chunk.is_empty() {
                    return Err(format!(
                        "chunk rank {} for a dataset of rank {}",
                        chunk.len(),
                        self.dims.len()
                    ));
                }
                let cb = chunk.iter().try_fold(elem, |a, &c| a.checked_mul(c));
                if chunk.contains(&0) || cb.is_none_or(|b| b > MAX_CHUNK_BYTES) {
                    return Err(format!(
                        "chunk shape {:?} of {elem}-byte elements",
                        &chunk[..]
                    ));
                }
                if *index != 0 && (*index == addr || !in_file(*index, 1)) {
                    return Err(format!("chunk index at {index} lies outside the file"));
                }
            }
            Layout::Virtual { addr: a, len } => {
                if (*a == 0) != (*len == 0) {
                    return Err(format!("virtual mappings at {a} of {len} bytes"));
                }
                if *a != 0 && !len.checked_add(BLOB_HEADER).is_some_and(|l| in_file(*a, l)) {
                    return Err(format!("virtual mappings at {a} lie outside the file"));
                }
                if !self.filters.is_empty() || self.vlen.is_some() {
                    return Err("a virtual dataset has filters or a byte vector".into());
                }
            }
            Layout::External { addr: a, len } => {
                if *len == 0 || !len.checked_add(BLOB_HEADER).is_some_and(|l| in_file(*a, l)) {
                    return Err(format!(
                        "an external file list at {a} of {len} bytes outside the file"
                    ));
                }
                if self
                    .dims
                    .iter()
                    .zip(&self.maxdims)
                    .skip(1)
                    .any(|(d, m)| d != m)
                {
                    return Err("an external dataset growing beyond its first dimension".into());
                }
                if !self.filters.is_empty() || self.vlen.is_some() {
                    return Err("an external dataset has filters or a byte vector".into());
                }
            }
            Layout::Compact(data) => {
                if data.len() as u64 != bytes {
                    return Err(format!(
                        "compact storage of {} bytes for {bytes} bytes of elements",
                        data.len()
                    ));
                }
                if self.dims != self.maxdims {
                    return Err("a compact dataset cannot be resizable".into());
                }
                if !self.filters.is_empty() || self.vlen.is_some() {
                    return Err("a compact dataset has filters or a byte vector".into());
                }
            }
        }
        match &self.fill {
            // A variable-length element's fill is its record (pointing at
            // the fill value's items in the vector); a compound with such
            // members has none.
            Some(_)
                if self.vlen.is_some() && (!self.dtype.is_vlen() || self.dtype.nests_vlen()) =>
            {
                return Err("a compound with variable-length members has a fill value".into())
            }
            Some(Fill::Inline(b)) if b.len() as u64 != elem => {
                return Err(format!(
                    "fill value of {} bytes for {elem}-byte elements",
                    b.len()
                ))
            }
            Some(Fill::Blob { addr: a, len }) if *len != elem || !in_file(*a, *len) => {
                return Err(format!("fill value blob at {a} of {len} bytes"))
            }
            _ => {}
        }
        Ok(())
    }

    /// What unwritten elements read as (file byte order): the fill value,
    /// or zeros where there is none or it is never written.
    pub(crate) fn read_fill_bytes(&self, st: &Store) -> Result<PooledBuf> {
        if self.fill_time == FillTime::Never {
            return Ok(FILL.take_zeroed(self.dtype.size()));
        }
        self.fill_bytes(st)
    }

    /// The fill value bytes (file byte order), or zeros.
    pub(crate) fn fill_bytes(&self, st: &Store) -> Result<PooledBuf> {
        let size = self.dtype.size();
        let bytes = match &self.fill {
            None => return Ok(FILL.take_zeroed(size)),
            Some(Fill::Inline(b)) => FILL.take_copy(b),
            Some(Fill::Blob { addr, .. }) => FILL.adopt(st.read_blob(*addr)?),
        };
        if bytes.len() != size {
            return Err(Error::corrupt(
                "fill value",
                0,
                "size does not match the datatype",
            ));
        }
        Ok(bytes)
    }

    pub(crate) fn make_fill(st: &mut Store, bytes: Option<Vec<u8>>) -> Result<Option<Fill>> {
        Ok(match bytes {
            None => None,
            Some(b) if b.len() <= FILL_INLINE => Some(Fill::Inline(b)),
            Some(b) => Some(Fill::Blob {
                addr: st.write_blob(&b)?,
                len: b.len() as u64,
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const AT: u64 = 8192;
    const EOF: u64 = 1 << 20;

    fn chunked() -> Header {
        let mut h = Header::dataset(DatasetMeta {
            dtype: Datatype::float(4),
            dims: EXTENTS.take_copy(&[10, 20]),
            maxdims: EXTENTS.take_copy(&[u64::MAX, 20]),
            layout: Layout::Chunked {
                chunk: EXTENTS.take_copy(&[5, 5]),
                index: 12288,
            },
            filters: PIPELINES.take_copy(&[Filter::Shuffle, Filter::Zstd(3)]),
            fill: Some(Fill::Inline(vec![0, 0, 128, 63])),
            fill_time: FillTime::Never,
            vlen: None,
            null: false,
        });
        h.attrs = Index {
            root: 16384,
            count: 2,
        };
        h.attr_order = Some(2);
        h
    }

    /// A header payload of `kind` holding `msgs` as given.
    fn header_bytes(kind: u8, msgs: &[(u16, u16, Vec<u8>)]) -> Vec<u8> {
        let mut w = Writer::new();
        w.u8(kind).u8(0).u16(msgs.len() as u16);
        for (t, f, body) in msgs {
            w.u16(*t).u16(*f).u32(body.len() as u32).bytes(body);
        }
        w.buf
    }

    #[test]
    fn headers_round_trip() {
        let mut g = Header::group();
        g.links = Index {
            root: 16384,
            count: 3,
        };
        g.order = Some(3);
        g.other.push((200, 0, vec![1, 2, 3]));
        let mut used = chunked();
        used.committed = Some(20480);
        let mut named = Header::datatype(Datatype::float(8));
        named.attr_order = Some(0);
        for h in [Header::group(), g, chunked(), used, named] {
            assert_eq!(Header::decode(&h.encode(), AT, EOF).unwrap(), h);
        }
    }

    #[test]
    fn committed_types_are_checked() {
        let corrupt = |b: Vec<u8>| {
            let e = Header::decode(&b, AT, EOF).unwrap_err();
            assert!(matches!(e, Error::Corrupt { .. }), "{e}");
        };
        let index = vec![0u8; 16];
        let mut w = Writer::new();
        Datatype::int(2).encode(&mut w);
        let dtype = w.buf;
        // A type object without its type, or holding a dataset's layout.
        corrupt(header_bytes(3, &[(MSG_ATTRS, 1, index.clone())]));
        corrupt(header_bytes(
            3,
            &[
                (MSG_ATTRS, 1, index.clone()),
                (MSG_DATATYPE, 1, dtype.clone()),
                (MSG_LAYOUT, 1, vec![0; 17]),
            ],
        ));
        // A group that names a committed type, a dataset whose type is
        // itself or outside the file.
        corrupt(header_bytes(
            1,
            &[
                (MSG_LINKS, 1, index.clone()),
                (MSG_ATTRS, 1, index.clone()),
                (MSG_COMMITTED, 1, 8192u64.to_le_bytes().to_vec()),
            ],
        ));
        for bad in [AT, EOF, 0] {
            let mut h = chunked();
            h.committed = Some(bad);
            corrupt(h.encode());
        }
    }

    #[test]
    fn damaged_headers_are_refused() {
        let index = vec![0u8; 16];
        let group = |extra: (u16, u16, Vec<u8>)| {
            header_bytes(
                1,
                &[
                    (MSG_LINKS, MUST_UNDERSTAND, index.clone()),
                    (MSG_ATTRS, MUST_UNDERSTAND, index.clone()),
                    extra,
                ],
            )
        };
        let corrupt = |b: Vec<u8>| {
            let e = Header::decode(&b, AT, EOF).unwrap_err();
            assert!(matches!(e, Error::Corrupt { .. }), "{e}");
            e.to_string()
        };
        assert!(corrupt(group((MSG_ATTRS, MUST_UNDERSTAND, index.clone()))).contains("twice"));
        assert!(corrupt(group((MSG_FILL, MUST_UNDERSTAND, vec![0, 0, 0, 0, 0]))).contains("Group"));
        let e = Header::decode(&group((99, MUST_UNDERSTAND, vec![])), AT, EOF).unwrap_err();
        assert!(matches!(e, Error::Unsupported(_)), "{e}");
        // An unknown message a reader may skip is kept.
        assert!(Header::decode(&group((99, 0, vec![7])), AT, EOF).is_ok());
        // A known message with bytes left over, and one cut short.
        let mut long = index.clone();
        long.push(0);
        let b = header_bytes(1, &[(MSG_LINKS, 1, index.clone()), (MSG_ATTRS, 1, long)]);
        assert!(corrupt(b).contains("left over"));
        let b = header_bytes(
            1,
            &[(MSG_LINKS, 1, index.clone()), (MSG_ATTRS, 1, vec![0; 8])],
        );
        corrupt(b);
        // A group without its links, an object of an unknown kind.
        corrupt(header_bytes(1, &[(MSG_ATTRS, 1, index.clone())]));
        corrupt(header_bytes(3, &[]));
        // A chunk index inside the header itself, a fill of the wrong size.
        let mut h = chunked();
        let meta = h.dataset.as_mut().unwrap();
        meta.layout = Layout::Chunked {
            chunk: EXTENTS.take_copy(&[5, 5]),
            index: AT,
        };
        corrupt(h.encode());
        let mut h = chunked();
        h.dataset.as_mut().unwrap().fill = Some(Fill::Inline(vec![0; 3]));
        corrupt(h.encode());
    }
}
