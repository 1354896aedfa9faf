"""Variable-length elements: how datasets of strings, byte strings, ragged
arrays and compounds with such members read and write.

Types are numpy object dtypes tagged as in h5py (see ``_dtypes``)::

    arca.string_dtype()              # str elements (UTF-8)
    arca.vlen_dtype(bytes)           # bytes elements
    arca.vlen_dtype(np.float32)      # 1-D float32 arrays of any length

Such a dataset is an :class:`arca.Dataset` like any other; it holds one of
the element engines below, chosen once from its type when it is wrapped,
which move its elements to and from numpy object arrays (or structured
arrays with object fields) and give it fast paths that move whole buffers
without building a Python object per element::

    ds = f.create_dataset("rows", shape=(3,), dtype=arca.vlen_dtype("f4"))
    ds.write_ragged(np.array([1, 2, 3], "f4"), np.array([0, 1, 1, 3]))
    values, offsets = ds.read_ragged()          # Arrow-style offsets
    ds.read_arrow()                             # pyarrow LargeListArray

Every such dataset stores its data in its own chunked byte vector;
``vlen_chunk_bytes``, ``vlen_compression``/``vlen_compression_opts``,
``vlen_shuffle`` and ``vlen_reuse_space`` at creation configure it.
"""

import copy

import numpy as np

from . import _native, _rows
from ._selection import broadcast_shape
from ._dtypes import (
    from_type_string,
    native,
    object_array,
    vlen_base_of_type,
    vlen_dtype,
)
from ._regionref import TYPE_STRING as REGION_TYPE
from ._regionref import RegionEngine
from ._util import prod


def engine(dsid, type_string):
    """The element engine of a dataset whose type string is ``type_string``,
    or None for fixed-size elements (read and written as they are)."""
    if "vlen:" not in type_string:
        return None
    if type_string == REGION_TYPE:
        return RegionEngine(dsid, type_string)
    if type_string.startswith("vlen:") and not _rows.takes_rows(type_string):
        return Ragged(dsid, type_string)
    return Rows(dsid, type_string)


def _broadcast(arr, out_shape, count):
    """``arr`` broadcast to a selection of ``out_shape`` by h5py's rules,
    shaped ``count``."""
    out_shape = tuple(out_shape)
    if arr.shape != out_shape:
        src = broadcast_shape(arr.shape, out_shape)
        arr = np.broadcast_to(arr.reshape(src), out_shape)
    return arr.reshape(count)


class _Vector:
    """What every engine has: the dataset's byte vector."""

    ragged = False

    def __init__(self, dsid, type_string):
        self._id = dsid
        self.type_string = type_string

    def info(self):
        """How the byte vector is stored (see ``Dataset.vlen_info``)."""
        return _native.vlen_info(self._id)

    def repack(self):
        """Rewrite the byte vector with only live data."""
        _native.vlen_repack(self._id)

    def create_options(self):
        """The ``vlen_*`` creation keywords that reproduce this byte vector."""
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


class Rows(_Vector):
    """Compounds with variable-length members (strings, byte strings, ragged
    sequences), read and written as structured arrays with object fields, as
    h5py does; strings inside compounds read as ``bytes``. Also sequences of
    such compounds: object arrays of structured arrays."""

    def __init__(self, dsid, type_string):
        super().__init__(dsid, type_string)
        self.dtype = from_type_string(type_string)
        self.memtype = native(self.dtype)
        self.sequence = type_string.startswith("vlen:")

    def fillvalue(self):
        """The empty element: every variable-length member empty."""
        t = self.type_string
        return _rows.decode(np.zeros(_rows.plan(t).size, np.uint8), 1, t, self.memtype)[0]

    def read(self, start, count, step):
        return _rows.read(self._id, start, count, step, self.type_string, self.memtype)

    def write(self, start, count, step, data):
        _rows.write(self._id, start, count, step, np.asarray(data), self.type_string)

    def coerce(self, value, out_shape, count):
        if self.sequence:
            # Each element is a whole array of the base: one value for one
            # element, else one per element.
            if tuple(out_shape) == () or (isinstance(value, np.ndarray)
                                          and value.dtype.kind != "O" and value.ndim == 1
                                          and prod(out_shape) == 1):
                arr = np.empty((), dtype=object)
                arr[()] = value
            elif isinstance(value, np.ndarray) and value.dtype.kind == "O":
                arr = value
            else:
                arr = np.empty(len(value), dtype=object)
                for i, v in enumerate(value):
                    arr[i] = v
            return _broadcast(arr, out_shape, count)
        return _broadcast(np.asarray(value, dtype=self.memtype), out_shape, count)


class Ragged(_Vector):
    """Variable-length elements: ``str``, ``bytes`` or 1-D arrays, as numpy
    object arrays; and the bulk paths (``read_ragged`` ...)."""

    ragged = True

    def __init__(self, dsid, type_string):
        super().__init__(dsid, type_string)
        stored = vlen_base_of_type(type_string)
        self.dtype = self.memtype = vlen_dtype(stored)
        # Items in native byte order, whatever the stored order.
        self.base = stored if stored in (str, bytes) else stored.newbyteorder("=")
        # Strings read as bytes, as h5py reads them; as str when decoding.
        self.text = False

    def decoding(self):
        """This engine reading strings as ``str`` (UTF-8 decoded)."""
        out = copy.copy(self)
        out.text = True
        return out

    def fillvalue(self):
        """The fill value given at creation, else the empty string
        (``b""``, strings read as bytes as in h5py) or, for sequences, None."""
        items = _native.vlen_fill(self._id)
        b = self.base
        if b in (str, bytes):
            items = items or b""
            return items.decode("utf-8") if self.text else items
        # Sequences without one show None, as h5py reports them.
        return None if items is None else np.frombuffer(items, dtype=b).copy()

    # -- object arrays ----------------------------------------------------------
    def read(self, start, count, step):
        n = prod(count)
        # Tagged with the element type, as h5py's arrays are.
        out = np.empty(n, dtype=self.dtype)
        if n:
            values, offsets = _native.vlen_read(self._id, start, count, step)
            b = self.base
            if b in (str, bytes):
                out[:] = _native.vlen_unpack(values, offsets, self.text)
            else:
                vals = values.view(b)
                off = offsets.tolist()
                for i in range(n):
                    out[i] = vals[off[i]:off[i + 1]]
        return out.reshape(count)

    def _pack(self, flat):
        b = self.base
        if b is str:
            items = [x if isinstance(x, (str, bytes)) else _item_text(x) for x in flat.tolist()]
            return _native.vlen_pack(items)
        if b is bytes:
            # An ASCII string type: str must be ASCII (UnicodeEncodeError, as h5py).
            items = [x.encode("ascii") if isinstance(x, str) else
                     x if isinstance(x, bytes) else _item_text(x) for x in flat.tolist()]
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

    def write(self, start, count, step, data):
        flat = np.asarray(data, dtype=object).reshape(-1)
        if flat.size:
            values, offsets = self._pack(flat)
            _native.vlen_write(self._id, start, count, step, values, offsets)

    def coerce(self, value, out_shape, count):
        b = self.base
        if tuple(out_shape) == () and b not in (str, bytes) and not (
            isinstance(value, np.ndarray) and value.dtype.kind == "O"
        ):
            # One numeric element: the whole value is its items.
            arr = np.empty((), dtype=object)
            arr[()] = np.asarray(value, dtype=b)
            return arr.reshape(count)
        if b not in (str, bytes) and isinstance(value, np.ndarray) and value.dtype.kind != "O" \
                and value.ndim > 1:
            # A numeric array's last axis holds the items, as h5py reads it.
            rows = value.reshape(-1, value.shape[-1])
            arr = np.empty(len(rows), dtype=object)
            for i, r in enumerate(rows):
                arr[i] = r
            value = arr.reshape(value.shape[:-1])
        return _broadcast(object_array(value, b), out_shape, count)

    # -- buffers ----------------------------------------------------------------
    def read_ragged(self, start, count, step):
        values, offsets = _native.vlen_read(self._id, start, count, step)
        b = self.base
        if b not in (str, bytes):
            values = values.view(b)
        return values, offsets.view(np.int64)

    def write_ragged(self, start, count, step, values, offsets):
        b = self.base
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

    def to_arrow(self, values, offsets):
        """The pyarrow array of buffers :meth:`read_ragged` gave, not copied."""
        import pyarrow as pa

        n = len(offsets) - 1
        obuf = pa.py_buffer(offsets)
        b = self.base
        if b is str or b is bytes:
            t = pa.large_string() if b is str else pa.large_binary()
            return pa.Array.from_buffers(t, n, [None, obuf, pa.py_buffer(values)])
        child = pa.array(values) if values.dtype.kind == "b" else pa.Array.from_buffers(
            pa.from_numpy_dtype(values.dtype), len(values), [None, pa.py_buffer(values)]
        )
        return pa.LargeListArray.from_arrays(
            pa.Array.from_buffers(pa.int64(), n + 1, [None, obuf]), child)


def arrow_buffers(array):
    """``(values, offsets)`` of a pyarrow string, binary or list array (or
    chunked array), its buffers not copied where the layouts allow."""
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
        values = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None \
            else np.empty(0, np.uint8)
        return values, offsets
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        offsets = array.offsets.to_numpy()
        child = array.values
        if child.null_count:
            raise ValueError("arca has no null items; fill or drop the nulls first")
        values = child.to_numpy(zero_copy_only=not pa.types.is_boolean(child.type))
        return values, offsets
    raise TypeError(f"cannot write a pyarrow {t} array to a variable-length dataset")


def _item_text(x):
    if isinstance(x, np.str_):
        return str(x)
    if isinstance(x, np.bytes_):
        return bytes(x)
    raise TypeError(f"cannot store {type(x).__name__} in a string dataset; use str or bytes")
