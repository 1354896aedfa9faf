"""Rows: elements of compound dtypes with variable-length members
(strings, byte strings and ragged sequences inside structured arrays, as
h5py reads and writes them) to and from the buffer they cross to the core
in, for datasets and attributes alike; and variable-length sequences of
such compounds, at the top or as members, whose items hold records
themselves.

The buffer holds the elements in the stored layout (see
``_dtypes.stored_layout``), each variable-length member's record giving the
offset and length of its items in the values that follow (see
``Dataset::write_rows`` in the Rust docs); an item of a compound with
variable-length members holds records into the same values. In memory the
members are numpy object fields, laid out as ``_dtypes.memory_dtype`` says;
a sequence is a 1-D array of its base (structured, with object fields,
for such compounds).
"""

import functools

import numpy as np

from . import _native
from ._dtypes import (
    from_info,
    has_refs,
    info_has_vlen_members,
    layout_dtype,
    memory_dtype,
    native,
    objects_to_refs,
    refs_to_objects,
    type_info,
)

# A member's record in the elements part of the buffer.
_RECORD = np.dtype([("offset", "<u8"), ("length", "<u8")])


def _nests(vinfo):
    """Whether a variable-length description's items hold records: a
    sequence of compounds with variable-length members."""
    return isinstance(vinfo[1], tuple) and info_has_vlen_members(vinfo[1])


def takes_rows(type_string):
    """Whether elements of this stored type cross as rows: compounds with
    variable-length members, and sequences of such compounds."""
    info = type_info(type_string)
    return info_has_vlen_members(info) or (info[0] == "vlen" and _nests(info))


class _Plan:
    """How one stored type crosses: the elements part as a numpy dtype in
    the stored layout (records as ``_RECORD``), the member paths copied as
    they are, and the variable-length members with their descriptions. A
    variable-length type is one slot, the whole element."""

    def __init__(self, info):
        self.info = info
        if info[0] == "vlen":
            self.size = 16
            self.stored = _RECORD
            self.mdt = np.dtype("O")
            self.copied = []
            self.slots = [((),) + _slot(info)]
            return
        self.size = info[1]
        self.stored = self._stored(info)
        self.mdt = memory_dtype(info)
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
                self.slots.append((p,) + _slot(fi))
            elif info_has_vlen_members(fi):
                self._walk(fi, p)
            else:
                self.copied.append((p, from_info(fi)))


def _slot(vinfo):
    """How a variable-length slot's values cross: ``(plan, None)`` for
    items that hold records (compounds with variable-length members),
    else ``(None, base)``, the in-memory items: ``str`` or ``bytes`` for
    strings, a numpy dtype (native order) otherwise."""
    if _nests(vinfo):
        return _Plan(vinfo[1]), None
    base = from_info(vinfo).metadata["vlen"]
    if base in (str, bytes) or base.kind == "O":
        return None, base
    return None, native(np.dtype(base))


@functools.lru_cache(maxsize=256)
def plan(type_string):
    """The crossing plan of a stored type string (types are few)."""
    return _Plan(type_info(type_string))


def _field(arr, path):
    for p in path:
        arr = arr[p]
    return arr


class _Writer:
    """The values area of a rows buffer being built."""

    def __init__(self):
        self.pieces = []
        self.pos = 0

    def put(self, b):
        at = self.pos
        self.pieces.append(b)
        self.pos += len(b)
        return at

    def value(self, x, inner, base):
        """One variable-length value appended: its ``(offset, length)``."""
        if inner is not None:
            items = np.asarray(x if x is not None else [], dtype=inner.mdt).reshape(-1)
            b = self.elements(items, inner).tobytes()
            return self.put(b), len(b)
        b = _item_bytes(x, base)
        return self.put(b), len(b)

    def elements(self, flat, p):
        """``flat`` (memory dtype of plan ``p``) as stored elements, their
        values appended here first."""
        n = flat.shape[0]
        out = np.zeros(n, dtype=p.stored)
        for path, dt in p.copied:
            v = _field(flat, path)
            _field(out, path)[...] = objects_to_refs(v, dt) if has_refs(dt) else v
        for path, inner, base in p.slots:
            col = _field(flat, path)
            offs = np.empty(n, dtype="<u8")
            lens = np.empty(n, dtype="<u8")
            for i, x in enumerate(col):
                offs[i], lens[i] = self.value(x, inner, base)
            rec = _field(out, path)
            rec["offset"] = offs
            rec["length"] = lens
        return out


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
    """A structured array (memory dtype) — or, for a variable-length type,
    an object array of its values — as the rows buffer the core takes, a
    uint8 array."""
    p = plan(type_string)
    flat = arr.reshape(-1)
    w = _Writer()
    out = w.elements(flat, p)
    buf = np.empty(out.nbytes + w.pos, dtype=np.uint8)
    buf[: out.nbytes] = out.view(np.uint8).reshape(-1)
    buf[out.nbytes:] = np.frombuffer(b"".join(w.pieces), dtype=np.uint8)
    return buf


class _Reader:
    """The values area of a rows buffer being read."""

    def __init__(self, values):
        self.values = values

    def value(self, o, l, inner, base):
        """The variable-length value at ``o`` of ``l`` bytes."""
        values = self.values
        if inner is not None:
            n = l // inner.size
            raw = np.frombuffer(values, dtype=np.uint8, count=l, offset=o)
            return self.elements(raw, n, inner, inner.mdt)
        if base is str or base is bytes:
            return values[o: o + l]
        if base.kind == "O":
            ids = np.frombuffer(values, dtype="=u8", count=l // 8, offset=o)
            return refs_to_objects(ids, base)
        return np.frombuffer(values, dtype=base, count=l // base.itemsize, offset=o).copy()

    def elements(self, raw, n, p, mdt):
        """``n`` stored elements of plan ``p`` (bytes ``raw``) in memory
        dtype ``mdt``, flat."""
        elems = raw[: n * p.size].view(p.stored) if n else np.zeros(0, p.stored)
        out = np.zeros(n, dtype=mdt)
        for path, dt in p.copied:
            v = _field(elems, path)
            _field(out, path)[...] = refs_to_objects(v, dt) if has_refs(dt) else v
        for path, inner, base in p.slots:
            rec = _field(elems, path)
            col = np.empty(n, dtype=object)
            offs, lens = rec["offset"].tolist(), rec["length"].tolist()
            for i in range(n):
                col[i] = self.value(offs[i], lens[i], inner, base)
            _field(out, path)[...] = col
        return out


def decode(buf, n, type_string, mdt):
    """The structured array (memory dtype ``mdt``, flat) of a rows buffer of
    ``n`` elements. Strings come back as ``bytes``, as h5py gives them inside
    compounds; sequences as arrays."""
    p = plan(type_string)
    buf = np.asarray(buf, dtype=np.uint8)
    head = n * p.size
    return _Reader(buf[head:].tobytes()).elements(buf[:head], n, p, mdt)


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
