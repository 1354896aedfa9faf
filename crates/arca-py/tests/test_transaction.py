"""Transactions and free-space reporting through the Python API."""

import numpy as np
import pytest

import arca


def test_transaction_commits(tmp_path):
    p = tmp_path / "t.arca"
    with arca.File(p, "w") as f:
        with f.transaction():
            f.create_group("a")
            f["a"].attrs["n"] = 3
    with arca.File(p) as f:
        assert f["a"].attrs["n"] == 3


def test_transaction_rolls_back_on_exception(tmp_path):
    p = tmp_path / "t.arca"
    with arca.File(p, "w") as f:
        f["keep"] = np.arange(10)
        f.flush()
        before = p.read_bytes()
    with arca.File(p, "r+", exact_rollback=True) as f:
        with pytest.raises(RuntimeError):
            with f.transaction():
                f["keep"][:5] = -1
                f.create_group("lost")
                del f["keep"]
                raise RuntimeError("abort")
        assert "lost" not in f
        np.testing.assert_array_equal(f["keep"][...], np.arange(10))
    assert p.read_bytes() == before


def test_nested_failure_rolls_back_everything(tmp_path):
    with arca.File(tmp_path / "n.arca", "w") as f:
        with pytest.raises(ValueError):
            with f.transaction():
                f.create_group("outer")
                try:
                    with f.transaction():
                        f.create_group("inner")
                        raise KeyError("inner")
                except KeyError:
                    pass
        assert "outer" not in f and "inner" not in f


def test_transaction_needs_journal(tmp_path):
    with arca.File(tmp_path / "j.arca", "w", journal=False) as f:
        with pytest.raises(ValueError):
            with f.transaction():
                pass


def test_space_info_reports_freed_space(tmp_path):
    p = tmp_path / "s.arca"
    with arca.File(p, "w") as f:
        for i in range(10):
            f.create_dataset(f"d{i}", data=np.full(10000, i, dtype="f8"))
        for i in range(0, 10, 2):
            del f[f"d{i}"]
    with arca.File(p, "r+") as f:
        info = f.space_info()
        assert info["sections"] >= 4
        assert info["free_bytes"] >= 4 * 80000
        assert info["largest"] <= info["free_bytes"]
        assert 0.0 <= info["fragmentation"] < 1.0
        assert sum(n for _, n, _ in info["histogram"]) == info["sections"]
        assert info["eof"] == p.stat().st_size
    with arca.File(p, "r+", free_list="naive") as f:
        assert f.space_info()["sections"] == info["sections"]
    with pytest.raises(ValueError):
        arca.File(p, "r", free_list="bogus")


def test_compressed_memory_file():
    with arca.File("scratch", "w", driver="memory", compress=True) as f:
        data = np.repeat(np.arange(1 << 14, dtype="f8"), 64)
        f["x"] = data
        f.flush()
        held = f.memory_bytes
        assert held is not None and held * 4 < data.nbytes
        np.testing.assert_array_equal(f["x"][...], data)
    with arca.File("scratch2", "w", driver="memory") as f:
        f["y"] = np.arange(10)
        assert f.memory_bytes >= 80
    with pytest.raises(ValueError):
        arca.File("x", "r", driver="memory")
    with pytest.raises(ValueError):
        arca.File("x", "w", compress=True)
