"""Attributes: small named values attached to groups and datasets.

A value crosses to the core as ``(type string, shape, bytes)``: fixed-size
elements in native byte order; compounds with variable-length members as
the rows buffer (see ``_rows``); variable-length elements as little-endian
u64 byte lengths, then the items.
"""

from collections.abc import MutableMapping

import numpy as np

from . import _native, _rows
from ._dtypes import (
    Empty,
    Reference,
    RegionReference,
    as_array,
    check_dtype,
    from_type_string,
    has_refs,
    infer_vlen_base,
    layout_dtype,
    native,
    object_array,
    objects_to_refs,
    ref_dtype,
    refs_to_objects,
    regionref_dtype,
    repad,
    rows_dtype,
    type_string,
    unpad,
    vlen_base_of_dtype,
    vlen_base_of_type,
    vlen_item_dtype,
    vlen_type_string,
)
from ._regionref import encode_items
from ._util import prod


def _encode(value, dtype=None):
    """``(type string, shape, native-order bytes)`` for an attribute value."""
    if dtype is None and isinstance(value, RegionReference):
        dtype = regionref_dtype
    rows = rows_dtype(dtype, value)
    if rows is not None:
        arr = np.asarray(value, dtype=rows)
        t = type_string(rows)
        return t, [int(s) for s in arr.shape], _rows.encode(arr, t).tobytes()
    if _is_vlen(value, dtype):
        return _encode_vlen(value, dtype)
    if isinstance(value, (str, bytes, np.bytes_)) and dtype is None:
        b = value.encode("utf-8") if isinstance(value, str) else bytes(value)
        # A zero-length string is stored as one NUL, which reads back as "".
        return f"|S{max(len(b), 1)}", [], b or b"\0"
    want = None if dtype is None else check_dtype(dtype)
    if want is None and isinstance(value, Reference):
        want = ref_dtype
    if want is not None and has_refs(want):
        arr = np.asarray(value, dtype=want)
        data = np.ascontiguousarray(objects_to_refs(arr, want))
        return type_string(want), [int(s) for s in arr.shape], data.tobytes()
    if want is not None and want.subdtype is not None:
        # An array element type: the value's trailing axes are the element's.
        base, sub = want.subdtype
        arr = np.asarray(value, dtype=native(base))
        if arr.shape[arr.ndim - len(sub):] != sub:
            raise ValueError(f"a value of shape {arr.shape} does not end in {sub}")
        shape = arr.shape[: arr.ndim - len(sub)]
        return type_string(want), [int(s) for s in shape], np.ascontiguousarray(arr).tobytes()
    arr = as_array(value, want)
    dt = check_dtype(arr.dtype if want is None else want)
    data = np.ascontiguousarray(repad(arr, dt), dtype=native(dt))
    return type_string(dt), [int(s) for s in arr.shape], data.tobytes()


def _decode(dtype, shape, data):
    if shape is None:
        return Empty(from_type_string(dtype))
    if dtype.startswith("vlen:"):
        return _decode_vlen(dtype, shape, data)
    dt = from_type_string(dtype)
    mdt = native(dt)
    if "vlen:" in dtype:
        n = int(np.prod(shape, dtype=np.int64))
        arr = _rows.decode(np.frombuffer(data, np.uint8), n, dtype, mdt).reshape(shape)
        return arr if shape else arr[()]
    if has_refs(mdt):
        arr = refs_to_objects(np.frombuffer(data, dtype=layout_dtype(mdt)).reshape(shape), mdt)
        return arr if shape else arr[()]
    if mdt.subdtype is not None:
        base, sub = mdt.subdtype
        return np.frombuffer(data, dtype=base).reshape(tuple(shape) + sub).copy()
    arr = unpad(np.frombuffer(data, dtype=mdt).reshape(shape), mdt)
    if shape:
        return arr.copy()
    v = arr[()]
    if dt.kind == "S":
        # Strings come back as str; bytes that are not UTF-8 stay bytes.
        try:
            return v.decode("utf-8")
        except UnicodeDecodeError:
            return bytes(v)
    return v


class AttributeManager(MutableMapping):
    """The attributes of a group or dataset, as a dict-like mapping.

    Values may be Python or numpy scalars, numpy arrays (any supported dtype
    and byte order), ``str`` or ``bytes``. Both are stored as fixed-length
    bytes (``str`` as UTF-8); a scalar string reads back as ``str`` when it
    is valid UTF-8, else as ``bytes``::

        ds.attrs["units"] = "m/s"
        ds.attrs["calib"] = np.array([1.0, 0.5])
        dict(ds.attrs)   # {'calib': array([1. , 0.5]), 'units': 'm/s'}

    Scalars read back as numpy scalars, arrays as numpy arrays in native byte
    order.
    """

    def __init__(self, aid):
        self._id = aid

    def __getitem__(self, name):
        return _decode(*self._id.get(_name(name)))

    def __setitem__(self, name, value):
        if isinstance(value, Empty):
            return self._id.set_empty(_name(name), type_string(check_dtype(value.dtype)))
        self._id.set(_name(name), *_encode(value))

    def _dtype(self, name):
        """The stored type of attribute ``name`` (numbers in their stored
        byte order, strings with their character set and padding)."""
        return from_type_string(self._id.get(_name(name))[0])

    def __delitem__(self, name):
        self._id.delete(_name(name))

    def __contains__(self, name):
        if not isinstance(name, (str, bytes)):
            return False
        return self._id.contains(_name(name))

    def __iter__(self):
        return iter(self._id.names())

    def __len__(self):
        return int(self._id.len())

    def create(self, name, data, shape=None, dtype=None):
        """Create or replace an attribute, optionally with a given shape and dtype."""
        if isinstance(data, Empty):
            t = check_dtype(data.dtype if dtype is None else dtype)
            return self._id.set_empty(_name(name), type_string(t))
        if _is_vlen(data, dtype):
            self._id.set(_name(name), *_encode_vlen(data, dtype, shape))
            return
        want = None if dtype is None else check_dtype(dtype)
        if want is not None and want.subdtype is not None:
            t, shp, buf = _encode(data, want)
            if shape is not None:
                if int(np.prod(shape, dtype=np.int64)) != int(np.prod(shp, dtype=np.int64)):
                    raise ValueError(f"shape {shape} does not fit {len(buf)} bytes of {want}")
                shp = [int(s) for s in shape]
            self._id.set(_name(name), t, shp, buf)
            return
        if shape is not None or dtype is not None:
            arr = as_array(data, want)
            if shape is not None:
                arr = arr.reshape(shape)
            data = arr
        self._id.set(_name(name), *_encode(data, want))

    def modify(self, name, value):
        """Change an attribute's value where it stands (it keeps its place
        in creation order), or create it. As h5py, a value of another shape
        than the attribute's is a TypeError."""
        name = _name(name)
        if isinstance(value, Empty) or name not in self:
            self[name] = value
            return
        t, shape, _ = self._id.get(name)
        old = from_type_string(t)
        # Numbers take the attribute's type, as in h5py; strings keep their
        # own length (h5py's are variable-length, so nothing is cut).
        new_t, new_shape, buf = _encode(value, None if old.kind in "SUO" else old)
        if shape is None or list(new_shape) != list(shape):
            raise TypeError("Shape of data is incompatible with existing attribute")
        self._id.modify(name, new_t, new_shape, buf)

    def rename(self, src, dst):
        """Rename an attribute."""
        self._id.rename(_name(src), _name(dst))

    def __repr__(self):
        return f"<Attributes of arca object ({len(self)} attributes)>"


# -- variable-length values --------------------------------------------------------
def _is_vlen(value, dtype):
    """Whether an attribute value should be stored variable-length."""
    if rows_dtype(dtype, value) is not None:
        return False
    if dtype is not None:
        return vlen_base_of_dtype(dtype) is not None or dtype is str
    return isinstance(value, np.ndarray) and value.dtype.kind == "O"


def _encode_vlen(value, dtype=None, shape=None):
    """``(type string, shape, payload)`` of a variable-length attribute:
    little-endian u64 byte lengths, then the items."""
    base = vlen_base_of_dtype(dtype) if dtype is not None else None
    arr = object_array(value, base)
    if base is None:
        base = infer_vlen_base(arr) if arr.size else str
    if shape is not None:
        arr = arr.reshape(shape)
    flat = arr.reshape(-1)
    if base in (str, bytes) or base is RegionReference:
        chunks = encode_items(flat.tolist()) if base is RegionReference else [
            (x.encode("utf-8") if isinstance(x, str) else bytes(x)) for x in flat.tolist()
        ]
        data = b"".join(chunks)
        lens = np.fromiter((len(c) for c in chunks), dtype="<u8", count=len(chunks))
    elif isinstance(base, np.dtype) and base.kind == "O":
        # Sequences of references: each item the referenced object's id.
        rows = [objects_to_refs(np.asarray(x, dtype=base).reshape(-1), base) for x in flat]
        data = b"".join(np.ascontiguousarray(r, dtype="=u8").tobytes() for r in rows)
        lens = np.fromiter((r.nbytes for r in rows), dtype="<u8", count=len(rows))
    else:
        base = vlen_item_dtype(base)
        rows = [np.asarray(x, dtype=base).reshape(-1) for x in flat]
        data = b"".join(np.ascontiguousarray(r, dtype=base.newbyteorder("=")).tobytes() for r in rows)
        lens = np.fromiter((r.nbytes for r in rows), dtype="<u8", count=len(rows))
    return vlen_type_string(base), [int(s) for s in arr.shape], lens.tobytes() + data


def _decode_vlen(type_string, shape, data):
    """The value of a variable-length attribute: ``str``/``bytes``/array for
    a scalar, else an object array."""
    base = vlen_base_of_type(type_string)
    n = prod(shape)
    lens = np.frombuffer(data, dtype="<u8", count=n)
    offsets = np.zeros(n + 1, dtype=np.uint64)
    np.cumsum(lens, out=offsets[1:])
    values = np.frombuffer(data, dtype=np.uint8, offset=8 * n)
    out = np.empty(n, dtype=object)
    if base is RegionReference:
        for i, b in enumerate(_native.vlen_unpack(np.ascontiguousarray(values), offsets, False)):
            out[i] = RegionReference(b)
    elif base in (str, bytes):
        out[:] = _native.vlen_unpack(np.ascontiguousarray(values), offsets, base is str)
    elif base.kind == "O":
        # Object references: ids become References.
        for i in range(n):
            ids = values[offsets[i]:offsets[i + 1]].view("=u8")
            out[i] = refs_to_objects(ids, base)
    else:
        nb = base.newbyteorder("=")
        for i in range(n):
            out[i] = values[offsets[i]:offsets[i + 1]].view(nb).copy()
    if not shape:
        return out[0]
    return out.reshape(shape)


def _name(name):
    if isinstance(name, bytes):
        return name.decode("utf-8")
    if not isinstance(name, str):
        raise TypeError(f"attribute names are str, not {type(name).__name__}")
    return name
