"""HDF5's filter ids, and which of them arca encodes and decodes, as h5py's
``h5py.h5z`` module names them (the part of it that asks about filters)::

    arca.h5z.filter_avail(arca.h5z.FILTER_DEFLATE)     # True
    arca.h5z.filter_avail(307)                          # False (bzip2)

arca reads and writes deflate (gzip), shuffle, Fletcher-32, LZF, LZ4
(32004) and Zstandard (32015) pipelines itself; chunks of files imported
with other filters are kept as stored (see ``Dataset.hdf5_filters``).
"""

FILTER_ERROR = -1
FILTER_NONE = 0
FILTER_DEFLATE = 1
FILTER_SHUFFLE = 2
FILTER_FLETCHER32 = 3
FILTER_SZIP = 4
FILTER_NBIT = 5
FILTER_SCALEOFFSET = 6
FILTER_LZF = 32000
FILTER_LZ4 = 32004
FILTER_ZSTD = 32015
FILTER_RESERVED = 256
FILTER_MAX = 65535

FLAG_DEFMASK = 0x00FF
FLAG_MANDATORY = 0x0000
FLAG_OPTIONAL = 0x0001
FLAG_INVMASK = 0xFF00
FLAG_REVERSE = 0x0100
FLAG_SKIP_EDC = 0x0200

FILTER_CONFIG_ENCODE_ENABLED = 0x0001
FILTER_CONFIG_DECODE_ENABLED = 0x0002

# The filters arca runs both ways, and the names HDF5 stores them under.
CODECS = {
    FILTER_DEFLATE: "deflate",
    FILTER_SHUFFLE: "shuffle",
    FILTER_FLETCHER32: "fletcher32",
    FILTER_LZF: "lzf",
    FILTER_LZ4: "lz4",
    FILTER_ZSTD: "zstd",
    FILTER_SCALEOFFSET: "scaleoffset",
}


def filter_avail(filter_code):
    """Whether arca can run HDF5 filter ``filter_code``."""
    return int(filter_code) in CODECS


def get_filter_info(filter_code):
    """``FILTER_CONFIG_ENCODE_ENABLED | FILTER_CONFIG_DECODE_ENABLED`` for a
    filter arca runs, else 0 (h5py raises for a filter it has not)."""
    if filter_avail(filter_code):
        return FILTER_CONFIG_ENCODE_ENABLED | FILTER_CONFIG_DECODE_ENABLED
    return 0
