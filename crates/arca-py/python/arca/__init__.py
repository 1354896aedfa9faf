"""arca: hierarchical scientific data storage with an h5py-like API.

Groups hold groups and datasets; datasets are typed n-dimensional arrays,
optionally chunked and compressed; both carry attributes::

    import numpy as np
    import arca

    with arca.File("run.arca", "w") as f:
        g = f.create_group("detector")
        g.attrs["gain"] = 1.5
        ds = g.create_dataset("frames", shape=(0, 512), maxshape=(None, 512),
                              dtype="u2", chunks=(64, 512), compression="zstd")
        ds.resize(10, axis=0)
        ds[3] = np.arange(512)

    with arca.File("run.arca") as f:
        row = f["detector/frames"][3, ::2]

Errors follow h5py: a missing name is a ``KeyError``, a wrong kind of object
a ``TypeError``, a bad value a ``ValueError``, and problems with the file
itself an ``OSError`` (``ArcaError`` and its subclasses, or the errno-based
``FileNotFoundError``/``FileExistsError``/``PermissionError``).
"""

# The modules form layers, each importing only from those before it
# (tests/test_layers.py checks that there is no cycle, no import inside a
# function and no use of another module's private names):
#   _native, _errors, _links, _selection, _util, version, h5p, h5g, h5d
#              no package imports (bar _native)
#   h5z, filters, h5py_warnings   HDF5 filter ids, h5py's filter names and warnings
#   _dtypes    numpy dtypes <-> type strings, and elements as they cross
#   _rows      the buffer of compounds with variable-length members
#   _regionref region references: selections, reading, their element engine
#   _attrs     attributes
#   _object    HLObject, and the class registry that wraps native handles
#   _dims      dimension scales
#   _datatype  committed datatypes
#   _vds       virtual datasets: layouts, sources, mappings
#   h5ds       h5py's h5ds calls over _dims
#   _vlen      element engines of variable-length data
#   _dataset   Dataset (every dataset, whatever its type)
#   _create    creating datasets
#   _group, _file   the other object classes, each registering itself
# This file imports them all; interop/, mpi, xarray and h5py_compat sit
# above it.
from . import _native, filters, h5d, h5g, h5p, h5py_warnings, h5z, version
from ._attrs import AttributeManager
from ._dataset import Dataset
from ._datatype import Datatype
from ._dtypes import (
    Empty,
    Reference,
    RegionReference,
    bitfield_dtype,
    check_complex_dtype,
    check_enum_dtype,
    check_opaque_dtype,
    check_ref_dtype,
    check_string_dtype,
    check_vlen_dtype,
    complex_compat_dtype,
    enum_dtype,
    opaque_dtype,
    ref_dtype,
    regionref_dtype,
    special_dtype,
    string_dtype,
    string_info,
    time_dtype,
    vlen_dtype,
)
from ._dtypes import h5py_check_dtype as check_dtype
from ._errors import (
    ArcaError,
    ConflictError,
    CorruptError,
    LockedError,
    NeedsRecoveryError,
    PoisonedError,
    ReadOnlyError,
    RemoteError,
    UnsupportedError,
)
from ._file import File, is_hdf5
from ._group import Group
from ._links import ExternalLink, HardLink, SoftLink
from ._vds import UNLIMITED, VirtualLayout, VirtualSource
from ._selection import MultiBlockSlice
from ._view import Viewer, view
from . import h5ds

__version__ = _native.__version__

# The core's free lists (see docs/POOLS.md).
gc = _native.gc
pool_stats = _native.pool_stats
set_pool_limits = _native.set_pool_limits
set_pooling = _native.set_pooling


def io_stats():
    """What reads of every file fetched from storage in this process, as
    ``{"chunks_read": n, "bytes_read": n, "requests": n, "bytes_fetched": n,
    "round_trips": n, "puts": n, "bytes_put": n, "parts": n, "completes": n}``
    (``File.io_stats()`` for one file). A chunk served from a chunk cache is
    not read again; the others count requests to object storage: GETs and
    HEADs, and the PUTs, parts and multipart completions that publish files
    written there (see docs/CLOUD.md)."""
    return _native.io_stats()

__all__ = [
    "ArcaError",
    "AttributeManager",
    "ConflictError",
    "CorruptError",
    "Dataset",
    "Datatype",
    "Empty",
    "ExternalLink",
    "File",
    "Group",
    "HardLink",
    "LockedError",
    "MultiBlockSlice",
    "NeedsRecoveryError",
    "PoisonedError",
    "Reference",
    "RegionReference",
    "ReadOnlyError",
    "RemoteError",
    "SoftLink",
    "UNLIMITED",
    "UnsupportedError",
    "VirtualLayout",
    "VirtualSource",
    "Viewer",
    "bitfield_dtype",
    "check_complex_dtype",
    "check_dtype",
    "check_enum_dtype",
    "check_opaque_dtype",
    "check_ref_dtype",
    "check_string_dtype",
    "check_vlen_dtype",
    "complex_compat_dtype",
    "enum_dtype",
    "opaque_dtype",
    "ref_dtype",
    "regionref_dtype",
    "special_dtype",
    "string_info",
    "gc",
    "io_stats",
    "is_hdf5",
    "pool_stats",
    "set_pool_limits",
    "set_pooling",
    "string_dtype",
    "time_dtype",
    "vlen_dtype",
    "view",
]
