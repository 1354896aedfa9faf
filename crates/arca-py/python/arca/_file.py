"""Files: opening modes, the context manager, flush and close."""

import io
import os

from . import _native
from ._group import Group
from ._object import register

_MODES = ("r", "r+", "w", "w-", "x", "a")


class File(Group):
    """An arca file, which is also its root group.

    ``mode`` is one of h5py's letters:

    ========  ==============================================
    ``r``     read only, the file must exist (default)
    ``r+``    read and write, the file must exist
    ``w``     create, truncating an existing file
    ``w-``    create, fail if the file exists (also ``x``)
    ``a``     read and write if it exists, create otherwise
    ========  ==============================================

    ::

        with arca.File("data.arca", "w") as f:
            f["x"] = np.arange(10)

    ``rdcc_nbytes`` sets the per-dataset chunk cache; ``page_cache_pages``
    the metadata page cache. ``locking=False`` skips the advisory file lock
    (one writer or many readers); ``journal=False`` turns off the undo
    journal, for scratch files a crash may damage. ``exact_rollback=True``
    makes a rolled-back transaction restore every byte, free space
    included. ``free_list="naive"`` selects the O(n) baseline free list,
    for benchmarks only. ``driver="memory"`` keeps the file in RAM only;
    add ``compress=True`` to keep its bytes compressed (see
    :attr:`memory_bytes`). ``driver="core"`` works on an in-memory copy of
    the file at ``name`` (read at open if it exists) and, with
    ``backing_store=True``, writes it back at every flush and at close.

    ``name`` may also be a Python file-like object (``io.BytesIO``, a file
    opened in binary mode, anything with ``read``, ``write``, ``seek``,
    ``tell`` and ``truncate``): the file lives in it. ``track_order=True``
    lists the root group's members in creation order.

    Every ``flush()`` and ``close()`` commits atomically; a crash never
    leaves a half-written file. Group changes into one atomic unit with
    :meth:`transaction`.
    """

    def __init__(
        self,
        name,
        mode="r",
        *,
        rdcc_nbytes=None,
        page_cache_pages=None,
        locking=None,
        journal=None,
        exact_rollback=None,
        free_list=None,
        driver=None,
        compress=False,
        track_order=None,
        backing_store=False,
    ):
        if mode not in _MODES:
            raise ValueError(f"Invalid mode {mode!r}; must be one of r, r+, w, w-, x, a")
        self._backing = None
        # How to open this file again elsewhere: read-only files on a path
        # pickle (see _reopen); None for any other.
        self._reopen_args = None
        if hasattr(name, "read") and hasattr(name, "seek"):
            if driver is not None:
                raise ValueError("a file-like object takes no driver")
            self._native = _native.File.from_fileobj(name, mode, bool(track_order))
            self._filename = getattr(name, "name", None) or repr(name)
            super().__init__(self, self._native.root())
            return
        path = os.fspath(name)
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if driver == "core":
            # The whole file in memory; written back to `path` on flush and
            # close when `backing_store`.
            buf = io.BytesIO()
            exists = os.path.exists(path)
            if mode in ("r", "r+") and not exists:
                raise FileNotFoundError(f"Unable to open file {path!r} (no such file)")
            if mode in ("w-", "x") and exists:
                raise FileExistsError(f"Unable to create file {path!r} (file exists)")
            if exists and mode in ("r", "r+", "a"):
                with open(path, "rb") as src:
                    buf.write(src.read())
            self._native = _native.File.from_fileobj(buf, mode, bool(track_order))
            if backing_store and mode != "r":
                self._backing = (buf, path)
            self._filename = path
            super().__init__(self, self._native.root())
            return
        if driver == "memory":
            # The name only labels the file; nothing touches the disk.
            if mode not in ("w", "w-", "x", "a"):
                raise ValueError("an in-memory file starts empty: use mode 'w'")
            self._native = _native.File.in_memory(bool(compress), bool(track_order))
        elif driver is not None:
            raise ValueError(f"unknown driver {driver!r}; use None (a file), 'core' or 'memory'")
        elif compress:
            raise ValueError("compress=True needs driver='memory'")
        else:
            self._native = _native.File(
                path, mode, rdcc_nbytes, page_cache_pages, locking, journal, free_list,
                exact_rollback, bool(track_order),
            )
            if mode == "r":
                self._reopen_args = (os.path.abspath(path), {
                    "rdcc_nbytes": rdcc_nbytes, "page_cache_pages": page_cache_pages,
                    "locking": locking})
        self._filename = path
        super().__init__(self, self._native.root())

    @property
    def filename(self):
        """The path the file was opened with."""
        return self._filename

    @property
    def mode(self):
        """``"r"`` for a read-only file, ``"r+"`` otherwise (as h5py reports)."""
        return "r+" if self._native.writable else "r"

    def io_stats(self):
        """What reads of this file fetched from storage since it was opened:
        ``{"chunks_read": n, "bytes_read": n}`` (chunks and contiguous data;
        ``arca.io_stats()`` for the whole process)."""
        return self._native.io_stats()

    @property
    def memory_bytes(self):
        """Bytes of RAM an in-memory file holds; None for a file on disk."""
        return self._native.memory_bytes

    @property
    def recovered(self):
        """Whether opening rolled back changes a crash left half-done."""
        return self._native.recovered

    @property
    def parent(self):
        """The root group is its own parent."""
        return self

    def refresh(self):
        """Move a read-only file to the newest commit of the writer that has
        it open in another process. Until then the file shows the commit
        that was newest when it was opened (or last refreshed), unchanged,
        whatever the writer does. Returns whether anything changed; for a
        writable file, a no-op. Objects from this file read the new state
        from their next call (h5py's SWMR readers call ``ds.refresh()``
        per dataset; here one call moves the whole file)."""
        return self._native.refresh()

    @property
    def generation(self):
        """How many commits the state this file shows has had."""
        return self._native.generation

    def flush(self):
        """Write every pending change to storage and sync it."""
        self._native.flush()
        self._write_back()

    def close(self):
        """Flush and close; objects from this file stop working. Idempotent."""
        if self._native.closed:
            return
        self._native.close()
        self._write_back()
        self._backing = None

    def _write_back(self):
        """``driver="core"`` with ``backing_store``: the image goes to disk
        whole, through a temporary file renamed over the old one, so the
        file on disk is always a committed state."""
        if self._backing is None:
            return
        buf, path = self._backing
        tmp = path + ".arca-tmp"
        with open(tmp, "wb") as out:
            out.write(buf.getbuffer())
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)

    def stat(self):
        """Object counts and byte totals of the whole file, as a dict."""
        return self._native.stat()

    def transaction(self):
        """A context manager making the statements under it one atomic
        change: committed when they end, rolled back — the file as it was
        before — if they raise. A transaction opened inside another joins
        the outer one.

        ::

            with f.transaction():
                f["a"].attrs["n"] = 1
                del f["b"]
        """
        return _Transaction(self._native)

    def space_info(self):
        """Free-space figures: ``sections``, ``free_bytes``, ``largest``,
        ``histogram`` (list of (bin lower bound, count, bytes)),
        ``fragmentation`` (1 - largest/free) and ``eof``."""
        return self._native.space_info()

    def check(self):
        """Read and verify every structure and chunk; raises CorruptError on
        damage, else returns the same dict as :meth:`stat`."""
        return self._native.check()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        if not self:
            return "<Closed arca File>"
        return f'<arca File "{os.path.basename(self._filename)}" (mode {self.mode})>'


class _Transaction:
    """Context manager behind :meth:`File.transaction`."""

    def __init__(self, native):
        self._native = native

    def __enter__(self):
        self._native.begin_transaction()
        return self

    def __exit__(self, exc_type, exc, tb):
        self._native.end_transaction(exc_type is None)
        return False


register("file", File)
