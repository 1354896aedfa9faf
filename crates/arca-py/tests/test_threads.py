"""Concurrent use from Python threads: the native layer releases the GIL
during I/O, and results stay exactly those of sequential use."""

import threading
from concurrent.futures import ThreadPoolExecutor

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


def test_threads_read_one_file(tmp_path):
    data = np.random.default_rng(4).normal(size=(64, 4096)).astype("f4").round(2)
    p = tmp_path / "t.arca"
    with arca.File(p, "w") as f:
        f.create_dataset("z", data=data, chunks=(1, 4096), compression="gzip", shuffle=True)
    with arca.File(p, "r", rdcc_nbytes=0) as f:
        ds = f["z"]
        with ThreadPoolExecutor(4) as ex:
            rows = list(ex.map(lambda i: ds[i], range(64)))
    assert np.array_equal(np.stack(rows), data)


def test_readers_and_a_writer_thread(tmp_path):
    p = tmp_path / "w.arca"
    n = 16
    with arca.File(p, "w") as f:
        ds = f.create_dataset("z", shape=(n, 8192), dtype="i4", chunks=(1, 8192),
                              compression="zstd")
        for i in range(n):
            ds[i] = i

        def read(k):
            row = ds[k % n]
            # Each row is written whole: one value, belonging to that row.
            assert (row == row[0]).all() and row[0] % n == k % n
            return int(row[0])

        with ThreadPoolExecutor(3) as ex:
            futures = [ex.submit(read, k) for k in range(600)]
            for r in range(1, 40):
                ds[r % n] = r % n + n * r
                if r % 5 == 0:
                    f.flush()
            for fu in futures:
                fu.result()
        assert [int(ds[i][0]) % n for i in range(n)] == list(range(n))
