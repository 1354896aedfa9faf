"""Datasets: typed n-dimensional arrays, read and written with numpy indexing."""

import itertools

import numpy as np

from . import _dims, _selection, _vlen
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
from ._object import HLObject, register

# A list index whose span is at most this many times its length is read as
# one box and picked from in memory; sparser ones are read index by index.
_DENSE_SPAN = 4


# HDF5 compressors by id, as h5py names them.
_H5_COMPRESSORS = {1: "gzip", 32000: "lzf", 32004: "lz4", 32015: "zstd", 4: "szip"}


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

    def __init__(self, file, dsid):
        super().__init__(file, dsid)
        self._type = dsid.dtype()
        # Variable-length elements (or members) cross through an engine
        # chosen once here; None for fixed-size elements, which cross as
        # they are stored.
        self._vlen = _vlen.engine(dsid, self._type)
        self._dtype = None
        self._mdtype = None

    def __repr__(self):
        if not self:
            return "<Closed arca Dataset>"
        return f'<arca Dataset "{self.name}": shape {self.shape}, type "{self.dtype.str}">'

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
        """Largest extent per dimension; None is unlimited."""
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
    def compression(self):
        """``"gzip"``, ``"zstd"``, ``"lz4"``, ``"lzf"``, another HDF5 filter's
        id, or None."""
        h5 = self._id.hdf5_filters()
        if h5:
            for c, _, _, _ in h5:
                if c not in (2, 3, 5, 6):
                    return _H5_COMPRESSORS.get(c, c)
            return None
        for name, _ in self._id.filters():
            if name != "shuffle":
                return name
        return None

    @property
    def compression_opts(self):
        """The compression level (gzip, zstd), an HDF5 filter's values, or
        None."""
        h5 = self._id.hdf5_filters()
        if h5:
            for c, _, vals, _ in h5:
                if c in (1, 32015):
                    return vals[0] if vals else None
                if c not in (2, 3, 5, 6, 32000, 32004):
                    return tuple(vals)
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
        """A view that reads as ``dtype``: ``ds.astype("f4")[:10]``."""
        return _AsType(self, np.dtype(dtype))

    def asstr(self, encoding=None, errors="strict"):
        """A view that reads a string dataset as ``str`` (object arrays), as
        h5py's: fixed-length strings and byte strings are decoded with
        ``encoding`` (default: the type's own character set, UTF-8 for
        variable-length ones); ``str`` elements pass as they are::

            ds.asstr()[0]        # 'abc'
        """
        v = self._vlen
        if v is not None and v.ragged and v.base in (str, bytes):
            return _AsStr(self, encoding or "utf-8", errors, as_is=v.base is str)
        if self.dtype.kind != "S":
            raise TypeError("dset.asstr() can only be used on datasets with a string type")
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
        shape = self.shape
        if sel is None or sel is Ellipsis or (type(sel) is tuple and not sel):
            return [0] * len(shape), list(shape), [1] * len(shape)
        s = _selection.parse(sel, shape)
        if s.fancy is not None or s.flip:
            raise ValueError(
                "the bulk paths take integers and slices with positive steps; "
                "use indexing for list indices or reversed slices"
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
        covering the part of the selection inside that chunk.

        ``sel`` is a tuple of step-1 slices (default: everything). TypeError
        for a contiguous dataset.
        """
        chunks = self.chunks
        if chunks is None:
            raise TypeError("Chunked dataset required")
        shape = self.shape
        if sel is None:
            sel = ()
        if not isinstance(sel, tuple):
            sel = (sel,)
        if len(sel) > len(shape):
            raise ValueError("selection has more dimensions than the dataset")
        sel = sel + (slice(None),) * (len(shape) - len(sel))
        bounds = []
        for s, n in zip(sel, shape):
            if not isinstance(s, slice):
                raise TypeError("iter_chunks takes a tuple of slices")
            a, b, st = s.indices(n)
            if st != 1:
                raise TypeError("iter_chunks takes slices with step 1")
            bounds.append((a, max(a, b)))
        if any(a == b for a, b in bounds):
            return
        ranges = [range(a // c, (b - 1) // c + 1) for (a, b), c in zip(bounds, chunks)]
        for idx in itertools.product(*ranges):
            yield tuple(
                slice(max(a, i * c), min(b, (i + 1) * c), 1)
                for i, c, (a, b) in zip(idx, chunks, bounds)
            )

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

    def __getitem__(self, key):
        shape = self.shape
        if shape is None:
            if key == () or key is Ellipsis:
                return Empty(self.dtype)
            raise ValueError("Empty datasets cannot be sliced")
        names, key = _split_names(key)
        if names:
            self._field_names(names)
            rows = self[key]
            return _pick(rows, names)
        if key is Ellipsis or (type(key) is tuple and not key):
            arr = self._read_box([0] * len(shape), list(shape), [1] * len(shape))
            return arr[()] if (not shape and key is not Ellipsis) else arr
        if isinstance(key, np.ndarray) and key.dtype.kind == "b" and key.ndim > 1:
            return self._mask(key, shape)[...][key]
        sel = _selection.parse(key, shape)
        if sel.fancy is None:
            arr = self._read_box(sel.start, sel.count, sel.step)
        else:
            arr = self._read_fancy(sel)
        if sel.flip:
            arr = np.flip(arr, axis=sel.flip)
        arr = arr.reshape(tuple(sel.natural_shape) + self._sub)
        if sel.moved is not None:
            arr = np.moveaxis(arr, sel.moved, 0)
        return arr[()] if sel.scalar else arr

    def _mask(self, key, shape):
        if key.shape != shape:
            raise IndexError(f"boolean index of shape {key.shape} does not match {shape}")
        return self

    def _read_fancy(self, sel):
        axis, idx = sel.fancy
        lo = sel.start[axis]
        span = sel.count[axis]
        if span <= _DENSE_SPAN * max(len(idx), 1):
            box = self._read_box(sel.start, sel.count, sel.step)
            return np.take(box, idx - lo, axis=axis)
        count = list(sel.count)
        count[axis] = len(idx)
        out = np.empty(count, dtype=self._memtype)
        start = list(sel.start)
        one = list(sel.count)
        one[axis] = 1
        where = [slice(None)] * len(count)
        for j, i in enumerate(idx):
            start[axis] = int(i)
            where[axis] = slice(j, j + 1)
            out[tuple(where)] = self._read_box(start, one, sel.step)
        return out

    def __array__(self, dtype=None, copy=None):
        if copy is False:
            raise ValueError("reading a dataset always makes a copy; copy=False is impossible")
        arr = self[...]
        if dtype is not None and arr.dtype != np.dtype(dtype):
            arr = arr.astype(dtype)
        return arr

    def read_direct(self, dest, source_sel=None, dest_sel=None):
        """Read into an existing array: ``dest[dest_sel] = self[source_sel]``.

        With no selections and a C-contiguous ``dest`` of the native dtype and
        the dataset's shape, elements land in ``dest`` without a copy.
        """
        if not isinstance(dest, np.ndarray):
            raise TypeError("dest must be a numpy array")
        if source_sel is None and dest_sel is None and self._vlen is None:
            shape = self.shape
            if (
                dest.shape == shape
                and dest.dtype == self._memtype
                and strpad(self._memtype) is None
                and dest.flags.c_contiguous
                and dest.flags.writeable
            ):
                if dest.size:
                    r = len(shape)
                    self._id.read_into(
                        [0] * r, list(shape), [1] * r, dest.reshape(-1).view(np.uint8)
                    )
                return
        src = self[() if source_sel is None else source_sel]
        dest[() if dest_sel is None else dest_sel] = src

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
        """``value`` as a native-order array broadcast to the selection, in box order."""
        if self._vlen is not None:
            return self._vlen.coerce(value, out_shape, count)
        mdt = self._memtype
        if has_refs(mdt):
            arr = np.asarray(value, dtype=mdt)
            try:
                arr = np.broadcast_to(arr, tuple(out_shape))
            except ValueError:
                raise ValueError(
                    f"could not broadcast input array from shape {arr.shape} into shape {out_shape}"
                ) from None
            return np.ascontiguousarray(objects_to_refs(arr, mdt)).reshape(tuple(count))
        if mdt.subdtype is not None:
            # An array element type: items fill trailing axes of the element's shape.
            base, sub = mdt.subdtype
            arr = np.asarray(value, dtype=base)
            try:
                arr = np.broadcast_to(arr, tuple(out_shape) + sub)
            except ValueError:
                raise ValueError(
                    f"could not broadcast input array from shape {arr.shape} "
                    f"into shape {tuple(out_shape) + sub}"
                ) from None
            return np.ascontiguousarray(arr).reshape(tuple(count) + sub)
        arr = as_array(value, mdt)
        if arr.shape != out_shape:
            try:
                arr = np.broadcast_to(arr, out_shape)
            except ValueError:
                # Like h5py, accept any shape with the right number of elements.
                if arr.size != int(np.prod(out_shape, dtype=np.int64)):
                    raise ValueError(
                        f"could not broadcast input array from shape {arr.shape} "
                        f"into shape {out_shape}"
                    ) from None
        return arr.reshape(count)

    def __setitem__(self, key, value):
        shape = self.shape
        if shape is None:
            raise OSError("a dataset with a null dataspace (Empty) holds no elements")
        names, key = _split_names(key)
        if names:
            # Members not named keep their values: read, change, write back.
            self._field_names(names)
            rows = np.array(self[key], copy=True)
            if len(names) == 1:
                rows[names[0]] = value
            else:
                value = np.asarray(value)
                for n in names:
                    rows[n] = value[n] if value.dtype.names else value
            self[key] = rows
            return
        mdt = self._memtype
        if key is Ellipsis or (type(key) is tuple and not key):
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
        if isinstance(key, np.ndarray) and key.dtype.kind == "b" and key.ndim > 1:
            self._mask(key, shape)
            whole = self[...]
            whole[key] = as_array(value, mdt)
            self[...] = whole
            return
        sel = _selection.parse(key, shape)
        if sel.fancy is None:
            arr = self._coerce(value, sel.out_shape, sel.count)
            if sel.flip:
                arr = np.flip(arr, axis=sel.flip)
            self._write_box(sel.start, sel.count, sel.step, np.ascontiguousarray(arr))
            return
        axis, idx = sel.fancy
        count = list(sel.count)
        count[axis] = len(idx)
        if sel.moved is not None:
            arr = self._coerce(value, sel.out_shape, sel.out_shape)
            arr = np.moveaxis(arr, 0, sel.moved).reshape(tuple(count) + self._sub)
        else:
            arr = self._coerce(value, sel.out_shape, count)
        if sel.flip:
            arr = np.flip(arr, axis=sel.flip)
        start = list(sel.start)
        one = list(count)
        one[axis] = 1
        where = [slice(None)] * len(count)
        # In order, so a repeated index keeps the last value as in numpy.
        for j, i in enumerate(idx):
            start[axis] = int(i)
            where[axis] = slice(j, j + 1)
            self._write_box(start, one, sel.step, np.ascontiguousarray(arr[tuple(where)]))

    def write_direct(self, source, source_sel=None, dest_sel=None):
        """Write from an array: ``self[dest_sel] = source[source_sel]``."""
        src = np.asarray(source)
        if source_sel is not None:
            src = src[source_sel]
        self[() if dest_sel is None else dest_sel] = src


def _split_names(key):
    """Member names (str) and the rest of an index, as h5py splits them."""
    if isinstance(key, str):
        return (key,), ()
    if isinstance(key, tuple) and any(isinstance(k, str) for k in key):
        names = tuple(k for k in key if isinstance(k, str))
        rest = tuple(k for k in key if not isinstance(k, str))
        return names, rest
    return (), key


def _pick(rows, names):
    """One member as a plain array, or several as a packed compound."""
    if len(names) == 1:
        return np.ascontiguousarray(rows[names[0]])
    from numpy.lib import recfunctions

    return recfunctions.repack_fields(rows[list(names)])


class _Fields:
    """What :meth:`Dataset.fields` returns: reads of some members only."""

    def __init__(self, ds, names):
        self._ds = ds
        self._one = isinstance(names, str)
        self._names = (names,) if self._one else tuple(names)
        ds._field_names(self._names)

    def __getitem__(self, key):
        rows = self._ds[key]
        if self._one:
            return np.ascontiguousarray(rows[self._names[0]])
        from numpy.lib import recfunctions

        return recfunctions.repack_fields(rows[list(self._names)])

    def __array__(self, dtype=None, copy=None):
        arr = self[()]
        return arr if dtype is None else arr.astype(dtype)

    def __len__(self):
        return len(self._ds)


class _AsType:
    """What :meth:`Dataset.astype` returns: reads converted to a dtype."""

    def __init__(self, ds, dtype):
        self._ds = ds
        self._dtype = dtype

    def __getitem__(self, key):
        return np.asarray(self._ds[key]).astype(self._dtype)

    def __array__(self, dtype=None, copy=None):
        arr = self[...]
        return arr if dtype is None else arr.astype(dtype)

    def __len__(self):
        return len(self._ds)


class _AsStr:
    """What :meth:`Dataset.asstr` returns: reads with byte strings decoded."""

    def __init__(self, ds, encoding, errors, as_is=False):
        self._ds, self._enc, self._err = ds, encoding, errors
        self._as_is = as_is  # elements already read as str

    def _text(self, x):
        return x if isinstance(x, str) else x.decode(self._enc, self._err)

    def __getitem__(self, key):
        v = self._ds[key]
        if self._as_is:
            return v
        if isinstance(v, (bytes, str)):
            return self._text(v)
        out = np.empty(v.shape, dtype=object)
        out.reshape(-1)[:] = [self._text(x) for x in v.reshape(-1).tolist()]
        return out

    def __array__(self, dtype=None, copy=None):
        arr = self[...]
        return arr if dtype is None else arr.astype(dtype)

    def __len__(self):
        return len(self._ds)


register("dataset", Dataset)
