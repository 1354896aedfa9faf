#!/usr/bin/env python3
"""Reading from object storage, side by side: arca, zarr v3, h5py over
fsspec and kerchunk, all on one S3 server in one run.

The server is moto's (``ThreadedMotoServer``), started here on 127.0.0.1;
a WSGI wrapper in front of it counts every request by object and waits a
fixed latency (``--latency-ms``, default 20) before answering, as a
distant store would. Every library reads the same float32 array (256 MiB,
``--quick``: 32 MiB) in chunks of 1 MiB, compressed with byte shuffle +
zstd level 3:

* ``arca``     - one arca file, read through arca's object-store driver
  (``arca.File("s3://...", storage_options=...)``);
* ``zarr``     - a zarr v3 array with consolidated metadata, one object a
  chunk, through ``zarr.storage.ObjectStore`` over obstore's S3 store;
* ``h5py``     - a "cloud-optimised" HDF5 file (paged aggregation, 4 MiB
  pages, metadata first), read by h5py from an fsspec file (HTTP
  filesystem, read-ahead blocks of 4 MiB) with a 16 MiB page buffer;
* ``kerchunk`` - kerchunk's references to that HDF5 file, read by zarr
  through fsspec's reference filesystem (the references are an object
  beside the file, ``h.json``, fetched by each open).

Cases, each from a fresh open (nothing cached between repeats):

* ``open``  - open, read the dataset's shape, dtype and attributes;
* ``chunk`` - open and read the first chunk;
* ``slice`` - open and read 32 neighbouring chunks from the middle (a
  quarter of the chunks, if fewer);
* ``all``   - open and read the whole array.

Each line gives the median wall time over ``--repeat`` runs, the requests
the server saw for one run, and the time relative to arca's. The ideal is
latency x round trips (one for the open, one for the data) + bytes /
bandwidth, the bandwidth measured by one GET of the whole arca object
(latency taken off). For the whole read, the floor is what this server and
machine allow: one round trip + the larger of the object fetched in 8 MiB
parts, 16 in flight, nothing decoded, and arca's read of a local copy (the
decoding). A second floor runs those two at the same time, in two threads
of one process, as arca's whole read must overlap them (on a machine of
few cores, with the server's own work competing for them): one round trip
+ the wall time of both together. Results are compared with the source
array outside the timed region.

Usage::

    python bench/cloud/cloud_bench.py --quick
    python bench/cloud/cloud_bench.py --json out.json --latency-ms 20 --repeat 5

(obstore, kerchunk and aiohttp come from ``make bench-cloud-deps``.)
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import shutil
import statistics
import sys
import tempfile
import threading
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "crates", "arca-py",
                                "python"))

import arca  # noqa: E402

BUCKET = "bench"
CHUNK = 1 << 18  # float32 elements: 1 MiB
SLICE_CHUNKS = 32
ZSTD_LEVEL = 3
LIBS = ("arca", "zarr", "h5py", "kerchunk")
CASES = ("open", "chunk", "slice", "all")
CREDS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing",
         "aws_region": "us-east-1"}


def make_data(n: int, seed: int = 31) -> np.ndarray:
    """A sensor-like float32 signal quantised to 2**-8: shuffle + zstd
    compresses it about 2-3x, as real measurements do."""
    rng = np.random.default_rng(seed)
    t = np.arange(n, dtype=np.float64)
    v = 1000.0 * np.sin(t * (2 * np.pi / 65536.0)) + rng.normal(0.0, 2.0, n)
    return (np.rint(v * 256.0) / 256.0).astype("<f4")


class Tally:
    """WSGI middleware: waits ``latency`` seconds before each answer and
    counts requests per path.

    GETs of the objects in ``objects`` (path -> (bytes, headers)) are
    answered here, ranges and ``If-Match`` as S3 answers them: moto reads
    a whole object for every ranged GET, which for objects of a hundred
    megabytes would cost more than the latency and measure moto, not the
    readers. Everything else (HEAD, PUT, lists, the zarr chunk objects)
    goes to moto."""

    def __init__(self, app, latency: float):
        self.app, self.latency = app, latency
        self.counts: dict[str, int] = {}
        self.objects: dict[str, tuple[bytes, dict]] = {}
        self.lock = threading.Lock()

    def __call__(self, environ, start_response):
        path = environ.get("PATH_INFO", "")
        with self.lock:
            self.counts[path] = self.counts.get(path, 0) + 1
        if self.latency:
            time.sleep(self.latency)
        obj = self.objects.get(path) if environ["REQUEST_METHOD"] == "GET" else None
        if obj is None:
            return self.app(environ, start_response)
        data, headers = obj
        match = environ.get("HTTP_IF_MATCH")
        if match and match.strip() not in (headers["ETag"], "*"):
            start_response("412 Precondition Failed", [("Content-Length", "0")])
            return [b""]
        rng = environ.get("HTTP_RANGE", "")
        if not rng.startswith("bytes="):
            start_response("200 OK", [*headers.items(), ("Content-Length", str(len(data)))])
            return [data]
        a, _, b = rng[6:].partition("-")
        if a == "":
            a, b = max(0, len(data) - int(b)), len(data) - 1
        else:
            a, b = int(a), min(int(b), len(data) - 1) if b else len(data) - 1
        if a >= len(data):
            start_response("416 Range Not Satisfiable",
                           [("Content-Range", f"bytes */{len(data)}"), ("Content-Length", "0")])
            return [b""]
        start_response("206 Partial Content", [
            *headers.items(), ("Content-Range", f"bytes {a}-{b}/{len(data)}"),
            ("Content-Length", str(b - a + 1))])
        return [data[a:b + 1]]

    def total(self, prefix: str) -> int:
        with self.lock:
            return sum(n for p, n in self.counts.items() if p.startswith(prefix))


class Server:
    """moto's S3 server on 127.0.0.1 behind a :class:`Tally`."""

    def __init__(self, latency: float):
        import boto3
        import moto.server as moto_server
        self.moto = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0,
                                                   verbose=False)
        self.moto.start()
        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        self.tally = Tally(self.moto._server.app, 0.0)
        self.moto._server.app = self.tally
        host, port = self.moto.get_host_and_port()
        self.endpoint = f"http://{host}:{port}"
        self.client = boto3.client("s3", endpoint_url=self.endpoint, **{
            "region_name": "us-east-1", "aws_access_key_id": "testing",
            "aws_secret_access_key": "testing"})
        self.client.create_bucket(Bucket=BUCKET)
        self.latency = latency

    def start_latency(self):
        self.tally.latency = self.latency

    def put_file(self, key: str, path: str):
        # Readable without signing: fsspec's HTTP filesystem reads it.
        self.client.upload_file(path, BUCKET, key, ExtraArgs={"ACL": "public-read"})
        h = self.client.head_object(Bucket=BUCKET, Key=key)["ResponseMetadata"]["HTTPHeaders"]
        keep = {"ETag": h["etag"], "Last-Modified": h["last-modified"],
                "Content-Type": h.get("content-type", "binary/octet-stream"),
                "Accept-Ranges": "bytes"}
        with open(path, "rb") as fh:
            self.tally.objects[f"/{BUCKET}/{key}"] = (fh.read(), keep)

    def http(self, key: str) -> str:
        # The HTTP view of a public-read object (path-style, unsigned).
        return f"{self.endpoint}/{BUCKET}/{key}"

    def stop(self):
        self.moto.stop()


# --------------------------------------------------------------------------
# Writing the peers' copies (not timed)
# --------------------------------------------------------------------------


def write_arca(path: str, data: np.ndarray):
    with arca.File(path, "w") as f:
        d = f.create_dataset("data", data=data, chunks=(CHUNK,), compression="zstd",
                             compression_opts=ZSTD_LEVEL, shuffle=True)
        d.attrs["units"] = "mV"


def write_hdf5(path: str, data: np.ndarray):
    import h5py
    import hdf5plugin
    with h5py.File(path, "w", libver="latest", fs_strategy="page", fs_persist=True,
                   fs_page_size=4 << 20) as f:
        d = f.create_dataset("data", data=data, chunks=(CHUNK,), shuffle=True,
                             **hdf5plugin.Zstd(clevel=ZSTD_LEVEL))
        d.attrs["units"] = "mV"


def obstore_s3(srv: Server, prefix: str):
    from obstore.store import S3Store
    return S3Store(BUCKET, prefix=prefix, endpoint=srv.endpoint, allow_http=True,
                   virtual_hosted_style_request=False, **CREDS)


def write_zarr(srv: Server, data: np.ndarray):
    import zarr
    from zarr.codecs import BytesCodec, ZstdCodec
    from zarr.codecs.numcodecs import Shuffle
    store = zarr.storage.ObjectStore(obstore_s3(srv, "z.zarr"))
    root = zarr.open_group(store=store, mode="w", zarr_format=3)
    a = root.create_array("data", shape=data.shape, dtype=data.dtype, chunks=(CHUNK,),
                          serializer=BytesCodec(),
                          compressors=[Shuffle(elementsize=4), ZstdCodec(level=ZSTD_LEVEL)])
    a[...] = data
    a.attrs["units"] = "mV"
    zarr.consolidate_metadata(store)


def write_kerchunk(srv: Server):
    """kerchunk's references to the HDF5 file, stored beside it as
    ``h.json`` (the sidecar a reader fetches first)."""
    import fsspec
    from kerchunk.hdf import SingleHdf5ToZarr
    url = srv.http("h.h5")
    with fsspec.filesystem("http", skip_instance_cache=True).open(url, "rb") as fo:
        refs = SingleHdf5ToZarr(fo, url, inline_threshold=0).translate()
    srv.client.put_object(Bucket=BUCKET, Key="h.json", Body=json.dumps(refs).encode(),
                          ACL="public-read")


# --------------------------------------------------------------------------
# Reading (timed)
# --------------------------------------------------------------------------


def selection(case: str, n: int):
    if case == "chunk":
        return slice(0, CHUNK)
    if case == "slice":
        chunks = n // CHUNK
        k = max(1, min(SLICE_CHUNKS, chunks // 4))
        mid = (chunks // 2) * CHUNK
        return slice(mid, min(n, mid + k * CHUNK))
    return slice(0, n)


def read_arca(srv: Server, case: str, n: int, stats: dict):
    opts = {**CREDS, "aws_endpoint": srv.endpoint, "aws_allow_http": True}
    with arca.File(f"s3://{BUCKET}/a.arca", "r", storage_options=opts) as f:
        d = f["data"]
        meta = (d.shape, d.dtype, dict(d.attrs))
        out = meta if case == "open" else d[selection(case, n)]
        stats.update(f.io_stats())
    return out


def read_zarr(srv: Server, case: str, n: int, stats: dict):
    import zarr
    store = zarr.storage.ObjectStore(obstore_s3(srv, "z.zarr"), read_only=True)
    a = zarr.open_group(store=store, mode="r", use_consolidated=True)["data"]
    meta = (a.shape, a.dtype, dict(a.attrs))
    return meta if case == "open" else a[selection(case, n)]


def read_h5py(srv: Server, case: str, n: int, stats: dict):
    import fsspec
    import h5py
    import hdf5plugin  # noqa: F401  (the zstd filter)
    fs = fsspec.filesystem("http", skip_instance_cache=True)
    with fs.open(srv.http("h.h5"), "rb", block_size=4 << 20, cache_type="readahead") as fo:
        with h5py.File(fo, "r", page_buf_size=16 << 20) as f:
            d = f["data"]
            meta = (d.shape, d.dtype, dict(d.attrs))
            return meta if case == "open" else d[selection(case, n)]


def read_kerchunk(srv: Server, case: str, n: int, stats: dict):
    import fsspec
    import zarr
    from zarr.storage import FsspecStore
    fs = fsspec.filesystem("reference", fo=srv.http("h.json"), remote_protocol="http", asynchronous=True,
                           remote_options={"asynchronous": True},
                           skip_instance_cache=True)
    store = FsspecStore(fs, read_only=True, path="")
    a = zarr.open_array(store=store, mode="r", path="data", zarr_format=2)
    meta = (a.shape, a.dtype, dict(a.attrs))
    return meta if case == "open" else a[selection(case, n)]


def bandwidth(srv: Server, key: str) -> float:
    """Bytes a second of one GET of the whole object, latency taken off."""
    t = time.perf_counter()
    size = len(srv.client.get_object(Bucket=BUCKET, Key=key)["Body"].read())
    return size / max(time.perf_counter() - t - srv.latency, 1e-6)


def fetch_floor(srv: Server, key: str, size: int, part: int = 8 << 20,
                in_flight: int = 16) -> float:
    """Seconds to fetch ``size`` bytes of ``key`` as ranged GETs of ``part``
    bytes, ``in_flight`` at a time, with nothing decoded: what this server
    allows a whole read, which ``bytes / bandwidth`` of one GET may
    overstate when the server serves requests one at a time."""
    import asyncio

    import obstore
    store = obstore_s3(srv, "")
    starts = list(range(0, size, part))

    async def run():
        sem = asyncio.Semaphore(in_flight)

        async def one(s):
            async with sem:
                return len(await obstore.get_range_async(store, key, start=s,
                                                         end=min(size, s + part)))
        return sum(await asyncio.gather(*(one(s) for s in starts)))

    t = time.perf_counter()
    got = asyncio.run(run())
    assert got == size, (got, size)
    return time.perf_counter() - t


def decode_floor(path: str, repeat: int) -> float:
    """Median seconds arca takes to read the whole dataset from a local
    file already in the page cache: the decoding a whole read must do."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        with arca.File(path, "r") as f:
            f["data"][...]
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def together_floor(srv: Server, key: str, size: int, path: str) -> tuple:
    """Wall seconds of the fetch floor and the decode of a local copy run
    at the same time, in two threads of this process, with each one's own
    seconds: what overlapping them costs on this machine."""
    out: dict = {}
    go = threading.Barrier(2)

    def fetch():
        go.wait()
        out["fetch"] = fetch_floor(srv, key, size)

    def decode():
        go.wait()
        out["decode"] = decode_floor(path, 1)

    threads = [threading.Thread(target=fetch), threading.Thread(target=decode)]
    t = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return time.perf_counter() - t, out["fetch"], out["decode"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="32 MiB, 3 repeats")
    ap.add_argument("--mib", type=int, help="data size in MiB (default 256, quick 32)")
    ap.add_argument("--repeat", type=int, help="runs per case (default 5, quick 3)")
    ap.add_argument("--latency-ms", type=float, default=20.0, help="added to every request")
    ap.add_argument("--libs", default=",".join(LIBS), help="comma-separated subset")
    ap.add_argument("--json", metavar="FILE", help="write the figures here")
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore", module="zarr")
    warnings.filterwarnings("ignore", category=UserWarning)
    mib = args.mib or (32 if args.quick else 256)
    repeat = args.repeat or (3 if args.quick else 5)
    libs = [x for x in args.libs.split(",") if x]
    n = mib * (1 << 20) // 4
    data = make_data(n)
    srv = Server(args.latency_ms / 1000.0)
    tmp = tempfile.mkdtemp(prefix="cloud-bench-")
    results: dict = {}
    try:
        write_arca(os.path.join(tmp, "a.arca"), data)
        srv.put_file("a.arca", os.path.join(tmp, "a.arca"))
        sizes = {"arca": os.path.getsize(os.path.join(tmp, "a.arca"))}
        if {"h5py", "kerchunk"} & set(libs):
            write_hdf5(os.path.join(tmp, "h.h5"), data)
            srv.put_file("h.h5", os.path.join(tmp, "h.h5"))
            sizes["h5py"] = os.path.getsize(os.path.join(tmp, "h.h5"))
        if "zarr" in libs:
            write_zarr(srv, data)
        if "kerchunk" in libs:
            write_kerchunk(srv)
        decode_s = decode_floor(os.path.join(tmp, "a.arca"), repeat)
        srv.start_latency()
        bw = bandwidth(srv, "a.arca")
        fetch_s = statistics.median(fetch_floor(srv, "a.arca", sizes["arca"])
                                    for _ in range(repeat))
        runs = [together_floor(srv, "a.arca", sizes["arca"], os.path.join(tmp, "a.arca"))
                for _ in range(repeat)]
        together_s = statistics.median(r[0] for r in runs)
        together_fetch_s = statistics.median(r[1] for r in runs)
        together_decode_s = statistics.median(r[2] for r in runs)
        shutil.rmtree(tmp)
        readers = {
            "arca": (read_arca, f"/{BUCKET}/a.arca"),
            "zarr": (read_zarr, f"/{BUCKET}/z.zarr"),
            "h5py": (read_h5py, f"/{BUCKET}/h.h5"),
            "kerchunk": (read_kerchunk, f"/{BUCKET}/h."),
        }
        for case in CASES:
            want = None if case == "open" else data[selection(case, n)]
            for lib in libs:
                fn, prefix = readers[lib]
                times, reqs, stats = [], [], {}
                for _ in range(repeat):
                    before = srv.tally.total(prefix)
                    t = time.perf_counter()
                    got = fn(srv, case, n, stats)
                    times.append(time.perf_counter() - t)
                    reqs.append(srv.tally.total(prefix) - before)
                    if want is not None:
                        np.testing.assert_array_equal(np.asarray(got), want)
                    else:
                        assert tuple(got[0]) == (n,) and got[2]["units"] == "mV", got
                results.setdefault(case, {})[lib] = {
                    "median_s": statistics.median(times), "times_s": times,
                    "requests": statistics.median(reqs),
                    **({"round_trips": stats.get("round_trips")} if lib == "arca" else {}),
                }
            nbytes = sizes["arca"] * (0 if case == "open" else
                                      (selection(case, n).stop - selection(case, n).start)
                                      / n)
            trips = 1 if case == "open" else 2
            results[case]["ideal"] = {"median_s": trips * srv.latency + nbytes / bw,
                                      "round_trips": trips}
            if case == "all":
                # What this server and this machine allow: the open's round
                # trip, then the fetch in parts with decoding alongside.
                results[case]["floor"] = {
                    "median_s": srv.latency + max(fetch_s, decode_s),
                    "fetch_s": fetch_s, "decode_s": decode_s}
                # Both at once, in two threads: what the machine allows.
                results[case]["floor2"] = {
                    "median_s": srv.latency + together_s,
                    "fetch_s": together_fetch_s, "decode_s": together_decode_s}
    finally:
        srv.stop()
        shutil.rmtree(tmp, ignore_errors=True)

    print(f"cloud bench: {mib} MiB float32, 1 MiB chunks, shuffle + zstd {ZSTD_LEVEL}, "
          f"{args.latency_ms:g} ms a request, {repeat} runs, medians; "
          f"measured bandwidth {bw / 1e6:.0f} MB/s")
    print(f"floor of a whole read: the object fetched in 8 MiB parts, 16 in flight, "
          f"{fetch_s * 1000:.0f} ms; decoded from a local file {decode_s * 1000:.0f} ms; "
          "the floor is one round trip + the larger (fetch and decode overlapped)")
    print(f"floor2: both at once in two threads, {together_s * 1000:.0f} ms "
          f"(fetch {together_fetch_s * 1000:.0f} ms, decode {together_decode_s * 1000:.0f} ms "
          "while the other runs); one round trip + that")
    print(f"{'case':6} {'library':9} {'time':>9} {'requests':>9} {'x arca':>7}")
    for case in CASES:
        base = results[case].get("arca", {}).get("median_s")
        for lib, r in results[case].items():
            ratio = f"{r['median_s'] / base:7.2f}" if base else "      -"
            rq = r.get("requests")
            rq = "-" if rq is None else f"{rq:g}"
            extra = f"  ({r['round_trips']} round trips)" if r.get("round_trips") else ""
            print(f"{case:6} {lib:9} {r['median_s'] * 1000:7.1f}ms {rq:>9} {ratio}{extra}")
    whole = results["all"]
    if "arca" in whole:
        a = whole["arca"]["median_s"]
        print(f"arca's whole read: {a / whole['ideal']['median_s']:.2f}x the ideal, "
              f"{a / whole['floor']['median_s']:.2f}x the floor, "
              f"{a / whole['floor2']['median_s']:.2f}x floor2 (both at once)")
    if args.json:
        import h5py
        import obstore
        import zarr
        meta = {"mib": mib, "repeat": repeat, "latency_ms": args.latency_ms,
                "bandwidth_Bps": bw, "sizes": sizes, "python": platform.python_version(),
                "versions": {"arca": getattr(arca, "__version__", "?"), "zarr": zarr.__version__,
                             "h5py": h5py.__version__, "obstore": obstore.__version__}}
        with open(args.json, "w") as fh:
            json.dump({"meta": meta, "results": results}, fh, indent=1)
    return results


if __name__ == "__main__":
    main()
