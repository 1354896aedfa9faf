"""xarray's door to arca files.

Reading is an ``xarray.backends`` entry point, installed with the package::

    ds = xr.open_dataset("run.arca", engine="arca")          # lazy
    tree = xr.open_datatree("run.arca", engine="arca")        # every group a node
    ds = xr.open_mfdataset(["a.arca", "b.arca"], engine="arca")
    ds = xr.open_dataset("run.arca", engine="arca", chunks={})  # dask: whole arca chunks

Opening reads metadata only; values are read when used, and an indexing
operation reads only the chunks it touches (``arca.io_stats()`` counts
them). Variables' dimensions come from dimension scales, laid out as
netCDF-4 lays them out; CF decoding (times, ``_FillValue``,
``scale_factor``/``add_offset``, ``coordinates``) is xarray's own.

Writing (xarray has no plug-in path for it) is :func:`to_arca`, for a
``Dataset`` or a ``DataTree``, through the same netCDF-4 layout, so that
``arca export`` of the result is a netCDF-4 file that
``xr.open_dataset(..., engine="netcdf4")`` reads identically.
"""

from __future__ import annotations

import os
import posixpath

import numpy as np

import xarray as xr
from xarray.backends import BackendArray, BackendEntrypoint
from xarray.backends.common import AbstractDataStore
from xarray.backends.file_manager import CachingFileManager
from xarray.backends.store import StoreBackendEntrypoint
from xarray.core import indexing
from xarray.core.utils import FrozenDict, close_on_error

from . import _dims
from ._dataset import Dataset
from ._file import File
from ._group import Group

# netCDF-4's and HDF5's bookkeeping attributes: not the user's.
_HIDDEN = {"CLASS", "NAME", "REFERENCE_LIST", "DIMENSION_LIST", "DIMENSION_LABELS",
           "_Netcdf4Dimid", "_Netcdf4Coordinates", "_NCProperties", "_nc3_strict"}
# The NAME a netCDF-4 dimension without a variable of its own carries.
_PHONY = "This is a netCDF dimension but not a netCDF variable."
_ENCODINGS = {"chunksizes", "chunks", "zlib", "complevel", "compression", "compression_opts",
              "shuffle", "fletcher32", "contiguous", "dtype", "_FillValue", "scale_factor",
              "add_offset", "units", "calendar", "source", "original_shape", "preferred_chunks",
              "coordinates", "_Unsigned", "_Encoding"}


def _text(v):
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, np.bytes_):
        return bytes(v).decode("utf-8", "replace")
    return v


def _attrs(obj):
    out = {}
    for k in obj.attrs:
        if k in _HIDDEN:
            continue
        v = obj.attrs[k]
        if isinstance(v, np.ndarray) and v.dtype.kind == "S":
            v = v.astype(str) if v.ndim else _text(v[()])
        out[k] = _text(v)
    return out


def _is_phony(ds):
    if "NAME" not in ds.attrs:
        return False
    return str(_text(ds.attrs["NAME"])).startswith(_PHONY)


def _dim_names(ds):
    """A dataset's dimension names: its scales' names, else phony ones."""
    if _dims.is_scale(ds) and ds.ndim == 1:
        return (posixpath.basename(ds.name),)
    names = []
    for i, d in enumerate(ds.dims):
        scales = list(d.values()) if len(d) else []
        names.append(posixpath.basename(scales[0].name) if scales else f"phony_dim_{i}")
    return tuple(names)


class ArcaArrayWrapper(BackendArray):
    """One variable, read lazily: a selection reads the chunks it touches.
    Pickles by its store, which reopens the file by path."""

    def __init__(self, name, store):
        self.name = name
        self.store = store
        ds = store.group()[name]
        self.shape = ds.shape
        dtype = ds.dtype
        if dtype.kind == "O":
            dtype = xr.coding.strings.create_vlen_dtype(str)
        self.dtype = dtype

    def __getitem__(self, key):
        return indexing.explicit_indexing_adapter(
            key, self.shape, indexing.IndexingSupport.OUTER_1VECTOR, self._getitem)

    def _getitem(self, key):
        ds = self.store.group()[self.name]
        vec = [i for i, k in enumerate(key) if isinstance(k, np.ndarray)]
        if not vec or key[vec[0]].size == 0:
            return np.asarray(ds[key])
        # One vector (outer indexing): read each run of consecutive indices
        # as a slab, so that only the chunks it names are read.
        ax = vec[0]
        uniq, inverse = np.unique(key[ax], return_inverse=True)
        runs = np.split(uniq, np.flatnonzero(np.diff(uniq) != 1) + 1)
        out_ax = sum(1 for k in key[:ax] if not isinstance(k, (int, np.integer)))
        pieces = []
        for run in runs:
            k = list(key)
            k[ax] = slice(int(run[0]), int(run[-1]) + 1)
            pieces.append(np.asarray(ds[tuple(k)]))
        return np.take(np.concatenate(pieces, axis=out_ax), inverse, axis=out_ax)


class ArcaStore(AbstractDataStore):
    """An arca file's group as xarray's store (read-only)."""

    def __init__(self, manager, filename, group=None):
        self._manager = manager
        self._filename = filename
        self._group = "/" + (group or "").strip("/")

    @classmethod
    def open(cls, filename, group=None, **kwargs):
        if isinstance(filename, os.PathLike):
            filename = os.fspath(filename)
        # Reopens by path wherever the store is unpickled (dask workers).
        manager = CachingFileManager(File, filename, mode="r", kwargs=kwargs)
        return cls(manager, filename, group)

    def group(self):
        f = self._manager.acquire()
        return f[self._group] if self._group != "/" else f

    def _datasets(self):
        g = self.group()
        return [(k, v) for k, v in g.items() if isinstance(v, Dataset)]

    def get_variables(self):
        out = {}
        for name, ds in self._datasets():
            if _dims.is_scale(ds) and _is_phony(ds):
                continue
            if ds.shape is None:
                continue
            data = indexing.LazilyIndexedArray(ArcaArrayWrapper(name, self))
            enc = {"dtype": ds.dtype, "source": self._filename}
            if ds.chunks is not None:
                enc["chunksizes"] = ds.chunks
                enc["preferred_chunks"] = dict(zip(_dim_names(ds), ds.chunks))
                enc["shuffle"] = ds.shuffle
                enc["fletcher32"] = ds.fletcher32
                if ds.compression is not None:
                    enc["compression"] = ds.compression
                    enc["compression_opts"] = ds.compression_opts
            else:
                enc["contiguous"] = True
            if ds.dtype.kind == "O":
                enc["dtype"] = str
            out[name] = xr.Variable(_dim_names(ds), data, _attrs(ds), enc)
        return FrozenDict(out)

    def get_attrs(self):
        return FrozenDict(_attrs(self.group()))

    def get_dimensions(self):
        dims = {}
        for _, ds in self._datasets():
            if ds.shape is None:
                continue
            for n, s in zip(_dim_names(ds), ds.shape):
                dims[n] = s
        return FrozenDict(dims)

    def get_encoding(self):
        unlimited = set()
        for _, ds in self._datasets():
            if _dims.is_scale(ds) and ds.maxshape and ds.maxshape[0] is None:
                unlimited.add(posixpath.basename(ds.name))
        return {"unlimited_dims": unlimited}

    def close(self, **kwargs):
        self._manager.close(**kwargs)


class ArcaBackendEntrypoint(BackendEntrypoint):
    """``engine="arca"`` for ``xr.open_dataset``, ``open_datatree`` and
    ``open_mfdataset``."""

    description = "Open arca files (.arca) in xarray"
    open_dataset_parameters = ("filename_or_obj", "drop_variables", "group", "mask_and_scale",
                               "decode_times", "concat_characters", "decode_coords",
                               "use_cftime", "decode_timedelta")

    def guess_can_open(self, filename_or_obj):
        try:
            path = os.fspath(filename_or_obj)
        except TypeError:
            return False
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if path.endswith(".arca"):
            return True
        try:
            with open(path, "rb") as fh:
                return fh.read(8) == b"\x89ARCA\r\n\x1a"
        except OSError:
            return False

    def open_dataset(self, filename_or_obj, *, drop_variables=None, group=None,
                     mask_and_scale=True, decode_times=True, concat_characters=True,
                     decode_coords=True, use_cftime=None, decode_timedelta=None):
        store = ArcaStore.open(filename_or_obj, group=group)
        with close_on_error(store):
            return StoreBackendEntrypoint().open_dataset(
                store, mask_and_scale=mask_and_scale, decode_times=decode_times,
                concat_characters=concat_characters, decode_coords=decode_coords,
                drop_variables=drop_variables, use_cftime=use_cftime,
                decode_timedelta=decode_timedelta)

    def open_datatree(self, filename_or_obj, **kwargs):
        groups = self.open_groups_as_dict(filename_or_obj, **kwargs)
        return xr.DataTree.from_dict(groups)

    def open_groups_as_dict(self, filename_or_obj, *, group=None, **kwargs):
        path = os.fspath(filename_or_obj)
        root = "/" + (group or "").strip("/")
        names = [root]
        with File(path, "r") as f:
            start = f[root] if root != "/" else f

            def visit(name, obj):
                if isinstance(obj, Group):
                    names.append(posixpath.join(root, name))

            start.visititems(visit)
        out = {}
        for g in names:
            rel = "/" + posixpath.relpath(g, root).lstrip(".").strip("/") if g != root else "/"
            out[rel] = self.open_dataset(path, group=g, **kwargs)
        return out


# -- writing ---------------------------------------------------------------------
def to_arca(obj, path, mode="w", group=None, encoding=None, unlimited_dims=None):
    """Write an xarray ``Dataset`` or ``DataTree`` to the arca file ``path``.

    ``mode`` is ``"w"`` (replace the file) or ``"a"`` (add to it);
    ``group`` the group to write into; ``encoding`` per variable (for a
    tree, per node path, then per variable): ``chunksizes``, ``zlib``/
    ``complevel``, ``compression`` (``"gzip"``, ``"zstd"``, ``"lz4"``) and
    ``compression_opts``, ``shuffle``, ``fletcher32``, ``dtype``,
    ``_FillValue``, ``contiguous``, and CF's ``units``/``calendar``/
    ``scale_factor``/``add_offset``. ``unlimited_dims`` (default: the
    dataset's ``encoding["unlimited_dims"]``) become resizable dimensions.
    """
    encoding = encoding or {}
    # Creation order is kept, as netCDF-4 keeps it: variables, groups and
    # attributes list back in the order they were written.
    with File(path, mode, track_order=True) as f:
        base = _require_group(f, group) if group else f
        if isinstance(obj, xr.DataTree):
            for node in obj.subtree:
                p = node.path
                g = base if p == "/" else _require_group(base, p.strip("/"))
                _write_dataset(g, node.to_dataset(inherit=False), encoding.get(p, {}),
                               unlimited_dims)
        else:
            _write_dataset(base, obj, encoding, unlimited_dims)


def _require_group(g, path):
    for part in path.strip("/").split("/"):
        g = g[part] if part in g else g.create_group(part, track_order=True)
    return g


def _find_scale(g, dim):
    """The scale of dimension ``dim`` visible from group ``g`` (netCDF-4
    looks in the group, then its ancestors)."""
    while True:
        if dim in g and isinstance(g[dim], Dataset) and _dims.is_scale(g[dim]):
            return g[dim]
        if g.name == "/":
            return None
        g = g.parent


def _write_dataset(g, ds, encoding, unlimited_dims):
    from xarray import conventions

    for name, enc in encoding.items():
        bad = set(enc) - _ENCODINGS
        if bad:
            raise ValueError(f"unexpected encoding for variable {name!r}: {sorted(bad)}")
    ds = ds.copy()
    for name, enc in encoding.items():
        if name in ds.variables:
            ds[name].encoding.update(enc)
    if unlimited_dims is None:
        unlimited_dims = ds.encoding.get("unlimited_dims", set())
    unlimited = set([unlimited_dims] if isinstance(unlimited_dims, str) else unlimited_dims)
    variables, attrs = conventions.encode_dataset_coordinates(ds)
    variables, attrs = conventions.cf_encoder(variables, attrs)
    for k, v in attrs.items():
        g.attrs[k] = v
    # Dimensions first: a coordinate variable is its dimension's scale; a
    # dimension an ancestor group already has (a tree's inherited
    # coordinates) is that one, as netCDF-4 finds dimensions; any other gets
    # a netCDF-4 dimension-only scale. (No _Netcdf4Dimid: netCDF-4 numbers
    # dimensions across the whole file itself.)
    for dim, size in ds.sizes.items():
        var = variables.get(dim)
        if var is not None and var.dims == (dim,):
            _write_variable(g, dim, var, unlimited).make_scale(dim)
            continue
        inherited = _find_scale(g, dim)
        if inherited is not None and inherited.shape[0] == size:
            continue
        maxshape = (None,) if dim in unlimited else (size,)
        sc = g.create_dataset(dim, shape=(size,), dtype="f4", maxshape=maxshape,
                              chunks=(max(1, min(size, 1024)),) if dim in unlimited else None,
                              track_order=True)
        sc.make_scale(f"{_PHONY}{size:10d}")
    for name, var in variables.items():
        if name in ds.sizes and var.dims == (name,):
            continue
        out = _write_variable(g, name, var, unlimited)
        for i, dim in enumerate(var.dims):
            sc = _find_scale(g, dim)
            if sc is None:
                raise ValueError(f"no dimension {dim!r} for variable {name!r}")
            out.dims[i].attach_scale(sc)


def _write_variable(g, name, var, unlimited):
    enc = dict(var.encoding)
    data = var.values
    kw = {}
    chunks = enc.get("chunksizes") or enc.get("chunks")
    resizable = any(d in unlimited for d in var.dims)
    if resizable:
        kw["maxshape"] = tuple(None if d in unlimited else s for d, s in zip(var.dims, var.shape))
    if not enc.get("contiguous") and (chunks or resizable or enc.get("zlib")
                                      or enc.get("compression") or enc.get("shuffle")
                                      or enc.get("fletcher32")):
        kw["chunks"] = tuple(chunks) if chunks else True
        if enc.get("zlib") or enc.get("compression") in ("gzip", "zlib"):
            kw["compression"] = "gzip"
            kw["compression_opts"] = int(enc.get("complevel", enc.get("compression_opts") or 4))
        elif enc.get("compression"):
            kw["compression"] = enc["compression"]
            if enc.get("compression_opts") is not None:
                kw["compression_opts"] = enc["compression_opts"]
        if enc.get("shuffle"):
            kw["shuffle"] = True
        if enc.get("fletcher32"):
            kw["fletcher32"] = True
    fill = var.attrs.get("_FillValue")
    if fill is not None and data.dtype.kind not in "OSU":
        kw["fillvalue"] = np.asarray(fill, dtype=data.dtype)
    if data.dtype.kind == "O":
        from ._vlen import string_dtype
        kw["dtype"] = string_dtype()
    elif data.dtype.kind == "U":
        from ._vlen import string_dtype
        data = data.astype(object)
        kw["dtype"] = string_dtype()
    if data.shape == () and "chunks" in kw:
        kw.pop("chunks")
    out = g.create_dataset(name, data=data, track_order=True, **kw)
    for k, v in var.attrs.items():
        out.attrs[k] = v
    return out
