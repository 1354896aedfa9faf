//! The one bounds-checked reader every on-disk structure is decoded through,
//! and its writing twin. All integers are little-endian and fixed-width,
//! except B-tree keys, which are big-endian so that byte order is number
//! order.

use crate::error::{Error, Result};

/// Decodes fields from a byte slice, turning every overrun into `Corrupt`.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    what: &'static str,
    base: u64,
}

impl<'a> Reader<'a> {
    /// `what` names the structure and `base` is its file offset, for error messages.
    pub(crate) fn new(buf: &'a [u8], what: &'static str, base: u64) -> Self {
        Self {
            buf,
            pos: 0,
            what,
            base,
        }
    }

    pub(crate) fn corrupt(&self, detail: impl Into<String>) -> Error {
        Error::corrupt(self.what, self.base, detail)
    }

    pub(crate) fn bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.buf.len())
            .ok_or_else(|| {
                self.corrupt(format!(
                    "field of {n} bytes at +{} runs past the end ({} bytes)",
                    self.pos,
                    self.buf.len()
                ))
            })?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    /// Bytes not yet read.
    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.bytes(N)?);
        Ok(a)
    }

    pub(crate) fn u8(&mut self) -> Result<u8> {
        Ok(self.array::<1>()?[0])
    }
    pub(crate) fn u16(&mut self) -> Result<u16> {
        Ok(u16::from_le_bytes(self.array()?))
    }
    pub(crate) fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    pub(crate) fn i32(&mut self) -> Result<i32> {
        Ok(i32::from_le_bytes(self.array()?))
    }
    pub(crate) fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    /// A big-endian u64 (a B-tree key's).
    pub(crate) fn u64_be(&mut self) -> Result<u64> {
        Ok(u64::from_be_bytes(self.array()?))
    }
}

/// Appends little-endian fields to a byte vector.
#[derive(Default)]
pub(crate) struct Writer {
    pub(crate) buf: Vec<u8>,
}

impl Writer {
    pub(crate) fn new() -> Self {
        Self::default()
    }
    pub(crate) fn u8(&mut self, v: u8) -> &mut Self {
        self.buf.push(v);
        self
    }
    pub(crate) fn u16(&mut self, v: u16) -> &mut Self {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub(crate) fn u32(&mut self, v: u32) -> &mut Self {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub(crate) fn i32(&mut self, v: i32) -> &mut Self {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub(crate) fn u64(&mut self, v: u64) -> &mut Self {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub(crate) fn bytes(&mut self, v: &[u8]) -> &mut Self {
        self.buf.extend_from_slice(v);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrun_is_corrupt_not_panic() {
        let mut r = Reader::new(&[1, 2, 3], "thing", 40);
        assert_eq!(r.u16().unwrap(), 0x0201);
        let e = r.u32().unwrap_err();
        assert!(matches!(
            e,
            Error::Corrupt {
                what: "thing",
                offset: 40,
                ..
            }
        ));
    }

    #[test]
    fn roundtrip() {
        let mut w = Writer::new();
        w.u8(7).u16(300).u32(70000).u64(1 << 40).i32(-5);
        let mut r = Reader::new(&w.buf, "t", 0);
        assert_eq!(r.u8().unwrap(), 7);
        assert_eq!(r.u16().unwrap(), 300);
        assert_eq!(r.u32().unwrap(), 70000);
        assert_eq!(r.u64().unwrap(), 1 << 40);
        assert_eq!(r.i32().unwrap(), -5);
        let mut r = Reader::new(&[1, 2, 3, 4, 5, 6, 7, 8], "t", 0);
        assert_eq!(r.u64_be().unwrap(), 0x0102_0304_0506_0708);
    }
}
