"""Soft, external and hard links and creation order, checked against h5py:
each script runs with ``arca`` and with ``h5py`` as ``lib`` and must give
the same results (errors as exception type names), then again after
reopening the file read-only."""

import numpy as np
import pytest

import arca
import h5py

from conftest import EXT, outcome, same_in_both


def write_other(lib, directory):
    """The file the external links lead to."""
    with lib.File(directory / ("other" + EXT[lib]), "w") as o:
        o["grp/vals"] = np.arange(3)


def test_soft_links(tmp_path):
    def script(lib, f, reopened):
        if not reopened:
            f["data/x"] = np.arange(4)
            f["latest"] = lib.SoftLink("/data")
            f["data/rel"] = lib.SoftLink("x")
            f["dangling"] = lib.SoftLink("/nowhere")
        return [
            f["latest/x"], f["data/rel"], f["latest"].name,
            "dangling" in f, "nowhere" in f, "latest/x" in f, "dangling/y" in f,
            f.get("dangling"), f.get("dangling", getlink=True),
            f.get("latest", getlink=True), f.get("data", getlink=True),
            f.get("latest", getclass=True), f.get("latest", getclass=True, getlink=True),
            f.get("missing", getlink=True),
            outcome(lambda: f["dangling"]), sorted(f), len(f),
            f["latest"] == f["data"],
            outcome(lambda: f.__setitem__("latest", lib.SoftLink("/x"))) if not reopened else None,
        ]

    same_in_both(tmp_path, script, write_other)


def test_external_links(tmp_path):
    def script(lib, f, reopened):
        other = "other" + EXT[lib]
        if not reopened:
            f["ext"] = lib.ExternalLink(other, "/grp")
            f["gone"] = lib.ExternalLink("missing" + EXT[lib], "/x")
        return [
            f["ext/vals"][()], f.get("ext", getlink=True).path, "gone" in f,
            outcome(lambda: f["gone"]), f.get("gone"),
            f.get("ext", getclass=True, getlink=True),
        ]

    same_in_both(tmp_path, script, write_other)


def test_hard_links_share_one_object(tmp_path):
    def script(lib, f, reopened):
        if not reopened:
            f["a/x"] = np.arange(5)
            f["b"] = f["a/x"]
            f["g2"] = f["a"]
            f["b"][0] = 42
        out = [f["a/x"], f["b"], f["g2/x"], f["b"] == f["a/x"], f["g2"] == f["a"],
               f.get("b", getlink=True)]
        seen = []
        f.visit(seen.append)
        out.append(seen)
        return out

    same_in_both(tmp_path, script, write_other)


def test_deleting_one_name_keeps_the_object(tmp_path):
    def script(lib, f, reopened):
        if not reopened:
            f["a"] = np.arange(1000)
            f["b"] = f["a"]
            del f["a"]
        return [f["b"], "a" in f, list(f)]

    same_in_both(tmp_path, script, write_other)


def test_visit_links(tmp_path):
    def script(lib, f, reopened):
        if not reopened:
            f["g/d"] = np.arange(2)
            f["g/s"] = lib.SoftLink("/g/d")
            f["e"] = lib.ExternalLink("other" + EXT[lib], "/grp")
            f["h"] = f["g/d"]
        names, items = [], []
        f.visit_links(names.append)
        f.visititems_links(lambda n, link: items.append((n, type(link).__name__)))
        objs = []
        f.visititems(lambda n, o: objs.append(n))
        return [names, items, objs, f.visit_links(lambda n: n if n.endswith("s") else None)]

    same_in_both(tmp_path, script, write_other)


def test_track_order(tmp_path):
    names = ["zeta", "alpha", "mu", "beta"]

    def script(lib, f, reopened):
        if not reopened:
            g = f.create_group("ordered", track_order=True)
            for n in names:
                g.create_group(n)
            g["soft"] = lib.SoftLink("/ordered/mu")
            p = f.create_group("plain")
            for n in names:
                p.create_group(n)
        return [list(f["ordered"]), list(f["plain"]), list(f["ordered"].keys()),
                [k for k, _ in f["ordered"].items()]]

    same_in_both(tmp_path, script, write_other)


def test_attribute_order(tmp_path):
    """Attributes in creation order where tracked (a group, a dataset, an
    empty dataset), replaced ones moving to the end, modified ones staying."""
    names = ["zeta", "alpha", "mu", "beta"]

    def script(lib, f, reopened):
        if not reopened:
            objs = [f.create_group("g", track_order=True), f.create_group("plain"),
                    f.create_dataset("d", data=np.arange(3), track_order=True),
                    f.create_dataset("e", data=lib.Empty("f4"), track_order=True),
                    f.create_dataset("untracked", data=np.arange(3))]
            for o in objs:
                for i, n in enumerate(names):
                    o.attrs[n] = i
                o.attrs["alpha"] = 10
                o.attrs.modify("mu", 11)
                del o.attrs["zeta"]
                o.attrs.create("zeta", 12)
        return [(list(f[p].attrs), [f[p].attrs[n] for n in f[p].attrs])
                for p in ("g", "plain", "d", "e", "untracked")]

    same_in_both(tmp_path, script)


def test_file_track_order(tmp_path):
    for lib in (arca, h5py):
        p = tmp_path / ("t" + EXT[lib])
        with lib.File(p, "w", track_order=True) as f:
            for n in ["b", "a", "c"]:
                f.create_group(n)
                f.attrs[n] = 1
        with lib.File(p, "r") as f:
            assert list(f) == ["b", "a", "c"]
            assert list(f.attrs) == ["b", "a", "c"]


def test_links_into_another_file_are_refused(tmp_path):
    with arca.File(tmp_path / "a.arca", "w") as a, arca.File(tmp_path / "b.arca", "w") as b:
        b["x"] = np.arange(2)
        with pytest.raises(ValueError):
            a["y"] = b["x"]
        assert "y" not in a


def test_links_survive_check_and_reopen(tmp_path):
    p = tmp_path / "r.arca"
    with arca.File(p, "w") as f:
        f["a"] = np.arange(10)
        f["b"] = f["a"]
        f["s"] = arca.SoftLink("/a")
        f.create_group("o", track_order=True)
        for n in "zyx":
            f["o"].create_group(n)
        f.check()
    with arca.File(p, "r") as f:
        assert f["b"] == f["a"] and f["s"] == f["a"]
        assert list(f["o"]) == ["z", "y", "x"]
        assert f.get("s", getlink=True).path == "/a"
        st = f.check()
        assert st["datasets"] == 1


def test_memory_files_track_order():
    for compress in (False, True):
        with arca.File("mem", "w", driver="memory", compress=compress, track_order=True) as f:
            for n in ["c", "a", "b"]:
                f.create_group(n)
            assert list(f) == ["c", "a", "b"]
