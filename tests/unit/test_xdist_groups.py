"""tests/conftest.py's XdistGroups: under ``-n 2 --dist loadgroup`` a module marked with an xdist group runs on one
worker, so its module-scoped fixture (a converged cluster, in the integration suite) is set up once."""

import os
import subprocess
import sys

GROUPED_MODULE = '''
import os
import pytest

pytestmark = pytest.mark.xdist_group("fleet")


@pytest.fixture(scope="module")
def fleet():
    with open(os.environ["SETUPS_FILE"], "a") as log:
        log.write("fleet\\n")
    yield


@pytest.mark.parametrize("case", range(8))
def test_uses_the_fleet(fleet, case):
    pass
'''

OTHER_MODULE = '''
import pytest


@pytest.mark.parametrize("case", range(8))
def test_alone(case):
    pass
'''

CONFTEST = '''
from ansible_collections.gpudirect.openshift.tests.conftest import XdistGroups


def pytest_configure(config):
    config.pluginmanager.register(XdistGroups(), "gpudirect-xdist-groups")
'''


def test_a_grouped_modules_fixture_is_set_up_once_over_two_workers(tmp_path):
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_grouped.py").write_text(GROUPED_MODULE)
    (tmp_path / "test_other.py").write_text(OTHER_MODULE)
    setups = tmp_path / "setups.txt"
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", "--dist",
                           "loadgroup", str(tmp_path)], cwd=str(tmp_path), capture_output=True, text=True,
                          env=dict(os.environ, SETUPS_FILE=str(setups)), timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "16 passed" in done.stdout, done.stdout
    assert setups.read_text().splitlines() == ["fleet"], done.stdout  # pytest 9.2 without XdistGroups: once a worker
