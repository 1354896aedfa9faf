"""Arguments of creation calls as groups and datasets check them: member
paths, shape tuples, automatic chunk shapes and arca's own compressors."""

import operator

import numpy as np

# arca's own compressors, and the level each takes when none is given.
COMPRESSORS = ("gzip", "zstd", "lz4")
DEFAULT_LEVEL = {"gzip": 4, "zstd": 3}

# Automatic chunks aim at about this many bytes, like the core's own choice.
_AUTO_CHUNK_BYTES = 1 << 20


def member_path(name):
    """A member's path given as ``str`` or ``bytes`` (UTF-8), as ``str``."""
    if isinstance(name, bytes):
        name = name.decode("utf-8")
    if not isinstance(name, str):
        raise TypeError(
            f"Accessing a group is done with bytes or str, not {type(name).__name__}"
        )
    return name


def shape_tuple(shape, what="shape"):
    """``shape`` (an integer or a sequence of them) as a tuple of
    non-negative ints; None stays None."""
    if shape is None:
        return None
    try:
        shape = (operator.index(shape),)
    except TypeError:
        pass
    try:
        out = tuple(operator.index(s) for s in shape)
    except TypeError as e:
        raise TypeError(f"{what} must be a tuple of integers, not {shape!r}") from e
    if any(s < 0 for s in out):
        raise ValueError(f"{what} {out} has a negative entry")
    return out


def auto_chunks(shape, maxshape, itemsize):
    """A chunk shape near 1 MiB: start from the extent and halve the largest axis."""
    c = []
    for s, m in zip(shape, maxshape):
        if s == 0:
            c.append(1024 if m is None else max(1, min(m, 1024)))
        else:
            c.append(s)
    while int(np.prod(c, dtype=np.int64)) * itemsize > _AUTO_CHUNK_BYTES:
        i = max(range(len(c)), key=lambda j: c[j])
        if c[i] == 1:
            break
        c[i] = (c[i] + 1) // 2
    return tuple(c)


def prod(shape):
    """The number of elements of ``shape``, a Python int."""
    n = 1
    for s in shape:
        n *= int(s)
    return n
