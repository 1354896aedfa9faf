"""numpy-style indexing turned into the hyperslabs the native layer reads,
with h5py's rules.

A key (integers, slices with positive steps, ``...``, one 1-D list or array
of increasing integers or of booleans, :class:`MultiBlockSlice` objects, or
a boolean mask of the dataset's shape) becomes a :class:`Selection`:
``start``, ``count`` and ``step`` per dataset axis, the axes picked by an
index list (or by blocks) with their indices, and the shape of the result.
Errors are h5py's: ``TypeError`` for an index kind it refuses (``None``,
floats, unsorted lists, two lists), ``ValueError`` for a bad step, a second
``...`` or too many indices, ``IndexError`` for an index out of range.
"""

import operator

import numpy as np


class MultiBlockSlice:
    """A selection along one axis of ``count`` blocks of ``block`` elements,
    one every ``stride`` elements from ``start``: h5py's extension of
    ``slice`` (HDF5's hyperslab parameters). The defaults select the whole
    axis; a missing ``count`` selects as many whole blocks as fit::

        ds[arca.MultiBlockSlice(start=1, stride=5, count=2, block=3)]
        # elements 1, 2, 3, 6, 7, 8
    """

    def __init__(self, start=0, stride=1, count=None, block=1):
        if start < 0:
            raise ValueError("Start can't be negative")
        if stride < 1 or block < 1 or (count is not None and count < 1):
            raise ValueError("Stride, count and block can't be 0 or negative")
        if block > stride:
            raise ValueError("Blocks will overlap if block > stride")
        self.start = start
        self.stride = stride
        self.count = count
        self.block = block

    def indices(self, length):
        """``(start, stride, count, block)`` for an axis of ``length``
        elements; ValueError if the blocks do not fit in it."""
        start, stride, count, block = self.start, self.stride, self.count, self.block
        if count is None:
            count = (length - start - block) // stride + 1
            if count < 1:
                raise ValueError(f"No full blocks can be selected using {self!r} "
                                 f"on dimension of length {length}")
        last = start + (count - 1) * stride + block - 1
        if last > length - 1:
            raise ValueError(f"{self!r} range ({start} - {last}) extends beyond maximum "
                             f"index ({length - 1})")
        return start, stride, count, block

    def __repr__(self):
        return (f"MultiBlockSlice(start={self.start}, stride={self.stride}, "
                f"count={self.count}, block={self.block})")


def _is_int(k):
    if isinstance(k, (bool, np.bool_)):
        return isinstance(k, bool)  # h5py takes Python's bool as 0/1, not numpy's
    if isinstance(k, (int, np.integer)):
        return True
    return isinstance(k, np.ndarray) and k.ndim == 0 and k.dtype.kind in "iu"


class Selection:
    """A parsed key.

    ``start``, ``count`` and ``step`` give, per dataset axis, the box that
    bounds the selection (step 1 on an indexed axis). ``lists`` maps an
    indexed axis (an index list, or blocks) to its increasing indices.
    ``out_shape`` is the shape of the result (integer axes dropped).
    ``mask`` is a boolean mask of the dataset's shape (a point selection:
    the result is 1-D), else None. ``scalar`` says the result is a numpy
    scalar.
    """

    __slots__ = ("start", "count", "step", "lists", "out_shape", "mask", "scalar")

    def __init__(self, start, count, step, lists, out_shape, mask=None, scalar=False):
        self.start = start
        self.count = count
        self.step = step
        self.lists = lists
        self.out_shape = out_shape
        self.mask = mask
        self.scalar = scalar

    @property
    def size(self):
        """Elements selected."""
        if self.mask is not None:
            return int(np.count_nonzero(self.mask))
        n = 1
        for s in self.out_shape:
            n *= s
        return n

    def box_shape(self):
        """The selection's shape per dataset axis (integer axes kept as 1)."""
        return tuple(len(self.lists[a]) if a in self.lists else c
                     for a, c in enumerate(self.count))


def full(shape):
    """The selection of a whole dataset."""
    r = len(shape)
    return Selection([0] * r, list(shape), [1] * r, {}, tuple(shape))


def parse(key, shape, reading=True):
    """Parse ``key`` (not field names) against a dataset of ``shape``
    (at least one axis), as h5py selects: for a read a new axis is refused
    first, for a write where it stands."""
    rank = len(shape)
    if not isinstance(key, tuple):
        key = (key,)
    if len(key) == 1:
        k = key[0]
        if isinstance(k, np.ndarray) and k.dtype.kind == "b":
            if k.shape == shape:
                if k.ndim > 1:
                    return _mask_selection(k)
            elif k.shape != shape[:1]:
                raise TypeError("Boolean indexing array has incompatible shape")
    n_ell = 0
    for k in key:
        if k is None and reading:
            raise TypeError("Indexing with None (or np.newaxis) is not supported")
        if k is Ellipsis:
            n_ell += 1
    if n_ell > 1:
        raise ValueError("Only one ellipsis may be used.")
    n_real = len(key) - n_ell
    items = []
    for k in key:
        if k is Ellipsis:
            items.extend([slice(None)] * (rank - n_real))
        else:
            items.append(k)
    items.extend([slice(None)] * (rank - len(items)))

    start, count, step, out_shape = [], [], [], []
    lists = {}
    listed = False
    for ax, k in enumerate(items):
        # Arguments are taken in order: an error in one comes before the
        # count of them is found too large.
        if ax >= rank:
            raise ValueError(f"{n_real} indexing arguments for {rank} dimensions")
        n = shape[ax]
        if k is None:
            raise TypeError("Selection can't process None")
        if _is_int(k):
            i = operator.index(k)
            if i < -n or i >= n:
                raise IndexError(f"Index ({i}) out of range for (0-{n - 1})")
            if i < 0:
                i += n
            start.append(i)
            count.append(1)
            step.append(1)
        elif isinstance(k, slice):
            a, b, s = k.indices(n)
            if s < 1:
                raise ValueError(f"Step must be >= 1 (got {s})")
            c = len(range(a, b, s))
            start.append(a if c else 0)
            count.append(c)
            step.append(s)
            out_shape.append(c)
        elif isinstance(k, MultiBlockSlice):
            a, s, c, b = k.indices(n)
            if b == 1:
                start.append(a)
                count.append(c)
                step.append(s)
                out_shape.append(c)
            else:
                idx = (a + s * np.arange(c, dtype=np.int64)[:, None]
                       + np.arange(b, dtype=np.int64)[None, :]).reshape(-1)
                _listed(idx, lists, ax, start, count, step, out_shape)
        else:
            if listed:
                raise TypeError(
                    "Only one indexing vector or array is currently allowed for fancy indexing")
            listed = True
            idx = _index_list(k, n, rank)
            _listed(idx, lists, ax, start, count, step, out_shape)
    scalar = not out_shape and not lists
    return Selection(start, count, step, lists, tuple(out_shape), None, scalar)


def _listed(idx, lists, ax, start, count, step, out_shape):
    lists[ax] = idx
    if len(idx):
        lo, hi = int(idx[0]), int(idx[-1])
    else:
        lo, hi = 0, -1
    start.append(lo)
    count.append(hi - lo + 1)
    step.append(1)
    out_shape.append(len(idx))


def _mask_selection(mask):
    """A point selection: the elements where ``mask`` is true, in order."""
    where = np.nonzero(mask)
    if where[0].size:
        lo = [int(w.min()) for w in where]
        hi = [int(w.max()) for w in where]
    else:
        lo = [0] * mask.ndim
        hi = [-1] * mask.ndim
    count = [h - l + 1 for l, h in zip(lo, hi)]
    n = int(where[0].size)
    return Selection(lo, count, [1] * mask.ndim, {}, (n,), mask, False)


def _index_list(k, n, rank):
    """The increasing integer indices an index list or boolean array picks
    on an axis of ``n`` elements."""
    if isinstance(k, np.ndarray):
        arr = k
    elif isinstance(k, (list, tuple, range)):
        if isinstance(k, list) and rank == 1 and k and all(
                isinstance(x, (bool, np.bool_)) for x in k):
            raise TypeError("Use other code for boolean selection on 1D dataset")
        try:
            arr = np.asarray(k)
        except ValueError:
            raise TypeError(f"Selection can't process {k!r}") from None
    else:
        raise TypeError(f"Selection can't process {k!r}")
    if arr.ndim != 1:
        raise TypeError(f"Selection can't process {k!r}")
    if arr.dtype.kind == "b":
        if len(arr) != n:
            raise TypeError("boolean index did not match indexed array")
        return np.flatnonzero(arr)
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64)
    if arr.dtype.kind not in "iu":
        raise TypeError("Indexing arrays must have integer dtypes")
    arr = arr.astype(np.int64)
    if (arr < -n).any() or (arr >= n).any():
        raise IndexError(f"Fancy indexing out of range for (0-{n - 1})")
    arr = np.where(arr < 0, arr + n, arr)
    if arr.size > 1 and (np.diff(arr) <= 0).any():
        raise TypeError("Indexing elements must be in increasing order")
    return arr


def runs(idx):
    """``(first, length, position)`` of each run of consecutive indices in
    increasing ``idx``: the boxes an indexed axis is read or written in."""
    if not len(idx):
        return []
    breaks = np.flatnonzero(np.diff(idx) != 1) + 1
    starts = np.concatenate(([0], breaks))
    ends = np.concatenate((breaks, [len(idx)]))
    return [(int(idx[s]), int(e - s), int(s)) for s, e in zip(starts, ends)]


def broadcast_shape(src, out_shape):
    """``src`` (a value's shape) as h5py broadcasts it onto a selection of
    ``out_shape``: leading axes of length 1 beyond the selection's are
    dropped, then each remaining axis must be 1 or the selection's.
    TypeError otherwise."""
    s = tuple(src)
    while len(s) > len(out_shape) and s[0] == 1:
        s = s[1:]
    if len(s) > len(out_shape):
        raise TypeError(f"Can't broadcast {tuple(src)} -> {tuple(out_shape)}")
    for a, b in zip(reversed(s), reversed(out_shape)):
        if a != b and a != 1:
            raise TypeError(f"Can't broadcast {tuple(src)} -> {tuple(out_shape)}")
    return s


def _box_view(arr, sel):
    """The box of ``arr`` bounding a selection: a view (basic slicing)."""
    return arr[tuple(slice(a, a + (c - 1) * s + 1, s) if c else slice(a, a)
                     for a, c, s in zip(sel.start, sel.count, sel.step))]


def _picks(sel):
    """Per-axis positions inside the box (np.ix_ style) for the indexed axes."""
    return np.ix_(*[sel.lists[a] - sel.start[a] if a in sel.lists else np.arange(c)
                    for a, c in enumerate(sel.count)])


def take(arr, sel):
    """What a selection picks from a numpy array, shaped ``sel.out_shape``."""
    if not sel.count:
        return np.asarray(arr)
    box = _box_view(arr, sel)
    if sel.mask is not None:
        return box[sel.mask[tuple(slice(a, a + c) for a, c in zip(sel.start, sel.count))]]
    for ax, idx in sel.lists.items():
        box = np.take(box, idx - sel.start[ax], axis=ax)
    return box.reshape(sel.out_shape)


def put(arr, sel, value):
    """Write ``value`` (broadcast to ``sel.out_shape``) to what a selection
    picks in the numpy array ``arr``."""
    if not sel.count:
        arr[()] = value
        return
    value = np.asarray(value)
    src = value.shape
    while len(src) > len(sel.out_shape) and src[0] == 1:
        src = src[1:]
    value = np.broadcast_to(value.reshape(src), sel.out_shape)
    box = _box_view(arr, sel)
    if sel.mask is not None:
        box[sel.mask[tuple(slice(a, a + c) for a, c in zip(sel.start, sel.count))]] = value
    elif sel.lists:
        box[_picks(sel)] = value.reshape(sel.box_shape())
    else:
        box[...] = value.reshape(box.shape)
