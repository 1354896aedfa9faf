//! Uncompressed and compressed copies of an arena's blocks, for measuring
//! what the codec alone costs on exactly the bytes the arena holds (see
//! [`Arena::block_images`](crate::Arena::block_images)).

use crate::codec::Encoding;

/// The uncompressed image of one block, copied out of an arena by
/// [`Arena::block_images`](crate::Arena::block_images).
///
/// An image can only be handed back to the arena it came from
/// ([`Arena::compress_image`](crate::Arena::compress_image)); it is a copy,
/// so later changes to the arena do not show in it.
///
/// ```
/// use compll::{Arena, Config};
/// let arena = Arena::new(Config::default()).unwrap();
/// arena.alloc_init(5, b"hello").unwrap();
/// let images = arena.block_images().unwrap();
/// assert_eq!(images.len(), 1);
/// assert_eq!(images[0].len(), 32 * 1024);
/// assert!(!images[0].is_large());
/// ```
#[derive(Clone)]
pub struct BlockImage {
    pub(crate) arena: u64,
    pub(crate) bytes: Vec<u8>,
    pub(crate) large: bool,
    /// The block was held in lz4 form when copied (the memory target's
    /// choice); not part of equality, which is about the bytes.
    pub(crate) fast: bool,
}

impl PartialEq for BlockImage {
    fn eq(&self, o: &BlockImage) -> bool {
        self.arena == o.arena && self.large == o.large && self.bytes == o.bytes
    }
}

impl Eq for BlockImage {}

impl BlockImage {
    /// The block's bytes: header, node bitmap, tags, nodes and free space
    /// for a normal block; the node itself for a large one.
    ///
    /// ```
    /// let arena = compll::Arena::new(compll::Config::default()).unwrap();
    /// arena.alloc(10).unwrap();
    /// let img = &arena.block_images().unwrap()[0];
    /// assert_eq!(img.bytes().len(), img.len());
    /// ```
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Length of the image in bytes (the block size, or the node's length
    /// for a large block).
    ///
    /// ```
    /// let arena = compll::Arena::new(compll::Config::default()).unwrap();
    /// arena.alloc(100_000).unwrap();
    /// assert_eq!(arena.block_images().unwrap()[0].len(), 100_000);
    /// ```
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// True for a block holding a single node too large for a normal block
    /// (its fields are never grouped).
    ///
    /// ```
    /// let arena = compll::Arena::new(compll::Config::default()).unwrap();
    /// arena.alloc(100_000).unwrap();
    /// assert!(arena.block_images().unwrap()[0].is_large());
    /// ```
    pub fn is_large(&self) -> bool {
        self.large
    }

    /// True if the arena held the block in lz4 form when the image was
    /// copied, because memory was to spare (see
    /// [`Config::target_ratio`](crate::Config::target_ratio));
    /// [`Arena::compress_image_as_stored`](crate::Arena::compress_image_as_stored)
    /// stores it that way again.
    ///
    /// ```
    /// let arena = compll::Arena::new(compll::Config::default()).unwrap();
    /// arena.alloc(10).unwrap();
    /// assert!(!arena.block_images().unwrap()[0].is_fast());
    /// ```
    pub fn is_fast(&self) -> bool {
        self.fast
    }
}

impl std::fmt::Debug for BlockImage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockImage")
            .field("len", &self.bytes.len())
            .field("large", &self.large)
            .finish()
    }
}

/// A block image in the form the arena stores it (fields grouped if
/// configured, then compressed), made by
/// [`Arena::compress_image`](crate::Arena::compress_image).
///
/// ```
/// use compll::{Arena, Codec, Config};
/// let arena = Arena::new(Config::default().codec(Codec::Lz4)).unwrap();
/// arena.alloc(10).unwrap();
/// let img = &arena.block_images().unwrap()[0];
/// let c = arena.compress_image(img).unwrap();
/// assert!(c.compressed_len() < c.image_len());
/// assert_eq!(c.image_len(), img.len());
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct CompressedImage {
    pub(crate) arena: u64,
    pub(crate) bytes: Box<[u8]>,
    pub(crate) enc: Encoding,
    pub(crate) len: usize,
    pub(crate) large: bool,
}

impl CompressedImage {
    /// Bytes of the stored form.
    ///
    /// ```
    /// let arena = compll::Arena::new(compll::Config::default()).unwrap();
    /// arena.alloc(10).unwrap();
    /// let c = arena.compress_image(&arena.block_images().unwrap()[0]).unwrap();
    /// assert!(c.compressed_len() > 0);
    /// ```
    pub fn compressed_len(&self) -> usize {
        self.bytes.len()
    }

    /// Length of the uncompressed image.
    ///
    /// ```
    /// let arena = compll::Arena::new(compll::Config::default()).unwrap();
    /// arena.alloc(10).unwrap();
    /// let c = arena.compress_image(&arena.block_images().unwrap()[0]).unwrap();
    /// assert_eq!(c.image_len(), 32 * 1024);
    /// ```
    pub fn image_len(&self) -> usize {
        self.len
    }
}

impl std::fmt::Debug for CompressedImage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompressedImage")
            .field("compressed_len", &self.bytes.len())
            .field("image_len", &self.len)
            .field("large", &self.large)
            .finish()
    }
}
