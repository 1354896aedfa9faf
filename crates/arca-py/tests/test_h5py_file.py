"""h5py's File keywords and File calls, run side by side on arca and h5py:
the same script, the same results and error types. Where a keyword takes
effect in arca (the chunk cache, the user block, locking) the effect is
checked on arca itself."""

import io
import os
import warnings

import h5py
import numpy as np
import pytest

import arca
from conftest import EXT

LIBS = (arca, h5py)


def outcome(fn):
    """A call's value, or the name of the error type h5py code sees: arca
    raises a refusal on a read-only file as ReadOnlyError (an OSError),
    and also as the type h5py raises there where that is another
    (ReadOnlyKeyError is a KeyError too), named here by that type."""
    try:
        return fn()
    except arca.ReadOnlyError as e:
        bases = type(e).__bases__
        return bases[-1].__name__ if len(bases) > 1 else "OSError"
    except Exception as e:  # noqa: BLE001 -- the type is the result compared
        return type(e).__name__


def both(tmp_path, script):
    """``script(lib, directory)`` for arca and h5py, each in a directory
    of its own; the two results must be equal."""
    got = {}
    for lib in LIBS:
        d = tmp_path / lib.__name__
        d.mkdir()
        got[lib] = script(lib, d)
    assert got[arca] == got[h5py]
    return got[arca]


def opened(lib, path, mode="w", **kw):
    """What opening with ``kw`` gives: the keyword's readback, or the
    error type."""
    def run():
        with lib.File(path, mode, **kw) as f:
            return f.libver, f.meta_block_size, f.swmr_mode, f.userblock_size, f.driver, f.mode
    return outcome(run)


@pytest.mark.parametrize("kw", [
    {},
    {"libver": "latest"},
    {"libver": "earliest"},
    {"libver": "v108"},
    {"libver": "v110"},
    {"libver": "v112"},
    {"libver": "v114"},
    {"libver": "v200"},
    {"libver": ("earliest", "v110")},
    {"libver": ("v110", "latest")},
    {"libver": ("latest", "v108")},
    {"libver": "bogus"},
    {"libver": ("earliest", "bogus")},
    {"meta_block_size": 4096},
    {"meta_block_size": "x"},
    {"alignment_threshold": 10, "alignment_interval": 4096},
    {"alignment_interval": 0},
    {"alignment_threshold": -1},
    {"rdcc_nbytes": 1 << 20, "rdcc_nslots": 521, "rdcc_w0": 0.5},
    {"rdcc_w0": 2},
    {"rdcc_w0": -0.5},
    {"rdcc_nbytes": -1},
    {"rdcc_nbytes": "x"},
    {"locking": True},
    {"locking": False},
    {"locking": "true"},
    {"locking": "false"},
    {"locking": "best-effort"},
    {"locking": "sometimes"},
    {"fs_strategy": "fsm", "fs_persist": True, "fs_threshold": 100},
    {"fs_strategy": "page", "fs_page_size": 4096, "page_buf_size": 16384,
     "min_meta_keep": 10, "min_raw_keep": 20},
    {"fs_strategy": "aggregate"},
    {"fs_strategy": "none"},
    {"fs_strategy": "bogus"},
    {"page_buf_size": 16384},
    {"fs_strategy": "fsm", "page_buf_size": 16384},
    {"track_times": True},
    {"track_times": "x"},
    {"userblock_size": 512},
    {"userblock_size": 4096},
    {"userblock_size": 0},
    {"userblock_size": 128},
    {"userblock_size": 513},
    {"userblock_size": "x"},
    {"driver": "sec2"},
    {"driver": "stdio"},
    {"driver": "core", "backing_store": False},
    {"driver": "core", "block_size": 1024},
    {"driver": "core", "bogus": 1},
    {"driver": "sec2", "block_size": 3},
    {"driver": "bogus"},
    {"bogus": 1},
    {"backing_store": True},
])
def test_file_keywords_like_h5py(tmp_path, kw):
    both(tmp_path, lambda lib, d: opened(lib, d / ("f" + EXT[lib]), "w", **kw))


@pytest.mark.parametrize("mode", ["r", "r+", "a", "w-"])
@pytest.mark.parametrize("kw", [
    {"fs_strategy": "page"},
    {"userblock_size": 512},
    {"userblock_size": 1024},
    {"page_buf_size": 16384},
    {"swmr": True},
])
def test_keywords_for_existing_files_like_h5py(tmp_path, mode, kw):
    def script(lib, d):
        p = d / ("f" + EXT[lib])
        with lib.File(p, "w", userblock_size=512) as f:
            f["x"] = np.arange(3)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = opened(lib, p, mode, **kw)
        return got, [w.category.__name__ for w in caught]
    both(tmp_path, script)


def test_swmr_mode_like_h5py(tmp_path):
    def script(lib, d):
        p = d / ("f" + EXT[lib])
        out = []
        with lib.File(p, "w", libver="latest") as f:
            g = f.create_group("g")
            out.append((f.swmr_mode, g.file.swmr_mode))
            f.swmr_mode = True
            out.append((f.swmr_mode, g.file.swmr_mode, f.mode))
            out.append(outcome(lambda: setattr(f, "swmr_mode", False)))
        with lib.File(p, "r", swmr=True) as f:
            out.append((f.swmr_mode, f.mode))
            out.append(outcome(lambda: setattr(f, "swmr_mode", True)))
        with lib.File(p, "r") as f:
            out.append(f.swmr_mode)
        return out
    both(tmp_path, script)


def test_drivers_like_h5py(tmp_path):
    def script(lib, d):
        out = []
        p = d / ("core" + EXT[lib])
        with lib.File(p, "w", driver="core", backing_store=False) as f:
            f["x"] = np.arange(4)
            out.append((f.driver, f.filename == str(p)))
        out.append(os.path.exists(p))
        with lib.File(p, "w", driver="core") as f:
            f["x"] = np.arange(4)
            f.flush()
            out.append(os.path.exists(p))
        with lib.File(p, "r", driver="core") as f:
            out.append((f["x"][()].tolist(), f.mode))
            out.append(outcome(lambda: f.create_group("g")))
        with lib.File(p, "a", driver="core") as f:
            f["y"] = 1
        with lib.File(p, "r") as f:
            out.append(sorted(f))
        out.append(outcome(lambda: lib.File(d / "missing", "r", driver="core")))
        out.append(outcome(lambda: lib.File(io.BytesIO(), "w", driver="core")))
        out.append(outcome(lambda: lib.File(io.BytesIO(), "w", fileobj=io.BytesIO())))
        bio = io.BytesIO()
        with lib.File(bio, "w", driver="fileobj") as f:
            f["x"] = np.arange(3)
            out.append((f.driver, f.filename == repr(bio)))
        with lib.File(bio, "r") as f:
            out.append(f["x"][()].tolist())
        with lib.File(d / ("s" + EXT[lib]), "w") as f:
            out.append(f.driver)
        return out
    both(tmp_path, script)


def test_in_memory_like_h5py(tmp_path):
    def script(lib, d):
        out = []
        with lib.File.in_memory() as f:
            f["x"] = np.arange(5)
            f.attrs["a"] = "b"
            out.append((f.mode, f.driver, f["x"][()].tolist(), f.attrs["a"]))
            out.append(f.filename != lib.File.in_memory().filename)
        with lib.File.in_memory(track_order=True, rdcc_nbytes=1 << 20, block_size=4096) as f:
            for n in "zab":
                f.create_group(n)
            out.append(list(f))
        for k in ("driver", "locking", "backing_store"):
            out.append(outcome(lambda: lib.File.in_memory(**{k: None})))
        out.append(outcome(lambda: lib.File.in_memory(bogus=1)))
        # An image of a file: opened for writing, the image itself unchanged.
        p = d / ("img" + EXT[lib])
        with lib.File(p, "w") as f:
            f["x"] = np.arange(3)
        image = p.read_bytes()
        with lib.File.in_memory(image) as f:
            out.append((list(f), f["x"][()].tolist(), f.mode))
            f["y"] = 1
            out.append(sorted(f))
        out.append(p.read_bytes() == image)
        out.append(outcome(lambda: lib.File.in_memory(image, track_order=True)))
        return out
    both(tmp_path, script)


def test_read_only_errors_like_h5py(tmp_path):
    """The error types h5py raises for each change refused on a read-only
    file; arca's are also ReadOnlyError."""
    def script(lib, d):
        p = d / ("f" + EXT[lib])
        with lib.File(p, "w") as f:
            f["d"] = np.arange(3)
            f.create_group("g")
            f.attrs["a"] = 1
        with lib.File(p, "r") as f:
            return [outcome(fn) for fn in (
                lambda: f.create_group("x"),
                lambda: f.__setitem__("x", 1),
                lambda: f.__delitem__("d"),
                lambda: f.move("d", "e"),
                lambda: f.attrs.__setitem__("b", 1),
                lambda: f.attrs.__delitem__("a"),
                lambda: f.__setitem__("s", lib.SoftLink("/d")),
            )]
    got = both(tmp_path, script)
    assert got == ["ValueError", "ValueError", "KeyError", "ValueError", "OSError",
                   "KeyError", "OSError"]
    with arca.File(tmp_path / "arca" / "f.arca", "r") as f:
        for fn in (lambda: f.create_group("x"), lambda: f.__delitem__("d"),
                   lambda: f.copy("d", "e"), lambda: f.move("d", "e")):
            with pytest.raises(arca.ReadOnlyError):
                fn()


def test_closed_and_ids_like_h5py(tmp_path):
    def script(lib, d):
        out = []
        f = lib.File(d / ("f" + EXT[lib]), "w")
        g = f.create_group("g")
        ds = f.create_dataset("x", data=[1.0])
        gid, fid = g.id, f.id
        out.append((bool(gid), bool(fid), gid.valid, gid == f["g"].id, gid == ds.id))
        out.append(lib.Group(gid) == g)
        out.append(outcome(lambda: lib.Group(ds.id)))
        f.close()
        out.append((bool(gid), bool(fid), gid.valid, bool(f), bool(g)))
        out.append(("a" in f, b"a" in f))
        out.append(isinstance(repr(f), str) and isinstance(repr(g), str))
        out.append(outcome(lambda: f.create_group("z")))
        return out
    both(tmp_path, script)


def test_version_like_h5py():
    for name in ("version", "hdf5_version", "hdf5_version_tuple", "api_version",
                 "api_version_tuple", "info", "hdf5_built_version_tuple"):
        assert type(getattr(arca.version, name)) is type(getattr(h5py.version, name)), name
    assert arca.version.version == arca.__version__
    assert tuple(arca.version.version_tuple[:3]) == tuple(
        int(x) for x in arca.__version__.split(".")[:3])
    assert arca.version.version_tuple._fields == h5py.version.version_tuple._fields
    assert arca.version.hdf5_version == "%d.%d.%d" % arca.version.hdf5_version_tuple
    assert arca.version.api_version == "%d.%d" % arca.version.api_version_tuple
    assert arca.version.version in arca.version.info


def test_is_hdf5(tmp_path):
    p = tmp_path / "x.arca"
    with arca.File(p, "w") as f:
        f["x"] = 1
    assert arca.is_hdf5(p) and arca.is_hdf5(str(p))
    assert not arca.is_hdf5(tmp_path / "missing")
    h = tmp_path / "x.h5"
    with h5py.File(h, "w"):
        pass
    assert not arca.is_hdf5(h)
    with arca.File(tmp_path / "ub.arca", "w", userblock_size=1024):
        pass
    assert arca.is_hdf5(tmp_path / "ub.arca")


def test_user_block(tmp_path):
    """The first userblock_size bytes are the user's: writing them does
    not harm the file, and the file is found behind them again."""
    def script(lib, d):
        p = d / ("ub" + EXT[lib])
        with lib.File(p, "w", userblock_size=1024) as f:
            f.create_group("g")
            f["x"] = np.arange(10)
            out = [f.userblock_size]
        with open(p, "r+b") as fh:
            fh.write(b"U" * 1024)
        with lib.File(p, "r") as f:
            out.append((f.userblock_size, sorted(f), f["x"][()].tolist()))
        with lib.File(p, "a", userblock_size=1024) as f:
            f["y"] = [1, 2]
        out.append(outcome(lambda: lib.File(p, "a", userblock_size=2048)))
        with lib.File(p, "r+") as f:
            del f["g"]
            out.append((f.userblock_size, sorted(f)))
        out.append(p.read_bytes()[:1024] == b"U" * 1024)
        return out
    both(tmp_path, script)
    p = tmp_path / "arca" / "ub.arca"
    assert not os.path.exists(str(p) + "-journal")
    with arca.File(p, "r") as f:
        f.check()


def test_chunk_cache_takes_effect(tmp_path):
    """rdcc_nbytes sizes arca's chunk cache: a chunk read twice is read
    from storage once when the cache holds it, twice when it cannot."""
    p = tmp_path / "c.arca"
    with arca.File(p, "w") as f:
        f.create_dataset("x", data=np.arange(1 << 16, dtype="f8"), chunks=(1 << 14,))

    def reads(**kw):
        with arca.File(p, "r", **kw) as f:
            ds = f["x"]
            ds[:10]
            ds[:10]
            return f.io_stats()["chunks_read"]

    assert reads(rdcc_nbytes=1 << 20) == 1
    assert reads(rdcc_nbytes=0) == 2
    with arca.File.in_memory(rdcc_nbytes=0) as f:
        f.create_dataset("x", data=np.arange(1 << 16, dtype="f8"), chunks=(1 << 14,))
        f.flush()
        ds = f["x"]
        before = f.io_stats()["chunks_read"]
        ds[:10]
        ds[:10]
        assert f.io_stats()["chunks_read"] - before == 2


def test_locking_takes_effect(tmp_path):
    p = tmp_path / "l.arca"
    with arca.File(p, "w", locking=True):
        with pytest.raises(arca.LockedError):
            arca.File(p, "r+", locking=True)
    with arca.File(p, "w", locking=False):
        with arca.File(p, "r+", locking=False):
            pass
    with pytest.raises(ValueError):
        arca.File(p, "r", locking="sometimes")
