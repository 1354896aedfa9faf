"""HDF5 and netCDF4 files in and out: :func:`import_hdf5` and
:func:`export_hdf5` (``arca import`` and ``arca export`` on the command line).

The HDF5 side is the HDF5 library itself, through h5py (and hdf5plugin for
the filters HDF5 loads as plugins). Groups, datasets, attributes, links of
every kind, second names, creation-order flags, fill values, layouts, chunk
shapes, maxshapes and dimension scales (HDF5's attribute conventions, with
their references pointed at the copies) map one to one, and so does every
type arca holds, string character sets and padding included.

Chunks are copied as stored, never decompressed and recompressed, when
their filters are ones arca shares with HDF5: shuffle, deflate (gzip),
zstd (id 32015) and lz4 (id 32004, whose framing is rewritten around the
same compressed bytes). A dataset with any other filter (fletcher32, lzf,
blosc, bitshuffle, scale-offset, szip, ...) keeps HDF5's pipeline itself:
the filter ids, flags and values as recorded and every chunk exactly as
stored, with its filter mask, exported back unchanged. arca reads such
chunks where it has the codecs (every filter above; not bzip2, SZ, ZFP and
other plugins) and otherwise fails naming the filter. Variable-length
values keep such a pipeline where its filters code any bytes (blosc, lzf,
bitshuffle, blosc2, fletcher32, ...): arca compresses its own records with
it. Only a dataset whose elements must be rewritten (variable-length
values under other filters, object references) goes by value with the
nearest arca pipeline, and the report says so; ``strict=True`` refuses the file instead. Committed datatypes, region
references and virtual datasets (their mappings, sources named as they
were) map both ways. Whatever does not map at all is reported by path,
never dropped silently.

Both calls write to a temporary file beside the destination and rename it
into place only when everything is done: a failure leaves no partial file.

    report = arca.interop.import_hdf5("run.h5", "run.arca")
    for path, note in report:
        print(path, note)
    arca.interop.export_hdf5("run.arca", "back.h5")

``python -m arca.interop import|export SRC DST [--strict] [--force]`` is the
command ``arca import``/``arca export`` run.

The modules, by job: ``_types`` (HDF5 types to dtypes and back, references
rewritten between files), ``_filters`` (HDF5 pipelines as arca's),
``_lz4`` (the lz4 chunk framing), ``_common`` (errors, report, temporary
files, boxes moved by value), ``_importer``, ``_exporter`` and ``_cli``
(with ``__main__``).
"""

from ._cli import main
from ._common import ConversionError, Report
from ._exporter import export_hdf5
from ._importer import import_hdf5

__all__ = ["ConversionError", "Report", "export_hdf5", "import_hdf5", "main"]
