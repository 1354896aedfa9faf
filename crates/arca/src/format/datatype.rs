//! Element types: [`Datatype`] and its parts, their constructors, and the
//! questions the rest of the library asks of a type (size, byte order,
//! variable-length slots, references). The other jobs each have a file:
//! - `codec`: the on-disk encoding, with its byte layout;
//! - `check`: whether a type is whole and sane (sizes, members, names,
//!   nesting depth), for types built by callers and types decoded alike;
//! - `swap`: byte order, converting elements between file and native order;
//! - `text`: the type string (`<f8`, `struct(12){...}`), parsed and written.

mod check;
mod codec;
pub(crate) mod extended;
pub(crate) mod swap;
mod text;

use crate::error::{Error, Result};

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
    /// A region reference: a dataset of the same file and a selection of
    /// it ([`crate::RegionRef`]), stored as a variable-length element of
    /// bytes (empty: the null reference).
    RegionRef,
    /// Variable-length sequences (ragged rows) of a numeric base type.
    Vlen {
        /// The class of the base type.
        class: BaseClass,
        /// Bytes per base element.
        size: u8,
        /// Byte order of base elements on disk.
        order: ByteOrder,
    },
    /// An HDF5 bitfield of 1, 2, 4 or 8 bytes: bits that are not a number
    /// (PyTables keeps booleans this way). Values cross as unsigned
    /// integers of the same size, as h5py reads them.
    Bitfield {
        /// Bytes per element.
        size: u8,
        /// On-disk byte order.
        order: ByteOrder,
    },
    /// An HDF5 time (date) type of 4 or 8 bytes, kept as written: numpy
    /// has no equivalent, so values cross as unsigned integers of the same
    /// size.
    Time {
        /// Bytes per element.
        size: u8,
        /// On-disk byte order.
        order: ByteOrder,
    },
    /// Variable-length sequences of any other base: an enum, a compound
    /// (whose members may be variable-length themselves), complex numbers,
    /// fixed-length strings, an array, opaque bytes, a bitfield or a time
    /// (made by
    /// [`Datatype::vlen`]; numeric bases are [`Datatype::Vlen`]). The base
    /// holds no object references.
    VlenOf(Box<Datatype>),
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

/// Longest fixed-length byte string element, 1 GiB: HDF5's size field
/// allows 4 GiB, but one element must fit in a chunk held in memory.
pub const MAX_FIXED_BYTES: u32 = 1 << 30;

/// Largest element of any fixed-size type (opaque, array, compound), 1 GiB,
/// for the same reason.
pub const MAX_ELEMENT_BYTES: u32 = 1 << 30;

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
    /// Native-order float of `size` bytes (2, 4, 8, or 16: extended
    /// precision, see [`crate::extended_to_f64`]).
    pub fn float(size: u8) -> Self {
        Datatype::Float {
            size,
            order: ByteOrder::NATIVE,
        }
    }
    /// Native-order complex number of `size` bytes (8 or 16; 4 for two
    /// halves, 32 for two extended-precision floats).
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

    /// A variable-length sequence of `base`: numeric (float16 included),
    /// bool or object references as [`Datatype::Vlen`]; an enum, a
    /// compound, complex numbers, fixed-length strings, an array, opaque
    /// bytes, a bitfield or a time as [`Datatype::VlenOf`].
    ///
    /// ```
    /// use arca::Datatype;
    /// let e = Datatype::enumeration(Datatype::int(4), &[("foo", 1), ("bar", 2)]).unwrap();
    /// let t = Datatype::vlen(e.clone()).unwrap();
    /// assert_eq!(t.base(), Some(e));
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for variable-length bases other than
    /// compounds, and bases that hold object references.
    pub fn vlen(base: Datatype) -> Result<Self> {
        base.validate()?;
        if matches!(
            base,
            Datatype::Enum(_)
                | Datatype::Float { size: 16, .. }
                | Datatype::Compound(_)
                | Datatype::Complex { .. }
                | Datatype::FixedBytes { .. }
                | Datatype::Array(_)
                | Datatype::Opaque { .. }
                | Datatype::Bitfield { .. }
                | Datatype::Time { .. }
        ) {
            if base.holds_refs() || (base.has_vlen() && !matches!(base, Datatype::Compound(_))) {
                return Err(Error::invalid(format!(
                    "a variable-length sequence's base holds no object references, and \
                     variable-length values only as compound members, not {base}"
                )));
            }
            return Ok(Datatype::VlenOf(Box::new(base)));
        }
        let (class, size, order) = match base {
            Datatype::Bool => (BaseClass::Bool, 1, ByteOrder::NATIVE),
            Datatype::Int { size, order } => (BaseClass::Int, size, order),
            Datatype::UInt { size, order } => (BaseClass::UInt, size, order),
            Datatype::Float { size, order } => (BaseClass::Float, size, order),
            Datatype::Reference => (BaseClass::Reference, 8, ByteOrder::Little),
            other => {
                return Err(Error::invalid(format!(
                    "a variable-length sequence needs a bool, integer, float16, \
                     float32, float64 or reference base type, not {other}"
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
                .any(|(_, t)| t.base() == Some(Datatype::Reference) || *t == Datatype::RegionRef)
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
            Datatype::VlenBytes
                | Datatype::VlenStr
                | Datatype::RegionRef
                | Datatype::Vlen { .. }
                | Datatype::VlenOf(_)
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

    /// Whether variable-length values of this type hold variable-length
    /// values themselves: a sequence of compounds with strings, or a
    /// compound with such a member. Their records point into the same
    /// vector (or rows buffer) as the outer ones.
    ///
    /// ```
    /// use arca::Datatype;
    /// let inner = Datatype::parse(r#"struct(16){"s"@0:vlen:str}"#).unwrap();
    /// assert!(Datatype::vlen(inner).unwrap().nests_vlen());
    /// assert!(!Datatype::VlenStr.nests_vlen());
    /// ```
    pub fn nests_vlen(&self) -> bool {
        self.vlen_slots()
            .iter()
            .any(|(_, t)| t.base().is_some_and(|b| b.has_vlen()))
    }

    /// Whether elements cross as rows ([`crate::Dataset::write_rows`]):
    /// compounds with variable-length members, and variable-length types
    /// whose values nest more.
    pub fn takes_rows(&self) -> bool {
        self.has_vlen() && (!self.is_vlen() || self.nests_vlen())
    }

    /// Item size of the byte vector holding this type's variable-length
    /// values: the base size for a variable-length type (so that filters
    /// such as shuffle see whole items), 1 for a compound with
    /// variable-length members of mixed bases; `None` without any.
    pub(crate) fn vector_item(&self) -> Option<usize> {
        if self.nests_vlen() {
            // Values of several bases and records among them.
            return Some(1);
        }
        match self.base() {
            Some(b) => Some(b.size()),
            None => self.has_vlen().then_some(1),
        }
    }

    /// The type of one item of a variable-length element: `uint8` for the
    /// string kinds, the base type for sequences; `None` for fixed types.
    pub fn base(&self) -> Option<Datatype> {
        match *self {
            Datatype::VlenBytes | Datatype::VlenStr | Datatype::RegionRef => Some(Datatype::UInt {
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
            Datatype::VlenOf(ref b) => Some((**b).clone()),
            _ => None,
        }
    }

    /// Bytes per element (16, the record, for variable-length types).
    pub fn size(&self) -> usize {
        match self {
            Datatype::VlenBytes
            | Datatype::VlenStr
            | Datatype::RegionRef
            | Datatype::Vlen { .. }
            | Datatype::VlenOf(_) => VLEN_RECORD,
            Datatype::Bool => 1,
            Datatype::Int { size, .. }
            | Datatype::UInt { size, .. }
            | Datatype::Float { size, .. }
            | Datatype::Complex { size, .. }
            | Datatype::Bitfield { size, .. }
            | Datatype::Time { size, .. } => *size as usize,
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
            | Datatype::Bitfield { order, .. }
            | Datatype::Time { order, .. }
            | Datatype::Vlen { order, .. } => *order,
            Datatype::Enum(e) => e.base.order(),
            Datatype::VlenOf(b) => b.order(),
            _ => ByteOrder::NATIVE,
        }
    }
}
