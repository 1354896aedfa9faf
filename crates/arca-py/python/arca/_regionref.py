"""Region references: a dataset and a selection of it, as h5py's.

Any object's ``regionref`` property makes them from a dataset with numpy
indexing; they are stored in datasets and attributes of
:data:`arca.regionref_dtype` and read back as :class:`arca.RegionReference`::

    r = ds.regionref[2:5, ::2]
    f["hot"] = ...                                 # any object
    refs = f.create_dataset("refs", (4,), dtype=arca.regionref_dtype)
    refs[0] = r
    f[refs[0]]                                     # the dataset
    ds[refs[0]]                                    # its selected elements
    ds.regionref.shape(r), ds.regionref.selection(r)   # (dims), (3, ...)

A selection crosses to the core as ``(dims, kind, data)`` (see
``_native.region_ref_encode``); the core stores and checks it.
"""

import numpy as np

from . import _native
from ._dtypes import Empty, RegionReference, object_array, regionref_dtype
from ._selection import broadcast_shape, parse, runs
from ._util import prod

TYPE_STRING = "vlen:region"


# -- selections --------------------------------------------------------------------
def selection_of(shape, key):
    """The selection tuple of numpy-style ``key`` on a dataset of ``shape``,
    as h5py selects (h5py's errors for keys it refuses)."""
    shape = tuple(shape)
    if not shape:
        if key is Ellipsis or (type(key) is tuple and key in ((), (Ellipsis,))):
            return [], "all", None
        raise ValueError("Illegal slicing argument for scalar dataspace")
    sel = parse(key, shape)
    if sel.mask is not None:
        return list(shape), "points", np.argwhere(sel.mask).tolist()
    if not sel.lists:
        return list(shape), "hyperslab", [
            (int(a), int(s), int(c), 1) for a, c, s in zip(sel.start, sel.count, sel.step)
        ]
    # Index lists and blocks: the union of boxes, one per run of each axis.
    per_axis = []
    for ax, (a, c, s) in enumerate(zip(sel.start, sel.count, sel.step)):
        if ax in sel.lists:
            per_axis.append([(first, n) for first, n, _ in runs(sel.lists[ax])])
        elif s == 1 or c <= 1:
            per_axis.append([(a, c)])
        else:
            per_axis.append([(a + i * s, 1) for i in range(c)])
    if any(not r or any(n == 0 for _, n in r) for r in per_axis):
        return list(shape), "none", None
    boxes = [[]]
    for r in per_axis:
        boxes = [b + [x] for b in boxes for x in r]
    return list(shape), "blocks", [([x[0] for x in b], [x[1] for x in b]) for b in boxes]


def selection_shape(selection):
    """The shape of a selection's elements, as h5py guesses it (None for a
    scalar dataspace with nothing selected): the dataspace's rank where the
    selection is a box of one index set per axis, else 1-D."""
    dims, kind, data = selection
    rank = len(dims)
    if rank == 0:
        return () if kind == "all" else None
    if kind == "none":
        return (0,) * rank
    if kind == "all":
        return tuple(dims)
    if kind == "points":
        return (len(data),)
    if kind == "hyperslab":
        shape = tuple(c * b for _, _, c, b in data)
        # HDF5 takes a hyperslab of no elements for no selection at all.
        return (0,) * rank if 0 in shape else shape
    linear = _native.region_linear(selection)
    n = len(linear)
    if n == 0:
        return (0,) * rank
    coords = np.unravel_index(linear, dims)
    shape = []
    for c in coords:
        lo = c.min()
        # Elements per index of this axis: those at its first index.
        shape.append(1 if c.max() == lo else n // int(np.count_nonzero(c == lo)))
    return tuple(shape) if prod(shape) == n else (n,)


def _selection(ref):
    if not isinstance(ref, RegionReference) or not ref:
        raise ValueError("Invalid region reference")
    return _native.region_ref_decode(ref._bytes)[1]


class RegionProxy:
    """``obj.regionref``: makes region references to a dataset by
    indexing (``ds.regionref[2:5]``), and tells a reference's dataspace
    shape (``.shape(ref)``) and selection shape (``.selection(ref)``)."""

    def __init__(self, obj):
        self._obj = obj

    def __getitem__(self, key):
        native = self._obj._id
        if not isinstance(native, _native.Dataset):
            raise TypeError("Region references can only be made to datasets")
        shape = native.shape()
        if shape is None:
            raise TypeError("Region references cannot be made to empty datasets")
        sel = selection_of(shape, key)
        return RegionReference(_native.region_ref_encode(native.id, sel))

    def shape(self, ref):
        """The shape of the dataspace ``ref`` selects from."""
        return tuple(_selection(ref)[0])

    def selection(self, ref):
        """The shape of what ``ref`` selects (see :func:`selection_shape`)."""
        return selection_shape(_selection(ref))


def read_region(ds, ref):
    """``ds[ref]``: the elements of ``ds`` that region reference ``ref``
    selects, in the selection's shape (h5py's)."""
    if not isinstance(ref, RegionReference) or not ref or ref._oid != ds._id.id:
        raise ValueError("Region reference must point to this dataset")
    sel = _selection(ref)
    dims, kind, data = sel
    mshape = selection_shape(sel)
    if mshape is None:
        return Empty(ds.dtype)
    if prod(mshape) == 0:
        return np.zeros(mshape, dtype=ds.dtype)
    if kind == "all":
        return np.asarray(ds[()]).reshape(mshape)
    if kind == "hyperslab" and all(b == 1 for _, _, _, b in data):
        box = tuple(slice(a, a + (c - 1) * s + 1, s) for a, s, c, _ in data)
        return np.asarray(ds[box]).reshape(mshape)
    coords = np.unravel_index(_native.region_linear(sel), dims)
    lo = [int(c.min()) for c in coords]
    hi = [int(c.max()) + 1 for c in coords]
    block = np.asarray(ds[tuple(slice(a, b) for a, b in zip(lo, hi))])
    picked = block[tuple(c - a for c, a in zip(coords, lo))]
    return picked.reshape(mshape)


# -- datasets of region references -------------------------------------------------
class RegionEngine:
    """The element engine (see ``_vlen``) of datasets of region references:
    each element a :class:`RegionReference`, stored as the bytes of its
    reference in the dataset's byte vector (empty: the null reference)."""

    ragged = False
    dtype = memtype = regionref_dtype

    def __init__(self, dsid, type_string=TYPE_STRING):
        self._id = dsid
        self.type_string = type_string

    def fillvalue(self):
        return RegionReference()

    def read(self, start, count, step):
        n = prod(count)
        out = np.empty(n, dtype=object)
        if n:
            values, offsets = _native.vlen_read(self._id, start, count, step)
            items = _native.vlen_unpack(values, offsets, False)
            for i, b in enumerate(items):
                out[i] = RegionReference(b)
        return out.reshape(count)

    def write(self, start, count, step, data):
        flat = np.asarray(data, dtype=object).reshape(-1)
        if flat.size:
            values, offsets = _native.vlen_pack(encode_items(flat.tolist()))
            _native.vlen_write(self._id, start, count, step, values, offsets)

    def coerce(self, value, out_shape, count):
        arr = object_array(value, RegionReference)
        out_shape = tuple(out_shape)
        if arr.shape != out_shape:
            arr = np.broadcast_to(arr.reshape(broadcast_shape(arr.shape, out_shape)), out_shape)
        return arr.reshape(count)

    def info(self):
        return _native.vlen_info(self._id)

    def repack(self):
        _native.vlen_repack(self._id)

    def create_options(self):
        info = self.info()
        opts = {"vlen_chunk_bytes": info["chunk_bytes"], "vlen_reuse_space": info["reuse_space"]}
        for name, level in info["filters"]:
            if name == "shuffle":
                opts["vlen_shuffle"] = True
            else:
                opts["vlen_compression"] = name
                if level is not None:
                    opts["vlen_compression_opts"] = level
        return opts


def holds_regions(data):
    """Whether ``data`` (a value, list or object array) holds region
    references: a dataset made of it is of :data:`regionref_dtype`."""
    if isinstance(data, RegionReference):
        return True
    if isinstance(data, np.ndarray) and data.dtype.kind != "O":
        return False
    if isinstance(data, (list, tuple, np.ndarray)):
        for x in np.asarray(data, dtype=object).reshape(-1):
            if x is not None:
                return isinstance(x, RegionReference)
    return False


def encode_items(values):
    """The stored bytes of each region reference in ``values`` (attributes)."""
    out = []
    for x in values:
        if x is None or (isinstance(x, RegionReference) and not x):
            out.append(b"")
        elif isinstance(x, RegionReference):
            out.append(x._bytes)
        else:
            raise TypeError(f"a region reference element must be an arca.RegionReference, "
                            f"not {type(x).__name__}")
    return out
