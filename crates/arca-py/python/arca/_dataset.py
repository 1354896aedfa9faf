"""Datasets: typed n-dimensional arrays, read and written with numpy indexing."""

import codecs
import itertools
import posixpath

import numpy as np

from . import _dims, _native, _selection, _vlen
from ._dtypes import (
    Empty,
    as_array,
    as_elements,
    from_type_string,
    has_refs,
    native,
    objects_to_refs,
    repad,
    strpad,
    unpad,
)
from ._object import HLObject, ObjectID, register
from ._regionref import RegionReference, read_region
from ._vds import virtual_sources
from ._util import prod

# A list index whose span is at most this many times its length is read as
# one box and picked from in memory; sparser ones are read index by index.
_DENSE_SPAN = 4


# HDF5 compressors by id, as h5py names them.
_H5_COMPRESSORS = {1: "gzip", 32000: "lzf", 32004: "lz4", 32015: "zstd", 4: "szip"}
# arca's own filters: the HDF5 id and name each stands for.
_OWN_FILTERS = {"shuffle": (2, "shuffle"), "gzip": (1, "deflate"), "zstd": (32015, "zstd"),
                "lz4": (32004, "lz4")}


class Dataset(HLObject):
    """A dataset in an open :class:`arca.File`.

    Read and write with numpy indexing; ``np.asarray(ds)`` reads it all::

        ds = f.create_dataset("x", data=np.arange(12).reshape(3, 4))
        ds[1, ::2]          # array([4, 6])
        ds[:, -1] = 0
        ds.attrs["units"] = "m"

    Values arrive in native byte order whatever the stored order;
    :attr:`dtype` reports the stored type.
    """

    def __init__(self, file, dsid=None):
        if dsid is None:
            # h5py's Dataset(id), from an ObjectID (obj.id).
            if not isinstance(file, ObjectID) or not isinstance(file._id, _native.Dataset):
                raise ValueError(f"{file!r} is not a dataset identifier")
            file, dsid = file._file, file._id
        super().__init__(file, dsid)
        self._type = dsid.dtype()
        # Variable-length elements (or members) cross through an engine
        # chosen once here; None for fixed-size elements, which cross as
        # they are stored.
        self._vlen = _vlen.engine(dsid, self._type)
        self._dtype = None
        self._mdtype = None
        # Whether indexing may take the native fast path (None: not yet
        # decided; decided at the first read, not at every open).
        self._fast = None

    def __repr__(self):
        # h5py's words, which code and doctests written for it match.
        if not self:
            return "<Closed HDF5 dataset>"
        name = "(anonymous)" if self.name is None else f'"{posixpath.basename(self.name) or "/"}"'
        return f'<HDF5 dataset {name}: shape {self.shape}, type "{self.dtype.str}">'

    # -- metadata -------------------------------------------------------------
    @property
    def dtype(self):
        """The stored element type (``>i4`` for a big-endian dataset); for
        variable-length elements the object dtype tagged with their base
        (see :func:`arca.vlen_dtype`)."""
        if self._dtype is None:
            v = self._vlen
            if v is None:
                self._dtype = from_type_string(self._type)
                self._mdtype = native(self._dtype)
            else:
                self._dtype, self._mdtype = v.dtype, v.memtype
        return self._dtype

    @property
    def _memtype(self):
        if self._mdtype is None:
            self.dtype  # noqa: B018 -- loads both
        return self._mdtype

    @property
    def dims(self):
        """The dimensions: labels and attached dimension scales
        (``ds.dims[0].label``, ``ds.dims[0].attach_scale(x)``, ``ds.dims[0][0]``)."""
        return _dims.DimensionManager(self)

    def make_scale(self, name=""):
        """Make this dataset a dimension scale called ``name``."""
        _dims.make_scale(self, name)

    @property
    def is_scale(self):
        """Whether this dataset is a dimension scale."""
        return _dims.is_scale(self)

    @property
    def _sub(self):
        """The element's own axes, for an array element type; else ()."""
        sd = self._memtype.subdtype
        return () if sd is None else sd[1]

    @property
    def shape(self):
        """Current extent, a tuple; None for a null dataspace (``Empty``)."""
        s = self._id.shape()
        return None if s is None else tuple(s)

    @property
    def ndim(self):
        """Number of dimensions."""
        return len(self._id.shape() or ())

    @property
    def size(self):
        """Number of elements (None for a null dataspace)."""
        s = self._id.shape()
        return None if s is None else int(np.prod(s, dtype=np.int64))

    @property
    def nbytes(self):
        """Bytes the elements occupy in memory."""
        return (self.size or 0) * self.dtype.itemsize

    @property
    def maxshape(self):
        """Largest extent per dimension; None is unlimited. None for a null
        dataspace (``Empty``)."""
        if self._id.shape() is None:
            return None
        return tuple(self._id.maxshape())

    @property
    def chunks(self):
        """Chunk shape, or None for contiguous or compact storage."""
        c = self._id.chunks()
        return None if c is None else tuple(c)

    @property
    def layout(self):
        """How the elements are stored: ``"compact"`` (inside the dataset's
        header, for small fixed-shape datasets), ``"contiguous"`` or
        ``"chunked"``."""
        return self._id.layout()

    def _filter_options(self):
        """Creation keywords that give a new dataset this one's filters."""
        h5 = self._id.hdf5_filters()
        if h5:
            return {"hdf5_filters": h5}
        return {"compression": self.compression, "compression_opts": self.compression_opts,
                "shuffle": self.shuffle}

    @property
    def hdf5_filters(self):
        """An HDF5 filter pipeline as h5py's ``get_filter`` lists it,
        ``[(id, flags, values, name)]``, or ``[]`` for arca's own filters
        (see ``compression``)."""
        return [(c, fl, tuple(v), nm) for c, fl, v, nm in self._id.hdf5_filters()]

    @property
    def filter_ids(self):
        """HDF5's ids of the filters, in pipeline order (arca's own gzip,
        zstd and lz4 by the ids HDF5 gives them): ``(2, 32000, 3)``."""
        h5 = self._id.hdf5_filters()
        if h5:
            return tuple(c for c, _, _, _ in h5)
        return tuple(_OWN_FILTERS[name][0] for name, _ in self._id.filters())

    @property
    def filter_names(self):
        """The filters' names, in pipeline order, as HDF5 stores them:
        ``("shuffle", "lzf", "fletcher32")``."""
        h5 = self._id.hdf5_filters()
        if h5:
            return tuple(nm for _, _, _, nm in h5)
        return tuple(_OWN_FILTERS[name][1] for name, _ in self._id.filters())

    @property
    def compression(self):
        """``"gzip"``, ``"zstd"``, ``"lz4"``, ``"lzf"``, ``"unknown"`` for
        another HDF5 filter (see ``hdf5_filters``), or None."""
        h5 = self._id.hdf5_filters()
        if h5:
            for c, _, _, _ in h5:
                if c not in (2, 3, 5, 6):
                    return _H5_COMPRESSORS.get(c, "unknown")
            return None
        for name, _ in self._id.filters():
            if name != "shuffle":
                return name
        return None

    @property
    def compression_opts(self):
        """The compression level (gzip, zstd), or None."""
        h5 = self._id.hdf5_filters()
        if h5:
            for c, _, vals, _ in h5:
                if c in (1, 32015):
                    return vals[0] if vals else None
            return None
        for name, level in self._id.filters():
            if name != "shuffle":
                return level
        return None

    @property
    def shuffle(self):
        """Whether the byte-shuffle filter is on."""
        return any(name == "shuffle" for name, _ in self._id.filters())

    @property
    def fletcher32(self):
        """Whether HDF5's Fletcher-32 checksum filter is on (arca checksums
        every chunk anyway)."""
        return any(c == 3 for c, _, _, _ in self._id.hdf5_filters())

    @property
    def scaleoffset(self):
        """The scale-offset filter's factor (imported files), or None."""
        for c, _, vals, _ in self._id.hdf5_filters():
            if c == 6:
                return vals[1] if len(vals) > 1 else 0
        return None

    @property
    def external(self):
        """The external files holding the elements, as h5py lists them:
        ``[(name, offset, size)]`` (size ``2**64 - 1``, h5py's
        ``h5f.UNLIMITED``, for no end), or None when they are in the file::

            ds = f.create_dataset("x", (100,), "f4", external="x.raw")
            ds.external  # [('x.raw', 0, 18446744073709551615)]
        """
        segs = self._id.external_segments()
        return [tuple(s) for s in segs] if segs else None

    @property
    def is_virtual(self):
        """Whether the elements are assembled from other datasets (see
        :meth:`arca.Group.create_virtual_dataset`)."""
        return self._id.layout() == "virtual"

    def virtual_sources(self):
        """A virtual dataset's mappings, in order, as
        ``VDSmap(vspace, file_name, dset_name, src_space)``; RuntimeError
        for other datasets::

            [m.file_name for m in ds.virtual_sources()]
        """
        return virtual_sources(self)

    @property
    def fillvalue(self):
        """The value shown where nothing was written, a numpy scalar (the
        empty element for variable-length elements)."""
        if self._vlen is not None:
            return self._vlen.fillvalue()
        return as_elements(self._id.fill_value(), self._memtype, ())[()]

    @property
    def storage_size(self):
        """Bytes of file space holding this dataset's elements."""
        return int(self._id.storage_size())

    def __len__(self):
        shape = self._id.shape()
        if shape is None:
            raise TypeError("object of type 'NoneType' has no len()")
        if not shape:
            raise TypeError("Attempt to take len() of scalar dataset")
        return int(shape[0])

    def len(self):
        """Length of the first axis, like ``len(ds)``."""
        return len(self)

    def astype(self, dtype):
        """A view that reads as ``dtype``: ``ds.astype("f4")[:10]``,
        ``np.asarray(ds.astype("i8"))``."""
        return _AsType(self, np.dtype(dtype))

    def asstr(self, encoding=None, errors="strict"):
        """A view that reads a string dataset as ``str`` (object arrays), as
        h5py's: strings read as ``bytes`` and are decoded with ``encoding``
        (default: the type's character set, UTF-8 or ASCII)::

            ds[0]                # b'abc'
            ds.asstr()[0]        # 'abc'
        """
        v = self._vlen
        if v is not None and v.ragged and v.base in (str, bytes):
            enc = encoding or ("utf-8" if v.base is str else "ascii")
            ds = self
            if codecs.lookup(enc).name == "utf-8" and errors == "strict":
                # Decoded in native code as they are unpacked.
                ds = object.__new__(Dataset)
                ds.__dict__.update(self.__dict__)
                ds._vlen = v.decoding()
            return _AsStr(ds, enc, errors)
        if self.dtype.kind != "S":
            raise TypeError(
                "dset.asstr() can only be used on datasets with an HDF5 string datatype")
        enc = encoding or (self.dtype.metadata or {}).get("h5py_encoding", "ascii")
        return _AsStr(self, enc, errors)

    # -- variable-length data ---------------------------------------------------
    def _engine(self, what, ragged=False):
        """The element engine, TypeError if this dataset has none (or, with
        ``ragged``, its elements are not variable-length themselves)."""
        v = self._vlen
        if v is None or (ragged and not v.ragged):
            kind = "variable-length elements" if ragged else "variable-length data"
            raise TypeError(f"{what} is for datasets of {kind}; this one's type is {self.dtype}")
        return v

    @property
    def vlen_base(self):
        """The base of variable-length elements: ``str``, ``bytes`` or the
        items' numpy dtype (native order); None for other datasets."""
        v = self._vlen
        return v.base if v is not None and v.ragged else None

    @property
    def vlen_info(self):
        """How the byte vector of a dataset with variable-length data is
        stored: a dict of ``vector_bytes``, ``live_bytes``, ``stored_bytes``,
        ``compression_ratio``, ``chunks``, ``chunk_bytes``, ``filters``,
        ``reuse_space``, ``free_bytes``. TypeError for other datasets::

            ds.vlen_info["live_bytes"]
        """
        return self._engine("vlen_info").info()

    def vlen_repack(self):
        """Rewrite the byte vector with only live data, reclaiming the space
        that overwrites left behind (datasets with variable-length data)."""
        self._engine("vlen_repack()").repack()

    def _create_options(self):
        """The ``vlen_*`` creation keywords that reproduce this dataset's
        byte vector ({} when it has none)."""
        v = self._vlen
        return {} if v is None else v.create_options()

    def _box(self, sel):
        """``(start, count, step)`` of a selection of integers and slices."""
        shape = self.shape
        if sel is None or sel is Ellipsis or (type(sel) is tuple and not sel):
            return [0] * len(shape), list(shape), [1] * len(shape)
        s = _selection.parse(sel, shape)
        if s.lists or s.mask is not None:
            raise ValueError(
                "the bulk paths take integers and slices; use indexing for index lists, "
                "blocks or masks"
            )
        return s.start, s.count, s.step

    def read_ragged(self, sel=None):
        """``(values, offsets)`` of the selected variable-length elements in
        row-major order: element ``i`` is ``values[offsets[i]:offsets[i + 1]]``.
        ``values`` has the base dtype (``uint8`` UTF-8/bytes for strings),
        ``offsets`` is int64 with one more entry than elements, starting at 0.
        TypeError for a dataset whose elements are not variable-length::

            values, offsets = ds.read_ragged(np.s_[10:20])
        """
        v = self._engine("read_ragged()", ragged=True)
        return v.read_ragged(*self._box(sel))

    def write_ragged(self, values, offsets, sel=None):
        """Write the selected variable-length elements from ``values`` and
        Arrow-style ``offsets`` (one more than the elements; they need not
        start at 0). All the data goes to the byte vector in one append::

            ds.write_ragged(np.array([1, 2, 3], "f4"), np.array([0, 1, 1, 3]))
        """
        v = self._engine("write_ragged()", ragged=True)
        v.write_ragged(*self._box(sel), values, offsets)

    def read_arrow(self, sel=None):
        """The selected variable-length elements as a pyarrow
        ``LargeStringArray``, ``LargeBinaryArray`` or ``LargeListArray``,
        built on the buffers read without copying them."""
        v = self._engine("read_arrow()", ragged=True)
        return v.to_arrow(*v.read_ragged(*self._box(sel)))

    def write_arrow(self, array, sel=None):
        """Write a pyarrow ``StringArray``/``LargeStringArray``/``BinaryArray``/
        ``ListArray``/``LargeListArray`` (or chunked array) to variable-length
        elements without copying its buffers where the layouts allow. Nulls
        are refused."""
        v = self._engine("write_arrow()", ragged=True)
        values, offsets = _vlen.arrow_buffers(array)
        v.write_ragged(*self._box(sel), values, offsets)

    def iter_chunks(self, sel=None):
        """Yield, for every chunk the selection touches, a tuple of slices
        covering the part of the selection inside that chunk, as h5py's.

        ``sel`` is integers and step-1 slices (default: everything).
        TypeError for a dataset that is not chunked::

            for s in ds.iter_chunks(np.s_[10:500]):
                total += ds[s].sum()
        """
        chunks = self.chunks
        if chunks is None:
            raise TypeError("Chunked dataset required")
        shape = self.shape
        if sel is None:
            start, count = [0] * len(shape), list(shape)
        else:
            s = _selection.parse(sel, shape)
            if s.lists or s.mask is not None or any(st != 1 for st in s.step):
                raise TypeError("iter_chunks takes integers and slices with step 1")
            start, count = s.start, s.count
        # Checked now, walked when iterated.
        return _chunk_slices([(a, a + c) for a, c in zip(start, count)], chunks)

    def __iter__(self):
        shape = self.shape
        if not shape:
            raise TypeError("Can't iterate over a scalar dataset")
        for i in range(shape[0]):
            yield self[i]

    # -- resizing -------------------------------------------------------------
    def resize(self, size, axis=None):
        """Change the extent: ``resize((n, m))`` or ``resize(n, axis=0)``.

        Only chunked datasets can be resized, within :attr:`maxshape`.
        """
        if self.chunks is None:
            raise TypeError("Only chunked datasets can be resized")
        shape = list(self.shape)
        if axis is not None:
            if not 0 <= axis < len(shape):
                raise ValueError(f"Invalid axis ({axis} for {len(shape)}-d dataset)")
            shape[axis] = int(size)
        else:
            if isinstance(size, (int, np.integer)):
                size = (size,)
            size = tuple(int(s) for s in size)
            if len(size) != len(shape):
                raise ValueError(
                    f"new shape {size} must have {len(shape)} dimensions"
                )
            shape = list(size)
        if any(s < 0 for s in shape):
            raise ValueError(f"negative size in {tuple(shape)}")
        self._id.resize(shape)

    # -- reading --------------------------------------------------------------
    def _read_box(self, start, count, step):
        """Read a hyperslab into a new array of shape ``count``."""
        if self._vlen is not None:
            return self._vlen.read(start, count, step)
        mdt = self._memtype
        n = 1
        for c in count:
            n *= c
        if n == 0:
            return np.empty(count, dtype=mdt)
        arr = as_elements(self._id.read(start, count, step), mdt, count)
        return unpad(arr, mdt) if mdt.kind == "S" else arr

    def fields(self, names):
        """A view that reads only the named members of a compound dataset:
        ``ds.fields("x")[:10]`` (an array of x) or ``ds.fields(["x", "y"])[:]``."""
        return _Fields(self, names)

    def _field_names(self, names):
        fields = self.dtype.fields
        if fields is None:
            raise ValueError("Field names only allowed for compound types")
        for n in names:
            if n not in fields:
                raise ValueError(f"Field {n} does not appear in this type.")
        return names

    def _fast_ok(self):
        """Decide, once, whether reads may take the native fast path:
        fixed-size elements whose bytes are the array's as they are
        (not strings, which are unpadded, references or array types)."""
        ok = False
        if self._vlen is None:
            mdt = self._memtype
            if (mdt.kind != "S" and mdt.subdtype is None and not mdt.hasobject
                    and not has_refs(mdt)):
                ok = self._id.fast_reads(mdt)
        self._fast = ok
        return ok

    def __getitem__(self, key):
        # The common keys (integers, slices, ``...``, one sorted index
        # list) are parsed and read in one native call; it returns None
        # for any other key, which the general path below takes.
        fast = self._fast
        if fast is None:
            fast = self._fast_ok()
        if fast:
            out = self._id.read_key(key)
            if out is not None:
                return out
        if isinstance(key, RegionReference) or (
                type(key) is tuple and len(key) == 1 and isinstance(key[0], RegionReference)):
            return read_region(self, key if isinstance(key, RegionReference) else key[0])
        if key is Ellipsis or (type(key) is tuple and not key):
            # The whole dataset: the common case, parsed no further.
            shape = self._id.shape()
            if shape is None:
                return Empty(self.dtype)
            r = len(shape)
            arr = self._read_box([0] * r, shape, [1] * r)
            return arr[()] if (not shape and key is not Ellipsis) else arr
        args = key if isinstance(key, tuple) else (key,)
        if any(k is None for k in args):
            raise TypeError("Indexing with None (or np.newaxis) is not supported")
        names = tuple(k for k in args if isinstance(k, str))
        if names:
            args = tuple(k for k in args if not isinstance(k, str))
        shape = self.shape
        if shape is None:
            if not names and _whole(args):
                return Empty(self.dtype)
            raise ValueError("Empty datasets cannot be sliced")
        if names:
            self._field_names(names)
        if not shape:
            if not _whole(args):
                raise ValueError("Illegal slicing argument for scalar dataspace")
            arr = self._read_box([], [], [])
            if args == ():
                arr = arr[()]
        else:
            sel = _selection.parse(args, shape)
            arr = self._read_sel(sel).reshape(sel.out_shape + self._sub)
            if sel.scalar:
                arr = arr[()]
        return _pick(arr, names) if names else arr

    def _read_sel(self, sel):
        """The elements of a selection, shaped per dataset axis (integer
        axes kept as 1; one axis for a mask), with the element's axes."""
        if sel.mask is not None:
            box = self._read_box(sel.start, sel.count, sel.step)
            where = tuple(slice(a, a + c) for a, c in zip(sel.start, sel.count))
            return box[sel.mask[where]]
        if not sel.lists:
            return self._read_box(sel.start, sel.count, sel.step)
        return self._read_lists(list(sel.start), list(sel.count), sel.step, sel.lists)

    def _read_lists(self, start, count, step, lists):
        """Read a box of which the axes in ``lists`` are picked by indices:
        as one box when it is dense enough, else one box per run of
        consecutive indices of the sparsest axis."""
        shape = [len(lists[a]) if a in lists else c for a, c in enumerate(count)]
        n = prod(shape)
        if n == 0:
            return np.empty(shape, dtype=self._memtype)
        if prod(count) <= _DENSE_SPAN * n:
            box = self._read_box(start, count, step)
            for ax, idx in lists.items():
                box = np.take(box, idx - start[ax], axis=ax)
            return box
        ax = max(lists, key=lambda a: count[a] / len(lists[a]))
        rest = {a: i for a, i in lists.items() if a != ax}
        parts = []
        for first, length, _ in _selection.runs(lists[ax]):
            s, c = list(start), list(count)
            s[ax], c[ax] = first, length
            parts.append(self._read_lists(s, c, step, rest))
        return np.concatenate(parts, axis=ax)

    def __array__(self, dtype=None, copy=None):
        if copy is False:
            raise ValueError("memory allocation cannot be avoided: reading a dataset "
                             "always makes a copy (copy=False is impossible)")
        if self.shape is None:
            raise TypeError("Empty datasets have no numpy representation")
        arr = self[...]
        if dtype is not None and arr.dtype != np.dtype(dtype):
            arr = arr.astype(dtype)
        return arr

    def read_direct(self, dest, source_sel=None, dest_sel=None):
        """Read into an existing C-contiguous array, as h5py's:
        ``dest[dest_sel] = self[source_sel]``, the selections following
        h5py's rules. With no selections and a ``dest`` of the native dtype
        and the dataset's shape, elements land in ``dest`` without a copy::

            out = np.empty(ds.shape, ds.dtype)
            ds.read_direct(out)
            ds.read_direct(out, np.s_[0:10], np.s_[50:60])
        """
        shape = self.shape
        if shape is None:
            raise TypeError("Empty datasets have no numpy representation")
        if not isinstance(dest, np.ndarray):
            raise TypeError("dest must be a numpy array")
        if not dest.flags.c_contiguous:
            raise TypeError("dest must be a C-contiguous array")
        if not dest.flags.writeable:
            raise ValueError("dest is read-only")
        if source_sel is None:
            src = _selection.full(shape)
        else:
            src = _selection.parse(source_sel, shape) if shape else _selection.full(())
        if dest_sel is None:
            dst = _selection.full(dest.shape)
        else:
            dst = _selection.parse(dest_sel, dest.shape) if dest.shape else _selection.full(())
        _selection.broadcast_shape(src.out_shape, dst.out_shape)
        if (source_sel is None and dest_sel is None and dest.shape == shape
                and self._vlen is None and dest.dtype == self._memtype
                and strpad(self._memtype) is None):
            if dest.size:
                r = len(shape)
                self._id.read_into([0] * r, list(shape), [1] * r, dest.reshape(-1).view(np.uint8))
            return
        data = self._read_sel(src).reshape(src.out_shape + self._sub)
        _selection.put(dest, dst, data)

    # -- writing --------------------------------------------------------------
    def _write_box(self, start, count, step, data):
        """Write a C-contiguous native-order array of exactly ``count`` elements."""
        if self._vlen is not None:
            self._vlen.write(start, count, step, data)
            return
        if self._memtype.kind == "S":
            data = np.ascontiguousarray(repad(data, self._memtype))
        if data.size:
            self._id.write(start, count, step, data.reshape(-1).view(np.uint8))

    def _coerce(self, value, out_shape, count):
        """``value`` as a native-order array broadcast (h5py's rules) to a
        selection of ``out_shape``, shaped ``count`` (per dataset axis)."""
        if self._vlen is not None:
            return self._vlen.coerce(value, out_shape, count)
        mdt = self._memtype
        out_shape = tuple(out_shape)
        _refuse_unicode(value)
        if has_refs(mdt):
            arr = np.asarray(value, dtype=mdt)
            _selection.broadcast_shape(arr.shape, out_shape)
            arr = np.broadcast_to(arr.reshape(_fit(arr.shape, out_shape)), out_shape)
            return np.ascontiguousarray(objects_to_refs(arr, mdt)).reshape(tuple(count))
        if mdt.subdtype is not None:
            # An array element type: the value's last axes are the element's.
            base, sub = mdt.subdtype
            arr = np.asarray(value, dtype=base)
            if arr.shape[arr.ndim - len(sub):] != sub or arr.ndim < len(sub):
                raise TypeError(
                    "When writing to array types, last N dimensions have to match "
                    f"(got {arr.shape[max(0, arr.ndim - len(sub)):]}, but should be {sub})")
            lead = arr.shape[: arr.ndim - len(sub)]
            if lead == () and out_shape != ():
                raise TypeError("Scalar broadcasting is not supported for array dtypes")
            _selection.broadcast_shape(lead, out_shape)
            arr = np.broadcast_to(arr.reshape(_fit(lead, out_shape) + sub), out_shape + sub)
            return np.ascontiguousarray(arr).reshape(tuple(count) + sub)
        arr = as_array(value, mdt)
        if arr.shape != out_shape:
            _selection.broadcast_shape(arr.shape, out_shape)
            arr = np.broadcast_to(arr.reshape(_fit(arr.shape, out_shape)), out_shape)
        return arr.reshape(count)

    def __setitem__(self, key, value):
        whole = key is Ellipsis or (type(key) is tuple and not key)
        args = (key,) if whole or not isinstance(key, tuple) else key
        names = () if whole else tuple(k for k in args if isinstance(k, str))
        shape = self.shape
        if shape is None:
            raise OSError("a dataset with a null dataspace (Empty) holds no elements")
        if names:
            # Members not named keep their values: read, change, write back.
            self._field_names(names)
            rest = tuple(k for k in args if not isinstance(k, str))
            rows = np.array(self[rest], copy=True)
            v = value if isinstance(value, np.ndarray) else np.asarray(value)
            for n in names:
                rows[n] = v[n] if v.dtype.names and n in v.dtype.names else value
            self[rest] = rows
            return
        mdt = self._memtype
        if whole:
            # Fast path: a whole-dataset write from a matching array is not
            # copied. Not for object fields (references), which numpy's dtype
            # equality does not tell from other objects: they are converted.
            if not (
                isinstance(value, np.ndarray)
                and value.shape == shape
                and value.dtype == mdt
                and not mdt.hasobject
                and value.flags.c_contiguous
            ):
                value = self._coerce(value, shape, shape)
            r = len(shape)
            self._write_box([0] * r, list(shape), [1] * r, np.ascontiguousarray(value))
            return
        if not shape:
            if any(k is None for k in args):
                raise TypeError(f"Selection can't process {None}")
            if args != (Ellipsis,):
                raise ValueError(f"{len(args)} indexing arguments for 0 dimensions")
            self[()] = value
            return
        sel = _selection.parse(args, shape, reading=False)
        if sel.mask is not None:
            arr = np.asarray(value) if not isinstance(value, np.ndarray) else value
            n = sel.size
            if arr.size != 1 and arr.size != n and self._vlen is None:
                raise TypeError("Broadcasting is not supported for point-wise selections")
            vals = self._coerce(value, (n,), (n,)) if arr.size == n or self._vlen is not None \
                else self._coerce(np.broadcast_to(arr.reshape(()), (n,)), (n,), (n,))
            box = np.array(self._read_box(sel.start, sel.count, sel.step), copy=True)
            where = tuple(slice(a, a + c) for a, c in zip(sel.start, sel.count))
            box[sel.mask[where]] = vals
            self._write_box(sel.start, sel.count, sel.step, np.ascontiguousarray(box))
            return
        arr = self._coerce(value, sel.out_shape, sel.box_shape())
        if sel.lists:
            self._write_lists(list(sel.start), list(sel.count), sel.step, sel.lists, arr)
        else:
            self._write_box(sel.start, sel.count, sel.step, np.ascontiguousarray(arr))

    def _write_lists(self, start, count, step, lists, arr):
        """Write ``arr`` to a box of which the axes in ``lists`` are picked by
        indices: one box per run of consecutive indices."""
        if not lists:
            self._write_box(start, count, step, np.ascontiguousarray(arr))
            return
        ax = next(iter(lists))
        rest = {a: i for a, i in lists.items() if a != ax}
        where = [slice(None)] * arr.ndim
        for first, length, pos in _selection.runs(lists[ax]):
            s, c = list(start), list(count)
            s[ax], c[ax] = first, length
            where[ax] = slice(pos, pos + length)
            self._write_lists(s, c, step, rest, arr[tuple(where)])

    def write_direct(self, source, source_sel=None, dest_sel=None):
        """Write from a C-contiguous array, as h5py's:
        ``self[dest_sel] = source[source_sel]``::

            ds.write_direct(np.arange(10), np.s_[0:5], np.s_[20:25])
        """
        shape = self.shape
        if shape is None:
            raise TypeError("Empty datasets cannot be written to")
        if not isinstance(source, np.ndarray):
            raise TypeError("source must be a numpy array")
        if not source.flags.c_contiguous:
            raise TypeError("source must be a C-contiguous array")
        if source_sel is None:
            src = _selection.full(source.shape)
        else:
            src = _selection.parse(source_sel, source.shape) if source.shape \
                else _selection.full(())
        dst = _selection.full(shape) if dest_sel is None or not shape \
            else _selection.parse(dest_sel, shape)
        _selection.broadcast_shape(src.out_shape, dst.out_shape)
        data = _selection.take(source, src)
        if dest_sel is None:
            self[...] = data
        else:
            self[dest_sel] = data


def _refuse_unicode(value):
    """numpy's fixed-width unicode arrays, which h5py has no conversion for
    (Python str, alone or in lists, is encoded as UTF-8)."""
    if isinstance(value, (np.ndarray, np.str_)) and value.dtype.kind == "U":
        raise TypeError(f"No conversion path for dtype: {value.dtype!r}")


def _chunk_slices(bounds, chunks):
    """Per chunk the box ``bounds`` (``(start, stop)`` per axis) meets, the
    slices of its part in it."""
    if any(a == b for a, b in bounds):
        return
    ranges = [range(a // c, (b - 1) // c + 1) for (a, b), c in zip(bounds, chunks)]
    for idx in itertools.product(*ranges):
        yield tuple(slice(max(a, i * c), min(b, (i + 1) * c), 1)
                    for i, c, (a, b) in zip(idx, chunks, bounds))


def _whole(args):
    """Whether index arguments are ``()`` or ``(...,)``: all a scalar or
    empty dataset takes."""
    return args == () or (len(args) == 1 and args[0] is Ellipsis)


def _fit(src, out_shape):
    """A value's shape with the leading axes of length 1 beyond ``out_shape``'s
    rank dropped (h5py writes a (1, n) value to an (n,) selection)."""
    src = tuple(src)
    while len(src) > len(out_shape) and src[0] == 1:
        src = src[1:]
    return src


def _pick(rows, names):
    """One member as a plain array (or scalar), or several as a packed compound."""
    if len(names) == 1:
        v = rows[names[0]]
        return np.ascontiguousarray(v) if isinstance(v, np.ndarray) and v.ndim else v
    from numpy.lib import recfunctions

    picked = rows[list(names)]
    if isinstance(picked, np.void):
        return recfunctions.repack_fields(np.asarray(picked))[()]
    return recfunctions.repack_fields(picked)


class _View:
    """A read-only view of a dataset that converts what it reads (what
    :meth:`Dataset.astype`, :meth:`Dataset.asstr` and :meth:`Dataset.fields`
    return, as h5py's wrappers): indexing reads, ``np.asarray(view)``
    reads everything, ``len``/``shape``/``ndim``/``size`` are the dataset's."""

    def __init__(self, ds):
        self._ds = ds

    def _convert(self, v):
        return v

    def __getitem__(self, key):
        return self._convert(self._ds[key])

    def __array__(self, dtype=None, copy=None):
        if copy is False:
            raise ValueError("memory allocation cannot be avoided: reading a dataset "
                             "always makes a copy (copy=False is impossible)")
        arr = np.asarray(self[...])
        return arr if dtype is None else arr.astype(dtype)

    def __len__(self):
        return len(self._ds)

    @property
    def shape(self):
        return self._ds.shape

    @property
    def ndim(self):
        return self._ds.ndim

    @property
    def size(self):
        return self._ds.size


class _Fields(_View):
    """What :meth:`Dataset.fields` returns: reads of some members only."""

    def __init__(self, ds, names):
        super().__init__(ds)
        self._one = isinstance(names, str)
        self._names = (names,) if self._one else tuple(names)
        ds._field_names(self._names)
        fields = ds.dtype.fields
        if self._one:
            self.dtype = fields[names][0]
        else:
            self.dtype = np.dtype([(n, fields[n][0]) for n in self._names])

    def _convert(self, v):
        if self._one:
            return _pick(v, self._names)
        # A list of names keeps a compound, even of one member.
        from numpy.lib import recfunctions

        picked = v[list(self._names)]
        if isinstance(picked, np.void):
            return recfunctions.repack_fields(np.asarray(picked))[()]
        return recfunctions.repack_fields(picked)


class _AsType(_View):
    """What :meth:`Dataset.astype` returns: reads converted to a dtype."""

    def __init__(self, ds, dtype):
        super().__init__(ds)
        self.dtype = dtype

    def _convert(self, v):
        if isinstance(v, np.ndarray):
            return v.astype(self.dtype)
        return np.asarray(v).astype(self.dtype)[()]


class _AsStr(_View):
    """What :meth:`Dataset.asstr` returns: reads with byte strings decoded."""

    dtype = np.dtype(object)

    def __init__(self, ds, encoding, errors):
        super().__init__(ds)
        self._enc, self._err = encoding, errors

    def _text(self, x):
        return x if isinstance(x, str) else x.decode(self._enc, self._err)

    def _convert(self, v):
        if isinstance(v, (bytes, str)):
            return self._text(v)
        out = np.empty(v.shape, dtype=object)
        out.reshape(-1)[:] = [self._text(x) for x in v.reshape(-1).tolist()]
        return out


register("dataset", Dataset)
