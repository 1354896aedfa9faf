//! Type strings: the one textual form of a [`Datatype`], read by
//! [`Datatype::parse`] and written by [`Datatype::to_numpy_str`], shared by
//! the Python package, the C API and the command line.
//!
//! ```text
//! type     := number | "S" n (":utf8" | ":nullterm" | ":spacepad")* | "V" n
//!           | opaque | enum | array | compound | vlen | bitfield | time
//! number   := order? ("b1" | "i" n | "u" n | "f" n | "c" n) | "?" | numpy name
//! order    := "<" | ">" | "=" | "|"
//! opaque   := "opaque(" n "," string ")"
//! enum     := "enum(" type "){" string ":" integer ("," …)* "}"
//! array    := "[" n ("," n)* "]" type
//! compound := "struct(" n "){" string "@" n ":" type ("," …)* "}"
//! vlen     := "vlen:str" | "vlen:bytes" | "vlen:region" | "vlen:" type
//! bitfield := "bitfield:" order? "u" n      (HDF5 bitfields: n = 1, 2, 4, 8)
//! time     := "time:" order? "u" n          (HDF5 times: n = 4, 8)
//! (and "ref", an object reference)
//! ```
//! Strings are double-quoted with JSON's escapes (`\"`, `\\`, `\n`, `\uXXXX`, …),
//! so `json.dumps` of a name is a valid string here.

use std::fmt::Write as _;

use super::{ArrayType, ByteOrder, Charset, CompoundType, Datatype, EnumType, Field, StrPad};
use crate::error::{Error, Result};

impl Datatype {
    /// Parse a type string: numpy's (`<f8`, `>i4`, `|u1`, `?`, `|b1`,
    /// `S10`, `<f2`, `<c16`, `V8`, or names such as `float64`, `complex64`)
    /// and arca's forms for what numpy spells as structures:
    /// `[3,2]<f4` (an array), `struct(12){"t"@0:<f8,"ok"@8:|b1}` (a
    /// compound: size, then name, offset and type of each member),
    /// `enum(|u1){"RED":0,"GREEN":1}`, `opaque(4,"tag")`, HDF5's
    /// `bitfield:>u2` and `time:<u8` (each with the unsigned integer its
    /// values cross as), and variable-length `vlen:str`, `vlen:bytes`,
    /// `vlen:<f4`.
    ///
    /// ```
    /// use arca::Datatype;
    /// let t = Datatype::parse(r#"struct(16){"xy"@0:[2]<f4,"id"@8:<u8}"#).unwrap();
    /// assert_eq!(t.size(), 16);
    /// assert!(Datatype::parse("<i3").is_err());
    /// let b = Datatype::parse("bitfield:>u2").unwrap();
    /// assert_eq!(b, Datatype::Bitfield { size: 2, order: arca::ByteOrder::Big });
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for anything else, or a type that does
    /// not validate.
    pub fn parse(s: &str) -> Result<Self> {
        let mut p = Parser { s, at: 0 };
        let t = p.ty(0).map_err(|why| {
            Error::invalid(format!("bad type string {s:?} at byte {}: {why}", p.at))
        })?;
        if p.at != s.len() {
            return Err(Error::invalid(format!(
                "bad type string {s:?}: unexpected {:?} at byte {}",
                &s[p.at..],
                p.at
            )));
        }
        t.validate()?;
        Ok(t)
    }

    /// The type string for this type, with explicit byte orders; parsing it
    /// gives this type back.
    pub fn to_numpy_str(&self) -> String {
        let mut out = String::new();
        self.write_str(&mut out);
        out
    }

    fn write_str(&self, out: &mut String) {
        let o = |order: ByteOrder| if order == ByteOrder::Little { '<' } else { '>' };
        match self {
            Datatype::Bool => out.push_str("|b1"),
            // One byte has no order; `>` keeps a big-endian tag exact.
            Datatype::Int { size: 1, order } if *order == ByteOrder::NATIVE => out.push_str("|i1"),
            Datatype::UInt { size: 1, order } if *order == ByteOrder::NATIVE => out.push_str("|u1"),
            Datatype::Int { size, order } => {
                let _ = write!(out, "{}i{size}", o(*order));
            }
            Datatype::UInt { size, order } => {
                let _ = write!(out, "{}u{size}", o(*order));
            }
            Datatype::Float { size, order } => {
                let _ = write!(out, "{}f{size}", o(*order));
            }
            Datatype::Complex { size, order } => {
                let _ = write!(out, "{}c{size}", o(*order));
            }
            Datatype::FixedBytes { len, cset, pad } => {
                let _ = write!(out, "|S{len}");
                if *cset == Charset::Utf8 {
                    out.push_str(":utf8");
                }
                match pad {
                    StrPad::NullPad => {}
                    StrPad::NullTerm => out.push_str(":nullterm"),
                    StrPad::SpacePad => out.push_str(":spacepad"),
                }
            }
            Datatype::Opaque { len, tag } if tag.is_empty() => {
                let _ = write!(out, "|V{len}");
            }
            Datatype::Opaque { len, tag } => {
                let _ = write!(out, "opaque({len},");
                quote(tag, out);
                out.push(')');
            }
            Datatype::Enum(e) => {
                out.push_str("enum(");
                e.base.write_str(out);
                out.push_str("){");
                for (i, (n, v)) in e.members.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    quote(n, out);
                    let _ = write!(out, ":{v}");
                }
                out.push('}');
            }
            Datatype::Array(a) => {
                out.push('[');
                for (i, d) in a.dims.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    let _ = write!(out, "{d}");
                }
                out.push(']');
                a.base.write_str(out);
            }
            Datatype::Compound(c) => {
                let _ = write!(out, "struct({}){{", c.size);
                for (i, f) in c.fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    quote(&f.name, out);
                    let _ = write!(out, "@{}:", f.offset);
                    f.dtype.write_str(out);
                }
                out.push('}');
            }
            Datatype::Reference => out.push_str("ref"),
            Datatype::Bitfield { size, order } => {
                out.push_str("bitfield:");
                Datatype::UInt {
                    size: *size,
                    order: *order,
                }
                .write_str(out);
            }
            Datatype::Time { size, order } => {
                out.push_str("time:");
                Datatype::UInt {
                    size: *size,
                    order: *order,
                }
                .write_str(out);
            }
            Datatype::VlenBytes => out.push_str("vlen:bytes"),
            Datatype::VlenStr => out.push_str("vlen:str"),
            Datatype::RegionRef => out.push_str("vlen:region"),
            Datatype::Vlen { .. } | Datatype::VlenOf(_) => {
                out.push_str("vlen:");
                if let Some(b) = self.base() {
                    b.write_str(out);
                }
            }
        }
    }
}

fn bits(bytes: u8) -> u32 {
    u32::from(bytes) * 8
}

/// Append `s` double-quoted, escaping quotes, backslashes and controls.
fn quote(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

struct Parser<'a> {
    s: &'a str,
    at: usize,
}

type P<T> = std::result::Result<T, String>;

impl Parser<'_> {
    fn rest(&self) -> &str {
        &self.s[self.at..]
    }

    fn eat(&mut self, tok: &str) -> bool {
        if self.rest().starts_with(tok) {
            self.at += tok.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, tok: &str) -> P<()> {
        if self.eat(tok) {
            Ok(())
        } else {
            Err(format!("expected {tok:?}"))
        }
    }

    /// An unsigned decimal number.
    fn num<T: std::str::FromStr>(&mut self) -> P<T> {
        let n = self.rest().bytes().take_while(u8::is_ascii_digit).count();
        let v = self.rest()[..n]
            .parse()
            .map_err(|_| "expected a number".to_string())?;
        self.at += n;
        Ok(v)
    }

    /// A possibly negative decimal integer.
    fn int(&mut self) -> P<i128> {
        let neg = self.eat("-");
        let v: i128 = self.num()?;
        Ok(if neg { -v } else { v })
    }

    fn string(&mut self) -> P<String> {
        self.expect("\"")?;
        let mut out = String::new();
        let mut chars = self.rest().char_indices();
        loop {
            let Some((i, c)) = chars.next() else {
                return Err("unterminated string".into());
            };
            match c {
                '"' => {
                    self.at += i + 1;
                    return Ok(out);
                }
                '\\' => match chars.next() {
                    Some((_, '"')) => out.push('"'),
                    Some((_, '\\')) => out.push('\\'),
                    Some((_, '/')) => out.push('/'),
                    Some((_, 'n')) => out.push('\n'),
                    Some((_, 't')) => out.push('\t'),
                    Some((_, 'r')) => out.push('\r'),
                    Some((_, 'b')) => out.push('\u{8}'),
                    Some((_, 'f')) => out.push('\u{c}'),
                    Some((_, 'u')) => {
                        let hex: String =
                            (0..4).filter_map(|_| chars.next().map(|x| x.1)).collect();
                        let c = u32::from_str_radix(&hex, 16)
                            .ok()
                            .filter(|_| hex.len() == 4)
                            .and_then(char::from_u32)
                            .ok_or("bad \\u escape")?;
                        out.push(c);
                    }
                    _ => return Err("bad escape".into()),
                },
                c => out.push(c),
            }
        }
    }

    fn ty(&mut self, depth: usize) -> P<Datatype> {
        if depth > super::MAX_TYPE_DEPTH {
            return Err("types nested too deep".into());
        }
        if self.eat("vlen:") {
            // "vlen:struct(...)" is a sequence of compounds, not strings.
            if !self.rest().starts_with("struct(") && self.eat("str") {
                return Ok(Datatype::VlenStr);
            }
            if self.eat("bytes") {
                return Ok(Datatype::VlenBytes);
            }
            if self.eat("region") {
                return Ok(Datatype::RegionRef);
            }
            let base = self.ty(depth + 1)?;
            return Datatype::vlen(base).map_err(|e| e.to_string());
        }
        for (prefix, time) in [("bitfield:", false), ("time:", true)] {
            if self.eat(prefix) {
                // The unsigned integer its values cross as.
                return match self.ty(depth + 1)? {
                    Datatype::UInt { size, order } if time => Ok(Datatype::Time { size, order }),
                    Datatype::UInt { size, order } => Ok(Datatype::Bitfield { size, order }),
                    t => Err(format!("{prefix} takes an unsigned integer, not {t}")),
                };
            }
        }
        if self.eat("struct(") {
            let size = self.num()?;
            self.expect("){")?;
            let mut fields = vec![];
            while !self.eat("}") {
                if !fields.is_empty() {
                    self.expect(",")?;
                }
                let name = self.string()?;
                self.expect("@")?;
                let offset = self.num()?;
                self.expect(":")?;
                let dtype = self.ty(depth + 1)?;
                fields.push(Field {
                    name,
                    offset,
                    dtype,
                });
            }
            return Ok(Datatype::Compound(Box::new(CompoundType { size, fields })));
        }
        if self.eat("enum(") {
            let base = self.ty(depth + 1)?;
            self.expect("){")?;
            let mut members = vec![];
            while !self.eat("}") {
                if !members.is_empty() {
                    self.expect(",")?;
                }
                let name = self.string()?;
                self.expect(":")?;
                members.push((name, self.int()?));
            }
            return Ok(Datatype::Enum(Box::new(EnumType { base, members })));
        }
        if self.eat("opaque(") {
            let len = self.num()?;
            self.expect(",")?;
            let tag = self.string()?;
            self.expect(")")?;
            return Ok(Datatype::Opaque { len, tag });
        }
        if self.eat("[") {
            let mut dims = vec![self.num()?];
            while self.eat(",") {
                dims.push(self.num()?);
            }
            self.expect("]")?;
            let base = self.ty(depth + 1)?;
            return Ok(Datatype::Array(Box::new(ArrayType { base, dims })));
        }
        for (name, t) in [
            ("bool", Datatype::Bool),
            ("int8", Datatype::int(1)),
            ("int16", Datatype::int(2)),
            ("int32", Datatype::int(4)),
            ("int64", Datatype::int(8)),
            ("uint8", Datatype::uint(1)),
            ("uint16", Datatype::uint(2)),
            ("uint32", Datatype::uint(4)),
            ("uint64", Datatype::uint(8)),
            ("float16", Datatype::float(2)),
            ("float32", Datatype::float(4)),
            ("float64", Datatype::float(8)),
            ("complex64", Datatype::complex(8)),
            ("complex128", Datatype::complex(16)),
        ] {
            // A name is whole: "int8" must not match the start of "int80".
            let r = self.rest();
            if r.starts_with(name)
                && !r[name.len()..].starts_with(|c: char| c.is_ascii_alphanumeric())
            {
                self.at += name.len();
                return Ok(t);
            }
        }
        if self.eat("?") {
            return Ok(Datatype::Bool);
        }
        if self.eat("ref") {
            return Ok(Datatype::Reference);
        }
        let order = match self.rest().as_bytes().first() {
            Some(b'<') => Some(ByteOrder::Little),
            Some(b'>') => Some(ByteOrder::Big),
            Some(b'=') | Some(b'|') => Some(ByteOrder::NATIVE),
            _ => None,
        };
        if order.is_some() {
            self.at += 1;
        }
        let order = order.unwrap_or(ByteOrder::NATIVE);
        let kind = self.rest().chars().next().ok_or("expected a type")?;
        self.at += kind.len_utf8();
        let n: u32 = self.num()?;
        let small = || u8::try_from(n).map_err(|_| format!("no {n}-byte numbers"));
        Ok(match kind {
            'b' if n == 1 => Datatype::Bool,
            'i' => Datatype::Int {
                size: small()?,
                order,
            },
            'u' => Datatype::UInt {
                size: small()?,
                order,
            },
            'f' => Datatype::Float {
                size: small()?,
                order,
            },
            'c' => Datatype::Complex {
                size: small()?,
                order,
            },
            'S' => {
                // Optional flags after the size: ":utf8", ":nullterm", ":spacepad".
                let (mut cset, mut pad) = (Charset::Ascii, StrPad::NullPad);
                loop {
                    if self.eat(":utf8") {
                        cset = Charset::Utf8;
                    } else if self.eat(":ascii") {
                        cset = Charset::Ascii;
                    } else if self.eat(":nullterm") {
                        pad = StrPad::NullTerm;
                    } else if self.eat(":nullpad") {
                        pad = StrPad::NullPad;
                    } else if self.eat(":spacepad") {
                        pad = StrPad::SpacePad;
                    } else {
                        break;
                    }
                }
                Datatype::FixedBytes { len: n, cset, pad }
            }
            'V' => Datatype::Opaque {
                len: n,
                tag: String::new(),
            },
            k => return Err(format!("unknown type code {k:?}")),
        })
    }
}

impl std::fmt::Display for Datatype {
    /// A readable name: `float32 LE`, `compound {t: float64 LE, ok: bool}`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let o = |order: ByteOrder| {
            if order == ByteOrder::Little {
                "LE"
            } else {
                "BE"
            }
        };
        match self {
            Datatype::Bool => write!(f, "bool"),
            // Widened: a type being reported as invalid may have any size.
            Datatype::Int { size, order } => write!(f, "int{} {}", bits(*size), o(*order)),
            Datatype::UInt { size, order } => write!(f, "uint{} {}", bits(*size), o(*order)),
            Datatype::Float { size, order } => write!(f, "float{} {}", bits(*size), o(*order)),
            Datatype::Complex { size, order } => {
                write!(f, "complex{} {}", bits(*size), o(*order))
            }
            Datatype::FixedBytes { len, cset, pad } => {
                write!(f, "bytes[{len}]")?;
                if *cset == Charset::Utf8 {
                    write!(f, " utf8")?;
                }
                match pad {
                    StrPad::NullPad => Ok(()),
                    StrPad::NullTerm => write!(f, " nullterm"),
                    StrPad::SpacePad => write!(f, " spacepad"),
                }
            }
            Datatype::Opaque { len, tag } if tag.is_empty() => write!(f, "opaque[{len}]"),
            Datatype::Opaque { len, tag } => write!(f, "opaque[{len}] {tag:?}"),
            Datatype::Enum(e) => {
                write!(f, "enum {} {{", e.base)?;
                for (i, (n, v)) in e.members.iter().enumerate() {
                    let sep = if i > 0 { ", " } else { "" };
                    write!(f, "{sep}{n} = {v}")?;
                }
                write!(f, "}}")
            }
            Datatype::Array(a) => {
                let dims: Vec<String> = a.dims.iter().map(u32::to_string).collect();
                write!(f, "{}[{}]", a.base, dims.join(", "))
            }
            Datatype::Compound(c) => {
                write!(f, "compound {{")?;
                for (i, m) in c.fields.iter().enumerate() {
                    let sep = if i > 0 { ", " } else { "" };
                    write!(f, "{sep}{}: {}", m.name, m.dtype)?;
                }
                write!(f, "}}")
            }
            Datatype::Reference => write!(f, "object reference"),
            Datatype::Bitfield { size, order } => {
                write!(f, "bitfield{} {}", bits(*size), o(*order))
            }
            Datatype::Time { size, order } => write!(f, "time{} {}", bits(*size), o(*order)),
            Datatype::VlenBytes => write!(f, "vlen bytes"),
            Datatype::VlenStr => write!(f, "vlen utf8"),
            Datatype::RegionRef => write!(f, "region reference"),
            Datatype::Vlen { .. } | Datatype::VlenOf(_) => match self.base() {
                Some(b) => write!(f, "vlen {b}"),
                None => write!(f, "vlen"),
            },
        }
    }
}
