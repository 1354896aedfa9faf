"""What h5py's test modules import from h5py's private or low-level parts,
as arca provides it (see run.py)."""

import importlib
import math
import os
import threading

import arca


class LowLevelCall(AssertionError):
    """A test reached libhdf5's low-level API, which arca does not carry."""


class LowLevel:
    """Stands for one of libhdf5's low-level modules: every use fails."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        raise LowLevelCall(f"{self._name}.{attr} is libhdf5's low-level API")

    def __call__(self, *a, **k):
        raise LowLevelCall(f"{self._name}() is libhdf5's low-level API")


phil = threading.RLock()


def private(module, name):
    """``from <h5py private module> import name``."""
    table = {
        ("h5py._objects", "phil"): lambda: phil,
        # h5py's flag for an HDF5 built with virtual datasets: arca has them.
        ("h5py._hl.vds", "vds_support"): lambda: True,
        # h5py's path helpers for libhdf5 (which takes bytes paths).
        ("h5py._hl.compat", "filename_encode"): lambda: lambda p: os.fsencode(os.fspath(p)),
        ("h5py._hl.compat", "filename_decode"): lambda: os.fsdecode,
        # h5py's product of a shape's entries (1 for ()).
        ("h5py._hl.base", "product"): lambda: lambda shape: math.prod(shape),
        # Whether an object's id is a dataset with a null dataspace (Empty).
        ("h5py._hl.base", "is_empty_dataspace"): lambda: lambda oid: oid.shape() is None,
        ("h5py.h5py_warnings", "H5pyDeprecationWarning"):
            lambda: arca.h5py_warnings.H5pyDeprecationWarning,
        ("h5py.h5py_warnings", "H5pyWarning"): lambda: arca.h5py_warnings.H5pyWarning,
    }
    key = (module, name)
    if key in table:
        return table[key]()
    public = getattr(arca, name, None)
    if public is not None:
        return public
    return LowLevel(f"{module}.{name}")


class PartLowLevel(LowLevel):
    """A low-level module of which arca carries a part (``h5py.h5d``: its
    constants, :mod:`arca.h5d`): that part answers, the rest fails as
    :class:`LowLevel` does."""

    def __init__(self, name, part):
        super().__init__(name)
        self._part = part

    def __getattr__(self, attr):
        if attr in vars(self._part) and not attr.startswith("_"):
            return getattr(self._part, attr)
        return super().__getattr__(attr)


# h5py's low-level modules arca carries a part of.
PARTS = {"h5py.h5d": arca.h5d}


def module(name):
    """``import h5py.<name> as x`` / ``from h5py import <name>``."""
    if name in PARTS:
        return PartLowLevel(name, PARTS[name])
    return LowLevel(name)


def low_level(module, name):
    """``from <h5py low-level module> import name``: what the table above
    maps (``phil``), else a placeholder that fails when used."""
    if (module, name) == ("h5py._objects", "phil"):
        return phil
    return LowLevel(f"{module}.{name}")


class _FastReader:
    """h5py's ``Dataset._fast_reader``, its compiled reader, which the tests
    read with beside indexing: arca has one reader, indexing."""

    def __init__(self, ds):
        self._ds = ds

    def read(self, args):
        return self._ds[args]


arca.Dataset._fast_reader = property(_FastReader)
