"""Versions, laid out as ``h5py.version`` lays them out, so code that asks
h5py which release it runs on gets an answer from arca too::

    import arca
    arca.version.version               # "0.1.0": arca's own release
    arca.version.hdf5_version_tuple    # (2, 0, 0)
    print(arca.version.info)

``version``/``version_tuple`` are arca's own release. arca links no libhdf5:
``hdf5_version``/``hdf5_version_tuple`` (and ``hdf5_built_version_tuple``)
name the HDF5 release whose behaviour arca's h5py-shaped API follows where
h5py's depends on the HDF5 underneath (the newest ``libver`` bound, which
keyword combinations are refused). ``h5py_version``/``h5py_version_tuple``
name the h5py release whose high-level API arca follows, and
``api_version``/``api_version_tuple`` h5py's HDF5 API level.
"""

import sys
from collections import namedtuple

import numpy

from . import _native

# h5py's fields: an int each, except ``pre`` (a string such as "rc1").
VersionTuple = namedtuple("VersionTuple", "major minor bugfix pre post dev")


def _parse(text):
    """``VersionTuple`` of a ``major.minor.bugfix[pre]`` string."""
    nums, pre = [], None
    for part in text.split(".")[:3]:
        digits = ""
        for ch in part:
            if not ch.isdigit():
                break
            digits += ch
        nums.append(int(digits or 0))
        if len(digits) < len(part):
            pre = part[len(digits):]
            break
    nums += [0] * (3 - len(nums))
    return VersionTuple(nums[0], nums[1], nums[2], pre, None, None)


version = _native.__version__
version_tuple = _parse(version)

h5py_version = "3.16.0"
h5py_version_tuple = _parse(h5py_version)

hdf5_version_tuple = (2, 0, 0)
hdf5_version = "%d.%d.%d" % hdf5_version_tuple
hdf5_built_version_tuple = hdf5_version_tuple

api_version_tuple = (1, 8)
api_version = "%d.%d" % api_version_tuple

info = f"""\
Summary of the arca configuration
---------------------------------

arca    {version}
h5py API        {h5py_version} (followed; arca links no libhdf5)
HDF5 behaviour  {hdf5_version}
Python  {sys.version}
sys.platform    {sys.platform}
sys.maxsize     {sys.maxsize}
numpy   {numpy.__version__}
"""
