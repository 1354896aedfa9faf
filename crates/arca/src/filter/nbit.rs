//! HDF5's n-bit filter (id 5): each number's significant bits (its
//! precision, above its bit offset) packed end to end, most significant
//! bit first, with no alignment between values or elements.
//!
//! HDF5 records everything the filter needs in its client-data values
//! (its `set_local` writes them from the dataset's type):
//!
//! ```text
//! [0] number of values  [1] 1: stored as is (nothing to pack)
//! [2] elements in a chunk  [3..] the element's type, recursively:
//!     atomic (integer or float): 1, size, order (0 LE, 1 BE), precision, offset
//!     array:                     2, size, <base type>
//!     compound:                  3, size, members, then per member: offset, <type>
//!     anything else:             4, size (its bytes packed whole, 8 bits each)
//! ```
//! The packed stream is the element count times the type's bits, rounded
//! to a byte, plus one byte (HDF5 always counts the byte it would fill
//! next).

use super::bits::{load, mask, store, BitReader, BitWriter};

const ATOMIC: u32 = 1;
const ARRAY: u32 = 2;
const COMPOUND: u32 = 3;
const NOOP: u32 = 4;

/// An element type as the filter's values describe it.
#[derive(Debug)]
enum Ty {
    Atomic {
        size: usize,
        be: bool,
        precision: u32,
        offset: u32,
    },
    Array {
        size: usize,
        base: Box<Ty>,
    },
    Compound {
        size: usize,
        members: Vec<(usize, Ty)>,
    },
    Noop {
        size: usize,
    },
}

impl Ty {
    fn size(&self) -> usize {
        match self {
            Ty::Atomic { size, .. }
            | Ty::Array { size, .. }
            | Ty::Compound { size, .. }
            | Ty::Noop { size } => *size,
        }
    }
}

/// The type described at `p[*at..]`; nesting is bounded by the values'
/// length, since each level takes at least two.
fn parse(p: &[u32], at: &mut usize, depth: usize) -> Result<Ty, String> {
    let short = || "values shorter than the type they describe".to_string();
    let next = |at: &mut usize| -> Result<u32, String> {
        let v = *p.get(*at).ok_or_else(short)?;
        *at += 1;
        Ok(v)
    };
    if depth > 32 {
        return Err("type nested too deeply".into());
    }
    let class = next(at)?;
    let size = next(at)? as usize;
    if size == 0 {
        return Err("a type of size 0".into());
    }
    Ok(match class {
        ATOMIC => {
            let be = match next(at)? {
                0 => false,
                1 => true,
                o => return Err(format!("byte order {o}")),
            };
            let precision = next(at)?;
            let offset = next(at)?;
            if size > 8 || u64::from(precision) + u64::from(offset) > 8 * size as u64 {
                return Err(format!(
                    "precision {precision} at offset {offset} in {size} bytes"
                ));
            }
            Ty::Atomic {
                size,
                be,
                precision,
                offset,
            }
        }
        ARRAY => {
            let base = parse(p, at, depth + 1)?;
            if !size.is_multiple_of(base.size()) {
                return Err(format!(
                    "array of {size} bytes over {}-byte items",
                    base.size()
                ));
            }
            Ty::Array {
                size,
                base: Box::new(base),
            }
        }
        COMPOUND => {
            let n = next(at)? as usize;
            let mut members = Vec::new();
            for _ in 0..n {
                let offset = next(at)? as usize;
                let t = parse(p, at, depth + 1)?;
                if offset.checked_add(t.size()).is_none_or(|e| e > size) {
                    return Err(format!("member at {offset} past a {size}-byte compound"));
                }
                members.push((offset, t));
            }
            Ty::Compound { size, members }
        }
        NOOP => Ty::Noop { size },
        c => return Err(format!("type class {c}")),
    })
}

/// The filter's values read: whether it packs at all, the element count
/// and the element type.
fn params(p: &[u32]) -> Result<(bool, usize, Ty), String> {
    if p.len() < 5 || p[0] as usize != p.len() {
        return Err(format!(
            "{} values, recording {}",
            p.len(),
            p.first().unwrap_or(&0)
        ));
    }
    let mut at = 3;
    let ty = parse(p, &mut at, 0)?;
    if at != p.len() {
        return Err(format!("{} values past the type", p.len() - at));
    }
    Ok((p[1] != 0, p[2] as usize, ty))
}

fn unpack(ty: &Ty, r: &mut BitReader, out: &mut [u8]) -> Option<()> {
    match ty {
        Ty::Atomic {
            size,
            be,
            precision,
            offset,
        } => {
            let v = r.read(*precision)?;
            let full = if *offset >= 64 { 0 } else { v << offset };
            store(full, &mut out[..*size], *be);
        }
        Ty::Noop { size } => {
            for b in &mut out[..*size] {
                *b = r.read(8)? as u8;
            }
        }
        Ty::Array { size, base } => {
            for e in out[..*size].chunks_exact_mut(base.size()) {
                unpack(base, r, e)?;
            }
        }
        Ty::Compound { members, .. } => {
            for (offset, t) in members {
                unpack(t, r, &mut out[*offset..])?;
            }
        }
    }
    Some(())
}

fn pack(ty: &Ty, e: &[u8], w: &mut BitWriter) {
    match ty {
        Ty::Atomic {
            size,
            be,
            precision,
            offset,
        } => {
            let v = load(&e[..*size], *be);
            let v = if *offset >= 64 { 0 } else { v >> offset };
            w.write(v & mask(*precision), *precision);
        }
        Ty::Noop { size } => {
            for &b in &e[..*size] {
                w.write(u64::from(b), 8);
            }
        }
        Ty::Array { size, base } => {
            for x in e[..*size].chunks_exact(base.size()) {
                pack(base, x, w);
            }
        }
        Ty::Compound { members, .. } => {
            for (offset, t) in members {
                pack(t, &e[*offset..], w);
            }
        }
    }
}

/// Unpack a chunk; `limit` bounds its size.
pub(super) fn decode(p: &[u32], input: &[u8], limit: usize) -> Result<Vec<u8>, String> {
    let (as_is, n, ty) = params(p)?;
    if as_is {
        return Ok(input.to_vec());
    }
    let expect = n
        .checked_mul(ty.size())
        .filter(|&t| t <= limit)
        .ok_or_else(|| format!("{n} elements of {} bytes, more than {limit}", ty.size()))?;
    let mut out = vec![0u8; expect];
    let mut r = BitReader::new(input);
    for e in out.chunks_exact_mut(ty.size()) {
        unpack(&ty, &mut r, e).ok_or("packed values end early")?;
    }
    Ok(out)
}

/// Pack a chunk (its size must be the element count times the type's).
pub(super) fn encode(p: &[u32], plain: &[u8]) -> Result<Vec<u8>, String> {
    let (as_is, n, ty) = params(p)?;
    if as_is {
        return Ok(plain.to_vec());
    }
    if n.checked_mul(ty.size()) != Some(plain.len()) {
        return Err(format!(
            "{n} elements of {} bytes, given {}",
            ty.size(),
            plain.len()
        ));
    }
    let mut out = Vec::with_capacity(plain.len() + 1);
    let mut w = BitWriter::new(&mut out);
    for e in plain.chunks_exact(ty.size()) {
        pack(&ty, e, &mut w);
    }
    let len = w.whole_bytes() + 1;
    out.resize(len, 0);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_and_compound_roundtrip() {
        // 12-bit integers at bit offset 2 of 2-byte big-endian numbers.
        let p = [8, 0, 5, ATOMIC, 2, 1, 12, 2];
        let vals: [u16; 5] = [0, 4, 0x3ffc, 0x1230, 8];
        let plain: Vec<u8> = vals.iter().flat_map(|v| v.to_be_bytes()).collect();
        let enc = encode(&p, &plain).unwrap();
        assert_eq!(enc.len(), 5 * 12 / 8 + 1);
        assert_eq!(decode(&p, &enc, plain.len()).unwrap(), plain);
        // A compound {u8 packed to 4 bits at 0; 3 opaque bytes at 1}.
        let p = [13, 0, 2, COMPOUND, 4, 2, 0, ATOMIC, 1, 0, 4, 0, 1, NOOP, 3];
        let p = {
            let mut v = p.to_vec();
            v[0] = v.len() as u32;
            v
        };
        let plain = [0x0f, 1, 2, 3, 0x05, 4, 5, 6];
        let enc = encode(&p, &plain).unwrap();
        assert_eq!(decode(&p, &enc, plain.len()).unwrap(), plain);
    }

    #[test]
    fn damaged_values_and_streams_are_errors() {
        let p = [8, 0, 5, ATOMIC, 2, 0, 12, 2];
        assert!(decode(&p, &[0; 3], 10).is_err(), "stream ends early");
        assert!(decode(&p, &[0; 9], 9).is_err(), "over the limit");
        for bad in [
            vec![8, 0, 5, ATOMIC, 2, 0, 17, 0],
            vec![7, 0, 5, ATOMIC, 2, 0, 12],
            vec![6, 0, 5, ARRAY, 4, ATOMIC],
            vec![5, 0, 5, 9, 2],
            vec![8, 0, 5, ARRAY, 3, NOOP, 0, 0],
            vec![9, 0, 1, COMPOUND, 2, 1, 1, NOOP, 2],
        ] {
            assert!(decode(&bad, &[0; 64], 10).is_err(), "{bad:?}");
        }
        // Deep nesting is refused, not recursed into without end.
        let mut deep = vec![0u32, 0, 1];
        for _ in 0..100 {
            deep.extend([ARRAY, 4]);
        }
        deep.extend([NOOP, 4]);
        deep[0] = deep.len() as u32;
        assert!(decode(&deep, &[0; 8], 4).is_err());
    }
}
