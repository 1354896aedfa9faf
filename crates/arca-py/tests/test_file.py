"""Files: modes, the context manager, close and flush, reopening, stat,
and the mapping of errors to Python exceptions."""

import os
import pathlib

import h5py
import numpy as np
import pytest

import arca




def test_modes(tmp_path):
    p = tmp_path / "m.arca"
    with pytest.raises(FileNotFoundError):
        arca.File(p)
    with pytest.raises(FileNotFoundError):
        arca.File(p, "r+")
    with arca.File(p, "w-") as f:
        f["x"] = np.arange(3)
        assert f.mode == "r+"
    for mode in ("w-", "x"):
        with pytest.raises(FileExistsError):
            arca.File(p, mode)
    with arca.File(p, "a") as f:
        assert "x" in f
        f["y"] = [1]
    with arca.File(p, "r+") as f:
        assert sorted(f) == ["x", "y"]
        del f["y"]
    with arca.File(p) as f:
        assert f.mode == "r" and list(f) == ["x"]
    with arca.File(p, "w") as f:
        assert len(f) == 0
    with arca.File(tmp_path / "new.arca", "a") as f:
        f.create_group("g")
    with arca.File(tmp_path / "new.arca", "a") as f:
        assert "g" in f
    with pytest.raises(ValueError):
        arca.File(p, "rw")


def test_read_only_refuses_changes(path):
    with arca.File(path, "w") as f:
        f.create_dataset("d", data=np.arange(10), chunks=(4,))
        f.create_dataset("c", data=np.arange(10))
        f.create_group("g")
    with arca.File(path, "r") as f:
        for change in (
            lambda: f.create_group("h"),
            lambda: f.create_dataset("e", shape=(2,)),
            lambda: f["d"].__setitem__(0, 5),
            lambda: f["c"].__setitem__(slice(None), 5),
            lambda: f["d"].resize((20,)),
            lambda: f.__delitem__("g"),
            lambda: f.move("g", "h"),
            lambda: f.attrs.__setitem__("a", 1),
        ):
            with pytest.raises(arca.ReadOnlyError) as e:
                change()
            assert isinstance(e.value, OSError) and isinstance(e.value, arca.ArcaError)
        np.testing.assert_array_equal(f["d"][...], np.arange(10))


def test_context_manager_closes(path):
    with arca.File(path, "w") as f:
        g = f.create_group("g")
        ds = f.create_dataset("d", data=[1, 2, 3])
        assert f and g and ds
    assert not f and not g and not ds
    assert "Closed" in repr(f) and "Closed" in repr(g) and "Closed" in repr(ds)
    for op in (lambda: f["d"], lambda: ds[...], lambda: g.create_group("x"),
               lambda: list(f), lambda: ds.shape, lambda: f.attrs["a"]):
        with pytest.raises(ValueError):
            op()
    f.close()  # closing twice is harmless


def test_context_manager_closes_on_error(path):
    with pytest.raises(RuntimeError):
        with arca.File(path, "w") as f:
            f["x"] = [1, 2]
            raise RuntimeError("boom")
    assert not f
    with arca.File(path) as f:
        np.testing.assert_array_equal(f["x"][...], [1, 2])


def test_flush_and_reopen_bit_exact(path):
    rng = np.random.default_rng(1)
    data = {f"d{i}": rng.standard_normal((rng.integers(1, 50), 7)).astype(dt)
            for i, dt in enumerate(["<f8", ">f4", "<i2", ">u8", "?", "S3"] * 3)}
    f = arca.File(path, "w")
    for k, v in data.items():
        f.create_dataset(k, data=v, chunks=True, compression="zstd" if len(k) % 2 else None)
    f.flush()
    f.close()
    with arca.File(str(path)) as f:
        for k, v in data.items():
            assert f[k].dtype == v.dtype
            assert f[k][...].tobytes() == v.astype(v.dtype.newbyteorder("=")).tobytes()
        f.check()


def test_path_types(tmp_path):
    for p in (str(tmp_path / "a.arca"), tmp_path / "b.arca", os.fsencode(tmp_path / "c.arca")):
        with arca.File(p, "w") as f:
            f["x"] = 1
        with arca.File(p) as f:
            assert f["x"][()] == 1
            assert isinstance(f.filename, str)


def test_stat(f):
    f.create_group("a/b")
    f.create_dataset("a/d", data=np.zeros((100, 100)), chunks=(10, 100), compression="gzip")
    f.attrs["x"] = 1
    f.attrs["y"] = 2
    s = f.stat()
    assert isinstance(s, dict)
    assert s["groups"] == 3 and s["datasets"] == 1 and s["attributes"] == 2
    assert s["chunks"] == 10
    assert s["data_logical_bytes"] == 100 * 100 * 8
    assert s["data_bytes"] < s["data_logical_bytes"]
    for k in ("file_bytes", "metadata_bytes", "unused_bytes", "superblock_bytes"):
        assert s[k] >= 0
    assert f.check()["datasets"] == 1


def test_not_an_arca_file(tmp_path):
    p = tmp_path / "junk.arca"
    p.write_bytes(b"this is not an arca file" * 1000)
    with pytest.raises(arca.CorruptError) as e:
        arca.File(p)
    assert isinstance(e.value, OSError)
    q = tmp_path / "empty.arca"
    q.write_bytes(b"")
    with pytest.raises(OSError):
        arca.File(q)


def test_damaged_chunk_is_reported(path):
    data = np.arange(100_000, dtype="<i8")
    with arca.File(path, "w") as f:
        f.create_dataset("d", data=data, chunks=(10_000,), compression="zstd")
    image = bytearray(pathlib.Path(path).read_bytes())
    # Flip bytes in the second half of the file, where chunk data lives.
    for off in range(len(image) // 2, len(image) - 8192, 997):
        image[off] ^= 0xFF
    pathlib.Path(path).write_bytes(bytes(image))
    with pytest.raises(OSError):
        with arca.File(path) as f:
            f["d"][...]
            f.check()


def test_writer_lock(path):
    f = arca.File(path, "w")
    try:
        with pytest.raises(arca.LockedError):
            arca.File(path, "r+")
    finally:
        f.close()
    with arca.File(path) as a, arca.File(path) as b:
        assert list(a) == list(b) == []


def test_exception_hierarchy():
    assert issubclass(arca.ArcaError, OSError)
    for e in (arca.CorruptError, arca.ReadOnlyError, arca.LockedError, arca.PoisonedError,
              arca.UnsupportedError, arca.NeedsRecoveryError):
        assert issubclass(e, arca.ArcaError)


def test_file_is_root_group(f):
    f.create_group("x")
    assert f.name == "/" and f["/"] == f and f["x"].parent == f
    assert f["/x"] == f["x"]
    assert "mode r+" in repr(f)
    assert f.recovered is False


@pytest.mark.parametrize("lib", [arca, h5py], ids=["arca", "h5py"])
def test_mode_errors_match_h5py(lib, tmp_path):
    p = tmp_path / "peer"
    with pytest.raises(FileNotFoundError):
        lib.File(p, "r")
    with pytest.raises(FileNotFoundError):
        lib.File(p, "r+")
    with lib.File(p, "w-") as f:
        f["x"] = [1]
    with pytest.raises(FileExistsError):
        lib.File(p, "w-")
    with lib.File(p, "r") as f:
        assert f.mode == "r"
        with pytest.raises((ValueError, OSError)):
            f.create_group("g")
    with lib.File(p, "a") as f:
        assert f.mode == "r+" and list(f) == ["x"]


def test_native_layer_in_memory_and_from_bytes(path):
    from arca import _native

    m = _native.File.in_memory()
    ds = m.root().create_dataset("d", "<f8", [4], None, None, [], None)
    ds.write([0], [4], [1], np.arange(4.0).view(np.uint8))
    np.testing.assert_array_equal(ds.read([1], [2], [2]).view("<f8"), [1.0, 3.0])
    out = np.zeros(16, dtype=np.uint8)
    ds.read_into([0], [2], [1], out)
    np.testing.assert_array_equal(out.view("<f8"), [0.0, 1.0])
    with pytest.raises(ValueError):
        ds.read([0], [5], [1])  # out of bounds
    with pytest.raises(ValueError):
        ds.read([0, 0], [1, 1], [1, 1])  # wrong rank
    with pytest.raises(ValueError):
        ds.write([0], [4], [1], np.zeros(3, dtype=np.uint8))  # wrong size
    with pytest.raises(ValueError):
        m.root().create_dataset("e", "<f8", [4], None, None, [("bzip2", None)], None)
    m.close()
    assert m.closed

    with arca.File(path, "w") as f:
        f["x"] = np.arange(6).reshape(2, 3)
    r = _native.File.from_bytes(pathlib.Path(path).read_bytes())
    assert not r.writable
    x = r.root().dataset("x")
    assert x.shape() == [2, 3] and x.dtype() == "<i8"
    np.testing.assert_array_equal(x.read([0, 0], [2, 3], [1, 1]).view("<i8"), np.arange(6))
    assert r.root().members() == [("x", "dataset")]
