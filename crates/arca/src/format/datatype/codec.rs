//! The on-disk encoding of a [`Datatype`].
//!
//! Every type starts with 8 bytes:
//! ```text
//! +0 u8  class   0 bool, 1 signed int, 2 unsigned int, 3 float, 4 fixed byte
//!                string, 5 variable-length, 6 complex, 7 opaque, 8 enum,
//!                9 array, 10 compound, 11 object reference, 12 bitfield,
//!                13 time
//! +1 u8  order   0 little-endian, 1 big-endian (0 for classes without one)
//! +2 u16 kind    class 5: see below; class 4: padding (low byte: 0 NUL-
//!                padded, 1 NUL-terminated, 2 space-padded), bit 8 UTF-8;
//!                else 0
//! +4 u32 size    bytes per element
//! ```
//! and some classes go on (all integers little-endian):
//! ```text
//! 5  variable-length  kind: 0 byte string, 1 UTF-8 string, 2 sequence of the
//!                     base type, 3 region reference (its bytes: a dataset
//!                     and a selection, format/region.rs); size 16 (the
//!                     element's (offset, length) record); the base type
//!                     follows (|u1 for kinds 0, 1 and 3)
//! 6  complex          size 4, 8 or 16: real then imaginary part, each a float
//! 7  opaque           u16 tag length, the tag (UTF-8)
//! 8  enum             the integer base type, u32 member count, then per
//!                     member: u16 name length, name (UTF-8), u64 value
//!                     (two's complement for signed bases)
//! 9  array            u8 rank (1..=32), rank × u32 extents, the base type
//! 10 compound         u32 member count, then per member: u16 name length,
//!                     name (UTF-8), u32 byte offset, the member's type
//! 11 reference        size 8: a u64 little-endian object header address
//!                     (0 = null); a variable-length sequence may hold them
//! 12 bitfield         size 1, 2, 4 or 8: bits, laid out as an unsigned
//!                     integer of that size and order
//! 13 time             size 4 or 8: an HDF5 time, kept as written
//! ```
//! A decoded type is checked as a whole: sizes agree with extents and
//! members, members lie inside the element and do not overlap, names are
//! unique, enum values fit their base, and nesting is at most
//! [`MAX_TYPE_DEPTH`] deep (see `check`).

use super::{
    ArrayType, ByteOrder, Charset, CompoundType, Datatype, EnumType, Field, StrPad, MAX_MEMBERS,
    MAX_TYPE_DEPTH, VLEN_RECORD,
};
use crate::error::{Error, Result};
use crate::format::codec::{Reader, Writer};

impl Datatype {
    pub(crate) fn encode(&self, w: &mut Writer) {
        let order = |o: ByteOrder| if o == ByteOrder::Big { 1 } else { 0 };
        let size = self.size() as u32;
        match self {
            Datatype::VlenBytes
            | Datatype::VlenStr
            | Datatype::RegionRef
            | Datatype::Vlen { .. }
            | Datatype::VlenOf(_) => {
                let kind = match self {
                    Datatype::VlenBytes => 0,
                    Datatype::VlenStr => 1,
                    Datatype::RegionRef => 3,
                    _ => 2,
                };
                w.u8(5).u8(0).u16(kind).u32(VLEN_RECORD as u32);
                if let Some(base) = self.base() {
                    base.encode(w);
                }
            }
            Datatype::Bool => {
                w.u8(0).u8(0).u16(0).u32(1);
            }
            Datatype::Int { order: o, .. } => {
                w.u8(1).u8(order(*o)).u16(0).u32(size);
            }
            Datatype::UInt { order: o, .. } => {
                w.u8(2).u8(order(*o)).u16(0).u32(size);
            }
            Datatype::Float { order: o, .. } => {
                w.u8(3).u8(order(*o)).u16(0).u32(size);
            }
            Datatype::FixedBytes { cset, pad, .. } => {
                w.u8(4).u8(0).u16(str_kind(*cset, *pad)).u32(size);
            }
            Datatype::Complex { order: o, .. } => {
                w.u8(6).u8(order(*o)).u16(0).u32(size);
            }
            Datatype::Opaque { tag, .. } => {
                w.u8(7).u8(0).u16(0).u32(size);
                w.u16(tag.len() as u16).bytes(tag.as_bytes());
            }
            Datatype::Enum(e) => {
                w.u8(8).u8(0).u16(0).u32(size);
                e.base.encode(w);
                w.u32(e.members.len() as u32);
                for (n, v) in &e.members {
                    w.u16(n.len() as u16).bytes(n.as_bytes()).u64(*v as u64);
                }
            }
            Datatype::Array(a) => {
                w.u8(9).u8(0).u16(0).u32(size);
                w.u8(a.dims.len() as u8);
                for &d in &a.dims {
                    w.u32(d);
                }
                a.base.encode(w);
            }
            Datatype::Reference => {
                w.u8(11).u8(0).u16(0).u32(8);
            }
            Datatype::Bitfield { order: o, .. } => {
                w.u8(12).u8(order(*o)).u16(0).u32(size);
            }
            Datatype::Time { order: o, .. } => {
                w.u8(13).u8(order(*o)).u16(0).u32(size);
            }
            Datatype::Compound(c) => {
                w.u8(10).u8(0).u16(0).u32(size);
                w.u32(c.fields.len() as u32);
                for m in &c.fields {
                    w.u16(m.name.len() as u16)
                        .bytes(m.name.as_bytes())
                        .u32(m.offset);
                    m.dtype.encode(w);
                }
            }
        }
    }

    /// Bytes of this type's encoding.
    pub(crate) fn encoded_len(&self) -> usize {
        let mut w = Writer::new();
        self.encode(&mut w);
        w.buf.len()
    }

    /// Decode a type and check it as a whole (see the module comment).
    pub(crate) fn decode(r: &mut Reader) -> Result<Self> {
        let t = Datatype::decode_at(r, 0)?;
        // One check of the whole, which recurses into members and items.
        t.check(0).map_err(|why| r.corrupt(why))?;
        Ok(t)
    }

    fn decode_at(r: &mut Reader, depth: usize) -> Result<Self> {
        if depth > MAX_TYPE_DEPTH {
            return Err(r.corrupt(format!("types nested more than {MAX_TYPE_DEPTH} deep")));
        }
        let class = r.u8()?;
        let order = match r.u8()? {
            0 => ByteOrder::Little,
            1 => ByteOrder::Big,
            o => return Err(r.corrupt(format!("byte order {o}"))),
        };
        let kind = r.u16()?;
        let size = r.u32()?;
        if class == 5 {
            if size != VLEN_RECORD as u32 || order != ByteOrder::Little {
                return Err(r.corrupt(format!(
                    "variable-length record of {size} bytes, order {order:?}"
                )));
            }
            let base = Datatype::decode_at(r, depth + 1)?;
            let byte = matches!(base, Datatype::UInt { size: 1, .. });
            return match kind {
                0 if byte => Ok(Datatype::VlenBytes),
                1 if byte => Ok(Datatype::VlenStr),
                3 if byte => Ok(Datatype::RegionRef),
                2 => Datatype::vlen(base).map_err(|e| r.corrupt(e.to_string())),
                k => Err(Error::Unsupported(format!(
                    "variable-length kind {k} of base {base}"
                ))),
            };
        }
        let ordered = matches!(class, 1 | 2 | 3 | 6 | 12 | 13);
        // A fixed-length string's kind is its character set and padding.
        let text = if class == 4 {
            Some(text_of(kind).ok_or_else(|| r.corrupt(format!("string kind {kind:#x}")))?)
        } else {
            None
        };
        if (kind != 0 && text.is_none()) || (order == ByteOrder::Big && !ordered) {
            return Err(r.corrupt(format!(
                "datatype class {class} with kind {kind} and byte order {order:?}"
            )));
        }
        let small = || u8::try_from(size).map_err(|_| r.corrupt(format!("element size {size}")));
        let name = |r: &mut Reader<'_>, what: &str| -> Result<String> {
            let n = r.u16()? as usize;
            let b = r.bytes(n)?;
            String::from_utf8(b.to_vec())
                .map_err(|_| r.corrupt(format!("{what} name is not UTF-8")))
        };
        // Counts are bounded by the bytes left, so a damaged count cannot
        // ask for a huge allocation before the reader runs out.
        let count = |r: &mut Reader<'_>, n: usize, min: usize, what: &str| -> Result<usize> {
            if n > MAX_MEMBERS || n.saturating_mul(min) > r.remaining() {
                return Err(r.corrupt(format!("{n} {what} in {} bytes", r.remaining())));
            }
            Ok(n)
        };
        let t = match class {
            0 if size == 1 => Datatype::Bool,
            0 => return Err(r.corrupt(format!("boolean of {size} bytes"))),
            1 => Datatype::Int {
                size: small()?,
                order,
            },
            2 => Datatype::UInt {
                size: small()?,
                order,
            },
            3 => Datatype::Float {
                size: small()?,
                order,
            },
            4 => {
                let (cset, pad) = text.unwrap_or_default();
                Datatype::FixedBytes {
                    len: size,
                    cset,
                    pad,
                }
            }
            6 => Datatype::Complex {
                size: small()?,
                order,
            },
            7 => Datatype::Opaque {
                len: size,
                tag: name(r, "opaque tag")?,
            },
            8 => {
                let base = Datatype::decode_at(r, depth + 1)?;
                let n = r.u32()? as usize;
                let n = count(r, n, 10, "enum members")?;
                let mut members = Vec::with_capacity(n);
                for _ in 0..n {
                    let m = name(r, "enum member")?;
                    let bits = r.u64()?;
                    let v = match base {
                        Datatype::Int { .. } => bits as i64 as i128,
                        _ => bits as i128,
                    };
                    members.push((m, v));
                }
                Datatype::Enum(Box::new(EnumType { base, members }))
            }
            9 => {
                let rank = r.u8()? as usize;
                let rank = count(r, rank, 4, "array extents")?;
                let mut dims = Vec::with_capacity(rank);
                for _ in 0..rank {
                    dims.push(r.u32()?);
                }
                let base = Datatype::decode_at(r, depth + 1)?;
                Datatype::Array(Box::new(ArrayType { base, dims }))
            }
            10 => {
                let n = r.u32()? as usize;
                let n = count(r, n, 14, "compound members")?;
                let mut fields = Vec::with_capacity(n);
                for _ in 0..n {
                    let m = name(r, "compound member")?;
                    let offset = r.u32()?;
                    let dtype = Datatype::decode_at(r, depth + 1)?;
                    fields.push(Field {
                        name: m,
                        offset,
                        dtype,
                    });
                }
                Datatype::Compound(Box::new(CompoundType { size, fields }))
            }
            11 if size == 8 => Datatype::Reference,
            11 => return Err(r.corrupt(format!("reference of {size} bytes"))),
            12 => Datatype::Bitfield {
                size: small()?,
                order,
            },
            13 => Datatype::Time {
                size: small()?,
                order,
            },
            c if c >= 14 => {
                return Err(Error::Unsupported(format!("datatype class {c}")));
            }
            c => return Err(r.corrupt(format!("datatype class {c}"))),
        };
        if t.size() as u64 != size as u64 {
            return Err(r.corrupt(format!(
                "{t} recorded as {size} bytes per element, not {}",
                t.size()
            )));
        }
        Ok(t)
    }
}

/// The kind field of a fixed-length string: the padding in the low byte
/// (0 NUL-padded, 1 NUL-terminated, 2 space-padded), bit 8 set for UTF-8.
/// Plain `S<n>` is 0, as files before these flags wrote it.
fn str_kind(cset: Charset, pad: StrPad) -> u16 {
    let p = match pad {
        StrPad::NullPad => 0,
        StrPad::NullTerm => 1,
        StrPad::SpacePad => 2,
    };
    p | if cset == Charset::Utf8 { 0x100 } else { 0 }
}

/// The inverse of [`str_kind`]; `None` for a kind no version writes.
fn text_of(kind: u16) -> Option<(Charset, StrPad)> {
    let cset = match kind >> 8 {
        0 => Charset::Ascii,
        1 => Charset::Utf8,
        _ => return None,
    };
    let pad = match kind & 0xFF {
        0 => StrPad::NullPad,
        1 => StrPad::NullTerm,
        2 => StrPad::SpacePad,
        _ => return None,
    };
    Some((cset, pad))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(t: &Datatype) {
        let mut w = Writer::new();
        t.encode(&mut w);
        let mut r = Reader::new(&w.buf, "datatype", 0);
        assert_eq!(&Datatype::decode(&mut r).unwrap(), t);
        assert_eq!(r.remaining(), 0);
    }

    #[test]
    fn encode_decode_all() {
        for s in [
            "?",
            "<i1",
            "<i2",
            ">i4",
            "<i8",
            "|u1",
            ">u2",
            "<u4",
            ">u8",
            "<f2",
            "<f4",
            ">f8",
            "<c8",
            ">c16",
            "S7",
            "|S7:utf8",
            "|S3:nullterm",
            "|S2:utf8:spacepad",
            "|V5",
            r#"opaque(3,"jpeg")"#,
            r#"enum(<i2){"a":-3,"b":7}"#,
            r#"enum(>u8){"max":18446744073709551615}"#,
            "[3,2]>f4",
            r#"struct(24){"x"@0:<f4,"y"@8:[2]>i8}"#,
            r#"struct(9){"n"@0:struct(5){"c"@4:|b1,"e"@0:enum(|u1){"x":1}},"s"@5:|S4}"#,
            "vlen:str",
            r#"struct(37){"a"@0:<i4,"s"@4:vlen:str,"v"@20:vlen:>f8,"n"@36:struct(1){"b"@0:|b1}}"#,
            r#"struct(32){"o"@0:struct(16){"r"@0:vlen:ref},"b"@16:vlen:bytes}"#,
            "vlen:bytes",
            "vlen:<f4",
            "vlen:>i8",
            "vlen:?",
            "vlen:|u1",
            "bitfield:|u1",
            "bitfield:>u2",
            "bitfield:<u4",
            "bitfield:>u8",
            "time:<u4",
            "time:>u8",
            r#"struct(3){"ok"@0:bitfield:|u1,"t"@1:[2]bitfield:|u1}"#,
            "vlen:bitfield:<u2",
            "vlen:time:>u4",
        ] {
            let t = Datatype::parse(s).unwrap();
            roundtrip(&t);
            assert_eq!(Datatype::parse(&t.to_numpy_str()).unwrap(), t, "{s}");
        }
    }

    #[test]
    fn sizes_no_class_allows_are_errors_that_name_them() {
        // An integer of 200 bytes: reported, not multiplied into an overflow.
        for class in [1u8, 2, 3, 6, 12, 13] {
            let b = [class, 0, 0, 0, 200, 0, 0, 0];
            let mut r = Reader::new(&b, "datatype", 0);
            let e = Datatype::decode(&mut r).unwrap_err().to_string();
            assert!(e.contains("1600") || e.contains("200"), "{e}");
        }
    }

    #[test]
    fn deep_nesting_refused_at_decode() {
        let mut t = Datatype::Bool;
        for _ in 0..MAX_TYPE_DEPTH + 2 {
            t = Datatype::Compound(Box::new(CompoundType {
                size: 1,
                fields: vec![Field {
                    name: "x".into(),
                    offset: 0,
                    dtype: t,
                }],
            }));
        }
        let mut w = Writer::new();
        t.encode(&mut w);
        let mut r = Reader::new(&w.buf, "datatype", 0);
        assert!(Datatype::decode(&mut r).is_err());
    }
}
