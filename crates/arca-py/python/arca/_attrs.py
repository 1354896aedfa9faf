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
    check_ref_dtype,
    from_type_string,
    has_refs,
    has_vlen_members,
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
from ._errors import ReadOnlyError, ReadOnlyKeyError
from ._regionref import encode_items
from ._util import prod


# Python's number types, whose values numpy stores as they are.
_NUMBERS = (int, float, bool, complex)


def _encode(value, dtype=None):
    """``(type string, shape, native-order bytes)`` for an attribute value.

    As h5py: a ``str`` is stored as a variable-length UTF-8 string and a
    ``bytes`` as a variable-length ASCII one (``np.bytes_`` as fixed
    length); a list or tuple of them as an array of such strings; a numpy
    array of ``U`` strings (or an ``np.str_``) has no stored form
    (TypeError)."""
    if dtype is None:
        if type(value) in _NUMBERS or isinstance(value, (np.number, np.bool_)):
            # The common case first: one number, stored as numpy holds it.
            arr = np.asarray(value)
            if arr.dtype.kind in "biufc":
                return type_string(arr.dtype), [], arr.tobytes()
        if type(value) is str or type(value) is bytes:
            # One variable-length string: its u64 length, then its bytes.
            b = value.encode("utf-8", "surrogateescape") if type(value) is str else value
            if b"\0" in b:
                raise ValueError("VLEN strings do not support embedded NULLs")
            t = "vlen:str" if type(value) is str else "vlen:bytes"
            return t, [], len(b).to_bytes(8, "little") + b
        if isinstance(value, (np.str_, np.ndarray)) and np.asarray(value).dtype.kind == "U":
            raise TypeError(f"No conversion path for dtype: {np.asarray(value).dtype!r}")
        if isinstance(value, (list, tuple)) and value:
            arr = np.asarray(value)
            if arr.dtype.kind in "US":
                want = str if arr.dtype.kind == "U" else bytes
                items = np.asarray(value, dtype=object)
                if not all(type(x) is want for x in items.flat):
                    raise TypeError(f"No conversion path for dtype: {arr.dtype!r}")
                return _encode_vlen(items, want)
    if isinstance(value, np.void) and value.dtype.names:
        # A compound scalar: numpy converts it whole only inside an array.
        value = np.array([value], dtype=value.dtype).reshape(())
    if dtype is None and isinstance(value, RegionReference):
        dtype = regionref_dtype
    rows = rows_dtype(dtype, value)
    if rows is not None:
        arr = np.asarray(value, dtype=rows)
        t = type_string(rows)
        return t, [int(s) for s in arr.shape], _rows.encode(arr.reshape(-1), t).tobytes()
    if _is_vlen(value, dtype):
        return _encode_vlen(value, dtype)
    if isinstance(value, np.bytes_) and dtype is None:
        b = bytes(value)
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
    arr = _as_array(value, want)
    dt = check_dtype(arr.dtype if want is None else want)
    data = np.ascontiguousarray(repad(arr, dt), dtype=native(dt))
    return type_string(dt), [int(s) for s in arr.shape], data.tobytes()


def _as_array(value, want):
    """``value`` as an array of ``want`` (None: as given). Numbers go
    straight to the type asked for, with no detour through float64 that
    would round integers past 2**53."""
    if want is not None and want.kind in "biufc" and want.fields is None \
            and not isinstance(value, (str, bytes)):
        return np.asarray(value, dtype=want)
    return as_array(value, want)


def _decode(dtype, shape, data):
    if shape is None:
        return Empty(from_type_string(dtype))
    if dtype.startswith("vlen:") and not _rows.takes_rows(dtype):
        if not shape and (dtype == "vlen:str" or dtype == "vlen:bytes"):
            # One string (the common case): read as str, as h5py reads
            # attributes' strings whatever their character set.
            n = int.from_bytes(data[:8], "little")
            return data[8:8 + n].decode("utf-8", "surrogateescape")
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
        arr = np.frombuffer(data, dtype=base).reshape(tuple(shape) + sub)
        # Numbers come back in the byte order they are stored in, as h5py's.
        return arr.astype(dt.subdtype[0]) if dt.subdtype[0] != base else arr.copy()
    arr = unpad(np.frombuffer(data, dtype=mdt).reshape(shape), mdt)
    if dt != mdt:
        arr = arr.astype(dt)
    if shape:
        return arr.copy()
    # A fixed-length string scalar reads back as np.bytes_, as in h5py.
    return arr[()]


class AttributeManager(MutableMapping):
    """The attributes of a group or dataset, as a dict-like mapping.

    Values may be Python or numpy scalars, numpy arrays (any supported dtype
    and byte order), ``str`` or ``bytes``, stored as h5py stores them: a
    ``str`` as a variable-length UTF-8 string, a ``bytes`` as a
    variable-length ASCII one (no NUL inside either; both read back as
    ``str``), a list or tuple of them as an array of such strings, an
    ``np.bytes_`` or an ``S`` array as fixed-length strings (read back as
    ``np.bytes_`` and ``S`` arrays); a numpy ``U`` array is refused
    (TypeError)::

        ds.attrs["units"] = "m/s"
        ds.attrs["calib"] = np.array([1.0, 0.5])
        dict(ds.attrs)   # {'calib': array([1. , 0.5]), 'units': 'm/s'}

    Scalars read back as numpy scalars, arrays as numpy arrays, numbers in
    the byte order they were stored in.
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

    def get_id(self, name):
        """What h5py's ``attrs.get_id(name)`` gives code that reads it: an
        :class:`AttrID` with the attribute's stored ``dtype`` (strings with
        their length and character set, as ``arca.check_string_dtype``
        reads them), ``shape`` (None for an empty one) and ``name``.
        KeyError if there is no such attribute::

            f.attrs["units"] = "m/s"
            aid = f.attrs.get_id("units")
            arca.check_string_dtype(aid.dtype)    # string_info('utf-8', None)
        """
        return AttrID(self._id, _name(name))

    def __delitem__(self, name):
        try:
            self._id.delete(_name(name))
        except ReadOnlyError as e:
            # h5py: a deletion that fails is a KeyError, whatever the cause.
            raise ReadOnlyKeyError(f"Unable to delete attribute (no write intent on file): "
                                   f"{name!r}") from e

    def __contains__(self, name):
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
            arr = _as_array(data, want)
            if shape is not None:
                arr = arr.reshape(shape)
            data = arr
        self._id.set(_name(name), *_encode(data, want))

    def modify(self, name, value):
        """Change an attribute's value where it stands (it keeps its place
        in creation order and its type: a fixed-length string is cut to its
        length, as in h5py), or create it. As h5py, a value of another
        shape than the attribute's is a TypeError."""
        name = _name(name)
        if isinstance(value, Empty) or name not in self:
            self[name] = value
            return
        t, shape, _ = self._id.get(name)
        if shape is None:
            self[name] = value
            return
        new_t, new_shape, buf = _encode(value, from_type_string(t))
        if list(new_shape) != list(shape):
            raise TypeError("Shape of data is incompatible with existing attribute")
        self._id.modify(name, new_t, new_shape, buf)

    def rename(self, src, dst):
        """Rename an attribute."""
        self._id.rename(_name(src), _name(dst))

    def __repr__(self):
        return f"<Attributes of arca object ({len(self)} attributes)>"


class AttrID:
    """One attribute as h5py's low-level ``AttrID`` describes it to code
    that asks ``attrs.get_id(name)`` (anndata, h5netcdf): ``name`` (bytes,
    as h5py gives it), ``dtype`` and ``shape`` (None for an empty
    attribute). Read the value itself through ``attrs[name]``::

        f.attrs["n"] = np.arange(3)
        aid = f.attrs.get_id("n")
        aid.dtype, aid.shape               # dtype('int64'), (3,)
    """

    def __init__(self, aid, name):
        t, shape, data = aid.get(name)
        self.name = name.encode("utf-8")
        self.dtype = from_type_string(t)
        self.shape = None if shape is None else tuple(int(s) for s in shape)
        self._nbytes = len(data)

    def get_storage_size(self):
        """Bytes the value takes as stored."""
        return self._nbytes

    def __repr__(self):
        return f"<arca AttrID {self.name!r}: {self.dtype}, shape {self.shape}>"


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
        base = _refs_base(arr) or (infer_vlen_base(arr) if arr.size else str)
    if shape is not None:
        arr = arr.reshape(shape)
    flat = arr.reshape(-1)
    if base is RegionReference:
        chunks = encode_items(flat.tolist())
        data = b"".join(chunks)
        lens = np.fromiter((len(c) for c in chunks), dtype="<u8", count=len(chunks))
    elif base in (str, bytes):
        chunks = [
            (x.encode("utf-8", "surrogateescape") if isinstance(x, str) else bytes(x))
            for x in flat.tolist()
        ]
        data = b"".join(chunks)
        if b"\0" in data:
            raise ValueError("VLEN strings do not support embedded NULLs")
        lens = np.fromiter((len(c) for c in chunks), dtype="<u8", count=len(chunks))
    elif isinstance(base, np.dtype) and base.kind == "O":
        # Sequences of references: each item the referenced object's id.
        rows = [objects_to_refs(np.asarray(x, dtype=base).reshape(-1), base) for x in flat]
        data = b"".join(np.ascontiguousarray(r, dtype="=u8").tobytes() for r in rows)
        lens = np.fromiter((r.nbytes for r in rows), dtype="<u8", count=len(rows))
    elif has_vlen_members(vlen_item_dtype(base)):
        # Sequences of compounds with variable-length members: their items
        # hold records, so the value crosses as rows.
        t = vlen_type_string(base)
        return t, [int(s) for s in arr.shape], _rows.encode(flat, t).tobytes()
    else:
        base = vlen_item_dtype(base)
        rows = [np.asarray(x, dtype=base).reshape(-1) for x in flat]
        data = b"".join(np.ascontiguousarray(r, dtype=base.newbyteorder("=")).tobytes() for r in rows)
        lens = np.fromiter((r.nbytes for r in rows), dtype="<u8", count=len(rows))
    return vlen_type_string(base), [int(s) for s in arr.shape], lens.tobytes() + data


def _refs_base(arr):
    """:data:`ref_dtype` when the items of ``arr`` are sequences of
    references (as ``DIMENSION_LIST`` reads back), else None."""
    for x in arr.reshape(-1):
        if x is None:
            continue
        if isinstance(x, np.ndarray) and check_ref_dtype(x.dtype) is not None:
            return ref_dtype
        items = np.asarray(x, dtype=object).reshape(-1)
        if items.size:
            return ref_dtype if isinstance(items[0], Reference) else None
    return None


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
    elif base is str:
        out[:] = _native.vlen_unpack(np.ascontiguousarray(values), offsets, True)
    elif base is bytes:
        # h5py reads variable-length strings of attributes as str, whatever
        # their character set (bytes that are not UTF-8 kept as surrogates).
        raw = _native.vlen_unpack(np.ascontiguousarray(values), offsets, False)
        out[:] = [b.decode("utf-8", "surrogateescape") for b in raw]
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
        raise TypeError(f"A name should be string or bytes, not {type(name)}")
    return name
