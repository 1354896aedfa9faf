"""pyarrow in and out of variable-length datasets (needs pyarrow, installed
by ``make vlen-arrow-test``)."""

import numpy as np
import pyarrow as pa
import pytest

import arca


def test_strings_round_trip(tmp_path):
    src = pa.array(["α", "", "beta", "😀" * 50, "z"])
    with arca.File(tmp_path / "a.arca", "w") as f:
        d = f.create_dataset("s", shape=(5,), dtype=arca.string_dtype())
        d.write_arrow(src)
        got = d.read_arrow()
        assert pa.types.is_large_string(got.type)
        assert got.to_pylist() == src.to_pylist()
        # A sliced, 64-bit-offset array (offsets not starting at 0).
        big = pa.array(["x", "yy", "zzz", "wwww"], pa.large_string()).slice(1, 2)
        d.write_arrow(big, sel=np.s_[1:3])
        # Strings read as bytes, as in h5py; asstr() decodes them.
        assert d.asstr()[...].tolist() == ["α", "yy", "zzz", "😀" * 50, "z"]
        assert d.read_arrow(np.s_[::2]).to_pylist() == ["α", "zzz", "z"]


def test_binary_and_chunked(tmp_path):
    with arca.File(tmp_path / "b.arca", "w") as f:
        d = f.create_dataset("b", shape=(4,), dtype=arca.vlen_dtype(bytes))
        d.write_arrow(pa.chunked_array([pa.array([b"\x00", b""]), pa.array([b"ab", b"\xff" * 9])]))
        assert d[...].tolist() == [b"\x00", b"", b"ab", b"\xff" * 9]
        got = d.read_arrow()
        assert pa.types.is_large_binary(got.type)


@pytest.mark.parametrize("t", [pa.float32(), pa.int64(), pa.uint16(), pa.float64(), pa.int8()])
@pytest.mark.parametrize("large", [False, True])
def test_lists(tmp_path, t, large):
    rows = [[1, 2, 3], [], [4], list(range(100))]
    lt = pa.large_list(t) if large else pa.list_(t)
    src = pa.array(rows, lt)
    with arca.File(tmp_path / "l.arca", "w") as f:
        d = f.create_dataset("r", shape=(4,), dtype=arca.vlen_dtype(t.to_pandas_dtype()))
        d.write_arrow(src)
        got = d.read_arrow()
        assert got.to_pylist() == rows
        # Zero-copy: the child's buffer is the array read_ragged made.
        values, offsets = d.read_ragged()
        assert offsets.tolist() == [0, 3, 3, 4, 104]
        np.testing.assert_array_equal(values, np.concatenate([np.asarray(r) for r in rows]))
        d.write_arrow(src.slice(2, 2), sel=np.s_[0:2])
        assert d.read_arrow().to_pylist() == [[4], list(range(100)), [4], list(range(100))]


def test_nulls_refused(tmp_path):
    with arca.File(tmp_path / "n.arca", "w") as f:
        d = f.create_dataset("s", shape=(2,), dtype=arca.string_dtype())
        with pytest.raises(ValueError):
            d.write_arrow(pa.array(["a", None]))
        with pytest.raises(TypeError):
            d.write_arrow(pa.array([1, 2]))
        assert d.asstr()[...].tolist() == ["", ""]
