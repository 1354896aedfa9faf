"""Run under mpirun: collective variable-length writes, compared with a
serial write of the same data; failures on one rank.

    mpirun -n 4 python mpi_writer.py OUTDIR SCENARIO

Scenarios: ``strings``, ``ragged`` (float32 rows, several calls, 2-D
selections), ``fail-validate`` (one rank's offsets are bad), ``fail-write``
(one rank cannot write its bytes), ``filtered`` (zstd vector: bytes go
through rank 0). Rank 0 prints ``OK`` when every check passed.
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
PER = 37  # elements per rank per call


def strings_for(r, call):
    rng = np.random.default_rng(1000 * call + r)
    chars = ["a", "é", "€", "😀", "z", " "]
    return ["".join(rng.choice(chars, int(rng.integers(0, 40)))) for _ in range(PER)]


def rows_for(r, call):
    rng = np.random.default_rng(5000 * call + r)
    return [rng.standard_normal(int(rng.choice([0, 1, 5, 3000]))).astype("f4") for _ in range(PER)]


def pack_strings(ss):
    b = [s.encode() for s in ss]
    o = np.zeros(len(b) + 1, np.int64)
    np.cumsum([len(x) for x in b], out=o[1:])
    return np.frombuffer(b"".join(b), np.uint8), o


def pack_rows(rows):
    o = np.zeros(len(rows) + 1, np.int64)
    np.cumsum([len(x) for x in rows], out=o[1:])
    return np.concatenate(rows), o


def expect_failure(fn):
    try:
        fn()
    except arca.mpi.CollectiveError as e:
        return str(e)
    raise AssertionError("the collective call did not fail")


path = os.path.join(out, f"{scenario}-{size}.arca")
serial = os.path.join(out, f"{scenario}-{size}-serial.arca")
n = PER * size

if scenario in ("strings", "filtered"):
    opts = {"vlen_chunk_bytes": 100}
    if scenario == "filtered":
        opts["vlen_compression"] = "zstd"
    with arca.mpi.File(path, "w", comm=comm) as f:
        ds = f.create_dataset("s", shape=(n,), dtype=arca.string_dtype(), **opts)
        v, o = pack_strings(strings_for(rank, 0))
        ds.write_ragged(v, o, sel=np.s_[rank * PER:(rank + 1) * PER])
        # A second call: the vector grows again, once.
        v, o = pack_strings(strings_for(rank, 1)[:5])
        ds.write_ragged(v, o, sel=np.s_[rank * PER:rank * PER + 5])
        back, bo = ds.read_ragged(np.s_[rank * PER:(rank + 1) * PER])
        mine = strings_for(rank, 1)[:5] + strings_for(rank, 0)[5:]
        got = [back[bo[i]:bo[i + 1]].tobytes().decode() for i in range(PER)]
        assert got == mine, f"rank {rank} read back wrong data"
    if rank == 0:
        with arca.File(serial, "w") as f:
            ds = f.create_dataset("s", shape=(n,), dtype=arca.string_dtype(), **opts)
            allv = sum((strings_for(r, 0) for r in range(size)), [])
            ds[...] = np.array(allv, dtype=object)
            for r in range(size):
                ds[r * PER:r * PER + 5] = np.array(strings_for(r, 1)[:5], dtype=object)
        with arca.File(path) as a, arca.File(serial) as b:
            a.check()
            assert a["s"][...].tolist() == b["s"][...].tolist()
            assert a["s"].vlen_info["live_bytes"] == b["s"].vlen_info["live_bytes"]

elif scenario == "ragged":
    shape = (size, PER)
    with arca.mpi.File(path, "w", comm=comm) as f:
        ds = f.create_dataset("r", shape=shape, dtype=arca.vlen_dtype("f4"),
                              chunks=(1, 8), vlen_chunk_bytes=4096)
        for call in range(3):
            v, o = pack_rows(rows_for(rank, call))
            ds.write_ragged(v, o, sel=np.s_[rank, :])
    if rank == 0:
        with arca.File(serial, "w") as f:
            ds = f.create_dataset("r", shape=shape, dtype=arca.vlen_dtype("f4"), chunks=(1, 8),
                                  vlen_chunk_bytes=4096)
            for call in range(3):
                for r in range(size):
                    v, o = pack_rows(rows_for(r, call))
                    ds.write_ragged(v, o, sel=np.s_[r, :])
        with arca.File(path) as a, arca.File(serial) as b:
            a.check()
            x, y = a["r"][...], b["r"][...]
            assert x.shape == y.shape == shape
            for p, q in zip(x.ravel(), y.ravel()):
                np.testing.assert_array_equal(p, q)

elif scenario in ("fail-validate", "fail-write"):
    with arca.mpi.File(path, "w", comm=comm) as f:
        ds = f.create_dataset("s", shape=(n,), dtype=arca.string_dtype(), vlen_chunk_bytes=64)
        v, o = pack_strings(strings_for(rank, 0))
        ds.write_ragged(v, o, sel=np.s_[rank * PER:(rank + 1) * PER])
        v2, o2 = pack_strings(["changed"] * PER)
        if scenario == "fail-validate":
            if rank == size - 1:
                o2 = o2[::-1].copy()  # decreasing offsets
            msg = expect_failure(lambda: ds.write_ragged(v2, o2, sel=np.s_[rank * PER:(rank + 1) * PER]))
            assert f"rank {size - 1}" in msg, msg
        else:
            if rank == size - 1:
                fd = f._fd
                f._fd = os.open(os.devnull, os.O_RDONLY)  # writes to it fail
            msg = expect_failure(lambda: ds.write_ragged(v2, o2, sel=np.s_[rank * PER:(rank + 1) * PER]))
            assert f"rank {size - 1}" in msg, msg
            if rank == size - 1:
                os.close(f._fd)
                f._fd = fd
        # The file is usable after the failure: a good call goes through.
        v3, o3 = pack_strings(["after"] * 2)
        ds.write_ragged(v3, o3, sel=np.s_[rank * PER:rank * PER + 2])
    if rank == 0:
        with arca.File(path) as a:
            a.check()
            got = a["s"].asstr()[...].tolist()
            for r in range(size):
                want = ["after"] * 2 + strings_for(r, 0)[2:]
                assert got[r * PER:(r + 1) * PER] == want
else:
    raise SystemExit(f"unknown scenario {scenario}")

comm.Barrier()
if rank == 0:
    print("OK", scenario, size)
