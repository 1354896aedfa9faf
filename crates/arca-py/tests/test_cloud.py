"""Files on object storage: an S3 server (moto's, started here on
127.0.0.1) and a small HTTP server with Range support, both counting the
requests they serve. Counts are asserted exactly; nothing is timed."""

import http.server
import json
import os
import pickle
import shutil
import signal
import subprocess
import sys
import io
import threading
import urllib.parse
import urllib.request

import numpy as np
import pytest

import arca

import boto3  # installed by make (moto[server] brings it)
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
import moto.server as moto_server

BUCKET = "data"
CREDS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing",
         "aws_region": "us-east-1"}


class Tally:
    """WSGI middleware: records every request (and the conditions of each
    PUT of an object and of each completion of a multipart upload),
    answers 500 for the paths in ``fail``, and holds a PUT to a path in
    ``hold`` part-way through its body: it sets the first event once
    64 KiB have arrived and waits for the second, then drops the request.
    For a path in ``lose``, an object PUT or a completion is carried out
    and its answer replaced by a 500 (an answer lost); for one in
    ``busy``, that many completions are answered 409
    ConditionalRequestConflict first.

    moto 5.2.5 evaluates ``If-None-Match: *`` on CompleteMultipartUpload
    but ignores ``If-Match`` there, which S3 evaluates; this adds that
    check, and makes the check and the write one step by letting one
    object write through at a time."""

    def __init__(self, app):
        self.app = app
        self.seen = []
        self.puts = []
        self.completes = []
        self.queries = []
        self.signatures = []
        self.fail = set()
        self.hold = {}
        self.lose = set()
        self.busy = {}
        self.lock = threading.Lock()
        self.writes = threading.Lock()

    def _etag(self, environ):
        """The ETag of the object at the request's path now (None if none),
        asked of moto directly, unrecorded."""
        head = {k: v for k, v in environ.items() if not k.startswith("wsgi.")
                and k not in ("CONTENT_LENGTH", "CONTENT_TYPE")}
        head.update({"REQUEST_METHOD": "HEAD", "QUERY_STRING": "",
                     "wsgi.input": io.BytesIO(b""),
                     "wsgi.errors": environ["wsgi.errors"],
                     "wsgi.url_scheme": environ["wsgi.url_scheme"]})
        for k in ("HTTP_IF_MATCH", "HTTP_IF_NONE_MATCH", "HTTP_RANGE"):
            head.pop(k, None)
        got = {}

        def start(status, headers, exc_info=None):
            got["status"], got["headers"] = int(status.split()[0]), dict(headers)

        b"".join(self.app(head, start))
        return got["headers"].get("ETag") if got["status"] == 200 else None

    def __call__(self, environ, start_response):
        path = environ.get("PATH_INFO", "")
        method = environ["REQUEST_METHOD"]
        if method == "POST":
            # The requests arca signs itself: check their signatures, which
            # moto does not.
            n = int(environ.get("CONTENT_LENGTH") or 0)
            body = environ["wsgi.input"].read(n)
            environ["wsgi.input"] = io.BytesIO(body)
            with self.lock:
                self.signatures.append((path, sigv4_ok(environ, body)))
        query = urllib.parse.parse_qs(environ.get("QUERY_STRING", ""), keep_blank_values=True)
        conds = (environ.get("HTTP_IF_NONE_MATCH"), environ.get("HTTP_IF_MATCH"))
        complete = method == "POST" and "uploadId" in query
        whole_put = method == "PUT" and "partNumber" not in query
        with self.lock:
            self.seen.append((method, path, environ.get("HTTP_RANGE")))
            self.queries.append((method, path, frozenset(query)))
            if whole_put:
                self.puts.append((path, *conds))
            if complete:
                self.completes.append((path, *conds))
            held = self.hold.get(path) if method == "PUT" else None
            busy = self.busy.get(path, 0) if complete else 0
            if busy:
                self.busy[path] = busy - 1
        if held is not None:
            reached, release = held
            environ["wsgi.input"].read(64 << 10)
            reached.set()
            release.wait()
            start_response("500 Internal Server Error", [("Content-Length", "0")])
            return [b""]
        if path in self.fail:
            start_response("500 Internal Server Error", [("Content-Length", "0")])
            return [b""]
        if busy:
            body = (b"<Error><Code>ConditionalRequestConflict</Code>"
                    b"<Message>A conflicting operation is in progress</Message></Error>")
            start_response("409 Conflict", [("Content-Length", str(len(body))),
                                             ("Content-Type", "application/xml")])
            return [body]
        if not (whole_put or complete):
            return self.app(environ, start_response)
        with self.writes:
            if complete and conds[1] is not None and conds[1] != self._etag(environ):
                body = b"<Error><Code>PreconditionFailed</Code><Message>If-Match</Message></Error>"
                start_response("412 Precondition Failed", [("Content-Length", str(len(body))),
                                                           ("Content-Type", "application/xml")])
                return [body]
            if path not in self.lose:
                return [b"".join(self.app(environ, start_response))]
            b"".join(self.app(environ, lambda *a, **k: None))
        start_response("500 Internal Server Error", [("Content-Length", "0")])
        return [b""]

    def puts_to(self, path):
        """The (If-None-Match, If-Match) of each PUT to ``path``."""
        with self.lock:
            return [(n, m) for p, n, m in self.puts if p == path]

    def gets(self, path):
        with self.lock:
            return sum(1 for m, p, _ in self.seen if m == "GET" and p == path)

    def completes_to(self, path):
        """The (If-None-Match, If-Match) of each completion of an upload to ``path``."""
        with self.lock:
            return [(n, m) for p, n, m in self.completes if p == path]

    def count(self, method, path, key):
        """Requests of ``method`` to ``path`` with ``key`` in their query."""
        with self.lock:
            return sum(1 for m, p, q in self.queries if m == method and p == path and key in q)

    def others(self):
        """Requests other than GETs of objects and PUTs: HEADs, LISTs."""
        with self.lock:
            return [s for s in self.seen if s[0] not in ("GET", "PUT")
                    or (s[0] == "GET" and s[1].rstrip("/") == f"/{BUCKET}")]


def sigv4_ok(environ, body):
    """Whether a request's SigV4 signature is the one botocore computes for
    it with the test's credentials."""
    auth = environ.get("HTTP_AUTHORIZATION", "")
    if "SignedHeaders=" not in auth:
        return False
    names = auth.split("SignedHeaders=")[1].split(",")[0].split(";")
    headers = {h: environ.get("HTTP_" + h.upper().replace("-", "_"),
                              environ.get(h.upper().replace("-", "_"), ""))
               for h in names if h != "host"}
    url = (f"http://{environ['HTTP_HOST']}{urllib.parse.quote(environ['PATH_INFO'])}"
           f"?{environ.get('QUERY_STRING', '')}")
    req = AWSRequest(method=environ["REQUEST_METHOD"], url=url, data=body, headers=headers)
    req.context["timestamp"] = headers.get("x-amz-date", "")
    S3SigV4Auth(Credentials("testing", "testing"), "s3", "us-east-1").add_auth(req)
    return req.headers["Authorization"] == auth


@pytest.fixture(scope="module")
def s3():
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    tally = Tally(server._server.app)
    # werkzeug's server calls its ``app`` attribute for each request.
    server._server.app = tally
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                          aws_access_key_id="testing", aws_secret_access_key="testing")
    client.create_bucket(Bucket=BUCKET)
    try:
        yield client, tally, {**CREDS, "aws_endpoint": endpoint, "aws_allow_http": True}
    finally:
        server.stop()


class RangeHandler(http.server.BaseHTTPRequestHandler):
    """GET with ``Range: bytes=a-b`` over the server's ``objects``."""

    def do_GET(self):
        srv = self.server
        rng = self.headers.get("Range")
        with srv.lock:
            srv.seen.append((self.path, rng))
        if self.path in srv.fail:
            return self._reply(500, b"")
        data = srv.objects.get(self.path)
        if data is None:
            return self._reply(404, b"")
        if not rng:
            return self._reply(200, data)
        a, _, b = rng.removeprefix("bytes=").partition("-")
        a, b = int(a), min(int(b), len(data) - 1) if b else len(data) - 1
        if a >= len(data):
            return self._reply(416, b"", {"Content-Range": f"bytes */{len(data)}"})
        self._reply(206, data[a:b + 1], {"Content-Range": f"bytes {a}-{b}/{len(data)}"})

    def _reply(self, status, body, headers=()):
        self.send_response(status)
        for k, v in dict(headers).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def web():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), RangeHandler)
    srv.objects, srv.seen, srv.fail, srv.lock = {}, [], set(), threading.Lock()
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield srv, f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        t.join()


def make_file(path, n_chunks=8):
    """A small tree: attributes, a contiguous, a compact and a chunked
    compressed dataset of ``n_chunks`` chunks. Returns what it wrote."""
    rng = np.random.default_rng(31)
    want = {
        "g/t": rng.standard_normal((50, 40)),
        "g/c": np.arange(6, dtype="i2"),
        "k": rng.integers(0, 1000, n_chunks * 256, dtype="u4"),
    }
    with arca.File(path, "w") as f:
        f.attrs["title"] = "run 31"
        g = f.create_group("g")
        g.create_dataset("t", data=want["g/t"])
        g.create_dataset("c", data=want["g/c"])
        g["t"].attrs["units"] = "K"
        f.create_dataset("k", data=want["k"], chunks=(256,), compression="gzip")
    return want


def put(s3, key, data):
    s3[0].put_object(Bucket=BUCKET, Key=key, Body=data)


def test_s3_small_file_opens_in_one_request_and_reads_as_locally(s3, tmp_path):
    p = tmp_path / "a.arca"
    want = make_file(p)
    put(s3, "a.arca", p.read_bytes())
    _, tally, opts = s3
    before = len(tally.others())
    with arca.File(f"s3://{BUCKET}/a.arca", "r", storage_options=opts) as f:
        st = f.io_stats()
        assert (st["requests"], st["round_trips"]) == (1, 1)
        assert st["bytes_fetched"] == p.stat().st_size
        assert tally.gets(f"/{BUCKET}/a.arca") == 1
        for name, a in want.items():
            np.testing.assert_array_equal(f[name][...], a)
        assert f.attrs["title"] == "run 31" and f["g/t"].attrs["units"] == "K"
        # Everything lay in the first response.
        assert f.io_stats()["requests"] == 1
        assert tally.gets(f"/{BUCKET}/a.arca") == 1
        assert f.filename == f"s3://{BUCKET}/a.arca"
    # No HEAD, no LIST.
    assert tally.others()[before:] == []


def test_s3_credentials_from_the_environment(s3, tmp_path, monkeypatch):
    p = tmp_path / "e.arca"
    want = make_file(p)
    put(s3, "e.arca", p.read_bytes())
    opts = s3[2]
    monkeypatch.setenv("AWS_ENDPOINT_URL", opts["aws_endpoint"])
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ALLOW_HTTP", "true")
    with arca.File(f"s3://{BUCKET}/e.arca", "r") as f:
        np.testing.assert_array_equal(f["k"][...], want["k"])


def test_one_chunk_costs_one_round_trip_per_index_level(s3, tmp_path):
    # 4096 chunks: a chunk index of two levels. Reads of 4 KiB blocks and
    # a 4 KiB head show the cost of each level.
    p = tmp_path / "big.arca"
    want = make_file(p, n_chunks=4096)
    put(s3, "big.arca", p.read_bytes())
    opts = {**s3[2], "head_bytes": 4096, "block_bytes": 4096}
    with arca.File(f"s3://{BUCKET}/big.arca", "r", storage_options=opts) as f:
        k = f["k"]
        before = f.io_stats()
        np.testing.assert_array_equal(k[3000 * 256:3000 * 256 + 4],
                                      want["k"][3000 * 256:3000 * 256 + 4])
        after = f.io_stats()
        trips = after["round_trips"] - before["round_trips"]
        # two index levels, then the chunk
        assert trips <= 3
        assert after["requests"] - before["requests"] == trips
        assert after["chunks_read"] - before["chunks_read"] == 1
        # The same chunk again: no request.
        k[3000 * 256:3000 * 256 + 4]
        assert f.io_stats()["requests"] == after["requests"]
        np.testing.assert_array_equal(k[...], want["k"])


def test_whole_file_reads_equal_local_reads(s3, tmp_path):
    p = tmp_path / "w.arca"
    make_file(p, n_chunks=600)
    put(s3, "w.arca", p.read_bytes())
    opts = {**s3[2], "head_bytes": 65536, "block_bytes": 65536}
    with arca.File(p, "r") as local, \
            arca.File(f"s3://{BUCKET}/w.arca", "r", storage_options=opts) as f:
        for name in ("g/t", "g/c", "k"):
            np.testing.assert_array_equal(f[name][...], local[name][...])
        st = f.io_stats()
        # Every byte came once: the cache holds the file (4 MiB < 64 MiB).
        assert st["bytes_fetched"] <= p.stat().st_size
        # The 600 chunks' requests went out together, in one or two
        # batches: a handful of round trips in all, each of at most 16.
        assert st["round_trips"] <= 4, st
        assert st["round_trips"] <= st["requests"] <= 16 * st["round_trips"]
        n = st["requests"]
        for name in ("g/t", "g/c", "k"):
            f[name][...]
        assert f.io_stats()["requests"] == n


def test_a_read_of_many_chunks_is_one_batch_of_requests(s3, tmp_path):
    """The chunks of one read go out together: neighbours merged into one
    request, at most ``max_in_flight`` requests in flight at a time."""
    p = tmp_path / "many.arca"
    want = np.arange(256 * 256, dtype="u4")
    with arca.File(p, "w") as f:
        f.create_dataset("k", data=want, chunks=(256,))
    put(s3, "many.arca", p.read_bytes())
    _, tally, opts = s3
    path = f"/{BUCKET}/many.arca"

    def whole(extra):
        """Requests and round trips of a whole read after a read of the
        two end chunks, and the server's count of the same."""
        o = {**opts, "head_bytes": 4096, "block_bytes": 4096, **extra}
        with arca.File(f"s3://{BUCKET}/many.arca", "r", storage_options=o) as f:
            k = f["k"]
            np.testing.assert_array_equal(k[::255 * 256], want[::255 * 256])
            before, seen = f.io_stats(), tally.gets(path)
            np.testing.assert_array_equal(k[...], want)
            after = f.io_stats()
            assert after["chunks_read"] - before["chunks_read"] == 254
            return (after["requests"] - before["requests"],
                    after["round_trips"] - before["round_trips"], tally.gets(path) - seen)

    requests, trips, seen = whole({})
    assert seen == requests
    # At most one round trip for the index pages the end reads did not
    # reach (a tree level's pages are fetched together), then one for the
    # chunks: they lie together, one request (two where a block the cache
    # holds lies between them).
    index = trips - 1
    assert index <= 1 and 1 <= requests - index <= 3, (requests, trips)
    # Unmerged (a part is one 4 KiB block: four chunks of 1 KiB a request,
    # fewer where the cache holds some), sixteen in flight at a time.
    requests, trips, seen = whole({"coalesce_bytes": 0, "part_bytes": 1})
    assert seen == requests and 60 <= requests - index <= 64 + index, (requests, trips)
    batch = trips - index
    assert batch == 4, (requests, trips)
    assert whole({"coalesce_bytes": 0, "part_bytes": 1, "max_in_flight": 64}) == \
        (requests, index + 1, requests)


def _many_objects(tmp_path, groups, chunks):
    """A file of ``groups`` groups of a small dataset and a dataset of
    ``chunks`` chunks, and its copy repacked for the cloud."""
    p, q = tmp_path / "many.arca", tmp_path / "many-cloud.arca"
    with arca.File(p, "w") as f:
        f.create_dataset("k", data=np.arange(chunks * 256, dtype="u4"), chunks=(256,))
        g = f.create_group("many")
        for i in range(groups):
            d = g.create_group(f"g{i}").create_dataset("v", data=np.arange(i, i + 4, dtype="u4"))
            d.attrs["units"] = "m/s"
    r = _cli("repack", "-q", "--cloud", str(p), str(q))
    assert r.returncode == 0, r.stderr
    return p, q


def _meta_end(data):
    return int.from_bytes(data[104:112], "little")


def test_s3_metadata_larger_than_the_first_read_costs_one_more_request(s3, tmp_path):
    """A file laid out for the cloud whose metadata is many times the first
    read: open, a far object and a far chunk in three requests (head,
    the rest of the metadata, the chunk), counted by the server."""
    plain, cloud = _many_objects(tmp_path, 5000, 3000)
    data = cloud.read_bytes()
    head = 65536
    meta_end = _meta_end(data)
    assert meta_end > 10 * head and _meta_end(plain.read_bytes()) == 0
    put(s3, "many-cloud.arca", data)
    put(s3, "many.arca", plain.read_bytes())
    _, tally, opts = s3

    def reach(key, **extra):
        o = {**opts, "head_bytes": head, "block_bytes": 4096, **extra}
        seen = tally.gets(f"/{BUCKET}/{key}")
        with arca.File(f"s3://{BUCKET}/{key}", "r", storage_options=o) as f:
            st = f.io_stats()
            assert (st["requests"], st["round_trips"]) == (1, 1)
            np.testing.assert_array_equal(f["many/g4999/v"][...], np.arange(4999, 5003))
            np.testing.assert_array_equal(f["k"][2990 * 256:2990 * 256 + 4],
                                          np.arange(2990 * 256, 2990 * 256 + 4))
            st = f.io_stats()
            assert tally.gets(f"/{BUCKET}/{key}") - seen == st["requests"]
            return st["requests"], st["round_trips"]

    assert reach("many-cloud.arca") == (3, 3)
    # A block at a time, as without the region (a limit below its size).
    blockwise = reach("many-cloud.arca", meta_bytes=0)
    assert blockwise[0] > 3 and reach("many-cloud.arca", meta_bytes=meta_end - head - 1) == blockwise
    # A file not laid out (meta_end 0) reads as before.
    assert reach("many.arca") == reach("many.arca", meta_bytes=0)
    # A region claimed past the end of the file: damage, typed.
    bad = bytearray(data)
    bad[104:112] = (len(data) + 1).to_bytes(8, "little")
    bad[8:12] = _crc32c(bytes(bad[12:128])).to_bytes(4, "little")
    put(s3, "bad-meta.arca", bytes(bad))
    with pytest.raises(arca.CorruptError, match="metadata region"):
        arca.File(f"s3://{BUCKET}/bad-meta.arca", "r", storage_options={**opts, "head_bytes": 4096})


def _crc32c(data):
    """CRC-32C (Castagnoli), bit by bit: the superblock's checksum."""
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def test_typed_errors(s3, tmp_path):
    client, tally, opts = s3
    with pytest.raises(FileNotFoundError, match="missing.arca"):
        arca.File(f"s3://{BUCKET}/missing.arca", "r", storage_options=opts)
    with pytest.raises(ValueError, match="not a URL arca opens"):
        arca.File("ftp://host/x.arca", "r")
    with pytest.raises(ValueError, match="unknown storage option"):
        arca.File(f"s3://{BUCKET}/x.arca", "r", storage_options={"no_such_key": "1"})
    with pytest.raises(ValueError, match="applies to URLs"):
        arca.File(tmp_path / "x.arca", "r", storage_options=opts)
    p = tmp_path / "t.arca"
    make_file(p, n_chunks=64)
    data = p.read_bytes()
    # A truncated object: the file's structures run past its end.
    put(s3, "cut.arca", data[:len(data) // 2])
    with pytest.raises(arca.CorruptError):
        with arca.File(f"s3://{BUCKET}/cut.arca", "r", storage_options=opts) as f:
            f["k"][...]
    put(s3, "ro.arca", data)
    with arca.File(f"s3://{BUCKET}/ro.arca", "r", storage_options=opts) as f:
        with pytest.raises(arca.ReadOnlyError):
            f.create_group("x")
    # A server error that persists: retried, then a typed error naming the
    # URL and the range.
    tally.fail.add(f"/{BUCKET}/ro.arca")
    try:
        before = tally.gets(f"/{BUCKET}/ro.arca")
        with pytest.raises(arca.RemoteError, match=r"s3://data/ro.arca bytes 0-1048575"):
            arca.File(f"s3://{BUCKET}/ro.arca", "r",
                      storage_options={**opts, "max_retries": 2})
        assert tally.gets(f"/{BUCKET}/ro.arca") - before == 3
    finally:
        tally.fail.clear()


def test_http_reads_and_errors(web, tmp_path):
    srv, base = web
    p = tmp_path / "h.arca"
    want = make_file(p, n_chunks=32)
    srv.objects["/d/h.arca"] = p.read_bytes()
    srv.seen.clear()
    with arca.File(f"{base}/d/h.arca", "r") as f:
        assert f.io_stats()["requests"] == 1
        assert srv.seen == [("/d/h.arca", "bytes=0-1048575")]
        for name, a in want.items():
            np.testing.assert_array_equal(f[name][...], a)
        assert f.io_stats()["requests"] == 1 and len(srv.seen) == 1
    with pytest.raises(FileNotFoundError):
        arca.File(f"{base}/d/none.arca", "r")
    srv.objects["/d/bad.arca"] = b"x" * 5000
    with pytest.raises(arca.CorruptError):
        arca.File(f"{base}/d/bad.arca", "r")
    srv.fail.add("/d/h.arca")
    try:
        srv.seen.clear()
        with pytest.raises(arca.RemoteError, match=r"/d/h.arca bytes 0-"):
            arca.File(f"{base}/d/h.arca", "r", storage_options={"max_retries": 1})
        assert len(srv.seen) == 2
    finally:
        srv.fail.clear()


def test_http_urls_open_read_only(web):
    srv, base = web
    for mode in ("r+", "a", "w", "w-", "x"):
        with pytest.raises(arca.UnsupportedError, match="read-only"):
            arca.File(f"{base}/w.arca", mode)
    # Refused before any request.
    assert all(p != "/w.arca" for p, _ in srv.seen)


def test_pickled_objects_reopen_by_url(s3, tmp_path):
    p = tmp_path / "pk.arca"
    want = make_file(p)
    put(s3, "pk.arca", p.read_bytes())
    with arca.File(f"s3://{BUCKET}/pk.arca", "r", storage_options=s3[2]) as f:
        blob = pickle.dumps(f["k"])
    # Another process opens the URL itself, as a dask worker does.
    code = ("import pickle, sys; d = pickle.loads(sys.stdin.buffer.read()); "
            "print(d.file.filename, int(d[...].sum()))")
    out = subprocess.run([sys.executable, "-c", code], input=blob, capture_output=True,
                         env=os.environ.copy(), check=True)
    assert out.stdout.decode().split() == [f"s3://{BUCKET}/pk.arca", str(int(want["k"].sum()))]


def test_xarray_open_dataset_by_url(s3, tmp_path):
    xr = pytest.importorskip("xarray")
    from arca.xarray import to_arca
    p = tmp_path / "x.arca"
    ds = xr.Dataset({"v": (("t", "y"), np.arange(60.0).reshape(12, 5))},
                    coords={"t": np.arange(12), "y": np.arange(5) * 10})
    to_arca(ds, p)
    put(s3, "x.arca", p.read_bytes())
    url = f"s3://{BUCKET}/x.arca"
    got = xr.open_dataset(url, engine="arca", storage_options=s3[2])
    xr.testing.assert_identical(got.load(), xr.open_dataset(p, engine="arca").load())
    got.close()
    lazy = xr.open_dataset(url, engine="arca", storage_options=s3[2], chunks={})
    assert float(lazy["v"].sum().compute()) == float(np.arange(60.0).sum())
    lazy.close()


def test_a_distributed_cluster_reduces_a_file_on_s3(s3, tmp_path):
    """Dask workers in other processes open the URL themselves (the
    options travel in the pickle) and their reduction equals numpy's."""
    xr = pytest.importorskip("xarray")
    from dask.distributed import Client, LocalCluster

    from arca.xarray import to_arca
    data = np.random.default_rng(11).normal(size=(256, 512))
    ds = xr.Dataset({"v": (("t", "x"), data)})
    ds["v"].encoding.update(chunksizes=(32, 512), compression="zstd", shuffle=True)
    p = tmp_path / "dist.arca"
    to_arca(ds, p)
    put(s3, "dist.arca", p.read_bytes())
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster):
        x = xr.open_dataset(f"s3://{BUCKET}/dist.arca", engine="arca",
                            storage_options=s3[2], chunks={})
        got = x["v"].mean("t").compute()
        x.close()
    np.testing.assert_allclose(got.values, data.mean(axis=0), rtol=1e-12, atol=1e-15)


def _cli(*args):
    code = "import sys; from arca._cli import main; main(['arca'] + sys.argv[1:])"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          env=os.environ.copy())


def test_cli_on_urls_equals_local(s3, tmp_path):
    p = tmp_path / "c.arca"
    make_file(p)
    put(s3, "c.arca", p.read_bytes())
    url = f"s3://{BUCKET}/c.arca"
    so = [a for k, v in s3[2].items() for a in ("--storage-option", f"{k}={v}")]
    for cmd in (["ls", "-r"], ["ls", "-r", "--json"], ["dump"], ["dump", "--json"]):
        remote, local = _cli(*cmd, *so, url), _cli(*cmd, str(p))
        assert remote.returncode == 0, remote.stderr
        assert remote.stdout.replace(url, str(p)) == local.stdout
    r = _cli("dump", *so, url + ":/g/c")
    assert r.returncode == 0 and "DATASET" in r.stdout.upper(), r.stderr
    r = _cli("check", *so, url)
    assert r.returncode == 0 and r.stdout.startswith(f"ok: {url}:"), r.stderr
    r = _cli("stat", "--json", *so, url)
    assert r.returncode == 0 and '"datasets": 3' in r.stdout, r.stderr
    r = _cli("ls", *so, f"s3://{BUCKET}/none.arca")
    assert r.returncode == 1 and "object not found" in r.stderr
    r = _cli("ls", "--storage-option", "novalue", url)
    assert r.returncode == 1 and "KEY=VALUE" in r.stderr


def _view_get(viewer, endpoint, **query):
    u = urllib.parse.urlsplit(viewer.url)
    token = urllib.parse.parse_qs(u.query)["token"][0]
    q = urllib.parse.urlencode({"token": token, **query})
    with urllib.request.urlopen(f"http://127.0.0.1:{u.port}/api/{endpoint}/?{q}", timeout=30) as r:
        return r.read()


def test_view_serves_a_url_as_its_local_copy(s3, tmp_path):
    p = tmp_path / "v.arca"
    make_file(p)
    put(s3, "v.arca", p.read_bytes())
    url = f"s3://{BUCKET}/v.arca"
    remote = arca.view(url, block=False, browser=False, storage_options=s3[2])
    local = arca.view(p, block=False, browser=False)
    try:
        for endpoint, q in (("meta", {"path": "/"}), ("meta", {"path": "/g/t"}),
                            ("data", {"path": "/g/t", "selection": "3:5,::7"}),
                            ("data", {"path": "/k", "format": "npy"}),
                            ("attr", {"path": "/"}), ("stats", {"path": "/k"})):
            assert _view_get(remote, endpoint, **q) == _view_get(local, endpoint, **q), endpoint
    finally:
        remote.stop()
        local.stop()
    # The command takes the URL and its options too.
    so = [a for k, v in s3[2].items() for a in ("--storage-option", f"{k}={v}")]
    code = "import sys; from arca._cli import main; main(['arca'] + sys.argv[1:])"
    proc = subprocess.Popen([sys.executable, "-c", code, "view", "--no-browser", *so, url],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        page = next(line.strip() for line in proc.stdout if line.startswith("http://"))
        u = urllib.parse.urlsplit(page)
        token = urllib.parse.parse_qs(u.query)["token"][0]
        with urllib.request.urlopen(f"http://127.0.0.1:{u.port}/api/attr/?token={token}&path=/",
                                    timeout=30) as r:
            assert json.loads(r.read()) == {"title": "run 31"}
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        proc.stdout.close()


# ---- Writing: staged locally, published by one conditional PUT per commit ----

def etag_of(s3, key):
    return s3[0].head_object(Bucket=BUCKET, Key=key)["ETag"]


def test_s3_create_then_reopen_read(s3, tmp_path):
    client, tally, opts = s3
    url, path = f"s3://{BUCKET}/new.arca", f"/{BUCKET}/new.arca"
    before = len(tally.seen)
    want = np.arange(1000, dtype="f8")
    with arca.File(url, "w", storage_options=opts) as f:
        f.create_dataset("x", data=want, chunks=(100,), compression="gzip")
        f.attrs["run"] = 31
        # Opening asked once whether the object exists (a HEAD).
        assert [m for m, _, _ in tally.seen[before:]] == ["HEAD"]
        assert f.io_stats()["puts"] == 0
        f.flush()
        assert f.io_stats()["puts"] == 1
        assert f.io_stats()["bytes_put"] == client.head_object(
            Bucket=BUCKET, Key="new.arca")["ContentLength"]
        f.create_dataset("y", data=np.ones(5, "i4"))
    # The flush and the close: one PUT each, the first creating
    # (If-None-Match: *), the second replacing what the first made.
    conds = tally.puts_to(path)
    assert len(conds) == 2 and conds[0] == ("*", None)
    assert conds[1][0] is None and conds[1][1] is not None
    assert conds[1][1] != etag_of(s3, "new.arca")  # the second changed it
    with arca.File(url, "r", storage_options=opts) as f:
        np.testing.assert_array_equal(f["x"][...], want)
        np.testing.assert_array_equal(f["y"][...], np.ones(5, "i4"))
        assert f.attrs["run"] == 31


def test_s3_append_adds_a_dataset_and_a_reader_sees_the_new_object(s3, tmp_path):
    client, tally, opts = s3
    p = tmp_path / "a.arca"
    want = make_file(p)
    put(s3, "app.arca", p.read_bytes())
    url, path = f"s3://{BUCKET}/app.arca", f"/{BUCKET}/app.arca"
    old_etag = etag_of(s3, "app.arca")
    gets, puts = tally.gets(path), len(tally.puts_to(path))
    with arca.File(url, "a", storage_options=opts) as f:
        st = f.io_stats()
        # One GET of the whole object, nothing else.
        assert (st["requests"], st["bytes_fetched"], st["puts"]) == (1, p.stat().st_size, 0)
        assert tally.gets(path) == gets + 1
        f.create_dataset("added", data=np.arange(7))
    assert tally.puts_to(path)[puts:] == [(None, old_etag)]
    with arca.File(url, "r", storage_options=opts) as f:
        np.testing.assert_array_equal(f["added"][...], np.arange(7))
        for name, a in want.items():
            np.testing.assert_array_equal(f[name][...], a)
    # r+ on a missing object: FileNotFoundError; a on one: created.
    with pytest.raises(FileNotFoundError):
        arca.File(f"s3://{BUCKET}/absent.arca", "r+", storage_options=opts)
    with arca.File(f"s3://{BUCKET}/fresh.arca", "a", storage_options=opts) as f:
        f["v"] = np.arange(3)
    assert tally.puts_to(f"/{BUCKET}/fresh.arca") == [("*", None)]


def test_s3_of_two_writers_one_wins_and_the_other_keeps_its_file(s3, tmp_path):
    client, tally, opts = s3
    p = tmp_path / "r.arca"
    make_file(p)
    base = p.read_bytes()
    stage = tmp_path / "stage"
    stage.mkdir()
    o = {**opts, "staging_dir": str(stage)}
    for round_ in range(10):
        key = f"race-{round_}.arca"
        put(s3, key, base)
        url = f"s3://{BUCKET}/{key}"
        writers = [arca.File(url, "a", storage_options=o) for _ in range(2)]
        for i, f in enumerate(writers):
            f.create_dataset(f"by{i}", data=np.full(10, i))
        go = threading.Barrier(2)
        results = [None, None]

        def commit(i):
            go.wait()
            try:
                writers[i].flush()
                results[i] = "ok"
            except arca.ConflictError as e:
                results[i] = e

        threads = [threading.Thread(target=commit, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(type(r).__name__ for r in results) == ["ConflictError", "str"], results
        w = results.index("ok")
        lost = 1 - w
        err = results[lost]
        assert isinstance(err, arca.ArcaError) and isinstance(err, OSError)
        staged = [s for s in stage.rglob("*.arca") if str(s) in str(err)]
        assert len(staged) == 1, str(err)
        with arca.File(url, "r", storage_options=opts) as f:
            assert f"by{w}" in f and f"by{lost}" not in f
        # The loser's close conflicts again; its file stays, readable here.
        with pytest.raises(arca.ConflictError):
            writers[lost].close()
        writers[w].close()
        with arca.File(staged[0], "r") as f:
            np.testing.assert_array_equal(f[f"by{lost}"][...], np.full(10, lost))
        # Only the loser's staging is left.
        assert [d for d in stage.iterdir()] == [staged[0].parent]
        shutil.rmtree(staged[0].parent)


def test_s3_x_on_an_existing_key_conflicts(s3, tmp_path):
    client, tally, opts = s3
    put(s3, "taken.arca", b"anything")
    for mode in ("x", "w-"):
        with pytest.raises(arca.ConflictError, match="exists"):
            arca.File(f"s3://{BUCKET}/taken.arca", mode, storage_options=opts)
    # Created by another between the open and the publish.
    f = arca.File(f"s3://{BUCKET}/late.arca", "x", storage_options=opts)
    f["a"] = np.arange(4)
    put(s3, "late.arca", b"first")
    with pytest.raises(arca.ConflictError, match="created the object first") as e:
        f.close()
    assert client.get_object(Bucket=BUCKET, Key="late.arca")["Body"].read() == b"first"
    kept = str(e.value).rsplit("kept at ", 1)[1]
    with arca.File(kept, "r") as g:
        np.testing.assert_array_equal(g["a"][...], np.arange(4))
    shutil.rmtree(os.path.dirname(kept))


CHILD = """
import json, sys
import numpy as np
import arca
url, opts = sys.argv[1], json.loads(sys.argv[2])
f = arca.File(url, "a", storage_options=opts)
f.create_dataset("big", data=np.arange(1 << 20, dtype="i8"))
print("staged", flush=True)
f.flush()
print("published", flush=True)
"""


@pytest.mark.parametrize("multipart", [False, True], ids=["put", "multipart"])
def test_s3_a_commit_killed_mid_upload_leaves_the_old_object(s3, tmp_path, multipart):
    client, tally, opts = s3
    p = tmp_path / "k.arca"
    want = make_file(p)
    key = "kill-mp.arca" if multipart else "kill.arca"
    put(s3, key, p.read_bytes())
    old = client.get_object(Bucket=BUCKET, Key=key)["Body"].read()
    path = f"/{BUCKET}/{key}"
    reached, release = threading.Event(), threading.Event()
    tally.hold[path] = (reached, release)
    stage = tmp_path / "stage"
    stage.mkdir()
    o = {**opts, "staging_dir": str(stage)}
    if multipart:
        # The 8 MiB written goes in 2 parts.
        o.update(multipart_threshold=6 << 20, part_size=5 << 20)
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, f"s3://{BUCKET}/{key}", json.dumps(o)],
        stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "staged"
        # The PUT (or a part) is under way: part of the body has arrived.
        assert reached.wait(120)
        child.send_signal(signal.SIGKILL)
        assert child.wait() == -signal.SIGKILL
    finally:
        del tally.hold[path]
        release.set()
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.stdout.read() == ""
    assert client.get_object(Bucket=BUCKET, Key=key)["Body"].read() == old
    with arca.File(f"s3://{BUCKET}/{key}", "r", storage_options=opts) as f:
        assert "big" not in f
        for name, a in want.items():
            np.testing.assert_array_equal(f[name][...], a)
    # The child's staged file (its commit was local) is left for it.
    staged = list(stage.rglob(key))
    assert len(staged) == 1
    with arca.File(staged[0], "r") as f:
        assert f["big"].shape == (1 << 20,)
    if multipart:
        # A killed writer cannot abort its upload: it stays open (for the
        # bucket's lifecycle rule to remove), never completed.
        left = [u for u in open_uploads(client) if u["Key"] == key]
        assert len(left) == 1 and tally.completes_to(path) == []
        client.abort_multipart_upload(Bucket=BUCKET, Key=key, UploadId=left[0]["UploadId"])


def _remove_kept(message):
    """Remove the local copy an upload that lost kept (the message names it)."""
    kept = message.strip().rsplit("kept at ", 1)[1]
    assert os.path.exists(kept), kept
    shutil.rmtree(os.path.dirname(kept))


def test_cli_writes_to_urls(s3, tmp_path):
    client, tally, opts = s3
    p = tmp_path / "c.arca"
    want = make_file(p)
    so = [a for k, v in opts.items() for a in ("--storage-option", f"{k}={v}")]
    url = f"s3://{BUCKET}/repacked.arca"
    # repack to a URL: written locally, uploaded as a new object.
    r = _cli("repack", "-q", "--cloud", *so, str(p), url)
    assert r.returncode == 0, r.stderr
    assert tally.puts_to(f"/{BUCKET}/repacked.arca") == [("*", None)]
    with arca.File(url, "r", storage_options=opts) as f:
        np.testing.assert_array_equal(f["k"][...], want["k"])
    # Not over an existing object.
    r = _cli("repack", "-q", *so, str(p), url)
    assert r.returncode == 1 and "conflict" in r.stderr, r.stderr
    _remove_kept(r.stderr)
    # A URL to read from: refused, as is a web server to write to.
    r = _cli("repack", "-q", url, str(tmp_path / "o.arca"))
    assert r.returncode == 1 and "reads a local file" in r.stderr
    # import to a URL: converted locally, uploaded as a new object; with
    # --force in place of the one there (If-Match its ETag).
    h5py = pytest.importorskip("h5py")
    h5 = tmp_path / "in.h5"
    with h5py.File(h5, "w") as g:
        g["v"] = np.arange(12.0)
    imp = f"s3://{BUCKET}/imported.arca"
    r = _cli("import", "-q", *so, str(h5), imp)
    assert r.returncode == 0, r.stderr
    r = _cli("import", "-q", *so, str(h5), imp)
    assert r.returncode == 1 and "conflict" in r.stderr, r.stderr
    _remove_kept(r.stderr)
    etag = etag_of(s3, "imported.arca")
    r = _cli("import", "-q", "--force", *so, str(h5), imp)
    assert r.returncode == 0, r.stderr
    assert tally.puts_to(f"/{BUCKET}/imported.arca")[-1] == (None, etag)
    with arca.File(imp, "r", storage_options=opts) as f:
        np.testing.assert_array_equal(f["v"][...], np.arange(12.0))
    r = _cli("export", str(p), imp)
    assert r.returncode == 1 and "local HDF5 file" in r.stderr, r.stderr
    # edit: the URL staged, the edit published (credentials from the environment).
    env = {"AWS_ENDPOINT_URL": opts["aws_endpoint"], "AWS_ACCESS_KEY_ID": "testing",
           "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1",
           "AWS_ALLOW_HTTP": "true"}
    code = "import sys; from arca._cli import main; main(['arca'] + sys.argv[1:])"
    r = subprocess.run([sys.executable, "-c", code, "edit", "-c",
                        'CREATE /g/note {{"edited"}};', url],
                       capture_output=True, text=True, env={**os.environ, **env})
    assert r.returncode == 0, r.stderr
    with arca.File(url, "r", storage_options=opts) as f:
        assert f["g"].attrs["note"] == b"edited"  # a fixed-length string, as h5edit makes


# ---- Large files: a multipart upload whose completion carries the condition ----

MiB = 1 << 20


def multipart_opts(opts, **more):
    """Publish files of 8 MiB or more by multipart, in parts of 5 MiB."""
    return {**opts, "multipart_threshold": 8 * MiB, "part_size": 5 * MiB, **more}


def big(seed, n=1_600_000):
    """12.2 MiB of float64 that does not compress (stored as is)."""
    return np.random.default_rng(seed).standard_normal(n)


def open_uploads(client):
    return client.list_multipart_uploads(Bucket=BUCKET).get("Uploads", [])


def test_s3_a_large_file_publishes_by_multipart_with_its_condition(s3, tmp_path):
    client, tally, opts = s3
    o = multipart_opts(opts)
    url, path = f"s3://{BUCKET}/large.arca", f"/{BUCKET}/large.arca"
    want = big(1)
    with arca.File(url, "w", storage_options=o) as f:
        f.create_dataset("x", data=want)
        f.flush()
        st = f.io_stats()
        size = client.head_object(Bucket=BUCKET, Key="large.arca")["ContentLength"]
        assert 12 * MiB < size < 16 * MiB
        # 3 parts (5 + 5 + the rest), one completion, no single PUT.
        assert (st["parts"], st["completes"], st["puts"], st["bytes_put"]) == (3, 1, 0, size)
        assert tally.count("POST", path, "uploads") == 1
        assert tally.count("PUT", path, "partNumber") == 3
        assert tally.completes_to(path) == [("*", None)]
        assert tally.puts_to(path) == []
        # The create and the completion arca signed itself verify.
        assert [ok for p, ok in tally.signatures if p == path] == [True, True]
        first = etag_of(s3, "large.arca")
        assert first.endswith('-3"')
        f.create_dataset("y", data=np.arange(5))
    # The close publishes again: If-Match the ETag the flush made.
    assert tally.completes_to(path) == [("*", None), (None, first)]
    assert tally.count("PUT", path, "partNumber") == 6
    assert open_uploads(client) == []
    with arca.File(url, "r", storage_options=opts) as f:
        np.testing.assert_array_equal(f["x"][...], want)
        np.testing.assert_array_equal(f["y"][...], np.arange(5))
    # The object carries the token of the publish that made it.
    assert "arcapublish" in client.head_object(Bucket=BUCKET, Key="large.arca")["Metadata"]
    # Parts below S3's 5 MiB, or a threshold of 0, are refused at open.
    for bad in ({"part_size": MiB}, {"part_size": 6 << 30}, {"multipart_threshold": 0}):
        with pytest.raises(ValueError, match="part_size|multipart_threshold"):
            arca.File(url, "a", storage_options={**opts, **bad})


def test_s3_of_two_multipart_writers_one_wins_and_the_other_keeps_its_file(s3, tmp_path):
    client, tally, opts = s3
    p = tmp_path / "base.arca"
    make_file(p)
    base = p.read_bytes()
    stage = tmp_path / "stage"
    stage.mkdir()
    o = multipart_opts(opts, staging_dir=str(stage))
    for round_ in range(10):
        key = f"mrace-{round_}.arca"
        put(s3, key, base)
        url, path = f"s3://{BUCKET}/{key}", f"/{BUCKET}/{key}"
        old = etag_of(s3, key)
        writers = [arca.File(url, "a", storage_options=o) for _ in range(2)]
        for i, f in enumerate(writers):
            f.create_dataset(f"by{i}", data=big(10 * round_ + i))
        go = threading.Barrier(2)
        results = [None, None]

        def commit(i):
            go.wait()
            try:
                writers[i].flush()
                results[i] = "ok"
            except arca.ConflictError as e:
                results[i] = e

        threads = [threading.Thread(target=commit, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(type(r).__name__ for r in results) == ["ConflictError", "str"], results
        w = results.index("ok")
        lost = 1 - w
        # Both sent their parts and a completion If-Match the ETag opened.
        assert tally.completes_to(path) == [(None, old)] * 2
        assert [f.io_stats()["parts"] for f in writers] == [3, 3]
        # The refused upload was aborted: no parts left stored.
        assert open_uploads(client) == []
        staged = [s for s in stage.rglob("*.arca") if str(s) in str(results[lost])]
        assert len(staged) == 1, str(results[lost])
        with arca.File(url, "r", storage_options=opts) as f:
            assert f"by{w}" in f and f"by{lost}" not in f
            np.testing.assert_array_equal(f[f"by{w}"][...], big(10 * round_ + w))
        with pytest.raises(arca.ConflictError):
            writers[lost].close()
        writers[w].close()
        with arca.File(staged[0], "r") as f:
            np.testing.assert_array_equal(f[f"by{lost}"][...], big(10 * round_ + lost))
        shutil.rmtree(staged[0].parent)
        assert open_uploads(client) == []


def test_s3_a_multipart_create_over_an_existing_key_conflicts_and_leaves_it(s3, tmp_path):
    client, tally, opts = s3
    o = multipart_opts(opts)
    url, path = f"s3://{BUCKET}/mlate.arca", f"/{BUCKET}/mlate.arca"
    f = arca.File(url, "x", storage_options=o)
    f.create_dataset("x", data=big(2))
    put(s3, "mlate.arca", b"first")
    with pytest.raises(arca.ConflictError, match="created the object first") as e:
        f.close()
    assert tally.completes_to(path) == [("*", None)]
    assert client.get_object(Bucket=BUCKET, Key="mlate.arca")["Body"].read() == b"first"
    assert open_uploads(client) == []
    kept = str(e.value).rsplit("kept at ", 1)[1]
    with arca.File(kept, "r") as g:
        np.testing.assert_array_equal(g["x"][...], big(2))
    shutil.rmtree(os.path.dirname(kept))


def test_s3_a_refused_completion_leaves_the_old_object_byte_identical(s3, tmp_path):
    client, tally, opts = s3
    p = tmp_path / "o.arca"
    make_file(p)
    put(s3, "mold.arca", p.read_bytes())
    url, path = f"s3://{BUCKET}/mold.arca", f"/{BUCKET}/mold.arca"
    f = arca.File(url, "a", storage_options=multipart_opts(opts))
    f.create_dataset("x", data=big(3))
    # Replaced by another writer after this one opened it.
    put(s3, "mold.arca", b"another writer's bytes")
    other = etag_of(s3, "mold.arca")
    with pytest.raises(arca.ConflictError) as e:
        f.flush()
    assert f.io_stats()["parts"] == 3 and f.io_stats()["completes"] == 1
    assert client.get_object(Bucket=BUCKET, Key="mold.arca")["Body"].read() == \
        b"another writer's bytes"
    assert etag_of(s3, "mold.arca") == other
    assert open_uploads(client) == []
    with pytest.raises(arca.ConflictError):
        f.close()
    _remove_kept(str(e.value))


def test_s3_a_contended_completion_is_sent_again(s3, tmp_path):
    client, tally, opts = s3
    url, path = f"s3://{BUCKET}/mbusy.arca", f"/{BUCKET}/mbusy.arca"
    tally.busy[path] = 1
    with arca.File(url, "w", storage_options=multipart_opts(opts)) as f:
        f.create_dataset("x", data=big(4))
        f.flush()
        # 409 ConditionalRequestConflict, then the same completion again.
        assert (f.io_stats()["parts"], f.io_stats()["completes"]) == (3, 2)
    assert tally.completes_to(path)[:2] == [("*", None)] * 2
    assert open_uploads(client) == []
    with arca.File(url, "r", storage_options=opts) as f:
        np.testing.assert_array_equal(f["x"][...], big(4))


def test_s3_a_publish_whose_answer_was_lost_is_not_a_conflict_with_itself(s3, tmp_path):
    client, tally, opts = s3
    o = multipart_opts(opts, max_retries=0)
    for key, data in (("lost-put.arca", np.arange(10)), ("lost-mp.arca", big(5))):
        url, path = f"s3://{BUCKET}/{key}", f"/{BUCKET}/{key}"
        tally.lose.add(path)
        try:
            f = arca.File(url, "w", storage_options=o)
            f.create_dataset("x", data=data)
            before = f.io_stats()["requests"]
            # Made, its answer lost (a 500): one HEAD finds this publish's
            # token on the object, and the commit succeeds.
            f.flush()
            assert f.io_stats()["requests"] == before + 1
        finally:
            tally.lose.discard(path)
        made = etag_of(s3, key)
        f.create_dataset("y", data=np.arange(3))
        f.close()
        # The next publish was conditional on the object the lost one made.
        conds = tally.puts_to(path) + tally.completes_to(path)
        assert conds == [("*", None), (None, made)], conds
        with arca.File(url, "r", storage_options=opts) as g:
            np.testing.assert_array_equal(g["x"][...], data)
            assert "y" in g
    assert open_uploads(client) == []
