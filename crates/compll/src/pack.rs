//! A block's stored form: field grouping (see [`crate::group`]) and the
//! codec, with their scratch tables. Used by the arena's thread and, for
//! blocks decompressed ahead, by the background thread.

use crate::codec::{CodecState, Encoding};
use crate::error::{Error, Result};
use crate::layout::Layout;

/// The codec and the field-grouping pass with their scratch tables: turns
/// a block image into its stored form and back.
pub(crate) struct Packer {
    pub codec: CodecState,
    /// Leading node bytes stored by column in compressed blocks (0: none).
    pub group: usize,
    pub gnodes: Vec<(usize, usize)>,
    pub grows: Vec<u8>,
}

impl Packer {
    /// A packer running `codec`, grouping the first `group` node bytes.
    pub fn new(codec: CodecState, group: usize) -> Packer {
        Packer {
            codec,
            group,
            gnodes: Vec::new(),
            grows: Vec::new(),
        }
    }

    /// Writes the stored form of the block image `img` to `out`: fields
    /// grouped (normal blocks only, when configured), then compressed.
    /// With `sample` a dictionary codec may learn from the block; the
    /// returned flag says a dictionary was trained just now. With `fast`
    /// the codec is lz4 whatever is configured (and nothing is sampled).
    pub fn pack(
        &mut self,
        layout: &Layout,
        img: &[u8],
        (normal, sample, fast): (bool, bool, bool),
        out: &mut Vec<u8>,
    ) -> (Encoding, bool) {
        let mut grouped = Vec::new();
        let src: &[u8] = if self.group > 0 && normal {
            layout.group(
                img,
                self.group,
                &mut grouped,
                &mut self.gnodes,
                &mut self.grows,
            );
            &grouped
        } else {
            img
        };
        if fast {
            (self.codec.encode_fast(src, out), false)
        } else if sample {
            self.codec.compress(src, out)
        } else {
            (self.codec.encode(src, out), false)
        }
    }

    /// Inverse of [`Packer::pack`]: rebuilds the `len`-byte image in `out`.
    pub fn unpack(
        &mut self,
        layout: &Layout,
        (enc, comp): (Encoding, &[u8]),
        len: usize,
        normal: bool,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        if self.group > 0 && normal {
            let mut grouped = Vec::new();
            self.codec.decompress(enc, comp, &mut grouped, len)?;
            layout
                .ungroup(&grouped, self.group, out, &mut self.gnodes, &mut self.grows)
                .map_err(Error::Codec)
        } else {
            self.codec.decompress(enc, comp, out, len)
        }
    }

    /// Rust-heap bytes of the scratch tables and the codec state.
    pub fn heap_bytes(&self) -> usize {
        self.grows.capacity()
            + self.gnodes.capacity() * std::mem::size_of::<(usize, usize)>()
            + self.codec.heap_bytes()
    }
}
