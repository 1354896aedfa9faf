"""A tour of arca from Python: groups, typed and compressed datasets,
partial I/O, attributes, an atomic transaction, space that comes back, and
a file that survives damage checks.

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

    with arca.File("scratch", "w", driver="memory", compress=True) as m:
        m["x"] = np.repeat(np.arange(1 << 16, dtype="f8"), 32)
        m.flush()
        print(f"compressed in-memory file: {m['x'].nbytes:,} bytes of data held in {m.memory_bytes:,} bytes of RAM")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "demo_py.arca")
