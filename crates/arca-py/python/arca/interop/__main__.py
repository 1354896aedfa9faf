"""``python -m arca.interop import|export SRC DST [--strict] [--force]``."""

import sys

from ._cli import main

sys.exit(main())
