"""Shared pytest fixtures: the simulated OpenShift API server (from the simulator package) and the capture directory."""

import pytest

from simulator.pytest_fixtures import crd_dir, data_dir, sim, sim_factory  # noqa: F401 pylint: disable=unused-import


@pytest.fixture(scope="session")
def fixtures_dir():
    """Directory of real hardware captures in the repository (GPUDIRECT_FIXTURES_DIR overrides)."""
    from ansible_collections.gpudirect.openshift.tests.unit.fixtures.synthetic_sysfs import CAPTURES_DIR

    return data_dir("GPUDIRECT_FIXTURES_DIR", CAPTURES_DIR)


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite the golden render files under tests/unit/golden instead of comparing them "
                          "(GPUDIRECT_UPDATE_GOLDEN=1 does the same); review the diff before committing")


@pytest.fixture(scope="session")
def update_golden(request):
    """True when the golden files are to be rewritten rather than compared (docs/contributing.md)."""
    import os

    return bool(request.config.getoption("--update-golden")) or os.environ.get("GPUDIRECT_UPDATE_GOLDEN", "") not in ("", "0")


def pytest_collection_modifyitems(config, items):
    """GPUDIRECT_TEST_ORDER=reverse runs the collected tests last to first, random:<seed> in a seeded random order, so
    that a test that needs another one to run first fails here (no plugin needed: docs/contributing.md). Module- and
    session-scoped fixtures are then set up and torn down more often; the results must not change."""
    import os
    import random

    order = os.environ.get("GPUDIRECT_TEST_ORDER", "")
    if order == "reverse":
        items.reverse()
    elif order.startswith("random:"):
        random.Random(order.split(":", 1)[1]).shuffle(items)
    elif order:
        raise pytest.UsageError("GPUDIRECT_TEST_ORDER=%r: use reverse or random:<seed>" % order)
