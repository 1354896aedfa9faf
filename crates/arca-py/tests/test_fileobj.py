"""Files in Python file-like objects and the ``core`` driver, checked
against h5py doing the same."""

import io
import os

import numpy as np
import pytest

import arca
import h5py


def script(lib, f):
    f["x"] = np.arange(10)
    f.create_group("g/h").attrs["k"] = 3
    f["g/s"] = lib.SoftLink("/x")


def check(f):
    return [f["x"][2:4].tolist(), int(f["g/h"].attrs["k"]), f["g/s"][0], sorted(f)]


@pytest.mark.parametrize("lib", [arca, h5py])
def test_bytesio_round_trip(lib):
    b = io.BytesIO()
    with lib.File(b, "w") as f:
        script(lib, f)
    assert b.getvalue()
    with lib.File(b, "r") as f:
        got = check(f)
    assert got == [[2, 3], 3, 0, ["g", "x"]]
    # A copy of the bytes is the same file.
    with lib.File(io.BytesIO(b.getvalue()), "r+") as f:
        f["y"] = np.ones(2)
        assert sorted(f) == ["g", "x", "y"]


def test_real_files_and_read_only_objects(tmp_path):
    p = tmp_path / "f.arca"
    with open(p, "w+b") as fh:
        with arca.File(fh, "w") as f:
            script(arca, f)
    with open(p, "rb") as fh, arca.File(fh) as f:
        assert check(f) == [[2, 3], 3, 0, ["g", "x"]]
        with pytest.raises(arca.ReadOnlyError):
            f["new"] = 1
    # The file holds an ordinary arca file.
    with arca.File(p) as f:
        f.check()


def test_modes_on_objects():
    with pytest.raises(FileExistsError):
        b = io.BytesIO(b"x")
        arca.File(b, "w-")
    with pytest.raises(arca.CorruptError):
        arca.File(io.BytesIO(b"not an arca file at all" * 300), "r")
    b = io.BytesIO()
    with arca.File(b, "a") as f:
        f["a"] = 1
    with arca.File(b, "a") as f:
        assert f["a"][()] == 1


class Failing(io.BytesIO):
    """A file-like object whose writes fail after a while."""

    def __init__(self, limit):
        super().__init__()
        self.limit = limit

    def write(self, data):
        self.limit -= 1
        if self.limit < 0:
            raise OSError("disk full (simulated)")
        return super().write(data)


def test_a_failing_object_gives_a_typed_error():
    b = Failing(limit=10_000)
    f = arca.File(b, "w")
    b.limit = 0
    with pytest.raises(OSError):
        f["x"] = np.arange(100_000)
        f.flush()


@pytest.mark.parametrize("lib", [arca, h5py])
def test_core_driver_backing_store(tmp_path, lib):
    p = str(tmp_path / ("c" + (".arca" if lib is arca else ".h5")))
    with lib.File(p, "w", driver="core", backing_store=True) as f:
        script(lib, f)
    assert os.path.getsize(p) > 0
    with lib.File(p, "r") as f:
        assert check(f) == [[2, 3], 3, 0, ["g", "x"]]
    # Without a backing store, changes stay in memory.
    with lib.File(p, "a", driver="core", backing_store=False) as f:
        f["gone"] = 1
        assert "gone" in f
    with lib.File(p, "r") as f:
        assert "gone" not in f


def test_threads_share_a_file_in_an_object():
    """The driver takes the GIL while the file's lock is held, and other
    threads wait for that lock without the GIL: no deadlock."""
    import threading

    b = io.BytesIO()
    with arca.File(b, "w") as f:
        for i in range(8):
            f.create_dataset(f"d{i}", data=np.arange(20_000) + i, chunks=(1000,),
                             compression="zstd")
    f = arca.File(b, "r")
    errors = []

    def work(k):
        try:
            for _ in range(20):
                for i in range(8):
                    assert f[f"d{i}"][k * 10] == k * 10 + i
                f.memory_bytes  # noqa: B018 -- touches the file's lock
                f.recovered  # noqa: B018
        except Exception as e:  # noqa: BLE001 -- reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "threads did not finish"
    assert not errors, errors
    f.close()
