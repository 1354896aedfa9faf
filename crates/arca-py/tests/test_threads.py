"""Concurrent use from Python threads: the native layer releases the GIL
during I/O, and results stay exactly those of sequential use."""

import threading

import numpy as np

import arca


def test_parallel_readers_see_consistent_data(path):
    rng = np.random.default_rng(2)
    ref = rng.standard_normal((400, 300))
    with arca.File(path, "w") as f:
        f.create_dataset("d", data=ref, chunks=(50, 300), compression="zstd", shuffle=True)
    errors = []
    with arca.File(path) as f:
        ds = f["d"]

        def reader(seed):
            r = np.random.default_rng(seed)
            try:
                for _ in range(40):
                    a = int(r.integers(0, 399))
                    b = int(r.integers(a + 1, 401))
                    np.testing.assert_array_equal(ds[a:b, ::3], ref[a:b, ::3])
            except Exception as e:  # noqa: BLE001 -- collected and re-raised below
                errors.append(e)

        threads = [threading.Thread(target=reader, args=(s,)) for s in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors, errors[0]


def test_parallel_writers_to_disjoint_rows(path):
    with arca.File(path, "w") as f:
        ds = f.create_dataset("d", shape=(64, 1000), dtype="<i8", chunks=(8, 1000),
                              compression="lz4")

        def writer(k):
            for row in range(k, 64, 4):
                ds[row] = np.arange(1000) * row

        threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    with arca.File(path) as f:
        np.testing.assert_array_equal(f["d"][...], np.arange(64)[:, None] * np.arange(1000))
