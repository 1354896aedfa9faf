//! Element types and their on-disk encoding.
//!
//! Every type starts with 8 bytes:
//! ```text
//! +0 u8  class   0 bool, 1 signed int, 2 unsigned int, 3 float, 4 fixed byte
//!                string, 5 variable-length, 6 complex, 7 opaque, 8 enum,
//!                9 array, 10 compound, 11 object reference
//! +1 u8  order   0 little-endian, 1 big-endian (0 for classes without one)
//! +2 u16 kind    class 5: see below; class 4: padding (low byte: 0 NUL-
//!                padded, 1 NUL-terminated, 2 space-padded), bit 8 UTF-8;
//!                else 0
//! +4 u32 size    bytes per element
//! ```
//! and some classes go on (all integers little-endian):
//! ```text
//! 5  variable-length  kind: 0 byte string, 1 UTF-8 string, 2 sequence of the
//!                     base type; size 16 (the element's (offset, length)
//!                     record); the base type follows (|u1 for strings)
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
//! ```
//! A decoded type is checked as a whole: sizes agree with extents and
//! members, members lie inside the element and do not overlap, names are
//! unique, enum values fit their base, and nesting is at most
//! [`MAX_TYPE_DEPTH`] deep.

mod text;

use std::collections::HashSet;

use crate::error::{Error, Result};
use crate::format::codec::{Reader, Writer};

/// Byte order of multi-byte elements on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ByteOrder {
    /// Least significant byte first (the native order of x86 and ARM).
    Little,
    /// Most significant byte first.
    Big,
}

impl ByteOrder {
    /// The order of this machine.
    pub const NATIVE: ByteOrder = if cfg!(target_endian = "little") {
        ByteOrder::Little
    } else {
        ByteOrder::Big
    };
}

/// The type of a dataset's or attribute's elements.
///
/// Values cross the API as bytes laid out as on disk except that every
/// number is in native byte order ([`Datatype::native`]); a compound
/// element is its members at their offsets, an array element its items in
/// C order.
///
/// ```
/// use arca::{ByteOrder, Datatype};
/// let t = Datatype::parse("<f8").unwrap();
/// assert_eq!(t, Datatype::Float { size: 8, order: ByteOrder::Little });
/// assert_eq!(Datatype::parse(">u2").unwrap().to_numpy_str(), ">u2");
/// let row = Datatype::parse(r#"struct(12){"t"@0:<f8,"ok"@8:|b1}"#).unwrap();
/// assert_eq!(row.size(), 12);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Datatype {
    /// One byte, 0 or 1.
    Bool,
    /// Two's-complement signed integer of 1, 2, 4 or 8 bytes.
    Int {
        /// Bytes per element.
        size: u8,
        /// On-disk byte order.
        order: ByteOrder,
    },
    /// Unsigned integer of 1, 2, 4 or 8 bytes.
    UInt {
        /// Bytes per element.
        size: u8,
        /// On-disk byte order.
        order: ByteOrder,
    },
    /// IEEE 754 float of 2, 4 or 8 bytes.
    Float {
        /// Bytes per element.
        size: u8,
        /// On-disk byte order.
        order: ByteOrder,
    },
    /// A complex number: two IEEE floats of `size / 2` bytes (4, 8 or 16
    /// in all), real part first, as numpy's `complex64` and `complex128`.
    Complex {
        /// Bytes per element (both parts).
        size: u8,
        /// On-disk byte order of each part.
        order: ByteOrder,
    },
    /// A fixed number of bytes per element: a string, with the character
    /// set and padding it was written with ([`Datatype::bytes`] for
    /// numpy's `S<n>`: ASCII, NUL-padded).
    FixedBytes {
        /// Bytes per element (1 ..= 65536).
        len: u32,
        /// What the bytes encode.
        cset: Charset,
        /// How a shorter string fills the element.
        pad: StrPad,
    },
    /// Bytes arca does not interpret (numpy `V<n>`), with an optional tag
    /// naming what they hold.
    Opaque {
        /// Bytes per element.
        len: u32,
        /// What the bytes are, for readers (may be empty).
        tag: String,
    },
    /// An integer with named values.
    Enum(Box<EnumType>),
    /// A fixed-shape array of a base type in each element.
    Array(Box<ArrayType>),
    /// A record of named members at fixed byte offsets.
    Compound(Box<CompoundType>),
    /// A reference to a group or dataset of the same file: the object's
    /// id ([`crate::Object::id`]) as a little-endian u64, 0 for none.
    Reference,
    /// Variable-length byte strings.
    VlenBytes,
    /// Variable-length UTF-8 strings.
    VlenStr,
    /// Variable-length sequences (ragged rows) of a numeric base type.
    Vlen {
        /// The class of the base type.
        class: BaseClass,
        /// Bytes per base element.
        size: u8,
        /// Byte order of base elements on disk.
        order: ByteOrder,
    },
}

/// The character set of a fixed-length string type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Charset {
    /// ASCII (or bytes of no declared encoding): numpy's `S<n>`.
    #[default]
    Ascii,
    /// UTF-8.
    Utf8,
}

/// How a fixed-length string shorter than its element fills the rest, as
/// HDF5 records it (the bytes are stored as written either way).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum StrPad {
    /// NUL bytes to the end, none needed at full length (numpy's `S<n>`).
    #[default]
    NullPad,
    /// A NUL ends the string (C strings; netCDF's text).
    NullTerm,
    /// Spaces to the end (Fortran).
    SpacePad,
}

impl StrPad {
    /// The string an element holds: `b` without its padding.
    ///
    /// ```
    /// use arca::StrPad;
    /// assert_eq!(StrPad::NullPad.trim(b"ab\0\0"), b"ab");
    /// assert_eq!(StrPad::NullTerm.trim(b"ab\0cd"), b"ab");
    /// assert_eq!(StrPad::SpacePad.trim(b"ab  "), b"ab");
    /// ```
    pub fn trim(self, b: &[u8]) -> &[u8] {
        let end = match self {
            StrPad::NullPad => b.iter().rposition(|&c| c != 0).map_or(0, |i| i + 1),
            StrPad::NullTerm => b.iter().position(|&c| c == 0).unwrap_or(b.len()),
            StrPad::SpacePad => b.iter().rposition(|&c| c != b' ').map_or(0, |i| i + 1),
        };
        &b[..end]
    }
}

/// An enum type: an integer base and its named values.
///
/// ```
/// use arca::{Datatype, EnumType};
/// let t = Datatype::enumeration(Datatype::int(1), &[("RED", 0), ("GREEN", 1)]).unwrap();
/// let Datatype::Enum(e) = &t else { unreachable!() };
/// assert_eq!(e.name_of(1), Some("GREEN"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EnumType {
    /// The integer type values are stored as.
    pub base: Datatype,
    /// Names and values, in the order they were defined.
    pub members: Vec<(String, i128)>,
}

impl EnumType {
    /// The name of `value`, if it has one.
    pub fn name_of(&self, value: i128) -> Option<&str> {
        self.members
            .iter()
            .find(|(_, v)| *v == value)
            .map(|(n, _)| n.as_str())
    }
}

/// An array type: `dims` extents (C order) of `base`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ArrayType {
    /// The type of each item.
    pub base: Datatype,
    /// Extents, outermost first.
    pub dims: Vec<u32>,
}

/// A compound type: members at byte offsets within `size` bytes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CompoundType {
    /// Bytes per element, gaps included.
    pub size: u32,
    /// Members in their defined order (not necessarily by offset).
    pub fields: Vec<Field>,
}

/// One member of a [`CompoundType`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Field {
    /// The member's name (unique within the compound).
    pub name: String,
    /// Byte offset within the element.
    pub offset: u32,
    /// The member's type (not variable-length).
    pub dtype: Datatype,
}

/// The class of a variable-length sequence's base type.
///
/// ```
/// use arca::{BaseClass, Datatype};
/// let t = Datatype::vlen(Datatype::float(4)).unwrap();
/// assert!(matches!(t, Datatype::Vlen { class: BaseClass::Float, size: 4, .. }));
/// assert_eq!(t.base(), Some(Datatype::float(4)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BaseClass {
    /// One byte, 0 or 1.
    Bool,
    /// Signed integer.
    Int,
    /// Unsigned integer.
    UInt,
    /// IEEE float.
    Float,
    /// Object reference.
    Reference,
}

/// Bytes of one variable-length element's record in its dataset: u64 offset
/// and u64 length into the dataset's byte vector.
pub const VLEN_RECORD: usize = 16;

/// Longest fixed-length byte string element.
pub const MAX_FIXED_BYTES: u32 = 1 << 16;

/// Largest element of any fixed-size type (opaque, array, compound), 16 MiB.
pub const MAX_ELEMENT_BYTES: u32 = 1 << 24;

/// Deepest nesting of arrays, compounds and enums in one type.
pub const MAX_TYPE_DEPTH: usize = 16;

/// Most dimensions of an array type.
pub const MAX_ARRAY_RANK: usize = 32;

/// Most members of a compound or enum type.
pub const MAX_MEMBERS: usize = 1 << 16;

impl Datatype {
    /// Native-order signed integer of `size` bytes.
    pub fn int(size: u8) -> Self {
        Datatype::Int {
            size,
            order: ByteOrder::NATIVE,
        }
    }
    /// Native-order unsigned integer of `size` bytes.
    pub fn uint(size: u8) -> Self {
        Datatype::UInt {
            size,
            order: ByteOrder::NATIVE,
        }
    }
    /// Native-order float of `size` bytes (2, 4 or 8).
    pub fn float(size: u8) -> Self {
        Datatype::Float {
            size,
            order: ByteOrder::NATIVE,
        }
    }
    /// Native-order complex number of `size` bytes (8 or 16; 4 for two halves).
    pub fn complex(size: u8) -> Self {
        Datatype::Complex {
            size,
            order: ByteOrder::NATIVE,
        }
    }

    /// A fixed-length string of `len` bytes, ASCII and NUL-padded (numpy's
    /// `S<n>`).
    ///
    /// ```
    /// use arca::{Charset, Datatype, StrPad};
    /// let t = Datatype::bytes(8);
    /// assert_eq!(t.size(), 8);
    /// assert_eq!(t.to_numpy_str(), "|S8");
    /// let c = Datatype::FixedBytes { len: 8, cset: Charset::Utf8, pad: StrPad::NullTerm };
    /// assert_eq!(c.to_numpy_str(), "|S8:utf8:nullterm");
    /// ```
    pub fn bytes(len: u32) -> Self {
        Datatype::FixedBytes {
            len,
            cset: Charset::Ascii,
            pad: StrPad::NullPad,
        }
    }

    /// A variable-length sequence of `base`, which must be numeric or bool.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for other bases.
    pub fn vlen(base: Datatype) -> Result<Self> {
        base.validate()?;
        let (class, size, order) = match base {
            Datatype::Bool => (BaseClass::Bool, 1, ByteOrder::NATIVE),
            Datatype::Int { size, order } => (BaseClass::Int, size, order),
            Datatype::UInt { size, order } => (BaseClass::UInt, size, order),
            Datatype::Float { size, order } if size != 2 => (BaseClass::Float, size, order),
            Datatype::Reference => (BaseClass::Reference, 8, ByteOrder::Little),
            other => {
                return Err(Error::invalid(format!(
                    "a variable-length sequence needs a bool, integer, float32, \
                     float64 or reference base type, not {other}"
                )))
            }
        };
        Ok(Datatype::Vlen { class, size, order })
    }

    /// An enum over the integer type `base` with the given names and values.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a non-integer base, no members, a
    /// repeated name or value, or a value the base cannot hold.
    pub fn enumeration(base: Datatype, members: &[(&str, i128)]) -> Result<Self> {
        let t = Datatype::Enum(Box::new(EnumType {
            base,
            members: members.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
        }));
        t.validate()?;
        Ok(t)
    }

    /// An array of `dims` items of `base` in each element.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a variable-length or array base, or
    /// extents that are zero, too many or too large.
    pub fn array(base: Datatype, dims: &[u32]) -> Result<Self> {
        let t = Datatype::Array(Box::new(ArrayType {
            base,
            dims: dims.to_vec(),
        }));
        t.validate()?;
        Ok(t)
    }

    /// A compound of `size` bytes with `fields` as `(name, offset, type)`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for no members, a repeated or empty name,
    /// members that overlap or pass `size`, or a variable-length member.
    pub fn compound(size: u32, fields: &[(&str, u32, Datatype)]) -> Result<Self> {
        let t = Datatype::Compound(Box::new(CompoundType {
            size,
            fields: fields
                .iter()
                .map(|(n, o, d)| Field {
                    name: n.to_string(),
                    offset: *o,
                    dtype: d.clone(),
                })
                .collect(),
        }));
        t.validate()?;
        Ok(t)
    }

    /// A compound of members packed one after another, in order.
    ///
    /// # Errors
    /// As [`Datatype::compound`].
    pub fn packed(fields: &[(&str, Datatype)]) -> Result<Self> {
        let mut at = 0u32;
        let mut list = vec![];
        for (n, d) in fields {
            list.push((*n, at, d.clone()));
            at = u32::try_from(d.size())
                .ok()
                .and_then(|s| at.checked_add(s))
                .ok_or_else(|| Error::invalid("compound too large"))?;
        }
        Datatype::compound(at, &list)
    }

    /// Byte offsets of the object references in one element (for a
    /// variable-length sequence of references: in one item).
    /// Members that are sequences of references are not included: their
    /// items live outside the element (see [`Datatype::vlen_slots`]).
    pub fn ref_offsets(&self) -> Vec<usize> {
        let mut out = vec![];
        match self {
            Datatype::Vlen {
                class: BaseClass::Reference,
                ..
            } => out.push(0),
            t => t.refs_at(0, &mut out),
        }
        out
    }

    /// Whether values of this type hold object references anywhere: in
    /// the element or in a variable-length member's items.
    pub fn holds_refs(&self) -> bool {
        !self.ref_offsets().is_empty()
            || self
                .vlen_slots()
                .iter()
                .any(|(_, t)| t.base() == Some(Datatype::Reference))
    }

    fn refs_at(&self, at: usize, out: &mut Vec<usize>) {
        match self {
            Datatype::Reference => out.push(at),
            Datatype::Array(a) => {
                let n: usize = a.dims.iter().map(|&d| d as usize).product();
                let s = a.base.size();
                for i in 0..n {
                    a.base.refs_at(at + i * s, out);
                }
            }
            Datatype::Compound(c) => {
                for m in &c.fields {
                    m.dtype.refs_at(at + m.offset as usize, out);
                }
            }
            _ => {}
        }
    }

    /// Whether elements are variable-length (strings or sequences).
    pub fn is_vlen(&self) -> bool {
        matches!(
            self,
            Datatype::VlenBytes | Datatype::VlenStr | Datatype::Vlen { .. }
        )
    }

    /// Whether elements hold variable-length values anywhere: the type is
    /// variable-length, or a compound with such members at any depth. Such
    /// datasets keep those values in a byte vector.
    ///
    /// ```
    /// use arca::Datatype;
    /// let row = Datatype::parse(r#"struct(20){"id"@0:<u4,"name"@4:vlen:str}"#).unwrap();
    /// assert!(row.has_vlen() && !row.is_vlen());
    /// ```
    pub fn has_vlen(&self) -> bool {
        match self {
            Datatype::Compound(c) => c.fields.iter().any(|f| f.dtype.has_vlen()),
            t => t.is_vlen(),
        }
    }

    /// Where a type's variable-length values sit in one element: each
    /// slot's byte offset and variable-length type, in member order. A
    /// variable-length type is one slot at offset 0; a fixed type has none.
    ///
    /// ```
    /// use arca::Datatype;
    /// let row = Datatype::parse(r#"struct(36){"a"@0:vlen:<f4,"n"@16:<i4,"s"@20:vlen:str}"#).unwrap();
    /// let at: Vec<usize> = row.vlen_slots().iter().map(|s| s.0).collect();
    /// assert_eq!(at, [0, 20]);
    /// ```
    pub fn vlen_slots(&self) -> Vec<(usize, Datatype)> {
        let mut out = vec![];
        self.slots_at(0, &mut out);
        out
    }

    fn slots_at(&self, at: usize, out: &mut Vec<(usize, Datatype)>) {
        match self {
            Datatype::Compound(c) => {
                for m in &c.fields {
                    m.dtype.slots_at(at + m.offset as usize, out);
                }
            }
            t if t.is_vlen() => out.push((at, t.clone())),
            _ => {}
        }
    }

    /// Item size of the byte vector holding this type's variable-length
    /// values: the base size for a variable-length type (so that filters
    /// such as shuffle see whole items), 1 for a compound with
    /// variable-length members of mixed bases; `None` without any.
    pub(crate) fn vector_item(&self) -> Option<usize> {
        match self.base() {
            Some(b) => Some(b.size()),
            None => self.has_vlen().then_some(1),
        }
    }

    /// The type of one item of a variable-length element: `uint8` for the
    /// string kinds, the base type for sequences; `None` for fixed types.
    pub fn base(&self) -> Option<Datatype> {
        match *self {
            Datatype::VlenBytes | Datatype::VlenStr => Some(Datatype::UInt {
                size: 1,
                order: ByteOrder::NATIVE,
            }),
            Datatype::Vlen { class, size, order } => Some(match class {
                BaseClass::Bool => Datatype::Bool,
                BaseClass::Int => Datatype::Int { size, order },
                BaseClass::UInt => Datatype::UInt { size, order },
                BaseClass::Float => Datatype::Float { size, order },
                BaseClass::Reference => Datatype::Reference,
            }),
            _ => None,
        }
    }

    /// Bytes per element (16, the record, for variable-length types).
    pub fn size(&self) -> usize {
        match self {
            Datatype::VlenBytes | Datatype::VlenStr | Datatype::Vlen { .. } => VLEN_RECORD,
            Datatype::Bool => 1,
            Datatype::Int { size, .. }
            | Datatype::UInt { size, .. }
            | Datatype::Float { size, .. }
            | Datatype::Complex { size, .. } => *size as usize,
            Datatype::FixedBytes { len, .. } | Datatype::Opaque { len, .. } => *len as usize,
            Datatype::Enum(e) => e.base.size(),
            Datatype::Array(a) => a
                .dims
                .iter()
                .fold(a.base.size(), |s, &d| s.saturating_mul(d as usize)),
            Datatype::Compound(c) => c.size as usize,
            Datatype::Reference => 8,
        }
    }

    /// Byte order on disk of a numeric type (or a variable-length
    /// sequence's items, or an enum's base); others report native.
    pub fn order(&self) -> ByteOrder {
        match self {
            Datatype::Int { order, .. }
            | Datatype::UInt { order, .. }
            | Datatype::Float { order, .. }
            | Datatype::Complex { order, .. }
            | Datatype::Vlen { order, .. } => *order,
            Datatype::Enum(e) => e.base.order(),
            _ => ByteOrder::NATIVE,
        }
    }

    /// The same type with every number in native byte order: the in-memory
    /// form of its values.
    pub fn native(&self) -> Self {
        self.with_order(ByteOrder::NATIVE)
    }

    /// The same type with every number in `order` (members and items
    /// included; no effect on bool, strings and opaque bytes).
    pub fn with_order(&self, order: ByteOrder) -> Self {
        match self {
            Datatype::Int { size, .. } => Datatype::Int { size: *size, order },
            Datatype::UInt { size, .. } => Datatype::UInt { size: *size, order },
            Datatype::Float { size, .. } => Datatype::Float { size: *size, order },
            Datatype::Complex { size, .. } => Datatype::Complex { size: *size, order },
            Datatype::Vlen { class, size, .. } => Datatype::Vlen {
                class: *class,
                size: *size,
                order,
            },
            Datatype::Enum(e) => Datatype::Enum(Box::new(EnumType {
                base: e.base.with_order(order),
                members: e.members.clone(),
            })),
            Datatype::Array(a) => Datatype::Array(Box::new(ArrayType {
                base: a.base.with_order(order),
                dims: a.dims.clone(),
            })),
            Datatype::Compound(c) => Datatype::Compound(Box::new(CompoundType {
                size: c.size,
                fields: c
                    .fields
                    .iter()
                    .map(|f| Field {
                        name: f.name.clone(),
                        offset: f.offset,
                        dtype: f.dtype.with_order(order),
                    })
                    .collect(),
            })),
            other => other.clone(),
        }
    }

    /// Whether elements must be byte-swapped between disk and memory
    /// (never for variable-length types, whose records are always
    /// little-endian; see [`Datatype::base`] for their items).
    pub fn needs_swap(&self) -> bool {
        if self.is_vlen() {
            return false;
        }
        let mut any = false;
        self.leaves(0, &mut |_, size| any |= size > 1);
        any
    }

    /// Calls `f(offset, size)` for every number in an element whose byte
    /// order is not native (complex numbers as two parts).
    fn leaves(&self, at: usize, f: &mut dyn FnMut(usize, usize)) {
        match self {
            Datatype::Int { size, order }
            | Datatype::UInt { size, order }
            | Datatype::Float { size, order }
                if *order != ByteOrder::NATIVE =>
            {
                f(at, *size as usize)
            }
            Datatype::Complex { size, order } if *order != ByteOrder::NATIVE => {
                let h = *size as usize / 2;
                f(at, h);
                f(at + h, h);
            }
            Datatype::Reference if ByteOrder::Little != ByteOrder::NATIVE => f(at, 8),
            Datatype::Enum(e) => e.base.leaves(at, f),
            Datatype::Array(a) => {
                let n: usize = a.dims.iter().map(|&d| d as usize).product();
                let s = a.base.size();
                for i in 0..n {
                    a.base.leaves(at + i * s, f);
                }
            }
            Datatype::Compound(c) => {
                for m in &c.fields {
                    m.dtype.leaves(at + m.offset as usize, f);
                }
            }
            _ => {}
        }
    }

    /// Converts whole elements in `buf` between this type's byte order and
    /// native order (the same swap both ways); a no-op when none is needed.
    /// Elements prepared outside a dataset (for [`crate::encode_slab`],
    /// which takes them as stored) are converted this way.
    ///
    /// ```
    /// use arca::Datatype;
    /// let t = Datatype::parse(">u2").unwrap();
    /// let mut b = 0x0102u16.to_ne_bytes();
    /// t.swap(&mut b);
    /// assert_eq!(b, [1, 2]);
    /// ```
    pub fn swap(&self, buf: &mut [u8]) {
        if self.is_vlen() {
            return;
        }
        let size = self.size();
        match self {
            Datatype::Int { .. } | Datatype::UInt { .. } | Datatype::Float { .. } => {
                if self.order() != ByteOrder::NATIVE {
                    swap_in_place(buf, size)
                }
            }
            _ => {
                let mut plan = vec![];
                self.leaves(0, &mut |o, s| {
                    if s > 1 {
                        plan.push((o, s))
                    }
                });
                if plan.is_empty() || size == 0 {
                    return;
                }
                if plan.iter().all(|&(_, s)| s == plan[0].1)
                    && plan.iter().enumerate().all(|(i, &(o, s))| o == i * s)
                    && plan.len() * plan[0].1 == size
                {
                    // Every byte is in a number of one size: one flat swap.
                    return swap_in_place(buf, plan[0].1);
                }
                for e in buf.chunks_exact_mut(size) {
                    for &(o, s) in &plan {
                        e[o..o + s].reverse();
                    }
                }
            }
        }
    }

    /// Check sizes, members and extents are ones this type class allows.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for e.g. a 3-byte integer, overlapping
    /// compound members or an enum on a float base.
    pub fn validate(&self) -> Result<()> {
        self.check(0).map_err(Error::invalid)
    }

    /// Whether this type is a whole, sane type; the reason when it is not.
    fn check(&self, depth: usize) -> std::result::Result<(), String> {
        if depth > MAX_TYPE_DEPTH {
            return Err(format!("types nested more than {MAX_TYPE_DEPTH} deep"));
        }
        let bad = || Err(format!("unsupported datatype {self}"));
        match self {
            Datatype::Bool | Datatype::VlenBytes | Datatype::VlenStr | Datatype::Reference => {
                Ok(())
            }
            Datatype::Int { size, .. } | Datatype::UInt { size, .. } => {
                if matches!(size, 1 | 2 | 4 | 8) {
                    Ok(())
                } else {
                    bad()
                }
            }
            Datatype::Float { size, .. } => {
                if matches!(size, 2 | 4 | 8) {
                    Ok(())
                } else {
                    bad()
                }
            }
            Datatype::Complex { size, .. } => {
                if matches!(size, 4 | 8 | 16) {
                    Ok(())
                } else {
                    bad()
                }
            }
            Datatype::FixedBytes { len, .. } => {
                if (1..=MAX_FIXED_BYTES).contains(len) {
                    Ok(())
                } else {
                    bad()
                }
            }
            Datatype::Opaque { len, tag } => {
                if !(1..=MAX_ELEMENT_BYTES).contains(len) {
                    return Err(format!("opaque element of {len} bytes"));
                }
                if tag.len() > u16::MAX as usize {
                    return Err("opaque tag longer than 65535 bytes".into());
                }
                Ok(())
            }
            Datatype::Vlen { class, size, .. } => {
                let ok = match class {
                    BaseClass::Bool => *size == 1,
                    BaseClass::Int | BaseClass::UInt => matches!(size, 1 | 2 | 4 | 8),
                    BaseClass::Float => matches!(size, 4 | 8),
                    BaseClass::Reference => *size == 8,
                };
                if ok {
                    Ok(())
                } else {
                    bad()
                }
            }
            Datatype::Enum(e) => {
                let (lo, hi) = match e.base {
                    Datatype::Int { size, .. } if matches!(size, 1 | 2 | 4 | 8) => {
                        let b = size as u32 * 8 - 1;
                        (-(1i128 << b), (1i128 << b) - 1)
                    }
                    Datatype::UInt { size, .. } if matches!(size, 1 | 2 | 4 | 8) => {
                        (0, (1i128 << (size as u32 * 8)) - 1)
                    }
                    ref b => return Err(format!("an enum needs an integer base, not {b}")),
                };
                if e.members.is_empty() || e.members.len() > MAX_MEMBERS {
                    return Err(format!("an enum of {} members", e.members.len()));
                }
                let mut names = HashSet::new();
                let mut values = HashSet::new();
                for (n, v) in &e.members {
                    check_name(n, "enum member")?;
                    if !names.insert(n.as_str()) {
                        return Err(format!("enum member {n:?} named twice"));
                    }
                    if !values.insert(*v) {
                        return Err(format!("enum value {v} named twice"));
                    }
                    if *v < lo || *v > hi {
                        return Err(format!("enum value {v} of {n:?} does not fit {}", e.base));
                    }
                }
                Ok(())
            }
            Datatype::Array(a) => {
                if a.base.has_vlen() || matches!(a.base, Datatype::Array(_)) {
                    return Err(format!(
                        "an array of {} (arrays hold fixed, non-array items; nest extents instead)",
                        a.base
                    ));
                }
                a.base.check(depth + 1)?;
                if a.dims.is_empty() || a.dims.len() > MAX_ARRAY_RANK {
                    return Err(format!("an array of rank {}", a.dims.len()));
                }
                if a.dims.contains(&0) {
                    return Err("an array with a zero extent".into());
                }
                let total = a
                    .dims
                    .iter()
                    .try_fold(a.base.size() as u64, |s, &d| s.checked_mul(d as u64));
                match total {
                    Some(t) if t <= MAX_ELEMENT_BYTES as u64 => Ok(()),
                    _ => Err(format!(
                        "an array element larger than {MAX_ELEMENT_BYTES} bytes"
                    )),
                }
            }
            Datatype::Compound(c) => {
                if c.fields.is_empty() || c.fields.len() > MAX_MEMBERS {
                    return Err(format!("a compound of {} members", c.fields.len()));
                }
                if c.size == 0 || c.size > MAX_ELEMENT_BYTES {
                    return Err(format!("a compound of {} bytes", c.size));
                }
                let mut names = HashSet::new();
                let mut spans = Vec::with_capacity(c.fields.len());
                for m in &c.fields {
                    check_name(&m.name, "compound member")?;
                    if !names.insert(m.name.as_str()) {
                        return Err(format!("compound member {:?} named twice", m.name));
                    }
                    m.dtype.check(depth + 1)?;
                    let end = m.offset as u64 + m.dtype.size() as u64;
                    if end > c.size as u64 {
                        return Err(format!(
                            "compound member {:?} ends at byte {end}, past the element's {}",
                            m.name, c.size
                        ));
                    }
                    spans.push((m.offset as u64, end, &m.name));
                }
                spans.sort_unstable();
                for w in spans.windows(2) {
                    if w[1].0 < w[0].1 {
                        return Err(format!(
                            "compound members {:?} and {:?} overlap",
                            w[0].2, w[1].2
                        ));
                    }
                }
                Ok(())
            }
        }
    }

    pub(crate) fn encode(&self, w: &mut Writer) {
        let order = |o: ByteOrder| if o == ByteOrder::Big { 1 } else { 0 };
        let size = self.size() as u32;
        match self {
            Datatype::VlenBytes | Datatype::VlenStr | Datatype::Vlen { .. } => {
                let kind = match self {
                    Datatype::VlenBytes => 0,
                    Datatype::VlenStr => 1,
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
                2 => Datatype::vlen(base).map_err(|e| r.corrupt(e.to_string())),
                k => Err(Error::Unsupported(format!(
                    "variable-length kind {k} of base {base}"
                ))),
            };
        }
        let ordered = matches!(class, 1 | 2 | 3 | 6);
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
                    let raw = r.u64()?;
                    let v = match base {
                        Datatype::Int { .. } => raw as i64 as i128,
                        _ => raw as i128,
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
            c if c >= 12 => {
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

/// A member or enum name: non-empty, at most 65535 bytes.
fn check_name(n: &str, what: &str) -> std::result::Result<(), String> {
    if n.is_empty() || n.len() > u16::MAX as usize {
        return Err(format!("{what} name of {} bytes", n.len()));
    }
    Ok(())
}

/// Swap each `size`-byte element of `buf` in place.
pub(crate) fn swap_in_place(buf: &mut [u8], size: usize) {
    if size > 1 {
        for e in buf.chunks_exact_mut(size) {
            e.reverse();
        }
    }
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
        ] {
            let t = Datatype::parse(s).unwrap();
            roundtrip(&t);
            assert_eq!(Datatype::parse(&t.to_numpy_str()).unwrap(), t, "{s}");
        }
    }

    #[test]
    fn bad_types_rejected() {
        for s in [
            "<i3",
            "<f3",
            "<c2",
            "x",
            "",
            "S0",
            "<q8",
            "vlen:S4",
            "vlen:vlen:str",
            "vlen:",
            "vlen:<f2",
            "[0]<f4",
            "[2][3]<f4",
            "[2]vlen:str",
            r#"struct(4){"a"@0:<f4,"a"@0:<f4}"#,
            r#"struct(6){"a"@0:<f4,"b"@2:<i2}"#,
            r#"struct(3){"a"@0:<f4}"#,
            r#"[2]struct(16){"a"@0:vlen:str}"#,
            r#"struct(20){"a"@0:vlen:str,"b"@8:<f4}"#,
            r#"struct(4){}"#,
            r#"enum(<f4){"a":1}"#,
            r#"enum(|i1){"a":200}"#,
            r#"enum(|u1){"a":1,"b":1}"#,
            r#"enum(|u1){}"#,
        ] {
            assert!(Datatype::parse(s).is_err(), "{s}");
        }
    }

    #[test]
    fn swap_follows_members() {
        let t = Datatype::parse(r#"struct(7){"a"@0:>u2,"b"@2:|u1,"c"@3:>i4}"#).unwrap();
        let mut b = vec![1, 2, 3, 4, 5, 6, 7];
        t.swap(&mut b);
        assert_eq!(b, [2, 1, 3, 7, 6, 5, 4]);
        let c = Datatype::parse(">c8").unwrap();
        let mut b = vec![1, 2, 3, 4, 5, 6, 7, 8];
        c.swap(&mut b);
        assert_eq!(b, [4, 3, 2, 1, 8, 7, 6, 5]);
        assert!(!Datatype::parse("<c16").unwrap().needs_swap());
    }

    #[test]
    fn sizes_no_class_allows_are_errors_that_name_them() {
        // An integer of 200 bytes: reported, not multiplied into an overflow.
        for class in [1u8, 2, 3, 6] {
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
