"""Creating datasets: the arguments of ``Group.create_dataset`` and
``Group.require_dataset`` checked and turned into a new dataset, fixed-size
or variable-length."""

import operator

import numpy as np

from . import _native
from ._dataset import Dataset
from ._datatype import Datatype
from ._regionref import holds_regions
from ._dtypes import (
    Empty,
    as_array,
    check_dtype,
    check_vlen_dtype,
    has_refs,
    infer_vlen_base,
    native,
    object_array,
    regionref_dtype,
    rows_dtype,
    type_string,
    vlen_base_of_dtype,
    vlen_base_of_type,
    vlen_type_string,
)
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



def create_dataset(group, name, shape=None, dtype=None, data=None, chunks=None, maxshape=None,
                   compression=None, compression_opts=None, shuffle=False, fillvalue=None,
                   layout=None, fletcher32=False, scaleoffset=None, hdf5_filters=None,
                   track_order=None, **vlen_options):
    """A new dataset ``name`` in ``group`` (see :meth:`arca.Group.create_dataset`)."""
    if layout not in (None, "compact", "contiguous", "chunked"):
        raise ValueError(f"layout {layout!r}: use 'compact', 'contiguous' or 'chunked'")
    # A committed datatype types the dataset, which records it.
    committed = None
    if isinstance(dtype, Datatype):
        committed, dtype = dtype.id, dtype.dtype
    if dtype is None and holds_regions(data):
        dtype = regionref_dtype
    if wants_vlen(dtype, data):
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
        return _create_vlen(group, name, shape, dtype, data, chunks, maxshape,
                                    compression, compression_opts, shuffle, fillvalue,
                                    vlen_options, bool(track_order), committed)
    if vlen_options:
        raise TypeError(f"unexpected keyword argument(s) {sorted(vlen_options)}")
    name = member_path(name)
    if isinstance(data, Empty) or (data is None and shape is None and dtype is not None):
        # A null dataspace: a type and no elements (h5py's Empty).
        t = data.dtype if isinstance(data, Empty) else check_dtype(dtype)
        return Dataset(group._file, group._id.create_empty(name, type_string(check_dtype(t)),
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

    dsid = group._id.create_dataset(
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
    ds = Dataset(group._file, dsid)
    if data is not None and data.size:
        ds[...] = data
    return ds


def require_dataset(group, name, shape, dtype, exact=False, **kwds):
    """The dataset at ``name`` in ``group`` if its shape and dtype fit, else a
    new one (see :meth:`arca.Group.require_dataset`)."""
    name = member_path(name)
    if name not in group:
        return group.create_dataset(name, shape=shape, dtype=dtype, **kwds)
    ds = group[name]
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


_VLEN_OPTIONS = (
    "vlen_chunk_bytes",
    "vlen_compression",
    "vlen_compression_opts",
    "vlen_shuffle",
    "vlen_reuse_space",
)


def wants_vlen(dtype, data):
    """Whether ``create_dataset(dtype=..., data=...)`` asks for variable
    length (elements or members)."""
    if dtype is str or dtype is bytes:
        return True
    if rows_dtype(dtype, data) is not None:
        return True
    if dtype is not None:
        if check_vlen_dtype(dtype) is not None:
            return True
        try:
            dt = np.dtype(dtype)
        except TypeError:
            return False
        return dt.kind == "O" and not has_refs(dt)
    return isinstance(data, np.ndarray) and data.dtype.kind == "O" and not has_refs(data.dtype)


def _filters(compression, opts, shuffle, what):
    fs = []
    if isinstance(compression, (int, np.integer)) and not isinstance(compression, bool):
        compression, opts = "gzip", int(compression)
    if compression is not None and compression not in COMPRESSORS:
        raise ValueError(f"{what} filter {compression!r} is unavailable; use gzip, zstd or lz4")
    if compression is None and opts is not None:
        raise TypeError(f"{what} options given without a compression method")
    if compression == "lz4" and opts is not None:
        raise ValueError("lz4 takes no compression options")
    if shuffle:
        fs.append(("shuffle", None))
    if compression is not None:
        level = opts if opts is not None else DEFAULT_LEVEL.get(compression)
        fs.append((compression, None if level is None else int(level)))
    return fs


def _create_vlen(group, name, shape, dtype, data, chunks, maxshape, compression,
                 compression_opts, shuffle, fillvalue, options, track_order=False,
                 committed=None):
    """The variable-length branch of :func:`create_dataset`."""
    unknown = set(options) - set(_VLEN_OPTIONS)
    if unknown:
        raise TypeError(f"unexpected keyword argument(s) {sorted(unknown)}")
    if fillvalue is not None and not _is_empty(fillvalue):
        raise ValueError("variable-length datasets take no fillvalue (unwritten elements are empty)")
    if isinstance(data, Dataset):
        data = data[()]
    rows = rows_dtype(dtype, data)
    if rows is not None:
        if data is not None:
            data = np.asarray(data, dtype=rows)
        type_str = type_string(rows)
    else:
        if data is not None and not isinstance(data, np.ndarray):
            data = object_array(data, None if dtype is None else vlen_base_of_dtype(dtype))
        base = vlen_base_of_dtype(dtype) if dtype is not None else None
        if base is None:
            if data is None:
                raise TypeError("a plain object dtype needs data to tell the element type")
            base = infer_vlen_base(data)
        type_str = vlen_type_string(base)
    shape = shape_tuple(shape)
    if shape is None:
        if data is None:
            raise TypeError("One of data or shape must be specified")
        shape = data.shape
    name = member_path(name)
    # `compression` (and `compression_opts`, `shuffle`) compress the whole
    # dataset, as an h5py user expects: the records and the values. The
    # records (offset and length, 16 bytes) are shuffled when compressed,
    # which stores them about as compactly as lengths alone would; so are
    # the values when their items are wider than a byte. The vlen_*
    # options, when given, set the values' filters apart.
    filters = _filters(compression, compression_opts, shuffle or compression is not None,
                       "Compression")
    if any(k in options for k in ("vlen_compression", "vlen_compression_opts", "vlen_shuffle")):
        vfilters = _filters(
            options.get("vlen_compression"),
            options.get("vlen_compression_opts"),
            options.get("vlen_shuffle", False),
            "vlen_compression",
        )
    else:
        base = vlen_base_of_type(type_str) if rows is None else None
        wide = isinstance(base, np.dtype) and base.itemsize > 1
        vfilters = _filters(compression, compression_opts, compression is not None and
                            (shuffle or wide), "Compression")
    if maxshape is not None:
        if not isinstance(maxshape, (tuple, list)):
            maxshape = (maxshape,)
        maxshape = tuple(None if m is None else int(m) for m in maxshape)
    needs_chunks = bool(filters) or (maxshape is not None and maxshape != tuple(shape))
    if chunks is True or (chunks is None and needs_chunks):
        chunks = auto_chunks(tuple(shape), maxshape or tuple(shape), 16)
    elif chunks is False:
        if needs_chunks:
            raise ValueError("Chunked format required for given storage options")
        chunks = None
    elif chunks is not None:
        chunks = shape_tuple(chunks, "chunks")
    vchunk = options.get("vlen_chunk_bytes")
    dsid = _native.vlen_create(
        group._id,
        name,
        type_str,
        [int(s) for s in shape],
        None if maxshape is None else list(maxshape),
        None if chunks is None else [int(c) for c in chunks],
        filters,
        None if vchunk is None else int(vchunk),
        vfilters,
        bool(options.get("vlen_reuse_space", False)),
        bool(track_order),
        committed,
    )
    ds = Dataset(group._file, dsid)
    if data is not None and data.size:
        ds[...] = data
    return ds


def _is_empty(value):
    """Whether ``value`` is the empty element (what unwritten elements show)."""
    try:
        return len(value) == 0
    except TypeError:
        return False
