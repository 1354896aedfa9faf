"""Object references and dimension scales, checked against h5py: the same
script runs with ``arca`` and with ``h5py`` as ``lib``, before and after
reopening the file, and must give the same results."""

import numpy as np
import pytest

import arca
import h5py

from conftest import outcome, same_in_both


def test_object_references(tmp_path):
    def script(lib, f, reopened):
        if not reopened:
            f["a/x"] = np.arange(3)
            g = f.create_group("g")
            r = f.create_dataset("refs", (3,), dtype=lib.ref_dtype)
            r[0] = f["a/x"].ref
            r[2] = g.ref
            f.attrs["one"] = f["a/x"].ref
            rec = np.dtype([("obj", lib.ref_dtype), ("n", "<i4")])
            t = f.create_dataset("t", (2,), dtype=rec)
            t[1] = (g.ref, 9)
        r = f["refs"]
        return [
            f[r[0]], f[r[2]], bool(r[1]), f[f.attrs["one"]], f[f.attrs["one"]] == f["a/x"],
            f[f["t"][1]["obj"]], int(f["t"][1]["n"]), bool(f["t"][0]["obj"]),
            lib.check_dtype(ref=r.dtype) is not None, outcome(lambda: f[r[1]]),
        ]

    same_in_both(tmp_path, script)


def test_dimension_scales(tmp_path):
    def script(lib, f, reopened):
        if not reopened:
            f["x"] = np.linspace(0, 1, 3)
            f["y"] = np.arange(4.0)
            f["y2"] = np.arange(4.0) * 2
            d = f.create_dataset("d", data=np.zeros((3, 4)))
            f["x"].make_scale("x")
            f["y"].make_scale()
            d.dims[0].attach_scale(f["x"])
            d.dims[1].attach_scale(f["y"])
            d.dims[1].attach_scale(f["y2"])
            d.dims[0].label = "rows"
        d = f["d"]
        return [
            len(d.dims), len(d.dims[0]), len(d.dims[1]), d.dims[0].label, d.dims[1].label,
            d.dims[0][0], d.dims[1][1], d.dims[0]["x"], list(d.dims[0].keys()),
            list(d.dims[1].keys()), [v.name for v in d.dims[1].values()],
            f["x"].is_scale, f["y2"].is_scale, d.is_scale,
            outcome(lambda: d.dims[2]), outcome(lambda: d.dims[0]["nope"]),
        ]

    same_in_both(tmp_path, script)


def test_detaching_scales(tmp_path):
    def script(lib, f, reopened):
        if not reopened:
            f["x"] = np.arange(3.0)
            f["y"] = np.arange(4.0)
            d = f.create_dataset("d", data=np.zeros((3, 4)))
            e = f.create_dataset("e", data=np.zeros(3))
            f["x"].make_scale("x")
            f["y"].make_scale("y")
            d.dims[0].attach_scale(f["x"])
            e.dims[0].attach_scale(f["x"])
            d.dims[1].attach_scale(f["y"])
            d.dims[1].detach_scale(f["y"])
        d, e = f["d"], f["e"]
        return [len(d.dims[0]), len(d.dims[1]), len(e.dims[0]),
                "REFERENCE_LIST" in f["y"].attrs, "DIMENSION_LIST" in d.attrs]

    same_in_both(tmp_path, script)


def test_deleting_a_scale_detaches_it_everywhere(path):
    """Where h5py leaves each dataset a reference to a deleted scale (so
    ``len(ds.dims[0])`` still counts it and reading it fails), arca
    detaches the scale from every dataset first. A scale with a second
    name stays attached until its last name goes."""
    with arca.File(path, "w") as f:
        f["x"] = np.arange(3.0)
        f["x"].make_scale("x")
        d = f.create_dataset("d", data=np.zeros((3, 2)))
        e = f.create_dataset("e", data=np.zeros(3))
        d.dims[0].attach_scale(f["x"])
        e.dims[0].attach_scale(f["x"])
        f["x_alias"] = f["x"]
        del f["x"]
        assert len(d.dims[0]) == 1 and d.dims[0][0] == f["x_alias"]
        del f["x_alias"]
        assert len(d.dims[0]) == 0 and len(e.dims[0]) == 0
        assert "DIMENSION_LIST" not in d.attrs
        f.check()


def test_scales_survive_reopen_and_check(path):
    with arca.File(path, "w") as f:
        f["time"] = np.arange(10.0)
        f["time"].make_scale("time")
        v = f.create_dataset("v", data=np.ones(10))
        v.dims[0].attach_scale(f["time"])
        v.dims[0].label = "time"
    with arca.File(path, "r") as f:
        assert f["v"].dims[0][0] == f["time"]
        assert f["v"].dims[0].label == "time"
        f.check()


def test_attach_refusals(f):
    f["x"] = np.arange(3.0)
    d = f.create_dataset("d", data=np.zeros(3))
    with pytest.raises(TypeError):
        d.dims[0].attach_scale(f.create_group("g"))
    with pytest.raises(RuntimeError):
        d.dims[0].attach_scale(d)
    with pytest.raises(RuntimeError):  # h5py's type: HDF5's detach fails
        d.dims[0].detach_scale(f["x"])
