"""Shared fixtures: a fresh file path per test, and the h5py peer."""

import os

import h5py
import numpy as np
import pytest

import arca

# Every dtype arca stores, in both byte orders where that means anything.
NUMERIC = [
    "?", "i1", "u1", "<i2", ">i2", "<u2", ">u2", "<i4", ">i4", "<u4", ">u4",
    "<i8", ">i8", "<u8", ">u8", "<f4", ">f4", "<f8", ">f8",
]
ALL_DTYPES = NUMERIC + ["S1", "S7"]


def random_array(rng, shape, dtype):
    """Random values of `dtype` covering its range (NaN-free floats)."""
    dt = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    if dt.kind == "b":
        a = rng.integers(0, 2, n).astype(bool)
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        a = rng.integers(info.min, info.max, n, dtype=np.int64 if dt.kind == "i" else np.uint64,
                         endpoint=True).astype(dt)
    elif dt.kind == "f":
        a = (rng.standard_normal(n) * 1e3).astype(dt)
    else:
        # Letters, NUL-padded to a random length: what both peers store alike.
        chars = rng.integers(ord("a"), ord("z") + 1, (n, dt.itemsize), dtype=np.uint8)
        lens = rng.integers(0, dt.itemsize + 1, n)
        chars[np.arange(dt.itemsize)[None, :] >= lens[:, None]] = 0
        a = chars.reshape(-1).view(dt)
    return a.reshape(shape)


def native(dt):
    dt = np.dtype(dt)
    return dt if dt.byteorder in "=|" else dt.newbyteorder("=")


def assert_same(got, want):
    """Equal shape and bit-identical values, compared in native byte order."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype.kind == want.dtype.kind and got.dtype.itemsize == want.dtype.itemsize, (
        got.dtype, want.dtype)
    g = np.ascontiguousarray(got, dtype=native(got.dtype)).tobytes()
    w = np.ascontiguousarray(want, dtype=native(got.dtype)).tobytes()
    assert g == w


def outcome(fn):
    """A call's value, or the name of the exception type it raised: what
    the scripts run against both arca and h5py compare."""
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 -- the type is the result compared
        return type(e).__name__


EXT = {arca: ".arca", h5py: ".h5"}


def describe(x):
    """A library-neutral description of a result, for comparing what arca
    and h5py return: objects by kind, name and value, links and
    references by what they hold, classes by name, arrays as lists."""
    if isinstance(x, (arca.SoftLink, h5py.SoftLink)):
        return ("SoftLink", x.path)
    if isinstance(x, (arca.ExternalLink, h5py.ExternalLink)):
        return ("ExternalLink", x.filename, x.path)
    if isinstance(x, (arca.HardLink, h5py.HardLink)):
        return ("HardLink",)
    if isinstance(x, (arca.Reference, h5py.Reference)):
        return ("ref", bool(x))
    if isinstance(x, type):
        return ("class", x.__name__)
    if isinstance(x, (arca.Dataset, h5py.Dataset)):
        return ("Dataset", x.name, describe(x[()]))
    if isinstance(x, (arca.Group, h5py.Group)):
        return ("Group", x.name, list(x))
    if isinstance(x, np.ndarray):
        return [describe(v) for v in x.tolist()] if x.dtype.kind == "O" else x.tolist()
    if isinstance(x, list):
        return [describe(v) for v in x]
    if isinstance(x, tuple):
        return tuple(describe(v) for v in x)
    if isinstance(x, bytes):
        return x.decode()
    return x


def same_in_both(tmp_path, script, prepare=None):
    """Run ``script(lib, f, reopened)`` with arca and with h5py: once on a
    new file, then again on it reopened read-only; the described results
    must be equal. ``prepare(lib, directory)`` runs first for each library
    (e.g. to write a file an external link names)."""
    got = {}
    for lib in (arca, h5py):
        d = tmp_path / lib.__name__
        d.mkdir()
        if prepare is not None:
            prepare(lib, d)
        path = d / ("main" + EXT[lib])
        with lib.File(path, "w") as f:
            first = describe(script(lib, f, False))
        with lib.File(path, "r") as f:
            second = describe(script(lib, f, True))
        got[lib] = first, second
    assert got[arca] == got[h5py]


@pytest.fixture
def path(tmp_path):
    return tmp_path / "test.arca"


@pytest.fixture
def h5path(tmp_path):
    return tmp_path / "peer.h5"


@pytest.fixture
def f(path):
    with arca.File(path, "w") as fh:
        yield fh


@pytest.fixture
def pair(path, h5path):
    """An arca file and an h5py file, open for writing side by side."""
    a = arca.File(path, "w")
    h = h5py.File(h5path, "w")
    yield a, h
    a.close()
    h.close()


def scaled(n):
    """``n`` times ``ARCA_TEST_SCALE`` (1 when unset), at least 1: the one knob
    every heavy test's count follows (``make check`` runs 0.1)."""
    text = os.environ.get("ARCA_TEST_SCALE", "1")
    try:
        scale = float(text)
    except ValueError:
        scale = -1.0
    if not scale > 0 or scale == float("inf"):
        raise ValueError(f"ARCA_TEST_SCALE={text!r}: need a positive number")
    return max(1, round(n * scale))
