"""Which numpy dtypes arca stores, and how they cross to the native layer.

A stored type crosses as a type string (``<f8``, ``struct(12){"t"@0:<f8,
"ok"@8:|b1}``, ``enum(|u1){"RED":0}``, ``vlen:str``, ...; see
``arca.Datatype.parse`` in the Rust docs). Special types are numpy dtypes
tagged with metadata, as in h5py: ``{"enum": {name: value}}``, ``{"vlen":
base}``, ``{"ref": Reference}``, ``{"h5py_opaque": True}`` (and ``"tag"``),
``{"h5py_encoding": "utf-8"}`` on fixed-length strings; and arca's
``{"arca_strpad": "nullterm" | "spacepad"}`` for a fixed-length string's
padding when it is not numpy's NUL padding; ``{"arca_bitfield": True}`` and
``{"arca_time": True}`` on an unsigned integer dtype for HDF5's bitfield and
time types, whose values read as those integers (as h5py reads bitfields;
``">"`` instead of ``True`` for a big-endian single byte).

In order below: type strings to and from dtypes; compounds with
variable-length members, whose stored layout differs from their numpy one;
strings and elements as they cross (padding, native byte order, the bytes
of a box); h5py's dtype helpers; object references; variable-length dtypes
and object arrays of their elements; ``Empty``.
"""

import functools
import json

import numpy as np

from . import _native

# -- type strings ------------------------------------------------------------------
_INT_SIZES = (1, 2, 4, 8)

# How a fixed-length string fills its element, as HDF5 records it; carried
# in a string dtype's metadata as "arca_strpad" (absent: "nullpad", numpy's).
_STRPADS = ("nullpad", "nullterm", "spacepad")


def _order(dt):
    """The explicit byte-order character of a simple numpy dtype."""
    s = dt.str
    return s[0] if s[0] in "<>" else "|"


# Plain dtypes (no fields, sub-array or metadata) the core has accepted,
# with their type strings, by object: numpy hands out one object per
# builtin type, and attributes and small datasets ask for the same few
# over and over, so a hit costs one dict lookup instead of the checks.
_ACCEPTED = {}


def _accepted(dt):
    """The type string of a plain dtype already accepted, else None."""
    e = _ACCEPTED.get(id(dt))
    return e[1] if e is not None and e[0] is dt else None


def _accept(dt, s):
    if dt.metadata is None and dt.fields is None and dt.subdtype is None:
        if len(_ACCEPTED) > 1024:
            _ACCEPTED.clear()
        _ACCEPTED[id(dt)] = (dt, s)


# arca's 16-byte floats are x87 extended precision (80 bits in 16 bytes):
# numpy's longdouble on x86-64 Linux and macOS, which numpy then calls
# float128 (and its complex, complex256).
X87_LONGDOUBLE = (np.dtype(np.longdouble).itemsize == 16
                  and np.finfo(np.longdouble).nmant == 63)


# HDF5 classes arca keeps whose values cross as unsigned integers: the
# metadata key marking them, their type string's prefix, their sizes.
_BITS = (("arca_bitfield", "bitfield", (1, 2, 4, 8)), ("arca_time", "time", (4, 8)))


def bitfield_dtype(size=1, order="<"):
    """The dtype of an HDF5 bitfield of ``size`` bytes: its values read as
    unsigned integers (h5py reads PyTables' booleans, 8-bit bitfields, as
    ``uint8``), and a dataset made with it is stored as a bitfield again.

    >>> arca.bitfield_dtype(2, ">").str
    '>u2'
    """
    # numpy has no byte order for one byte: a big-endian one says so itself.
    mark = ">" if int(size) == 1 and order == ">" else True
    return np.dtype(f"{order}u{int(size)}", metadata={"arca_bitfield": mark})


def time_dtype(size=4, order="<"):
    """The dtype of an HDF5 time of ``size`` (4 or 8) bytes, which numpy has
    no type for: its values read as unsigned integers (seconds since the
    epoch for HDF5's UNIX times) and it is stored as a time again.

    >>> arca.time_dtype(8).itemsize
    8
    """
    return np.dtype(f"{order}u{int(size)}", metadata={"arca_time": True})


def type_string(dt):
    """The type string of a numpy dtype (explicit byte orders); TypeError
    if arca cannot store it."""
    if not isinstance(dt, np.dtype):
        dt = np.dtype(dt)
    return _accepted(dt) or _type_string(dt)


def _type_string(dt):
    meta = dt.metadata or {}
    if meta.get("ref") is RegionReference:
        return "vlen:region"
    if meta.get("ref") is not None:
        return "ref"
    if "vlen" in meta:
        base = meta["vlen"]
        if base is str:
            return "vlen:str"
        if base is bytes:
            return "vlen:bytes"
        if check_ref_dtype(base) is not None:
            return "vlen:ref"
        base = vlen_item_dtype(base)
        if base.metadata or base.fields is not None or base.subdtype is not None \
                or base.kind in "cSV":
            # Enums, compounds, complex numbers, strings, arrays, opaque.
            return "vlen:" + type_string(base)
        return "vlen:" + base.str
    for key, prefix, sizes in _BITS:
        if meta.get(key):
            if dt.kind != "u" or dt.itemsize not in sizes or dt.fields is not None:
                raise TypeError(f"{key} marks an unsigned integer of "
                                f"{', '.join(map(str, sizes))} bytes, not {dt}")
            # numpy has no order for one byte; HDF5 does (STD_B8BE), kept
            # as the key's value.
            order = _order(dt) if dt.itemsize > 1 else ">" if meta[key] == ">" else "|"
            return f"{prefix}:{order}u{dt.itemsize}"
    if meta.get("h5py_opaque"):
        # h5py's convention: the tag names the numpy type the bytes hold.
        tag = meta.get("tag") or ("" if dt.kind == "V" else "NUMPY:" + dt.str)
        n = dt.itemsize
        return f"|V{n}" if not tag else f"opaque({n},{json.dumps(str(tag), ensure_ascii=False)})"
    if "enum" in meta:
        base = dt.base if dt.subdtype is None else dt.subdtype[0]
        if base.kind not in "iu":
            raise TypeError(f"an enum needs an integer base type, not {base}")
        members = ",".join(
            f"{json.dumps(str(k), ensure_ascii=False)}:{int(v)}" for k, v in meta["enum"].items()
        )
        return f"enum({_order(base)}{base.kind}{base.itemsize}){{{members}}}"
    if dt.subdtype is not None:
        base, shape = dt.subdtype
        if not shape:
            return type_string(base)
        return "[" + ",".join(str(int(d)) for d in shape) + "]" + type_string(base)
    if dt.fields is not None:
        if has_vlen_members(dt):
            return stored_layout(dt)
        parts = []
        for name in dt.names:
            ft, off = dt.fields[name][:2]
            parts.append(f"{json.dumps(name, ensure_ascii=False)}@{off}:{type_string(ft)}")
        if not parts:
            raise TypeError("arca cannot store a compound type with no fields")
        return f"struct({dt.itemsize}){{{','.join(parts)}}}"
    k, n = dt.kind, dt.itemsize
    if k == "b":
        return "|b1"
    if k in "iu" and n in _INT_SIZES:
        return f"{_order(dt) if n > 1 else '|'}{k}{n}"
    if k == "f" and (n in (2, 4, 8) or (n == 16 and X87_LONGDOUBLE)):
        return f"{_order(dt)}f{n}"
    if k == "c" and (n in (8, 16) or (n == 32 and X87_LONGDOUBLE)):
        return f"{_order(dt)}c{n}"
    if k == "S" and n >= 1:
        s = f"|S{n}:utf8" if meta.get("h5py_encoding") == "utf-8" else f"|S{n}"
        pad = meta.get("arca_strpad", "nullpad")
        if pad not in _STRPADS:
            raise TypeError(f"string padding {pad!r}: one of {', '.join(_STRPADS)}")
        return s if pad == "nullpad" else f"{s}:{pad}"
    if k == "V" and n >= 1:
        tag = meta.get("tag", "")
        return f"|V{n}" if not tag else f"opaque({n},{json.dumps(str(tag), ensure_ascii=False)})"
    raise TypeError(
        f"arca cannot store dtype {dt!r}: use bool, (u)int8..64, float16/32/64, "
        "complex64/128, longdouble/clongdouble where they are x87 extended precision, "
        "fixed-length bytes S<n>, opaque V<n>, compound, array, enum or variable-length "
        "dtypes"
    )


def from_info(info):
    """The numpy dtype of a type as the core describes it (see
    :func:`type_info`)."""
    kind = info[0]
    if kind == "num":
        s = info[1]
        if s == "ref":
            return ref_dtype
        for key, prefix, _ in _BITS:
            if s.startswith(prefix + ":"):
                base = s[len(prefix) + 1:]
                return np.dtype(base, metadata={key: ">" if base == ">u1" else True})
        if s[1:] in ("f16", "c32") and not X87_LONGDOUBLE:
            raise TypeError(f"{s}: x87 extended precision, which this machine's numpy "
                            "longdouble is not")
        if s.startswith("|S"):
            # Fixed-length strings carry their character set as h5py's
            # dtypes do; the padding is the file's business.
            n, *flags = s[2:].split(":")
            meta = {"h5py_encoding": "utf-8" if "utf8" in flags else "ascii"}
            pad = [f for f in flags if f in _STRPADS]
            if pad:
                meta["arca_strpad"] = pad[0]
            return np.dtype(f"S{n}", metadata=meta)
        return np.dtype(s)
    if kind == "opaque":
        _, n, tag = info
        if tag.startswith("NUMPY:"):
            try:
                dt = np.dtype(tag[len("NUMPY:"):])
                if dt.itemsize == n:
                    return np.dtype(dt, metadata={"h5py_opaque": True})
            except TypeError:
                pass
        if not tag:
            return np.dtype(f"V{n}")
        return np.dtype(f"V{n}", metadata={"h5py_opaque": True, "tag": tag})
    if kind == "enum":
        _, base, members = info
        return np.dtype(from_info(base), metadata={"enum": {n: int(v) for n, v in members}})
    if kind == "array":
        _, base, dims = info
        return np.dtype((from_info(base), tuple(dims)))
    if kind == "compound":
        if info_has_vlen_members(info):
            return memory_dtype(info)
        _, size, fields = info
        return np.dtype(
            {
                "names": [f[0] for f in fields],
                "formats": [from_info(f[2]) for f in fields],
                "offsets": [f[1] for f in fields],
                "itemsize": size,
            }
        )
    if kind == "vlen":
        base = info[1]
        if isinstance(base, tuple):
            # A sequence of an enum, a compound, complex numbers ...
            return np.dtype("O", metadata={"vlen": from_info(base)})
        if base == "region":
            return regionref_dtype
        if base == "ref":
            base = ref_dtype
        else:
            base = str if base == "str" else bytes if base == "bytes" else np.dtype(base)
        return np.dtype("O", metadata={"vlen": base})
    raise TypeError(f"unknown type description {info!r}")


@functools.lru_cache(maxsize=4096)
def type_info(s):
    """The core's description of a type string; a file holds few distinct
    types, so each is parsed once (errors are not cached)."""
    return _native.type_info(s)


@functools.lru_cache(maxsize=4096)
def from_type_string(s):
    """The numpy dtype of a stored type string (dtypes are immutable, so
    one object serves every dataset and attribute of that type)."""
    return from_info(type_info(s))


def check_dtype(dt):
    """Return ``np.dtype(dt)`` if arca can store it as fixed-size
    elements, else raise TypeError."""
    if isinstance(dt, np.dtype) and _accepted(dt) is not None:
        return dt
    try:
        dt = np.dtype(dt)
    except TypeError as e:
        raise TypeError(f"not a data type: {dt!r}") from e
    if dt.kind == "O" and "vlen" in (dt.metadata or {}):
        raise TypeError(f"{dt!r} is variable-length")
    if dt.kind == "O" and not has_refs(dt):
        raise TypeError(f"arca cannot store Python objects ({dt!r})")
    s = type_string(dt)
    try:
        type_info(s)
    except ValueError as e:
        raise TypeError(f"arca cannot store dtype {dt!r}: {e}") from None
    _accept(dt, s)
    return dt


# -- compounds with variable-length members ---------------------------------------
# In memory such a member is a numpy object field, as in h5py: a string
# member is 8 bytes wide and a sequence 16 (HDF5's own in-memory sizes,
# which h5py's dtypes follow, so the dtypes read back here equal h5py's).
# In the file each such member is a 16-byte record pointing at the
# dataset's byte vector, so the stored compound is laid out wider;
# stored_layout and memory_dtype map one layout onto the other the way
# HDF5 does.

# Bytes of a member in memory, by kind: h5py's object fields stand in HDF5's
# char* (strings) and hvl_t (sequences).
_MEM_STR = 8
_MEM_SEQ = 16


def _member_vlen_base(dt):
    """The base of a variable-length field dtype (str, bytes, a dtype, or a
    reference dtype), else None."""
    if dt.kind != "O":
        return None
    return (dt.metadata or {}).get("vlen")


def has_vlen_members(dt):
    """Whether a numpy dtype is a compound with variable-length members at
    any depth."""
    if dt is None or dt.fields is None:
        return False
    return any(
        _member_vlen_base(dt.fields[n][0]) is not None or has_vlen_members(dt.fields[n][0])
        for n in dt.names
    )


def _mem_size(dt):
    """Bytes of a member in HDF5's memory layout (h5py's dtypes)."""
    base = _member_vlen_base(dt)
    if base is not None:
        return _MEM_STR if base in (str, bytes) else _MEM_SEQ
    if has_vlen_members(dt):
        return memory_layout(dt)[1]
    return dt.itemsize


def memory_layout(dt):
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
    members, size = memory_layout(dt)
    parts, shift = [], 0
    for n, at, ft in members:
        if _member_vlen_base(ft) is not None:
            s, disk = type_string(ft), 16
        elif has_vlen_members(ft):
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


def info_has_vlen_members(info):
    """Whether a core type description is a compound with variable-length
    members at any depth."""
    return info[0] == "compound" and any(
        f[2][0] == "vlen" or info_has_vlen_members(f[2]) for f in info[2]
    )


def _info_mem_size(info):
    if info[0] == "vlen":
        return _MEM_STR if info[1] in ("str", "bytes") else _MEM_SEQ
    return memory_dtype(info).itemsize


def memory_dtype(info):
    """The numpy dtype of a stored compound with variable-length members:
    HDF5's memory layout, as h5py reads it (strings 8 bytes, sequences 16,
    members after a narrowed one moved back by the difference)."""
    size, fields = info[1], info[2]
    order = sorted(range(len(fields)), key=lambda i: fields[i][1])
    offsets = [0] * len(fields)
    shift = 0
    for i in order:
        _, off, fi = fields[i]
        offsets[i] = off + shift
        if fi[0] == "vlen":
            shift += _info_mem_size(fi) - 16
        elif info_has_vlen_members(fi):
            shift += _info_mem_size(fi) - fi[1]
    formats = [memory_dtype(f[2]) if info_has_vlen_members(f[2]) else from_info(f[2])
               for f in fields]
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


def rows_dtype(dtype, data):
    """The compound dtype with variable-length members that
    ``create_dataset(dtype=..., data=...)`` (or an attribute's value and
    dtype) asks for, else None."""
    if dtype is not None and dtype is not str and dtype is not bytes:
        try:
            dt = np.dtype(dtype)
        except TypeError:
            return None
    elif dtype is None and isinstance(data, np.ndarray):
        dt = data.dtype
    else:
        return None
    return dt if has_vlen_members(dt) else None


# -- strings and elements as they cross -------------------------------------------
def strpad(dt):
    """A fixed-length string dtype's padding when it is not numpy's NUL
    padding ("nullterm" or "spacepad"), else None."""
    if dt.kind != "S":
        return None
    pad = (dt.metadata or {}).get("arca_strpad")
    return pad if pad in ("nullterm", "spacepad") else None


def unpad(arr, dt):
    """Stored strings as numpy holds them (NUL-padded), as HDF5 converts
    them for h5py: a NUL-terminated string ends at its first NUL, a
    space-padded one loses its trailing spaces."""
    pad = strpad(dt)
    if pad is None:
        return arr
    a = np.asarray(arr)
    if pad == "nullterm":
        vals = [x.split(b"\0", 1)[0] for x in a.reshape(-1).tolist()]
    else:
        vals = [x.rstrip(b" ") for x in a.reshape(-1).tolist()]
    out = np.array(vals, dtype=a.dtype).reshape(a.shape)
    return out if a.shape or not isinstance(arr, np.generic) else out[()]


def repad(arr, dt):
    """Strings given NUL-padded, stored with a space-padded type's spaces
    (other paddings keep the bytes as given)."""
    if strpad(dt) != "spacepad":
        return arr
    a = np.asarray(arr)
    n = dt.itemsize
    vals = [x.rstrip(b"\0").ljust(n, b" ") for x in a.reshape(-1).tolist()]
    return np.array(vals, dtype=a.dtype).reshape(a.shape)


def _native_form(dt):
    if dt.subdtype is not None:
        base, shape = dt.subdtype
        return np.dtype((_native_form(base), shape))
    if dt.fields is not None:
        return np.dtype(
            {
                "names": list(dt.names),
                "formats": [_native_form(dt.fields[n][0]) for n in dt.names],
                "offsets": [dt.fields[n][1] for n in dt.names],
                "itemsize": dt.itemsize,
            }
        )
    if dt.byteorder in "=|":
        return dt
    out = dt.newbyteorder("=")
    return np.dtype(out, metadata=dict(dt.metadata)) if dt.metadata else out


def native(dt):
    """The in-memory (native byte order) form of a stored dtype: every
    number native, layout and metadata unchanged."""
    if dt.fields is None and dt.subdtype is None and dt.byteorder in "=|":
        return dt
    return _native_form(dt)


def as_array(value, dtype=None):
    """``np.asarray`` that turns str data into UTF-8 bytes and rejects objects."""
    if dtype is not None and has_refs(dtype):
        return np.asarray(value, dtype=dtype)
    if isinstance(value, Reference):
        return np.asarray(value, dtype=ref_dtype)
    if isinstance(value, str):
        value = value.encode("utf-8")
    if dtype is not None and (dtype.fields is not None or dtype.subdtype is not None):
        # Rows given as tuples or nested lists take the compound's shape.
        return np.asarray(value, dtype=dtype)
    if dtype is not None and dtype.kind in "biufc" and not isinstance(value, np.ndarray):
        # Python numbers straight to the type: [2**63 - 1, 2**63] as uint64
        # would lose bits through float64.
        try:
            return np.asarray(value, dtype=dtype)
        except (TypeError, ValueError, OverflowError):
            pass
    arr = np.asarray(value)
    if arr.dtype.kind == "U":
        arr = np.char.encode(arr, "utf-8")
    if arr.dtype.kind == "O":
        raise TypeError(f"cannot store Python objects of type {type(value).__name__}")
    if dtype is not None and arr.dtype != dtype:
        arr = arr.astype(dtype)
    return arr


def as_elements(data, mdt, shape):
    """Native-order element bytes (``bytes`` or a ``uint8`` array) as an
    array of ``shape`` elements of ``mdt`` (an array element type adds its
    own axes, as numpy does); references become :class:`Reference`."""
    shape = tuple(shape)
    if has_refs(mdt):
        # Stored ids become Reference objects.
        ids = layout_dtype(mdt)
        r = np.frombuffer(data, dtype=ids).reshape(shape) if not isinstance(data, np.ndarray) \
            else data.view(ids).reshape(shape)
        return refs_to_objects(r, mdt)
    if mdt.subdtype is not None:
        base, sub = mdt.subdtype
        return np.frombuffer(data, dtype=base).reshape(shape + sub)
    return np.frombuffer(data, dtype=mdt).reshape(shape) if not isinstance(data, np.ndarray) \
        else data.view(mdt).reshape(shape)


# -- h5py's dtype helpers ------------------------------------------------------


def enum_dtype(values_dict, basetype=np.uint8):
    """An integer dtype whose values have names:
    ``enum_dtype({"RED": 0, "GREEN": 1}, basetype="i1")``."""
    base = np.dtype(basetype)
    if base.kind not in "iu":
        raise TypeError(f"an enum needs an integer base type, not {base}")
    return np.dtype(base, metadata={"enum": dict(values_dict)})


def check_enum_dtype(dt):
    """The ``{name: value}`` mapping of an enum dtype, or None."""
    try:
        dt = np.dtype(dt)
    except TypeError:
        return None
    return (dt.metadata or {}).get("enum")


def opaque_dtype(np_dtype):
    """``np_dtype`` marked to be stored as opaque bytes of its size, as in
    h5py (it reads back as ``V<n>``)."""
    dt = np.dtype(np_dtype)
    if dt.names is not None:
        raise TypeError("Cannot store numpy structured arrays as opaque data")
    if dt.itemsize == 0:
        raise TypeError("an opaque type needs a size")
    return np.dtype(dt, metadata={"h5py_opaque": True})


def check_opaque_dtype(dt):
    """Whether ``dt`` is stored as opaque bytes."""
    dt = np.dtype(dt)
    if (dt.metadata or {}).get("h5py_opaque"):
        return True
    return dt.kind == "V" and dt.fields is None and dt.subdtype is None


class string_info(tuple):
    """``(encoding, length)`` of a string dtype, as h5py's ``string_info``."""

    __slots__ = ()

    def __new__(cls, encoding, length):
        return super().__new__(cls, (encoding, length))

    @property
    def encoding(self):
        return self[0]

    @property
    def length(self):
        return self[1]

    def __repr__(self):
        return f"string_info(encoding={self.encoding!r}, length={self.length!r})"


def check_string_dtype(dt):
    """``string_info(encoding, length)`` for a string dtype (length None for
    variable-length strings), else None."""
    try:
        dt = np.dtype(dt)
    except TypeError:
        return None
    meta = dt.metadata or {}
    base = meta.get("vlen")
    if base is str:
        return string_info("utf-8", None)
    if base is bytes:
        return string_info("ascii", None)
    if dt.kind == "S":
        return string_info(meta.get("h5py_encoding", "ascii"), dt.itemsize)
    return None


def h5py_check_dtype(**kwds):
    """h5py's ``check_dtype``: ``check_dtype(vlen=dt)`` gives the base of a
    variable-length dtype, ``enum=dt`` the value mapping of an enum, and
    ``ref=dt`` the reference class; None when ``dt`` is not of that kind."""
    if len(kwds) != 1:
        raise TypeError("check_dtype() takes exactly one keyword argument")
    (kind, dt), = kwds.items()
    if kind == "vlen":
        return check_vlen_dtype(dt)
    if kind == "enum":
        return check_enum_dtype(dt)
    if kind == "ref":
        return check_ref_dtype(dt)
    raise TypeError(f"unknown check_dtype keyword {kind!r}")


def special_dtype(**kwds):
    """h5py's older spelling: ``special_dtype(vlen=str)``,
    ``special_dtype(enum=(basetype, {name: value}))``."""
    if len(kwds) != 1:
        raise TypeError("special_dtype() takes exactly one keyword argument")
    (kind, arg), = kwds.items()
    if kind == "vlen":
        return vlen_dtype(arg)
    if kind == "enum":
        base, values = arg
        return enum_dtype(values, basetype=base)
    if kind == "ref":
        if arg is RegionReference:
            return regionref_dtype
        if arg is not Reference:
            raise TypeError("special_dtype(ref=...) takes arca.Reference or arca.RegionReference")
        return ref_dtype
    raise TypeError(f"unknown special_dtype keyword {kind!r}")


# -- object references -----------------------------------------------------------


class Reference:
    """A reference to a group or dataset of a file, as h5py's: ``obj.ref``
    makes one, ``f[ref]`` follows it; a null reference is false::

        f["events"].attrs["source"] = f["runs/run7"].ref
        f[f["events"].attrs["source"]]      # the dataset /runs/run7
    """

    __slots__ = ("_oid",)

    def __init__(self, oid=0):
        self._oid = int(oid)

    def __bool__(self):
        return self._oid != 0

    def __eq__(self, other):
        return isinstance(other, Reference) and other._oid == self._oid

    def __hash__(self):
        return hash(("ref", self._oid))

    def __repr__(self):
        return f"<arca Reference to object {self._oid}>" if self._oid else "<arca Reference (null)>"


ref_dtype = np.dtype("O", metadata={"ref": Reference})


class RegionReference(Reference):
    """A reference to a region of a dataset: the dataset and a selection of
    it, as h5py's. ``ds.regionref[...]`` makes one, ``f[ref]`` is the
    dataset, ``ds[ref]`` the selected elements; a null reference (made with
    no arguments) is false::

        r = ds.regionref[2:5, ::2]
        f["events"].attrs["hot"] = r
        ds[f["events"].attrs["hot"]]     # the elements of ds[2:5, ::2]

    Stored as variable-length elements of type ``vlen:region``
    (:data:`regionref_dtype`).
    """

    __slots__ = ("_bytes",)

    def __init__(self, stored=b""):
        stored = bytes(stored)
        super().__init__(_native.region_ref_decode(stored)[0] if stored else 0)
        self._bytes = stored

    def __eq__(self, other):
        return isinstance(other, RegionReference) and other._bytes == self._bytes

    def __hash__(self):
        return hash(("regionref", self._bytes))

    def __repr__(self):
        if not self:
            return "<arca RegionReference (null)>"
        return f"<arca RegionReference to object {self._oid}>"


regionref_dtype = np.dtype("O", metadata={"ref": RegionReference})


def check_ref_dtype(dt):
    """The reference class of a reference dtype (:class:`Reference`), else None."""
    try:
        dt = np.dtype(dt)
    except TypeError:
        return None
    return (dt.metadata or {}).get("ref")


def has_refs(dt):
    """Whether elements of ``dt`` hold object references (region
    references are variable-length elements of their own)."""
    ref = (dt.metadata or {}).get("ref")
    if ref is not None:
        return ref is not RegionReference
    if dt.subdtype is not None:
        return has_refs(dt.subdtype[0])
    if dt.fields is not None:
        return any(has_refs(dt.fields[n][0]) for n in dt.names)
    return False


def layout_dtype(dt):
    """``dt`` as its elements lie in the bytes that cross to the core (the
    file's layout, numbers in ``dt``'s byte order): every reference the
    u64 id it is stored as."""
    if (dt.metadata or {}).get("ref") is not None:
        return np.dtype("=u8")
    if dt.subdtype is not None:
        base, shape = dt.subdtype
        return np.dtype((layout_dtype(base), shape))
    if dt.fields is not None:
        return np.dtype(
            {
                "names": list(dt.names),
                "formats": [layout_dtype(dt.fields[n][0]) for n in dt.names],
                "offsets": [dt.fields[n][1] for n in dt.names],
                "itemsize": dt.itemsize,
            }
        )
    return dt


_to_ref = np.frompyfunc(Reference, 1, 1)


def _ref_id(r):
    if r is None:
        return 0
    if isinstance(r, RegionReference):
        raise TypeError("Can't convert a region reference to an object reference")
    if not isinstance(r, Reference):
        raise TypeError(f"a reference element must be an arca.Reference or None, not {type(r).__name__}")
    return r._oid


_to_id = np.frompyfunc(_ref_id, 1, 1)


def refs_to_objects(elems, dt):
    """Elements as they cross (``layout_dtype(dt)``) as ``dt``: ids become
    References."""
    if (dt.metadata or {}).get("ref") is not None:
        out = np.empty(elems.shape, dtype=dt)
        out[...] = _to_ref(elems)
        return out
    if dt.fields is not None:
        out = np.empty(elems.shape, dtype=dt)
        for n in dt.names:
            out[n] = refs_to_objects(elems[n], dt.fields[n][0])
        return out
    if dt.subdtype is not None:
        base, _ = dt.subdtype
        return refs_to_objects(elems, base)
    return elems


def objects_to_refs(arr, dt):
    """Elements of ``dt`` (References in object fields) as they cross: each
    reference its u64 id."""
    if (dt.metadata or {}).get("ref") is not None:
        return np.asarray(_to_id(np.asarray(arr, dtype=object)), dtype="=u8")
    if dt.fields is not None:
        out = np.zeros(arr.shape, dtype=layout_dtype(dt))
        for n in dt.names:
            out[n] = objects_to_refs(arr[n], dt.fields[n][0])
        return out
    return arr


# -- variable-length dtypes --------------------------------------------------------
def vlen_item_dtype(base):
    """The numpy dtype of the items of variable-length elements of
    ``base``: bool, an integer, float16/32/64, complex, an enum, a compound
    (without references; its members may be variable-length), fixed-length
    strings, an array or opaque bytes; TypeError for a base arca cannot
    store."""
    dt = np.dtype(base)
    k, n = dt.kind, dt.itemsize
    if k == "b" or (k in "iu" and n in (1, 2, 4, 8)) or (k == "f" and n in (2, 4, 8)):
        return dt
    if k in "cSV" or dt.fields is not None or dt.subdtype is not None:
        if has_refs(dt) or (dt.subdtype is not None and has_vlen_members(dt.subdtype[0])):
            raise TypeError(f"a variable-length base holds no references, and "
                            f"variable-length values only as compound members, not {dt}")
        type_string(dt)  # TypeError if arca cannot store it
        return dt
    raise TypeError(
        f"variable-length base type must be bool, an integer, a float, complex, an enum, "
        f"a compound, a string, an array or opaque, not {dt}"
    )


def vlen_dtype(base):
    """The dtype of variable-length elements of ``base``: ``str``, ``bytes``
    or a numeric numpy type (each element a 1-D array), as h5py's."""
    if base is str or base is bytes:
        return np.dtype("O", metadata={"vlen": base})
    if isinstance(base, np.dtype) and check_ref_dtype(base) is not None:
        # Sequences of object references (HDF5's DIMENSION_LIST holds them).
        return np.dtype("O", metadata={"vlen": ref_dtype})
    return np.dtype("O", metadata={"vlen": vlen_item_dtype(base)})


def string_dtype(encoding="utf-8", length=None):
    """Variable-length UTF-8 strings (``length=None``), or fixed-length
    ``S<length>`` tagged with the encoding (stored as the type's character
    set); ``encoding="ascii"`` gives byte strings, as in h5py."""
    enc = encoding.lower().replace("-", "")
    if enc not in ("utf8", "ascii"):
        raise ValueError(f"unknown encoding {encoding!r}; use 'utf-8' or 'ascii'")
    if length is not None:
        name = "utf-8" if enc == "utf8" else "ascii"
        return np.dtype(f"S{int(length)}", metadata={"h5py_encoding": name})
    if enc == "utf8":
        return vlen_dtype(str)
    if enc == "ascii":
        return vlen_dtype(bytes)
    raise ValueError(f"unknown encoding {encoding!r}; use 'utf-8' or 'ascii'")


def check_vlen_dtype(dt):
    """The base of a variable-length dtype (``str``, ``bytes`` or a numpy
    dtype), or None."""
    try:
        dt = np.dtype(dt)
    except TypeError:
        return None
    if dt.kind != "O" or not dt.metadata:
        return None
    return dt.metadata.get("vlen")


def vlen_base_of_dtype(dtype):
    """The element base a ``dtype`` argument asks for: ``str`` or ``bytes``
    given as themselves, or a variable-length dtype's base; else None."""
    if dtype is str or dtype is bytes:
        return dtype
    if check_ref_dtype(dtype) is RegionReference:
        return RegionReference
    return check_vlen_dtype(dtype)


def vlen_type_string(base):
    """The type string of variable-length elements of ``base``."""
    if base is str:
        return "vlen:str"
    if base is bytes:
        return "vlen:bytes"
    if base is RegionReference:
        return "vlen:region"
    if isinstance(base, np.dtype) and base.kind == "O" and (base.metadata or {}).get("ref"):
        return "vlen:ref"
    return type_string(np.dtype("O", metadata={"vlen": vlen_item_dtype(base)}))


def vlen_base_of_type(type_string):
    """The element base of a ``vlen:`` type string: ``str``, ``bytes``,
    :data:`ref_dtype` or the items' numpy dtype (stored byte order)."""
    rest = type_string[len("vlen:"):]
    if rest == "str":
        return str
    if rest == "bytes":
        return bytes
    if rest == "ref":
        return ref_dtype
    if rest == "region":
        return RegionReference
    return from_type_string(rest)


def infer_vlen_base(data):
    """The base of an object array or list of elements, from its first one."""
    flat = data.reshape(-1) if isinstance(data, np.ndarray) else data
    for x in flat:
        if x is None:
            continue
        if isinstance(x, (str, np.str_)):
            return str
        if isinstance(x, (bytes, np.bytes_)):
            return bytes
        if isinstance(x, RegionReference):
            return RegionReference
        return vlen_item_dtype(np.asarray(x).dtype)
    raise TypeError("cannot tell the element type of empty object data; pass dtype")


def object_array(value, base):
    """``value`` as an object array whose elements are the variable-length
    items of ``base`` (None: strings or bytes, as given)."""
    if isinstance(value, np.ndarray) and value.dtype.kind == "O":
        return value
    if base is RegionReference:
        return np.asarray(value, dtype=object)
    if base in (str, bytes) or base is None:
        if isinstance(value, (str, bytes, np.str_, np.bytes_)):
            out = np.empty((), dtype=object)
            out[()] = value
            return out
        arr = np.asarray(value)
        if arr.dtype.kind in "USO":
            return arr.astype(object)
        raise TypeError(f"cannot store {arr.dtype} data in a string dataset")
    # Numeric elements: a 1-D array is one element; a list of them is many.
    if isinstance(value, np.ndarray) and value.ndim <= 1:
        out = np.empty((), dtype=object)
        out[()] = value
        return out
    seq = list(value)
    out = np.empty(len(seq), dtype=object)
    for i, x in enumerate(seq):
        out[i] = x
    return out


# -- complex numbers as compounds -------------------------------------------------
def complex_compat_dtype(dt):
    """The compound of two floats (``r``, ``i``) that HDF5 1.x files hold
    complex numbers as, for a complex ``dt``, as h5py's::

        arca.complex_compat_dtype("<c8")    # dtype([('r', '<f4'), ('i', '<f4')])

    Datasets created with it read back complex (arca stores them so)."""
    dt = np.dtype(dt)
    if dt.kind != "c":
        raise TypeError(f"{dt!r} is not a complex dtype")
    f = np.dtype(f"f{dt.itemsize // 2}").newbyteorder(dt.byteorder)
    return np.dtype([("r", f), ("i", f)])


def check_complex_dtype(dt, names=("r", "i")):
    """The complex dtype ``dt`` stands for: a complex dtype itself, or a
    compound of two equal floats named ``names`` (None: any names), as
    h5py's; else None::

        arca.check_complex_dtype(arca.complex_compat_dtype("c16"))   # complex128
    """
    dt = np.dtype(dt)
    if dt.kind == "c":
        return dt
    if dt.names is None or len(dt.names) != 2:
        return None
    if names is not None and tuple(dt.names) != tuple(names):
        return None
    (a, oa), (b, ob) = (dt.fields[n][:2] for n in dt.names)
    if a.kind != "f" or a != b or oa != 0 or ob != a.itemsize or dt.itemsize != 2 * a.itemsize:
        return None
    return np.dtype(f"{a.byteorder if a.byteorder != '|' else '='}c{2 * a.itemsize}")


# -- null dataspaces ---------------------------------------------------------------


class Empty:
    """A value with a type and no elements at all (a null dataspace), as
    h5py's ``Empty``: ``f.attrs["x"] = arca.Empty("f4")``,
    ``f.create_dataset("e", data=arca.Empty("i8"))``; reading one gives
    an ``Empty`` back."""

    shape = None
    size = None

    def __init__(self, dtype):
        self.dtype = np.dtype(dtype)

    def __eq__(self, other):
        return isinstance(other, Empty) and other.dtype == self.dtype

    def __hash__(self):
        return hash(("empty", self.dtype))

    def __repr__(self):
        return f"Empty(dtype={self.dtype!r})"
