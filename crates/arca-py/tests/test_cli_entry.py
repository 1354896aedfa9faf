"""The ``arca`` command the package installs: the same command as the Rust
binary, found on the environment's PATH, and ``arca import``/``export``
working with no ``ARCA_PYTHON`` because they use the interpreter the entry
point was installed with."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

import arca

BIN = Path(sys.prefix) / "bin"


def _env():
    # Only the environment's bin and the system's: no ARCA_PYTHON, no other python3.
    env = {k: v for k, v in os.environ.items() if k not in ("ARCA_PYTHON", "PYTHONHOME")}
    env["PATH"] = os.pathsep.join([str(BIN), "/usr/bin", "/bin"])
    env["VIRTUAL_ENV"] = sys.prefix
    return env


def _arca(*args, cwd):
    return subprocess.run(["arca", *args], cwd=cwd, env=_env(), capture_output=True, text=True)


def test_the_command_is_on_the_environments_path():
    assert shutil.which("arca", path=_env()["PATH"]) == str(BIN / "arca")
    out = subprocess.run(["arca", "--version"], env=_env(), capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("arca ")


def test_import_export_round_trip_with_no_variable_set(tmp_path):
    with h5py.File(tmp_path / "x.h5", "w") as f:
        f["a"] = np.arange(10, dtype="i4")
        f.create_dataset("g/b", data=np.ones((3, 4)), chunks=(1, 4), compression="gzip")
        f["g"].attrs["units"] = "m"
    r = _arca("import", "x.h5", "x.arca", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    # The conversion's progress lines drive the command's bar (hidden off
    # a terminal) and never reach the user; its other lines do.
    assert "\x1e" not in r.stderr and "import: x.h5 -> x.arca" in r.stderr
    r = _arca("export", "x.arca", "y.h5", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    with arca.File(tmp_path / "x.arca") as f:
        np.testing.assert_array_equal(f["a"][...], np.arange(10, dtype="i4"))
        assert f["g"].attrs["units"] == "m"
    if shutil.which("h5diff"):
        assert subprocess.run(["h5diff", "x.h5", "y.h5"], cwd=tmp_path).returncode == 0
    with h5py.File(tmp_path / "y.h5") as f:
        np.testing.assert_array_equal(f["g/b"][...], np.ones((3, 4)))


def test_errors_and_statuses_are_the_binarys(tmp_path):
    (tmp_path / "junk.arca").write_bytes(b"not an arca file" * 64)
    r = _arca("check", "junk.arca", cwd=tmp_path)
    assert r.returncode == 2 and "arca:" in r.stderr
    r = _arca("no-such-command", cwd=tmp_path)
    assert r.returncode == 1 and "unrecognized subcommand" in r.stderr
    r = _arca("ls", "missing.arca", cwd=tmp_path)
    assert r.returncode == 1


def test_a_closed_pipe_is_not_an_error(tmp_path):
    path = tmp_path / "big.arca"
    with arca.File(path, "w") as f:
        f["x"] = np.arange(200_000)
    p = subprocess.Popen(["arca", "dump", "--max-elements", "0", str(path)],
                         env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.readline()
    p.stdout.close()
    assert p.wait() == 0, p.stderr.read()


@pytest.mark.parametrize("argv", [["arca", "--help"]])
def test_help_names_the_command_arca(argv):
    out = subprocess.run(argv, env=_env(), capture_output=True, text=True)
    assert out.returncode == 0 and "Usage: arca" in out.stdout


def test_the_conversion_reports_progress_for_the_command_to_draw(tmp_path):
    with h5py.File(tmp_path / "x.h5", "w") as f:
        for i in range(5):
            f[f"d{i}"] = np.arange(100_000, dtype="f8") * i
    r = subprocess.run([sys.executable, "-m", "arca.interop", "import", "x.h5", "x.arca",
                        "--progress-lines"], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    # Lines cut at "\n" only: splitlines would cut at the mark's separator.
    marks = [line.split(" ")[1:] for line in r.stderr.split("\n")
             if line.startswith("\x1earca-progress ")]
    done = [int(d) for d, _ in marks]
    total = {int(t) for _, t in marks}
    assert len(marks) >= 2 and done == sorted(done), marks
    assert len(total) == 1 and done[-1] == total.pop() > 0, marks
