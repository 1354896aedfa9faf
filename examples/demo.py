"""A tour of arca from Python: groups, typed and compressed datasets,
partial I/O, attributes, an atomic transaction, space that comes back, a
file that survives damage checks, and a reader in another process beside
the writer.

    python examples/demo.py out/demo_py.arca
"""
import os
import sys

import numpy as np

import arca


def main(path):
    rng = np.random.default_rng(0)
    with arca.File(path, "w") as f:
        run = f.create_group("runs/2026-11-23")
        run.attrs["operator"] = "demo"
        run.attrs["gain"] = 1.5
        temps = run.create_dataset(
            "temperature", data=np.cumsum(rng.normal(size=(1000, 64)), axis=0).astype("f4"),
            chunks=(100, 64), compression="zstd", compression_opts=3, shuffle=True)
        events = run.create_dataset("events", shape=(0,), maxshape=(None,), dtype="i8",
                                    chunks=(4096,), compression="lz4")
        events.resize((10000,))
        events[::2] = np.arange(5000)
        f.create_dataset("scratch", data=np.zeros(2_000_000))
        print(f"wrote {path}: temperature {temps.shape} {temps.dtype} (zstd), events {events.shape}")

    with arca.File(path, "r+") as f:
        t = f["runs/2026-11-23/temperature"]
        print("rows 10..12, every 16th column:", t[10:12, ::16])
        size_before = os.path.getsize(path)
        try:
            with f.transaction():
                del f["scratch"]
                f["runs"].attrs["cleaned"] = True
                raise RuntimeError("changed my mind")
        except RuntimeError:
            pass
        print("after a rolled-back transaction, 'scratch' is still there:", "scratch" in f)
        with f.transaction():
            del f["scratch"]
        free = f.space_info()["free_bytes"]
        print(f"deleted 16 MB of scratch data: {free:,} bytes are free for reuse")
        f.create_dataset("results", data=rng.normal(size=1_000_000))
    print(f"wrote 8 MB of results into the freed space: file {size_before:,} -> {os.path.getsize(path):,} bytes")

    with arca.File(path) as f:
        s = f.check()
        print(f"check: {s['groups']} groups, {s['datasets']} datasets, {s['attributes']} attributes, "
              f"{s['unused_bytes']} bytes unused")

    # A reader in another process beside a writer: it keeps the commit it
    # opened at, whatever the writer does, until it refreshes.
    import multiprocessing as mp
    ctx = mp.get_context("spawn")
    opened, committed, out = ctx.Event(), ctx.Event(), ctx.Queue()
    with arca.File(path, "r+") as w:
        w.attrs["step"] = 1
        w.flush()
        p = ctx.Process(target=read_beside_writer, args=(path, opened, committed, out))
        p.start()
        if not opened.wait(60):
            raise RuntimeError("the reader did not open the file")
        w.attrs["step"] = 2
        w.create_group("runs/2026-11-24")
        w.flush()
        committed.set()
        print("a reader in another process, beside the writer:", out.get(timeout=60))
        p.join(60)

    with arca.File("scratch", "w", driver="memory", compress=True) as m:
        m["x"] = np.repeat(np.arange(1 << 16, dtype="f8"), 32)
        m.flush()
        print(f"compressed in-memory file: {m['x'].nbytes:,} bytes of data held in {m.memory_bytes:,} bytes of RAM")


def read_beside_writer(path, opened, committed, out):
    """Open beside the writer, wait for its next commit, then refresh."""
    with arca.File(path, "r") as r:
        before = int(r.attrs["step"])
        opened.set()
        committed.wait(60)
        still = int(r.attrs["step"])
        moved = r.refresh()
        after = (int(r.attrs["step"]), "runs/2026-11-24" in r)
    out.put(f"step {before}, still {still} after the writer's commit, refresh() -> {moved}, "
            f"then step {after[0]} and the new group {'there' if after[1] else 'missing'}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "demo_py.arca")
