"""``arca.view`` from Python: the server starts on a free port, serves the
app and h5grove's API with the token, refuses requests without it, and
stops when asked; ``arca view`` from the package's command finds the app."""

import http.client
import json
import os
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request

import numpy as np
import pytest

import arca


def _get(url):
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


@pytest.fixture
def small(tmp_path):
    path = tmp_path / "small.arca"
    with arca.File(path, "w") as f:
        f["g/x"] = np.arange(6, dtype="i4").reshape(2, 3)
        f["g"].attrs["units"] = "m"
    return path


def test_view_without_blocking(small):
    with arca.File(small) as f:
        v = arca.view(f, block=False, browser=False)
    try:
        u = urllib.parse.urlsplit(v.url)
        assert u.hostname == "127.0.0.1" and u.port
        token = urllib.parse.parse_qs(u.query)["token"][0]
        base = f"http://127.0.0.1:{u.port}"
        status, body = _get(f"{base}/api/data/?token={token}&path=/g/x&selection=1")
        assert (status, json.loads(body)) == (200, [3, 4, 5])
        status, body = _get(f"{base}/api/attr/?token={token}&path=/g")
        assert json.loads(body) == {"units": "m"}
        assert _get(f"{base}/api/meta/?path=/")[0] == 403
        status, page = _get(v.url)
        assert status == 200 and b"<div id=\"root\">" in page
        assert not v.wait(0)
    finally:
        v.stop()
    assert v.wait(0)
    # No answer: refused, or (while the listener closes) dropped unanswered.
    with pytest.raises((OSError, http.client.HTTPException)):
        urllib.request.urlopen(f"{base}/api/?token={token}", timeout=10)


def test_view_needs_a_file_on_disk(tmp_path):
    with pytest.raises(FileNotFoundError):
        arca.view(tmp_path / "missing.arca", block=False, browser=False)


def test_the_command_serves_the_packaged_app(small):
    # The package's `arca` entry point, run by this interpreter.
    entry = "import sys; from arca._cli import main; main(['arca'] + sys.argv[1:])"
    env = {k: v for k, v in os.environ.items() if k != "ARCA_VIEW_ASSETS"}
    p = subprocess.Popen([sys.executable, "-c", entry, "view", "--no-browser", str(small)],
                         stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True, env=env)
    try:
        url = next(line.strip() for line in p.stdout if line.startswith("http://"))
        status, page = _get(url)
        assert status == 200 and b"<div id=\"root\">" in page
    finally:
        p.terminate()
        p.wait(timeout=30)
        p.stdout.close()
