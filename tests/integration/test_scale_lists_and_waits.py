"""Lists and node waits at scale, against the simulated API server (issue 21).

Nodes are written straight into the simulator's store: these tests are about the API (paging, watches with
selectors), not about the simulated operators."""

import threading
import time

import pytest

from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster import client as cc
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.client import ClusterClient
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.waiter import WaitTimeout, wait_for
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.waits import compile_condition
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import get_api_client

RESOURCE = "rdma/rdma_shared_device_eth"


def _nodes(sim, count, labels, prefix="worker"):
    node_type = sim.store.find_type("", "v1", "nodes")
    for i in range(count):
        sim.store.create(node_type, {"apiVersion": "v1", "kind": "Node",
                                     "metadata": {"name": "%s-%04d" % (prefix, i), "labels": dict(labels)},
                                     "status": {"allocatable": {RESOURCE: "0"}}})


def _advertise(sim, name, value="63"):
    node_type = sim.store.find_type("", "v1", "nodes")
    sim.store.patch_status(node_type, None, name, {"allocatable": {RESOURCE: value}})


def test_lists_over_500_objects_are_read_in_pages_and_see_every_item(sim_factory):
    sim = sim_factory(profile=None, controllers=False)
    _nodes(sim, 1200, {"gpu": "yes"})
    cluster = ClusterClient(get_api_client(kubeconfig=sim.kubeconfig))
    since = len(sim.requests)
    items, list_rv = cluster.list(cluster.resource("v1", "Node"))
    assert sorted(n["metadata"]["name"] for n in items) == ["worker-%04d" % i for i in range(1200)]
    lists = [e for e in sim.requests.entries(since) if e["verb"] == "list" and e["plural"] == "nodes"]
    assert [e["query"].get("limit") for e in lists] == ["500", "500", "500"]
    assert [bool(e["query"].get("continue")) for e in lists] == [False, True, True]
    assert list_rv == sim.store.current_resource_version


def test_a_list_whose_continue_token_expired_starts_over(sim_factory):
    sim = sim_factory(profile=None, controllers=False, history_limit=50)
    _nodes(sim, 30, {})
    cluster = ClusterClient(get_api_client(kubeconfig=sim.kubeconfig))
    nodes = cluster.resource("v1", "Node")
    calls = []

    def request(method, path, **params):
        calls.append(dict(params))
        if len(calls) == 2:  # between the first and the second page: more writes than the history keeps
            _nodes(sim, 60, {}, prefix="late")
        return cluster._request(method, path, **params)  # pylint: disable=protected-access

    items, _rv = cc.paged_list(request, nodes.path(), {}, page_size=20)
    # The second page answered 410 Expired; the list started over and saw one consistent snapshot.
    assert "_continue" not in calls[2]
    assert len(items) == 90 and len({n["metadata"]["name"] for n in items}) == 90


def _run_wait(cluster, spec, condition, timeout, outcome):
    try:
        outcome["result"] = wait_for(cluster, cluster.resource("v1", "Node"), condition,
                                     label_selector=",".join(spec["label_selectors"]), timeout=timeout, view=condition)
    except WaitTimeout as exc:
        outcome["timeout"] = exc


def _watching(sim, since):
    return any(e["verb"] == "watch" and e["plural"] == "nodes" for e in sim.requests.entries(since))


@pytest.mark.parametrize("count", [100, 1000])
def test_a_counted_node_wait_evaluates_one_node_per_event(sim_factory, count):
    sim = sim_factory(profile=None, controllers=False)
    _nodes(sim, count, {"rdma": "yes"})
    _nodes(sim, 50, {}, prefix="other")  # not selected: never listed nor watched
    cluster = ClusterClient(get_api_client(kubeconfig=sim.kubeconfig))
    spec = {"title": "allocatable", "label_selectors": ["rdma=yes"],
            "count": [{"each": "to_number(status.allocatable.\"%s\" || '0') > `0`" % RESOURCE, "at_least": 3}]}
    condition = compile_condition(spec)
    outcome = {}
    since = len(sim.requests)
    waiter = threading.Thread(target=_run_wait, args=(cluster, spec, condition, 60, outcome))
    waiter.start()
    deadline = time.monotonic() + 30
    while not _watching(sim, since) and time.monotonic() < deadline:
        time.sleep(0.02)
    for i in range(5):
        _advertise(sim, "other-%04d" % i)  # outside the selector: no event reaches the wait
    _advertise(sim, "worker-0001")
    _advertise(sim, "worker-0002")
    _advertise(sim, "worker-0002", "0")  # back to 0: the counter goes down again
    _advertise(sim, "worker-0003")
    _advertise(sim, "worker-0004")
    _advertise(sim, "worker-0005")
    waiter.join(60)
    result = outcome["result"]
    # A minimum starts with a watch: the nodes come as ADDED events, then their changes; one evaluation per event,
    # whatever the number of nodes, and no list request.
    assert condition.evaluations == result.events
    assert count <= result.events <= count + 6
    assert result.state == {"counted": [3], "selected": count}
    assert len(condition.history) <= 20
    assert [e["verb"] for e in sim.requests.entries(since) if e["plural"] == "nodes"] == ["watch"]


def test_a_minimum_that_holds_takes_one_request_and_every_selected_node_reads_all_pages(sim_factory):
    sim = sim_factory(profile=None, controllers=False)
    _nodes(sim, 1000, {"rdma": "yes"})
    for i in range(0, 1000, 100):
        _advertise(sim, "worker-%04d" % i)
    cluster = ClusterClient(get_api_client(kubeconfig=sim.kubeconfig))
    spec = {"title": "allocatable", "label_selectors": ["rdma=yes"],
            "count": [{"each": "to_number(status.allocatable.\"%s\" || '0') > `0`" % RESOURCE, "at_least": 3}]}
    since = len(sim.requests)
    outcome = {}
    _run_wait(cluster, spec, compile_condition(spec), 10, outcome)
    assert outcome["result"].state["counted"] == [3]
    node_requests = [e["verb"] for e in sim.requests.entries(since) if e["plural"] == "nodes"]
    assert node_requests == ["watch"]
    every = dict(spec, count=[dict(spec["count"][0], all=True)])  # every selected node: all pages, then the watch
    since = len(sim.requests)
    outcome = {}
    _run_wait(cluster, every, compile_condition(every), 1, outcome)
    assert outcome["timeout"].state == {"counted": [10], "selected": 1000}
    node_requests = [(e["verb"], e["query"].get("limit")) for e in sim.requests.entries(since) if e["plural"] == "nodes"]
    assert node_requests[:2] == [("list", "500"), ("list", "500")] and node_requests[2][0] == "watch"


def test_a_counted_wait_does_not_end_early(sim_factory):
    """At least 3: two ready nodes and one that was ready and went back to 0 do not end the wait; with all, one
    selected node short of the whole selection does not either."""
    sim = sim_factory(profile=None, controllers=False)
    _nodes(sim, 20, {"rdma": "yes"})
    for name in ("worker-0000", "worker-0001", "worker-0002"):
        _advertise(sim, name)
    _advertise(sim, "worker-0002", "0")
    cluster = ClusterClient(get_api_client(kubeconfig=sim.kubeconfig))
    spec = {"title": "allocatable", "label_selectors": ["rdma=yes"],
            "count": [{"each": "to_number(status.allocatable.\"%s\" || '0') > `0`" % RESOURCE, "at_least": 3}]}
    outcome = {}
    _run_wait(cluster, spec, compile_condition(spec), 1, outcome)
    assert outcome["timeout"].state == {"counted": [2], "selected": 20}
    for i in range(3, 20):
        _advertise(sim, "worker-%04d" % i)
    every = dict(spec, count=[dict(spec["count"][0], all=True)])
    outcome = {}
    condition = compile_condition(every)
    _run_wait(cluster, every, condition, 1, outcome)
    assert outcome["timeout"].state == {"counted": [19], "selected": 20}
    assert condition.not_counted(20) == ["worker-0002"]
    _advertise(sim, "worker-0002")
    outcome = {}
    _run_wait(cluster, every, compile_condition(every), 10, outcome)
    assert outcome["result"].state == {"counted": [20], "selected": 20}


def test_diagnostics_keep_the_abnormal_nodes_and_a_sample_of_the_rest(sim_factory):
    from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.diagnostics import DiagnosticsCollector

    sim = sim_factory(profile=None, controllers=False)
    node_type = sim.store.find_type("", "v1", "nodes")
    for i in range(1000):
        ready = "False" if i in (7, 777) else "True"
        sim.store.create(node_type, {"metadata": {"name": "worker-%04d" % i},
                                     "status": {"conditions": [{"type": "Ready", "status": ready}]}})
    cluster = ClusterClient(get_api_client(kubeconfig=sim.kubeconfig), rediscover_once=True)
    collector = DiagnosticsCollector(cluster, ["default"])
    groups = collector.collect()
    nodes = groups[("Node", "nodes", None)]
    assert len(nodes) == 22 and {"worker-0007", "worker-0777"} <= {n["metadata"]["name"] for n in nodes}
    assert collector.capped == [{"kind": "Node", "namespace": None, "listed": 1000, "abnormal": 2, "written": 22}]
    node_lists = [e for e in sim.requests.entries() if e["verb"] == "list" and e["plural"] == "nodes"]
    assert [e["query"].get("limit") for e in node_lists] == ["500", "500"]
    assert "Node: 1000 listed, 2 abnormal, 22 written" in collector.summary()


def test_plan_status_cluster_counts_every_node_and_names_a_sample(sim_factory):
    from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.info import gather

    sim = sim_factory(profile=None, controllers=False)
    node_type = sim.store.find_type("", "v1", "nodes")
    for i in range(600):
        sim.store.create(node_type, {"metadata": {"name": "worker-%04d" % i, "labels": {
            "node-role.kubernetes.io/worker": "", "feature.node.kubernetes.io/pci-10de.present": "true"}},
            "status": {"conditions": [{"type": "Ready", "status": "True"}], "capacity": {"nvidia.com/gpu": "8"}}})
    cluster = ClusterClient(get_api_client(kubeconfig=sim.kubeconfig), rediscover_once=True)
    info = gather(cluster, kubernetes_version=False, sriov_states=False, sample=20)
    summary = info["summary"]
    assert (summary["node_count"], summary["ready_nodes"], summary["worker_nodes"], summary["gpu_node_count"]) == (600, 600, 600, 600)
    assert summary["total_gpus"] == 4800 and len(summary["gpu_nodes"]) == 20 and len(info["nodes"]) == 20
    assert info["sriov_reports"] == []
