"""h5py's ``h5g.get_objinfo``, for code that reads an object's link count
or modification time the low-level way. Times are kept for objects made
with ``track_times=True`` (0 otherwise, as in h5py)::

    ds = f.create_dataset("x", data=[1, 2], track_times=True)
    arca.h5g.get_objinfo(ds.id).mtime          # seconds since 1970
    arca.h5g.get_objinfo(f.id, b"x").nlink     # 1
"""

from . import _native

GROUP = 0
DATASET = 1
TYPE = 2
LINK = 3

_KINDS = {_native.Group: GROUP, _native.Dataset: DATASET, _native.NamedType: TYPE}


class GroupStat:
    """What :func:`get_objinfo` returns: ``objno`` (the object's identity,
    a pair as h5py's), ``nlink`` (hard links to it), ``type``
    (``GROUP``, ``DATASET`` or ``TYPE``), ``mtime`` (seconds since 1970,
    0 unless times are tracked) and ``linklen`` (0: hard-linked objects)."""

    __slots__ = ("objno", "nlink", "type", "mtime", "linklen")

    def __init__(self, objno, nlink, kind, mtime):
        self.objno, self.nlink, self.type, self.mtime, self.linklen = objno, nlink, kind, mtime, 0

    def __repr__(self):
        return f"<GroupStat objno={self.objno} nlink={self.nlink} type={self.type} mtime={self.mtime}>"


def _handle(obj):
    """The native handle behind an object, its ``.id`` or the handle itself."""
    while not isinstance(obj, tuple(_KINDS)):
        inner = getattr(obj, "_id", None)
        if inner is None:
            raise TypeError(f"{obj!r} is not a group, dataset or datatype identifier")
        obj = inner
    return obj


def get_objinfo(obj, name=b".", follow_link=True):
    """Facts about ``obj`` (a group, dataset or datatype, its ``.id`` or
    native handle), or about the member ``name`` of a group, as h5py's
    ``h5g.get_objinfo``. ``follow_link`` is accepted; soft and external
    links are always followed to their object."""
    h = _handle(obj)
    if isinstance(name, bytes):
        name = name.decode("utf-8")
    if name not in (".", ""):
        if not isinstance(h, _native.Group):
            raise TypeError("a member name needs a group")
        h = h.object(name)
    times = _native.Group.times_of(h)
    nlink = _native.Group.root_of(h).link_count(h.id)
    return GroupStat((h.id, 0), nlink, _KINDS[type(h)], 0 if times is None else times[1])
