"""The fast path of dataset indexing against numpy on the same array.

Every key the native fast path takes (integers, numpy integers, slices with
positive steps, ``...``, tuples of these, one increasing index list or 1-D
integer array) is read from datasets of several ranks, types and layouts
and compared with numpy indexing the array that was written: seeded random
keys, so a failure repeats. Keys it declines still read through the
general path, with h5py's results and errors.
"""

import random

import numpy as np
import pytest

import arca

SEED = 36
KEYS_PER_DATASET = 150

LAYOUTS = {
    "contiguous": {},
    "chunked": {"chunks": True},
    "gzip": {"chunks": True, "compression": "gzip"},
    "compact": {"layout": "compact"},
}
DTYPES = ["<f8", ">i4", "<u2", "i1", "<c16", np.dtype([("a", "<i4"), ("b", "<f8")]),
          "bool"]


def values(rng, shape, dt):
    dt = np.dtype(dt)
    n = int(np.prod(shape))
    if dt.names:
        a = np.zeros(n, dt)
        a["a"] = np.arange(n)
        a["b"] = np.arange(n) * 0.5
        return a.reshape(shape)
    if dt.kind == "b":
        return (np.arange(n) % 3 == 0).reshape(shape)
    if dt.kind == "c":
        return (np.arange(n) + 1j * np.arange(n)).astype(dt).reshape(shape)
    return (np.arange(n) % 120).astype(dt).reshape(shape)


def chunks_for(rng, shape):
    return tuple(rng.randint(1, max(1, s)) for s in shape)


def random_item(rng, n):
    """One axis of a key the fast path takes."""
    kind = rng.choice(["int", "npint", "neg", "slice", "slice", "step", "full"])
    if kind == "int":
        return rng.randrange(n)
    if kind == "npint":
        return rng.choice([np.int64, np.int32, np.uint16])(rng.randrange(min(n, 60000)))
    if kind == "neg":
        return -rng.randint(1, n)
    if kind == "full":
        return slice(None)
    a, b = sorted(rng.randint(-n - 2, n + 2) for _ in range(2))
    if kind == "slice":
        return slice(a if rng.random() < 0.8 else None, b if rng.random() < 0.8 else None)
    return slice(a, b, rng.randint(1, 4))


def random_list(rng, n):
    k = rng.randint(1, min(n, 12))
    idx = sorted(rng.sample(range(n), k))
    if rng.random() < 0.3:
        idx = [i - n if rng.random() < 0.5 else i for i in idx]  # negatives, still increasing
        if any(b <= a for a, b in zip([x % n for x in idx], [x % n for x in idx][1:])):
            idx = sorted(rng.sample(range(n), k))
    if rng.random() < 0.5:
        return np.array(idx, dtype=rng.choice(["i8", "i4", "u4"])) if min(idx) >= 0 \
            else np.array(idx)
    return idx


def random_key(rng, shape):
    items = [random_item(rng, n) for n in shape]
    if rng.random() < 0.35:
        ax = rng.randrange(len(shape))
        items[ax] = random_list(rng, shape[ax])
    # Drop trailing axes, or put an Ellipsis in for some of them.
    r = rng.random()
    if r < 0.25:
        items = items[: rng.randint(1, len(items))]
    elif r < 0.45:
        lo = rng.randint(0, len(items))
        hi = rng.randint(lo, len(items))
        if not any(isinstance(i, (list, np.ndarray)) for i in items[lo:hi]):
            items = items[:lo] + [Ellipsis] + items[hi:]
    if len(items) == 1 and rng.random() < 0.5:
        return items[0]
    return tuple(items)


def numpy_read(a, key):
    """What h5py reads for ``key``, from numpy: axes stay in order (numpy
    moves a list's axis first when integers stand apart from it, h5py
    does not), so integers are read as one-element slices and their axes
    dropped after; a selection of one element is a scalar."""
    items = list(key) if isinstance(key, tuple) else [key]
    if any(k is Ellipsis for k in items):
        i = next(j for j, k in enumerate(items) if k is Ellipsis)
        items[i:i + 1] = [slice(None)] * (a.ndim - len(items) + 1)
    items += [slice(None)] * (a.ndim - len(items))
    ints = [isinstance(k, (int, np.integer)) for k in items]
    box = a[tuple(slice(range(n)[k], range(n)[k] + 1) if isint else k
                  for k, n, isint in zip(items, a.shape, ints))]
    want = box.reshape(tuple(n for n, isint in zip(box.shape, ints) if not isint))
    return want[()] if want.ndim == 0 else want


def datasets(tmp_path):
    rng = random.Random(SEED)
    path = tmp_path / "fast.arca"
    made = []
    with arca.File(path, "w") as f:
        k = 0
        for layout, opts in LAYOUTS.items():
            for dt in DTYPES:
                for rank in (1, 2, 3):
                    shape = tuple(rng.randint(1, 9 if rank == 3 else 40) for _ in range(rank))
                    if layout == "compact" and np.prod(shape) * np.dtype(dt).itemsize > 4000:
                        continue
                    if layout == "gzip" and np.dtype(dt).kind == "c":
                        continue
                    o = dict(opts)
                    if o.get("chunks") is True:
                        o["chunks"] = chunks_for(rng, shape)
                    a = values(rng, shape, dt)
                    name = f"d{k}"
                    k += 1
                    f.create_dataset(name, data=a, **o)
                    made.append((name, a))
    return path, made


def test_every_key_the_fast_path_takes_reads_as_numpy(tmp_path):
    path, made = datasets(tmp_path)
    rng = random.Random(SEED + 1)
    taken = 0
    with arca.File(path, "r") as f:
        for name, a in made:
            ds = f[name]
            ds[()]  # noqa: B018 -- decides the fast path
            assert ds._fast, name
            for _ in range(KEYS_PER_DATASET):
                key = random_key(rng, a.shape)
                want = numpy_read(a, key)
                got = ds._id.read_key(key)
                assert got is not None, (name, a.shape, key)
                taken += 1
                assert type(got) is type(want), (name, key, type(got), type(want))
                assert np.shape(got) == np.shape(want), (name, a.shape, key)
                assert np.asarray(got).dtype == ds._memtype  # native order, as always
                assert np.array_equal(got, want), (name, key)
                # And through indexing, the same.
                assert np.array_equal(ds[key], want)
    assert taken == KEYS_PER_DATASET * len(made)


def test_a_writable_file_and_a_resize_are_seen(tmp_path):
    with arca.File(tmp_path / "w.arca", "w") as f:
        ds = f.create_dataset("x", data=np.arange(10.0), chunks=(4,), maxshape=(None,))
        assert ds[3] == 3.0 and ds._fast
        ds.resize((20,))
        ds[10:] = np.arange(10.0) + 100
        assert np.array_equal(ds[8:13], [8, 9, 100, 101, 102])
        # Another handle on the same dataset changes it: this one sees it.
        f["x"].resize((5,))
        assert ds.shape == (5,)
        assert np.array_equal(ds[...], np.arange(5.0))
        with pytest.raises(IndexError):
            ds[7]
        c = f.create_dataset("c", data=np.arange(6, dtype="<i2"))
        c[2:4] = [-1, -2]
        assert c[1:5].tolist() == [1, -1, -2, 4]


def test_a_reader_sees_its_snapshot_until_it_refreshes(tmp_path):
    p = tmp_path / "s.arca"
    with arca.File(p, "w") as f:
        f.create_dataset("x", data=np.arange(1000.0))
    w = arca.File(p, "a")
    try:
        r = arca.File(p, "r")
        try:
            x = r["x"]
            assert x[500:503].tolist() == [500, 501, 502]
            w["x"][500:503] = [-1, -2, -3]
            w.flush()
            # The reader's snapshot is unchanged (the window read before
            # holds the old bytes, and so does the file's history)...
            assert x[500:503].tolist() == [500, 501, 502]
            assert x[499:504].tolist() == [499, 500, 501, 502, 503]
            assert [x[i] for i in (499, 500, 502, -500)] == [499, 500, 502, 500]
            assert r.refresh()
            # ...and after moving on it shows the new commit.
            assert x[500:503].tolist() == [-1, -2, -3]
            assert [x[i] for i in (499, 500, 502, -500)] == [499, -1, -3, -1]
        finally:
            r.close()
    finally:
        w.close()


def test_scalar_and_empty_datasets(tmp_path):
    with arca.File(tmp_path / "e.arca", "w") as f:
        s = f.create_dataset("s", data=np.float32(2.5))
        assert s[()] == np.float32(2.5) and type(s[()]) is np.float32
        assert isinstance(s[...], np.ndarray) and s[...].shape == ()
        z = f.create_dataset("z", shape=(0, 3), dtype="i4")
        assert z[...].shape == (0, 3) and z[:, 1].shape == (0,)
        e = f.create_dataset("e", data=arca.Empty("f8"))
        assert isinstance(e[()], arca.Empty)
        big = f.create_dataset("b", data=np.arange(50))
        assert big[40:10].shape == (0,) and big[5:5].dtype == np.arange(1).dtype


def test_one_element_of_a_wide_compound_type(tmp_path):
    """Elements wider than the native path's stack buffer read whole."""
    dt = np.dtype([(f"f{i}", "<f8") for i in range(12)] + [("n", "<i2")])
    a = np.zeros((30, 4), dt)
    for i, name in enumerate(dt.names):
        a[name] = np.arange(120).reshape(30, 4) * (i + 1)
    with arca.File(tmp_path / "w.arca", "w") as f:
        ds = f.create_dataset("x", data=a, chunks=(7, 3))
        for key in [(0, 0), (29, 3), (-1, -4), (np.int32(13), 2)]:
            got = ds[key]
            assert ds._fast
            assert type(got) is np.void and got.dtype == dt
            assert got == a[key] and got.tobytes() == a[key].tobytes()


DECLINED = [
    ("field name", lambda a: "a"),
    ("None", lambda a: (0, None)),
    ("bool mask", lambda a: a["a"] > 3 if a.dtype.names else a > 3),
    ("unsorted list", lambda a: [3, 1]),
    ("repeated list", lambda a: [1, 1]),
    ("empty list", lambda a: []),
    ("two lists", lambda a: ([0, 1], [0, 1])),
    ("negative step", lambda a: slice(None, None, -1)),
    ("out of range", lambda a: 99),
    ("too many", lambda a: (0, 0, 0)),
    ("bool", lambda a: True),
    ("float", lambda a: 1.5),
    ("bool list", lambda a: np.array([True, False, True] + [False] * 5)),
]


@pytest.mark.parametrize("what,make", DECLINED, ids=[d[0] for d in DECLINED])
def test_declined_keys_go_through_the_general_path(tmp_path, what, make):
    dt = np.dtype([("a", "<i4"), ("b", "<f8")])
    a = np.zeros((8, 5), dt)
    a["a"] = np.arange(40).reshape(8, 5)
    with arca.File(tmp_path / "d.arca", "w") as f:
        ds = f.create_dataset("x", data=a, chunks=(3, 2))
        ds[0, 0]  # noqa: B018
        assert ds._fast
        key = make(a)
        assert ds._id.read_key(key) is None
        # The general path: numpy's (h5py's) answer, or h5py's error.
        try:
            want = a[key]
        except (IndexError, TypeError, ValueError):
            want = None
        if what in ("unsorted list", "repeated list", "two lists", "negative step", "float",
                    "too many", "out of range", "None"):
            with pytest.raises((IndexError, TypeError, ValueError)):
                ds[key]
        elif what == "bool":
            assert np.array_equal(ds[key], a[1])  # h5py takes True as 1
        else:
            assert want is not None
            assert np.array_equal(ds[key], want)


def test_types_the_fast_path_leaves_to_the_general_one(tmp_path):
    with arca.File(tmp_path / "t.arca", "w") as f:
        s = f.create_dataset("s", data=np.array([b"ab", b"c"], "S3"))
        assert s[1] == b"c" and not s._fast
        v = f.create_dataset("v", data=["x", "yz"], dtype=arca.string_dtype())
        assert v[1] == b"yz" and not v._fast
        arr = f.create_dataset("a", shape=(3,), dtype=np.dtype(("<i4", (2,))))
        arr[1] = [5, 6]
        assert arr[1].tolist() == [5, 6] and not arr._fast
        r = f.create_dataset("r", shape=(2,), dtype=arca.ref_dtype)
        r[0] = f["s"].ref
        assert f[r[0]] == f["s"] and not r._fast


def test_tiny_chunks_written_whole_and_appended_read_as_numpy(tmp_path):
    """64-byte chunks: a dataset written whole from one array, then grown
    and appended to in writes of several chunks and one chunk; random
    points (each index leaf and chunk met first on a file just opened),
    short slices across chunk edges and the whole array equal numpy."""
    rng = np.random.default_rng(SEED)
    a = rng.standard_normal(8 * 20000)
    p = tmp_path / "tiny.arca"
    with arca.File(p, "w") as f:
        ds = f.create_dataset("x", data=a, chunks=(8,), maxshape=(None,))
        for n in (8 * 37, 8, 5, 8 * 300):
            new = rng.standard_normal(n)
            ds.resize((ds.shape[0] + n,))
            ds[-n:] = new
            a = np.concatenate([a, new])
    with arca.File(p, "r") as f:
        ds = f["x"]
        for i in rng.integers(0, a.size, 3000):
            assert ds[int(i)] == a[i]
        for i in rng.integers(0, a.size - 20, 300):
            i = int(i)
            np.testing.assert_array_equal(ds[i:i + 19], a[i:i + 19])
        np.testing.assert_array_equal(ds[...], a)
