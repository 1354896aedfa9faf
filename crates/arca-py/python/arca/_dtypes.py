"""Which numpy dtypes arca stores, and how they cross to the native layer."""

import numpy as np

_INT_SIZES = (1, 2, 4, 8)


def check_dtype(dt):
    """Return ``np.dtype(dt)`` if arca can store it, else raise TypeError.

    Supported: bool, (u)int8..64, float32/64 in either byte order, and
    fixed-length bytes ``S<n>``.
    """
    try:
        dt = np.dtype(dt)
    except TypeError as e:
        raise TypeError(f"not a data type: {dt!r}") from e
    k, n = dt.kind, dt.itemsize
    ok = (
        k == "b"
        or (k in "iu" and n in _INT_SIZES)
        or (k == "f" and n in (4, 8))
        or (k == "S" and n >= 1)
    )
    if not ok or dt.fields is not None or dt.subdtype is not None:
        raise TypeError(
            f"arca cannot store dtype {dt!r}: use bool, int8..int64, uint8..uint64, "
            "float32, float64 or fixed-length bytes S<n>"
        )
    return dt


def native(dt):
    """The in-memory (native byte order) form of a stored dtype."""
    return dt if dt.byteorder in "=|" else dt.newbyteorder("=")


def type_string(dt):
    """The numpy type string the native layer parses (explicit byte order)."""
    return dt.str


def as_array(value, dtype=None):
    """``np.asarray`` that turns str data into UTF-8 bytes and rejects objects."""
    if isinstance(value, str):
        value = value.encode("utf-8")
    arr = np.asarray(value)
    if arr.dtype.kind == "U":
        arr = np.char.encode(arr, "utf-8")
    if arr.dtype.kind == "O":
        raise TypeError(f"cannot store Python objects of type {type(value).__name__}")
    if dtype is not None and arr.dtype != dtype:
        arr = arr.astype(dtype)
    return arr
