"""A real full disk: a small tmpfs filled while arca writes. The writer gets
``OSError(ENOSPC)``, every commit that returned is still there when the file
is reopened (changes not yet committed are not: the file stays at its last
commit), the file passes ``check``, and writing resumes once space is freed.
Mounting needs root (CI runs as root)."""

import errno
import os
import subprocess

import numpy as np
import pytest

import arca

MIB = 1 << 20


@pytest.fixture
def small_fs(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    d = tmp_path / "fs"
    d.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(d)], check=True)
    try:
        yield d
    finally:
        subprocess.run(["umount", "-l", str(d)], check=False)


def block(i):
    return np.full(128 * 1024, i, dtype="f4")  # 512 KiB


def test_a_full_disk_loses_nothing_and_writing_resumes(small_fs):
    path = small_fs / "run.arca"
    filler = small_fs / "filler"
    f = arca.File(path, "w")
    f["kept"] = np.arange(MIB // 8, dtype="f8")
    f.flush()
    # Leave about 3 MiB free.
    st = os.statvfs(small_fs)
    filler.write_bytes(b"\0" * (st.f_bavail * st.f_frsize - 3 * MIB))
    written, failure = [], None
    for i in range(64):
        try:
            # Each its own commit: what returned is committed.
            with f.transaction():
                f.create_dataset(f"d{i:02}", data=block(i), chunks=(32 * 1024,))
            written.append(i)
        except OSError as e:
            failure = e
            break
    assert failure is not None, "the disk never filled"
    assert failure.errno == errno.ENOSPC or isinstance(failure, arca.ArcaError), failure
    # The handle goes on or refuses, saying so; either way it can be dropped.
    try:
        f.attrs["after"] = 1
    except OSError as e:
        assert isinstance(e, arca.PoisonedError) or e.errno == errno.ENOSPC, e
    try:
        f.close()
    except OSError:
        pass
    # Reopened as a reader would: everything that returned is there.
    with arca.File(path, "r") as g:
        g.check()
        np.testing.assert_array_equal(g["kept"][...], np.arange(MIB // 8, dtype="f8"))
        for i in written:
            np.testing.assert_array_equal(g[f"d{i:02}"][...], block(i))
    # Space freed: the same file takes writes again.
    filler.unlink()
    with arca.File(path, "r+") as g:
        for i in range(len(written), len(written) + 4):
            g.create_dataset(f"d{i:02}", data=block(i), chunks=(32 * 1024,))
        g.check()
    with arca.File(path, "r") as g:
        g.check()
        for i in range(len(written) + 4):
            np.testing.assert_array_equal(g[f"d{i:02}"][...], block(i))
