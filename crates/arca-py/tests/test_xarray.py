"""xarray and dask over arca: the ``engine="arca"`` backend (lazy, chunk
by chunk, dimension scales as netCDF-4 lays them out), ``to_arca`` for
datasets and trees, ``arca export`` read back by the netCDF4 engine, and
dask with threads, processes and a distributed cluster."""

import os
import subprocess
import sys

import dask
import dask.array as da
import numpy as np
import pandas as pd
import pytest
import xarray as xr

import arca
from arca.xarray import to_arca

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def sample():
    times = pd.date_range("2000-01-01", periods=6, freq="6h")
    ds = xr.Dataset(
        {"temp": (("time", "x"), np.arange(24, dtype="f4").reshape(6, 4),
                  {"units": "K", "long_name": "temperature"}),
         "name": (("x",), np.array(["a", "bb", "ccc", "é"], dtype=object)),
         "count": (("time",), np.array([1, 2, np.nan, 4, 5, 6], "f4")),
         "scalar": ((), 3.5)},
        coords={"time": times, "x": np.arange(4) * 10.0, "lat": (("x",), np.linspace(0, 1, 4))},
        attrs={"title": "demo", "n": np.int32(3)})
    ds["temp"][2, 1] = np.nan
    ds["count"].encoding.update(dtype="i2", _FillValue=-1)
    ds["temp"].encoding.update(chunksizes=(2, 4), zlib=True, complevel=4)
    return ds


def export(src, dst):
    exe = os.path.join(REPO, "target", "release", "arca")
    env = dict(os.environ, ARCA_PYTHON=sys.executable)
    subprocess.run([exe, "export", "--quiet", str(src), str(dst)], env=env, check=True)


def test_a_dataset_comes_back_as_netcdf4_gives_it(tmp_path):
    ds = sample()
    to_arca(ds, tmp_path / "a.arca")
    ds.to_netcdf(tmp_path / "ref.nc", engine="netcdf4")
    with xr.open_dataset(tmp_path / "a.arca", engine="arca") as a, \
            xr.open_dataset(tmp_path / "ref.nc", engine="netcdf4") as ref:
        xr.testing.assert_identical(a.load(), ref.load())
        # CF decoding is xarray's: times, the fill value, the encoded dtype.
        assert a["time"].dtype.kind == "M" and np.isnan(a["count"][2])
        assert a["count"].encoding["dtype"] == np.dtype("i2")
        assert a["temp"].encoding["chunksizes"] == (2, 4)
        assert a["temp"].encoding["preferred_chunks"] == {"time": 2, "x": 4}
        assert list(a.variables) == list(ref.variables)
    # Without encodings to undo, the round trip is the dataset itself.
    plain = ds.drop_vars("count")
    to_arca(plain, tmp_path / "p.arca")
    with xr.open_dataset(tmp_path / "p.arca", engine="arca") as p:
        xr.testing.assert_identical(p.load(), plain)


def test_arca_export_is_a_netcdf4_file(tmp_path):
    to_arca(sample(), tmp_path / "a.arca")
    export(tmp_path / "a.arca", tmp_path / "a.nc")
    with xr.open_dataset(tmp_path / "a.arca", engine="arca") as a, \
            xr.open_dataset(tmp_path / "a.nc", engine="netcdf4") as nc:
        xr.testing.assert_identical(nc.load(), a.load())


def test_datatree_groups_round_trip(tmp_path):
    root = xr.Dataset({"a": ("x", np.arange(3.0))}, coords={"x": [10, 20, 30]},
                      attrs={"level": "root"})
    child = xr.Dataset({"b": (("x", "y"), np.ones((3, 2), "i4"))}, attrs={"level": "child"})
    leaf = xr.Dataset({"s": ("z", np.array(["p", "q"], dtype=object))})
    tree = xr.DataTree.from_dict({"/": root, "/child": child, "/child/leaf": leaf})
    to_arca(tree, tmp_path / "t.arca")
    tree.to_netcdf(tmp_path / "t.nc", engine="netcdf4")
    got = xr.open_datatree(tmp_path / "t.arca", engine="arca").load()
    want = xr.open_datatree(tmp_path / "t.nc", engine="netcdf4").load()
    xr.testing.assert_identical(got, want)
    one = xr.open_dataset(tmp_path / "t.arca", engine="arca", group="child/leaf")
    assert list(one["s"].values) == ["p", "q"]
    export(tmp_path / "t.arca", tmp_path / "back.nc")
    xr.testing.assert_identical(xr.open_datatree(tmp_path / "back.nc", engine="netcdf4").load(), got)


def test_opening_reads_no_chunks_and_selections_only_theirs(tmp_path):
    data = np.arange(20 * 100, dtype="f8").reshape(20, 100)
    ds = xr.Dataset({"v": (("t", "x"), data)})
    ds["v"].encoding.update(chunksizes=(1, 100), compression="zstd")
    to_arca(ds, tmp_path / "c.arca")
    before = arca.io_stats()
    with xr.open_dataset(tmp_path / "c.arca", engine="arca") as x:
        assert arca.io_stats()["chunks_read"] == before["chunks_read"]
        assert float(x["v"][3, 5]) == data[3, 5]
        assert arca.io_stats()["chunks_read"] - before["chunks_read"] == 1
        np.testing.assert_array_equal(x["v"][5:8].values, data[5:8])
        assert arca.io_stats()["chunks_read"] - before["chunks_read"] == 4
        # Outer indexing with a list reads only the rows it names.
        np.testing.assert_array_equal(x["v"][[10, 12], :2].values, data[[10, 12], :2])
        assert arca.io_stats()["chunks_read"] - before["chunks_read"] == 6


def test_open_mfdataset_and_dask_chunks(tmp_path):
    parts = []
    for i in range(3):
        t = pd.date_range("2001-01-01", periods=4, freq="D") + pd.Timedelta(days=4 * i)
        p = xr.Dataset({"v": (("time", "x"), np.full((4, 6), float(i)))},
                       coords={"time": t, "x": np.arange(6)})
        p["v"].encoding.update(chunksizes=(2, 3), zlib=True)
        to_arca(p, tmp_path / f"p{i}.arca")
        parts.append(p)
    m = xr.open_mfdataset(sorted(str(p) for p in tmp_path.glob("p*.arca")), engine="arca",
                          combine="by_coords")
    xr.testing.assert_identical(m.load(), xr.concat(parts, "time"))
    c = xr.open_dataset(tmp_path / "p1.arca", engine="arca", chunks={})
    assert c["v"].chunks == ((2, 2), (3, 3))
    assert float(c["v"].sum().compute(scheduler="processes")) == 24.0


def test_dask_from_array_with_threads_and_processes(tmp_path):
    data = np.random.default_rng(8).normal(size=(64, 256))
    p = tmp_path / "d.arca"
    with arca.File(p, "w") as f:
        f.create_dataset("v", data=data, chunks=(8, 128), compression="zstd", shuffle=True)
    with arca.File(p, "r") as f:
        ds = f["v"]
        x = da.from_array(ds, chunks=ds.chunks)
        for scheduler in ("threads", "processes"):
            with dask.config.set(scheduler=scheduler):
                np.testing.assert_allclose(x.sum(axis=0).compute(), data.sum(axis=0))


def test_a_distributed_cluster_reduces_a_dataset_opened_through_xarray(tmp_path):
    from dask.distributed import Client, LocalCluster

    data = np.random.default_rng(9).normal(size=(512, 1024))
    ds = xr.Dataset({"v": (("t", "x"), data)})
    ds["v"].encoding.update(chunksizes=(64, 1024), compression="zstd", shuffle=True)
    to_arca(ds, tmp_path / "big.arca")
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster):
        x = xr.open_dataset(tmp_path / "big.arca", engine="arca", chunks={})
        got = x["v"].mean("t").compute()
    # Sums in another order: equal to rounding.
    np.testing.assert_allclose(got.values, data.mean(axis=0), rtol=1e-12, atol=1e-15)


def test_bad_encodings_are_refused(tmp_path):
    with pytest.raises(ValueError, match="unexpected encoding"):
        to_arca(sample(), tmp_path / "x.arca", encoding={"temp": {"nonsense": 1}})
