#!/usr/bin/env python3
"""Cost of atomic edits as files grow: the nine CREATE commands of the
h5edit study run by `arca edit` at --atomic no, yes and inc on files of
16 MiB to 2 GiB, beside the copy-then-edit approach (back the file up, edit,
drop the backup) and an in-place h5py edit of the same attributes on an
equivalent HDF5 file. Prints medians and the yes/no and inc/no ratios.

    python bench/edit/run.py --quick
    python bench/edit/run.py --json edit.json
    python bench/edit/run.py --kill-trials 1000    # also: SIGKILL loop, zero corrupt files
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

import arca

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COMMANDS = """\
CREATE /newattrI32BE {H5T_STD_I32BE (1, 2, 3) DATA {11, 12, 21, 22, 31, 32}};
CREATE /newattrF64LE {H5T_IEEE_F64LE (2, 2, 2) DATA {0.1E1, 0.2E1, -1.1e2, -1.2e2, 2.1E-3, 2.2E-3, -3.1E-3, -3.2E-2}};
CREATE /newattr1 {H5T_STD_I32BE (1, 2, 3) DATA {11, 12, 21, 22, 31, 32}};
CREATE /newattr2 {H5T_STD_I32BE (1, 2, 3) DATA {11, 12, 21, 22, 31, 32}};
CREATE /newattr3 {H5T_STD_I32BE (1, 2, 3) DATA {11, 12, 21, 22, 31, 32}};
CREATE /newattr4 {H5T_STD_I32BE (1, 2, 3) DATA {11, 12, 21, 22, 31, 32}};
CREATE /newattr5 {H5T_STD_I32BE (1, 2, 3) DATA {11, 12, 21, 22, 31, 32}};
CREATE /newattr6 {H5T_STD_I32BE (1, 2, 3) DATA {11, 12, 21, 22, 31, 32}};
CREATE /newattr7 {H5T_STD_I32BE (1, 2, 3) DATA {11, 12, 21, 22, 31, 32}};
"""


def make_files(d, mib):
    """An arca file and an HDF5 file of about `mib` MiB: one large dataset
    plus 200 groups with attributes."""
    a, h = os.path.join(d, f"base{mib}.arca"), os.path.join(d, f"base{mib}.h5")
    n = mib * (1 << 20) // 8
    block = np.arange(1 << 20, dtype="f8")
    with arca.File(a, "w") as f, h5py.File(h, "w") as g:
        da = f.create_dataset("data", shape=(n,), dtype="f8")
        dh = g.create_dataset("data", shape=(n,), dtype="f8")
        for s in range(0, n, block.size):
            e = min(n, s + block.size)
            da[s:e] = block[: e - s]
            dh[s:e] = block[: e - s]
        for i in range(200):
            f.create_group(f"g{i}").attrs["i"] = i
            g.create_group(f"g{i}").attrs["i"] = i
    return a, h


def fresh_copy(src, dst):
    """Copy and sync, so the timed edit's own fsync does not pay for the copy."""
    shutil.copyfile(src, dst)
    with open(dst, "rb+") as fh:
        os.fsync(fh.fileno())


def timed(fn, repeat):
    ts = []
    for _ in range(repeat):
        ts.append(fn())
    return statistics.median(ts)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="16,64,256,1024,2048", help="file sizes in MiB")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="16 and 64 MiB, 3 repeats")
    ap.add_argument("--json")
    ap.add_argument("--dir", help="where the files go (default: a temporary directory)")
    ap.add_argument("--kill-trials", type=int, default=0, help="also run the SIGKILL loop this many times")
    ap.add_argument("--arca", default=os.path.join(ROOT, "target", "release", "arca"))
    a = ap.parse_args()
    sizes = [16, 64] if a.quick else [int(x) for x in a.sizes.split(",")]
    repeat = 3 if a.quick else a.repeat
    rows = []
    d = a.dir or tempfile.mkdtemp(prefix="arca-edit-bench-")
    cmds = os.path.join(d, "t_comm_file1")
    with open(cmds, "w") as fh:
        fh.write(COMMANDS)
    print(f"{'MiB':>6} {'no s':>8} {'yes s':>8} {'inc s':>8} {'yes/no':>7} {'inc/no':>7} {'copy+edit s':>11} {'h5py s':>8}")
    try:
        for mib in sizes:
            base_a, base_h = make_files(d, mib)
            work = os.path.join(d, "work.arca")

            def edit(level):
                fresh_copy(base_a, work)
                t = time.perf_counter()
                subprocess.run([a.arca, "edit", "--atomic", level, "--command-file", cmds, work], check=True)
                return time.perf_counter() - t

            def copy_then_edit():
                fresh_copy(base_a, work)
                t = time.perf_counter()
                backup = work + ".bak"
                shutil.copyfile(work, backup)
                with open(backup, "rb+") as fh:
                    os.fsync(fh.fileno())
                subprocess.run([a.arca, "edit", "--atomic", "no", "--command-file", cmds, work], check=True)
                os.remove(backup)
                return time.perf_counter() - t

            def h5py_edit():
                hw = os.path.join(d, "work.h5")
                fresh_copy(base_h, hw)
                t = time.perf_counter()
                v = np.array([[[11, 12], [21, 22], [31, 32]]], dtype=">i4")
                with h5py.File(hw, "r+") as f:
                    f.attrs["newattrI32BE"] = v
                    f.attrs["newattrF64LE"] = np.array([1, 2, -110, -120, 2.1e-3, 2.2e-3, -3.1e-3, -3.2e-2], "<f8").reshape(2, 2, 2)
                    for i in range(1, 8):
                        f.attrs[f"newattr{i}"] = v
                    f.flush()
                with open(hw, "rb+") as fh:
                    os.fsync(fh.fileno())
                return time.perf_counter() - t

            r = {"mib": mib}
            for level in ("no", "yes", "inc"):
                r[level] = timed(lambda: edit(level), repeat)
            r["copy_then_edit"] = timed(copy_then_edit, repeat)
            r["h5py"] = timed(h5py_edit, repeat)
            r["yes_over_no"] = r["yes"] / r["no"]
            r["inc_over_no"] = r["inc"] / r["no"]
            rows.append(r)
            print(f"{mib:>6} {r['no']:>8.4f} {r['yes']:>8.4f} {r['inc']:>8.4f} {r['yes_over_no']:>7.2f} "
                  f"{r['inc_over_no']:>7.2f} {r['copy_then_edit']:>11.4f} {r['h5py']:>8.4f}")
            for p in (base_a, base_h, work, os.path.join(d, "work.h5")):
                if os.path.exists(p):
                    os.remove(p)
        kill = None
        if a.kill_trials:
            # The SIGKILL loop runs 200 trials at ARCA_TEST_SCALE=1.
            env = dict(os.environ, ARCA_TEST_SCALE=str(a.kill_trials / 200))
            p = subprocess.run(["cargo", "test", "--release", "-p", "arca", "--test", "crash_kill", "--", "sigkill_loop"],
                               cwd=ROOT, env=env, capture_output=True, text=True)
            kill = {"trials": a.kill_trials, "passed": p.returncode == 0}
            print(f"SIGKILL loop: {a.kill_trials} kills, "
                  f"{'zero corrupt files' if p.returncode == 0 else 'FAILED: ' + p.stdout[-2000:]}")
    finally:
        if not a.dir:
            shutil.rmtree(d, ignore_errors=True)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"repeat": repeat, "rows": rows, "kill": kill}, fh, indent=2)


if __name__ == "__main__":
    sys.exit(main())
