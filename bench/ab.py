#!/usr/bin/env python3
"""Two builds of arca, one benchmark, alternating runs: is B slower than A?

A change to the core (a new check on a hot path, a new layer) should not
cost speed. Comparing two separate benchmark runs on a shared machine says
little, because the machine drifts between them; this runs the same
benchmark for build A and build B in turn, ``--repeat`` times each, and
prints the median of arca's own timings for every case beside their ratio.

A build is a directory put first on ``PYTHONPATH`` (an unpacked wheel, e.g.
``maturin build --release`` then ``python -m zipfile -e WHEEL DIR``), or
``installed`` for the package the virtualenv already holds.

Usage::

    python bench/ab.py --a /tmp/base-pkg --b installed --bench io --quick
    python bench/ab.py --a DIR --b installed --bench vlen --repeat 7 --json ab.json
    python bench/ab.py --a DIR --b installed --bench objects --quick
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BENCHES = {
    "io": os.path.join(HERE, "io", "io_bench.py"),
    "vlen": os.path.join(HERE, "vlen", "vlen_bench.py"),
    "objects": os.path.join(HERE, "objects", "objects_bench.py"),
}


def timings(bench: str, doc: dict) -> dict[str, float]:
    """arca's seconds per (case, library, phase) from one run's JSON."""
    out: dict[str, float] = {}
    if bench == "io":
        for case, libs in doc["samples"].items():
            for i, s in enumerate(libs.get("arca", [])):
                for phase in ("write_s", "read_s"):
                    out[f"{case}/arca/{phase[:-2]}#{i}"] = s[phase]
    elif bench == "objects":
        for k, runs in doc["samples"].items():
            if "arca" in k:
                for i, s in enumerate(runs):
                    for phase in ("write_s", "walk_s"):
                        out[f"{k}/{phase[:-2]}#{i}"] = s[phase]
    else:
        for r in doc["results"]:
            if r["library"].startswith("arca"):
                key = f"{r['case']}{r['size_mib']}/{r['library']}"
                for phase in ("write_s", "read_s"):
                    out[f"{key}/{phase[:-2]}"] = r[phase]
    return out


def run_once(bench: str, build: str, quick: bool, extra: list[str]) -> dict[str, float]:
    env = dict(os.environ)
    if build != "installed":
        env["PYTHONPATH"] = os.path.abspath(build) + os.pathsep + env.get("PYTHONPATH", "")
    with tempfile.TemporaryDirectory() as tmp:
        js = os.path.join(tmp, "out.json")
        cmd = [sys.executable, BENCHES[bench], "--json", js] + (["--quick"] if quick else []) + extra
        subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
        with open(js) as f:
            return timings(bench, json.load(f))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--a", required=True, help="build A: a directory or 'installed'")
    ap.add_argument("--b", required=True, help="build B: a directory or 'installed'")
    ap.add_argument("--bench", choices=sorted(BENCHES), required=True)
    ap.add_argument("--repeat", type=int, default=5, help="runs of each build (default 5)")
    ap.add_argument("--quick", action="store_true", help="the benchmark's --quick size")
    ap.add_argument("--json", help="write the samples and medians here")
    ap.add_argument("extra", nargs="*", help="more arguments for the benchmark, after --")
    args = ap.parse_args()

    samples: dict[str, dict[str, list[float]]] = {"a": {}, "b": {}}
    for i in range(args.repeat):
        # Alternate which build goes first, so neither always runs on a
        # warmer or a busier machine.
        order = ("a", "b") if i % 2 == 0 else ("b", "a")
        for which in order:
            build = args.a if which == "a" else args.b
            for k, v in run_once(args.bench, build, args.quick, args.extra).items():
                samples[which].setdefault(k, []).append(v)
        print(f"run {i + 1}/{args.repeat} done", file=sys.stderr)

    rows = []
    print(f"{'case/library/phase':34} {'A median s':>11} {'B median s':>11} {'B/A time':>9}")
    for k in sorted(set(samples["a"]) & set(samples["b"])):
        ma, mb = statistics.median(samples["a"][k]), statistics.median(samples["b"][k])
        ratio = mb / ma if ma > 0 else float("nan")
        rows.append({"key": k, "a_median_s": ma, "b_median_s": mb, "b_over_a": ratio})
        print(f"{k:34} {ma:11.4f} {mb:11.4f} {ratio:9.2f}")
    ratios = [r["b_over_a"] for r in rows]
    if ratios:
        geo = statistics.geometric_mean(ratios)
        print(f"geometric mean of B/A time over {len(ratios)} timings: {geo:.3f} "
              f"(below 1: B faster); {args.repeat} runs of each build")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"a": args.a, "b": args.b, "bench": args.bench, "repeat": args.repeat,
                       "quick": args.quick, "samples": samples, "medians": rows}, f, indent=1)


if __name__ == "__main__":
    main()
