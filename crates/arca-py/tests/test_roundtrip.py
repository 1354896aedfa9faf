"""Random datasets and selections, checked against numpy and against h5py
doing the same operations, then reopened and read back bit-exact."""

import h5py
import numpy as np
import pytest

import arca
from conftest import ALL_DTYPES, assert_same, outcome, random_array

COMPRESSIONS = [None, "gzip", "zstd", "lz4"]


def random_shape(rng):
    rank = int(rng.integers(1, 5))
    return tuple(int(x) for x in rng.integers(1, 13 if rank > 2 else 40, rank))


def random_chunks(rng, shape):
    return tuple(int(rng.integers(1, s + 1)) for s in shape)


def random_slice(rng, n, negative_steps):
    """A slice over an axis of length n, sometimes open-ended or out of range."""
    def bound():
        r = rng.random()
        if r < 0.25:
            return None
        return int(rng.integers(-n - 2, n + 3))

    step = int(rng.integers(1, 4))
    if negative_steps and rng.random() < 0.3:
        step = -step
    if rng.random() < 0.2:
        step = None
    return slice(bound(), bound(), step)


def random_key(rng, shape, h5_compatible):
    """A numpy index; h5py-compatible ones use no negative steps, empty
    results, new axes or ellipses in the middle."""
    key = []
    for n in shape:
        r = rng.random()
        if r < 0.25:
            key.append(int(rng.integers(-n, n)))
        elif r < 0.35 and not h5_compatible:
            key.append(Ellipsis if Ellipsis not in key else slice(None))
        elif r < 0.42 and not h5_compatible:
            key.append(None)
            key.append(random_slice(rng, n, True))
        else:
            s = random_slice(rng, n, not h5_compatible)
            if h5_compatible:
                a, b, st = s.indices(n)
                if len(range(a, b, st)) == 0:
                    s = slice(0, n, st)
            key.append(s)
    if not h5_compatible and rng.random() < 0.3:
        key = key[: int(rng.integers(0, len(key) + 1))]
    return tuple(key)


def h5_dataset(h, name, ref, chunks, compression, opts, shuffle):
    kw = {}
    if compression == "gzip":
        kw.update(compression="gzip", compression_opts=opts)
    elif compression is not None:
        # h5py ships without zstd/lz4; its gzip has the same semantics here.
        kw.update(compression="gzip")
    return h.create_dataset(name, data=ref, chunks=chunks, shuffle=shuffle, **kw)


CASES = list(range(120))


@pytest.mark.parametrize("seed", CASES)
def test_random_datasets_match_numpy_and_h5py(seed, path, h5path):
    rng = np.random.default_rng(1000 + seed)
    dtype = ALL_DTYPES[seed % len(ALL_DTYPES)]
    shape = random_shape(rng)
    chunked = rng.random() < 0.75
    chunks = random_chunks(rng, shape) if chunked else None
    compression = COMPRESSIONS[int(rng.integers(0, 4))] if chunked else None
    opts = {"gzip": int(rng.integers(0, 10)), "zstd": int(rng.integers(-3, 10))}.get(compression)
    shuffle = bool(chunked and rng.random() < 0.5)
    ref = random_array(rng, shape, dtype)

    with arca.File(path, "w") as f, h5py.File(h5path, "w") as h:
        ds = f.create_dataset("g/d", data=ref, chunks=chunks, compression=compression,
                              compression_opts=opts, shuffle=shuffle)
        hd = h5_dataset(h, "g/d", ref, chunks, compression, opts, shuffle)
        assert ds.shape == hd.shape == ref.shape
        assert ds.dtype == np.dtype(dtype)
        assert ds.chunks == chunks
        assert ds.compression == compression
        assert ds.shuffle == shuffle
        assert_same(ds[...], ref)

        # Reads: the h5py subset against numpy and h5py; anything else
        # numpy accepts (negative steps, new axes) fails as in h5py.
        for _ in range(12):
            key = random_key(rng, shape, h5_compatible=False)
            same_outcome(lambda: ds[key], lambda: hd[key])
            hkey = random_key(rng, shape, h5_compatible=True)
            assert_same(ds[hkey], ref[hkey])
            assert_same(ds[hkey], hd[hkey])

        # Writes: the same random updates to all three.
        for _ in range(8):
            key = random_key(rng, shape, h5_compatible=True)
            target = ref[key]
            val = random_array(rng, np.shape(target), dtype)
            ref[key] = val
            ds[key] = val
            hd[key] = val
            key = random_key(rng, shape, h5_compatible=False)
            val = random_array(rng, np.shape(ref[key]), dtype)
            if same_outcome(lambda: ds.__setitem__(key, val),
                            lambda: hd.__setitem__(key, val)):
                ref[key] = val
        assert_same(ds[...], ref)
        assert_same(hd[...], ref)

    with arca.File(path, "r") as f:
        ds = f["g/d"]
        assert ds.dtype == np.dtype(dtype)
        assert_same(ds[...], ref)
        assert_same(np.asarray(ds), ref)
        assert ds.chunks == chunks and ds.compression == compression
        if compression in ("gzip", "zstd"):
            assert ds.compression_opts == opts
        f.check()


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_every_dtype_roundtrips_bit_exact(dtype, path):
    rng = np.random.default_rng(7)
    ref = random_array(rng, (17, 5), dtype)
    with arca.File(path, "w") as f:
        f.create_dataset("contig", data=ref)
        f.create_dataset("chunked", data=ref, chunks=(4, 3), compression="zstd", shuffle=True)
    with arca.File(path) as f:
        for name in ("contig", "chunked"):
            got = f[name][...]
            assert f[name].dtype == np.dtype(dtype)
            assert got.dtype.isnative or got.dtype.itemsize == 1
            assert_same(got, ref)


def test_float_specials_survive_bit_exact(path):
    ref = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 5e-324, 1.7976931348623157e308])
    payload = np.frombuffer(np.uint64(0x7FF0000000000123).tobytes(), dtype="<f8")
    ref = np.concatenate([ref, payload])
    with arca.File(path, "w") as f:
        f["x"] = ref
        f.create_dataset("y", data=ref.astype(">f8"), chunks=(3,), compression="gzip")
    with arca.File(path) as f:
        assert f["x"][...].tobytes() == ref.tobytes()
        assert f["y"][...].tobytes() == ref.tobytes()


def test_arbitrary_bytes_with_embedded_nuls_roundtrip(path):
    rng = np.random.default_rng(3)
    data = rng.integers(0, 256, 64 * 9, dtype=np.uint8).view("S9")
    with arca.File(path, "w") as f:
        f.create_dataset("s", data=data, chunks=(10,), compression="lz4")
    with arca.File(path) as f:
        assert f["s"][...].tobytes() == data.tobytes()
        assert f["s"].dtype == np.dtype("S9")


@pytest.mark.parametrize("seed", range(6))
def test_large_chunked_dataset_matches_h5py(seed, pair):
    f, h = pair
    rng = np.random.default_rng(seed)
    ref = rng.integers(0, 1000, (300, 257)).astype("<i4")
    chunks = (int(rng.integers(8, 80)), int(rng.integers(8, 80)))
    ds = f.create_dataset("d", data=ref, chunks=chunks, compression="zstd", shuffle=True)
    hd = h.create_dataset("d", data=ref, chunks=chunks, compression="gzip", shuffle=True)
    for _ in range(10):
        a, b = sorted(int(x) for x in rng.integers(0, 300, 2))
        c, d = sorted(int(x) for x in rng.integers(0, 257, 2))
        s0, s1 = int(rng.integers(1, 7)), int(rng.integers(1, 7))
        key = (slice(a, b + 1, s0), slice(c, d + 1, s1))
        assert_same(ds[key], hd[key])
        v = rng.integers(-5, 5, ref[key].shape).astype("<i4")
        ds[key] = v
        hd[key] = v
    assert_same(ds[...], hd[...])


def fancy_key(rng, shape):
    """A key with one list or boolean index among integers, slices (any
    step) and new axes: numpy's advanced-indexing rules apply."""
    entries = []
    for n in shape:
        r = rng.random()
        if r < 0.3:
            entries.append(int(rng.integers(-n, n)))
        elif r < 0.7:
            entries.append(random_slice(rng, n, True))
        else:
            entries.append(slice(None))
    ax = int(rng.integers(0, len(shape)))
    n = shape[ax]
    if rng.random() < 0.7:
        entries[ax] = [int(i) for i in rng.integers(-n, n, int(rng.integers(0, 6)))]
    else:
        entries[ax] = rng.random(n) < 0.5
    for _ in range(int(rng.integers(0, 3))):
        entries.insert(int(rng.integers(0, len(entries) + 1)), None)
    if rng.random() < 0.3 and isinstance(entries[-1], slice) and entries[-1] == slice(None):
        entries[-1] = Ellipsis
    return tuple(entries)


def same_outcome(a, h):
    """Run the same operation on arca and on h5py: the same exception type
    (False), or equal results (True)."""
    ra, rh = outcome(a), outcome(h)
    failed = isinstance(ra, str), isinstance(rh, str)
    if any(failed):
        assert all(failed) and ra == rh, (ra if failed[0] else "value", rh if failed[1] else "value")
        return False
    if rh is not None:
        assert_same(ra, rh)
    return True


@pytest.mark.parametrize("seed", range(30))
def test_list_indices_follow_h5py(seed, path, h5path):
    rng = np.random.default_rng(7000 + seed)
    shape = tuple(int(x) for x in rng.integers(1, 9, int(rng.integers(1, 4))))
    dtype = ["<i4", ">f8", "u1", "S3"][seed % 4]
    ref = random_array(rng, shape, dtype)
    chunks = random_chunks(rng, shape) if seed % 2 else None
    with arca.File(path, "w") as f, h5py.File(h5path, "w") as h:
        ds = f.create_dataset("d", data=ref, chunks=chunks)
        hd = h.create_dataset("d", data=ref, chunks=chunks)
        for _ in range(15):
            key = fancy_key(rng, shape)
            same_outcome(lambda: ds[key], lambda: hd[key])
            # Sorted, without new axes or negative steps, h5py takes it too.
            key = tuple(sorted(set(int(i) % shape[a] for i in k)) if isinstance(k, list) else
                        slice(k.start, k.stop, abs(k.step)) if isinstance(k, slice) and k.step
                        else k
                        for a, k in enumerate(x for x in key if x is not None))
            if not same_outcome(lambda: ds[key], lambda: hd[key]):
                continue
            val = random_array(rng, np.shape(hd[key]), dtype)
            same_outcome(lambda: ds.__setitem__(key, val), lambda: hd.__setitem__(key, val))
            assert_same(ds[...], hd[...])
