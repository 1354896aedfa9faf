//! Turning elements (native byte order) into text and JSON.

use arca::{Datatype, Filter};
use serde_json::{json, Value};

/// Whether elements of `dt` are fixed-size values held in their own bytes
/// (variable-length types, and compounds with such members, keep their
/// items elsewhere).
pub fn is_fixed(dt: &Datatype) -> bool {
    !dt.has_vlen()
}

/// Elements read from a dataset or attribute, native byte order.
#[derive(Debug, Clone, PartialEq)]
pub enum Elements {
    /// Fixed-size elements, `dt.size()` bytes each.
    Fixed {
        /// The element type.
        dt: Datatype,
        /// The elements back to back.
        data: Vec<u8>,
    },
    /// Variable-length elements: element `i` is items `offsets[i]..offsets[i + 1]`.
    Vlen {
        /// The element type (its base gives the item type).
        dt: Datatype,
        /// Every element's items back to back.
        values: Vec<u8>,
        /// `len + 1` offsets in items, starting at 0.
        offsets: Vec<u64>,
    },
    /// Elements of a compound with variable-length members: each member's
    /// record (offset, length) points into `values`.
    Rows {
        /// The element type.
        dt: Datatype,
        /// The elements back to back.
        data: Vec<u8>,
        /// The members' items.
        values: Vec<u8>,
    },
}

impl Elements {
    /// No elements of `dt`.
    pub fn empty(dt: Datatype) -> Self {
        if is_fixed(&dt) {
            Elements::Fixed { dt, data: vec![] }
        } else if dt.takes_rows() {
            Elements::Rows {
                dt,
                data: vec![],
                values: vec![],
            }
        } else {
            Elements::Vlen {
                dt,
                values: vec![],
                offsets: vec![0],
            }
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        match self {
            Elements::Fixed { dt, data } | Elements::Rows { dt, data, .. } => {
                data.len() / dt.size().max(1)
            }
            Elements::Vlen { offsets, .. } => offsets.len().saturating_sub(1),
        }
    }

    /// Keep the first `n` elements.
    pub fn truncate(&mut self, n: usize) {
        match self {
            // Values past the kept elements stay; nothing points at them.
            Elements::Fixed { dt, data } | Elements::Rows { dt, data, .. } => {
                data.truncate(n * dt.size())
            }
            Elements::Vlen {
                dt,
                values,
                offsets,
                ..
            } => {
                if n + 1 < offsets.len() {
                    offsets.truncate(n + 1);
                    let item = dt.base().map_or(1, |b| b.size());
                    values.truncate(offsets[n] as usize * item);
                }
            }
        }
    }

    /// Append `other`'s elements (of the same type).
    pub fn extend(&mut self, other: Elements) {
        match (self, other) {
            (Elements::Fixed { data, .. }, Elements::Fixed { data: more, .. }) => {
                data.extend_from_slice(&more)
            }
            (
                Elements::Vlen {
                    values, offsets, ..
                },
                Elements::Vlen {
                    values: v2,
                    offsets: o2,
                    ..
                },
            ) => {
                let base = offsets.last().copied().unwrap_or(0);
                let first = o2.first().copied().unwrap_or(0);
                values.extend_from_slice(&v2);
                offsets.extend(o2.iter().skip(1).map(|o| base + (o - first)));
            }
            (
                Elements::Rows {
                    dt, data, values, ..
                },
                Elements::Rows {
                    data: mut more,
                    values: v2,
                    ..
                },
            ) => {
                // The new elements' records move past the values held.
                let shift = values.len() as u64;
                let size = dt.size().max(1);
                for e in more.chunks_exact_mut(size) {
                    for (off, _) in dt.vlen_slots() {
                        if let Some(r) = e.get_mut(off..off + 8) {
                            let o = u64::from_le_bytes(r.try_into().unwrap_or([0; 8]));
                            r.copy_from_slice(&(o + shift).to_le_bytes());
                        }
                    }
                }
                data.extend_from_slice(&more);
                values.extend_from_slice(&v2);
            }
            // Callers extend only with elements read from the same object.
            _ => {}
        }
    }

    /// The element type.
    pub(crate) fn dt(&self) -> &Datatype {
        match self {
            Elements::Fixed { dt, .. } | Elements::Vlen { dt, .. } | Elements::Rows { dt, .. } => {
                dt
            }
        }
    }

    /// Where variable-length members' items are, for rows.
    pub(crate) fn heap(&self) -> &[u8] {
        match self {
            Elements::Rows { values, .. } => values,
            _ => &[],
        }
    }

    /// The bytes of element `i`: the element, or its items.
    pub(crate) fn bytes(&self, i: usize) -> &[u8] {
        match self {
            Elements::Fixed { dt, data } | Elements::Rows { dt, data, .. } => {
                let n = dt.size();
                data.get(i * n..(i + 1) * n).unwrap_or(&[])
            }
            Elements::Vlen {
                dt,
                values,
                offsets,
            } => {
                let item = dt.base().map_or(1, |b| b.size());
                let (a, b) = (offsets[i] as usize * item, offsets[i + 1] as usize * item);
                values.get(a..b).unwrap_or(&[])
            }
        }
    }

    /// Element `i` as text; sequences as `[1, 2, 3]`.
    pub fn text(&self, i: usize) -> String {
        let b = self.bytes(i);
        match self.dt() {
            Datatype::VlenStr | Datatype::VlenBytes => quote(b),
            Datatype::RegionRef => region_text(b),
            dt if !dt.is_vlen() || dt.takes_rows() => text_in(dt, b, self.heap()),
            dt => match dt.base() {
                Some(base) => {
                    let items: Vec<String> = b
                        .chunks_exact(base.size())
                        .map(|e| text(&base, e))
                        .collect();
                    format!("[{}]", items.join(", "))
                }
                None => "?".into(),
            },
        }
    }

    /// Element `i` as JSON; sequences as arrays.
    pub fn json(&self, i: usize) -> Value {
        let b = self.bytes(i);
        match self.dt() {
            Datatype::VlenStr | Datatype::VlenBytes => bytes_json(b),
            Datatype::RegionRef => region_json(b),
            dt if !dt.is_vlen() || dt.takes_rows() => json_in(dt, b, self.heap()),
            dt => match dt.base() {
                Some(base) => Value::Array(
                    b.chunks_exact(base.size())
                        .map(|e| json(&base, e))
                        .collect(),
                ),
                None => Value::Null,
            },
        }
    }

    /// Every element as JSON, in order.
    pub fn json_list(&self) -> Vec<Value> {
        (0..self.len()).map(|i| self.json(i)).collect()
    }
}

/// One fixed-size element of `dt`, given as its native-order bytes, as text:
/// numbers, `true`/`false`, quoted strings, `(1+2j)` for complex numbers,
/// an enum's member name, `[…]` for arrays, `{name: …}` for compounds and
/// `0x…` for opaque bytes.
pub fn text(dt: &Datatype, b: &[u8]) -> String {
    text_in(dt, b, &[])
}

/// The items a variable-length member's record at the start of `b`
/// points to in `heap` (nothing for a record outside it).
fn items<'a>(b: &[u8], heap: &'a [u8]) -> &'a [u8] {
    let word = |i: usize| {
        b.get(i..i + 8)
            .map_or(0, |w| u64::from_le_bytes(w.try_into().unwrap_or([0; 8])))
    };
    let (o, l) = (word(0), word(8));
    o.checked_add(l)
        .and_then(|e| heap.get(o as usize..e as usize))
        .unwrap_or(&[])
}

/// [`text`] of an element whose variable-length members' items are in `heap`.
fn text_in(dt: &Datatype, b: &[u8], heap: &[u8]) -> String {
    match dt {
        Datatype::Bool => (if b.first().copied().unwrap_or(0) != 0 {
            "true"
        } else {
            "false"
        })
        .into(),
        Datatype::Int { size, .. } => signed(*size, b).to_string(),
        Datatype::UInt { size, .. }
        | Datatype::Bitfield { size, .. }
        | Datatype::Time { size, .. } => unsigned(*size, b).to_string(),
        Datatype::Float { size, .. } => {
            let v = float(*size, b);
            match size {
                2 => float_text(half::f16::from_f64(v).to_f32(), v.abs()),
                4 => float_text(v as f32, v.abs()),
                _ => float_text(v, v.abs()),
            }
        }
        Datatype::Complex { size, .. } => {
            let h = *size as usize / 2;
            let part = |x: &[u8]| text(&Datatype::float(h as u8), x);
            let (re, im) = (part(&b[..h.min(b.len())]), part(b.get(h..).unwrap_or(&[])));
            if im.starts_with('-') || im.starts_with('+') {
                format!("({re}{im}j)")
            } else {
                format!("({re}+{im}j)")
            }
        }
        Datatype::FixedBytes { pad, .. } => quote(pad.trim(b)),
        Datatype::Opaque { .. } => format!("0x{}", hex(b)),
        Datatype::Enum(e) => {
            let v = enum_value(&e.base, b);
            match e.name_of(v) {
                Some(n) => n.to_string(),
                None => v.to_string(),
            }
        }
        Datatype::Array(a) => {
            let items: Vec<String> = b
                .chunks_exact(a.base.size().max(1))
                .map(|x| text(&a.base, x))
                .collect();
            nest_text(&a.dims, &items)
        }
        Datatype::Compound(c) => {
            let parts: Vec<String> = c
                .fields
                .iter()
                .map(|f| format!("{}: {}", f.name, text_in(&f.dtype, member(b, f), heap)))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
        Datatype::Reference => match unsigned(8, b) {
            0 => "null".into(),
            id => format!("ref {id}"),
        },
        Datatype::VlenBytes | Datatype::VlenStr => quote(items(b, heap)),
        Datatype::RegionRef => region_text(items(b, heap)),
        Datatype::Vlen { .. } | Datatype::VlenOf(_) => {
            let base = dt.base().unwrap_or(Datatype::uint(1));
            let parts: Vec<String> = items(b, heap)
                .chunks_exact(base.size().max(1))
                .map(|x| text_in(&base, x, heap))
                .collect();
            format!("[{}]", parts.join(", "))
        }
    }
}

/// A region reference as text: `null`, or the dataset's id and the
/// selection (`points`, per-dimension `start:stride:count:block`, `boxes`).
fn region_text(b: &[u8]) -> String {
    if b.is_empty() {
        return "null".into();
    }
    let Ok(r) = arca::RegionRef::from_bytes(b) else {
        return "(damaged region reference)".into();
    };
    format!("region of {} {}", r.object, selection_text(&r.region))
}

/// A selection as text: its dims, then `all`, `none`, `points [...]`,
/// `hyperslab [start:stride:count:block, ...]` (`*` for an unlimited
/// count) or `boxes [...]`.
pub fn selection_text(r: &arca::Region) -> String {
    let dims: Vec<String> = r.dims.iter().map(u64::to_string).collect();
    let sel = match &r.selection {
        arca::RegionSelection::None => "none".to_string(),
        arca::RegionSelection::All => "all".to_string(),
        arca::RegionSelection::Points(p) => format!("points {p:?}"),
        arca::RegionSelection::Hyperslab(d) => {
            let s: Vec<String> = d
                .iter()
                .map(|s| {
                    let count = if s.count == arca::UNLIMITED {
                        "*".to_string()
                    } else {
                        s.count.to_string()
                    };
                    format!("{}:{}:{count}:{}", s.start, s.stride, s.block)
                })
                .collect();
            format!("hyperslab [{}]", s.join(", "))
        }
        arca::RegionSelection::Blocks(b) => format!("boxes {b:?}"),
    };
    format!("({}) {sel}", dims.join("×"))
}

/// A region reference as JSON: null, or its object, dims and selection.
fn region_json(b: &[u8]) -> Value {
    if b.is_empty() {
        return Value::Null;
    }
    let Ok(r) = arca::RegionRef::from_bytes(b) else {
        return json!({ "hex": hex(b) });
    };
    let sel = match &r.region.selection {
        arca::RegionSelection::None => json!("none"),
        arca::RegionSelection::All => json!("all"),
        arca::RegionSelection::Points(p) => json!({ "points": p }),
        arca::RegionSelection::Hyperslab(d) => json!({
            "hyperslab": d.iter().map(|s| json!({
                "start": s.start, "stride": s.stride, "count": s.count, "block": s.block,
            })).collect::<Vec<_>>()
        }),
        arca::RegionSelection::Blocks(b) => json!({ "boxes": b }),
    };
    json!({ "region": { "object": r.object, "dims": r.region.dims, "selection": sel } })
}

/// The bytes of compound member `f` within element `b`.
fn member<'a>(b: &'a [u8], f: &arca::Field) -> &'a [u8] {
    let at = f.offset as usize;
    b.get(at..at + f.dtype.size()).unwrap_or(&[])
}

/// Items of an array element, nested by its extents: `[[1, 2], [3, 4]]`.
fn nest_text(dims: &[u32], items: &[String]) -> String {
    match dims {
        [] | [_] => format!("[{}]", items.join(", ")),
        [_, rest @ ..] => {
            let inner: usize = rest.iter().map(|&d| d as usize).product();
            let parts: Vec<String> = items
                .chunks(inner.max(1))
                .map(|c| nest_text(rest, c))
                .collect();
            format!("[{}]", parts.join(", "))
        }
    }
}

fn nest_json(dims: &[u32], items: Vec<Value>) -> Value {
    match dims {
        [] | [_] => Value::Array(items),
        [_, rest @ ..] => {
            let inner: usize = rest.iter().map(|&d| d as usize).product();
            Value::Array(
                items
                    .chunks(inner.max(1))
                    .map(|c| nest_json(rest, c.to_vec()))
                    .collect(),
            )
        }
    }
}

/// A byte string as JSON: a string when it is UTF-8, else `{"hex": "..."}`.
fn bytes_json(b: &[u8]) -> Value {
    match std::str::from_utf8(b) {
        Ok(t) => Value::String(t.into()),
        Err(_) => json!({ "hex": hex(b) }),
    }
}

/// One fixed-size element as JSON: numbers, booleans, strings; non-finite
/// floats as the strings "NaN", "Infinity" and "-Infinity" (JSON has no
/// such numbers); byte strings that are not UTF-8 and opaque bytes as
/// `{"hex": "..."}`; complex numbers as `{"real": …, "imag": …}`; an enum
/// as its member name (its number if it has none); arrays as nested
/// arrays and compounds as objects.
pub fn json(dt: &Datatype, b: &[u8]) -> Value {
    json_in(dt, b, &[])
}

/// [`json`] of an element whose variable-length members' items are in `heap`.
fn json_in(dt: &Datatype, b: &[u8], heap: &[u8]) -> Value {
    match dt {
        Datatype::Bool => Value::Bool(b.first().copied().unwrap_or(0) != 0),
        Datatype::Int { size, .. } => json!(signed(*size, b)),
        Datatype::UInt { size, .. }
        | Datatype::Bitfield { size, .. }
        | Datatype::Time { size, .. } => json!(unsigned(*size, b)),
        Datatype::Float { size, .. } => float_json(float(*size, b)),
        Datatype::Complex { size, .. } => {
            let h = *size / 2;
            json!({
                "real": float_json(float(h, b)),
                "imag": float_json(float(h, b.get(h as usize..).unwrap_or(&[]))),
            })
        }
        Datatype::FixedBytes { pad, .. } => bytes_json(pad.trim(b)),
        Datatype::Opaque { .. } => json!({ "hex": hex(b) }),
        Datatype::Enum(e) => {
            let v = enum_value(&e.base, b);
            match e.name_of(v) {
                Some(n) => json!(n),
                None => json!(v as i64),
            }
        }
        Datatype::Array(a) => {
            let items = b
                .chunks_exact(a.base.size().max(1))
                .map(|x| json(&a.base, x))
                .collect();
            nest_json(&a.dims, items)
        }
        Datatype::Compound(c) => Value::Object(
            c.fields
                .iter()
                .map(|f| (f.name.clone(), json_in(&f.dtype, member(b, f), heap)))
                .collect(),
        ),
        Datatype::Reference => match unsigned(8, b) {
            0 => Value::Null,
            id => json!({ "ref": id }),
        },
        Datatype::VlenBytes | Datatype::VlenStr => bytes_json(items(b, heap)),
        Datatype::RegionRef => region_json(items(b, heap)),
        Datatype::Vlen { .. } | Datatype::VlenOf(_) => {
            let base = dt.base().unwrap_or(Datatype::uint(1));
            Value::Array(
                items(b, heap)
                    .chunks_exact(base.size().max(1))
                    .map(|x| json_in(&base, x, heap))
                    .collect(),
            )
        }
    }
}

/// A filter pipeline as text: `shuffle+zstd(3)`, or `none`.
pub fn filters_text(filters: &[Filter]) -> String {
    if filters.is_empty() {
        return "none".into();
    }
    filters
        .iter()
        .map(|f| match (f, f.level()) {
            (Filter::Hdf5(h), _) => format!("{}(hdf5 {})", h.name(), h.id),
            (_, Some(l)) => format!("{}({l})", f.name()),
            (_, None) => f.name().to_string(),
        })
        .collect::<Vec<_>>()
        .join("+")
}

/// A filter pipeline as JSON: `[{"name": "zstd", "level": 3}, ...]`; an
/// HDF5 filter adds `hdf5_id`, `params` and `optional`.
pub fn filters_json(filters: &[Filter]) -> Value {
    Value::Array(
        filters
            .iter()
            .map(|f| match f {
                Filter::Hdf5(h) => json!({
                    "name": f.name(), "level": null, "hdf5_id": h.id,
                    "params": h.params, "optional": h.optional(),
                }),
                f => json!({ "name": f.name(), "level": f.level() }),
            })
            .collect(),
    )
}

/// `{4, 3}` or, with a maxshape, `{4/Inf, 3}` as h5ls writes extents;
/// `{SCALAR}` for rank 0.
pub fn shape_text(shape: &[u64], maxshape: Option<&[Option<u64>]>) -> String {
    if shape.is_empty() {
        return "{SCALAR}".into();
    }
    let parts: Vec<String> = shape
        .iter()
        .enumerate()
        .map(|(i, s)| match maxshape.and_then(|m| m.get(i)) {
            Some(None) => format!("{s}/Inf"),
            Some(Some(m)) if m != s => format!("{s}/{m}"),
            _ => s.to_string(),
        })
        .collect();
    format!("{{{}}}", parts.join(", "))
}

/// A maxshape as JSON: numbers, `null` for unlimited.
pub fn maxshape_json(maxshape: &[Option<u64>]) -> Value {
    Value::Array(maxshape.iter().map(|m| json!(m)).collect())
}

/// Shortest text that reads back to the same value; exponent form for very
/// large or small magnitudes, which plain digits would spell out at length.
fn float_text<F: std::fmt::Display + std::fmt::LowerExp>(v: F, abs: f64) -> String {
    if abs != 0.0 && abs.is_finite() && !(1e-5..1e16).contains(&abs) {
        format!("{v:e}")
    } else {
        v.to_string()
    }
}

fn float_json(v: f64) -> Value {
    if v.is_nan() {
        json!("NaN")
    } else if v.is_infinite() {
        json!(if v > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        json!(v)
    }
}

fn arr<const N: usize>(b: &[u8]) -> [u8; N] {
    let mut a = [0u8; N];
    let n = b.len().min(N);
    a[..n].copy_from_slice(&b[..n]);
    a
}

pub(crate) fn signed(size: u8, b: &[u8]) -> i64 {
    match size {
        1 => i8::from_ne_bytes(arr(b)) as i64,
        2 => i16::from_ne_bytes(arr(b)) as i64,
        4 => i32::from_ne_bytes(arr(b)) as i64,
        _ => i64::from_ne_bytes(arr(b)),
    }
}

/// A float of `size` bytes (2, 4 or 8), widened.
pub(crate) fn float(size: u8, b: &[u8]) -> f64 {
    match size {
        2 => half::f16::from_ne_bytes(arr(b)).to_f64(),
        4 => f32::from_ne_bytes(arr(b)) as f64,
        16 => arca::extended_to_f64(b),
        _ => f64::from_ne_bytes(arr(b)),
    }
}

/// An enum element's value, by its integer base.
fn enum_value(base: &Datatype, b: &[u8]) -> i128 {
    match base {
        Datatype::Int { size, .. } => signed(*size, b) as i128,
        Datatype::UInt { size, .. } => unsigned(*size, b) as i128,
        _ => 0,
    }
}

pub(crate) fn unsigned(size: u8, b: &[u8]) -> u64 {
    match size {
        1 => u8::from_ne_bytes(arr(b)) as u64,
        2 => u16::from_ne_bytes(arr(b)) as u64,
        4 => u32::from_ne_bytes(arr(b)) as u64,
        _ => u64::from_ne_bytes(arr(b)),
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|c| format!("{c:02x}")).collect()
}

/// A double-quoted string: UTF-8 text as is, control characters and bytes
/// that are not UTF-8 escaped, so every value stays on one line.
fn quote(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len() + 2);
    s.push('"');
    for chunk in b.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '"' => s.push_str("\\\""),
                '\\' => s.push_str("\\\\"),
                '\n' => s.push_str("\\n"),
                '\t' => s.push_str("\\t"),
                '\r' => s.push_str("\\r"),
                c if c.is_control() => s.push_str(&format!("\\u{{{:x}}}", c as u32)),
                c => s.push(c),
            }
        }
        for byte in chunk.invalid() {
            s.push_str(&format!("\\x{byte:02x}"));
        }
    }
    s.push('"');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variable_length_elements() {
        let mut e = Elements::Vlen {
            dt: Datatype::VlenStr,
            values: b"abcd\"e".to_vec(),
            offsets: vec![0, 2, 2, 6],
        };
        assert_eq!(e.len(), 3);
        assert_eq!(e.text(0), "\"ab\"");
        assert_eq!(e.text(1), "\"\"");
        assert_eq!(e.text(2), "\"cd\\\"e\"");
        assert_eq!(e.json(2), json!("cd\"e"));
        e.extend(Elements::Vlen {
            dt: Datatype::VlenStr,
            values: b"xyz".to_vec(),
            offsets: vec![0, 3],
        });
        assert_eq!(e.len(), 4);
        assert_eq!(e.text(3), "\"xyz\"");
        e.truncate(1);
        assert_eq!(e.json_list(), vec![json!("ab")]);

        let dt = Datatype::vlen(Datatype::int(2)).unwrap();
        let vals: Vec<u8> = [1i16, -2, 3].iter().flat_map(|v| v.to_ne_bytes()).collect();
        let r = Elements::Vlen {
            dt,
            values: vals,
            offsets: vec![0, 2, 2, 3],
        };
        assert_eq!(r.text(0), "[1, -2]");
        assert_eq!(r.text(1), "[]");
        assert_eq!(r.json(2), json!([3]));

        let mut f = Elements::Fixed {
            dt: Datatype::uint(1),
            data: vec![1, 2, 3],
        };
        f.extend(Elements::Fixed {
            dt: Datatype::uint(1),
            data: vec![4],
        });
        f.truncate(3);
        assert_eq!(f.json_list(), vec![json!(1), json!(2), json!(3)]);
        assert_eq!(Elements::empty(Datatype::VlenBytes).len(), 0);
    }

    #[test]
    fn numbers_and_bools() {
        assert_eq!(text(&Datatype::int(2), &(-5i16).to_ne_bytes()), "-5");
        assert_eq!(
            text(&Datatype::uint(8), &u64::MAX.to_ne_bytes()),
            "18446744073709551615"
        );
        assert_eq!(text(&Datatype::float(4), &1.5f32.to_ne_bytes()), "1.5");
        assert_eq!(text(&Datatype::float(8), &0.1f64.to_ne_bytes()), "0.1");
        assert_eq!(text(&Datatype::float(8), &1e300f64.to_ne_bytes()), "1e300");
        assert_eq!(
            text(&Datatype::float(8), &(-2.5e-9f64).to_ne_bytes()),
            "-2.5e-9"
        );
        assert_eq!(
            text(&Datatype::float(4), &3e10f32.to_ne_bytes()),
            "30000000000"
        );
        assert_eq!(
            text(&Datatype::float(8), &f64::INFINITY.to_ne_bytes()),
            "inf"
        );
        assert_eq!(text(&Datatype::Bool, &[1]), "true");
        assert_eq!(json(&Datatype::Bool, &[0]), Value::Bool(false));
        assert_eq!(
            json(&Datatype::float(8), &f64::NAN.to_ne_bytes()),
            json!("NaN")
        );
        assert_eq!(
            json(&Datatype::float(4), &f32::NEG_INFINITY.to_ne_bytes()),
            json!("-Infinity")
        );
    }

    #[test]
    fn structured_types() {
        let c = Datatype::parse(
            r#"struct(20){"id"@0:|u1,"c"@4:<c8,"xy"@12:[2,2]<f2,"e"@1:enum(|i1){"ON":1,"OFF":0}}"#,
        )
        .unwrap();
        let mut b = vec![0u8; 20];
        b[0] = 7;
        b[1] = 1;
        b[4..8].copy_from_slice(&1.5f32.to_ne_bytes());
        b[8..12].copy_from_slice(&(-2f32).to_ne_bytes());
        for (i, v) in [1.0f32, 2.0, 0.5, -1.0].iter().enumerate() {
            b[12 + 2 * i..14 + 2 * i].copy_from_slice(&half::f16::from_f32(*v).to_ne_bytes());
        }
        assert_eq!(
            text(&c, &b),
            "{id: 7, c: (1.5-2j), xy: [[1, 2], [0.5, -1]], e: ON}"
        );
        assert_eq!(
            json(&c, &b),
            json!({"id": 7, "c": {"real": 1.5, "imag": -2.0}, "xy": [[1.0, 2.0], [0.5, -1.0]], "e": "ON"})
        );
        let o = Datatype::parse("|V2").unwrap();
        assert_eq!(text(&o, &[0xab, 1]), "0xab01");
        assert_eq!(json(&o, &[0xab, 1]), json!({"hex": "ab01"}));
    }

    #[test]
    fn strings() {
        let dt = Datatype::bytes(8);
        assert_eq!(text(&dt, b"ab\"c\0\0\0\0"), "\"ab\\\"c\"");
        assert_eq!(text(&dt, b"a\nb\xff\0\0\0\0"), "\"a\\nb\\xff\"");
        assert_eq!(text(&dt, "µm\0\0\0\0\0\0".as_bytes()), "\"µm\"");
        assert_eq!(json(&dt, b"ok\0\0\0\0\0\0"), json!("ok"));
        assert_eq!(json(&dt, b"\xff\xfe\0\0\0\0\0\0"), json!({"hex": "fffe"}));
    }

    #[test]
    fn shapes_and_filters() {
        assert_eq!(shape_text(&[4, 3], None), "{4, 3}");
        assert_eq!(shape_text(&[4, 3], Some(&[None, Some(3)])), "{4/Inf, 3}");
        assert_eq!(shape_text(&[], None), "{SCALAR}");
        assert_eq!(
            filters_text(&[Filter::Shuffle, Filter::Zstd(3)]),
            "shuffle+zstd(3)"
        );
        assert_eq!(filters_text(&[]), "none");
    }
}
