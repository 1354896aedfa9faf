"""Groups: creation, lookup, iteration, many children, delete and move,
visiting, compared with h5py doing the same."""

import h5py
import numpy as np
import pytest

import arca


def tree(obj):
    """Every path below a group, with its kind."""
    out = []
    obj.visititems(lambda n, o: out.append((n, "G" if isinstance(o, (arca.Group, h5py.Group)) else "D")))
    return out


def test_nested_creation_and_lookup(pair):
    f, h = pair
    for g in (f, h):
        g.create_group("a/b/c")
        g["a"].create_group("x")
        g.create_dataset("a/b/d", data=np.arange(3))
    assert tree(f) == tree(h)
    assert isinstance(f["a/b"], arca.Group)
    assert isinstance(f["a/b/d"], arca.Dataset)
    assert isinstance(f["/a/b/c"], arca.Group)
    assert f["a"]["b/d"].name == "/a/b/d"
    assert f["a/b"].name == "/a/b"
    assert f.name == "/"
    assert f["a/b/c"].parent == f["a/b"]
    assert f["a/b/d"].parent.name == "/a/b"
    assert f.parent == f
    assert f["a"].file is f


def test_contains_iteration_and_views(pair):
    f, h = pair
    names = ["zeta", "alpha", "mid", "Beta", "_u", "a1", "a10", "a2"]
    for g in (f, h):
        for i, n in enumerate(names):
            if i % 2:
                g.create_group(n)
            else:
                g.create_dataset(n, data=np.full(2, i))
    assert list(f) == sorted(names) == list(h)
    assert list(f.keys()) == list(h.keys())
    assert len(f) == len(h) == len(names)
    for (an, ao), (hn, ho) in zip(f.items(), h.items()):
        assert an == hn
        assert isinstance(ao, arca.Group) == isinstance(ho, h5py.Group)
    assert [v.name for v in f.values()] == [v.name for v in h.values()]
    assert "mid" in f and "nope" not in f and "mid/x" not in f
    assert ("alpha" in f) == ("alpha" in h)
    for g in (f, h):
        with pytest.raises(TypeError):
            3 in g  # noqa: B015 -- as h5py: a name is str or bytes
    assert f.get("nope") is None and f.get("nope", 5) == 5
    assert f.get("alpha", getclass=True) is arca.Group
    assert f.get("zeta", getclass=True) is arca.Dataset


def test_many_children(f):
    g = f.create_group("many")
    n = 3000
    for i in range(n):
        if i % 3 == 0:
            g.create_dataset(f"d{i:05d}", data=np.array([i]))
        else:
            g.create_group(f"g{i:05d}")
    assert len(g) == n
    names = list(g)
    assert names == sorted(names) and len(names) == n
    assert g["d00300"][0] == 300
    for i in range(0, n, 2):
        del g[f"{'d' if i % 3 == 0 else 'g'}{i:05d}"]
    assert len(g) == n // 2
    assert "g00001" in g and "g00002" not in g
    f.close()
    with arca.File(f.filename) as r:
        assert len(r["many"]) == n // 2
        assert r["many/d00003"][0] == 3


def test_delete_and_move_match_h5py(pair):
    f, h = pair
    rng = np.random.default_rng(11)
    for g in (f, h):
        g.create_group("a/b/c")
        g.create_dataset("a/b/x", data=np.arange(5))
        g.create_dataset("a/y", data=np.arange(7))
        g.create_group("z")
    for g in (f, h):
        g.move("a/b", "z/b2")
        g.move("a/y", "y")
        g["z"].move("b2/x", "x_renamed")
        del g["z/b2/c"]
    assert tree(f) == tree(h)
    np.testing.assert_array_equal(f["z/x_renamed"][...], h["z/x_renamed"][...])
    with pytest.raises(KeyError):
        f["a/b"]
    with pytest.raises(KeyError):
        del f["nope"]
    for g in (f, h):
        with pytest.raises(ValueError):
            g.move("nope", "other")
    with pytest.raises(ValueError):
        f.move("y", "z")  # destination exists
    with pytest.raises(ValueError):
        f.move("z", "z/inside")
    f.move("y", "y")  # a no-op, as in h5py
    assert "y" in f
    # Deleting frees space that later writes reuse; the tree stays sound.
    big = rng.standard_normal((200, 200))
    f["big"] = big
    del f["big"]
    f.check()


def test_delete_subtree(f):
    f.create_group("t/u/v/w")
    f.create_dataset("t/u/d", data=np.zeros((10, 10)), chunks=(2, 2))
    f["t"].attrs["k"] = 1
    del f["t"]
    assert "t" not in f and len(f) == 0
    assert f.stat()["datasets"] == 0
    f.check()


def test_visit_stops_on_first_value(f):
    for p in ["a/b/c", "a/d", "e"]:
        f.create_group(p)
    seen = []
    assert f.visit(seen.append) is None
    assert seen == ["a", "a/b", "a/b/c", "a/d", "e"]
    found = f.visit(lambda n: n if n.endswith("d") else None)
    assert found == "a/d"
    found = f.visititems(lambda n, o: o if n == "a/b/c" else None)
    assert isinstance(found, arca.Group) and found.name == "/a/b/c"


def test_visit_order_matches_h5py(pair):
    f, h = pair
    for g in (f, h):
        for p in ["a/b/c", "a/d", "e/f", "e/g/h"]:
            g.create_group(p)
        g.create_dataset("a/b/x", data=[1])
    fa, ha = [], []
    f.visit(fa.append)
    h.visit(ha.append)
    assert fa == ha


def test_visit_order_matches_h5py_with_tracked_order_and_second_names(pair):
    f, h = pair
    for g in (f, h):
        log = g.create_group("log", track_order=True)
        for name in ["z", "a", "m"]:
            log.create_group(name)
        g.create_dataset("log/a/x", data=[1])
        g.create_group("b/c")
        g.create_dataset("b-c", data=[2])
        g["a2"] = g["log/a/x"]          # a second name, met first by name
        g["log/m/up"] = g["log"]        # a loop through a second name
    f["soft"], h["soft"] = arca.SoftLink("/log"), h5py.SoftLink("/log")
    for fn in ("visit", "visit_links"):
        fa, ha = [], []
        getattr(f, fn)(fa.append)
        getattr(h, fn)(ha.append)
        assert fa == ha, fn
    assert tree(f) == tree(h)


def test_visit_streams_the_walk(f):
    # The walk is read as the visit goes, not listed first: a group removed
    # by the callback long before the walk reaches it is not visited.
    n = 3000
    for i in range(n):
        f.create_group(f"g{i:04d}")
    seen = []

    def cb(name):
        if name == "g0000":
            del f[f"g{n - 1:04d}"]
        seen.append(name)

    assert f.visit(cb) is None
    assert len(seen) == n - 1 and seen[-1] == f"g{n - 2:04d}"
    assert seen == sorted(seen)


def test_require_group(f):
    g = f.require_group("a/b")
    assert f.require_group("a/b") == g
    f.create_dataset("d", data=[1, 2])
    with pytest.raises(TypeError):
        f.require_group("d")


def test_create_existing_is_value_error(pair):
    f, h = pair
    for g in (f, h):
        g.create_group("x")
        g.create_dataset("d", data=[1])
    for g in (f, h):
        with pytest.raises(ValueError):
            g.create_group("x")
        with pytest.raises(ValueError):
            g.create_dataset("d", data=[1])
        with pytest.raises(ValueError):
            g.create_dataset("x", data=[1])


def test_missing_is_key_error(pair):
    f, h = pair
    for g in (f, h):
        with pytest.raises(KeyError):
            g["nope"]
        with pytest.raises(KeyError):
            g["a/b/c"]


def test_wrong_key_type_is_type_error(f):
    with pytest.raises(TypeError):
        f[1]
    with pytest.raises(TypeError):
        f.create_group(5)


def test_setitem_creates_datasets_and_hard_links(f):
    f["x"] = [[1, 2], [3, 4]]
    assert f["x"].shape == (2, 2)
    assert f["x"].dtype == np.dtype("int64")
    f["s"] = np.float32(2.5)
    assert f["s"].shape == () and f["s"][()] == np.float32(2.5)
    f["y"] = f["x"]
    assert f["y"] == f["x"] and f["y"].name == "/y"
    with pytest.raises(OSError):
        f["y"] = f["s"]


def test_group_equality_and_repr(f):
    a = f.create_group("a")
    assert a == f["a"] and a != f and hash(a) == hash(f["a"])
    assert "a" in repr(a) and "Group" in repr(a)
    assert bool(a)
    assert bool(f.create_group("empty"))  # empty groups are still truthy


def test_copy_matches_h5py(pair, tmp_path):
    f, h = pair
    rng = np.random.default_rng(4)
    for g in (f, h):
        g.create_group("src/sub/deeper")
        g["src"].attrs["a"] = 1.5
        g.create_dataset("src/sub/d", data=rng.standard_normal((20, 3)) if g is f else f["src/sub/d"][...],
                         chunks=(4, 3), compression="gzip", compression_opts=5, maxshape=(None, 3))
        g["src/sub/d"].attrs["units"] = "m"
        g.create_dataset("src/c", data=np.arange(5, dtype=">i2"), fillvalue=3)
    for g in (f, h):
        g.copy("src", "dst")
        g.copy(g["src/sub"], g["src"], name="sub2")
        g.copy("src/c", g)
        g.copy("src", "shallow", shallow=True)
        g.copy("src", "bare", without_attrs=True)
    assert tree(f) == tree(h)
    for name in ("dst/sub/d", "src/sub2/d", "c", "dst/c"):
        a, b = f[name], h[name]
        np.testing.assert_array_equal(a[...], b[...])
        for attr in ("dtype", "chunks", "maxshape", "compression", "compression_opts", "fillvalue"):
            assert getattr(a, attr) == getattr(b, attr), (name, attr)
    assert f["dst"].attrs["a"] == 1.5 and f["dst/sub/d"].attrs["units"] == "m"
    assert len(f["bare"].attrs) == 0 and len(f["bare/sub/d"].attrs) == 0
    # Into another file.
    with arca.File(tmp_path / "other.arca", "w") as o:
        f.copy("src", o)
        f.copy(f["src/sub/d"], o, name="flat")
        np.testing.assert_array_equal(o["src/sub/d"][...], f["src/sub/d"][...])
        np.testing.assert_array_equal(o["flat"][...], f["src/sub/d"][...])
    for g in (f, h):
        # h5py's error types: RuntimeError from HDF5's copy, TypeError for
        # a destination that is neither a path nor a group.
        with pytest.raises(RuntimeError):
            g.copy("nope", "x")
        with pytest.raises(RuntimeError):
            g.copy("src", "dst")
        with pytest.raises(TypeError):
            g.copy("src", 5)


def test_copy_in_slabs(f, monkeypatch):
    import arca._group

    monkeypatch.setattr(arca._group, "_COPY_SLAB_BYTES", 1000)
    data = np.arange(100 * 50, dtype="<f8").reshape(100, 50)
    f.create_dataset("big", data=data, chunks=(7, 50))
    f.copy("big", "big2")
    np.testing.assert_array_equal(f["big2"][...], data)
    assert f["big2"].chunks == (7, 50)
