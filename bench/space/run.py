#!/usr/bin/env python3
"""The seed's free-space tests 1-3, side by side: arca with its free-space
manager, arca with the naive free list, and h5py (HDF5) doing the same
creates and deletes (datasets with early allocation). Prints CPU seconds,
the naive/managed ratio, the h5py/arca ratio, and file size against live
bytes. Times are medians over --repeat runs.

    python bench/space/run.py --quick
    python bench/space/run.py --json space.json
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile

import h5py
import numpy as np

BIG, MEDIUM, SMALL = 8192, 4096, 1024
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def h5_dataset(f, name, nbytes):
    # Early allocation, as the seed's tests use, through the low-level API.
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_alloc_time(h5py.h5d.ALLOC_TIME_EARLY)
    space = h5py.h5s.create_simple((nbytes,))
    h5py.h5d.create(f.id, name.encode(), h5py.h5t.STD_U8LE, space, dcpl=dcpl).close()


def h5_test(test, n, path):
    start = cpu()
    with h5py.File(path, "w") as f:
        if test == 1:
            for i in range(n):
                f.create_group(f"a{i}")
            for i in range(1, n, 2):
                del f[f"a{i}"]
            f.flush()
            for i in range(n):
                f.create_group(f"b{i}")
            for i in range(n):
                del f[f"b{i}"]
        elif test == 2:
            for i in range(n):
                h5_dataset(f, f"big{i}", BIG)
            for i in range(1, n, 2):
                del f[f"big{i}"]
            f.flush()
            h5_dataset(f, "huge", BIG * n)
            del f["huge"]
            f.flush()
            for i in range(n):
                h5_dataset(f, f"medium{i}", MEDIUM)
            for i in range(1, n, 2):
                del f[f"medium{i}"]
            f.flush()
            for i in range(n):
                h5_dataset(f, f"small{i}", SMALL)
        else:
            for i in range(n):
                f.create_group(f"a{i}")
                h5_dataset(f, f"a{i}/medium", MEDIUM)
            for i in range(1, n, 2):
                del f[f"a{i}"]
            f.flush()
            for i in range(n):
                f.create_group(f"b{i}")
                h5_dataset(f, f"b{i}/small", SMALL)
    return cpu() - start, os.path.getsize(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", default="500,1000,5000,10000,50000")
    ap.add_argument("--max-test3", type=int, default=10000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="N = 500, 1000, 5000; one run each")
    ap.add_argument("--json", help="write all figures here")
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "arca-bench-space"))
    a = ap.parse_args()
    ns = [500, 1000, 5000] if a.quick else [int(x) for x in a.n.split(",")]
    repeat = 1 if a.quick else a.repeat
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "arca.json")
        cmd = [a.bin, "--n", ",".join(map(str, ns)), "--max-test3", str(a.max_test3),
               "--repeat", str(repeat), "--json", out]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        with open(out) as fh:
            arca_rows = json.load(fh)
        h5 = {}
        for test in (1, 2, 3):
            for n in ns:
                if test == 3 and n > a.max_test3:
                    continue
                runs = [h5_test(test, n, os.path.join(d, "h5.h5")) for _ in range(repeat)]
                h5[(test, n)] = (statistics.median(r[0] for r in runs), runs[-1][1])
    by = {(r["test"], r["n"], r["list"]): r for r in arca_rows}
    rows = []
    hdr = f"{'test':>4} {'N':>6} {'managed s':>10} {'naive s':>9} {'naive/man':>9} {'h5py s':>8} {'h5py/man':>8} " \
          f"{'arca MB':>8} {'h5 MB':>7} {'live+meta MB':>12}"
    print(hdr)
    for (test, n), (h5_s, h5_size) in sorted(h5.items()):
        m = by.get((test, n, "managed"))
        nv = by.get((test, n, "naive"))
        if not m:
            continue
        live = m["live_raw_bytes"] + m["metadata_bytes"] + 4096
        row = {
            "test": test, "n": n, "managed_cpu_s": m["cpu_s"], "naive_cpu_s": nv and nv["cpu_s"],
            "naive_over_managed": nv and nv["cpu_s"] / m["cpu_s"], "h5py_cpu_s": h5_s,
            "h5py_over_managed": h5_s / m["cpu_s"], "arca_file_bytes": m["file_bytes"],
            "h5py_file_bytes": h5_size, "arca_live_plus_metadata": live,
            "arca_free_sections": m["free_sections"],
        }
        rows.append(row)
        print(f"{test:>4} {n:>6} {m['cpu_s']:>10.3f} {nv['cpu_s'] if nv else float('nan'):>9.3f} "
              f"{row['naive_over_managed'] or float('nan'):>9.2f} {h5_s:>8.3f} {row['h5py_over_managed']:>8.2f} "
              f"{m['file_bytes'] / 1e6:>8.2f} {h5_size / 1e6:>7.2f} {live / 1e6:>12.2f}")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"rows": rows, "arca_raw": arca_rows, "repeat": repeat}, fh, indent=2)


if __name__ == "__main__":
    sys.exit(main())
