"""Datasets: creation options, properties, resize, fill values, byte order,
scalar and string datasets, list and mask indexing, direct reads."""

import h5py
import numpy as np
import pytest

import arca
from conftest import assert_same


def test_properties_match_h5py(pair):
    f, h = pair
    kw = dict(shape=(10, 20), dtype="<i2", chunks=(5, 4), maxshape=(None, 40),
              compression="gzip", compression_opts=6, shuffle=True, fillvalue=-3)
    d, hd = f.create_dataset("d", **kw), h.create_dataset("d", **kw)
    for attr in ("shape", "dtype", "chunks", "maxshape", "compression",
                 "compression_opts", "shuffle", "ndim", "size", "nbytes", "name"):
        assert getattr(d, attr) == getattr(hd, attr), attr
    assert d.fillvalue == hd.fillvalue == -3
    assert len(d) == len(hd) == 10
    assert_same(d[...], hd[...])
    c = f.create_dataset("c", shape=(3,), dtype="f8")
    hc = h.create_dataset("c", shape=(3,), dtype="f8")
    for attr in ("chunks", "maxshape", "compression", "compression_opts", "shuffle", "fillvalue"):
        assert getattr(c, attr) == getattr(hc, attr), attr


def test_default_dtype_is_float32(f):
    assert f.create_dataset("x", shape=(4,)).dtype == np.dtype("f4")


@pytest.mark.parametrize("comp", ["gzip", "zstd", "lz4"])
def test_compression_settings(f, comp):
    data = np.tile(np.arange(1000, dtype="<u4"), 50)
    ds = f.create_dataset("x", data=data, compression=comp, chunks=(5000,))
    assert ds.compression == comp
    assert ds.compression_opts == {"gzip": 4, "zstd": 3, "lz4": None}[comp]
    assert ds.storage_size < data.nbytes
    assert_same(ds[...], data)


def test_gzip_integer_shorthand(f):
    ds = f.create_dataset("x", data=np.zeros(100), compression=9)
    assert ds.compression == "gzip" and ds.compression_opts == 9 and ds.chunks is not None


def test_auto_chunks(f):
    ds = f.create_dataset("x", shape=(4000, 3000), dtype="f8", chunks=True)
    assert ds.chunks is not None and len(ds.chunks) == 2
    assert np.prod(ds.chunks) * 8 <= 1 << 20
    e = f.create_dataset("e", shape=(0,), maxshape=(None,), dtype="u1")
    assert e.chunks is not None


def test_bad_creation_options(f):
    with pytest.raises(ValueError):
        f.create_dataset("a", shape=(4,), compression="bzip2")
    with pytest.raises(ValueError):
        f.create_dataset("a", shape=(4,), compression="gzip", compression_opts=12)
    with pytest.raises(ValueError):
        f.create_dataset("a", shape=(4,), compression="zstd", compression_opts=99)
    with pytest.raises(ValueError):
        f.create_dataset("a", shape=(4,), compression="lz4", compression_opts=1)
    with pytest.raises(ValueError):
        f.create_dataset("a", shape=(4,), chunks=(2, 2))
    with pytest.raises(ValueError):
        f.create_dataset("a", shape=(4,), chunks=(0,))
    with pytest.raises(ValueError):
        f.create_dataset("a", shape=(4,), chunks=(8,))
    with pytest.raises(ValueError):
        f.create_dataset("a", shape=(4,), maxshape=(3,))
    with pytest.raises(ValueError):
        f.create_dataset("a", shape=(4,), maxshape=(None, None))
    with pytest.raises(ValueError):
        f.create_dataset("a", shape=(4,), chunks=False, compression="gzip")
    with pytest.raises(ValueError):
        f.create_dataset("a", shape=(4,), data=np.arange(5))
    with pytest.raises(ValueError):
        f.create_dataset("a", shape=(-1,))
    with pytest.raises(TypeError):
        f.create_dataset("a")
    with pytest.raises(TypeError):
        f.create_dataset("a", shape=(), chunks=True)
    for bad in ("U5", "O", "M8[s]"):
        with pytest.raises(TypeError):
            f.create_dataset("a", shape=(2,), dtype=bad)
    with pytest.raises(TypeError):
        f.create_dataset("a", data=[object()])
    assert len(f) == 0


def test_data_reshaped_to_shape(f):
    ds = f.create_dataset("x", shape=(2, 3), data=np.arange(6))
    np.testing.assert_array_equal(ds[...], np.arange(6).reshape(2, 3))
    ds2 = f.create_dataset("y", data=[1.5, 2.5], dtype="f4")
    assert ds2.dtype == np.dtype("f4")


def test_require_dataset(f):
    ds = f.require_dataset("x", (3, 4), "i4")
    assert f.require_dataset("x", (3, 4), "i4") == ds
    assert f.require_dataset("x", (3, 4), "i2") == ds  # i2 fits in i4
    with pytest.raises(TypeError):
        f.require_dataset("x", (3, 4), "i2", exact=True)
    with pytest.raises(TypeError):
        f.require_dataset("x", (3, 5), "i4")
    with pytest.raises(TypeError):
        f.require_dataset("x", (3, 4), "f8")
    f.create_group("g")
    with pytest.raises(TypeError):
        f.require_dataset("g", (1,), "i4")
    new = f.require_dataset("n", (2,), "u1", fillvalue=7)
    np.testing.assert_array_equal(new[...], [7, 7])


@pytest.mark.parametrize("dtype,fill", [("<i4", -7), (">i8", 123456789012), ("<f4", 1.5),
                                        (">f8", -0.25), ("?", True), ("S3", b"ab"), ("u1", 255)])
def test_fill_values(pair, dtype, fill):
    f, h = pair
    for chunks in (None, (3, 2)):
        name = f"d{chunks is None}"
        d = f.create_dataset(name, shape=(7, 5), dtype=dtype, chunks=chunks, fillvalue=fill)
        hd = h.create_dataset(name, shape=(7, 5), dtype=dtype, chunks=chunks, fillvalue=fill)
        assert d.fillvalue == hd.fillvalue
        assert_same(d[...], hd[...])
        d[2:4, 1] = np.zeros(2, dtype=dtype)
        hd[2:4, 1] = np.zeros(2, dtype=dtype)
        assert_same(d[...], hd[...])


@pytest.mark.parametrize("layout", ["chunked", "contiguous", "compact"])
def test_fill_time_as_hdf5_reports_it(pair, layout):
    """HDF5's fill time is kept and reported as h5py's property list does;
    with "never" the fill value is recorded and unwritten elements read as
    zeros (HDF5 leaves them as whatever the reader's buffer held)."""
    f, h = pair
    for when in ("ifset", "alloc", "never"):
        kw = dict(shape=(6,), dtype="f4", fillvalue=4.0, fill_time=when)
        kw.update(chunks=(4,)) if layout == "chunked" else kw.update(layout=layout)
        d = f.create_dataset(f"{when}_{layout}", **{k: v for k, v in kw.items()})
        hd = h.create_dataset(f"{when}_{layout}", **{k: v for k, v in kw.items() if k != "layout"})
        plist, hplist = d.id.get_create_plist(), hd.id.get_create_plist()
        assert plist.get_fill_time() == hplist.get_fill_time()
        assert plist.fill_value_defined() == hplist.fill_value_defined()
        assert d.fillvalue == hd.fillvalue == 4.0
        d[:2] = [1, 2]
        want = [1, 2] + [0 if when == "never" else 4] * 4
        np.testing.assert_array_equal(d[...], want)
    name = f.filename
    f.close()
    with arca.File(name) as g:
        d = g[f"never_{layout}"]
        assert d.id.get_create_plist().get_fill_time() == h5py.h5d.FILL_TIME_NEVER
        assert d.fillvalue == 4.0
        np.testing.assert_array_equal(d[...], [1, 2, 0, 0, 0, 0])
        assert g[f"alloc_{layout}"].id.get_create_plist().get_fill_time() == h5py.h5d.FILL_TIME_ALLOC


def test_fill_value_must_be_one_element(f):
    with pytest.raises(ValueError):
        f.create_dataset("x", shape=(3,), dtype="i4", fillvalue=[1, 2])


def test_resize_with_fill(pair):
    f, h = pair
    kw = dict(shape=(4, 3), maxshape=(None, 6), dtype="i4", chunks=(2, 2), fillvalue=9)
    d, hd = f.create_dataset("d", **kw), h.create_dataset("d", **kw)
    data = np.arange(12).reshape(4, 3)
    d[...] = data
    hd[...] = data
    for shape in [(10, 3), (10, 6), (3, 6), (3, 2), (8, 5)]:
        d.resize(shape)
        hd.resize(shape)
        assert d.shape == hd.shape == shape
        assert_same(d[...], hd[...])
    d.resize(12, axis=0)
    hd.resize(12, axis=0)
    assert_same(d[...], hd[...])
    with pytest.raises(ValueError):
        d.resize((5, 7))
    with pytest.raises(ValueError):
        d.resize((5,))
    with pytest.raises(ValueError):
        d.resize(3, axis=2)


def test_resize_appending_and_reopen(path):
    with arca.File(path, "w") as f:
        ds = f.create_dataset("log", shape=(0,), maxshape=(None,), dtype="<f8", chunks=(100,))
        total = []
        rng = np.random.default_rng(5)
        for _ in range(30):
            part = rng.standard_normal(int(rng.integers(1, 250)))
            n = ds.shape[0]
            ds.resize(n + len(part), axis=0)
            ds[n:] = part
            total.append(part)
    ref = np.concatenate(total)
    with arca.File(path) as f:
        assert_same(f["log"][...], ref)
        assert f["log"].maxshape == (None,)


def test_contiguous_cannot_resize(f):
    ds = f.create_dataset("x", shape=(4,), dtype="i4")
    with pytest.raises(TypeError):
        ds.resize((8,))


@pytest.mark.parametrize("dtype", [">i2", ">u4", ">i8", ">f4", ">f8", "<f8", "<i4"])
def test_byte_order(pair, dtype):
    f, h = pair
    data = np.arange(-20, 20).astype(dtype).reshape(5, 8)
    d = f.create_dataset("d", data=data)
    hd = h.create_dataset("d", data=data)
    c = f.create_dataset("c", data=data, chunks=(2, 3), compression="gzip", shuffle=True)
    assert d.dtype == hd.dtype == np.dtype(dtype)
    for ds in (d, c):
        got = ds[...]
        assert got.dtype.isnative
        np.testing.assert_array_equal(got, data)
        np.testing.assert_array_equal(got, hd[...])
        ds[1:3, ::3] = np.array([[1000, 2000, 3000]] * 2, dtype=dtype)
    hd[1:3, ::3] = np.array([[1000, 2000, 3000]] * 2, dtype=dtype)
    np.testing.assert_array_equal(d[...], hd[...])
    np.testing.assert_array_equal(c[...], hd[...])
    # Native-order input to a big-endian dataset is converted, too.
    d[0] = np.arange(8, dtype=np.dtype(dtype).newbyteorder("="))
    np.testing.assert_array_equal(d[0], np.arange(8))


def test_big_endian_survives_reopen(path):
    data = np.linspace(0, 1, 50).astype(">f8")
    with arca.File(path, "w") as f:
        f["be"] = data
    with arca.File(path) as f:
        assert f["be"].dtype == np.dtype(">f8")
        assert f["be"][...].tobytes() == data.astype("<f8").tobytes()


def test_scalar_dataset(pair):
    f, h = pair
    for g in (f, h):
        g.create_dataset("s", data=np.int16(-5))
    s, hs = f["s"], h["s"]
    assert s.shape == hs.shape == ()
    assert s[()] == hs[()] == -5 and isinstance(s[()], np.int16)
    assert s[...].shape == hs[...].shape == ()
    assert isinstance(s[...], np.ndarray)
    s[()] = 7
    assert s[()] == 7
    s[...] = 8
    assert s[()] == 8
    with pytest.raises(TypeError):
        len(s)
    with pytest.raises(TypeError):
        iter(s).__next__()
    for g in (s, hs):  # h5py's errors for anything but () and ...
        with pytest.raises(ValueError):
            g[0]
        with pytest.raises(ValueError):
            g[0:1]
        with pytest.raises(TypeError):
            g[None]


def test_string_dataset(pair):
    f, h = pair
    data = np.array([b"alpha", b"be", b"", b"gamma12"], dtype="S7")
    d, hd = f.create_dataset("s", data=data), h.create_dataset("s", data=data)
    assert d.dtype == hd.dtype == np.dtype("S7")
    assert_same(d[...], hd[...])
    assert d[1] == hd[1] == b"be"
    d[2] = "xyz"
    hd[2] = b"xyz"
    d[3] = b"toolongvalue"  # truncated, as numpy does
    assert d[2] == b"xyz" and d[3] == b"toolong"
    for g in (f, h):
        with pytest.raises(TypeError):
            g["u"] = np.array(["ä", "bc"])  # numpy unicode arrays: no conversion, as in h5py
        g["v"] = ["ä", "bc"]  # str data makes variable-length UTF-8 strings
    assert f["v"][0] == h["v"][0] == "ä".encode()
    assert f["v"].asstr()[...].tolist() == ["ä", "bc"]


def test_bool_dataset(f):
    data = np.array([True, False, True, True])
    ds = f.create_dataset("b", data=data, chunks=(3,), compression="lz4")
    assert ds.dtype == np.dtype("?")
    np.testing.assert_array_equal(ds[...], data)
    ds[1] = 1
    assert ds[1] is np.True_ or ds[1] == True  # noqa: E712


def test_list_and_bool_indexing(pair):
    f, h = pair
    rng = np.random.default_rng(9)
    ref = rng.integers(0, 100, (20, 30, 4)).astype("i4")
    d = f.create_dataset("d", data=ref, chunks=(7, 8, 2))
    hd = h.create_dataset("d", data=ref, chunks=(7, 8, 2))
    for idx in ([1, 5, 6, 19], [0], [3, 10, 29], [-20, 2, -1], []):
        k = (slice(None), idx) if max(idx, default=0) >= 20 else (idx,)
        np.testing.assert_array_equal(d[k], hd[k])
        np.testing.assert_array_equal(d[k], ref[k])
    sparse = [0, 1000 % 30, 29]
    np.testing.assert_array_equal(d[2, sparse, 1:3], ref[2, sparse, 1:3])
    # An integer and a list apart keep the list's axis where it is (h5py's
    # rule; numpy would put it first).
    np.testing.assert_array_equal(d[1, :, [0, 3]], hd[1, :, [0, 3]])
    mask = rng.random(30) < 0.4
    np.testing.assert_array_equal(d[:, mask], ref[:, mask])
    for g in (d, hd):
        g[[2, 4, 9], 3] = [[1, 2, 3, 4]] * 3
    ref[[2, 4, 9], 3] = [[1, 2, 3, 4]] * 3
    np.testing.assert_array_equal(d[...], ref)
    full = ref % 3 == 0
    np.testing.assert_array_equal(d[full], ref[full])
    np.testing.assert_array_equal(d[full], hd[full])
    for g in (d, hd):
        g[full] = -1
    ref[full] = -1
    np.testing.assert_array_equal(d[...], ref)
    np.testing.assert_array_equal(hd[...], ref)
    for g in (d, hd):
        with pytest.raises(TypeError):
            g[[1, 2], [1, 2]]
        with pytest.raises(TypeError):
            g[[3, 1]]  # lists must increase
        with pytest.raises(TypeError):
            g[[5, 5], 0, 0] = [10, 11]  # and not repeat
        with pytest.raises(IndexError):
            g[[1, 40]]
        with pytest.raises(TypeError):
            g[np.ones(3, dtype=bool)]


def test_index_errors(pair):
    for g in pair:
        d = g.create_dataset("d", data=np.arange(24).reshape(2, 3, 4))
        with pytest.raises(IndexError):
            d[2]
        with pytest.raises(IndexError):
            d[-3]
        with pytest.raises(ValueError):
            d[0, 0, 0, 0]
        with pytest.raises(ValueError):
            d[..., ...]
        with pytest.raises(ValueError):
            d["x"]  # field names only for compound types
        with pytest.raises(TypeError):
            d[1.5]
        with pytest.raises(TypeError):
            d[0] = np.zeros((2, 2))
        with pytest.raises(ValueError):
            d[::0]
        with pytest.raises(ValueError):
            d[::-1]
        with pytest.raises(TypeError):
            d[np.newaxis]


def test_broadcast_writes(f):
    ref = np.zeros((6, 5), dtype="f8")
    d = f.create_dataset("d", data=ref)
    d[...] = 3
    ref[...] = 3
    d[1:4] = np.arange(5)
    ref[1:4] = np.arange(5)
    d[:, 2] = 7.5
    ref[:, 2] = 7.5
    d[1::2, 1:2] = np.array([[1], [2], [3]])
    ref[1::2, 1:2] = np.array([[1], [2], [3]])
    d[0, :] = [[9, 9, 9, 9, 9]]  # a (1, 5) value into a (5,) selection, as h5py allows
    ref[0, :] = 9
    np.testing.assert_array_equal(d[...], ref)
    d[5:5] = 1  # empty selections write nothing
    np.testing.assert_array_equal(d[...], ref)


def test_iteration_len_and_array(f):
    ref = np.arange(12.0).reshape(4, 3)
    d = f.create_dataset("d", data=ref)
    assert len(d) == 4
    for row, want in zip(d, ref):
        np.testing.assert_array_equal(row, want)
    np.testing.assert_array_equal(np.asarray(d), ref)
    assert np.asarray(d, dtype="f4").dtype == np.float32
    np.testing.assert_array_equal(np.array(d) + 1, ref + 1)
    with pytest.raises(ValueError):
        np.array(d, copy=False)


def test_read_direct_and_write_direct(f):
    ref = np.arange(40, dtype="<i8").reshape(8, 5)
    d = f.create_dataset("d", data=ref, chunks=(3, 3))
    out = np.empty((8, 5), dtype="<i8")
    d.read_direct(out)
    np.testing.assert_array_equal(out, ref)
    part = np.zeros((3, 5), dtype="<i8")
    d.read_direct(part, np.s_[2:5], np.s_[0:3])
    np.testing.assert_array_equal(part, ref[2:5])
    d.write_direct(np.ones((2, 5), dtype="<i8"), None, np.s_[0:2])
    np.testing.assert_array_equal(d[0:2], np.ones((2, 5)))
    with pytest.raises(TypeError):
        d.read_direct([1, 2])


def test_empty_datasets(pair):
    f, h = pair
    for g in (f, h):
        g.create_dataset("e", shape=(0, 4), dtype="i2")
        g.create_dataset("c", shape=(0, 4), maxshape=(None, 4), dtype="i2", chunks=(5, 4))
    for name in ("e", "c"):
        assert_same(f[name][...], h[name][...])
        assert f[name][...].shape == (0, 4)
        assert f[name][:, 1:3].shape == (0, 2)
        assert f[name].size == 0


def test_dataset_equality_repr_and_attrs(f, h5path):
    d = f.create_dataset("g/d", data=[1, 2])
    assert d == f["g/d"] and hash(d) == hash(f["g/d"])
    assert d != f.create_dataset("g/e", data=[1, 2])
    with h5py.File(h5path, "w") as h:
        hd = h.create_dataset("g/d", data=np.array([1, 2], d.dtype))
        assert repr(d) == repr(hd)  # h5py's words: code and doctests match them
    d.attrs["x"] = 1
    assert f["g/d"].attrs["x"] == 1
    assert d.parent == f["g"]
    assert d.file is f


def test_astype_len_and_iter_chunks(pair):
    f, h = pair
    data = np.arange(10 * 7, dtype="<i4").reshape(10, 7)
    d = f.create_dataset("d", data=data, chunks=(3, 4))
    hd = h.create_dataset("d", data=data, chunks=(3, 4))
    got = d.astype("f8")[2:4]
    assert got.dtype == np.float64 and np.array_equal(got, hd.astype("f8")[2:4])
    assert np.asarray(d.astype("i2")).dtype == np.int16
    assert d.len() == hd.len() == 10
    assert list(d.iter_chunks()) == list(hd.iter_chunks())
    for sel in [(slice(1, 9), slice(2, 7)), np.s_[3:4, :], np.s_[5:, :3], np.s_[9:, 6:]]:
        assert list(d.iter_chunks(sel)) == list(hd.iter_chunks(sel)), sel
    covered = np.zeros_like(data)
    for s in d.iter_chunks():
        covered[s] += 1
    assert (covered == 1).all()
    with pytest.raises(TypeError):
        next(f.create_dataset("c", data=data).iter_chunks())


def test_layout_is_chosen_by_size_and_can_be_asked_for(f):
    assert f.create_dataset("small", data=np.arange(4.0)).layout == "compact"
    assert f.create_dataset("scalar", data=np.float64(2.5)).layout == "compact"
    assert f.create_dataset("large", shape=(1000,), dtype="f8").layout == "contiguous"
    assert f.create_dataset("grows", shape=(4,), maxshape=(None,), dtype="f8").layout == "chunked"
    forced = f.create_dataset("forced", data=np.arange(300, dtype="i4"), layout="compact")
    assert forced.layout == "compact" and forced.chunks is None
    plain = f.create_dataset("plain", data=np.arange(4.0), layout="contiguous")
    assert plain.layout == "contiguous"
    chunked = f.create_dataset("chunked", data=np.arange(4.0), layout="chunked")
    assert chunked.layout == "chunked" and chunked.chunks == (4,)
    with pytest.raises(ValueError):
        f.create_dataset("bad1", data=np.arange(4.0), layout="compact", chunks=(2,))
    with pytest.raises(ValueError):
        f.create_dataset("bad2", data=np.arange(4.0), layout="contiguous", compression="zstd")
    with pytest.raises(ValueError):
        f.create_dataset("bad3", data=np.arange(4.0), layout="tiled")
    with pytest.raises(ValueError):
        f.create_dataset("bad4", data=np.array(["a"], dtype=object), layout="compact")
    with pytest.raises(ValueError):  # a compact dataset holds less than 4 KiB
        f.create_dataset("bad5", shape=(1000,), dtype="f8", layout="compact")
    assert not any(n.startswith("bad") for n in f)


def test_compact_datasets_behave_like_contiguous_ones(tmp_path):
    p = tmp_path / "c.arca"
    with arca.File(p, "w") as f:
        d = f.create_dataset("m", shape=(6, 5), dtype=">i4", fillvalue=-1)
        assert d.layout == "compact"
        d[1:5:2, ::3] = [[1, 2], [3, 4]]
        d[5] = 9
        assert f.stat()["compact_bytes"] == 120
        with pytest.raises((TypeError, ValueError)):
            d.resize((7, 5))
    with arca.File(p, "r") as f:
        d = f["m"]
        want = np.full((6, 5), -1, ">i4")
        want[1:5:2, ::3] = [[1, 2], [3, 4]]
        want[5] = 9
        np.testing.assert_array_equal(d[...], want)
        np.testing.assert_array_equal(d[::2, 3], want[::2, 3])
        assert d.dtype == np.dtype(">i4")
