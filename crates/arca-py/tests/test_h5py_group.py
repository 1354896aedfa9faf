"""Group calls as h5py makes them, side by side with h5py: iteration order
and views, membership of odd paths, get's keywords, move, copy with every
option (across files too), and objects behind external links."""

import h5py
import numpy as np
import pytest

import arca
from conftest import EXT, describe, same_in_both
from test_h5py_file import both, outcome


def build(lib, f):
    f.create_group("a/b")
    f["a/x"] = np.arange(3)
    f["a/x"].attrs["u"] = "m"
    f["d"] = 1.5
    f["soft"] = lib.SoftLink("/a/x")
    f["dangling"] = lib.SoftLink("/nowhere")
    f["ext"] = lib.ExternalLink("missing.file", "/q")


def test_order_views_and_reversed_like_h5py(tmp_path):
    def script(lib, d):
        with lib.File(d / ("f" + EXT[lib]), "w") as f:
            build(lib, f)
            t = f.create_group("t", track_order=True)
            for n in ("z", "a", "m"):
                t.create_group(n)
            return [
                list(f), list(reversed(f)), list(reversed(f.keys())),
                list(t), list(reversed(t)),
                [describe(v) for v in f.values()], [describe(v) for v in reversed(f.values())],
                [(k, describe(v)) for k, v in f.items()],
                [(k, describe(v)) for k, v in reversed(f.items())],
                f["a"] in f.values(), ("a", f["a"]) in f.items(), ("a", f["d"]) in f.items(),
                ("dangling", None) in f.items(), "d" in f.keys(), len(f.keys()),
                isinstance(repr(f.keys()), str),
            ]
    both(tmp_path, script)


@pytest.mark.parametrize("name", [
    "a", "/a", "a/", "a//b", "./a", ".//a/b", "a/./b", ".", "./", "/", "//", "", "a/b/",
    "soft", "soft/x", "dangling", "dangling/x", "ext", "ext/x", "nothing", "a/nothing",
    b"a", b"", b".", "d/", "d/x",
])
def test_contains_like_h5py(tmp_path, name):
    def script(lib, d):
        with lib.File(d / ("f" + EXT[lib]), "w") as f:
            build(lib, f)
            return outcome(lambda: name in f), outcome(lambda: name in f["a"])
    both(tmp_path, script)


def test_contains_closed_and_odd_types_like_h5py(tmp_path):
    def script(lib, d):
        f = lib.File(d / ("f" + EXT[lib]), "w")
        f.create_group("a")
        out = [outcome(lambda: 1 in f), outcome(lambda: None in f)]
        f.close()
        out += ["a" in f, b"a" in f]
        return out
    both(tmp_path, script)


def test_get_like_h5py(tmp_path):
    def script(lib, d):
        with lib.File(d / ("f" + EXT[lib]), "w") as f:
            build(lib, f)
            out = []
            for name in ("a", "a/x", "soft", "dangling", "ext", "nothing", "a/b"):
                for kw in ({}, {"getclass": True}, {"getlink": True},
                           {"getclass": True, "getlink": True}):
                    out.append((name, sorted(kw), describe(outcome(
                        lambda: f.get(name, "default", **kw)))))
            for kw in ({"elink_mode": "r"}, {"elink_mode": "r+"}, {"elink_mode": "w"},
                       {"elink_swmr": True}, {"elink_locking": False},
                       {"elink_locking": "best-effort"}, {"elink_locking": "sometimes"}):
                out.append((sorted(kw), describe(outcome(lambda: f.get("a", **kw)))))
            return out
    both(tmp_path, script)


def test_external_link_objects_like_h5py(tmp_path):
    """An object reached through an external link belongs to the other
    file: its File, its name there; the file is opened read-only."""
    def script(lib, d):
        ext = d / ("ext" + EXT[lib])
        # libver="latest": HDF5 reads a file as SWMR only with it.
        with lib.File(ext, "w", libver="latest") as f:
            f["group/data"] = [1, 2, 3]
        out = []
        with lib.File(d / ("main" + EXT[lib]), "w", libver="latest") as f:
            f["link"] = lib.ExternalLink(str(ext), "/group")
        with lib.File(d / ("main" + EXT[lib]), "r") as f:
            g = f["link"]
            out.append((g.name, g.file != f, g.file.filename == str(ext), g.file.mode,
                        g.file == f["link"].file, g["data"][()].tolist()))
            out.append((describe(f.get("link/data", getclass=True)),
                        describe(f.get("link/data", getlink=True)), "link/data" in f))
            out.append(outcome(lambda: f.get("link", elink_mode="r+")))
            other = g.file
            other.close()
            out.append((bool(other), bool(f), f["link/data"][()].tolist()))
        for swmr in (True, False):
            # A fresh open each time: libhdf5 keeps the file open once opened.
            with lib.File(d / ("main" + EXT[lib]), "r") as f:
                out.append(f.get("link", elink_swmr=swmr).file.swmr_mode)
        return out
    both(tmp_path, script)


def test_external_link_intent_like_h5py(tmp_path):
    """The file behind an external link opens with the intent of the file
    the link is in, or as elink_mode asks; writes through a writable one
    land in the other file."""
    def script(lib, d):
        ext = d / ("ext" + EXT[lib])
        main = d / ("main" + EXT[lib])
        with lib.File(ext, "w") as f:
            f["group/data"] = [1, 2, 3]
        with lib.File(main, "w") as f:
            f["link"] = lib.ExternalLink(str(ext), "/group")
        out = []
        with lib.File(main, "a") as f:
            g = f["link"]
            out.append(g.file.mode)
            g["data"][0] = 10
            g.create_group("made_through_the_link")
            other = g.file
            out.append(f.get("link", elink_mode="r").file.mode)
            out.append(f.get("link", elink_mode="r+").file.mode)
            other.close()
        with lib.File(main, "r") as f:
            out.append(f["link"].file.mode)
            out.append(outcome(lambda: f.get("link", elink_mode="r+")))
        with lib.File(ext, "r") as f:
            out.append((f["group/data"][()].tolist(), sorted(f["group"])))
        return out
    both(tmp_path, script)


def test_move_like_h5py(tmp_path):
    def script(lib, d):
        with lib.File(d / ("f" + EXT[lib]), "w") as f:
            build(lib, f)
            out = [outcome(lambda: f.move("a", "p/q/r")), sorted(f), list(f["p/q"])]
            out.append(outcome(lambda: f.move("nothing", "z")))
            out.append(outcome(lambda: f.move("d", "p")))
            out.append(outcome(lambda: f.move("d", "d")))
            out.append(outcome(lambda: f.move("soft", "soft2")))
            out.append(describe(f.get("soft2", getlink=True)))
            return out
    both(tmp_path, script)


def fill(lib, f):
    """A tree with a second name, links, references and attributes."""
    f["a/x"] = np.arange(4)
    f["a/x"].attrs["unit"] = "m"
    f["a/y"] = f["a/x"]
    f["a/sub/z"] = [1.0, 2.0]
    f["a/sub"].attrs["k"] = 7
    f["a/soft"] = lib.SoftLink("/b")
    f["a/dangling"] = lib.SoftLink("/nowhere")
    f["a/ext"] = lib.ExternalLink("ext.file", "/e")
    f["b"] = np.arange(3) * 10
    f["a"].attrs["in_tree"] = f["a/x"].ref
    f["a"].attrs["out_of_tree"] = f["b"].ref
    refs = f.create_dataset("a/refs", (2,), dtype=lib.ref_dtype)
    refs[0] = f["b"].ref
    refs[1] = f["a/x"].ref
    f.create_group("t", track_order=True)
    for n in ("z", "a", "m"):
        f["t"].create_group(n)


def dump(f, name):
    """Everything under ``name``: members by kind, links, attributes and
    data, references followed to what they name."""
    out = []

    def follow(r):
        if not r:
            return "null"
        try:
            obj = f[r]
        except Exception as e:  # noqa: BLE001
            return type(e).__name__
        # Copies of referenced objects are named after HDF5's or arca's own
        # object numbers, which differ.
        name = "~copy" if obj.name.startswith("/~obj_pointed_by_") else obj.name
        return ("->", name, describe(obj[()]) if hasattr(obj, "shape") else list(obj))

    def val(v):
        if isinstance(v, (arca.Reference, h5py.Reference)):
            return follow(v)
        if isinstance(v, np.ndarray) and v.dtype.kind == "O":
            return [val(x) for x in v.tolist()]
        if isinstance(v, (list, tuple)):
            return [val(x) for x in v]
        return describe(v)

    g = f[name]
    if not hasattr(g, "keys"):
        return ("dataset", val(g[()]), sorted((k, val(v)) for k, v in g.attrs.items()))
    out.append(("attrs", sorted((k, val(v)) for k, v in g.attrs.items())))
    for k in g:
        link = g.get(k, getlink=True)
        kind = type(link).__name__
        if kind != "HardLink":
            out.append((k, describe(link)))
        else:
            out.append((k, dump(f, f"{name.rstrip('/')}/{k}")))
    return out


@pytest.mark.parametrize("opts", [
    {}, {"shallow": True}, {"without_attrs": True}, {"expand_soft": True},
    {"expand_external": True}, {"expand_refs": True},
    {"expand_soft": True, "expand_refs": True, "without_attrs": True},
])
@pytest.mark.parametrize("where", ["same", "other"])
def test_copy_like_h5py(tmp_path, opts, where):
    def script(lib, d):
        with lib.File(d / "ext.file", "w") as e:
            e["e"] = [5, 6]
        with lib.File(d / ("f" + EXT[lib]), "w") as f, \
                lib.File(d / ("g" + EXT[lib]), "w") as g:
            fill(lib, f)
            dest = f if where == "same" else g
            dest.create_group("into")
            f.copy("a", dest["into"], **opts)
            f.copy(f["a/x"], dest["into"], name="x_copy", **opts)
            f.copy("t", dest["into"], **opts)
            out = [dump(dest, "/into")]
            # The referenced object outside the copy is copied once, beside it.
            out.append(sorted(n.startswith("~obj_pointed_by_") for n in dest))
            return out
    both(tmp_path, script)


def test_copy_errors_and_paths_like_h5py(tmp_path):
    def script(lib, d):
        with lib.File(d / ("f" + EXT[lib]), "w") as f:
            fill(lib, f)
            out = [
                outcome(lambda: f.copy("a/x", "a/x")),
                outcome(lambda: f.copy("nothing", "z")),
                outcome(lambda: f.copy("a/x", f["b"])),
                outcome(lambda: f.copy("/", f)),
                outcome(lambda: f.copy(1, "z")),
                outcome(lambda: f.copy("a/x", 3)),
                outcome(lambda: f.copy("a/dangling", "z")),
                outcome(lambda: f.copy("a/ext", "z")),
            ]
            f.copy("a/soft", "from_soft")
            f.copy("a/x", "deep/er/x")
            f.copy("a/x", "q", name="ignored")
            f.copy(f["a"], f["a"], "inner")
            out.append([describe(f.get(n, getlink=True)) for n in ("from_soft", "deep/er/x", "q")])
            out.append(sorted(f["a/inner"]))
            f.copy("/", f, "root_copy")
            out.append(sorted(f["root_copy"]))
            return out
    both(tmp_path, script)


def test_group_from_id_like_h5py(tmp_path):
    def script(lib, d):
        with lib.File(d / ("f" + EXT[lib]), "w") as f:
            g = f.create_group("g")
            ds = f.create_dataset("x", data=[1])
            return [lib.Group(g.id) == g, lib.Group(f.id) == f["/"],
                    outcome(lambda: lib.Group(ds.id)),
                    g.id.get_create_plist().get_link_creation_order(),
                    f.create_group("t", track_order=True).id.get_create_plist()
                    .get_attr_creation_order() != 0]
    both(tmp_path, script)


def test_anonymous_objects_like_h5py(tmp_path):
    # Made without a name: name None, no parent, kept only once linked.
    def script(lib, f, reopened):
        if reopened:
            return sorted(f), f["kept"][()].tolist(), f["g/inner"][()].tolist()
        g = f.create_group(None)
        ds = f.create_dataset(None, (4,), dtype="i4")
        lost = f.create_dataset(None, data=np.arange(3.0))
        out = [g.name, ds.name, lost.name, repr(ds), outcome(lambda: g.parent),
               lost[()].tolist(), len(f)]
        ds[...] = [1, 2, 3, 4]
        g.create_dataset("inner", data=[5, 6])
        f["kept"] = ds
        f["g"] = g
        out += [ds.name, g.name, f["kept"] == ds, sorted(f), g["inner"].name,
                outcome(lambda: f.__setitem__("kept", ds))]
        return out

    same_in_both(tmp_path, script)


def test_anonymous_objects_go_at_close(tmp_path):
    path = tmp_path / "a.arca"
    with arca.File(path, "w") as f:
        f.create_dataset(None, data=np.zeros(100_000))
        f.create_group(None).create_dataset("x", data=np.ones(100_000))
        f.flush()
        # Committed with the file, which check accounts for.
        assert f.check()["datasets"] == 2
    with arca.File(path, "r") as f:
        assert len(f) == 0
        st = f.check()
        assert (st["datasets"], st["groups"]) == (0, 1)
    assert path.stat().st_size < 800_000
    # Every kind of dataset may be made without a name.
    with arca.File(tmp_path / "b.arca", "w") as f:
        s = f.create_dataset(None, data=["a", "bc"])
        e = f.create_dataset(None, data=arca.Empty("f4"))
        assert (s.name, e.name) == (None, None)
        f["s"], f["e"] = s, e
    with arca.File(tmp_path / "b.arca", "r") as f:
        assert f["s"].asstr()[()].tolist() == ["a", "bc"] and f["e"].shape is None
