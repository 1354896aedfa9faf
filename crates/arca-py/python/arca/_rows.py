"""Rows: elements of compound dtypes with variable-length members
(strings, byte strings and ragged sequences inside structured arrays, as
h5py reads and writes them) to and from the buffer they cross to the core
in, for datasets and attributes alike.

The buffer holds the elements in the stored layout (see
``_dtypes.stored_layout``), each variable-length member's record giving the
offset and length of its items in the values that follow (see
``Dataset::write_rows`` in the Rust docs). In memory the members are numpy
object fields, laid out as ``_dtypes.memory_dtype`` says.
"""

import functools

import numpy as np

from . import _native
from ._dtypes import (
    from_info,
    has_refs,
    info_has_vlen_members,
    layout_dtype,
    native,
    objects_to_refs,
    refs_to_objects,
    type_info,
)

# A member's record in the elements part of the buffer.
_RECORD = np.dtype([("offset", "<u8"), ("length", "<u8")])


class _Plan:
    """How one stored type crosses: the elements part as a numpy dtype in
    the stored layout (records as ``_RECORD``), the member paths copied as
    they are, and the variable-length members with their kinds."""

    def __init__(self, type_string):
        info = type_info(type_string)
        self.size = info[1]
        self.stored = self._stored(info)
        self.copied = []
        self.slots = []
        self._walk(info, ())

    def _stored(self, info):
        fields = info[2]
        formats = []
        for _, _, fi in fields:
            if fi[0] == "vlen":
                formats.append(_RECORD)
            elif info_has_vlen_members(fi):
                formats.append(self._stored(fi))
            else:
                # References cross as their ids.
                formats.append(layout_dtype(native(from_info(fi))))
        return np.dtype(
            {
                "names": [f[0] for f in fields],
                "formats": formats,
                "offsets": [f[1] for f in fields],
                "itemsize": info[1],
            }
        )

    def _walk(self, info, path):
        for name, _, fi in info[2]:
            p = path + (name,)
            if fi[0] == "vlen":
                base = from_info(fi).metadata["vlen"]
                if base not in (str, bytes):
                    base = native(np.dtype(base)) if base.kind != "O" else base
                self.slots.append((p, base))
            elif info_has_vlen_members(fi):
                self._walk(fi, p)
            else:
                self.copied.append((p, from_info(fi)))


@functools.lru_cache(maxsize=256)
def plan(type_string):
    """The crossing plan of a stored type string (types are few)."""
    return _Plan(type_string)


def _field(arr, path):
    for p in path:
        arr = arr[p]
    return arr


def _item_bytes(x, base):
    """One member value as the bytes of its items (native order)."""
    if base is str or base is bytes:
        if isinstance(x, (str, np.str_)):
            return str(x).encode("utf-8")
        if isinstance(x, (bytes, np.bytes_)):
            return bytes(x)
        if x is None:
            return b""
        raise TypeError(f"cannot store {type(x).__name__} in a string member; use str or bytes")
    if base.kind == "O":
        refs = np.asarray(x if x is not None else [], dtype=base).reshape(-1)
        return np.ascontiguousarray(objects_to_refs(refs, base)).tobytes()
    if x is None:
        return b""
    return np.ascontiguousarray(np.asarray(x, dtype=base).reshape(-1)).tobytes()


def encode(arr, type_string):
    """A structured array (memory dtype) as the rows buffer the core takes,
    a uint8 array."""
    p = plan(type_string)
    flat = arr.reshape(-1)
    n = flat.shape[0]
    out = np.zeros(n, dtype=p.stored)
    for path, dt in p.copied:
        v = _field(flat, path)
        _field(out, path)[...] = objects_to_refs(v, dt) if has_refs(dt) else v
    pieces, pos = [], 0
    for path, base in p.slots:
        col = _field(flat, path)
        offs = np.empty(n, dtype="<u8")
        lens = np.empty(n, dtype="<u8")
        for i, x in enumerate(col):
            b = _item_bytes(x, base)
            offs[i], lens[i] = pos, len(b)
            pieces.append(b)
            pos += len(b)
        rec = _field(out, path)
        rec["offset"] = offs
        rec["length"] = lens
    buf = np.empty(n * p.size + pos, dtype=np.uint8)
    buf[: n * p.size] = out.view(np.uint8).reshape(-1)
    buf[n * p.size:] = np.frombuffer(b"".join(pieces), dtype=np.uint8)
    return buf


def decode(buf, n, type_string, mdt):
    """The structured array (memory dtype ``mdt``, flat) of a rows buffer of
    ``n`` elements. Strings come back as ``bytes``, as h5py gives them inside
    compounds; sequences as arrays."""
    p = plan(type_string)
    buf = np.asarray(buf, dtype=np.uint8)
    head = n * p.size
    elems = buf[:head].view(p.stored)
    values = buf[head:].tobytes()
    out = np.zeros(n, dtype=mdt)
    for path, dt in p.copied:
        v = _field(elems, path)
        _field(out, path)[...] = refs_to_objects(v, dt) if has_refs(dt) else v
    for path, base in p.slots:
        rec = _field(elems, path)
        col = np.empty(n, dtype=object)
        offs, lens = rec["offset"].tolist(), rec["length"].tolist()
        if base is str or base is bytes:
            for i in range(n):
                col[i] = values[offs[i]: offs[i] + lens[i]]
        elif base.kind == "O":
            for i in range(n):
                ids = np.frombuffer(values, dtype="=u8", count=lens[i] // 8, offset=offs[i])
                col[i] = refs_to_objects(ids, base)
        else:
            for i in range(n):
                col[i] = np.frombuffer(
                    values, dtype=base, count=lens[i] // base.itemsize, offset=offs[i]
                ).copy()
        _field(out, path)[...] = col
    return out


def read(dsid, start, count, step, type_string, mdt):
    """A hyperslab of a dataset of such a type, as an array of shape ``count``."""
    n = 1
    for c in count:
        n *= c
    if n == 0:
        return np.zeros(count, dtype=mdt)
    buf = _native.rows_read(dsid, list(start), list(count), list(step))
    return decode(buf, n, type_string, mdt).reshape(count)


def write(dsid, start, count, step, arr, type_string):
    """Write ``arr`` (memory dtype, ``count`` elements) to a hyperslab."""
    if arr.size:
        _native.rows_write(dsid, list(start), list(count), list(step), encode(arr, type_string))
