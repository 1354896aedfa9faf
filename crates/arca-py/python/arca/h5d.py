"""HDF5's dataset constants as h5py's ``h5py.h5d`` module names them, the
values :meth:`ObjectID.get_create_plist` answers with for a dataset::

    plist = f["x"].id.get_create_plist()
    plist.get_fill_time() == arca.h5d.FILL_TIME_IFSET      # the default
    plist.get_layout() == arca.h5d.CHUNKED
    plist.fill_value_defined() == arca.h5d.FILL_VALUE_USER_DEFINED

Only the constants: arca has no low-level dataset calls (``h5d.create``,
``h5d.open``); datasets are made and opened through groups.
"""

# H5D_layout_t: where the elements are (external storage is contiguous).
COMPACT = 0
CONTIGUOUS = 1
CHUNKED = 2
VIRTUAL = 3

# H5D_alloc_time_t: when HDF5 allocates storage.
ALLOC_TIME_DEFAULT = 0
ALLOC_TIME_EARLY = 1
ALLOC_TIME_LATE = 2
ALLOC_TIME_INCR = 3

# H5D_space_status_t: how much of the storage is allocated.
SPACE_STATUS_NOT_ALLOCATED = 0
SPACE_STATUS_PART_ALLOCATED = 1
SPACE_STATUS_ALLOCATED = 2

# H5D_fill_time_t: when the fill value is written (arca never writes it
# into storage: "never" leaves unwritten elements reading as zeros).
FILL_TIME_ALLOC = 0
FILL_TIME_NEVER = 1
FILL_TIME_IFSET = 2

# H5D_fill_value_t: whether a fill value was given.
FILL_VALUE_UNDEFINED = 0
FILL_VALUE_DEFAULT = 1
FILL_VALUE_USER_DEFINED = 2

# H5D_vds_view_t: how a virtual dataset with unlimited mappings is sized.
VDS_FIRST_MISSING = 0
VDS_LAST_AVAILABLE = 1

# What each arca name maps to, for the creation settings' answers.
FILL_TIMES = {"alloc": FILL_TIME_ALLOC, "never": FILL_TIME_NEVER, "ifset": FILL_TIME_IFSET}
LAYOUTS = {"compact": COMPACT, "contiguous": CONTIGUOUS, "chunked": CHUNKED,
           "virtual": VIRTUAL, "external": CONTIGUOUS}


def __getattr__(name):
    raise AttributeError(f"arca.h5d has HDF5's dataset constants only, not h5d.{name}: "
                         "arca has no low-level dataset calls (make and open datasets "
                         "through a group)")
