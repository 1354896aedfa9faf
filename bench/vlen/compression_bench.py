#!/usr/bin/env python3
"""Variable-length file sizes: what ``compression="zstd"`` alone stores,
beside h5py's best on the same data (none, gzip, lzf; h5py compresses only
the heap references of variable-length data, so its values stay as they
are) and arca's explicit ``vlen_*`` options, with the write time of each.

Data (seeded): 300,000 ragged float32 rows of small integers (lengths 0 to
16) and 200,000 short repetitive strings (``--quick``: a tenth of each).
The aim: with ``compression="zstd"`` alone, both arca files at most 0.5x
h5py's smallest. Each figure is the median of ``--repeat`` writes.

Usage::

    python bench/vlen/compression_bench.py [--quick] [--repeat 3] [--json F]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "crates", "arca-py",
                                "python"))

AIM = 0.5


def make(n_rows, n_strings):
    rng = np.random.default_rng(12)
    rows = np.empty(n_rows, dtype=object)
    lens = rng.integers(0, 17, n_rows)
    for i, n in enumerate(lens):
        rows[i] = rng.integers(0, 100, n).astype("f4")
    words = ["alpha", "beta", "gamma", "delta", "station-", "run", "ok", "error: timeout"]
    strs = np.empty(n_strings, dtype=object)
    for i in range(n_strings):
        strs[i] = words[i % 8] + str(i % 97) + words[(i // 8) % 8]
    return {"ragged f4": rows, "strings": strs}


def writers():
    import arca
    import h5py

    def h5(path, data, **kw):
        dt = h5py.string_dtype() if isinstance(data[0], str) else h5py.vlen_dtype("f4")
        with h5py.File(path, "w") as f:
            f.create_dataset("v", data=data, dtype=dt, chunks=(4096,), **kw)

    def ar(path, data, **kw):
        dt = arca.string_dtype() if isinstance(data[0], str) else arca.vlen_dtype("f4")
        with arca.File(path, "w") as f:
            f.create_dataset("v", data=data, dtype=dt, chunks=(4096,), **kw)

    return {
        "h5py none": (h5, {}), "h5py gzip": (h5, {"compression": "gzip"}),
        "h5py lzf": (h5, {"compression": "lzf"}),
        "arca zstd": (ar, {"compression": "zstd"}),
        "arca zstd + vlen options": (ar, {"compression": "zstd", "vlen_compression": "zstd",
                                          "vlen_shuffle": True}),
        "arca none": (ar, {}),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", metavar="FILE")
    a = ap.parse_args()
    scale = 10 if a.quick else 1
    data = make(300_000 // scale, 200_000 // scale)
    out = {"repeat": a.repeat, "rows": 300_000 // scale, "strings": 200_000 // scale, "cases": {}}
    ok = True
    with tempfile.TemporaryDirectory() as d:
        for case, values in data.items():
            print(f"\n{case} ({len(values)} elements)")
            print(f"{'writer':26} {'bytes':>11} {'x h5py best':>12} {'write s':>8}")
            sizes, secs = {}, {}
            for name, (fn, kw) in writers().items():
                p = os.path.join(d, name.replace(" ", "_"))
                ts = []
                for _ in range(a.repeat):
                    if os.path.exists(p):
                        os.unlink(p)
                    t = time.perf_counter()
                    fn(p, values, **kw)
                    ts.append(time.perf_counter() - t)
                sizes[name], secs[name] = os.path.getsize(p), statistics.median(ts)
            best = min(v for k, v in sizes.items() if k.startswith("h5py"))
            for name in sizes:
                print(f"{name:26} {sizes[name]:11d} {sizes[name] / best:12.2f} {secs[name]:8.3f}")
            ratio = sizes["arca zstd"] / best
            ok &= ratio <= AIM
            out["cases"][case] = {"bytes": sizes, "write_s": secs, "h5py_best": best,
                                  "arca_zstd_vs_h5py_best": ratio}
            print(f"  [{'met   ' if ratio <= AIM else 'MISSED'}] compression='zstd' alone <= "
                  f"{AIM}x h5py's best (x{ratio:.2f})")
    out["aim_met"] = ok
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(out, fh, indent=1)
        print(f"\nwrote {a.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
