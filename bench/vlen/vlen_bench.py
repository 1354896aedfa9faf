#!/usr/bin/env python3
"""Variable-length data benchmark: arca, h5py, zarr v3, pyarrow and the
numpy limit, in one run.

Cases (int32 items for a-c, like the paper's benchmark):

* ``a``  native: the rows flattened into one 1-D dataset, plus a dataset of
  the row lengths;
* ``b``  variable-length rows of a constant 4096 items;
* ``c``  twice the rows, lengths rising then falling linearly, the same
  total bytes as ``b``;
* ``d``  UTF-8 strings of 5-120 bytes (10 million by default, ``--strings``);
* ``e``  ragged float32 rows of mean length 8;
* ``z``  compressible ragged float32 rows (mean length 8) with zstd, to
  compare file sizes with h5py's uncompressible variable-length storage.

a-c and e run at every size (64, 128, 256, 512, 1024 MiB of item data by
default); d runs once. Libraries:

* ``arca``      the ragged bulk path (``write_ragged``/``read_ragged``);
* ``arca-obj``  numpy object arrays through indexing, as in h5py;
* ``h5py``      variable-length types through object arrays;
* ``zarr``      zarr v3: its variable-length string type for d, and for
  ragged numbers its idiom, a values array plus an offsets array;
* ``parquet``, ``ipc``  pyarrow list/large_string columns, uncompressed;
* ``numpy``     ``tofile``/``fromfile`` of values and offsets: the limit.

A write is timed from creating the file to the end of an ``os.fsync`` after
the library closed it; a read from opening the file to holding every element
(object arrays for the object paths, buffers otherwise). Each file's pages
are evicted from the page cache (``posix_fadvise``) before it is read.
Inputs are built before the clock starts. MB/s counts 10^6 bytes of item
data (UTF-8 bytes for strings), not offsets.

Usage::

    python bench/vlen/vlen_bench.py                 # everything, minutes
    python bench/vlen/vlen_bench.py --quick         # seconds
    python bench/vlen/vlen_bench.py --sizes 64,256 --strings 2000000 --json out.json
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time

import numpy as np

MIB = 1 << 20
ROW = 4096


# -- data ------------------------------------------------------------------------
def lengths_for(case, size_bytes, item, rng):
    """Row lengths (items) whose total is ``size_bytes`` of items."""
    total = size_bytes // item
    if case in ("a", "b"):
        return np.full(total // ROW, ROW, dtype=np.int64)
    if case == "c":
        m = max(2, 2 * (total // ROW))
        half = m // 2
        up = np.linspace(1, 2 * ROW - 1, half)
        lens = np.concatenate([up, up[::-1]])
        lens = np.maximum(1, np.round(lens * total / lens.sum())).astype(np.int64)
        lens[half - 1] += total - lens.sum()  # the longest row absorbs rounding
        return lens
    # e, z: mean 8, spread 0..16
    m = total // 8
    lens = rng.integers(0, 17, m).astype(np.int64)
    lens[-1] = max(0, lens[-1] + total - lens.sum())
    return lens


def make_case(case, size_mib, rng, n_strings):
    """``(values, offsets, kind)``: values int32/float32/uint8 (strings)."""
    if case == "d":
        lens = rng.integers(5, 121, n_strings).astype(np.int64)
        # ASCII letters with some multi-byte characters: valid UTF-8 by construction.
        pool = ("abcdefghijklmnopqrstuvwxyz0123456789 " * 8 + "é€😀").encode()
        total = int(lens.sum())
        src = np.frombuffer(pool[:259], dtype=np.uint8)
        values = np.resize(src[:256], total).copy()  # single-byte characters only
        offsets = np.zeros(n_strings + 1, dtype=np.int64)
        np.cumsum(lens, out=offsets[1:])
        return values, offsets, "str"
    item = 4
    lens = lengths_for(case, size_mib * MIB, item, rng)
    offsets = np.zeros(len(lens) + 1, dtype=np.int64)
    np.cumsum(lens, out=offsets[1:])
    n = int(offsets[-1])
    if case in ("e",):
        values = rng.standard_normal(n).astype(np.float32)
    elif case == "z":
        values = (np.arange(n) % 97).astype(np.float32) * 0.5
    else:
        values = (np.arange(n, dtype=np.int64) % 1000003).astype(np.int32)
    return values, offsets, "num"


def object_array(values, offsets, kind):
    n = len(offsets) - 1
    out = np.empty(n, dtype=object)
    if kind == "str":
        b = values.tobytes()
        o = offsets.tolist()
        for i in range(n):
            out[i] = b[o[i]:o[i + 1]].decode()
    else:
        o = offsets.tolist()
        for i in range(n):
            out[i] = values[o[i]:o[i + 1]]
    return out


# -- file helpers ------------------------------------------------------------------
def files_of(path):
    if os.path.isdir(path):
        return [os.path.join(d, f) for d, _, fs in os.walk(path) for f in fs]
    return [path] if os.path.exists(path) else []


def fsync_all(path):
    for f in files_of(path):
        fd = os.open(f, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def evict(path):
    for f in files_of(path):
        fd = os.open(f, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def size_of(path):
    return sum(os.path.getsize(f) for f in files_of(path))


def remove(path):
    if os.path.isdir(path):
        shutil.rmtree(path)
    elif os.path.exists(path):
        os.remove(path)


# -- libraries: write(path, values, offsets, kind, objs) / read(path, kind) -------
def w_numpy(path, v, o, kind, objs):
    os.makedirs(path)
    v.tofile(os.path.join(path, "values"))
    o.tofile(os.path.join(path, "offsets"))


def r_numpy(path, kind, dtype):
    v = np.fromfile(os.path.join(path, "values"), dtype=dtype)
    o = np.fromfile(os.path.join(path, "offsets"), dtype=np.int64)
    return v, o


def w_arca_native(path, v, o, kind, objs):
    import arca

    with arca.File(path, "w") as f:
        f.create_dataset("values", data=v)
        f.create_dataset("lengths", data=np.diff(o))


def r_arca_native(path, kind, dtype):
    import arca

    with arca.File(path) as f:
        v = f["values"][...]
        lens = f["lengths"][...]
    return v, lens


def _arca_dtype(kind, v):
    import arca

    return arca.string_dtype() if kind == "str" else arca.vlen_dtype(v.dtype)


def w_arca(path, v, o, kind, objs, **opts):
    import arca

    with arca.File(path, "w") as f:
        ds = f.create_dataset("d", shape=(len(o) - 1,), dtype=_arca_dtype(kind, v), **opts)
        ds.write_ragged(v, o)


def r_arca(path, kind, dtype):
    import arca

    with arca.File(path) as f:
        return f["d"].read_ragged()


def w_arca_obj(path, v, o, kind, objs):
    import arca

    with arca.File(path, "w") as f:
        ds = f.create_dataset("d", shape=(len(objs),), dtype=_arca_dtype(kind, v))
        ds[...] = objs


def r_arca_obj(path, kind, dtype):
    import arca

    with arca.File(path) as f:
        return f["d"][...]


def w_h5py_native(path, v, o, kind, objs):
    import h5py

    with h5py.File(path, "w") as f:
        f.create_dataset("values", data=v)
        f.create_dataset("lengths", data=np.diff(o))


def r_h5py_native(path, kind, dtype):
    import h5py

    with h5py.File(path, "r") as f:
        return f["values"][...], f["lengths"][...]


def w_h5py(path, v, o, kind, objs):
    import h5py

    dt = h5py.string_dtype() if kind == "str" else h5py.vlen_dtype(v.dtype)
    lens = np.diff(o)
    if kind != "str" and len(lens) and (lens == lens[0]).all():
        # h5py cannot take an object array of equal-length rows; a 2-D array it can.
        objs = v.reshape(len(lens), int(lens[0]))
    with h5py.File(path, "w") as f:
        ds = f.create_dataset("d", shape=(len(lens),), dtype=dt)
        ds[...] = objs


def r_h5py(path, kind, dtype):
    import h5py

    with h5py.File(path, "r") as f:
        ds = f["d"]
        return ds.asstr()[...] if kind == "str" else ds[...]


def _zchunk(n, item):
    return (max(1, min(n, MIB // item)),)


def w_zarr(path, v, o, kind, objs):
    import zarr

    g = zarr.open_group(path, mode="w")
    if kind == "str":
        a = g.create_array("d", shape=(len(objs),), dtype=str, chunks=(65536,),
                           compressors=None)
        a[...] = objs
        return
    a = g.create_array("values", shape=v.shape, dtype=v.dtype,
                       chunks=_zchunk(len(v), v.itemsize), compressors=None)
    a[...] = v
    b = g.create_array("offsets", shape=o.shape, dtype=o.dtype,
                       chunks=_zchunk(len(o), 8), compressors=None)
    b[...] = o


def r_zarr(path, kind, dtype):
    import zarr

    g = zarr.open_group(path, mode="r")
    if kind == "str":
        return g["d"][...]
    return g["values"][...], g["offsets"][...]


def _arrow_array(v, o, kind):
    import pyarrow as pa

    n = len(o) - 1
    ob = pa.py_buffer(o)
    if kind == "str":
        return pa.Array.from_buffers(pa.large_string(), n, [None, ob, pa.py_buffer(v)])
    child = pa.Array.from_buffers(pa.from_numpy_dtype(v.dtype), len(v), [None, pa.py_buffer(v)])
    return pa.LargeListArray.from_arrays(pa.Array.from_buffers(pa.int64(), n + 1, [None, ob]), child)


def w_parquet(path, v, o, kind, objs):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"d": _arrow_array(v, o, kind)}), path, compression="none")


def r_parquet(path, kind, dtype):
    import pyarrow.parquet as pq

    return pq.read_table(path, memory_map=False)


def w_ipc(path, v, o, kind, objs):
    import pyarrow as pa

    t = pa.table({"d": _arrow_array(v, o, kind)})
    with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, t.schema) as w:
        w.write_table(t)


def r_ipc(path, kind, dtype):
    import pyarrow as pa

    with pa.OSFile(path, "rb") as src:
        return pa.ipc.open_file(src).read_all()


LIBS = {
    "numpy": (w_numpy, r_numpy),
    "arca": (w_arca, r_arca),
    "arca-obj": (w_arca_obj, r_arca_obj),
    "h5py": (w_h5py, r_h5py),
    "zarr": (w_zarr, r_zarr),
    "parquet": (w_parquet, r_parquet),
    "ipc": (w_ipc, r_ipc),
}
NATIVE = {"arca": (w_arca_native, r_arca_native), "h5py": (w_h5py_native, r_h5py_native),
          "numpy": (w_numpy, r_numpy)}


def libs_for(case, chosen):
    if case == "a":
        return [(n, NATIVE[n]) for n in ("numpy", "arca", "h5py") if n in chosen]
    if case == "z":
        return [(n, LIBS[n]) for n in ("arca", "h5py") if n in chosen]
    out = []
    for n in chosen:
        if n == "arca-obj" and case not in ("d", "e"):
            continue  # rows of 4096 items: the object path adds nothing to measure
        out.append((n, LIBS[n]))
    return out


def measure(name, write, read, path, v, o, kind, objs, repeats):
    """Median write and read seconds over `repeats` runs, and the file size."""
    tw, tr = [], []
    size = 0
    for _ in range(repeats):
        remove(path)
        gc.collect()
        t0 = time.perf_counter()
        write(path, v, o, kind, objs)
        fsync_all(path)
        tw.append(time.perf_counter() - t0)
        size = size_of(path)
        evict(path)
        gc.collect()
        t0 = time.perf_counter()
        res = read(path, kind, v.dtype)
        tr.append(time.perf_counter() - t0)
        check(name, res, v, o, kind)
        del res
    remove(path)
    return statistics.median(tw), statistics.median(tr), size


def check(name, res, v, o, kind):
    """Spot-check what was read (outside the timed region)."""
    n = len(o) - 1
    i = n // 2
    want = v[o[i]:o[i + 1]]
    if isinstance(res, tuple):
        a, b = res
        if len(b) == n:  # values + lengths
            ok = len(a) == len(v) and int(b[i]) == len(want)
        else:
            ok = np.array_equal(np.asarray(a)[b[i]:b[i + 1]], want)
    elif hasattr(res, "column"):
        got = res.column("d")[i].as_py()
        ok = (got == want.tobytes().decode()) if kind == "str" else np.array_equal(got, want)
    else:
        got = res[i]
        ok = (got == want.tobytes().decode()) if kind == "str" else np.array_equal(got, want)
    if not ok:
        raise SystemExit(f"{name}: element {i} read back wrong")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="64,128,256,512,1024", help="MiB of item data, comma separated")
    ap.add_argument("--strings", type=int, default=10_000_000, help="strings in case d")
    ap.add_argument("--cases", default="a,b,c,d,e,z")
    ap.add_argument("--libs", default=",".join(LIBS))
    ap.add_argument("--repeats", type=int, default=3, help="runs per point; medians are reported")
    ap.add_argument("--dir", default=None, help="scratch directory (default: a temporary one)")
    ap.add_argument("--json", default=None, help="also write the results here")
    ap.add_argument("--quick", action="store_true", help="4 MiB, 200,000 strings: seconds")
    args = ap.parse_args()
    if args.quick:
        args.sizes, args.strings = "4", 200_000
    sizes = [int(s) for s in args.sizes.split(",") if s]
    cases = [c for c in args.cases.split(",") if c]
    chosen = [n for n in args.libs.split(",") if n]
    for n in chosen:
        if n not in LIBS:
            raise SystemExit(f"unknown library {n}; choose from {', '.join(LIBS)}")
    import arca
    import h5py

    scratch = args.dir or tempfile.mkdtemp(prefix="vlen-bench-")
    os.makedirs(scratch, exist_ok=True)
    rng = np.random.default_rng(2024)
    results = []
    print(f"arca {arca.__version__}, h5py {h5py.__version__} (HDF5 {h5py.version.hdf5_version}), "
          f"python {platform.python_version()}, {os.cpu_count()} cpus, scratch {scratch}")
    print(f"{'case':4} {'MiB':>6} {'elements':>10} {'library':9} {'write MB/s':>11} "
          f"{'read MB/s':>10} {'file MB':>9}")
    runs = []
    for c in cases:
        if c == "d":
            runs.append((c, None))
        elif c == "z":
            runs.append((c, sizes[0]))
        else:
            runs.extend((c, s) for s in sizes)
    for case, size in runs:
        v, o, kind = make_case(case, size or 0, rng, args.strings)
        libs = libs_for(case, chosen)
        objs = None
        if any(n in ("arca-obj", "h5py", "zarr") and case in ("b", "c", "d", "e", "z") for n, _ in libs):
            objs = object_array(v, o, kind)
        payload = v.nbytes
        for name, (w, r) in libs:
            if case == "z" and name == "arca":
                def w(path, v, o, kind, objs):  # noqa: E306 -- zstd for the size comparison
                    w_arca(path, v, o, kind, objs, vlen_compression="zstd", vlen_shuffle=True)
            if case == "z" and name == "h5py":
                w = w_h5py
            path = os.path.join(scratch, f"{case}-{name}")
            tw, tr, fsize = measure(name, w, r, path, v, o, kind, objs, args.repeats)
            rec = {
                "case": case, "size_mib": size if size else round(payload / MIB, 1),
                "elements": len(o) - 1, "library": name, "payload_bytes": int(payload),
                "write_s": tw, "read_s": tr, "write_mbs": payload / tw / 1e6,
                "read_mbs": payload / tr / 1e6, "file_bytes": fsize,
            }
            results.append(rec)
            print(f"{case:4} {rec['size_mib']:>6} {rec['elements']:>10} {name:9} "
                  f"{rec['write_mbs']:>11.1f} {rec['read_mbs']:>10.1f} {fsize / 1e6:>9.1f}",
                  flush=True)
        del v, o, objs
        gc.collect()
    ratios = summarize(results)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"results": results, "ratios": ratios,
                       "machine": {"cpus": os.cpu_count(), "python": platform.python_version()}},
                      fh, indent=1)
    if not args.dir:
        shutil.rmtree(scratch, ignore_errors=True)


def summarize(results):
    """Print and return the ratios the aims are stated in."""
    by = {(r["case"], r["size_mib"], r["library"]): r for r in results}
    out = []
    print("\nratios (write, read); aims: b,c vs a >= 0.8 and vs h5py >= 2; "
          "d,e fast path vs h5py >= 10, object path vs h5py > 1; z file vs h5py <= 0.5;\n"
          "ceiling_vs_h5py = numpy/h5py, the most an uncompressed format can reach")
    for (case, size, lib), r in sorted(by.items(), key=lambda x: (x[0][0], str(x[0][1]))):
        if lib not in ("arca", "arca-obj"):
            continue
        row = {"case": case, "size_mib": size, "library": lib}
        h = by.get((case, size, "h5py"))
        if h:
            row["vs_h5py"] = (h["write_s"] / r["write_s"], h["read_s"] / r["read_s"])
            row["file_vs_h5py"] = r["file_bytes"] / h["file_bytes"]
        a = by.get(("a", size, "arca"))
        if case in ("b", "c") and a:
            row["vs_native_a"] = (a["write_s"] / r["write_s"], a["read_s"] / r["read_s"])
        n = by.get((case, size, "numpy"))
        if n:
            row["vs_numpy"] = (n["write_s"] / r["write_s"], n["read_s"] / r["read_s"])
        if n and h:
            # The ceiling for any format that stores the bytes as they are:
            # numpy.tofile/fromfile against h5py in the same run.
            row["ceiling_vs_h5py"] = (h["write_s"] / n["write_s"], h["read_s"] / n["read_s"])
        out.append(row)
        parts = [f"{k} {v[0]:.2f}x/{v[1]:.2f}x" for k, v in row.items()
                 if isinstance(v, tuple)]
        if "file_vs_h5py" in row:
            parts.append(f"file/h5py {row['file_vs_h5py']:.2f}")
        print(f"  {case} {size:>6} {lib:9} " + ", ".join(parts))
        aim = AIM_VS_H5PY.get((case, lib))
        if aim and "ceiling_vs_h5py" in row:
            for what, c in zip(("write", "read"), row["ceiling_vs_h5py"]):
                if c < aim:
                    print(f"    {what}: the {aim:g}x aim is beyond the physical limit here "
                          f"(numpy is {c:.2f}x h5py)")
    return out


# Speed-up over h5py that the aims ask of each case and path.
AIM_VS_H5PY = {("b", "arca"): 2, ("c", "arca"): 2, ("d", "arca"): 10, ("e", "arca"): 10}


if __name__ == "__main__":
    sys.exit(main())
