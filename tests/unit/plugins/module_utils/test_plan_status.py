# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Unit tests of plan_status's parts: the snapshot client (one list per kind, reads from memory, no writes) and the
comparison (the installer, applier and conditions run on the snapshot), over an in-memory fake of ClusterClient."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

import pytest

from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.apply import ManifestApplier, applied_body
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.api_errors import DEFAULT_RETRY
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.drift import compare, prefetch_kinds
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.snapshot import (
    SnapshotClient,
    labels_match,
    parse_label_selector,
)

NAMESPACED = {"Namespace": False, "Node": False, "ClusterVersion": False, "NicClusterPolicy": False, "MacvlanNetwork": False,
              "HostDeviceNetwork": False}


def _fields(value):
    return dict(("f:" + k, _fields(v)) for k, v in value.items()) if isinstance(value, dict) else {}


class Resource:
    def __init__(self, api_version, kind):
        self.group_version = api_version
        self.kind = kind
        self.namespaced = NAMESPACED.get(kind, True)


class FakeCluster:
    """ClusterClient's interface over a dict; every call is counted, and kinds not in ``served`` are not served."""

    dry_run = False
    skip_writes = False
    retry = DEFAULT_RETRY

    def __init__(self, served):
        self.served = set(served)
        self.objects = {}
        self.calls = []

    def resource(self, api_version, kind):
        return Resource(api_version, kind) if (api_version, kind) in self.served else None

    def require(self, api_version, kind):
        return self.resource(api_version, kind)

    def put(self, obj):
        meta = obj["metadata"]
        self.objects[(obj["apiVersion"], obj["kind"], meta.get("namespace"), meta["name"])] = copy.deepcopy(obj)

    def get(self, resource, name, namespace=None):
        self.calls.append(("get", resource.kind))
        return copy.deepcopy(self.objects.get((resource.group_version, resource.kind, namespace if resource.namespaced else None, name)))

    def list(self, resource, namespace=None, label_selector=None, field_selector=None):
        self.calls.append(("list", resource.kind))
        selector = parse_label_selector(label_selector)
        items = [copy.deepcopy(o) for (v, k, ns, _n), o in sorted(self.objects.items(), key=lambda kv: str(kv[0]))
                 if (v, k) == (resource.group_version, resource.kind) and (namespace is None or ns == namespace)
                 and labels_match(selector, o["metadata"].get("labels"))]
        return items, "1"

    def create(self, resource, body):
        self.calls.append(("create", resource.kind))
        self.put(body)
        return copy.deepcopy(body)

    def merge_patch(self, resource, name, namespace, patch):
        self.calls.append(("patch", resource.kind))

    def server_side_apply(self, resource, body, field_manager, force=True):
        """Stores the body with the managedFields entry a server would record (lists as atomic, enough here)."""
        self.calls.append(("patch", resource.kind))
        obj = copy.deepcopy(body)
        obj["metadata"]["managedFields"] = [{"manager": field_manager, "operation": "Apply", "apiVersion": body["apiVersion"],
                                             "fieldsType": "FieldsV1", "fieldsV1": _fields(applied_body(body))}]
        self.put(obj)
        return copy.deepcopy(obj)

    def replace(self, resource, body):
        self.calls.append(("update", resource.kind))

    def delete(self, resource, name, namespace=None, propagation_policy="Background"):
        self.calls.append(("delete", resource.kind))

    def raw_get(self, path):
        self.calls.append(("get", path))
        return {}


OLM = [("v1", "Namespace"), ("operators.coreos.com/v1", "OperatorGroup"), ("operators.coreos.com/v1alpha1", "Subscription"),
       ("operators.coreos.com/v1alpha1", "ClusterServiceVersion"), ("packages.operators.coreos.com/v1", "PackageManifest"),
       ("operators.coreos.com/v1alpha1", "CatalogSource"), ("operators.coreos.com/v1alpha1", "InstallPlan"),
       ("config.openshift.io/v1", "ClusterVersion"), ("v1", "Node")]
NCP = ("mellanox.com/v1alpha1", "NicClusterPolicy")
MACVLAN = ("mellanox.com/v1alpha1", "MacvlanNetwork")
HOSTDEV = ("mellanox.com/v1alpha1", "HostDeviceNetwork")
MANAGED = {"app.kubernetes.io/managed-by": "gpudirect.openshift"}
OPERATOR = {"package": "nvidia-network-operator", "namespace": "nvidia-network-operator", "channel": "", "source": "",
            "starting_csv": "", "install_plan_approval": "Automatic"}
POLICY = {"apiVersion": NCP[0], "kind": NCP[1], "metadata": {"name": "nic-cluster-policy"}, "spec": {"ofedDriver": {"version": "24.10"}}}
NETWORK = {"apiVersion": MACVLAN[0], "kind": MACVLAN[1], "metadata": {"name": "rdmashared-net"}, "spec": {"master": "ens1f0np0"}}
READY = {"title": "NicClusterPolicy ready", "api_version": NCP[0], "kind": NCP[1], "name": "nic-cluster-policy",
         "condition": "status.state == 'ready'", "progress": "status.state"}


def converged_cluster():
    """A cluster where the network operator is installed as OPERATOR asks and POLICY and NETWORK are applied."""
    cluster = FakeCluster(OLM + [NCP, MACVLAN, HOSTDEV])
    csv = "nvidia-network-operator.v25.4.0"
    cluster.put({"apiVersion": "packages.operators.coreos.com/v1", "kind": "PackageManifest",
                 "metadata": {"name": "nvidia-network-operator", "namespace": "openshift-marketplace"},
                 "status": {"catalogSource": "certified-operators", "catalogSourceNamespace": "openshift-marketplace",
                            "defaultChannel": "stable", "channels": [{"name": "stable", "currentCSV": csv, "currentCSVDesc": {
                                "version": "25.4.0", "installModes": [{"type": "OwnNamespace", "supported": True}]}}]}})
    cluster.put({"apiVersion": "v1", "kind": "Namespace",
                 "metadata": {"name": "nvidia-network-operator", "labels": dict(MANAGED, **{"openshift.io/cluster-monitoring": "true"})}})
    cluster.put({"apiVersion": "operators.coreos.com/v1", "kind": "OperatorGroup",
                 "metadata": {"name": "nvidia-network-operator", "namespace": "nvidia-network-operator", "labels": MANAGED},
                 "spec": {"targetNamespaces": ["nvidia-network-operator"]}})
    cluster.put({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
                 "metadata": {"name": "nvidia-network-operator", "namespace": "nvidia-network-operator", "labels": MANAGED},
                 "spec": {"name": "nvidia-network-operator", "channel": "stable", "source": "certified-operators",
                          "sourceNamespace": "openshift-marketplace", "installPlanApproval": "Automatic"}})
    cluster.put({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
                 "metadata": {"name": csv, "namespace": "nvidia-network-operator"}, "status": {"phase": "Succeeded"}})
    applier = ManifestApplier(cluster)
    for manifest in (POLICY, NETWORK):
        applier.apply(manifest)
    key = (NCP[0], NCP[1], None, "nic-cluster-policy")
    cluster.objects[key]["status"] = {"state": "ready"}
    return cluster


def snapshot_of(cluster, waits=(READY,)):
    snapshot = SnapshotClient(cluster)
    cluster.calls = []
    for api_version, kind, namespace, selector in prefetch_kinds([OPERATOR], [POLICY, NETWORK], list(waits),
                                                                 ["%s/%s" % MACVLAN, "%s/%s" % HOSTDEV], sriov_states=False):
        snapshot.prefetch(api_version, kind, namespace, selector)
    return snapshot


def differences(cluster, waits=(READY,)):
    snapshot = snapshot_of(cluster, waits)
    found = compare(snapshot, [OPERATOR], [POLICY, NETWORK], list(waits), ["%s/%s" % MACVLAN, "%s/%s" % HOSTDEV],
                    "app.kubernetes.io/managed-by=gpudirect.openshift")
    return found, snapshot


@pytest.mark.parametrize("selector, labels, matches", [
    ("a=b", {"a": "b"}, True),
    ("a==b", {"a": "c"}, False),
    ("a!=b", {}, True),
    ("a in (b, c)", {"a": "c"}, True),
    ("a notin (b)", {"a": "b"}, False),
    ("a", {"a": ""}, True),
    ("!a", {"a": ""}, False),
    ("!olm.copiedFrom,x=y", {"x": "y"}, True),
])
def test_label_selectors_match_like_the_api_server(selector, labels, matches):
    assert labels_match(parse_label_selector(selector), labels) is matches


def test_malformed_selector_is_rejected():
    with pytest.raises(ValueError):
        parse_label_selector("a=b=c")


def test_converged_cluster_is_in_sync_from_one_list_per_kind_and_nothing_is_written():
    cluster = converged_cluster()
    found, snapshot = differences(cluster)
    assert found == []
    assert all(verb == "list" for verb, _kind in cluster.calls), cluster.calls
    assert len(cluster.calls) == snapshot.reads == len(set(cluster.calls))
    assert snapshot.fallthrough == []
    leftovers = []
    compare(snapshot_of(cluster), [OPERATOR], [POLICY, NETWORK], [READY], ["%s/%s" % MACVLAN, "%s/%s" % HOSTDEV],
            "app.kubernetes.io/managed-by=gpudirect.openshift", leftovers=leftovers)
    assert leftovers == [], "nothing to prune: site.yml skips its prune step"


def test_changed_variable_leftover_and_edited_object_are_each_reported():
    cluster = converged_cluster()
    operator = dict(OPERATOR, install_plan_approval="Manual")
    cluster.put(dict(NETWORK, metadata={"name": "old-net", "labels": MANAGED}))
    cluster.put({"apiVersion": HOSTDEV[0], "kind": HOSTDEV[1], "metadata": {"name": "hostdev-net", "labels": MANAGED}})
    cluster.put({"apiVersion": HOSTDEV[0], "kind": HOSTDEV[1], "metadata": {"name": "someone-elses"}})
    key = (NCP[0], NCP[1], None, "nic-cluster-policy")
    cluster.objects[key]["spec"]["ofedDriver"]["version"] = "edited"
    snapshot = snapshot_of(cluster)
    leftovers = []
    found = compare(snapshot, [operator], [POLICY, NETWORK], [READY], ["%s/%s" % MACVLAN, "%s/%s" % HOSTDEV],
                    "app.kubernetes.io/managed-by=gpudirect.openshift", leftovers=leftovers)
    assert sorted(leftovers) == ["HostDeviceNetwork hostdev-net", "MacvlanNetwork old-net"]
    assert "operator nvidia-network-operator in nvidia-network-operator: Subscription nvidia-network-operator/nvidia-network-operator" \
        " would be updated" in found
    assert "MacvlanNetwork old-net is left from another configuration and would be removed" in found
    assert "HostDeviceNetwork hostdev-net is left from another configuration and would be removed" in found
    assert not any("someone-elses" in f for f in found), "objects the collection did not label are never leftovers"
    assert "NicClusterPolicy nic-cluster-policy differs from the plan and would be patched" in found
    assert [c for c in cluster.calls if c[0] != "list"] == [], "the comparison wrote or read object by object"


def test_readiness_and_operator_phase_are_part_of_the_comparison():
    cluster = converged_cluster()
    cluster.objects[(NCP[0], NCP[1], None, "nic-cluster-policy")]["status"] = {"state": "notReady"}
    csv_key = [k for k in cluster.objects if k[1] == "ClusterServiceVersion"][0]
    cluster.objects[csv_key]["status"] = {"phase": "Installing"}
    found, _snapshot = differences(cluster)
    assert "NicClusterPolicy ready: not ready (notReady)" in found
    assert "operator nvidia-network-operator in nvidia-network-operator: ClusterServiceVersion nvidia-network-operator.v25.4.0" \
        " is Installing, not Succeeded" in found


def test_missing_objects_and_unserved_kinds_are_differences_not_errors():
    cluster = converged_cluster()
    del cluster.objects[(MACVLAN[0], MACVLAN[1], None, "rdmashared-net")]
    cluster.served.discard(NCP)
    found, _snapshot = differences(cluster)
    assert "MacvlanNetwork rdmashared-net would be created" in found
    assert "NicClusterPolicy nic-cluster-policy would be created" in found
    assert "NicClusterPolicy ready: mellanox.com/v1alpha1 NicClusterPolicy is not served yet" in found


def test_the_nodes_of_a_node_group_are_picked_from_the_one_node_list():
    from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.snapshot import selected_nodes

    nodes = [{"metadata": {"name": name, "labels": labels}} for name, labels in (
        ("roce-1", {"group": "roce", "node-role.kubernetes.io/worker": ""}), ("ib-0", {"group": "ib"}),
        ("roce-0", {"group": "roce"}), ("plain", None))]
    assert selected_nodes(nodes, ["group=roce"]) == ["roce-0", "roce-1"]
    assert selected_nodes(nodes, ["group=roce", "node-role.kubernetes.io/worker"]) == ["roce-1"]
    assert selected_nodes(nodes, ["group in (ib,roce)"]) == ["ib-0", "roce-0", "roce-1"]
    assert selected_nodes(nodes, ["group=none"]) == []
