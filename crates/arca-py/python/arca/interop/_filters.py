"""HDF5 filter pipelines as arca's creation keywords, and their names."""

# Filters arca shares with HDF5: the id, arca's name.
SHUFFLE, DEFLATE, FLETCHER32, ZSTD, LZ4 = 2, 1, 3, 32015, 32004


def filter_name(f):
    """How the report names a filter of a pipeline as h5py's ``get_filter``
    lists it."""
    code, _, values, name = f
    return {SHUFFLE: "shuffle", DEFLATE: "gzip", FLETCHER32: "fletcher32",
            ZSTD: "zstd", LZ4: "lz4", 32000: "lzf", 32001: "blosc", 32008: "bitshuffle",
            6: "scaleoffset", 5: "nbit", 4: "szip"}.get(code, f"{name.decode(errors='replace')} ({code})")


# HDF5 filters arca codes whatever the bytes (not szip, n-bit or
# scale-offset, which read the element type): deflate, shuffle, fletcher32,
# lzf, blosc, lz4, bitshuffle, zstd, blosc2.
ANY_BYTES = (1, 2, 3, 32000, 32001, 32004, 32008, 32015, 32026)


def codes_any_bytes(filters):
    """Whether every filter of an HDF5 pipeline (as h5py's ``get_filter``
    lists them) is one arca codes over any bytes."""
    return bool(filters) and all(f[0] in ANY_BYTES for f in filters)


def arca_pipeline(filters):
    """arca's creation keywords for an HDF5 pipeline, and whether chunks
    stored by it are arca chunks byte for byte (so they can be copied)."""
    out, exact, compressors = {}, True, 0
    for i, (code, _, values, _) in enumerate(filters):
        if code == SHUFFLE and i == 0:
            out["shuffle"] = True
        elif code == DEFLATE:
            out["compression"], out["level"] = "gzip", int(values[0]) if values else 4
            compressors += 1
        elif code == ZSTD:
            out["compression"], out["level"] = "zstd", int(values[0]) if values else 3
            compressors += 1
        elif code == LZ4 and (not values or values[0] == 0):
            out["compression"], out["level"] = "lz4", None
            compressors += 1
        else:
            exact = False
            if code in (32000, 32001, 32008, 4, 5, 6, LZ4) and "compression" not in out:
                out["compression"], out["level"] = "zstd", 3
    if compressors > 1 or (compressors == 1 and filters and filters[-1][0] not in (DEFLATE, ZSTD, LZ4)):
        exact = False
    return out, exact
