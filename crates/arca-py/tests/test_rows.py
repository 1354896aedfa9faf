"""Compound types with variable-length members (strings, byte strings,
ragged sequences, nested), checked against h5py: the same script runs with
``arca`` and with ``h5py`` and must give the same dtypes, values and
errors, before and after reopening."""

import numpy as np
import pytest

import arca
import h5py

from conftest import native, outcome, random_array

S = h5py.string_dtype()


def vlen_member(rng):
    k = rng.integers(0, 4)
    if k == 0:
        return h5py.string_dtype()
    if k == 1:
        return h5py.vlen_dtype(bytes)
    # Little-endian items only: h5py reads and writes the items of a
    # big-endian sequence member as native bytes (a bug of its own);
    # test_big_endian_items_round_trip covers them in arca.
    base = rng.choice(["<i2", "<u4", "<f4", "<f8", "<i8", "u1"])
    return h5py.vlen_dtype(np.dtype(base))


def fixed_member(rng):
    return np.dtype(rng.choice(["<f8", ">i4", "u1", "?", "S5", "<c8", ">u2"]))


def random_dtype(rng, depth=0):
    """A compound with at least one variable-length member, random fixed
    members around it, maybe a nested compound, maybe gaps."""
    names, formats = [], []
    for i in range(rng.integers(1, 5)):
        r = rng.random()
        if r < 0.45:
            t = vlen_member(rng)
        elif r < 0.55 and depth == 0:
            t = random_dtype(rng, 1)
        else:
            t = fixed_member(rng)
        names.append(f"m{i}")
        formats.append(t)
    names.append("s")
    formats.append(S)
    if rng.random() < 0.3:
        # Explicit offsets with gaps, as numpy allows.
        offsets, at = [], 0
        for t in formats:
            at += int(rng.integers(0, 4))
            offsets.append(at)
            at += t.itemsize
        return np.dtype({"names": names, "formats": formats, "offsets": offsets,
                         "itemsize": at + 2})
    return np.dtype(list(zip(names, formats)))


def fill(rng, arr):
    """Random values in every member of a structured array."""
    dt = arr.dtype
    for n in dt.names:
        t = dt.fields[n][0]
        col = arr[n]
        base = h5py.check_vlen_dtype(t)
        if t.names:
            fill(rng, col)
        elif base is str or base is bytes:
            words = ["", "a", "é", "zz", "€uro", "long " * 5]
            vals = [words[i].encode() for i in rng.integers(0, len(words), col.size)]
            flat = col.reshape(-1)
            for i, v in enumerate(vals):
                flat[i] = v
        elif base is not None:
            flat = col.reshape(-1)
            for i in range(col.size):
                flat[i] = random_array(rng, (int(rng.integers(0, 5)),), base)
        else:
            col[...] = random_array(rng, col.shape, t)


def same_rows(x, y):
    """Equal values member by member: bytes equal, sequences equal in
    values and item type; numbers compared in native byte order (arca
    reads them so, h5py in the file's order)."""
    x, y = np.asarray(x), np.asarray(y)
    assert x.shape == y.shape, (x.shape, y.shape)
    if y.dtype.names:
        assert x.dtype.names == y.dtype.names
        for n in y.dtype.names:
            same_rows(x[n], y[n])
    elif y.dtype.kind == "O":
        for a, b in zip(x.reshape(-1), y.reshape(-1)):
            if isinstance(b, np.ndarray):
                assert isinstance(a, np.ndarray) and native(a.dtype) == native(b.dtype)
                assert np.array_equal(a, b)
            else:
                assert type(a) is type(b) and a == b, (a, b)
    else:
        assert native(x.dtype) == native(y.dtype)
        assert x.astype(native(x.dtype)).tobytes() == y.astype(native(y.dtype)).tobytes()


def run(lib, path, script):
    with lib.File(path, "w") as f:
        first = script(lib, f, False)
    with lib.File(path, "r") as f:
        second = script(lib, f, True)
    return first + second


def same(tmp_path, script):
    a = run(arca, tmp_path / "t.arca", script)
    h = run(h5py, tmp_path / "t.h5", script)
    assert len(a) == len(h)
    for x, y in zip(a, h):
        if isinstance(y, np.dtype):
            assert x == y, (x, y)
        elif isinstance(y, (str, type(None), tuple, int)):
            assert x == y, (x, y)
        else:
            same_rows(x, y)


@pytest.mark.parametrize("seed", range(48))
def test_random_compounds_with_vlen_members_match_h5py(tmp_path, seed):
    rng = np.random.default_rng(7000 + seed)
    dt = random_dtype(rng)
    shape = [(), (6,), (3, 4)][seed % 3]
    data = np.zeros(shape, dtype=dt)
    fill(rng, data)
    later = np.zeros(shape, dtype=dt)
    fill(rng, later)
    chunked = bool(shape) and seed % 2 == 0

    def script(lib, f, reopened):
        if not reopened:
            kw = {}
            if chunked:
                kw = {"chunks": tuple(max(1, s // 2) for s in shape), "compression": "gzip"}
            d = f.create_dataset("d", data=data, **kw)
            f.attrs["a"] = data
            if shape:
                # Overwrite the first row: old values make way for new ones.
                d[0] = later[0]
        d = f["d"]
        out = [d.dtype, d[()], f.attrs["a"]]
        if shape:
            out.append(d[1:])
        return out

    same(tmp_path, script)


EVENT = np.dtype([("t", "<f8"), ("det", S), ("hits", h5py.vlen_dtype("<u2"))])


def test_rows_read_and_write_like_h5py(tmp_path):
    def script(lib, f, reopened):
        if not reopened:
            d = f.create_dataset("ev", (4,), dtype=EVENT, maxshape=(None,), chunks=(2,))
            d[1] = (1.5, "north", np.array([3, 9], "u2"))
            d[2:4] = np.array([(2.0, b"s", np.arange(3, dtype="u2")),
                               (3.0, "", np.zeros(0, "u2"))], dtype=EVENT)
            d.resize((6,))
            d[5] = (9.0, "é", np.array([1, 2], "u2"))
        d = f["ev"]
        return [
            d.dtype, d[...], d[0], d[1], d["t"], d[::2],
            d.fillvalue if lib is arca else d[0],
            outcome(lambda: len(d)),
        ]

    same(tmp_path, script)


def test_bad_member_values_are_refused_like_h5py(tmp_path):
    for lib in (arca, h5py):
        with lib.File(tmp_path / f"e.{lib.__name__}", "w") as f:
            d = f.create_dataset("ev", (2,), dtype=EVENT)
            # An integer where a string belongs, then too few members.
            e1 = outcome(lambda: d.__setitem__(0, (1.0, 5, [1])))
            e2 = outcome(lambda: d.__setitem__(0, (1.0,)))
            assert (e1, e2) != (None, None)
            assert d[0]["det"] == b""
    # Both refuse; arca's errors are the types numpy and arca raise.
    assert e1 == "TypeError"


def test_vector_storage_and_repack(tmp_path):
    with arca.File(tmp_path / "v.arca", "w") as f:
        d = f.create_dataset("ev", (100,), dtype=EVENT, chunks=(10,),
                             vlen_compression="zstd")
        rows = np.zeros(100, EVENT)
        rows["det"] = [b"detector-%d" % i for i in range(100)]
        for i in range(100):
            rows[i]["hits"] = np.arange(i % 7, dtype="u2")
        d[...] = rows
        d[...] = rows  # a second copy of every value, now garbage
        info = d.vlen_info
        assert info["vector_bytes"] == 2 * info["live_bytes"]
        assert info["filters"] == [("zstd", 3)]
        d.vlen_repack()
        assert d.vlen_info["vector_bytes"] == d.vlen_info["live_bytes"]
        same_rows(d[...], rows)
    with arca.File(tmp_path / "v.arca") as f:
        same_rows(f["ev"][...], rows)
        assert isinstance(f["ev"], arca.Dataset)


def test_big_endian_items_round_trip(tmp_path):
    dt = np.dtype([("v", arca.vlen_dtype(np.dtype(">i2"))), ("w", arca.vlen_dtype(">f8")),
                   ("n", ">u4")])
    x = np.zeros(2, dt)
    x[0] = (np.array([1, 2, -3], ">i2"), np.array([0.5], "<f8"), 7)
    x[1] = ([], [1.0, -2.0], 8)
    with arca.File(tmp_path / "be.arca", "w") as f:
        f["d"] = x
        f.attrs["a"] = x
    with arca.File(tmp_path / "be.arca") as f:
        # Sequence members take 16 bytes in memory, as in h5py's dtypes.
        got = f["d"].dtype
        assert got.names == dt.names and got.itemsize == 36
        assert arca.check_vlen_dtype(got["v"]) == np.dtype(">i2")
        for got in (f["d"][...], f.attrs["a"]):
            assert got[0]["v"].tolist() == [1, 2, -3]
            assert got[1]["w"].tolist() == [1.0, -2.0]
            assert got["n"].tolist() == [7, 8]
