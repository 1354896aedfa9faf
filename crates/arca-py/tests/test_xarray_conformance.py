"""xarray's own backend tests, run against arca: the CF-encoding suite
every netCDF-like backend passes (``CFEncodedBase`` in xarray's
``test_backends``), with ``to_arca`` writing and ``engine="arca"`` reading.

Left out, with why: ``test_load_async`` (an ``async def`` test: it needs a
pytest plug-in for coroutines that this suite does not install)."""

import contextlib

# h5py and hdf5plugin before the suite's own imports (netCDF4 among them):
# both wheels carry an HDF5, and plugin filters registered the other way
# round fail later tests of this process (test_interop's corpus).
import h5py  # noqa: F401
import hdf5plugin  # noqa: F401
import xarray as xr
from xarray.tests.conftest import time_unit, use_dask  # noqa: F401 -- fixtures the suite uses
from xarray.tests.test_backends import CFEncodedBase, create_tmp_file

import arca
from arca.xarray import ArcaWriteStore, to_arca


class TestArcaBackend(CFEncodedBase):
    engine = "arca"
    file_format = None

    test_load_async = None

    def save(self, dataset, path, **kwargs):
        kwargs.pop("format", None)
        return to_arca(dataset, path, **kwargs)

    @contextlib.contextmanager
    def open(self, path, **kwargs):
        with xr.open_dataset(path, engine="arca", **kwargs) as ds:
            yield ds

    @contextlib.contextmanager
    def create_store(self):
        with create_tmp_file() as path:
            with arca.File(path, "w", track_order=True) as f:
                yield ArcaWriteStore(f)
