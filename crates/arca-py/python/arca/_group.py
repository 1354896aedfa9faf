"""Groups: named containers of groups and datasets, addressed by paths."""

import contextlib
import posixpath
from collections import abc
from collections.abc import MutableMapping

import numpy as np

from . import _create, _links, _native, _vds
from ._dataset import Dataset
from ._datatype import Datatype
from ._dims import detach_everywhere
from ._dtypes import Reference, check_vlen_dtype, has_refs, type_string
from ._errors import ReadOnlyError, ReadOnlyKeyError, ReadOnlyRuntimeError, ReadOnlyValueError
from ._object import HLObject, ObjectID, register, wrap
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

    def __init__(self, file, gid=None):
        if gid is None:
            # h5py's Group(id), from an ObjectID (obj.id).
            if not isinstance(file, ObjectID) or not isinstance(file._id, _native.Group):
                raise ValueError(f"{file!r} is not a group identifier")
            file, gid = file._file, file._id
        super().__init__(file, gid)

    def __repr__(self):
        if not self:
            return "<Closed arca Group>"
        name = "(anonymous)" if self.name is None else f'"{self.name}"'
        return f"<arca Group {name} ({len(self)} members)>"

    # -- mapping ---------------------------------------------------------------
    def __getitem__(self, name):
        if isinstance(name, Reference):
            if not name:
                raise ValueError("Invalid HDF5 object reference")
            return wrap(self._file, self._id.dereference(name._oid))
        return wrap(self._file, self._id.object(member_path(name)))

    def get(self, name, default=None, getclass=False, getlink=False,
            elink_mode=None, elink_locking=None, elink_swmr=None):
        """The object at ``name``, or ``default`` if there is none. With
        ``getclass``, its class; with ``getlink``, the link itself
        (:class:`SoftLink`, :class:`ExternalLink` or :class:`HardLink`, or
        with ``getclass`` too, the link's class)::

            f.get("missing")                       # None
            f.get("latest", getlink=True)          # <SoftLink to "/runs/42">
            f.get("runs", getclass=True)           # arca.Group

        A file behind an external link opens with this file's intent
        (writable from a writable file when it can be), or as
        ``elink_mode`` (``"r"`` or ``"r+"``) asks; ``elink_swmr`` and
        ``elink_locking`` are checked as h5py checks them::

            f.get("ext", elink_mode="r").file.mode   # "r"
        """
        _check_elink(self._file, elink_mode, elink_swmr, elink_locking)
        if not (getclass or getlink):
            try:
                if elink_mode is None or isinstance(name, Reference):
                    obj = self[name]
                else:
                    obj = wrap(self._file, self._id.object(member_path(name),
                                                          elink_mode == "r+"))
            except KeyError:
                return default
            if elink_swmr is not None and obj.file is not self._file:
                obj.file._swmr = bool(elink_swmr)
            return obj
        if name not in self:
            return default
        if getlink:
            link = _links.from_native(self._link(member_path(name)))
            return type(link) if getclass else link
        try:
            return type(self[name])
        except KeyError as e:
            # The name is there (a dangling link): h5py cannot tell its class.
            raise RuntimeError(f"Unable to get object info (dangling link): {name!r}") from e

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
                self._id.link_object(path, value._id)
                if value.name is None:
                    # Named now: the handle takes the name, as in h5py.
                    value._id = self._id.object(path)
                return None
        except ValueError as e:
            if name in self:
                # h5py reports a taken link name as OSError.
                raise OSError(f"Unable to create link (name already exists): {name!r}") from e
            raise
        try:
            self.create_dataset(name, data=value)
        except ReadOnlyError as e:
            if isinstance(e, ValueError):
                raise
            raise ReadOnlyValueError(f"Unable to create dataset (no write intent on file): "
                                     f"{name!r}") from e

    def __delitem__(self, name):
        path = member_path(name)
        # A dimension scale that goes is detached from the datasets using
        # it first (when this is its last name).
        try:
            link = self._id.link(path)
        except KeyError:
            link = None
        try:
            if link is not None and link[0] == "hard" and link[1] == "dataset":
                obj = self[path]
                if obj.is_scale and self._id.link_count(obj._id.id) == 1:
                    detach_everywhere(obj)
            self._id.delete(path)
        except ReadOnlyError as e:
            # h5py: an unlink that fails is a KeyError, whatever the cause.
            raise ReadOnlyKeyError(f"Couldn't delete link (no write intent on file): {name!r}") from e

    def __contains__(self, name):
        """Whether ``name`` is a link here (as in h5py, a dangling soft or
        external link counts: its name is taken). ``"."``, ``"/"`` and
        paths with empty or ``"."`` components (``"a//b/"``, ``"./a"``)
        mean what they do in h5py; the empty name is never contained, and
        nothing is in a closed file."""
        path = member_path(name)
        if not path:
            return False
        if not path.strip("/") or ("." in path and all(p in ("", ".") for p in path.split("/"))):
            return bool(self)
        try:
            self._id.link(path)
            return True
        except (KeyError, ValueError):
            pass
        try:
            self._link_beyond(path)
            return True
        except (KeyError, ValueError):
            # No such link, a name that cannot exist (".."), or a closed file.
            return False

    def _link(self, path):
        """The native link tuple at ``path``, following soft and external
        links on the way to its last component (as h5py's lookups do)."""
        try:
            return self._id.link(path)
        except (KeyError, ValueError):
            return self._link_beyond(path)

    def _link_beyond(self, path):
        """The link at ``path`` when the native lookup cannot reach it: the
        group holding it opened through the links on the way (an external
        link's file, a soft link's target)."""
        parent, _, last = path.rstrip("/").rpartition("/")
        if not parent.strip("/") or not last:
            raise KeyError(path)
        found = self._id.object(parent)
        if type(found) is tuple:
            found = found[0]
        if not isinstance(found, _native.Group):
            raise KeyError(path)
        return found.link(last)

    def __iter__(self):
        return iter(self._id.member_names())

    def __reversed__(self):
        """Member names, last first (the reverse of iteration order)."""
        return reversed(self._id.member_names())

    def __len__(self):
        return int(self._id.len())

    def keys(self):
        """A view of the member names (``reversed()`` works on it)."""
        return KeysView(self)

    def values(self):
        """A view of the members; a dangling link gives None, as in h5py."""
        return ValuesView(self)

    def items(self):
        """A view of ``(name, member)`` pairs; a dangling link's member is None."""
        return ItemsView(self)

    # -- creation ----------------------------------------------------------------
    def create_group(self, name, track_order=None, *, track_times=False):
        """Create a group (and missing parents); ValueError if the name is
        taken. ``track_order=True`` lists its members in creation order
        (kept on reopen). ``name=None`` makes an anonymous group, as in
        h5py: its name is None until a link names it (``f["g"] = grp``);
        unlinked, it is freed when the file is closed::

            tmp = f.create_group(None)
            f["kept"] = tmp          # tmp.name == "/kept"
        """
        try:
            if track_times not in (None, True, False):
                raise TypeError("track_times must be either True or False")
            gid = self._id.create_group(None if name is None else member_path(name),
                                        bool(track_order), None, bool(track_times))
        except ReadOnlyError as e:
            raise ReadOnlyValueError("Unable to create group (no write intent on file)") from e
        return Group(self._file, gid)

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

    def create_dataset(self, name, shape=None, dtype=None, data=None, **kwds):
        """Create a dataset, as h5py's ``create_dataset``; every dataset is
        an :class:`arca.Dataset`::

            ds = g.create_dataset("x", shape=(10,), dtype="i4", compression="zstd")
            g.create_dataset("s", data=["a", "bc"])     # variable-length strings

        ``name=None`` makes an anonymous dataset (as ``create_group(None)``
        makes a group).
        ``shape``/``dtype`` describe it, or ``data`` gives both and the
        contents (str or bytes data, and lists of them, make variable-length
        strings; dtype defaults to float32). No shape and no data with a
        dtype is a null dataspace (``Empty``). Keywords:

        * ``chunks``: a tuple (or int), True for an automatic shape, False
          or None; datasets are chunked when filters or ``maxshape`` need it.
          ``maxshape``: entries of None are unlimited (True: all of them).
        * ``compression``: ``"gzip"`` (or a level 0-9, or True),
          ``"zstd"``, ``"lz4"``, ``"lzf"``, an HDF5 filter id, or a filter
          object (``arca.filters.Gzip(8)``), with ``compression_opts`` its
          level or values; ``shuffle`` adds the byte-shuffle filter. gzip,
          zstd and lz4 are arca's own pipeline; ``"lzf"``,
          ``fletcher32=True`` and filter ids make an HDF5 pipeline, stored
          as HDF5 stores it (arca encodes deflate, shuffle, fletcher32, lzf,
          lz4 (32004) and zstd (32015); ``allow_unknown_filter=True`` takes
          another id, whose chunks are then written already filtered).
          ``hdf5_filters`` gives a whole HDF5 pipeline as h5py's
          ``get_filter`` lists it, ``[(id, flags, values, name)]`` (how
          ``arca import`` keeps filters arca has no codec for).
          ``scaleoffset``: refused (no codec; files using it are imported
          with their chunks kept as stored).
        * ``fillvalue`` is shown where nothing was written (string types
          too, variable-length ones included; sequences take none, as in
          h5py). ``fill_time`` (HDF5's, kept in the file and given back
          by ``ds.id.get_create_plist().get_fill_time()``): ``"ifset"``
          (default) and ``"alloc"`` show the fill value there (arca writes
          no fill bytes either way); with ``"never"`` unwritten elements
          read as zero bytes and ``fillvalue`` still gives the value (a
          variable-length dataset keeps none).
        * ``track_order=True`` lists the dataset's attributes in creation
          order. ``track_times=True`` records when the dataset was made
          and its header last changed (``arca.h5g.get_objinfo(ds).mtime``;
          off by default, as in h5py).
        * ``rdcc_nbytes`` sets this handle's chunk cache; ``rdcc_nslots``
          and ``rdcc_w0`` have no effect (arca's cache is not hashed).
          ``virtual_prefix`` has no effect (virtual sources resolve by
          their own paths). ``dcpl``/``dapl`` (libhdf5 property lists) are
          refused.
        * ``external``: the elements live outside the file, as h5py's
          external storage: a file name, or ``(name, offset, size)`` tuples
          whose segments hold the elements in order (size
          ``2**64 - 1``, h5py's ``h5f.UNLIMITED``, for no end; last only).
          Contiguous: no chunks or filters; only the first dimension may
          grow, within the segments. Relative names are found from the
          current directory, as HDF5 finds them, or under ``efile_prefix``
          (``"${ORIGIN}"``: the arca file's directory), which applies to
          the handle returned (and to ``require_dataset``'s). The files are
          made at the first write, written in place (outside the arca
          file's transactions); a missing one is an OSError when read, and
          bytes past a short one's end read as zeros, as in HDF5. Scalar
          and empty datasets ignore it, as in h5py::

              ds = g.create_dataset("x", (100,), "f4", external=[("x.raw", 0, 400)])
        * ``layout``: ``"compact"`` (elements in the dataset's header, under
          4 KiB, fixed shape), ``"contiguous"`` or ``"chunked"``; by default
          fixed-shape datasets up to 1 KiB are compact, larger ones
          contiguous.
        * Variable-length types (``arca.string_dtype()``,
          ``arca.vlen_dtype(base)``, ``str``, object arrays) take ``vlen_*``
          options for their byte vector (see ``arca._vlen``).
        """
        if not kwds and shape is None and dtype is None:
            ds = _create.create_plain(self, name, data)
            if ds is not None:
                return ds
        return _create.create_dataset(self, name, shape, dtype, data, **kwds)

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
        """Open the dataset at ``name`` if its shape and dtype fit, else create
        it with ``kwds``, as h5py's::

            ds = g.require_dataset("x", (10,), "f4")

        TypeError if something incompatible is there: a group, another
        shape (or, with ``maxshape`` given, another maxshape), or a dtype
        that differs (``exact``) or cannot hold ``dtype``. ``rdcc_nbytes``
        sets the chunk cache of the dataset opened.
        """
        return _create.require_dataset(self, name, shape, dtype, exact, **kwds)

    def create_dataset_like(self, name, other, **kwupdate):
        """Create a dataset shaped, typed, chunked, filtered and filled like
        ``other`` (no data, no attributes); keywords override, as h5py's::

            g.create_dataset_like("y", g["x"], shape=(20,))
        """
        return _create.create_dataset_like(self, name, other, **kwupdate)

    # -- moving, copying and walking ---------------------------------------------
    def copy(self, source, dest, name=None, shallow=False, expand_soft=False,
             expand_external=False, expand_refs=False, without_attrs=False):
        """Copy a group (recursively) or dataset, with its attributes and
        creation settings, possibly into another open file.

        ``source`` is a path relative to this group (links followed) or a
        Group/Dataset. ``dest`` is a Group, where the copy is named
        ``name`` (default: the source's own name), or a path relative to
        this group; missing groups on the way are created. As in h5py:

        * ``shallow``: copy only a group's direct members (its subgroups
          come empty, with their attributes);
        * ``expand_soft`` / ``expand_external``: in place of a soft or
          external link, a copy of what it leads to (a dangling one stays
          a link);
        * ``expand_refs``: object references in the copy's attributes (and
          in datasets' data, in a copy to another file) lead to copies of
          the objects they named: the copy of an object that is itself
          copied, else a new copy linked at the destination file's root as
          ``~obj_pointed_by_<id>``, as HDF5 2 names them. Without it, those
          references are null, as HDF5 leaves them. References in
          datasets' data copied within one file are kept as they are;
        * ``without_attrs``: no attributes.

        An object with several names inside the copied group is copied once
        and keeps its names. RuntimeError if the source does not exist or
        the destination name is taken, as in h5py::

            f.copy("run1", "run1_backup")
            f.copy(f["run1/x"], other_file["/"], name="x", without_attrs=True)
        """
        if isinstance(source, HLObject):
            src = source
        else:
            try:
                src = self[member_path(source)]
            except KeyError as e:
                raise RuntimeError(f"Unable to copy object (object {source!r} doesn't exist)") from e
        if not isinstance(src, (Group, Dataset, Datatype)):
            raise TypeError("source must be a path, Group, Dataset or Datatype")
        if isinstance(dest, Group):
            target = dest
            path = member_path(name) if name is not None else posixpath.basename(src.name)
            if not path:
                raise RuntimeError("Unable to copy object (no destination name specified)")
        elif isinstance(dest, HLObject):
            raise TypeError("Destination must be path or Group object")
        else:
            target, path = self, member_path(dest)
        if path in target:
            raise RuntimeError(f"Unable to copy object (destination object already exists): {path!r}")
        try:
            _Copier(target.file, shallow, expand_soft, expand_external, expand_refs,
                    without_attrs).run(src, target, path)
        except ReadOnlyError as e:
            raise ReadOnlyRuntimeError("Unable to copy object (no write intent on file)") from e

    def move(self, source, dest):
        """Move or rename the link at ``source`` to ``dest`` (missing groups
        on the way are created); a soft or external link moves as it is.
        ValueError if ``source`` does not exist or ``dest`` is taken."""
        source, dest = member_path(source), member_path(dest)
        if source == dest:
            return
        if source not in self:
            raise ValueError(f"Unable to move link (name doesn't exist): {source!r}")
        if dest in self:
            raise ValueError(f"Unable to move link (name already exists): {dest!r}")
        try:
            parent = posixpath.dirname(dest.rstrip("/"))
            if parent and parent.strip("/") and parent not in self:
                self.create_group(parent)
            self._id.rename(source, dest)
        except ReadOnlyError as e:
            raise ReadOnlyValueError("Unable to move link (no write intent on file)") from e

    # -- walking -----------------------------------------------------------------
    def _walk(self, links=False):
        # Depth first, parents before children, siblings in name order: the
        # order h5py visits in. Streamed in batches from the native walk,
        # which holds only the groups it is inside: a million objects cost
        # no list of a million paths.
        for batch in self._id.walk(links):
            yield from batch

    def visit(self, func):
        """Call ``func(name)`` for every object below, depth first in name
        order; stop and return the first value that is not None. An object
        with several names is visited once, under the first met. Objects
        are found as the walk goes: ``func`` may change the file (a member
        removed before the walk reaches it is not visited)::

            names = []
            f.visit(names.append)       # ["a", "a/b", ...]
        """
        for path, _kind in self._walk():
            r = func(path)
            if r is not None:
                return r
        return None

    def visititems(self, func):
        """Like :meth:`visit`, calling ``func(name, object)``::

            f.visititems(lambda name, obj: print(name, obj.shape)
                         if isinstance(obj, arca.Dataset) else None)
        """
        for path, _kind in self._walk():
            r = func(path, self[path])
            if r is not None:
                return r
        return None

    def visit_links(self, func):
        """Call ``func(name)`` for every link below, soft and external ones
        included (not followed), depth first in name order; stop and
        return the first value that is not None."""
        for path, _ in self._walk(links=True):
            r = func(path)
            if r is not None:
                return r
        return None

    def visititems_links(self, func):
        """Like :meth:`visit_links`, calling ``func(name, link)`` with a
        :class:`HardLink`, :class:`SoftLink` or :class:`ExternalLink`."""
        for path, t in self._walk(links=True):
            r = func(path, _links.from_native(t))
            if r is not None:
                return r
        return None


class KeysView(abc.KeysView):
    """``group.keys()``: the member names, in iteration order::

        list(reversed(f.keys()))     # last member first
    """

    def __reversed__(self):
        return reversed(self._mapping)

    def __repr__(self):
        return f"<KeysView {list(self)}>"


class ValuesView(abc.ValuesView):
    """``group.values()``: the members (None for a dangling link, as h5py)::

        [obj.name for obj in f.values() if obj is not None]
    """

    def __iter__(self):
        for key in self._mapping:
            yield self._mapping.get(key)

    def __reversed__(self):
        for key in reversed(self._mapping):
            yield self._mapping.get(key)

    def __contains__(self, value):
        return any(value == v for v in self)


class ItemsView(abc.ItemsView):
    """``group.items()``: ``(name, member)`` pairs (None for a dangling link)::

        ("x", f["x"]) in f.items()   # True
    """

    def __iter__(self):
        for key in self._mapping:
            yield key, self._mapping.get(key)

    def __reversed__(self):
        for key in reversed(self._mapping):
            yield key, self._mapping.get(key)

    def __contains__(self, item):
        key, value = item
        return key in self._mapping and value == self._mapping.get(key)


def _check_elink(file, mode, swmr, locking):
    """h5py's checks of ``get``'s external-link keywords."""
    if mode is None and swmr is None and locking is None:
        return
    if file.mode == "r" and mode == "r+":
        raise ValueError("Opening external links in write mode from a file opened in "
                         "read-only mode is not supported")
    if mode is not None or swmr is not None:
        want = file.mode if mode is None else mode
        want_swmr = file.swmr_mode if swmr is None else swmr
        if file.mode == "r+" and file.swmr_mode and (want != "r+" or not want_swmr):
            raise ValueError("Changing external links access mode from a file opened in "
                             "SWMR write mode is not supported")
        if want not in ("r", "r+"):
            raise RuntimeError(f"Unsupported link access mode: {want}")
    if locking not in (None, True, False, "true", "false", "best-effort"):
        raise ValueError(f"Unsupported locking value: {locking}")


# Datasets larger than this are copied in slabs along their first axis.
_COPY_SLAB_BYTES = 64 << 20


def _holds_refs(dt):
    """Whether elements of ``dt`` hold object references (in fields,
    sub-arrays or variable-length sequences)."""
    base = check_vlen_dtype(dt)
    if isinstance(base, np.dtype):
        return _holds_refs(base)
    return has_refs(dt)


def _map_refs(value, fn):
    """``value`` (an attribute's or dataset's contents) with every
    Reference in it replaced by ``fn(reference)``."""
    if isinstance(value, Reference):
        return fn(value)
    if isinstance(value, np.void) and value.dtype.names:
        return _map_refs(np.array(value), fn)[()]
    if isinstance(value, np.ndarray):
        if value.dtype.names:
            out = value.copy()
            for n in value.dtype.names:
                out[n] = _map_refs(value[n], fn)
            return out
        if value.dtype.kind == "O":
            out = np.empty(value.shape, dtype=value.dtype)
            flat = out.reshape(-1)
            for i, x in enumerate(value.reshape(-1)):
                flat[i] = _map_refs(x, fn)
            return out
    return value


class _Copier:
    """One ``Group.copy``: each source object copied once (later names of
    it become hard links to the copy), then references in the copies
    rewritten (see ``Group.copy``)."""

    def __init__(self, dest_file, shallow, expand_soft, expand_external, expand_refs,
                 without_attrs):
        self.dest_file = dest_file
        self.shallow = shallow
        self.expand_soft = expand_soft
        self.expand_external = expand_external
        self.expand_refs = expand_refs
        self.without_attrs = without_attrs
        # (id(source file), object id) -> the copy.
        self.done = {}
        # Copies holding references, with the source file they name
        # objects of: (copy, attribute name or None for the data, file).
        self.with_refs = []

    def run(self, src, target, path):
        self.object(src, target, path, 1 if self.shallow else -1)
        while self.with_refs:
            obj, attr, src_file = self.with_refs.pop()
            self.rewrite(obj, attr, src_file)

    def object(self, src, target, path, depth):
        """Copy ``src`` to ``target[path]``; ``depth`` < 0 means all levels."""
        key = (id(src.file), src._id.id)
        if key in self.done:
            target[path] = self.done[key]
            return self.done[key]
        order = src._id.attrs().track_order()
        if isinstance(src, Datatype):
            # The type as stored (string padding and character set kept).
            target._id.commit_type(member_path(path), src._id.dtype())
            out = target[path]
            self.done[key] = out
        elif isinstance(src, Dataset):
            out = _copy_dataset(src, target, path, order)
            self.done[key] = out
            # As HDF5: references in a dataset's data are kept as they are
            # within one file, and rewritten only in a copy to another.
            if _holds_refs(src.dtype) and src.file is not self.dest_file:
                self.with_refs.append((out, None, src.file))
        else:
            # The members as they are before the copy (which may land inside).
            names = list(src) if depth != 0 else []
            out = target.create_group(path, track_order=src._id.track_order())
            self.done[key] = out
            for name in names:
                self.member(src, name, out, depth - 1)
        if not self.without_attrs:
            self.attributes(src, out)
        return out

    def member(self, group, name, out, depth):
        kind = group._id.link(name)
        if kind[0] == "hard":
            self.object(group[name], out, name, depth)
            return
        expand = self.expand_soft if kind[0] == "soft" else self.expand_external
        found = group.get(name) if expand else None
        if found is None:
            out[name] = _links.from_native(kind)
        else:
            self.object(found, out, name, depth)

    def attributes(self, src, out):
        """Every attribute as stored (type, shape and bytes)."""
        a, b = src._id.attrs(), out._id.attrs()
        for k in a.names():
            t, shape, data = a.get(k)
            if shape is None:
                b.set_empty(k, t)
                continue
            b.set(k, t, shape, data)
            if _holds_refs(out.attrs.get_id(k).dtype):
                self.with_refs.append((out, k, src.file))

    def rewrite(self, obj, attr, src_file):
        def fn(ref):
            if not ref or not self.expand_refs:
                return Reference()
            return self.referenced(src_file, ref).ref

        if attr is None:
            obj[()] = _map_refs(obj[()], fn)
        else:
            obj.attrs.modify(attr, _map_refs(obj.attrs[attr], fn))

    def referenced(self, src_file, ref):
        """The copy of the object ``ref`` names in ``src_file``: made now,
        at the destination's root, unless it was copied already."""
        key = (id(src_file), ref._oid)
        if key not in self.done:
            try:
                src = src_file[ref]
            except (KeyError, ValueError):
                return Reference()
            root = self.dest_file["/"]
            self.object(src, root, f"~obj_pointed_by_{ref._oid}", 1 if self.shallow else -1)
        return self.done[key]


def _copy_dataset(src, target, path, track_order):
    if src.external is not None:
        # The list, as HDF5 copies it: the elements stay in the external
        # files, which the copy names as the original did.
        return target.create_dataset(
            path, shape=src.shape, dtype=src.dtype, maxshape=src.maxshape,
            fillvalue=src.fillvalue, track_order=track_order, external=src.external)
    out = target.create_dataset(
        path,
        shape=src.shape,
        dtype=src.dtype,
        chunks=src.chunks,
        maxshape=src.maxshape if src.chunks is not None else None,
        fillvalue=src.fillvalue,
        track_order=track_order,
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
    return out


register("group", Group)
