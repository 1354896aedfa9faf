"""arca files into HDF5 files: :func:`export_hdf5`."""

import io
import os

import numpy as np

from .. import _links, _native
from .._dataset import Dataset
from .._datatype import Datatype
from .._dtypes import Empty, as_elements, native
from .._file import File
from ._common import ALL, BATCH, SLAB, Report, as_exact, exact_io, load_h5py, slabs, \
    staged
from ._filters import DEFLATE, LZ4, SHUFFLE, ZSTD
from ._lz4 import lz4_to_hdf5
from ._types import h5_dtype, needs_file_type, holds_refs, is_region_dtype, map_refs, \
    needs_own_type, needs_values, region_of, region_to_h5, swap_ref_dtype, to_h5


def _read_padded(ads, start, count):
    """A box of an arca dataset's elements with strings as the file holds
    them (padding kept), numbers native."""
    mdt = native(ads.dtype)
    if not count:
        return as_elements(ads._id.read([], [], []), mdt, ())
    return as_elements(ads._id.read(list(start), list(count), [1] * len(count)), mdt, count)


# arca's fill times as HDF5's H5D_FILL_TIME_ALLOC, _NEVER and _IFSET.
_FILL_TIMES = {"alloc": 0, "never": 1, "ifset": 2}


def _set_fill(h5py, dcpl, ads, dt, vlen, report, path):
    """Give ``dcpl`` the fill value of the arca dataset ``ads``. A string
    goes through a variable-length string, as h5py's own ``fillvalue=``
    does: h5py's low-level ``set_fill_value`` of a fixed-length string
    array hands HDF5 the wrong bytes. A fixed-length string with a NUL
    before its end cannot pass that way and is reported."""
    if vlen:
        info = h5py.check_string_dtype(dt)
        if info is not None and info.length is None:
            dcpl.set_fill_value(np.array(ads.fillvalue, dtype=h5py.string_dtype(info.encoding)))
        return
    fill = np.asarray(ads.fillvalue).astype(dt).reshape(())
    if dt.kind != "S":
        dcpl.set_fill_value(fill)
        return
    raw = bytes(fill.item())
    if b"\0" in raw.rstrip(b"\0"):
        report.add(path, "fill value: a string with a NUL inside cannot be given to HDF5 "
                         "through h5py; the dataset has none")
        return
    info = h5py.check_string_dtype(dt)
    enc = info.encoding if info is not None else "ascii"
    dcpl.set_fill_value(np.array(raw.rstrip(b"\0"), dtype=h5py.string_dtype(enc)))


class _Exporter:
    def __init__(self, h5py, src, dst, progress):
        self.h5py, self.src, self.dst, self.progress = h5py, src, dst, progress
        self.report = Report()
        self.copied = {}  # arca object id -> h5py object
        # Committed types a dataset met first: arca id -> the name (in the
        # root) they wait under until their own link is met.
        self.waiting = {}
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
            # Types no link leads to live on in the datasets using them.
            for tmp in self.waiting.values():
                del self.dst[tmp]
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
            if obj._id.id in self.waiting:
                # A committed type a dataset met first: it takes its name.
                self.dst.move(self.waiting.pop(obj._id.id), f"{hg.name.rstrip('/')}/{name}")
                self.copied[obj._id.id] = hg[name]
                continue
            if obj._id.id in self.copied:
                hg[name] = self.copied[obj._id.id]
                continue
            if isinstance(obj, Datatype):
                self.copied[obj._id.id] = self.commit(obj, hg, name)
            elif isinstance(obj, Dataset):
                d = self.copy_dataset(obj, hg, name)
                self.copied[obj._id.id] = d
                self.copy_attrs(obj, d)
            else:
                g = self.create_group(hg, name, bool(obj._id.track_order()),
                                      bool(obj.attrs._id.track_order()))
                self.copied[obj._id.id] = g
                self.walk(obj, g)
                self.copy_attrs(obj, g)

    def commit(self, t, hg, name):
        """The arca committed datatype ``t`` as ``hg[name]``, with its
        attributes."""
        tid = to_h5(self.h5py, t.dtype)
        tid.commit(hg.id, name.encode())
        h = hg[name]
        self.copy_attrs(t, h)
        return h

    def type_id(self, ads):
        """The HDF5 type of a dataset: its committed type's (committed
        now, under a waiting name, when the dataset comes first), or its own."""
        native_type = ads._id.committed_type()
        if native_type is None:
            return to_h5(self.h5py, ads.dtype)
        k = native_type.id
        if k not in self.copied:
            tmp = f".arca-export-type-{k}"
            self.copied[k] = self.commit(Datatype(native_type, self.src), self.dst, tmp)
            self.waiting[k] = tmp
        return self.copied[k].id

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

    def region_to_h5(self, r):
        """An arca region reference as HDF5's: the copy of its dataset, the
        same selection (null when the dataset was not exported)."""
        h5py = self.h5py
        h = self.copied.get(r._oid) if r else None
        if h is None:
            return h5py.RegionReference()
        sid = region_to_h5(h5py, region_of(r))
        return h5py.h5r.create(h.id, b".", h5py.h5r.DATASET_REGION, sid)

    def map_refs(self, value, dt):
        """``value`` (of arca's ``dt``) with its references made HDF5's,
        and the dtype that holds them."""
        h5py = self.h5py
        if is_region_dtype(dt):
            return map_refs(value, dt, self.region_to_h5, h5py.regionref_dtype), \
                h5py.regionref_dtype
        return map_refs(value, dt, self.ref_to_h5, h5py.ref_dtype), \
            swap_ref_dtype(dt, h5py.ref_dtype)

    def copy_attrs(self, aobj, hobj):
        h5py = self.h5py
        # Attributes holding references wait until every object exists; the
        # ones after such an attribute wait with it, so that an object
        # listing its attributes in creation order lists them as it did
        # (DIMENSION_LIST often comes first).
        deferred = False
        for name in aobj.attrs:
            value = aobj.attrs[name]
            dt = value.dtype if isinstance(value, Empty) else aobj.attrs._dtype(name)
            if not isinstance(value, Empty) and needs_file_type(dt) and dt.kind != "O" \
                    and not holds_refs(dt) and not needs_values(dt):
                # Strings as stored, padding included (reads strip it).
                _, shape, data = aobj.attrs._id.get(name)
                value = np.frombuffer(data, dtype=native(dt)).reshape(shape)
            if isinstance(value, Empty):
                def write(hobj=hobj, name=name, value=value):
                    tid = to_h5(h5py, value.dtype)
                    h5py.h5a.create(hobj.id, name.encode(), tid, h5py.h5s.create(h5py.h5s.NULL))
            elif holds_refs(dt):
                deferred = True

                def write(hobj=hobj, name=name, value=value, dt=dt):
                    v, hdt = self.map_refs(value, dt)
                    _h5_attr(h5py, hobj, name, v, hdt)
            else:
                def write(hobj=hobj, name=name, value=value, dt=dt):
                    _h5_attr(h5py, hobj, name, value, dt)
            if deferred:
                self.later.append(write)
            else:
                write()

    def copy_dataset(self, ads, hg, name):
        h5py = self.h5py
        dt = ads.dtype
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        if ads.attrs._id.track_order():
            dcpl.set_attr_creation_order(h5py.h5p.CRT_ORDER_TRACKED | h5py.h5p.CRT_ORDER_INDEXED)
        if ads.shape is None:
            tid = self.type_id(ads)
            dsid = h5py.h5d.create(hg.id, name.encode(), tid, h5py.h5s.create(h5py.h5s.NULL),
                                   dcpl=dcpl)
            return h5py.Dataset(dsid)
        layout = ads.layout
        if ads.is_virtual:
            return self.copy_virtual(ads, hg, name, dcpl)
        if ads.external is not None:
            return self.copy_external(ads, hg, name, dcpl)
        filters = []
        h5_pipeline = ads._id.hdf5_filters() if layout == "chunked" else []
        if h5_pipeline:
            # HDF5's own pipeline, as imported: set as recorded, chunks
            # written back with their masks.
            dcpl.set_chunk(tuple(ads.chunks))
            tid = to_h5(h5py, dt)
            for code, flags, vals, _ in h5_pipeline:
                dcpl.set_filter(code, flags, self.given_values(tid, ads.chunks, code, flags, vals))
                filters.append(code)
        elif layout == "chunked":
            dcpl.set_chunk(tuple(ads.chunks))
            if _shuffled(ads):
                dcpl.set_shuffle()
                filters.append(SHUFFLE)
            comp = ads.compression
            if comp == "gzip":
                dcpl.set_deflate(ads.compression_opts if ads.compression_opts is not None else 4)
                filters.append(DEFLATE)
            elif comp == "zstd":
                dcpl.set_filter(ZSTD, h5py.h5z.FLAG_OPTIONAL, (int(ads.compression_opts or 3),))
                filters.append(ZSTD)
            elif comp == "lz4":
                dcpl.set_filter(LZ4, h5py.h5z.FLAG_OPTIONAL, (0,))
                filters.append(LZ4)
        elif layout == "compact":
            dcpl.set_layout(h5py.h5d.COMPACT)
        vlen = dt.kind == "O" or needs_values(dt)
        dcpl.set_fill_time(_FILL_TIMES[ads._id.fill_time()])
        if not holds_refs(dt) and ads._id.has_fill_value():
            _set_fill(h5py, dcpl, ads, dt, vlen, self.report, ads.name)
        maxshape = tuple(h5py.h5s.UNLIMITED if m is None else m for m in (ads.maxshape or ads.shape))
        space = h5py.h5s.create_simple(tuple(ads.shape), maxshape)
        tid = self.type_id(ads)
        dsid = h5py.h5d.create(hg.id, name.encode(), tid, space, dcpl=dcpl)
        hds = h5py.Dataset(dsid)
        if holds_refs(dt):
            def fix(hds=hds, ads=ads, dt=dt):
                hds[...] = self.map_refs(ads[()], dt)[0]

            self.later.append(fix)
        elif layout == "chunked" and not vlen:
            every = (1 << len(filters)) - 1
            stored = _native.chunks_stored(ads._id)
            # One buffer serves every batch: fresh memory costs a page fault
            # per page, more than the copy itself.
            buf = np.empty(0, np.uint8)
            i = 0
            while i < len(stored):
                # A batch of about BATCH bytes read under one call.
                j, held = i, 0
                while j < len(stored) and (j == i or held < BATCH):
                    held += stored[j][1]
                    j += 1
                if buf.size < held:
                    buf = np.empty(max(held, BATCH * 2), np.uint8)
                found = _native.chunks_read_stored_into(ads._id, [list(c[0]) for c in stored[i:j]], buf)
                view, at = memoryview(buf), 0
                for (offset, _, _), f in zip(stored[i:j], found):
                    n, mask = f
                    data = view[at:at + n]
                    at += n
                    if mask == ALL:
                        dsid.write_direct_chunk(tuple(offset), data, filter_mask=every)
                    elif h5_pipeline:
                        dsid.write_direct_chunk(tuple(offset), data, filter_mask=mask)
                    else:
                        if filters and filters[-1] == LZ4:
                            data = lz4_to_hdf5(bytes(data))
                        dsid.write_direct_chunk(tuple(offset), data, filter_mask=0)
                    self.done += n
                    self.tick()
                i = j
        elif ads.size and needs_file_type(dt) and not vlen:
            for start, count in slabs(ads.shape, dt.itemsize):
                arr = as_exact(_read_padded(ads, start, count), dt)
                exact_io(h5py, dsid, start, count, arr, write=True)
        elif ads.size:
            shape = ads.shape
            if not shape:
                hds[()] = ads[()]
            else:
                row = max(1, dt.itemsize * int(np.prod(shape[1:], dtype=np.int64)))
                step = max(1, SLAB // row)
                base = h5py.check_vlen_dtype(hds.dtype)
                for i in range(0, shape[0], step):
                    if base is not None and base not in (str, bytes):
                        _write_sequences(h5py, hds, i, ads[i:i + step], base)
                    else:
                        hds[i:i + step] = ads[i:i + step]
        return hds

    def copy_external(self, ads, hg, name, dcpl):
        """An HDF5 dataset of external storage with the arca one's segments
        (the elements stay in those files), fill value and maximum shape."""
        h5py = self.h5py
        for file, offset, size in ads.external:
            dcpl.set_external(os.fsencode(file), offset, size)
        if ads._id.has_fill_value():
            _set_fill(h5py, dcpl, ads, ads.dtype, False, self.report, ads.name)
        shape = tuple(ads.shape)
        maxshape = tuple(h5py.h5s.UNLIMITED if m is None else m for m in (ads.maxshape or shape))
        space = h5py.h5s.create_simple(shape, maxshape)
        dsid = h5py.h5d.create(hg.id, name.encode(), self.type_id(ads), space, dcpl=dcpl)
        return h5py.Dataset(dsid)

    def copy_virtual(self, ads, hg, name, dcpl):
        """An HDF5 virtual dataset with the arca one's mappings, fill value
        and maximum shape."""
        h5py = self.h5py
        dcpl.set_layout(h5py.h5d.VIRTUAL)
        maps = ads._id.virtual_mappings()
        for file, dset, v, s in maps:
            dcpl.set_virtual(region_to_h5(h5py, v), file.encode(), dset.encode(),
                             region_to_h5(h5py, s))
        if ads._id.has_fill_value():
            _set_fill(h5py, dcpl, ads, ads.dtype, False, self.report, ads.name)
        shape = tuple(maps[0][2][0]) if maps else tuple(ads.shape)
        maxshape = tuple(h5py.h5s.UNLIMITED if m is None else m for m in (ads.maxshape or shape))
        space = h5py.h5s.create_simple(shape, maxshape)
        dsid = h5py.h5d.create(hg.id, name.encode(), self.type_id(ads), space, dcpl=dcpl)
        return h5py.Dataset(dsid)

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


def _write_sequences(h5py, hds, first, rows, base):
    """Write ``rows`` (an object array of sequences) into ``hds`` from row
    ``first``, through h5py's low-level write: its ``__setitem__`` turns
    sequences of equal length into a 2-D array and refuses them. Each is
    converted to the stored base type, so big-endian values stay values.

    Fixed-length strings go through no conversion at all: HDF5 converting
    h5py's NUL-padded strings to a file's NUL-terminated ones drops the
    last byte of a string that fills its size (PyTables' VLArrays of
    strings hold such), so they are handed to HDF5 as its own sequences
    (length and pointer per row) of exactly the file's string type."""
    if isinstance(base, np.dtype) and base.kind == "S":
        items = [np.ascontiguousarray(np.asarray(r, dtype=base)) for r in rows.reshape(-1)]
        buf = np.empty(rows.shape, dtype=[("len", np.uintp), ("p", np.uintp)])
        flat = buf.reshape(-1)
        for k, it in enumerate(items):
            flat[k] = (it.size, it.ctypes.data if it.size else 0)
        fspace = hds.id.get_space()
        fspace.select_hyperslab((first,) + (0,) * (rows.ndim - 1), rows.shape)
        # `items` holds the memory the pointers lead to until the write ends.
        hds.id.write(h5py.h5s.create_simple(rows.shape), fspace, buf, mtype=hds.id.get_type())
        del items
        return
    buf = np.empty(rows.shape, dtype=hds.dtype)
    flat = buf.reshape(-1)
    for k, r in enumerate(rows.reshape(-1)):
        flat[k] = np.asarray(r, dtype=base)
    fspace = hds.id.get_space()
    fspace.select_hyperslab((first,) + (0,) * (rows.ndim - 1), rows.shape)
    hds.id.write(h5py.h5s.create_simple(rows.shape), fspace, buf)


def _shuffled(ads):
    """Whether HDF5's pipeline for ``ads`` has shuffle: for variable-length
    values, whether the values are shuffled (arca shuffles the records of
    every compressed variable-length dataset; HDF5 has no records)."""
    info = _native.vlen_info(ads._id)
    if info is not None:
        return any(name == "shuffle" for name, _ in info["filters"])
    return ads.shuffle


def _h5_attr(h5py, hobj, name, value, dt):
    """An HDF5 attribute of exactly the type arca holds (string padding and
    character set included)."""
    arr = np.asarray(value, dtype=dt) if dt.kind != "O" or value is None else value
    if not isinstance(arr, np.ndarray):
        arr = np.asarray(arr, dtype=dt)
    if not needs_own_type(dt) or (dt.metadata or {}).get("vlen") in (str, bytes) and arr.ndim == 0:
        hobj.attrs.create(name, arr, dtype=dt if dt.kind != "O" else h5_dtype(h5py, dt))
        return
    tid = to_h5(h5py, dt)
    space = h5py.h5s.create_simple(arr.shape) if arr.shape else h5py.h5s.create(h5py.h5s.SCALAR)
    aid = h5py.h5a.create(hobj.id, name.encode(), tid, space)
    if needs_file_type(dt) and dt.kind != "O" and not holds_refs(dt):
        aid.write(as_exact(arr, dt), mtype=tid)
    else:
        hobj.attrs.modify(name, arr)


def export_hdf5(src, dst, progress=None, force=False):
    """Copy the arca file ``src`` into a new HDF5 file ``dst`` (readable by
    h5py, netCDF4 where it follows netCDF's conventions, and every HDF5
    tool) and return the :class:`Report` of what did not map one to one."""
    h5py = load_h5py()
    src, dst = os.fspath(src), os.fspath(dst)
    with staged(dst, force) as tmp:
        with File(src, "r") as a:
            track = bool(a._id.track_order()) if hasattr(a._id, "track_order") else False
            with h5py.File(tmp, "w", track_order=track) as h:
                exp = _Exporter(h5py, a, h, progress)
                exp.run()
    return exp.report
