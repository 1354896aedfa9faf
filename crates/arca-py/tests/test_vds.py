"""Virtual datasets checked against h5py: each script runs with ``arca`` and
with ``h5py`` as ``lib`` and must give the same results (errors as
exception type names), then again after reopening the file read-only."""

import os
import shutil

import numpy as np
import pytest

import arca
import h5py

from conftest import EXT, outcome, same_in_both


def sources(lib, directory):
    """raw_k files with a 3-D ``data`` of k's, and a 2-D ``grid``."""
    for k in range(3):
        with lib.File(directory / f"raw_{k}{EXT[lib]}", "w") as f:
            f["data"] = np.full((4, 3, 5), k, dtype="f8")
            f["grid"] = np.arange(60, dtype="i4").reshape(6, 10) + 100 * k


def raw(f, k):
    return os.path.join(os.path.dirname(f.filename), f"raw_{k}{os.path.splitext(f.filename)[1]}")


def describe_map(m):
    return (os.path.splitext(os.path.basename(m.file_name))[0], m.dset_name, m.vspace.shape,
            m.src_space.shape,
            m.vspace.get_select_npoints(), m.src_space.get_select_npoints())


def test_stacked_strided_and_blocked(tmp_path):
    def script(lib, f, reopened):
        if not reopened:
            layout = lib.VirtualLayout(shape=(12, 3, 5), dtype="f4")
            for k in range(3):
                layout[4 * k:4 * k + 4] = lib.VirtualSource(raw(f, k), "data", shape=(4, 3, 5))
            f.create_virtual_dataset("stack", layout, fillvalue=-1)
            inter = lib.VirtualLayout((13, 10), "i4", maxshape=(13, 10))
            for k in range(3):
                src = lib.VirtualSource(raw(f, k), "grid", shape=(6, 10))
                inter[k:12:4, :] = src[::2, :] if k < 2 else src[1:4, :]
            f.create_virtual_dataset("g/inter", inter, fillvalue=7)
            blocks = lib.VirtualLayout((4, 10), "i8")
            mb = lib.MultiBlockSlice(start=0, stride=4, count=2, block=2)
            blocks[:, mb] = lib.VirtualSource(raw(f, 1), "grid", shape=(6, 10))[1:5, 2:6]
            f.create_virtual_dataset("blocks", blocks)
        s, i, b = f["stack"], f["g/inter"], f["blocks"]
        return [
            s[()], s[3:9:2, 1, ::2], s.dtype.str, s.shape, s.is_virtual, i[()], i[5, 3:7],
            i[::4, ::3], i.fillvalue, b[()], b.dtype.str, f["g"].name,
            sorted(describe_map(m) for m in s.virtual_sources()),
            len(i.virtual_sources()), s.chunks, s.maxshape, i.maxshape,
        ]

    same_in_both(tmp_path, script, sources)


def test_lists_points_and_missing_sources(tmp_path):
    def script(lib, f, reopened):
        if not reopened:
            layout = lib.VirtualLayout((20,), "i4")
            src = lib.VirtualSource(raw(f, 0), "grid", shape=(6, 10))
            layout[[1, 4, 5, 9, 16]] = src[2, [0, 3, 4, 8, 9]]
            missing = lib.VirtualSource(raw(f, 9), "grid", shape=(6, 10))
            layout[17:20] = missing[0, :3]
            nodata = lib.VirtualSource(raw(f, 1), "nothing", shape=(3,))
            layout[10:13] = nodata
            f.create_virtual_dataset("v", layout, fillvalue=-3)
            # HDF5 maps no point selections.
            points = lib.VirtualLayout((3,), "i4")
            mask = np.zeros((6, 10), bool)
            mask[[0, 2, 5], [1, 1, 9]] = True
            src = lib.VirtualSource(raw(f, 2), "grid", shape=(6, 10))
            refused = outcome(lambda: points.__setitem__(slice(None), src[mask]))
        else:
            refused = None
        return [f["v"][()], f["v"][::3], refused]

    same_in_both(tmp_path, script, sources)


def test_same_file_sources_and_errors(tmp_path):
    def script(lib, f, reopened):
        if not reopened:
            f["x"] = np.arange(10, dtype="f8")
            layout = lib.VirtualLayout((2, 5), "f8")
            layout[0] = lib.VirtualSource(f["x"])[:5]
            layout[1] = lib.VirtualSource(f["x"])[::2]
            f.create_virtual_dataset("v", layout)
            with f.build_virtual_dataset("b", (2, 10), "f8") as l2:
                l2[0] = lib.VirtualSource(f.filename, "x", shape=(10,))
            with f.build_virtual_dataset("none", (3, 4), np.int16):
                pass
            errs = [
                outcome(lambda: layout.__setitem__(np.s_[0, :3], lib.VirtualSource(f["x"]))),
                outcome(lambda: lib.VirtualSource(f["x"], "b")),
                outcome(lambda: lib.VirtualSource(f["x"], shape=(1,))),
                outcome(lambda: lib.VirtualSource(f["x"], maxshape=(None,))),
                outcome(lambda: lib.VirtualSource(f["x"], dtype=int)),
                outcome(lambda: lib.VirtualSource("a", shape=(3,))),
                outcome(lambda: lib.VirtualSource("a", "b")),
                outcome(lambda: lib.VirtualSource("a", "b", (4,))[1:][0]),
                outcome(lambda: f["x"].virtual_sources()),
            ]
        else:
            errs = []
        return [
            f["v"][()], f["b"][()], f["none"][()], f["none"].virtual_sources(),
            [m.file_name for m in f["v"].virtual_sources()], f["x"].is_virtual, errs,
        ]

    same_in_both(tmp_path, script)


def test_virtual_source_shapes():
    for lib in (arca, h5py):
        vs = lib.VirtualSource("t", "t", (20, 30, 30))
        got = [vs[k].shape for k in [np.s_[5], np.s_[5, :, 10], np.s_[5:10], np.s_[-10:-4],
                                     np.s_[6:12:2, :, 20:26:3], np.s_[...], np.s_[0:1, ..., 5:6]]]
        assert got == [(30, 30), (30,), (5, 30, 30), (6, 30, 30), (3, 30, 2), (20, 30, 30),
                       (1, 30, 1)], lib
        assert lib.VirtualSource("t", "t", 20, maxshape=30).maxshape == (30,)


@pytest.mark.parametrize("lib", [arca, h5py])
def test_unlimited_mapping_grows_with_its_source(tmp_path, lib):
    path = tmp_path / ("u" + EXT[lib])
    with lib.File(path, "w") as f:
        src = f.create_dataset("source", data=np.arange(20).reshape(10, 2), maxshape=(None, 2),
                               chunks=(10, 1), fillvalue=-1)
        layout = lib.VirtualLayout((10, 1), int, maxshape=(None, 1))
        layout[:lib.UNLIMITED, 0] = lib.VirtualSource(src)[:lib.UNLIMITED, 1]
        f.create_virtual_dataset("virtual", layout)
    with lib.File(path, "a") as f:
        v = f["virtual"]
        first = (v.shape, v[()].ravel().tolist())
        f["source"].resize(15, axis=0)
        second = (v.shape, v[()].ravel().tolist())
        f["source"][10:, 1] = 9
        third = v[10:].ravel().tolist()
    assert first == ((10, 1), list(range(1, 20, 2)))
    assert second == ((15, 1), list(range(1, 20, 2)) + [-1] * 5)
    assert third == [9] * 5


@pytest.mark.parametrize("lib", [arca, h5py])
def test_relative_sources_follow_the_file(tmp_path, lib):
    """Sources named relative to the virtual file (or as it) are found
    after the files move together; a moved source reads as the fill."""
    d = tmp_path / "a"
    d.mkdir()
    with lib.File(d / ("src" + EXT[lib]), "w") as f:
        f["data"] = np.arange(4.0)
    with lib.File(d / ("v" + EXT[lib]), "w") as f:
        f["own"] = np.arange(4.0) * -1
        layout = lib.VirtualLayout((2, 4), "f8")
        layout[0] = lib.VirtualSource("src" + EXT[lib], "data", shape=(4,))
        layout[1] = lib.VirtualSource(f["own"])
        f.create_virtual_dataset("v", layout)
    moved = tmp_path / "b"
    shutil.move(str(d), str(moved))
    with lib.File(moved / ("v" + EXT[lib]), "r") as f:
        assert f["v"][()].tolist() == [[0, 1, 2, 3], [0, -1, -2, -3]]
    os.rename(moved / ("src" + EXT[lib]), moved / ("gone" + EXT[lib]))
    with lib.File(moved / ("v" + EXT[lib]), "r") as f:
        assert f["v"][()].tolist() == [[0, 0, 0, 0], [0, -1, -2, -3]]


def test_arca_refuses_writes_and_checks_mappings(tmp_path):
    with arca.File(tmp_path / "x.arca", "w") as f:
        f["x"] = np.arange(4)
        layout = arca.VirtualLayout((4,), "i8")
        layout[:] = arca.VirtualSource(f["x"])
        v = f.create_virtual_dataset("v", layout)
        with pytest.raises(ValueError):
            v[0] = 5
        assert type(v) is arca.Dataset
        assert f._native.check()["datasets"] == 2
