"""Committed (named) datatypes: a type stored in the file as an object of
its own, with names and attributes, as h5py's ``Datatype``.

Assigning a numpy dtype to a name commits it; datasets and attributes may
then be created with it::

    f["pixel"] = np.dtype("<u2")
    t = f["pixel"]                     # arca.Datatype
    t.dtype                            # dtype('uint16')
    t.attrs["unit"] = "counts"
    f.create_dataset("frame", (512, 512), dtype=t)

A dataset made with a committed type records it (``arca ls`` shows which),
and keeps it alive: deleting the type's last name leaves it in the file,
nameless, while a dataset uses it (as HDF5 does).
"""

import posixpath

from . import _native
from ._dtypes import from_type_string
from ._object import HLObject, ObjectID, TypeID, register


class Datatype(HLObject):
    """A committed datatype of an open file.

    ``Datatype(bind)`` takes the native handle of a committed datatype
    (``ValueError`` for anything else); objects are reached as
    ``group[name]``::

        f["t"] = np.dtype([("x", "<f4"), ("y", "<f4")])
        f["t"].dtype.names          # ('x', 'y')
        f["t"] == f["t"]            # True
    """

    def __init__(self, bind, file=None):
        # ``Datatype(t.id)``: the id of a committed datatype, as in h5py.
        if isinstance(bind, TypeID) and bind.committed():
            bind = bind._committed
        if isinstance(bind, ObjectID):
            file, bind = bind._file, bind._id
        if not isinstance(bind, _native.NamedType):
            raise ValueError(f"{bind!r} is not a committed datatype")
        super().__init__(file, bind)

    @property
    def id(self):
        """This type's identifier, as h5py's ``TypeID`` of a committed
        type: ``committed()`` is true, ``dtype`` the type, and it equals the
        type of every dataset made with it (``ds.id.get_type()``)."""
        return TypeID(self.dtype, ObjectID(self._file, self._id))

    @property
    def dtype(self):
        """The numpy dtype this type stands for."""
        return from_type_string(self._id.dtype())

    @property
    def name(self):
        """Absolute path of this type (None once no name leads to it)."""
        return self._id.path or None

    def __repr__(self):
        if self._file is None or not self:
            return "<Closed arca named type>"
        name = self.name
        shown = '("anonymous")' if name is None else f'"{posixpath.basename(name) or "/"}"'
        return f"<arca named type {shown} (dtype {self.dtype.str})>"


register("datatype", Datatype)
