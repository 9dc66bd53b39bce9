"""Transient API errors the collection absorbs (fail-fast issue, points 2-4; simulator issue, point 11): a 5xx
during API discovery, a request that stalls, a 409 on a merge patch, a create answered 504 after it was stored.
Each test makes its fault certain (a counted rule) and checks that it fired, so the verdict does not depend on
timing."""

import os
import subprocess
import time

from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.client import ClusterClient
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import get_api_client

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_a_5xx_during_discovery_is_retried(sim_factory, tmp_path):
    sim = sim_factory(profile="roce-lab")
    version = sim.faults.add(path="/version", code=500, count=1)
    groups = sim.faults.add(path="/apis", code=503, count=1)
    env = dict(os.environ, K8S_AUTH_KUBECONFIG=sim.kubeconfig, ANSIBLE_NOCOLOR="1", HOME=str(tmp_path))
    proc = subprocess.run(["ansible", "localhost", "-m", "gpudirect.openshift.cluster_info"], cwd=ROOT, env=env,
                          capture_output=True, text=True, check=False, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert version.fired == 1 and groups.fired == 1
    assert "openshift:" in proc.stdout and "version: 4." in proc.stdout and "node_count: 5" in proc.stdout


def test_a_stalled_request_is_cut_and_retried(sim_factory):
    sim = sim_factory(profile=None, controllers=False)
    stall = sim.faults.add(verb="list", plural="configmaps", latency_ms=120000, count=1)
    cluster = ClusterClient(get_api_client(kubeconfig=sim.kubeconfig), request_timeout=(5, 1))
    resource = cluster.require("v1", "ConfigMap")
    started = time.monotonic()
    items, _rv = cluster.list(resource, namespace="default")
    assert stall.fired == 1 and items == []
    # Not a speed target: without a read timeout this call would wait out the whole two-minute stall.
    assert time.monotonic() - started < 60


def test_a_409_on_a_merge_patch_sends_the_patch_again(sim_factory):
    sim = sim_factory(profile=None, controllers=False)
    cluster = ClusterClient(get_api_client(kubeconfig=sim.kubeconfig))
    resource = cluster.require("v1", "ConfigMap")
    cluster.create(resource, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"},
                              "data": {"a": "1"}})
    conflict = sim.faults.add(verb="patch", plural="configmaps", code=409, count=2,
                              message='Operation cannot be fulfilled on configmaps "c": the object has been modified')
    mark = sim.mark()
    after = cluster.merge_patch(resource, "c", "default", {"data": {"a": "2"}})
    assert conflict.fired == 2 and after["data"] == {"a": "2"}
    assert sim.count(verb="patch", since=mark) == 3


def test_a_create_stored_before_its_504_is_read_back_not_failed(sim_factory):
    """POST is not idempotent: the retry of a create whose answer was lost meets AlreadyExists and reads the object."""
    sim = sim_factory(profile=None, controllers=False)
    cluster = ClusterClient(get_api_client(kubeconfig=sim.kubeconfig))
    resource = cluster.require("v1", "ConfigMap")
    lost = sim.faults.add(verb="create", plural="configmaps", code=504, reason="Timeout", after_handler=True, count=1,
                          message="Timeout: request did not complete within requested timeout")
    mark = sim.mark()
    created = cluster.create(resource, {"apiVersion": "v1", "kind": "ConfigMap",
                                        "metadata": {"name": "once", "namespace": "default"}, "data": {"a": "1"}})
    assert lost.fired == 1 and created["metadata"]["name"] == "once" and created["data"] == {"a": "1"}
    assert sim.count(verb="create", since=mark) == 2 and sim.count(verb="create", since=mark, code=409) == 1


def test_a_generate_name_create_is_not_repeated_after_an_unknown_outcome(sim_factory):
    """A retry of a generateName create whose answer was lost would store a second object: it is not retried."""
    sim = sim_factory(profile=None, controllers=False)
    cluster = ClusterClient(get_api_client(kubeconfig=sim.kubeconfig))
    resource = cluster.require("v1", "ConfigMap")
    sim.faults.add(verb="create", plural="configmaps", code=504, reason="Timeout", after_handler=True, count=1)
    mark = sim.mark()
    try:
        cluster.create(resource, {"apiVersion": "v1", "kind": "ConfigMap",
                                  "metadata": {"generateName": "run-", "namespace": "default"}, "data": {}})
        raise AssertionError("the 504 was not reported")
    except Exception as exc:  # pylint: disable=broad-except
        assert getattr(exc, "status", None) == 504
    assert sim.count(verb="create", since=mark) == 1
    items, _rv = cluster.list(resource, namespace="default")
    assert [i["metadata"]["name"].startswith("run-") for i in items] == [True]
