"""HDF5 types to arca's (numpy dtypes) and back, and values whose
references are rewritten from one file's objects to the other's."""

import numpy as np

from .. import _native
from .._dtypes import (
    RegionReference,
    bitfield_dtype,
    check_ref_dtype,
    has_vlen_members,
    memory_layout,
    ref_dtype,
    regionref_dtype,
    time_dtype,
    vlen_dtype,
)


def _h5_string_meta(h5py, tid):
    """The metadata arca keeps for a fixed-length HDF5 string type."""
    meta = {"h5py_encoding": "utf-8" if tid.get_cset() == h5py.h5t.CSET_UTF8 else "ascii"}
    pad = tid.get_strpad()
    if pad == h5py.h5t.STR_NULLTERM:
        meta["arca_strpad"] = "nullterm"
    elif pad == h5py.h5t.STR_SPACEPAD:
        meta["arca_strpad"] = "spacepad"
    return meta


class Unmappable(Exception):
    pass


def _standard(h5py, tid, names):
    """The (size, order) of the first of HDF5's predefined types named
    ``names`` (``STD_B8LE`` ...) that ``tid`` equals, else None."""
    for name in names:
        std = getattr(h5py.h5t, name)
        if tid.equal(std):
            return std.get_size(), ">" if name.endswith("BE") else "<"
    return None


_BITFIELDS = [f"STD_B{n}{o}" for n in (8, 16, 32, 64) for o in ("LE", "BE")]
_TIMES = [f"UNIX_D{n}{o}" for n in (32, 64) for o in ("LE", "BE")]


def bits_dtype(h5py, tid):
    """arca's dtype for an HDF5 bitfield or time type, None for other
    classes; Unmappable for one of a precision or bit offset of its own
    (arca keeps whole bytes)."""
    cls = tid.get_class()
    if cls == h5py.h5t.BITFIELD:
        found = _standard(h5py, tid, _BITFIELDS)
        if found is not None:
            return bitfield_dtype(*found)
        raise Unmappable("a bitfield with a precision or bit offset of its own")
    if cls == h5py.h5t.TIME:
        found = _standard(h5py, tid, _TIMES)
        if found is not None:
            return time_dtype(*found)
        raise Unmappable("a time type other than HDF5's UNIX_D32/D64")
    return None


def file_dtype(h5py, obj):
    """The numpy dtype of a dataset's or attribute's values in the file's
    layout: h5py's, or for a time type (which h5py cannot name) arca's
    unsigned integers of its size and order."""
    tid = obj.get_type() if hasattr(obj, "get_type") else obj.id.get_type()
    if tid.get_class() == h5py.h5t.TIME:
        return bits_dtype(h5py, tid)
    return obj.dtype


def from_h5(h5py, tid, dt):
    """The arca (numpy) dtype for an HDF5 type ``tid`` that h5py reads as
    ``dt``: strings keep their character set and padding, references
    become arca's, bitfields and times arca's of their size and order."""
    bits = bits_dtype(h5py, tid)
    if bits is not None:
        return bits
    cls = tid.get_class()
    if cls == h5py.h5t.STRING and not tid.is_variable_str():
        return np.dtype(f"S{tid.get_size()}", metadata=_h5_string_meta(h5py, tid))
    if cls == h5py.h5t.REFERENCE:
        if dt.metadata and dt.metadata.get("ref") is h5py.RegionReference:
            return regionref_dtype
        return ref_dtype
    if cls == h5py.h5t.VLEN:
        base = h5py.check_vlen_dtype(dt)
        sup = tid.get_super()
        if sup.get_class() == h5py.h5t.REFERENCE:
            if check_ref_dtype(base) is h5py.RegionReference:
                raise Unmappable("sequences of region references have no arca equivalent")
            return vlen_dtype(ref_dtype)
        if sup.get_class() in (h5py.h5t.INTEGER, h5py.h5t.FLOAT):
            return vlen_dtype(base)
        # Enums, compounds (their members variable-length too), strings,
        # arrays, opaque: the base mapped as any type is.
        item = from_h5(h5py, sup, np.dtype(base))
        try:
            return vlen_dtype(item)
        except TypeError as e:
            raise Unmappable(f"variable-length sequences of {item} have no arca "
                             f"equivalent") from e
    if cls == h5py.h5t.STRING:
        return vlen_dtype(h5py.check_vlen_dtype(dt) or str)
    if cls == h5py.h5t.COMPOUND and dt.names is not None:
        names, formats, offsets = [], [], []
        for i in range(tid.get_nmembers()):
            n = tid.get_member_name(i).decode()
            mt = tid.get_member_type(i)
            names.append(n)
            member = from_h5(h5py, mt, dt.fields[n][0])
            if check_ref_dtype(member) is RegionReference:
                raise Unmappable("region references inside compounds have no arca equivalent")
            formats.append(member)
            offsets.append(dt.fields[n][1])
        return np.dtype({"names": names, "formats": formats, "offsets": offsets,
                         "itemsize": dt.itemsize})
    if cls == h5py.h5t.ARRAY and dt.subdtype is not None:
        base, shape = dt.subdtype
        return np.dtype((from_h5(h5py, tid.get_super(), base), shape))
    if dt.kind == "O":
        raise Unmappable(f"type {dt} has no arca equivalent")
    return dt


def to_h5(h5py, dt):
    """An HDF5 type id for an arca (numpy) dtype: h5py's own, with string
    character sets and padding set as arca holds them."""
    meta = dt.metadata or {}
    for key, prefix in (("arca_bitfield", "STD_B"), ("arca_time", "UNIX_D")):
        if meta.get(key):
            order = "BE" if dt.byteorder == ">" or meta[key] == ">" else "LE"
            return getattr(h5py.h5t, f"{prefix}{8 * dt.itemsize}{order}").copy()
    if dt.kind == "S":
        tid = h5py.h5t.C_S1.copy()
        tid.set_size(dt.itemsize)
        pad = meta.get("arca_strpad", "nullpad")
        tid.set_strpad({"nullpad": h5py.h5t.STR_NULLPAD, "nullterm": h5py.h5t.STR_NULLTERM,
                        "spacepad": h5py.h5t.STR_SPACEPAD}[pad])
        if meta.get("h5py_encoding") == "utf-8":
            tid.set_cset(h5py.h5t.CSET_UTF8)
        return tid
    if check_ref_dtype(dt) in (RegionReference, h5py.RegionReference):
        return h5py.h5t.py_create(h5py.regionref_dtype, logical=True)
    if check_ref_dtype(dt) is not None:
        return h5py.h5t.py_create(h5py.ref_dtype, logical=True)
    if meta.get("vlen") is not None:
        base = meta["vlen"]
        if base is str or base is bytes:
            return h5py.h5t.py_create(h5py.string_dtype("utf-8" if base is str else "ascii"),
                                      logical=True)
        if check_ref_dtype(base) is not None:
            return h5py.h5t.py_create(h5py.vlen_dtype(h5py.ref_dtype), logical=True)
        base = np.dtype(base)
        if needs_own_type(base) or base.metadata or base.names is not None:
            # A sequence of enums, compounds, strings ...: the base's own type.
            return h5py.h5t.vlen_create(to_h5(h5py, base))
        return h5py.h5t.py_create(h5py.vlen_dtype(base), logical=True)
    if dt.names is not None and needs_own_type(dt):
        if has_vlen_members(dt):
            # HDF5 lays such a compound out itself; its members' own types.
            members, size = memory_layout(dt)
            tid = h5py.h5t.create(h5py.h5t.COMPOUND, size)
            for n, at, ft in members:
                tid.insert(n.encode(), at, to_h5(h5py, ft))
            return tid
        tid = h5py.h5t.create(h5py.h5t.COMPOUND, dt.itemsize)
        for n in dt.names:
            ft, off = dt.fields[n][:2]
            tid.insert(n.encode(), off, to_h5(h5py, ft))
        return tid
    if dt.subdtype is not None and needs_own_type(dt.subdtype[0]):
        base, shape = dt.subdtype
        return h5py.h5t.array_create(to_h5(h5py, base), shape)
    return h5py.h5t.py_create(dt, logical=True)


def needs_file_type(dt):
    """Whether a fixed-size dtype holds what HDF5 would convert on the way
    to or from h5py's dtype anywhere: fixed-length strings (re-padded),
    bitfields and times (which have no conversion from integers). Such
    values move with the file's own type as the memory type."""
    meta = dt.metadata or {}
    if dt.kind == "S" or meta.get("arca_bitfield") or meta.get("arca_time"):
        return True
    if dt.names is not None:
        return any(needs_file_type(dt.fields[n][0]) for n in dt.names)
    if dt.subdtype is not None:
        return needs_file_type(dt.subdtype[0])
    return False


def needs_own_type(dt):
    """Whether h5py's own mapping of ``dt`` would lose something arca keeps
    (a string's padding or character set, references, vlen members)."""
    meta = dt.metadata or {}
    if dt.kind == "S" or meta.get("arca_bitfield") or meta.get("arca_time"):
        return True
    if meta.get("vlen") is not None or check_ref_dtype(dt) is not None:
        return True
    if dt.names is not None:
        return any(needs_own_type(dt.fields[n][0]) for n in dt.names)
    if dt.subdtype is not None:
        return needs_own_type(dt.subdtype[0])
    return False


def _swapped_base(dt):
    """The base of a variable-length numeric dtype whose items are not in
    native byte order, else None."""
    base = (dt.metadata or {}).get("vlen")
    if isinstance(base, np.dtype) and base.fields is None and base.kind in "iuf" \
            and not base.isnative:
        return base
    return None


def vlen_items_as_read(value, dt):
    """Sequences h5py read of ``dt`` with their true values: h5py (3.16)
    hands items of a non-native base over in the file's byte order but
    labelled native, so they are relabelled here. (Its writes convert.)"""
    base = _swapped_base(dt)
    if base is None or value is None:
        return value
    arr = np.asarray(value, dtype=object)
    out = np.empty(arr.shape, dtype=object)
    for i, x in enumerate(arr.reshape(-1)):
        out.reshape(-1)[i] = np.asarray(x).view(base).astype(base.newbyteorder("="))
    return out if arr.shape else out[()]


def needs_values(dt):
    """Whether values must be copied one by one (variable-length members)."""
    return has_vlen_members(dt)


def h5_dtype(h5py, dt):
    meta = dt.metadata or {}
    base = meta.get("vlen")
    if base is str:
        return h5py.string_dtype("utf-8")
    if base is bytes:
        return h5py.string_dtype("ascii")
    if base is not None:
        return h5py.vlen_dtype(base)
    return dt


# -- references ------------------------------------------------------------------
def is_region_dtype(dt):
    """Whether ``dt`` is arca's or h5py's region reference dtype."""
    return check_ref_dtype(dt) is RegionReference or (
        (dt.metadata or {}).get("ref") is not None
        and getattr((dt.metadata or {}).get("ref"), "__name__", "") == "RegionReference")


def region_from_h5(h5py, sid):
    """The selection tuple (see ``arca._regionref``) of an HDF5 dataspace
    with its selection."""
    dims = [int(d) for d in (sid.shape or ())]
    t = sid.get_select_type()
    if t == h5py.h5s.SEL_NONE:
        return dims, "none", None
    if t == h5py.h5s.SEL_ALL or not dims:
        return dims, "all", None
    if t == h5py.h5s.SEL_POINTS:
        return dims, "points", np.asarray(sid.get_select_elem_pointlist()).tolist()
    if sid.is_regular_hyperslab():
        start, stride, count, block = sid.get_regular_hyperslab()
        return dims, "hyperslab", [(int(a), int(s), int(c), int(b))
                                   for a, s, c, b in zip(start, stride, count, block)]
    blocks = np.asarray(sid.get_select_hyper_blocklist()).reshape(-1, 2, len(dims))
    return dims, "blocks", [([int(x) for x in lo], [int(h - l + 1) for l, h in zip(lo, hi)])
                            for lo, hi in blocks]


def region_to_h5(h5py, selection):
    """An HDF5 dataspace selecting what an arca selection tuple selects."""
    dims, kind, data = selection
    if not dims:
        sid = h5py.h5s.create(h5py.h5s.SCALAR)
    else:
        sid = h5py.h5s.create_simple(tuple(dims))
    if kind == "none":
        sid.select_none()
    elif kind == "all":
        sid.select_all()
    elif kind == "points":
        sid.select_elements(np.asarray(data, dtype=np.uint64).reshape(-1, len(dims)))
    elif kind == "hyperslab":
        start, stride, count, block = zip(*data)
        sid.select_hyperslab(start, count, stride, block)
    else:
        sid.select_none()
        for start, count in data:
            sid.select_hyperslab(tuple(start), tuple(count), op=h5py.h5s.SELECT_OR)
    return sid


def region_ref_of(dsid, selection):
    """An arca region reference to the dataset behind native ``dsid``."""
    return RegionReference(_native.region_ref_encode(dsid.id, selection))


def region_of(ref):
    """The selection tuple of an arca region reference."""
    return _native.region_ref_decode(ref._bytes)[1]

def map_refs(value, dt, fn, ref_out):
    """``value`` (of dtype ``dt``) with every reference replaced by
    ``fn(ref)``: in reference elements, in compound members and in
    sequences of references; ``ref_out`` is the dtype references take."""
    if value is None:
        return None
    meta = dt.metadata or {}
    if check_ref_dtype(dt) is not None or meta.get("ref") is not None:
        arr = np.asarray(value, dtype=object)
        out = np.empty(arr.shape, dtype=ref_out)
        flat_in, flat_out = arr.reshape(-1), out.reshape(-1)
        for i, r in enumerate(flat_in):
            flat_out[i] = fn(r)
        return out if arr.shape else out[()]
    base = meta.get("vlen")
    if base is not None and (check_ref_dtype(base) is not None
                             or (getattr(base, "metadata", None) or {}).get("ref") is not None):
        arr = np.asarray(value, dtype=object)
        out = np.empty(arr.shape, dtype=object)
        for i, seq in enumerate(arr.reshape(-1)):
            out.reshape(-1)[i] = map_refs(np.asarray(seq, dtype=object).reshape(-1),
                                           np.dtype("O", metadata={"ref": True}), fn, ref_out)
        return out if arr.shape else out[()]
    if dt.names is not None:
        arr = np.asarray(value)
        out = np.empty(arr.shape, dtype=swap_ref_dtype(dt, ref_out))
        for n in dt.names:
            out[n] = map_refs(arr[n], dt.fields[n][0], fn, ref_out)
        return out if arr.shape else out[()]
    return value


def swap_ref_dtype(dt, ref_out):
    """``dt`` with its reference types (fields, sequences) made ``ref_out``'s."""
    meta = dt.metadata or {}
    if meta.get("ref") is not None:
        return ref_out
    base = meta.get("vlen")
    if base is not None and not isinstance(base, type) and (base.metadata or {}).get("ref"):
        return np.dtype("O", metadata={"vlen": ref_out})
    if dt.names is not None:
        return np.dtype({"names": list(dt.names),
                         "formats": [swap_ref_dtype(dt.fields[n][0], ref_out) for n in dt.names],
                         "offsets": [dt.fields[n][1] for n in dt.names],
                         "itemsize": dt.itemsize})
    return dt


def holds_refs(dt):
    meta = dt.metadata or {}
    if meta.get("ref") is not None:
        return True
    base = meta.get("vlen")
    if base is not None and not isinstance(base, type):
        return bool((base.metadata or {}).get("ref"))
    if dt.names is not None:
        return any(holds_refs(dt.fields[n][0]) for n in dt.names)
    return False
