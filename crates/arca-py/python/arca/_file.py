"""Files: opening modes, h5py's keywords, the context manager, flush and close."""

import errno
import io
import itertools
import os
import warnings

from . import _native
from ._errors import CorruptError
from ._group import Group
from ._object import register

_MODES = ("r", "r+", "w", "w-", "x", "a")
_CREATING = ("w", "w-", "x")

# h5py's libver bounds, oldest first; "latest" is the newest of them.
_LIBVER = ("earliest", "v108", "v110", "v112", "v114", "v200")

_FS_STRATEGIES = ("fsm", "page", "aggregate", "none")

# Drivers that mean "a file on disk" to arca, with the keywords each takes
# in h5py (accepted, no effect: arca's own file driver does the I/O).
_DISK_DRIVERS = {
    "sec2": (),
    "stdio": (),
    "direct": ("alignment", "block_size", "cbuf_size"),
    "windows": (),
}
_CORE_KEYWORDS = ("block_size", "backing_store")
_UNSUPPORTED_DRIVERS = {
    "split": "the split driver keeps HDF5's metadata and raw data in two files; "
             "an arca file is one file",
    "family": "the family driver spreads an HDF5 file over numbered member files; "
              "an arca file is one file",
    "mpio": "for collective writes over MPI use arca.mpi.File",
    "ros3": "arca reads files on local storage (or in Python file-like objects)",
}

# h5py's default meta block size, reported back when none is given.
_META_BLOCK_SIZE = 2048

# In-memory files get names of their own, as h5py's do.
_memory_names = itertools.count()


def _libver_bounds(libver):
    """``(low, high)`` as h5py reports ``File.libver``; KeyError for a name
    h5py does not know, as in h5py."""
    if libver is None:
        return "earliest", _LIBVER[-1]

    def level(name):
        if name == "latest":
            return len(_LIBVER) - 1
        return _LIBVER.index(name) if name in _LIBVER else _missing(name)

    if isinstance(libver, str):
        low, high = level(libver), len(_LIBVER) - 1
    else:
        low, high = (level(x) for x in libver)
    if low > high:
        raise ValueError("Invalid (low,high) combination of library version bound")
    return _LIBVER[low], _LIBVER[high]


def _missing(name):
    raise KeyError(name)


def _locking(locking):
    """``(lock, best_effort)`` for h5py's ``locking`` values."""
    if locking is None:
        return None, False
    if locking in (True, "true"):
        return True, False
    if locking in (False, "false"):
        return False, False
    if locking == "best-effort":
        return True, True
    raise ValueError(f"Unsupported locking value: {locking}")


def _userblock(size, mode):
    """The validated user block size (0 for none), h5py's checks."""
    if size is None:
        return None
    if mode in ("r", "r+"):
        raise ValueError("User block may only be specified when creating a file")
    try:
        size = int(size)
    except (TypeError, ValueError):
        raise ValueError("User block size must be an integer") from None
    if size != 0 and (size < 512 or size & (size - 1)):
        raise ValueError(f"User block size {size} must be 0 or a power of 2 of at least 512")
    return size


# The first bytes of every arca file (after a user block, if any).
_MAGIC = b"\x89ARCA\r\n\x1a"


def is_hdf5(fname):
    """Whether :class:`File` can open ``fname`` (h5py's name for the
    check): an arca file, with or without a user block. HDF5 files are not
    (``arca import`` converts them)::

        arca.is_hdf5("run.arca")     # True
    """
    try:
        with open(fname, "rb") as fh:
            if fh.read(len(_MAGIC)) == _MAGIC:
                return True
    except OSError:
        return False
    return _find_user_block(os.fspath(fname)) is not None


def _find_user_block(path):
    """The size of the user block before an arca file at ``path`` (where
    its magic is found, at 512, 1024, 2048, ... bytes), or None."""
    magic = _MAGIC
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as fh:
            at = 512
            while at + len(magic) <= size:
                fh.seek(at)
                if fh.read(len(magic)) == magic:
                    return at
                at *= 2
    except OSError:
        return None
    return None


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

    The keywords are h5py's, in h5py's order. Those that map onto arca
    take effect:

    * ``rdcc_nbytes``: bytes of decoded chunks cached per dataset.
    * ``locking``: ``True``/``"true"`` take the advisory file lock (one
      writer, or any number of readers); ``False``/``"false"`` skip it;
      ``"best-effort"`` takes it where the file system supports locks.
    * ``track_order=True``: the root group lists members (and attributes)
      in creation order.
    * ``userblock_size``: that many bytes (0, or a power of two of at least
      512) at the start of a new file belong to the user; arca's file
      starts after them. A file with a user block is found and opened
      again with ``File(name)`` alone. It journals and locks as any file,
      but cannot be read beside a writer in another process.
    * ``swmr=True`` (mode ``r``) and ``f.swmr_mode = True`` (a writable
      file): arca readers always see whole commits, and a read-only file
      moves to the writer's newest with :meth:`refresh`; the flags are
      reported back as h5py reports them.
    * ``driver``: ``None``, ``"sec2"``, ``"stdio"``, ``"direct"`` (a file
      on disk, through arca's own file driver), ``"core"`` (the whole file
      in memory, read from ``name`` at open if it exists and, with
      ``backing_store=True``, the default, written back to it whole at
      every flush and at close), ``"fileobj"`` (``name`` is a Python
      file-like object: ``io.BytesIO``, a file opened in binary mode,
      anything with ``read``, ``write``, ``seek``, ``tell`` and
      ``truncate``), and arca's ``"memory"`` (in RAM only; add
      ``compress=True`` to keep its bytes compressed, see
      :attr:`memory_bytes`). h5py's ``"split"``, ``"family"``, ``"mpio"``
      and ``"ros3"`` are refused (ValueError), as is an unknown name.

    Those that exist only for libhdf5's file layout are accepted, checked
    as h5py checks them, reported back where h5py reports them, and have
    no effect on arca's format: ``libver`` (``File.libver``),
    ``rdcc_nslots`` and ``rdcc_w0`` (arca's chunk cache is bounded by
    bytes alone), ``fs_strategy``, ``fs_persist``, ``fs_threshold``,
    ``fs_page_size``, ``page_buf_size``, ``min_meta_keep``,
    ``min_raw_keep`` (arca manages its free space and pages itself),
    ``alignment_threshold``, ``alignment_interval``, ``meta_block_size``
    (``File.meta_block_size``), ``track_times`` (the root group's times,
    which arca does not keep; ``create_group``/``create_dataset`` take
    it), and the drivers' ``block_size``, ``alignment`` and
    ``cbuf_size``.

    arca's own keywords: ``page_cache_pages`` (metadata pages kept in
    memory, 4096 by default: at most 16 MiB; a long transaction that fills
    it with changes writes them back early and goes on, so writing a
    million objects between commits holds no more), ``journal=False`` (no undo journal, for scratch files a crash
    may damage), ``exact_rollback=True`` (a rolled-back transaction
    restores every byte, free space included) and ``free_list="naive"``
    (the O(n) baseline free list, for benchmarks only).

    A URL opens a file on object storage::

        f = arca.File("s3://bucket/run.arca", "r",
                      storage_options={"aws_region": "eu-west-1"})
        with arca.File("s3://bucket/run.arca", "a") as w:
            w["calibrated"] = x    # published at close: one conditional PUT

    ``s3://``, ``gs://``, ``az://``, ``http(s)://``, ``file://`` and
    ``memory://`` are understood; credentials and endpoints come from the
    usual environment variables (``AWS_ENDPOINT_URL``, ...) and from
    ``storage_options`` (the store's configuration keys, and arca's
    ``head_bytes``, ``meta_bytes``, ``block_bytes``, ``cache_bytes``, ``part_bytes``,
    ``max_in_flight``, ``coalesce_bytes``, ``max_retries``,
    ``retry_timeout``, ``staging_dir``, ``multipart_threshold``,
    ``part_size``). Opening read-only costs one request; ``io_stats()``
    counts ``requests``, ``bytes_fetched``, ``round_trips``, ``puts``,
    ``bytes_put``, ``parts`` and ``completes``. A read-only file pickles
    by URL. Modes ``w``, ``x``/``w-``, ``a`` and ``r+`` stage the file
    locally (``a`` and ``r+`` fetch it whole) and publish it at each commit
    and at close with one conditional PUT (on S3, from
    ``multipart_threshold``, 64 MiB, up: a multipart upload of
    ``part_size`` parts whose completion carries the condition); a writer
    another beat to it gets ``ConflictError``, its staged file kept
    (``http(s)://`` stays read-only). See docs/CLOUD.md.

    Every ``flush()`` and ``close()`` commits atomically; a crash never
    leaves a half-written file. Group changes into one atomic unit with
    :meth:`transaction`.
    """

    def __init__(
        self,
        name,
        mode="r",
        driver=None,
        libver=None,
        userblock_size=None,
        swmr=False,
        rdcc_nslots=None,
        rdcc_nbytes=None,
        rdcc_w0=None,
        track_order=None,
        fs_strategy=None,
        fs_persist=False,
        fs_threshold=1,
        fs_page_size=None,
        page_buf_size=None,
        min_meta_keep=0,
        min_raw_keep=0,
        locking=None,
        alignment_threshold=1,
        alignment_interval=1,
        meta_block_size=None,
        *,
        track_times=False,
        page_cache_pages=None,
        journal=None,
        exact_rollback=None,
        free_list=None,
        compress=False,
        storage_options=None,
        **kwds,
    ):
        self._backing = None
        # How to open this file again elsewhere: read-only files on a path
        # pickle (see _reopen); None for any other.
        self._reopen_args = None
        self._swmr = False
        self._userblock_size = 0
        # Files reached through external links, by path (see _external_file).
        self._externals = {}
        fileobj = hasattr(name, "read") and hasattr(name, "seek")
        if fileobj:
            if driver not in (None, "fileobj"):
                raise ValueError("Driver must be 'fileobj' for file-like object if specified.")
            if kwds.get("fileobj", name) is not name:
                raise ValueError("Invalid value of 'fileobj' argument; must equal to "
                                 "file-like object if specified.")
            kwds.pop("fileobj", None)
            driver = "fileobj"
        elif driver == "fileobj":
            raise ValueError("driver='fileobj' needs a file-like object as the name")
        if fs_strategy and mode not in _CREATING:
            raise ValueError("Unable to set file space strategy of an existing file")
        if swmr and mode != "r":
            warnings.warn("swmr=True only affects read ('r') mode. For swmr write mode, "
                          "set f.swmr_mode = True after opening the file.", stacklevel=2)
        settings = _Settings(
            driver, libver, rdcc_nslots, rdcc_nbytes, rdcc_w0, locking, page_buf_size,
            min_meta_keep, min_raw_keep, alignment_threshold, alignment_interval,
            meta_block_size, track_times, fs_strategy, fs_persist, fs_threshold,
            fs_page_size, mode, kwds,
        )
        self._libver = settings.libver
        self._meta_block_size = settings.meta_block_size
        self._driver = settings.driver_name
        if mode not in _MODES:
            raise ValueError(f"Invalid mode {mode!r}; must be one of r, r+, w, w-, x, a")
        userblock = _userblock(userblock_size, mode)
        track = bool(track_order)
        cache = settings.chunk_cache
        if fileobj:
            if userblock:
                raise ValueError("a user block needs a file on disk")
            self._native = _native.File.from_fileobj(name, mode, track, cache, page_cache_pages)
            self._filename = repr(name)
            super().__init__(self, self._native.root())
            return
        if isinstance(name, str) and _native.is_url(name):
            self._open_url(name, mode, storage_options, cache, page_cache_pages, rdcc_nbytes)
            super().__init__(self, self._native.root())
            return
        if storage_options is not None:
            raise ValueError("storage_options= applies to URLs (s3://, gs://, az://, "
                             "http(s)://, file://, memory://), not to paths")
        path = os.fspath(name)
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        self._filename = path
        if settings.page_buffer_refused and not (mode in ("w-", "x") and os.path.exists(path)):
            raise OSError("Unable to create file (Enabling Page Buffering requires PAGE "
                          "file space strategy)")
        if driver == "core":
            self._open_core(path, mode, track, cache, page_cache_pages,
                            kwds.get("backing_store", True))
        elif driver == "memory":
            # The name only labels the file; nothing touches the disk.
            if mode not in ("w", "w-", "x", "a"):
                raise ValueError("an in-memory file starts empty: use mode 'w'")
            self._native = _native.File.in_memory(bool(compress), track, cache,
                                                  page_cache_pages)
        elif compress:
            raise ValueError("compress=True needs driver='memory'")
        else:
            lock, best_effort = _locking(locking)
            args = (path, mode, cache, page_cache_pages, lock, journal, free_list,
                    exact_rollback, track)
            self._native = self._open_path(args, userblock, best_effort)
            if mode == "r" and not self._userblock_size:
                self._reopen_args = (os.path.abspath(path), {
                    "rdcc_nbytes": rdcc_nbytes, "page_cache_pages": page_cache_pages,
                    "locking": locking})
            self._swmr = bool(swmr) and mode == "r"
        super().__init__(self, self._native.root())

    def _open_url(self, url, mode, storage_options, cache, pages, rdcc_nbytes):
        """A file on object storage: ``storage_options`` holds the store's
        keys (credentials, endpoint, region) and arca's (``head_bytes``,
        ``block_bytes``, ``cache_bytes``, ``max_retries``, ``staging_dir``,
        ``multipart_threshold``, ``part_size``, ...); see docs/CLOUD.md. Read-only, it pickles by URL; in the other
        modes it is staged locally and published at each commit (``flush``,
        a transaction's end) and at close, and a writer that lost a race
        gets ``ConflictError``."""
        try:
            options = dict(storage_options or {})
        except (TypeError, ValueError):
            raise TypeError("storage_options must be a dict of str keys and values") from None
        self._filename = url
        self._native = _native.File.open_url(url, mode, options, cache, pages)
        if mode == "r":
            self._reopen_args = (url, {"rdcc_nbytes": rdcc_nbytes,
                                       "page_cache_pages": pages,
                                       "storage_options": options})

    def _open_path(self, args, userblock, best_effort):
        """The native file at ``args[0]``: with the user block asked for,
        or the one found before an existing file; without the lock when
        ``best_effort`` and the file system has none."""
        path, mode = args[0], args[1]
        try:
            if userblock is not None:
                if mode == "a" and os.path.exists(path):
                    found = _find_user_block(path) or 0
                    if found != userblock:
                        raise ValueError(f"Requested userblock size ({userblock}) does not "
                                         f"match that of existing file ({found})")
                if userblock:
                    self._userblock_size = userblock
                    return _native.File(*args, userblock)
            return _native.File(*args)
        except CorruptError:
            found = None if mode in _CREATING else _find_user_block(path)
            if found is None:
                raise
            self._userblock_size = found
            return _native.File(*args, found)
        except OSError as e:
            if best_effort and e.errno in (errno.ENOSYS, errno.ENOLCK, errno.EOPNOTSUPP):
                return self._open_path((*args[:4], False, *args[5:]), userblock, False)
            raise

    def _open_core(self, path, mode, track, cache, pages, backing_store):
        """``driver="core"``: the whole file in memory, written back to
        ``path`` at flush and close when ``backing_store``."""
        buf = io.BytesIO()
        exists = os.path.exists(path)
        if mode in ("r", "r+") and not exists:
            # A plain OSError, as HDF5's core driver raises.
            raise OSError(f"Unable to open file {path!r} (no such file)")
        if mode in ("w-", "x") and exists:
            raise FileExistsError(errno.EEXIST, f"Unable to create file {path!r} (file exists)")
        if exists and mode in ("r", "r+", "a"):
            with open(path, "rb") as src:
                buf.write(src.read())
        self._native = _native.File.from_fileobj(buf, mode, track, cache, pages)
        if backing_store and mode != "r":
            self._backing = (buf, path)
            # A new file exists from the start, as with HDF5's core driver.
            self._write_back()

    @classmethod
    def in_memory(cls, file_image=None, **kwargs):
        """A new file in memory, with no file on disk (``driver="core"``
        without a backing store); ``file_image``, the bytes of an arca file
        (anything with the buffer interface), starts it with a copy of that
        file, open for writing. Other keywords are :class:`File`'s, except
        ``name``, ``mode``, ``driver``, ``locking`` and ``backing_store``;
        ``block_size`` is accepted and has no effect::

            with arca.File.in_memory() as f:
                f["x"] = np.arange(3)
        """
        for k in ("driver", "locking", "backing_store", "name", "mode"):
            if k in kwargs:
                raise TypeError(f"File.in_memory() got an unexpected keyword argument {k!r}")
        creation = [k for k in ("track_order", "track_times", "fs_strategy", "fs_persist",
                                "fs_threshold", "fs_page_size", "userblock_size") if k in kwargs]
        if file_image and creation:
            raise TypeError(f"{', '.join(creation)} parameters cannot be used with file_image")
        kwargs.pop("block_size", None)
        name = f"arca_in_memory_nonfile_{next(_memory_names)}"
        if file_image:
            obj = io.BytesIO(bytes(memoryview(file_image)))
            f = cls(obj, "r+", **kwargs)
        else:
            f = cls(name, "w", driver="memory", **kwargs)
        f._filename = name
        f._driver = "core"
        return f

    @property
    def filename(self):
        """The path the file was opened with (for a file-like object, its
        repr; for a file made by :meth:`in_memory`, a name of its own)."""
        return self._filename

    @property
    def driver(self):
        """The driver the file was opened with, named as h5py names it:
        ``"sec2"`` for a file on disk opened without one, ``"core"``,
        ``"fileobj"``, or arca's ``"memory"``."""
        return self._driver

    @property
    def mode(self):
        """``"r"`` for a read-only file, ``"r+"`` otherwise (as h5py reports)."""
        return "r+" if self._native.writable else "r"

    @property
    def libver(self):
        """The ``libver`` bounds given at open, as ``(low, high)``; they
        have no effect on arca's format."""
        return self._libver

    @property
    def userblock_size(self):
        """Bytes at the start of the file that belong to the user (0 for none)."""
        return self._userblock_size

    @property
    def meta_block_size(self):
        """The ``meta_block_size`` given at open (h5py's default, 2048, if
        none); it has no effect on arca's format."""
        return self._meta_block_size

    @property
    def swmr_mode(self):
        """Whether the file was opened with ``swmr=True`` (read-only) or
        switched to SWMR writing. arca readers always see whole commits,
        so this changes nothing in how the file is written or read."""
        return self._swmr

    @swmr_mode.setter
    def swmr_mode(self, value):
        if not value:
            raise ValueError("It is not possible to forcibly switch SWMR mode off.")
        if not self._native.writable:
            raise RuntimeError("Unable to start swmr writing (no write intent on file)")
        self._swmr = True

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


class _Settings:
    """h5py's File keywords, checked as h5py checks them (same error
    types), and what arca takes from them."""

    def __init__(self, driver, libver, rdcc_nslots, rdcc_nbytes, rdcc_w0, locking,
                 page_buf_size, min_meta_keep, min_raw_keep, alignment_threshold,
                 alignment_interval, meta_block_size, track_times, fs_strategy, fs_persist,
                 fs_threshold, fs_page_size, mode, kwds):
        self.libver = _libver_bounds(libver)
        for v in (alignment_threshold, alignment_interval):
            if int(v) < 0:
                raise OverflowError("can't convert negative value to hsize_t")
        if int(alignment_interval) == 0:
            raise ValueError("Alignment must be positive")
        if rdcc_w0 is not None and not 0.0 <= float(rdcc_w0) <= 1.0:
            raise ValueError("Raw data cache w0 value must be between 0.0 and 1.0 inclusive")
        for v in (rdcc_nslots, rdcc_nbytes):
            if v is not None and not isinstance(v, int):
                raise TypeError("an integer is required")
        if rdcc_nbytes is not None and rdcc_nbytes < 0:
            raise OverflowError("can't convert negative value to size_t")
        self.chunk_cache = rdcc_nbytes
        if page_buf_size:
            int(page_buf_size), int(min_meta_keep), int(min_raw_keep)
        self.meta_block_size = (_META_BLOCK_SIZE if meta_block_size is None
                                else int(meta_block_size))
        _locking(locking)
        self.driver_name = self._driver(driver, kwds)
        if track_times not in (None, True, False):
            raise TypeError("track_times must be either True or False")
        if fs_strategy and fs_strategy not in _FS_STRATEGIES:
            raise ValueError("Invalid file space strategy type")
        int(fs_threshold), bool(fs_persist)
        if fs_page_size is not None:
            int(fs_page_size)
        # As HDF5: a page buffer needs a file made with paged space (told
        # once the file could be created at all; see File.__init__).
        self.page_buffer_refused = bool(page_buf_size) and mode in _CREATING \
            and fs_strategy != "page"

    @staticmethod
    def _driver(driver, kwds):
        """h5py's name for ``driver``, after checking its keywords."""
        if driver is None:
            if kwds:
                raise TypeError(f"'{next(iter(kwds))}' is an invalid keyword argument "
                                "for this function")
            return "sec2"
        if driver in _UNSUPPORTED_DRIVERS:
            raise ValueError(f"driver {driver!r} is not supported: "
                             f"{_UNSUPPORTED_DRIVERS[driver]}")
        if driver == "core":
            allowed = _CORE_KEYWORDS
        elif driver in _DISK_DRIVERS:
            allowed = _DISK_DRIVERS[driver]
        elif driver in ("fileobj", "memory"):
            allowed = ()
        else:
            raise ValueError(f"Unknown driver type {driver!r}")
        for k in kwds:
            if k not in allowed:
                raise TypeError(f"driver {driver!r} got an unexpected keyword argument {k!r}")
        return driver


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


def _external_file(main, native):
    """The File an object reached through an external link of ``main``
    lies in: one per path while it is open, read-only (the core opens such
    files as snapshots), sharing ``main``'s settings. Closing it leaves the
    file open for ``main``'s links."""
    key = native.path
    f = main._externals.get(key)
    if f is not None and f:
        return f
    f = File.__new__(File)
    f._native = native
    f._filename = os.fspath(key) if key is not None else repr(native)
    f._backing = None
    f._reopen_args = None
    f._swmr = main._swmr if main.mode == "r" else False
    f._userblock_size = 0
    f._externals = {}
    f._libver = main._libver
    f._meta_block_size = main._meta_block_size
    f._driver = "sec2"
    Group.__init__(f, f, native.root())
    main._externals[key] = f
    return f


register("file", File)
register("external_file", _external_file)
