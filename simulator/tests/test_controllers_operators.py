"""Reactions of the simulated operators (NFD, SR-IOV, NVIDIA Network, NVIDIA GPU) to their custom resources."""

import calendar
import copy
import json
import time

import pytest
from kubernetes.client.exceptions import ApiException

from simulator.catalog import PACKAGES
from simulator.controllers.testing import Kube, wait

NFD = "nfd.openshift.io/v1"
SRIOV = "sriovnetwork.openshift.io/v1"
MLX = "mellanox.com/v1alpha1"
NV = "nvidia.com/v1"
SRV32 = "nvd-srv-32.nvidia.eng.rdu2.dc.redhat.com"
SRV33 = "nvd-srv-33.nvidia.eng.rdu2.dc.redhat.com"
EDGE = "edge-19.edge.lab.eng.rdu2.redhat.com"
PCI = "feature.node.kubernetes.io/"
CHAPTER_WORKER_CONFIG = """core:
  sleepInterval: 60s
sources:
  pci:
    deviceClassWhitelist:
      - "02"
      - "03"
      - "0200"
      - "0207"
      - "12"
    deviceLabelFields:
      - "vendor"
"""


@pytest.fixture
def kube_factory(sim_factory, tmp_path):
    def make(**kwargs):
        cluster = sim_factory(**kwargs)
        return Kube(cluster, str(tmp_path / ("discovery-%s.json" % cluster.path_prefix.strip("/"))))
    return make


@pytest.fixture
def lab(kube_factory):
    """The chapter's lab (mixed-lab profile)."""
    return kube_factory(profile="mixed-lab")


def state(kube, api_version, kind, name):
    """status.state of a cluster-scoped operator CR, None while it has no status."""
    return ((kube.get(api_version, kind, name) or {}).get("status") or {}).get("state")


def labels(kube, node):
    return kube.node(node)["metadata"]["labels"]


def nfd_instance(kube, config=CHAPTER_WORKER_CONFIG, wait_labels=True):
    kube.install("nfd", "openshift-nfd")
    kube.create({"apiVersion": NFD, "kind": "NodeFeatureDiscovery",
                 "metadata": {"name": "nfd-instance", "namespace": "openshift-nfd"},
                 "spec": {"instance": "", "operand": {"servicePort": 12000}, "workerConfig": {"configData": config}}})
    if wait_labels:
        wait(lambda: any(k.startswith(PCI + "pci-") for k in labels(kube, SRV32)), what="NFD labels")


CHAPTER_NCP = {
    "apiVersion": MLX, "kind": "NicClusterPolicy", "metadata": {"name": "nic-cluster-policy"},
    "spec": {
        "ofedDriver": {"image": "doca-driver", "repository": "nvcr.io/nvidia/mellanox", "version": "24.10-0.7.0.0-0",
                       "upgradePolicy": {"autoUpgrade": True, "maxParallelUpgrades": 1}},
        "rdmaSharedDevicePlugin": {"image": "k8s-rdma-shared-dev-plugin", "repository": "ghcr.io/mellanox", "version": "v1.5.1",
                                   "config": json.dumps({"configList": [
                                       {"resourceName": "rdma_shared_device_ib", "rdmaHcaMax": 63, "selectors": {"ifNames": ["ibs2f0"]}},
                                       {"resourceName": "rdma_shared_device_eth", "rdmaHcaMax": 63,
                                        "selectors": {"ifNames": ["ens8f0np0"]}}]})},
        "secondaryNetwork": {"ipoib": {"image": "ipoib-cni", "repository": "ghcr.io/mellanox", "version": "v1.2.0"}},
        "nvIpam": {"image": "nvidia-k8s-ipam", "repository": "ghcr.io/mellanox", "version": "v0.2.0", "enableWebhook": False},
    },
}


def ncp(name="nic-cluster-policy", **spec_changes):
    body = json.loads(json.dumps(CHAPTER_NCP))
    body["metadata"]["name"] = name
    body["spec"].update(spec_changes)
    return body


# --------------------------------------------------------------------------------------------- NFD

def test_nfd_labels_nodes_from_the_profile(lab):
    nfd_instance(lab)
    worker = labels(lab, SRV32)
    assert worker[PCI + "pci-15b3.present"] == "true" and worker[PCI + "pci-15b3.sriov.capable"] == "true"
    assert worker[PCI + "pci-10de.present"] == "true"
    assert worker[PCI + "pci-102b.present"] == "true"
    assert worker[PCI + "network-sriov.capable"] == "true" and worker[PCI + "rdma.capable"] == "true"
    assert worker[PCI + "system-os_release.ID"] == "rhcos"
    assert worker[PCI + "system-os_release.OPENSHIFT_VERSION"] == "4.20"
    assert worker[PCI + "kernel-version.full"] == lab.node(SRV32)["status"]["nodeInfo"]["kernelVersion"]
    edge = labels(lab, EDGE)  # no GPU and no Mellanox NIC on the control-plane node
    assert PCI + "pci-15b3.present" not in edge and PCI + "pci-10de.present" not in edge
    assert edge[PCI + "system-os_release.ID"] == "rhcos"
    cr = lab.get(NFD, "NodeFeatureDiscovery", "nfd-instance", "openshift-nfd")
    conds = {c["type"]: c["status"] for c in cr["status"]["conditions"]}
    assert conds["Available"] == "True" and conds["Degraded"] == "False"


def test_nfd_labels_only_whitelisted_classes_with_configured_fields(lab):
    # nfd-worker defaults: classes 03, 0b40, 12 and label fields class+vendor: no NIC label at all.
    nfd_instance(lab, config="core:\n  sleepInterval: 60s\n")
    worker = labels(lab, SRV32)
    assert worker[PCI + "pci-0302_10de.present"] == "true"
    assert not any("15b3" in k for k in worker)
    # The chapter's whitelist and vendor-only labels; stale labels disappear.
    lab.patch(NFD, "NodeFeatureDiscovery", "nfd-instance",
              {"spec": {"workerConfig": {"configData": CHAPTER_WORKER_CONFIG}}}, "openshift-nfd")
    wait(lambda: labels(lab, SRV32).get(PCI + "pci-15b3.present") == "true", what="pci-15b3 label")
    assert PCI + "pci-0302_10de.present" not in labels(lab, SRV32)


def test_nfd_labels_appear_after_a_delay(kube_factory):
    lab = kube_factory(profile="mixed-lab", config={"nfd_label_delay_seconds": 1.0})
    nfd_instance(lab, wait_labels=False)
    early = labels(lab, SRV32)
    assert PCI + "pci-15b3.present" not in early
    wait(lambda: labels(lab, SRV32).get(PCI + "pci-15b3.present") == "true", what="labels")


# --------------------------------------------------------------------------------------------- SR-IOV

def test_sriov_node_states_follow_the_config_daemon_selector(kube_factory):
    """Node states exist where the config daemons run; a node the selector no longer picks keeps its state for the
    stale-state delay (sriov-network-operator handleStaleNodeState: annotation keep-state-until, 30 minutes, scaled
    here to 1 s), then loses it; a node selected again keeps its state and loses the annotation."""
    lab = kube_factory(profile="mixed-lab", config={"sriov_stale_node_state_seconds": 1.0})
    nfd_instance(lab)
    lab.install("sriov-network-operator", "openshift-sriov-network-operator")
    ns = "openshift-sriov-network-operator"
    assert lab.list(SRIOV, "SriovNetworkNodeState", ns) == []  # nothing runs without the default config
    lab.create({"apiVersion": SRIOV, "kind": "SriovOperatorConfig", "metadata": {"name": "default", "namespace": ns},
                "spec": {"enableInjector": True, "enableOperatorWebhook": True, "logLevel": 2}})
    states = wait(lambda: [s for s in lab.list(SRIOV, "SriovNetworkNodeState", ns)
                           if (s.get("status") or {}).get("syncStatus") == "Succeeded"] if len(
        lab.list(SRIOV, "SriovNetworkNodeState", ns)) == 2 else None, what="two synced node states")
    assert sorted(s["metadata"]["name"] for s in states) == [SRV32, SRV33]
    ifaces = {i["name"]: i for i in states[0]["status"]["interfaces"]}
    assert set(ifaces) == {"ibs2f0", "ens8f0np0"}
    assert ifaces["ibs2f0"]["linkType"] == "IB" and ifaces["ens8f0np0"]["linkType"] == "ETH"
    eth = ifaces["ens8f0np0"]
    assert (eth["vendor"], eth["deviceID"], eth["driver"], eth["pciAddress"]) == ("15b3", "a2dc", "mlx5_core", "0000:a0:00.0")
    assert eth["totalvfs"] == 16 and eth["numVfs"] == 0 and eth["linkSpeed"] == "400000 Mb/s"
    # The chapter's selector waits for the network operator's driver: no node qualifies yet.
    lab.patch(SRIOV, "SriovOperatorConfig", "default", {"spec": {"configDaemonNodeSelector": {
        "network.nvidia.com/operator.mofed.wait": "false", "node-role.kubernetes.io/worker": "",
        "feature.node.kubernetes.io/pci-15b3.sriov.capable": "true"}}}, ns)
    kept = wait(lambda: [s for s in lab.list(SRIOV, "SriovNetworkNodeState", ns)
                         if "sriovnetwork.openshift.io/keep-state-until" in (s["metadata"].get("annotations") or {})] or None,
                what="stale node states annotated")
    assert sorted(s["metadata"]["name"] for s in kept) == [SRV32, SRV33] and len(kept) == 2
    until = calendar.timegm(time.strptime(kept[0]["metadata"]["annotations"]["sriovnetwork.openshift.io/keep-state-until"],
                                          "%Y-%m-%dT%H:%M:%SZ"))
    assert until - time.time() <= 1.5, "kept for the (scaled) stale-state delay, written as RFC 3339"
    wait(lambda: lab.list(SRIOV, "SriovNetworkNodeState", ns) == [], timeout=10, what="node states removed")
    # Load only delays the deletion; the annotation holds whole seconds, so the real time may be up to 1 s later.
    assert time.time() >= until - 1, "the stale node states went before their keep-state-until time"
    lab.install("nvidia-network-operator")
    lab.create(ncp())
    wait(lambda: len(lab.list(SRIOV, "SriovNetworkNodeState", ns)) == 2, what="node states once the driver is ready")


# --------------------------------------------------------------------------------------------- NVIDIA Network Operator

def test_nic_cluster_policy_becomes_ready_and_advertises_resources(kube_factory):
    lab = kube_factory(profile="mixed-lab", config={"nic_policy_ready_seconds": 1.5})
    nfd_instance(lab)
    lab.install("nvidia-network-operator")
    lab.create(ncp())
    first = wait(lambda: (lab.get(MLX, "NicClusterPolicy", "nic-cluster-policy").get("status") or {}).get("state"),
                 what="a state")
    assert first == "notReady"
    assert labels(lab, SRV32)["network.nvidia.com/operator.mofed.wait"] == "true"
    wait(lambda: state(lab, MLX, "NicClusterPolicy", "nic-cluster-policy") == "ready", what="ready")
    status = lab.get(MLX, "NicClusterPolicy", "nic-cluster-policy")["status"]
    applied = {s["name"]: s["state"] for s in status["appliedStates"]}
    assert applied["state-OFED"] == "ready" and applied["state-RDMA-device-plugin"] == "ready"
    assert applied["state-ipoib-cni"] == "ready" and applied["state-nv-ipam-cni"] == "ready"
    assert applied["state-SRIOV-device-plugin"] == "ignore" and applied["state-multus-cni"] == "ignore"
    for node in (SRV32, SRV33):
        n = lab.node(node)
        assert n["metadata"]["labels"]["network.nvidia.com/operator.mofed.wait"] == "false"
        assert n["status"]["allocatable"]["rdma/rdma_shared_device_ib"] == "63"
        assert n["status"]["capacity"]["rdma/rdma_shared_device_eth"] == "63"
    assert "network.nvidia.com/operator.mofed.wait" not in labels(lab, EDGE)


def test_a_failing_component_keeps_the_policy_not_ready_until_the_fault_is_cleared(kube_factory):
    """operator_faults nic_policy_component_failure, set and cleared at run time: the operator reconciles at once."""
    lab = kube_factory(profile="mixed-lab")
    nfd_instance(lab)
    lab.install("nvidia-network-operator")
    lab.create(ncp())
    wait(lambda: state(lab, MLX, "NicClusterPolicy", "nic-cluster-policy") == "ready", what="ready")
    lab.sim.faults.update({"operator_faults": {"nic_policy_component_failure": {
        "state": "state-OFED", "message": "driver pod mofed-rhcos4.20 is in CrashLoopBackOff"}}})
    wait(lambda: state(lab, MLX, "NicClusterPolicy", "nic-cluster-policy") == "notReady", what="notReady")
    applied = {s["name"]: s for s in lab.get(MLX, "NicClusterPolicy", "nic-cluster-policy")["status"]["appliedStates"]}
    assert applied["state-OFED"]["state"] == "notReady" and "CrashLoopBackOff" in applied["state-OFED"]["message"]
    assert applied["state-RDMA-device-plugin"]["state"] == "ready"
    assert lab.node(SRV32)["status"]["allocatable"]["rdma/rdma_shared_device_eth"] == "63"  # resources stay
    lab.sim.faults.clear()
    wait(lambda: state(lab, MLX, "NicClusterPolicy", "nic-cluster-policy") == "ready", what="ready again")


def test_nic_cluster_policy_with_another_name_is_ignored(lab):
    lab.install("nvidia-network-operator")
    lab.create(ncp(name="my-policy"))
    status = wait(lambda: lab.get(MLX, "NicClusterPolicy", "my-policy").get("status"), what="status")
    assert status["state"] == "ignore"
    assert status["reason"] == ("Unsupported NicClusterPolicy instance my-policy. Only instance with name "
                                "nic-cluster-policy is supported")


def test_nic_cluster_policy_selector_matching_nothing_is_ready_without_the_resource(lab):
    """Nothing reports a selector that matches no device (the plugin pods run with an empty pool): the policy is
    ready and only the node's allocatable shows it."""
    nfd_instance(lab)
    lab.install("nvidia-network-operator")
    plugin = dict(CHAPTER_NCP["spec"]["rdmaSharedDevicePlugin"])
    plugin["config"] = json.dumps({"configList": [
        {"resourceName": "rdma_shared_device_eth", "rdmaHcaMax": 63, "selectors": {"ifNames": ["ens9f0np0"]}}]})
    lab.create(ncp(rdmaSharedDevicePlugin=plugin))
    wait(lambda: state(lab, MLX, "NicClusterPolicy", "nic-cluster-policy") == "ready", what="ready")
    assert "rdma/rdma_shared_device_eth" not in lab.node(SRV33)["status"]["allocatable"]
    # Fixing the selector (link type of the RoCE port) gives the resource.
    plugin["config"] = json.dumps({"configList": [
        {"resourceName": "rdma_shared_device_eth", "rdmaHcaMax": 63, "selectors": {"vendors": ["15b3"], "linkTypes": ["ether"]}}]})
    lab.patch(MLX, "NicClusterPolicy", "nic-cluster-policy", {"spec": {"rdmaSharedDevicePlugin": plugin}})
    wait(lambda: lab.node(SRV33)["status"]["allocatable"].get("rdma/rdma_shared_device_eth") == "63", what="resource")
    assert "rdma/rdma_shared_device_ib" not in lab.node(SRV33)["status"]["allocatable"]


def test_nic_cluster_policy_state_is_only_ready_or_not_ready(lab):
    """The policy's own state is the state manager's result: ready or notReady, never error; a component whose pods
    are not ready yet carries no message (network-operator pkg/state/manager.go, controllers/nic_policy_helpers.go)."""
    nfd_instance(lab)
    lab.install("nvidia-network-operator")
    seen = []
    lab.sim.store.subscribe(lambda etype, rtype, obj: seen.append(copy.deepcopy(obj.get("status")))
                            if rtype.plural == "nicclusterpolicies" and obj.get("status") else None)
    lab.create(ncp())
    wait(lambda: state(lab, MLX, "NicClusterPolicy", "nic-cluster-policy") == "ready", what="ready")
    assert {s["state"] for s in seen} == {"notReady", "ready"} and not any("reason" in s for s in seen)
    not_ready = [s for s in seen if s["state"] == "notReady"]
    assert all(set(a) == {"name", "state"} for s in not_ready for a in s["appliedStates"])


def test_host_device_plugin_counts_matching_pfs(lab):
    nfd_instance(lab)
    lab.install("nvidia-network-operator")
    config = {"resourceList": [{"resourcePrefix": "nvidia.com", "resourceName": "hostdev",
                                "selectors": {"vendors": ["15b3"], "isRdma": True}}]}
    body = ncp(sriovDevicePlugin={"image": "sriov-network-device-plugin", "repository": "ghcr.io/k8snetworkplumbingwg",
                                  "version": "v3.7.0", "config": json.dumps(config)})
    del body["spec"]["rdmaSharedDevicePlugin"]
    lab.create(body)
    wait(lambda: state(lab, MLX, "NicClusterPolicy", "nic-cluster-policy") == "ready", what="ready")
    assert lab.node(SRV32)["status"]["allocatable"]["nvidia.com/hostdev"] == "2"  # both PFs, IB included


def test_the_operators_webhook_refuses_an_invalid_device_plugin_config(lab):
    """Once the operator runs, its validating webhook (failurePolicy Fail) refuses the policy with HTTP 422."""
    plugin = dict(CHAPTER_NCP["spec"]["rdmaSharedDevicePlugin"], config="{not json")
    body = ncp(rdmaSharedDevicePlugin=plugin)
    lab.install("nvidia-network-operator")
    with pytest.raises(ApiException) as refused:
        lab.create(body)
    assert refused.value.status == 422
    message = json.loads(refused.value.body)["message"]
    assert message.startswith('admission webhook "vnicclusterpolicy.kb.io" denied the request: NicClusterPolicy.mellanox.com '
                              '"nic-cluster-policy" is invalid: spec.rdmaSharedDevicePlugin.Config: Invalid value: "{not json": '
                              'Invalid json of RdmaSharedDevicePluginConfig'), message
    bad_name = dict(plugin, config=json.dumps({"configList": [{"resourceName": "rdma shared", "rdmaHcaMax": 63}]}))
    with pytest.raises(ApiException) as refused:
        lab.create(ncp(rdmaSharedDevicePlugin=bad_name))
    assert "Invalid Resource name" in json.loads(refused.value.body)["message"]


# --------------------------------------------------------------------------------------------- GPU Operator

# Start from the CSV's alm-examples, as NVIDIA's OpenShift guide says to (an empty spec does not deploy).
CLUSTER_POLICY = json.loads(json.dumps(PACKAGES["gpu-operator-certified"]["almExamples"][0]))
CLUSTER_POLICY["spec"]["driver"]["rdma"] = {"enabled": False}


def test_cluster_policy_labels_gpu_nodes_and_sets_capacity(kube_factory):
    lab = kube_factory(profile="mixed-lab", config={"gpu_policy_ready_seconds": 1.5})
    nfd_instance(lab)
    lab.install("gpu-operator-certified")
    lab.create(CLUSTER_POLICY)
    first = wait(lambda: (lab.get(NV, "ClusterPolicy", "gpu-cluster-policy").get("status") or {}).get("state"), what="state")
    assert first == "notReady"
    assert "nvidia.com/gpu" not in lab.node(SRV32)["status"]["allocatable"]
    wait(lambda: state(lab, NV, "ClusterPolicy", "gpu-cluster-policy") == "ready", what="ready")
    cp = lab.get(NV, "ClusterPolicy", "gpu-cluster-policy")["status"]
    assert cp["namespace"] == "nvidia-gpu-operator"
    assert {c["type"]: c["status"] for c in cp["conditions"]}["Ready"] == "True"
    for node in (SRV32, SRV33):
        n = lab.node(node)
        assert n["status"]["allocatable"]["nvidia.com/gpu"] == "2" and n["status"]["capacity"]["nvidia.com/gpu"] == "2"
        lbl = n["metadata"]["labels"]
        assert lbl["nvidia.com/gpu.present"] == "true" and lbl["nvidia.com/gpu.product"] == "NVIDIA-A40"
        assert lbl["nvidia.com/gpu.count"] == "2" and lbl["nvidia.com/gpu.memory"] == "46068"
        assert lbl["nvidia.com/cuda.driver.major"] == "570"
        assert lbl["nvidia.com/gpu.deploy.driver"] == "true" and lbl["nvidia.com/gpu.deploy.device-plugin"] == "true"
    edge = lab.node(EDGE)
    assert "nvidia.com/gpu" not in edge["status"]["allocatable"] and "nvidia.com/gpu.present" not in edge["metadata"]["labels"]


def test_cluster_policy_without_nfd_has_no_gpu_nodes(lab):
    lab.install("gpu-operator-certified")
    lab.create(CLUSTER_POLICY)
    cp = wait(lambda: lab.get(NV, "ClusterPolicy", "gpu-cluster-policy").get("status"), what="status")
    assert cp["state"] == "ready"
    assert {c["type"]: c["reason"] for c in cp["conditions"]} == {"Ready": "NFDLabelsMissing", "Error": "Ready"}
    assert "nvidia.com/gpu" not in lab.node(SRV32)["status"]["allocatable"]


def test_cluster_policy_with_rdma_waits_for_the_network_operator_driver(lab):
    nfd_instance(lab)
    lab.install("gpu-operator-certified")
    body = json.loads(json.dumps(CLUSTER_POLICY))
    body["spec"]["driver"]["rdma"] = {"enabled": True, "useHostMofed": False}
    lab.create(body)
    wait(lambda: (lab.get(NV, "ClusterPolicy", "gpu-cluster-policy").get("status") or {}).get("state") == "notReady",
         what="notReady")
    time.sleep(0.5)
    cp = lab.get(NV, "ClusterPolicy", "gpu-cluster-policy")["status"]
    # Not ready is Error=True with reason OperandNotReady (and Ready=False, reason Error), as the operator writes it.
    error = [c for c in cp["conditions"] if c["type"] == "Error"][0]
    assert cp["state"] == "notReady" and error["status"] == "True" and error["reason"] == "OperandNotReady"
    assert "mofed-validation" in error["message"]
    assert [c for c in cp["conditions"] if c["type"] == "Ready"][0]["reason"] == "Error"
    lab.install("nvidia-network-operator")
    lab.create(ncp())
    wait(lambda: state(lab, NV, "ClusterPolicy", "gpu-cluster-policy") == "ready",
         what="ready after the NIC driver")


def test_second_cluster_policy_is_ignored(lab):
    nfd_instance(lab)
    lab.install("gpu-operator-certified")
    lab.create(CLUSTER_POLICY)
    other = json.loads(json.dumps(CLUSTER_POLICY))
    other["metadata"]["name"] = "second"
    lab.create(other)
    wait(lambda: state(lab, NV, "ClusterPolicy", "gpu-cluster-policy") == "ready", what="ready")
    # "ignored" lives only in the operator's memory: the second policy is never given a status.
    assert lab.get(NV, "ClusterPolicy", "second").get("status") is None


def test_cluster_policy_reconcile_failure_is_error_reconcile_failed(lab):
    nfd_instance(lab)
    lab.install("gpu-operator-certified")
    failure = {"state": "state-driver", "message": "no matching driver image"}
    lab.sim.faults.update({"operator_faults": {"gpu_policy_reconcile_failure": failure}})
    lab.create(CLUSTER_POLICY)
    cp = wait(lambda: (lab.get(NV, "ClusterPolicy", "gpu-cluster-policy").get("status") or {}).get("conditions")
              and lab.get(NV, "ClusterPolicy", "gpu-cluster-policy")["status"], what="status")
    error = [c for c in cp["conditions"] if c["type"] == "Error"][0]
    assert cp["state"] == "notReady" and (error["status"], error["reason"]) == ("True", "ReconcileFailed")
    assert error["message"] == "Failed to reconcile state-driver: no matching driver image"


# --------------------------------------------------------------------------------------------- whole chapter flow

@pytest.mark.parametrize("profile", ["roce-lab", "infiniband-lab"])
def test_all_four_operators_install_and_settle(kube_factory, profile):
    kube = kube_factory(profile=profile)
    started = time.monotonic()
    for package in ("nfd", "sriov-network-operator", "nvidia-network-operator", "gpu-operator-certified"):
        kube.install(package)
    assert time.monotonic() - started < 4
    kube.create({"apiVersion": NFD, "kind": "NodeFeatureDiscovery", "metadata": {"name": "nfd-instance", "namespace": "openshift-nfd"},
                 "spec": {"workerConfig": {"configData": CHAPTER_WORKER_CONFIG}}})
    link = "ether" if profile == "roce-lab" else "infiniband"
    body = ncp(rdmaSharedDevicePlugin={**CHAPTER_NCP["spec"]["rdmaSharedDevicePlugin"], "config": json.dumps({"configList": [
        {"resourceName": "rdma_shared_device_a", "rdmaHcaMax": 63, "selectors": {"vendors": ["15b3"], "linkTypes": [link]}}]})})
    kube.create(body)
    kube.create(CLUSTER_POLICY)
    wait(lambda: state(kube, MLX, "NicClusterPolicy", "nic-cluster-policy") == "ready", what="NCP ready")
    wait(lambda: state(kube, NV, "ClusterPolicy", "gpu-cluster-policy") == "ready", what="CP ready")
    worker = [n for n in kube.list("v1", "Node") if "node-role.kubernetes.io/worker" in n["metadata"]["labels"]][0]
    assert worker["status"]["allocatable"]["nvidia.com/gpu"] == "8"
    assert worker["status"]["allocatable"]["rdma/rdma_shared_device_a"] == "63"
    rv = kube.sim.store.current_resource_version
    time.sleep(0.5)
    assert kube.sim.store.current_resource_version == rv  # controllers settle: no write loops


def test_operators_hold_their_crs_with_finalizers_that_only_a_running_operator_removes(lab):
    """cluster-nfd-operator (nfd-finalizer) and sriov-network-operator (operatorconfig/poolconfig/netattdef
    finalizers) take their finalizer off a deleted CR only while they run: deleted after the operator, a CR stays."""
    nfd_instance(lab, wait_labels=False)

    def finalizers():
        return lab.get(NFD, "NodeFeatureDiscovery", "nfd-instance", "openshift-nfd")["metadata"].get("finalizers") or []

    assert wait(lambda: "nfd-finalizer" in finalizers(), what="finalizer added")
    lab.delete(NFD, "NodeFeatureDiscovery", "nfd-instance", "openshift-nfd")
    wait(lambda: lab.get(NFD, "NodeFeatureDiscovery", "nfd-instance", "openshift-nfd") is None, what="deleted while running")

    lab.create({"apiVersion": NFD, "kind": "NodeFeatureDiscovery", "metadata": {"name": "late", "namespace": "openshift-nfd"},
                "spec": {"instance": "", "operand": {"servicePort": 12000}}})
    wait(lambda: (lab.get(NFD, "NodeFeatureDiscovery", "late", "openshift-nfd")["metadata"].get("finalizers")), what="finalizer")
    for csv in lab.list("operators.coreos.com/v1alpha1", "ClusterServiceVersion", "openshift-nfd"):
        lab.delete("operators.coreos.com/v1alpha1", "ClusterServiceVersion", csv["metadata"]["name"], "openshift-nfd")
    lab.delete(NFD, "NodeFeatureDiscovery", "late", "openshift-nfd")
    time.sleep(0.5)
    stuck = lab.get(NFD, "NodeFeatureDiscovery", "late", "openshift-nfd")
    assert stuck["metadata"]["deletionTimestamp"] and stuck["metadata"]["finalizers"] == ["nfd-finalizer"]
