"""Collective variable-length writes over MPI (mpi4py).

Every rank of a communicator opens the file together; rank 0 holds it
through arca and alone changes metadata, the other ranks write item bytes
straight into the file. A collective :meth:`Dataset.write_ragged` follows
five steps:

1. each rank checks its data and sums its byte lengths;
2. the sums are gathered by every rank;
3. rank 0 extends the dataset's byte vector once, by the total, inside a
   transaction, and tells every rank where the extension lies;
4. each rank writes its bytes at the extension's start plus the lower ranks'
   total (an exclusive prefix sum), syncs them, and checksums the vector
   chunks that lie wholly in its part;
5. rank 0 checksums the chunks shared between ranks, writes every rank's
   part of the dataset (the ``(offset, length)`` records) and commits once.

A failure on any rank, at any step, makes the call raise
:class:`CollectiveError` on every rank; rank 0 rolls the transaction back,
so the file is as it was before the call::

    from mpi4py import MPI
    import arca, arca.mpi

    with arca.mpi.File("out.arca", "w", comm=MPI.COMM_WORLD) as f:
        ds = f.create_dataset("rows", shape=(4 * f.size,), dtype=arca.vlen_dtype("f4"))
        mine = np.s_[4 * f.rank: 4 * f.rank + 4]
        ds.write_ragged(values, offsets, sel=mine)

Vectors with filters or space reuse are written the same way except that
the bytes travel to rank 0, which writes them (compression is not
parallel). Reads are collective too: rank 0 reads every rank's selection
and sends it.
"""

import os

import numpy as np

from . import _native, _selection
from ._dtypes import vlen_base_of_type
from ._file import File as _File
from ._util import prod

__all__ = ["ArrayDataset", "Attrs", "CollectiveError", "File", "Dataset"]


class CollectiveError(RuntimeError):
    """A collective call failed on at least one rank; raised on all of them."""


def _msg(e):
    return None if e is None else f"{type(e).__name__}: {e}"


def _agree(comm, err, what):
    """Raise on every rank if any rank has an error."""
    msgs = comm.allgather(_msg(err))
    bad = [(r, m) for r, m in enumerate(msgs) if m is not None]
    if bad:
        detail = "; ".join(f"rank {r}: {m}" for r, m in bad)
        raise CollectiveError(f"{what} failed: {detail}") from err


class File:
    """A file opened collectively by every rank of ``comm`` (default
    ``MPI.COMM_WORLD``). ``mode`` and keyword options are those of
    :class:`arca.File`; rank 0 opens it, the others only write bytes into it
    where rank 0 has made room."""

    def __init__(self, path, mode="r", comm=None, **kwargs):
        if comm is None:
            from mpi4py import MPI

            comm = MPI.COMM_WORLD
        self.comm = comm
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        self.path = os.fspath(path)
        self._f = None
        self._fd = None
        self._win = None
        err = None
        if self.rank == 0:
            try:
                self._f = _File(self.path, mode, **kwargs)
            except Exception as e:  # noqa: BLE001 -- reported on every rank
                err = e
        _agree(comm, err, "open")
        self.writable = comm.bcast(self._f._native.writable if self.rank == 0 else None, root=0)
        err = None
        if self.writable:
            try:
                self._fd = os.open(self.path, os.O_WRONLY)
            except OSError as e:
                err = e
        _agree(comm, err, "open")
        if self.writable:
            # A counter on rank 0 that ranks add to atomically (MPI one-sided):
            # where each rank's next compressed slab goes in reserved room.
            from mpi4py import MPI

            self._win = MPI.Win.Allocate(8 if self.rank == 0 else 0, 8, comm=comm)
            self._one = np.zeros(1, np.int64)
            self._got = np.zeros(1, np.int64)

    def _counter_add(self, n):
        """Add ``n`` to the shared counter; the value before."""
        from mpi4py import MPI

        self._one[0] = n
        self._win.Lock(0, MPI.LOCK_SHARED)
        self._win.Fetch_and_op(self._one, self._got, 0, 0, MPI.SUM)
        self._win.Unlock(0)
        return int(self._got[0])

    def _counter_base(self):
        """The counter's value now (rank 0, before any rank adds)."""
        return self._counter_add(0)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _on_root(self, fn, what):
        """Run ``fn`` on rank 0 and broadcast its result or error."""
        out, err = None, None
        if self.rank == 0:
            try:
                out = fn()
            except Exception as e:  # noqa: BLE001 -- reported on every rank
                err = e
        _agree(self.comm, err, what)
        return self.comm.bcast(out, root=0)

    def create_dataset(self, name, shape, dtype, **kwargs):
        """Create a dataset (collective); options as in
        :meth:`arca.Group.create_dataset`. Variable-length types give a
        :class:`Dataset`, fixed-size ones an :class:`ArrayDataset`."""

        def make():
            self._f.create_dataset(name, shape=shape, dtype=dtype, **kwargs)
            return _describe(self._f[name])

        return _dataset(self, name, self._on_root(make, "create_dataset"))

    def __getitem__(self, name):
        """Open a dataset (collective)."""
        return _dataset(self, name, self._on_root(lambda: _describe(self._f[name]),
                                                  "open dataset"))

    def create_group(self, name):
        """Create a group, and missing parents (collective)."""
        self._on_root(lambda: self._f.create_group(name) and None, "create_group")

    def require_group(self, name):
        """Open or create a group (collective)."""
        self._on_root(lambda: self._f.require_group(name) and None, "require_group")

    @property
    def attrs(self):
        """The root group's attributes (collective access, see
        :class:`Attrs`)."""
        return Attrs(self, "/")

    def close(self):
        """Close on every rank (collective); rank 0 commits."""
        if self.comm is None:
            return
        err = None
        try:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
        except OSError as e:
            err = e
        self.comm.Barrier()
        if self._win is not None:
            self._win.Free()  # collective
            self._win = None
        if self.rank == 0 and self._f is not None:
            try:
                self._f.close()
            except Exception as e:  # noqa: BLE001 -- reported on every rank
                err = e
            self._f = None
        comm, self.comm = self.comm, None
        _agree(comm, err, "close")


class Dataset:
    """A variable-length dataset of a collectively opened :class:`File`."""

    def __init__(self, file, name, shape, type_string):
        self.file = file
        self.name = name
        self.shape = tuple(shape)
        self.vlen_base = vlen_base_of_type(type_string)
        b = self.vlen_base
        self._item = 1 if b in (str, bytes) else np.dtype(b).itemsize

    def _ds(self):
        return self.file._f[self.name]

    def _box(self, sel):
        shape = self.shape
        if sel is None or sel is Ellipsis or (type(sel) is tuple and not sel):
            return [0] * len(shape), list(shape), [1] * len(shape)
        s = _selection.parse(sel, shape)
        if s.lists or s.mask is not None:
            raise ValueError("collective writes take integers and slices with positive steps")
        return [int(x) for x in s.start], [int(x) for x in s.count], [int(x) for x in s.step]

    def _prepare(self, values, offsets, sel):
        box = self._box(sel)
        n = prod(box[1])
        b = self.vlen_base
        if b in (str, bytes):
            if isinstance(values, (bytes, bytearray, memoryview)):
                values = np.frombuffer(values, dtype=np.uint8)
            v = np.ascontiguousarray(values).reshape(-1)
            if v.dtype.itemsize != 1:
                raise TypeError("string values are a uint8 array or bytes")
            v = v.view(np.uint8)
        else:
            v = np.ascontiguousarray(values, dtype=np.dtype(b).newbyteorder("=")).reshape(-1)
            v = v.view(np.uint8)
        o = np.asarray(offsets)
        if o.dtype.kind not in "iu":
            raise TypeError("offsets must be integers")
        if o.size != n + 1:
            raise ValueError(f"{o.size} offsets for {n} elements; need one more than the elements")
        if o.dtype.kind == "i" and o.size and o.min() < 0:
            raise ValueError("offsets must not be negative")
        if o.dtype.kind == "i" and o.dtype.itemsize == 8:
            o = o.view(np.uint64)  # checked non-negative: same bits, no copy
        o = np.ascontiguousarray(o, dtype=np.uint64).reshape(-1)
        if np.any(o[1:] < o[:-1]):
            raise ValueError("offsets must not decrease")
        k = self._item
        if int(o[-1]) * k > v.size:
            raise ValueError(f"offsets reach byte {int(o[-1]) * k} but values hold {v.size}")
        data = v[int(o[0]) * k:int(o[-1]) * k]
        if b is str and not _native.vlen_check_utf8(v, o):
            raise ValueError("string is not valid UTF-8")
        return box, data, o

    def write_ragged(self, values, offsets, sel=None):
        """Collective: every rank writes its elements ``sel`` from ``values``
        and Arrow-style ``offsets`` (see :meth:`arca.Dataset.write_ragged`).
        Ranks' selections must not overlap."""
        f = self.file
        comm, rank = f.comm, f.rank
        # Step 1: check locally and size.
        err = None
        box = data = o = None
        try:
            box, data, o = self._prepare(values, offsets, sel)
        except Exception as e:  # noqa: BLE001 -- reported on every rank
            err = e
        _agree(comm, err, "write_ragged")
        # Step 2: every rank learns every rank's byte count.
        sizes = comm.allgather(int(data.size))
        total = sum(sizes)
        prefix = sum(sizes[:rank])
        # Step 3: rank 0 extends the vector once, inside a transaction.
        ext, err, direct, rext = None, None, True, None
        if rank == 0:
            try:
                f._f._native.begin_transaction()
                ds = self._ds()
                try:
                    ext = _native.vlen_extend(ds._id, total) if total else None
                    # Contiguous records: ranks write theirs in place too.
                    rext = _native.vlen_record_extent(ds._id)
                except ValueError:
                    direct = False  # filtered or reusing vector: bytes go through rank 0
            except Exception as e:  # noqa: BLE001 -- reported on every rank
                err = e
        ext, direct, rext = comm.bcast((ext, direct, rext), root=0)
        try:
            _agree(comm, err, "write_ragged (extend)")
        except CollectiveError:
            if rank == 0:
                self._rollback()
            raise
        if not direct:
            return self._write_via_root(box, data, o)
        # Step 4: each rank writes its bytes at the lower ranks' total.
        err, crcs, recs = None, [], None
        try:
            k = self._item
            n = o.size - 1
            base = 0 if ext is None else ext[0] + prefix
            recs = np.empty(2 * n, dtype=np.uint64)
            recs[0::2] = base + (o[:-1] - o[0]) * np.uint64(k)
            recs[1::2] = (o[1:] - o[:-1]) * np.uint64(k)
            run = None if rext is None else _run(box, self.shape)
            if run is not None and n:
                _pwrite_all(f._fd, recs.astype("<u8", copy=False).view(np.uint8), rext[0] + 16 * run)
                recs = None  # written: rank 0 has nothing to do for this rank's records
            if data.size:
                _pwrite_all(f._fd, data, ext[1] + prefix)
            # No fsync here: rank 0's commit syncs the file after every rank
            # has written (the gather below) and before the journal is
            # invalidated, so one sync makes all ranks' bytes durable.
            if data.size:
                c = ext[3]
                lo, hi = prefix, prefix + data.size
                for j in range(-(-lo // c), hi // c):
                    crcs.append((j, _native.crc32c(data[j * c - lo:(j + 1) * c - lo])))
        except Exception as e:  # noqa: BLE001 -- reported on every rank
            err = e
        parts = comm.gather((_msg(err), crcs, box, recs), root=0)
        # Step 5: rank 0 checksums shared chunks, writes the records, commits.
        err = None
        if rank == 0:
            try:
                bad = [(r, p[0]) for r, p in enumerate(parts) if p[0] is not None]
                if bad:
                    raise CollectiveError("; ".join(f"rank {r}: {m}" for r, m in bad))
                ds = self._ds()
                if ext is not None:
                    _native.vlen_seal(ds._id, tuple(ext), [c for p in parts for c in p[1]])
                for _, _, pbox, precs in parts:
                    if precs is not None and precs.size:
                        _native.vlen_write_records(ds._id, *pbox, precs)
                f._f._native.end_transaction(True)
            except Exception as e:  # noqa: BLE001 -- reported on every rank
                err = e
                self._rollback()
        _agree(comm, err, "write_ragged")

    def _rollback(self):
        try:
            self.file._f._native.end_transaction(False)
        except Exception:  # noqa: BLE001 -- the original error is what matters
            pass

    def _write_via_root(self, box, data, o):
        f = self.file
        parts = f.comm.gather((box, data, o - o[0]), root=0)
        err = None
        if f.rank == 0:
            try:
                ds = self._ds()
                for pbox, pdata, po in parts:
                    if prod(pbox[1]):
                        _native.vlen_write(ds._id, *pbox, pdata, po)
                f._f._native.end_transaction(True)
            except Exception as e:  # noqa: BLE001 -- reported on every rank
                err = e
                self._rollback()
        _agree(f.comm, err, "write_ragged")

    def read_ragged(self, sel=None):
        """Collective: every rank gets ``(values, offsets)`` of its ``sel``;
        rank 0 reads them all."""
        f = self.file
        box = self._box(sel)
        boxes = f.comm.gather(box, root=0)
        out, err = None, None
        if f.rank == 0:
            try:
                ds = self._ds()
                out = [ds.read_ragged(_slices(b)) for b in boxes]
            except Exception as e:  # noqa: BLE001 -- reported on every rank
                err = e
        _agree(f.comm, err, "read_ragged")
        return f.comm.scatter(out, root=0)


def _run(box, shape):
    """The row-major index of the first element of a box that is one
    contiguous run of the array, or None."""
    start, count, step = box
    if any(c == 0 for c in count):
        return None
    # Past the first axis with more than one element, every axis is whole.
    spread = False
    for a, c, s, n in zip(start, count, step, shape):
        if spread and (a != 0 or c != n or s != 1):
            return None
        if c > 1:
            if s != 1:
                return None
            spread = True
    flat = 0
    for a, n in zip(start, shape):
        flat = flat * n + a
    return flat


def _slices(box):
    start, count, step = box
    return tuple(slice(a, a + (c - 1) * s + 1 if c else a, s) for a, c, s in zip(start, count, step))


def _pwrite_all(fd, data, at):
    mv = memoryview(data)
    while len(mv):
        n = os.pwrite(fd, mv, at)
        mv = mv[n:]
        at += n


# -- fixed-size datasets -----------------------------------------------------------
# Plain bytes a rank encodes before it writes them out: big enough that a
# write is one large syscall, small enough to overlap the other ranks.
_SLAB_BYTES = 8 << 20


def _whole_chunks(box, shape, chunks):
    """How many chunks of the grid the box covers whole (a chunk running
    past the extent counts when its part inside is covered)."""
    start, count, _ = box
    n = 1
    for a, c, d, k in zip(start, count, shape, chunks):
        if c == 0:
            return 0
        first = -(-a // k)  # the first chunk starting inside the box
        end = a + c
        # Chunks ending inside the box, or at the extent's end.
        last = end // k if end < d else -(-d // k)
        n *= max(0, last - first)
    return n


def _describe(ds):
    """What every rank needs to know of a dataset, from rank 0."""
    ts = ds.id.dtype()
    if ts.startswith("vlen:") or ds.dtype.hasobject:
        return ("vlen", ds.shape, ts)
    fill = np.asarray(ds.fillvalue, dtype=ds.dtype).tobytes() if ds.shape is not None else b""
    return ("array", ds.shape, ds.maxshape, ds.chunks, ds.dtype.str if not ds.dtype.names
            else ds.dtype.descr, ds._id.filters(), bool(ds._id.hdf5_filters()), fill)


def _dataset(file, name, info):
    if info[0] == "vlen":
        return Dataset(file, name, info[1], info[2])
    return ArrayDataset(file, name, *info[1:])


class Attrs:
    """Attributes of an object of a collectively opened file: every rank
    calls, rank 0 reads or writes, and every rank gets the result (or the
    error)."""

    def __init__(self, file, path):
        self._file, self._path = file, path

    def _obj(self):
        f = self._file._f
        return f if self._path == "/" else f[self._path]

    def __setitem__(self, name, value):
        def put():
            self._obj().attrs[name] = value

        self._file._on_root(put, "set attribute")

    def __getitem__(self, name):
        return self._file._on_root(lambda: self._obj().attrs[name], "get attribute")

    def __contains__(self, name):
        return self._file._on_root(lambda: name in self._obj().attrs, "attribute lookup")


class ArrayDataset:
    """A fixed-size dataset (any rank, contiguous or chunked) of a
    collectively opened :class:`File`.

    A collective write (``ds[sel] = local`` or :meth:`write_direct`) takes
    each rank's own hyperslab. Of a chunked dataset with arca's filters,
    every chunk a rank's selection covers whole is filtered (compressed) by
    that rank and written by it into the file, at an offset rank 0 gives it,
    in parallel with the others; rank 0 indexes those chunks, merges the
    parts of chunks that several ranks share (each rank's part written over
    the chunk as it stands), and commits once. A failure on any rank fails
    the call on every rank and leaves the file as it was. Ranks' selections
    must not overlap."""

    def __init__(self, file, name, shape, maxshape, chunks, dtype, filters, hdf5, fill):
        self.file = file
        self.name = name
        self.shape = tuple(shape)
        self.maxshape = maxshape
        self.chunks = tuple(chunks) if chunks is not None else None
        self.dtype = np.dtype(dtype if isinstance(dtype, str) else [tuple(d) for d in dtype])
        self._filters = [tuple(x) for x in filters]
        self._hdf5 = hdf5
        self._fill = fill

    @property
    def attrs(self):
        return Attrs(self.file, self.name)

    def _ds(self):
        return self.file._f[self.name]

    def _box(self, sel):
        return Dataset._box(self, sel)

    def __setitem__(self, sel, local):
        self.write_direct(local, sel)

    def write_direct(self, local, sel=None):
        """Collective write of ``local`` to this rank's ``sel``.

        Four steps: every rank counts the chunks its local data covers whole;
        rank 0 reserves room for all of them unfiltered (the most they can
        take) inside a transaction; each rank compresses its chunks a slab
        at a time and writes each slab at once into the room, at an offset it
        takes from a shared counter (one MPI atomic add), so that ranks
        pack their chunks tightly without waiting for each other; rank 0
        indexes every chunk, gives back the room left over, merges the
        parts of chunks no rank covers whole, and commits."""
        f = self.file
        comm, rank = f.comm, f.rank
        # Step 1: check locally; count the whole chunks.
        err, box, arr, whole, direct = None, None, None, 0, False
        try:
            box = self._box(sel)
            count = tuple(box[1])
            arr = np.asarray(local, dtype=self.dtype)
            if arr.shape != count:
                arr = np.broadcast_to(arr, count)
            arr = np.ascontiguousarray(arr)
            direct = self._direct(box)
            if direct:
                whole = _whole_chunks(box, self.shape, self.chunks)
        except Exception as e:  # noqa: BLE001 -- reported on every rank
            err = e
        counts = comm.gather((_msg(err), whole), root=0)
        # Step 2: rank 0 reserves room for every rank's chunks.
        err, room = None, None
        if rank == 0:
            try:
                bad = [(r, c[0]) for r, c in enumerate(counts) if c[0] is not None]
                if bad:
                    raise CollectiveError("; ".join(f"rank {r}: {m}" for r, m in bad))
                f._f._native.begin_transaction()
                n = sum(c[1] for c in counts)
                total = n * prod(self.chunks) * self.dtype.itemsize if n else 0
                try:
                    if total:
                        room = (_native.chunks_reserve(self._ds()._id, total), f._counter_base())
                except BaseException:
                    self._rollback()
                    raise
            except Exception as e:  # noqa: BLE001 -- reported on every rank
                err = e
        room = comm.bcast(room, root=0)
        _agree(comm, err, "write")
        # Step 3: compress and write a slab at a time.
        err, written, parts = None, [], []
        try:
            if direct:
                written, partial = self._write_slabs(box, arr, room)
                lo = box[0]
                for s0, n in partial:
                    piece = arr[tuple(slice(a - b, a - b + c) for a, b, c in zip(s0, lo, n))]
                    parts.append(((list(s0), list(n), [1] * len(n)), np.ascontiguousarray(piece)))
            else:
                parts.append((box, arr))
        except Exception as e:  # noqa: BLE001 -- reported on every rank
            err = e
        done = comm.gather((_msg(err), written, parts), root=0)
        # Step 4: rank 0 indexes the chunks, merges the rest and commits.
        err = None
        if rank == 0:
            try:
                try:
                    bad = [(r, d[0]) for r, d in enumerate(done) if d[0] is not None]
                    if bad:
                        raise CollectiveError("; ".join(f"rank {r}: {m}" for r, m in bad))
                    ds = self._ds()
                    if room is not None:
                        _native.chunks_seal(ds._id, [w for d in done for w in d[1]])
                    for d in done:
                        for pbox, data in d[2]:
                            if data.size:
                                ds[_slices(pbox)] = data
                except BaseException:
                    self._rollback()
                    raise
                f._f._native.end_transaction(True)
            except Exception as e:  # noqa: BLE001 -- reported on every rank
                err = e
        _agree(comm, err, "write")

    def _direct(self, box):
        """Whether ranks compress and write their whole chunks themselves."""
        return self.chunks is not None and not self._hdf5 and all(s == 1 for s in box[2])

    def _write_slabs(self, box, arr, room):
        """Cut the local data into slabs of whole chunk rows, compress each and
        write it into the room at once; the chunks written and the parts
        of chunks the local data covers only in part."""
        f = self.file
        start, count, _ = box
        written, partial = [], []
        if any(c == 0 for c in count):
            return written, partial
        c0 = self.chunks[0]
        row_bytes = arr[0].nbytes if arr.shape[0] else 0
        rows_per_slab = max(1, _SLAB_BYTES // max(1, row_bytes * c0)) * c0
        lo, hi = start[0], start[0] + count[0]
        a = lo
        while a < hi:
            b = min(hi, (a // rows_per_slab + 1) * rows_per_slab)
            slab = arr[a - lo:b - lo]
            enc, meta, part = _native.chunks_encode_slab(
                self._filters, self.dtype.itemsize, list(self.shape), list(self.chunks),
                [a, *start[1:]], [b - a, *count[1:]], slab.reshape(-1).view(np.uint8),
                self._fill)
            partial.extend(part)
            if meta:
                at = room[0] + f._counter_add(enc.size) - room[1]
                _native.write_out(f._fd, enc, at)
                for offset, n, mask, crc in meta:
                    written.append((offset, at, n, mask, crc))
                    at += n
            a = b
        return written, partial

    def __getitem__(self, sel):
        return self.read(sel)

    def read(self, sel=None):
        """Collective read: every rank gets its ``sel``; rank 0 reads them."""
        f = self.file
        boxes = f.comm.gather(self._box(sel), root=0)
        out, err = None, None
        if f.rank == 0:
            try:
                ds = self._ds()
                out = [ds[_slices(b)] for b in boxes]
            except Exception as e:  # noqa: BLE001 -- reported on every rank
                err = e
        _agree(f.comm, err, "read")
        return f.comm.scatter(out, root=0)

    def resize(self, size, axis=None):
        """Collective resize within maxshape."""

        def grow():
            ds = self._ds()
            ds.resize(size, axis) if axis is not None else ds.resize(size)
            return ds.shape

        self.shape = tuple(self.file._on_root(grow, "resize"))

    def _rollback(self):
        try:
            self.file._f._native.end_transaction(False)
        except Exception:  # noqa: BLE001 -- the original error is what matters
            pass
