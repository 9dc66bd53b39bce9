"""Pytest fixtures for whoever tests against the simulated cluster (the simulator's own tests and the collection's):
import them into a conftest.py. Kept here so that both suites start clusters the same way."""

import os

import pytest


def data_dir(var, default):
    """The directory named by environment variable var, else default; fails the test when it does not exist."""
    path = os.environ.get(var) or default
    if not os.path.isdir(path):
        pytest.fail("%s=%s is not a directory: the test data is missing" % (var, path), pytrace=False)
    return path


@pytest.fixture(scope="session")
def crd_dir():
    """Directory of upstream CRD YAML files in the repository (GPUDIRECT_CRD_DIR overrides)."""
    from simulator.crds import DEFAULT_CRD_DIR

    return data_dir("GPUDIRECT_CRD_DIR", DEFAULT_CRD_DIR)


@pytest.fixture
def sim_factory(crd_dir):
    """Callable taking SimulatedCluster keyword arguments; returns a started cluster, stopped at teardown.
    Teardown fails the test when a simulated operator raised an unexpected exception (cluster.errors)."""
    from simulator import SimulatedCluster

    started = []

    def make(**kwargs):
        kwargs.setdefault("crd_dir", crd_dir)
        cluster = SimulatedCluster(**kwargs)
        cluster.start()
        started.append(cluster)
        return cluster

    yield make
    errors = []
    for cluster in reversed(started):
        cluster.stop()
        errors.extend(cluster.errors)
    if errors:
        pytest.fail("the simulated cluster had unexpected errors in its controllers (see the log):\n"
                    + "\n".join("%r: %r" % (fn, exc) for fn, exc in errors), pytrace=False)


@pytest.fixture
def sim(sim_factory):
    """A started SimulatedCluster with the default profile and the simulated operators."""
    return sim_factory()
