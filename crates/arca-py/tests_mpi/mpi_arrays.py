"""Run under mpirun: collective writes of fixed-size datasets, compared
with a serial write of the same data.

    mpirun -n 4 python mpi_arrays.py OUTDIR SCENARIO

Scenarios: ``chunked`` (zstd, each rank its own block of rows: whole chunks
compressed per rank, and row blocks that split chunks between ranks),
``contiguous``, ``grow`` (a time series resized collectively step by step,
with groups and attributes), ``fail`` (one rank's block has the wrong
shape: nothing changes), ``fail-late`` (the last rank's second slab write
fails after every rank has written some chunks into the reserved room:
nothing changes and the room is given back), ``slabs`` (blocks written
in many small slabs, so that ranks' chunks interleave in the file). Rank 0 prints ``OK`` when every check passed.
"""

import os
import sys

import numpy as np
from mpi4py import MPI

import arca
import arca.mpi
from mpi_common import abort_on_error

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
abort_on_error(comm)
out, scenario = sys.argv[1], sys.argv[2]
path = os.path.join(out, f"{scenario}.arca")
ROWS, COLS = 50, 24  # per rank: 50 rows, so 16-row chunks straddle ranks


def block(r, step=0):
    rng = np.random.default_rng(100 * step + r)
    return (rng.integers(-1000, 1000, (ROWS, COLS)) / 8).astype("<f4")


def serial(kwargs):
    ref = os.path.join(out, f"{scenario}-serial.arca")
    with arca.File(ref, "w") as f:
        ds = f.create_dataset("x", shape=(ROWS * size, COLS), dtype="<f4", **kwargs)
        for r in range(size):
            ds[r * ROWS:(r + 1) * ROWS] = block(r)
    return ref


def check_same(ref):
    if rank == 0:
        with arca.File(path) as a, arca.File(ref) as b:
            assert np.array_equal(a["x"][()], b["x"][()])
            a.check()


if scenario in ("chunked", "contiguous"):
    kwargs = ({"chunks": (16, 8), "compression": "zstd", "shuffle": True, "fillvalue": -1.0}
              if scenario == "chunked" else {})
    with arca.mpi.File(path, "w", comm=comm) as f:
        ds = f.create_dataset("x", shape=(ROWS * size, COLS), dtype="<f4", **kwargs)
        ds[rank * ROWS:(rank + 1) * ROWS] = block(rank)
        back = ds[rank * ROWS:(rank + 1) * ROWS]
        assert np.array_equal(back, block(rank))
    ref = serial(kwargs) if rank == 0 else None
    check_same(comm.bcast(ref, root=0))
elif scenario == "grow":
    with arca.mpi.File(path, "w", comm=comm) as f:
        f.create_group("run/steps")
        f.attrs["ranks"] = size
        ds = f.create_dataset("run/t", shape=(0, COLS * size), maxshape=(None, COLS * size),
                              dtype="<f4", chunks=(1, COLS), compression="gzip")
        for step in range(5):
            ds.resize(step + 1, axis=0)
            ds[step, rank * COLS:(rank + 1) * COLS] = block(rank, step)[0]
        ds.attrs["steps"] = 5
    if rank == 0:
        with arca.File(path) as f:
            t = f["run/t"][()]
            assert t.shape == (5, COLS * size) and f.attrs["ranks"] == size
            assert f["run/t"].attrs["steps"] == 5 and "run/steps" in f
            for step in range(5):
                for r in range(size):
                    assert np.array_equal(t[step, r * COLS:(r + 1) * COLS], block(r, step)[0])
            f.check()
elif scenario == "fail":
    with arca.mpi.File(path, "w", comm=comm) as f:
        ds = f.create_dataset("x", shape=(ROWS * size, COLS), dtype="<f4", chunks=(16, 8),
                              compression="zstd")
        ds[rank * ROWS:(rank + 1) * ROWS] = block(rank)
        bad = block(rank)[:-1] if rank == size - 1 else block(rank)
        try:
            ds[rank * ROWS:(rank + 1) * ROWS] = bad * 2
            raise SystemExit("a bad block was accepted")
        except arca.mpi.CollectiveError as e:
            assert f"rank {size - 1}" in str(e), e
        assert np.array_equal(ds[rank * ROWS:(rank + 1) * ROWS], block(rank))
elif scenario in ("fail-late", "slabs"):
    arca.mpi._SLAB_BYTES = 16 * 8 * 4  # one chunk row a slab
    kwargs = {"chunks": (16, 8), "compression": "zstd", "shuffle": True}
    if scenario == "fail-late" and rank == size - 1:
        real = arca.mpi._native

        class Failing:
            """The native module, but for a write that fails the second time."""

            writes = None  # counting once armed

            def __getattr__(self, name):
                return getattr(real, name)

            def write_out(self, fd, data, at):
                if Failing.writes is not None:
                    Failing.writes += 1
                if Failing.writes == 2:
                    raise OSError(28, "No space left on device (injected)")
                return real.write_out(fd, data, at)

        arca.mpi._native = Failing()
    with arca.mpi.File(path, "w", comm=comm) as f:
        ds = f.create_dataset("x", shape=(ROWS * size, COLS), dtype="<f4", **kwargs)
        if scenario == "fail-late":
            ds[rank * ROWS:(rank + 1) * ROWS] = block(rank)
            comm.Barrier()
            size_before = os.path.getsize(path)
            if rank == size - 1:
                arca.mpi._native.__class__.writes = 0
            try:
                ds[rank * ROWS:(rank + 1) * ROWS] = block(rank) * 2
                raise SystemExit("a failed write was reported as done")
            except arca.mpi.CollectiveError as e:
                assert "injected" in str(e) and f"rank {size - 1}" in str(e), e
            assert np.array_equal(ds[rank * ROWS:(rank + 1) * ROWS], block(rank))
        else:
            ds[rank * ROWS:(rank + 1) * ROWS] = block(rank)
    if rank == 0:
        with arca.File(path) as f:
            f.check()
            if scenario == "fail-late":
                # The room reserved for the failed write is free again.
                assert os.path.getsize(path) <= size_before + 64 * 1024, \
                    (os.path.getsize(path), size_before)
    if scenario == "slabs":
        ref = serial(kwargs) if rank == 0 else None
        check_same(comm.bcast(ref, root=0))
else:
    raise SystemExit(f"unknown scenario {scenario}")
comm.Barrier()
if rank == 0:
    print("OK")
