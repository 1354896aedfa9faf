"""``arca.view``: show a file in the browser, in h5web's viewer, served by
the same server as ``arca view`` (h5grove's HTTP API over arca, a random
token, this machine only)::

    arca.view("run.arca")                     # opens the browser; Ctrl-C stops
    v = arca.view("run.arca", block=False)    # returns at once
    print(v.url)
    v.stop()
"""

import os
import webbrowser

from . import _native

#: The viewer app's built files, shipped in the package.
ASSETS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "viewer")


class Viewer:
    """A running viewer: its ``url`` (token included); ``stop()`` ends it.

    Also a context manager::

        with arca.view("run.arca", block=False, browser=False) as v:
            print(v.url)
    """

    def __init__(self, server):
        self._server = server
        self.url = server.url

    def wait(self, timeout=None):
        """Wait until the viewer stops, or ``timeout`` seconds; True once stopped."""
        return self._server.wait(timeout)

    def stop(self):
        """Stop serving and close the port."""
        self._server.stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    def __repr__(self):
        return f"<arca.Viewer {self.url}>"


def view(file, *, host="127.0.0.1", port=0, browser=True, block=True, assets=None,
         storage_options=None):
    """Show ``file`` (a path, a URL on object storage with its
    ``storage_options`` as :class:`arca.File` takes them, or an
    :class:`arca.File` opened from either: the server opens it again, read
    only, so a URL's options are passed here too) in h5web's viewer in the
    browser.

    The server listens on ``host`` (this machine only by default) and
    ``port`` (0: a free one), and every request must carry the random token
    in the printed address. With ``block=True`` (the default) it runs until
    Ctrl-C; with ``block=False`` it returns a :class:`Viewer` at once.

    >>> v = arca.view("run.arca", block=False, browser=False)  # doctest: +SKIP
    >>> v.url                                                   # doctest: +SKIP
    'http://127.0.0.1:40123/?token=...&file=run.arca'
    >>> v.stop()                                                # doctest: +SKIP
    """
    path = os.fspath(getattr(file, "filename", file))
    storage = [f"{k}={v}" for k, v in (storage_options or {}).items()]
    if not _native.is_url(path) and not os.path.isfile(path):
        raise FileNotFoundError(f"arca.view needs a file on disk or a URL: {path!r}")
    if assets is None and os.path.isfile(os.path.join(ASSETS, "index.html")):
        assets = ASSETS
    viewer = Viewer(_native.ViewServer(path, host, port, assets, storage))
    if browser:
        webbrowser.open(viewer.url)
    if not block:
        return viewer
    print(f"arca view: serving {path} (Ctrl-C to stop)\n{viewer.url}", flush=True)
    try:
        # Short waits, so Python sees Ctrl-C between them.
        while not viewer.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        viewer.stop()
    return None
