"""Variable-length data from Python: object arrays as in h5py, the ragged
bulk paths, selections, overwrites, attributes; checked against numpy
reference values and h5py, reopening between steps."""

import h5py
import numpy as np
import pytest

import arca

BASES = ["?", "i1", "<i2", ">i4", "<i8", "u1", ">u2", "<u4", "<u8", "<f4", ">f8"]
CHARS = ["a", "é", "€", "😀", " ", "Z", "\u0000"]


def rand_rows(rng, base, n, big=False):
    rows = []
    for _ in range(n):
        k = int(rng.choice([0, 1, 3, 17, 300 if big else 5]))
        dt = np.dtype(base)
        if dt.kind == "b":
            rows.append(rng.integers(0, 2, k).astype(bool))
        elif dt.kind == "f":
            rows.append((rng.standard_normal(k) * 100).astype(dt))
        else:
            info = np.iinfo(dt)
            rows.append(rng.integers(info.min, info.max, k, dtype=np.int64 if info.min < 0 else np.uint64, endpoint=True).astype(dt))
    return rows


def rand_strings(rng, n, big=False):
    out = []
    for _ in range(n):
        k = int(rng.choice([0, 1, 4, 33, 200 if big else 9]))
        out.append("".join(rng.choice(CHARS, k)))
    return out


def objects(rows):
    a = np.empty(len(rows), dtype=object)
    for i, r in enumerate(rows):
        a[i] = r
    return a


def assert_rows(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
        assert g.dtype == np.dtype(w.dtype).newbyteorder("=")


@pytest.mark.parametrize("base", BASES)
@pytest.mark.parametrize("seed", range(3))
def test_random_ragged_every_base(tmp_path, base, seed):
    rng = np.random.default_rng(seed)
    path = tmp_path / "r.arca"
    n = 40
    model = [np.empty(0, np.dtype(base))] * n
    reuse = bool(seed % 2)
    with arca.File(path, "w") as f:
        f.create_dataset("d", shape=(n,), dtype=arca.vlen_dtype(base), chunks=(7,),
                         vlen_chunk_bytes=64, vlen_reuse_space=reuse)
    for step in range(6):
        a = int(rng.integers(0, n))
        b = int(rng.integers(a, n + 1))
        st = int(rng.integers(1, 4))
        idx = list(range(a, b, st))
        rows = rand_rows(rng, base, len(idx), big=step == 2)
        with arca.File(path, "r+") as f:
            ds = f["d"]
            if step % 2:
                ds[a:b:st] = objects(rows)
            else:
                values = np.concatenate(rows) if rows else np.empty(0, base)
                offs = np.concatenate([[0], np.cumsum([len(r) for r in rows])]).astype(np.int64)
                ds.write_ragged(values, offs, sel=np.s_[a:b:st])
            for i, r in zip(idx, rows):
                model[i] = r
        with arca.File(path, "r") as f:
            ds = f["d"]
            assert_rows(list(ds[...]), model)
            assert_rows(list(ds[1::3]), model[1::3])
            values, offs = ds.read_ragged(np.s_[a:b])
            assert offs[0] == 0 and len(offs) == b - a + 1
            assert_rows([values[offs[i]:offs[i + 1]] for i in range(b - a)], model[a:b])
            if n:
                assert_rows([ds[5]], [model[5]])
    with arca.File(path, "r") as f:
        assert f.check()["datasets"] == 1
        info = f["d"].vlen_info
        assert info["live_bytes"] == sum(r.nbytes for r in model)


@pytest.mark.parametrize("seed", range(4))
def test_strings_partial_and_2d(tmp_path, seed):
    rng = np.random.default_rng(100 + seed)
    path = tmp_path / "s.arca"
    shape = (6, 5)
    model = np.full(shape, "", dtype=object)
    with arca.File(path, "w") as f:
        f.create_dataset("s", shape=shape, dtype=arca.string_dtype(), vlen_chunk_bytes=50,
                         vlen_compression="zstd" if seed % 2 else "lz4")
    for _ in range(5):
        r0, r1 = sorted(rng.integers(0, 7, 2))
        c = int(rng.integers(0, 5))
        vals = np.array(rand_strings(rng, (r1 - r0), big=True), dtype=object)
        with arca.File(path, "r+") as f:
            f["s"][r0:r1, c] = vals
        model[r0:r1, c] = vals
        with arca.File(path) as f:
            got = f["s"].asstr()[...]
            assert got.dtype == object and got.shape == shape
            assert got.tolist() == model.tolist()
            assert f["s"].asstr()[1:5:2, ::2].tolist() == model[1:5:2, ::2].tolist()
            assert f["s"][2, 3] == model[2, 3].encode()  # bytes, as h5py reads them


def test_matches_h5py(tmp_path):
    rng = np.random.default_rng(7)
    strs = np.array(rand_strings(rng, 50), dtype=object)
    rows = objects(rand_rows(rng, "<f4", 50))
    with h5py.File(tmp_path / "h.h5", "w") as h, arca.File(tmp_path / "a.arca", "w") as a:
        for f in (h, a):
            f.create_dataset("s", data=strs, dtype=(h5py if f is h else arca).string_dtype())
            f.create_dataset("r", data=rows, dtype=(h5py if f is h else arca).vlen_dtype(np.float32))
            f["s"][3] = "changed ✓"
            f["r"][4] = np.arange(9, dtype="f4")
    with h5py.File(tmp_path / "h.h5") as h, arca.File(tmp_path / "a.arca") as a:
        assert a["s"][...].tolist() == h["s"][...].tolist()
        assert a["s"].asstr()[...].tolist() == h["s"].asstr()[...].tolist()
        assert type(a["s"][0]) is type(h["s"][0]) is bytes
        assert_rows(list(a["r"][...]), list(h["r"][...]))
        assert a["s"].dtype.metadata == {"vlen": str}
        assert arca.check_vlen_dtype(a["r"].dtype) == np.dtype("f4")


def test_bytes_and_inference(tmp_path):
    with arca.File(tmp_path / "b.arca", "w") as f:
        d = f.create_dataset("b", data=np.array([b"\x00\xff", b"", b"abc"], dtype=object))
        assert d.vlen_base is bytes
        assert d[...].tolist() == [b"\x00\xff", b"", b"abc"]
        s = f.create_dataset("s", data=np.array(["x", "yz"], dtype=object))
        assert s.vlen_base is str
        r = f.create_dataset("r", data=objects([np.arange(3), np.arange(0)]))
        assert r.vlen_base == np.dtype("i8")
        t = f.create_dataset("t", shape=(2,), dtype=str)
        t[...] = ["p", "q"]
        assert t[1] == b"q" and t.asstr()[1] == "q"
        e = f.create_dataset("e", shape=(3,), dtype=arca.string_dtype())
        assert e[...].tolist() == [b"", b"", b""]
        assert e.fillvalue == b""


def test_resizable_log(tmp_path):
    with arca.File(tmp_path / "l.arca", "w") as f:
        d = f.create_dataset("log", shape=(0,), maxshape=(None,), dtype=arca.string_dtype())
        want = []
        for i in range(20):
            n = d.shape[0]
            d.resize(n + 3, axis=0)
            lines = [f"event {i}.{j}" * (j + 1) for j in range(3)]
            d[n:] = lines
            want += lines
        assert d.asstr()[...].tolist() == want


@pytest.mark.parametrize("reuse", [False, True])
def test_overwrite_space(tmp_path, reuse):
    path = tmp_path / "o.arca"
    words = [f"word-{i:03d}" * (1 + i % 4) for i in range(200)]
    with arca.File(path, "w") as f:
        d = f.create_dataset("w", shape=(200,), dtype=arca.string_dtype(),
                             vlen_reuse_space=reuse, vlen_chunk_bytes=512)
        d[...] = words
        first = d.vlen_info["vector_bytes"]
    for rnd in range(4):
        with arca.File(path, "r+") as f:
            f["w"][...] = [w.upper() if rnd % 2 == 0 else w for w in words]
    with arca.File(path, "r+") as f:
        d = f["w"]
        info = d.vlen_info
        assert info["live_bytes"] == first
        if reuse:
            assert info["vector_bytes"] <= 2 * first
        else:
            assert info["vector_bytes"] == 5 * first
        d.vlen_repack()
        assert d.vlen_info["vector_bytes"] == first
        assert d.asstr()[...].tolist() == words
        f.check()


def test_attributes(tmp_path):
    path = tmp_path / "a.arca"
    with arca.File(path, "w") as f:
        f.attrs.create("title", "Ωmega", dtype=arca.string_dtype())
        f.attrs["names"] = np.array(["α", "", "γγ"], dtype=object)
        f.attrs["grid"] = np.array([["a", "b"], ["c", "d"]], dtype=object)
        f.attrs.create("rag", objects([np.arange(3.0), np.arange(0.0)]), dtype=arca.vlen_dtype("f8"))
        f.attrs["plain"] = "fixed"
    with arca.File(path) as f:
        assert f.attrs["title"] == "Ωmega"
        assert f.attrs["names"].tolist() == ["α", "", "γγ"]
        assert f.attrs["grid"].shape == (2, 2) and f.attrs["grid"][1, 0] == "c"
        rag = f.attrs["rag"]
        np.testing.assert_array_equal(rag[0], [0.0, 1.0, 2.0])
        assert rag[1].size == 0
        assert f.attrs["plain"] == "fixed"


def test_errors(tmp_path):
    with arca.File(tmp_path / "e.arca", "w") as f:
        d = f.create_dataset("s", shape=(2,), dtype=arca.string_dtype())
        with pytest.raises(ValueError):
            d.write_ragged(np.frombuffer(b"abc", np.uint8), [0, 2])
        with pytest.raises(ValueError):
            d.write_ragged(np.frombuffer(b"abc", np.uint8), [0, 2, 1])
        with pytest.raises(ValueError):
            d.write_ragged(np.frombuffer(b"a\xff", np.uint8), [0, 1, 2])
        with pytest.raises(ValueError):
            d.read_ragged(np.s_[[0, 1]])
        with pytest.raises(TypeError):
            d[0] = 5
        with pytest.raises(ValueError):
            f.create_dataset("x", shape=(2,), dtype=arca.vlen_dtype("f4"), fillvalue=[1.0])
        with pytest.raises(TypeError):
            f.create_dataset("y", shape=(2,), dtype="f4", vlen_chunk_bytes=10)
        # Sequences of compounds holding references have no arca type.
        with pytest.raises(TypeError):
            arca.vlen_dtype(np.dtype([("r", arca.ref_dtype)]))
        assert d[...].tolist() == [b"", b""]


def test_large_unicode_rows_span_chunks(tmp_path):
    big = "😀" * 5000 + "end"
    with arca.File(tmp_path / "u.arca", "w") as f:
        d = f.create_dataset("u", shape=(3,), dtype=arca.string_dtype(), vlen_chunk_bytes=100,
                             vlen_compression="gzip")
        d[...] = ["", big, "z"]
    with arca.File(tmp_path / "u.arca") as f:
        assert f["u"].asstr()[1] == big
        assert f["u"].vlen_info["chunks"] > 100
        f.check()


def test_copy_keeps_vector_options(tmp_path):
    with arca.File(tmp_path / "c.arca", "w") as f:
        s = f.create_dataset("s", shape=(3,), dtype=arca.string_dtype(), chunks=(2,),
                             vlen_compression="zstd", vlen_compression_opts=5, vlen_shuffle=True,
                             vlen_chunk_bytes=4096, vlen_reuse_space=True)
        s[...] = ["x", "yy", "zzz"]
        r = f.create_dataset("r", shape=(2,), dtype=arca.vlen_dtype("i2"))
        r[...] = [np.arange(3), []]
        f.copy("s", "s2")
        f.copy("r", "r2")
        assert f["s2"][...].tolist() == [b"x", b"yy", b"zzz"]
        assert f["r2"][0].tolist() == [0, 1, 2] and f["r2"][1].size == 0
        info = f["s2"].vlen_info
        assert info["filters"] == [("shuffle", None), ("zstd", 5)]
        assert (info["chunk_bytes"], info["reuse_space"]) == (4096, True)
        assert f["s2"].chunks == (2,)


def test_asstr_like_h5py(tmp_path):
    with arca.File(tmp_path / "s.arca", "w") as f:
        s = f.create_dataset("s", data=np.array(["α", "b"], dtype=object))
        b = f.create_dataset("b", data=np.array([b"x", "é".encode()], dtype=object))
        assert s.asstr()[...].tolist() == ["α", "b"]
        assert b.asstr("utf-8")[...].tolist() == ["x", "é"]
        assert b.asstr("utf-8")[1] == "é"
        with pytest.raises(UnicodeDecodeError):
            b.asstr()[1]  # byte strings decode as ASCII unless told
        assert len(b.asstr()) == 2
        with pytest.raises(TypeError):
            f.create_dataset("r", shape=(1,), dtype=arca.vlen_dtype("f4")).asstr()


def test_large_ragged_read_matches(tmp_path):
    # Over 8 MiB of values: the read buffer takes the huge-page path.
    rng = np.random.default_rng(7)
    lens = rng.integers(0, 8192, 1500)
    offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.uint64)
    values = rng.integers(-(2**31), 2**31, int(offsets[-1]), dtype=np.int32)
    with arca.File(tmp_path / "big.arca", "w") as f:
        ds = f.create_dataset("r", shape=(len(lens),), dtype=arca.vlen_dtype(np.int32))
        ds.write_ragged(values, offsets)
    with arca.File(tmp_path / "big.arca") as f:
        v, o = f["r"].read_ragged()
        assert v.nbytes > 8 << 20
        np.testing.assert_array_equal(o, offsets)
        np.testing.assert_array_equal(v, values)
        v, o = f["r"].read_ragged(np.s_[100:900])
        np.testing.assert_array_equal(v, values[offsets[100] : offsets[900]])
