"""What the importer and the exporter share: the errors and the report,
loading h5py, the temporary file beside the destination, and boxes of
values moved along the first axis."""

import contextlib
import os
import tempfile

import numpy as np

# The filter mask of a chunk every filter skipped (stored unfiltered).
ALL = 0xFFFFFFFF
# Bytes of values copied at a time when chunks cannot be copied as stored.
SLAB = 64 << 20
# Bytes of stored chunks moved per call.
BATCH = 32 << 20


class ConversionError(ValueError):
    """A file that cannot be converted as asked: with ``strict``, the list
    of what would not have mapped one to one (``.report``)."""

    __module__ = "arca.interop"  # where it is imported from

    def __init__(self, message, report=()):
        super().__init__(message)
        self.report = list(report)


class Report(list):
    """What did not map one to one: ``(path, what was done)`` pairs."""

    __module__ = "arca.interop"

    def add(self, path, note):
        self.append((path, note))


def load_h5py():
    """h5py, with hdf5plugin's filters registered when it is installed."""
    try:
        import h5py
    except ImportError as e:  # pragma: no cover - the package depends on it
        raise ImportError("HDF5 import and export need h5py: pip install h5py") from e
    try:
        import hdf5plugin  # noqa: F401 -- registers HDF5's plugin filters
    except ImportError:
        pass
    return h5py


@contextlib.contextmanager
def staged(dst, force):
    """Yield a new temporary file in ``dst``'s directory to write the result
    into; renamed over ``dst`` when the block ends, removed if it fails, so
    no partial ``dst`` is ever left. An existing ``dst`` is refused unless
    ``force``, before any work and again at the rename."""

    def refuse_existing():
        if os.path.exists(dst) and not force:
            raise FileExistsError(f"{dst} exists (pass force=True / --force to replace it)")

    refuse_existing()
    d = os.path.dirname(os.path.abspath(dst))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(dst) + ".", suffix=".part", dir=d)
    os.close(fd)
    try:
        yield tmp
        refuse_existing()
        os.replace(tmp, dst)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def as_exact(value, dt):
    """``value`` as a contiguous array of exactly ``dt`` (the file's byte
    order), the bytes between compound members zero."""
    value = np.asarray(value)
    out = np.zeros(value.shape, dtype=dt)
    out[...] = value
    return out


def slabs(shape, itemsize):
    """``(start, count)`` boxes along the first axis of about ``SLAB`` bytes."""
    if not shape:
        yield (), ()
        return
    row = max(1, itemsize * int(np.prod(shape[1:], dtype=np.int64)))
    step = max(1, SLAB // row)
    for i in range(0, shape[0], step):
        n = min(step, shape[0] - i)
        yield (i,) + (0,) * (len(shape) - 1), (n,) + tuple(shape[1:])


def exact_io(h5py, dsid, start, count, arr, write):
    """Read or write one box with the file's own type as the memory type:
    strings move as the file holds them (HDF5 would re-pad them otherwise)
    and numbers in the file's byte order."""
    tid = dsid.get_type()
    if not count:
        fspace, mspace = h5py.h5s.ALL, h5py.h5s.ALL
    else:
        fspace = dsid.get_space()
        fspace.select_hyperslab(start, count)
        mspace = h5py.h5s.create_simple(count)
    if write:
        dsid.write(mspace, fspace, arr, mtype=tid)
    else:
        dsid.read(mspace, fspace, arr, mtype=tid)
