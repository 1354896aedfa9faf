#!/usr/bin/env python3
"""Many-small-objects benchmark: arca against h5py, in one run.

Rows (object kinds), each at N = 10^3, 10^4, 10^5 and 10^6 objects per file:
``group`` empty groups; ``scalar`` scalar float64 datasets; ``ds4``
4-element float64 datasets; ``ds4+a1`` the same with 1 integer attribute;
``ds4+a10`` with 10 attributes (int64, int32, uint16, float64, float32, a
short string); ``ds100`` 100-element float64 datasets.  Objects sit in groups
of 100 under the root (``g0000/d00`` ...), as per-event data would; both
libraries get the same names and values and default file settings
(``arca.File(p, "w")``, ``h5py.File(p, "w")``).  Per row, N and library:

* bytes/object: file size after close divided by N;
* write: from creating the file to the end of an ``os.fsync`` of the file and
  its directory after ``close()`` returned (arca's close syncs already; the
  fsync keeps h5py from being credited for not syncing, as in bench/io);
  the time to ``close()`` returning is in the JSON as ``close_s``;
* walk: open, ``visititems`` everything, close; each object's attributes are
  read (names and values), each dataset's ``shape`` and ``dtype``; the
  counts seen are checked against what was written;
* open: ``File(p, "r")`` + ``close()`` of each row's largest file, median of
  ``--opens`` tries per repeat;
* edit: ``File(p, "r+")``, a first write (a new group with one attribute),
  ``close()`` (which commits and syncs), on the same file, as many tries;
  what an r+ session costs before its first write lands (arca checks there
  that the space it hands out is free);
* overwrite: after an untimed session adds a 2 MiB contiguous dataset
  (``big``, 262,144 float64), ``File(p, "r+")``, ten of its elements
  overwritten, ``close()``, as many tries: arca does not trust the address
  an earlier session wrote, so this is where it moves the data (or, for
  an extent past an eighth of the file, walks the file) first;
* CPU time of the write (to ``close()`` returning) and of the walk, in the
  JSON (``write_cpu_s``, ``walk_cpu_s``): steadier than wall time on a busy
  machine;
* peak RSS: ``ru_maxrss`` of the child process that did the work; in the
  JSON also per phase (``write_peak_rss_mib``: creating the file to close;
  ``walk_peak_rss_mib``: the walk, its peak counted from the RSS it began
  with), where Linux lets the peak be reset (``/proc/self/clear_refs``);
* layout: how the first dataset is stored (compact, contiguous, chunked).

Each (repeat, row, N, library) runs in a fresh child process (this script
with ``--child``) after an untimed warm-up with 100 objects.  The file's
pages are evicted (``posix_fadvise``) before the walk and each open
(``--cache none``: warm).  Repeats (``--repeat``, default 3, 1 with
``--quick``) are the outer loop, the library order alternating; figures are
medians.  Aims: bytes/object <= h5py's in every row; write and walk >= 3x
faster than h5py.

Usage::

    python bench/objects/objects_bench.py              # up to 10^6, 3 repeats: long
    python bench/objects/objects_bench.py --quick      # 10^3 and 10^4, 1 repeat: ~30 s
    python bench/objects/objects_bench.py --counts 1000,100000 --rows ds4 --json out.json
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROWS = {"group": "empty groups", "scalar": "scalar float64 datasets",
        "ds4": "4-element float64 datasets", "ds4+a1": "4 float64s, 1 int attribute",
        "ds4+a10": "4 float64s, 10 mixed attributes", "ds100": "100-element float64 datasets"}
LIBS = ("arca", "h5py")
EXT = {"arca": ".arca", "h5py": ".h5"}
PER_GROUP = 100
BIG_ELEMS = 1 << 18
AIM_SPEEDUP = 3.0


# -- child: one measurement in a fresh process ----------------------------------
def attrs_for(row, i):
    """The attributes of object ``i`` (a global index), the same for both libraries."""
    if row == "ds4+a1":
        return {"event": i}
    if row == "ds4+a10":
        return {"run": 7, "event": i, "channel": np.int32(i % 64), "flags": np.uint16(3),
                "gain": 1.25, "offset": -0.5 + i * 1e-3, "t0": i * 25e-9,
                "weight": np.float32(0.75), "quality": np.float32(0.5), "label": "ok"}
    return {}


def write_file(lib, path, row, n):
    """Write the row's N objects; return the number of parent groups."""
    data = np.linspace(0.0, 1.0, 100 if row == "ds100" else 4)
    ngroups = (n + PER_GROUP - 1) // PER_GROUP
    width = max(4, len(str(ngroups - 1)))
    f = lib.File(path, "w")
    i = 0
    for p in range(ngroups):
        g = f.create_group(f"g{p:0{width}d}")
        for j in range(min(PER_GROUP, n - i)):
            if row == "group":
                g.create_group(f"d{j:02d}")
            elif row == "scalar":
                g.create_dataset(f"d{j:02d}", data=np.float64(i))
            else:
                ds = g.create_dataset(f"d{j:02d}", data=data)
                for k, v in attrs_for(row, i).items():
                    ds.attrs[k] = v
            i += 1
    f.close()
    return ngroups


def walk_file(lib, path):
    """Visit everything; return [objects, datasets, attributes] seen."""
    seen = [0, 0, 0]

    def visit(name, obj):
        seen[0] += 1
        if isinstance(obj, lib.Dataset):
            seen[1] += 1
            obj.shape, obj.dtype  # noqa: B018 -- the walk's work
        for _k, _v in obj.attrs.items():
            seen[2] += 1

    f = lib.File(path, "r")
    f.visititems(visit)
    f.close()
    return seen


def layout_of(lib, path):
    with lib.File(path, "r") as f:
        obj = f[next(iter(f))]["d00"]
        if not isinstance(obj, lib.Dataset):
            return None
        if lib.__name__ == "arca":
            return getattr(obj, "layout", "n/a")  # before compact storage: no property
        return {0: "compact", 1: "contiguous", 2: "chunked"}.get(
            obj.id.get_create_plist().get_layout())


def on_fd(path, fn):
    fd = os.open(path, os.O_RDONLY)
    try:
        fn(fd)
    finally:
        os.close(fd)


def phase_peak_mib():
    """The peak RSS since the last ``reset_peak`` (VmHWM), or None off Linux."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def reset_peak():
    """Start a new phase's peak: the peak RSS drops to the present RSS."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def evict(path, cache):
    if cache != "none":
        on_fd(path, lambda fd: os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED))


def child(job):
    lib = __import__(job["lib"])
    row, n, path, cache = job["row"], job["n"], job["path"], job["cache"]
    # Warm-up: first-call costs (library init, code paging in) stay untimed.
    write_file(lib, path + ".warm", row, min(n, PER_GROUP))
    walk_file(lib, path + ".warm")
    os.remove(path + ".warm")
    gc.collect()
    rss_base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    resettable = reset_peak()

    t0, c0 = time.perf_counter(), time.process_time()
    ngroups = write_file(lib, path, row, n)
    t_close = time.perf_counter() - t0
    c_write = time.process_time() - c0
    write_peak = phase_peak_mib() if resettable else None
    on_fd(path, os.fsync)
    on_fd(os.path.dirname(path), os.fsync)
    t_write = time.perf_counter() - t0
    size, base = os.stat(path).st_size, os.path.basename(path)
    extra = [x for x in os.listdir(os.path.dirname(path)) if x.startswith(base) and x != base]
    gc.collect()

    evict(path, cache)
    resettable = resettable and reset_peak()
    t0, c0 = time.perf_counter(), time.process_time()
    seen = walk_file(lib, path)
    t_walk = time.perf_counter() - t0
    c_walk = time.process_time() - c0
    walk_peak = phase_peak_mib() if resettable else None

    opens = []
    for _ in range(job["opens"]):
        evict(path, cache)
        t0 = time.perf_counter()
        lib.File(path, "r").close()
        opens.append(time.perf_counter() - t0)
    layout = layout_of(lib, path)
    edits = []
    for k in range(job["opens"]):
        evict(path, cache)
        t0 = time.perf_counter()
        f = lib.File(path, "r+")
        f.create_group(f"edit{k}").attrs["k"] = k
        f.close()
        edits.append(time.perf_counter() - t0)
    overwrites = []
    if job["opens"]:
        f = lib.File(path, "r+")
        f.create_dataset("big", data=np.zeros(BIG_ELEMS))
        f.close()
    for k in range(job["opens"]):
        evict(path, cache)
        t0 = time.perf_counter()
        f = lib.File(path, "r+")
        f["big"][0:10] = k + 1
        f.close()
        overwrites.append(time.perf_counter() - t0)

    want = [n + ngroups, 0 if row == "group" else n, n * len(attrs_for(row, 0))]
    return {"write_s": t_write, "close_s": t_close, "walk_s": t_walk, "open_s": opens,
            "write_cpu_s": c_write, "walk_cpu_s": c_walk,
            "edit_s": edits, "overwrite_s": overwrites,
            "file_bytes": size, "other_files": sorted(extra),
            "seen": seen, "verified": seen == want, "layout": layout,
            "rss_base_mib": rss_base / 1024,
            "write_peak_rss_mib": write_peak, "walk_peak_rss_mib": walk_peak,
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


# -- parent: orchestration and report ---------------------------------------------
def run_child(job, keep):
    res = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", json.dumps(job)],
                         capture_output=True, text=True)
    if os.path.exists(job["path"]) and not keep:
        os.remove(job["path"])
    if res.returncode != 0:
        lines = (res.stderr or res.stdout).strip().splitlines() or [f"exit {res.returncode}"]
        raise RuntimeError(lines[-1])
    return json.loads(res.stdout.strip().splitlines()[-1])


def median(xs):
    return statistics.median(xs) if xs else None


def key(row, n, lib):
    return f"{row}/{n}/{lib}"


def summarise(samples):
    out = {}
    for k, ss in samples.items():
        if not ss:
            continue
        m = {x: median([s[x] for s in ss]) for x in
             ("write_s", "close_s", "walk_s", "file_bytes", "peak_rss_mib", "rss_base_mib")}
        for x in ("write_peak_rss_mib", "walk_peak_rss_mib"):
            m[x] = median([s[x] for s in ss if s.get(x) is not None])
        n, opens = ss[0]["n"], [t for s in ss for t in s["open_s"]]
        edits = [t for s in ss for t in s.get("edit_s", [])]
        overwrites = [t for s in ss for t in s.get("overwrite_s", [])]
        out[k] = {"n": n, "bytes_per_object": m.pop("file_bytes") / n, **m,
                  "write_obj_s": n / m["write_s"], "walk_obj_s": n / m["walk_s"],
                  "open_ms": median(opens) * 1e3 if opens else None,
                  "edit_ms": median(edits) * 1e3 if edits else None,
                  "overwrite_ms": median(overwrites) * 1e3 if overwrites else None,
                  "verified": all(s["verified"] for s in ss), "layout": ss[0]["layout"]}
    return out


def ratios_and_aims(summary, rows, counts):
    ratios, aims = {}, []
    for row in rows:
        per = []
        for n in counts:
            a, h = summary.get(key(row, n, "arca")), summary.get(key(row, n, "h5py"))
            if a and h:
                r = {"bytes": a["bytes_per_object"] / h["bytes_per_object"],
                     "write": h["write_s"] / a["write_s"], "walk": h["walk_s"] / a["walk_s"]}
                ratios[f"{row}/{n}"] = r
                per.append((n, r))
        for what, text in (("bytes", "bytes/object <= h5py"),
                           ("write", f"write >= {AIM_SPEEDUP:g}x faster than h5py"),
                           ("walk", f"walk >= {AIM_SPEEDUP:g}x faster than h5py")):
            ok = (lambda x: x <= 1.0) if what == "bytes" else (lambda x: x >= AIM_SPEEDUP)
            entry = {"aim": f"{row}: {text} at every N", "status": "n/a", "value": None,
                     "worst_n": None}
            if per:  # every N of the row must pass; the worst one is shown
                n, r = (max if what == "bytes" else min)(per, key=lambda x: x[1][what])
                entry.update(value=r[what], worst_n=n,
                             status="met" if all(ok(x[what]) for _, x in per) else "MISSED")
            aims.append(entry)
    return ratios, aims


def fmt_mib(x):
    return f"{'n/a':>6s}" if x is None else f"{x:6.1f}"


def print_report(summary, ratios, aims, rows, counts, meta):
    libs = meta["libs"]
    print(f"\n{meta['repeat']} repeat(s), medians; walk/open cache: {meta['cache']}; "
          f"{meta['cpus']} CPUs, load average {meta['load_start'][0]:.2f} -> "
          f"{meta['load_end'][0]:.2f}")
    print(f"arca {meta['versions']['arca']}; h5py {meta['versions']['h5py']}")
    base = {lib: [s["rss_base_mib"] for k, s in summary.items() if k.endswith(lib)]
            for lib in libs}
    print("peak RSS counts interpreter, numpy, library (write, walk: each phase's own "
          "peak); MiB after warm-up: "
          + ", ".join(f"{lib} {median(v):.1f}" for lib, v in base.items() if v))
    for row in rows:
        lay = [f"{lib} {summary[k]['layout']}" for lib in libs
               if (k := key(row, counts[0], lib)) in summary and summary[k]["layout"]]
        print(f"\n== {row} == ({ROWS[row]}, {PER_GROUP} per group"
              + (f"; layout: {', '.join(lay)})" if lay else ")"))
        print(f"{'N':>9s} {'lib':5s} {'B/obj':>7s} {'write s':>8s} {'obj/s':>9s} "
              f"{'walk s':>8s} {'obj/s':>9s} {'peak MiB':>9s} {'write':>6s} {'walk':>6s}")
        for n in counts:
            for lib in libs:
                s = summary.get(key(row, n, lib))
                if s is None:
                    print(f"{n:9,d} {lib:5s} {'FAILED':>7s}")
                    continue
                print(f"{n:9,d} {lib:5s} {s['bytes_per_object']:7.1f} {s['write_s']:8.3f} "
                      f"{s['write_obj_s']:9.0f} {s['walk_s']:8.3f} {s['walk_obj_s']:9.0f} "
                      f"{s['peak_rss_mib']:9.1f} {fmt_mib(s['write_peak_rss_mib'])} "
                      f"{fmt_mib(s['walk_peak_rss_mib'])}"
                      + ("" if s["verified"] else "  COUNT MISMATCH"))
            if r := ratios.get(f"{row}/{n}"):
                print(f"{'':15s} arca/h5py bytes {r['bytes']:.2f}; h5py/arca write "
                      f"{r['write']:.2f}x, walk {r['walk']:.2f}x")
        opens = [f"{lib} {summary[k]['open_ms']:.2f} ms" for lib in libs
                 if (k := key(row, counts[-1], lib)) in summary]
        if opens:
            print(f"  open+close at N={counts[-1]:,d}: " + ", ".join(opens))
        edits = [f"{lib} {summary[k]['edit_ms']:.2f} ms" for lib in libs
                 if (k := key(row, counts[-1], lib)) in summary and summary[k]["edit_ms"]]
        if edits:
            print(f"  r+ open, first write, close at N={counts[-1]:,d}: " + ", ".join(edits))
        overs = [f"{lib} {summary[k]['overwrite_ms']:.2f} ms" for lib in libs
                 if (k := key(row, counts[-1], lib)) in summary and summary[k]["overwrite_ms"]]
        if overs:
            print(f"  r+ open, overwrite 10 elements of a 2 MiB contiguous dataset, close at "
                  f"N={counts[-1]:,d}: " + ", ".join(overs))
    print("\nAims:")
    for a in aims:
        v = "" if a["value"] is None else f"  (worst x{a['value']:.2f} at N={a['worst_n']:,d})"
        print(f"  [{a['status']}] {a['aim']}{v}")


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--counts", default=None,
                    help="objects per file, comma separated (default 1000,10000,100000,1000000; "
                         "--quick: 1000,10000)")
    ap.add_argument("--rows", default=",".join(ROWS), help=f"subset of {','.join(ROWS)}")
    ap.add_argument("--repeat", type=int, default=None,
                    help="fresh-process runs per point; medians (default 3; --quick: 1)")
    ap.add_argument("--opens", type=int, default=5,
                    help="open+close and r+ edit tries per run (default 5)")
    ap.add_argument("--libs", default=",".join(LIBS),
                    help="libraries to run, comma separated (default arca,h5py; one alone "
                         "for comparing two builds of it, run after one another)")
    ap.add_argument("--quick", action="store_true",
                    help="10^3 and 10^4 objects, 1 repeat: about half a minute")
    ap.add_argument("--cache", choices=("fadvise", "none"), default="fadvise",
                    help="evict the file before the walk and each open (default) or not")
    ap.add_argument("--json", metavar="FILE", help="write every figure to FILE")
    ap.add_argument("--dir", metavar="DIR", help="parent of the scratch directory (default /tmp)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch directory and files")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return args
    if args.counts is None:
        args.counts = "1000,10000" if args.quick else "1000,10000,100000,1000000"
    if args.repeat is None:
        args.repeat = 1 if args.quick else 3
    args.counts = sorted({int(float(x)) for x in args.counts.split(",") if x})
    args.rows = [x for x in args.rows.split(",") if x]
    for x in args.rows:
        if x not in ROWS:
            ap.error(f"unknown row {x!r}; choose from {', '.join(ROWS)}")
    args.libs = tuple(x for x in LIBS if x in args.libs.split(","))
    if not args.libs:
        ap.error(f"--libs: choose from {', '.join(LIBS)}")
    if args.repeat < 1 or args.opens < 1 or not args.counts or min(args.counts) < 1:
        ap.error("--repeat, --opens and every count must be at least 1")
    return args


def main(argv=None):
    args = parse_args(argv)
    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return 0
    import arca
    import h5py

    parent = args.dir or tempfile.gettempdir()
    os.makedirs(parent, exist_ok=True)
    workdir = tempfile.mkdtemp(prefix="arca-objects-bench-", dir=os.path.abspath(parent))
    meta = {"command": " ".join([os.path.basename(sys.executable)] + sys.argv),
            "counts": args.counts, "rows": args.rows, "repeat": args.repeat,
            "opens": args.opens, "libs": list(args.libs), "per_group": PER_GROUP, "cache": args.cache, "dir": workdir,
            "cpus": os.cpu_count(), "python": platform.python_version(),
            "platform": platform.platform(), "load_start": os.getloadavg(),
            "memory_gib": os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30,
            "versions": {"arca": arca.__version__, "numpy": np.__version__,
                         "h5py": f"{h5py.__version__} (HDF5 {h5py.version.hdf5_version})"}}
    samples = {key(r, n, lib): [] for r in args.rows for n in args.counts for lib in args.libs}
    failures = []
    t_start = time.perf_counter()
    try:
        for rep in range(args.repeat):
            order = args.libs if rep % 2 == 0 else args.libs[::-1]
            for row, n, lib in itertools.product(args.rows, args.counts, order):
                print(f"[{rep + 1}/{args.repeat}] {row:8s} {n:>9,d} {lib:5s}", end=" ", flush=True)
                job = {"lib": lib, "row": row, "n": n, "cache": args.cache,
                       "path": os.path.join(workdir, f"{row}-{n}{EXT[lib]}"),
                       "opens": args.opens if n == args.counts[-1] else 0}
                try:
                    s = run_child(job, args.keep)
                except Exception as exc:
                    print(f"FAILED: {exc}", flush=True)
                    failures.append({"row": row, "n": n, "lib": lib, "error": str(exc)})
                    continue
                s["n"] = n
                samples[key(row, n, lib)].append(s)
                phases = ("" if s["write_peak_rss_mib"] is None else
                          f" (write {s['write_peak_rss_mib']:.1f}, walk {s['walk_peak_rss_mib']:.1f})")
                print(f"{s['file_bytes'] / n:7.1f} B/obj  write {s['write_s']:7.3f} s  "
                      f"walk {s['walk_s']:7.3f} s  peak {s['peak_rss_mib']:6.1f} MiB" + phases
                      + ("" if s["verified"] else f"  COUNT MISMATCH {s['seen']}")
                      + (f"  other files: {s['other_files']}" if s["other_files"] else ""),
                      flush=True)
    finally:
        if args.keep:
            print(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    meta["load_end"] = os.getloadavg()
    meta["elapsed_s"] = time.perf_counter() - t_start
    summary = summarise(samples)
    ratios, aims = ratios_and_aims(summary, args.rows, args.counts)
    print_report(summary, ratios, aims, args.rows, args.counts, meta)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"meta": meta, "samples": samples, "summary": summary,
                       "ratios": ratios, "aims": aims, "failures": failures}, fh, indent=1)
        print(f"\nwrote {args.json}")
    bad = [k for k, s in summary.items() if not s["verified"]]
    if bad or failures:
        print(f"\nerror: {len(bad)} walk count mismatch(es), {len(failures)} failed run(s)",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
