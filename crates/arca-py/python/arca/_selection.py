"""numpy-style indexing turned into the hyperslabs the native layer reads.

A key (integers, slices with any step, ``...``, ``np.newaxis``, one 1-D list
or array of integers or booleans) becomes a :class:`Selection`: ``start``,
``count`` and ``step`` per dataset axis (steps always positive: negative steps
are read forwards and flipped), plus what is needed to shape the result the
way numpy would.
"""

import operator

import numpy as np


def _is_int(k):
    if isinstance(k, (bool, np.bool_)):
        return False
    if isinstance(k, (int, np.integer)):
        return True
    if isinstance(k, np.ndarray) and k.ndim == 0 and k.dtype.kind in "iu":
        return True
    return False


class Selection:
    """A parsed key.

    ``count`` is the box read from the dataset (one entry per axis);
    ``out_shape`` the shape numpy would give (integer axes dropped, new axes
    inserted, the fancy axis the length of its index list). ``flip`` lists
    axes selected with a negative step. ``fancy`` is ``(axis, indices)`` for
    a list index, else None. ``scalar`` says the result is a numpy scalar.
    ``natural_shape`` is ``out_shape`` with the list axis where its dataset
    axis is; ``moved`` is that axis's position there when numpy puts it
    first instead (a list and an integer index apart from each other), else
    None.
    """

    __slots__ = ("start", "count", "step", "out_shape", "flip", "fancy", "scalar",
                 "natural_shape", "moved")

    def __init__(self, start, count, step, out_shape, flip, fancy, scalar,
                 natural_shape=None, moved=None):
        self.start = start
        self.count = count
        self.step = step
        self.out_shape = out_shape
        self.flip = flip
        self.fancy = fancy
        self.scalar = scalar
        self.natural_shape = out_shape if natural_shape is None else natural_shape
        self.moved = moved

    @property
    def size(self):
        n = 1
        for c in self.count:
            n *= c
        return n


def full(shape):
    """The selection of a whole dataset."""
    r = len(shape)
    return Selection([0] * r, list(shape), [1] * r, tuple(shape), (), None, False)


def parse(key, shape):
    """Parse ``key`` against a dataset of ``shape``.

    Raises IndexError for out-of-range integers, too many indices or more
    than one ``...``; TypeError for index kinds arca cannot select with.
    """
    rank = len(shape)
    if not isinstance(key, tuple):
        key = (key,)
    n_ell = 0
    n_real = 0
    for k in key:
        if k is Ellipsis:
            n_ell += 1
        elif k is not None:
            n_real += 1
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if n_real > rank:
        raise IndexError(
            f"too many indices for dataset: dataset is {rank}-dimensional, "
            f"but {n_real} were indexed"
        )
    items = []
    for k in key:
        if k is Ellipsis:
            items.extend([slice(None)] * (rank - n_real))
        else:
            items.append(k)
    if n_ell == 0:
        items.extend([slice(None)] * (rank - n_real))

    start, count, step, out_shape, flip = [], [], [], [], []
    fancy = None
    fancy_out = 0
    advanced = []  # item positions of integer and list indices
    ax = 0
    for pos, k in enumerate(items):
        if k is None:
            out_shape.append(1)
            continue
        n = shape[ax]
        if _is_int(k):
            i = operator.index(k)
            if i < -n or i >= n:
                raise IndexError(
                    f"index {i} is out of bounds for axis {ax} with size {n}"
                )
            if i < 0:
                i += n
            advanced.append(pos)
            start.append(i)
            count.append(1)
            step.append(1)
        elif isinstance(k, slice):
            a, b, s = k.indices(n)
            c = len(range(a, b, s))
            if s > 0:
                start.append(a if c else 0)
                step.append(s)
            else:
                # Read the same elements forwards, then flip the axis.
                start.append(a + (c - 1) * s if c else 0)
                step.append(-s)
                if c > 1:
                    flip.append(ax)
            count.append(c)
            out_shape.append(c)
        else:
            idx = _index_list(k, n, ax)
            if fancy is not None:
                raise TypeError("only one list or array index is allowed per selection")
            fancy = (ax, idx)
            fancy_out = len(out_shape)
            advanced.append(pos)
            if len(idx):
                lo, hi = int(idx.min()), int(idx.max())
            else:
                lo, hi = 0, -1
            start.append(lo)
            count.append(hi - lo + 1)
            step.append(1)
            out_shape.append(len(idx))
        ax += 1
    scalar = n_ell == 0 and not out_shape and fancy is None
    natural = tuple(out_shape)
    moved = None
    if fancy is not None and advanced[-1] - advanced[0] + 1 != len(advanced):
        # numpy's rule: advanced indices that are not next to each other put
        # their (broadcast) axis first.
        moved = fancy_out
        out_shape.insert(0, out_shape.pop(fancy_out))
    return Selection(start, count, step, tuple(out_shape), tuple(flip), fancy, scalar,
                     natural, moved)


def _index_list(k, n, ax):
    """A 1-D integer index array for one axis, negatives resolved and checked."""
    if isinstance(k, (str, bytes, float, np.floating)):
        raise TypeError(f"cannot index a dataset with {type(k).__name__} {k!r}")
    try:
        arr = np.asarray(k)
    except Exception as e:  # noqa: BLE001 -- anything numpy cannot read is a bad index
        raise TypeError(f"cannot index a dataset with {k!r}") from e
    if arr.ndim != 1:
        raise TypeError(f"cannot index a dataset with {k!r}: list indices must be 1-D")
    if arr.dtype.kind == "b":
        if len(arr) != n:
            raise IndexError(
                f"boolean index of length {len(arr)} does not match axis {ax} of size {n}"
            )
        return np.flatnonzero(arr)
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"cannot index a dataset with {k!r}: indices must be integers")
    arr = arr.astype(np.int64)
    if (arr < -n).any() or (arr >= n).any():
        raise IndexError(f"index out of bounds for axis {ax} with size {n}")
    return np.where(arr < 0, arr + n, arr)
