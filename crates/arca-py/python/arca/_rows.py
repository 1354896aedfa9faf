"""Compound dtypes with variable-length members: strings, byte strings and
ragged sequences inside structured arrays, as h5py reads and writes them.

In memory a member is a numpy object field, as in h5py: a string member is
8 bytes wide and a sequence 16 (HDF5's own in-memory sizes, which h5py's
dtypes follow, so the dtypes read back here equal h5py's). In the file each
such member is a 16-byte record pointing at the dataset's byte vector, so
the stored compound is laid out wider; :func:`stored_layout` and
:func:`memory_dtype` map one layout onto the other the way HDF5 does.

Elements cross to the core as one buffer: the elements in the stored layout,
each member's record giving the offset and length of its items in the
values that follow (see ``Dataset::write_rows`` in the Rust docs).
"""

import functools
import json

import numpy as np

from . import _native

# A member's record in the elements part of the buffer.
_RECORD = np.dtype([("offset", "<u8"), ("length", "<u8")])

# Bytes of a member in memory, by kind: h5py's object fields stand in HDF5's
# char* (strings) and hvl_t (sequences).
_MEM_STR = 8
_MEM_SEQ = 16


def _vlen_base(dt):
    """The base of a variable-length field dtype (str, bytes, a dtype, or a
    reference dtype), else None."""
    if dt.kind != "O":
        return None
    return (dt.metadata or {}).get("vlen")


def has_vlen(dt):
    """Whether a numpy dtype is a compound with variable-length members at
    any depth."""
    if dt is None or dt.fields is None:
        return False
    return any(
        _vlen_base(dt.fields[n][0]) is not None or has_vlen(dt.fields[n][0]) for n in dt.names
    )


def _mem_size(dt):
    """Bytes of a member in HDF5's memory layout (h5py's dtypes)."""
    base = _vlen_base(dt)
    if base is not None:
        return _MEM_STR if base in (str, bytes) else _MEM_SEQ
    if has_vlen(dt):
        return _mem_layout(dt)[1]
    return dt.itemsize


def _mem_layout(dt):
    """``([(name, offset, field dtype)], itemsize)`` of a compound with
    variable-length members in memory: each member at its numpy offset, or
    just after the one before when a wider member pushes it (h5py's rule)."""
    names = sorted(dt.names, key=lambda n: dt.fields[n][1])
    out, end = [], 0
    for n in names:
        ft, off = dt.fields[n][:2]
        at = max(off, end)
        out.append((n, at, ft))
        end = at + _mem_size(ft)
    return out, max(dt.itemsize, end)


def stored_layout(dt):
    """The type string of a compound with variable-length members as it is
    stored: HDF5's memory layout, each variable-length member widened to a
    16-byte record and the members after it moved along by the difference."""
    from ._dtypes import type_string

    members, size = _mem_layout(dt)
    parts, shift = [], 0
    for n, at, ft in members:
        if _vlen_base(ft) is not None:
            s, disk = type_string(ft), 16
        elif has_vlen(ft):
            s = stored_layout(ft)
            disk = _struct_size(s)
        else:
            s, disk = type_string(ft), ft.itemsize
        parts.append((dt.names.index(n), f"{json.dumps(n, ensure_ascii=False)}@{at + shift}:{s}"))
        shift += disk - _mem_size(ft)
    parts.sort()
    return f"struct({size + shift}){{{','.join(p for _, p in parts)}}}"


def _struct_size(s):
    return int(s[len("struct("): s.index(")")])


def info_has_vlen(info):
    """Whether a core type description is a compound with variable-length
    members at any depth."""
    return info[0] == "compound" and any(
        f[2][0] == "vlen" or info_has_vlen(f[2]) for f in info[2]
    )


def _info_mem_size(info):
    if info[0] == "vlen":
        return _MEM_STR if info[1] in ("str", "bytes") else _MEM_SEQ
    return memory_dtype(info).itemsize


def memory_dtype(info):
    """The numpy dtype of a stored compound with variable-length members:
    HDF5's memory layout, as h5py reads it (strings 8 bytes, sequences 16,
    members after a narrowed one moved back by the difference)."""
    from ._dtypes import _from_info

    size, fields = info[1], info[2]
    order = sorted(range(len(fields)), key=lambda i: fields[i][1])
    offsets = [0] * len(fields)
    shift = 0
    for i in order:
        _, off, fi = fields[i]
        offsets[i] = off + shift
        if fi[0] == "vlen":
            shift += _info_mem_size(fi) - 16
        elif info_has_vlen(fi):
            shift += _info_mem_size(fi) - fi[1]
    formats = [memory_dtype(f[2]) if info_has_vlen(f[2]) else _from_info(f[2]) for f in fields]
    # In offset order, as HDF5 sorts the members of such a type (and h5py
    # reports them).
    return np.dtype(
        {
            "names": [fields[i][0] for i in order],
            "formats": [formats[i] for i in order],
            "offsets": [offsets[i] for i in order],
            "itemsize": size + shift,
        }
    )


class _Plan:
    """How one stored type crosses: the elements part as a numpy dtype in
    the stored layout (records as ``_RECORD``), the member paths copied as
    they are, and the variable-length members with their kinds."""

    def __init__(self, type_string):
        from ._dtypes import _type_info

        info = _type_info(type_string)
        self.size = info[1]
        self.stored = self._stored(info)
        self.copied = []
        self.slots = []
        self._walk(info, ())

    def _stored(self, info):
        from ._dtypes import _from_info, native, raw_dtype

        fields = info[2]
        formats = []
        for _, _, fi in fields:
            if fi[0] == "vlen":
                formats.append(_RECORD)
            elif info_has_vlen(fi):
                formats.append(self._stored(fi))
            else:
                # References cross as their ids.
                formats.append(raw_dtype(native(_from_info(fi))))
        return np.dtype(
            {
                "names": [f[0] for f in fields],
                "formats": formats,
                "offsets": [f[1] for f in fields],
                "itemsize": info[1],
            }
        )

    def _walk(self, info, path):
        from ._dtypes import _from_info, native

        for name, _, fi in info[2]:
            p = path + (name,)
            if fi[0] == "vlen":
                base = _from_info(fi).metadata["vlen"]
                if base not in (str, bytes):
                    base = native(np.dtype(base)) if base.kind != "O" else base
                self.slots.append((p, base))
            elif info_has_vlen(fi):
                self._walk(fi, p)
            else:
                self.copied.append((p, _from_info(fi)))


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
        from ._dtypes import objects_to_refs

        refs = np.asarray(x if x is not None else [], dtype=base).reshape(-1)
        return np.ascontiguousarray(objects_to_refs(refs, base)).tobytes()
    if x is None:
        return b""
    return np.ascontiguousarray(np.asarray(x, dtype=base).reshape(-1)).tobytes()


def encode(arr, type_string):
    """A structured array (memory dtype) as the rows buffer the core takes,
    a uint8 array."""
    from ._dtypes import has_refs, objects_to_refs

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
    from ._dtypes import has_refs, refs_to_objects

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
