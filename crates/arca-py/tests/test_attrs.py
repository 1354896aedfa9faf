"""Attributes on groups and datasets: a MutableMapping of scalars, arrays,
strings and bytes, compared with numpy and with h5py."""

import h5py
import numpy as np
import pytest

import arca
from conftest import EXT, NUMERIC, assert_same, random_array


@pytest.mark.parametrize("dtype", NUMERIC)
def test_scalar_and_array_attrs_every_dtype(dtype, path, h5path):
    rng = np.random.default_rng(NUMERIC.index(dtype))
    scalar = random_array(rng, (), dtype)
    arr = random_array(rng, (3, 4), dtype)
    with arca.File(path, "w") as f, h5py.File(h5path, "w") as h:
        ds = f.create_dataset("d", data=[1])
        for obj in (f, f.create_group("g"), ds, h):
            obj.attrs["s"] = scalar
            obj.attrs["a"] = arr
    with arca.File(path) as f, h5py.File(h5path) as h:
        for obj in (f, f["g"], f["d"]):
            # As h5py: arrays come back in the byte order they were stored
            # in (numpy's scalars are always native).
            s = obj.attrs["s"]
            assert isinstance(s, np.generic) and s.dtype == h.attrs["s"].dtype
            assert_same(s, h.attrs["s"])
            a = obj.attrs["a"]
            assert isinstance(a, np.ndarray) and a.dtype == h.attrs["a"].dtype
            assert_same(a, arr)
            assert_same(a, h.attrs["a"])


def test_python_values(f):
    a = f.attrs
    a["int"] = 5
    a["float"] = 2.5
    a["bool"] = True
    a["list"] = [1, 2, 3]
    a["nested"] = [[1.5, 2.5], [3.5, 4.5]]
    a["neg"] = -(2**63)
    assert a["int"] == 5 and a["int"].dtype == np.int64
    assert a["float"] == 2.5 and a["float"].dtype == np.float64
    assert a["bool"] is np.True_ or a["bool"] == True  # noqa: E712
    np.testing.assert_array_equal(a["list"], [1, 2, 3])
    assert a["nested"].shape == (2, 2)
    assert a["neg"] == -(2**63)


def test_strings_and_bytes(pair):
    """Strings are stored as h5py stores them: str and bytes as
    variable-length strings (read back as str), np.bytes_ and S arrays as
    fixed-length ones (read back as bytes), lists of either as arrays of
    variable-length strings; NULs inside and U arrays are refused."""
    f, h = pair
    values = {
        "unit": "m/s", "empty": "", "utf": "größe λ", "raw": b"\xff\xfe", "b": b"abc",
        "fixed": np.array([b"ab", b"cde"], dtype="S4"), "npb": np.bytes_(b"xy"),
        "list": ["a", "bc"], "blist": [b"a", b"bc"], "objs": np.array(["p", "qq"], dtype=object),
    }
    for obj in (f, h):
        for k, v in values.items():
            obj.attrs[k] = v
    for k in values:
        a, b = f.attrs[k], h.attrs[k]
        assert type(a) is type(b), k
        if isinstance(a, np.ndarray):
            assert a.dtype == b.dtype and a.tolist() == b.tolist(), k
        else:
            assert a == b, k
        ia, ib = f.attrs.get_id(k), h.attrs.get_id(k)
        assert ia.shape == ib.shape, k
        assert arca.check_string_dtype(ia.dtype) == h5py.check_string_dtype(ib.dtype), k
    for obj in (f, h):
        for bad, err in ((b"a\x00b", ValueError), ("a\x00b", ValueError),
                         (np.array(["x", "yz"]), TypeError), (np.str_("x"), TypeError),
                         ([1, "a"], TypeError)):
            with pytest.raises(err):
                obj.attrs["bad"] = bad
            assert "bad" not in obj.attrs


def test_mutable_mapping_protocol(f):
    g = f.create_group("g")
    a = g.attrs
    for i in range(50):
        a[f"k{i:02d}"] = i
    assert len(a) == 50
    assert list(a) == [f"k{i:02d}" for i in range(50)]
    assert "k07" in a and "zz" not in a
    with pytest.raises(TypeError):
        7 in a  # noqa: B015 -- as h5py: a name is str or bytes
    assert a.get("zz") is None and a.get("k03") == 3
    del a["k07"]
    assert "k07" not in a and len(a) == 49
    with pytest.raises(KeyError):
        a["k07"]
    with pytest.raises(KeyError):
        del a["k07"]
    a["k01"] = "replaced"
    assert a["k01"] == "replaced"
    a.rename("k02", "two")
    assert "two" in a and "k02" not in a
    d = dict(a)
    assert d["two"] == 2 and len(d) == 49
    a.update({"u": 1.0})
    assert a.pop("u") == 1.0
    a.create("shaped", [1, 2, 3, 4], shape=(2, 2), dtype=">i2")
    assert a["shaped"].shape == (2, 2)
    # As h5py: modify keeps the attribute's shape and type (and its place).
    with pytest.raises(TypeError):
        a.modify("shaped", 1)
    a.modify("shaped", [[5, 6], [7, 8.9]])
    assert a["shaped"].tolist() == [[5, 6], [7, 8]] and a._dtype("shaped") == np.dtype(">i2")
    a["s"] = "abc"
    a.modify("s", "longer string")
    assert a["s"] == "longer string"
    a.clear()
    assert len(a) == 0


def test_attrs_survive_reopen_and_big_values(path):
    big = np.arange(100_000, dtype="<f8")
    with arca.File(path, "w") as f:
        f.attrs["big"] = big
        f.create_group("x").attrs["be"] = np.arange(5, dtype=">u4")
    with arca.File(path) as f:
        assert_same(f.attrs["big"], big)
        be = f["x"].attrs["be"]
        assert be.dtype == np.dtype(">u4")
        np.testing.assert_array_equal(be, np.arange(5))


def test_bad_attr_values(f):
    with pytest.raises(TypeError):
        f.attrs["c"] = np.datetime64("2020-01-01")
    with pytest.raises(TypeError):
        f.attrs["o"] = object()
    with pytest.raises(TypeError):
        f.attrs[3] = 1
    with pytest.raises(ValueError):
        f.attrs[""] = 1


def test_attrs_read_only(path):
    with arca.File(path, "w") as f:
        f.attrs["a"] = 1
    with arca.File(path, "r") as f:
        assert f.attrs["a"] == 1
        with pytest.raises(OSError):
            f.attrs["b"] = 2
        with pytest.raises(arca.ReadOnlyError):
            del f.attrs["a"]
        with pytest.raises(KeyError):  # h5py's type for a failed deletion
            del f.attrs["a"]



CREATE_CASES = [
    ("shape1", 42, {"shape": 1}),
    ("shape3", np.arange(3), {"shape": 3}),
    ("arrdt", np.arange(3, dtype="i"), {"dtype": "(3,)i"}),
    ("badarr", np.arange(4, dtype="i"), {"dtype": "(3,)i"}),
    ("badshape", np.arange(4, dtype="i"), {"shape": (5,), "dtype": "i"}),
    ("u64", [2**63 - 1, 2**63], {"dtype": np.uint64}),
    ("i8", 42, {"dtype": "i8"}),
    ("str", "\u03a9", {}),
    ("tuple", ("a", "b"), {}),
    ("ustr", np.array(["a", "b"]), {}),
    ("fixed", "abc", {"dtype": "S5"}),
    ("vlen", "abc", {"dtype": "vlen-str"}),
    ("ascii", "abc", {"dtype": "vlen-ascii"}),
    ("reshaped", [1, 2, 3, 4], {"shape": (2, 2), "dtype": ">i2"}),
]


def test_create_modify_and_get_id_like_h5py(tmp_path):
    """attrs.create's shape and dtype, modify keeping an attribute's type
    (and its shape: TypeError otherwise), and get_id's dtype and shape,
    on arca and h5py."""
    from test_h5py_file import both, outcome

    def script(lib, d):
        special = {"vlen-str": lib.string_dtype(), "vlen-ascii": lib.string_dtype("ascii")}
        with lib.File(d / ("f" + EXT[lib]), "w") as f:
            a = f.attrs
            out = []
            for name, value, kw in CREATE_CASES:
                kw = {k: special.get(v, v) if isinstance(v, str) else v for k, v in kw.items()}
                r = outcome(lambda: a.create(name, value, **kw))
                if name in a:
                    v = a[name]
                    aid = a.get_id(name)
                    out.append((name, r, type(v).__name__, np.asarray(v).tolist(),
                                str(aid.dtype), aid.shape, aid.name,
                                lib.check_string_dtype(aid.dtype)))
                else:
                    out.append((name, r))
            a.create("e", lib.Empty("f"))
            out.append((a.get_id("e").shape, str(a.get_id("e").dtype)))
            out.append(outcome(lambda: a.get_id("missing")))
            for name, value in [("i8", 7), ("i8", "x"), ("i8", [1, 2]), ("fixed", b"abcdefg"),
                                ("fixed", "q"), ("vlen", "a longer string"), ("vlen", 5),
                                ("u64", [2**63, 1]), ("new", 3), ("reshaped", [[5, 6], [7, 8.9]])]:
                r = outcome(lambda: a.modify(name, value))
                out.append((name, r, np.asarray(a[name]).tolist() if name in a else None,
                            str(a.get_id(name).dtype) if name in a else None))
            out.append(list(a))
            return out
    both(tmp_path, script)
