"""The operands the simulated operators run (simulator/controllers/operands.py, workloads.py): DaemonSets with the
upstream names and selectors, pods per node with the kubelet's container statuses, workload status as the kube
controllers keep it, the operators' status computed from them, and operand faults."""

import json
import time

import pytest

from simulator.controllers.operands import string_hash
from simulator.controllers.testing import wait
from simulator.tests.test_controllers_operators import (  # noqa: F401 pylint: disable=unused-import
    CLUSTER_POLICY, EDGE, MLX, NV, SRV32, SRV33, kube_factory, labels, ncp, nfd_instance, state)

NS = "nvidia-network-operator"


def test_string_hash_is_fnv32a_through_safe_encode():
    # FNV-32a("a") = 0xe40c292c = 3826002220 (the FNV reference vectors); each decimal digit d maps to
    # alphanums[ord(d) % 27] (k8s.io/apimachinery pkg/util/rand SafeEncodeString).
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    assert string_hash("a") == "".join(alphabet[ord(ch) % 27] for ch in "3826002220")


def _ds(lab, namespace, prefix=""):
    return {d["metadata"]["name"]: d for d in lab.list("apps/v1", "DaemonSet", namespace) if d["metadata"]["name"].startswith(prefix)}


def _pods(lab, namespace, owner):
    return [p for p in lab.list("v1", "Pod", namespace)
            if any(r["name"] == owner for r in p["metadata"].get("ownerReferences") or ())]


def _rolled_out(ds):
    """kubectl rollout status for a DaemonSet (kubectl/pkg/polymorphichelpers/rollout_status.go DaemonSetStatusViewer)."""
    status = ds.get("status") or {}
    return (status.get("observedGeneration", 0) >= ds["metadata"]["generation"]
            and status.get("updatedNumberScheduled", 0) >= status.get("desiredNumberScheduled", 0)
            and status.get("numberAvailable", 0) >= status.get("desiredNumberScheduled", 0))


def test_network_operator_runs_its_operands_on_the_nic_nodes(kube_factory):
    lab = kube_factory(profile="mixed-lab")
    nfd_instance(lab)
    lab.install("nvidia-network-operator")
    lab.create(ncp())
    wait(lambda: state(lab, MLX, "NicClusterPolicy", "nic-cluster-policy") == "ready", what="ready")
    sets = _ds(lab, NS)
    kernel = lab.node(SRV32)["status"]["nodeInfo"]["kernelVersion"]
    driver = "mofed-rhcos4.20-%s-ds" % string_hash(kernel)
    assert {driver, "rdma-shared-dp-ds", "kube-ipoib-cni-ds", "nv-ipam-node"} <= set(sets)
    ds = sets[driver]
    assert ds["spec"]["updateStrategy"] == {"type": "OnDelete"}
    assert ds["metadata"]["labels"]["nvidia.com/ofed-driver"] == "" and ds["metadata"]["labels"]["ds-owner"] == "nic-cluster-policy"
    assert ds["metadata"]["labels"]["nvidia.network-operator.state"] == "state-OFED"
    template = ds["spec"]["template"]["spec"]
    assert template["containers"][0]["name"] == "mofed-container"
    assert template["containers"][0]["image"] == "nvcr.io/nvidia/mellanox/doca-driver:24.10-0.7.0.0-0-rhcos4.20-amd64"
    assert template["nodeSelector"]["feature.node.kubernetes.io/kernel-version.full"] == kernel
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in template["tolerations"]
    assert sets["rdma-shared-dp-ds"]["spec"]["template"]["spec"]["nodeSelector"] == {
        "feature.node.kubernetes.io/pci-15b3.present": "true", "network.nvidia.com/operator.mofed.wait": "false"}
    for name in (driver, "rdma-shared-dp-ds"):
        status = sets[name]["status"]
        assert status["desiredNumberScheduled"] == status["numberReady"] == status["numberAvailable"] == 2
        assert status["updatedNumberScheduled"] == status["currentNumberScheduled"] == 2
        assert status["observedGeneration"] == sets[name]["metadata"]["generation"] and "numberUnavailable" not in status
        assert _rolled_out(sets[name])
        pods = _pods(lab, NS, name)
        assert sorted(p["spec"]["nodeName"] for p in pods) == sorted([SRV32, SRV33])  # not the control-plane node EDGE
        for pod in pods:
            assert pod["status"]["phase"] == "Running"
            assert all(c["ready"] and "running" in c["state"] for c in pod["status"]["containerStatuses"])
            assert pod["metadata"]["labels"]["controller-revision-hash"]
    assert labels(lab, SRV32)["network.nvidia.com/operator.mofed.wait"] == "false"


def test_a_crash_looping_driver_shows_in_its_pod_and_keeps_the_policy_not_ready(kube_factory):
    message = "Could not resolve Linux kernel headers for 5.14.0-427.37.1.el9_4.x86_64"
    lab = kube_factory(profile="mixed-lab", faults={"operator_faults": {"operand_failures": [
        {"workload": "mofed-*", "nodes": [SRV33], "container": "mofed-container", "reason": "CrashLoopBackOff",
         "exit_code": 1, "message": message, "log": "Installing kernel headers\n" + message + "\n"}]}})
    nfd_instance(lab)
    lab.install("nvidia-network-operator")
    lab.create(ncp())

    def crashing():
        for pod in lab.list("v1", "Pod", NS):
            if pod["spec"].get("nodeName") == SRV33 and pod["metadata"]["name"].startswith("mofed-"):
                status = (pod.get("status") or {}).get("containerStatuses") or [{}]
                if status[0].get("restartCount", 0) >= 2:
                    return pod
        return None

    pod = wait(crashing, what="a restarting driver pod")
    container = pod["status"]["containerStatuses"][0]
    assert container["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    assert container["state"]["waiting"]["message"].startswith("back-off ")
    assert "restarting failed container=mofed-container pod=%s_%s(" % (pod["metadata"]["name"], NS) in container["state"]["waiting"]["message"]
    assert container["lastState"]["terminated"]["exitCode"] == 1 and container["lastState"]["terminated"]["message"] == message
    log = lab.core.read_namespaced_pod_log(pod["metadata"]["name"], NS)
    assert message in log
    status = lab.get(MLX, "NicClusterPolicy", "nic-cluster-policy")["status"]
    assert status["state"] == "notReady" and "reason" not in status
    assert {"name": "state-OFED", "state": "notReady"} in status["appliedStates"]
    assert labels(lab, SRV33)["network.nvidia.com/operator.mofed.wait"] == "true"
    assert labels(lab, SRV32)["network.nvidia.com/operator.mofed.wait"] == "false"
    lab.sim.faults.operator_faults.pop("operand_failures")
    wait(lambda: state(lab, MLX, "NicClusterPolicy", "nic-cluster-policy") == "ready", what="ready once the driver loads")


def test_an_image_that_cannot_be_pulled_backs_off_naming_the_image(kube_factory):
    lab = kube_factory(profile="mixed-lab", faults={"operator_faults": {"operand_failures": [
        {"workload": "rdma-shared-dp-ds", "reason": "ImagePullBackOff",
         "message": "initializing source docker://ghcr.io/mellanox/k8s-rdma-shared-dev-plugin:v1.5.1: reading manifest v1.5.1 "
                    "in mirror.example.com/mellanox/k8s-rdma-shared-dev-plugin: manifest unknown"}]}})
    nfd_instance(lab)
    lab.install("nvidia-network-operator")
    lab.create(ncp())

    def backing_off():
        pods = _pods(lab, NS, "rdma-shared-dp-ds")
        waiting = [((p.get("status") or {}).get("containerStatuses") or [{}])[0].get("state", {}).get("waiting", {}) for p in pods]
        return waiting if pods and all(w.get("reason") == "ImagePullBackOff" for w in waiting) else None

    waiting = wait(backing_off, what="ImagePullBackOff")
    assert waiting[0]["message"] == 'Back-off pulling image "ghcr.io/mellanox/k8s-rdma-shared-dev-plugin:v1.5.1"'
    assert state(lab, MLX, "NicClusterPolicy", "nic-cluster-policy") == "notReady"


def test_a_driver_version_change_rolls_the_driver_pods_before_the_policy_is_ready_again(kube_factory):
    lab = kube_factory(profile="mixed-lab")
    nfd_instance(lab)
    lab.install("nvidia-network-operator")
    lab.create(ncp())
    wait(lambda: state(lab, MLX, "NicClusterPolicy", "nic-cluster-policy") == "ready", what="ready")
    spec = json.loads(json.dumps(ncp()["spec"]["ofedDriver"]))
    spec["version"] = "25.04-0.6.1.0-2"
    lab.patch(MLX, "NicClusterPolicy", "nic-cluster-policy", {"spec": {"ofedDriver": spec}})
    wait(lambda: state(lab, MLX, "NicClusterPolicy", "nic-cluster-policy") == "notReady", what="notReady while rolling")
    wait(lambda: state(lab, MLX, "NicClusterPolicy", "nic-cluster-policy") == "ready", what="ready after the roll")
    driver = next(d for d in _ds(lab, NS, "mofed-").values())
    assert _rolled_out(driver) and driver["metadata"]["generation"] == 2
    images = {p["spec"]["containers"][0]["image"] for p in _pods(lab, NS, driver["metadata"]["name"])}
    assert images == {"nvcr.io/nvidia/mellanox/doca-driver:25.04-0.6.1.0-2-rhcos4.20-amd64"}


def test_gpu_operator_runs_its_operands_on_the_gpu_nodes(kube_factory):
    lab = kube_factory(profile="mixed-lab")
    nfd_instance(lab)
    lab.install("gpu-operator-certified")
    lab.create(CLUSTER_POLICY)
    wait(lambda: ((lab.get(NV, "ClusterPolicy", "gpu-cluster-policy") or {}).get("status") or {}).get("state") == "ready", what="ready")
    namespace = lab.get(NV, "ClusterPolicy", "gpu-cluster-policy")["status"]["namespace"]
    sets = _ds(lab, namespace)
    driver = [n for n in sets if n.startswith("nvidia-driver-daemonset")]
    assert len(driver) == 1
    assert {"nvidia-container-toolkit-daemonset", "nvidia-device-plugin-daemonset", "nvidia-operator-validator",
            "gpu-feature-discovery", "nvidia-dcgm-exporter"} <= set(sets)
    plugin = sets["nvidia-device-plugin-daemonset"]
    assert plugin["spec"]["template"]["spec"]["nodeSelector"] == {"nvidia.com/gpu.deploy.device-plugin": "true"}
    assert sorted(p["spec"]["nodeName"] for p in _pods(lab, namespace, "nvidia-device-plugin-daemonset")) == sorted([SRV32, SRV33])
    assert all(_rolled_out(ds) for ds in sets.values())
    assert EDGE not in {p["spec"]["nodeName"] for p in lab.list("v1", "Pod", namespace) if p["metadata"]["name"].startswith("nvidia-")}


def test_a_daemonset_without_nodes_reports_zero_desired(kube_factory):
    lab = kube_factory(profile="mixed-lab")
    lab.namespace("operand-test")
    lab.create({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "nowhere", "namespace": "operand-test"},
                "spec": {"selector": {"matchLabels": {"app": "nowhere"}}, "template": {
                    "metadata": {"labels": {"app": "nowhere"}},
                    "spec": {"nodeSelector": {"example.com/none": "true"}, "containers": [{"name": "c", "image": "i"}]}}}})
    ds = wait(lambda: (lab.get("apps/v1", "DaemonSet", "nowhere", "operand-test").get("status") or {}).get("observedGeneration")
              and lab.get("apps/v1", "DaemonSet", "nowhere", "operand-test"), what="status")
    assert ds["status"]["desiredNumberScheduled"] == 0 and ds["status"]["numberReady"] == 0


@pytest.mark.parametrize("driver_seconds", [0.6, 9.0])  # 60 s and 900 s, the documented range, scaled 1/100
def test_the_policy_is_ready_only_after_the_driver_build_and_load_at_both_ends_of_its_range(kube_factory, driver_seconds):
    lab = kube_factory(profile="mixed-lab", config={"nic_policy_ready_seconds": driver_seconds})
    nfd_instance(lab)
    lab.install("nvidia-network-operator")
    started = time.monotonic()
    lab.create(ncp())
    wait(lambda: state(lab, MLX, "NicClusterPolicy", "nic-cluster-policy") == "ready", timeout=60 + driver_seconds, what="ready")
    assert time.monotonic() - started >= driver_seconds
