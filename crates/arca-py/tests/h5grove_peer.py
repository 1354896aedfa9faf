"""h5grove's own tornado adapter serving one directory under ``/api/``, on
127.0.0.1 and a free port it prints once listening: the reference the
``arca view`` conformance test compares against.

    python h5grove_peer.py DIR
"""

import sys

import tornado.httpserver
import tornado.ioloop
import tornado.netutil
import tornado.web
from h5grove.tornado_utils import get_handlers


def main(base_dir):
    # h5web calls /api/meta/ (trailing slash); h5grove's routes have none.
    handlers = [(r"/api" + url.rstrip("/") + "/?", handler, args)
                for url, handler, args in get_handlers(base_dir)]
    app = tornado.web.Application(handlers)
    sockets = tornado.netutil.bind_sockets(0, "127.0.0.1")
    tornado.httpserver.HTTPServer(app).add_sockets(sockets)
    print(sockets[0].getsockname()[1], flush=True)
    tornado.ioloop.IOLoop.current().start()


if __name__ == "__main__":
    main(sys.argv[1])
