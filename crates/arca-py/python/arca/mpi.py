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
from ._file import File as _File
from ._vlen import _base_of

__all__ = ["CollectiveError", "File", "Dataset"]


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


def _prod(shape):
    n = 1
    for s in shape:
        n *= int(s)
    return n


class File:
    """A file opened collectively by every rank of ``comm`` (default
    ``MPI.COMM_WORLD``). ``mode`` and keyword options are those of
    :class:`arca.File`; rank 0 opens it, the others only write raw bytes."""

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
        """Create a variable-length dataset (collective); options as in
        :meth:`arca.Group.create_dataset`."""

        def make():
            ds = self._f.create_dataset(name, shape=shape, dtype=dtype, **kwargs)
            return ds.shape, ds.id.dtype()

        shape, ts = self._on_root(make, "create_dataset")
        return Dataset(self, name, shape, ts)

    def __getitem__(self, name):
        """Open a variable-length dataset (collective)."""

        def info():
            ds = self._f[name]
            return ds.shape, ds.id.dtype()

        shape, ts = self._on_root(info, "open dataset")
        if not ts.startswith("vlen:"):
            raise TypeError(f"{name} is not variable-length; arca.mpi writes variable-length data")
        return Dataset(self, name, shape, ts)

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
        self.vlen_base = _base_of(type_string)
        b = self.vlen_base
        self._item = 1 if b in (str, bytes) else np.dtype(b).itemsize

    def _ds(self):
        return self.file._f[self.name]

    def _box(self, sel):
        shape = self.shape
        if sel is None or sel is Ellipsis or (type(sel) is tuple and not sel):
            return [0] * len(shape), list(shape), [1] * len(shape)
        s = _selection.parse(sel, shape)
        if s.fancy is not None or s.flip:
            raise ValueError("collective writes take integers and slices with positive steps")
        return [int(x) for x in s.start], [int(x) for x in s.count], [int(x) for x in s.step]

    def _prepare(self, values, offsets, sel):
        box = self._box(sel)
        n = _prod(box[1])
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
        and Arrow-style ``offsets`` (see :meth:`arca.VlenDataset.write_ragged`).
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
                    ext = _native.vlen_extend(ds.id, total) if total else None
                    # Contiguous records: ranks write theirs in place too.
                    rext = _native.vlen_record_extent(ds.id)
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
                    _native.vlen_seal(ds.id, tuple(ext), [c for p in parts for c in p[1]])
                for _, _, pbox, precs in parts:
                    if precs is not None and precs.size:
                        _native.vlen_write_records(ds.id, *pbox, precs)
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
                    if _prod(pbox[1]):
                        _native.vlen_write(ds.id, *pbox, pdata, po)
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
