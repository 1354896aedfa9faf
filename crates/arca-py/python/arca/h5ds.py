"""h5py's ``h5ds`` calls over arca's dimension scales (see ``Dataset.dims``
for the high-level way), for code written against h5py's low-level
module, such as h5netcdf. Each takes what h5py's takes, a dataset's ``.id``
(arca's native handle), and accepts the Dataset itself too; names and
labels come back as bytes, as in h5py::

    import arca, arca.h5ds as h5ds
    f["x"] = np.arange(4.0)
    f["t"] = np.zeros((4, 2))
    h5ds.set_scale(f["x"].id, b"x")
    h5ds.attach_scale(f["t"].id, f["x"].id, 0)
    h5ds.is_scale(f["x"].id)              # True
    h5ds.get_num_scales(f["t"].id, 0)     # 1
    h5ds.set_label(f["t"].id, 1, b"col")

The scales themselves are HDF5's attribute conventions (``CLASS``,
``NAME``, ``DIMENSION_LIST``, ``REFERENCE_LIST``, ``DIMENSION_LABELS``),
so files keep their meaning when exported.
"""

from . import _dims


def is_scale(dsid):
    """Whether the dataset is a dimension scale."""
    return _dims.is_scale(dsid)


def set_scale(dsid, dimname=b""):
    """Make the dataset a dimension scale named ``dimname`` (bytes or str).
    RuntimeError if it has scales of its own attached."""
    _dims.make_scale(dsid, dimname)


def get_scale_name(dsid):
    """The scale's name, as bytes (``b""`` if it has none)."""
    return _dims.scale_name(dsid).encode("utf-8", "surrogateescape")


def attach_scale(dsid, dscale_id, idx):
    """Attach the scale ``dscale_id`` to dimension ``idx`` of ``dsid``."""
    _dims.attach(dsid, dscale_id, int(idx))


def detach_scale(dsid, dscale_id, idx):
    """Detach the scale from dimension ``idx``; RuntimeError if it is not
    attached there."""
    _dims.detach(dsid, dscale_id, int(idx))


def is_attached(dsid, dscale_id, idx):
    """Whether ``dscale_id`` is attached to dimension ``idx`` of ``dsid``."""
    lists = _dims.dim_lists(dsid)
    idx = int(idx)
    if not 0 <= idx < len(lists):
        raise ValueError(f"dimension {idx} is out of range")
    return _dims.handle(dscale_id).id in lists[idx]


def get_num_scales(dsid, idx):
    """How many scales are attached to dimension ``idx``."""
    lists = _dims.dim_lists(dsid)
    idx = int(idx)
    if not 0 <= idx < len(lists):
        raise ValueError(f"dimension {idx} is out of range")
    return len(lists[idx])


def set_label(dsid, idx, label):
    """Label dimension ``idx`` (bytes or str)."""
    _dims.set_label(dsid, int(idx), label)


def get_label(dsid, idx):
    """Dimension ``idx``'s label, as bytes (``b""`` if it has none)."""
    idx = int(idx)
    labels = _dims.labels(dsid)
    if not 0 <= idx < len(labels):
        raise ValueError(f"dimension {idx} is out of range")
    return labels[idx].encode("utf-8", "surrogateescape")


def iterate(dsid, idx, func, startidx=0):
    """Call ``func(scale_id)`` for the scales of dimension ``idx`` from
    ``startidx`` on, in attachment order, until it returns something other
    than None, and return that (None if it never does). As in h5py, a
    dimension without scales is a RuntimeError."""
    scales = _dims.scale_handles(dsid, int(idx))
    if not scales:
        raise RuntimeError(f"dimension {idx} has no scales to iterate over")
    for s in scales[int(startidx):]:
        r = func(s)
        if r is not None:
            return r
    return None
