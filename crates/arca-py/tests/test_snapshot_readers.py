"""Snapshot readers in other processes beside one committing writer.

The writer makes mixed commits (groups and datasets created and deleted,
resizes, variable-length appends, attributes, transactions) and records in
each commit its number and a digest of the data it meant to commit. Reader
processes open, refresh and recompute the digest from what they see: any
torn or partial state shows as a mismatch or an error.
"""

import hashlib
import multiprocessing as mp
import os
import random

import numpy as np
import pytest

import arca
from conftest import scaled

COMMITS = scaled(2000)
READERS = 8


def digest_of(groups, log):
    h = hashlib.blake2b(digest_size=16)
    for name in sorted(groups):
        h.update(name.encode())
        h.update(np.asarray(groups[name], dtype=np.int64).tobytes())
    for row in log:
        h.update(np.asarray(row, dtype=np.int32).tobytes())
        h.update(b"|")
    return h.hexdigest()


def seen_digest(f):
    groups = {}
    data = f["data"]
    for name in data.keys():
        g = data[name]
        values = g["d"][...]
        if int(g.attrs["n"]) != len(values):
            raise AssertionError(f"{name}: attribute n={g.attrs['n']} but {len(values)} values")
        groups[name] = values
    log = [np.asarray(r) for r in f["log"][...]] if f["log"].shape[0] else []
    return digest_of(groups, log)


def values_for(k, n):
    return (np.arange(n, dtype=np.int64) * 7 + k * 1_000_003)


def writer(path, commits, seed, ready):
    rng = random.Random(seed)
    with arca.File(path, "a") as f:
        data = f["data"]
        logds = f["log"]
        # Go on from what the file holds (a second session continues).
        groups = {name: data[name]["d"][...] for name in data.keys()}
        log = [np.asarray(r) for r in logds[...]] if logds.shape[0] else []
        k = max((int(name[1:]) for name in groups), default=0)
        first = int(f.attrs["commit"]) + 1
        ready.set()
        for c in range(first, first + commits):
            op = rng.random()
            if op < 0.35 or not groups:
                k += 1
                name = f"g{k}"
                n = rng.randrange(0, 3000)
                g = data.create_group(name)
                g.create_dataset("d", data=values_for(k, n), maxshape=(None,),
                                 chunks=(512,), compression="zstd")
                g.attrs["n"] = n
                groups[name] = values_for(k, n)
            elif op < 0.55:
                name = rng.choice(sorted(groups))
                del data[name]
                del groups[name]
            elif op < 0.8:
                name = rng.choice(sorted(groups))
                g = data[name]
                kk = int(name[1:])
                n = rng.randrange(0, 4000)
                g["d"].resize((n,))
                g["d"][...] = values_for(kk, n)
                g.attrs["n"] = n
                groups[name] = values_for(kk, n)
            elif op < 0.95:
                row = np.arange(rng.randrange(0, 50), dtype=np.int32) + c
                m = logds.shape[0]
                logds.resize((m + 1,))
                logds[m] = row
                log.append(row)
            else:
                # Several changes in one transaction, which commits them
                # with the commit's number and digest: all or nothing.
                with f.transaction():
                    for _ in range(3):
                        k += 1
                        name = f"g{k}"
                        g = data.create_group(name)
                        g.create_dataset("d", data=values_for(k, 100), maxshape=(None,),
                                         chunks=(512,))
                        g.attrs["n"] = 100
                        groups[name] = values_for(k, 100)
                    f.attrs["commit"] = c
                    f.attrs["digest"] = digest_of(groups, log)
                continue
            f.attrs["commit"] = c
            f.attrs["digest"] = digest_of(groups, log)
            f.flush()


def reader(path, seed, done, out):
    rng = random.Random(seed)
    checked = 0
    errors = []
    last = 0
    try:
        f = arca.File(path, "r")
        while True:
            finished = done.is_set()
            c = int(f.attrs["commit"])
            if c < last:
                errors.append(f"commit went back from {last} to {c}")
            last = c
            if seen_digest(f) != f.attrs["digest"]:
                errors.append(f"commit {c}: digest mismatch")
            checked += 1
            if checked % 25 == 0:
                f.check()
            if finished:
                break
            if rng.random() < 0.1:
                # Reopen instead of refreshing: a new snapshot from scratch.
                f.close()
                f = arca.File(path, "r")
            else:
                f.refresh()
        f.refresh()
        if seen_digest(f) != f.attrs["digest"]:
            errors.append("the final commit's digest does not match")
        final = int(f.attrs["commit"])
        f.close()
    except Exception as e:  # reported, not raised: the parent counts
        errors.append(f"{type(e).__name__}: {e}")
        final = -1
    out.put((checked, errors, final))


def make_file(path):
    with arca.File(path, "w") as f:
        f.create_group("data")
        f.create_dataset("log", shape=(0,), maxshape=(None,), dtype=arca.vlen_dtype("i4"))
        f.attrs["commit"] = 0
        f.attrs["digest"] = digest_of({}, [])


def test_readers_never_see_a_torn_commit(tmp_path):
    path = str(tmp_path / "live.arca")
    make_file(path)
    ctx = mp.get_context("spawn")
    done = ctx.Event()
    ready = ctx.Event()
    out = ctx.Queue()
    w = ctx.Process(target=writer, args=(path, COMMITS, 1234, ready))
    w.start()
    assert ready.wait(60)
    rs = [ctx.Process(target=reader, args=(path, 100 + i, done, out)) for i in range(READERS)]
    for r in rs:
        r.start()
    w.join(600)
    assert w.exitcode == 0, "the writer failed"
    done.set()
    results = [out.get(timeout=300) for _ in rs]
    for r in rs:
        r.join(60)
    errors = [e for _, errs, _ in results for e in errs]
    assert errors == [], errors[:5]
    assert all(final == COMMITS for _, _, final in results), [f for _, _, f in results]
    checked = sum(n for n, _, _ in results)
    assert checked >= READERS, checked
    # No reader left: the space readers held is free again, and the file
    # is within 1.2x of its live data; the same churn once more, with no
    # reader, stays there.
    def ratio():
        with arca.File(path, "r") as f:
            s = f.stat()
            info = f.space_info()
        live = s["superblock_bytes"] + s["metadata_bytes"] + s["data_bytes"]
        assert s["file_bytes"] == live + info["free_bytes"], (s, info)
        return s["file_bytes"], live

    with arca.File(path, "r+") as f:
        f.attrs["closed"] = 1
    size, live = ratio()
    print(f"after the readers: file {size} bytes, live {live}: {size / live:.3f}x")
    assert size <= 1.2 * live, (size, live)
    writer(path, COMMITS // 4, 4321, ctx.Event())
    size, live = ratio()
    print(f"after {COMMITS // 4} more commits without readers: {size / live:.3f}x")
    assert size <= 1.2 * live, (size, live)
    with arca.File(path, "r") as f:
        f.check()
    # The last to close takes the sidecars away.
    assert not os.path.exists(path + "-readers")
    assert not os.path.exists(path + "-history")
