"""Attributes: small named values attached to groups and datasets."""

from collections.abc import MutableMapping

import numpy as np

from ._dtypes import (
    Empty,
    Reference,
    as_array,
    check_dtype,
    from_type_string,
    has_refs,
    native,
    objects_to_refs,
    raw_dtype,
    refs_to_objects,
    ref_dtype,
    repad,
    type_string,
    unpad,
)


def _encode(value, dtype=None):
    """``(type string, shape, native-order bytes)`` for an attribute value."""
    from . import _vlen  # late: _vlen imports the dataset module, which imports this one

    rows = _vlen._rows_dtype(dtype, value)
    if rows is not None:
        from . import _rows

        arr = np.asarray(value, dtype=rows)
        t = type_string(rows)
        return t, [int(s) for s in arr.shape], _rows.encode(arr, t).tobytes()
    if _vlen.is_vlen_attr(value, dtype):
        return _vlen.encode_attr(value, dtype)
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
        from . import _vlen

        return _vlen.decode_attr(dtype, shape, data)
    dt = from_type_string(dtype)
    mdt = native(dt)
    if "vlen:" in dtype:
        from . import _rows

        n = int(np.prod(shape, dtype=np.int64))
        arr = _rows.decode(np.frombuffer(data, np.uint8), n, dtype, mdt).reshape(shape)
        return arr if shape else arr[()]
    if has_refs(mdt):
        arr = refs_to_objects(np.frombuffer(data, dtype=raw_dtype(mdt)).reshape(shape), mdt)
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
        from . import _vlen

        if isinstance(data, Empty):
            t = check_dtype(data.dtype if dtype is None else dtype)
            return self._id.set_empty(_name(name), type_string(t))
        if _vlen.is_vlen_attr(data, dtype):
            self._id.set(_name(name), *_vlen.encode_attr(data, dtype, shape))
            return
        want = None if dtype is None else check_dtype(dtype)
        if want is not None and want.subdtype is not None:
            t, shp, raw = _encode(data, want)
            if shape is not None:
                if int(np.prod(shape, dtype=np.int64)) != int(np.prod(shp, dtype=np.int64)):
                    raise ValueError(f"shape {shape} does not fit {len(raw)} bytes of {want}")
                shp = [int(s) for s in shape]
            self._id.set(_name(name), t, shp, raw)
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
        new_t, new_shape, raw = _encode(value, None if old.kind in "SUO" else old)
        if shape is None or list(new_shape) != list(shape):
            raise TypeError("Shape of data is incompatible with existing attribute")
        self._id.modify(name, new_t, new_shape, raw)

    def rename(self, src, dst):
        """Rename an attribute."""
        self._id.rename(_name(src), _name(dst))

    def __repr__(self):
        return f"<Attributes of arca object ({len(self)} attributes)>"


def _name(name):
    if isinstance(name, bytes):
        return name.decode("utf-8")
    if not isinstance(name, str):
        raise TypeError(f"attribute names are str, not {type(name).__name__}")
    return name
