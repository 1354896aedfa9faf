"""What groups and datasets share: identity, place in the file, attributes."""

import posixpath

from ._attrs import AttributeManager


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
        from ._dtypes import Reference

        return Reference(self._id.id)

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

    @classmethod
    def _kind(cls):
        """The public class equality compares within (Group or Dataset)."""
        for c in cls.__mro__:
            if HLObject in c.__bases__:
                return c
        return cls
