//! The free lists the core itself uses.

use super::{ArrayList, BlockList, SharedBlockList};

/// Metadata pages held by the page cache (64 to 4096 bytes in steps of 32),
/// by exact size.
pub(crate) static PAGES: SharedBlockList = SharedBlockList::new("pages");
/// Decoded chunks: filled, loaded, cached and batched chunk buffers.
pub(crate) static CHUNKS: BlockList = BlockList::new("chunk buffers");
/// Stored chunk bytes and the intermediate outputs of the filter pipeline.
pub(crate) static FILTER: BlockList = BlockList::new("filter buffers");
/// Encoded B-tree nodes and other page payloads being built.
pub(crate) static ENCODE: BlockList = BlockList::new("encode buffers");
/// Per-dimension scratch of selection walks and chunk overlaps.
pub(crate) static DIMS: ArrayList<u64> = ArrayList::new("dimension scratch");
/// Dimensions, maximum dimensions and chunk shapes of decoded dataset
/// headers: every dataset call decodes its header again.
pub(crate) static EXTENTS: ArrayList<u64> = ArrayList::new("dataspace extents");
/// Fill values (one element each) while a dataset is read or written.
pub(crate) static FILL: BlockList = BlockList::new("fill values");
