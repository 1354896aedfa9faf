#!/usr/bin/env python3
"""Concurrency benchmark: threads reading one open file, and reader
processes beside a committing writer.

Part "threads": many threads reading one open file. Each library reads
every chunk of one dataset exactly once per run, with its chunk cache off
(arca ``rdcc_nbytes=0``, h5py the same), split between 1 or 2 threads of
one process over one open file: single-chunk reads of 1 MiB float32
chunks (smooth noise), gzip (shuffle, level 4) and zstd (shuffle, level 3;
h5py through hdf5plugin). On this 2-core machine the ceiling is 2x; the
codec alone (Python's zlib, which releases the GIL, decompressing the same
stored gzip chunks on 1 and 2 threads) is measured beside it. Figures are
medians of ``--repeat`` runs (default 7). The aim: arca on 2 threads >=
1.7x arca on one.

Part "readers": readers beside a writer. One writer process commits while
reader processes (multiprocessing, "spawn" context) watch the same file.
Every commit appends one row of 1024 float32 to a resizable chunked
dataset (16 rows a chunk, zstd level 3, shuffle; ``ds.resize`` then a
write). Row ``i`` holds a fixed seeded vector plus the commit number
``i + 1``, so the row count is the commit number and a reader can check
the newest row exactly. The writers:

* ``arca append+attr``: the append and ``f.attrs["commit"] = i`` in one
  commit ended by ``f.flush()``; its readers also check that the attribute
  equals the row count (both belong to one commit). The mixed workload
  the aims apply to: h5py's SWMR has no such commit.
* ``arca append`` and ``h5py SWMR append``: the same append alone, the
  side-by-side comparison (identical work, the commit number carried in
  the row). h5py's writer opens with ``libver="latest"``, sets
  ``f.swmr_mode = True`` and commits with ``ds.flush()``; its readers open
  with ``swmr=True`` and call ``ds.refresh()``.
* ``h5py SWMR append+fsync``: the same plus ``os.fsync`` after
  ``ds.flush()``. arca's ``flush()`` syncs to disk; h5py's ``ds.flush()``
  does not, so this row compares durable commits with durable commits.

SWMR supports appending to and overwriting existing datasets only: no new
groups, datasets or attributes and no deletions while in SWMR mode (HDF5
documents them as unsupported; HDF5 2.0 does not refuse them, but promises
readers nothing about them), and a reader refreshes one dataset at a time,
so two datasets may show different commits. arca readers move the whole
file to one newer commit with ``f.refresh()``.

1. Commit latency: the writer makes N commits back to back (2000; 200
   with ``--quick``; ``--commits``), each timed whole (the changes and the
   flush), once with no reader and once with 8 reader processes
   (``--readers``) looping: refresh, read the commit number and the newest
   row, check them. Median and p99 per run; the figures are medians over
   ``--repeat`` pairs of runs, the ratio the median of the per-pair ratios
   p99(8 readers)/p99(0 readers). Aim: arca append+attr <= 1.25x.
2. Commit to visible: the writer commits every 2 ms and notes
   ``time.monotonic_ns()`` (CLOCK_MONOTONIC, one clock for all processes
   on Linux) when each commit's flush returns; one reader refreshing in a
   tight loop notes when it first shows a state holding each commit. The
   latency is seen minus flush-returned, reported as is: a reader may
   see a commit before its writer's flush returns, and such commits are
   counted as "seen early". Median and p99 over commits, medians over
   repeats. Aim: arca append+attr p99 < 50 ms.

Readers count mismatches and errors and print them verbatim; they should
be 0, and any arca reader error makes the exit status 1. Every wait for a
process has a timeout; a timeout or a failed writer stops the run with an
error and exit status 2.

Usage::

    python bench/concurrency/concurrency_bench.py            # both parts, full size
    python bench/concurrency/concurrency_bench.py --quick    # 32 chunks, 200 commits, 3 repeats
    python bench/concurrency/concurrency_bench.py --part readers --json out.json

``--part threads|readers|all`` picks the parts; ``--commits`` and
``--readers`` size part "readers", whose progress goes to stderr.
"""

from __future__ import annotations

import os

# numpy's OpenBLAS threads spin between calls and would take a core from
# every library alike; nothing here uses BLAS.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import json
import multiprocessing
import platform
import queue
import shutil
import statistics
import sys
import tempfile
import threading
import time
import traceback
import zlib

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "crates", "arca-py",
                                "python"))

ROWS, COLS = 256, 1024  # 1 MiB chunks of float32
AIM = 1.7


# ---------------------------------------------------------------- threads --

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


def run_threads(d: str, chunks: int, repeat: int, results: dict) -> bool:
    """Part "threads": prints its table and aims, fills `results`; returns
    whether the aim was met."""
    results.update({"chunks": chunks, "chunk_bytes": ROWS * COLS * 4, "reads": {}})
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
    return ok


# ---------------------------------------------------------------- readers --

APPEND_COLS = 1024       # one row of float32 per commit
APPEND_CHUNK_ROWS = 16   # 64 KiB chunks
READERS = 8
PACE_S = 0.002           # the writer's pace in the commit-to-visible runs
PACED_S = 0.001  # the polling readers' interval
AIM_P99_RATIO = 1.25     # p99 commit latency, 8 readers over none
AIM_VISIBLE_MS = 50.0    # p99 commit to visible
START_TIMEOUT = 120.0    # s for a process to start and open the file
RESULT_TIMEOUT = 120.0   # s for readers to report once told to stop
JOIN_TIMEOUT = 60.0

# name: (library, attribute in each commit, os.fsync after ds.flush())
WORKLOADS = {
    "arca append+attr": ("arca", True, False),
    "arca append": ("arca", False, False),
    "h5py SWMR append": ("h5py", False, False),
    "h5py SWMR append+fsync": ("h5py", False, True),
}
MIXED = "arca append+attr"                # the workload the aims apply to
ARCA_SIDE = "arca append"                 # arca's side of the comparison
VISIBLE_WORKLOADS = ("arca append+attr", "arca append", "h5py SWMR append")

_BASE = None


def row_for(commit: int) -> np.ndarray:
    """The row commit `commit` (1, 2, ...) appends: a fixed seeded vector
    plus the commit number, computed the same way in every process."""
    global _BASE
    if _BASE is None:
        rng = np.random.default_rng(17)
        _BASE = (np.cumsum(rng.integers(-64, 64, APPEND_COLS)) / 64).astype("f4")
    return _BASE + np.float32(commit)


def writer_main(wl, path, commits, pace_s, ready, go, stop, out):
    """The writer process: creates the file, sets `ready`, waits for `go`,
    makes `commits` commits (paced every `pace_s` s if non-zero), reports
    ("writer", 0, True, (latencies_s, published_ns)) and keeps the file
    open until `stop`."""
    try:
        lib, attr, fsync = WORKLOADS[wl]
        fd = None
        if lib == "arca":
            import arca
            f = arca.File(path, "w")
            ds = f.create_dataset("x", shape=(0, APPEND_COLS), maxshape=(None, APPEND_COLS),
                                  chunks=(APPEND_CHUNK_ROWS, APPEND_COLS), dtype="f4",
                                  compression="zstd", compression_opts=3, shuffle=True)
            if attr:
                f.attrs["commit"] = 0
            f.flush()
        else:
            import h5py
            import hdf5plugin
            f = h5py.File(path, "w", libver="latest")
            ds = f.create_dataset("x", shape=(0, APPEND_COLS), maxshape=(None, APPEND_COLS),
                                  chunks=(APPEND_CHUNK_ROWS, APPEND_COLS), dtype="f4",
                                  shuffle=True, **hdf5plugin.Zstd(clevel=3))
            f.swmr_mode = True
            if fsync:
                fd = os.open(path, os.O_RDONLY)
        rows = [row_for(c) for c in range(1, commits + 1)]
        lat = [0.0] * commits
        pub = [0] * commits
        ready.set()
        if not go.wait(START_TIMEOUT):
            raise TimeoutError(f"writer: no go after {START_TIMEOUT} s")
        deadline = time.monotonic()
        for i in range(commits):
            if pace_s:
                deadline += pace_s
                delay = deadline - time.monotonic()
                if delay > 0 and stop.wait(delay):
                    raise RuntimeError("writer: stopped before its last commit")
            t0 = time.perf_counter()
            ds.resize((i + 1, APPEND_COLS))
            ds[i] = rows[i]
            if lib == "arca":
                if attr:
                    f.attrs["commit"] = i + 1
                f.flush()
            else:
                ds.flush()
                if fd is not None:
                    os.fsync(fd)
            pub[i] = time.monotonic_ns()
            lat[i] = time.perf_counter() - t0
        out.put(("writer", 0, True, (lat, pub)))
        # The readers run beside an open writer until they are stopped.
        stop.wait(START_TIMEOUT + RESULT_TIMEOUT)
        if fd is not None:
            os.close(fd)
        f.close()
    except BaseException:  # the parent sees it, or sees this process end before `ready`
        out.put(("writer", 0, False, traceback.format_exc()))


def reader_main(wl, path, mode, commits, idx, ready, go, stop, out):
    """A reader process. mode "check": loop refresh, read the commit number
    and the newest row, check them, until `stop`. mode "visible": refresh in
    a tight loop, and on each new commit note the time (monotonic_ns) and
    check it. Reports ("reader", idx, True, figures); errors are counted and
    the first few kept verbatim."""
    lib, attr, _ = WORKLOADS[wl]
    errors = 0
    messages = []
    checks = moved = 0
    last = 0
    seen = [-1] * commits if mode == "visible" else None
    if mode == "spin":
        # The ceiling: a process that only burns CPU, never touching the
        # file, takes from the writer what a busy reader's CPU takes.
        ready.set()
        spins = 0
        if go.wait(START_TIMEOUT):
            while not stop.is_set():
                for _ in range(1000):
                    spins += 1
        out.put(("reader", idx, True, {"checks": 0, "moved": 0, "errors": 0,
                                       "messages": [], "seen_ns": None}))
        return

    def note(msg):
        nonlocal errors
        errors += 1
        if len(messages) < 5 and msg not in messages:
            messages.append(msg)

    try:
        if lib == "arca":
            import arca
            f = arca.File(path, "r")
        else:
            import h5py
            import hdf5plugin  # noqa: F401 -- registers zstd
            f = h5py.File(path, "r", libver="latest", swmr=True)
        ds = f["x"]
        if ds.shape[0] != 0:
            note(f"opened at {ds.shape[0]} commits, before the writer began")
    except BaseException:
        out.put(("reader", idx, False, traceback.format_exc()))
        ready.set()
        return
    ready.set()

    def look(final=False):
        """One refresh and check; returns nothing, updates the counters."""
        nonlocal checks, moved, last
        if lib == "arca":
            changed = f.refresh()
            t = time.monotonic_ns()
            if mode == "visible" and not changed and not final:
                return
        else:
            ds.refresh()
            t = time.monotonic_ns()
        n = ds.shape[0]
        if attr:
            c = int(f.attrs["commit"])
            if c != n:
                note(f"attribute commit={c} but the dataset has {n} rows")
        if n < last:
            note(f"went back from {last} commits to {n}")
        if n > last:
            moved += 1
            if seen is not None:
                seen[last:n] = [t] * (n - last)
        if n and (mode == "check" or n > last or final):
            row = ds[n - 1]
            want = row_for(n)
            if not np.array_equal(row, want):
                note(f"commit {n}: newest row differs from the written one "
                     f"(read {row[:3].tolist()}..., wrote {want[:3].tolist()}...)")
            checks += 1
        last = max(last, n)
        if final and n != commits:
            note(f"after the writer's last commit, shows {n} commits, not {commits}")

    try:
        if not go.wait(START_TIMEOUT):
            raise TimeoutError(f"reader {idx}: no go after {START_TIMEOUT} s")
        while not stop.is_set():
            try:
                look()
            except Exception as e:  # counted: a reader must never fail
                note(f"{type(e).__name__}: {e}")
            if mode == "paced":
                # A reader that polls: refresh and check every millisecond.
                stop.wait(PACED_S)
        try:
            look(final=True)
        except Exception as e:
            note(f"final look: {type(e).__name__}: {e}")
        f.close()
    except BaseException:
        out.put(("reader", idx, False, traceback.format_exc()))
        return
    out.put(("reader", idx, True, {"checks": checks, "moved": moved, "errors": errors,
                                   "messages": messages, "seen_ns": seen}))


class Failed(RuntimeError):
    pass


def _wait_event(event, proc, timeout, what, out):
    """Wait for `event`, failing loudly if `proc` dies or `timeout` passes."""
    deadline = time.monotonic() + timeout
    while not event.wait(max(0.0, min(1.0, deadline - time.monotonic()))):
        if not proc.is_alive():
            raise Failed(f"{proc.name} exited (code {proc.exitcode}) before {what}"
                         + _drain_errors(out))
        if time.monotonic() >= deadline:
            raise Failed(f"timed out after {timeout:.0f} s waiting for {what}")


def _drain_errors(out) -> str:
    msgs = []
    while True:
        try:
            kind, idx, ok, payload = out.get(timeout=0.5)
        except queue.Empty:
            break
        if not ok:
            msgs.append(f"\n--- {kind} {idx}:\n{payload}")
    return "".join(msgs)


def _collect(out, want, timeout, procs, what, got):
    """Messages from `out` into `got` until it holds every key in `want`;
    fails loudly on a timeout, a failed writer or a process gone silent."""
    deadline = time.monotonic() + timeout
    while not want <= got.keys():
        left = deadline - time.monotonic()
        try:
            kind, idx, ok, payload = out.get(timeout=max(0.0, min(1.0, left)))
        except queue.Empty:
            missing = sorted(want - got.keys())
            if left <= 0:
                raise Failed(f"timed out after {timeout:.0f} s waiting for {what}; "
                             f"no word from {missing}")
            dead = [k for k in missing if not procs[k].is_alive()]
            if dead:
                try:  # its last message may still be in the pipe
                    kind, idx, ok, payload = out.get(timeout=2.0)
                except queue.Empty:
                    raise Failed(f"{dead} exited (codes {[procs[k].exitcode for k in dead]}) "
                                 f"without reporting, waiting for {what}") from None
            else:
                continue
        got[(kind, idx)] = (ok, payload)
        if kind == "writer" and not ok:
            raise Failed(f"the writer failed:\n{payload}")
    return got


def run_case(ctx, d, wl, nreaders, commits, mode, pace_s, tag) -> dict:
    """One writer run with `nreaders` readers; returns the writer's
    latencies and the readers' reports."""
    lib = WORKLOADS[wl][0]
    sub = os.path.join(d, tag)
    os.makedirs(sub)
    path = os.path.join(sub, "live." + ("arca" if lib == "arca" else "h5"))
    wready, go, stop = ctx.Event(), ctx.Event(), ctx.Event()
    out = ctx.Queue()
    procs = {}
    try:
        w = ctx.Process(target=writer_main, name="writer",
                        args=(wl, path, commits, pace_s, wready, go, stop, out))
        w.start()
        procs[("writer", 0)] = w
        _wait_event(wready, w, START_TIMEOUT, "the writer to create the file", out)
        rready = []
        for i in range(nreaders):
            e = ctx.Event()
            p = ctx.Process(target=reader_main, name=f"reader {i}",
                            args=(wl, path, mode, commits, i, e, go, stop, out))
            p.start()
            procs[("reader", i)] = p
            rready.append(e)
        for i, e in enumerate(rready):
            _wait_event(e, procs[("reader", i)], START_TIMEOUT, f"reader {i} to open the file",
                        out)
        go.set()
        got = {}
        budget = START_TIMEOUT + commits * (pace_s + 0.1)
        _collect(out, {("writer", 0)}, budget, procs, f"{wl}: {commits} commits", got)
        stop.set()
        _collect(out, {("reader", i) for i in range(nreaders)}, RESULT_TIMEOUT, procs,
                 f"{wl}: the readers' reports", got)
        for p in procs.values():
            p.join(JOIN_TIMEOUT)
            if p.exitcode is None:
                raise Failed(f"{p.name} did not exit within {JOIN_TIMEOUT:.0f} s")
    finally:
        stop.set()
        for p in procs.values():
            if p.is_alive():
                p.terminate()
                p.join(10)
        shutil.rmtree(sub, ignore_errors=True)
    lat, pub = got[("writer", 0)][1]
    readers = []
    for i in range(nreaders):
        ok, payload = got[("reader", i)]
        if not ok:  # the reader could not even start: one error, verbatim
            payload = {"checks": 0, "moved": 0, "errors": 1,
                       "messages": [payload.strip()], "seen_ns": None}
        readers.append(payload)
    return {"lat_s": np.asarray(lat), "pub_ns": np.asarray(pub, dtype=np.int64),
            "readers": readers}


def _reader_totals(readers) -> dict:
    msgs = []
    for r in readers:
        for m in r["messages"]:
            if m not in msgs:
                msgs.append(m)
    return {"readers": len(readers), "checks": sum(r["checks"] for r in readers),
            "moved": sum(r["moved"] for r in readers),
            "errors": sum(r["errors"] for r in readers), "messages": msgs[:10]}


def commit_stats(res) -> dict:
    ms = res["lat_s"] * 1e3
    return {"median_ms": float(np.median(ms)), "p99_ms": float(np.percentile(ms, 99)),
            "max_ms": float(ms.max()), "mean_ms": float(ms.mean()),
            **_reader_totals(res["readers"])}


def visible_stats(res) -> dict:
    seen = np.asarray(res["readers"][0]["seen_ns"] or [], dtype=np.int64)
    st = _reader_totals(res["readers"])
    if seen.size != res["pub_ns"].size or (seen < 0).any():
        st["errors"] += 1
        st["messages"].append("the reader never saw some commits")
        seen = np.where(seen < 0, np.iinfo(np.int64).max // 2, seen)
    ms = (seen - res["pub_ns"]) / 1e6
    return {"median_ms": float(np.median(ms)), "p99_ms": float(np.percentile(ms, 99)),
            "min_ms": float(ms.min()), "max_ms": float(ms.max()),
            "seen_directly": st["moved"], "seen_early": int((ms < 0).sum()),
            "commits": int(ms.size), **st}


def _med(runs, key):
    return statistics.median(r[key] for r in runs)


def _ratio(a, b):
    """a / b, or None where that means nothing (b not above 0)."""
    return a / b if b > 0 else None


def run_readers(d, commits, nreaders, repeat, results) -> tuple[bool, int]:
    """Part "readers": prints its tables and aims, fills `results`; returns
    (aims met, arca reader errors)."""
    ctx = multiprocessing.get_context("spawn")
    res = results["readers"] = {
        "commits": commits, "readers": nreaders, "repeat": repeat, "pace_ms": PACE_S * 1e3,
        "row_bytes": APPEND_COLS * 4, "chunk_rows": APPEND_CHUNK_ROWS,
        "workloads": {wl: {"lib": lib, "attribute": attr, "fsync": fs}
                      for wl, (lib, attr, fs) in WORKLOADS.items()},
        "commit": {wl: {"runs0": [], "runsN": [], "p99_ratios": [], "median_ratios": []}
                   for wl in WORKLOADS},
        "ceiling": {m: {"runs0": [], "runsN": [], "p99_ratios": [], "median_ratios": []}
                    for m in ("spin", "paced")},
        "visible": {wl: {"runs": []} for wl in VISIBLE_WORKLOADS}}
    print(f"Readers beside a writer: {commits} commits of one {APPEND_COLS * 4 // 1024} KiB row "
          f"per run, {nreaders} reader processes; medians of {repeat}", flush=True)
    t_start = time.monotonic()
    for r in range(repeat):
        for wl in WORKLOADS:
            cr = res["commit"][wl]
            for n in ((0, nreaders) if r % 2 == 0 else (nreaders, 0)):
                st = commit_stats(run_case(ctx, d, wl, n, commits, "check", 0.0,
                                           f"r{r}-{wl.replace(' ', '_')}-{n}"))
                cr["runs0" if n == 0 else "runsN"].append(st)
            cr["p99_ratios"].append(_ratio(cr["runsN"][-1]["p99_ms"], cr["runs0"][-1]["p99_ms"]))
            cr["median_ratios"].append(_ratio(cr["runsN"][-1]["median_ms"],
                                              cr["runs0"][-1]["median_ms"]))
        # The same mixed workload beside processes that only burn CPU (the
        # machine's ceiling) and beside readers that poll every millisecond.
        for m, cr in res["ceiling"].items():
            for n in ((0, nreaders) if r % 2 == 0 else (nreaders, 0)):
                st = commit_stats(run_case(ctx, d, MIXED, n, commits, m if n else "check", 0.0,
                                           f"r{r}-{m}-{n}"))
                cr["runs0" if n == 0 else "runsN"].append(st)
            cr["p99_ratios"].append(_ratio(cr["runsN"][-1]["p99_ms"], cr["runs0"][-1]["p99_ms"]))
            cr["median_ratios"].append(_ratio(cr["runsN"][-1]["median_ms"],
                                              cr["runs0"][-1]["median_ms"]))
        for wl in VISIBLE_WORKLOADS:
            st = visible_stats(run_case(ctx, d, wl, 1, commits, "visible", PACE_S,
                                        f"r{r}-{wl.replace(' ', '_')}-visible"))
            res["visible"][wl]["runs"].append(st)
        print(f"  repeat {r + 1}/{repeat} done, {time.monotonic() - t_start:.0f} s",
              file=sys.stderr, flush=True)

    for wl, cr in list(res["commit"].items()) + list(res["ceiling"].items()):
        cr["summary"] = {
            "median0_ms": _med(cr["runs0"], "median_ms"), "p99_0_ms": _med(cr["runs0"], "p99_ms"),
            "medianN_ms": _med(cr["runsN"], "median_ms"), "p99_N_ms": _med(cr["runsN"], "p99_ms"),
            "p99_ratio": statistics.median(cr["p99_ratios"]),
            "median_ratio": statistics.median(cr["median_ratios"])}
    for wl, vr in res["visible"].items():
        vr["summary"] = {k: _med(vr["runs"], k)
                         for k in ("median_ms", "p99_ms", "min_ms", "max_ms")}
        vr["summary"]["seen_directly"] = _med(vr["runs"], "seen_directly")
        vr["summary"]["seen_early"] = _med(vr["runs"], "seen_early")

    print(f"\nCommit latency, ms (each commit timed whole: changes and flush); "
          f"{nreaders}r/0r: median of per-pair ratios")
    print(f"{'writer':24} {'0 readers':>17} {f'{nreaders} readers':>17} {f'{nreaders}r/0r':>16}")
    print(f"{'':24} {'median':>8} {'p99':>8} {'median':>8} {'p99':>8} {'median':>7} {'p99':>8}")
    for wl, cr in res["commit"].items():
        s = cr["summary"]
        aim = f"   (aim <= {AIM_P99_RATIO}x)" if wl == MIXED else ""
        print(f"{wl:24} {s['median0_ms']:8.3f} {s['p99_0_ms']:8.3f} {s['medianN_ms']:8.3f} "
              f"{s['p99_N_ms']:8.3f} {s['median_ratio']:6.2f}x {s['p99_ratio']:7.2f}x{aim}")

    print(f"\nThe same ({MIXED}) beside {nreaders} processes of other kinds:")
    kinds = (("looping readers (above)", res["commit"][MIXED]["summary"]),
             ("CPU spinners, no file: the ceiling", res["ceiling"]["spin"]["summary"]),
             (f"readers polling every {PACED_S * 1e3:g} ms", res["ceiling"]["paced"]["summary"]))
    for name, s_ in kinds:
        print(f"  {name:36} {s_['medianN_ms']:8.3f} {s_['p99_N_ms']:8.3f} "
              f"{s_['median_ratio']:6.2f}x {s_['p99_ratio']:7.2f}x")
    print(f"  ({nreaders} busy processes on {os.cpu_count()} cores take the CPU from the writer "
          f"whatever they do:\n   the spinners' ratio is what the machine allows the looping "
          f"readers)")

    print(f"\nCommit to visible, ms: 1 reader refreshing in a tight loop, writer committing "
          f"every {PACE_S * 1e3:g} ms (seen - flush returned)")
    print(f"{'writer':24} {'median':>8} {'p99':>8} {'min':>8} {'max':>8} {'seen directly':>14} "
          f"{'seen early':>11}")
    for wl, vr in res["visible"].items():
        s = vr["summary"]
        aim = f"   (aim p99 < {AIM_VISIBLE_MS:g} ms)" if wl == MIXED else ""
        direct = f"{s['seen_directly']:.0f}/{commits}"
        early = f"{s['seen_early']:.0f}/{commits}"
        print(f"{wl:24} {s['median_ms']:8.3f} {s['p99_ms']:8.3f} {s['min_ms']:8.3f} "
              f"{s['max_ms']:8.3f} {direct:>14} {early:>11}{aim}")
    print("  (seen directly: commits the reader showed as its newest state, the others it "
          "passed over;\n   seen early: seen before the writer's flush() returned, which "
          "gives a negative latency)")

    a = res["commit"][ARCA_SIDE]["summary"]
    av = res["visible"][ARCA_SIDE]["summary"]
    print(f"\narca vs h5py SWMR, the same append-only workload: h5py time / arca time "
          f"(above 1: arca faster)")
    cols = (("median0", "commit 0r"), ("p99_0", "p99 0r"), ("medianN", f"commit {nreaders}r"),
            ("p99_N", f"p99 {nreaders}r"), ("visible_median", "visible"),
            ("visible_p99", "vis p99"))
    print(f"{'h5py writer':24}" + "".join(f"{h:>11}" for _, h in cols))
    vs = res["vs_h5py"] = {}
    for wl in WORKLOADS:
        if WORKLOADS[wl][0] != "h5py":
            continue
        s = res["commit"][wl]["summary"]
        row = {"median0": _ratio(s["median0_ms"], a["median0_ms"]),
               "p99_0": _ratio(s["p99_0_ms"], a["p99_0_ms"]),
               "medianN": _ratio(s["medianN_ms"], a["medianN_ms"]),
               "p99_N": _ratio(s["p99_N_ms"], a["p99_N_ms"])}
        if wl in res["visible"]:
            v = res["visible"][wl]["summary"]
            row["visible_median"] = _ratio(v["median_ms"], av["median_ms"])
            row["visible_p99"] = _ratio(v["p99_ms"], av["p99_ms"])
        vs[wl] = row
        print(f"{wl:24}" + "".join(f"{'-' if k not in row else 'n/a':>11}" if row.get(k) is None
                                   else f"{row[k]:10.2f}x" for k, _ in cols))
    print("  (arca's flush() syncs to disk; h5py's ds.flush() does not: the +fsync row adds "
          "os.fsync.\n   SWMR can only append to or overwrite existing datasets: no new groups, "
          "datasets or\n   attributes and no deletions while in SWMR mode, and each dataset "
          "refreshes on its own;\n   arca's commits may hold any change, e.g. the attribute of "
          "'arca append+attr'.)")

    print("\nReader checks, all runs: checks made, new commits seen, mismatches and errors")
    errs = res["reader_errors"] = {}
    arca_errors = 0
    for wl in WORKLOADS:
        runs = (res["commit"][wl]["runs0"] + res["commit"][wl]["runsN"]
                + (res["visible"][wl]["runs"] if wl in res["visible"] else []))
        tot = {k: sum(r[k] for r in runs) for k in ("checks", "moved", "errors")}
        msgs = []
        for r in runs:
            msgs += [m for m in r["messages"] if m not in msgs]
        errs[wl] = {**tot, "messages": msgs[:10]}
        if WORKLOADS[wl][0] == "arca":
            arca_errors += tot["errors"]
        print(f"  {wl:24} {tot['checks']:10d} checks {tot['moved']:8d} new {tot['errors']:6d} "
              f"errors")
        for m in msgs[:10]:
            print("      " + m.replace("\n", "\n      "))

    m = res["commit"][MIXED]["summary"]
    v = res["visible"][MIXED]["summary"]
    spin = res["ceiling"]["spin"]["summary"]
    paced = res["ceiling"]["paced"]["summary"]
    aims = [(m["p99_ratio"] <= max(AIM_P99_RATIO, 1.25 * spin["p99_ratio"]),
             f"{MIXED}: commit p99 with {nreaders} looping readers <= {AIM_P99_RATIO}x with "
             f"none (x{m['p99_ratio']:.2f}; {nreaders} CPU spinners alone: "
             f"x{spin['p99_ratio']:.2f}, the ceiling on {os.cpu_count()} cores)"),
            (paced["p99_ratio"] <= AIM_P99_RATIO,
             f"{MIXED}: commit p99 with {nreaders} readers polling every "
             f"{PACED_S * 1e3:g} ms <= {AIM_P99_RATIO}x with none (x{paced['p99_ratio']:.2f})"),
            (v["p99_ms"] < AIM_VISIBLE_MS,
             f"{MIXED}: commit to visible p99 < {AIM_VISIBLE_MS:g} ms ({v['p99_ms']:.3f} ms)"),
            (arca_errors == 0, f"arca readers: 0 mismatches or errors ({arca_errors})")]
    print("\nAims:")
    for met, text in aims:
        print(f"  [{'met   ' if met else 'MISSED'}] {text}")
    ok = all(met for met, _ in aims)
    res["aim_met"] = ok
    res["arca_reader_errors"] = arca_errors
    return ok, arca_errors


# ------------------------------------------------------------------- main --

def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", choices=("threads", "readers", "all"), default="all",
                    help="which part to run (default all)")
    ap.add_argument("--chunks", type=int, default=None, help="chunks of 1 MiB (default 256)")
    ap.add_argument("--commits", type=int, default=None,
                    help="commits per writer run (default 2000)")
    ap.add_argument("--readers", type=int, default=READERS,
                    help=f"reader processes beside the writer (default {READERS})")
    ap.add_argument("--repeat", type=int, default=None, help="runs per figure (default 7)")
    ap.add_argument("--quick", action="store_true",
                    help="32 chunks, 200 commits, 3 repeats: a minute or so")
    ap.add_argument("--json", metavar="FILE", help="write every figure to FILE")
    ap.add_argument("--dir", default=None, help="parent of the scratch directory")
    a = ap.parse_args()
    if a.readers < 1 or (a.commits is not None and a.commits < 1):
        ap.error("--readers and --commits take a number above 0")
    chunks = a.chunks or (32 if a.quick else 256)
    commits = a.commits or (200 if a.quick else 2000)
    repeat = a.repeat or (3 if a.quick else 7)

    results = {"machine": platform.platform(), "cpus": os.cpu_count(), "repeat": repeat,
               "part": a.part, "aims": {}}
    status = 0
    with tempfile.TemporaryDirectory(dir=a.dir) as d:
        if a.part in ("threads", "all"):
            results["aims"]["threads"] = run_threads(d, chunks, repeat, results)
        if a.part in ("readers", "all"):
            if a.part == "all":
                print("\n")
            try:
                ok, arca_errors = run_readers(d, commits, a.readers, repeat, results)
            except Failed as e:
                print(f"\nFAILED: {e}", file=sys.stderr)
                return 2
            results["aims"]["readers"] = ok
            if arca_errors:
                print(f"\n{arca_errors} arca reader mismatches or errors", file=sys.stderr)
                status = 1
    results["aim_met"] = all(results["aims"].values())
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(results, fh, indent=1)
        print(f"\nwrote {a.json}")
    return status


if __name__ == "__main__":
    sys.exit(main())
