import os

import pytest

# Everything the tests execute runs at the smoke profile and on one thread per process (the cores are shared).
os.environ.setdefault("HYBRID_NBS_PROFILE", "smoke")
os.environ.setdefault("NUMBA_NUM_THREADS", "2")


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False,
                     help="also run the tests marked slow (make test and CI pass it)")


def pytest_collection_modifyitems(config, items):
    # A developer's plain `pytest` (or `-m "not notebooks and not docs"`) is the fast loop; the slow tests (kills,
    # trainings, clusters: about four of its five minutes) run with --runslow, or when `-m` names them.
    if config.getoption("--runslow") or "slow" in (config.getoption("markexpr") or ""):
        return
    skip = pytest.mark.skip(reason="marked slow: pass --runslow (make test does)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
