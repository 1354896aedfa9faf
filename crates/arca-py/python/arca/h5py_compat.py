"""Run code written for h5py, and libraries built on it, on arca files.

:func:`install` makes ``import h5py`` give arca (with ``h5py.version``,
``h5py.h5ds`` and ``h5py.h5p`` as arca's :mod:`arca.version`,
:mod:`arca.h5ds` and :mod:`arca.h5p`); call it before the code or library
imports h5py::

    import arca.h5py_compat
    arca.h5py_compat.install()

    import anndata                      # anndata's `import h5py` is arca
    adata.write_h5ad("cells.arca")
    back = anndata.read_h5ad("cells.arca", backed="r")

    import h5netcdf, xarray             # the same for h5netcdf
    xarray.open_dataset("run.arca", engine="h5netcdf")

:func:`uninstall` puts back whatever ``h5py`` was before (the real one,
if it was imported).

Limits, which hold for any code run this way:

* The files are arca files, not HDF5 files; ``arca import`` and ``arca
  export`` (:mod:`arca.interop`) convert between the two.
* The stand-in is arca's high-level API (``File``, ``Group``, ``Dataset``,
  attributes, dimension scales, references, the dtype helpers) and the
  low-level calls libraries make: ``attrs.get_id(name)`` (its ``dtype``
  and ``shape``), ``h5py.h5ds``, ``h5py.version``, ``File.in_memory``,
  ``group.id.get_create_plist()`` with ``h5py.h5p``'s creation-order
  flags. libhdf5's other low-level modules (``h5t``, ``h5s``, ``h5d``,
  ``h5a``, ``h5f``, ``h5g``, ``h5l``, ``h5o``, ``h5r``, ``h5z``) and
  h5py's private ``h5py._hl`` are not there: code that calls them fails
  with ImportError or AttributeError.
* ``h5py`` is arca's namespace (``h5py.File is arca.File``) under the
  name ``"arca"``: libraries that take a path of their own for h5py by
  name (as h5netcdf does, reaching into libhdf5 there) take their generic
  path instead. ``h5py.__version__`` is the h5py release whose API arca
  follows (``arca.version.h5py_version``), so version checks pass as they
  would on that h5py (h5netcdf keeps ``track_order`` on).
* Putting arca itself in ``sys.modules["h5py"]`` is enough for libraries
  that need none of the above (anndata); h5netcdf needs :func:`install`.
* While installed, arca's ``File``, ``Group``, ``Dataset`` (and
  ``Datatype``, ``AttributeManager``) report h5py's module names
  (``h5py._hl.files``, ``h5py._hl.group``, ...) as their ``__module__``:
  libraries tell h5py's objects from other packages' that way (h5netcdf
  does). Those modules themselves are not provided, so ``from
  h5py._hl.dataset import ...`` fails with ImportError.
* Objects behind external links are opened read-only.
* Only imports made after :func:`install` see arca; a module that already
  holds the real h5py keeps it. ``install()`` refuses (RuntimeError) when
  the real h5py is already imported, unless ``force=True``.
"""

import sys
import types

import arca


class _H5py(types.ModuleType):
    """What ``import h5py`` gives once installed: arca's namespace, with
    ``__version__`` the h5py release whose API arca follows."""

    def __getattr__(self, name):
        return getattr(arca, name)

    def __dir__(self):
        return dir(arca)


_h5py = _H5py("arca", arca.__doc__)
_h5py.__version__ = arca.version.h5py_version

# The names install() sets in sys.modules, and what each becomes.
_MODULES = {
    "h5py": _h5py,
    "h5py.version": arca.version,
    "h5py.h5ds": arca.h5ds,
    "h5py.h5p": arca.h5p,
}

# Where h5py defines the classes arca stands in for: libraries tell h5py's
# objects from other packages' by the module their class names (h5netcdf
# does), so while installed arca's classes name these.
_CLASS_MODULES = {
    "File": "h5py._hl.files",
    "Group": "h5py._hl.group",
    "Dataset": "h5py._hl.dataset",
    "Datatype": "h5py._hl.datatype",
    "AttributeManager": "h5py._hl.attrs",
}

# What the names held before install(), for uninstall().
_saved = {}
_saved_class_modules = {}


def _classes():
    """``(class, h5py module name)`` of every class install() renames:
    those of _CLASS_MODULES, and any subclass of Dataset as Dataset."""
    named = {getattr(arca, n, None): m for n, m in _CLASS_MODULES.items()}
    named.pop(None, None)
    out = dict(named)
    todo = list(arca.Dataset.__subclasses__())
    while todo:
        sub = todo.pop()
        out.setdefault(sub, _CLASS_MODULES["Dataset"])
        todo.extend(sub.__subclasses__())
    return list(out.items())


def install(force=False):
    """Make ``import h5py`` (and ``h5py.version``, ``h5py.h5ds``,
    ``h5py.h5p``) give arca, and return the module ``h5py`` now names.
    Calling it again does nothing. RuntimeError if the real h5py is
    imported already (modules holding it would keep it), unless
    ``force``."""
    current = sys.modules.get("h5py")
    if current is _h5py:
        return _h5py
    if current is not None and current is not arca and not force:
        raise RuntimeError(
            "h5py is imported already, so modules that hold it would keep it: call "
            "arca.h5py_compat.install() before importing h5py or a library that uses it "
            "(or pass force=True)")
    for name, module in _MODULES.items():
        _saved[name] = sys.modules.get(name)
        sys.modules[name] = module
    for cls, module in _classes():
        _saved_class_modules[cls] = cls.__module__
        cls.__module__ = module
    return _h5py


def uninstall():
    """Undo :func:`install`: ``import h5py`` gives what it gave before."""
    if sys.modules.get("h5py") is not _h5py:
        return
    for name in _MODULES:
        before = _saved.pop(name, None)
        if before is None:
            sys.modules.pop(name, None)
        else:
            sys.modules[name] = before
    for cls, module in _saved_class_modules.items():
        cls.__module__ = module
    _saved_class_modules.clear()


def installed():
    """Whether ``import h5py`` gives arca now."""
    return sys.modules.get("h5py") is _h5py
