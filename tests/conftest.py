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


class XdistGroups:
    """``--dist loadgroup`` on pytest 9.2: pytest-xdist 3.8 marks a grouped test by rewriting ``item._nodeid``, which
    pytest 9.2 no longer reads (``Node.nodeid`` is now built from ``item._id``, a ``_pytest.nodeid.NodeId``), so every
    ``xdist_group`` mark was silently ignored and a module's converged fixtures were set up again on each worker that
    ran one of its tests. This gives the grouped tests the ``<id>@<group>`` ids xdist's scheduler splits on. It runs
    last, only on xdist workers asked for loadgroup, and leaves ids that already carry a group alone (an xdist that
    still works)."""

    @staticmethod
    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(config, items):
        if not getattr(config.option, "loadgroup", False):
            return
        from _pytest.nodeid import NodeId  # pylint: disable=import-outside-toplevel

        for item in items:
            groups = sorted({str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
                             for mark in item.iter_markers("xdist_group")})
            if groups and "@" not in item.nodeid:
                item._id = NodeId.parse("%s@%s" % (item.nodeid, "_".join(groups)))  # pylint: disable=protected-access


def pytest_configure(config):
    config.pluginmanager.register(XdistGroups(), "gpudirect-xdist-groups")
