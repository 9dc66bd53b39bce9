"""Shared pytest fixtures: the simulated OpenShift API server (from the simulator package) and the capture directory."""

import pytest

from simulator.pytest_fixtures import crd_dir, data_dir, sim, sim_factory  # noqa: F401 pylint: disable=unused-import


@pytest.fixture(scope="session")
def fixtures_dir():
    """Directory of real hardware captures in the repository (GPUDIRECT_FIXTURES_DIR overrides)."""
    from ansible_collections.gpudirect.openshift.tests.unit.fixtures.synthetic_sysfs import CAPTURES_DIR

    return data_dir("GPUDIRECT_FIXTURES_DIR", CAPTURES_DIR)
