"""Groups: named containers of groups and datasets, addressed by paths."""

import contextlib
import posixpath
from collections.abc import MutableMapping

import numpy as np

from . import _create, _links, _vds
from ._dataset import Dataset
from ._datatype import Datatype
from ._dims import detach_everywhere
from ._dtypes import Reference, type_string
from ._object import HLObject, register, wrap
from ._util import member_path


class Group(HLObject, MutableMapping):
    """A group: a mapping from names to groups and datasets.

    Paths may be relative (``"a/b"``) or absolute (``"/a/b"``); missing
    intermediate groups are created by ``create_group``/``create_dataset``::

        g = f.create_group("sim/run1")
        g["x"] = np.arange(10)              # shorthand for create_dataset
        "run1/x" in f["sim"]                # True
        for name, obj in g.items(): ...
        del g["x"]
    """

    def __init__(self, file, gid):
        super().__init__(file, gid)

    def __repr__(self):
        if not self:
            return "<Closed arca Group>"
        return f'<arca Group "{self.name}" ({len(self)} members)>'

    # -- mapping ---------------------------------------------------------------
    def __getitem__(self, name):
        if isinstance(name, Reference):
            if not name:
                raise ValueError("Invalid HDF5 object reference")
            return wrap(self._file, self._id.dereference(name._oid))
        return wrap(self._file, self._id.object(member_path(name)))

    def get(self, name, default=None, getclass=False, getlink=False):
        """The object at ``name``, or ``default`` if there is none. With
        ``getclass``, its class; with ``getlink``, the link itself
        (:class:`SoftLink`, :class:`ExternalLink` or :class:`HardLink`, or
        with ``getclass`` too, the link's class)."""
        if not (getclass or getlink):
            try:
                return self[name]
            except KeyError:
                return default
        if name not in self:
            return default
        if getlink:
            link = _links.from_native(self._id.link(member_path(name)))
            return type(link) if getclass else link
        return type(self[name])

    def __setitem__(self, name, value):
        """``g[name] = SoftLink(path) | ExternalLink(file, path)`` makes a
        link; ``g[name] = obj`` (a group, dataset or committed datatype of
        this file) gives ``obj`` a second name; ``g[name] = np.dtype(...)``
        commits the type (:class:`arca.Datatype`); anything else becomes a
        new dataset."""
        path = member_path(name)
        if isinstance(value, np.dtype):
            if name in self:
                # As h5py: a taken name refuses a commit with KeyError.
                raise KeyError(f"Unable to commit datatype (name already exists): {name!r}")
            # Any type a dataset may hold, variable-length ones included.
            return self._id.commit_type(path, type_string(value))
        try:
            if isinstance(value, _links.SoftLink):
                return self._id.link_soft(path, value.path)
            if isinstance(value, _links.ExternalLink):
                return self._id.link_external(path, value.filename, value.path)
            if isinstance(value, (Group, Dataset, Datatype)):
                if value.file is not self.file:
                    raise ValueError("a hard link cannot lead into another file")
                return self._id.link_hard(value.name, path)
        except ValueError as e:
            if name in self:
                # h5py reports a taken link name as OSError.
                raise OSError(f"Unable to create link (name already exists): {name!r}") from e
            raise
        self.create_dataset(name, data=value)

    def __delitem__(self, name):
        path = member_path(name)
        # A dimension scale that goes is detached from the datasets using
        # it first (when this is its last name).
        try:
            link = self._id.link(path)
        except KeyError:
            link = None
        if link is not None and link[0] == "hard" and link[1] == "dataset":
            obj = self[path]
            if obj.is_scale and self._id.link_count(obj._id.id) == 1:
                detach_everywhere(obj)
        self._id.delete(path)

    def __contains__(self, name):
        """Whether ``name`` is a link here (as in h5py, a dangling soft or
        external link counts: its name is taken)."""
        if not isinstance(name, (str, bytes)):
            return False
        path = member_path(name)
        if path.strip("/") == "":
            return True
        try:
            self._id.link(path)
            return True
        except KeyError:
            return False
        except ValueError:
            if not self:
                raise
            return False  # a name that cannot exist, e.g. one with ".."

    def __iter__(self):
        return iter(self._id.member_names())

    def __len__(self):
        return int(self._id.len())

    # -- creation ----------------------------------------------------------------
    def create_group(self, name, track_order=None):
        """Create a group (and missing parents); ValueError if the name is
        taken. ``track_order=True`` lists its members in creation order
        (kept on reopen)."""
        return Group(self._file, self._id.create_group(member_path(name), bool(track_order)))

    def require_group(self, name):
        """Open the group at ``name``, creating it if absent.

        TypeError if a dataset is there.
        """
        name = member_path(name)
        if name in self:
            obj = self[name]
            if not isinstance(obj, Group):
                raise TypeError(f"Incompatible object (Dataset) already exists at {name!r}")
            return obj
        return self.create_group(name)

    def create_dataset(
        self,
        name,
        shape=None,
        dtype=None,
        data=None,
        chunks=None,
        maxshape=None,
        compression=None,
        compression_opts=None,
        shuffle=False,
        fillvalue=None,
        layout=None,
        fletcher32=False,
        scaleoffset=None,
        hdf5_filters=None,
        track_order=None,
        **vlen_options,
    ):
        """Create a dataset.

        ``shape``/``dtype`` describe it, or ``data`` gives both and the
        contents (dtype defaults to float32 without data). ``chunks`` is a
        tuple, True for an automatic shape, or None (chunked only when
        filters or ``maxshape`` need it). ``maxshape`` entries of None are
        unlimited. ``compression`` is ``"gzip"`` (or an int level),
        ``"zstd"`` or ``"lz4"``, with ``compression_opts`` the level;
        ``shuffle`` adds the byte-shuffle filter. As in h5py, ``"lzf"``,
        ``fletcher32=True`` and an HDF5 filter id as ``compression`` (with
        its values as ``compression_opts``, as hdf5plugin gives them) make
        an HDF5 filter pipeline, stored exactly as HDF5 stores it; arca
        encodes deflate, shuffle, fletcher32, lzf, lz4 (32004) and zstd
        (32015). ``hdf5_filters`` gives a whole HDF5 pipeline as h5py's
        ``get_filter`` lists it, ``[(id, flags, values, name)]``; its
        chunks can then be written as stored whatever the filters (this is
        how ``arca import`` keeps filters arca has no codec for), and read
        where arca has the codecs. ``fillvalue`` is shown
        where nothing was written. ``track_order=True`` lists the dataset's
        attributes in creation order. ``layout`` is ``"compact"`` (elements
        kept in the dataset's header, under 4 KiB, fixed shape),
        ``"contiguous"`` or ``"chunked"``; by default datasets of fixed shape
        up to 1 KiB are compact, larger ones contiguous, and chunked when
        chunks, filters or ``maxshape`` ask for it. Variable-length types (``arca.string_dtype()``,
        ``arca.vlen_dtype(base)``, ``str``, object arrays) take ``vlen_*``
        options for their byte vector (see ``arca._vlen``). Every dataset
        is an :class:`arca.Dataset`::

            ds = g.create_dataset("x", shape=(10,), dtype="i4", compression="zstd")

        """
        return _create.create_dataset(
            self, name, shape, dtype, data, chunks, maxshape, compression, compression_opts,
            shuffle, fillvalue, layout, fletcher32, scaleoffset, hdf5_filters, track_order,
            **vlen_options)

    def create_virtual_dataset(self, name, layout, fillvalue=None):
        """Create a virtual dataset from a :class:`arca.VirtualLayout`: its
        elements are read, when asked for, from the sources the layout maps
        (``fillvalue`` where none does or a source is missing); see
        ``arca._vds``::

            layout = arca.VirtualLayout((3, 5), "f8")
            layout[0] = arca.VirtualSource(f["x"])
            f.create_virtual_dataset("v", layout, fillvalue=-1)
        """
        return _vds.create_virtual_dataset(self, name, layout, fillvalue)

    @contextlib.contextmanager
    def build_virtual_dataset(self, name, shape, dtype, maxshape=None, fillvalue=None):
        """A :class:`arca.VirtualLayout` to fill in a ``with`` block; the
        virtual dataset is created when the block ends::

            with f.build_virtual_dataset("v", (2, 10), "f4") as layout:
                layout[0] = arca.VirtualSource("a.arca", "x", shape=(10,))
        """
        layout = _vds.VirtualLayout(shape, dtype, maxshape, self.file.filename)
        yield layout
        self.create_virtual_dataset(name, layout, fillvalue)

    def require_dataset(self, name, shape, dtype, exact=False, **kwds):
        """Open the dataset at ``name`` if its shape and dtype fit, else create it.

        TypeError if something incompatible is there: a group, another
        shape, or a dtype that differs (``exact``) or cannot hold ``dtype``.
        """
        return _create.require_dataset(self, name, shape, dtype, exact, **kwds)

    # -- moving, copying and walking ---------------------------------------------
    def copy(self, source, dest, name=None, shallow=False, without_attrs=False):
        """Copy a group (recursively) or dataset, with its attributes and
        creation settings, possibly into another open file.

        ``source`` is a path relative to this group or a Group/Dataset.
        ``dest`` is a Group, where the copy is named ``name`` (default: the
        source's own name), or a path relative to this group. ``shallow``
        copies only a group's direct members; ``without_attrs`` skips
        attributes.
        """
        src = self[source] if isinstance(source, (str, bytes)) else source
        if not isinstance(src, (Group, Dataset, Datatype)):
            raise TypeError("source must be a path, Group, Dataset or Datatype")
        if isinstance(dest, Group):
            target = dest
            path = member_path(name) if name is not None else (posixpath.basename(src.name) or None)
            if path is None:
                raise ValueError("copying the root group needs a name")
        elif isinstance(dest, (str, bytes)):
            target, path = self, member_path(dest)
        else:
            raise TypeError("Destination must be path or Group object")
        _copy_object(src, target, path, 1 if shallow else -1, without_attrs)

    # -- walking -----------------------------------------------------------------
    def move(self, source, dest):
        """Move or rename the object at ``source`` to ``dest``."""
        source, dest = member_path(source), member_path(dest)
        if source == dest:
            return
        self._id.rename(source, dest)

    def _walk(self):
        # Depth first, parents before children, siblings in name order: the
        # order h5py visits in.
        return sorted((p for p, _ in self._id.visit()), key=lambda p: p.split("/"))

    def visit(self, func):
        """Call ``func(name)`` for every object below, depth first in name
        order; stop and return the first value that is not None."""
        for path in self._walk():
            r = func(path)
            if r is not None:
                return r
        return None

    def visititems(self, func):
        """Like :meth:`visit`, calling ``func(name, object)``."""
        for path in self._walk():
            r = func(path, self[path])
            if r is not None:
                return r
        return None

    def visit_links(self, func):
        """Call ``func(name)`` for every link below, soft and external ones
        included (not followed), depth first; stop and return the first
        value that is not None."""
        for path, _ in self._id.visit_links():
            r = func(path)
            if r is not None:
                return r
        return None

    def visititems_links(self, func):
        """Like :meth:`visit_links`, calling ``func(name, link)`` with a
        :class:`HardLink`, :class:`SoftLink` or :class:`ExternalLink`."""
        for path, t in self._id.visit_links():
            r = func(path, _links.from_native(t))
            if r is not None:
                return r
        return None


# Datasets larger than this are copied in slabs along their first axis.
_COPY_SLAB_BYTES = 64 << 20


def _copy_object(src, target, path, depth, without_attrs):
    """Copy ``src`` to ``target[path]``; ``depth`` < 0 means all levels."""
    if isinstance(src, Datatype):
        target[path] = src.dtype
        out = target[path]
    elif isinstance(src, Dataset):
        out = target.create_dataset(
            path,
            shape=src.shape,
            dtype=src.dtype,
            chunks=src.chunks,
            maxshape=src.maxshape if src.chunks is not None else None,
            fillvalue=src.fillvalue,
            **src._filter_options(),
            **getattr(src, "_create_options", dict)(),
        )
        shape = src.shape
        if shape and src.nbytes > _COPY_SLAB_BYTES and shape[0] > 1:
            row = max(1, src.nbytes // shape[0])
            step = max(1, _COPY_SLAB_BYTES // row)
            for i in range(0, shape[0], step):
                out[i : i + step] = src[i : i + step]
        elif src.size:
            out[...] = src[...]
    else:
        out = target.create_group(path)
        if depth != 0:
            for name in src:
                _copy_object(src[name], out, name, depth - 1, without_attrs)
    if not without_attrs:
        for k in src.attrs:
            out.attrs[k] = src.attrs[k]
    return out


register("group", Group)
