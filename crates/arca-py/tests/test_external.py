"""External raw storage (``external=``) checked against h5py: each script
runs with ``arca`` and with ``h5py`` as ``lib`` and must give the same
results (errors as exception type names), then again after reopening the
file read-only; the raw files written must hold the same bytes."""

import os
import shutil
import subprocess

import numpy as np

import arca
import arca.interop as interop
import h5py

from conftest import outcome, same_in_both

UNLIMITED = 2**64 - 1  # h5py's h5f.UNLIMITED


def here(f, name):
    return os.path.join(os.path.dirname(f.filename), name)


class Raw:
    """A raw file's bytes, sliced as bytes; compared as lists of ints."""

    def __init__(self, f, name):
        with open(here(f, name), "rb") as fh:
            self.data = fh.read()

    def __getitem__(self, s):
        return list(self.data[s])


def raw_bytes(f, name):
    return Raw(f, name)


def os_error(fn):
    """``outcome``, with any OSError as "OSError": h5py raises OSError for a
    missing external file, arca the FileNotFoundError it is (an OSError,
    with its errno)."""
    try:
        return fn()
    except OSError:
        return "OSError"


def test_segments_hold_the_elements_in_order(tmp_path):
    def script(lib, f, reopened):
        a, b = here(f, "a.bin"), here(f, "b.bin")
        if not reopened:
            # 48 bytes: 20 in a at 100, 12 in b, the rest in a at 300.
            ds = f.create_dataset("x", (3, 4), "<i4",
                                  external=[(a, 100, 20), (b, 0, 12), (a, 300, UNLIMITED)])
            ds[...] = np.arange(12).reshape(3, 4)
            ds[:, 1] = [-1, -5, -9]
            f.create_dataset("be", data=np.arange(3, dtype=">u2"), external=here(f, "be.bin"))
        x = f["x"]
        return [
            x[()], x[1:, ::2], x[2, 3], x.shape, x.maxshape, x.chunks, x.dtype.str,
            [(os.path.basename(n), o, s) for n, o, s in x.external],
            raw_bytes(f, "a.bin")[100:120], raw_bytes(f, "b.bin")[:],
            raw_bytes(f, "a.bin")[300:], f["be"][()], f["be"].dtype.str,
            raw_bytes(f, "be.bin")[:], outcome(lambda: x[3]), x.compression,
        ]

    same_in_both(tmp_path, script)


def test_names_resolve_from_the_current_directory_or_a_prefix(tmp_path, monkeypatch):
    def prepare(lib, d):
        (d / "sub").mkdir()
        monkeypatch.chdir(d / "sub")

    def script(lib, f, reopened):
        if not reopened:
            f.create_dataset("cwd", data=np.arange(4, dtype="i2"), external="cwd.bin")
            ds = f.create_dataset("origin", (3,), "u1", external=[("o.bin", 0, UNLIMITED)],
                                  efile_prefix="${ORIGIN}")
            ds[...] = [7, 8, 9]
            # (HDF5 refuses to open a dataset again while it is open with
            # another prefix.)
            del ds
        again = f.require_dataset("origin", (3,), "u1", efile_prefix="${ORIGIN}")
        out = [f["cwd"][()], os.path.exists("cwd.bin"), raw_bytes(f, "o.bin")[:], again[()]]
        del again
        # Opened without the prefix, "o.bin" is looked for here.
        return out + [os_error(lambda: f["origin"][()]), f["origin"].external]

    same_in_both(tmp_path, script, prepare)


def test_a_missing_file_fails_and_a_short_one_reads_zeros(tmp_path):
    def script(lib, f, reopened):
        raw = here(f, "r.bin")
        if not reopened:
            ds = f.create_dataset("x", (4,), "i4", fillvalue=7, external=raw)
            missing = [os_error(lambda: ds[()]), os.path.exists(raw)]
            ds[1:3] = [5, 6]
            partial = [ds[()], os.path.getsize(raw)]
            with open(raw, "r+b") as fh:
                fh.truncate(6)
            return missing + partial + [ds[()]]
        os.remove(raw)
        return [os_error(lambda: f["x"][()]), f["x"].fillvalue]

    same_in_both(tmp_path, script)


def test_lists_are_checked_as_h5py_checks_them(tmp_path):
    def script(lib, f, reopened):
        if reopened:
            return sorted(f)
        raw = here(f, "r.bin")
        out = []
        k = 0
        for shape, kw in [
            ((6, 100), {"external": [raw]}),
            ((6, 100), {"external": [raw, 0]}),
            ((6, 100), {"external": [(raw,)]}),
            ((6, 100), {"external": [(raw, 0)]}),
            ((6, 100), {"external": [(raw, 0, UNLIMITED, 0)]}),
            ((6, 100), {"external": [(raw, 0, "unlimited")]}),
            ((6, 100), {"external": [(raw, 0.0, UNLIMITED)]}),
            ((6, 100), {"external": [(5, 0, UNLIMITED)]}),
            ((4,), {"external": [(raw, -1, 16)]}),
            ((4,), {"external": [(raw, 0, -1)]}),
            ((4,), {"external": [(raw, 2**64 - 20, 16)]}),
            ((4,), {"external": [("", 0, 16)]}),
            ((4,), {"external": [(raw, 0, 15)]}),
            ((4,), {"external": [(raw, 0, 0)]}),
            ((4,), {"external": [(raw, 0, UNLIMITED), (raw, 0, 8)]}),
            ((4,), {"external": [(raw, 0, 16)], "maxshape": (8,)}),
            ((4,), {"external": [(raw, 0, 32)], "maxshape": (8,)}),
            ((4,), {"external": [(raw, 0, 1 << 20)], "maxshape": (None,)}),
            ((4, 4), {"external": raw, "maxshape": (4, None)}),
            ((4,), {"external": raw, "chunks": (2,)}),
            ((4,), {"external": raw, "compression": "gzip"}),
            ((), {"external": raw}),
            ((4,), {"external": []}),
            ((6, 100), {"external": iter((raw, x * 1000, 1000) for x in range(100))}),
        ]:
            k += 1

            def make(shape=shape, kw=kw, k=k):
                ds = f.create_dataset(f"d{k}", shape, "f4", **kw)
                ext = ds.external
                return ds.shape, ds.maxshape, ds.chunks, None if ext is None else len(ext)

            out.append(outcome(make))
        return out

    same_in_both(tmp_path, script)


def test_an_expandable_dataset_is_contiguous(tmp_path):
    def script(lib, f, reopened):
        if not reopened:
            ds = f.create_dataset("x", (128, 64), "f4", maxshape=(None, 64),
                                  external=here(f, "x.bin"))
            ds[120:] = 1.5
        ds = f["x"]
        return [ds.chunks, ds.shape, ds.maxshape, ds[119:, :2], outcome(lambda: ds.resize((200, 64))),
                os.path.getsize(here(f, "x.bin"))]

    same_in_both(tmp_path, script)


def test_copies_name_the_same_files(tmp_path):
    def script(lib, f, reopened):
        if not reopened:
            ds = f.create_dataset("x", (3,), "i8", external=[(here(f, "x.bin"), 8, 24)])
            ds[...] = [1, 2, 3]
            f.copy("x", "y")
            f["y"][0] = 10
        return [f["x"][()], f["y"][()], [(os.path.basename(n), o, s) for n, o, s in f["y"].external]]

    same_in_both(tmp_path, script)


def arca_cli(*args):
    exe = os.path.join(os.path.dirname(__file__), "..", "..", "..", "target", "release", "arca")
    exe = exe if os.path.exists(exe) else shutil.which("arca")
    assert exe, "the arca command is built by make (target/release/arca)"
    r = subprocess.run([exe, *map(str, args)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_check_repack_and_the_cli_keep_the_list(tmp_path):
    path, out = tmp_path / "f.arca", tmp_path / "g.arca"
    raw = str(tmp_path / "r.bin")
    with arca.File(path, "w") as f:
        ds = f.create_dataset("x", (4,), "f8", maxshape=(8,), external=[(raw, 16, 64)])
        ds[...] = [1, 2, 3, 4]
        f.check()
    arca_cli("repack", path, out)
    with arca.File(out, "r") as f:
        f.check()
        assert f["x"].external == [(raw, 16, 64)]
        assert f["x"].maxshape == (8,)
        assert f["x"][()].tolist() == [1, 2, 3, 4]
    assert "external, 1 segments" in arca_cli("ls", out)
    assert f'EXTERNAL "{raw}" OFFSET 16 SIZE 64' in arca_cli("dump", "--header", out)
    assert "(0): 1, 2, 3, 4" in arca_cli("dump", out)


def test_export_gives_hdf5_the_list(tmp_path):
    path, back = tmp_path / "f.arca", tmp_path / "back.h5"
    raw = str(tmp_path / "r.bin")
    with arca.File(path, "w") as f:
        ds = f.create_dataset("x", (2, 3), ">i2", maxshape=(None, 3), fillvalue=4,
                              external=[(raw, 2, 4), (raw, 10, UNLIMITED)])
        ds[...] = [[1, 2, 3], [4, 5, 6]]
    interop.export_hdf5(path, back)
    with h5py.File(back, "r") as h:
        x = h["x"]
        assert x.external == [(raw, 2, 4), (raw, 10, UNLIMITED)]
        assert (x.shape, x.maxshape, x.dtype.str, x.fillvalue) == ((2, 3), (None, 3), ">i2", 4)
        assert x[()].tolist() == [[1, 2, 3], [4, 5, 6]]
