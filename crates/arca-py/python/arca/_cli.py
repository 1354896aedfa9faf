"""The ``arca`` command, installed with the package.

``pip install arca`` puts ``arca`` on the environment's PATH; it is the same
command as the Rust binary (``arca ls``, ``dump``, ``check``, ``import``,
``export``, ...), run inside the extension. ``arca import``/``export`` use
this interpreter, so they find this package and its h5py without
``ARCA_PYTHON`` (which still overrides)::

    $ arca import run.h5 run.arca && arca ls -r run.arca
"""

import os
import signal
import sys

from . import _native
from ._view import ASSETS


def main(argv=None):
    """Run ``arca`` with ``argv`` (default ``sys.argv``) and exit with its status."""
    argv = list(sys.argv if argv is None else argv)
    # Behave as the native program does: Ctrl-C stops it at once rather than
    # waiting for Python to see a KeyboardInterrupt after the command returns.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    sys.stdout.flush()
    # `arca view` serves the viewer app this package ships.
    os.environ.setdefault("ARCA_VIEW_ASSETS", ASSETS)
    sys.exit(_native.cli_main(["arca"] + argv[1:], sys.executable))
