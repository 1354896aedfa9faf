//! Element types and their on-disk encoding.
//!
//! Encoding (8 bytes):
//! ```text
//! +0 u8  class   0 bool, 1 signed int, 2 unsigned int, 3 float, 4 fixed byte string
//! +1 u8  order   0 little-endian, 1 big-endian (ignored for bool and strings)
//! +2 u16 reserved (0)
//! +4 u32 size    bytes per element
//! ```
//! Class 5 is variable-length: `+2 u16` is the kind (0 byte string, 1 UTF-8
//! string, 2 sequence of the base type), `size` is 16 (the element's
//! `(offset, length)` record), and the base type's 8-byte encoding follows
//! (`|u1` for the two string kinds), 16 bytes in all.

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
/// ```
/// use arca::{ByteOrder, Datatype};
/// let t = Datatype::parse("<f8").unwrap();
/// assert_eq!(t, Datatype::Float { size: 8, order: ByteOrder::Little });
/// assert_eq!(Datatype::parse(">u2").unwrap().to_numpy_str(), ">u2");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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
    /// IEEE 754 float of 4 or 8 bytes.
    Float {
        /// Bytes per element.
        size: u8,
        /// On-disk byte order.
        order: ByteOrder,
    },
    /// A fixed number of bytes per element, zero-padded.
    FixedBytes {
        /// Bytes per element (1 ..= 65536).
        len: u32,
    },
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
}

/// Bytes of one variable-length element's record in its dataset: u64 offset
/// and u64 length into the dataset's byte vector.
pub const VLEN_RECORD: usize = 16;

/// Longest fixed-length byte string element.
pub const MAX_FIXED_BYTES: u32 = 1 << 16;

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
    /// Native-order float of `size` bytes (4 or 8).
    pub fn float(size: u8) -> Self {
        Datatype::Float {
            size,
            order: ByteOrder::NATIVE,
        }
    }

    /// A variable-length sequence of `base`, which must be numeric or bool.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for strings or variable-length bases.
    pub fn vlen(base: Datatype) -> Result<Self> {
        base.validate()?;
        let (class, size, order) = match base {
            Datatype::Bool => (BaseClass::Bool, 1, ByteOrder::NATIVE),
            Datatype::Int { size, order } => (BaseClass::Int, size, order),
            Datatype::UInt { size, order } => (BaseClass::UInt, size, order),
            Datatype::Float { size, order } => (BaseClass::Float, size, order),
            other => {
                return Err(Error::invalid(format!(
                    "a variable-length sequence needs a numeric base type, not {other}"
                )))
            }
        };
        Ok(Datatype::Vlen { class, size, order })
    }

    /// Whether elements are variable-length (strings or sequences).
    pub fn is_vlen(&self) -> bool {
        matches!(
            self,
            Datatype::VlenBytes | Datatype::VlenStr | Datatype::Vlen { .. }
        )
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
            }),
            _ => None,
        }
    }

    /// Bytes per element (16, the record, for variable-length types).
    pub fn size(&self) -> usize {
        match *self {
            Datatype::VlenBytes | Datatype::VlenStr | Datatype::Vlen { .. } => VLEN_RECORD,
            Datatype::Bool => 1,
            Datatype::Int { size, .. }
            | Datatype::UInt { size, .. }
            | Datatype::Float { size, .. } => size as usize,
            Datatype::FixedBytes { len } => len as usize,
        }
    }

    /// Byte order on disk; single-byte and string types report native.
    pub fn order(&self) -> ByteOrder {
        match *self {
            Datatype::Int { order, .. }
            | Datatype::UInt { order, .. }
            | Datatype::Float { order, .. }
            | Datatype::Vlen { order, .. } => order,
            _ => ByteOrder::NATIVE,
        }
    }

    /// The same type in native byte order: the in-memory form of its values.
    pub fn native(&self) -> Self {
        self.with_order(ByteOrder::NATIVE)
    }

    /// The same type with another byte order (no effect on bool and strings).
    pub fn with_order(&self, order: ByteOrder) -> Self {
        match *self {
            Datatype::Int { size, .. } => Datatype::Int { size, order },
            Datatype::UInt { size, .. } => Datatype::UInt { size, order },
            Datatype::Float { size, .. } => Datatype::Float { size, order },
            Datatype::Vlen { class, size, .. } => Datatype::Vlen { class, size, order },
            other => other,
        }
    }

    /// Whether elements must be byte-swapped between disk and memory
    /// (never for variable-length types, whose records are always
    /// little-endian; see [`Datatype::base`] for their items).
    pub fn needs_swap(&self) -> bool {
        self.size() > 1
            && self.order() != ByteOrder::NATIVE
            && !matches!(self, Datatype::FixedBytes { .. })
            && !self.is_vlen()
    }

    /// Check sizes are ones this type class allows.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for e.g. a 3-byte integer or a 2-byte float.
    pub fn validate(&self) -> Result<()> {
        let ok = match *self {
            Datatype::Bool => true,
            Datatype::Int { size, .. } | Datatype::UInt { size, .. } => {
                matches!(size, 1 | 2 | 4 | 8)
            }
            Datatype::Float { size, .. } => matches!(size, 4 | 8),
            Datatype::FixedBytes { len } => (1..=MAX_FIXED_BYTES).contains(&len),
            Datatype::VlenBytes | Datatype::VlenStr => true,
            Datatype::Vlen { class, size, .. } => match class {
                BaseClass::Bool => size == 1,
                BaseClass::Int | BaseClass::UInt => matches!(size, 1 | 2 | 4 | 8),
                BaseClass::Float => matches!(size, 4 | 8),
            },
        };
        if ok {
            Ok(())
        } else {
            Err(Error::invalid(format!("unsupported datatype {self:?}")))
        }
    }

    /// Parse a numpy type string: `<f8`, `>i4`, `|u1`, `?`, `|b1`, `S10`, `|S3`,
    /// or the names `float64`, `int32`, `bool`, …; variable-length types are
    /// `vlen:str`, `vlen:bytes` and `vlen:` followed by a base (`vlen:<f4`).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for anything else.
    pub fn parse(s: &str) -> Result<Self> {
        let bad = || Error::invalid(format!("unknown datatype {s:?}"));
        if let Some(base) = s.strip_prefix("vlen:") {
            return match base {
                "str" => Ok(Datatype::VlenStr),
                "bytes" => Ok(Datatype::VlenBytes),
                b => Datatype::vlen(Datatype::parse(b)?),
            };
        }
        let named = match s {
            "bool" | "?" => Some(Datatype::Bool),
            "int8" => Some(Datatype::int(1)),
            "int16" => Some(Datatype::int(2)),
            "int32" => Some(Datatype::int(4)),
            "int64" => Some(Datatype::int(8)),
            "uint8" => Some(Datatype::uint(1)),
            "uint16" => Some(Datatype::uint(2)),
            "uint32" => Some(Datatype::uint(4)),
            "uint64" => Some(Datatype::uint(8)),
            "float32" => Some(Datatype::float(4)),
            "float64" => Some(Datatype::float(8)),
            _ => None,
        };
        if let Some(t) = named {
            return Ok(t);
        }
        let (order, rest) = match s.as_bytes().first() {
            Some(b'<') => (ByteOrder::Little, &s[1..]),
            Some(b'>') => (ByteOrder::Big, &s[1..]),
            Some(b'=') => (ByteOrder::NATIVE, &s[1..]),
            Some(b'|') => (ByteOrder::NATIVE, &s[1..]),
            _ => (ByteOrder::NATIVE, s),
        };
        let mut chars = rest.chars();
        let kind = chars.next().ok_or_else(bad)?;
        let n: u32 = chars.as_str().parse().map_err(|_| bad())?;
        let t = match kind {
            'b' if n == 1 => Datatype::Bool,
            'i' => Datatype::Int {
                size: u8::try_from(n).map_err(|_| bad())?,
                order,
            },
            'u' => Datatype::UInt {
                size: u8::try_from(n).map_err(|_| bad())?,
                order,
            },
            'f' => Datatype::Float {
                size: u8::try_from(n).map_err(|_| bad())?,
                order,
            },
            'S' => Datatype::FixedBytes { len: n },
            _ => return Err(bad()),
        };
        t.validate()?;
        Ok(t)
    }

    /// The numpy type string for this type, with explicit byte order.
    pub fn to_numpy_str(&self) -> String {
        let o = |order: ByteOrder| if order == ByteOrder::Little { '<' } else { '>' };
        match *self {
            Datatype::Bool => "|b1".into(),
            Datatype::Int { size: 1, .. } => "|i1".into(),
            Datatype::UInt { size: 1, .. } => "|u1".into(),
            Datatype::Int { size, order } => format!("{}i{size}", o(order)),
            Datatype::UInt { size, order } => format!("{}u{size}", o(order)),
            Datatype::Float { size, order } => format!("{}f{size}", o(order)),
            Datatype::FixedBytes { len } => format!("|S{len}"),
            Datatype::VlenBytes => "vlen:bytes".into(),
            Datatype::VlenStr => "vlen:str".into(),
            Datatype::Vlen { .. } => match self.base() {
                Some(b) => format!("vlen:{}", b.to_numpy_str()),
                None => "vlen:?".into(),
            },
        }
    }

    pub(crate) fn encode(&self, w: &mut Writer) {
        if let Some(base) = self.base() {
            let kind = match self {
                Datatype::VlenBytes => 0,
                Datatype::VlenStr => 1,
                _ => 2,
            };
            w.u8(5).u8(0).u16(kind).u32(VLEN_RECORD as u32);
            base.encode(w);
            return;
        }
        let (class, order) = match *self {
            Datatype::Bool => (0, ByteOrder::Little),
            Datatype::Int { order, .. } => (1, order),
            Datatype::UInt { order, .. } => (2, order),
            Datatype::Float { order, .. } => (3, order),
            Datatype::FixedBytes { .. } => (4, ByteOrder::Little),
            // Handled above; kept total so a new class cannot be forgotten.
            Datatype::VlenBytes | Datatype::VlenStr | Datatype::Vlen { .. } => {
                (5, ByteOrder::Little)
            }
        };
        w.u8(class)
            .u8(if order == ByteOrder::Big { 1 } else { 0 })
            .u16(0)
            .u32(self.size() as u32);
    }

    pub(crate) fn decode(r: &mut Reader) -> Result<Self> {
        let class = r.u8()?;
        let order = match r.u8()? {
            0 => ByteOrder::Little,
            1 => ByteOrder::Big,
            o => return Err(r.corrupt(format!("byte order {o}"))),
        };
        let kind = r.u16()?;
        let size = r.u32()?;
        if class == 5 {
            if size != VLEN_RECORD as u32 {
                return Err(r.corrupt(format!("variable-length record size {size}")));
            }
            let base = Datatype::decode(r)?;
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
        if kind != 0 || (order == ByteOrder::Big && matches!(class, 0 | 4)) {
            return Err(r.corrupt(format!(
                "datatype class {class} with kind {kind} and byte order {order:?}"
            )));
        }
        let small = || u8::try_from(size).map_err(|_| r.corrupt(format!("element size {size}")));
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
            4 => Datatype::FixedBytes { len: size },
            c if c >= 6 => {
                return Err(Error::Unsupported(format!("datatype class {c}")));
            }
            c => return Err(r.corrupt(format!("datatype class {c}"))),
        };
        t.validate()
            .map_err(|_| r.corrupt(format!("invalid datatype {t:?}")))?;
        Ok(t)
    }
}

/// Swap each `size`-byte element of `buf` in place.
pub(crate) fn swap_in_place(buf: &mut [u8], size: usize) {
    if size > 1 {
        for e in buf.chunks_exact_mut(size) {
            e.reverse();
        }
    }
}

impl std::fmt::Display for Datatype {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let o = |order: ByteOrder| {
            if order == ByteOrder::Little {
                "LE"
            } else {
                "BE"
            }
        };
        match *self {
            Datatype::Bool => write!(f, "bool"),
            Datatype::Int { size, order } => write!(f, "int{} {}", size * 8, o(order)),
            Datatype::UInt { size, order } => write!(f, "uint{} {}", size * 8, o(order)),
            Datatype::Float { size, order } => write!(f, "float{} {}", size * 8, o(order)),
            Datatype::FixedBytes { len } => write!(f, "bytes[{len}]"),
            Datatype::VlenBytes => write!(f, "vlen bytes"),
            Datatype::VlenStr => write!(f, "vlen utf8"),
            Datatype::Vlen { .. } => match self.base() {
                Some(b) => write!(f, "vlen {b}"),
                None => write!(f, "vlen"),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            "<f4",
            ">f8",
            "S7",
            "vlen:str",
            "vlen:bytes",
            "vlen:<f4",
            "vlen:>i8",
            "vlen:?",
            "vlen:|u1",
        ] {
            let t = Datatype::parse(s).unwrap();
            let mut w = Writer::new();
            t.encode(&mut w);
            let mut r = Reader::new(&w.buf, "datatype", 0);
            assert_eq!(Datatype::decode(&mut r).unwrap(), t);
        }
    }

    #[test]
    fn bad_types_rejected() {
        for s in [
            "<i3",
            "<f2",
            "x",
            "",
            "S0",
            "<q8",
            "vlen:S4",
            "vlen:vlen:str",
            "vlen:",
        ] {
            assert!(Datatype::parse(s).is_err(), "{s}");
        }
    }
}
