//! h5edit's type names and the conversion of `DATA` values to element bytes.

use arca::{ByteOrder, Datatype};

use crate::ast::Value;

/// The default datatype, `H5T_NATIVE_FLOAT`.
pub(crate) const DEFAULT_TYPE: Datatype = Datatype::Float {
    size: 4,
    order: ByteOrder::NATIVE,
};

const LE: ByteOrder = ByteOrder::Little;
const BE: ByteOrder = ByteOrder::Big;
const NE: ByteOrder = ByteOrder::NATIVE;

const fn int(size: u8, order: ByteOrder) -> Datatype {
    Datatype::Int { size, order }
}
const fn uint(size: u8, order: ByteOrder) -> Datatype {
    Datatype::UInt { size, order }
}
const fn float(size: u8, order: ByteOrder) -> Datatype {
    Datatype::Float { size, order }
}

/// Every predefined numeric type name accepted, upper case. The native
/// C types follow LP64 (Linux and macOS on 64-bit machines); `char` is
/// signed as on x86.
pub const TYPE_NAMES: &[(&str, Datatype)] = &[
    ("H5T_STD_I8BE", int(1, BE)),
    ("H5T_STD_I8LE", int(1, LE)),
    ("H5T_STD_I16BE", int(2, BE)),
    ("H5T_STD_I16LE", int(2, LE)),
    ("H5T_STD_I32BE", int(4, BE)),
    ("H5T_STD_I32LE", int(4, LE)),
    ("H5T_STD_I64BE", int(8, BE)),
    ("H5T_STD_I64LE", int(8, LE)),
    ("H5T_STD_U8BE", uint(1, BE)),
    ("H5T_STD_U8LE", uint(1, LE)),
    ("H5T_STD_U16BE", uint(2, BE)),
    ("H5T_STD_U16LE", uint(2, LE)),
    ("H5T_STD_U32BE", uint(4, BE)),
    ("H5T_STD_U32LE", uint(4, LE)),
    ("H5T_STD_U64BE", uint(8, BE)),
    ("H5T_STD_U64LE", uint(8, LE)),
    ("H5T_IEEE_F32BE", float(4, BE)),
    ("H5T_IEEE_F32LE", float(4, LE)),
    ("H5T_IEEE_F64BE", float(8, BE)),
    ("H5T_IEEE_F64LE", float(8, LE)),
    ("H5T_NATIVE_CHAR", int(1, NE)),
    ("H5T_NATIVE_SCHAR", int(1, NE)),
    ("H5T_NATIVE_UCHAR", uint(1, NE)),
    ("H5T_NATIVE_SHORT", int(2, NE)),
    ("H5T_NATIVE_USHORT", uint(2, NE)),
    ("H5T_NATIVE_INT", int(4, NE)),
    ("H5T_NATIVE_UINT", uint(4, NE)),
    ("H5T_NATIVE_LONG", int(8, NE)),
    ("H5T_NATIVE_ULONG", uint(8, NE)),
    ("H5T_NATIVE_LLONG", int(8, NE)),
    ("H5T_NATIVE_ULLONG", uint(8, NE)),
    ("H5T_NATIVE_FLOAT", float(4, NE)),
    ("H5T_NATIVE_DOUBLE", float(8, NE)),
    ("H5T_NATIVE_INT8", int(1, NE)),
    ("H5T_NATIVE_UINT8", uint(1, NE)),
    ("H5T_NATIVE_INT16", int(2, NE)),
    ("H5T_NATIVE_UINT16", uint(2, NE)),
    ("H5T_NATIVE_INT32", int(4, NE)),
    ("H5T_NATIVE_UINT32", uint(4, NE)),
    ("H5T_NATIVE_INT64", int(8, NE)),
    ("H5T_NATIVE_UINT64", uint(8, NE)),
];

/// Look up a numeric type name, ignoring case.
///
/// ```
/// use arca::{ByteOrder, Datatype};
/// assert_eq!(
///     arca_edit::type_by_name("h5t_std_i32be"),
///     Some(Datatype::Int { size: 4, order: ByteOrder::Big })
/// );
/// assert_eq!(arca_edit::type_by_name("H5T_STD_I24LE"), None);
/// ```
pub fn type_by_name(name: &str) -> Option<Datatype> {
    TYPE_NAMES
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, t)| t.clone())
}

/// The h5edit name of a numeric type, for messages.
pub(crate) fn type_name(t: &Datatype) -> String {
    match t {
        Datatype::FixedBytes { len, .. } => format!("H5T_STRING {{ STRSIZE {len}; }}"),
        _ => TYPE_NAMES
            .iter()
            .find(|(n, d)| d == t && (n.starts_with("H5T_STD_") || n.starts_with("H5T_IEEE_")))
            .map(|(n, _)| n.to_string())
            .unwrap_or_else(|| t.to_string()),
    }
}

/// Convert `values` to elements of `dtype` in native byte order.
///
/// Errors name the offending value and its position.
pub(crate) fn encode(
    dtype: &Datatype,
    values: &[Value],
    space_pad: bool,
) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(values.len() * dtype.size());
    for (i, v) in values.iter().enumerate() {
        encode_one(dtype, v, space_pad, &mut out)
            .map_err(|m| format!("value {} ({}): {m}", i + 1, show(v)))?;
    }
    Ok(out)
}

fn show(v: &Value) -> String {
    match v {
        Value::Number(n) => n.clone(),
        Value::Str(s) => format!("{s:?}"),
    }
}

fn out_of_range(dtype: &Datatype) -> String {
    format!("out of range for {}", type_name(dtype))
}

fn encode_one(
    dtype: &Datatype,
    v: &Value,
    space_pad: bool,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    match (dtype.clone(), v) {
        (Datatype::FixedBytes { len, .. }, Value::Str(s)) => {
            let len = len as usize;
            if s.len() > len {
                return Err(format!("{} bytes do not fit {}", s.len(), type_name(dtype)));
            }
            out.extend_from_slice(s.as_bytes());
            let pad = if space_pad { b' ' } else { 0 };
            out.resize(out.len() + len - s.len(), pad);
            Ok(())
        }
        (Datatype::FixedBytes { .. }, Value::Number(_)) => {
            Err("a string type needs quoted values".into())
        }
        (_, Value::Str(_)) => Err(format!(
            "a quoted string cannot be stored as {}",
            type_name(dtype)
        )),
        (Datatype::Int { size, .. }, Value::Number(n)) => {
            let x = integer(n)?;
            let ok = match size {
                1 => i8::try_from(x).map(|x| out.extend_from_slice(&x.to_ne_bytes())),
                2 => i16::try_from(x).map(|x| out.extend_from_slice(&x.to_ne_bytes())),
                4 => i32::try_from(x).map(|x| out.extend_from_slice(&x.to_ne_bytes())),
                _ => i64::try_from(x).map(|x| out.extend_from_slice(&x.to_ne_bytes())),
            };
            ok.map_err(|_| out_of_range(dtype))
        }
        (Datatype::UInt { size, .. }, Value::Number(n)) => {
            let x = integer(n)?;
            let ok = match size {
                1 => u8::try_from(x).map(|x| out.extend_from_slice(&x.to_ne_bytes())),
                2 => u16::try_from(x).map(|x| out.extend_from_slice(&x.to_ne_bytes())),
                4 => u32::try_from(x).map(|x| out.extend_from_slice(&x.to_ne_bytes())),
                _ => u64::try_from(x).map(|x| out.extend_from_slice(&x.to_ne_bytes())),
            };
            ok.map_err(|_| out_of_range(dtype))
        }
        (Datatype::Float { size, .. }, Value::Number(n)) => {
            let x: f64 = n.parse().map_err(|_| format!("{n} is not a number"))?;
            if size == 4 {
                if x.is_finite() && x.abs() > f32::MAX as f64 {
                    return Err(out_of_range(dtype));
                }
                out.extend_from_slice(&(x as f32).to_ne_bytes());
            } else if size == 16 {
                out.extend_from_slice(&arca::f64_to_extended(x));
            } else {
                if x.is_infinite() && !n.to_ascii_lowercase().contains("inf") {
                    // A literal like 1e999 overflowed while parsing.
                    return Err(out_of_range(dtype));
                }
                out.extend_from_slice(&x.to_ne_bytes());
            }
            Ok(())
        }
        (Datatype::Bool, Value::Number(n)) => match integer(n)? {
            0 => {
                out.push(0);
                Ok(())
            }
            1 => {
                out.push(1);
                Ok(())
            }
            _ => Err("a boolean must be 0 or 1".into()),
        },
        (t, _) => Err(format!(
            "values of type {t} cannot be written by edit commands"
        )),
    }
}

/// An integer literal; a value with a fraction or exponent is refused
/// rather than silently truncated.
fn integer(n: &str) -> Result<i128, String> {
    let digits = n.strip_prefix(['+', '-']).unwrap_or(n);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err("an integer type needs an integer value".into());
    }
    // Longer than any i128: certainly out of range for every integer type.
    n.parse::<i128>().or(Ok(i128::MAX))
}

/// Whether `w` is a number literal the parser accepts.
pub(crate) fn is_number(w: &str) -> bool {
    let digits = w.strip_prefix(['+', '-']).unwrap_or(w);
    if digits.is_empty() {
        return false;
    }
    if digits.bytes().all(|b| b.is_ascii_digit()) {
        return true;
    }
    let lower = digits.to_ascii_lowercase();
    if matches!(lower.as_str(), "inf" | "infinity" | "nan") {
        return true;
    }
    // Rust's float syntax, minus its spelled-out forms handled above.
    digits.starts_with(|c: char| c.is_ascii_digit() || c == '.') && w.parse::<f64>().is_ok()
}
