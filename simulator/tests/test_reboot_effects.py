"""Reboot effects on a node's extended resources, in conformance with the kubelet's device manager (kubernetes
pkg/kubelet/cm/devicemanager manager.go readCheckpoint and GetCapacity, types.go endpointStopGracePeriod; the node
status setter pkg/kubelet/nodestatus/setters.go): after a reboot the resources stay in capacity with allocatable 0
until their device plugin registers again, and one whose plugin does not come back is dropped after the grace."""

import time

from simulator.controllers import devicemanager
from simulator.controllers.testing import wait
from simulator.tests.test_controllers_operators import (  # noqa: F401 pylint: disable=unused-import
    MLX, SRV32, kube_factory, ncp, nfd_instance, state)
from simulator.tests.test_controllers_rdma import CRIO_MEMLOCK, SRIOV_POLICY, sriov_ready

SRIOV_RESOURCE = "openshift.io/sriovlegacy"

RDMA = "rdma/rdma_shared_device_ib"


def resource_history(lab, node, resource):
    """(Ready, capacity, allocatable) of the node's resource in every version the server kept, oldest first."""
    seen = []
    store = lab.sim.store
    nodes = next(t for t in store.resource_types() if t.group == "" and t.plural == "nodes")
    for _etype, obj in store.events_since(0, nodes, None):
        if obj["metadata"]["name"] != node:
            continue
        ready = [c["status"] for c in (obj.get("status") or {}).get("conditions") or () if c["type"] == "Ready"]
        status = obj.get("status") or {}
        entry = (ready[0] if ready else None, (status.get("capacity") or {}).get(resource),
                 (status.get("allocatable") or {}).get(resource))
        if not seen or seen[-1] != entry:
            seen.append(entry)
    return seen


def after_reboot(history):
    """The entries after the node was NotReady and Ready again, or None before that."""
    down = [i for i, entry in enumerate(history) if entry[0] == "False"]
    return [entry for entry in history[down[0]:] if entry[0] == "True"] if down else None


def test_a_reboot_withdraws_the_device_plugin_resources_until_the_plugin_registers_again(kube_factory):
    lab = kube_factory(profile="mixed-lab", config={"mco_node_update_seconds": 0.2, "device_plugin_register_seconds": 0.4})
    nfd_instance(lab)
    lab.install("nvidia-network-operator")
    lab.create(ncp())
    wait(lambda: state(lab, MLX, "NicClusterPolicy", "nic-cluster-policy") == "ready", what="policy ready")
    wait(lambda: lab.node(SRV32)["status"]["allocatable"].get(RDMA) == "63", what="resource advertised")
    lab.create(CRIO_MEMLOCK)  # a MachineConfig: every worker drains and reboots, one at a time
    back = wait(lambda: after_reboot(resource_history(lab, SRV32, RDMA)), timeout=20, what="the node back from its reboot")
    # The kubelet started: capacity kept, allocatable 0; the plugin registered: allocatable back.
    assert back[0] == ("True", "63", "0"), resource_history(lab, SRV32, RDMA)
    wait(lambda: lab.node(SRV32)["status"]["allocatable"].get(RDMA) == "63", timeout=10, what="the plugin registered")
    history = resource_history(lab, SRV32, RDMA)
    assert history[-1] == ("True", "63", "63") and ("False", "63", "63") in history, history


def test_a_plugin_that_does_not_register_within_the_grace_is_dropped(kube_factory):
    """endpointStopGracePeriod (5 minutes, scaled to 1 s here): the SR-IOV device plugin's pod comes back after the
    reboot but its image cannot be pulled any more, so it never registers; until the grace ends the node keeps the
    resource's capacity with allocatable 0, then reports 0 for both."""
    lab = kube_factory(profile="mixed-lab", config={"device_plugin_register_seconds": 0.1, "kubelet_endpoint_stop_grace_seconds": 1.0})
    sriov_ready(lab)
    lab.create(SRIOV_POLICY)
    wait(lambda: lab.node(SRV32)["status"]["allocatable"].get(SRIOV_RESOURCE) == "8", timeout=20, what="VFs advertised")
    plugin = [p for p in lab.list("v1", "Pod") if p["spec"].get("nodeName") == SRV32
              and any(r["name"] == "sriov-device-plugin" for r in p["metadata"].get("ownerReferences") or ())]
    assert len(plugin) == 1
    lab.sim.faults.operator_faults["operand_failures"] = [
        {"workload": "sriov-device-plugin", "nodes": [SRV32], "reason": "ImagePullBackOff", "message": "manifest unknown"}]
    lab.delete("v1", "Pod", plugin[0]["metadata"]["name"], plugin[0]["metadata"]["namespace"])
    started = time.monotonic()
    lab.sim.call(devicemanager.kubelet_started, lab.sim.controllers.runtime, SRV32)
    node = lab.node(SRV32)
    assert (node["status"]["capacity"][SRIOV_RESOURCE], node["status"]["allocatable"][SRIOV_RESOURCE]) == ("8", "0")
    wait(lambda: lab.node(SRV32)["status"]["capacity"].get(SRIOV_RESOURCE) == "0", timeout=10, what="the resource dropped")
    assert time.monotonic() - started >= 0.9 and lab.node(SRV32)["status"]["allocatable"][SRIOV_RESOURCE] == "0"
