"""Virtual datasets: a dataset whose elements are assembled, at each read,
from selections of other datasets in this file or others, as h5py's::

    layout = arca.VirtualLayout(shape=(4, 100), dtype="i4")
    for n in range(4):
        src = arca.VirtualSource(f"raw_{n}.arca", "data", shape=(100,))
        layout[n] = src                       # row n from file n
    f.create_virtual_dataset("all", layout, fillvalue=-1)
    f["all"][2, :10]                          # read from raw_2.arca
    f["all"].is_virtual, f["all"].virtual_sources()

A source file named as the virtual dataset's own file is stored as ``"."``
(the file may be renamed); a relative name is looked for beside the file,
an absolute one as given and then beside the file; a source that is
missing reads as the fill value. ``arca.UNLIMITED`` as a slice's stop on
both sides maps as much of the source as it holds, growing the virtual
dataset with it (give it a ``maxshape`` of ``None`` on that axis). Virtual
datasets are read-only in arca (h5py writes through to the sources).
"""

import copy
import os
from collections import namedtuple

import numpy as np

from . import _native
from ._datatype import Datatype
from ._dtypes import native, type_string
from ._object import wrap
from ._regionref import selection_of
from ._selection import parse
from ._util import member_path, prod

UNLIMITED = _native.UNLIMITED


class VDSmap(namedtuple("VDSmap", ("vspace", "file_name", "dset_name", "src_space"))):
    """One mapping of a virtual dataset, as :meth:`arca.Dataset.virtual_sources`
    lists them: the virtual side's and the source's selections
    (:class:`Dataspace`), the source file's name and its dataset's path."""


class Dataspace:
    """A selection of a dataspace, as a mapping holds it: ``shape`` (the
    extent it was made in) and ``selection``, ``(kind, data)`` with ``kind``
    one of ``"none"``, ``"all"``, ``"points"``, ``"hyperslab"`` (data:
    ``(start, stride, count, block)`` per axis, count ``arca.UNLIMITED``
    for an unlimited mapping) or ``"blocks"``; h5py's ``SpaceID`` methods
    for what it selects::

        m = ds.virtual_sources()[0]
        m.vspace.get_regular_hyperslab()    # ((0,), (1,), (100,), (1,))
    """

    def __init__(self, dims, kind, data):
        self.shape = tuple(dims)
        self.selection = (kind, data)

    def is_regular_hyperslab(self):
        """Whether the selection is one regular hyperslab."""
        return self.selection[0] == "hyperslab"

    def get_regular_hyperslab(self):
        """``(start, stride, count, block)``, each a tuple over the axes."""
        kind, data = self.selection
        if kind == "all":
            return ((0,) * len(self.shape), (1,) * len(self.shape), self.shape,
                    (1,) * len(self.shape))
        if kind != "hyperslab":
            raise ValueError("not a regular hyperslab selection")
        return tuple(tuple(int(d[i]) for d in data) for i in range(4))

    def get_select_npoints(self):
        """How many elements are selected (unlimited counts taken as 0)."""
        kind, data = self.selection
        if kind == "hyperslab" and any(c == UNLIMITED for _, _, c, _ in data):
            return 0
        if kind == "hyperslab":
            return prod(c * b for _, _, c, b in data)
        if kind == "all":
            return prod(self.shape)
        if kind == "none":
            return 0
        return len(_native.region_linear((list(self.shape), kind, data)))

    def get_select_bounds(self):
        """The corners ``(low, high)`` of the box around the selection."""
        kind, data = self.selection
        if kind == "all":
            return (0,) * len(self.shape), tuple(d - 1 for d in self.shape)
        if kind == "hyperslab":
            lo = tuple(a for a, _, _, _ in data)
            hi = tuple(a + (c - 1) * s + b - 1 if c != UNLIMITED else UNLIMITED
                       for a, s, c, b in data)
            return lo, hi
        lin = _native.region_linear((list(self.shape), kind, data))
        if not len(lin):
            return None
        coords = np.unravel_index(lin, self.shape)
        return tuple(int(c.min()) for c in coords), tuple(int(c.max()) for c in coords)

    def __repr__(self):
        return f"<arca Dataspace {self.shape} {self.selection[0]}>"


def _selection(shape, key):
    """The selection tuple of ``key`` on ``shape`` (a slice stopping at
    ``UNLIMITED`` makes that axis's count unlimited), and the shape of what
    it selects."""
    shape = tuple(shape)
    items = key if isinstance(key, tuple) else (key,)
    n_real = sum(1 for k in items if k is not Ellipsis)
    expanded = []
    for k in items:
        if k is Ellipsis:
            expanded.extend([slice(None)] * (len(shape) - n_real))
        else:
            expanded.append(k)
    unlimited = [i for i, k in enumerate(expanded)
                 if isinstance(k, slice) and k.stop is not None and k.stop >= UNLIMITED]
    if unlimited:
        key = tuple(slice(k.start, None, k.step) if i in unlimited else k
                    for i, k in enumerate(expanded))
    sel = selection_of(shape, key)
    out_shape = parse(key, shape).out_shape if shape else ()
    if unlimited:
        dims, kind, data = sel
        if kind != "hyperslab":
            raise ValueError("an unlimited selection is a regular hyperslab")
        data = [(a, s, UNLIMITED, b) if i in unlimited else (a, s, c, b)
                for i, (a, s, c, b) in enumerate(data)]
        sel = (dims, kind, data)
    return sel, tuple(out_shape)


def _count(sel):
    """Elements a selection tuple picks, or None when a count is unlimited."""
    dims, kind, data = sel
    if kind == "hyperslab":
        if any(c == UNLIMITED for _, _, c, _ in data):
            return None
        return prod(c * b for _, _, c, b in data)
    return Dataspace(dims, kind, data).get_select_npoints()


class VirtualSource:
    """A source of a virtual dataset: a dataset in a file, given by path
    (``VirtualSource("raw.arca", "data", shape=(100,))``) or as an open
    dataset (``VirtualSource(f["data"])``, no other argument), sliced
    once to say which of its elements a mapping takes (``src[::2]``).

    ``maxshape`` entries of None are unlimited.
    """

    def __init__(self, path_or_dataset, name=None, shape=None, dtype=None, maxshape=None):
        if isinstance(getattr(path_or_dataset, "_id", None), _native.Dataset):
            given = {k: v for k, v in {"name": name, "shape": shape, "dtype": dtype,
                                       "maxshape": maxshape}.items() if v is not None}
            if given:
                raise TypeError("If a Dataset is passed as the first argument then no other "
                                f"arguments may be passed.  You passed {given}")
            ds = path_or_dataset
            path, name, shape, dtype, maxshape = (ds.file.filename, ds.name, ds.shape,
                                                  ds.dtype, ds.maxshape)
        else:
            path = path_or_dataset
            if name is None:
                raise TypeError("The name parameter is required when specifying a source by path")
            if shape is None:
                raise TypeError("The shape parameter is required when specifying a source by path")
            if isinstance(shape, (int, np.integer)):
                shape = (int(shape),)
            if isinstance(maxshape, (int, np.integer)):
                maxshape = (int(maxshape),)
        self.path = os.fspath(path) if not isinstance(path, str) else path
        self.name = name
        self.dtype = dtype
        self._dims = tuple(int(s) for s in shape)
        self.maxshape = self._dims if maxshape is None else tuple(
            UNLIMITED if m is None else m for m in maxshape)
        self._sel = (list(self._dims), "all", None)
        self._shape = self._dims
        self._all_selected = True

    @property
    def shape(self):
        """The shape of what is selected (the whole source until sliced)."""
        return self._shape

    def __getitem__(self, key):
        if not self._all_selected:
            raise RuntimeError("VirtualSource objects can only be sliced once.")
        out = copy.copy(self)
        out._sel, out._shape = _selection(self._dims, key)
        out._all_selected = False
        return out


class VirtualLayout:
    """The shape and type of a virtual dataset, and which sources fill which
    of its elements: ``layout[key] = source`` maps the elements ``key``
    selects to those ``source`` (a :class:`VirtualSource`, sliced or not)
    selects, in order; both must select as many. Later mappings win where
    they overlap. ``filename``, when known, names the file the dataset
    will be in (sources in it are stored as ``"."``)::

        layout = arca.VirtualLayout((2, 10), "f4", maxshape=(2, None))
        layout[0] = arca.VirtualSource("a.arca", "x", shape=(10,))
    """

    def __init__(self, shape, dtype, maxshape=None, filename=None):
        self.shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        self.dtype = dtype
        self.maxshape = (maxshape,) if isinstance(maxshape, (int, np.integer)) else maxshape
        self._filename = filename
        self._maps = []

    def __setitem__(self, key, source):
        sel, _ = _selection(self.shape, key)
        if "points" in (sel[1], source._sel[1]):
            raise ValueError("Invalid mapping selections (point selections not currently "
                             "supported with virtual datasets)")
        a, b = _count(sel), _count(source._sel)
        if (a is None) != (b is None) or (a is not None and a != b):
            raise ValueError("Virtual and source dataspace selections have different number "
                             f"of elements ({a} and {b})")
        self._maps.append((source.path, source.name, sel, source._sel))


def _same_file(a, b):
    try:
        return os.path.realpath(os.fspath(a)) == os.path.realpath(os.fspath(b))
    except (TypeError, ValueError):
        return False


def create_virtual_dataset(group, name, layout, fillvalue=None):
    """``group.create_virtual_dataset``: the dataset ``layout`` describes."""
    dst = group.file.filename
    if layout._filename is not None and not _same_file(layout._filename, dst):
        raise ValueError(f"the layout was made for {layout._filename!r}, not {dst!r}")
    dtype = layout.dtype
    committed = None
    if isinstance(dtype, Datatype):
        committed, dtype = dtype._id, dtype.dtype
    dtype = np.dtype(dtype)
    maps = []
    for path, dset, vsel, ssel in layout._maps:
        file = "." if _same_file(path, dst) else os.fspath(path)
        maps.append((file, dset.decode() if isinstance(dset, bytes) else dset, vsel, ssel))
    fill = None
    if fillvalue is not None:
        fill = np.asarray(fillvalue).astype(native(dtype)).reshape(()).tobytes()
    maxshape = None
    if layout.maxshape is not None:
        maxshape = [None if m is None or m == UNLIMITED else int(m) for m in layout.maxshape]
    if isinstance(name, bytes):
        name = name.decode()
    dsid = group._id.create_virtual(member_path(name), type_string(dtype),
                                   [int(s) for s in layout.shape], maxshape, maps, fill,
                                   False, committed)
    return wrap(group.file, dsid)


def virtual_sources(ds):
    """``ds.virtual_sources()``: its mappings, as :class:`VDSmap`."""
    if ds._id.layout() != "virtual":
        raise RuntimeError("Not a virtual dataset")
    return [VDSmap(Dataspace(*v), file, dset, Dataspace(*s))
            for file, dset, v, s in ds._id.virtual_mappings()]

