#!/usr/bin/env python3
"""In-memory files: RAM held against file size, in one run.

Backends:

* ``arca-mem``   ``arca.File(name, "w", driver="memory")``: the file's
  pages in plain memory;
* ``arca-compll`` ``driver="memory", compress=True``: the pages in a compll
  arena (lz4, 128 KiB blocks), so the file costs a fraction of its size;
* ``h5py-core``  ``h5py.File(name, "w", driver="core", backing_store=False)``:
  HDF5's in-memory file, which holds the whole file image (its held bytes
  are its file size; the driver grows the image in 64 KiB steps);
* ``numpy``      the arrays themselves, the size of the data.

Cases (sizes for the default run; ``--quick`` divides them by 16):

* ``sensor``  a sensor-like float64 signal, the one ``bench/io`` uses
  (quantised sines plus noise);
* ``frames``  uint16 detector frames: sparse Poisson counts on a zero
  background, the most compressible;
* ``random``  uniform float64, incompressible: the arena's overhead;
* ``many``    2,000 groups of four small datasets and two attributes each:
  metadata more than data.

Write is timed from creating the file to the end of ``flush()``; read from
opening the first dataset to holding every array. Held bytes are read after
the flush. Medians over ``--repeats`` runs.

Usage::

    python bench/compll/memfile.py                 # 128 MiB per case, ~1 min
    python bench/compll/memfile.py --quick         # seconds
    python bench/compll/memfile.py --json out.json
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "io"))
from io_bench import make_data  # noqa: E402  -- the same signal as bench/io

MIB = 1 << 20


def make_case(case: str, mib: int) -> dict[str, np.ndarray]:
    """The datasets of a case, by path."""
    rng = np.random.default_rng(7)
    if case == "sensor":
        return {"signal": make_data(mib * MIB // 8)}
    if case == "frames":
        n = mib * MIB // (2 * 512 * 512)
        return {"frames": rng.poisson(0.05, (max(n, 1), 512, 512)).astype(np.uint16)}
    if case == "random":
        return {"values": rng.random(mib * MIB // 8)}
    if case == "many":
        out = {}
        for g in range(2000):
            for d in range(4):
                out[f"run{g:04d}/ch{d}"] = (rng.normal(0, 1, 256) + g).astype(np.float32)
        return out
    raise SystemExit(f"unknown case {case}")


def chunks_of(a: np.ndarray):
    # 1 MiB chunks for the large arrays, as bench/io; small ones contiguous.
    if a.nbytes < 4 * MIB:
        return None
    row = a.itemsize * int(np.prod(a.shape[1:], dtype=np.int64))
    return (max(1, MIB // row),) + a.shape[1:]


def fill(f, data):
    """Write every array of a case into `f` (arca or h5py: the same calls)
    and flush it."""
    for path, a in data.items():
        ds = f.create_dataset(path, data=a, chunks=chunks_of(a))
        if path.endswith("ch0"):
            ds.attrs["gain"] = 1.5
            ds.attrs["units"] = "mV"
    f.flush()
    return f


def write_arca(data, compress):
    import arca

    return fill(arca.File("mem", "w", driver="memory", compress=compress), data)


def held_arca(f):
    return f.memory_bytes, f.stat()["file_bytes"]


def write_h5py(data, _compress):
    import h5py

    name = f"mem-{time.perf_counter_ns()}"
    return fill(h5py.File(name, "w", driver="core", backing_store=False), data)


def held_h5py(f):
    size = f.id.get_filesize()
    return size, size


def read_all(f, data):
    return [f[path][...] for path in data]


BACKENDS = {
    "arca-mem": (write_arca, False, held_arca),
    "arca-compll": (write_arca, True, held_arca),
    "h5py-core": (write_h5py, False, held_h5py),
}


def measure(name, data, repeats):
    write, compress, held = BACKENDS[name]
    tw, tr = [], []
    held_b = file_b = 0
    for _ in range(repeats):
        gc.collect()
        t0 = time.perf_counter()
        f = write(data, compress)
        tw.append(time.perf_counter() - t0)
        held_b, file_b = held(f)
        t0 = time.perf_counter()
        got = read_all(f, data)
        tr.append(time.perf_counter() - t0)
        k = next(iter(data))
        if not np.array_equal(got[0], data[k]):
            raise SystemExit(f"{name}: {k} read back wrong")
        del got
        f.close()
    return statistics.median(tw), statistics.median(tr), held_b, file_b


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mib", type=int, default=128, help="MiB of data per case (not 'many')")
    ap.add_argument("--cases", default="sensor,frames,random,many")
    ap.add_argument("--repeats", type=int, default=5, help="runs per point; medians are reported")
    ap.add_argument("--quick", action="store_true", help="8 MiB per case, 3 repeats: seconds")
    ap.add_argument("--json", default=None, help="also write the results here")
    args = ap.parse_args()
    if args.quick:
        args.mib, args.repeats = max(1, args.mib // 16), 3
    import arca
    import h5py

    print(f"arca {arca.__version__}, h5py {h5py.__version__} (HDF5 {h5py.version.hdf5_version}), "
          f"python {platform.python_version()}, {os.cpu_count()} cpus; medians of {args.repeats}")
    print(f"{'case':7} {'backend':12} {'data MiB':>9} {'file MiB':>9} {'held MiB':>9} "
          f"{'file/held':>9} {'write ms':>9} {'read ms':>8}")
    results = []
    for case in [c for c in args.cases.split(",") if c]:
        data = make_case(case, args.mib)
        nbytes = sum(a.nbytes for a in data.values())
        print(f"{case:7} {'numpy':12} {nbytes / MIB:>9.1f} {'':>9} {nbytes / MIB:>9.1f}")
        for name in BACKENDS:
            tw, tr, held_b, file_b = measure(name, data, args.repeats)
            rec = {"case": case, "backend": name, "data_bytes": nbytes, "file_bytes": file_b,
                   "held_bytes": held_b, "file_over_held": file_b / held_b if held_b else None,
                   "write_s": tw, "read_s": tr}
            results.append(rec)
            print(f"{case:7} {name:12} {nbytes / MIB:>9.1f} {file_b / MIB:>9.1f} "
                  f"{held_b / MIB:>9.1f} {rec['file_over_held']:>9.2f} {tw * 1e3:>9.1f} "
                  f"{tr * 1e3:>8.1f}", flush=True)
        del data
        gc.collect()
    ratios = summarize(results)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"results": results, "ratios": ratios,
                       "machine": {"cpus": os.cpu_count(), "python": platform.python_version()}},
                      fh, indent=1)


def summarize(results):
    """Memory and time of the compressed driver against the plain one and h5py's."""
    by = {(r["case"], r["backend"]): r for r in results}
    out = []
    print("\narca-compll against arca-mem and h5py-core: memory held (x lower), "
          "write and read time (x slower)")
    for case in dict.fromkeys(r["case"] for r in results):
        c = by.get((case, "arca-compll"))
        if not c:
            continue
        row = {"case": case}
        for peer in ("arca-mem", "h5py-core"):
            p = by.get((case, peer))
            if p:
                row[peer] = {"memory_lower": p["held_bytes"] / c["held_bytes"],
                             "write_slower": c["write_s"] / p["write_s"],
                             "read_slower": c["read_s"] / p["read_s"]}
        out.append(row)
        parts = [f"vs {k}: memory {v['memory_lower']:.2f}x lower, write {v['write_slower']:.2f}x, "
                 f"read {v['read_slower']:.2f}x" for k, v in row.items() if k != "case"]
        print(f"  {case:7} " + "; ".join(parts))
    return out


if __name__ == "__main__":
    sys.exit(main())
