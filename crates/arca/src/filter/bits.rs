//! Bit streams filled from each byte's most significant bit down, as HDF5's
//! n-bit and scale-offset filters pack their values: one value's bits
//! follow the last one's with no alignment.

/// Reads values of up to 64 bits; `None` past the end of the stream.
pub(super) struct BitReader<'a> {
    data: &'a [u8],
    /// Bits consumed.
    pos: usize,
}

impl<'a> BitReader<'a> {
    pub(super) fn new(data: &'a [u8]) -> Self {
        BitReader { data, pos: 0 }
    }

    /// The next `n` bits (0 to 64), the first read the most significant.
    pub(super) fn read(&mut self, n: u32) -> Option<u64> {
        debug_assert!(n <= 64);
        let end = self.pos.checked_add(n as usize)?;
        if end > self.data.len().checked_mul(8)? {
            return None;
        }
        let mut v = 0u64;
        let mut left = n;
        while left > 0 {
            let byte = self.data[self.pos / 8];
            let room = 8 - (self.pos % 8) as u32; // bits left in this byte
            let take = room.min(left);
            let bits = (u32::from(byte) >> (room - take)) & ((1u32 << take) - 1);
            v = (v << take) | u64::from(bits);
            self.pos += take as usize;
            left -= take;
        }
        Some(v)
    }
}

/// Writes values of up to 64 bits.
pub(super) struct BitWriter<'a> {
    out: &'a mut Vec<u8>,
    /// Bits used in the last byte of `out` (0: start a new byte).
    used: u32,
}

impl<'a> BitWriter<'a> {
    pub(super) fn new(out: &'a mut Vec<u8>) -> Self {
        BitWriter { out, used: 0 }
    }

    /// The low `n` bits of `v` (0 to 64), most significant first.
    pub(super) fn write(&mut self, v: u64, n: u32) {
        debug_assert!(n <= 64);
        let mut left = n;
        while left > 0 {
            if self.used == 0 {
                self.out.push(0);
            }
            let room = 8 - self.used;
            let take = room.min(left);
            let bits = ((v >> (left - take)) & ((1u64 << take) - 1)) as u8;
            if let Some(last) = self.out.last_mut() {
                *last |= bits << (room - take);
            }
            self.used = (self.used + take) % 8;
            left -= take;
        }
    }

    /// Whole bytes written so far (a partly filled last byte not counted).
    pub(super) fn whole_bytes(&self) -> usize {
        if self.used == 0 {
            self.out.len()
        } else {
            self.out.len() - 1
        }
    }
}

/// The low `n` bits set (n up to 64).
pub(super) fn mask(n: u32) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

/// An element's `size` bytes (at most 8) as a number, in the byte order given.
pub(super) fn load(bytes: &[u8], big_endian: bool) -> u64 {
    let mut v = 0u64;
    if big_endian {
        for &b in bytes {
            v = (v << 8) | u64::from(b);
        }
    } else {
        for &b in bytes.iter().rev() {
            v = (v << 8) | u64::from(b);
        }
    }
    v
}

/// [`load`] undone: `v` into `out` (at most 8 bytes) in the byte order given.
pub(super) fn store(v: u64, out: &mut [u8], big_endian: bool) {
    let n = out.len();
    for (i, b) in out.iter_mut().enumerate() {
        let shift = if big_endian { n - 1 - i } else { i };
        *b = (v >> (8 * shift)) as u8;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_roundtrip_across_bytes() {
        let vals = [
            (5u64, 3u32),
            (0x1ff, 9),
            (0, 1),
            (u64::MAX, 64),
            (0xabc, 12),
            (1, 7),
        ];
        let mut out = Vec::new();
        let mut w = BitWriter::new(&mut out);
        for &(v, n) in &vals {
            w.write(v, n);
        }
        assert_eq!(out[0] >> 5, 5, "first value in the top bits");
        let mut r = BitReader::new(&out);
        for &(v, n) in &vals {
            assert_eq!(r.read(n), Some(v & mask(n)));
        }
        assert_eq!(r.read(8), None, "past the end");
        let mut b = [0u8; 4];
        store(0x0102_0304, &mut b, true);
        assert_eq!(b, [1, 2, 3, 4]);
        assert_eq!(load(&b, false), 0x0403_0201);
    }
}
