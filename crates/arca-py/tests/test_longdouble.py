"""Extended precision (numpy's longdouble and clongdouble, x87 80-bit
numbers in 16 bytes on x86-64) checked against h5py: each script runs with
``arca`` and with ``h5py`` as ``lib`` and must give the same results, then
again after reopening the file read-only; HDF5 files holding them import
and export with every bit kept."""

import numpy as np
import pytest

import arca
import arca.interop as interop
import h5py

from conftest import same_in_both

X87 = np.dtype(np.longdouble).itemsize == 16 and np.finfo(np.longdouble).nmant == 63
pytestmark = pytest.mark.skipif(not X87, reason="numpy's longdouble is not x87 extended "
                                                "precision on this machine")


def exact(a):
    """Values as their significant bytes (the x87 10 of every 16)."""
    a = np.ascontiguousarray(a)
    raw = a.view(np.uint8).reshape(-1, 16)[:, :10]
    return [a.dtype.str, a.shape, raw.tolist()]


def test_longdouble_datasets_and_attributes(tmp_path):
    third = np.longdouble(1) / np.longdouble(3)

    def script(lib, f, reopened):
        if not reopened:
            f.create_dataset("x", data=np.arange(10, dtype=np.longdouble) * third)
            f.create_dataset("z", data=np.array([third + 2j * third, -1j], dtype=np.clongdouble))
            f.create_dataset("c", (4,), dtype=np.longdouble, chunks=(2,), fillvalue=third)[1] = 7
            f.attrs["t"] = third
            f.create_dataset("e", (63,), dtype=np.longdouble)
        return [exact(f["x"][()]), exact(f["z"][()]), exact(f["c"][()]), exact(f["c"].fillvalue),
                exact(np.asarray(f.attrs["t"])), f["e"].dtype == np.longdouble,
                f["z"].dtype == np.dtype("complex256"), f["x"][3] == 3 * third]

    same_in_both(tmp_path, script)


def test_hdf5_long_doubles_import_and_export(tmp_path):
    src, imported, back = tmp_path / "src.h5", tmp_path / "x.arca", tmp_path / "back.h5"
    v = np.arange(5, dtype=np.longdouble) / np.longdouble(7)
    with h5py.File(src, "w") as f:
        f["x"] = v
        f["z"] = v * 1j
    assert interop.import_hdf5(src, imported) == []
    with arca.File(imported, "r") as f:
        assert exact(f["x"][()]) == exact(v) and exact(f["z"][()]) == exact(v * 1j)
    assert interop.export_hdf5(imported, back) == []
    with h5py.File(back, "r") as f:
        assert exact(f["x"][()]) == exact(v) and exact(f["z"][()]) == exact(v * 1j)
        assert f["x"].id.get_type().get_precision() == 80
