"""run_cluster_work: the one way a module fails on cluster errors."""

import os
import signal

import pytest

from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.api_errors import ClusterError
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.runner import clean_up_on_sigterm, run_cluster_work


class Failed(Exception):
    pass


class FakeModule:
    def __init__(self):
        self.failed = None

    def fail_json(self, **kwargs):
        self.failed = kwargs
        raise Failed()

    def fail_from_exception(self, exc):
        self.failed = {"msg": str(exc), "from_exception": True}
        raise Failed()


def raising(exc):
    def work():
        raise exc
    return work


def test_returns_the_work_result():
    assert run_cluster_work(FakeModule(), "Reading", lambda: 42) == 42


def test_collection_errors_fail_with_their_own_message():
    module = FakeModule()
    with pytest.raises(Failed):
        run_cluster_work(module, "Reading", raising(ClusterError("NicClusterPolicy is not served")))
    assert module.failed == {"msg": "NicClusterPolicy is not served", "from_exception": True}


def test_unexpected_errors_say_what_the_task_was_doing_and_keep_the_traceback():
    module = FakeModule()
    with pytest.raises(Failed):
        run_cluster_work(module, "Failed to read the cluster", raising(KeyError("items")))
    assert module.failed["msg"] == "Failed to read the cluster: 'items'"
    assert "KeyError" in module.failed["exception"]


def test_a_handler_reports_its_errors_in_its_own_words_first():
    module = FakeModule()
    handlers = [((ValueError,), lambda exc: module.fail_json(msg="Invalid input: %s" % exc))]
    with pytest.raises(Failed):
        run_cluster_work(module, "Reading", raising(ValueError("bad selector")), handlers=handlers)
    assert module.failed == {"msg": "Invalid input: bad selector"}


def test_a_handler_that_returns_does_not_hide_the_error():
    with pytest.raises(ValueError):
        run_cluster_work(FakeModule(), "Reading", raising(ValueError("x")), handlers=[((ValueError,), lambda exc: None)])


def test_sigterm_becomes_system_exit_so_finally_blocks_run():
    previous = signal.getsignal(signal.SIGTERM)
    cleaned = []
    try:
        clean_up_on_sigterm()
        with pytest.raises(SystemExit, match="stopped by signal %d" % signal.SIGTERM):
            try:
                os.kill(os.getpid(), signal.SIGTERM)
            finally:
                cleaned.append(True)
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert cleaned == [True]
