"""Collective variable-length writes under ``mpirun -n 2`` and ``-n 4
--oversubscribe``: each run compares the file with a serial write of the
same data and checks that a failing rank fails the call everywhere while
the file stays intact (see mpi_writer.py)."""

import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIOS = ["strings", "ragged", "fail-validate", "fail-write", "filtered"]


def mpirun():
    exe = shutil.which("mpirun") or shutil.which("mpiexec")
    if exe is None:
        raise RuntimeError("mpirun not found: run `make mpi-deps` (Open MPI from Debian)")
    return exe


@pytest.mark.parametrize("ranks", [2, 4])
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_collective(tmp_path, ranks, scenario):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1",
               # Containers often forbid the cross-process memory copy Open MPI tries first.
               OMPI_MCA_btl_vader_single_copy_mechanism="none")
    cmd = [mpirun(), "-n", str(ranks), "--oversubscribe", sys.executable,
           os.path.join(HERE, "mpi_writer.py"), str(tmp_path), scenario]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"OK {scenario} {ranks}" in r.stdout, r.stdout + r.stderr
