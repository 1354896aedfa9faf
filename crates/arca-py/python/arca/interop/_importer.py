"""HDF5 (or netCDF4) files into arca files: :func:`import_hdf5`."""

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .. import _links, _native
from .._dtypes import Empty, RegionReference, Reference, native, ref_dtype, regionref_dtype, \
    type_string
from .._file import File
from .._group import Group
from ._common import ALL, BATCH, SLAB, ConversionError, Report, exact_io, load_h5py, \
    slabs, staged
from ._filters import arca_pipeline, codes_any_bytes, filter_name
from ._lz4 import lz4_from_hdf5
from ._types import Unmappable, file_dtype, from_h5, needs_file_type, holds_refs, is_region_dtype, map_refs, \
    needs_values, region_from_h5, region_ref_of, vlen_items_as_read


class _Importer:
    def __init__(self, h5py, src, dst, strict, progress):
        self.h5py, self.src, self.dst = h5py, src, dst
        self.strict, self.progress = strict, progress
        self.report = Report()
        self.copied = {}  # HDF5 object address -> arca object
        # Committed types a dataset met first: HDF5 address -> the name
        # (in the root) they wait under until their own link is met.
        self.waiting = {}
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
            # Types no link leads to live on in the datasets using them.
            for tmp in self.waiting.values():
                del self.dst[tmp]
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
            if k in self.waiting:
                # A committed type a dataset met first: it takes its name.
                self.dst.move(self.waiting.pop(k), f"{ag.name.rstrip('/')}/{name}")
                self.copied[k] = ag[name]
                continue
            if k in self.copied:
                ag[name] = self.copied[k]
                continue
            if isinstance(obj, h5py.Group):
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
            elif isinstance(obj, h5py.Datatype):
                t = self.commit(obj, ag, name, path)
                if t is not None:
                    self.copied[k] = t
            else:
                self.note(path, f"{type(obj).__name__} not imported")

    def commit(self, htype, ag, name, path):
        """The committed datatype ``htype`` as ``ag[name]``, with its
        attributes (None when its type cannot map)."""
        try:
            dt = from_h5(self.h5py, htype.id, htype.dtype)
        except Unmappable as e:
            self.skip(path, str(e))
            return None
        ag[name] = dt
        t = ag[name]
        self.copy_attrs(htype, t)
        return t

    def committed(self, hds, path):
        """The arca committed type for a dataset HDF5 made with one (made
        now, under a waiting name, when the dataset comes first), or None."""
        h5py = self.h5py
        tid = hds.id.get_type()
        if not tid.committed():
            return None
        k = h5py.h5o.get_info(tid).addr
        if k not in self.copied:
            tmp = f".arca-import-type-{k}"
            t = self.commit(h5py.Datatype(tid), self.dst, tmp, path)
            if t is None:
                return None
            self.copied[k] = t
            self.waiting[k] = tmp
        return self.copied[k]

    def ref_to_arca(self, r):
        if not r:
            return Reference()
        target = self.src[r]
        k = self.key(target)
        if k not in self.copied:
            return Reference()
        return self.copied[k].ref

    def region_to_arca(self, r):
        """An HDF5 region reference as arca's: the copy of its dataset,
        the same selection (null when the dataset was not imported)."""
        if not r:
            return RegionReference()
        k = self.key(self.src[r])
        if k not in self.copied:
            return RegionReference()
        sid = self.h5py.h5r.get_region(r, self.src.id)
        return region_ref_of(self.copied[k]._id, region_from_h5(self.h5py, sid))

    def map_refs(self, value, hdt, dt):
        """``value`` (of HDF5's ``hdt``) with its references made arca's."""
        if is_region_dtype(dt):
            return map_refs(value, hdt, self.region_to_arca, regionref_dtype)
        return map_refs(value, hdt, self.ref_to_arca, ref_dtype)

    def copy_attrs(self, hobj, aobj):
        h5py = self.h5py
        names = []
        order = h5py.h5.INDEX_CRT_ORDER if self.tracked(hobj, attrs=True) else h5py.h5.INDEX_NAME
        h5py.h5a.iterate(hobj.id, lambda n: names.append(n.decode("utf-8", "surrogateescape")),
                         index_type=order)
        # Attributes holding references wait until every object exists; the
        # ones after such an attribute wait with it, so creation order holds.
        deferred = False
        for name in names:
            where = f"{hobj.name} @{name}"
            aid = h5py.h5a.open(hobj.id, name.encode("utf-8", "surrogateescape"))
            try:
                hdt = file_dtype(h5py, aid)
                dt = from_h5(h5py, aid.get_type(), hdt)
            except Unmappable as e:
                self.skip(where, str(e))
                continue
            if aid.get_type().committed():
                self.note(where, "attribute of a committed datatype: it holds the type itself")
            if aid.get_space().get_simple_extent_type() == h5py.h5s.NULL:
                def write(aobj=aobj, name=name, dt=dt):
                    aobj.attrs.create(name, Empty(dt))
            else:
                if needs_file_type(dt) and not holds_refs(hdt):
                    value = np.zeros(aid.shape, dtype=dt)
                    aid.read(value, mtype=aid.get_type())
                else:
                    value = vlen_items_as_read(hobj.attrs[name], hdt)
                if holds_refs(dt) or holds_refs(hdt):
                    deferred = True

                    def write(aobj=aobj, name=name, value=value, hdt=hdt, dt=dt):
                        aobj.attrs.create(name, self.map_refs(value, hdt, dt), dtype=dt)
                else:
                    def write(aobj=aobj, name=name, value=value, dt=dt):
                        aobj.attrs.create(name, value, dtype=dt)
            if deferred:
                self.later.append(write)
            else:
                write()

    def skip(self, path, why):
        self.note(path, f"not imported: {why}")

    def copy_dataset(self, hds, ag, name, path):
        h5py = self.h5py
        try:
            hdt = file_dtype(h5py, hds)
            dt = from_h5(h5py, hds.id.get_type(), hdt)
        except Unmappable as e:
            self.skip(path, str(e))
            return None
        dcpl = hds.id.get_create_plist()
        layout = dcpl.get_layout()
        if hds.shape is None:
            t = self.committed(hds, path)
            return ag.create_dataset(name, dtype=dt if t is None else t,
                                     track_order=self.tracked(hds, attrs=True))
        if layout == h5py.h5d.VIRTUAL and dt.kind != "O" and not needs_values(dt):
            return self.copy_virtual(hds, ag, name, path, dt, dcpl)
        if layout == h5py.h5d.CONTIGUOUS and dcpl.get_external_count() > 0 and hds.shape \
                and dt.kind != "O" and not needs_values(dt) and not holds_refs(dt) \
                and not holds_refs(hdt) and not needs_file_type(hdt) \
                and dt == hdt and _full_width(h5py, hds.id.get_type()):
            return self.copy_external(hds, ag, name, path, dt, dcpl)
        filters = [dcpl.get_filter(i) for i in range(dcpl.get_nfilters())]
        pipeline, exact = arca_pipeline(filters)
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
            self.note(path, "virtual dataset of variable-length values: its values were "
                            "imported into a contiguous dataset")
            kw["layout"] = "contiguous"
        else:
            kw["layout"] = "contiguous"
        vlen = dt.kind == "O" or needs_values(dt)
        if vlen and "compression" in kw and kw["compression"] == "lz4":
            kw["compression"] = "zstd"
        if vlen and layout == h5py.h5d.CHUNKED:
            # The values' pipeline is set apart from the records' (which
            # arca shuffles whenever they are compressed): shuffled only
            # where HDF5's was, so that export gives back the same filters.
            kw["vlen_shuffle"] = bool(kw.get("shuffle"))
            kw["vlen_compression"] = kw.get("compression")
            kw["vlen_compression_opts"] = kw.get("compression_opts")
        # A pipeline arca does not share is kept as HDF5's own, its chunks
        # exactly as stored, where the chunks hold the elements themselves.
        # Numbers narrower than their bytes (a precision or bit offset of
        # their own, what n-bit packs) are stored by HDF5 as those bits:
        # arca's types have no precision, so the values go through HDF5's
        # conversion instead of the stored chunks.
        packed = not _full_width(h5py, hds.id.get_type())
        as_hdf5 = (not exact and layout == h5py.h5d.CHUNKED and not vlen and not packed
                   and not holds_refs(dt) and not holds_refs(hdt))
        # Over variable-length values HDF5's filters code the records (heap
        # references; the heap itself is never filtered). arca's records
        # are its own, so their stored bytes cannot be kept, but a pipeline
        # of filters that code any bytes (PyTables' blosc on a VLArray) can
        # compress them as it did HDF5's, and export gives it back.
        if not exact and layout == h5py.h5d.CHUNKED and vlen and codes_any_bytes(filters):
            as_hdf5 = True
        if as_hdf5:
            for k in ("shuffle", "compression", "compression_opts"):
                kw.pop(k, None)
            kw["hdf5_filters"] = [(c, fl, list(vals), nm) for c, fl, vals, nm in filters]
        elif not exact:
            names = ", ".join(filter_name(f) for f in filters)
            kept = "+".join(x for x in (("shuffle" if kw.get("shuffle") else ""),
                                        kw.get("compression", "")) if x) or "no filters"
            self.note(path, f"filters {names}: values decoded and stored with {kept}")
        if dcpl.fill_value_defined() == h5py.h5d.FILL_VALUE_USER_DEFINED and not vlen:
            fill = fill_value(h5py, dcpl, hdt)
            if fill is None:
                self.note(path, "fill value HDF5 cannot convert to numbers: not kept")
            if holds_refs(dt):
                fill = None
            if fill is not None:
                kw["fillvalue"] = fill
        if vlen:
            kw.pop("fillvalue", None)
            fill = _vlen_string_fill(h5py, dcpl, hdt)
            if fill is not None:
                kw["fillvalue"] = fill
        else:
            kw["fill_time"] = _FILL_TIMES[dcpl.get_fill_time()]
        if kw.get("layout") == "compact" and vlen:
            kw["layout"] = "contiguous"
            self.note(path, "compact variable-length dataset stored contiguous")
        t = self.committed(hds, path)
        ds = ag.create_dataset(name, shape=hds.shape, dtype=dt if t is None else t, **kw)
        if holds_refs(dt) or holds_refs(hdt):
            def fix(ds=ds, hds=hds, dt=dt):
                ds[...] = self.map_refs(hds[()], hdt, dt)

            self.later.append(fix)
        elif layout == h5py.h5d.CHUNKED and (exact or as_hdf5) and not vlen and not packed:
            self.copy_chunks(hds, ds, len(filters), pipeline, keep_masks=as_hdf5)
        else:
            self.copy_values(hds, ds, dt)
        return ds

    def copy_external(self, hds, ag, name, path, dt, dcpl):
        """A dataset of HDF5's external storage with its external file list:
        the elements stay in those files, named as HDF5 names them (their
        bytes are laid out as arca lays them: the type maps unchanged)."""
        h5py = self.h5py
        segs = [dcpl.get_external(i) for i in range(dcpl.get_external_count())]
        kw = {"external": [(os.fsdecode(n), int(off), int(size)) for n, off, size in segs]}
        if hds.maxshape != hds.shape:
            kw["maxshape"] = hds.maxshape
        if self.tracked(hds, attrs=True):
            kw["track_order"] = True
        if dcpl.fill_value_defined() == h5py.h5d.FILL_VALUE_USER_DEFINED:
            fill = fill_value(h5py, dcpl, file_dtype(h5py, hds))
            if fill is not None:
                kw["fillvalue"] = fill
        t = self.committed(hds, path)
        return ag.create_dataset(name, shape=hds.shape, dtype=dt if t is None else t, **kw)

    def copy_virtual(self, hds, ag, name, path, dt, dcpl):
        """A virtual dataset with its mappings as HDF5 holds them: source
        files named as they were (``"."`` for this file), the same
        selections on both sides, the fill value, the maximum shape."""
        h5py = self.h5py
        maps = []
        for j in range(dcpl.get_virtual_count()):
            file, dset = dcpl.get_virtual_filename(j), dcpl.get_virtual_dsetname(j)
            vspace, sspace = dcpl.get_virtual_vspace(j), dcpl.get_virtual_srcspace(j)
            src = region_from_h5(h5py, sspace)
            if src[1] == "all" and not src[0] and vspace.get_select_npoints() != 1:
                # HDF5 keeps no extent for "all of the source": it is the
                # source's own (or, where that cannot be read, as many
                # elements as the virtual side takes, in a row).
                src = (self.source_shape(file, dset) or [vspace.get_select_npoints()],
                       "all", None)
            maps.append((file, dset, region_from_h5(h5py, vspace), src))
        # The shape the mappings were made in (the current one may have
        # grown with unlimited mappings).
        shape = list(maps[0][2][0]) if maps else list(hds.shape)
        fill = None
        if dcpl.fill_value_defined() == h5py.h5d.FILL_VALUE_USER_DEFINED:
            fb = fill_value(h5py, dcpl, file_dtype(h5py, hds))
            fill = None if fb is None else fb.astype(native(dt)).tobytes()
        maxshape = [None if m is None else int(m) for m in (hds.maxshape or hds.shape)]
        t = self.committed(hds, path)
        ag._id.create_virtual(name, type_string(dt), shape, maxshape, maps, fill,
                              self.tracked(hds, attrs=True), None if t is None else t._id)
        return ag[name]

    def source_shape(self, file, dset):
        """The shape of a virtual dataset's source as HDF5 finds it (``"."``
        this file, relative names beside it), or None."""
        h5py = self.h5py
        try:
            if file == ".":
                return list(self.src[dset].shape)
            here = os.path.dirname(os.path.abspath(self.src.filename))
            for c in ([file, os.path.join(here, os.path.basename(file))]
                      if os.path.isabs(file) else [os.path.join(here, file), file]):
                if os.path.exists(c):
                    with h5py.File(c, "r") as s:
                        return list(s[dset].shape)
        except (OSError, KeyError, TypeError):
            pass
        return None

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
                    batch.append((list(offset), at, size, ALL))
                elif mask == 0:
                    batch.append((list(offset), at, size, 0))
                else:
                    rest.append(info)
                    continue
                held += size
                if held >= BATCH:
                    _native.chunks_write_from_file(ds._id, self.direct, batch)
                    self.done += held
                    self.tick()
                    batch, held = [], 0
            if batch:
                _native.chunks_write_from_file(ds._id, self.direct, batch)
                self.done += held
                self.tick()
            infos = rest
        # Batches of about BATCH stored bytes; the next batch is read on a
        # second thread while this one is written (both release the GIL).
        if not infos:
            return
        batches, cur, held = [], [], 0
        for info in infos:
            cur.append(info)
            held += info[3]
            if held >= BATCH:
                batches.append(cur)
                cur, held = [], 0
        if cur:
            batches.append(cur)

        def fetch(batch):
            return [read(offset, at, size) for offset, _, at, size in batch]

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
                        items.append((list(offset), data, ALL))
                    elif mask == 0 and lz4 and lz4_from_hdf5(data):
                        d, m = lz4_from_hdf5(data)
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

    def copy_values(self, hds, ds, dt):
        """Values through HDF5 (``dt``: arca's dtype of them), a slab at a
        time; those HDF5 would convert, with the file's own type."""
        shape = hds.shape
        if needs_file_type(dt) and dt.kind != "O" and not needs_values(dt):
            for start, count in slabs(shape, dt.itemsize):
                arr = np.zeros(count, dtype=dt)
                if arr.size:
                    exact_io(self.h5py, hds.id, start, count, arr, write=False)
                    ds[tuple(slice(a, a + n) for a, n in zip(start, count))] = arr
                self.done += arr.nbytes
                self.tick()
            return
        hdt = hds.dtype
        if not shape or hds.size == 0:
            if hds.size:
                ds[()] = vlen_items_as_read(hds[()], hdt)
            return
        row = max(1, dt.itemsize * int(np.prod(shape[1:], dtype=np.int64)))
        step = max(1, SLAB // row)
        for i in range(0, shape[0], step):
            ds[i:i + step] = vlen_items_as_read(hds[i:i + step], hdt)
            self.done += row * min(step, shape[0] - i)
            self.tick()

    def tick(self):
        if self.progress is not None:
            self.progress(min(self.done, self.total), self.total)


def fill_value(h5py, dcpl, hdt):
    """The fill value a dataset's creation properties hold, as ``hdt``; None
    where HDF5 cannot convert it (a time type has no conversion but to
    itself, which h5py cannot ask for): the dataset then has none."""
    fill = np.zeros((), dtype=hdt)
    try:
        dcpl.get_fill_value(fill)
    except (TypeError, ValueError, RuntimeError):
        return None
    return fill


# HDF5's H5D_FILL_TIME_ALLOC, _NEVER and _IFSET, by arca's names.
_FILL_TIMES = {0: "alloc", 1: "never", 2: "ifset"}


def _vlen_string_fill(h5py, dcpl, hdt):
    """The fill value of a variable-length string dataset (the one kind of
    variable-length fill value h5py reads), or None where it has none."""
    info = h5py.check_string_dtype(hdt)
    if info is None or info.length is not None:
        return None
    if dcpl.fill_value_defined() != h5py.h5d.FILL_VALUE_USER_DEFINED:
        return None
    fill = np.zeros((1,), dtype=hdt)
    try:
        dcpl.get_fill_value(fill)
    except (TypeError, ValueError, RuntimeError):
        return None
    value = fill[0]
    return None if value is None else value


def _full_width(h5py, tid):
    """Whether every number in the HDF5 type ``tid`` uses all its bits (no
    precision below its size, no bit offset)."""
    cls = tid.get_class()
    if cls in (h5py.h5t.INTEGER, h5py.h5t.FLOAT):
        return tid.get_precision() == 8 * tid.get_size() and tid.get_offset() == 0
    if cls == h5py.h5t.COMPOUND:
        return all(_full_width(h5py, tid.get_member_type(i)) for i in range(tid.get_nmembers()))
    if cls == h5py.h5t.ARRAY:
        return _full_width(h5py, tid.get_super())
    return True


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
    h5py = load_h5py()
    src, dst = os.fspath(src), os.fspath(dst)
    with staged(dst, force) as tmp:
        with h5py.File(src, "r") as h:
            imp = _Importer(h5py, h, None, strict, progress)
            track = imp.tracked(h)
            with File(tmp, "w", track_order=track) as a:
                imp.dst = a
                imp.run()
    return imp.report
