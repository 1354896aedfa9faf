"""arca.h5ds side by side with h5py.h5ds: the same calls on dataset ids
give the same answers, and the same error types; the high-level dims
views agree with what h5ds set up."""

import h5py
import h5py.h5ds
import numpy as np

import arca
import arca.h5ds
from conftest import EXT
from test_h5py_file import both, outcome

H5DS = {arca: arca.h5ds, h5py: h5py.h5ds}


def setup(lib, f):
    f["data"] = np.ones((4, 3, 2), "f")
    f["x1"] = np.ones(2, "f")
    f["x2"] = np.ones(2, "f")
    f["y1"] = np.ones(3, "f")
    ds = H5DS[lib]
    ds.set_scale(f["x1"].id)
    ds.set_scale(f["x2"].id, b"x2 name")
    ds.set_scale(f["y1"].id, b"y1 name")
    ds.attach_scale(f["data"].id, f["x1"].id, 2)
    ds.attach_scale(f["data"].id, f["x2"].id, 2)
    ds.attach_scale(f["data"].id, f["y1"].id, 1)
    ds.set_label(f["data"].id, 0, b"z")
    ds.set_label(f["data"].id, 2, b"x")


def test_h5ds_calls_like_h5py(tmp_path):
    def script(lib, d):
        ds = H5DS[lib]
        with lib.File(d / ("f" + EXT[lib]), "w") as f:
            setup(lib, f)
            data = f["data"].id
            out = [
                [ds.is_scale(f[n].id) for n in ("x1", "x2", "y1", "data")],
                [ds.get_scale_name(f[n].id) for n in ("x1", "x2", "y1")],
                [ds.get_num_scales(data, i) for i in range(3)],
                [ds.get_label(data, i) for i in range(3)],
                [ds.is_attached(data, f["x1"].id, i) for i in range(3)],
                ds.iterate(data, 2, lambda s: ds.get_scale_name(s) if
                           ds.get_scale_name(s) == b"x2 name" else None),
                ds.iterate(data, 2, lambda s: None),
                ds.iterate(data, 2, ds.get_scale_name, 1),
                outcome(lambda: ds.iterate(data, 0, lambda s: 1)),
                f["x1"].attrs["CLASS"], f["x2"].attrs["NAME"],
            ]
            ds.detach_scale(data, f["x1"].id, 2)
            out.append([ds.get_num_scales(data, i) for i in range(3)])
            out.append(outcome(lambda: ds.detach_scale(data, f["x1"].id, 2)))
            out.append(outcome(lambda: ds.attach_scale(data, f["data"].id, 0)))
            out.append(outcome(lambda: ds.attach_scale(f["x2"].id, f["y1"].id, 0)))
            out.append(outcome(lambda: ds.set_scale(data)))
            # The high-level views see what h5ds set up.
            dims = f["data"].dims
            out.append([dims[i].label for i in range(3)])
            out.append([list(dims[i]) for i in range(3)])
            out.append([[s.name for s in dims[i].values()] for i in range(3)])
            out.append(outcome(lambda: dims[0][0]))
            out.append(dims[1]["y1 name"].name)
            out.append(outcome(lambda: dims[1]["nope"]))
        with lib.File(d / ("f" + EXT[lib]), "r") as f:
            out.append([ds.get_num_scales(f["data"].id, i) for i in range(3)])
            out.append(ds.get_label(f["data"].id, 2))
        return out
    both(tmp_path, script)


def test_dims_views_like_h5py(tmp_path):
    def script(lib, d):
        with lib.File(d / ("f" + EXT[lib]), "w") as f:
            setup(lib, f)
            dims = f["data"].dims
            f["data2"] = np.ones((4, 3, 2), "f")
            f["data2"].attrs["DIMENSION_LIST"] = f["data"].attrs["DIMENSION_LIST"]
            out = [
                len(dims), [len(x) for x in dims], list(dims) == [dims[0], dims[1], dims[2]],
                dims[2].keys(), [s.name for s in dims[2].values()],
                [(k, s.name) for k, s in dims[2].items()],
                [len(x) for x in f["data2"].dims], outcome(lambda: dims[3]),
                repr(dims[2])[1:16],
            ]
            dims[0].label = "depth"
            out.append([x.label for x in dims])
            f["x1"].make_scale(b"renamed")
            out.append(dims[2]["renamed"].name)
            # data2 has scales of its own (its DIMENSION_LIST) to become one.
            out.append(outcome(lambda: dims[0].attach_scale(f["data2"])))
            f["plain"] = np.ones(4)
            dims[0].attach_scale(f["plain"])
            out.append((f["plain"].is_scale, len(dims[0])))
            return out
    both(tmp_path, script)


def test_is_scale_on_ids_and_datasets(f):
    f["x"] = np.arange(3.0)
    f["x"].make_scale("x")
    assert arca.h5ds.is_scale(f["x"]) and arca.h5ds.is_scale(f["x"].id)
    assert arca.h5ds.get_scale_name(f["x"]) == b"x"
    f.create_group("g")
    for bad in (f["g"], f["g"].id, 3):
        try:
            arca.h5ds.is_scale(bad)
        except TypeError:
            continue
        raise AssertionError(f"is_scale({bad!r}) did not refuse")
