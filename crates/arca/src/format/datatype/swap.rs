//! Byte order: a type's elements converted between the order they are
//! stored in and this machine's (the same swap both ways), and the type
//! with its numbers in another order.

use super::{ArrayType, ByteOrder, CompoundType, Datatype, EnumType, Field};

impl Datatype {
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
            Datatype::Bitfield { size, .. } => Datatype::Bitfield { size: *size, order },
            Datatype::Time { size, .. } => Datatype::Time { size: *size, order },
            Datatype::Vlen { class, size, .. } => Datatype::Vlen {
                class: *class,
                size: *size,
                order,
            },
            Datatype::VlenOf(b) => Datatype::VlenOf(Box::new(b.with_order(order))),
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
            | Datatype::Bitfield { size, order }
            | Datatype::Time { size, order }
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
            Datatype::Int { .. }
            | Datatype::UInt { .. }
            | Datatype::Float { .. }
            | Datatype::Bitfield { .. }
            | Datatype::Time { .. } => {
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
}
