"""The framing of an lz4 chunk: HDF5's (the chunk cut into pieces, which
HDF5's lz4 filter calls blocks, each compressed on its own, sizes
big-endian) and arca's (one piece, its size little-endian) around the same
compressed bytes."""

import struct

from ._common import ALL


def lz4_from_hdf5(data):
    """HDF5's lz4 framing (u64 BE size, u32 BE piece size, then per piece
    u32 BE compressed size and the piece, kept uncompressed when
    compressing did not shrink it) as an arca chunk and its mask: the same
    compressed piece rewrapped (u32 LE size, one piece), or the plain
    elements, unfiltered. None for a chunk of several pieces, which goes by
    value."""
    if len(data) < 16:
        return None
    total, piece = struct.unpack(">QI", data[:12])
    (n,) = struct.unpack(">I", data[12:16])
    if piece < total or 16 + n != len(data) or total >= 1 << 32:
        return None
    if n >= total:
        return data[16:], ALL
    return struct.pack("<I", total) + data[16:], 0


def lz4_to_hdf5(data):
    """arca's lz4 chunk in HDF5's framing (one piece, the whole chunk)."""
    (total,) = struct.unpack("<I", data[:4])
    return struct.pack(">QII", total, total, len(data) - 4) + data[4:]
