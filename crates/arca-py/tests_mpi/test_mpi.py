"""Collective writes under ``mpirun -n 2`` and ``-n 4 --oversubscribe``:
variable-length rows (mpi_writer.py) and fixed-size arrays (mpi_arrays.py).
Each run compares the file with a serial write of the same data and checks
that a failing rank fails the call everywhere while the file stays intact."""

import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIOS = ["strings", "ragged", "fail-validate", "fail-write", "filtered"]
ARRAY_SCENARIOS = ["chunked", "contiguous", "grow", "fail", "fail-late", "slabs"]


def mpirun():
    exe = shutil.which("mpirun") or shutil.which("mpiexec")
    if exe is None:
        raise RuntimeError("mpirun not found: run `make mpi-deps` (Open MPI from Debian)")
    return exe


def run(script, tmp_path, ranks, scenario):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1",
               # Containers often forbid the cross-process memory copy Open MPI tries first.
               OMPI_MCA_btl_vader_single_copy_mechanism="none")
    cmd = [mpirun(), "-n", str(ranks), "--oversubscribe", sys.executable,
           os.path.join(HERE, script), str(tmp_path), scenario]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stdout + r.stderr
    return r


@pytest.mark.parametrize("ranks", [2, 4])
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_collective(tmp_path, ranks, scenario):
    r = run("mpi_writer.py", tmp_path, ranks, scenario)
    assert f"OK {scenario} {ranks}" in r.stdout, r.stdout + r.stderr


@pytest.mark.parametrize("ranks", [2, 4])
@pytest.mark.parametrize("scenario", ARRAY_SCENARIOS)
def test_collective_arrays(tmp_path, ranks, scenario):
    r = run("mpi_arrays.py", tmp_path, ranks, scenario)
    assert "OK" in r.stdout.split(), r.stdout + r.stderr
