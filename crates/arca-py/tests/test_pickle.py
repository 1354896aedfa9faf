"""Read-only files, groups and datasets pickle (and cloudpickle): in
another process they open the same path and find the same object, so
multiprocessing and dask workers can use them."""

import multiprocessing
import pickle
import subprocess
import sys

import cloudpickle
import numpy as np
import pytest

import arca

CHILD = """
import pickle, sys
obj = pickle.loads(sys.stdin.buffer.read())
print(obj.name, float(obj[()].sum()), obj.attrs["unit"], obj.file.mode)
"""


@pytest.fixture
def path(tmp_path):
    p = tmp_path / "p.arca"
    with arca.File(p, "w") as f:
        d = f.create_dataset("g/x", data=np.arange(1000.0).reshape(10, 100), chunks=(2, 100),
                             compression="zstd")
        d.attrs["unit"] = "K"
    return p


def _row_sum(ds_and_row):
    ds, row = ds_and_row
    return float(ds[row].sum())


def test_objects_pickle_within_a_process(path):
    with arca.File(path, "r") as f:
        for obj in (f, f["g"], f["g/x"]):
            back = pickle.loads(pickle.dumps(obj))
            assert type(back) is type(obj) and back.name == obj.name
        x = pickle.loads(pickle.dumps(f["g/x"]))
        assert np.array_equal(x[()], f["g/x"][()]) and x.chunks == (2, 100)
        # One open file per path in the process, whatever is unpickled.
        assert pickle.loads(pickle.dumps(f["g"])).file is x.file


@pytest.mark.parametrize("dumps", [pickle.dumps, cloudpickle.dumps])
def test_a_dataset_crosses_to_another_process(path, dumps):
    with arca.File(path, "r") as f:
        blob = dumps(f["g/x"])
    r = subprocess.run([sys.executable, "-c", CHILD], input=blob, capture_output=True)
    assert r.returncode == 0, r.stderr.decode()
    assert r.stdout.decode().split() == ["/g/x", str(float(np.arange(1000.0).sum())), "K", "r"]


def test_a_process_pool_reads_a_dataset(path):
    with arca.File(path, "r") as f:
        ds = f["g/x"]
        ctx = multiprocessing.get_context("spawn")
        with ctx.Pool(2) as pool:
            sums = pool.map(_row_sum, [(ds, i) for i in range(10)])
        assert sums == [float(r.sum()) for r in ds[()]]


def test_writable_and_memory_files_refuse_to_pickle(path, tmp_path):
    with arca.File(path, "r+") as f:
        with pytest.raises(TypeError, match="read-only"):
            pickle.dumps(f["g/x"])
    with arca.File("m", "w", driver="memory") as f:
        with pytest.raises(TypeError):
            pickle.dumps(f)
    f = arca.File(path, "r")
    g = f["g"]
    f.close()
    with pytest.raises(ValueError):
        pickle.dumps(g)
