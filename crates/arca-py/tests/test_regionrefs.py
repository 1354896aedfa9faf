"""Region references checked against h5py: each script runs with ``arca``
and with ``h5py`` as ``lib`` and must give the same results (errors as
exception type names), then again after reopening the file read-only."""

import numpy as np
import pytest

import arca
import h5py

from conftest import describe, outcome, same_in_both

KEYS = [
    np.s_[1:3, 2:4], np.s_[...], np.s_[()], np.s_[2], np.s_[::2, 3], np.s_[-2:, ::4],
    np.s_[[0, 2, 5], 1:3], np.s_[[1, 2], ::3], np.s_[0:0], np.s_[3, [1, 4, 9]],
    np.s_[arca.MultiBlockSlice(start=0, stride=3, count=2, block=2), 0],
]
MULTI = {arca: arca.MultiBlockSlice, h5py: h5py.MultiBlockSlice}


def keys(lib):
    """KEYS with the library's own MultiBlockSlice."""
    out = []
    for k in KEYS:
        if isinstance(k, tuple) and k and isinstance(k[0], arca.MultiBlockSlice):
            m = k[0]
            k = (MULTI[lib](start=m.start, stride=m.stride, count=m.count, block=m.block),) + k[1:]
        out.append(k)
    return out


def test_make_and_read_regions(tmp_path):
    def script(lib, f, reopened):
        if not reopened:
            d = f.create_dataset("d", data=np.arange(60).reshape(6, 10))
            s = f.create_dataset("s", data=7.5)
            made = [d.regionref[k] for k in keys(lib) + [d[()] % 7 == 0]] + [s.regionref[()]]
            f.create_dataset("made", data=made, dtype=lib.regionref_dtype)
        d, s = f["d"], f["s"]
        out = []
        for r in f["made"][()]:
            obj = f[r]
            out.append((obj[r], obj[r].dtype.str, d.regionref.shape(r), d.regionref.selection(r),
                        bool(r), obj.name, s.regionref.selection(r)))
        return out

    same_in_both(tmp_path, script)


def test_store_in_datasets_and_attributes(tmp_path):
    def script(lib, f, reopened):
        if not reopened:
            d = f.create_dataset("d", data=np.arange(20.0).reshape(4, 5))
            refs = f.create_dataset("refs", (4,), dtype=lib.regionref_dtype)
            refs[0] = d.regionref[1:3, ::2]
            refs[2] = d.regionref[[0, 3], 4]
            refs[3] = d.regionref[d[()] > 17]
            f.attrs["one"] = d.regionref[2]
            f.attrs.create("many", [d.regionref[0], d.regionref[3, 1:]], dtype=lib.regionref_dtype)
            g = f.create_group("g")
            g.create_dataset("more", data=[d.regionref[:, 0]], dtype=lib.regionref_dtype)
        d, refs = f["d"], f["refs"]
        vals = refs[()]
        return [
            refs.dtype.kind, lib.check_dtype(ref=refs.dtype).__name__, refs.shape,
            [bool(x) for x in vals], [d[x] for x in vals if x],
            [f[x].name for x in vals if x],
            d[f.attrs["one"]], [d[x] for x in f.attrs["many"]],
            d[f["g/more"][0]], type(refs[1]).__name__, bool(refs[1]),
            lib.check_dtype(ref=lib.regionref_dtype).__name__,
        ]

    same_in_both(tmp_path, script)


def test_errors_match(tmp_path):
    def script(lib, f, reopened):
        if not reopened:
            d = f.create_dataset("d", data=np.arange(10))
            f.create_dataset("e", data=np.arange(4))
            f.create_group("g")
            f.attrs["r"] = d.regionref[2:4]
            return [
                outcome(lambda: f["g"].regionref[0]),
                outcome(lambda: d.regionref[[3, 1]]),
                outcome(lambda: d.regionref[20]),
                outcome(lambda: d.regionref[::-1]),
            ]
        d, e = f["d"], f["e"]
        r = f.attrs["r"]
        return [
            outcome(lambda: e[r]),
            outcome(lambda: d[lib.RegionReference()]),
            outcome(lambda: f[lib.RegionReference()]),
            bool(lib.RegionReference()),
            f["g"].regionref.shape(r), f["g"].regionref.selection(r),
        ]

    same_in_both(tmp_path, script)


def test_refs_survive_repack_and_rust_checks(tmp_path):
    """``arca repack`` points region references at the copies; ``check``
    decodes every one."""
    src, dst = tmp_path / "a.arca", tmp_path / "b.arca"
    with arca.File(src, "w") as f:
        f.create_dataset("pad", data=np.zeros(1000))
        d = f.create_dataset("d", data=np.arange(12).reshape(3, 4))
        f.create_dataset("refs", data=[d.regionref[1:, 2], arca.RegionReference()],
                         dtype=arca.regionref_dtype)
        f.attrs["r"] = d.regionref[0]
        del f["pad"]
    import subprocess
    import os
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
    exe = os.path.join(root, "target", "release", "arca")
    if not os.path.exists(exe):
        pytest.skip("the release arca command is not built")
    subprocess.run([exe, "repack", str(src), str(dst)], check=True, capture_output=True)
    subprocess.run([exe, "check", str(dst)], check=True, capture_output=True)
    with arca.File(dst) as f:
        d = f["d"]
        assert d[f["refs"][0]].tolist() == [[6], [10]]
        assert not f["refs"][1]
        assert d[f.attrs["r"]].tolist() == [[0, 1, 2, 3]]
    out = subprocess.run([exe, "dump", str(dst)], check=True, capture_output=True, text=True).stdout
    assert "region of" in out and "hyperslab" in out


def test_refused_values(tmp_path):
    with arca.File(tmp_path / "x.arca", "w") as f:
        refs = f.create_dataset("refs", (2,), dtype=arca.regionref_dtype)
        with pytest.raises(TypeError):
            refs[0] = 5
        with pytest.raises(TypeError):
            f.attrs.create("x", [1, 2], dtype=arca.regionref_dtype)
        assert describe(arca.RegionReference()) == ("ref", False)
