# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 34 point 2: the collection reads MachineConfigs by name only, never by list or watch (a list returns the
controller's MachineConfigs, which carry the cluster's pull secret), so its role needs neither.

Every reader is checked on an in-memory cluster that records each call: the applier (apply, delete, prune),
plan_status's snapshot and comparison, diagnostics; and the names they read are the ones the renderer can give the
configuration's MachineConfigs, which are the names deploy/rbac grants."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import os

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.gpudirect.openshift.plugins.filter.kinds import machineconfig_names, select_labelled
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster import diagnostics
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.apply import ManifestApplier
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.api_errors import ClusterError
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.drift import compare, names_to_read, prefetch_kinds
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.snapshot import SnapshotClient
from ansible_collections.gpudirect.openshift.plugins.module_utils.names import API_MCO, READ_BY_NAME_KINDS
from ansible_collections.gpudirect.openshift.plugins.module_utils.render.plan import owned_machineconfig_names, render_all

from .test_plan_status import FakeCluster

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
MC = (API_MCO, "MachineConfig")
MANAGED = {"app.kubernetes.io/managed-by": "gpudirect.openshift"}
SELECTOR = "app.kubernetes.io/managed-by=gpudirect.openshift"


class MachineConfigCluster(FakeCluster):
    """FakeCluster with MachineConfig cluster-scoped, and a list of MachineConfigs refused as RBAC would."""

    def __init__(self):
        super(MachineConfigCluster, self).__init__([MC])

    def resource(self, api_version, kind):
        found = super(MachineConfigCluster, self).resource(api_version, kind)
        if found is not None and kind == "MachineConfig":
            found.namespaced = False
        return found

    def list(self, resource, namespace=None, label_selector=None, field_selector=None):
        if resource.kind == "MachineConfig":
            raise AssertionError("MachineConfigs listed")
        return super(MachineConfigCluster, self).list(resource, namespace, label_selector, field_selector)

    def delete(self, resource, name, namespace=None, propagation_policy="Background"):
        super(MachineConfigCluster, self).delete(resource, name, namespace, propagation_policy)
        self.objects.pop((resource.group_version, resource.kind, None, name), None)


def machineconfig(name, labels=None, role="worker"):
    return {"apiVersion": API_MCO, "kind": "MachineConfig",
            "metadata": {"name": name, "labels": dict(labels or {}, **{"machineconfiguration.openshift.io/role": role})},
            "spec": {"kernelArguments": ["module_blacklist=irdma"]}}


def cluster_with(*objects):
    cluster = MachineConfigCluster()
    for obj in objects:
        cluster.put(obj)
    # The controller's own rendered MachineConfig, the one holding the pull secret: never to be read.
    cluster.put(machineconfig("rendered-worker-0123", role="worker"))
    cluster.calls = []
    return cluster


def test_machineconfig_is_the_kind_read_by_name_only():
    assert READ_BY_NAME_KINDS == (MC,)


# -- the names -----------------------------------------------------------------------------------------------------


def test_the_names_follow_pool_role_name_and_memlock_pool():
    assert owned_machineconfig_names({}) == ["99-gpudirect-rdma-gpudirect-rdma-memlock", "99-worker-gpudirect-rdma"]
    assert owned_machineconfig_names({"gpudirect_rdma_machineconfig_pool": "gpu"}) == [
        "99-gpu-gpudirect-rdma", "99-gpudirect-rdma-gpudirect-rdma-memlock"]
    assert owned_machineconfig_names({"gpudirect_rdma_machineconfig_name": "50-mine",
                                      "gpudirect_rdma_memlock_pool": "rdma"}) == ["50-mine", "99-rdma-gpudirect-rdma-memlock"]
    # memlock in the main pool joins the main MachineConfig: no second name.
    assert owned_machineconfig_names({"gpudirect_rdma_memlock_pool": "worker"}) == ["99-worker-gpudirect-rdma"]


def test_each_node_group_adds_the_names_of_its_pool():
    variables = {"gpudirect_rdma_node_groups": [
        {"name": "a", "node_selector": {"g": "a"}, "machineconfig_pool": "pool-a"},
        {"name": "b", "node_selector": {"g": "b"}, "machineconfig_name": "99-b-own"},
        {"name": "c", "node_selector": {"g": "c"}}]}
    assert owned_machineconfig_names(variables) == [
        "99-b-own", "99-gpudirect-rdma-gpudirect-rdma-memlock", "99-pool-a-gpudirect-rdma", "99-worker-gpudirect-rdma"]


def test_the_names_are_what_the_renderer_gives_with_every_item_on():
    """hack/gen_clusterrole.py grants get and delete on the names each example renders with every item opted in;
    the readers read exactly those, so no GET by name is one the role refuses."""
    paths = sorted(glob.glob(os.path.join(ROOT, "playbooks", "vars", "examples", "*.yml")))
    assert paths
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            variables = yaml.safe_load(handle) or {}
        on = dict(variables, gpudirect_rdma_apply_machineconfigs=True,
                  gpudirect_rdma_machineconfigs=sorted(set(variables.get("gpudirect_rdma_machineconfigs") or [])
                                                       | {"irdma_blacklist", "crio_memlock"}))
        result = render_all(on)
        assert result["errors"] == [], (path, result["errors"])
        rendered = sorted(m["manifest"]["metadata"]["name"] for m in result["manifests"] if m["manifest"]["kind"] == "MachineConfig")
        assert owned_machineconfig_names(variables) == rendered, path


def test_the_filters():
    assert machineconfig_names({"gpudirect_rdma_machineconfig_pool": "gpu"}) == [
        "99-gpu-gpudirect-rdma", "99-gpudirect-rdma-gpudirect-rdma-memlock"]
    with pytest.raises(AnsibleFilterError):
        machineconfig_names(["not", "a", "mapping"])
    objects = [machineconfig("99-worker-gpudirect-rdma", MANAGED), machineconfig("99-worker-gpudirect-rdma-copy")]
    assert [o["metadata"]["name"] for o in select_labelled(objects, SELECTOR)] == ["99-worker-gpudirect-rdma"]
    assert select_labelled(objects, "!app.kubernetes.io/managed-by") == [objects[1]]
    with pytest.raises(AnsibleFilterError):
        select_labelled(objects, "a=b=c")


# -- the readers ---------------------------------------------------------------------------------------------------


def test_apply_reads_each_machineconfig_by_name_and_writes_only_what_differs():
    desired = machineconfig("99-worker-gpudirect-rdma")
    cluster = cluster_with()
    applier = ManifestApplier(cluster)
    applier.apply(desired)
    assert cluster.calls == [("get", "MachineConfig"), ("patch", "MachineConfig")]
    cluster.calls = []
    again = ManifestApplier(cluster)
    again.apply(desired)
    assert cluster.calls == [("get", "MachineConfig")] and not again.changed


def test_delete_reads_by_name():
    cluster = cluster_with(machineconfig("99-worker-gpudirect-rdma", MANAGED))
    applier = ManifestApplier(cluster)
    applier.delete(machineconfig("99-worker-gpudirect-rdma"))
    assert cluster.calls == [("get", "MachineConfig"), ("delete", "MachineConfig")]


def test_prune_reads_the_given_names_and_deletes_only_labelled_ones_not_kept():
    cluster = cluster_with(machineconfig("99-worker-gpudirect-rdma", MANAGED),
                           machineconfig("99-gpudirect-rdma-gpudirect-rdma-memlock", MANAGED, role="gpudirect-rdma"),
                           machineconfig("99-gpu-gpudirect-rdma"))  # same pattern, not the collection's: no label
    names = ["99-worker-gpudirect-rdma", "99-gpudirect-rdma-gpudirect-rdma-memlock", "99-gpu-gpudirect-rdma", "99-absent"]
    applier = ManifestApplier(cluster)
    applier.prune([machineconfig("99-worker-gpudirect-rdma")], [MC], SELECTOR, names=names)
    assert [(r["action"], r["name"]) for r in applier.results] == [("deleted", "99-gpudirect-rdma-gpudirect-rdma-memlock")]
    assert cluster.calls == [("get", "MachineConfig")] * 4 + [("delete", "MachineConfig")]
    assert (API_MCO, "MachineConfig", None, "99-gpu-gpudirect-rdma") in cluster.objects


def test_prune_without_names_fails_before_any_request():
    cluster = cluster_with(machineconfig("99-worker-gpudirect-rdma", MANAGED))
    with pytest.raises(ClusterError, match="MachineConfig is read by name only"):
        ManifestApplier(cluster).prune([], [MC], SELECTOR)
    assert cluster.calls == []


def test_plan_status_reads_the_planned_machineconfigs_by_name():
    planned = machineconfig("99-worker-gpudirect-rdma")
    cluster = cluster_with()
    ManifestApplier(cluster).apply(planned)
    cluster.calls = []
    kinds = prefetch_kinds([], [planned], [], [], sriov_states=False, olm_state=False)
    assert MC not in [(k[0], k[1]) for k in kinds]
    snapshot = SnapshotClient(cluster)
    for (api_version, kind), names in names_to_read([planned]).items():
        snapshot.prefetch_names(api_version, kind, names)
    assert cluster.calls == [("get", "MachineConfig")]
    cluster.calls = []
    assert compare(snapshot, manifests=[planned]) == []
    assert cluster.calls == [] and snapshot.fallthrough == []
    assert [o["metadata"]["name"] for o in snapshot.items(*MC)] == ["99-worker-gpudirect-rdma"]
    changed = dict(planned, spec={"kernelArguments": []})
    assert compare(snapshot, manifests=[changed]) == ["MachineConfig 99-worker-gpudirect-rdma differs from the plan and would be patched"]
    missing = SnapshotClient(cluster)
    missing.prefetch_names(*MC, names=["99-other"])
    assert compare(missing, manifests=[machineconfig("99-other")]) == ["MachineConfig 99-other would be created"]


class DiagnosticsCluster:
    """raw_get over paths; a list of MachineConfigs fails the test."""

    def __init__(self, objects):
        self.objects = dict(("/apis/%s/machineconfigs/%s" % (API_MCO, o["metadata"]["name"]), o) for o in objects)
        self.paths = []

    def raw_get(self, path, **params):
        self.paths.append(path)
        if path.endswith("/machineconfigs"):
            raise AssertionError("MachineConfigs listed")
        if path in self.objects:
            return dict(self.objects[path])
        if "/machineconfigs/" in path:
            raise _NotFound()
        return {"items": [], "metadata": {}}

    def probe(self, path, timeout):
        return None

    def read_text(self, path, params):
        return ""


class _NotFound(Exception):
    status = 404


def test_diagnostics_read_the_collections_machineconfigs_by_name_only():
    cluster = DiagnosticsCluster([machineconfig("99-worker-gpudirect-rdma", MANAGED), machineconfig("99-gpu-gpudirect-rdma"),
                                  machineconfig("rendered-worker-0123")])
    collector = diagnostics.DiagnosticsCollector(cluster, ["nvidia-network-operator"],
                                                 machineconfig_names=["99-worker-gpudirect-rdma", "99-gpu-gpudirect-rdma", "99-absent"])
    groups = collector.collect()
    assert [o["metadata"]["name"] for o in groups[("MachineConfig", "machineconfigs", None)]] == ["99-worker-gpudirect-rdma"]
    assert [p for p in cluster.paths if "machineconfigs" in p] == [
        "/apis/%s/machineconfigs/%s" % (API_MCO, n) for n in ("99-worker-gpudirect-rdma", "99-gpu-gpudirect-rdma", "99-absent")]
    assert not [u for u in collector.unavailable if u["kind"] == "MachineConfig"]
