"""HDF5 filters arca keeps as stored and now reads and writes itself: blosc
(every codec, byte and bit shuffle), blosc2, bitshuffle (plain, lz4, zstd),
szip, scale-offset (integers and floats) and n-bit.

Each file is written by h5py with hdf5plugin's filters (HDF5's own for
szip, scale-offset and n-bit), in both byte orders, with fill values and
partial edge chunks; then ``import_hdf5`` maps it with an empty report,
arca reads every dataset equal to h5py's read of the original, arca's own
writes through those filters are read back by HDF5, and ``export_hdf5``
gives back a file whose every filter pipeline (ids, flags, client-data
values, names) is the original's and which h5diff finds identical.
"""

import os
import shutil
import subprocess

import h5py
import hdf5plugin
import numpy as np
import pytest

import arca
import arca.interop as interop

B, B2, BS = hdf5plugin.Blosc, hdf5plugin.Blosc2, hdf5plugin.Bitshuffle

# name -> (creation keywords, dtypes it applies to)
INTS = ["<i1", "<u1", ">i2", "<u2", "<i4", ">u4", "<i8", ">i8"]
FLOATS = ["<f4", ">f4", "<f8", ">f8"]
ALL = INTS + FLOATS
FILTERS = {
    "blosc_blosclz": (B(cname="blosclz", clevel=5, shuffle=B.SHUFFLE), ALL),
    "blosc_lz4_bit": (B(cname="lz4", clevel=5, shuffle=B.BITSHUFFLE), ALL),
    "blosc_lz4hc_none": (B(cname="lz4hc", clevel=7, shuffle=B.NOSHUFFLE), ALL),
    "blosc_snappy": (B(cname="snappy", clevel=5, shuffle=B.SHUFFLE), ALL),
    "blosc_zlib": (B(cname="zlib", clevel=4, shuffle=B.BITSHUFFLE), ALL),
    "blosc_zstd": (B(cname="zstd", clevel=3, shuffle=B.SHUFFLE), ALL),
    "blosc2_blosclz": (B2(cname="blosclz", clevel=5, filters=B2.SHUFFLE), ALL),
    "blosc2_lz4_bit": (B2(cname="lz4", clevel=5, filters=B2.BITSHUFFLE), ALL),
    "blosc2_lz4hc": (B2(cname="lz4hc", clevel=5, filters=B2.NOFILTER), ALL),
    "blosc2_zstd": (B2(cname="zstd", clevel=5, filters=B2.SHUFFLE), ALL),
    "blosc2_zlib_bit": (B2(cname="zlib", clevel=6, filters=B2.BITSHUFFLE), ALL),
    "bitshuffle": (BS(cname="none"), ALL),
    "bitshuffle_lz4": (BS(cname="lz4"), ALL),
    "bitshuffle_zstd": (BS(cname="zstd", clevel=3), ALL),
    "szip_nn": (dict(compression="szip", compression_opts=("nn", 16)), ALL),
    "szip_ec": (dict(compression="szip", compression_opts=("ec", 8)), ALL),
    "scaleoffset_int": (dict(scaleoffset=0), INTS),
    "scaleoffset_int_bits": (dict(scaleoffset=12), ["<i4", ">u4", "<i8"]),
    "scaleoffset_float": (dict(scaleoffset=3), FLOATS),
    "nbit_full": (dict(), ALL),  # n-bit over full-precision types: stored as is
    # Pipelines of several stages.
    "blosc_fletcher32": (dict(B(cname="zstd"), fletcher32=True), ALL),
    "bitshuffle_fletcher32": (dict(BS(cname="lz4"), fletcher32=True), FLOATS),
    "scaleoffset_shuffle_gzip": (dict(scaleoffset=0, shuffle=True, compression="gzip"), INTS),
    "szip_fletcher32": (dict(compression="szip", fletcher32=True), ["<i4", ">f8"]),
}
# Shapes and chunks: partial edge chunks, rank 1 to 3 (blosc2 stores
# chunks of rank 2 and more as B2ND arrays).
SHAPES = [((1000,), (300,)), ((37, 23), (10, 8)), ((5, 6, 7), (2, 4, 7))]


def values(dt, shape, seed):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dt)
    n = int(np.prod(shape))
    if dt.kind == "f":
        v = np.round(np.cumsum(rng.normal(0, 1, n)), 3)
    else:
        info = np.iinfo(dt)
        lo, hi = max(info.min, -3000), min(info.max, 3000)
        v = np.cumsum(rng.integers(-3, 4, n)) % (hi - lo) + lo
    return v.astype(dt).reshape(shape)


def write_filter_file(path, name):
    kw, dtypes = FILTERS[name]
    with h5py.File(path, "w") as f:
        for i, dt in enumerate(dtypes):
            for k, (shape, chunks) in enumerate(SHAPES):
                ds_name = f"{np.dtype(dt).str.replace('<', 'le_').replace('>', 'be_')}_{len(shape)}d"
                data = values(dt, shape, 100 * i + k)
                fill = data.flat[7] if k == 1 else None
                if name == "nbit_full":
                    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
                    dcpl.set_chunk(chunks)
                    dcpl.set_filter(h5py.h5z.FILTER_NBIT)
                    dsid = h5py.h5d.create(f.id, ds_name.encode(), h5py.h5t.py_create(np.dtype(dt)),
                                           h5py.h5s.create_simple(shape), dcpl=dcpl)
                    dsid.write(h5py.h5s.ALL, h5py.h5s.ALL, np.ascontiguousarray(data))
                    continue
                d = f.create_dataset(ds_name, shape=shape, dtype=dt, chunks=chunks,
                                     fillvalue=fill, **kw)
                if k == 1:
                    # A sparse dataset: one chunk never written reads as the
                    # fill value; values equal to it are stored too.
                    d[10:, :] = data[10:, :]
                else:
                    d[...] = data


def filters_of(ds):
    dcpl = ds.id.get_create_plist()
    return [dcpl.get_filter(i) for i in range(dcpl.get_nfilters())]


def h5diff(a, b):
    exe = shutil.which("h5diff")
    assert exe, "h5diff (Debian's hdf5-tools) is missing: make py-test installs it"
    env = dict(os.environ, HDF5_PLUGIN_PATH=hdf5plugin.PLUGIN_PATH)
    return subprocess.run([exe, str(a), str(b)], env=env, capture_output=True, text=True)


def datasets(h):
    out = []
    h.visititems(lambda p, o: out.append(p) if isinstance(o, h5py.Dataset) else None)
    return out


@pytest.mark.parametrize("name", sorted(FILTERS))
def test_filter_reads_writes_and_exports_identically(tmp_path, name):
    src, imported, back = tmp_path / "src.h5", tmp_path / "x.arca", tmp_path / "back.h5"
    write_filter_file(src, name)
    assert interop.import_hdf5(src, imported) == []
    with h5py.File(src, "r") as h, arca.File(imported, "r") as a:
        paths = datasets(h)
        assert paths
        for p in paths:
            want, got = h[p][()], a[p][()]
            # arca gives numbers in native order, h5py in the file's.
            assert got.dtype.str[1:] == want.dtype.str[1:] and np.array_equal(got, want), p
            # The filter's own pipeline, kept as HDF5 recorded it.
            assert [c for c, *_ in a[p]._id.hdf5_filters()] == [c for c, *_ in filters_of(h[p])]
    assert interop.export_hdf5(imported, back) == []
    with h5py.File(src, "r") as h, h5py.File(back, "r") as b:
        for p in datasets(h):
            assert filters_of(b[p]) == filters_of(h[p]), p
            assert b[p].fillvalue == h[p].fillvalue, p
            assert np.array_equal(b[p][()], h[p][()]), p
    r = h5diff(src, back)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("name", sorted(FILTERS))
def test_arca_writes_through_the_filter_and_hdf5_reads_it(tmp_path, name):
    src, imported, back = tmp_path / "src.h5", tmp_path / "x.arca", tmp_path / "back.h5"
    write_filter_file(src, name)
    interop.import_hdf5(src, imported)
    want = {}
    with h5py.File(src, "r") as h, arca.File(imported, "r+") as a:
        for p in datasets(h):
            v = h[p][()]
            sel = tuple(slice(1, max(2, n // 2)) for n in v.shape)
            v[sel] = v[sel][::-1] if v.ndim == 1 else v[sel] // 2 if v.dtype.kind in "iu" else -v[sel]
            a[p][sel] = v[sel]
            want[p] = v
    interop.export_hdf5(imported, back)
    with h5py.File(back, "r") as b:
        for p, v in want.items():
            got = b[p][()]
            if name == "scaleoffset_float":
                # Lossy: kept to the 10^-3 the filter was asked for.
                assert np.allclose(got, v, atol=1e-3, rtol=0), p
            else:
                assert np.array_equal(got, v), p


@pytest.mark.parametrize("opts", [("nn", 8), ("nn", 32), ("ec", 16), ("ec", 32)])
def test_szip_streams_of_every_shape_read_as_hdf5_reads_them(tmp_path, opts):
    """Runs of zero blocks, constant and noisy byte planes, scanlines not a
    whole number of blocks: the cases where coders part ways."""
    src, imported = tmp_path / "src.h5", tmp_path / "x.arca"
    rng = np.random.default_rng(sum(map(ord, str(opts))))
    patterns = {
        "zeros": lambda n: np.zeros(n),
        "constant": lambda n: np.full(n, 11),
        "ramp": lambda n: np.arange(n) % 200,
        "steps": lambda n: np.repeat(rng.integers(0, 50, n // 50 + 1), 50)[:n],
        "noise": lambda n: rng.integers(0, 1 << 30, n),
        "sparse": lambda n: np.where(rng.random(n) < 0.02, rng.integers(1, 99, n), 0),
    }
    with h5py.File(src, "w") as f:
        for dt in ["<u1", "<i2", ">u2", "<i4", ">i4", "<u8", "<f4", ">f8"]:
            for pname, make in patterns.items():
                for chunk in (300, 257):
                    top = np.iinfo(dt).max if np.dtype(dt).kind in "iu" else 1 << 30
                    v = make(1000).astype(np.int64) % min(top, 1 << 30)
                    f.create_dataset(f"{dt[1:]}{'be' if dt[0] == '>' else 'le'}_{pname}_{chunk}",
                                     data=v.astype(dt), chunks=(chunk,), compression="szip",
                                     compression_opts=opts)
    assert interop.import_hdf5(src, imported) == []
    with h5py.File(src, "r") as h, arca.File(imported, "r") as a:
        for n in h:
            assert np.array_equal(a[n][()], h[n][()]), n


def test_nbit_over_narrow_numbers_reads_as_hdf5_converts_them(tmp_path):
    """n-bit packs numbers of a precision or bit offset of their own; arca's
    types have neither, so such datasets come in by value (HDF5 converting
    them), the pipeline reported, and read as h5py reads them."""
    src, imported = tmp_path / "src.h5", tmp_path / "x.arca"
    with h5py.File(src, "w") as f:
        for name, base, prec, off, data in [
            ("i17", h5py.h5t.STD_I32LE, 17, 3, np.arange(-500, 500, dtype="<i4")),
            ("u12be", h5py.h5t.STD_U16BE, 12, 0, np.arange(1000, dtype=">u2")),
        ]:
            tid = base.copy()
            tid.set_precision(prec)
            tid.set_offset(off)
            dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
            dcpl.set_chunk((300,))
            dcpl.set_filter(h5py.h5z.FILTER_NBIT)
            d = h5py.h5d.create(f.id, name.encode(), tid, h5py.h5s.create_simple((1000,)), dcpl=dcpl)
            d.write(h5py.h5s.ALL, h5py.h5s.ALL, data)
    report = interop.import_hdf5(src, imported)
    assert sorted(p for p, _ in report) == ["/i17", "/u12be"]
    assert all("nbit" in note for _, note in report)
    with h5py.File(src, "r") as h, arca.File(imported, "r") as a:
        for n in h:
            assert np.array_equal(a[n][()], h[n][()]), n


def test_damaged_chunks_are_errors_naming_the_chunk(tmp_path):
    src, imported = tmp_path / "src.h5", tmp_path / "x.arca"
    with h5py.File(src, "w") as f:
        data = np.arange(4000, dtype="<i4")
        for n, kw in {"blosc": B(), "blosc2": B2(), "bitshuffle": BS(cname="lz4"),
                      "szip": dict(compression="szip"), "scaleoffset": dict(scaleoffset=0)}.items():
            f.create_dataset(n, data=data, chunks=(1000,), **kw)
    interop.import_hdf5(src, imported)
    with arca.File(imported, "r+") as a:
        for n in a:
            d = a[n]
            stored, mask = arca._native.chunk_read_stored(d._id, [0])
            cut = bytes(stored[: len(stored) // 2])
            arca._native.chunk_write_stored(d._id, [0], cut, mask)
            with pytest.raises(arca.CorruptError, match="chunk"):
                d[()]
            # The other chunks still read.
            assert np.array_equal(d[1000:], data[1000:]), n


def test_a_filter_arca_lacks_is_named(tmp_path):
    src, imported = tmp_path / "src.h5", tmp_path / "x.arca"
    with h5py.File(src, "w") as f:
        f.create_dataset("bzip2", data=np.arange(100.0), chunks=(10,), **hdf5plugin.BZip2())
    assert interop.import_hdf5(src, imported) == []
    with arca.File(imported, "r") as a:
        with pytest.raises(arca.UnsupportedError, match="bzip2"):
            a["bzip2"][()]


def test_variable_length_numbers_gain_no_filter(tmp_path):
    """A variable-length dataset is imported by value through arca's own
    pipeline; exported, its pipeline is the original's, nothing added."""
    src, imported, back = tmp_path / "src.h5", tmp_path / "x.arca", tmp_path / "back.h5"
    vl = h5py.vlen_dtype(np.dtype("<i4"))
    with h5py.File(src, "w") as f:
        for name, kw in {"plain": {}, "gzip": dict(compression="gzip"),
                         "shuffle_gzip": dict(compression="gzip", shuffle=True)}.items():
            d = f.create_dataset(name, shape=(20,), dtype=vl, chunks=(8,), **kw)
            for i in range(20):
                d[i] = np.arange(i % 5, dtype="<i4")
    interop.import_hdf5(src, imported)
    interop.export_hdf5(imported, back)
    with h5py.File(src, "r") as h, h5py.File(back, "r") as b:
        for n in h:
            assert [c for c, *_ in filters_of(b[n])] == [c for c, *_ in filters_of(h[n])], n
            assert all(np.array_equal(x, y) for x, y in zip(b[n][()], h[n][()])), n


def test_pytables_blosc_tables_and_earrays_read_as_pytables_reads_them(tmp_path):
    tables = pytest.importorskip("tables")
    src, imported, back = tmp_path / "pt.h5", tmp_path / "pt.arca", tmp_path / "back.h5"
    row = {"a": tables.Int32Col(), "b": tables.Float64Col(), "c": tables.StringCol(4),
           "d": tables.UInt16Col(shape=(3,))}
    libs = ["blosc", "blosc:lz4", "blosc:lz4hc", "blosc:zlib", "blosc:zstd", "blosc:blosclz",
            "blosc2", "blosc2:lz4", "blosc2:lz4hc", "blosc2:zstd", "blosc2:zlib"]
    want = {}
    with tables.open_file(str(src), "w") as f:
        for k, lib in enumerate(libs):
            name = lib.replace(":", "_")
            filters = tables.Filters(complevel=5, complib=lib, shuffle=k % 2 == 0,
                                     bitshuffle=k % 2 == 1)
            t = f.create_table("/", "t_" + name, row, filters=filters)
            t.append([(i, i / 3, b"x%d" % (i % 10), (i, i + 1, i % 7)) for i in range(5000 + k)])
            t.flush()
            want["t_" + name] = t.read()
            e = f.create_earray("/", "e_" + name, tables.Float32Atom(), (0, 7), filters=filters)
            e.append(np.arange(700 + 7 * k, dtype="f4").reshape(-1, 7) / 3)
            want["e_" + name] = e.read()
    assert interop.import_hdf5(src, imported) == []
    with arca.File(imported, "r") as a:
        for name, v in want.items():
            got = a[name][()]
            if v.dtype.names:
                for field in v.dtype.names:
                    assert np.array_equal(got[field], v[field]), (name, field)
            else:
                assert np.array_equal(got, v), name
    assert interop.export_hdf5(imported, back) == []
    with h5py.File(src, "r") as h, h5py.File(back, "r") as b:
        for name in want:
            assert filters_of(b[name]) == filters_of(h[name]), name
    with tables.open_file(str(back)) as f:
        for name, v in want.items():
            assert np.array_equal(f.get_node("/" + name).read(), v), name


@pytest.mark.parametrize("lib", ["blosc2:zstd", "blosc2:zlib"])
def test_pytables_blosc2_earrays_take_new_chunks_from_arca(tmp_path, lib):
    """An EArray PyTables wrote through blosc2 with zstd or zlib blocks
    grows in arca: the new chunks are Blosc2 frames of the same codec, and
    PyTables reads old and new rows after export."""
    tables = pytest.importorskip("tables")
    blosc2 = pytest.importorskip("blosc2")  # PyTables' own dependency
    src, imported, back = tmp_path / "pt.h5", tmp_path / "pt.arca", tmp_path / "back.h5"
    old = np.arange(1250, dtype="f8").reshape(250, 5) / 7
    new = np.cos(np.arange(1750, dtype="f8")).reshape(350, 5)
    with tables.open_file(str(src), "w") as f:
        e = f.create_earray("/", "e", tables.Float64Atom(), (0, 5), chunkshape=(100, 5),
                            filters=tables.Filters(complevel=5, complib=lib, shuffle=True))
        e.append(old)
    assert interop.import_hdf5(src, imported) == []
    with arca.File(imported, "r+") as a:
        d = a["e"]
        assert np.array_equal(d[()], old)
        d.resize((600, 5))
        d[250:] = new
        stored, _ = arca._native.chunk_read_stored(d._id, [500, 0])
        frame = blosc2.schunk_from_cframe(bytes(stored))
        assert frame.cparams.codec.name.lower() == lib.split(":")[1]
        assert np.array_equal(np.frombuffer(frame.decompress_chunk(0), "<f8").reshape(-1, 5),
                              new[250:350])
    assert interop.export_hdf5(imported, back) == []
    with h5py.File(src, "r") as h, h5py.File(back, "r") as b:
        assert filters_of(b["e"]) == filters_of(h["e"])
    with tables.open_file(str(back)) as f:
        assert np.array_equal(f.root.e.read(), np.concatenate([old, new]))


@pytest.mark.parametrize("lib", ["blosc", "blosc:zstd", "blosc:lz4"])
def test_pytables_blosc_vlarrays_keep_blosc(tmp_path, lib):
    """A VLArray PyTables compressed with blosc: HDF5 filters the chunks of
    heap references (the heap is never filtered). arca compresses its own
    records through the same blosc pipeline, takes new rows through it, and
    export gives back the pipeline value for value."""
    tables = pytest.importorskip("tables")
    src, imported, back = tmp_path / "v.h5", tmp_path / "v.arca", tmp_path / "back.h5"
    rows = [np.arange(n % 11, dtype="i4") * 3 for n in range(40)]
    more = [np.arange(n % 5, dtype="i4") - 9 for n in range(25)]
    with tables.open_file(str(src), "w") as f:
        v = f.create_vlarray("/", "v", tables.Int32Atom(),
                             filters=tables.Filters(complevel=5, complib=lib, shuffle=True))
        for r in rows:
            v.append(r)
    assert interop.import_hdf5(src, imported) == []
    with h5py.File(src, "r") as h, arca.File(imported, "r+") as a:
        d = a["v"]
        assert [(c, tuple(vals)) for c, _, vals, _ in d._id.hdf5_filters()] == \
            [(c, tuple(vals)) for c, _, vals, _ in filters_of(h["v"])]
        assert all(np.array_equal(x, y) for x, y in zip(d[()], rows))
        d.resize((65,))
        d[40:] = np.array(more + [None], object)[:-1]
    with arca.File(imported, "r") as a:
        # Read back through the records' blosc (a chunk of anything else
        # would fail to decode).
        assert [c for c, *_ in a["v"]._id.hdf5_filters()] == [32001]
        assert all(np.array_equal(x, y) for x, y in zip(a["v"][()], rows + more))
    assert interop.export_hdf5(imported, back) == []
    with h5py.File(src, "r") as h, h5py.File(back, "r") as b:
        assert filters_of(b["v"]) == filters_of(h["v"])
    with tables.open_file(str(back)) as f:
        got = f.root.v.read()
        assert len(got) == 65
        assert all(np.array_equal(x, y) for x, y in zip(got, rows + more))
