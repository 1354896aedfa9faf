"""HDF5 and netCDF4 files in and out: :func:`import_hdf5` and
:func:`export_hdf5` (``arca import`` and ``arca export`` on the command line).

The HDF5 side is the HDF5 library itself, through h5py (and hdf5plugin for
the filters HDF5 loads as plugins). Groups, datasets, attributes, links of
every kind, second names, creation-order flags, fill values, layouts, chunk
shapes, maxshapes and dimension scales (HDF5's attribute conventions, with
their references pointed at the copies) map one to one, and so does every
type arca holds, string character sets and padding included.

Chunks are copied as stored, never decompressed and recompressed, when
their filters are ones arca shares with HDF5: shuffle, deflate (gzip),
zstd (id 32015) and lz4 (id 32004, whose framing is rewritten around the
same compressed block). A dataset with any other filter (fletcher32, lzf,
blosc, bitshuffle, scale-offset, szip, ...) keeps HDF5's pipeline itself:
the filter ids, flags and values as recorded and every chunk exactly as
stored, with its filter mask, exported back unchanged. arca reads such
chunks where it has the codecs (deflate, shuffle, fletcher32, lzf, lz4,
zstd) and otherwise fails naming the filter. Only a dataset whose elements
must be rewritten (variable-length values, object references) under such
filters goes by value with the nearest arca pipeline, and the report says
so; ``strict=True`` refuses the file instead. Whatever does not map at all (region references, virtual datasets' mapping,
named datatypes as objects) is reported by path, never dropped silently.

Both calls write to a temporary file beside the destination and rename it
into place only when everything is done: a failure leaves no partial file.

    report = arca.import_hdf5("run.h5", "run.arca")
    for path, note in report:
        print(path, note)
    arca.export_hdf5("run.arca", "back.h5")

``python -m arca.interop import|export SRC DST [--strict] [--force]`` is the
command ``arca import``/``arca export`` run.
"""

import io
import os
import struct
import sys
import tempfile

import numpy as np

from . import _dtypes, _links, _native
from ._dtypes import Empty
from ._file import File

# Filters arca shares with HDF5: the id, arca's name.
_SHUFFLE, _DEFLATE, _FLETCHER32, _ZSTD, _LZ4 = 2, 1, 3, 32015, 32004
_ALL = 0xFFFFFFFF
# Bytes of values copied at a time when chunks cannot be copied as stored.
_SLAB = 64 << 20
# Bytes of stored chunks moved per call.
_BATCH = 32 << 20


class ConversionError(ValueError):
    """A file that cannot be converted as asked: with ``strict``, the list
    of what would not have mapped one to one (``.report``)."""

    def __init__(self, message, report=()):
        super().__init__(message)
        self.report = list(report)


class Report(list):
    """What did not map one to one: ``(path, what was done)`` pairs."""

    def add(self, path, note):
        self.append((path, note))


def _h5py():
    try:
        import h5py
    except ImportError as e:  # pragma: no cover - the package depends on it
        raise ImportError("HDF5 import and export need h5py: pip install h5py") from e
    try:
        import hdf5plugin  # noqa: F401 -- registers HDF5's plugin filters
    except ImportError:
        pass
    return h5py


def _temp_beside(dst):
    d = os.path.dirname(os.path.abspath(dst))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(dst) + ".", suffix=".part", dir=d)
    os.close(fd)
    return tmp


def _finish(tmp, dst, force):
    if os.path.exists(dst) and not force:
        raise FileExistsError(f"{dst} exists (pass force=True / --force to replace it)")
    os.replace(tmp, dst)


def _hdf5_signature(path):
    """Whether ``path`` starts with HDF5's signature (at 0 or a user block)."""
    sig = b"\x89HDF\r\n\x1a\n"
    try:
        with open(path, "rb") as f:
            for at in (0, 512, 1024, 2048, 4096):
                f.seek(at)
                if f.read(8) == sig:
                    return True
    except OSError:
        return False
    return False


# -- types -----------------------------------------------------------------------
def _h5_string_meta(h5py, tid):
    """The metadata arca keeps for a fixed-length HDF5 string type."""
    meta = {"h5py_encoding": "utf-8" if tid.get_cset() == h5py.h5t.CSET_UTF8 else "ascii"}
    pad = tid.get_strpad()
    if pad == h5py.h5t.STR_NULLTERM:
        meta["arca_strpad"] = "nullterm"
    elif pad == h5py.h5t.STR_SPACEPAD:
        meta["arca_strpad"] = "spacepad"
    return meta


class _Unmappable(Exception):
    pass


def _from_h5(h5py, tid, dt):
    """The arca (numpy) dtype for an HDF5 type ``tid`` that h5py reads as
    ``dt``: strings keep their character set and padding, references
    become arca's."""
    cls = tid.get_class()
    if cls == h5py.h5t.STRING and not tid.is_variable_str():
        return np.dtype(f"S{tid.get_size()}", metadata=_h5_string_meta(h5py, tid))
    if cls == h5py.h5t.REFERENCE:
        if dt.metadata and dt.metadata.get("ref") is h5py.RegionReference:
            raise _Unmappable("region references have no arca equivalent")
        return _dtypes.ref_dtype
    if cls == h5py.h5t.VLEN:
        base = h5py.check_vlen_dtype(dt)
        sup = tid.get_super()
        if sup.get_class() == h5py.h5t.REFERENCE:
            return _vlen(_dtypes.ref_dtype)
        if sup.get_class() not in (h5py.h5t.INTEGER, h5py.h5t.FLOAT):
            raise _Unmappable(f"variable-length sequences of {np.dtype(base)} have no arca equivalent")
        return _vlen(base)
    if cls == h5py.h5t.STRING:
        return _vlen(h5py.check_vlen_dtype(dt) or str)
    if cls == h5py.h5t.COMPOUND and dt.names is not None:
        names, formats, offsets = [], [], []
        for i in range(tid.get_nmembers()):
            n = tid.get_member_name(i).decode()
            mt = tid.get_member_type(i)
            names.append(n)
            formats.append(_from_h5(h5py, mt, dt.fields[n][0]))
            offsets.append(dt.fields[n][1])
        return np.dtype({"names": names, "formats": formats, "offsets": offsets,
                         "itemsize": dt.itemsize})
    if cls == h5py.h5t.ARRAY and dt.subdtype is not None:
        base, shape = dt.subdtype
        return np.dtype((_from_h5(h5py, tid.get_super(), base), shape))
    if cls in (h5py.h5t.BITFIELD, h5py.h5t.TIME):
        raise _Unmappable("HDF5 bitfield and time types have no arca equivalent")
    if dt.kind == "O":
        raise _Unmappable(f"type {dt} has no arca equivalent")
    return dt


def _vlen(base):
    return _dtypes.vlen_dtype(base)


def _to_h5(h5py, dt):
    """An HDF5 type id for an arca (numpy) dtype: h5py's own, with string
    character sets and padding set as arca holds them."""
    meta = dt.metadata or {}
    if dt.kind == "S":
        tid = h5py.h5t.C_S1.copy()
        tid.set_size(dt.itemsize)
        pad = meta.get("arca_strpad", "nullpad")
        tid.set_strpad({"nullpad": h5py.h5t.STR_NULLPAD, "nullterm": h5py.h5t.STR_NULLTERM,
                        "spacepad": h5py.h5t.STR_SPACEPAD}[pad])
        if meta.get("h5py_encoding") == "utf-8":
            tid.set_cset(h5py.h5t.CSET_UTF8)
        return tid
    if _dtypes.check_ref_dtype(dt) is not None:
        return h5py.h5t.py_create(h5py.ref_dtype, logical=True)
    if meta.get("vlen") is not None:
        base = meta["vlen"]
        if base is str or base is bytes:
            return h5py.h5t.py_create(h5py.string_dtype("utf-8" if base is str else "ascii"),
                                      logical=True)
        if _dtypes.check_ref_dtype(base) is not None:
            return h5py.h5t.py_create(h5py.vlen_dtype(h5py.ref_dtype), logical=True)
        return h5py.h5t.py_create(h5py.vlen_dtype(np.dtype(base)), logical=True)
    if dt.names is not None and _needs_own_type(dt):
        if _dtypes.has_vlen_members(dt):
            # HDF5 lays such a compound out itself; its members' own types.
            members, size = _dtypes.memory_layout(dt)
            tid = h5py.h5t.create(h5py.h5t.COMPOUND, size)
            for n, at, ft in members:
                tid.insert(n.encode(), at, _to_h5(h5py, ft))
            return tid
        tid = h5py.h5t.create(h5py.h5t.COMPOUND, dt.itemsize)
        for n in dt.names:
            ft, off = dt.fields[n][:2]
            tid.insert(n.encode(), off, _to_h5(h5py, ft))
        return tid
    if dt.subdtype is not None and _needs_own_type(dt.subdtype[0]):
        base, shape = dt.subdtype
        return h5py.h5t.array_create(_to_h5(h5py, base), shape)
    return h5py.h5t.py_create(dt, logical=True)


def _has_fixed_str(dt):
    """Whether a fixed-size dtype holds fixed-length strings anywhere."""
    if dt.kind == "S":
        return True
    if dt.names is not None:
        return any(_has_fixed_str(dt.fields[n][0]) for n in dt.names)
    if dt.subdtype is not None:
        return _has_fixed_str(dt.subdtype[0])
    return False


def _arca_raw(ads, start, count):
    """A box of an arca dataset's elements as stored (strings with their
    padding), numbers native."""
    mdt = _dtypes.native(ads.dtype)
    if not count:
        return _dtypes.as_elements(ads._id.read([], [], []), mdt, ())
    return _dtypes.as_elements(ads._id.read(list(start), list(count), [1] * len(count)), mdt, count)


def _stored(value, dt):
    """``value`` as a contiguous array of exactly ``dt`` (the stored byte
    order), the bytes between compound members zero."""
    value = np.asarray(value)
    out = np.zeros(value.shape, dtype=dt)
    out[...] = value
    return out


def _slabs(shape, itemsize):
    """``(start, count)`` boxes along the first axis of about ``_SLAB`` bytes."""
    if not shape:
        yield (), ()
        return
    row = max(1, itemsize * int(np.prod(shape[1:], dtype=np.int64)))
    step = max(1, _SLAB // row)
    for i in range(0, shape[0], step):
        n = min(step, shape[0] - i)
        yield (i,) + (0,) * (len(shape) - 1), (n,) + tuple(shape[1:])


def _exact_io(h5py, dsid, start, count, arr, write):
    """Read or write one box with the file's own type as the memory type:
    strings move as stored (HDF5 would re-pad them otherwise) and numbers
    in the file's byte order."""
    tid = dsid.get_type()
    if not count:
        fspace, mspace = h5py.h5s.ALL, h5py.h5s.ALL
    else:
        fspace = dsid.get_space()
        fspace.select_hyperslab(start, count)
        mspace = h5py.h5s.create_simple(count)
    if write:
        dsid.write(mspace, fspace, arr, mtype=tid)
    else:
        dsid.read(mspace, fspace, arr, mtype=tid)


def _needs_own_type(dt):
    """Whether h5py's own mapping of ``dt`` would lose something arca keeps
    (a string's padding or character set, references, vlen members)."""
    meta = dt.metadata or {}
    if dt.kind == "S":
        return True
    if meta.get("vlen") is not None or _dtypes.check_ref_dtype(dt) is not None:
        return True
    if dt.names is not None:
        return any(_needs_own_type(dt.fields[n][0]) for n in dt.names)
    if dt.subdtype is not None:
        return _needs_own_type(dt.subdtype[0])
    return False


# -- references ------------------------------------------------------------------
def _map_refs(value, dt, fn, ref_out):
    """``value`` (of dtype ``dt``) with every reference replaced by
    ``fn(ref)``: in reference elements, in compound members and in
    sequences of references; ``ref_out`` is the dtype references take."""
    if value is None:
        return None
    meta = dt.metadata or {}
    if _dtypes.check_ref_dtype(dt) is not None or meta.get("ref") is not None:
        arr = np.asarray(value, dtype=object)
        out = np.empty(arr.shape, dtype=ref_out)
        flat_in, flat_out = arr.reshape(-1), out.reshape(-1)
        for i, r in enumerate(flat_in):
            flat_out[i] = fn(r)
        return out if arr.shape else out[()]
    base = meta.get("vlen")
    if base is not None and (_dtypes.check_ref_dtype(base) is not None
                             or (getattr(base, "metadata", None) or {}).get("ref") is not None):
        arr = np.asarray(value, dtype=object)
        out = np.empty(arr.shape, dtype=object)
        for i, seq in enumerate(arr.reshape(-1)):
            out.reshape(-1)[i] = _map_refs(np.asarray(seq, dtype=object).reshape(-1),
                                           np.dtype("O", metadata={"ref": True}), fn, ref_out)
        return out if arr.shape else out[()]
    if dt.names is not None:
        arr = np.asarray(value)
        out = np.empty(arr.shape, dtype=_swap_ref_dtype(dt, ref_out))
        for n in dt.names:
            out[n] = _map_refs(arr[n], dt.fields[n][0], fn, ref_out)
        return out if arr.shape else out[()]
    return value


def _swap_ref_dtype(dt, ref_out):
    """``dt`` with its reference types (fields, sequences) made ``ref_out``'s."""
    meta = dt.metadata or {}
    if meta.get("ref") is not None:
        return ref_out
    base = meta.get("vlen")
    if base is not None and not isinstance(base, type) and (base.metadata or {}).get("ref"):
        return np.dtype("O", metadata={"vlen": ref_out})
    if dt.names is not None:
        return np.dtype({"names": list(dt.names),
                         "formats": [_swap_ref_dtype(dt.fields[n][0], ref_out) for n in dt.names],
                         "offsets": [dt.fields[n][1] for n in dt.names],
                         "itemsize": dt.itemsize})
    return dt


def _has_refs(dt):
    meta = dt.metadata or {}
    if meta.get("ref") is not None:
        return True
    base = meta.get("vlen")
    if base is not None and not isinstance(base, type):
        return bool((base.metadata or {}).get("ref"))
    if dt.names is not None:
        return any(_has_refs(dt.fields[n][0]) for n in dt.names)
    return False


# -- import ----------------------------------------------------------------------
class _Importer:
    def __init__(self, h5py, src, dst, strict, progress):
        self.h5py, self.src, self.dst = h5py, src, dst
        self.strict, self.progress = strict, progress
        self.report = Report()
        self.copied = {}  # HDF5 object address -> arca object
        self.later = []  # (closure) values holding references, set once all objects exist
        self.fds = []  # the source file opened for direct chunk reads
        self.direct = None  # its path, when chunk addresses were checked
        self.done = 0
        self.total = max(1, _h5_bytes(h5py, src))

    def note(self, path, what):
        """Report something that did not map one to one; ``strict`` refuses
        the file instead."""
        if self.strict:
            raise ConversionError(f"{path}: {what}", [(path, what)])
        self.report.add(path, what)

    def key(self, obj):
        return self.h5py.h5o.get_info(obj.id).addr

    def tracked(self, obj, attrs=False):
        """Whether ``obj`` tracks the creation order of its links (or, with
        ``attrs``, of its attributes)."""
        h5py = self.h5py
        try:
            if isinstance(obj, h5py.File):
                obj = obj["/"]
            cpl = obj.id.get_create_plist()
            flags = cpl.get_attr_creation_order() if attrs else cpl.get_link_creation_order()
            return bool(flags & h5py.h5p.CRT_ORDER_TRACKED)
        except (AttributeError, ValueError):
            return False

    def names(self, g):
        h5py = self.h5py
        out = []
        order = h5py.h5.INDEX_CRT_ORDER if self.tracked(g) else h5py.h5.INDEX_NAME
        g.id.links.iterate(lambda n: out.append(n.decode("utf-8", "surrogateescape")),
                           idx_type=order)
        return out

    def run(self):
        try:
            self.copy_attrs(self.src, self.dst)
            self.copied[self.key(self.src["/"])] = self.dst
            self.walk(self.src["/"], self.dst)
            for fix in self.later:
                fix()
        finally:
            for fd in self.fds:
                os.close(fd)

    def walk(self, hg, ag):
        h5py = self.h5py
        for name in self.names(hg):
            path = f"{hg.name.rstrip('/')}/{name}"
            link = hg.get(name, getlink=True)
            if isinstance(link, h5py.SoftLink):
                ag[name] = _links.SoftLink(link.path)
                continue
            if isinstance(link, h5py.ExternalLink):
                ag[name] = _links.ExternalLink(link.filename, link.path)
                continue
            obj = hg[name]
            k = self.key(obj)
            if k in self.copied:
                ag[name] = self.copied[k]
                continue
            if isinstance(obj, h5py.Group):
                from ._group import Group

                g = Group(ag._file, ag._id.create_group(name, self.tracked(obj),
                                                        self.tracked(obj, attrs=True)))
                self.copied[k] = g
                self.copy_attrs(obj, g)
                self.walk(obj, g)
            elif isinstance(obj, h5py.Dataset):
                d = self.copy_dataset(obj, ag, name, path)
                if d is not None:
                    self.copied[k] = d
                    self.copy_attrs(obj, d)
            else:
                self.note(path, "named datatype not imported (arca has no committed types)")

    def ref_to_arca(self, r):
        from ._dtypes import Reference

        if not r:
            return Reference()
        target = self.src[r]
        k = self.key(target)
        if k not in self.copied:
            return Reference()
        return self.copied[k].ref

    def copy_attrs(self, hobj, aobj):
        h5py = self.h5py
        names = []
        order = h5py.h5.INDEX_CRT_ORDER if self.tracked(hobj, attrs=True) else h5py.h5.INDEX_NAME
        h5py.h5a.iterate(hobj.id, lambda n: names.append(n.decode("utf-8", "surrogateescape")),
                         index_type=order)
        for name in names:
            where = f"{hobj.name} @{name}"
            aid = h5py.h5a.open(hobj.id, name.encode("utf-8", "surrogateescape"))
            try:
                dt = _from_h5(h5py, aid.get_type(), aid.dtype)
            except _Unmappable as e:
                self.skip(where, str(e))
                continue
            if aid.get_space().get_simple_extent_type() == h5py.h5s.NULL:
                aobj.attrs.create(name, Empty(dt))
                continue
            if _has_fixed_str(aid.dtype) and not _has_refs(aid.dtype):
                value = np.zeros(aid.shape, dtype=aid.dtype)
                aid.read(value, mtype=aid.get_type())
            else:
                value = hobj.attrs[name]
            if _has_refs(dt) or _has_refs(aid.dtype):
                def fix(aobj=aobj, name=name, value=value, hdt=aid.dtype, dt=dt):
                    v = _map_refs(value, hdt, self.ref_to_arca, _dtypes.ref_dtype)
                    aobj.attrs.create(name, v, dtype=dt)

                self.later.append(fix)
                continue
            aobj.attrs.create(name, value, dtype=dt)

    def skip(self, path, why):
        self.note(path, f"not imported: {why}")

    def copy_dataset(self, hds, ag, name, path):
        h5py = self.h5py
        try:
            dt = _from_h5(h5py, hds.id.get_type(), hds.dtype)
        except _Unmappable as e:
            self.skip(path, str(e))
            return None
        dcpl = hds.id.get_create_plist()
        layout = dcpl.get_layout()
        if hds.shape is None:
            return ag.create_dataset(name, data=Empty(dt), track_order=self.tracked(hds, attrs=True))
        filters = [dcpl.get_filter(i) for i in range(dcpl.get_nfilters())]
        pipeline, exact = _arca_pipeline(filters)
        kw = {}
        if self.tracked(hds, attrs=True):
            kw["track_order"] = True
        if layout == h5py.h5d.CHUNKED:
            kw["chunks"] = hds.chunks
            kw["maxshape"] = hds.maxshape
            kw["layout"] = "chunked"
            if pipeline.get("shuffle"):
                kw["shuffle"] = True
            if pipeline.get("compression"):
                kw["compression"] = pipeline["compression"]
                if pipeline.get("level") is not None:
                    kw["compression_opts"] = pipeline["level"]
        elif layout == h5py.h5d.COMPACT:
            kw["layout"] = "compact"
        elif layout == h5py.h5d.VIRTUAL:
            self.note(path, "virtual dataset: its values were imported into a contiguous dataset")
            kw["layout"] = "contiguous"
        else:
            kw["layout"] = "contiguous"
        vlen = dt.kind == "O" or _needs_values(dt)
        if vlen and "compression" in kw and kw["compression"] == "lz4":
            kw["compression"] = "zstd"
        # A pipeline arca does not share is kept as HDF5's own, its chunks
        # exactly as stored, where the chunks hold the elements themselves.
        as_hdf5 = (not exact and layout == h5py.h5d.CHUNKED and not vlen
                   and not _has_refs(dt) and not _has_refs(hds.dtype))
        if as_hdf5:
            for k in ("shuffle", "compression", "compression_opts"):
                kw.pop(k, None)
            kw["hdf5_filters"] = [(c, fl, list(vals), nm) for c, fl, vals, nm in filters]
        elif not exact:
            names = ", ".join(_filter_name(f) for f in filters)
            kept = "+".join(x for x in (("shuffle" if kw.get("shuffle") else ""),
                                        kw.get("compression", "")) if x) or "no filters"
            self.note(path, f"filters {names}: values decoded and stored with {kept}")
        if dcpl.fill_value_defined() == h5py.h5d.FILL_VALUE_USER_DEFINED and not vlen:
            fill = np.zeros((), dtype=hds.dtype)
            dcpl.get_fill_value(fill)
            if _has_refs(dt):
                fill = None
            if fill is not None:
                kw["fillvalue"] = fill
        if vlen:
            for k in ("fillvalue",):
                kw.pop(k, None)
        if kw.get("layout") == "compact" and vlen:
            kw["layout"] = "contiguous"
            self.note(path, "compact variable-length dataset stored contiguous")
        ds = ag.create_dataset(name, shape=hds.shape, dtype=dt, **kw)
        if _has_refs(dt) or _has_refs(hds.dtype):
            def fix(ds=ds, hds=hds, dt=dt):
                ds[...] = _map_refs(hds[()], hds.dtype, self.ref_to_arca, _dtypes.ref_dtype)

            self.later.append(fix)
        elif layout == h5py.h5d.CHUNKED and (exact or as_hdf5) and not vlen:
            self.copy_chunks(hds, ds, len(filters), pipeline, keep_masks=as_hdf5)
        else:
            self.copy_values(hds, ds)
        return ds

    def copy_chunks(self, hds, ds, nfilters, pipeline, keep_masks=False):
        """Stored chunks as they are (lz4 reframed), read straight from the
        source file where HDF5 says they lie and written in batches; a
        chunk some filters skipped (a partial mask) goes by value, except
        under an HDF5 pipeline (``keep_masks``), which keeps HDF5's mask."""
        infos = []
        if hasattr(hds.id, "chunk_iter"):
            hds.id.chunk_iter(lambda i: infos.append((i.chunk_offset, i.filter_mask,
                                                      i.byte_offset, i.size)))
        else:  # pragma: no cover - older HDF5
            for i in range(hds.id.get_num_chunks()):
                c = hds.id.get_chunk_info(i)
                infos.append((c.chunk_offset, c.filter_mask, c.byte_offset, c.size))
        every = (1 << nfilters) - 1
        lz4 = pipeline.get("compression") == "lz4"
        read = self.chunk_reader(hds, infos)
        if self.direct is not None and not lz4:
            # Chunks whose bytes arca stores as they are: copied file to
            # file by the native layer, in batches; the rest below.
            rest, batch, held = [], [], 0
            for info in infos:
                offset, mask, at, size = info
                if keep_masks:
                    batch.append((list(offset), at, size, mask))
                elif nfilters == 0 or mask & every == every:
                    batch.append((list(offset), at, size, _ALL))
                elif mask == 0:
                    batch.append((list(offset), at, size, 0))
                else:
                    rest.append(info)
                    continue
                held += size
                if held >= _BATCH:
                    _native.chunks_write_from_file(ds._id, self.direct, batch)
                    self.done += held
                    self.tick()
                    batch, held = [], 0
            if batch:
                _native.chunks_write_from_file(ds._id, self.direct, batch)
                self.done += held
                self.tick()
            infos = rest
        # Batches of about _BATCH stored bytes; the next batch is read on a
        # second thread while this one is written (both release the GIL).
        if not infos:
            return
        batches, cur, held = [], [], 0
        for info in infos:
            cur.append(info)
            held += info[3]
            if held >= _BATCH:
                batches.append(cur)
                cur, held = [], 0
        if cur:
            batches.append(cur)

        def fetch(batch):
            return [read(offset, at, size) for offset, _, at, size in batch]

        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(1) as pool:
            ahead = pool.submit(fetch, batches[0]) if batches else None
            for k, batch in enumerate(batches):
                datas = ahead.result()
                ahead = pool.submit(fetch, batches[k + 1]) if k + 1 < len(batches) else None
                items = []
                for (offset, mask, _, size), data in zip(batch, datas):
                    if keep_masks:
                        items.append((list(offset), data, mask))
                    elif nfilters == 0 or mask & every == every:
                        items.append((list(offset), data, _ALL))
                    elif mask == 0 and lz4 and _lz4_from_hdf5(data):
                        d, m = _lz4_from_hdf5(data)
                        items.append((list(offset), d, m))
                    elif mask == 0 and not lz4:
                        items.append((list(offset), data, 0))
                    else:
                        sel = tuple(slice(o, min(o + c, s))
                                    for o, c, s in zip(offset, hds.chunks, hds.shape))
                        ds[sel] = hds[sel]
                    self.done += size
                _native.chunks_write_stored(ds._id, items)
                self.tick()

    def chunk_reader(self, hds, infos):
        """How to fetch a chunk's stored bytes: from the source file at the
        address HDF5 reports (checked against HDF5's own read of the first
        chunk), else through HDF5."""
        path = self.src.filename
        if infos and self.src.driver == "sec2" and os.path.isfile(path):
            offset, _, at, size = infos[0]
            fd = os.open(path, os.O_RDONLY)
            if os.pread(fd, size, at) == hds.id.read_direct_chunk(offset)[1]:
                self.fds.append(fd)
                self.direct = path
                return lambda offset, at, size: os.pread(fd, size, at)
            os.close(fd)
        self.direct = None
        return lambda offset, at, size: hds.id.read_direct_chunk(offset)[1]

    def copy_values(self, hds, ds):
        shape = hds.shape
        if _has_fixed_str(hds.dtype) and hds.dtype.kind != "O":
            for start, count in _slabs(shape, hds.dtype.itemsize):
                arr = np.zeros(count, dtype=hds.dtype)
                if arr.size:
                    _exact_io(self.h5py, hds.id, start, count, arr, write=False)
                    ds[tuple(slice(a, a + n) for a, n in zip(start, count))] = arr
                self.done += arr.nbytes
                self.tick()
            return
        if not shape or hds.size == 0:
            if hds.size:
                ds[()] = hds[()]
            return
        row = max(1, hds.dtype.itemsize * int(np.prod(shape[1:], dtype=np.int64)))
        step = max(1, _SLAB // row)
        for i in range(0, shape[0], step):
            ds[i:i + step] = hds[i:i + step]
            self.done += row * min(step, shape[0] - i)
            self.tick()

    def tick(self):
        if self.progress is not None:
            self.progress(min(self.done, self.total), self.total)


def _needs_values(dt):
    """Whether values must be copied one by one (variable-length members)."""
    return _dtypes.has_vlen_members(dt)


def _unfiltered(data, ds):
    """A chunk every filter skipped: its elements, as arca stores them."""
    return data


def _filter_name(f):
    code, _, values, name = f
    return {_SHUFFLE: "shuffle", _DEFLATE: "gzip", _FLETCHER32: "fletcher32",
            _ZSTD: "zstd", _LZ4: "lz4", 32000: "lzf", 32001: "blosc", 32008: "bitshuffle",
            6: "scaleoffset", 5: "nbit", 4: "szip"}.get(code, f"{name.decode(errors='replace')} ({code})")


def _arca_pipeline(filters):
    """arca's creation keywords for an HDF5 pipeline, and whether chunks
    stored by it are arca chunks byte for byte (so they can be copied)."""
    out, exact, compressors = {}, True, 0
    for i, (code, _, values, _) in enumerate(filters):
        if code == _SHUFFLE and i == 0:
            out["shuffle"] = True
        elif code == _DEFLATE:
            out["compression"], out["level"] = "gzip", int(values[0]) if values else 4
            compressors += 1
        elif code == _ZSTD:
            out["compression"], out["level"] = "zstd", int(values[0]) if values else 3
            compressors += 1
        elif code == _LZ4 and (not values or values[0] == 0):
            out["compression"], out["level"] = "lz4", None
            compressors += 1
        else:
            exact = False
            if code in (32000, 32001, 32008, 4, 5, 6, _LZ4) and "compression" not in out:
                out["compression"], out["level"] = "zstd", 3
    if compressors > 1 or (compressors == 1 and filters and filters[-1][0] not in (_DEFLATE, _ZSTD, _LZ4)):
        exact = False
    return out, exact


def _lz4_from_hdf5(data):
    """HDF5's lz4 framing (u64 BE size, u32 BE block size, then per block
    u32 BE compressed size and the block, kept raw when compressing did not
    shrink it) as an arca chunk and its mask: the same compressed block
    rewrapped (u32 LE size, one block), or the raw elements unfiltered.
    None for a chunk of several blocks, which goes by value."""
    if len(data) < 16:
        return None
    total, block = struct.unpack(">QI", data[:12])
    (n,) = struct.unpack(">I", data[12:16])
    if block < total or 16 + n != len(data) or total >= 1 << 32:
        return None
    if n >= total:
        return data[16:], _ALL
    return struct.pack("<I", total) + data[16:], 0


def _lz4_to_hdf5(data):
    """arca's lz4 chunk in HDF5's framing (one block of the whole chunk)."""
    (total,) = struct.unpack("<I", data[:4])
    return struct.pack(">QII", total, total, len(data) - 4) + data[4:]


def _h5_bytes(h5py, f):
    total = [0]

    def visit(name, obj):
        if isinstance(obj, h5py.Dataset) and obj.shape:
            total[0] += obj.id.get_storage_size()

    f.visititems(visit)
    return total[0]


def import_hdf5(src, dst, strict=False, progress=None, force=False):
    """Copy the HDF5 (or netCDF4) file ``src`` into a new arca file ``dst``
    and return the :class:`Report` of what did not map one to one (empty
    when everything did). ``strict=True`` raises :class:`ConversionError`
    instead of importing anything that would be reported. ``progress(done,
    total)`` is called as data is copied. An existing ``dst`` is replaced
    only with ``force=True``; on any failure no ``dst`` is left behind."""
    h5py = _h5py()
    src, dst = os.fspath(src), os.fspath(dst)
    if os.path.exists(dst) and not force:
        raise FileExistsError(f"{dst} exists (pass force=True / --force to replace it)")
    tmp = _temp_beside(dst)
    try:
        with h5py.File(src, "r") as h:
            imp = _Importer(h5py, h, None, strict, progress)
            track = imp.tracked(h)
            with File(tmp, "w", track_order=track) as a:
                imp.dst = a
                imp.run()
        _finish(tmp, dst, force)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return imp.report


# -- export ----------------------------------------------------------------------
class _Exporter:
    def __init__(self, h5py, src, dst, progress):
        self.h5py, self.src, self.dst, self.progress = h5py, src, dst, progress
        self.report = Report()
        self.copied = {}  # arca object id -> h5py object
        self.later = []
        self.done = 0
        self.values_cache = {}
        self.scratch = None

    def run(self):
        try:
            self.copied[self.src._id.id] = self.dst
            self.walk(self.src, self.dst)
            self.copy_attrs(self.src, self.dst)
            for fix in self.later:
                fix()
        finally:
            if self.scratch is not None:
                self.scratch.close()

    def walk(self, ag, hg):
        for name in ag:
            link = _links.from_native(ag._id.link(name))
            if isinstance(link, _links.SoftLink):
                hg[name] = self.h5py.SoftLink(link.path)
                continue
            if isinstance(link, _links.ExternalLink):
                hg[name] = self.h5py.ExternalLink(link.filename, link.path)
                continue
            obj = ag[name]
            if obj._id.id in self.copied:
                hg[name] = self.copied[obj._id.id]
                continue
            from ._dataset import Dataset

            if isinstance(obj, Dataset):
                d = self.copy_dataset(obj, hg, name)
                self.copied[obj._id.id] = d
                self.copy_attrs(obj, d)
            else:
                g = self.create_group(hg, name, bool(obj._id.track_order()),
                                      bool(obj.attrs._id.track_order()))
                self.copied[obj._id.id] = g
                self.walk(obj, g)
                self.copy_attrs(obj, g)

    def create_group(self, hg, name, links, attrs):
        """An HDF5 group tracking the creation order of its links and of
        its attributes as the arca group does (indexed, as h5py makes it)."""
        h5py = self.h5py
        both = h5py.h5p.CRT_ORDER_TRACKED | h5py.h5p.CRT_ORDER_INDEXED
        gcpl = h5py.h5p.create(h5py.h5p.GROUP_CREATE)
        if links:
            gcpl.set_link_creation_order(both)
        if attrs:
            gcpl.set_attr_creation_order(both)
        return h5py.Group(h5py.h5g.create(hg.id, name.encode(), gcpl=gcpl))

    def ref_to_h5(self, r):
        if not r:
            return None
        target = self.src[r]
        h = self.copied.get(target._id.id)
        return None if h is None else h.ref

    def copy_attrs(self, aobj, hobj):
        h5py = self.h5py
        for name in aobj.attrs:
            value = aobj.attrs[name]
            dt = value.dtype if isinstance(value, Empty) else aobj.attrs._dtype(name)
            if not isinstance(value, Empty) and _has_fixed_str(dt) and dt.kind != "O" \
                    and not _has_refs(dt) and not _needs_values(dt):
                # Strings as stored, padding included (reads strip it).
                _, shape, data = aobj.attrs._id.get(name)
                value = np.frombuffer(data, dtype=_dtypes.native(dt)).reshape(shape)
            if isinstance(value, Empty):
                tid = _to_h5(h5py, value.dtype)
                h5py.h5a.create(hobj.id, name.encode(), tid, h5py.h5s.create(h5py.h5s.NULL))
                continue
            if _has_refs(dt):
                def fix(hobj=hobj, name=name, value=value, dt=dt):
                    v = _map_refs(value, dt, self.ref_to_h5, h5py.ref_dtype)
                    _h5_attr(h5py, hobj, name, v, _swap_ref_dtype(dt, h5py.ref_dtype))

                self.later.append(fix)
                continue
            _h5_attr(h5py, hobj, name, value, dt)

    def copy_dataset(self, ads, hg, name):
        h5py = self.h5py
        dt = ads.dtype
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        if ads.attrs._id.track_order():
            dcpl.set_attr_creation_order(h5py.h5p.CRT_ORDER_TRACKED | h5py.h5p.CRT_ORDER_INDEXED)
        if ads.shape is None:
            tid = _to_h5(h5py, dt)
            dsid = h5py.h5d.create(hg.id, name.encode(), tid, h5py.h5s.create(h5py.h5s.NULL),
                                   dcpl=dcpl)
            return h5py.Dataset(dsid)
        layout = ads.layout
        filters = []
        h5_pipeline = ads._id.hdf5_filters() if layout == "chunked" else []
        if h5_pipeline:
            # HDF5's own pipeline, as imported: set as recorded, chunks
            # written back with their masks.
            dcpl.set_chunk(tuple(ads.chunks))
            tid = _to_h5(h5py, dt)
            for code, flags, vals, _ in h5_pipeline:
                dcpl.set_filter(code, flags, self.given_values(tid, ads.chunks, code, flags, vals))
                filters.append(code)
        elif layout == "chunked":
            dcpl.set_chunk(tuple(ads.chunks))
            if ads.shuffle:
                dcpl.set_shuffle()
                filters.append(_SHUFFLE)
            comp = ads.compression
            if comp == "gzip":
                dcpl.set_deflate(ads.compression_opts if ads.compression_opts is not None else 4)
                filters.append(_DEFLATE)
            elif comp == "zstd":
                dcpl.set_filter(_ZSTD, h5py.h5z.FLAG_OPTIONAL, (int(ads.compression_opts or 3),))
                filters.append(_ZSTD)
            elif comp == "lz4":
                dcpl.set_filter(_LZ4, h5py.h5z.FLAG_OPTIONAL, (0,))
                filters.append(_LZ4)
        elif layout == "compact":
            dcpl.set_layout(h5py.h5d.COMPACT)
        vlen = dt.kind == "O" or _needs_values(dt)
        if not vlen and not _has_refs(dt) and ads._id.has_fill_value():
            fill = np.asarray(ads.fillvalue).astype(dt).reshape(())
            dcpl.set_fill_value(fill)
        maxshape = tuple(h5py.h5s.UNLIMITED if m is None else m for m in (ads.maxshape or ads.shape))
        space = h5py.h5s.create_simple(tuple(ads.shape), maxshape)
        tid = _to_h5(h5py, dt)
        dsid = h5py.h5d.create(hg.id, name.encode(), tid, space, dcpl=dcpl)
        hds = h5py.Dataset(dsid)
        if _has_refs(dt):
            def fix(hds=hds, ads=ads, dt=dt):
                hds[...] = _map_refs(ads[()], dt, self.ref_to_h5, h5py.ref_dtype)

            self.later.append(fix)
        elif layout == "chunked" and not vlen:
            every = (1 << len(filters)) - 1
            stored = _native.chunks_stored(ads._id)
            # One buffer serves every batch: fresh memory costs a page fault
            # per page, more than the copy itself.
            buf = np.empty(0, np.uint8)
            i = 0
            while i < len(stored):
                # A batch of about _BATCH bytes read under one call.
                j, held = i, 0
                while j < len(stored) and (j == i or held < _BATCH):
                    held += stored[j][1]
                    j += 1
                if buf.size < held:
                    buf = np.empty(max(held, _BATCH * 2), np.uint8)
                found = _native.chunks_read_stored_into(ads._id, [list(c[0]) for c in stored[i:j]], buf)
                view, at = memoryview(buf), 0
                for (offset, _, _), f in zip(stored[i:j], found):
                    n, mask = f
                    data = view[at:at + n]
                    at += n
                    if mask == _ALL:
                        dsid.write_direct_chunk(tuple(offset), data, filter_mask=every)
                    elif h5_pipeline:
                        dsid.write_direct_chunk(tuple(offset), data, filter_mask=mask)
                    else:
                        if filters and filters[-1] == _LZ4:
                            data = _lz4_to_hdf5(bytes(data))
                        dsid.write_direct_chunk(tuple(offset), data, filter_mask=0)
                    self.done += n
                    self.tick()
                i = j
        elif ads.size and _has_fixed_str(dt) and not vlen:
            for start, count in _slabs(ads.shape, dt.itemsize):
                box = tuple(slice(a, a + n) for a, n in zip(start, count))
                arr = _stored(_arca_raw(ads, start, count), dt)
                _exact_io(h5py, dsid, start, count, arr, write=True)
        elif ads.size:
            shape = ads.shape
            if not shape:
                hds[()] = ads[()]
            else:
                row = max(1, dt.itemsize * int(np.prod(shape[1:], dtype=np.int64)))
                step = max(1, _SLAB // row)
                for i in range(0, shape[0], step):
                    hds[i:i + step] = ads[i:i + step]
        return hds

    def given_values(self, tid, chunks, code, flags, recorded):
        """The values to give HDF5 so that a filter records ``recorded``.
        A filter's ``set_local`` may rewrite what it is given (bitshuffle
        puts its version and the element size in front of the caller's
        values), so what it recorded is not always what it takes: the
        values that reproduce it are found on a scratch dataset in memory,
        trying the recorded ones first and then each tail of them."""
        h5py = self.h5py
        key = (tid.dtype.str, tuple(chunks), code, flags, tuple(recorded))
        if key in self.values_cache:
            return self.values_cache[key]
        if self.scratch is None:
            self.scratch = h5py.File(io.BytesIO(), "w")
        found = tuple(recorded)
        for k in range(len(recorded) + 1):
            cand = tuple(recorded[k:])
            dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
            dcpl.set_chunk(tuple(chunks))
            try:
                dcpl.set_filter(code, flags, cand)
                name = f"t{len(self.values_cache)}_{k}".encode()
                d = h5py.h5d.create(self.scratch.id, name, tid,
                                    h5py.h5s.create_simple(tuple(chunks)), dcpl=dcpl)
                got = d.get_create_plist().get_filter_by_id(code)[1]
            except Exception:  # noqa: BLE001 -- a candidate the filter refuses
                continue
            if tuple(got) == tuple(recorded):
                found = cand
                break
        self.values_cache[key] = found
        return found

    def tick(self):
        if self.progress is not None:
            self.progress(self.done, self.done)


def _h5_attr(h5py, hobj, name, value, dt):
    """An HDF5 attribute of exactly the type arca holds (string padding and
    character set included)."""
    arr = np.asarray(value, dtype=dt) if dt.kind != "O" or value is None else value
    if not isinstance(arr, np.ndarray):
        arr = np.asarray(arr, dtype=dt)
    if not _needs_own_type(dt) or (dt.metadata or {}).get("vlen") in (str, bytes) and arr.ndim == 0:
        hobj.attrs.create(name, arr, dtype=dt if dt.kind != "O" else _h5_dtype(h5py, dt))
        return
    tid = _to_h5(h5py, dt)
    space = h5py.h5s.create_simple(arr.shape) if arr.shape else h5py.h5s.create(h5py.h5s.SCALAR)
    aid = h5py.h5a.create(hobj.id, name.encode(), tid, space)
    if _has_fixed_str(dt) and dt.kind != "O" and not _has_refs(dt):
        aid.write(_stored(arr, dt), mtype=tid)
    else:
        hobj.attrs.modify(name, arr)


def _h5_dtype(h5py, dt):
    meta = dt.metadata or {}
    base = meta.get("vlen")
    if base is str:
        return h5py.string_dtype("utf-8")
    if base is bytes:
        return h5py.string_dtype("ascii")
    if base is not None:
        return h5py.vlen_dtype(base)
    return dt


def export_hdf5(src, dst, progress=None, force=False):
    """Copy the arca file ``src`` into a new HDF5 file ``dst`` (readable by
    h5py, netCDF4 where it follows netCDF's conventions, and every HDF5
    tool) and return the :class:`Report` of what did not map one to one."""
    h5py = _h5py()
    src, dst = os.fspath(src), os.fspath(dst)
    if os.path.exists(dst) and not force:
        raise FileExistsError(f"{dst} exists (pass force=True / --force to replace it)")
    tmp = _temp_beside(dst)
    try:
        with File(src, "r") as a:
            track = bool(a._id.track_order()) if hasattr(a._id, "track_order") else False
            with h5py.File(tmp, "w", track_order=track) as h:
                exp = _Exporter(h5py, a, h, progress)
                exp.run()
        _finish(tmp, dst, force)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return exp.report


def main(argv=None):
    """``python -m arca.interop import|export SRC DST [--strict] [--force]``."""
    import argparse

    p = argparse.ArgumentParser(prog="arca", description="HDF5/netCDF4 files in and out")
    p.add_argument("command", choices=["import", "export"])
    p.add_argument("src")
    p.add_argument("dst")
    p.add_argument("--strict", action="store_true",
                   help="refuse a file that would not map one to one")
    p.add_argument("--force", action="store_true", help="replace an existing destination")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    a = p.parse_args(argv)
    bar = None if a.quiet or not sys.stderr.isatty() else _Bar()
    try:
        if a.command == "import":
            report = import_hdf5(a.src, a.dst, strict=a.strict, progress=bar, force=a.force)
        else:
            report = export_hdf5(a.src, a.dst, progress=bar, force=a.force)
    except ConversionError as e:
        print(f"arca {a.command}: refused (--strict): {e}", file=sys.stderr)
        return 2
    except (OSError, ValueError, TypeError, KeyError) as e:
        print(f"arca {a.command}: {a.src}: {e}", file=sys.stderr)
        return 1
    finally:
        if bar is not None:
            bar.close()
    for path, note in report:
        print(f"{path}: {note}")
    print(f"{a.command}: {a.src} -> {a.dst}" + (f" ({len(report)} notes)" if report else ""),
          file=sys.stderr)
    return 0


class _Bar:
    """A one-line progress display on stderr."""

    def __init__(self):
        self.last = -1

    def __call__(self, done, total):
        pct = int(100 * done / max(total, 1))
        if pct != self.last:
            self.last = pct
            sys.stderr.write(f"\r{pct:3d}% ({done >> 20} of {total >> 20} MiB)")
            sys.stderr.flush()

    def close(self):
        if self.last >= 0:
            sys.stderr.write("\n")


if __name__ == "__main__":
    sys.exit(main())
