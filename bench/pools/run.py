#!/usr/bin/env python3
"""The free-list benchmark with h5py alongside.

Runs the arca side (the ``arca-bench-pools`` binary: allocator calls, peak
heap, peak RSS and time with pools on and off) and, for every point, the
same work with h5py (HDF5) and through arca's Python package, each in a
fresh subprocess whose peak resident set comes from
``resource.getrusage``. The work: N chunked datasets of f8
(shuffle + zstd level 1; gzip level 1 if hdf5plugin is missing), each
written once, then R rounds that rewrite every dataset and flush. Prints a
markdown table of medians and writes everything as JSON with --json.

    python bench/pools/run.py --quick
    python bench/pools/run.py --json pools.json
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def rewrite_child(lib, n, rewrites, elems, chunk):
    """One point of the work through h5py or arca's Python package, in this
    (fresh) process; prints JSON. Peak RSS is what the user's process holds."""
    import numpy as np

    if lib == "h5py":
        import h5py

        open_file, ext = h5py.File, "h5"
        try:
            import hdf5plugin

            comp, codec = dict(hdf5plugin.Zstd(clevel=1)), "zstd(1)"
        except ImportError:
            comp, codec = dict(compression="gzip", compression_opts=1), "gzip(1)"
    else:
        import arca

        open_file, ext = arca.File, "arca"
        comp, codec = dict(compression="zstd", compression_opts=1), "zstd(1)"
    j = np.arange(elems)
    # What the interpreter, numpy and the library take before any work.
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    with tempfile.TemporaryDirectory() as d:
        with open_file(os.path.join(d, f"pools.{ext}"), "w") as f:
            sets = []
            for i in range(n):
                ds = f.create_dataset(
                    f"d{i}", shape=(elems,), dtype="f8", chunks=(chunk,), shuffle=True, **comp
                )
                ds[:] = ((j + i) % 1000) * 0.5
                sets.append(ds)
            f.flush()
            start = time.perf_counter()
            for r in range(1, rewrites + 1):
                for i, ds in enumerate(sets):
                    ds[:] = ((j + 7 * r + i) % 1000) * 0.5
                f.flush()
            secs = time.perf_counter() - start
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"time_s": secs, "peak_rss": rss, "import_rss": base, "codec": codec}))


def child_point(n, r, elems, chunk, repeat, lib):
    runs = []
    for _ in range(repeat):
        out = subprocess.run(
            [sys.executable, __file__, "--child", lib, str(n), str(r), str(elems), str(chunk)],
            check=True,
            capture_output=True,
            text=True,
        )
        runs.append(json.loads(out.stdout))
    return {
        "time_s": statistics.median(x["time_s"] for x in runs),
        "peak_rss": statistics.median(x["peak_rss"] for x in runs),
        "import_rss": statistics.median(x["import_rss"] for x in runs),
        "codec": runs[0]["codec"],
    }


def arca_points(args):
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
    exe = args.bin or os.path.join(target, "release", "arca-bench-pools")
    if not os.path.exists(exe):
        subprocess.run(["cargo", "build", "--release", "-p", "arca-bench-pools"], cwd=ROOT, check=True)
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "arca.json")
        cmd = [exe, "--json", out, "--elems", str(args.elems), "--chunk", str(args.chunk)]
        if args.quick:
            cmd.append("--quick")
        else:
            cmd += ["--datasets", args.datasets, "--rewrites", args.rewrites, "--repeat", str(args.repeat)]
        subprocess.run(cmd, check=True, stdout=sys.stderr)
        with open(out) as f:
            return json.load(f)


def mib(b):
    return f"{b / 1048576:.1f}"


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        n, r, elems, chunk = map(int, sys.argv[3:7])
        rewrite_child(sys.argv[2], n, r, elems, chunk)
        return
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--datasets", default="500,1000,1500")
    p.add_argument("--rewrites", default="15,30,45")
    p.add_argument("--elems", type=int, default=4096)
    p.add_argument("--chunk", type=int, default=1024)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--quick", action="store_true", help="small sizes, one repetition")
    p.add_argument("--bin", help="the arca-bench-pools binary (default: built in the target dir)")
    p.add_argument("--json", help="write every figure here")
    args = p.parse_args()
    if args.quick:
        args.datasets, args.rewrites, args.repeat = "50,100,150", "3,6,9", 1

    arca = arca_points(args)
    pts = {(x["datasets"], x["rewrites"], x["pools"]): x for x in arca["points"]}
    rows = []
    for r in map(int, args.rewrites.split(",")):
        for n in map(int, args.datasets.split(",")):
            h5 = child_point(n, r, args.elems, args.chunk, args.repeat, "h5py")
            py = child_point(n, r, args.elems, args.chunk, args.repeat, "arca")
            on, off = pts[(n, r, True)], pts[(n, r, False)]
            rows.append({"datasets": n, "rewrites": r, "on": on, "off": off, "h5py": h5,
                         "arca_python": py})

    print(
        "| datasets | rewrites | alloc calls on | off | off/on | peak heap MiB on | off | on/off "
        "| loop peak KiB on | off | held KiB "
        "| RSS MiB on | off | h5py (over import) | arca from Python (over import) "
        "| time s on | off | h5py |"
    )
    print("|---:" * 18 + "|")
    for x in rows:
        on, off, h5 = x["on"], x["off"], x["h5py"]
        print(
            f"| {x['datasets']} | {x['rewrites']} "
            f"| {int(on['alloc_calls'])} | {int(off['alloc_calls'])} "
            f"| {off['alloc_calls'] / max(on['alloc_calls'], 1):.1f} "
            f"| {mib(on['peak_heap'])} | {mib(off['peak_heap'])} "
            f"| {on['peak_heap'] / max(off['peak_heap'], 1):.2f} "
            f"| {on['loop_peak_heap'] / 1024:.0f} | {off['loop_peak_heap'] / 1024:.0f} "
            f"| {on['pool_held_bytes'] / 1024:.0f} "
            f"| {mib(on['peak_rss'])} | {mib(off['peak_rss'])} "
            f"| {mib(h5['peak_rss'])} ({mib(h5['peak_rss'] - h5['import_rss'])}) "
            f"| {mib(x['arca_python']['peak_rss'])} "
            f"({mib(x['arca_python']['peak_rss'] - x['arca_python']['import_rss'])}) "
            f"| {on['time_s']:.3f} | {off['time_s']:.3f} | {h5['time_s']:.3f} |"
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"arca": arca, "rows": rows, "h5py_codec": rows[0]["h5py"]["codec"]}, f, indent=2)


if __name__ == "__main__":
    main()
