"""xarray's door to arca files.

Reading is an ``xarray.backends`` entry point, installed with the package::

    ds = xr.open_dataset("run.arca", engine="arca")          # lazy
    tree = xr.open_datatree("run.arca", engine="arca")        # every group a node
    ds = xr.open_mfdataset(["a.arca", "b.arca"], engine="arca")
    ds = xr.open_dataset("run.arca", engine="arca", chunks={})  # dask: whole arca chunks
    ds = xr.open_dataset("s3://bucket/run.arca", engine="arca",
                         storage_options={"aws_region": "eu-west-1"})  # object storage

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
from xarray.backends.common import AbstractDataStore, WritableCFDataStore
from xarray.backends.file_manager import CachingFileManager
from xarray.backends.store import StoreBackendEntrypoint
from xarray.core import indexing
from xarray.core.utils import FrozenDict, close_on_error

from . import _dims
from ._dataset import Dataset
from ._dtypes import string_dtype
from ._file import File
from ._group import Group

# netCDF-4's and HDF5's bookkeeping attributes: not the user's.
_HIDDEN = {"CLASS", "NAME", "REFERENCE_LIST", "DIMENSION_LIST", "DIMENSION_LABELS",
           "_Netcdf4Dimid", "_Netcdf4Coordinates", "_NCProperties", "_nc3_strict"}
# The NAME a netCDF-4 dimension without a variable of its own carries.
_PHONY = "This is a netCDF dimension but not a netCDF variable."
# A dimension named as a variable that is not its coordinate keeps its
# scale under this prefix (netCDF-4's convention).
_NON_COORD = "_nc4_non_coord_"


def _dim_of(scale):
    name = posixpath.basename(scale.name)
    return name[len(_NON_COORD):] if name.startswith(_NON_COORD) else name


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
        return (_dim_of(ds),)
    names = []
    for i, d in enumerate(ds.dims):
        scales = list(d.values()) if len(d) else []
        names.append(_dim_of(scales[0]) if scales else f"phony_dim_{i}")
    return tuple(names)


class ArcaArrayWrapper(BackendArray):
    """One variable, read lazily: a selection reads the chunks it touches.
    Pickles by its store, which reopens the file by path."""

    def __init__(self, name, store, ds):
        self.name = name
        self.store = store
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
        if ds.vlen_base is str:
            # Strings read as bytes (as in h5py); xarray wants str.
            ds = ds.asstr()
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


class _GroupReader:
    """Reading one arca group as xarray's store: needs ``group()`` and
    ``_filename``."""

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
            data = indexing.LazilyIndexedArray(ArcaArrayWrapper(name, self, ds))
            dims = _dim_names(ds)
            enc = {"dtype": ds.dtype, "source": self._filename}
            if ds.chunks is not None:
                enc["chunksizes"] = ds.chunks
                enc["preferred_chunks"] = dict(zip(dims, ds.chunks))
                enc["shuffle"] = ds.shuffle
                enc["fletcher32"] = ds.fletcher32
                if ds.compression is not None:
                    enc["compression"] = ds.compression
                    enc["compression_opts"] = ds.compression_opts
            else:
                enc["contiguous"] = True
            if ds.dtype.kind == "O":
                enc["dtype"] = str
            attrs = _attrs(ds)
            if ds.dtype.kind == "S" and "_FillValue" in attrs:
                # A character variable's fill value is bytes, as its data.
                fv = attrs["_FillValue"]
                attrs["_FillValue"] = np.bytes_(fv.encode() if isinstance(fv, str) else fv)
            out[name] = xr.Variable(dims, data, attrs, enc)
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
                unlimited.add(_dim_of(ds))
        return {"unlimited_dims": unlimited}


class ArcaStore(_GroupReader, AbstractDataStore):
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

    def close(self, **kwargs):
        self._manager.close(**kwargs)


def _storage_kwargs(storage_options):
    """``File``'s keyword for a URL's storage options, hashable (xarray's
    file manager keys its cache on the keywords); none without options."""
    if not storage_options:
        return {}
    return {"storage_options": tuple(sorted(dict(storage_options).items()))}


class ArcaBackendEntrypoint(BackendEntrypoint):
    """``engine="arca"`` for ``xr.open_dataset``, ``open_datatree`` and
    ``open_mfdataset``."""

    description = "Open arca files (.arca) in xarray"
    open_dataset_parameters = ("filename_or_obj", "drop_variables", "group", "mask_and_scale",
                               "decode_times", "concat_characters", "decode_coords",
                               "use_cftime", "decode_timedelta", "storage_options")

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
                     decode_coords=True, use_cftime=None, decode_timedelta=None,
                     storage_options=None):
        store = ArcaStore.open(filename_or_obj, group=group,
                               **_storage_kwargs(storage_options))
        with close_on_error(store):
            return StoreBackendEntrypoint().open_dataset(
                store, mask_and_scale=mask_and_scale, decode_times=decode_times,
                concat_characters=concat_characters, decode_coords=decode_coords,
                drop_variables=drop_variables, use_cftime=use_cftime,
                decode_timedelta=decode_timedelta)

    def open_datatree(self, filename_or_obj, **kwargs):
        groups = self.open_groups_as_dict(filename_or_obj, **kwargs)
        return xr.DataTree.from_dict(groups)

    def open_groups_as_dict(self, filename_or_obj, *, group=None, storage_options=None,
                            **kwargs):
        path = os.fspath(filename_or_obj)
        root = "/" + (group or "").strip("/")
        names = [root]
        with File(path, "r", **_storage_kwargs(storage_options)) as f:
            start = f[root] if root != "/" else f

            def visit(name, obj):
                if isinstance(obj, Group):
                    names.append(posixpath.join(root, name))

            start.visititems(visit)
        out = {}
        for g in names:
            rel = "/" + posixpath.relpath(g, root).lstrip(".").strip("/") if g != root else "/"
            out[rel] = self.open_dataset(path, group=g, storage_options=storage_options,
                                         **kwargs)
        return out


# -- writing ---------------------------------------------------------------------
def to_arca(obj, path, mode="w", group=None, encoding=None, unlimited_dims=None):
    """Write an xarray ``Dataset`` or ``DataTree`` to the arca file ``path``.

    ``mode`` is ``"w"`` (replace the file) or ``"a"`` (add to it, as
    ``to_netcdf`` appends); ``group`` the group to write into; ``encoding``
    per variable, as the netCDF4 engine takes it (for a tree, per node
    path, then per variable): ``chunksizes``, ``zlib``/``complevel``,
    ``compression`` (``"zlib"``/``"gzip"``, ``"zstd"``, ``"lz4"``) and
    ``compression_opts``, ``shuffle``, ``fletcher32``, ``dtype``,
    ``_FillValue``, ``contiguous``, and CF's ``units``/``calendar``.
    ``unlimited_dims`` (default: the dataset's
    ``encoding["unlimited_dims"]``) become resizable dimensions.

    xarray's own writing path does the work (validation, CF encoding,
    strings), with arca as its store.
    """
    from xarray.backends.writers import _validate_attrs, _validate_dataset_names

    encoding = encoding or {}
    if mode not in ("w", "a"):
        raise ValueError(f"mode {mode!r}: use 'w' or 'a'")
    nodes = ([(n.path, n.to_dataset(inherit=False)) for n in obj.subtree]
             if isinstance(obj, xr.DataTree) else [("/", obj)])
    for _, ds in nodes:
        _validate_dataset_names(ds)
        _validate_attrs(ds, engine="netcdf4")
    # Creation order is kept, as netCDF-4 keeps it: variables, groups and
    # attributes list back in the order they were written.
    with File(path, mode, track_order=True) as f:
        base = _require_group(f, group) if group else f
        for p, ds in nodes:
            g = base if p == "/" else _require_group(base, p.strip("/"))
            enc = encoding.get(p, {}) if isinstance(obj, xr.DataTree) else encoding
            _write_dataset(g, ds, enc, unlimited_dims)


def _write_dataset(g, ds, encoding, unlimited_dims):
    from xarray.backends.common import ArrayWriter
    from xarray.backends.writers import _sanitize_unlimited_dims, dump_to_store

    # As to_netcdf: unlimited dimensions from the argument or the dataset's
    # encoding, checked against the dataset.
    unlimited_dims = _sanitize_unlimited_dims(ds, unlimited_dims)
    store = ArcaWriteStore(g)
    writer = ArrayWriter()
    dump_to_store(ds, store, writer, encoding=encoding, unlimited_dims=unlimited_dims)
    writer.sync()


def _require_group(g, path):
    for part in path.strip("/").split("/"):
        g = g[part] if part in g else g.create_group(part, track_order=True)
    return g


def _find_scale(g, dim):
    """The scale of dimension ``dim`` visible from group ``g`` (netCDF-4
    looks in the group, then its ancestors)."""
    while True:
        for name in (dim, _NON_COORD + dim):
            if name in g and isinstance(g[name], Dataset) and _dims.is_scale(g[name]):
                return g[name]
        if g.name == "/":
            return None
        g = g.parent


class ArcaWriteStore(_GroupReader, WritableCFDataStore):
    """One arca group as the store xarray's writer fills: dimensions become
    dimension scales in netCDF-4's layout (a coordinate variable is its
    dimension's scale; a dimension without one gets a dimension-only scale),
    attached once every variable exists."""

    def __init__(self, group):
        self.g = group
        self._filename = group.file.filename
        self._dims = {}  # set here: name -> (length, unlimited)
        self._made = []  # (dataset, dims) to attach scales to

    def group(self):
        return self.g

    def store(self, *args, **kwargs):
        super().store(*args, **kwargs)
        self.finish()

    def set_dimension(self, name, length, is_unlimited=False):
        if "/" in name:
            raise ValueError(f"dimension name {name!r} holds a '/'")
        self._dims[name] = (length, is_unlimited)

    def set_attribute(self, key, value):
        self.g.attrs[key] = value

    def encode_variable(self, variable, name=None):
        from xarray.backends.netCDF4_ import _encode_nc4_variable

        return _encode_nc4_variable(variable, name=name)

    def prepare_variable(self, name, variable, check_encoding=False, unlimited_dims=None):
        from xarray.backends.netCDF4_ import _extract_nc4_variable_encoding, _get_datatype

        if "/" in name:
            raise ValueError(f"variable name {name!r} holds a '/'")
        unlimited = set(unlimited_dims or ())
        attrs = variable.attrs.copy()
        dtype = _get_datatype(variable, raise_on_invalid_encoding=check_encoding)
        fill = attrs.pop("_FillValue", None)
        enc = _extract_nc4_variable_encoding(
            variable, raise_on_invalid=check_encoding, h5py_okay=True,
            unlimited_dims=unlimited)
        kw = {}
        if variable.shape:
            resizable = any(d in unlimited for d in variable.dims)
            if resizable:
                kw["maxshape"] = tuple(None if d in unlimited else s
                                       for d, s in zip(variable.dims, variable.shape))
            comp = enc.get("compression")
            zlib = enc.get("zlib") or comp in ("zlib", "gzip")
            filtered = zlib or comp in ("zstd", "lz4") or enc.get("shuffle") \
                or enc.get("fletcher32")
            if enc.get("chunksizes") or resizable or (filtered and not enc.get("contiguous")):
                kw["chunks"] = tuple(enc["chunksizes"]) if enc.get("chunksizes") else True
            if zlib:
                kw["compression"] = "gzip"
                kw["compression_opts"] = int(enc.get("complevel") or
                                             enc.get("compression_opts") or 4)
            elif comp in ("zstd", "lz4"):
                kw["compression"] = comp
                level = enc.get("complevel") or enc.get("compression_opts")
                if comp == "zstd" and level:
                    kw["compression_opts"] = int(level)
            elif comp is not None and check_encoding:
                raise ValueError(f"compression {comp!r} for {name!r}: arca offers zlib/gzip, "
                                 "zstd and lz4")
            if enc.get("shuffle") and "chunks" in kw:
                kw["shuffle"] = True
            if enc.get("fletcher32") and "chunks" in kw:
                kw["fletcher32"] = True
        if dtype is str:
            dtype = string_dtype()
        elif fill is not None:
            kw["fillvalue"] = np.asarray(fill, dtype=dtype)
        if name in self.g:
            out = self.g[name]
        else:
            out = self.g.create_dataset(name, shape=variable.shape, dtype=dtype,
                                        track_order=True, **kw)
        if fill is not None:
            # netCDF-4 keeps the fill value as an attribute too.
            out.attrs["_FillValue"] = np.asarray(fill, dtype=out.dtype) \
                if out.dtype.kind != "O" else fill
        for k, v in attrs.items():
            out.attrs[k] = v
        if variable.dims == (name,) and not _dims.is_scale(out):
            out.make_scale(name)
        self._made.append((out, variable.dims))
        return out, variable.data

    def finish(self):
        """Dimension-only scales for what has no coordinate variable, then
        every variable attached to its dimensions' scales."""
        for dim, (length, unlimited) in self._dims.items():
            if _find_scale(self.g, dim) is not None:
                continue
            # A variable of the dimension's name that is not its coordinate
            # leaves the scale the prefixed name.
            name = _NON_COORD + dim if dim in self.g else dim
            sc = self.g.create_dataset(name, shape=(length,), dtype="f4",
                                       maxshape=(None,) if unlimited else (length,),
                                       chunks=(max(1, min(length, 1024)),) if unlimited else None,
                                       track_order=True)
            sc.make_scale(f"{_PHONY}{length:10d}")
        for ds, dims in self._made:
            if _dims.is_scale(ds):
                continue
            for i, dim in enumerate(dims):
                if len(ds.dims[i]) == 0:
                    ds.dims[i].attach_scale(_find_scale(self.g, dim))

    def sync(self):
        pass

    def close(self, **kwargs):
        pass
