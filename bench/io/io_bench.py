#!/usr/bin/env python3
"""Side-by-side bulk I/O benchmark: arca, h5py, zarr v3 and the numpy limit.

One float64 dataset (1 GiB by default) is written and read back by every
library in three layouts:

* ``contiguous`` - no chunking, no filters;
* ``zstd``       - 1 MiB chunks, byte shuffle + zstd level 3;
* ``lz4``        - 1 MiB chunks, byte shuffle + lz4.

``--data table`` uses rows of mixed fields instead (a PyTables-like
compound: time, channel, flags, energy, a 3-vector position and an id, 36
bytes a row) and ``--data complex`` a complex128 array.

``numpy.tofile``/``numpy.fromfile`` on a raw file is the physical limit.
Every library gets the same array, the same chunk shape and the same codec
settings.  A write is timed from opening the file to the end of an
``os.fsync`` of every file it produced (after the library has closed it); a
read is timed from opening the file to holding the whole array in memory.
Before every read the file's pages are evicted from the page cache, so reads
come from the disk; the output says whether that worked.  Each read is
compared with the source array outside the timed region.

Usage::

    python bench/io/io_bench.py              # 1 GiB, 3 repeats
    python bench/io/io_bench.py --quick      # 64 MiB, 1 repeat
    python bench/io/io_bench.py --json out.json --dir /mnt/scratch
    python bench/io/io_bench.py --data table     # 1 GiB of compound rows
    python bench/io/io_bench.py --data complex   # 1 GiB of complex128

Throughput is MB/s = 10^6 bytes of uncompressed data per second; figures are
medians over the repeats.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

CASES = ("contiguous", "zstd", "lz4")
LIBS = ("numpy", "arca", "h5py", "zarr")
ZSTD_LEVEL = 3
DATASET = "data"


# --------------------------------------------------------------------------
# Test data
# --------------------------------------------------------------------------


def make_data(n: int, seed: int = 12345) -> np.ndarray:
    """A sensor-like float64 signal that compresses realistically.

    Two slow sine components plus Gaussian noise, quantised to steps of
    2**-10 (like a 16-bit ADC reading scaled to physical units).  The
    quantisation leaves the low mantissa bits zero and the noise keeps the
    rest incompressible, so shuffle+zstd lands around 3-4x: neither the
    all-zeros best case nor the random-bits worst case.
    """
    rng = np.random.default_rng(seed)
    out = np.empty(n, dtype="<f8")
    block = 1 << 22  # generate in blocks to keep temporaries small
    for start in range(0, n, block):
        stop = min(n, start + block)
        t = np.arange(start, stop, dtype=np.float64)
        v = 1000.0 * np.sin(t * (2 * np.pi / 65536.0))
        v += 250.0 * np.sin(t * (2 * np.pi / 3_000_000.0))
        v += rng.normal(0.0, 2.0, size=stop - start)
        np.multiply(v, 1024.0, out=v)
        np.rint(v, out=v)
        np.multiply(v, 1.0 / 1024.0, out=out[start:stop])
    return out


TABLE_DTYPE = np.dtype([
    ("time", "<f8"), ("channel", "<u2"), ("flags", "u1"), ("quality", "u1"),
    ("energy", "<f4"), ("pos", "<f4", (3,)), ("id", "<i8"),
])
DATA_KINDS = ("signal", "table", "complex", "volume")
# --data volume: float32 planes of PLANE x PLANE, chunked by whole planes.
PLANE = 512
# The element type and shape of this run (numpy's raw read needs them).
DATA_DTYPE = [np.dtype("<f8")]
DATA_SHAPE = [(-1,)]


def dtype_of(kind: str) -> np.dtype:
    return {"signal": np.dtype("<f8"), "table": TABLE_DTYPE,
            "complex": np.dtype("<c16"), "volume": np.dtype("<f4")}[kind]


def make_kind(kind: str, n: int) -> np.ndarray:
    """`n` elements of the chosen data: the signal, rows built from it, or
    complex numbers whose parts are two phases of it."""
    if kind == "signal":
        return make_data(n)
    if kind == "volume":
        # The signal as float32 planes (its quantisation survives the cast).
        planes = max(1, n // (PLANE * PLANE))
        out = np.empty(planes * PLANE * PLANE, dtype="<f4")
        step = 1 << 22
        for i in range(0, out.size, step):
            out[i:i + step] = make_data(min(step, out.size - i), seed=12345 + i // step)
        return out.reshape(planes, PLANE, PLANE)
    if kind == "complex":
        out = np.empty(n, dtype="<c16")
        s = make_data(n)
        out.real = s
        out.imag = np.roll(s, 12_345)
        return out
    out = np.zeros(n, dtype=TABLE_DTYPE)
    s = make_data(n)
    out["time"] = np.arange(n, dtype=np.float64) * 1e-6
    out["channel"] = (np.arange(n) % 512).astype(np.uint16)
    out["flags"] = (s > 0).astype(np.uint8) | ((np.abs(s) > 900) << 1).astype(np.uint8)
    out["quality"] = (np.abs(s) % 7).astype(np.uint8)
    out["energy"] = s.astype(np.float32)
    out["pos"] = np.stack([s, s * 0.5, -s], axis=1).astype(np.float32)
    out["id"] = np.arange(n, dtype=np.int64) * 3 + 7
    return out


# --------------------------------------------------------------------------
# File-system helpers (durability, cache eviction, sizes)
# --------------------------------------------------------------------------


def tree_files(path: str) -> list[str]:
    """Every regular file at or under `path`."""
    if os.path.isdir(path):
        found = []
        for root, _dirs, files in os.walk(path):
            found.extend(os.path.join(root, f) for f in files)
        return sorted(found)
    return [path] if os.path.exists(path) else []


def fsync_tree(path: str) -> None:
    """fsync every file and directory that holds the output, parent included.

    Directory fsyncs matter for multi-file stores (zarr) and for the new
    directory entry of single-file formats; doing the same for everyone keeps
    the comparison fair.
    """
    dirs = {os.path.dirname(os.path.abspath(path))}
    if os.path.isdir(path):
        for root, subdirs, _files in os.walk(path):
            dirs.add(root)
            dirs.update(os.path.join(root, d) for d in subdirs)
    for f in tree_files(path):
        fd = os.open(f, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    for d in sorted(dirs):
        fd = os.open(d, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def tree_size(path: str) -> int:
    return sum(os.stat(f).st_size for f in tree_files(path))


def evict(path: str, mode: str) -> None:
    """Drop the output's pages from the page cache before a timed read.

    ``fadvise`` asks the kernel to forget only these files (the pages are
    clean after the fsync, so it can); ``drop`` drops the whole cache, which
    also slows everything else on the machine; ``none`` leaves reads warm.
    """
    if mode == "none":
        return
    if mode == "drop":
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as fh:
            fh.write("3\n")
        return
    for f in tree_files(path):
        fd = os.open(f, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def resident_bytes(path: str) -> int | None:
    """Bytes of the output still in the page cache (None if unknown)."""
    files = tree_files(path)
    if not files or shutil.which("fincore") is None:
        return None
    total = 0
    # fincore takes many files at once; batch to stay under argv limits.
    for i in range(0, len(files), 512):
        res = subprocess.run(
            ["fincore", "--bytes", "--noheadings", "--raw", "-o", "RES"]
            + files[i : i + 512],
            capture_output=True,
            text=True,
        )
        if res.returncode != 0:
            return None
        total += sum(int(x) for x in res.stdout.split())
    return total


def load_average() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


RETAIN_ENV = "ARCA_IO_BENCH_RETAIN"
# Keep freed heap memory in the process: no mmap for big blocks, never trim.
RETAIN_TUNABLES = "glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=1099511627776"


def reexec_retaining_memory() -> None:
    """Restart this process with glibc told to keep freed memory.

    Every read returns a fresh 1 GiB array.  Normally glibc maps it from the
    kernel and unmaps it on free, so each read starts by faulting in new
    zeroed pages.  On virtual machines with free-page reporting (Firecracker,
    some cloud VMs) freed pages also go back to the host and the next first
    touch costs 5-10x more, at random, depending on whether the host has
    reclaimed them yet: that swamps the I/O being measured.  Reusing
    already-touched heap memory removes that noise for every library alike.
    Tunables are read at process start, hence the re-exec.
    """
    if os.environ.get(RETAIN_ENV) == "1":
        return
    env = dict(os.environ)
    env[RETAIN_ENV] = "1"
    prior = env.get("GLIBC_TUNABLES")
    env["GLIBC_TUNABLES"] = f"{prior}:{RETAIN_TUNABLES}" if prior else RETAIN_TUNABLES
    sys.stdout.flush()
    os.execve(sys.executable, [sys.executable] + sys.argv, env)


def prefault_pool(nbytes: int) -> int:
    """Touch and free `nbytes` once so later allocations reuse resident pages."""
    try:
        with open("/proc/meminfo") as fh:
            avail = next(int(ln.split()[1]) * 1024 for ln in fh if ln.startswith("MemAvailable:"))
        nbytes = min(nbytes, avail // 2)
    except (OSError, StopIteration, ValueError):
        pass
    pool = np.ones(nbytes // 8, dtype=np.float64)
    del pool
    return nbytes


# --------------------------------------------------------------------------
# Library adapters
# --------------------------------------------------------------------------


def chunk_shape(data: np.ndarray, chunk: int) -> tuple:
    """The chunk shape for `chunk` elements: a run of a 1-D array, or
    whole planes of a volume."""
    if data.ndim == 1:
        return (chunk,)
    plane = int(np.prod(data.shape[1:]))
    return (max(1, chunk // plane), *data.shape[1:])


@dataclass
class Lib:
    name: str
    version: str
    ext: str
    write: Callable[[str, np.ndarray, str, int], None]
    read: Callable[[str], np.ndarray]
    notes: dict[str, str] = field(default_factory=dict)


def numpy_lib() -> Lib:
    def write(path, data, case, chunk):
        # A raw file has no layout: the same bytes serve every case, which is
        # what makes it the physical limit for the compressed ones too.
        data.tofile(path)

    def read(path):
        return np.fromfile(path, dtype=DATA_DTYPE[0]).reshape(DATA_SHAPE[0])

    return Lib(
        "numpy",
        np.__version__,
        ".raw",
        write,
        read,
        {c: "raw tofile/fromfile (no compression)" for c in CASES},
    )


def arca_lib() -> Lib:
    import arca

    kw = {
        "contiguous": {},
        "zstd": {"compression": "zstd", "compression_opts": ZSTD_LEVEL, "shuffle": True},
        "lz4": {"compression": "lz4", "shuffle": True},
    }

    def write(path, data, case, chunk):
        opts = dict(kw[case])
        if case != "contiguous":
            opts["chunks"] = chunk_shape(data, chunk)
        f = arca.File(path, "w")
        try:
            ds = f.create_dataset(DATASET, shape=data.shape, dtype=data.dtype, **opts)
            ds[...] = data
        finally:
            f.close()

    def read(path):
        f = arca.File(path, "r")
        try:
            return f[DATASET][...]
        finally:
            f.close()

    return Lib(
        "arca",
        getattr(arca, "__version__", None) or dist_version("arca"),
        ".arca",
        write,
        read,
        {
            "contiguous": "contiguous",
            "zstd": f"shuffle + zstd level {ZSTD_LEVEL}",
            "lz4": "shuffle + lz4",
        },
    )


def h5py_lib() -> Lib:
    import h5py
    import hdf5plugin

    def filters(case):
        if case == "zstd":
            return {"shuffle": True, **hdf5plugin.Zstd(clevel=ZSTD_LEVEL)}
        if case == "lz4":
            return {"shuffle": True, **hdf5plugin.LZ4()}
        return {}

    def write(path, data, case, chunk):
        opts = filters(case)
        if case != "contiguous":
            opts["chunks"] = chunk_shape(data, chunk)
        with h5py.File(path, "w") as f:
            ds = f.create_dataset(DATASET, shape=data.shape, dtype=data.dtype, **opts)
            ds[...] = data

    def read(path):
        with h5py.File(path, "r") as f:
            return f[DATASET][...]

    return Lib(
        "h5py",
        f"{h5py.__version__} (HDF5 {h5py.version.hdf5_version}, hdf5plugin {hdf5plugin.version})",
        ".h5",
        write,
        read,
        {
            "contiguous": "contiguous layout",
            "zstd": f"HDF5 shuffle + hdf5plugin.Zstd(clevel={ZSTD_LEVEL})",
            "lz4": "HDF5 shuffle + hdf5plugin.LZ4()",
        },
    )


def zarr_lib() -> Lib:
    import numcodecs
    import zarr
    import zarr.codecs as zc

    # numcodecs' Shuffle/LZ4 are not part of the zarr v3 core spec; zarr
    # warns about that on every array it creates.
    warnings.filterwarnings("ignore", module=r"zarr\..*")
    warnings.filterwarnings("ignore", message=r".*Zarr format 3 specification.*")

    # zarr >= 3.1 ships the numcodecs wrappers itself; 3.0 needs numcodecs.zarr3.
    try:
        Shuffle, LZ4 = zc.Shuffle, zc.LZ4
    except AttributeError:
        from numcodecs.zarr3 import LZ4, Shuffle

    def compressors(case, itemsize):
        if case == "zstd":
            return [Shuffle(elementsize=itemsize), zc.ZstdCodec(level=ZSTD_LEVEL)]
        if case == "lz4":
            return [Shuffle(elementsize=itemsize), LZ4(acceleration=1)]
        return None

    def write(path, data, case, chunk):
        # zarr has no contiguous layout: one chunk spanning the array without
        # codecs is the nearest equivalent.
        chunks = data.shape if case == "contiguous" else chunk_shape(data, chunk)
        z = zarr.create_array(
            store=path,
            shape=data.shape,
            chunks=chunks,
            dtype=data.dtype,
            filters=None,
            compressors=compressors(case, data.dtype.itemsize),
            zarr_format=3,
            overwrite=True,
        )
        z[...] = data

    def read(path):
        return zarr.open_array(path, mode="r")[...]

    return Lib(
        "zarr",
        f"{zarr.__version__} (numcodecs {numcodecs.__version__})",
        ".zarr",
        write,
        read,
        {
            "contiguous": "v3, one chunk spanning the array, no codecs",
            "zstd": f"v3, bytes -> numcodecs.shuffle -> zstd level {ZSTD_LEVEL} (native ZstdCodec)",
            "lz4": "v3, bytes -> numcodecs.shuffle -> numcodecs.lz4 (not blosc)",
        },
    )


def dist_version(name: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "unknown"


FACTORIES = {"numpy": numpy_lib, "arca": arca_lib, "h5py": h5py_lib, "zarr": zarr_lib}


def load_libs(names: list[str]) -> tuple[list[Lib], dict[str, str]]:
    libs, missing = [], {}
    for name in names:
        try:
            libs.append(FACTORIES[name]())
        except Exception as exc:  # any import failure means "not available"
            missing[name] = f"{type(exc).__name__}: {exc}"
    return libs, missing


# --------------------------------------------------------------------------
# Measurement
# --------------------------------------------------------------------------


CODEC_PIPELINES = {"zstd": [("shuffle", None), ("zstd", ZSTD_LEVEL)],
                   "lz4": [("shuffle", None), ("lz4", None)]}


def codec_ceiling(data: np.ndarray, chunk: int, case: str, repeat: int) -> dict | None:
    """The codec alone on this data's chunks (arca's shuffle + codec, no
    file): MB/s encoding and decoding on 1 and on 2 threads (the calls
    release the GIL). What a compressed write or read could reach if the
    file cost nothing; medians of `repeat`."""
    if case not in CODEC_PIPELINES:
        return None
    try:
        from arca import _native
    except ImportError:
        return None
    from concurrent.futures import ThreadPoolExecutor

    fs = CODEC_PIPELINES[case]
    elem = data.dtype.itemsize
    rows = chunk_shape(data, chunk)[0]
    raws = [np.ascontiguousarray(data[i:i + rows]).tobytes() for i in range(0, len(data), rows)]
    enc = [_native.chunk_encode(fs, elem, r) for r in raws]
    sizes = [len(r) for r in raws]
    out = {}
    for threads in (1, 2):
        with ThreadPoolExecutor(threads) as pool:
            te, td = [], []
            for _ in range(repeat):
                t0 = time.perf_counter()
                list(pool.map(lambda r: _native.chunk_encode(fs, elem, r), raws))
                te.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                list(pool.map(lambda e: _native.chunk_decode(fs, elem, e[1][0], e[1][1], e[0]),
                              zip(sizes, enc)))
                td.append(time.perf_counter() - t0)
        out[f"encode_{threads}t_mb_s"] = data.nbytes / statistics.median(te) / 1e6
        out[f"decode_{threads}t_mb_s"] = data.nbytes / statistics.median(td) / 1e6
    return out


def remove(path: str) -> None:
    if os.path.isdir(path):
        shutil.rmtree(path)
    elif os.path.exists(path):
        os.remove(path)


def measure_once(lib: Lib, case: str, data: np.ndarray, chunk: int, workdir: str,
                 cache_mode: str) -> dict:
    path = os.path.join(workdir, f"{lib.name}-{case}{lib.ext}")
    remove(path)
    gc.collect()

    t0 = time.perf_counter()
    lib.write(path, data, case, chunk)
    fsync_tree(path)
    t_write = time.perf_counter() - t0

    size = tree_size(path)
    nfiles = len(tree_files(path))
    evict(path, cache_mode)
    resident = resident_bytes(path)
    gc.collect()

    t0 = time.perf_counter()
    out = lib.read(path)
    t_read = time.perf_counter() - t0

    ok = (
        isinstance(out, np.ndarray)
        and out.shape == data.shape
        and out.dtype == data.dtype
        and np.array_equal(out, data)
    )
    del out
    remove(path)
    return {
        "write_s": t_write,
        "read_s": t_read,
        "file_bytes": size,
        "files": nfiles,
        "resident_before_read": resident,
        "verified": bool(ok),
    }


def median(xs):
    return statistics.median(xs) if xs else None


def summarise(samples: list[dict], nbytes: int) -> dict:
    w = median([s["write_s"] for s in samples])
    r = median([s["read_s"] for s in samples])
    size = median([s["file_bytes"] for s in samples])
    return {
        "write_mb_s": nbytes / w / 1e6,
        "read_mb_s": nbytes / r / 1e6,
        "write_s": w,
        "read_s": r,
        "file_bytes": int(size),
        "files": samples[-1]["files"],
        "compression_ratio": nbytes / size if size else None,
        "verified": all(s["verified"] for s in samples),
    }


def arca_ratios(summary: dict) -> dict:
    """Throughput ratios arca/other per case (None where either is absent)."""
    out = {}
    for case, per_lib in summary.items():
        a = per_lib.get("arca")
        out[case] = {}
        for other in ("numpy", "h5py", "zarr"):
            o = per_lib.get(other)
            if a is None or o is None:
                out[case][other] = None
                continue
            out[case][other] = {
                "write": a["write_mb_s"] / o["write_mb_s"],
                "read": a["read_mb_s"] / o["read_mb_s"],
                "size": a["file_bytes"] / o["file_bytes"],
            }
    return out


def check_aims(summary: dict) -> list[dict]:
    """The targets arca is held to; each is met, missed or not measurable."""
    aims = []

    def aim(text, case, other, op, factor=1.0):
        if case not in summary:
            return
        a = summary.get(case, {}).get("arca")
        o = summary.get(case, {}).get(other)
        for kind in ("write", "read"):
            entry = {"aim": f"{case} {kind}: {text}", "status": "n/a", "value": None}
            if a is not None and o is not None:
                ratio = a[f"{kind}_mb_s"] / o[f"{kind}_mb_s"]
                entry["value"] = ratio
                met = ratio >= factor if op == ">=" else ratio > factor
                entry["status"] = "met" if met else "MISSED"
            aims.append(entry)

    aim("arca >= 0.9x numpy", "contiguous", "numpy", ">=", 0.9)
    aim("arca faster than h5py", "contiguous", "h5py", ">")
    # The machine's limit: reads at numpy's speed, compressed writes and
    # reads using both cores where h5py uses one.
    a = summary.get("contiguous", {}).get("arca")
    o = summary.get("contiguous", {}).get("numpy")
    if "contiguous" in summary:
        entry = {"aim": "contiguous read: arca >= 0.95x numpy", "status": "n/a", "value": None}
        if a is not None and o is not None:
            entry["value"] = a["read_mb_s"] / o["read_mb_s"]
            entry["status"] = "met" if entry["value"] >= 0.95 else "MISSED"
        aims.append(entry)
    for case in ("zstd", "lz4"):
        a = summary.get(case, {}).get("arca")
        o = summary.get(case, {}).get("h5py")
        if case not in summary:
            continue
        for kind, factor in (("write", 1.6), ("read", 2.0)):
            entry = {"aim": f"{case} {kind}: arca >= {factor}x h5py (both cores)",
                     "status": "n/a", "value": None}
            if a is not None and o is not None:
                entry["value"] = a[f"{kind}_mb_s"] / o[f"{kind}_mb_s"]
                entry["status"] = "met" if entry["value"] >= factor else "MISSED"
            aims.append(entry)
    for case in ("zstd", "lz4"):
        aim("arca faster than h5py", case, "h5py", ">")
        aim("arca faster than zarr", case, "zarr", ">")
        for other in ("h5py", "zarr"):
            if case not in summary:
                continue
            a = summary.get(case, {}).get("arca")
            o = summary.get(case, {}).get(other)
            entry = {"aim": f"{case} ratio: arca comparable to {other} (>= 0.9x)",
                     "status": "n/a", "value": None}
            if a is not None and o is not None:
                r = a["compression_ratio"] / o["compression_ratio"]
                entry["value"] = r
                entry["status"] = "met" if r >= 0.9 else "MISSED"
            aims.append(entry)
    return aims


# --------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------


def fmt(x, spec=".0f", none="n/a"):
    return none if x is None else format(x, spec)


def print_report(summary, ratios, aims, libs, missing, meta, out=sys.stdout):
    p = lambda *a: print(*a, file=out)  # noqa: E731
    p()
    p(f"Data: {meta['size_mib']} MiB {meta.get('data', 'float64')} ({meta['elements']:,} elements, "
      f"shape {meta.get('shape')}), chunks {meta.get('chunk_shape')} ({meta['chunk_kib']} KiB), "
      f"{meta['repeat']} repeat(s), medians")
    p(f"Directory: {meta['dir']}   cache before reads: {meta['cache_state']}")
    p(f"Memory: {meta['memory']}")
    p(f"Load average: start {meta['load_start']}, end {meta['load_end']}")
    for lib in libs:
        p(f"  {lib.name:6s} {lib.version}")
    for name, why in missing.items():
        p(f"  {name:6s} NOT AVAILABLE ({why})")
    for case in summary:
        p()
        p(f"== {case} ==")
        p(f"{'library':8s} {'write MB/s':>10s} {'read MB/s':>10s} {'file MiB':>9s} "
          f"{'ratio':>6s}  settings")
        for lib in libs:
            s = summary[case].get(lib.name)
            if s is None:
                continue
            flag = "" if s["verified"] else "  READ MISMATCH"
            p(f"{lib.name:8s} {s['write_mb_s']:10.0f} {s['read_mb_s']:10.0f} "
              f"{s['file_bytes'] / 2**20:9.1f} {s['compression_ratio']:6.2f}  "
              f"{lib.notes.get(case, '')}{flag}")
        c = meta.get("ceilings", {}).get(case)
        if c:
            p(f"  ceiling, codec alone (no file): encode {c['encode_1t_mb_s']:.0f} MB/s on 1 "
              f"thread, {c['encode_2t_mb_s']:.0f} on 2; decode {c['decode_1t_mb_s']:.0f} on 1, "
              f"{c['decode_2t_mb_s']:.0f} on 2")
        r = ratios.get(case, {})
        parts = []
        for other in ("numpy", "h5py", "zarr"):
            x = r.get(other)
            if x is not None:
                parts.append(f"arca/{other} write {x['write']:.2f} read {x['read']:.2f}")
        if parts:
            p("  " + "; ".join(parts))
    p()
    p("Aims:")
    for a in aims:
        p(f"  [{a['status']:6s}] {a['aim']}"
          + ("" if a["value"] is None else f"  (x{a['value']:.2f})"))


def markdown_report(summary, ratios, aims, libs, missing, meta, samples) -> str:
    """The same figures as Markdown tables, for pasting into documentation."""
    nbytes = meta["size_mib"] * 2**20

    def rng(case, lib, key):
        mbs = [nbytes / s[key] / 1e6 for s in samples[case][lib]]
        return f"{min(mbs):.0f}-{max(mbs):.0f}"

    lines = [
        f"Command: `{meta['command']}`",
        "",
        f"- Data: {meta['size_mib']} MiB {meta.get('data')}, shape {meta.get('shape')}; "
        f"chunks {meta.get('chunk_shape')} ({meta['chunk_kib']} KiB); "
        f"{meta['repeat']} repeats, medians; MB/s = 10^6 bytes of uncompressed data per second",
        f"- Reads: {meta['cache_state']}",
        f"- Memory: {meta['memory']}",
        f"- Machine: {meta['cpus']} CPUs, {meta['platform']}, Python {meta['python']}; "
        f"load average at start {meta['load_start']}, at end {meta['load_end']}",
        "- Versions: " + "; ".join(f"{lib.name} {lib.version}" for lib in libs),
    ]
    lines += [f"- {name}: not available ({why})" for name, why in missing.items()]
    lines += [
        "",
        "| case | library | write MB/s (min-max) | read MB/s (min-max) | file MiB | ratio "
        "| settings |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for case in summary:
        for lib in libs:
            x = summary[case].get(lib.name)
            if x is None:
                continue
            lines.append(
                f"| {case} | {lib.name} | "
                f"{x['write_mb_s']:.0f} ({rng(case, lib.name, 'write_s')}) | "
                f"{x['read_mb_s']:.0f} ({rng(case, lib.name, 'read_s')}) | "
                f"{x['file_bytes'] / 2**20:.1f} | {x['compression_ratio']:.2f} | "
                f"{lib.notes.get(case, '')} |")
    lines += ["", "| case | arca/numpy write, read | arca/h5py write, read | "
              "arca/zarr write, read |", "|---|---|---|---|"]
    for case, r in ratios.items():
        cells = []
        for other in ("numpy", "h5py", "zarr"):
            x = r.get(other)
            cells.append("n/a" if x is None else f"{x['write']:.2f}, {x['read']:.2f}")
        lines.append(f"| {case} | " + " | ".join(cells) + " |")
    lines += ["", "| aim | result |", "|---|---|"]
    for a in aims:
        v = "" if a["value"] is None else f" (x{a['value']:.2f})"
        lines.append(f"| {a['aim']} | {a['status']}{v} |")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mib", type=int, default=None,
                    help="dataset size in MiB (default 1024; 64 with --quick)")
    ap.add_argument("--repeat", type=int, default=3, help="repeats per measurement (default 3)")
    ap.add_argument("--quick", action="store_true", help="64 MiB, 1 repeat: a run of seconds")
    ap.add_argument("--chunk-kib", type=int, default=None,
                    help="chunk size (default 1024 KiB; 2048 with --data volume: 2 planes)")
    ap.add_argument("--json", metavar="FILE", help="write every figure to FILE")
    ap.add_argument("--markdown", metavar="FILE", help="write the tables as Markdown to FILE")
    ap.add_argument("--dir", metavar="DIR", help="parent of the scratch directory (default /tmp)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch directory")
    ap.add_argument("--libs", default=",".join(LIBS),
                    help=f"comma-separated subset of {','.join(LIBS)}")
    ap.add_argument("--cases", default=",".join(CASES),
                    help=f"comma-separated subset of {','.join(CASES)}")
    ap.add_argument("--cache", choices=("fadvise", "drop", "none"), default="fadvise",
                    help="how to make reads cold: evict the file's pages (default), "
                         "drop the whole page cache (root), or nothing")
    ap.add_argument("--memory", choices=("retain", "system"), default="retain",
                    help="retain (default): keep freed memory in the process so "
                         "page-fault noise from the VM/host does not dominate; "
                         "system: glibc defaults, every big array is fresh memory")
    ap.add_argument("--data", choices=DATA_KINDS, default="signal",
                    help="signal: float64 (default); table: PyTables-like compound rows; "
                         "complex: complex128; volume: float32 planes of 512 x 512")
    ap.add_argument("--strict", action="store_true",
                    help="fail if a library cannot be imported")
    args = ap.parse_args(argv)
    if args.quick:
        args.repeat = 1
    if args.size_mib is None:
        args.size_mib = 64 if args.quick else 1024
    if args.chunk_kib is None:
        args.chunk_kib = 2048 if args.data == "volume" else 1024
    for name in ("size_mib", "repeat", "chunk_kib"):
        if getattr(args, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be at least 1")
    args.libs = [x for x in args.libs.split(",") if x]
    args.cases = [x for x in args.cases.split(",") if x]
    for x in args.libs:
        if x not in LIBS:
            ap.error(f"unknown library {x!r}; choose from {', '.join(LIBS)}")
    for x in args.cases:
        if x not in CASES:
            ap.error(f"unknown case {x!r}; choose from {', '.join(CASES)}")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.memory == "retain" and argv is None:
        reexec_retaining_memory()
    DATA_DTYPE[0] = dtype_of(args.data)
    libs, missing = load_libs(args.libs)
    if missing and args.strict:
        for name, why in missing.items():
            print(f"error: {name} is not available: {why}", file=sys.stderr)
        return 2
    if not libs:
        print("error: no library available", file=sys.stderr)
        return 2

    nbytes = args.size_mib * 2**20
    itemsize = dtype_of(args.data).itemsize
    n = nbytes // itemsize
    chunk = args.chunk_kib * 1024 // itemsize
    parent = args.dir or tempfile.gettempdir()
    os.makedirs(parent, exist_ok=True)
    workdir = tempfile.mkdtemp(prefix="arca-io-bench-", dir=parent)

    load_start = load_average()
    retained = os.environ.get(RETAIN_ENV) == "1"
    if retained:
        # Room for the source, one library's temporaries and the read result.
        pool = prefault_pool(4 * nbytes + 2**30)
        memory = (f"retained in process (GLIBC_TUNABLES={RETAIN_TUNABLES}; "
                  f"{pool / 2**30:.1f} GiB pre-faulted)")
    else:
        memory = "glibc defaults (fresh pages for every large array)"
    print(f"Generating {args.size_mib} MiB of test data ...", flush=True)
    data = make_kind(args.data, n)
    DATA_SHAPE[0] = data.shape
    n = data.size
    nbytes = data.nbytes
    ceilings = {}
    for case in args.cases:
        c = codec_ceiling(data, chunk, case, args.repeat)
        if c:
            ceilings[case] = c
            print(f"codec alone, {case}: " + ", ".join(f"{k} {v:.0f}" for k, v in c.items()),
                  flush=True)

    samples: dict[str, dict[str, list[dict]]] = {
        c: {lib.name: [] for lib in libs} for c in args.cases
    }
    resident_seen = []
    failed = []
    try:
        # Repeats are the outer loop, and the library order rotates on each
        # repeat, so drift in machine load and the cost of whatever ran just
        # before (page-cache churn from deleting the previous output) spread
        # over every library instead of penalising one position.
        # One small untimed pass first, so first-call costs (lazy imports,
        # plugin loading, code paging in) land in no library's figures.
        # One full-size raw write and read as well: the first use of a
        # gigabyte of page cache after boot is much slower on some VMs.
        measure_once(numpy_lib(), "contiguous", data, chunk, workdir, args.cache)
        warm = data[: 8 * chunk_shape(data, chunk)[0]]
        for case in args.cases:
            for lib in libs:
                try:
                    measure_once(lib, case, warm, chunk, workdir, args.cache)
                except Exception:
                    pass  # reported by the timed pass below
        for rep in range(args.repeat):
            order = libs[rep % len(libs):] + libs[:rep % len(libs)]
            for case in args.cases:
                for lib in order:
                    label = f"[{rep + 1}/{args.repeat}] {case:10s} {lib.name:6s}"
                    print(label, end=" ", flush=True)
                    try:
                        s = measure_once(lib, case, data, chunk, workdir, args.cache)
                    except Exception as exc:
                        print(f"FAILED: {type(exc).__name__}: {exc}", flush=True)
                        failed.append({"case": case, "lib": lib.name, "rep": rep,
                                       "error": f"{type(exc).__name__}: {exc}"})
                        continue
                    samples[case][lib.name].append(s)
                    if s["resident_before_read"] is not None:
                        resident_seen.append(s["resident_before_read"] / max(1, s["file_bytes"]))
                    print(f"write {nbytes / s['write_s'] / 1e6:7.0f} MB/s  "
                          f"read {nbytes / s['read_s'] / 1e6:7.0f} MB/s  "
                          f"{'ok' if s['verified'] else 'MISMATCH'}", flush=True)
    finally:
        if args.keep:
            print(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)

    if args.cache == "none":
        cache_state = "warm (no eviction requested)"
    elif not resident_seen:
        cache_state = f"{args.cache} eviction; residency not measurable (no fincore), may be warm"
    elif max(resident_seen) < 0.01:
        cache_state = f"cold ({args.cache}; < 1% of every file resident, checked with fincore)"
    else:
        cache_state = (f"PARTLY WARM ({args.cache}; up to {100 * max(resident_seen):.0f}% "
                       "of a file stayed resident)")

    summary = {
        case: {name: summarise(ss, nbytes) for name, ss in per.items() if ss}
        for case, per in samples.items()
    }
    ratios = arca_ratios(summary)
    aims = check_aims(summary)
    meta = {
        "command": " ".join([os.path.basename(sys.executable)] + sys.argv),
        "size_mib": args.size_mib,
        "data": {"signal": "float64", "table": "compound rows (" + ", ".join(TABLE_DTYPE.names) + ")",
                 "complex": "complex128", "volume": "float32 planes"}[args.data],
        "dtype": str(dtype_of(args.data)),
        "elements": n,
        "chunk_kib": args.chunk_kib,
        "chunk_elements": chunk,
        "shape": list(data.shape),
        "chunk_shape": list(chunk_shape(data, chunk)),
        "ceilings": ceilings,
        "repeat": args.repeat,
        "dir": workdir,
        "cache_mode": args.cache,
        "cache_state": cache_state,
        "memory": memory,
        "load_start": load_start,
        "load_end": load_average(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "mb": "10^6 bytes of uncompressed data",
    }
    print_report(summary, ratios, aims, libs, missing, meta)

    if args.markdown:
        with open(args.markdown, "w") as fh:
            fh.write(markdown_report(summary, ratios, aims, libs, missing, meta, samples))
        print(f"wrote {args.markdown}")
    mismatches = [(c, name) for c, per in summary.items()
                  for name, s in per.items() if not s["verified"]]
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({
                "meta": meta,
                "libraries": {lib.name: {"version": lib.version, "settings": lib.notes}
                              for lib in libs},
                "missing": missing,
                "samples": samples,
                "summary": summary,
                "arca_ratios": ratios,
                "aims": aims,
                "failures": failed,
            }, fh, indent=2)
        print(f"\nwrote {args.json}")
    if mismatches or failed:
        print(f"\nerror: {len(mismatches)} mismatched read(s), {len(failed)} failed run(s)",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
