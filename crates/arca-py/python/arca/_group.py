"""Groups: named containers of groups and datasets, addressed by paths."""

import operator
import posixpath
from collections.abc import MutableMapping

import numpy as np

from . import _links, _vlen
from ._dataset import Dataset
from ._datatype import Datatype
from ._dims import detach_everywhere
from ._dtypes import Empty, Reference, as_array, check_dtype, native, type_string
from ._object import HLObject, register, wrap
from ._util import COMPRESSORS, DEFAULT_LEVEL, auto_chunks, member_path, shape_tuple

# HDF5 filter ids: those arca encodes, and how h5py names them.
_H5_DEFLATE, _H5_SHUFFLE, _H5_FLETCHER32, _H5_LZF, _H5_LZ4, _H5_ZSTD = 1, 2, 3, 32000, 32004, 32015
_H5_ENCODES = {_H5_DEFLATE: "gzip", _H5_SHUFFLE: "shuffle", _H5_FLETCHER32: "fletcher32",
               _H5_LZF: "lzf", _H5_LZ4: "lz4", _H5_ZSTD: "zstd"}
_H5_OPTIONAL = 1


def _filter_id(compression):
    """An HDF5 filter id given as ``compression`` (h5py: ints past 9)."""
    if isinstance(compression, (int, np.integer)) and not isinstance(compression, bool) \
            and compression > 9:
        return int(compression)
    return None


def _filter_label(name):
    return name.decode("utf-8", "replace") if isinstance(name, bytes) else str(name or "")


def _hdf5_pipeline(compression, opts, shuffle, fletcher32, dtype):
    """h5py's order: shuffle, the compressor, fletcher32 last. Only filters
    arca can encode (a pipeline of others comes with imported files)."""
    out = []
    if shuffle:
        out.append((_H5_SHUFFLE, _H5_OPTIONAL, [dtype.itemsize], "shuffle"))
    fid = _filter_id(compression)
    if compression == "gzip":
        out.append((_H5_DEFLATE, _H5_OPTIONAL, [int(4 if opts is None else opts)], "deflate"))
    elif compression == "lzf":
        if opts is not None:
            raise ValueError("lzf takes no compression_opts")
        out.append((_H5_LZF, _H5_OPTIONAL, [], "lzf"))
    elif compression == "zstd":
        out.append((_H5_ZSTD, _H5_OPTIONAL, [int(3 if opts is None else opts)], "zstd"))
    elif compression == "lz4":
        out.append((_H5_LZ4, _H5_OPTIONAL, [0], "lz4"))
    elif fid is not None:
        if fid not in _H5_ENCODES:
            raise ValueError(f"HDF5 filter {fid}: arca cannot encode it (it reads and keeps the "
                             "chunks of imported files that use it); arca encodes "
                             + ", ".join(f"{v} ({k})" for k, v in sorted(_H5_ENCODES.items())))
        vals = [] if opts is None else [int(v) for v in (opts if isinstance(opts, (tuple, list)) else (opts,))]
        out.append((fid, _H5_OPTIONAL, vals, _H5_ENCODES[fid]))
    elif compression is not None:
        raise ValueError(f"Compression filter {compression!r} is unavailable; use gzip, zstd, lz4 or lzf")
    elif opts is not None:
        raise TypeError("compression_opts given without a compression method")
    if fletcher32:
        out.append((_H5_FLETCHER32, 0, [], "fletcher32"))
    return out


def _with_chunk_size(hdf5_filters, chunks, dtype):
    """lzf records the chunk's size in its values, as h5py's filter does."""
    out = []
    for c, fl, vals, nm in hdf5_filters:
        if c == _H5_LZF and len(vals) < 3 and chunks is not None:
            size = int(np.prod(chunks, dtype=np.int64)) * dtype.itemsize
            vals = [4, 261, size]
        out.append((c, fl, vals, nm))
    return out


class Group(HLObject, MutableMapping):
    """A group: a mapping from names to groups and datasets.

    Paths may be relative (``"a/b"``) or absolute (``"/a/b"``); missing
    intermediate groups are created by ``create_group``/``create_dataset``::

        g = f.create_group("sim/run1")
        g["x"] = np.arange(10)              # shorthand for create_dataset
        "run1/x" in f["sim"]                # True
        for name, obj in g.items(): ...
        del g["x"]
    """

    def __init__(self, file, gid):
        super().__init__(file, gid)

    def __repr__(self):
        if not self:
            return "<Closed arca Group>"
        return f'<arca Group "{self.name}" ({len(self)} members)>'

    # -- mapping ---------------------------------------------------------------
    def __getitem__(self, name):
        if isinstance(name, Reference):
            if not name:
                raise ValueError("Invalid HDF5 object reference")
            return wrap(self._file, self._id.dereference(name._oid))
        return wrap(self._file, self._id.object(member_path(name)))

    def get(self, name, default=None, getclass=False, getlink=False):
        """The object at ``name``, or ``default`` if there is none. With
        ``getclass``, its class; with ``getlink``, the link itself
        (:class:`SoftLink`, :class:`ExternalLink` or :class:`HardLink`, or
        with ``getclass`` too, the link's class)."""
        if not (getclass or getlink):
            try:
                return self[name]
            except KeyError:
                return default
        if name not in self:
            return default
        if getlink:
            link = _links.from_native(self._id.link(member_path(name)))
            return type(link) if getclass else link
        return type(self[name])

    def __setitem__(self, name, value):
        """``g[name] = SoftLink(path) | ExternalLink(file, path)`` makes a
        link; ``g[name] = obj`` (a group, dataset or committed datatype of
        this file) gives ``obj`` a second name; ``g[name] = np.dtype(...)``
        commits the type (:class:`arca.Datatype`); anything else becomes a
        new dataset."""
        path = member_path(name)
        if isinstance(value, np.dtype):
            if name in self:
                # As h5py: a taken name refuses a commit with KeyError.
                raise KeyError(f"Unable to commit datatype (name already exists): {name!r}")
            return self._id.commit_type(path, type_string(check_dtype(value)))
        try:
            if isinstance(value, _links.SoftLink):
                return self._id.link_soft(path, value.path)
            if isinstance(value, _links.ExternalLink):
                return self._id.link_external(path, value.filename, value.path)
            if isinstance(value, (Group, Dataset, Datatype)):
                if value.file is not self.file:
                    raise ValueError("a hard link cannot lead into another file")
                return self._id.link_hard(value.name, path)
        except ValueError as e:
            if name in self:
                # h5py reports a taken link name as OSError.
                raise OSError(f"Unable to create link (name already exists): {name!r}") from e
            raise
        self.create_dataset(name, data=value)

    def __delitem__(self, name):
        path = member_path(name)
        # A dimension scale that goes is detached from the datasets using
        # it first (when this is its last name).
        try:
            link = self._id.link(path)
        except KeyError:
            link = None
        if link is not None and link[0] == "hard" and link[1] == "dataset":
            obj = self[path]
            if obj.is_scale and self._id.link_count(obj._id.id) == 1:
                detach_everywhere(obj)
        self._id.delete(path)

    def __contains__(self, name):
        """Whether ``name`` is a link here (as in h5py, a dangling soft or
        external link counts: its name is taken)."""
        if not isinstance(name, (str, bytes)):
            return False
        path = member_path(name)
        if path.strip("/") == "":
            return True
        try:
            self._id.link(path)
            return True
        except KeyError:
            return False
        except ValueError:
            if not self:
                raise
            return False  # a name that cannot exist, e.g. one with ".."

    def __iter__(self):
        return iter(self._id.member_names())

    def __len__(self):
        return int(self._id.len())

    # -- creation ----------------------------------------------------------------
    def create_group(self, name, track_order=None):
        """Create a group (and missing parents); ValueError if the name is
        taken. ``track_order=True`` lists its members in creation order
        (kept on reopen)."""
        return Group(self._file, self._id.create_group(member_path(name), bool(track_order)))

    def require_group(self, name):
        """Open the group at ``name``, creating it if absent.

        TypeError if a dataset is there.
        """
        name = member_path(name)
        if name in self:
            obj = self[name]
            if not isinstance(obj, Group):
                raise TypeError(f"Incompatible object (Dataset) already exists at {name!r}")
            return obj
        return self.create_group(name)

    def create_dataset(
        self,
        name,
        shape=None,
        dtype=None,
        data=None,
        chunks=None,
        maxshape=None,
        compression=None,
        compression_opts=None,
        shuffle=False,
        fillvalue=None,
        layout=None,
        fletcher32=False,
        scaleoffset=None,
        hdf5_filters=None,
        track_order=None,
        **vlen_options,
    ):
        """Create a dataset.

        ``shape``/``dtype`` describe it, or ``data`` gives both and the
        contents (dtype defaults to float32 without data). ``chunks`` is a
        tuple, True for an automatic shape, or None (chunked only when
        filters or ``maxshape`` need it). ``maxshape`` entries of None are
        unlimited. ``compression`` is ``"gzip"`` (or an int level),
        ``"zstd"`` or ``"lz4"``, with ``compression_opts`` the level;
        ``shuffle`` adds the byte-shuffle filter. As in h5py, ``"lzf"``,
        ``fletcher32=True`` and an HDF5 filter id as ``compression`` (with
        its values as ``compression_opts``, as hdf5plugin gives them) make
        an HDF5 filter pipeline, stored exactly as HDF5 stores it; arca
        encodes deflate, shuffle, fletcher32, lzf, lz4 (32004) and zstd
        (32015). ``hdf5_filters`` gives a whole HDF5 pipeline as h5py's
        ``get_filter`` lists it, ``[(id, flags, values, name)]``; its
        chunks can then be written as stored whatever the filters (this is
        how ``arca import`` keeps filters arca has no codec for), and read
        where arca has the codecs. ``fillvalue`` is shown
        where nothing was written. ``track_order=True`` lists the dataset's
        attributes in creation order. ``layout`` is ``"compact"`` (elements
        kept in the dataset's header, under 4 KiB, fixed shape),
        ``"contiguous"`` or ``"chunked"``; by default datasets of fixed shape
        up to 1 KiB are compact, larger ones contiguous, and chunked when
        chunks, filters or ``maxshape`` ask for it. Variable-length types (``arca.string_dtype()``,
        ``arca.vlen_dtype(base)``, ``str``, object arrays) take ``vlen_*``
        options for their byte vector (see ``arca._vlen``).
        """
        if layout not in (None, "compact", "contiguous", "chunked"):
            raise ValueError(f"layout {layout!r}: use 'compact', 'contiguous' or 'chunked'")
        # A committed datatype types the dataset, which records it
        # (variable-length ones take its type alone).
        committed = None
        if isinstance(dtype, Datatype):
            committed, dtype = dtype._id, dtype.dtype
        if _vlen.wants_vlen(dtype, data):
            if fletcher32 or scaleoffset is not None or hdf5_filters or compression == "lzf" \
                    or _filter_id(compression) is not None:
                raise ValueError("variable-length data takes arca's own filters "
                                 "(shuffle, gzip, zstd, lz4), not HDF5's")
            if layout == "compact":
                raise ValueError("a variable-length dataset cannot be compact")
            if layout == "chunked" and chunks is None:
                chunks = True
            if layout == "contiguous" and chunks not in (None, False):
                raise ValueError("a contiguous dataset takes no chunks")
            return _vlen.create_dataset(self, name, shape, dtype, data, chunks, maxshape,
                                        compression, compression_opts, shuffle, fillvalue,
                                        vlen_options, bool(track_order))
        if vlen_options:
            raise TypeError(f"unexpected keyword argument(s) {sorted(vlen_options)}")
        name = member_path(name)
        if isinstance(data, Empty) or (data is None and shape is None and dtype is not None):
            # A null dataspace: a type and no elements (h5py's Empty).
            t = data.dtype if isinstance(data, Empty) else check_dtype(dtype)
            return Dataset(self._file, self._id.create_empty(name, type_string(check_dtype(t)),
                                                             bool(track_order), committed))
        if data is not None:
            if isinstance(data, Dataset):
                data = data[()]
            want = None if dtype is None else check_dtype(dtype)
            if want is not None and want.subdtype is not None:
                # An array element type: data's trailing axes are the element's.
                data = np.asarray(data, dtype=want.subdtype[0])
                sub = want.subdtype[1]
                if data.shape[data.ndim - len(sub):] != sub:
                    raise ValueError(f"data of shape {data.shape} does not end in {sub}")
                if shape is None:
                    shape = data.shape[: data.ndim - len(sub)]
            else:
                data = as_array(data, want)
        if dtype is None:
            dtype = data.dtype if data is not None else np.dtype("f4")
        dtype = check_dtype(dtype)
        if data is not None and dtype.subdtype is None and data.dtype != dtype:
            data = data.astype(dtype)

        shape = shape_tuple(shape)
        if shape is None:
            if data is None:
                raise TypeError("One of data or shape must be specified")
            shape = data.shape
        elif data is not None and dtype.subdtype is not None:
            data = data.reshape(tuple(shape) + dtype.subdtype[1])
        elif data is not None:
            if int(np.prod(shape, dtype=np.int64)) != data.size:
                raise ValueError(
                    f"Shape tuple {shape} is incompatible with data of shape {data.shape}"
                )
            data = data.reshape(shape)

        if maxshape is not None:
            if not isinstance(maxshape, (tuple, list)):
                maxshape = (maxshape,)
            maxshape = tuple(None if m is None else operator.index(m) for m in maxshape)
            if len(maxshape) != len(shape):
                raise ValueError(f"maxshape {maxshape} must have one entry per dimension of {shape}")
            for s, m in zip(shape, maxshape):
                if m is not None and m < s:
                    raise ValueError(f"maxshape {maxshape} is smaller than shape {shape}")

        filters = []
        if isinstance(compression, (int, np.integer)) and not isinstance(compression, bool) \
                and 0 <= compression <= 9:
            compression, compression_opts = "gzip", int(compression)
        if scaleoffset is not None:
            raise ValueError("scaleoffset: arca has no scale-offset codec (files that use it "
                             "are imported with their chunks kept as stored)")
        if hdf5_filters is None and (fletcher32 or compression == "lzf"
                                     or _filter_id(compression) is not None):
            hdf5_filters = _hdf5_pipeline(compression, compression_opts, shuffle, fletcher32, dtype)
        elif hdf5_filters is None:
            if compression is not None:
                if compression not in COMPRESSORS:
                    raise ValueError(
                        f"Compression filter {compression!r} is unavailable; "
                        "use gzip, zstd, lz4 or lzf"
                    )
                if compression == "lz4" and compression_opts is not None:
                    raise ValueError("lz4 takes no compression_opts")
                if compression == "gzip" and compression_opts is not None:
                    if not 0 <= int(compression_opts) <= 9:
                        raise ValueError(f"gzip level {compression_opts} outside 0..9")
            elif compression_opts is not None:
                raise TypeError("compression_opts given without a compression method")
            if shuffle:
                filters.append(("shuffle", None))
            if compression is not None:
                level = compression_opts if compression_opts is not None else DEFAULT_LEVEL.get(compression)
                filters.append((compression, None if level is None else int(level)))
        elif compression is not None or shuffle or fletcher32:
            raise TypeError("hdf5_filters is the whole pipeline: no compression, shuffle or "
                            "fletcher32 beside it")
        hdf5_filters = [(int(c), int(fl), [int(v) for v in vals], _filter_label(nm))
                        for c, fl, vals, nm in (hdf5_filters or [])]
        if hdf5_filters:
            filters = []

        needs_chunks = bool(filters) or bool(hdf5_filters) or (maxshape is not None and maxshape != shape)
        if layout in ("compact", "contiguous") and (needs_chunks or chunks not in (None, False)):
            raise ValueError(f"a {layout} dataset takes no chunks, filters or maxshape")
        if layout == "chunked" and chunks is None:
            chunks = True
        if chunks is False:
            if needs_chunks:
                raise ValueError("Chunked format required for given storage options")
            chunks = None
        if (chunks is not None or needs_chunks) and not shape:
            raise TypeError("Scalar datasets don't support chunk/filter options")
        if chunks is True:
            chunks = auto_chunks(shape, maxshape or shape, dtype.itemsize)
        elif chunks is not None:
            chunks = shape_tuple(chunks, "chunks")
            if len(chunks) != len(shape):
                raise ValueError(f"chunks {chunks} must have one entry per dimension of {shape}")
            if any(c == 0 for c in chunks):
                raise ValueError(f"chunks {chunks} must be positive")
            for c, s, m in zip(chunks, shape, maxshape or shape):
                if m is not None and c > m:
                    raise ValueError(
                        f"Chunk shape must not be greater than data shape in any dimension. "
                        f"{chunks} is not compatible with {shape}"
                    )

        fill = None
        if fillvalue is not None:
            mdt = native(dtype)
            if mdt.subdtype is not None:
                base, sub = mdt.subdtype
                fill = np.ascontiguousarray(
                    np.broadcast_to(np.asarray(fillvalue, dtype=base), sub)
                ).tobytes()
            else:
                fv = as_array(fillvalue, mdt)
                if fv.size != 1:
                    raise ValueError("fillvalue must be a single value")
                fill = fv.reshape(()).tobytes()

        dsid = self._id.create_dataset(
            name,
            type_string(dtype),
            list(shape),
            None if maxshape is None else list(maxshape),
            None if chunks is None else list(chunks),
            filters,
            fill,
            layout,
            _with_chunk_size(hdf5_filters, chunks, dtype),
            bool(track_order),
            committed,
        )
        ds = Dataset(self._file, dsid)
        if data is not None and data.size:
            ds[...] = data
        return ds

    def require_dataset(self, name, shape, dtype, exact=False, **kwds):
        """Open the dataset at ``name`` if its shape and dtype fit, else create it.

        TypeError if something incompatible is there: a group, another
        shape, or a dtype that differs (``exact``) or cannot hold ``dtype``.
        """
        name = member_path(name)
        if name not in self:
            return self.create_dataset(name, shape=shape, dtype=dtype, **kwds)
        ds = self[name]
        if not isinstance(ds, Dataset):
            raise TypeError(f"Incompatible object (Group) already exists at {name!r}")
        shape = shape_tuple(shape)
        if shape != ds.shape:
            raise TypeError(f"Shapes do not match (existing {ds.shape} vs new {shape})")
        dtype = np.dtype(dtype)
        if exact:
            if dtype != ds.dtype:
                raise TypeError(f"Datatypes do not exactly match (existing {ds.dtype} vs new {dtype})")
        elif not np.can_cast(dtype, ds.dtype):
            raise TypeError(f"Datatypes cannot be safely cast (existing {ds.dtype} vs new {dtype})")
        return ds

    # -- moving, copying and walking ---------------------------------------------
    def copy(self, source, dest, name=None, shallow=False, without_attrs=False):
        """Copy a group (recursively) or dataset, with its attributes and
        creation settings, possibly into another open file.

        ``source`` is a path relative to this group or a Group/Dataset.
        ``dest`` is a Group, where the copy is named ``name`` (default: the
        source's own name), or a path relative to this group. ``shallow``
        copies only a group's direct members; ``without_attrs`` skips
        attributes.
        """
        src = self[source] if isinstance(source, (str, bytes)) else source
        if not isinstance(src, (Group, Dataset, Datatype)):
            raise TypeError("source must be a path, Group, Dataset or Datatype")
        if isinstance(dest, Group):
            target = dest
            path = member_path(name) if name is not None else (posixpath.basename(src.name) or None)
            if path is None:
                raise ValueError("copying the root group needs a name")
        elif isinstance(dest, (str, bytes)):
            target, path = self, member_path(dest)
        else:
            raise TypeError("Destination must be path or Group object")
        _copy_object(src, target, path, 1 if shallow else -1, without_attrs)

    # -- walking -----------------------------------------------------------------
    def move(self, source, dest):
        """Move or rename the object at ``source`` to ``dest``."""
        source, dest = member_path(source), member_path(dest)
        if source == dest:
            return
        self._id.rename(source, dest)

    def _walk(self):
        # Depth first, parents before children, siblings in name order: the
        # order h5py visits in.
        return sorted((p for p, _ in self._id.visit()), key=lambda p: p.split("/"))

    def visit(self, func):
        """Call ``func(name)`` for every object below, depth first in name
        order; stop and return the first value that is not None."""
        for path in self._walk():
            r = func(path)
            if r is not None:
                return r
        return None

    def visititems(self, func):
        """Like :meth:`visit`, calling ``func(name, object)``."""
        for path in self._walk():
            r = func(path, self[path])
            if r is not None:
                return r
        return None

    def visit_links(self, func):
        """Call ``func(name)`` for every link below, soft and external ones
        included (not followed), depth first; stop and return the first
        value that is not None."""
        for path, _ in self._id.visit_links():
            r = func(path)
            if r is not None:
                return r
        return None

    def visititems_links(self, func):
        """Like :meth:`visit_links`, calling ``func(name, link)`` with a
        :class:`HardLink`, :class:`SoftLink` or :class:`ExternalLink`."""
        for path, t in self._id.visit_links():
            r = func(path, _links.from_native(t))
            if r is not None:
                return r
        return None


# Datasets larger than this are copied in slabs along their first axis.
_COPY_SLAB_BYTES = 64 << 20


def _copy_object(src, target, path, depth, without_attrs):
    """Copy ``src`` to ``target[path]``; ``depth`` < 0 means all levels."""
    if isinstance(src, Datatype):
        target[path] = src.dtype
        out = target[path]
    elif isinstance(src, Dataset):
        out = target.create_dataset(
            path,
            shape=src.shape,
            dtype=src.dtype,
            chunks=src.chunks,
            maxshape=src.maxshape if src.chunks is not None else None,
            fillvalue=src.fillvalue,
            **src._filter_options(),
            **getattr(src, "_create_options", dict)(),
        )
        shape = src.shape
        if shape and src.nbytes > _COPY_SLAB_BYTES and shape[0] > 1:
            row = max(1, src.nbytes // shape[0])
            step = max(1, _COPY_SLAB_BYTES // row)
            for i in range(0, shape[0], step):
                out[i : i + step] = src[i : i + step]
        elif src.size:
            out[...] = src[...]
    else:
        out = target.create_group(path)
        if depth != 0:
            for name in src:
                _copy_object(src[name], out, name, depth - 1, without_attrs)
    if not without_attrs:
        for k in src.attrs:
            out.attrs[k] = src.attrs[k]
    return out


register("group", Group)
