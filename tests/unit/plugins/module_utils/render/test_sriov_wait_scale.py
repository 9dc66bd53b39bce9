# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The SR-IOV node-state waits cost the same per watch event at 100 and at 1000 node states (issue 38).

The waits rendered for configurations 5 and 6 run through cluster/waits.py run_wait with a fake cluster (one list,
then one watch stream), and every JMESPath evaluation is counted by the objects it reads (a list expression reads them
all): the list costs one set of evaluations per node state, each event after it one set, whatever the number of node
states. Counts, not seconds, so the test holds under load."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import jmespath.parser
import pytest

from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster import api_errors
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.waits import WaitFailed, run_wait
from ansible_collections.gpudirect.openshift.plugins.module_utils.render import waits as render_waits
from ansible_collections.gpudirect.openshift.plugins.module_utils.render.plan import render_all

from conftest import base_variables

NAMESPACE = "openshift-sriov-network-operator"
PF = {"name": "ens8f0np0", "pciAddress": "0000:a0:00.0", "vendor": "15b3", "deviceID": "1017"}
IDLE = {"sriovnetwork.openshift.io/desired-state": "Idle", "sriovnetwork.openshift.io/current-state": "Idle"}
# The VF group the operator renders from the configuration's policy (api/v1/helper.go generatePfNameVfGroup).
RENDERED_GROUP = {"resourceName": "sriovlegacy", "isRdma": True}


def node_state(index, spec_vfs, status_vfs, sync="Succeeded", policy="sriovlegacy-policy", error=None):
    status = {"syncStatus": sync, "interfaces": [dict(PF, numVfs=status_vfs)]}
    if error:
        status["lastSyncError"] = error
    return {"apiVersion": "sriovnetwork.openshift.io/v1", "kind": "SriovNetworkNodeState",
            "metadata": {"name": "worker-%04d" % index, "namespace": NAMESPACE, "resourceVersion": str(index + 1),
                         "generation": 2, "annotations": dict(IDLE)},
            "spec": {"interfaces": [dict(PF, numVfs=spec_vfs, vfGroups=[dict(RENDERED_GROUP, policyName=policy, vfRange="0-7")])]},
            "status": status}


class Resource:
    kind = "SriovNetworkNodeState"
    group_version = "sriovnetwork.openshift.io/v1"


class Stream:
    def __init__(self, events, on_open):
        self.events = events
        self.on_open = on_open

    def stream(self, amt=None, decode_content=False):
        self.on_open()
        for event in self.events:
            yield (json.dumps(event) + "\n").encode()

    def close(self):
        pass


class Cluster:
    """One list of ``items`` (in pages of 500 for a counted wait, as the client reads them), then one watch stream of
    ``events``."""

    def __init__(self, items, events, on_watch):
        self.items = items
        self.events = events
        self.on_watch = on_watch
        self.retry = api_errors.RetryPolicy(sleep=lambda s: None)

    def resource(self, api_version, kind):
        return Resource()

    def list_pages(self, resource, on_page, namespace=None, label_selector=None, field_selector=None):
        for start in range(0, len(self.items), 500):
            if on_page([dict(i) for i in self.items[start:start + 500]], start == 0):
                break
        return "1000000"

    def list(self, resource, namespace=None, label_selector=None, field_selector=None):
        return [dict(i) for i in self.items], "1000000"  # what a list condition reads

    def watch_stream(self, resource, resource_version, **kwargs):
        return Stream(self.events, self.on_watch)


@pytest.fixture
def evaluations(monkeypatch):
    """Counts the objects every JMESPath evaluation (compiled expressions' search) reads, whoever makes it: one for
    an expression over one object, every item for one over a list ({"items": [...]}, as list conditions see it)."""
    counter = {"all": 0}
    search = jmespath.parser.ParsedResult.search

    def counting(self, value, options=None):
        listed = isinstance(value, dict) and list(value) == ["items"] and isinstance(value["items"], list)
        counter["all"] += len(value["items"]) if listed else 1
        return search(self, value, options)

    monkeypatch.setattr(jmespath.parser.ParsedResult, "search", counting)
    return counter


def measure(spec, items, events, evaluations):
    """(evaluations for the list, evaluations per watch event, result or WaitFailed) of run_wait on ``spec``."""
    at_watch = {}
    cluster = Cluster(items, events, lambda: at_watch.setdefault("evaluations", evaluations["all"]))
    before = evaluations["all"]
    try:
        outcome = run_wait(cluster, dict(spec, timeout=60, failure_grace_period=0))
    except WaitFailed as exc:
        outcome = exc
    listed = at_watch["evaluations"] - before
    return listed, (evaluations["all"] - at_watch["evaluations"]) / float(len(events)), outcome


def sriov_wait():
    return render_all(base_variables("sriov_legacy", "roce"))["waits"]["sriov_node_states"]


@pytest.mark.parametrize("nodes", [100, 1000])
def test_the_wait_after_the_policies_evaluates_one_node_state_per_event(nodes, evaluations):
    spec = sriov_wait()
    # Every node state applied 8 VFs but the last, whose daemon is still at 0; then its three events: the sync
    # starts, the VFs come, the sync ends (the last one satisfies the wait).
    items = [node_state(i, 8, 8) for i in range(nodes - 1)] + [node_state(nodes - 1, 8, 0)]
    last = nodes - 1
    events = [{"type": "MODIFIED", "object": node_state(last, 8, 0, sync="InProgress")},
              {"type": "MODIFIED", "object": node_state(last, 8, 8, sync="InProgress")},
              {"type": "MODIFIED", "object": node_state(last, 8, 8)}]
    listed, per_event, result = measure(spec, items, events, evaluations)
    assert result["events"] == 3 and result["count"] == {"counted": [nodes, nodes], "selected": nodes, "not_counted_sample": []}
    assert result["progress"][-1].startswith("worker-0000: Succeeded, drain Idle/Idle, worker-0001: Succeeded")
    assert "worker-%04d: InProgress, drain Idle/Idle (VFs not applied yet)" % last in result["progress"][-3]
    # Two counters, the busy rule, the failure condition and the progress text per node state, once each: on the list
    # and per event.
    assert listed == 5 * nodes
    assert per_event == 5


@pytest.mark.parametrize("nodes", [100, 1000])
def test_a_failing_node_state_ends_the_wait_with_its_error_at_the_same_cost_per_event(nodes, evaluations):
    spec = sriov_wait()
    items = [node_state(i, 8, 8) for i in range(nodes - 1)] + [node_state(nodes - 1, 8, 0, sync="InProgress")]
    error = "failed to set numVfs: write /sys/bus/pci/devices/0000:a0:00.0/sriov_numvfs: operation not supported"
    events = [{"type": "MODIFIED", "object": node_state(nodes - 1, 8, 0, sync="InProgress", error=error)}]
    listed, per_event, failure = measure(spec, items, events, evaluations)
    assert isinstance(failure, WaitFailed)
    assert str(failure) == "SriovNetworkNodeState objects reports a failure: worker-%04d: InProgress: %s" % (nodes - 1, error)
    assert [r["metadata"]["name"] for r in failure.details["resources"]] == ["worker-%04d" % (nodes - 1)]
    # The failing node state's message is evaluated once more: five per event, at any size.
    assert listed == 5 * nodes and per_event == 6


@pytest.mark.parametrize("nodes", [100, 1000])
def test_the_interfaces_reported_wait_counts_per_event_and_returns_the_node_states(nodes, evaluations):
    spec = dict(render_waits.sriov_interfaces_reported_wait(NAMESPACE), return_resources=True)
    items = [node_state(i, 0, 0) for i in range(nodes)]
    items[-1]["status"]["interfaces"] = []  # this config daemon has not reported yet
    events = [{"type": "MODIFIED", "object": node_state(nodes - 1, 0, 0)}]
    listed, per_event, result = measure(spec, items, events, evaluations)
    assert listed == 2 * nodes and per_event == 2  # the counter and the progress text
    # The rdma role checks the NIC variables against these (roles/rdma, reported_nic_problems).
    assert [r["metadata"]["name"] for r in result["resources"]] == ["worker-%04d" % i for i in range(nodes)]
    assert result["resources"][-1]["status"]["interfaces"][0]["name"] == "ens8f0np0"
    assert result["progress"][0].endswith("worker-%04d: 0 interfaces" % (nodes - 1))


@pytest.mark.parametrize("nodes", [100, 1000])
def test_the_settled_wait_after_a_teardown_counts_per_event(nodes, evaluations):
    spec = render_waits.sriov_node_states_settled_wait(["sriovlegacy-policy"], NAMESPACE)
    items = [node_state(i, 0, 0) for i in range(nodes)]
    for item in items:
        item["spec"] = {}
    items[0] = node_state(0, 8, 8)  # the operator has not taken the deleted policy out of this spec yet
    settled = dict(items[0], spec={}, status=dict(items[0]["status"], interfaces=[dict(PF, numVfs=0)]))
    events = [{"type": "MODIFIED", "object": dict(items[0], spec={})}, {"type": "MODIFIED", "object": settled}]
    listed, per_event, result = measure(spec, items, events, evaluations)
    assert result["events"] == 2 and result["count"]["counted"] == [0]
    assert listed == 3 * nodes and per_event == 3  # the counter, the failure condition and the progress text


def test_the_settled_wait_holds_when_the_sriov_operator_serves_no_node_states():
    """The teardown waits with api_missing_ok: no SR-IOV operator, nothing to settle; the wait after policies needs one."""
    class Unserved(Cluster):
        def resource(self, api_version, kind):
            return None

    cluster = Unserved([], [], lambda: None)
    spec = dict(render_waits.sriov_node_states_settled_wait(["sriovlegacy-policy"], NAMESPACE), api_missing_ok=True)
    assert run_wait(cluster, spec)["resources"] == []
    with pytest.raises(WaitFailed, match="is not served"):
        run_wait(cluster, dict(sriov_wait(), api_missing_ok=True))
