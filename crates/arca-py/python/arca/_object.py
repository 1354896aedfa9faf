"""What groups and datasets share: identity, place in the file, attributes;
and the classes a native handle is wrapped in.

The modules defining :class:`arca.File`, :class:`arca.Group` and
:class:`arca.Dataset` sit above this one and register their classes here
when imported (``register``), so this module, and those between, reach them
without importing them: :func:`wrap` wraps any native handle.
"""

import posixpath
import weakref

from . import _native
from ._attrs import AttributeManager
from ._dtypes import Reference
from ._regionref import RegionProxy

# kind -> class: "file", "group", "dataset".
_CLASSES = {}


def register(kind, cls):
    """Make ``cls`` the class of objects of ``kind``."""
    _CLASSES[kind] = cls


def registered(kind):
    """The class registered for ``kind``."""
    return _CLASSES[kind]


def wrap(file, handle):
    """The group, dataset or committed datatype of ``file`` behind a
    native handle."""
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
        """The native handle."""
        return self._id

    @property
    def name(self):
        """Absolute path of this object."""
        return self._id.path

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
        """The group holding this object (the root is its own parent)."""
        return self._file[posixpath.dirname(self.name) or "/"]

    @property
    def attrs(self):
        """Attributes of this object, as a mutable mapping."""
        return AttributeManager(self._id.attrs())

    def __eq__(self, other):
        # The same object: same file and identity, whichever name reached it.
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


# Files opened by unpickling, one per (path, options) in each process; an
# entry goes when nothing unpickled from it is left.
_REOPENED = weakref.WeakValueDictionary()


def _reopen(path, options, name):
    """Unpickle: the object at ``name`` (None: the file) of ``path`` opened
    read-only with ``options``."""
    key = (path, tuple(sorted(options.items())))
    f = _REOPENED.get(key)
    if f is None or f._native.closed:
        f = _CLASSES["file"](path, "r", **options)
        _REOPENED[key] = f
    return f if name is None else f[name]
