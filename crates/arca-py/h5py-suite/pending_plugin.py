"""pytest plugin of the h5py suite (see run.py): the tests in excluded.txt
(they need libhdf5 itself) are deselected, and the tests in pending.txt
(features arca does not have yet) run as strict expected failures.

Entries match a test's node id exactly; an entry without a ``[...]``
parameter part also matches every parametrization of that test. pytest's
own ``--deselect`` matches by prefix, which would drop ``test_vlen_bytes_fill``
along with ``test_vlen_bytes``. When the whole suite runs, an entry that
matches no collected test fails the run: the lists must not go stale."""

import json
from pathlib import Path

import pytest

_HERE = Path(__file__).parent
_EXCLUDED = json.loads((_HERE / "_arca_excluded.json").read_text())
_PENDING = json.loads((_HERE / "_arca_pending.json").read_text())
_WHOLE = (_HERE / "_arca_whole_run").exists()


def _lookup(table, node):
    if node in table:
        return node
    base = node.split("[", 1)[0]
    return base if base in table else None


def pytest_collection_modifyitems(config, items):
    keep, dropped, used = [], [], set()
    for item in items:
        node = item.nodeid.split("h5py_tests/", 1)[-1]
        hit = _lookup(_EXCLUDED, node)
        if hit is not None:
            used.add(hit)
            dropped.append(item)
            continue
        hit = _lookup(_PENDING, node)
        if hit is not None:
            used.add(hit)
            item.add_marker(pytest.mark.xfail(reason=f"pending: {_PENDING[hit]}", strict=True))
        keep.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep
    if _WHOLE:
        stale = sorted(t for t in list(_EXCLUDED) + list(_PENDING) if "::" in t and t not in used)
        if stale:
            raise pytest.UsageError("excluded.txt/pending.txt name tests that were not collected: "
                                    + ", ".join(stale))
