#!/usr/bin/env python3
"""dask across processes: a reduction over one dataset opened lazily
through xarray, with 1 and 2 worker processes of a
``dask.distributed.LocalCluster``, arca (``engine="arca"``) beside h5py
(xarray's ``h5netcdf`` engine) on the same data in the same run.

The data: float32 smooth noise, about 1 GiB (``--quick``: 64 MiB), chunks
of 4 MiB, gzip level 1 with shuffle in both files. Each timing opens the
dataset with ``chunks={}`` (dask chunks = stored chunks) and computes the
mean over the first axis; the cluster is started before and not timed.
The result is checked against numpy's. Figures are medians of
``--repeat`` runs (default 3).

Usage::

    python bench/dask/dask_bench.py            # 1 GiB
    python bench/dask/dask_bench.py --quick    # 64 MiB: seconds
    python bench/dask/dask_bench.py --json out.json
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "crates", "arca-py",
                                "python"))

COLS = 1024
CHUNK_ROWS = 1024  # 4 MiB chunks of float32


def write(d: str, mib: int):
    import xarray as xr
    from arca.xarray import to_arca

    rows = max(CHUNK_ROWS, mib * (1 << 20) // (4 * COLS) // CHUNK_ROWS * CHUNK_ROWS)
    rng = np.random.default_rng(3)
    base = np.cumsum(rng.standard_normal((CHUNK_ROWS, COLS)), axis=1).astype("f4")
    data = np.empty((rows, COLS), "f4")
    for i in range(0, rows, CHUNK_ROWS):
        data[i:i + CHUNK_ROWS] = base + rng.integers(-64, 64, (CHUNK_ROWS, COLS)).astype("f4") / 512
    ds = xr.Dataset({"v": (("t", "x"), data)})
    enc = {"v": {"chunksizes": (CHUNK_ROWS, COLS), "zlib": True, "complevel": 1, "shuffle": True}}
    paths = {"arca": os.path.join(d, "v.arca"), "h5py": os.path.join(d, "v.nc")}
    to_arca(ds, paths["arca"], encoding=enc)
    ds.to_netcdf(paths["h5py"], engine="h5netcdf", encoding=enc)
    return paths, data.astype("f8").mean(axis=0), data.nbytes


def reduce_once(engine: str, path: str) -> tuple[float, np.ndarray]:
    import xarray as xr

    t0 = time.perf_counter()
    with xr.open_dataset(path, engine=engine, chunks={}) as ds:
        got = ds["v"].astype("f8").mean("t").compute().values
    return time.perf_counter() - t0, got


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mib", type=int, default=None, help="data size (default 1024)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="64 MiB: seconds")
    ap.add_argument("--json", metavar="FILE")
    ap.add_argument("--dir", default=None)
    a = ap.parse_args()
    mib = a.mib or (64 if a.quick else 1024)

    from dask.distributed import Client, LocalCluster

    results = {"machine": platform.platform(), "cpus": os.cpu_count(), "repeat": a.repeat,
               "runs": {}}
    with tempfile.TemporaryDirectory(dir=a.dir) as d:
        paths, want, nbytes = write(d, mib)
        results["bytes"] = nbytes
        print(f"{nbytes / 2**20:.0f} MiB of float32, 4 MiB chunks, gzip 1 + shuffle; "
              f"medians of {a.repeat}\n")
        print(f"{'reader':8} {'workers':>7} {'median s':>9} {'MiB/s':>8}")
        table = {}
        for workers in (1, 2):
            with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                              dashboard_address=None) as cluster, Client(cluster):
                for name, engine in (("arca", "arca"), ("h5py", "h5netcdf")):
                    times = []
                    for _ in range(a.repeat):
                        t, got = reduce_once(engine, paths[name])
                        if not np.allclose(got, want, rtol=1e-9, atol=1e-12):
                            raise SystemExit(f"{name}: the reduction differs from numpy's")
                        times.append(t)
                    m = statistics.median(times)
                    table[(name, workers)] = m
                    results["runs"][f"{name}/{workers}"] = {"seconds": times, "median_s": m}
                    print(f"{name:8} {workers:7d} {m:9.3f} {nbytes / 2**20 / m:8.0f}")
        print()
        for name in ("arca", "h5py"):
            print(f"{name}: 2 workers {table[(name, 1)] / table[(name, 2)]:.2f}x one")
        for w in (1, 2):
            print(f"arca/h5py with {w} worker(s): {table[('h5py', w)] / table[('arca', w)]:.2f}x "
                  "faster")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(results, fh, indent=1)
        print(f"\nwrote {a.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
