"""Datasets side by side with h5py: the same script run on both libraries
gives the same results and raises the same error types."""

import h5py
import numpy as np
import pytest

import arca
from conftest import same_in_both


def _every_kind(lib, f):
    """One dataset of every kind of type and shape."""
    f.create_dataset("fixed", data=np.arange(6).reshape(2, 3))
    f.create_dataset("scalar", data=2.5)
    f.create_dataset("empty", data=lib.Empty("f4"))
    f.create_dataset("str", data=["a", "bc"], dtype=lib.string_dtype())
    f.create_dataset("bytes", data=[b"a", b"bc"], dtype=lib.string_dtype("ascii"))
    f.create_dataset("ragged", shape=(2,), dtype=lib.vlen_dtype("i4"))
    f.create_dataset("rows", shape=(2,),
                     dtype=np.dtype([("i", "i4"), ("s", lib.string_dtype())]))
    f.create_dataset("fixed_str", data=np.array([b"ab", b"c"]))


KINDS = ["fixed", "scalar", "empty", "str", "bytes", "ragged", "rows", "fixed_str"]


def test_every_dataset_is_a_dataset(tmp_path):
    # A library reading files dispatches on the exact class (anndata does).
    def script(lib, f, reopened):
        if not reopened:
            _every_kind(lib, f)
        out = [type(f[k]) is lib.Dataset for k in KINDS]
        out.append(f.get("ragged", getclass=True) is lib.Dataset)
        seen = []
        f.visititems(lambda n, o: seen.append((n, type(o) is lib.Dataset)))
        return out, sorted(seen)

    same_in_both(tmp_path, script)


def test_bulk_paths_only_for_variable_length(path):
    with arca.File(path, "w") as f:
        _every_kind(arca, f)
        ragged = f["ragged"]
        ragged.write_ragged(np.array([1, 2, 3], "i4"), np.array([0, 1, 3]))
        values, offsets = ragged.read_ragged()
        assert values.tolist() == [1, 2, 3] and offsets.tolist() == [0, 1, 3]
        assert f["str"].vlen_base is str and f["fixed"].vlen_base is None
        assert f["rows"].vlen_info["live_bytes"] == 0
        f["rows"].vlen_repack()
        for k in ("fixed", "scalar", "fixed_str", "rows"):
            ds = f[k]
            with pytest.raises(TypeError):
                ds.read_ragged()
            with pytest.raises(TypeError):
                ds.write_ragged(np.zeros(0, "i4"), np.zeros(1, "i8"))
            with pytest.raises(TypeError):
                ds.read_arrow()
            with pytest.raises(TypeError):
                ds.write_arrow(None)
        for k in ("fixed", "scalar", "fixed_str"):
            with pytest.raises(TypeError):
                f[k].vlen_info  # noqa: B018
            with pytest.raises(TypeError):
                f[k].vlen_repack()


def test_copy_keeps_byte_vector_options(path):
    with arca.File(path, "w") as f:
        f.create_dataset("s", data=["x"] * 10, dtype=arca.string_dtype(),
                         vlen_chunk_bytes=4096, vlen_compression="zstd")
        f.copy("s", "t")
        assert f["t"].vlen_info["chunk_bytes"] == f["s"].vlen_info["chunk_bytes"] == 4096
        assert f["t"].vlen_info["filters"] == f["s"].vlen_info["filters"]
        assert f["t"][...].tolist() == ["x"] * 10
