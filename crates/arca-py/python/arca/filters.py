"""Compression filters as h5py's ``h5py.filters`` module describes them:
the names of those available, and filter objects to pass as
``compression``::

    "gzip" in arca.filters.encode                       # True
    f.create_dataset("x", shape=(100,), dtype="u4",
                     compression=arca.filters.Gzip(level=8))

``encode`` and ``decode`` list h5py's filter names arca runs ("gzip",
"lzf", "shuffle", "fletcher32", "scaleoffset"); arca's own ``"zstd"`` and
``"lz4"`` are there too. szip is not among them as a ``compression`` name
(files using it are imported and read).
"""

from collections.abc import Mapping

from . import h5z

DEFAULT_GZIP = 4
DEFAULT_SZIP = ("nn", 8)

# h5py's filter names and their HDF5 ids.
FILTER_IDS = {
    "gzip": h5z.FILTER_DEFLATE,
    "szip": h5z.FILTER_SZIP,
    "lzf": h5z.FILTER_LZF,
    "shuffle": h5z.FILTER_SHUFFLE,
    "fletcher32": h5z.FILTER_FLETCHER32,
    "scaleoffset": h5z.FILTER_SCALEOFFSET,
    "lz4": h5z.FILTER_LZ4,
    "zstd": h5z.FILTER_ZSTD,
}

encode = tuple(n for n, i in FILTER_IDS.items() if h5z.filter_avail(i))
decode = encode


def get_filter_name(code):
    """h5py's name of HDF5 filter ``code``, or the code as a string."""
    for name, i in FILTER_IDS.items():
        if i == code:
            return name
    return str(code)


class FilterRefBase(Mapping):
    """A filter with its options, to pass as ``compression=``; subclasses
    set ``filter_id`` and may set ``filter_options`` (a tuple of ints). As a
    mapping it reads as the keywords it stands for
    (``create_dataset(..., **Gzip(8))``)."""

    filter_id = None
    filter_options = ()

    @property
    def _kwargs(self):
        return {"compression": self.filter_id, "compression_opts": self.filter_options}

    def __hash__(self):
        return hash((self.filter_id, self.filter_options))

    def __eq__(self, other):
        return (isinstance(other, FilterRefBase) and self.filter_id == other.filter_id
                and self.filter_options == other.filter_options)

    def __len__(self):
        return len(self._kwargs)

    def __iter__(self):
        return iter(self._kwargs)

    def __getitem__(self, item):
        return self._kwargs[item]


class Gzip(FilterRefBase):
    """Deflate at ``level`` (0-9): ``compression=arca.filters.Gzip(6)``."""

    filter_id = h5z.FILTER_DEFLATE

    def __init__(self, level=DEFAULT_GZIP):
        self.filter_options = (level,)
