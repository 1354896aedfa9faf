//! Attribute records: the values stored in an object's attribute B-tree,
//! keyed by attribute name.
//!
//! The fields follow one another; the first two vary in length, so the
//! offsets below are from the start of the storage byte:
//! ```text
//!     datatype   its encoding (format/datatype/codec.rs): 8 bytes, more
//!                for the classes that go on
//!     dataspace  u8 rank, rank × u64 dims (format/shape.rs); rank 0 is a
//!                scalar, 0xFF a null dataspace: no dims and an empty
//!                inline value (format version 3)
//! +0  u8         storage: 0 inline, 1 blob
//!     inline:    +1 u32 len, +5 len bytes of elements in the datatype's
//!                byte order
//!     blob:      +1 u64 addr, +9 u64 len (a blob in metadata space)
//! [.. u64        creation index, exactly when the owner lists its
//!                attributes in creation order (header message 10)]
//! ```
//! A value of a variable-length type is `n × u64` byte lengths and then
//! the concatenated items (format/vlen_attr.rs); a value of a compound with
//! variable-length members is in the rows form (format/rows.rs).

use crate::error::Result;
use crate::format::codec::{Reader, Writer};
use crate::format::datatype::Datatype;
use crate::format::shape::{self, Dataspace};
use crate::space::{Section, SpaceKind};
use crate::store::{Store, BLOB_HEADER};

/// Values up to this many bytes are kept inside the B-tree entry.
const INLINE_MAX: usize = 256;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AttrRecord {
    pub(crate) dtype: Datatype,
    pub(crate) shape: Vec<u64>,
    /// Where the element bytes are.
    pub(crate) data: AttrData,
    /// A null dataspace: no elements (and no bytes).
    pub(crate) null: bool,
    /// Creation index, when the owner lists attributes in creation order.
    pub(crate) order: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum AttrData {
    Inline(Vec<u8>),
    Blob { addr: u64, len: u64 },
}

impl AttrRecord {
    /// Build a record, moving large values out to a blob.
    pub(crate) fn new(
        st: &mut Store,
        dtype: Datatype,
        shape: Vec<u64>,
        bytes: Vec<u8>,
    ) -> Result<Self> {
        let data = if bytes.len() <= INLINE_MAX {
            AttrData::Inline(bytes)
        } else {
            AttrData::Blob {
                addr: st.write_blob(&bytes)?,
                len: bytes.len() as u64,
            }
        };
        Ok(AttrRecord {
            dtype,
            shape,
            data,
            null: false,
            order: None,
        })
    }

    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut w = Writer::new();
        self.dtype.encode(&mut w);
        shape::encode(&mut w, self.null, &self.shape);
        match &self.data {
            AttrData::Inline(b) => {
                w.u8(0).u32(b.len() as u32).bytes(b);
            }
            AttrData::Blob { addr, len } => {
                w.u8(1).u64(*addr).u64(*len);
            }
        }
        if let Some(i) = self.order {
            w.u64(i);
        }
        w.buf
    }

    /// Decode the record of an attribute of the object at `owner`, in a
    /// file of `eof` bytes; `ordered` when the owner lists its attributes
    /// in creation order (its records, and only they, carry an index).
    pub(crate) fn decode(bytes: &[u8], owner: u64, eof: u64, ordered: bool) -> Result<Self> {
        let mut r = Reader::new(bytes, "attribute record", owner);
        let dtype = Datatype::decode(&mut r)?;
        let space: Dataspace<Vec<u64>> = shape::decode(&mut r)?;
        let null = space.null;
        let data = match r.u8()? {
            0 => {
                let n = r.u32()? as usize;
                AttrData::Inline(r.bytes(n)?.to_vec())
            }
            1 => AttrData::Blob {
                addr: r.u64()?,
                len: r.u64()?,
            },
            s => return Err(r.corrupt(format!("storage {s}"))),
        };
        let order = if ordered { Some(r.u64()?) } else { None };
        if r.remaining() != 0 {
            return Err(r.corrupt(if ordered {
                "bytes after the creation index"
            } else {
                "bytes after the value"
            }));
        }
        if let AttrData::Blob { addr, len } = data {
            let end = crate::store::blob_extent(len)
                .ok()
                .and_then(|n| addr.checked_add(n));
            if addr < crate::pager::PAGE_SIZE as u64 || end.is_none_or(|e| e > eof) {
                return Err(r.corrupt(format!(
                    "value blob at {addr} of {len} bytes lies outside the file"
                )));
            }
        }
        let elem = dtype.size() as u64;
        if null && !matches!(&data, AttrData::Inline(b) if b.is_empty()) {
            return Err(r.corrupt("a null dataspace with a value"));
        }
        let rec = AttrRecord {
            dtype,
            shape: space.dims,
            data,
            null,
            order,
        };
        let want = rec.shape.iter().try_fold(elem, |a, &d| a.checked_mul(d));
        let have = match &rec.data {
            AttrData::Inline(b) => b.len() as u64,
            AttrData::Blob { len, .. } => *len,
        };
        // Variable-length values are n lengths (8 bytes each) and their
        // items; the lengths are checked when the value is read.
        let fits = if rec.null {
            true
        } else if rec.dtype.is_vlen() {
            want.is_some_and(|w| have >= w / 2 && have <= crate::format::blob::MAX_LEN)
        } else if rec.dtype.has_vlen() {
            // Elements with records in their slots, then the values.
            want.is_some_and(|w| have >= w && have <= crate::format::blob::MAX_LEN)
        } else {
            want == Some(have)
        };
        if !fits {
            return Err(r.corrupt("value size does not match type and shape"));
        }
        Ok(rec)
    }

    /// The element bytes, in the datatype's byte order.
    pub(crate) fn bytes(&self, st: &Store) -> Result<Vec<u8>> {
        match &self.data {
            AttrData::Inline(b) => Ok(b.clone()),
            AttrData::Blob { addr, len } => {
                let b = st.read_blob(*addr)?;
                if b.len() as u64 != *len {
                    return Err(crate::Error::corrupt(
                        "attribute value",
                        *addr,
                        "length mismatch",
                    ));
                }
                Ok(b)
            }
        }
    }

    /// Release the blob, if the value has one.
    pub(crate) fn free(&self, st: &mut Store) -> Result<()> {
        if let AttrData::Blob { addr, len } = self.data {
            st.free_blob(addr, len)?;
        }
        Ok(())
    }

    /// The value's blob as an extent, if it has one.
    pub(crate) fn extent(&self) -> Option<Section> {
        match self.data {
            AttrData::Blob { addr, len } => Some(Section {
                addr,
                size: BLOB_HEADER + len,
                kind: SpaceKind::Meta,
            }),
            AttrData::Inline(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::shape::MAX_RANK;

    const OWNER: u64 = 8192;
    const EOF: u64 = 1 << 20;

    fn rec(shape: Vec<u64>, data: AttrData) -> AttrRecord {
        AttrRecord {
            dtype: Datatype::uint(2),
            shape,
            data,
            null: false,
            order: None,
        }
    }

    #[test]
    fn records_round_trip() {
        let inline = rec(vec![2, 3], AttrData::Inline(vec![1; 12]));
        let blob = rec(
            vec![1000],
            AttrData::Blob {
                addr: 16384,
                len: 2000,
            },
        );
        let scalar = rec(vec![], AttrData::Inline(vec![5, 0]));
        let null = AttrRecord {
            null: true,
            ..rec(vec![], AttrData::Inline(vec![]))
        };
        for r in [inline, blob, scalar, null] {
            assert_eq!(
                AttrRecord::decode(&r.encode(), OWNER, EOF, false).unwrap(),
                r
            );
            let ordered = AttrRecord {
                order: Some(4),
                ..r.clone()
            };
            let b = ordered.encode();
            assert_eq!(AttrRecord::decode(&b, OWNER, EOF, true).unwrap(), ordered);
            // The index is there exactly when the owner orders its attributes.
            assert!(AttrRecord::decode(&b, OWNER, EOF, false).is_err());
            assert!(AttrRecord::decode(&r.encode(), OWNER, EOF, true).is_err());
        }
    }

    #[test]
    fn damaged_records_are_refused() {
        let bad = |r: AttrRecord| {
            let e = AttrRecord::decode(&r.encode(), OWNER, EOF, false).unwrap_err();
            assert!(matches!(e, crate::Error::Corrupt { .. }), "{e}");
        };
        // A value that does not fill the shape.
        bad(rec(vec![2, 3], AttrData::Inline(vec![1; 11])));
        // A blob outside the file, or in the superblock's page.
        bad(rec(
            vec![1000],
            AttrData::Blob {
                addr: EOF,
                len: 2000,
            },
        ));
        bad(rec(vec![1000], AttrData::Blob { addr: 0, len: 2000 }));
        // A null dataspace with a value.
        bad(AttrRecord {
            null: true,
            ..rec(vec![], AttrData::Inline(vec![1, 2]))
        });
        // A rank above the limit.
        bad(rec(vec![1; MAX_RANK + 1], AttrData::Inline(vec![0; 2])));
        // Storage of an unknown kind, bytes after the value, a cut record.
        let mut b = rec(vec![], AttrData::Inline(vec![5, 0])).encode();
        b.push(0);
        assert!(AttrRecord::decode(&b, OWNER, EOF, false).is_err());
        assert!(AttrRecord::decode(&b[..b.len() - 2], OWNER, EOF, false).is_err());
        let mut b = rec(vec![], AttrData::Inline(vec![5, 0])).encode();
        // The datatype's 8 bytes and the rank byte come first.
        assert_eq!(b[9], 0);
        b[9] = 2;
        let e = AttrRecord::decode(&b, OWNER, EOF, false).unwrap_err();
        assert!(e.to_string().contains("storage 2"), "{e}");
    }
}
