#!/usr/bin/env python3
"""Parallel variable-length write: ``arca.mpi`` with 1, 2, ... ranks writing
the same data (ragged int32 rows of 4096 items by default, or float32 rows of
mean length 8 with ``--small``), timed from the collective create to the end
of the collective close (which commits and syncs). 1 rank is the serial
baseline.

    python bench/vlen/mpi_bench.py --mib 256 --ranks 1,2 --json mpi.json
    python bench/vlen/mpi_bench.py --quick

Each point is run --repeats times (default 5); medians are reported, with the
best run beside them.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np


def worker(args):
    from mpi4py import MPI

    import arca
    import arca.mpi

    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    total = args.mib << 20
    rng = np.random.default_rng(rank)
    if args.small:
        rows = total // 4 // 8
        mine = rows // size
        lens = rng.integers(0, 17, mine)
        dtype = "f4"
    else:
        rows = total // 4 // 4096
        mine = rows // size
        lens = np.full(mine, 4096)
        dtype = "i4"
    o = np.zeros(mine + 1, np.int64)
    np.cumsum(lens, out=o[1:])
    v = np.ones(int(o[-1]), dtype)
    path = os.path.join(args.dir, "mpi.arca")
    comm.Barrier()
    t0 = time.perf_counter()
    with arca.mpi.File(path, "w", comm=comm) as f:
        ds = f.create_dataset("d", shape=(mine * size,), dtype=arca.vlen_dtype(dtype))
        ds.write_ragged(v, o, sel=np.s_[rank * mine:(rank + 1) * mine])
    comm.Barrier()
    dt = time.perf_counter() - t0
    payload = comm.reduce(v.nbytes, root=0)
    if rank == 0:
        print(json.dumps({"ranks": size, "seconds": dt, "bytes": payload,
                          "mbs": payload / dt / 1e6}), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mib", type=int, default=256)
    ap.add_argument("--ranks", default="1,2")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--small", action="store_true", help="rows of mean length 8")
    ap.add_argument("--dir", default=None)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--json", default=None)
    ap.add_argument("--quick", action="store_true", help="16 MiB, 3 runs: seconds")
    args = ap.parse_args()
    if args.quick:
        args.mib, args.repeats = 16, 3
    if args.worker:
        return worker(args)
    scratch = args.dir or tempfile.mkdtemp(prefix="vlen-mpi-")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_btl_vader_single_copy_mechanism="none")
    mpirun = shutil.which("mpirun")
    results = []
    for n in [int(x) for x in args.ranks.split(",")]:
        runs = []
        for _ in range(args.repeats):
            cmd = [mpirun, "-n", str(n), "--oversubscribe", sys.executable, __file__, "--worker",
                   "--mib", str(args.mib), "--dir", scratch] + (["--small"] if args.small else [])
            r = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
            runs.append(json.loads(r.stdout.strip().splitlines()[-1]))
        secs = sorted(r["seconds"] for r in runs)
        med = secs[len(secs) // 2] if len(secs) % 2 else (secs[len(secs) // 2 - 1] + secs[len(secs) // 2]) / 2
        rec = {"ranks": n, "seconds": med, "best_seconds": secs[0], "all_seconds": secs,
               "bytes": runs[0]["bytes"], "mbs": runs[0]["bytes"] / med / 1e6}
        results.append(rec)
        print(f"{n} rank(s): median {rec['mbs']:.1f} MB/s ({med:.3f} s for "
              f"{rec['bytes'] / 1e6:.0f} MB; best {secs[0]:.3f} s, {len(secs)} runs)", flush=True)
    base = results[0]["seconds"]
    for r in results[1:]:
        print(f"{r['ranks']} ranks vs {results[0]['ranks']}: {base / r['seconds']:.2f}x (medians)")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1)
    if not args.dir:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
