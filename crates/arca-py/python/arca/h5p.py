"""The constants of h5py's ``h5p`` that code reading creation-order flags
compares with (h5netcdf does, through ``group.id.get_create_plist()``)::

    plist = f["g"].id.get_create_plist()
    tracked = plist.get_link_creation_order() & arca.h5p.CRT_ORDER_TRACKED

Only these: arca has no property lists of its own; its settings are
keywords of the calls that create things.
"""

# HDF5's H5P_CRT_ORDER_* flags: creation order is kept, and indexed.
CRT_ORDER_TRACKED = 0x0001
CRT_ORDER_INDEXED = 0x0002
