//! Values as h5grove serves them: a selection of a dataset (or an
//! attribute) read through arca, then written as JSON the way h5py's numpy
//! values reach orjson, as raw bytes (`bin`) or as a `.npy` file.

use arca::{ByteOrder, Dataset, Datatype, Selection};
use serde_json::{json, Value};

use super::dtype::{dtype_str, is_numeric, item_dims, safe, scalar_of};
use super::error::ApiError;
use super::slice::Resolved;
use crate::values::{self, Elements};

/// Largest answer read for one request: a larger selection is refused
/// (413) rather than read into memory.
pub const MAX_READ_BYTES: u64 = 1 << 30;

/// Values with their shape: what h5py hands h5grove.
#[derive(Debug, Clone)]
pub enum Array {
    /// A null dataspace (h5py's `Empty`).
    Null(Datatype),
    /// Elements in row-major order.
    Values {
        /// The elements.
        elems: Elements,
        /// The shape (without an array type's own extents); empty for a scalar.
        shape: Vec<u64>,
        /// A numpy scalar rather than an array (a scalar dataset read whole).
        scalar: bool,
    },
}

/// How numbers reach orjson: numpy arrays and scalars of numbers are
/// written natively (a float32 by its shortest float32 form); anything
/// that goes through `tolist()` first (compounds, complex arrays) holds
/// Python floats, written by their float64 form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Native,
    Python,
}

/// Read the elements `r` selects from `ds` (of type `dt`).
pub fn read(ds: &Dataset, dt: &Datatype, r: &Resolved, scalar: bool) -> Result<Array, ApiError> {
    let n = r.len();
    let bytes = n.saturating_mul(dt.size() as u64);
    if bytes > MAX_READ_BYTES {
        return Err(ApiError::new(
            413,
            format!(
                "selection of {bytes} bytes is larger than the {MAX_READ_BYTES} a request may read"
            ),
        ));
    }
    let elems = if n == 0 {
        Elements::empty(dt.clone())
    } else {
        let sel = Selection::new(r.start.clone(), r.count.clone(), r.step.clone())?;
        if values::is_fixed(dt) {
            let mut data = vec![0u8; n as usize * dt.size()];
            ds.read_bytes(&sel, &mut data)?;
            Elements::Fixed {
                dt: dt.clone(),
                data,
            }
        } else if !dt.is_vlen() {
            let mut data = ds.read_rows(&sel)?;
            let values = data.split_off((n as usize * dt.size()).min(data.len()));
            Elements::Rows {
                dt: dt.clone(),
                data,
                values,
            }
        } else {
            let (values, offsets) = ds.read_ragged_bytes(&sel)?;
            Elements::Vlen {
                dt: dt.clone(),
                values,
                offsets,
            }
        }
    };
    Ok(Array::Values {
        elems,
        shape: r.shape(),
        scalar,
    })
}

impl Array {
    fn dt(&self) -> &Datatype {
        match self {
            Array::Null(dt) => dt,
            Array::Values { elems, .. } => elems.dt(),
        }
    }

    /// Whether numpy counts the values as numbers (a null dataspace is not).
    pub fn is_numeric(&self) -> bool {
        matches!(self, Array::Values { .. }) && is_numeric(self.dt())
    }

    /// `flatten=true`: every array (not a scalar) as one dimension.
    pub fn flatten(&mut self) {
        if let Array::Values {
            elems,
            shape,
            scalar: false,
        } = self
        {
            let n: u64 = shape.iter().product();
            let items: u64 = item_dims(elems.dt()).iter().product();
            *shape = vec![n * items];
            if items != 1 || matches!(elems.dt(), Datatype::Array(_)) {
                // The array type's extents are spread over the one dimension.
                let base = scalar_of(elems.dt());
                if let Elements::Fixed { data, .. } = elems {
                    *elems = Elements::Fixed {
                        dt: base,
                        data: std::mem::take(data),
                    };
                }
            }
        }
    }

    /// The values as JSON, as h5grove's orjson encoding writes them.
    pub fn json(&self) -> Value {
        let Array::Values {
            elems,
            shape,
            scalar,
        } = self
        else {
            return Value::Null;
        };
        let dt = elems.dt();
        let complex = matches!(scalar_of(dt), Datatype::Complex { .. });
        let mode = if is_numeric(dt) && (*scalar || !complex) {
            Mode::Native
        } else {
            Mode::Python
        };
        let items: Vec<Value> = (0..elems.len()).map(|i| element(elems, i, mode)).collect();
        if *scalar {
            return items.into_iter().next().unwrap_or(Value::Null);
        }
        nest(shape, items)
    }

    /// The values' bytes: numpy's `tobytes()` of what h5py read (numbers
    /// in the file's byte order), or, with `safe`, of the values converted
    /// to a type JavaScript has a typed array for.
    pub fn bytes(&self, safe_types: bool) -> Result<Vec<u8>, ApiError> {
        let Array::Values { elems, scalar, .. } = self else {
            return Err(ApiError::query(
                "Unsupported encoding for a null dataspace (it has no values)",
            ));
        };
        let Elements::Fixed { dt, data } = elems else {
            return Err(ApiError::query(
                "Unsupported encoding bin for variable-length data (use format=json)",
            ));
        };
        if let (true, Datatype::FixedBytes { .. }) = (*scalar, dt) {
            // A numpy bytes scalar drops its trailing NULs (and is at least
            // one byte long).
            let end = data.iter().rposition(|&c| c != 0).map_or(0, |i| i + 1);
            return Ok(if end == 0 {
                vec![0]
            } else {
                data[..end].to_vec()
            });
        }
        let mut out = Vec::with_capacity(data.len());
        for e in data.chunks_exact(dt.size().max(1)) {
            if safe_types {
                push_safe(dt, e, &mut out);
            } else {
                // A numpy scalar holds its number in native order.
                push_ordered(dt, e, !*scalar, &mut out);
            }
        }
        Ok(out)
    }

    /// The values as a `.npy` file (format 1.0), as `numpy.save` writes it.
    pub fn npy(&self, safe_types: bool) -> Result<Vec<u8>, ApiError> {
        if !self.is_numeric() {
            return Err(ApiError::query(
                "Unsupported encoding npy for non-numeric content",
            ));
        }
        let Array::Values {
            elems,
            shape,
            scalar,
        } = self
        else {
            unreachable!("numeric values are never null");
        };
        let scalar_dt = scalar_of(elems.dt());
        let descr = if safe_types {
            dtype_str(&safe(&scalar_dt))
        } else if *scalar {
            dtype_str(&scalar_dt.native())
        } else {
            dtype_str(&scalar_dt)
        };
        let mut dims: Vec<u64> = if *scalar { vec![] } else { shape.clone() };
        dims.extend(item_dims(elems.dt()));
        let body = self.bytes(safe_types)?;
        let shape_text = match dims.len() {
            0 => "()".to_string(),
            1 => format!("({},)", dims[0]),
            _ => format!(
                "({})",
                dims.iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        let mut header =
            format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape_text}, }}");
        // numpy pads the header with spaces so the data starts on a 64-byte boundary.
        let unpadded = 10 + header.len() + 1;
        header.push_str(&" ".repeat((64 - unpadded % 64) % 64));
        header.push('\n');
        let mut out = Vec::with_capacity(10 + header.len() + body.len());
        out.extend_from_slice(b"\x93NUMPY\x01\x00");
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(&body);
        Ok(out)
    }

    /// Every number, widened, for statistics: integers (bools as 0 and 1)
    /// or floats; None for non-numeric or complex values.
    pub fn numbers(&self) -> Option<Numbers> {
        let Array::Values {
            elems: Elements::Fixed { dt, data },
            ..
        } = self
        else {
            return None;
        };
        let base = scalar_of(dt);
        let size = base.size().max(1);
        let items = data.chunks_exact(size);
        match base {
            Datatype::Bool => Some(Numbers::Ints(
                items.map(|b| i128::from(b[0] != 0)).collect(),
            )),
            Datatype::Int { size, .. } => Some(Numbers::Ints(
                items.map(|b| i128::from(values::signed(size, b))).collect(),
            )),
            Datatype::UInt { size, .. }
            | Datatype::Bitfield { size, .. }
            | Datatype::Time { size, .. } => Some(Numbers::Ints(
                items
                    .map(|b| i128::from(values::unsigned(size, b)))
                    .collect(),
            )),
            Datatype::Float { size, .. } => Some(Numbers::Floats(
                size,
                items.map(|b| values::float(size, b)).collect(),
            )),
            _ => None,
        }
    }
}

/// Numbers for statistics.
pub enum Numbers {
    /// Integers and bools.
    Ints(Vec<i128>),
    /// Floats of the given size in bytes, widened.
    Floats(u8, Vec<f64>),
}

/// Items nested by `shape` (row-major).
fn nest(shape: &[u64], items: Vec<Value>) -> Value {
    match shape {
        [] | [_] => Value::Array(items),
        [d0, rest @ ..] => {
            let inner: u64 = rest.iter().product();
            if inner == 0 {
                return Value::Array((0..*d0).map(|_| nest(rest, vec![])).collect());
            }
            let mut out = Vec::with_capacity(*d0 as usize);
            let mut it = items.into_iter();
            for _ in 0..*d0 {
                out.push(nest(rest, it.by_ref().take(inner as usize).collect()));
            }
            Value::Array(out)
        }
    }
}

/// Element `i` of `elems` as JSON.
fn element(elems: &Elements, i: usize, mode: Mode) -> Value {
    let b = elems.bytes(i);
    match elems {
        Elements::Vlen { dt, .. } => vlen_items(dt, b),
        Elements::Fixed { dt, .. } | Elements::Rows { dt, .. } => value(dt, b, elems.heap(), mode),
    }
}

/// The items of one variable-length element: a string, or a numpy array
/// (written natively).
fn vlen_items(dt: &Datatype, items: &[u8]) -> Value {
    match dt {
        Datatype::VlenStr | Datatype::VlenBytes => text(items),
        // h5py's own spelling, unbalanced parenthesis included.
        Datatype::RegionRef if items.is_empty() => json!("<HDF5 region reference (null>"),
        Datatype::RegionRef => json!("<HDF5 region reference>"),
        _ => match dt.base() {
            Some(base) => Value::Array(
                items
                    .chunks_exact(base.size().max(1))
                    .map(|x| value(&base, x, &[], Mode::Native))
                    .collect(),
            ),
            None => Value::Null,
        },
    }
}

/// Bytes as text: h5py's bytes decoded as UTF-8 (bytes that are not UTF-8
/// become U+FFFD rather than failing the request).
fn text(b: &[u8]) -> Value {
    Value::String(String::from_utf8_lossy(b).into_owned())
}

/// A float64 as JSON (orjson writes NaN and infinities as null).
fn f64_json(v: f64) -> Value {
    if v.is_finite() {
        json!(v)
    } else {
        Value::Null
    }
}

/// A float32 as orjson writes a numpy float32: its shortest float32 digits.
fn f32_json(v: f32) -> Value {
    if !v.is_finite() {
        return Value::Null;
    }
    // Rust prints the shortest digits that read back as the same float32.
    f64_json(v.to_string().parse::<f64>().unwrap_or(f64::from(v)))
}

/// One fixed-size element (whose variable-length members' items are in `heap`).
fn value(dt: &Datatype, b: &[u8], heap: &[u8], mode: Mode) -> Value {
    match dt {
        Datatype::Bool => Value::Bool(b.first().copied().unwrap_or(0) != 0),
        Datatype::Int { size, .. } => json!(values::signed(*size, b)),
        Datatype::UInt { size, .. }
        | Datatype::Bitfield { size, .. }
        | Datatype::Time { size, .. } => json!(values::unsigned(*size, b)),
        Datatype::Float { size, .. } => {
            let v = values::float(*size, b);
            if *size < 8 && mode == Mode::Native {
                f32_json(v as f32)
            } else {
                f64_json(v)
            }
        }
        Datatype::Complex { size, .. } => {
            let h = (*size / 2) as usize;
            let part = Datatype::float(*size / 2);
            Value::Array(vec![
                value(&part, b.get(..h).unwrap_or(&[]), heap, mode),
                value(&part, b.get(h..).unwrap_or(&[]), heap, mode),
            ])
        }
        // numpy's `S` strips trailing NULs only.
        Datatype::FixedBytes { .. } => {
            let end = b.iter().rposition(|&c| c != 0).map_or(0, |i| i + 1);
            text(&b[..end])
        }
        Datatype::Opaque { .. } => text(b),
        Datatype::Enum(e) => value(&e.base, b, heap, mode),
        Datatype::Array(a) => {
            let items: Vec<Value> = b
                .chunks_exact(a.base.size().max(1))
                .map(|x| value(&a.base, x, heap, mode))
                .collect();
            let dims: Vec<u64> = a.dims.iter().map(|&d| u64::from(d)).collect();
            nest(&dims, items)
        }
        Datatype::Compound(c) => Value::Array(
            c.fields
                .iter()
                .map(|f| {
                    let at = f.offset as usize;
                    let m = b.get(at..at + f.dtype.size()).unwrap_or(&[]);
                    value(&f.dtype, m, heap, Mode::Python)
                })
                .collect(),
        ),
        Datatype::Reference => match values::unsigned(8, b) {
            0 => json!("<HDF5 object reference (null)>"),
            _ => json!("<HDF5 object reference>"),
        },
        // Stored as a variable-length element: its record's length says
        // whether it is the null reference.
        Datatype::RegionRef => {
            let len = values::unsigned(8, b.get(8..16).unwrap_or(&[0; 8]));
            vlen_items(dt, if len == 0 { &[] } else { &[0] })
        }
        Datatype::VlenBytes | Datatype::VlenStr | Datatype::Vlen { .. } | Datatype::VlenOf(_) => {
            let word = |i: usize| values::unsigned(8, b.get(i..i + 8).unwrap_or(&[0; 8]));
            let (o, l) = (word(0), word(8));
            let items = o
                .checked_add(l)
                .and_then(|e| heap.get(o as usize..e as usize))
                .unwrap_or(&[]);
            vlen_items(dt, items)
        }
    }
}

/// Swap a number's bytes into `order` (arca hands them over in native order).
fn push_number(b: &[u8], order: ByteOrder, out: &mut Vec<u8>) {
    if order == ByteOrder::NATIVE {
        out.extend_from_slice(b);
    } else {
        out.extend(b.iter().rev());
    }
}

/// One element as numpy holds what h5py read: numbers in the file's order
/// (`file_order`) or native order.
fn push_ordered(dt: &Datatype, b: &[u8], file_order: bool, out: &mut Vec<u8>) {
    let pick = |o: ByteOrder| if file_order { o } else { ByteOrder::NATIVE };
    match dt {
        Datatype::Int { order, .. }
        | Datatype::UInt { order, .. }
        | Datatype::Bitfield { order, .. }
        | Datatype::Time { order, .. }
        | Datatype::Float { order, .. } => push_number(b, pick(*order), out),
        Datatype::Complex { size, order } => {
            let h = (*size / 2) as usize;
            push_number(&b[..h], pick(*order), out);
            push_number(&b[h..], pick(*order), out);
        }
        Datatype::Enum(e) => push_ordered(&e.base, b, file_order, out),
        Datatype::Array(a) => {
            for x in b.chunks_exact(a.base.size().max(1)) {
                push_ordered(&a.base, x, file_order, out);
            }
        }
        Datatype::Compound(c) => {
            let at = out.len();
            out.extend_from_slice(b);
            for f in &c.fields {
                let (s, e) = (f.offset as usize, f.offset as usize + f.dtype.size());
                let mut m = Vec::with_capacity(e - s);
                push_ordered(&f.dtype, &b[s..e], file_order, &mut m);
                out[at + s..at + e].copy_from_slice(&m);
            }
        }
        _ => out.extend_from_slice(b),
    }
}

/// One numeric element converted as `dtype=safe` converts it.
fn push_safe(dt: &Datatype, b: &[u8], out: &mut Vec<u8>) {
    match dt {
        Datatype::Float { size: 2, .. } => {
            let v = values::float(2, b) as f32;
            out.extend_from_slice(&v.to_le_bytes());
        }
        Datatype::Int { .. }
        | Datatype::UInt { .. }
        | Datatype::Bitfield { .. }
        | Datatype::Time { .. }
        | Datatype::Float { .. } => push_number(b, ByteOrder::Little, out),
        Datatype::Complex { size, .. } => {
            let h = (*size / 2) as usize;
            push_number(&b[..h], ByteOrder::Little, out);
            push_number(&b[h..], ByteOrder::Little, out);
        }
        Datatype::Enum(e) => push_safe(&e.base, b, out),
        Datatype::Array(a) => {
            for x in b.chunks_exact(a.base.size().max(1)) {
                push_safe(&a.base, x, out);
            }
        }
        _ => out.extend_from_slice(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arr(dt: Datatype, data: Vec<u8>, shape: &[u64]) -> Array {
        Array::Values {
            elems: Elements::Fixed { dt, data },
            shape: shape.to_vec(),
            scalar: false,
        }
    }

    #[test]
    fn json_like_orjson() {
        let f: Vec<u8> = [0.1f32, f32::NAN, 2.0]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        assert_eq!(
            arr(Datatype::float(4), f, &[3]).json().to_string(),
            "[0.1,null,2.0]"
        );
        let c: Vec<u8> = [0.1f32, -1.0]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        // A complex array goes through tolist(): its parts are Python floats.
        assert_eq!(
            arr(Datatype::parse("<c8").unwrap(), c, &[1]).json(),
            json!([[f64::from(0.1f32), -1.0]])
        );
        let i: Vec<u8> = (0..6i32).flat_map(|v| v.to_ne_bytes()).collect();
        assert_eq!(
            arr(Datatype::int(4), i, &[2, 3]).json(),
            json!([[0, 1, 2], [3, 4, 5]])
        );
        assert_eq!(
            arr(Datatype::int(2), vec![], &[3, 0]).json(),
            json!([[], [], []])
        );
    }

    #[test]
    fn npy_header_is_numpys() {
        let a = arr(
            Datatype::parse(">i4").unwrap(),
            5i32.to_ne_bytes().to_vec(),
            &[1],
        );
        let npy = a.npy(false).unwrap();
        assert_eq!(npy.len() % 64, 4);
        assert!(npy.starts_with(
            b"\x93NUMPY\x01\x00v\x00{'descr': '>i4', 'fortran_order': False, 'shape': (1,), }"
        ));
        assert_eq!(&npy[npy.len() - 4..], &5i32.to_be_bytes());
        assert_eq!(&a.npy(true).unwrap()[128..], &5i32.to_le_bytes());
    }
}
