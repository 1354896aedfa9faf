#!/usr/bin/env python3
"""Small-read latency: arca against h5py, one call at a time, in one run.

The calls users make in loops — a point, a short slice, a batch of rows —
timed per call, beside two floors measured in the same run: numpy indexing
of the same array in memory (the cost of a Python call that makes an
array) and an ``os.pread`` of the same bytes from the file (the cost of
getting them from the page cache).

Cases (microseconds per call, median over repeats; every file is opened
read-only, ``File(p, "r")``, as a reader would):

* ``slice100``     contiguous float64 dataset of 10^6, ``ds[500:600]``;
* ``cached_elem``  one element of a chunk already in the chunk cache
  (chunks of 10^4 float64, uncompressed);
* ``gzip_elem``    one element of a random chunk of a gzip dataset (4000
  chunks of 1000 float64: 32 MB decoded, more than either library's chunk
  cache holds), each chunk once per pass in a shuffled order so no cache
  helps;
  zlib's decode of one chunk (``zlib.decompress`` of its stored bytes) is
  printed as the floor;
* ``contig_elem``  one element at a random place of a contiguous float64
  dataset of 10^7 (80 MB);
* ``rows64``       64 sorted random rows of a chunked 2-D float32 dataset
  (10^5 x 32, chunks of 1000 rows), ``ds[idx]``;
* ``xarray_point`` ``ds["v"].isel(t=i, x=j).values`` of a lazily opened
  dataset (10^3 x 10^3 float32, chunks of 100 x 100):
  ``engine="arca"`` against ``engine="h5netcdf"``;
* ``tiny_bulk``    a 1-D float64 dataset with chunks of 8 elements (64
  bytes, ``maxshape=(None,)``) made from one array (10^6 chunks; 10^5 with
  ``--quick``): time per chunk, from create to close, and the file's bytes
  per chunk beyond the data (its chunk index and metadata); then one
  random element read back per call, right after opening (``tiny_elem``)
  and the same elements again (``tiny_elem_warm``);
* ``tiny_loop``    the same dataset written one chunk per call, in order
  (10^5 chunks; 2 * 10^4 with ``--quick``), time per chunk.

Aims (arca / h5py): element, 100-element slice and cached-chunk reads <=
0.5; random gzip chunk <= 0.8; 64 sorted rows <= 0.67; tiny-chunk writes
<= 1.0 with no more index bytes per chunk; xarray point < 1.0.
The figures compared are arca's and h5py's; the floors are printed beside
them for scale.

Usage::

    python bench/latency/latency_bench.py --quick
    python bench/latency/latency_bench.py --repeat 9 --json latency.json
    python bench/latency/latency_bench.py --cases slice100,gzip_elem
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import shutil
import statistics
import sys
import tempfile
import time
import zlib

import numpy as np

AIMS = {"slice100": 0.5, "cached_elem": 0.5, "gzip_elem": 0.8, "contig_elem": 0.5,
        "rows64": 0.67, "xarray_point": 1.0, "tiny_bulk": 1.0, "tiny_loop": 1.0,
        "tiny_elem": 0.5, "tiny_elem_warm": 0.5}
CASES = ("slice100", "cached_elem", "gzip_elem", "contig_elem", "rows64", "xarray_point",
         "tiny_bulk", "tiny_loop")


# Wall-clock time by default; ``--clock thread`` counts the calling
# thread's CPU time instead (user and system, so the reads' system calls
# too), which a machine busy with other work disturbs far less.
CLOCKS = {"wall": time.perf_counter, "thread": time.thread_time}
clock = CLOCKS["wall"]


def timed(work):
    """Seconds ``work()`` takes on the chosen clock, garbage collector off."""
    gc.disable()
    try:
        t0 = clock()
        work()
        return clock() - t0
    finally:
        gc.enable()


def per_call(fn, keys):
    """Seconds per call of ``fn(key)`` over ``keys``, garbage collector off."""

    def calls():
        for k in keys:
            fn(k)

    return timed(calls) / len(keys)


class Case:
    """One case: per library (and floor) a function and the keys it is
    called with; ``run`` times every one once, in an order that alternates
    between repeats."""

    def __init__(self, name, what):
        self.name = name
        self.what = what
        self.peers = {}  # label -> (fn, keys)
        self.samples = {}  # label -> [seconds per call]
        self.extra = {}

    def add(self, label, fn, keys):
        self.peers[label] = (fn, keys)
        self.samples[label] = []

    def run(self, rep):
        labels = list(self.peers)
        if rep % 2:
            labels.reverse()
        for label in labels:
            fn, keys = self.peers[label]
            self.samples[label].append(per_call(fn, keys))


def check_same(a, b, what):
    if not np.array_equal(np.asarray(a), np.asarray(b)):
        raise SystemExit(f"{what}: arca and h5py read different values")


def h5_offset(ds):
    off = ds.id.get_offset()
    if off is None:
        raise SystemExit(f"{ds.name}: h5py reports no file offset")
    return off


def build(d, cases, quick, rng, arca, h5py):
    """Write the files and make every case's callables."""
    out = []
    calls = 2000 if quick else 5000

    def pair(name, make):
        pa, ph = os.path.join(d, name + ".arca"), os.path.join(d, name + ".h5")
        with arca.File(pa, "w") as fa, h5py.File(ph, "w") as fh:
            make(fa)
            make(fh)
        return pa, ph, arca.File(pa, "r"), h5py.File(ph, "r")

    opened = []

    if "slice100" in cases:
        data = rng.standard_normal(10**6)
        pa, ph, fa, fh = pair("contig1m", lambda f: f.create_dataset("x", data=data))
        opened += [fa, fh]
        da, dh = fa["x"], fh["x"]
        check_same(da[500:600], dh[500:600], "slice100")
        fd = os.open(ph, os.O_RDONLY)
        opened.append(fd)
        off = h5_offset(dh) + 500 * 8
        c = Case("slice100", "contiguous ds[500:600]")
        keys = [slice(500, 600)] * calls
        c.add("arca", da.__getitem__, keys)
        c.add("h5py", dh.__getitem__, keys)
        c.add("numpy", data.__getitem__, keys)
        c.add("pread", lambda _k: os.pread(fd, 800, off), keys)
        out.append(c)

    if "cached_elem" in cases:
        data = rng.standard_normal(10**6)
        pa, ph, fa, fh = pair("chunked", lambda f: f.create_dataset("x", data=data,
                                                                   chunks=(10**4,)))
        opened += [fa, fh]
        da, dh = fa["x"], fh["x"]
        keys = [int(i) for i in rng.integers(0, 10**4, calls)]
        da[0], dh[0]  # noqa: B018 -- loads chunk 0 into each cache
        check_same([da[k] for k in keys[:50]], [dh[k] for k in keys[:50]], "cached_elem")
        c = Case("cached_elem", "one element of a cached chunk, ds[i]")
        c.add("arca", da.__getitem__, keys)
        c.add("h5py", dh.__getitem__, keys)
        c.add("numpy", data.__getitem__, keys)
        out.append(c)

    if "gzip_elem" in cases:
        n_chunks, clen = 4000, 1000
        # Sensor-like values: compress about 2x, neither zeros nor noise.
        t = np.arange(n_chunks * clen)
        data = np.round(np.sin(t / 50.0) * 100 + rng.standard_normal(t.size), 2)
        pa, ph, fa, fh = pair("gzip", lambda f: f.create_dataset(
            "x", data=data, chunks=(clen,), compression="gzip", compression_opts=4))
        opened += [fa, fh]
        da, dh = fa["x"], fh["x"]
        order = rng.permutation(n_chunks)
        keys = [int(ch * clen + rng.integers(0, clen)) for ch in order]
        check_same([da[k] for k in keys[:50]], [dh[k] for k in keys[:50]], "gzip_elem")
        raw = [dh.id.read_direct_chunk((int(ch) * clen,))[1] for ch in order[:200]]
        c = Case("gzip_elem", "one element of a random gzip chunk")
        c.add("arca", da.__getitem__, keys)
        c.add("h5py", dh.__getitem__, keys)
        c.add("zlib", zlib.decompress, raw)
        c.extra["stored_chunk_bytes"] = int(np.mean([len(r) for r in raw]))
        c.extra["raw_chunk_bytes"] = clen * 8
        out.append(c)

    if "contig_elem" in cases:
        n = 10**7
        data = rng.standard_normal(n)
        pa, ph, fa, fh = pair("contig10m", lambda f: f.create_dataset("x", data=data))
        opened += [fa, fh]
        da, dh = fa["x"], fh["x"]
        keys = [int(i) for i in rng.integers(0, n, calls)]
        check_same([da[k] for k in keys[:50]], [dh[k] for k in keys[:50]], "contig_elem")
        fd = os.open(ph, os.O_RDONLY)
        opened.append(fd)
        base = h5_offset(dh)
        c = Case("contig_elem", "one element of a contiguous 10^7 at a random place")
        c.add("arca", da.__getitem__, keys)
        c.add("h5py", dh.__getitem__, keys)
        c.add("numpy", data.__getitem__, keys)
        c.add("pread", lambda k: os.pread(fd, 8, base + 8 * k), keys)
        out.append(c)

    if "rows64" in cases:
        rows, cols = 10**5, 32
        data = rng.standard_normal((rows, cols)).astype(np.float32)
        pa, ph, fa, fh = pair("rows", lambda f: f.create_dataset("x", data=data,
                                                                chunks=(1000, cols)))
        opened += [fa, fh]
        da, dh = fa["x"], fh["x"]
        keys = [np.sort(rng.choice(rows, 64, replace=False)) for _ in range(calls // 10)]
        check_same(da[keys[0]], dh[keys[0]], "rows64")
        c = Case("rows64", "64 sorted random rows of a chunked 2-D float32, ds[idx]")
        c.add("arca", da.__getitem__, keys)
        c.add("h5py", dh.__getitem__, keys)
        c.add("numpy", data.__getitem__, keys)
        out.append(c)

    if "xarray_point" in cases:
        try:
            import xarray as xr
            import arca.xarray as ax
        except ImportError as e:
            print(f"xarray_point skipped: {e}", file=sys.stderr)
        else:
            v = rng.standard_normal((1000, 1000)).astype(np.float32)
            xd = xr.Dataset({"v": (("t", "x"), v)},
                            coords={"t": np.arange(1000), "x": np.arange(1000.0)})
            enc = {"v": {"chunksizes": (100, 100)}}
            pa, ph = os.path.join(d, "xr.arca"), os.path.join(d, "xr.nc")
            ax.to_arca(xd, pa, encoding=enc)
            xd.to_netcdf(ph, engine="h5netcdf", encoding=enc)
            xa = xr.open_dataset(pa, engine="arca")
            xh = xr.open_dataset(ph, engine="h5netcdf")
            opened += [xa, xh]
            keys = [(int(i), int(j)) for i, j in rng.integers(0, 1000, (calls // 5, 2))]

            def point(ds):
                var = ds["v"]
                return lambda k: var.isel(t=k[0], x=k[1]).values

            check_same([point(xa)(k) for k in keys[:20]], [point(xh)(k) for k in keys[:20]],
                       "xarray_point")
            c = Case("xarray_point", 'xr.open_dataset(...).isel(t=i, x=j).values')
            c.add("arca", point(xa), keys)
            c.add("h5py", point(xh), keys)  # engine="h5netcdf"
            c.add("numpy", lambda k: v[k[0], k[1]], keys)
            out.append(c)
    return out, opened


def tiny(d, quick, rng, arca, h5py, repeats, cases):
    """64-byte chunks: the whole dataset from one array (``tiny_bulk``, with
    its bytes per chunk beyond the data and random element reads back) and
    one chunk per call (``tiny_loop``); seconds per chunk."""
    per = 8
    res = {k: {"arca": [], "h5py": []} for k in ("bulk", "elem", "warm", "loop")}
    res["bytes"] = {}
    mods = {"arca": arca, "h5py": h5py}
    for rep in range(repeats):
        libs = ("arca", "h5py") if rep % 2 == 0 else ("h5py", "arca")
        for lib in libs:
            mod = mods[lib]
            p = os.path.join(d, f"tiny{rep}.{lib}")
            if "tiny_bulk" in cases:
                n = 10**5 if quick else 10**6
                data = np.arange(n * per, dtype=np.float64)

                def bulk():
                    with mod.File(p, "w") as f:
                        f.create_dataset("x", data=data, chunks=(per,), maxshape=(None,))

                res["bulk"][lib].append(timed(bulk) / n)
                res["bytes"][lib] = (os.path.getsize(p) - data.nbytes) / n
                with mod.File(p, "r") as f:
                    keys = [int(i) for i in rng.integers(0, n * per, 2000)]
                    # Right after opening (index pages read as met), then
                    # the same keys again (pages and chunks cached).
                    res["elem"][lib].append(per_call(f["x"].__getitem__, keys))
                    res["warm"][lib].append(per_call(f["x"].__getitem__, keys))
                os.remove(p)
            if "tiny_loop" in cases:
                n = 2 * 10**4 if quick else 10**5
                block = np.arange(per, dtype=np.float64)

                def loop():
                    with mod.File(p, "w") as f:
                        ds = f.create_dataset("x", shape=(n * per,), dtype="f8",
                                              chunks=(per,), maxshape=(None,))
                        for i in range(n):
                            ds[i * per:(i + 1) * per] = block

                res["loop"][lib].append(timed(loop) / n)
                os.remove(p)
    return res


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="fewer calls and repeats, 10^5 tiny chunks: about a minute")
    ap.add_argument("--repeat", type=int, default=None, help="repeats (default 7, 3 with --quick)")
    ap.add_argument("--cases", default=",".join(CASES), help=f"subset of {','.join(CASES)}")
    ap.add_argument("--json", metavar="FILE", help="write every sample and median to FILE")
    ap.add_argument("--dir", metavar="DIR", help="parent of the scratch directory (default /tmp)")
    ap.add_argument("--clock", choices=sorted(CLOCKS), default="wall",
                    help="wall time (default) or the calling thread's CPU time, steadier "
                         "on a busy machine; for the read cases (both libraries read in "
                         "the calling thread), not tiny_bulk (arca encodes on worker threads)")
    args = ap.parse_args(argv)
    global clock
    clock = CLOCKS[args.clock]
    cases = set(args.cases.split(","))
    unknown = cases - set(CASES)
    if unknown:
        ap.error(f"unknown cases: {', '.join(sorted(unknown))}")
    repeats = args.repeat or (3 if args.quick else 7)

    import arca
    import h5py

    rng = np.random.default_rng(36)
    random.seed(36)
    d = tempfile.mkdtemp(prefix="arca-latency-", dir=args.dir)
    report = {"meta": {"python": sys.version.split()[0], "numpy": np.__version__,
                       "h5py": h5py.__version__, "hdf5": h5py.version.hdf5_version,
                       "arca": getattr(arca, "__version__", "?"), "machine": platform.machine(),
                       "load_before": os.getloadavg(), "repeats": repeats, "quick": args.quick,
                       "clock": args.clock},
              "cases": {}}
    try:
        built, opened = build(d, cases, args.quick, rng, arca, h5py)
        for c in built:
            # One untimed pass: first-touch costs (page faults, lazy loads).
            for fn, keys in c.peers.values():
                per_call(fn, keys[: max(1, len(keys) // 10)])
        for rep in range(repeats):
            for c in built:
                c.run(rep)
        for c in built:
            med = {k: median(v) for k, v in c.samples.items()}
            report["cases"][c.name] = {"what": c.what, "us": {k: m * 1e6 for k, m in med.items()},
                                       "samples_s": c.samples, **c.extra}
        for o in opened:
            if isinstance(o, int):
                os.close(o)
            else:
                o.close()
        if cases & {"tiny_bulk", "tiny_loop"}:
            t = tiny(d, args.quick, rng, arca, h5py, max(1, repeats // 2), cases)
            if "tiny_bulk" in cases:
                report["cases"]["tiny_bulk"] = {
                    "what": "10^6 64-byte chunks from one array, per chunk",
                    "us": {k: median(v) * 1e6 for k, v in t["bulk"].items()},
                    "index_bytes_per_chunk": t["bytes"], "samples_s": t["bulk"]}
                report["cases"]["tiny_elem"] = {
                    "what": "one random element of the 64-byte-chunk file, just opened",
                    "us": {k: median(v) * 1e6 for k, v in t["elem"].items()},
                    "samples_s": t["elem"]}
                report["cases"]["tiny_elem_warm"] = {
                    "what": "the same elements again",
                    "us": {k: median(v) * 1e6 for k, v in t["warm"].items()},
                    "samples_s": t["warm"]}
            if "tiny_loop" in cases:
                report["cases"]["tiny_loop"] = {
                    "what": "64-byte chunks written one per call, per chunk",
                    "us": {k: median(v) * 1e6 for k, v in t["loop"].items()},
                    "samples_s": t["loop"]}
    finally:
        shutil.rmtree(d, ignore_errors=True)
    report["meta"]["load_after"] = os.getloadavg()

    what = "" if args.clock == "wall" else ", calling thread's CPU time"
    print(f"small-read latency, us per call (median of {repeats}{what}); load "
          f"{report['meta']['load_before'][0]:.2f} -> {os.getloadavg()[0]:.2f} on "
          f"{os.cpu_count()} cpus")
    print(f"{'case':14} {'arca':>9} {'h5py':>9} {'arca/h5py':>10} {'aim':>6}  floors")
    for name, r in report["cases"].items():
        us = r["us"]
        ratio = us["arca"] / us["h5py"] if us.get("h5py") else float("nan")
        r["ratio"] = ratio
        aim = AIMS.get(name)
        r["aim_met"] = bool(ratio <= aim) if aim is not None else None
        floors = "  ".join(f"{k} {v:.2f}" for k, v in us.items() if k not in ("arca", "h5py"))
        mark = "" if aim is None else ("ok" if ratio <= aim else "MISS")
        print(f"{name:14} {us['arca']:9.2f} {us['h5py']:9.2f} {ratio:10.2f} {aim or '':>6} "
              f"{mark:4} {floors}")
        if "index_bytes_per_chunk" in r:
            b = r["index_bytes_per_chunk"]
            print(f"{'':14} file bytes per 64-byte chunk beyond the data: arca {b['arca']:.1f}, "
                  f"h5py {b['h5py']:.1f}")
        if "stored_chunk_bytes" in r:
            print(f"{'':14} gzip chunk: {r['stored_chunk_bytes']} stored bytes, "
                  f"{r['raw_chunk_bytes']} decoded")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
