//! Whether a [`Datatype`] is whole and sane: sizes its class allows,
//! members inside their element and apart, unique names, enum values that
//! fit their base, and nesting at most [`MAX_TYPE_DEPTH`] deep. Types built
//! by callers are checked when built; decoded types, as a whole, when read.

use std::collections::HashSet;

use super::{
    BaseClass, Datatype, MAX_ARRAY_RANK, MAX_ELEMENT_BYTES, MAX_FIXED_BYTES, MAX_MEMBERS,
    MAX_TYPE_DEPTH,
};
use crate::error::{Error, Result};

impl Datatype {
    /// Check sizes, members and extents are ones this type class allows.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for e.g. a 3-byte integer, overlapping
    /// compound members or an enum on a float base.
    pub fn validate(&self) -> Result<()> {
        self.check(0).map_err(Error::invalid)
    }

    /// Whether this type is a whole, sane type; the reason when it is not.
    pub(super) fn check(&self, depth: usize) -> std::result::Result<(), String> {
        if depth > MAX_TYPE_DEPTH {
            return Err(format!("types nested more than {MAX_TYPE_DEPTH} deep"));
        }
        let bad = || Err(format!("unsupported datatype {self}"));
        match self {
            Datatype::Bool
            | Datatype::VlenBytes
            | Datatype::VlenStr
            | Datatype::RegionRef
            | Datatype::Reference => Ok(()),
            Datatype::Int { size, .. }
            | Datatype::UInt { size, .. }
            | Datatype::Bitfield { size, .. } => {
                if matches!(size, 1 | 2 | 4 | 8) {
                    Ok(())
                } else {
                    bad()
                }
            }
            // HDF5 defines 32- and 64-bit times.
            Datatype::Time { size, .. } => {
                if matches!(size, 4 | 8) {
                    Ok(())
                } else {
                    bad()
                }
            }
            // 16: extended precision (format/datatype/extended.rs).
            Datatype::Float { size, .. } => {
                if matches!(size, 2 | 4 | 8 | 16) {
                    Ok(())
                } else {
                    bad()
                }
            }
            Datatype::Complex { size, .. } => {
                if matches!(size, 4 | 8 | 16 | 32) {
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
            Datatype::VlenOf(b) => {
                b.check(depth + 1)?;
                match Datatype::vlen((**b).clone()) {
                    Ok(Datatype::VlenOf(_)) => Ok(()),
                    _ => bad(),
                }
            }
            Datatype::Vlen { class, size, .. } => {
                let ok = match class {
                    BaseClass::Bool => *size == 1,
                    BaseClass::Int | BaseClass::UInt => matches!(size, 1 | 2 | 4 | 8),
                    BaseClass::Float => matches!(size, 2 | 4 | 8),
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
                    if m.dtype == Datatype::RegionRef {
                        return Err(format!(
                            "compound member {:?}: region references stand alone",
                            m.name
                        ));
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
}

/// A member or enum name: non-empty, at most 65535 bytes.
fn check_name(n: &str, what: &str) -> std::result::Result<(), String> {
    if n.is_empty() || n.len() > u16::MAX as usize {
        return Err(format!("{what} name of {} bytes", n.len()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
            r#"vlen:struct(8){"r"@0:ref}"#,
            r#"vlen:[2]struct(16){"s"@0:vlen:str}"#,
            "vlen:vlen:str",
            "vlen:",
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
}
