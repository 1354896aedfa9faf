"""The command line: ``python -m arca.interop import|export SRC DST
[--strict] [--force] [--quiet]``, which ``arca import`` and ``arca export``
run."""

import argparse
import sys

from ._common import ConversionError
from ._exporter import export_hdf5
from ._importer import import_hdf5


def main(argv=None):
    """``python -m arca.interop import|export SRC DST [--strict] [--force]``."""
    p = argparse.ArgumentParser(prog="arca", description="HDF5/netCDF4 files in and out")
    p.add_argument("command", choices=["import", "export"])
    p.add_argument("src")
    p.add_argument("dst")
    p.add_argument("--strict", action="store_true",
                   help="refuse a file that would not map one to one")
    p.add_argument("--force", action="store_true", help="replace an existing destination")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--progress-lines", action="store_true",
                   help=f"report progress as lines '{PROGRESS_MARK}DONE TOTAL' on stderr, "
                   "for the arca command to draw")
    a = p.parse_args(argv)
    if a.quiet:
        bar = None
    elif a.progress_lines:
        bar = _Lines()
    else:
        bar = _Bar() if sys.stderr.isatty() else None
    try:
        if a.command == "import":
            report = import_hdf5(a.src, a.dst, strict=a.strict, progress=bar, force=a.force)
        else:
            report = export_hdf5(a.src, a.dst, progress=bar, force=a.force)
    except ConversionError as e:
        print(f"arca {a.command}: refused (--strict): {e}", file=sys.stderr)
        return 2
    except (OSError, ValueError, TypeError, KeyError) as e:
        print(f"arca {a.command}: {a.src}: {e}", file=sys.stderr)
        return 1
    finally:
        if bar is not None:
            bar.close()
    for path, note in report:
        print(f"{path}: {note}")
    print(f"{a.command}: {a.src} -> {a.dst}" + (f" ({len(report)} notes)" if report else ""),
          file=sys.stderr)
    return 0


#: The start of a progress line (``--progress-lines``): a record separator
#: no message begins with.
PROGRESS_MARK = "\x1earca-progress "


class _Progress:
    """Progress on stderr, shown at most once per percent."""

    def __init__(self):
        self.last = -1

    def __call__(self, done, total):
        pct = int(100 * done / max(total, 1))
        if pct != self.last:
            self.last = pct
            sys.stderr.write(self.line(pct, done, total))
            sys.stderr.flush()

    def close(self):
        pass


class _Lines(_Progress):
    """Marked lines, for the ``arca`` command to draw its bar from."""

    def line(self, pct, done, total):
        return f"{PROGRESS_MARK}{done} {total}\n"


class _Bar(_Progress):
    """A one-line display, rewritten in place."""

    def line(self, pct, done, total):
        return f"\r{pct:3d}% ({done >> 20} of {total >> 20} MiB)"

    def close(self):
        if self.last >= 0:
            sys.stderr.write("\n")
