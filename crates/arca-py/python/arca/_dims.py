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
"""

import struct

import numpy as np

from ._dtypes import Reference, ref_dtype, string_dtype
from ._object import registered

REFERENCE_LIST_DTYPE = np.dtype(
    {"names": ["dataset", "dimension"], "formats": [ref_dtype, "<u4"],
     "offsets": [0, 8], "itemsize": 16}
)


def is_scale(ds):
    """Whether ``ds`` is marked as a dimension scale."""
    a = ds._id.attrs()
    if not a.contains("CLASS"):
        return False
    t, _, data = a.get("CLASS")
    return not t.startswith("vlen:") and data.rstrip(b"\0") == b"DIMENSION_SCALE"


def make_scale(ds, name=""):
    """Mark ``ds`` as a dimension scale called ``name``."""
    if "DIMENSION_LIST" in ds.attrs:
        raise RuntimeError("a dataset with dimension scales attached cannot be a scale")
    a = ds._id.attrs()
    # NUL-terminated, as HDF5's H5DSis_scale (and so netCDF-4) requires.
    a.set("CLASS", "|S16:nullterm", [], b"DIMENSION_SCALE\0")
    b = name.encode("utf-8") if isinstance(name, str) else bytes(name)
    a.set("NAME", f"|S{len(b) + 1}:nullterm", [], b + b"\0")


def _dim_lists(ds):
    """The ids of each dimension's scales, from ``DIMENSION_LIST``."""
    rank = len(ds.shape)
    a = ds._id.attrs()
    if not a.contains("DIMENSION_LIST"):
        return [[] for _ in range(rank)]
    t, shape, data = a.get("DIMENSION_LIST")
    if t != "vlen:ref" or list(shape) != [rank]:
        raise RuntimeError(f"DIMENSION_LIST of {ds.name} is not one list of references per dimension")
    lens = struct.unpack_from(f"<{rank}Q", data)
    ids = np.frombuffer(data, dtype="=u8", offset=8 * rank)
    out, at = [], 0
    for n in lens:
        k = n // 8
        out.append([int(x) for x in ids[at:at + k]])
        at += k
    return out


def _set_dim_lists(ds, lists):
    a = ds._id.attrs()
    if not any(lists):
        if a.contains("DIMENSION_LIST"):
            a.delete("DIMENSION_LIST")
        return
    payload = struct.pack(f"<{len(lists)}Q", *(8 * len(x) for x in lists))
    payload += np.array([i for x in lists for i in x], dtype="=u8").tobytes()
    a.set("DIMENSION_LIST", "vlen:ref", [len(lists)], payload)


def _ref_list(scale):
    if "REFERENCE_LIST" not in scale.attrs:
        return []
    arr = np.atleast_1d(scale.attrs["REFERENCE_LIST"])
    return [(r["dataset"], int(r["dimension"])) for r in arr]


def _set_ref_list(scale, entries):
    if not entries:
        if "REFERENCE_LIST" in scale.attrs:
            del scale.attrs["REFERENCE_LIST"]
        return
    arr = np.empty(len(entries), dtype=REFERENCE_LIST_DTYPE)
    for i, (ref, dim) in enumerate(entries):
        arr[i] = (ref, dim)
    scale.attrs.create("REFERENCE_LIST", arr, dtype=REFERENCE_LIST_DTYPE)


def attach(ds, scale, dim):
    if not isinstance(scale, registered("dataset")):
        raise TypeError("a dimension scale is a dataset")
    if scale == ds:
        raise RuntimeError("a dataset cannot be its own dimension scale")
    if scale.file is not ds.file:
        raise ValueError("a dimension scale must be in the same file")
    if is_scale(ds):
        raise RuntimeError("a dimension scale cannot have scales attached")
    if not is_scale(scale):
        make_scale(scale)
    lists = _dim_lists(ds)
    sid = scale._id.id
    if sid in lists[dim]:
        return
    lists[dim].append(sid)
    _set_dim_lists(ds, lists)
    entries = _ref_list(scale)
    entries.append((ds.ref, dim))
    _set_ref_list(scale, entries)


def detach(ds, scale, dim):
    lists = _dim_lists(ds)
    sid = scale._id.id
    if sid not in lists[dim]:
        raise ValueError(f"{scale.name} is not attached to dimension {dim} of {ds.name}")
    lists[dim].remove(sid)
    _set_dim_lists(ds, lists)
    ref = ds.ref
    _set_ref_list(scale, [(r, d) for r, d in _ref_list(scale) if not (r == ref and d == dim)])


def detach_everywhere(scale):
    """Detach ``scale`` from every dataset that lists it (before it goes)."""
    f = scale.file
    for ref, dim in _ref_list(scale):
        try:
            ds = f[ref]
        except (KeyError, ValueError):
            continue
        lists = _dim_lists(ds)
        if 0 <= dim < len(lists) and scale._id.id in lists[dim]:
            lists[dim].remove(scale._id.id)
            _set_dim_lists(ds, lists)


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
        return f"<Dimensions of arca object {self._ds.name!r}>"


class DimensionProxy:
    """One dimension of a dataset: its label and attached scales."""

    def __init__(self, ds, dim):
        self._ds = ds
        self._dim = dim

    @property
    def label(self):
        """The dimension's name ("" if none)."""
        a = self._ds.attrs
        if "DIMENSION_LABELS" not in a:
            return ""
        labels = np.atleast_1d(a["DIMENSION_LABELS"])
        v = labels[self._dim] if self._dim < len(labels) else ""
        return v.decode("utf-8") if isinstance(v, bytes) else str(v or "")

    @label.setter
    def label(self, value):
        a = self._ds.attrs
        rank = len(self._ds.shape)
        if "DIMENSION_LABELS" in a:
            old = [x.decode() if isinstance(x, bytes) else str(x or "")
                   for x in np.atleast_1d(a["DIMENSION_LABELS"])]
        else:
            old = [""] * rank
        old += [""] * (rank - len(old))
        old[self._dim] = value.decode() if isinstance(value, bytes) else str(value)
        a.create("DIMENSION_LABELS", np.array(old, dtype=object), dtype=string_dtype())

    def attach_scale(self, scale):
        """Attach the scale dataset ``scale`` to this dimension."""
        attach(self._ds, scale, self._dim)

    def detach_scale(self, scale):
        """Detach ``scale`` from this dimension."""
        detach(self._ds, scale, self._dim)

    def _scales(self):
        f = self._ds.file
        return [f[Reference(i)] for i in _dim_lists(self._ds)[self._dim]]

    def __len__(self):
        return len(_dim_lists(self._ds)[self._dim])

    def __getitem__(self, item):
        if isinstance(item, (int, np.integer)):
            return self._scales()[item]
        for s in self._scales():
            if _scale_name(s) == item:
                return s
        raise KeyError(item)

    def __iter__(self):
        yield from self._scales()

    def keys(self):
        return [_scale_name(s) for s in self._scales()]

    def values(self):
        return self._scales()

    def items(self):
        return [(_scale_name(s), s) for s in self._scales()]

    def __repr__(self):
        return f'<"{self.label}" dimension {self._dim} of arca dataset {self._ds.name!r}>'


def _scale_name(scale):
    if "NAME" not in scale.attrs:
        return ""
    v = scale.attrs["NAME"]
    return v.decode("utf-8") if isinstance(v, bytes) else str(v)
