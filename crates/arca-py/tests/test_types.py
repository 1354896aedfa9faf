"""The whole fixed-size type system, checked against h5py: each script runs
once with ``arca`` and once with ``h5py`` as ``lib`` and must give the same
results (values, dtypes and error types), then again after reopening."""

import numpy as np
import pytest

import arca
import h5py

from conftest import assert_same, outcome, random_array

LIBS = {"arca": arca, "h5py": h5py}

COMPOUND = np.dtype(
    [("t", "<f8"), ("id", ">u4"), ("xy", "<f4", (2,)), ("ok", "?"), ("name", "S6"),
     ("z", "<c8")]
)
# Gaps and explicit offsets, as numpy allows.
GAPPY = np.dtype({"names": ["a", "b"], "formats": ["<i2", ">f8"], "offsets": [12, 0],
                  "itemsize": 24})
NESTED = np.dtype([("pos", [("x", "<f4"), ("y", "<f4")]), ("hits", "<u2", (2, 3)),
                   ("inner", [("deep", [("v", ">i8")])])])

SIMPLE = ["<f2", ">f2", "<c8", ">c8", "<c16", ">c16"]


def rows(dt, n, seed):
    """Random rows of a compound (or any) dtype, member by member."""
    rng = np.random.default_rng(seed)
    out = np.zeros(n, dt)
    if dt.names is None:
        return random_values(rng, dt, n)
    for name in dt.names:
        sub = dt.fields[name][0]
        out[name] = rows(sub, n, seed + 1) if sub.names else random_values(rng, sub, n)
    return out


def random_values(rng, dt, n):
    if dt.subdtype is not None:
        base, shape = dt.subdtype
        return random_values(rng, base, n * int(np.prod(shape))).reshape((n,) + shape)
    if dt.kind == "c":
        part = np.dtype(f"{dt.byteorder if dt.byteorder in '<>' else '='}f{dt.itemsize // 2}")
        re = random_values(rng, part, n).astype(dt)
        return re + 1j * random_values(rng, part, n).astype(dt)
    if dt.kind == "f" and dt.itemsize == 2:
        return (rng.standard_normal(n) * 10).astype(dt)
    return random_array(rng, (n,), dt)


def run(lib, path, script):
    """Run ``script(lib, f)`` in a new file, then ``script(lib, f, reopened)``
    again read-only; return both result lists."""
    with lib.File(path, "w") as f:
        first = script(lib, f, False)
    with lib.File(path, "r") as f:
        second = script(lib, f, True)
    return first, second



def same_values(x, y):
    """Equal values member by member (gap bytes and byte order aside)."""
    x, y = np.asarray(x), np.asarray(y)
    assert x.shape == y.shape, (x.shape, y.shape)
    if y.dtype.names:
        assert x.dtype.names == y.dtype.names, (x.dtype, y.dtype)
        for n in y.dtype.names:
            same_values(x[n], y[n])
    else:
        assert_same(x, y)


def compare(a, h):
    assert len(a) == len(h)
    for x, y in zip(a, h):
        if isinstance(y, str) or isinstance(x, str):
            # arca reads a scalar string attribute as str when it is UTF-8
            # (see the README); h5py gives bytes.
            norm = [v.decode() if isinstance(v, bytes) else v for v in (x, y)]
            assert norm[0] == norm[1]
        elif isinstance(y, np.dtype):
            # The stored type, metadata (enum values) included.
            assert x == y, (x, y)
            assert (x.metadata or {}).get("enum") == (y.metadata or {}).get("enum")
        elif isinstance(y, dict) or y is None:
            assert x == y
        else:
            same_values(x, y)


def same(tmp_path, script):
    a = run(arca, tmp_path / "t.arca", script)
    h = run(h5py, tmp_path / "t.h5", script)
    for x, y in zip(a, h):
        compare(x, y)


@pytest.mark.parametrize("dtype", SIMPLE)
@pytest.mark.parametrize("chunked", [False, True])
def test_float16_and_complex(tmp_path, dtype, chunked):
    data = random_values(np.random.default_rng(1), np.dtype(dtype), 40).reshape(5, 8)

    def script(lib, f, reopened):
        if not reopened:
            kw = {"chunks": (2, 3), "compression": "gzip"} if chunked else {}
            f.create_dataset("d", data=data, **kw)
            f.attrs["s"] = data[1, 2]
            f.attrs["a"] = data[0]
        d = f["d"]
        return [d.dtype, d[...], d[1:4, ::3], d[2, 5], f.attrs["s"], f.attrs["a"]]

    same(tmp_path, script)


@pytest.mark.parametrize("dt", [COMPOUND, GAPPY, NESTED], ids=["compound", "gaps", "nested"])
@pytest.mark.parametrize("layout", ["contiguous", "chunked", "compact"])
def test_compound(tmp_path, dt, layout):
    n = 6 if layout == "compact" else 50
    data = rows(dt, n, 7)
    first = dt.names[0]

    def script(lib, f, reopened):
        if not reopened:
            kw = {}
            if layout == "chunked":
                kw = {"chunks": (8,), "compression": "gzip", "shuffle": True, "maxshape": (None,)}
            elif layout == "compact" and lib is arca:
                kw = {"layout": "compact"}
            f.create_dataset("t", data=data, **kw)
            f.create_dataset("empty", shape=(3,), dtype=dt)
            f["t"][1] = data[0]
            f.attrs["row"] = data[2]
            f.attrs["rows"] = data[:3]
        t = f["t"]
        return [
            t.dtype, t[...], t[2:5], t[first], t[first, 1:3], t[1:3, first],
            t.fields(first)[:4], t.fields([first])[:4], f["empty"][...],
            f.attrs["row"], f.attrs["rows"], f["empty"].fillvalue,
            outcome(lambda: t["nope"]),
        ]

    same(tmp_path, script)


def test_write_members(tmp_path):
    data = rows(COMPOUND, 20, 3)

    def script(lib, f, reopened):
        if not reopened:
            d = f.create_dataset("t", data=data, chunks=(4,))
            d["t", 2:6] = np.arange(4.0)
            d[3:5, "id"] = [7, 8]
            d["xy", 10] = [1.5, 2.5]
        t = f["t"]
        return [t[...], t["t"], t["id"]]

    same(tmp_path, script)


def test_fields_only_for_compounds(tmp_path):
    def script(lib, f, reopened):
        if not reopened:
            f.create_dataset("x", data=np.arange(5))
        return [outcome(lambda: f["x"]["a"])]

    same(tmp_path, script)


def test_array_element_types(tmp_path):
    dt = np.dtype(("<i4", (2, 3)))
    data = np.arange(4 * 6, dtype="<i4").reshape(4, 2, 3)

    def script(lib, f, reopened):
        if not reopened:
            f.create_dataset("b", shape=(3,), dtype=dt)
            f.attrs.create("at", data[:2], dtype=dt)
        b = f["b"]
        return [b.dtype, b.shape, b[...], b[1], b[1:3], f.attrs["at"]]

    same(tmp_path, script)
    # h5py cannot write such a dataset from plain data; arca can.
    with arca.File(tmp_path / "w.arca", "w") as f:
        a = f.create_dataset("a", data=data, dtype=dt)
        with pytest.raises(TypeError):
            a[2] = -1  # as in h5py: a value's last axes are the element's
        a[2] = np.full((2, 3), -1)
        a[3] = [[7, 8, 9], [1, 2, 3]]
    with arca.File(tmp_path / "w.arca", "r") as f:
        want = data.copy()
        want[2] = -1
        want[3] = [[7, 8, 9], [1, 2, 3]]
        assert_same(f["a"][...], want)
        assert_same(f["a"][::2], want[::2])
        assert f["a"].shape == (4,)


def test_enums(tmp_path):
    for lib in (arca, h5py):
        et = lib.enum_dtype({"RED": 0, "GREEN": 1, "BLUE": 42}, basetype="i1")
        assert lib.check_enum_dtype(et) == {"RED": 0, "GREEN": 1, "BLUE": 42}
        assert lib.check_dtype(enum=et) == {"RED": 0, "GREEN": 1, "BLUE": 42}
        assert lib.check_enum_dtype(np.dtype("i1")) is None
    data = np.array([0, 42, 1, 1], "i1")

    def script(lib, f, reopened):
        et = lib.enum_dtype({"RED": 0, "GREEN": 1, "BLUE": 42}, basetype="i1")
        ut = lib.special_dtype(enum=(">u2", {"LOW": 1, "HIGH": 65535}))
        if not reopened:
            f.create_dataset("e", data=data, dtype=et)
            f.create_dataset("u", data=np.array([1, 65535], ">u2"), dtype=ut)
            f.attrs.create("c", 42, dtype=et)
            rec = np.dtype([("mode", et), ("v", "<f4")])
            f.create_dataset("r", data=np.array([(1, 0.5)], rec))
        e = f["e"]
        return [
            e.dtype, e[...], lib.check_enum_dtype(e.dtype), lib.check_enum_dtype(f["u"].dtype),
            f["u"][...], f.attrs["c"], lib.check_enum_dtype(f["r"].dtype["mode"]), f["r"][...],
        ]

    same(tmp_path, script)


def test_opaque(tmp_path):
    for lib in (arca, h5py):
        o = lib.opaque_dtype(np.dtype("<f8"))
        assert o.itemsize == 8 and lib.check_opaque_dtype(o)
    data = np.frombuffer(bytes(range(24)), "V6")

    def script(lib, f, reopened):
        if not reopened:
            f.create_dataset("o", data=data)
            f.attrs["o"] = data[1]
            f.create_dataset("m", shape=(3,), dtype=lib.opaque_dtype("<f8"))
            f.create_dataset("t", shape=(2,), dtype=lib.opaque_dtype("M8[s]"))
        m, t = f["m"], f["t"]
        return [f["o"].dtype, f["o"][...], f["o"][2], f.attrs["o"], m.dtype, dict(m.dtype.metadata),
                m[...], t.dtype, t[...].astype("i8"),
                outcome(lambda: lib.opaque_dtype(np.dtype([("a", "i4")])))]

    same(tmp_path, script)


def test_string_dtype_checks():
    for lib in (arca, h5py):
        assert lib.check_string_dtype(lib.string_dtype()) == ("utf-8", None)
        assert lib.check_string_dtype(lib.string_dtype("ascii")) == ("ascii", None)
        assert lib.check_string_dtype(np.dtype("S5")).length == 5
        assert lib.check_string_dtype(np.dtype("f4")) is None
        assert lib.check_dtype(vlen=lib.vlen_dtype("f4")) == np.dtype("f4")
        assert lib.check_dtype(vlen=np.dtype("f4")) is None
        assert lib.check_vlen_dtype(lib.special_dtype(vlen=str)) is str


def test_type_strings_cross_to_the_core(path):
    """A dtype arca refuses gets a TypeError before anything is created."""
    with arca.File(path, "w") as f:
        for bad in [np.dtype("U3"), np.dtype("M8[s]"), np.dtype([])]:
            with pytest.raises(TypeError):
                f.create_dataset("x", shape=(2,), dtype=bad)
        assert "x" not in f
        # Overlapping members: numpy allows them, arca (like HDF5) does not.
        overlap = np.dtype({"names": ["a", "b"], "formats": ["<i4", "<i2"], "offsets": [0, 2]})
        with pytest.raises(TypeError):
            f.create_dataset("y", shape=(2,), dtype=overlap)


def test_empty_datasets_and_attributes(tmp_path):
    def script(lib, f, reopened):
        if not reopened:
            f.create_dataset("e", data=lib.Empty("f4"))
            f.create_dataset("e2", shape=None, dtype=">i4")
            f.attrs["a"] = lib.Empty("i8")
            f.attrs.create("b", lib.Empty("u2"))
            f["e"].attrs["units"] = "m"
        e = f["e"]
        out = [e.shape, e.size, e.dtype, type(e[()]).__name__, e[()] == lib.Empty("f4"),
               f["e2"].dtype, e.nbytes, f.attrs["a"] == lib.Empty("i8"), f.attrs["b"].dtype,
               e.attrs["units"], outcome(lambda: e[0]), outcome(lambda: len(e))]
        if not reopened:
            out.append(outcome(lambda: e.__setitem__((), 1.0)))
        return out

    a = run(arca, tmp_path / "t.arca", script)
    h = run(h5py, tmp_path / "t.h5", script)
    assert a == h


def random_dtype(rng, depth=0):
    """A random numpy dtype arca and h5py both store: numbers of every size
    in both byte orders, bytes, enums-free leaves, sub-arrays, and nested
    compounds with gaps and explicit offsets."""
    leaves = ["?", "|i1", "|u1", "<i2", ">i2", "<u4", ">u4", "<i8", ">u8", "<f2", ">f2",
              "<f4", ">f4", "<f8", ">f8", "<c8", ">c16", "|S3"]
    k = rng.integers(0, 10)
    if depth >= 2 or k < 5:
        return np.dtype(leaves[rng.integers(0, len(leaves))])
    if k < 7:
        base = random_dtype(rng, depth + 1)
        if base.subdtype is not None or base.names is not None:
            return base
        shape = tuple(int(x) for x in rng.integers(1, 4, size=rng.integers(1, 3)))
        return np.dtype((base, shape))
    names, formats, offsets, at = [], [], [], 0
    for i in range(int(rng.integers(1, 5))):
        t = random_dtype(rng, depth + 1)
        at += int(rng.integers(0, 3))
        names.append(f"f{i}")
        formats.append(t)
        offsets.append(at)
        at += t.itemsize
    return np.dtype({"names": names, "formats": formats, "offsets": offsets,
                     "itemsize": at + int(rng.integers(0, 3))})


def fill_random(rng, arr):
    """Random values in every member (NaN-free, so equality is exact)."""
    dt = arr.dtype
    if dt.names:
        for n in dt.names:
            fill_random(rng, arr[n])
    elif dt.subdtype is not None:
        fill_random(rng, arr.view(dt.subdtype[0]).reshape(arr.shape + dt.subdtype[1]))
    elif dt.kind == "c":
        part = np.dtype(f"{dt.byteorder if dt.byteorder in '<>' else '='}f{dt.itemsize // 2}")
        arr.real = random_values(rng, part, arr.size).reshape(arr.shape)
        arr.imag = random_values(rng, part, arr.size).reshape(arr.shape)
    else:
        arr[...] = random_values(rng, dt, arr.size).reshape(arr.shape)


@pytest.mark.parametrize("seed", range(120))
def test_random_types_match_h5py(tmp_path, seed):
    """Random nested types with random values, scalar and shaped, in every
    layout and as attributes: arca reads back what h5py reads back."""
    rng = np.random.default_rng(1000 + seed)
    dt = random_dtype(rng)
    if dt.subdtype is not None:
        dt = np.dtype([("a", dt)])  # h5py cannot write array-typed datasets from data
    shape = [(), (5,), (3, 4)][seed % 3]
    data = np.zeros(shape, dtype=dt)
    fill_random(rng, data)
    layout = ["contiguous", "chunked", "compact"][seed % 3 if shape else 0]

    def script(lib, f, reopened):
        if not reopened:
            kw = {}
            if layout == "chunked" and shape:
                kw = {"chunks": tuple(max(1, s // 2) for s in shape), "compression": "gzip"}
            f.create_dataset("d", data=data, **kw)
            f.attrs["a"] = data
        return [f["d"].dtype, f["d"][()], f.attrs["a"]]

    same(tmp_path, script)


def test_fixed_strings_keep_their_character_set(tmp_path):
    """``string_dtype(enc, n)``: the encoding is stored as the type's
    character set and read back as h5py reports it."""

    def script(lib, f, reopened):
        if not reopened:
            u = f.create_dataset("u", (2,), dtype=lib.string_dtype("utf-8", 6))
            u[0] = "é!".encode()
            f.create_dataset("a", data=np.array([b"ab", b"c"], dtype=lib.string_dtype("ascii", 3)))
            f.create_dataset("p", data=np.array([b"xyz"], "S3"))
            f.attrs.create("t", np.array([b"q"], dtype=lib.string_dtype("utf-8", 2)))
        out = []
        for k in "uap":
            d = f[k]
            out += [tuple(lib.check_string_dtype(d.dtype)), d[...], list(d.asstr()[...])]
        out.append(tuple(lib.check_string_dtype(f.attrs["t"].dtype)))
        out.append(outcome(lambda: f.create_dataset("n", data=[1]).asstr() if not reopened
                           else f["n"].asstr()))
        return out

    a = run(arca, tmp_path / "s.arca", script)
    h = run(h5py, tmp_path / "s.h5", script)
    for x, y in zip(a, h):
        assert len(x) == len(y)
        for p, q in zip(x, y):
            if isinstance(q, np.ndarray):
                assert p.tolist() == q.tolist()
            else:
                assert p == q, (p, q)


def test_whole_dataset_writes_of_references_store_ids(tmp_path):
    """An object array of references given for the whole dataset is
    converted, never written as the objects' memory."""
    with arca.File(tmp_path / "r.arca", "w") as f:
        g = f.create_group("g")
        d = f.create_dataset("r", (2,), dtype=arca.ref_dtype)
        refs = np.empty(2, dtype=arca.ref_dtype)
        refs[0], refs[1] = g.ref, arca.Reference()
        d[...] = refs
    with arca.File(tmp_path / "r.arca") as f:
        got = f["r"][...]
        assert f[got[0]].name == "/g" and not got[1]


# -- HDF5 bitfields and times ------------------------------------------------------
@pytest.mark.parametrize("size", [1, 2, 4, 8])
@pytest.mark.parametrize("order", ["<", ">"])
def test_bitfields_read_as_unsigned_integers_and_stay_bitfields(tmp_path, size, order):
    rng = np.random.default_rng(size)
    data = rng.integers(0, 2 ** (8 * size) - 1, 20, dtype=np.uint64, endpoint=True)
    dt = arca.bitfield_dtype(size, order)
    with arca.File(tmp_path / "b.arca", "w") as f:
        f.create_dataset("b", data=data.astype(dt), dtype=dt, chunks=(8,), compression="gzip",
                         shuffle=True)
        f.attrs.create("flags", data[:3].astype(dt), dtype=dt)
        rec = np.dtype([("ok", arca.bitfield_dtype(1)), ("mask", arca.bitfield_dtype(1), (3,)),
                        ("v", "<f8")])
        f["rec"] = np.ones(2, rec)
    with arca.File(tmp_path / "b.arca") as f:
        b = f["b"]
        assert b.dtype.kind == "u" and b.dtype.itemsize == size
        assert (b.dtype.metadata or {}).get("arca_bitfield")
        assert b[:].tolist() == data.tolist()
        assert f.attrs["flags"].tolist() == data[:3].tolist()
        assert f.attrs._dtype("flags").metadata["arca_bitfield"]
        r = f["rec"]
        assert r.dtype.fields["ok"][0].metadata["arca_bitfield"]
        assert r.dtype.fields["mask"][0].base.metadata["arca_bitfield"]
        assert r[0]["mask"].tolist() == [1, 1, 1]
        # The stored type says bitfield, in its byte order.
        assert b._id.dtype() == f"bitfield:{'|' if size == 1 and order == '<' else order}u{size}"


def test_times_read_as_unsigned_integers(tmp_path):
    with arca.File(tmp_path / "t.arca", "w") as f:
        f.create_dataset("t", data=np.array([0, 86400, 2 ** 33], ">u8"), dtype=arca.time_dtype(8, ">"))
    with arca.File(tmp_path / "t.arca") as f:
        assert f["t"][:].tolist() == [0, 86400, 2 ** 33]
        assert f["t"].dtype.metadata == {"arca_time": True}


def test_bits_types_refuse_what_they_cannot_hold(tmp_path):
    with arca.File(tmp_path / "x.arca", "w") as f:
        with pytest.raises(TypeError, match="arca_time"):
            f.create_dataset("t", shape=(2,), dtype=np.dtype("u2", metadata={"arca_time": True}))
        with pytest.raises(TypeError, match="arca_bitfield"):
            f.create_dataset("b", shape=(2,), dtype=np.dtype("f4", metadata={"arca_bitfield": True}))
