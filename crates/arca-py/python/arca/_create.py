"""Creating datasets: the arguments of ``Group.create_dataset`` and
``Group.require_dataset`` checked and turned into a new dataset, fixed-size
or variable-length."""

import operator
import os
import warnings

import numpy as np

from . import _native, filters, h5z
from ._dataset import Dataset
from ._datatype import Datatype
from ._dtypes import (
    Empty,
    Reference,
    RegionReference,
    as_array,
    check_complex_dtype,
    check_dtype,
    check_vlen_dtype,
    has_refs,
    infer_vlen_base,
    native,
    object_array,
    ref_dtype,
    regionref_dtype,
    rows_dtype,
    type_string,
    vlen_base_of_dtype,
    vlen_base_of_type,
    string_dtype,
    vlen_type_string,
)
from .h5py_warnings import H5pyDeprecationWarning
from .filters import FilterRefBase
from ._util import COMPRESSORS, DEFAULT_LEVEL, auto_chunks, member_path, shape_tuple

# HDF5 filter ids: those arca encodes, and how h5py names them.
_H5_DEFLATE, _H5_SHUFFLE, _H5_FLETCHER32, _H5_LZF, _H5_LZ4, _H5_ZSTD = 1, 2, 3, 32000, 32004, 32015
_H5_SCALEOFFSET = 6
_H5_ENCODES = {_H5_DEFLATE: "gzip", _H5_SHUFFLE: "shuffle", _H5_FLETCHER32: "fletcher32",
               _H5_LZF: "lzf", _H5_LZ4: "lz4", _H5_ZSTD: "zstd"}
_H5_OPTIONAL = 1


def _filter_id(compression):
    """An HDF5 filter id given as ``compression`` (ints, once gzip levels are
    read as such)."""
    if isinstance(compression, int) and not isinstance(compression, bool):
        return compression
    return None


def _filter_label(name):
    return name.decode("utf-8", "replace") if isinstance(name, bytes) else str(name or "")


def _hdf5_pipeline(compression, opts, shuffle, fletcher32, dtype, allow_unknown=False,
                   scaleoffset=None):
    """h5py's order: scale-offset, shuffle, the compressor, fletcher32
    last. Only filters arca can encode, unless ``allow_unknown`` (then
    chunks are written as stored, already filtered, as h5py's
    ``allow_unknown_filter``)."""
    out = []
    if scaleoffset is not None:
        # HDF5's D-scale for floats (decimal digits kept); for integers the
        # bits to keep, 0 (or True) for as few as the chunk needs. The
        # chunk-dependent values follow in _with_chunk_size.
        kind = 0 if dtype.kind == "f" else 2
        factor = 0 if scaleoffset is True else int(scaleoffset)
        out.append((_H5_SCALEOFFSET, _H5_OPTIONAL, [kind, factor], "scaleoffset"))
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
        if fid not in _H5_ENCODES and not allow_unknown:
            raise ValueError(f"Unknown compression filter number: {fid} (arca cannot encode "
                             "it; it reads and keeps the chunks of imported files that use "
                             "it); arca encodes "
                             + ", ".join(f"{v} ({k})" for k, v in sorted(_H5_ENCODES.items())))
        vals = [] if opts is None else [int(v) for v in (opts if isinstance(opts, (tuple, list)) else (opts,))]
        out.append((fid, _H5_OPTIONAL, vals, _H5_ENCODES.get(fid, "")))
    elif compression is not None:
        raise ValueError(f"Compression filter {compression!r} is unavailable; use gzip, zstd, lz4 or lzf")
    elif opts is not None:
        raise TypeError("compression_opts given without a compression method")
    if fletcher32:
        out.append((_H5_FLETCHER32, 0, [], "fletcher32"))
    return out


def _with_chunk_size(hdf5_filters, chunks, dtype, fill=None):
    """lzf records the chunk's size in its values, as h5py's filter does;
    scale-offset its twenty values, as HDF5's ``set_local`` writes them
    (elements in a chunk, the type, the fill value's bytes)."""
    out = []
    for c, fl, vals, nm in hdf5_filters:
        if c == _H5_LZF and len(vals) < 3 and chunks is not None:
            size = int(np.prod(chunks, dtype=np.int64)) * dtype.itemsize
            vals = [4, 261, size]
        elif c == _H5_SCALEOFFSET and len(vals) == 2 and chunks is not None:
            n = int(np.prod(chunks, dtype=np.int64))
            order = 1 if dtype.byteorder == ">" else 0
            # HDF5 counts its default fill value (zero) as given too.
            raw = (fill or bytes(dtype.itemsize)).ljust(48, b"\0")
            words = np.frombuffer(raw, "<u4").tolist()
            vals = vals + [n, int(dtype.kind == "f"), dtype.itemsize, int(dtype.kind == "i"),
                           order, 1] + words
        out.append((c, fl, vals, nm))
    return out



# Integers h5py reads as gzip levels, not filter ids.
_GZIP_LEVELS = frozenset(range(10))
_FILL_TIMES = ("alloc", "never", "ifset")
_UNLIMITED = 2**64 - 1  # h5py's h5f.UNLIMITED: an external file's size without bound


# Native-order numbers and booleans: the element types a plain
# ``create_dataset(name, data=array)`` stores as they are, with no
# conversion, checks or options to weigh (see create_plain).
_PLAIN = frozenset(np.dtype(c) for c in "?bhilqBHILQefdFD")


def create_plain(group, name, data):
    """``create_dataset(name, data=data)`` for a numpy array or scalar of a
    native-order number type and no other argument, the call object-heavy
    code makes most, without the option checks of :func:`create_dataset`;
    None when ``data`` is not such a value (the caller takes the full path)."""
    if type(data) is not np.ndarray:
        if not isinstance(data, np.generic):
            return None
        data = np.asarray(data)
    dt = data.dtype
    if dt not in _PLAIN:
        return None
    shape = data.shape
    dsid = group._id.create_dataset(_name(name), type_string(dt), list(shape), None,
                                    None, [], None, None, [], False, None, None)
    if data.size:
        r = len(shape)
        dsid.write([0] * r, list(shape), [1] * r,
                   np.ascontiguousarray(data).reshape(-1).view(np.uint8))
    return Dataset(group._file, dsid)


def create_dataset(group, name, shape=None, dtype=None, data=None, *, chunks=None, maxshape=None,
                   compression=None, compression_opts=None, shuffle=None, fletcher32=None,
                   scaleoffset=None, fillvalue=None, fill_time=None, track_times=None,
                   track_order=None, external=None, efile_prefix=None, virtual_prefix=None,
                   allow_unknown_filter=False, dcpl=None, dapl=None, rdcc_nbytes=None,
                   rdcc_nslots=None, rdcc_w0=None, layout=None, hdf5_filters=None,
                   **vlen_options):
    """A new dataset ``name`` in ``group`` (see :meth:`arca.Group.create_dataset`)."""
    if track_times not in (None, True, False):
        raise TypeError("track_times must be either True or False")
    if track_order not in (None, True, False):
        raise TypeError("track_order must be either True or False")
    if fill_time is not None and fill_time not in _FILL_TIMES:
        raise ValueError("fill_time must be one of the following choices: 'alloc', "
                         f"'never' or 'ifset', but it is {fill_time}.")
    for what, plist in (("dcpl", dcpl), ("dapl", dapl)):
        if plist is not None:
            raise TypeError(f"{what}: libhdf5 property lists have no arca equivalent; "
                            "pass the keywords they would carry")
    for what, prefix in (("efile_prefix", efile_prefix), ("virtual_prefix", virtual_prefix)):
        if prefix is not None and not isinstance(prefix, (str, bytes, os.PathLike)):
            raise TypeError(f"{what} must be a path")
    external = _external_entries(external)
    if layout not in (None, "compact", "contiguous", "chunked"):
        raise ValueError(f"layout {layout!r}: use 'compact', 'contiguous' or 'chunked'")
    # A committed datatype types the dataset, which records it.
    committed = None
    if isinstance(dtype, Datatype):
        committed, dtype = dtype._id, dtype.dtype
    name = _name(name)
    if isinstance(data, Dataset):
        data = data[()]
    if dtype is None and data is not None and not isinstance(data, Empty):
        # As h5py: str and bytes data (or lists of them) are variable-length strings.
        item = _item_type(data)
        if item is str:
            dtype = string_dtype()
        elif item is bytes:
            dtype = string_dtype("ascii")
        elif item is Reference:
            dtype = ref_dtype
        elif item is RegionReference:
            dtype = regionref_dtype
    if isinstance(data, np.ndarray) and data.dtype.kind == "U":
        raise TypeError(f"No conversion path for dtype: {data.dtype!r}")
    compression, compression_opts = _compression(compression, compression_opts)
    if isinstance(chunks, (int, np.integer)) and not isinstance(chunks, bool):
        chunks = (int(chunks),)
    if isinstance(maxshape, (int, np.integer)) and not isinstance(maxshape, bool):
        maxshape = (int(maxshape),)
    if isinstance(chunks, tuple) and maxshape not in (None, True):
        bound = maxshape
    else:
        bound = None if shape is None else (shape,) if isinstance(shape, int) else tuple(shape)
    if isinstance(chunks, tuple) and bound is not None and any(
            c > d for d, c in zip(bound, chunks) if d is not None):
        raise ValueError("Chunk shape must not be greater than data shape in any dimension. "
                         f"{chunks} is not compatible with {shape}")
    if chunks is False and any((compression, shuffle, fletcher32, maxshape, scaleoffset)):
        raise ValueError("Chunked format required for given storage options")
    if scaleoffset is not None:
        _check_scaleoffset(scaleoffset, dtype, data, fletcher32)
    filtered = any((chunks, compression, compression_opts, shuffle, fletcher32,
                    scaleoffset is not None, hdf5_filters))
    if external and (shape is not None or data is not None) and not isinstance(data, Empty) \
            and shape_tuple(shape if shape is not None else np.shape(data)) != ():
        # As h5py: external storage is contiguous; scalar and empty datasets
        # ignore it.
        if chunks not in (None, False) or filtered or layout is not None:
            raise ValueError("external storage not supported with chunked layout")
        if wants_vlen(dtype, data):
            raise ValueError("external storage holds fixed-size elements, not "
                             "variable-length ones")
        chunks = False
    else:
        external = []
    if wants_vlen(dtype, data):
        if fletcher32 or scaleoffset is not None or compression == "lzf" \
                or isinstance(compression, int):
            raise ValueError("variable-length data takes arca's own filters "
                             "(shuffle, gzip, zstd, lz4), or hdf5_filters of HDF5's that "
                             "code any bytes")
        if hdf5_filters and (compression is not None or shuffle):
            raise TypeError("hdf5_filters is the whole pipeline: no compression or shuffle "
                            "beside it")
        if hdf5_filters:
            vlen_options = dict(vlen_options, hdf5_filters=[
                (int(c), int(fl), [int(v) for v in vals], _filter_label(nm))
                for c, fl, vals, nm in hdf5_filters])
        if layout == "compact":
            raise ValueError("a variable-length dataset cannot be compact")
        if layout == "chunked" and chunks is None:
            chunks = True
        if layout == "contiguous" and chunks not in (None, False):
            raise ValueError("a contiguous dataset takes no chunks")
        ds = _create_vlen(group, name, shape, dtype, data, chunks, maxshape, compression,
                          compression_opts, shuffle, fillvalue, fill_time, vlen_options,
                          bool(track_order), filtered, committed, bool(track_times))
    else:
        if vlen_options:
            raise TypeError(f"unexpected keyword argument(s) {sorted(vlen_options)}")
        ds = _create_fixed(group, name, shape, dtype, data, chunks, maxshape, compression,
                           compression_opts, shuffle, fletcher32, fillvalue, fill_time, layout,
                           hdf5_filters, allow_unknown_filter, bool(track_order), filtered,
                           committed, external, efile_prefix, scaleoffset, bool(track_times))
    if rdcc_nbytes is not None:
        ds._id.set_chunk_cache(int(rdcc_nbytes))
    return ds


def _name(name):
    """A new dataset's path, or None for one without a name (h5py's
    anonymous datasets, kept if linked before the file closes)."""
    return None if name is None else member_path(name)


def _with_prefix(ds, efile_prefix):
    """``ds`` with relative external file names looked for under
    ``efile_prefix`` (h5py's access property; ``${ORIGIN}`` is the file's
    directory), or ``ds`` itself without one."""
    if efile_prefix is None:
        return ds
    return Dataset(ds._file, ds._id.with_external_prefix(os.fsdecode(efile_prefix)))


def _item_type(data):
    """The one type of the items of ``data`` (a scalar, nested lists or an
    object array), else None: how h5py tells string data."""
    if isinstance(data, np.ndarray):
        if data.dtype.kind != "O" or check_vlen_dtype(data.dtype) is not None \
                or has_refs(data.dtype):
            return None
        types = {type(e) for e in data.flat}
    elif isinstance(data, (list, tuple)):
        types = {_item_type(e) for e in data}
    else:
        return type(data)
    return types.pop() if len(types) == 1 else None


def _compression(compression, opts):
    """``compression``/``compression_opts`` as h5py reads them: True and
    0-9 are gzip levels, a filter object gives its id and options."""
    if compression is True:
        compression, opts = "gzip", 4 if opts is None else opts
    if isinstance(compression, (int, np.integer)) and not isinstance(compression, bool) \
            and compression in _GZIP_LEVELS:
        if opts is not None:
            raise TypeError("Conflict in compression options")
        compression, opts = "gzip", int(compression)
    if isinstance(compression, FilterRefBase):
        compression, opts = compression.filter_id, compression.filter_options
    if isinstance(compression, np.integer):
        compression = int(compression)
    if compression is None:
        if opts is not None:
            raise TypeError("Compression method must be specified")
        return None, None
    if isinstance(compression, int):
        if compression < 0 or compression > h5z.FILTER_MAX:
            raise ValueError(f"Invalid filter identification number: {compression}")
        return compression, opts
    if compression not in filters.encode:
        raise ValueError(f'Compression filter "{compression}" is unavailable')
    if compression == "gzip":
        if opts is None:
            opts = filters.DEFAULT_GZIP
        elif opts not in _GZIP_LEVELS:
            raise ValueError(f"GZIP setting must be an integer from 0-9, not {opts!r}")
    elif compression in ("lzf", "lz4") and opts is not None:
        raise ValueError(f"{compression.upper()} compression filter accepts no options")
    elif compression in ("shuffle", "fletcher32"):
        raise ValueError(f'Compression filter "{compression}" is unavailable')
    return compression, opts


def _check_scaleoffset(scaleoffset, dtype, data, fletcher32):
    """h5py's checks of ``scaleoffset``, then arca's refusal: it has no codec."""
    dt = np.dtype(dtype) if dtype is not None else np.asarray(data).dtype \
        if data is not None else np.dtype("f4")
    if scaleoffset < 0:
        raise ValueError("scale factor must be >= 0")
    if dt.kind == "f" and scaleoffset is True:
        raise ValueError("integer scaleoffset must be provided for floating point types")
    if dt.kind not in "iuf":
        raise TypeError("scale/offset filter only supported for integer and floating-point types")
    if fletcher32:
        raise ValueError("fletcher32 cannot be used with potentially lossy scale/offset filter")


def _external_entries(external):
    """``external`` checked as h5py checks it: a file name, or (name,
    offset, size) tuples."""
    if external is None:
        return []
    if isinstance(external, (str, bytes, os.PathLike)):
        return [(os.fsdecode(external), 0, _UNLIMITED)]
    out = []
    for entry in external:
        if not isinstance(entry, tuple):
            raise TypeError("Each external entry must be a tuple of (name, offset, size)")
        fname, offset, size = entry  # ValueError unless three, as in h5py
        if not isinstance(fname, (str, bytes, os.PathLike)):
            raise TypeError(f"expected str, bytes or os.PathLike object, not "
                            f"{type(fname).__name__}")
        fname, offset, size = os.fsdecode(fname), operator.index(offset), operator.index(size)
        if offset < 0:
            raise ValueError("Negative external file offset")
        if offset >= 2**63:
            raise OverflowError("Python int too large to convert to C long")
        if size < 0:
            raise OverflowError("can't convert negative value to hsize_t")
        if not fname:
            raise ValueError("No name given")
        out.append((fname, offset, size))
    for _, _, size in out[:-1]:
        if size == _UNLIMITED:
            raise ValueError("Previous file size is unlimited")
    return out


def _geometry(shape, data, maxshape, chunks, filtered, itemsize, layout):
    """The shape, maxshape and chunk shape of a new dataset, checked as h5py
    checks them; shape None is a null dataspace (``Empty``)."""
    if shape is not None:
        shape = shape_tuple(shape)
        if data is not None and int(np.prod(shape, dtype=np.int64)) != data.size:
            raise ValueError(f"Shape tuple {shape} is incompatible with data of shape "
                             f"{data.shape}")
    elif data is not None:
        shape = data.shape
    if not shape:
        kind = "Empty" if shape is None else "Scalar"
        if filtered:
            raise TypeError(f"{kind} datasets don't support chunk/filter options")
        if maxshape and maxshape != ():
            raise TypeError(f"{kind} datasets cannot be extended")
        return shape, None, None
    for what, t in (("chunks", chunks), ("maxshape", maxshape)):
        if t in (None, True, False):
            continue
        try:
            t = tuple(t)
        except TypeError as e:
            raise TypeError(f"{what!r} argument must be None or a sequence object") from e
        if len(t) != len(shape):
            raise ValueError(f"{what!r} must have same rank as dataset shape")
    if maxshape is True:
        maxshape = (None,) * len(shape)
    if maxshape is not None:
        maxshape = tuple(None if m is None else operator.index(m) for m in maxshape)
        for s, m in zip(shape, maxshape):
            if m is not None and m < s:
                raise ValueError(f"maxshape {maxshape} is smaller than shape {shape}")
    if layout in ("compact", "contiguous") and (filtered or maxshape or chunks not in (None, False)):
        raise ValueError(f"a {layout} dataset takes no chunks, filters or maxshape")
    if layout == "chunked" and chunks is None:
        chunks = True
    if chunks is True or (chunks is None and (filtered or maxshape)):
        chunks = auto_chunks(shape, maxshape or shape, itemsize)
    elif chunks is False:
        chunks = None
    elif chunks is not None:
        chunks = shape_tuple(chunks, "chunks")
        if any(c == 0 for c in chunks):
            raise ValueError(f"chunks {chunks} must be positive")
        for c, m in zip(chunks, maxshape or shape):
            if m is not None and c > m:
                raise ValueError(
                    "Chunk shape must not be greater than data shape in any dimension. "
                    f"{chunks} is not compatible with {shape}")
    return shape, maxshape, chunks


def _create_fixed(group, name, shape, dtype, data, chunks, maxshape, compression,
                  compression_opts, shuffle, fletcher32, fillvalue, fill_time, layout,
                  hdf5_filters, allow_unknown_filter, track_order, filtered, committed=None,
                  external=(), efile_prefix=None, scaleoffset=None, track_times=False):
    """The fixed-size branch of :func:`create_dataset`."""
    if isinstance(data, Empty) or (data is None and shape is None):
        # A null dataspace: a type and no elements (h5py's Empty).
        if data is None and dtype is None:
            raise TypeError("One of data, shape or dtype must be specified")
        _geometry(None, None, maxshape, chunks, filtered, 1, layout)
        t = data.dtype if isinstance(data, Empty) else check_dtype(dtype)
        return Dataset(group._file, group._id.create_empty(
            name, type_string(check_dtype(t)), track_order, committed, track_times))
    if data is not None:
        want = None if dtype is None else check_dtype(dtype)
        if want is not None and want.subdtype is not None:
            # An array element type: data's trailing axes are the element's.
            data = np.asarray(data, dtype=want.subdtype[0])
            sub = want.subdtype[1]
            if data.shape[data.ndim - len(sub):] != sub:
                raise ValueError(f"data of shape {data.shape} does not end in {sub}")
            lead = data.shape[: data.ndim - len(sub)]
            if shape is None:
                shape = lead
            elif int(np.prod(shape_tuple(shape), dtype=np.int64)) != int(np.prod(lead)):
                raise ValueError(f"Shape tuple {shape} is incompatible with data")
            data = data.reshape(shape_tuple(shape) + sub)
        else:
            data = as_array(data, want)
    if dtype is not None or data is not None:
        # A compound of two floats named r and i is complex, as h5py reads
        # it back: stored as complex.
        dt = np.dtype(dtype) if dtype is not None else data.dtype
        cx = None
        if dt.names is not None and len(dt.names) == 2 and dt.itemsize in (8, 16):
            cx = check_complex_dtype(dt)
        if cx is not None:
            if data is not None and data.dtype.names is not None:
                data = (data["r"] + 1j * data["i"]).astype(cx)
            dtype = cx
    if dtype is None:
        if data is None:
            warnings.warn("Creating a dataset without passing data or dtype is deprecated "
                          "(as in h5py); pass an explicit dtype. dtype='f4' keeps this "
                          "behaviour.", H5pyDeprecationWarning, stacklevel=4)
        dtype = data.dtype if data is not None else np.dtype("f4")
    dtype = check_dtype(dtype)
    if data is not None and dtype.subdtype is None and data.dtype != dtype:
        data = data.astype(dtype)
    probe = data
    if dtype.subdtype is not None and data is not None:
        # The element grid: data without the element's own axes.
        probe = np.empty(data.shape[: data.ndim - len(dtype.subdtype[1])], np.uint8)
    shape, maxshape, chunks = _geometry(shape, probe, maxshape, chunks, filtered,
                                        dtype.itemsize, layout)
    if data is not None and dtype.subdtype is None:
        data = data.reshape(shape)

    hdf5_filters, own = _pipeline(compression, compression_opts, shuffle, fletcher32, dtype,
                                  hdf5_filters, allow_unknown_filter, scaleoffset)
    fill = None
    if fillvalue is not None:
        # Kept with "never" too, as HDF5 keeps it; reads then show zeros.
        fill = _fill_bytes(fillvalue, native(dtype))
    dsid = group._id.create_dataset(
        name,
        type_string(dtype),
        list(shape),
        None if maxshape is None else list(maxshape),
        None if chunks is None else list(chunks),
        own,
        fill,
        layout,
        _with_chunk_size(hdf5_filters, chunks, dtype, fill),
        track_order,
        committed,
        list(external) or None,
        track_times,
        fill_time,
    )
    ds = _with_prefix(Dataset(group._file, dsid), efile_prefix)
    if data is not None and data.size:
        ds[...] = data
    return ds


def _fill_bytes(fillvalue, mdt):
    """One element of ``mdt`` (native order) holding ``fillvalue``, as bytes."""
    if mdt.subdtype is not None:
        base, sub = mdt.subdtype
        return np.ascontiguousarray(
            np.broadcast_to(np.asarray(fillvalue, dtype=base), sub)).tobytes()
    if mdt.names is not None and not isinstance(fillvalue, (np.void, tuple, np.ndarray)):
        # h5py converts the value alone, which a plain number cannot be.
        raise ValueError(f"fillvalue {fillvalue!r} cannot be converted to {mdt}")
    if isinstance(fillvalue, np.ndarray) and mdt.names is not None and fillvalue.dtype.names is None:
        raise ValueError(f"fillvalue of {fillvalue.dtype} cannot be converted to {mdt}")
    fv = as_array(fillvalue, mdt)
    if fv.size != 1:
        raise ValueError("fillvalue must be a single value")
    return fv.reshape(()).tobytes()


def _pipeline(compression, opts, shuffle, fletcher32, dtype, hdf5_filters, allow_unknown,
              scaleoffset=None):
    """``(hdf5 pipeline, arca's own filters)`` for a fixed-size dataset:
    HDF5's for lzf, fletcher32 and filter ids (as h5py writes them), arca's
    own for gzip, zstd and lz4."""
    if hdf5_filters is not None:
        if compression is not None or shuffle or fletcher32:
            raise TypeError("hdf5_filters is the whole pipeline: no compression, shuffle or "
                            "fletcher32 beside it")
    elif fletcher32 or compression == "lzf" or isinstance(compression, int) \
            or scaleoffset is not None:
        hdf5_filters = _hdf5_pipeline(compression, opts, shuffle, fletcher32, dtype,
                                      allow_unknown, scaleoffset)
    hdf5_filters = [(int(c), int(fl), [int(v) for v in vals], _filter_label(nm))
                    for c, fl, vals, nm in (hdf5_filters or [])]
    if hdf5_filters:
        return hdf5_filters, []
    own = []
    if shuffle:
        own.append(("shuffle", None))
    if compression is not None:
        level = opts if opts is not None else DEFAULT_LEVEL.get(compression)
        own.append((compression, None if level is None else int(level)))
    return [], own


def require_dataset(group, name, shape, dtype, exact=False, **kwds):
    """The dataset at ``name`` in ``group`` if its shape and dtype fit, else a
    new one (see :meth:`arca.Group.require_dataset`)."""
    name = member_path(name)
    if name not in group:
        return group.create_dataset(name, shape, dtype, **kwds)
    ds = group[name]
    if not isinstance(ds, Dataset):
        raise TypeError(f"Incompatible object ({type(ds).__name__}) already exists")
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    if shape is not None:
        shape = tuple(shape)
    if shape != ds.shape:
        if "maxshape" not in kwds:
            raise TypeError(f"Shapes do not match (existing {ds.shape} vs new {shape})")
        ms = kwds["maxshape"]
        ms = (ms,) if isinstance(ms, (int, np.integer)) else ms
        if (tuple(ms) if ms is not None else None) != ds.maxshape:
            raise TypeError(f"Max shapes do not match (existing {ds.maxshape} vs new {ms})")
    if exact:
        if dtype != ds.dtype:
            raise TypeError(f"Datatypes do not exactly match (existing {ds.dtype} vs new {dtype})")
    elif not np.can_cast(dtype, ds.dtype):
        raise TypeError(f"Datatypes cannot be safely cast (existing {ds.dtype} vs new {dtype})")
    if kwds.get("rdcc_nbytes") is not None:
        ds._id.set_chunk_cache(int(kwds["rdcc_nbytes"]))
    return _with_prefix(ds, kwds.get("efile_prefix"))


def create_dataset_like(group, name, other, **kwupdate):
    """A new dataset ``name`` in ``group`` shaped, typed, chunked, filtered
    and filled as ``other`` (no data, no attributes); keywords override
    (see :meth:`arca.Group.create_dataset_like`)."""
    for k in ("shape", "dtype", "chunks", "fillvalue"):
        kwupdate.setdefault(k, getattr(other, k))
    if not any(k in kwupdate for k in ("compression", "compression_opts", "shuffle",
                                       "fletcher32", "scaleoffset", "hdf5_filters")):
        kwupdate.update(other._filter_options())
    if other.maxshape != other.shape:
        kwupdate.setdefault("maxshape", other.maxshape)
    kwupdate.setdefault("track_order", bool(other._id.attrs().track_order()))
    kwupdate.setdefault("track_times", _native.Group.times_of(other._id) is not None)
    for k, v in other._create_options().items():
        kwupdate.setdefault(k, v)
    return group.create_dataset(name, **kwupdate)


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
                 compression_opts, shuffle, fillvalue, fill_time, options, track_order,
                 filtered, committed=None, track_times=False):
    """The variable-length branch of :func:`create_dataset`."""
    # hdf5_filters: the records' pipeline instead of arca's own (an
    # imported dataset's HDF5 byte codecs, blosc for one).
    hdf5_filters = options.pop("hdf5_filters", [])
    unknown = set(options) - set(_VLEN_OPTIONS)
    if unknown:
        raise TypeError(f"unexpected keyword argument(s) {sorted(unknown)}")
    rows = rows_dtype(dtype, data)
    if rows is not None and fillvalue is not None and not _is_empty_row(fillvalue):
        raise ValueError("compounds with variable-length members take no fillvalue "
                         "(unwritten elements have empty members)")
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
    if shape is None and data is None:
        raise TypeError("One of data or shape must be specified")
    shape, maxshape, chunks = _geometry(shape, data, maxshape, chunks, filtered, 16, None)
    if data is not None:
        data = data.reshape(shape)
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
    fill = None
    if rows is None and fillvalue is not None and fill_time != "never":
        fill = _vlen_fill_items(fillvalue, vlen_base_of_type(type_str))
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
        fill,
        track_times,
        hdf5_filters,
    )
    ds = Dataset(group._file, dsid)
    if data is not None and data.size:
        ds[...] = data
    return ds


def _vlen_fill_items(fillvalue, base):
    """A variable-length fill value as the items the core keeps (native
    order; UTF-8 for strings, ASCII for byte strings; the empty string
    too: HDF5 tells a fill of "" from none)."""
    if base is str or base is bytes:
        if isinstance(fillvalue, np.ndarray) and fillvalue.ndim == 0:
            fillvalue = fillvalue[()]
        if isinstance(fillvalue, str):
            items = fillvalue.encode("utf-8" if base is str else "ascii")
        elif isinstance(fillvalue, (bytes, np.bytes_)):
            items = bytes(fillvalue)
        else:
            raise TypeError(f"fillvalue {fillvalue!r} for a string type: use str or bytes")
    else:
        # As h5py (HDF5 has no conversion for it); arca's core takes one.
        raise ValueError("variable-length sequences take no fill value")
    return items


def _is_empty_row(value):
    """Whether a compound value has only empty variable-length members (what
    unwritten elements of such a compound show)."""
    try:
        return all(len(m) == 0 for m in np.asarray(value).item()
                   if isinstance(m, (str, bytes, np.ndarray)))
    except (TypeError, ValueError):
        return False
