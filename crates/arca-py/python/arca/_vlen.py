"""Variable-length data: strings, byte strings and ragged arrays.

Types are numpy object dtypes tagged as in h5py (see ``_dtypes``)::

    arca.string_dtype()              # str elements (UTF-8)
    arca.vlen_dtype(bytes)           # bytes elements
    arca.vlen_dtype(np.float32)      # 1-D float32 arrays of any length

Datasets of these types read and write numpy object arrays like h5py, and
have fast paths that move whole buffers and never build a Python object per
element::

    ds = f.create_dataset("rows", shape=(3,), dtype=arca.vlen_dtype("f4"))
    ds.write_ragged(np.array([1, 2, 3], "f4"), np.array([0, 1, 1, 3]))
    values, offsets = ds.read_ragged()          # Arrow-style offsets
    ds.read_arrow()                             # pyarrow LargeListArray

Compound dtypes may hold such members too (``np.dtype([("id", "u4"),
("name", arca.string_dtype())])``): their datasets read and write structured
arrays with object fields.

Every such dataset stores its data in its own chunked byte vector;
``vlen_chunk_bytes``, ``vlen_compression``/``vlen_compression_opts``,
``vlen_shuffle`` and ``vlen_reuse_space`` at creation configure it.
"""

import numpy as np

from . import _native, _rows, _selection
from ._dataset import Dataset
from ._dtypes import (
    check_vlen_dtype,
    has_refs,
    infer_vlen_base,
    object_array,
    rows_dtype,
    type_string,
    vlen_base_of_dtype,
    vlen_base_of_type,
    vlen_dtype,
    vlen_type_string,
)
from ._object import register
from ._util import COMPRESSORS, DEFAULT_LEVEL, auto_chunks, member_path, prod, shape_tuple

_VLEN_OPTIONS = (
    "vlen_chunk_bytes",
    "vlen_compression",
    "vlen_compression_opts",
    "vlen_shuffle",
    "vlen_reuse_space",
)


# -- creation ---------------------------------------------------------------------
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


def create_dataset(group, name, shape, dtype, data, chunks, maxshape, compression,
                   compression_opts, shuffle, fillvalue, options, track_order=False):
    """The variable-length branch of :meth:`Group.create_dataset`."""
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


# -- datasets ---------------------------------------------------------------------
class _Vector:
    """What every dataset with a byte vector has: variable-length datasets
    and compounds with variable-length members."""

    @property
    def vlen_info(self):
        """How the byte vector is stored: a dict of ``vector_bytes``,
        ``live_bytes``, ``stored_bytes``, ``compression_ratio``, ``chunks``,
        ``chunk_bytes``, ``filters``, ``reuse_space``, ``free_bytes``."""
        return _native.vlen_info(self._id)

    def _create_options(self):
        """The ``vlen_*`` creation keywords that reproduce this byte vector."""
        info = self.vlen_info
        opts = {"vlen_chunk_bytes": info["chunk_bytes"], "vlen_reuse_space": info["reuse_space"]}
        for name, level in info["filters"]:
            if name == "shuffle":
                opts["vlen_shuffle"] = True
            else:
                opts["vlen_compression"] = name
                if level is not None:
                    opts["vlen_compression_opts"] = level
        return opts

    def vlen_repack(self):
        """Rewrite the byte vector with only live data, reclaiming the space
        that overwrites left behind."""
        _native.vlen_repack(self._id)

    def read_direct(self, dest, source_sel=None, dest_sel=None):
        """``dest[dest_sel] = self[source_sel]`` for an object array ``dest``."""
        src = self[() if source_sel is None else source_sel]
        dest[() if dest_sel is None else dest_sel] = src


class RowsDataset(_Vector, Dataset):
    """A compound dataset with variable-length members (strings, byte
    strings, ragged sequences), read and written as structured arrays with
    object fields, as h5py does; strings inside compounds read as ``bytes``.
    """

    @property
    def _type(self):
        t = getattr(self, "_tstr", None)
        if t is None:
            t = self._tstr = self._id.dtype()
        return t

    @property
    def fillvalue(self):
        """The empty element: every variable-length member empty."""
        return _rows.decode(np.zeros(_rows.plan(self._type).size, np.uint8), 1, self._type,
                            self._memtype)[0]

    def _read_box(self, start, count, step):
        return _rows.read(self._id, start, count, step, self._type, self._memtype)

    def _write_box(self, start, count, step, data):
        _rows.write(self._id, start, count, step, np.asarray(data), self._type)

    def _coerce(self, value, out_shape, count):
        arr = np.asarray(value, dtype=self._memtype)
        if arr.shape != tuple(out_shape):
            try:
                arr = np.broadcast_to(arr, out_shape)
            except ValueError:
                raise ValueError(
                    f"could not broadcast input of shape {arr.shape} into shape {out_shape}"
                ) from None
        return arr.reshape(count)


class VlenDataset(_Vector, Dataset):
    """A dataset of variable-length elements: ``str``, ``bytes`` or 1-D arrays.

    Indexing reads and writes numpy object arrays like h5py; see
    :meth:`read_ragged`, :meth:`write_ragged`, :meth:`read_arrow` and
    :meth:`write_arrow` for the bulk paths.
    """

    @property
    def dtype(self):
        """The object dtype tagged with the element base (see :func:`vlen_dtype`)."""
        if self._dtype is None:
            self._base = vlen_base_of_type(self._id.dtype())
            self._dtype = vlen_dtype(self._base)
            self._mdtype = self._dtype
        return self._dtype

    @property
    def vlen_base(self):
        """``str``, ``bytes`` or the numpy dtype of the items (native order)."""
        self.dtype  # noqa: B018 -- loads the base
        b = self._base
        return b if b in (str, bytes) else b.newbyteorder("=")

    @property
    def fillvalue(self):
        """The empty element: ``""``, ``b""`` or an empty array."""
        b = self.vlen_base
        return "" if b is str else b"" if b is bytes else np.empty(0, b)

    def asstr(self, encoding="utf-8", errors="strict"):
        """A view that reads elements as ``str``, as h5py's: string datasets
        already read as ``str``; byte-string elements are decoded."""
        b = self.vlen_base
        if b not in (str, bytes):
            raise TypeError("asstr() is for string datasets")
        return _AsStr(self, encoding, errors)

    # -- object arrays ---------------------------------------------------------
    def _read_box(self, start, count, step):
        n = prod(count)
        out = np.empty(n, dtype=object)
        if n:
            values, offsets = _native.vlen_read(self._id, start, count, step)
            b = self.vlen_base
            if b in (str, bytes):
                out[:] = _native.vlen_unpack(values, offsets, b is str)
            else:
                vals = values.view(b)
                off = offsets.tolist()
                for i in range(n):
                    out[i] = vals[off[i]:off[i + 1]]
        return out.reshape(count)

    def _pack(self, flat):
        b = self.vlen_base
        if b in (str, bytes):
            items = [x if isinstance(x, (str, bytes)) else _item_text(x) for x in flat.tolist()]
            return _native.vlen_pack(items)
        rows = []
        for x in flat:
            a = np.asarray(x, dtype=b)
            if a.ndim > 1:
                raise ValueError(f"variable-length elements are 1-D, got shape {a.shape}")
            rows.append(a.reshape(-1))
        lens = np.fromiter((r.size for r in rows), dtype=np.uint64, count=len(rows))
        offsets = np.zeros(len(rows) + 1, dtype=np.uint64)
        np.cumsum(lens, out=offsets[1:])
        values = np.concatenate(rows) if rows else np.empty(0, b)
        return np.ascontiguousarray(values).view(np.uint8), offsets

    def _write_box(self, start, count, step, data):
        flat = np.asarray(data, dtype=object).reshape(-1)
        if flat.size:
            values, offsets = self._pack(flat)
            _native.vlen_write(self._id, start, count, step, values, offsets)

    def _coerce(self, value, out_shape, count):
        b = self.vlen_base
        if tuple(out_shape) == () and b not in (str, bytes) and not (
            isinstance(value, np.ndarray) and value.dtype.kind == "O"
        ):
            # One numeric element: the whole value is its items.
            arr = np.empty((), dtype=object)
            arr[()] = np.asarray(value, dtype=b)
            return arr.reshape(count)
        arr = object_array(value, b)
        if arr.shape != tuple(out_shape):
            if arr.size == prod(out_shape):
                arr = arr.reshape(out_shape)
            else:
                try:
                    arr = np.broadcast_to(arr, out_shape)
                except ValueError:
                    raise ValueError(
                        f"could not broadcast input of shape {arr.shape} into shape {out_shape}"
                    ) from None
        return arr.reshape(count)

    def __setitem__(self, key, value):
        if key is Ellipsis or (type(key) is tuple and not key):
            shape = self.shape
            arr = self._coerce(value, shape, shape)
            self._write_box([0] * len(shape), list(shape), [1] * len(shape), arr)
            return
        super().__setitem__(key, value)

    # -- buffers ---------------------------------------------------------------
    def _box(self, sel):
        shape = self.shape
        if sel is None or sel is Ellipsis or (type(sel) is tuple and not sel):
            return [0] * len(shape), list(shape), [1] * len(shape)
        s = _selection.parse(sel, shape)
        if s.fancy is not None or s.flip:
            raise ValueError(
                "the bulk paths take integers and slices with positive steps; "
                "use indexing for list indices or reversed slices"
            )
        return s.start, s.count, s.step

    def read_ragged(self, sel=None):
        """``(values, offsets)`` of the selected elements in row-major order:
        element ``i`` is ``values[offsets[i]:offsets[i + 1]]``. ``values`` has
        the base dtype (``uint8`` UTF-8/bytes for strings), ``offsets`` is
        int64 with one more entry than elements, starting at 0."""
        start, count, step = self._box(sel)
        values, offsets = _native.vlen_read(self._id, start, count, step)
        b = self.vlen_base
        if b not in (str, bytes):
            values = values.view(b)
        return values, offsets.view(np.int64)

    def write_ragged(self, values, offsets, sel=None):
        """Write the selected elements from ``values`` and Arrow-style
        ``offsets`` (one more than the elements; they need not start at 0).
        All the data goes to the byte vector in one append."""
        start, count, step = self._box(sel)
        b = self.vlen_base
        if b in (str, bytes):
            if isinstance(values, (bytes, bytearray, memoryview)):
                values = np.frombuffer(values, dtype=np.uint8)
            v = np.ascontiguousarray(values)
            if v.dtype.itemsize != 1:
                raise TypeError("string values are a uint8 array or bytes")
            v = v.view(np.uint8).reshape(-1)
        else:
            v = np.ascontiguousarray(values, dtype=b).reshape(-1).view(np.uint8)
        o = np.asarray(offsets)
        if o.dtype.kind not in "iu":
            raise TypeError("offsets must be integers")
        if o.dtype.kind == "i" and o.size and o.min() < 0:
            raise ValueError("offsets must not be negative")
        if o.dtype.kind == "i" and o.dtype.itemsize == 8:
            o = o.view(np.uint64)  # checked non-negative: same bits, no copy
        o = np.ascontiguousarray(o, dtype=np.uint64).reshape(-1)
        _native.vlen_write(self._id, start, count, step, v, o)

    def read_arrow(self, sel=None):
        """The selected elements as a pyarrow ``LargeStringArray``,
        ``LargeBinaryArray`` or ``LargeListArray``, built on the buffers read
        without copying them."""
        import pyarrow as pa

        values, offsets = self.read_ragged(sel)
        n = len(offsets) - 1
        obuf = pa.py_buffer(offsets)
        b = self.vlen_base
        if b is str or b is bytes:
            t = pa.large_string() if b is str else pa.large_binary()
            return pa.Array.from_buffers(t, n, [None, obuf, pa.py_buffer(values)])
        child = pa.array(values) if values.dtype.kind == "b" else pa.Array.from_buffers(
            pa.from_numpy_dtype(values.dtype), len(values), [None, pa.py_buffer(values)]
        )
        return pa.LargeListArray.from_arrays(pa.Array.from_buffers(pa.int64(), n + 1, [None, obuf]), child)

    def write_arrow(self, array, sel=None):
        """Write a pyarrow ``StringArray``/``LargeStringArray``/``BinaryArray``/
        ``ListArray``/``LargeListArray`` (or chunked array) without copying its
        buffers where the layouts allow. Nulls are refused."""
        import pyarrow as pa

        if isinstance(array, pa.ChunkedArray):
            array = array.combine_chunks()
        if array.null_count:
            raise ValueError("arca has no null elements; fill or drop the nulls first")
        t = array.type
        n = len(array)
        if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) \
                or pa.types.is_large_binary(t):
            wide = pa.types.is_large_string(t) or pa.types.is_large_binary(t)
            bufs = array.buffers()
            odt = np.int64 if wide else np.int32
            offsets = np.frombuffer(bufs[1], dtype=odt, count=array.offset + n + 1)[array.offset:]
            values = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.empty(0, np.uint8)
            self.write_ragged(values, offsets, sel)
            return
        if pa.types.is_list(t) or pa.types.is_large_list(t):
            offsets = array.offsets.to_numpy()
            child = array.values
            if child.null_count:
                raise ValueError("arca has no null items; fill or drop the nulls first")
            values = child.to_numpy(zero_copy_only=not pa.types.is_boolean(child.type))
            self.write_ragged(values, offsets, sel)
            return
        raise TypeError(f"cannot write a pyarrow {t} array to a variable-length dataset")


class _AsStr:
    """What :meth:`VlenDataset.asstr` returns."""

    def __init__(self, ds, encoding, errors):
        self._ds, self._enc, self._err = ds, encoding, errors

    def __getitem__(self, key):
        v = self._ds[key]
        if self._ds.vlen_base is str:
            return v
        if isinstance(v, bytes):
            return v.decode(self._enc, self._err)
        out = np.empty(v.shape, dtype=object)
        out.reshape(-1)[:] = [x.decode(self._enc, self._err) for x in v.reshape(-1)]
        return out

    def __array__(self, dtype=None, copy=None):
        arr = self[...]
        return arr if dtype is None else arr.astype(dtype)

    def __len__(self):
        return len(self._ds)


def _item_text(x):
    if isinstance(x, np.str_):
        return str(x)
    if isinstance(x, np.bytes_):
        return bytes(x)
    raise TypeError(f"cannot store {type(x).__name__} in a string dataset; use str or bytes")


register("vlen", VlenDataset)
register("rows", RowsDataset)
