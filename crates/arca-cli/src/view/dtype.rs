//! arca types as h5grove describes HDF5 types: the type metadata of
//! `/api/meta` (HDF5 class codes, numpy-style `dtype` strings) and the numpy
//! element type a read yields (what `format=bin|npy` and `dtype=safe` act on).

use arca::{BaseClass, ByteOrder, Datatype};
use serde_json::{json, Map, Value};

/// HDF5 type class codes (`H5T_class_t`), as h5grove reports them.
const INTEGER: u8 = 0;
const FLOAT: u8 = 1;
const TIME: u8 = 2;
const STRING: u8 = 3;
const BITFIELD: u8 = 4;
const OPAQUE: u8 = 5;
const COMPOUND: u8 = 6;
const REFERENCE: u8 = 7;
const ENUM: u8 = 8;
const VLEN: u8 = 9;
const ARRAY: u8 = 10;

/// HDF5's string paddings (`H5T_str_t`).
fn strpad(p: arca::StrPad) -> u8 {
    match p {
        arca::StrPad::NullTerm => 0,
        arca::StrPad::NullPad => 1,
        arca::StrPad::SpacePad => 2,
    }
}

fn order_code(o: ByteOrder) -> u8 {
    match o {
        ByteOrder::Little => 0,
        ByteOrder::Big => 1,
    }
}

/// numpy's byte-order character for a number of `size` bytes.
fn order_char(size: u8, o: ByteOrder) -> char {
    match (size, o) {
        (1, _) => '|',
        (_, ByteOrder::Little) => '<',
        (_, ByteOrder::Big) => '>',
    }
}

/// The numpy `dtype.str` of `dt` as h5py reads it (`<f4`, `|S6`, `|O`;
/// enums as their base, arrays and compounds as void of their size).
pub fn dtype_str(dt: &Datatype) -> String {
    match dt {
        Datatype::Bool => "|b1".into(),
        Datatype::Int { size, order } => format!("{}i{size}", order_char(*size, *order)),
        // h5py reads a bitfield as the unsigned integer of its size; arca
        // a time too.
        Datatype::UInt { size, order }
        | Datatype::Bitfield { size, order }
        | Datatype::Time { size, order } => format!("{}u{size}", order_char(*size, *order)),
        Datatype::Float { size, order } => format!("{}f{size}", order_char(*size, *order)),
        Datatype::Complex { size, order } => format!("{}c{size}", order_char(*size, *order)),
        Datatype::FixedBytes { len, .. } => format!("|S{len}"),
        Datatype::Opaque { len, .. } => format!("|V{len}"),
        Datatype::Enum(e) => dtype_str(&e.base),
        Datatype::Array(_) | Datatype::Compound(_) => format!("|V{}", dt.size()),
        Datatype::Reference
        | Datatype::RegionRef
        | Datatype::VlenBytes
        | Datatype::VlenStr
        | Datatype::Vlen { .. }
        | Datatype::VlenOf(_) => "|O".into(),
    }
}

/// h5grove's `stringify_dtype`: a compound is an object of its members'
/// dtypes, anything else its [`dtype_str`].
fn dtype_value(dt: &Datatype) -> Value {
    match dt {
        Datatype::Compound(c) => Value::Object(
            c.fields
                .iter()
                .map(|f| (f.name.clone(), dtype_value(&f.dtype)))
                .collect(),
        ),
        // h5py reads a complex number as numpy's complex, not as a compound.
        _ => Value::String(dtype_str(dt)),
    }
}

/// The size HDF5 gives a type in memory (a variable-length string is a
/// pointer, a sequence an `hvl_t`).
fn hdf5_size(dt: &Datatype) -> usize {
    match dt {
        Datatype::VlenBytes | Datatype::VlenStr | Datatype::Reference => 8,
        // HDF5's `hdset_reg_ref_t`.
        Datatype::RegionRef => 12,
        Datatype::Vlen { .. } | Datatype::VlenOf(_) => 16,
        _ => dt.size(),
    }
}

/// The base type of a variable-length sequence.
fn vlen_base(class: BaseClass, size: u8, order: ByteOrder) -> Datatype {
    match class {
        BaseClass::Bool => Datatype::Bool,
        BaseClass::Int => Datatype::Int { size, order },
        BaseClass::UInt => Datatype::UInt { size, order },
        BaseClass::Float => Datatype::Float { size, order },
        BaseClass::Reference => Datatype::Reference,
    }
}

/// h5grove's type metadata of `dt`: `class`, `dtype`, `size`, then what
/// the class adds (`order`, `sign`, `cset`, `members`, `base`, `dims`, ...).
/// A bool is HDF5's enum of `FALSE`/`TRUE` over a signed byte, as h5py
/// writes it; a complex number a compound of `r` and `i`.
pub fn type_meta(dt: &Datatype) -> Value {
    let mut m = Map::new();
    let class = match dt {
        Datatype::Bool | Datatype::Enum(_) => ENUM,
        Datatype::Int { .. } | Datatype::UInt { .. } => INTEGER,
        Datatype::Bitfield { .. } => BITFIELD,
        Datatype::Time { .. } => TIME,
        Datatype::Float { .. } => FLOAT,
        Datatype::Complex { .. } | Datatype::Compound(_) => COMPOUND,
        Datatype::FixedBytes { .. } | Datatype::VlenBytes | Datatype::VlenStr => STRING,
        Datatype::Opaque { .. } => OPAQUE,
        Datatype::Array(_) => ARRAY,
        Datatype::Reference | Datatype::RegionRef => REFERENCE,
        Datatype::Vlen { .. } | Datatype::VlenOf(_) => VLEN,
    };
    m.insert("class".into(), json!(class));
    m.insert("dtype".into(), dtype_value(dt));
    m.insert("size".into(), json!(hdf5_size(dt)));
    match dt {
        Datatype::Int { order, .. } | Datatype::UInt { order, .. } => {
            m.insert("order".into(), json!(order_code(*order)));
            m.insert(
                "sign".into(),
                json!(u8::from(matches!(dt, Datatype::Int { .. }))),
            );
        }
        Datatype::Float { order, .. }
        | Datatype::Bitfield { order, .. }
        | Datatype::Time { order, .. } => {
            m.insert("order".into(), json!(order_code(*order)));
        }
        Datatype::Bool => {
            m.insert("members".into(), json!({"FALSE": 0, "TRUE": 1}));
            m.insert("base".into(), type_meta(&Datatype::int(1)));
        }
        Datatype::Enum(e) => {
            let members: Map<String, Value> = e
                .members
                .iter()
                .map(|(n, v)| (n.clone(), json!(*v as i64)))
                .collect();
            m.insert("members".into(), Value::Object(members));
            m.insert("base".into(), type_meta(&e.base));
        }
        Datatype::Complex { size, order } => {
            let part = Datatype::Float {
                size: size / 2,
                order: *order,
            };
            let member = |name: &str| named(name, &part);
            m.insert("members".into(), json!([member("r"), member("i")]));
        }
        Datatype::Compound(c) => {
            let members: Vec<Value> = c.fields.iter().map(|f| named(&f.name, &f.dtype)).collect();
            m.insert("members".into(), Value::Array(members));
        }
        Datatype::FixedBytes { cset, pad, .. } => {
            m.insert("cset".into(), json!(u8::from(*cset == arca::Charset::Utf8)));
            m.insert("strpad".into(), json!(strpad(*pad)));
            m.insert("vlen".into(), json!(false));
        }
        Datatype::VlenBytes | Datatype::VlenStr => {
            m.insert("cset".into(), json!(u8::from(*dt == Datatype::VlenStr)));
            m.insert("strpad".into(), json!(0));
            m.insert("vlen".into(), json!(true));
        }
        Datatype::Opaque { tag, .. } => {
            m.insert("tag".into(), json!(tag));
        }
        Datatype::Array(a) => {
            m.insert("dims".into(), json!(a.dims));
            m.insert("base".into(), type_meta(&a.base));
        }
        Datatype::Vlen { class, size, order } => {
            m.insert("base".into(), type_meta(&vlen_base(*class, *size, *order)));
        }
        Datatype::VlenOf(base) => {
            m.insert("base".into(), type_meta(base));
        }
        Datatype::Reference | Datatype::RegionRef => {}
    }
    Value::Object(m)
}

/// A compound member's metadata: its name first, then its type's.
fn named(name: &str, dt: &Datatype) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), json!(name));
    if let Value::Object(t) = type_meta(dt) {
        m.extend(t);
    }
    Value::Object(m)
}

/// Whether numpy counts elements of `dt` as numbers (bool, integers,
/// floats, complex; enums by their base; arrays by their items): the
/// types `dtype=safe`, `format=npy` and `/api/stats` accept.
pub fn is_numeric(dt: &Datatype) -> bool {
    match dt {
        Datatype::Bool
        | Datatype::Int { .. }
        | Datatype::UInt { .. }
        | Datatype::Bitfield { .. }
        | Datatype::Time { .. }
        | Datatype::Float { .. }
        | Datatype::Complex { .. } => true,
        Datatype::Enum(_) => true,
        Datatype::Array(a) => is_numeric(&a.base),
        _ => false,
    }
}

/// The scalar type of a numeric `dt` (an array's items, an enum's base).
pub fn scalar_of(dt: &Datatype) -> Datatype {
    match dt {
        Datatype::Enum(e) => scalar_of(&e.base),
        Datatype::Array(a) => scalar_of(&a.base),
        d => d.clone(),
    }
}

/// The extents an array type adds to every element (none for others).
pub fn item_dims(dt: &Datatype) -> Vec<u64> {
    match dt {
        Datatype::Array(a) => {
            let mut d: Vec<u64> = a.dims.iter().map(|&x| u64::from(x)).collect();
            d.extend(item_dims(&a.base));
            d
        }
        _ => vec![],
    }
}

/// `dtype=safe`: the scalar type a JavaScript typed array holds for
/// `scalar` (float16 widened to float32, every number little-endian).
pub fn safe(scalar: &Datatype) -> Datatype {
    match *scalar {
        Datatype::Float { size: 2, .. } => Datatype::Float {
            size: 4,
            order: ByteOrder::Little,
        },
        Datatype::Int { size, .. } => Datatype::Int {
            size,
            order: ByteOrder::Little,
        },
        Datatype::UInt { size, .. }
        | Datatype::Bitfield { size, .. }
        | Datatype::Time { size, .. } => Datatype::UInt {
            size,
            order: ByteOrder::Little,
        },
        Datatype::Float { size, .. } => Datatype::Float {
            size,
            order: ByteOrder::Little,
        },
        Datatype::Complex { size, .. } => Datatype::Complex {
            size,
            order: ByteOrder::Little,
        },
        ref d => d.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_bool() {
        assert_eq!(
            type_meta(&Datatype::int(4)),
            json!({"class": 0, "dtype": "<i4", "size": 4, "order": 0, "sign": 1})
        );
        assert_eq!(
            type_meta(&Datatype::Bool),
            json!({"class": 8, "dtype": "|b1", "size": 1, "members": {"FALSE": 0, "TRUE": 1},
                   "base": {"class": 0, "dtype": "|i1", "size": 1, "order": 0, "sign": 1}})
        );
        let c = type_meta(&Datatype::parse("<c8").unwrap());
        assert_eq!(c["members"][1]["name"], json!("i"));
        assert_eq!(c["dtype"], json!("<c8"));
        assert_eq!(dtype_str(&Datatype::parse(">f8").unwrap()), ">f8");
    }

    #[test]
    fn strings_and_containers() {
        assert_eq!(
            type_meta(&Datatype::VlenStr),
            json!({"class": 3, "dtype": "|O", "size": 8, "cset": 1, "strpad": 0, "vlen": true})
        );
        let a = Datatype::parse("[2,3]<f4").unwrap();
        assert_eq!(type_meta(&a)["dims"], json!([2, 3]));
        assert_eq!(dtype_str(&a), "|V24");
        assert_eq!(item_dims(&a), vec![2, 3]);
        assert!(is_numeric(&a));
        assert!(!is_numeric(&Datatype::VlenStr));
        assert_eq!(safe(&Datatype::float(2)), Datatype::float(4));
    }
}
