"""Transient API errors the collection absorbs (fail-fast issue, points 2-4): a 5xx during API discovery, a
request that stalls, a 409 on a merge patch. Each test makes its fault certain (a counted rule) and checks that it
fired, so the verdict does not depend on timing."""

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
