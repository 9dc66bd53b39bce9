"""ClusterModule (module_utils/cluster/module_base.py): the one way a cluster module connects, runs and fails, through a
real AnsibleModule (its arguments as Ansible hands them over, its JSON answer on stdout)."""

import json
import os
import signal

import pytest

from ansible.module_utils import basic
from ansible.module_utils._internal import _traceback
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.exceptions import CoreException
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.api_errors import ClusterError
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.module_base import ClusterModule, clean_up_on_sigterm

SPEC = {"name": {"type": "str", "default": "gpu"}}


@pytest.fixture
def module_args(monkeypatch):
    """Give the next AnsibleModule these arguments, as ansible-playbook does on stdin."""
    def give(**args):
        monkeypatch.setattr(basic, "_ANSIBLE_ARGS", json.dumps({"ANSIBLE_MODULE_ARGS": args}).encode())
        monkeypatch.setattr(basic, "_ANSIBLE_PROFILE", "legacy")
        # As ansible-playbook -vvv asks (_ansible_tracebacks_for): failures carry their traceback.
        # (set on the function that the controller's display may have replaced, when another test loaded it).
        monkeypatch.setattr(_traceback, "_is_traceback_enabled", lambda event: event == _traceback.TracebackEvent.ERROR)
        for variable in ("K8S_AUTH_HOST", "K8S_AUTH_API_KEY", "K8S_AUTH_KUBECONFIG", "KUBECONFIG"):
            monkeypatch.delenv(variable, raising=False)
    return give


def answer(capsys, call):
    """The JSON the module printed when ``call`` ended it (fail_json and exit_json both exit)."""
    with pytest.raises(SystemExit):
        call()
    return json.loads(capsys.readouterr().out)


def raising(exc):
    def work():
        raise exc
    return work


def test_the_module_takes_its_own_options_and_the_connection_options(module_args):
    module_args(name="nic", host="https://api.lab.example.com:6443", _ansible_check_mode=True)
    module = ClusterModule(SPEC)
    assert module.options == {"name": "nic"}
    assert module.module.params["host"] == "https://api.lab.example.com:6443"
    assert module.check_mode and module.client_options == {"check_mode": True}


def test_run_returns_the_work_result_without_connecting_when_the_work_needs_no_cluster(module_args):
    # A token over plain http would be refused on connecting: nothing connects unless ``cluster`` is used.
    module_args(host="http://api.lab.example.com:6443", api_key="sha256~token")
    assert ClusterModule(SPEC).run(lambda: 42, "Reading") == 42


def test_the_cluster_is_reached_through_connect_with_its_checks_inside_run(module_args, capsys):
    module_args(host="http://api.lab.example.com:6443", api_key="sha256~token")
    module = ClusterModule(SPEC)
    failed = answer(capsys, lambda: module.run(lambda: module.cluster, "Reading"))
    assert failed["failed"] and failed["msg"].startswith("Refusing to send a bearer token over plain http to http://api.lab")


def test_collection_and_kubernetes_core_errors_fail_with_their_own_message_and_traceback(module_args, capsys):
    module_args()
    module = ClusterModule(SPEC)
    failed = answer(capsys, lambda: module.run(raising(ClusterError("NicClusterPolicy is not served")), "Reading"))
    assert failed["msg"] == "NicClusterPolicy is not served" and "ClusterError" in failed["exception"]
    failed = answer(capsys, lambda: module.run(raising(CoreException("Failed to load kubeconfig")), "Reading",
                                               result=lambda: {"results": ["applied"]}))
    assert failed["msg"] == "Failed to load kubeconfig" and failed["results"] == ["applied"]


def test_unexpected_errors_say_what_the_task_was_doing_and_keep_the_traceback(module_args, capsys):
    module_args()
    module = ClusterModule(SPEC)
    failed = answer(capsys, lambda: module.run(raising(KeyError("items")), "Failed to read the cluster"))
    assert failed["msg"] == "Failed to read the cluster: 'items'" and "KeyError" in failed["exception"]
    where = []

    def work():
        where.append("Pod/x")  # known only once the work has started
        raise KeyError("items")

    failed = answer(capsys, lambda: module.run(work, lambda: "Applying manifests failed at %s" % where[0],
                                               result=lambda: {"results": where}))
    assert failed["msg"] == "Applying manifests failed at Pod/x: 'items'" and failed["results"] == ["Pod/x"]


def test_a_handler_reports_its_errors_in_its_own_words_first(module_args, capsys):
    module_args()
    module = ClusterModule(SPEC)
    handlers = [((ValueError,), lambda exc: module.fail_json(msg="Invalid input: %s" % exc)),
                ((Exception,), lambda exc: module.fail_with_traceback("second: %s" % exc, extra=1))]
    failed = answer(capsys, lambda: module.run(raising(ValueError("bad selector")), "Reading", handlers=handlers))
    assert failed["msg"] == "Invalid input: bad selector"
    failed = answer(capsys, lambda: module.run(raising(ClusterError("gone")), "Reading", handlers=handlers))
    assert failed["msg"] == "second: gone" and failed["extra"] == 1 and "ClusterError" in failed["exception"]


def test_a_handler_that_returns_does_not_hide_the_error(module_args):
    module_args()
    with pytest.raises(ValueError):
        ClusterModule(SPEC).run(raising(ValueError("x")), "Reading", handlers=[((ValueError,), lambda exc: None)])


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
