#!/usr/bin/env python3
"""Concurrency benchmark: many threads reading one open file.

Each library reads every chunk of one dataset exactly once per run, with
its chunk cache off (arca ``rdcc_nbytes=0``, h5py the same), split between
1 or 2 threads of one process over one open file: single-chunk reads of
1 MiB float32 chunks (smooth noise), gzip (shuffle, level 4) and zstd
(shuffle, level 3; h5py through hdf5plugin). On this 2-core machine the
ceiling is 2x; the codec alone (Python's zlib, which releases the GIL,
decompressing the same stored gzip chunks on 1 and 2 threads) is measured
beside it. Figures are medians of ``--repeat`` runs (default 7).

The aim: arca on 2 threads >= 1.7x arca on one.

Usage::

    python bench/concurrency/concurrency_bench.py            # 256 chunks, 7 repeats
    python bench/concurrency/concurrency_bench.py --quick    # 32 chunks, 3 repeats
    python bench/concurrency/concurrency_bench.py --json out.json
"""

from __future__ import annotations

import os

# numpy's OpenBLAS threads spin between calls and would take a core from
# every library alike; nothing here uses BLAS.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import json
import platform
import statistics
import sys
import tempfile
import threading
import time
import zlib

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "crates", "arca-py",
                                "python"))

ROWS, COLS = 256, 1024  # 1 MiB chunks of float32
AIM = 1.7


def make_data(chunks: int) -> np.ndarray:
    rng = np.random.default_rng(5)
    base = np.cumsum(rng.standard_normal((ROWS, COLS)), axis=1).astype("f4")
    out = np.empty((chunks * ROWS, COLS), "f4")
    for i in range(chunks):
        noise = rng.integers(-64, 64, (ROWS, COLS)).astype("f4") / 512
        out[i * ROWS:(i + 1) * ROWS] = base + noise
    return out


def write_files(d: str, data: np.ndarray) -> dict:
    import arca
    import h5py
    import hdf5plugin

    codecs = {
        "gzip": (dict(compression="gzip", compression_opts=4, shuffle=True),
                 dict(compression="gzip", compression_opts=4, shuffle=True)),
        "zstd": (dict(compression="zstd", compression_opts=3, shuffle=True),
                 dict(shuffle=True, **hdf5plugin.Zstd(clevel=3))),
    }
    paths = {}
    for codec, (akw, hkw) in codecs.items():
        for lib, kw, ext in ((arca, akw, "arca"), (h5py, hkw, "h5")):
            p = os.path.join(d, f"{codec}.{ext}")
            with lib.File(p, "w") as f:
                f.create_dataset("x", data=data, chunks=(ROWS, COLS), **kw)
            paths[(lib.__name__, codec)] = p
    return paths


def timed_threads(n: int, chunks: int, read_chunk) -> float:
    """Seconds for `n` threads to read chunks 0..chunks-1 between them."""
    parts = [range(k, chunks, n) for k in range(n)]
    start = threading.Barrier(n + 1)

    def work(idx):
        start.wait()
        for i in idx:
            read_chunk(i)

    threads = [threading.Thread(target=work, args=(p,)) for p in parts]
    for t in threads:
        t.start()
    start.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    return time.perf_counter() - t0


def lib_read(lib_name: str, path: str, n: int, chunks: int) -> float:
    import arca
    import h5py
    import hdf5plugin  # noqa: F401 -- registers zstd for h5py

    lib = arca if lib_name == "arca" else h5py
    with lib.File(path, "r", rdcc_nbytes=0) as f:
        ds = f["x"]
        return timed_threads(n, chunks, lambda i: ds[i * ROWS:(i + 1) * ROWS])


def codec_read(path: str, n: int, chunks: int) -> float:
    """The codec alone: zlib on the stored gzip chunks (shuffle undone by
    neither side: the ceiling of the decompression work)."""
    import h5py

    with h5py.File(path, "r") as f:
        stored = [f["x"].id.read_direct_chunk((i * ROWS, 0))[1] for i in range(chunks)]
    return timed_threads(n, chunks, lambda i: zlib.decompress(stored[i]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--chunks", type=int, default=None, help="chunks of 1 MiB (default 256)")
    ap.add_argument("--repeat", type=int, default=None, help="runs per figure (default 7)")
    ap.add_argument("--quick", action="store_true", help="32 chunks, 3 repeats: seconds")
    ap.add_argument("--json", metavar="FILE", help="write every figure to FILE")
    ap.add_argument("--dir", default=None, help="parent of the scratch directory")
    a = ap.parse_args()
    chunks = a.chunks or (32 if a.quick else 256)
    repeat = a.repeat or (3 if a.quick else 7)

    results = {"machine": platform.platform(), "cpus": os.cpu_count(), "chunks": chunks,
               "chunk_bytes": ROWS * COLS * 4, "repeat": repeat, "reads": {}}
    with tempfile.TemporaryDirectory(dir=a.dir) as d:
        paths = write_files(d, make_data(chunks))
        print(f"{chunks} chunks of 1 MiB, each read once per run; medians of {repeat}\n")
        print(f"{'reader':14} {'codec':6} {'1 thread s':>11} {'2 threads s':>12} {'speedup':>8}")
        rows = []
        for codec in ("gzip", "zstd"):
            cands = [("arca", lambda n, c=codec: lib_read("arca", paths[("arca", c)], n, chunks)),
                     ("h5py", lambda n, c=codec: lib_read("h5py", paths[("h5py", c)], n, chunks))]
            if codec == "gzip":
                cands.append(("zlib alone", lambda n: codec_read(paths[("h5py", "gzip")], n, chunks)))
            for name, fn in cands:
                times = {1: [], 2: []}
                for r in range(repeat):
                    for n in ((1, 2) if r % 2 == 0 else (2, 1)):
                        times[n].append(fn(n))
                t1, t2 = statistics.median(times[1]), statistics.median(times[2])
                rows.append((name, codec, t1, t2))
                results["reads"][f"{name}/{codec}"] = {
                    "threads1_s": times[1], "threads2_s": times[2],
                    "median1_s": t1, "median2_s": t2, "speedup": t1 / t2}
                print(f"{name:14} {codec:6} {t1:11.3f} {t2:12.3f} {t1 / t2:7.2f}x")
        print("\nAims:")
        ok = True
        for name, codec, t1, t2 in rows:
            if name == "arca":
                met = t1 / t2 >= AIM
                ok &= met
                print(f"  [{'met   ' if met else 'MISSED'}] arca {codec}: 2 threads >= {AIM}x one "
                      f"(x{t1 / t2:.2f}; ceiling 2x on {os.cpu_count()} cores)")
        for name, codec, t1, t2 in rows:
            if name == "h5py":
                arca1, arca2 = next((r[2], r[3]) for r in rows if r[0] == "arca" and r[1] == codec)
                print(f"  arca/h5py {codec}: 1 thread {t1 / arca1:.2f}x, 2 threads {t2 / arca2:.2f}x "
                      "faster")
        results["aim_met"] = ok
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(results, fh, indent=1)
        print(f"\nwrote {a.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
