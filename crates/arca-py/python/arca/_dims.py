"""Dimension scales, as h5py and netCDF4 use them: a scale is a dataset
marked with the attributes ``CLASS = "DIMENSION_SCALE"`` and ``NAME``; a
dataset lists the scales of each dimension in ``DIMENSION_LIST`` (one
variable-length list of object references per dimension) and names its
dimensions in ``DIMENSION_LABELS``; a scale lists who uses it in
``REFERENCE_LIST`` (records of a dataset reference and a dimension index).
These are HDF5's conventions, so files keep their meaning when exported::

    f["x"] = np.linspace(0, 1, 5)
    f["x"].make_scale("x")
    d = f.create_dataset("t", shape=(5, 3))
    d.dims[0].attach_scale(f["x"])
    d.dims[0].label = "x"
    d.dims[0][0]          # the dataset /x

The functions here work on native dataset handles (what ``ds.id`` holds), so
that :mod:`arca.h5ds` can take them as h5py's ``h5ds`` takes its ids; a
high-level Dataset is accepted wherever a handle is.
"""

import struct

import numpy as np

from . import _native
from ._attrs import AttributeManager
from ._dtypes import Reference, ref_dtype, string_dtype
from ._object import registered

REFERENCE_LIST_DTYPE = np.dtype(
    {"names": ["dataset", "dimension"], "formats": [ref_dtype, "<u4"],
     "offsets": [0, 8], "itemsize": 16}
)


def handle(obj):
    """The native dataset handle of ``obj`` (a Dataset, its ``.id`` or
    the handle itself); TypeError for anything else."""
    h = getattr(obj, "_id", obj)
    if not isinstance(h, _native.Dataset):
        raise TypeError(f"{obj!r} is not a dataset: a dimension scale is a dataset")
    return h


def _rank(h):
    shape = h.shape()
    return 0 if shape is None else len(shape)


def _text(v):
    """A str of a stored name or label (bytes, np.bytes_ or str)."""
    if isinstance(v, bytes):
        return v.decode("utf-8", "surrogateescape")
    return "" if v is None else str(v)


def is_scale(obj):
    """Whether ``obj`` is marked as a dimension scale."""
    a = handle(obj).attrs()
    if not a.contains("CLASS"):
        return False
    t, _, data = a.get("CLASS")
    return not t.startswith("vlen:") and data.rstrip(b"\0") == b"DIMENSION_SCALE"


def make_scale(obj, name=""):
    """Mark ``obj`` as a dimension scale called ``name`` (str or bytes)."""
    a = handle(obj).attrs()
    if a.contains("DIMENSION_LIST"):
        raise RuntimeError("a dataset with dimension scales attached cannot be a scale")
    # NUL-terminated, as HDF5's H5DSis_scale (and so netCDF-4) requires.
    a.set("CLASS", "|S16:nullterm", [], b"DIMENSION_SCALE\0")
    b = name.encode("utf-8") if isinstance(name, str) else bytes(name)
    a.set("NAME", f"|S{len(b) + 1}:nullterm", [], b + b"\0")


def scale_name(obj):
    """The name a scale was given ("" if none)."""
    a = AttributeManager(handle(obj).attrs())
    return _text(a["NAME"]) if "NAME" in a else ""


def dim_lists(obj):
    """The ids of each dimension's scales, from ``DIMENSION_LIST``."""
    h = handle(obj)
    rank = _rank(h)
    a = h.attrs()
    if not a.contains("DIMENSION_LIST"):
        return [[] for _ in range(rank)]
    t, shape, data = a.get("DIMENSION_LIST")
    if t != "vlen:ref" or list(shape) != [rank]:
        raise RuntimeError(f"DIMENSION_LIST of {h.path} is not one list of references per dimension")
    lens = struct.unpack_from(f"<{rank}Q", data)
    ids = np.frombuffer(data, dtype="=u8", offset=8 * rank)
    out, at = [], 0
    for n in lens:
        k = n // 8
        out.append([int(x) for x in ids[at:at + k]])
        at += k
    return out


def _set_dim_lists(h, lists):
    a = h.attrs()
    if not any(lists):
        if a.contains("DIMENSION_LIST"):
            a.delete("DIMENSION_LIST")
        return
    payload = struct.pack(f"<{len(lists)}Q", *(8 * len(x) for x in lists))
    payload += np.array([i for x in lists for i in x], dtype="=u8").tobytes()
    a.set("DIMENSION_LIST", "vlen:ref", [len(lists)], payload)


def _ref_list(h):
    a = AttributeManager(h.attrs())
    if "REFERENCE_LIST" not in a:
        return []
    arr = np.atleast_1d(a["REFERENCE_LIST"])
    return [(r["dataset"], int(r["dimension"])) for r in arr]


def _set_ref_list(h, entries):
    a = AttributeManager(h.attrs())
    if not entries:
        if "REFERENCE_LIST" in a:
            del a["REFERENCE_LIST"]
        return
    arr = np.empty(len(entries), dtype=REFERENCE_LIST_DTYPE)
    for i, (ref, dim) in enumerate(entries):
        arr[i] = (ref, dim)
    a.create("REFERENCE_LIST", arr, dtype=REFERENCE_LIST_DTYPE)


def _check_dim(h, dim):
    rank = _rank(h)
    if not 0 <= dim < rank:
        raise ValueError(f"dimension {dim} is out of range for a dataset of rank {rank}")


def attach(ds, scale, dim):
    """Attach ``scale`` to dimension ``dim`` of ``ds`` (making it a scale
    if it is not one)."""
    h, s = handle(ds), handle(scale)
    fa, fb = getattr(ds, "_file", None), getattr(scale, "_file", None)
    if fa is not None and fb is not None and fa is not fb:
        raise ValueError("a dimension scale must be in the same file")
    if s.id == h.id:
        raise RuntimeError("a dataset cannot be its own dimension scale")
    _check_dim(h, dim)
    if is_scale(h):
        raise RuntimeError("a dimension scale cannot have scales attached")
    if not is_scale(s):
        make_scale(s)
    lists = dim_lists(h)
    if s.id in lists[dim]:
        return
    lists[dim].append(s.id)
    _set_dim_lists(h, lists)
    entries = _ref_list(s)
    entries.append((Reference(h.id), dim))
    _set_ref_list(s, entries)


def detach(ds, scale, dim):
    """Detach ``scale`` from dimension ``dim`` of ``ds``."""
    h, s = handle(ds), handle(scale)
    _check_dim(h, dim)
    lists = dim_lists(h)
    if s.id not in lists[dim]:
        raise RuntimeError(f"{s.path} is not attached to dimension {dim} of {h.path}")
    lists[dim].remove(s.id)
    _set_dim_lists(h, lists)
    ref = Reference(h.id)
    _set_ref_list(s, [(r, d) for r, d in _ref_list(s) if not (r == ref and d == dim)])


def scale_handles(obj, dim):
    """Native handles of the scales attached to dimension ``dim``."""
    h = handle(obj)
    ids = dim_lists(h)[dim]
    if not ids:
        return []
    root = _native.Group.root_of(h)
    return [root.dereference(i) for i in ids]


def labels(obj):
    """Every dimension's label ("" where there is none)."""
    h = handle(obj)
    rank = _rank(h)
    a = AttributeManager(h.attrs())
    out = [""] * rank
    if "DIMENSION_LABELS" in a:
        for i, v in enumerate(np.atleast_1d(a["DIMENSION_LABELS"])[:rank]):
            out[i] = _text(v)
    return out


def set_label(obj, dim, value):
    """Name dimension ``dim`` (str or bytes)."""
    h = handle(obj)
    _check_dim(h, dim)
    old = labels(h)
    old[dim] = _text(value)
    AttributeManager(h.attrs()).create(
        "DIMENSION_LABELS", np.array(old, dtype=object), dtype=string_dtype())


def detach_everywhere(scale):
    """Detach ``scale`` from every dataset that lists it (before it goes)."""
    s = handle(scale)
    root = _native.Group.root_of(s)
    for ref, dim in _ref_list(s):
        try:
            h = root.dereference(ref._oid)
        except (KeyError, ValueError):
            continue
        if not isinstance(h, _native.Dataset):
            continue
        lists = dim_lists(h)
        if 0 <= dim < len(lists) and s.id in lists[dim]:
            lists[dim].remove(s.id)
            _set_dim_lists(h, lists)


class DimensionManager:
    """``ds.dims``: one :class:`DimensionProxy` per dimension."""

    def __init__(self, ds):
        self._ds = ds

    def __len__(self):
        return len(self._ds.shape)

    def __getitem__(self, index):
        n = len(self)
        if not isinstance(index, (int, np.integer)) or not -n <= index < n:
            raise IndexError(f"Index out of range: {index!r}")
        return DimensionProxy(self._ds, int(index) % n)

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def create_scale(self, dset, name=""):
        """Mark ``dset`` as a scale (older h5py spelling of ``make_scale``)."""
        dset.make_scale(name)

    def __repr__(self):
        if not self._ds:
            return "<Dimensions of closed arca dataset>"
        return f"<Dimensions of arca object {self._ds.name!r}>"


class DimensionProxy:
    """One dimension of a dataset: its label and attached scales. Iterating
    gives the scales' names, as in h5py; ``values()`` the scales."""

    def __init__(self, ds, dim):
        self._ds = ds
        self._dim = dim

    def __eq__(self, other):
        return (isinstance(other, DimensionProxy) and other._ds == self._ds
                and other._dim == self._dim)

    def __hash__(self):
        return hash((DimensionProxy, hash(self._ds), self._dim))

    @property
    def label(self):
        """The dimension's name ("" if none)."""
        return labels(self._ds)[self._dim]

    @label.setter
    def label(self, value):
        set_label(self._ds, self._dim, value)

    def attach_scale(self, scale):
        """Attach the scale dataset ``scale`` to this dimension."""
        attach(self._ds, scale, self._dim)

    def detach_scale(self, scale):
        """Detach ``scale`` from this dimension."""
        detach(self._ds, scale, self._dim)

    def _scales(self):
        wrap = registered("dataset")
        f = self._ds.file
        return [wrap(f, h) for h in scale_handles(self._ds, self._dim)]

    def __len__(self):
        return len(dim_lists(self._ds)[self._dim])

    def __getitem__(self, item):
        scales = self._scales()
        if isinstance(item, (int, np.integer)):
            if not scales:
                # h5py: iterating no scales is an error of the library.
                raise RuntimeError(f"dimension {self._dim} of {self._ds.name} has no scales")
            return scales[item]
        for s in scales:
            if scale_name(s) == _text(item):
                return s
        raise KeyError(item)

    def __iter__(self):
        yield from self.keys()

    def keys(self):
        """The names of the attached scales."""
        return [scale_name(s) for s in self._scales()]

    def values(self):
        """The attached scales."""
        return self._scales()

    def items(self):
        """``(name, scale)`` of the attached scales."""
        return [(scale_name(s), s) for s in self._scales()]

    def __repr__(self):
        if not self._ds:
            return "<Dimension of closed arca dataset>"
        return f'<"{self.label}" dimension {self._dim} of arca dataset {self._ds.name!r}>'
