"""Random sequences of operations applied to arca and to h5py side by side
(and to an in-memory model), compared after every step and after reopening."""

import h5py
import numpy as np
import pytest

import arca


def snapshot(g):
    """{path: ("G", attrs) or ("D", dtype, shape, bytes, attrs)} below g."""
    out = {}

    def add(name, obj):
        attrs = {k: np.asarray(obj.attrs[k]).tobytes() for k in sorted(obj.attrs)}
        if isinstance(obj, (arca.Dataset, h5py.Dataset)):
            data = obj[...]
            out[name] = ("D", data.dtype.str.lstrip("<>=|"), data.shape,
                         np.ascontiguousarray(data, data.dtype.newbyteorder("=")).tobytes(), attrs)
        else:
            out[name] = ("G", attrs)

    g.visititems(add)
    return out


def all_paths(f):
    paths = []
    f.visit(paths.append)
    return paths


@pytest.mark.parametrize("seed", range(20))
def test_random_operation_sequences_match_h5py(seed, path, h5path):
    rng = np.random.default_rng(500 + seed)
    names = ["a", "b", "c", "d"]
    with arca.File(path, "w") as f, h5py.File(h5path, "w") as h:
        biggest = 0
        for step in range(150):
            paths = all_paths(h)
            groups = [""] + [p for p in paths if isinstance(h[p], h5py.Group)]
            dsets = [p for p in paths if isinstance(h[p], h5py.Dataset)]
            # Creation outweighs deletion so the tree keeps growing.
            op = rng.choice(7, p=[0.2, 0.3, 0.08, 0.1, 0.12, 0.1, 0.1])
            parent = groups[int(rng.integers(0, len(groups)))]
            name = (parent + "/" if parent else "") + names[int(rng.integers(0, 4))]
            exists = name in h
            if op == 0 and not exists:
                f.create_group(name)
                h.create_group(name)
            elif op == 1 and not exists:
                n = int(rng.integers(0, 20))
                data = rng.integers(-100, 100, n).astype(rng.choice(["<i4", ">i2", "<f8", "u1"]))
                chunks = (int(rng.integers(1, 8)),) if n and rng.random() < 0.5 else None
                maxshape = (None,) if chunks else None
                f.create_dataset(name, data=data, chunks=chunks, maxshape=maxshape)
                h.create_dataset(name, data=data, chunks=chunks, maxshape=maxshape)
            elif op == 2 and paths:
                p = paths[int(rng.integers(0, len(paths)))]
                del f[p]
                del h[p]
            elif op == 3 and paths and not exists:
                p = paths[int(rng.integers(0, len(paths)))]
                if not (name + "/").startswith(p + "/"):
                    f.move(p, name)
                    h.move(p, name)
            elif op == 4 and (groups or dsets):
                p = (groups + dsets)[int(rng.integers(0, len(groups) + len(dsets)))]
                k = names[int(rng.integers(0, 4))]
                v = rng.standard_normal(int(rng.integers(1, 4)))
                f[p or "/"].attrs[k] = v
                h[p or "/"].attrs[k] = v
            elif op == 5 and dsets:
                p = dsets[int(rng.integers(0, len(dsets)))]
                if h[p].chunks is not None:
                    n = int(rng.integers(0, 30))
                    f[p].resize((n,))
                    h[p].resize((n,))
                elif h[p].size:
                    i = int(rng.integers(0, h[p].size))
                    f[p][i] = 42
                    h[p][i] = 42
            elif op == 6 and dsets:
                p = dsets[int(rng.integers(0, len(dsets)))]
                if h[p].size:
                    sl = slice(int(rng.integers(0, h[p].size)), None, int(rng.integers(1, 4)))
                    v = rng.integers(0, 100, len(range(*sl.indices(h[p].size))))
                    f[p][sl] = v
                    h[p][sl] = v
            if step % 20 == 0:
                snap = snapshot(h)
                assert snapshot(f) == snap
                biggest = max(biggest, len(snap))
        final = snapshot(h)
        assert biggest >= 5  # the sequence built something worth comparing
        assert snapshot(f) == final
    with arca.File(path) as f:
        assert snapshot(f) == final
        f.check()
