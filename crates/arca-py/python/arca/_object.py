"""What groups and datasets share: identity, place in the file, attributes;
and the classes a native handle is wrapped in.

The modules defining :class:`arca.File`, :class:`arca.Group` and
:class:`arca.Dataset` sit above this one and register their classes here
when imported (``register``), so this module, and those between, reach them
without importing them: :func:`wrap` wraps any native handle.
"""

import posixpath
import weakref

from . import _native, h5d
from ._attrs import AttributeManager
from ._dtypes import (
    Reference,
    check_enum_dtype,
    check_ref_dtype,
    check_string_dtype,
    check_vlen_dtype,
    from_type_string,
)
from ._regionref import RegionProxy

# kind -> class: "file", "group", "dataset"; "external_file" is the
# function giving the File of an object behind an external link.
_CLASSES = {}


def register(kind, cls):
    """Make ``cls`` the class of objects of ``kind``."""
    _CLASSES[kind] = cls


def registered(kind):
    """The class registered for ``kind``."""
    return _CLASSES[kind]


def wrap(file, handle):
    """The group, dataset or committed datatype of ``file`` behind a
    native handle; a handle that comes with its own file (``(handle, native
    file)``: an object reached through an external link) belongs to that
    file instead."""
    if type(handle) is tuple:
        handle, native_file = handle
        file = _CLASSES["external_file"](file, native_file)
    if isinstance(handle, _native.NamedType):
        return _CLASSES["datatype"](handle, file)
    if isinstance(handle, _native.Dataset):
        return _CLASSES["dataset"](file, handle)
    return _CLASSES["group"](file, handle)


class HLObject:
    """Base of :class:`arca.Group` and :class:`arca.Dataset`.

    Two objects are equal when they are the same object of the same open
    file, whichever names reached them; an object is false once its file
    is closed::

        g = f.create_group("a")
        g == f["a"]        # True
        g.attrs["k"] = 1
    """

    def __init__(self, file, oid):
        self._file = file
        self._id = oid

    @property
    def id(self):
        """This object's identifier, as h5py's ``obj.id``: an
        :class:`ObjectID`, true while the object can be used."""
        return ObjectID(self._file, self._id)

    @property
    def name(self):
        """Absolute path of this object; None for one made without a name
        (``create_group(None)``) and not linked since."""
        return self._id.path or None

    @property
    def ref(self):
        """A :class:`arca.Reference` to this object (``f[obj.ref] == obj``)."""
        return Reference(self._id.id)

    @property
    def regionref(self):
        """Makes region references to this dataset by indexing
        (``ds.regionref[2:5]``); ``.shape(ref)`` and ``.selection(ref)``
        tell what a reference selects (see ``arca._regionref``)."""
        return RegionProxy(self)

    @property
    def file(self):
        """The :class:`arca.File` this object belongs to."""
        return self._file

    @property
    def parent(self):
        """The group holding this object (the root is its own parent);
        ValueError for an object without a name."""
        if self.name is None:
            raise ValueError("Parent of an anonymous object is undefined")
        return self._file[posixpath.dirname(self.name) or "/"]

    @property
    def attrs(self):
        """Attributes of this object, as a mutable mapping."""
        return AttributeManager(self._id.attrs())

    def __eq__(self, other):
        # The same object: same file and identity, whichever name reached it.
        # Anything else is numpy's to compare (``ds == 1.5`` reads ds), as in h5py.
        if not isinstance(other, HLObject):
            return NotImplemented
        return (
            isinstance(other, self._kind())
            and other._file is self._file
            and other._id.id == self._id.id
        )

    def __hash__(self):
        return hash((id(self._file), self._id.id))

    def __bool__(self):
        return not self._file._native.closed

    def __reduce__(self):
        # Objects of files opened read-only from a path pickle as (path,
        # options, object path): unpickled in another process (a
        # multiprocessing or dask worker) they open the same file and find
        # the same object, one open file per process and path.
        args = self._file._reopen_args
        if args is None:
            raise TypeError(
                f"{type(self).__name__} objects pickle only from files opened read-only "
                "from a path (arca.File(path, 'r')); this file is writable, in memory or "
                "in a Python object")
        if self._file._native.closed:
            raise ValueError("cannot pickle an object of a closed file")
        return _reopen, (args[0], args[1], None if self is self._file else self.name)

    @classmethod
    def _kind(cls):
        """The public class equality compares within (Group or Dataset)."""
        for c in cls.__mro__:
            if HLObject in c.__bases__:
                return c
        return cls


# HDF5's type classes (h5py's h5t.INTEGER, ...), as ObjectID.get_type
# reports them.
H5T_INTEGER, H5T_FLOAT, H5T_STRING, H5T_OPAQUE, H5T_COMPOUND = 0, 1, 3, 5, 6
H5T_REFERENCE, H5T_ENUM, H5T_VLEN, H5T_ARRAY = 7, 8, 9, 10


def h5t_class(dt):
    """The HDF5 type class of numpy dtype ``dt``, as h5py stores it (bool
    is an enum, complex a compound, as in h5py)."""
    if dt.subdtype is not None:
        return H5T_ARRAY
    if dt.fields is not None:
        return H5T_COMPOUND
    if check_enum_dtype(dt) is not None or dt.kind == "b":
        return H5T_ENUM
    if check_ref_dtype(dt) is not None:
        return H5T_REFERENCE
    if dt.kind == "S" or check_string_dtype(dt) is not None:
        return H5T_STRING
    if check_vlen_dtype(dt) is not None:
        return H5T_VLEN
    return {"i": H5T_INTEGER, "u": H5T_INTEGER, "f": H5T_FLOAT, "c": H5T_COMPOUND,
            "V": H5T_OPAQUE}.get(dt.kind, H5T_OPAQUE)


class ObjectID:
    """What ``obj.id`` is: an object's identifier, shaped as h5py's
    ``ObjectID`` for the calls code makes on it (h5netcdf, anndata, h5py's
    own idioms). True while its file is open (``valid``); equal to the id
    of the same object of the same open file, whichever name reached it;
    ``Group(gid)`` makes the group back. The native handle's calls (``id``,
    ``path``, ``attrs()``, ...) pass through::

        gid = f["g"].id
        bool(gid)                                        # True
        gid.get_create_plist().get_link_creation_order()  # 0, or the h5p flags
        f["x"].id.get_type().get_class()                 # 1 for floats (h5t.FLOAT)
    """

    __slots__ = ("_file", "_id")

    def __init__(self, file, handle):
        self._file = file
        self._id = handle

    @property
    def valid(self):
        """Whether the object's file is still open."""
        return not self._file._native.closed

    def __bool__(self):
        return self.valid

    def __eq__(self, other):
        return (isinstance(other, ObjectID) and other._file is self._file
                and other._id.id == self._id.id)

    def __hash__(self):
        return hash((id(self._file), self._id.id))

    def __getattr__(self, name):
        return getattr(self._id, name)

    def get_type(self):
        """A dataset's type: a :class:`TypeID` (``get_class()``, ``dtype``;
        ``committed()`` when the dataset was made with a committed one)."""
        if not isinstance(self._id, _native.Dataset):
            raise TypeError("only a dataset's id has a type")
        named = self._id.committed_type()
        return TypeID(from_type_string(self._id.dtype()),
                      None if named is None else ObjectID(self._file, named))

    def get_create_plist(self):
        """An object's creation settings as h5py's property list shows the
        ones code asks about: :class:`GroupCreatePlist` for a group,
        :class:`DatasetCreatePlist` for a dataset."""
        if isinstance(self._id, _native.Dataset):
            return DatasetCreatePlist(self._id)
        if not isinstance(self._id, _native.Group):
            raise TypeError("only a group's or a dataset's id has creation settings")
        return GroupCreatePlist(self._id.track_order(), self._id.attrs().track_order())

    def __repr__(self):
        state = "valid" if self else "closed"
        return f"<arca ObjectID {self._id.id} ({state})>"


class TypeID:
    """A dataset's type as h5py's ``TypeID`` answers ``get_class()`` (the
    HDF5 type class, an int as h5py's ``h5t`` constants) and ``dtype``::

        f["x"].id.get_type().get_class()    # 0 for integers, as h5t.INTEGER
    """

    def __init__(self, dtype, committed=None):
        self.dtype = dtype
        # The committed datatype's ObjectID, for a committed type.
        self._committed = committed

    def committed(self):
        """Whether the type is a committed datatype (an object of the file)."""
        return self._committed is not None

    def get_class(self):
        """HDF5's class of the type (``h5t.INTEGER`` is 0, ``h5t.FLOAT``
        1, ``h5t.STRING`` 3, ``h5t.COMPOUND`` 6, ``h5t.ENUM`` 8, ...)."""
        return h5t_class(self.dtype)

    def __eq__(self, other):
        if not isinstance(other, TypeID):
            return False
        if self._committed is not None or other._committed is not None:
            # Committed types are equal when they are the same object.
            return self._committed == other._committed
        return other.dtype == self.dtype

    def __hash__(self):
        return hash(self.dtype)


class GroupCreatePlist:
    """A group's creation order as h5py's group creation property list
    reports it: HDF5's flags (``arca.h5p.CRT_ORDER_TRACKED |
    CRT_ORDER_INDEXED``) or 0::

        f.create_group("t", track_order=True).id.get_create_plist().get_link_creation_order()  # 3
    """

    # HDF5's H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED.
    _TRACKED_INDEXED = 0x1 | 0x2

    def __init__(self, links, attrs):
        self._links = self._TRACKED_INDEXED if links else 0
        self._attrs = self._TRACKED_INDEXED if attrs else 0

    def get_link_creation_order(self):
        """The flags of the group's members."""
        return self._links

    def get_attr_creation_order(self):
        """The flags of the group's attributes."""
        return self._attrs


class DatasetCreatePlist:
    """A dataset's creation settings as h5py's dataset creation property
    list reports them, with HDF5's constants (:mod:`arca.h5d`)::

        ds = f.create_dataset("x", (10,), "f4", fillvalue=4.0, fill_time="never")
        ds.id.get_create_plist().get_fill_time()   # 1, h5d.FILL_TIME_NEVER
    """

    def __init__(self, dsid):
        self._id = dsid

    def get_fill_time(self):
        """When HDF5 writes the fill value: ``h5d.FILL_TIME_ALLOC`` (0),
        ``FILL_TIME_NEVER`` (1) or ``FILL_TIME_IFSET`` (2)."""
        return h5d.FILL_TIMES[self._id.fill_time()]

    def fill_value_defined(self):
        """``h5d.FILL_VALUE_USER_DEFINED`` (2) when one was given, else
        ``FILL_VALUE_DEFAULT`` (1)."""
        return h5d.FILL_VALUE_USER_DEFINED if self._id.has_fill_value() \
            else h5d.FILL_VALUE_DEFAULT

    def get_layout(self):
        """``h5d.COMPACT`` (0), ``CONTIGUOUS`` (1, external storage too),
        ``CHUNKED`` (2) or ``VIRTUAL`` (3)."""
        return h5d.LAYOUTS[self._id.layout()]

    def get_chunk(self):
        """The chunk shape of a chunked dataset, a tuple."""
        chunks = self._id.chunks()
        if chunks is None:
            raise ValueError("the dataset is not chunked")
        return tuple(chunks)


# Files opened by unpickling, one per (path, options) in each process; an
# entry goes when nothing unpickled from it is left.
_REOPENED = weakref.WeakValueDictionary()


def _reopen(path, options, name):
    """Unpickle: the object at ``name`` (None: the file) of ``path`` opened
    read-only with ``options``."""
    key = (path, tuple(sorted(
        (k, tuple(sorted(v.items())) if isinstance(v, dict) else v)
        for k, v in options.items())))
    f = _REOPENED.get(key)
    if f is None or f._native.closed:
        f = _CLASSES["file"](path, "r", **options)
        _REOPENED[key] = f
    return f if name is None else f[name]
