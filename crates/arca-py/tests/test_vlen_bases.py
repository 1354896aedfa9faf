"""Variable-length sequences of enums, compounds, complex numbers and
fixed-length strings, checked against h5py: each script runs with
``arca`` and with ``h5py`` as ``lib`` and must give the same results
(errors as exception type names), then again after reopening the file
read-only."""

import numpy as np

import arca
import arca.interop as interop
import h5py

from conftest import same_in_both


def items(arr):
    """Each element's items as a list of plain values."""
    return [np.asarray(x).tolist() for x in arr]


def test_sequences_of_enums(tmp_path):
    def script(lib, f, reopened):
        if not reopened:
            e = lib.enum_dtype(dict(foo=1, bar=2), "i")
            ds = f.create_dataset("e", (3,), dtype=lib.vlen_dtype(e))
            ds[:2] = np.array([[1], [1, 2]], dtype=object)
            a = np.empty(1, dtype=object)
            a[0] = np.array([2, 2, 1], "i4")
            f.attrs.create("a", a, dtype=lib.vlen_dtype(e))
        ds = f["e"]
        base = lib.check_vlen_dtype(ds.dtype)
        return [items(ds[()]), lib.check_enum_dtype(base), base.str, ds.shape,
                items(f.attrs["a"]),
                lib.check_enum_dtype(lib.check_vlen_dtype(f.attrs.get_id("a").dtype))]

    same_in_both(tmp_path, script)


def test_sequences_of_compounds(tmp_path):
    inner = np.dtype([("id", ">i4"), ("value", "<f8"), ("name", "S6")])
    rows = np.array([(1, 3.14, b"test1"), (2, 2.71, b"test2")], dtype=inner)

    def script(lib, f, reopened):
        if not reopened:
            ds = f.create_dataset("c", shape=(3,), dtype=lib.vlen_dtype(inner))
            ds[0] = rows
            ds[1] = rows[:0]
            f.create_dataset("z", shape=(2,), dtype=lib.vlen_dtype(np.dtype("c16")))[0] = \
                np.array([1 + 2j, -3j])
            f.create_dataset("s", shape=(1,), dtype=lib.vlen_dtype(np.dtype("S3")))[0] = \
                np.array([b"ab", b"xyz"], "S3")
        ds = f["c"]
        base = lib.check_vlen_dtype(ds.dtype)
        return [ds[0].tolist(), ds[1].tolist(), ds[0].dtype.names,
                base.names, [base.fields[n][0].str for n in base.names],
                f["z"][0].tolist(), items(f["s"][()])]

    same_in_both(tmp_path, script)


def test_an_empty_sequence_of_compounds_reads_as_h5py_reads_it(tmp_path):
    t = np.dtype([("id", "i4"), ("value", "f8"), ("name", "S10")])
    for lib in (arca, h5py):
        with lib.File(tmp_path / f"x{lib.__name__}", "w") as f:
            ds = f.create_dataset("x", shape=(2,), dtype=lib.special_dtype(vlen=t))
            ds[0] = np.array([(1, 3.14, b"test1"), (2, 2.71, b"test2")], dtype=t)
            ds[1] = np.array([], dtype=t)
            assert ds[1].dtype == t and ds[1].shape == (0,)
            np.testing.assert_array_equal(ds[0], np.array([(1, 3.14, b"test1"),
                                                           (2, 2.71, b"test2")], dtype=t))


def nested_data(lib):
    """A compound whose member is a sequence of compounds of two int
    sequences, as h5py's tests make it (h5py cannot read such a member
    back empty, so none is)."""
    inner = np.dtype([("a", lib.vlen_dtype(np.int32)), ("b", lib.vlen_dtype(np.int32))])
    outer = np.dtype([("f1", lib.vlen_dtype(inner)), ("f2", np.int64)])
    one = (np.arange(1, 3, dtype=np.int32), np.arange(6, 9, dtype=np.int32))
    two = (np.arange(10, 14, dtype=np.int32), np.arange(16, 21, dtype=np.int32))
    data = np.array([(np.array([one, two], dtype=inner), 2),
                     (np.array([one], dtype=inner), 3)], dtype=outer)
    return inner, outer, data


def describe_nested(arr):
    """Elements of ``outer`` as plain lists."""
    return [([(x["a"].tolist(), x["b"].tolist()) for x in e["f1"]], int(e["f2"]))
            for e in np.asarray(arr).reshape(-1)]


def test_compounds_holding_sequences_of_compounds(tmp_path):
    def script(lib, f, reopened):
        inner, outer, data = nested_data(lib)
        if not reopened:
            f["d"] = data
            f.create_dataset("part", (4,), dtype=outer)[1:3] = data[:2]
            f.attrs["one"] = data[0]
            f.attrs["all"] = data
            strs = np.dtype([("a", lib.string_dtype()), ("b", lib.string_dtype())])
            sdt = np.dtype([("f", lib.vlen_dtype(strs))])
            f.attrs["s"] = np.array((np.array([(b"apples", b"bananas"), ("ρeaches", b"")],
                                              dtype=strs),), dtype=sdt)[()]
        d = f["d"]
        s = f.attrs["s"]
        return [describe_nested(d[()]), describe_nested(d[1:]), d.shape, d.dtype.names,
                describe_nested(f["part"][1:3]), describe_nested(f.attrs["one"]),
                describe_nested(f.attrs["all"]),
                [(x["a"], x["b"]) for x in s["f"]],
                lib.check_vlen_dtype(d.dtype["f1"]).names]

    same_in_both(tmp_path, script)


def test_sequences_of_compounds_holding_strings(tmp_path):
    def script(lib, f, reopened):
        strs = np.dtype([("name", lib.string_dtype()), ("n", "<u2")])
        if not reopened:
            ds = f.create_dataset("q", (3,), dtype=lib.vlen_dtype(strs))
            ds[0] = np.array([(b"x", 1), (b"yz", 2)], dtype=strs)
            ds[2] = np.array([(b"", 7)], dtype=strs)
        ds = f["q"]
        return [[(x["name"], int(x["n"])) for x in ds[i]] for i in (0, 2)]

    same_in_both(tmp_path, script)


def test_hdf5_files_import_and_export(tmp_path):
    src, imported, back = tmp_path / "src.h5", tmp_path / "x.arca", tmp_path / "back.h5"
    e = h5py.enum_dtype(dict(foo=1, bar=2), "i2")
    plain = np.dtype([("id", ">i4"), ("name", "S3")])
    inner, outer, data = nested_data(h5py)
    with h5py.File(src, "w") as f:
        d = f.create_dataset("e", (2,), dtype=h5py.vlen_dtype(e))
        d[0] = np.array([1], "i2")
        d[1] = np.array([2, 1], "i2")
        c = f.create_dataset("c", (2,), dtype=h5py.vlen_dtype(plain))
        c[0] = np.array([(1, b"ab"), (-2, b"xyz")], dtype=plain)
        c[1] = np.array([(3, b"")], dtype=plain)
        f["n"] = data
        f.attrs["n"] = data[0]
    assert interop.import_hdf5(src, imported) == []
    with arca.File(imported, "r") as f:
        assert [x.tolist() for x in f["e"][()]] == [[1], [2, 1]]
        assert arca.check_enum_dtype(arca.check_vlen_dtype(f["e"].dtype)) == {"foo": 1, "bar": 2}
        assert f["c"][0].tolist() == [(1, b"ab"), (-2, b"xyz")]
        assert f["c"][1].tolist() == [(3, b"")]
        assert describe_nested(f["n"][()]) == describe_nested(data)
        assert describe_nested(f.attrs["n"]) == describe_nested(data[0])
    assert interop.export_hdf5(imported, back) == []
    with h5py.File(back, "r") as f:
        assert [x.tolist() for x in f["e"][()]] == [[1], [2, 1]]
        assert h5py.check_enum_dtype(h5py.check_vlen_dtype(f["e"].dtype)) == {"foo": 1, "bar": 2}
        assert f["c"][0].tolist() == [(1, b"ab"), (-2, b"xyz")]
        assert f["c"].id.get_type().get_super().get_member_type(0).get_order() == h5py.h5t.ORDER_BE
        assert describe_nested(f["n"][()]) == describe_nested(data)
        assert describe_nested(f.attrs["n"]) == describe_nested(data[0])
