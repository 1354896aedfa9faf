"""Run h5py's own high-level test modules against arca.

The modules are taken from the installed h5py (its ``tests/`` folder), copied
into a build directory and rewritten so that ``h5py`` names arca:

* ``import h5py`` / ``import h5py as h5`` / ``from h5py import X`` bind arca;
* libhdf5's low-level modules (``h5t``, ``h5a``, ``h5s``, ...) bind a
  ``LowLevel`` placeholder whose every use raises ``LowLevelCall``, so a test
  that reaches into libhdf5 fails loudly instead of passing by accident;
  of ``h5d`` only its constants answer (``arca.h5d``, also what
  ``h5py.h5d`` is after ``import h5py``);
* h5py's private helpers the tests import (``h5py._hl.base.product``,
  ``phil``, ...) come from ``shim.py`` beside this file.

Tests listed in ``excluded.txt`` (one per line, ``module::Class::test  reason``)
are deselected: they need libhdf5 itself. Tests listed the same way in
``pending.txt`` are features arca does not have yet: they run as strict
expected failures, so one that starts to pass fails the run until it leaves
the list. Every other test must pass. Usage::

    python run.py [--build DIR] [--list-failures] [pytest args...]
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

# The high-level modules the suite runs (h5py's tests/ folder names them so).
MODULES = [
    "test_attribute_create.py",
    "test_attrs.py",
    "test_attrs_data.py",
    "test_base.py",
    "test_big_endian_file.py",
    "test_dataset.py",
    "test_dataset_getitem.py",
    "test_datatype.py",
    "test_dimension_scales.py",
    "test_dims_dimensionproxy.py",
    "test_dtype.py",
    "test_file.py",
    "test_file2.py",
    "test_filters.py",
    "test_group.py",
    "test_selections.py",
    "test_slicing.py",
    "test_vds/test_highlevel_vds.py",
    "test_vds/test_virtual_source.py",
]
SUPPORT = ["common.py", "conftest.py", "data_files"]
LOW_LEVEL = {
    "h5", "h5a", "h5d", "h5f", "h5fd", "h5g", "h5i", "h5l", "h5o", "h5p",
    "h5pl", "h5r", "h5s", "h5t", "h5z", "_objects", "_conv", "_proxy",
}


def h5py_tests() -> Path:
    out = subprocess.run(
        [sys.executable, "-c", "import h5py.tests, os; print(os.path.dirname(h5py.tests.__file__))"],
        check=True, capture_output=True, text=True,
    )
    return Path(out.stdout.strip())


def _from_import(mod: str, names: str, indent: str) -> str:
    """``from h5py<mod> import names`` rewritten for arca."""
    parts = [n.strip() for n in names.strip("()").split(",") if n.strip()]
    lines = []
    for part in parts:
        name, _, alias = part.partition(" as ")
        alias = alias.strip() or name.strip()
        name = name.strip()
        if mod == "" and name in LOW_LEVEL:
            lines.append(f"{indent}{alias} = _arca_shim.module('h5py.{name}')")
        elif mod == "":
            lines.append(f"{indent}from arca import {name} as {alias}")
        else:
            lines.append(f"{indent}{alias} = _arca_shim.private('h5py{mod}', '{name}')")
    return "\n".join(lines)


FROM_RE = re.compile(
    r"^(?P<indent>[ \t]*)from (?P<mod>h5py|\.\.+)(?P<sub>[\w.]*) import (?P<names>\([^)]*\)|[^\n#]+)",
    re.M,
)
IMPORT_RE = re.compile(r"^(?P<indent>[ \t]*)import h5py(?P<sub>[\w.]*)(?: as (?P<alias>\w+))?[ \t]*$", re.M)


def rewrite(src: str, depth: int = 0) -> str:
    """``src`` of a module ``depth`` packages below the tests' own
    (``test_vds/`` is 1), imports rewritten for arca."""

    def from_sub(m):
        mod, sub = m["mod"], m["sub"]
        if mod.startswith(".") and len(mod) <= depth + 1:
            # Relative to the tests' own package, which is copied as is.
            return m[0]
        if mod.startswith(".."):
            # `from .. import h5t`, `from ..h5py_warnings import X`, `from ..._hl.vds import X`
            sub = "." + sub.lstrip(".") if sub else ""
            sub = sub.replace(".tests", "")
        names = m["names"].strip()
        if mod == "h5py" and sub.startswith(".") and sub[1:].split(".")[0] in LOW_LEVEL:
            return "\n".join(
                f"{m['indent']}{n.strip().partition(' as ')[2].strip() or n.strip()} = "
                f"_arca_shim.low_level('h5py{sub}', '{n.strip().partition(' as ')[0]}')"
                for n in names.strip("()").split(",") if n.strip()
            )
        return _from_import(sub, names, m["indent"])

    def import_sub(m):
        alias = m["alias"] or "h5py"
        sub = m["sub"]
        if not sub:
            return f"{m['indent']}import arca as {alias}"
        if m["alias"]:
            return f"{m['indent']}{alias} = _arca_shim.module('h5py{sub}')"
        return f"{m['indent']}import arca as h5py"

    out = FROM_RE.sub(from_sub, src)
    out = IMPORT_RE.sub(import_sub, out)
    return "import _arca_shim\n" + out


def build(dest: Path) -> Path:
    src = h5py_tests()
    pkg = dest / "h5py_tests"
    if pkg.exists():
        shutil.rmtree(pkg)
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "test_vds").mkdir()
    (pkg / "test_vds" / "__init__.py").write_text("")
    shutil.copy(HERE / "shim.py", dest / "_arca_shim.py")
    shutil.copy(HERE / "pending_plugin.py", dest / "_arca_pending.py")
    # A whole module pending (it fails as it is imported) is not run at all.
    waiting = {t for t in listed("pending.txt") if "::" not in t}
    for name in SUPPORT + [m for m in MODULES if m not in waiting]:
        s = src / name
        d = pkg / name
        if s.is_dir():
            shutil.copytree(s, d)
        else:
            d.write_text(rewrite(s.read_text(), name.count("/")))
    return pkg


def listed(name: str) -> dict:
    """``{test: reason}`` from ``excluded.txt`` or ``pending.txt``."""
    out = {}
    path = HERE / name
    if not path.exists():
        return out
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        test, _, reason = line.partition("  ")
        out[test.strip()] = reason.strip()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.environ.get("ARCA_H5PY_SUITE_DIR", "target/h5py-suite"))
    ap.add_argument("--all", action="store_true", help="run the excluded tests too")
    args, rest = ap.parse_known_args()
    dest = Path(args.build).resolve()
    pkg = build(dest)
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--rootdir", str(dest), "-q"]
    # Options alone run the whole suite; a path or node id narrows it.
    whole = not any(a.startswith("h5py_tests") or ".py" in a for a in rest)
    if whole:
        rest = rest + ["h5py_tests"]
    # -k and -m narrow the run too: the stale-entry check needs all of it.
    whole = whole and not any(a in ("-k", "-m") or a.startswith(("-k", "-m")) for a in rest)
    marker = dest / "_arca_whole_run"
    marker.unlink(missing_ok=True)
    if not args.all:
        pending = listed("pending.txt")
        for module, reason in pending.items():
            if "::" not in module:
                print(f"pending module {module}: {reason}")
        (dest / "_arca_excluded.json").write_text(json.dumps(listed("excluded.txt")))
        (dest / "_arca_pending.json").write_text(json.dumps(pending))
        if whole:
            marker.touch()
        cmd += ["-p", "_arca_pending"]
    cmd += rest
    env = dict(os.environ, PYTHONPATH=str(dest) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.call(cmd, cwd=dest, env=env)


if __name__ == "__main__":
    sys.exit(main())
