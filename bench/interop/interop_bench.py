#!/usr/bin/env python3
"""HDF5 import benchmark: ``arca.import_hdf5`` of a gzip-chunked HDF5 file
against ``cp`` of the same file (the ceiling: stored chunks copied as they
are cannot beat a plain copy) and ``h5repack`` doing the same HDF5-to-HDF5
copy, in one run; the export back to HDF5 is timed too.

The source: one float32 dataset of smooth noise (so gzip stores about 78%
of it), 1 MiB chunks, gzip level 4 with shuffle, written by h5py; about
1 GiB stored (``--quick``: 64 MiB). Every copy ends with its output synced
to disk (``os.fsync``; arca's commit syncs already), and everything is
synced (``os.sync``) before each copy starts, untimed, so that no copy pays
for the writeback of the one before: ``cp`` is measured
both without and with that sync, and the aim (import <= 1.25x cp) is
judged against the synced copy, the same work the others do. The page cache
is warm (the source was just written; ``--cold`` evicts it before each copy).

Each figure is the median of ``--repeat`` runs (default 3), the order of the
copies rotating between runs.

Then kept HDF5 filters: the same values written with blosc (lz4,
byte shuffle) by h5py + hdf5plugin, and a PyTables table of the same size
(int32, float64, 4-byte string, float32 columns; PyTables' default blosc:
blosclz, shuffle) when PyTables is installed, each imported (the chunks
kept as stored; timed against a synced ``cp`` of the same file, the same
aim of 1.25x) and read whole through arca (which decodes blosc itself,
on both cores) against h5py + hdf5plugin reading the original; warm page
cache, medians of ``--repeat`` reads each. The aim: arca >= 1x h5py +
hdf5plugin.

Usage::

    python bench/interop/interop_bench.py             # 1 GiB, 3 repeats
    python bench/interop/interop_bench.py --quick     # 64 MiB, 3 repeats: seconds
    python bench/interop/interop_bench.py --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "crates", "arca-py",
                                "python"))


def write_source(path: str, mib: int, blosc: bool = False) -> None:
    import h5py

    cols = 1024
    rows_per_chunk = 256  # 1 MiB chunks of float32
    # Stored ~78% of raw with shuffle+gzip: raw = stored / 0.78.
    rows = int(mib * (1 << 20) / 0.78 / (4 * cols)) // rows_per_chunk * rows_per_chunk
    rng = np.random.default_rng(11)
    with h5py.File(path, "w") as f:
        if blosc:
            import hdf5plugin

            kw = hdf5plugin.Blosc(cname="lz4", clevel=5, shuffle=hdf5plugin.Blosc.SHUFFLE)
        else:
            kw = dict(compression="gzip", compression_opts=4, shuffle=True)
        ds = f.create_dataset("signal", shape=(rows, cols), dtype="<f4",
                              chunks=(rows_per_chunk, cols), **kw)
        base = np.cumsum(rng.standard_normal((rows_per_chunk, cols)), axis=1).astype("<f4")
        for i in range(0, rows, rows_per_chunk):
            noise = rng.integers(-64, 64, (rows_per_chunk, cols)).astype("<f4") / 512
            ds[i:i + rows_per_chunk] = base + noise
        ds.attrs["units"] = "V"


def evict(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def sync(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    dfd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def run_cp(src, dst, synced):
    t = time.perf_counter()
    subprocess.run(["cp", src, dst], check=True)
    if synced:
        sync(dst)
    return time.perf_counter() - t


def run_import(src, dst):
    import arca.interop

    t = time.perf_counter()
    report = arca.interop.import_hdf5(src, dst, force=True)
    sync(dst)
    el = time.perf_counter() - t
    assert report == [], report
    return el


def run_export(src, dst):
    import arca.interop

    t = time.perf_counter()
    arca.interop.export_hdf5(src, dst, force=True)
    sync(dst)
    return time.perf_counter() - t


def run_h5repack(src, dst):
    exe = shutil.which("h5repack")
    if exe is None:
        return None
    env = dict(os.environ)
    try:
        import hdf5plugin

        env["HDF5_PLUGIN_PATH"] = hdf5plugin.PLUGIN_PATH
    except ImportError:
        pass
    t = time.perf_counter()
    subprocess.run([exe, src, dst], check=True, env=env)
    sync(dst)
    return time.perf_counter() - t


def write_table(path: str, mib: int) -> str:
    """A PyTables table of about ``mib`` MiB of rows, blosc (blosclz,
    shuffle); its dataset's path."""
    import tables

    rows = int(mib * (1 << 20) / 0.78 / 20)
    rng = np.random.default_rng(12)
    desc = {"a": tables.Int32Col(pos=0), "b": tables.Float64Col(pos=1),
            "c": tables.StringCol(4, pos=2), "d": tables.Float32Col(pos=3)}
    with tables.open_file(path, "w") as f:
        t = f.create_table("/", "table", desc, expectedrows=rows,
                           filters=tables.Filters(complevel=5, complib="blosc", shuffle=True))
        step = 1 << 20
        for i in range(0, rows, step):
            n = min(step, rows - i)
            arr = np.zeros(n, dtype=t.dtype)
            arr["a"] = np.arange(i, i + n)
            arr["b"] = np.cumsum(rng.standard_normal(n))
            arr["c"] = b"ab"
            arr["d"] = rng.standard_normal(n).astype("f4")
            t.append(arr)
    return "table"


def blosc_reads(tmp: str, mib: int, repeat: int) -> dict:
    """Median seconds to read blosc datasets whole: h5py + hdf5plugin on
    the original, arca on its import."""
    import arca
    import arca.interop
    import h5py
    import hdf5plugin  # noqa: F401 -- registers blosc for h5py

    cases = {}
    src = os.path.join(tmp, "blosc.h5")
    write_source(src, mib, blosc=True)
    cases["h5py blosc lz4 array"] = (src, "signal")
    try:
        import tables  # noqa: F401 -- the table case is PyTables'
    except ImportError:
        pass
    else:
        pt = os.path.join(tmp, "table.h5")
        cases["PyTables blosc table"] = (pt, write_table(pt, mib))
    out = {}
    for case, (src, name) in cases.items():
        imported = src + ".arca"
        # The import of this file (its chunks kept as stored) against a
        # synced cp of it, alternating, each from a synced start.
        copies = {"cp+sync": [], "arca import": []}
        for r in range(repeat):
            for who in sorted(copies, reverse=r % 2 == 1):
                os.sync()
                if who == "cp+sync":
                    copies[who].append(run_cp(src, imported + ".cp", True))
                    os.unlink(imported + ".cp")
                else:
                    copies[who].append(run_import(src, imported))
        runs = {"h5py+hdf5plugin read": [], "arca read": []}
        with h5py.File(src, "r") as h, arca.File(imported, "r") as a:
            want = h[name][()]
            got = a[name][()]
            assert all(np.array_equal(got[k], want[k]) for k in want.dtype.names) \
                if want.dtype.names else np.array_equal(got, want)
            for r in range(repeat):
                for who in sorted(runs, reverse=r % 2 == 1):
                    t = time.perf_counter()
                    (h if who.startswith("h5py") else a)[name][()]
                    runs[who].append(time.perf_counter() - t)
        out[case] = {"stored_bytes": os.path.getsize(src), "raw_bytes": int(want.nbytes),
                     "runs_s": runs, "median_s": {k: statistics.median(v) for k, v in runs.items()},
                     "import_runs_s": copies,
                     "import_median_s": {k: statistics.median(v) for k, v in copies.items()}}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="64 MiB instead of 1 GiB")
    ap.add_argument("--mib", type=int, default=None, help="stored MiB of the source")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cold", action="store_true", help="evict the source before each copy")
    ap.add_argument("--dir", default=None, help="where to write (default: a temporary directory)")
    ap.add_argument("--json", default=None, help="write the figures to this file")
    a = ap.parse_args()
    mib = a.mib or (64 if a.quick else 1024)
    tmp = tempfile.mkdtemp(prefix="arca-interop-", dir=a.dir)
    try:
        src = os.path.join(tmp, "src.h5")
        t = time.perf_counter()
        write_source(src, mib)
        size = os.path.getsize(src)
        print(f"source: {size / 2**20:.0f} MiB stored, gzip+shuffle, 1 MiB chunks "
              f"(written in {time.perf_counter() - t:.1f} s)", flush=True)
        runs = {"cp": [], "cp+sync": [], "arca import": [], "arca export": [], "h5repack": []}
        order = ["cp", "cp+sync", "arca import", "h5repack"]
        for r in range(a.repeat):
            for name in order[r % len(order):] + order[:r % len(order)]:
                # Nothing left to write back from the run before: each copy
                # starts from the same state (untimed).
                os.sync()
                if a.cold:
                    evict(src)
                out = os.path.join(tmp, "out-" + name.replace(" ", "_").replace("+", "_"))
                if name == "cp":
                    el = run_cp(src, out, False)
                elif name == "cp+sync":
                    el = run_cp(src, out, True)
                elif name == "arca import":
                    el = run_import(src, out)
                    back = os.path.join(tmp, "back.h5")
                    os.sync()
                    runs["arca export"].append(run_export(out, back))
                    os.unlink(back)
                else:
                    el = run_h5repack(src, out)
                if el is not None:
                    runs[name].append(el)
                if os.path.exists(out):
                    os.unlink(out)
        med = {k: statistics.median(v) for k, v in runs.items() if v}
        mbs = {k: size / 2**20 / v for k, v in med.items()}
        print(f"\n{'copy':<14}{'median s':>10}{'MiB/s':>9}{'x cp':>8}{'x cp+sync':>11}")
        for k, v in med.items():
            print(f"{k:<14}{v:>10.3f}{mbs[k]:>9.0f}{v / med['cp']:>8.2f}{v / med['cp+sync']:>11.2f}")
        ratio = med["arca import"] / med["cp+sync"]
        verdict = "met" if ratio <= 1.25 else "NOT met"
        print(f"\naim: arca import <= 1.25x cp (synced, as every copy here): {ratio:.2f}x, {verdict}")
        print(f"     against cp without its sync: {med['arca import'] / med['cp']:.2f}x")
        if "h5repack" in med:
            print(f"     h5repack takes {med['h5repack'] / med['arca import']:.1f}x arca import's time")
        os.unlink(src)
        br = blosc_reads(tmp, mib, a.repeat)
        speed = {}
        for case, r in br.items():
            bm = r["median_s"]
            print(f"\n{case} read whole, {r['raw_bytes'] / 2**20:.0f} MiB of values "
                  f"in {r['stored_bytes'] / 2**20:.0f} MiB stored:")
            for k, v in bm.items():
                print(f"{k:<22}{v:>10.3f} s{r['raw_bytes'] / 2**20 / v:>8.0f} MiB/s")
            speed[case] = bm["h5py+hdf5plugin read"] / bm["arca read"]
            print(f"aim: arca read >= 1x h5py + hdf5plugin: {speed[case]:.2f}x, "
                  f"{'met' if speed[case] >= 1 else 'NOT met'}")
            im = r["import_median_s"]
            ir = im["arca import"] / im["cp+sync"]
            print(f"import {im['arca import']:.3f} s, cp+sync {im['cp+sync']:.3f} s: "
                  f"aim arca import <= 1.25x cp+sync: {ir:.2f}x, {'met' if ir <= 1.25 else 'NOT met'}")
        if a.json:
            with open(a.json, "w") as f:
                json.dump({"bench": "interop", "stored_bytes": size, "repeat": a.repeat,
                           "cold": a.cold, "runs_s": runs, "median_s": med,
                           "import_over_cp_sync": ratio,
                           "import_over_cp": med["arca import"] / med["cp"],
                           "blosc_read": br, "arca_read_over_h5py": speed,
                           "machine": platform.platform(), "cpus": os.cpu_count()}, f, indent=1)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
