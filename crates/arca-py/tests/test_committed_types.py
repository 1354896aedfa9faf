"""Committed datatypes (``arca.Datatype``) checked against h5py: each script
runs with ``arca`` and with ``h5py`` as ``lib`` and must give the same
results (errors as exception type names), then again after reopening the
file read-only."""

import numpy as np

import arca
import h5py

from conftest import describe, outcome, same_in_both

POINT = np.dtype([("x", "<f4"), ("y", "<f4"), ("tag", "S4")])


def named(x):
    """Committed types described by kind, name and dtype; the rest as
    conftest describes it."""
    if isinstance(x, (arca.Datatype, h5py.Datatype)):
        return ("Datatype", x.name, x.dtype.descr)
    if isinstance(x, list):
        return [named(v) for v in x]
    if isinstance(x, tuple):
        return tuple(named(v) for v in x)
    return describe(x)


def test_commit_and_use(tmp_path):
    def script(lib, f, reopened):
        if not reopened:
            f["types/point"] = POINT
            f["types/u2"] = np.dtype("<u2")
            f["types/point"].attrs["unit"] = "mm"
            f.create_dataset("pts", (3,), dtype=f["types/point"])
            f["pts"][1] = (1.5, 2.5, b"ab")
            f.attrs.create("gain", 7, dtype=f["types/u2"])
            f["alias"] = f["types/u2"]
            f.create_dataset("e", dtype=f["types/u2"])
            f["types/s"] = lib.string_dtype()
            f.create_dataset("strs", data=["a", "bc"], dtype=f["types/s"])
        t = f["types/point"]
        return named([
            t, t.dtype == POINT, t.attrs["unit"], t.name, t.parent.name,
            t == f["types/point"], t == f["types/u2"], f["alias"] == f["types/u2"],
            hash(f["alias"]) == hash(f["types/u2"]),
            sorted(f["types"]), sorted(f), "types/u2" in f,
            f["pts"].dtype == POINT, f["pts"][()].tolist(),
            f.attrs["gain"], f.attrs["gain"].dtype.str,
            f.get("types/u2", getclass=True), f.get("alias", getlink=True),
            f["e"].dtype.str, f["e"].shape, [s if isinstance(s, str) else s.decode() for s in f["strs"][()]],
            lib.check_string_dtype(f["types/s"].dtype),
            isinstance(repr(t), str), bool(t),
        ])

    same_in_both(tmp_path, script)


def test_walks_copies_deletes(tmp_path):
    def script(lib, f, reopened):
        if not reopened:
            f["g/t"] = np.dtype("<i8")
            f.create_dataset("g/d", data=np.arange(3), dtype=f["g/t"])
            f.copy("g/t", "copied")
            f.copy("g", "g2")
            f["gone"] = np.dtype("f4")
            f.create_dataset("uses_gone", (2,), dtype=f["gone"])
            del f["gone"]
        seen = []
        f.visit(seen.append)
        items = []
        f.visititems(lambda n, o: items.append((n, type(o).__name__)))
        return named([
            seen, items, f["copied"], f["g2/t"], f["uses_gone"].dtype.str,
            "gone" in f, list(f.values()),
            outcome(lambda: f.require_group("copied")),
            outcome(lambda: f["copied/x"]),
        ])

    same_in_both(tmp_path, script)


def test_errors_match(tmp_path):
    def script(lib, f, reopened):
        if not reopened:
            f["t"] = np.dtype("<i4")
        return [
            outcome(lambda: lib.Datatype(f["/"].id)),
            outcome(lambda: f.__setitem__("t", np.dtype("f8"))) if not reopened else None,
            outcome(lambda: f.create_group("t/sub")) if not reopened else None,
        ]

    same_in_both(tmp_path, script)


def test_closed_repr(tmp_path):
    for lib, name in ((arca, "a.arca"), (h5py, "a.h5")):
        f = lib.File(tmp_path / name, "w")
        f["t"] = np.dtype("S10")
        t = f["t"]
        f.close()
        assert "Closed" in repr(t)


def test_dataset_keeps_its_committed_type(tmp_path):
    path = tmp_path / "t.arca"
    with arca.File(path, "w") as f:
        f["t"] = np.dtype("<f8")
        f.create_dataset("d", (4,), dtype=f["t"])
        f.create_dataset("plain", (4,), dtype="<f8")
        f["s"] = arca.string_dtype()
        f.create_dataset("strs", (2,), dtype=f["s"])
        assert f["strs"]._id.committed_type().id == f["s"]._id.id
        assert f["d"]._id.committed_type().id == f["t"]._id.id
        assert f["plain"]._id.committed_type() is None
        del f["t"]
    with arca.File(path, "r") as f:
        t = f["d"]._id.committed_type()
        assert (t.path, t.dtype()) == ("", "<f8")
        assert f._native.check()["datatypes"] == 2
