"""The core's free lists from Python: gc, statistics, limits, the switch."""

import numpy as np

import arca


def test_pools_are_used_and_gc_empties_them(tmp_path):
    with arca.File(tmp_path / "p.arca", "w") as f:
        ds = f.create_dataset("d", shape=(4096,), dtype="f8", chunks=(512,), compression="zstd")
        for i in range(3):
            ds[:] = np.arange(4096) + i
    stats = {s["name"]: s for s in arca.pool_stats()}
    assert stats["chunk buffers"]["hits"] > 0
    assert {"held", "held_bytes", "in_use", "hits", "misses", "released", "kind"} <= set(stats["pages"])
    arca.gc()
    assert all(s["held"] == 0 for s in arca.pool_stats())


def test_limits_and_switch():
    old = arca.set_pool_limits()
    assert arca.set_pool_limits(per_list=1 << 20) == (1 << 20, old[1])
    arca.set_pool_limits(*old)
    was = arca.set_pooling(False)
    try:
        assert all(s["held"] == 0 for s in arca.pool_stats())
    finally:
        arca.set_pooling(was)
