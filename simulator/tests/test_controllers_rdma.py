"""RDMA-method reactions: network CRs -> NetworkAttachmentDefinitions, SR-IOV node policies -> VFs and
node reboots, MachineConfigs -> MachineConfigPool rollouts."""

import base64
import json
import threading
import time

import pytest

from simulator.controllers.testing import Kube, wait

from .test_controllers_operators import (  # noqa: F401 pylint: disable=unused-import
    CHAPTER_NCP, SRV32, SRV33, kube_factory, nfd_instance)

MLX = "mellanox.com/v1alpha1"
SRIOV = "sriovnetwork.openshift.io/v1"
NAD = "k8s.cni.cncf.io/v1"
MC = "machineconfiguration.openshift.io/v1"
SRIOV_NS = "openshift-sriov-network-operator"
IPAM = '{"type": "whereabouts", "range": "192.168.3.225/28", "exclude": ["192.168.3.229/30", "192.168.3.236/32"]}'


@pytest.fixture
def lab(sim_factory, tmp_path):
    cluster = sim_factory(profile="mixed-lab")
    return Kube(cluster, str(tmp_path / "discovery.json"))


def nad_config(kube, name, namespace="default"):
    nad = wait(lambda: kube.get(NAD, "NetworkAttachmentDefinition", name, namespace), what="NAD %s" % name)
    return nad, json.loads(nad["spec"]["config"])


def net_state(kube, kind, name):
    return ((kube.get(MLX, kind, name) or {}).get("status") or {}).get("state")


# --------------------------------------------------------------------------------------------- network CRs

def test_network_operator_networks_render_nads(lab):
    lab.install("nvidia-network-operator")
    lab.create({"apiVersion": MLX, "kind": "MacvlanNetwork", "metadata": {"name": "rdmashared-net"},
                "spec": {"networkNamespace": "default", "master": "ens8f0np0", "mode": "bridge", "mtu": 1500,
                         "ipam": '{"type": "whereabouts", "range": "192.168.2.0/24", "gateway": "192.168.2.1"}'}})
    lab.create({"apiVersion": MLX, "kind": "IPoIBNetwork", "metadata": {"name": "example-ipoibnetwork"},
                "spec": {"networkNamespace": "default", "master": "ibs2f0", "ipam": IPAM}})
    lab.create({"apiVersion": MLX, "kind": "HostDeviceNetwork", "metadata": {"name": "hostdev-net"},
                "spec": {"networkNamespace": "default", "resourceName": "hostdev", "ipam": IPAM}})
    _macvlan_nad, macvlan = nad_config(lab, "rdmashared-net")
    assert (macvlan["type"], macvlan["master"], macvlan["mode"], macvlan["mtu"]) == ("macvlan", "ens8f0np0", "bridge", 1500)
    assert macvlan["ipam"] == {"type": "whereabouts", "range": "192.168.2.0/24", "gateway": "192.168.2.1"}
    _ipoib_nad, ipoib = nad_config(lab, "example-ipoibnetwork")
    assert (ipoib["type"], ipoib["master"], ipoib["ipam"]["range"]) == ("ipoib", "ibs2f0", "192.168.3.225/28")
    nad, hostdev = nad_config(lab, "hostdev-net")
    assert hostdev["type"] == "host-device"
    assert nad["metadata"]["annotations"]["k8s.v1.cni.cncf.io/resourceName"] == "nvidia.com/hostdev"
    for kind, name in (("MacvlanNetwork", "rdmashared-net"), ("IPoIBNetwork", "example-ipoibnetwork"),
                       ("HostDeviceNetwork", "hostdev-net")):
        wait(lambda: net_state(lab, kind, name) == "ready", what="%s ready" % kind)
    lab.delete(MLX, "MacvlanNetwork", "rdmashared-net")
    wait(lambda: lab.get(NAD, "NetworkAttachmentDefinition", "rdmashared-net", "default") is None, what="NAD removed")


def test_network_operator_replaces_the_annotations_of_macvlan_and_ipoib_networks(lab):
    """Mellanox/network-operator pkg/state/state_macvlan_network.go, state_ipoib_network.go (updateNetAttDefNamespace):
    an Update replaces the whole annotation map, last-applied-configuration included; state_hostdevice_network.go
    leaves a HostDeviceNetwork's annotations alone. The Update is recorded under the field manager "manager"."""
    lab.install("nvidia-network-operator")
    last_applied = {"kubectl.kubernetes.io/last-applied-configuration": "{}", "team": "rdma"}
    specs = {"MacvlanNetwork": {"networkNamespace": "default", "master": "ens8f0np0", "mode": "bridge", "ipam": IPAM},
             "IPoIBNetwork": {"networkNamespace": "default", "master": "ibs2f0", "ipam": IPAM},
             "HostDeviceNetwork": {"networkNamespace": "default", "resourceName": "hostdev", "ipam": IPAM}}
    for kind, spec in specs.items():
        lab.create({"apiVersion": MLX, "kind": kind, "metadata": {"name": kind.lower(), "annotations": dict(last_applied)},
                    "spec": spec})
    for kind, annotation in (("MacvlanNetwork", "operator.macvlannetwork.mellanox.com/last-network-namespace"),
                             ("IPoIBNetwork", "operator.ipoibnetwork.mellanox.com/last-network-namespace")):
        wait(lambda k=kind: (lab.get(MLX, k, k.lower())["metadata"].get("annotations") or {}) != last_applied,
             what="%s annotations rewritten" % kind)
        cr = lab.get(MLX, kind, kind.lower())
        assert cr["metadata"]["annotations"] == {annotation: "default"}
        owners = {(m["manager"], m["operation"]): m["fieldsV1"] for m in cr["metadata"]["managedFields"]}
        assert owners[("manager", "Update")] == {"f:metadata": {"f:annotations": {"f:" + annotation: {}}}}
        # Converged: the operator does not write the CR again.
        wait(lambda k=kind: net_state(lab, k, k.lower()) == "ready", what="%s ready" % kind)
        lab.patch(MLX, kind, kind.lower(), {"spec": {"ipam": IPAM.replace("225/28", "226/28")}})
        time.sleep(0.1)
        assert lab.get(MLX, kind, kind.lower())["metadata"]["annotations"] == {annotation: "default"}
    wait(lambda: net_state(lab, "HostDeviceNetwork", "hostdevicenetwork") == "ready", what="HostDeviceNetwork ready")
    assert lab.get(MLX, "HostDeviceNetwork", "hostdevicenetwork")["metadata"]["annotations"] == last_applied


def test_a_deleted_nad_is_rendered_again_while_its_network_exists(lab):
    lab.install("nvidia-network-operator")
    lab.create({"apiVersion": MLX, "kind": "MacvlanNetwork", "metadata": {"name": "rdmashared-net"},
                "spec": {"networkNamespace": "default", "master": "ens8f0np0", "mode": "bridge", "ipam": IPAM}})
    first, config = nad_config(lab, "rdmashared-net")
    lab.delete(NAD, "NetworkAttachmentDefinition", "rdmashared-net", "default")

    def rendered_again():
        nad = lab.get(NAD, "NetworkAttachmentDefinition", "rdmashared-net", "default")
        return nad is not None and nad["metadata"]["uid"] != first["metadata"]["uid"]

    wait(rendered_again, what="the NAD rendered again")
    assert nad_config(lab, "rdmashared-net")[1] == config
    lab.delete(MLX, "MacvlanNetwork", "rdmashared-net")
    wait(lambda: lab.get(NAD, "NetworkAttachmentDefinition", "rdmashared-net", "default") is None, what="NAD removed")


def test_network_in_missing_namespace_is_an_error_until_it_exists(lab):
    lab.install("nvidia-network-operator")
    lab.create({"apiVersion": MLX, "kind": "IPoIBNetwork", "metadata": {"name": "ib-net"},
                "spec": {"networkNamespace": "rdma-workloads", "master": "ibs2f0", "ipam": IPAM}})
    wait(lambda: net_state(lab, "IPoIBNetwork", "ib-net") == "error", what="error")
    assert "rdma-workloads" in lab.get(MLX, "IPoIBNetwork", "ib-net")["status"]["reason"]
    lab.namespace("rdma-workloads")
    wait(lambda: net_state(lab, "IPoIBNetwork", "ib-net") == "ready", what="ready once the namespace exists")
    assert nad_config(lab, "ib-net", "rdma-workloads")[1]["type"] == "ipoib"


def test_bad_ipam_json_is_an_error(lab):
    lab.install("nvidia-network-operator")
    lab.create({"apiVersion": MLX, "kind": "MacvlanNetwork", "metadata": {"name": "bad"},
                "spec": {"networkNamespace": "default", "master": "ens8f0np0", "mode": "bridge", "ipam": "{range: x"}})
    wait(lambda: net_state(lab, "MacvlanNetwork", "bad") == "error", what="error")
    assert "ipam" in lab.get(MLX, "MacvlanNetwork", "bad")["status"]["reason"]
    assert lab.get(NAD, "NetworkAttachmentDefinition", "bad", "default") is None


# --------------------------------------------------------------------------------------------- SR-IOV legacy

SRIOV_POLICY = {
    "apiVersion": SRIOV, "kind": "SriovNetworkNodePolicy",
    "metadata": {"name": "sriov-legacy-policy", "namespace": SRIOV_NS},
    "spec": {"deviceType": "netdevice", "mtu": 1500, "nicSelector": {"vendor": "15b3", "pfNames": ["ens8f0np0#0-7"]},
             "nodeSelector": {"feature.node.kubernetes.io/pci-15b3.present": "true"}, "numVfs": 8, "priority": 90,
             "isRdma": True, "resourceName": "sriovlegacy"},
}


def sriov_ready(kube):
    nfd_instance(kube)
    kube.install("sriov-network-operator")
    kube.create({"apiVersion": SRIOV, "kind": "SriovOperatorConfig", "metadata": {"name": "default", "namespace": SRIOV_NS},
                 "spec": {"enableInjector": True, "enableOperatorWebhook": True, "logLevel": 2}})
    wait(lambda: len([s for s in kube.list(SRIOV, "SriovNetworkNodeState", SRIOV_NS)
                      if (s.get("status") or {}).get("syncStatus") == "Succeeded"]) == 2, what="node states synced")
    webhook_ready(kube)


class Unschedulable:
    """Records, from a background poller, the largest number of nodes cordoned at the same time."""

    def __init__(self, kube, names):
        self.kube, self.names, self.most, self.seen = kube, names, 0, set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.is_set():
            nodes = self.kube.list("v1", "Node")  # one list = one consistent snapshot
            down = {n["metadata"]["name"] for n in nodes
                    if n["metadata"]["name"] in self.names and (n.get("spec") or {}).get("unschedulable")}
            self.seen |= down
            self.most = max(self.most, len(down))
            time.sleep(0.01)

    def stop(self):
        self._stop.set()
        self._thread.join(2)


def test_sriov_policy_creates_vfs_rebooting_one_node_at_a_time(lab):
    sriov_ready(lab)
    watcher = Unschedulable(lab, [SRV32, SRV33])
    lab.create(SRIOV_POLICY)
    wait(lambda: any((s.get("status") or {}).get("syncStatus") == "InProgress"
                     for s in lab.list(SRIOV, "SriovNetworkNodeState", SRIOV_NS)), what="InProgress")
    wait(lambda: all((s.get("status") or {}).get("syncStatus") == "Succeeded" and
                     any(i.get("numVfs") == 8 for i in s["status"]["interfaces"])
                     for s in lab.list(SRIOV, "SriovNetworkNodeState", SRIOV_NS)), timeout=5, what="VFs applied")
    watcher.stop()
    assert watcher.seen == {SRV32, SRV33} and watcher.most == 1
    state = lab.get(SRIOV, "SriovNetworkNodeState", SRV32, SRIOV_NS)
    spec_if = state["spec"]["interfaces"]
    assert [(i["name"], i["numVfs"], i["vfGroups"][0]["vfRange"], i["vfGroups"][0]["resourceName"]) for i in spec_if] == \
        [("ens8f0np0", 8, "0-7", "sriovlegacy")]
    pf = next(i for i in state["status"]["interfaces"] if i["name"] == "ens8f0np0")
    assert [v["name"] for v in pf["Vfs"]] == ["ens8f0v%d" % i for i in range(8)]
    assert {v["deviceID"] for v in pf["Vfs"]} == {"101e"} and pf["Vfs"][0]["pciAddress"] == "0000:a0:00.2"
    ib = next(i for i in state["status"]["interfaces"] if i["name"] == "ibs2f0")
    assert ib["numVfs"] == 0
    for name in (SRV32, SRV33):
        # back from its reboot, the node advertises the VFs once the device plugin registered again (devicemanager.py)
        wait(lambda node_name=name: lab.node(node_name)["status"]["allocatable"].get("openshift.io/sriovlegacy") == "8", timeout=10,
             what="%s advertises its VFs" % name)
        node = lab.node(name)
        assert not (node.get("spec") or {}).get("unschedulable")
        assert [c["status"] for c in node["status"]["conditions"] if c["type"] == "Ready"] == ["True"]
    lab.create({"apiVersion": SRIOV, "kind": "SriovNetwork", "metadata": {"name": "sriov-network", "namespace": SRIOV_NS},
                "spec": {"vlan": 0, "networkNamespace": "default", "resourceName": "sriovlegacy", "ipam": IPAM}})
    nad, config = nad_config(lab, "sriov-network")
    assert config["type"] == "sriov" and config["vlan"] == 0 and config["ipam"]["type"] == "whereabouts"
    assert nad["metadata"]["annotations"]["k8s.v1.cni.cncf.io/resourceName"] == "openshift.io/sriovlegacy"
    # Removing the policy removes the VFs; the resource stays at 0, as the kubelet shows it.
    lab.delete(SRIOV, "SriovNetworkNodePolicy", "sriov-legacy-policy", SRIOV_NS)
    wait(lambda: lab.node(SRV33)["status"]["allocatable"].get("openshift.io/sriovlegacy") == "0", what="resource 0")


def test_a_mellanox_vf_count_above_totalvfs_rewrites_the_firmware_and_reboots(lab):
    """Conformance with sriov-network-operator v1.6.0 pkg/vendors/mellanox/mellanox.go (HandleTotalVfs) and
    pkg/plugins/mellanox/mellanox_plugin.go: a Mellanox PF whose firmware TotalVfs differs from numVfs gets NUM_OF_VFS
    rewritten and the node reboots; the webhook allows up to 128 (pkg/webhook/validate.go MlxMaxVFs), so 64 VFs on a
    NIC that reports 16 is not an error. Afterwards the NIC reports the new totalvfs; lowering it reboots again."""
    sriov_ready(lab)
    policy = json.loads(json.dumps(SRIOV_POLICY))
    policy["spec"]["numVfs"] = 64
    policy["spec"]["nicSelector"]["pfNames"] = ["ens8f0np0"]
    watcher = Unschedulable(lab, [SRV32, SRV33])
    lab.create(policy)

    def pf_status(node):
        state = lab.get(SRIOV, "SriovNetworkNodeState", node, SRIOV_NS)
        return state["status"].get("syncStatus"), next((i for i in state["status"].get("interfaces") or []
                                                        if i["name"] == "ens8f0np0"), {})

    wait(lambda: all(pf_status(n)[0] == "Succeeded" and pf_status(n)[1].get("numVfs") == 64 for n in (SRV32, SRV33)),
         timeout=10, what="64 VFs applied")
    watcher.stop()
    assert watcher.seen == {SRV32, SRV33}, "raising NUM_OF_VFS reboots each node"
    assert pf_status(SRV32)[1]["totalvfs"] == 64 and lab.node(SRV32)["status"]["allocatable"]["openshift.io/sriovlegacy"] == "64"
    watcher = Unschedulable(lab, [SRV32, SRV33])
    lab.patch(SRIOV, "SriovNetworkNodePolicy", "sriov-legacy-policy", {"spec": {"numVfs": 4}}, SRIOV_NS)
    wait(lambda: all(pf_status(n)[0] == "Succeeded" and pf_status(n)[1].get("numVfs") == 4 for n in (SRV32, SRV33)),
         timeout=10, what="4 VFs applied")
    watcher.stop()
    assert watcher.seen == {SRV32, SRV33} and pf_status(SRV33)[1]["totalvfs"] == 4


def webhook_ready(kube):
    """Wait until a pod of the operator's webhook is ready: before, every policy write gets the API server's 500."""
    wait(lambda: ((kube.get("apps/v1", "DaemonSet", "operator-webhook", SRIOV_NS) or {}).get("status") or {}).get("numberReady"),
         what="the SR-IOV webhook pod ready")


def webhook_refusal(kube, policy):
    """The API server's answer to creating the policy: (HTTP status, message), or None when it was created."""
    try:
        kube.create(policy)
    except Exception as exc:  # pylint: disable=broad-except
        body = json.loads(getattr(exc, "body", None) or "{}")
        return getattr(exc, "status", None), body.get("message")
    return None


def test_the_sriov_webhook_refuses_a_policy_no_reported_interface_matches(sim_factory, tmp_path):
    """Conformance with sriov-network-operator v1.6.0 pkg/webhook/validate.go (dynamicValidateSriovNetworkNodePolicy)
    and the API server's webhook error (HTTP 400, 'admission webhook "..." denied the request: ...'): until the config
    daemons have reported their interfaces no policy can select one, so the policy is refused; once they have, it is
    admitted. A PF name no node reports stays refused."""
    kube = Kube(sim_factory(profile="mixed-lab", faults={"operator_faults": {"sriov_daemon_report_hold": True}}), str(tmp_path / "d.json"))
    nfd_instance(kube)
    kube.install("sriov-network-operator")
    kube.create({"apiVersion": SRIOV, "kind": "SriovOperatorConfig", "metadata": {"name": "default", "namespace": SRIOV_NS},
                 "spec": {"enableInjector": True, "enableOperatorWebhook": True, "logLevel": 2}})
    wait(lambda: len(kube.list(SRIOV, "SriovNetworkNodeState", SRIOV_NS)) == 2, what="node states created")
    assert all(not (s.get("status") or {}).get("interfaces") for s in kube.list(SRIOV, "SriovNetworkNodeState", SRIOV_NS))
    webhook_ready(kube)
    assert webhook_refusal(kube, SRIOV_POLICY) == (400, 'admission webhook "operator-webhook.sriovnetwork.openshift.io" '
                                                        'denied the request: no supported NIC is selected by the nicSelector '
                                                        'in CR sriov-legacy-policy')
    assert kube.get(SRIOV, "SriovNetworkNodePolicy", "sriov-legacy-policy", SRIOV_NS) is None
    kube.sim.faults.update({"operator_faults": {"sriov_daemon_report_hold": False}})
    wait(lambda: all((s.get("status") or {}).get("interfaces") for s in kube.list(SRIOV, "SriovNetworkNodeState", SRIOV_NS)),
         what="interfaces reported")
    unknown = json.loads(json.dumps(SRIOV_POLICY))
    unknown["spec"]["nicSelector"]["pfNames"] = ["eth99"]
    assert "no supported NIC is selected by the nicSelector in CR sriov-legacy-policy" in webhook_refusal(kube, unknown)[1]
    assert webhook_refusal(kube, SRIOV_POLICY) is None


@pytest.mark.parametrize("change, message", [
    ({"resourceName": "sriov-legacy"}, 'resource name "sriov-legacy" contains invalid characters'),
    ({"nicSelector": {"pfNames": []}}, "at least one of these parameters (vendor, deviceID, pfNames, rootDevices or netFilter)"),
    ({"nicSelector": {"vendor": "abcd", "pfNames": ["ens8f0np0"]}}, "vendor abcd is not supported"),
    ({"nicSelector": {"vendor": "15b3", "pfNames": ["ens8f0np0#0-9"]}}, "end range exceeds the maximum VF index"),
    ({"nodeSelector": {"kubernetes.io/hostname": "no-such-node"}}, "no matched node is selected by the nodeSelector in CR"),
    ({"numVfs": 200, "nicSelector": {"vendor": "15b3", "pfNames": ["ens8f0np0"]}},
     "numVfs(200) in CR sriov-legacy-policy exceed the maximum allowed value(128) interface(ens8f0np0)"),
    ({"deviceType": "vfio-pci"}, "'deviceType: vfio-pci' conflicts with 'isRdma: true'"),
])
def test_the_sriov_webhook_refuses_invalid_policies(lab, change, message):
    """pkg/webhook/validate.go v1.6.0, staticValidateSriovNetworkNodePolicy and validatePolicyForNodeState."""
    sriov_ready(lab)
    policy = json.loads(json.dumps(SRIOV_POLICY))
    policy["spec"].update(change)
    status, text = webhook_refusal(lab, policy)
    assert status == 400 and message in text, text


def test_the_sriov_webhook_refuses_overlapping_vf_ranges(lab):
    """pkg/webhook/validate.go v1.6.0 validatePfNames: two policies may share a PF only with disjoint VF ranges."""
    sriov_ready(lab)
    assert webhook_refusal(lab, SRIOV_POLICY) is None
    other = json.loads(json.dumps(SRIOV_POLICY))
    other["metadata"]["name"] = "second"
    other["spec"]["nicSelector"]["pfNames"] = ["ens8f0np0#4-7"]
    assert "VF index range in ens8f0np0#4-7 is overlapped with existing policy sriov-legacy-policy" in webhook_refusal(lab, other)[1]


def test_sriov_ib_policy_and_network(lab):
    sriov_ready(lab)
    lab.create({"apiVersion": SRIOV, "kind": "SriovNetworkNodePolicy", "metadata": {"name": "policy-ib-net-1", "namespace": SRIOV_NS},
                "spec": {"resourceName": "ibnic1", "nodeSelector": {"feature.node.kubernetes.io/network-sriov.capable": "true"},
                         "numVfs": 4, "nicSelector": {"vendor": "15b3", "deviceID": "a2dc", "rootDevices": ["0000:0d:00.0"]},
                         "linkType": "ib", "isRdma": True}})
    wait(lambda: lab.node(SRV32)["status"]["allocatable"].get("openshift.io/ibnic1") == "4", what="ibnic1")
    state = lab.get(SRIOV, "SriovNetworkNodeState", SRV32, SRIOV_NS)
    ib = next(i for i in state["status"]["interfaces"] if i["name"] == "ibs2f0")
    assert ib["numVfs"] == 4 and all(v.get("guid") for v in ib["Vfs"])
    lab.create({"apiVersion": SRIOV, "kind": "SriovIBNetwork", "metadata": {"name": "ib-sriov", "namespace": SRIOV_NS},
                "spec": {"resourceName": "ibnic1", "networkNamespace": "default", "ipam": IPAM, "linkState": "auto",
                         "capabilities": '{ "infinibandGUID": true }'}})
    nad, config = nad_config(lab, "ib-sriov")
    assert config["type"] == "ib-sriov" and config["capabilities"] == {"infinibandGUID": True}
    assert nad["metadata"]["annotations"]["k8s.v1.cni.cncf.io/resourceName"] == "openshift.io/ibnic1"


def test_host_device_policy_switch_leaves_zero_capacity(lab):
    nfd_instance(lab)
    lab.install("nvidia-network-operator")
    config = {"resourceList": [{"resourcePrefix": "nvidia.com", "resourceName": "hostdev",
                                "selectors": {"vendors": ["15b3"], "isRdma": True}}]}
    body = json.loads(json.dumps(CHAPTER_NCP))
    body["spec"] = {"ofedDriver": body["spec"]["ofedDriver"],
                    "sriovDevicePlugin": {"image": "sriov-network-device-plugin", "repository": "ghcr.io/k8snetworkplumbingwg",
                                          "version": "v3.7.0", "config": json.dumps(config)}}
    lab.create(body)
    wait(lambda: lab.node(SRV32)["status"]["allocatable"].get("nvidia.com/hostdev") == "2", what="hostdev 2")
    # 5.9.3 replaces the policy by one with only the driver: the resource drops to 0.
    lab.delete(MLX, "NicClusterPolicy", "nic-cluster-policy")
    lab.create(dict(body, spec={"ofedDriver": body["spec"]["ofedDriver"]}))
    wait(lambda: lab.node(SRV32)["status"]["allocatable"].get("nvidia.com/hostdev") == "0", what="hostdev 0")


# --------------------------------------------------------------------------------------------- MachineConfig

CRIO_MEMLOCK = {
    "apiVersion": MC, "kind": "MachineConfig",
    "metadata": {"name": "02-worker-container-runtime", "labels": {"machineconfiguration.openshift.io/role": "worker"}},
    "spec": {"config": {"ignition": {"version": "3.2.0"}, "storage": {"files": [{
        "contents": {"source": "data:text/plain;charset=utf-8;base64," + base64.b64encode(
            b'[crio.runtime]\ndefault_ulimits = [\n"memlock=-1:-1"\n]\n').decode()},
        "mode": 420, "overwrite": True, "path": "/etc/crio/crio.conf.d/10-custom"}]}}},
}


def pool_conditions(kube, pool):
    mcp = kube.get(MC, "MachineConfigPool", pool)
    return {c["type"]: c["status"] for c in mcp["status"]["conditions"]}, mcp


def test_machine_config_rolls_the_worker_pool_one_node_at_a_time(sim_factory, tmp_path):
    kube = Kube(sim_factory(profile="roce-lab"), str(tmp_path / "d.json"))
    before = pool_conditions(kube, "worker")[1]["status"]["configuration"]["name"]
    watcher = Unschedulable(kube, ["worker-0", "worker-1"])
    kube.create(CRIO_MEMLOCK)
    wait(lambda: pool_conditions(kube, "worker")[0]["Updating"] == "True", what="Updating")
    conds, mcp = pool_conditions(kube, "worker")
    assert conds["Updated"] == "False"
    target = mcp["spec"]["configuration"]["name"]
    assert target != before and target.startswith("rendered-worker-")
    wait(lambda: pool_conditions(kube, "worker")[0]["Updated"] == "True", what="Updated")
    watcher.stop()
    assert watcher.seen == {"worker-0", "worker-1"} and watcher.most == 1
    conds, mcp = pool_conditions(kube, "worker")
    assert conds["Updating"] == "False" and mcp["status"]["updatedMachineCount"] == 2
    assert mcp["status"]["configuration"]["name"] == target
    assert "02-worker-container-runtime" in [s["name"] for s in mcp["status"]["configuration"]["source"]]
    for name in ("worker-0", "worker-1"):
        ann = kube.node(name)["metadata"]["annotations"]
        assert ann["machineconfiguration.openshift.io/currentConfig"] == target
        assert ann["machineconfiguration.openshift.io/state"] == "Done"
    assert pool_conditions(kube, "master")[0]["Updated"] == "True"
    assert kube.node("master-0")["metadata"]["annotations"]["machineconfiguration.openshift.io/currentConfig"] != target


def test_a_custom_pool_takes_its_labelled_workers_and_renders_worker_and_its_own_configs(sim_factory, tmp_path):
    """Conformance with openshift/machine-config-operator: a node whose labels match one custom pool's nodeSelector
    belongs to that pool, not to worker (pkg/helpers/helpers.go GetPoolsForNode; nodes counted by primary pool,
    pkg/controller/node/node_controller.go getNodesForPool); the pool renders every MachineConfig its
    machineConfigSelector matches, matchExpressions included (pkg/controller/render/render_controller.go;
    docs/custom-pools.md)."""
    kube = Kube(sim_factory(profile="roce-lab"), str(tmp_path / "d.json"))
    kube.patch("v1", "Node", "worker-1", {"metadata": {"labels": {"node-role.kubernetes.io/rdma": ""}}})
    kube.create({"apiVersion": MC, "kind": "MachineConfigPool", "metadata": {"name": "rdma"}, "spec": {
        "machineConfigSelector": {"matchExpressions": [
            {"key": "machineconfiguration.openshift.io/role", "operator": "In", "values": ["worker", "rdma"]}]},
        "nodeSelector": {"matchLabels": {"node-role.kubernetes.io/rdma": ""}}}})
    wait(lambda: (kube.get(MC, "MachineConfigPool", "rdma").get("status") or {}).get("machineCount") == 1, what="rdma pool")
    wait(lambda: pool_conditions(kube, "worker")[1]["status"]["machineCount"] == 1, what="worker pool without worker-1")
    own = dict(CRIO_MEMLOCK, metadata={"name": "99-rdma-memlock", "labels": {"machineconfiguration.openshift.io/role": "rdma"}})
    kube.create(own)
    kube.create(dict(CRIO_MEMLOCK, metadata=dict(CRIO_MEMLOCK["metadata"], name="98-worker-extra")))

    def rdma_sources():
        status = kube.get(MC, "MachineConfigPool", "rdma").get("status") or {}
        done = {c["type"]: c["status"] for c in status.get("conditions") or []}.get("Updated") == "True"
        return done and {s["name"] for s in (status.get("configuration") or {}).get("source") or []}
    sources = wait(lambda: (rdma_sources() or set()) >= {"99-rdma-memlock", "98-worker-extra"} and rdma_sources(), what="rdma rendered")
    assert "00-rdma" in sources
    wait(lambda: pool_conditions(kube, "worker")[0]["Updated"] == "True" and "98-worker-extra" in [
        s["name"] for s in pool_conditions(kube, "worker")[1]["status"]["configuration"]["source"]], what="worker rendered")
    worker_sources = [s["name"] for s in pool_conditions(kube, "worker")[1]["status"]["configuration"]["source"]]
    assert "99-rdma-memlock" not in worker_sources
    rdma_target = kube.get(MC, "MachineConfigPool", "rdma")["status"]["configuration"]["name"]
    assert kube.node("worker-1")["metadata"]["annotations"]["machineconfiguration.openshift.io/currentConfig"] == rdma_target
    assert kube.node("worker-0")["metadata"]["annotations"]["machineconfiguration.openshift.io/currentConfig"] != rdma_target


def test_label_selector_and_primary_pool_rules():
    """apimachinery LabelSelectorAsSelector operators, and GetPoolsForNode: master over custom, custom over worker,
    two custom pools -> none, an empty nodeSelector matches nothing."""
    from simulator.controllers.seed import label_selector_matches, node_pool

    assert label_selector_matches({"matchExpressions": [{"key": "a", "operator": "In", "values": ["1", "2"]}]}, {"a": "2"})
    assert not label_selector_matches({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]}, {"a": "1"})
    assert label_selector_matches({"matchExpressions": [{"key": "a", "operator": "Exists"}]}, {"a": ""})
    assert not label_selector_matches({"matchLabels": {"a": "1"}, "matchExpressions": [{"key": "b", "operator": "DoesNotExist"}]},
                                      {"a": "1", "b": ""})
    assert label_selector_matches({}, {"a": "1"}) is None

    def pool(name, role):
        return {"metadata": {"name": name}, "spec": {"nodeSelector": {"matchLabels": {"node-role.kubernetes.io/" + role: ""}}}}
    pools = [pool("master", "master"), pool("worker", "worker"), pool("rdma", "rdma"), pool("infra", "infra"),
             {"metadata": {"name": "empty"}, "spec": {"nodeSelector": {}}}]
    role = "node-role.kubernetes.io/"
    assert node_pool({role + "worker": ""}, pools) == "worker"
    assert node_pool({role + "worker": "", role + "rdma": ""}, pools) == "rdma"
    assert node_pool({role + "master": "", role + "rdma": ""}, pools) == "master"
    assert node_pool({role + "worker": "", role + "rdma": "", role + "infra": ""}, pools) is None
    assert node_pool({"other": ""}, pools) is None


def test_paused_pool_waits(sim_factory, tmp_path):
    kube = Kube(sim_factory(profile="roce-lab"), str(tmp_path / "d.json"))
    kube.patch(MC, "MachineConfigPool", "worker", {"spec": {"paused": True}})
    kube.create(CRIO_MEMLOCK)
    wait(lambda: pool_conditions(kube, "worker")[0]["Updated"] == "False", what="pending config")
    time.sleep(0.3)
    conds, mcp = pool_conditions(kube, "worker")
    assert conds["Updating"] == "False" and mcp["status"]["updatedMachineCount"] == 0
    kube.patch(MC, "MachineConfigPool", "worker", {"spec": {"paused": False}})
    wait(lambda: pool_conditions(kube, "worker")[0]["Updated"] == "True", what="Updated after unpause")


def test_sriov_device_plugin_selects_pfs_only_by_what_the_real_plugin_reads():
    """Conformance with sriov-network-device-plugin (pkg/resources/deviceSelectors.go, pkg/utils/utils.go): a PF
    has no PF name and no root device, so pfNames and rootDevices never select it; pciAddresses, vendors, devices
    and linkTypes do."""
    from simulator.controllers.network_operator import port_matches_sriov_dp
    from simulator.profiles import load_profile

    node = next(n for n in load_profile("mixed-lab").workers if n.nics)
    ports = {port.netdev: (nic, port) for nic in node.nics if nic.is_mellanox for port in nic.ports}
    eth, ib = ports["ens8f0np0"], ports["ibs2f0"]
    assert not port_matches_sriov_dp(*eth, {"vendors": ["15b3"], "pfNames": ["ens8f0np0"], "isRdma": True})
    assert not port_matches_sriov_dp(*eth, {"vendors": ["15b3"], "rootDevices": [eth[0].pci_address]})
    assert port_matches_sriov_dp(*eth, {"vendors": ["15b3"], "pciAddresses": [eth[0].pci_address], "isRdma": True})
    assert not port_matches_sriov_dp(*eth, {"pciAddresses": [ib[0].pci_address]})
    by_link = {"vendors": ["15b3"], "linkTypes": ["infiniband"], "isRdma": True}
    assert port_matches_sriov_dp(*ib, by_link) and not port_matches_sriov_dp(*eth, by_link)


def test_render_delay_keeps_the_pool_on_its_old_rendered_config(sim_factory, tmp_path):
    """Conformance with openshift/machine-config-operator pkg/controller/render/render_controller.go (renderDelay):
    a changed MachineConfig set is rendered only after a pause, and until then the pool still reports its old
    rendered config with Updated=True and every machine updated, which is why waits must name the MachineConfig."""
    kube = Kube(sim_factory(profile="roce-lab", config={"mco_render_delay_seconds": 30}), str(tmp_path / "d.json"))
    conds, before = pool_conditions(kube, "worker")
    kube.create(CRIO_MEMLOCK)
    conds, after = pool_conditions(kube, "worker")
    assert conds["Updated"] == "True" and conds["Updating"] == "False"
    assert after["spec"]["configuration"]["name"] == before["spec"]["configuration"]["name"]
    assert after["status"]["configuration"] == before["status"]["configuration"]
    assert "02-worker-container-runtime" not in [s["name"] for s in after["status"]["configuration"]["source"]]
    assert after["status"]["updatedMachineCount"] == after["status"]["machineCount"]


def history(kube, group, plural, namespace=None):
    """Every version of the objects of a kind the store recorded, oldest first (the watch history)."""
    store = kube.sim.store
    rtype = next(t for t in store.resource_types() if t.group == group and t.plural == plural)
    return [obj for _etype, obj in store.events_since(0, rtype, namespace)]


def test_a_policy_change_reaches_the_node_states_one_policy_sync_later(sim_factory, tmp_path):
    """Conformance with sriov-network-operator v1.6.0 controllers/sriovnetworknodepolicy_controller.go (a policy
    event re-queues the sync with AddAfter): right after the policy is created every node state still has its old
    spec, generation and syncStatus Succeeded, which is why a wait on syncStatus alone returns on stale status."""
    kube = Kube(sim_factory(profile="mixed-lab", config={"sriov_policy_sync_delay_seconds": 30}), str(tmp_path / "d.json"))
    sriov_ready(kube)
    before = {s["metadata"]["name"]: s for s in kube.list(SRIOV, "SriovNetworkNodeState", SRIOV_NS)}
    kube.create(SRIOV_POLICY)
    time.sleep(0.5)
    for state in kube.list(SRIOV, "SriovNetworkNodeState", SRIOV_NS):
        old = before[state["metadata"]["name"]]
        assert state["status"]["syncStatus"] == "Succeeded"
        assert state["metadata"]["generation"] == old["metadata"]["generation"]
        assert (state.get("spec") or {}) == (old.get("spec") or {}) and not (state.get("spec") or {}).get("interfaces")


def test_a_vf_change_goes_through_the_drain_handshake_and_pauses_the_pool(lab):
    """Conformance with sriov-network-operator v1.6.0 pkg/daemon/daemon.go (InProgress first, drain request,
    annotate Idle before Succeeded), controllers/drain_controller.go (current-state Idle -> Draining -> Idle) and
    pkg/platforms/openshift/openshift.go (the MachineConfigPool paused with annotation state=Paused while nodes drain,
    unpaused by the last one)."""
    sriov_ready(lab)
    states = lab.list(SRIOV, "SriovNetworkNodeState", SRIOV_NS)
    assert all(s["metadata"]["annotations"] == {"sriovnetwork.openshift.io/desired-state": "Idle",
                                                "sriovnetwork.openshift.io/current-state": "Idle"} for s in states)
    lab.create(SRIOV_POLICY)
    wait(lambda: all((s.get("status") or {}).get("syncStatus") == "Succeeded" and
                     any(i.get("numVfs") == 8 for i in s["status"]["interfaces"])
                     for s in lab.list(SRIOV, "SriovNetworkNodeState", SRIOV_NS)), timeout=10, what="VFs applied")
    seen = [(s["metadata"]["name"], s["metadata"]["generation"], (s.get("status") or {}).get("syncStatus"),
             s["metadata"]["annotations"]["sriovnetwork.openshift.io/desired-state"],
             s["metadata"]["annotations"]["sriovnetwork.openshift.io/current-state"])
            for s in history(lab, "sriovnetwork.openshift.io", "sriovnetworknodestates", SRIOV_NS)]
    for node in (SRV32, SRV33):
        mine = [entry[1:] for entry in seen if entry[0] == node]
        new_generation = max(entry[0] for entry in mine)
        after = [entry[1:] for entry in mine if entry[0] == new_generation]
        # The first version with the new spec still shows the old sync; the daemon's first write is InProgress.
        assert after[0] == ("Succeeded", "Idle", "Idle") and after[1][0] == "InProgress"
        assert ("InProgress", "Reboot_Required", "Draining") in after
        # drain_controller_helper.go: the drain controller answers DrainComplete once drained; the daemon applies after.
        assert after.index(("InProgress", "Reboot_Required", "DrainComplete")) > after.index(("InProgress", "Reboot_Required", "Draining"))
        assert after[-1] == ("Succeeded", "Idle", "Idle")
        # Succeeded is written only after the daemon set desired-state back to Idle.
        first_succeeded = next(i for i, entry in enumerate(after) if i > 0 and entry[0] == "Succeeded")
        assert after[first_succeeded - 1][1] == "Idle"
        assert lab.node(node)["metadata"]["annotations"]["sriovnetwork.openshift.io/state"] == "Idle"
    pools = [(p["metadata"].get("annotations") or {}).get("sriovnetwork.openshift.io/state", "") + "/" +
             str(bool((p.get("spec") or {}).get("paused")))
             for p in history(lab, "machineconfiguration.openshift.io", "machineconfigpools")
             if p["metadata"]["name"] == "worker"]
    assert "Paused/True" in pools and pools[-1] == "Idle/False"


def test_the_drain_waits_while_the_pool_rolls_out(sim_factory, tmp_path):
    """Conformance with openshift.go OpenshiftBeforeDrainNode: no drain (and no pause) while the pool's
    spec.configuration differs from its status.configuration."""
    kube = Kube(sim_factory(profile="mixed-lab", config={"mco_node_update_seconds": 0.5}), str(tmp_path / "d.json"))
    sriov_ready(kube)
    kube.create(CRIO_MEMLOCK)
    wait(lambda: pool_conditions(kube, "worker")[0]["Updating"] == "True", what="pool rolling out")
    kube.create(SRIOV_POLICY)
    wait(lambda: pool_conditions(kube, "worker")[0]["Updated"] == "True", timeout=20, what="pool updated")
    wait(lambda: all((s.get("status") or {}).get("syncStatus") == "Succeeded" and
                     any(i.get("numVfs") == 8 for i in s["status"]["interfaces"])
                     for s in kube.list(SRIOV, "SriovNetworkNodeState", SRIOV_NS)), timeout=20, what="VFs applied")
    for mcp in history(kube, "machineconfiguration.openshift.io", "machineconfigpools"):
        if mcp["metadata"]["name"] == "worker" and (mcp.get("spec") or {}).get("paused"):
            assert mcp["spec"]["configuration"]["name"] == mcp["status"]["configuration"]["name"]


SRIOV_POOL_CONFIG_FOR_WEBHOOK = {"apiVersion": SRIOV, "kind": "SriovNetworkPoolConfig",
                                 "metadata": {"name": "worker", "namespace": SRIOV_NS},
                                 "spec": {"maxUnavailable": 1, "nodeSelector": {"matchLabels": {"node-role.kubernetes.io/worker": ""}}}}
WEBHOOK_DOWN = ('Internal error occurred: failed calling webhook "operator-webhook.sriovnetwork.openshift.io": failed to call '
                'webhook: Post "https://operator-webhook-service.openshift-sriov-network-operator.svc:443/mutating-custom-resource'
                '?timeout=10s": no endpoints available for service "operator-webhook-service"')


def test_a_policy_written_before_the_sriov_webhook_pod_is_ready_gets_the_api_servers_500(kube_factory):
    """Conformance with sriov-network-operator v1.6.0 bindata/manifests/operator-webhook (a DaemonSet behind
    operator-webhook-service, failurePolicy Fail) and kube-apiserver's webhook dispatchers (NewInternalError of
    ErrCallingWebhook): until a webhook pod is ready, a policy write is answered 500 InternalError with the call's
    error; once it is, the webhook judges the policy. The pod's start is the operand image pull plus start (scaled
    here to 2 s so that the window is certain under load)."""
    lab = kube_factory(profile="mixed-lab", config={"operand_image_pull_seconds": 2.0})
    nfd_instance(lab)
    lab.install("sriov-network-operator")
    lab.create({"apiVersion": SRIOV, "kind": "SriovOperatorConfig", "metadata": {"name": "default", "namespace": SRIOV_NS},
                "spec": {"enableInjector": True, "enableOperatorWebhook": True, "logLevel": 2}})
    status, text = webhook_refusal(lab, SRIOV_POLICY)
    assert (status, text) == (500, WEBHOOK_DOWN)
    assert not lab.list(SRIOV, "SriovNetworkNodePolicy", SRIOV_NS), "a write the webhook could not judge is not stored"
    pool = dict(SRIOV_POOL_CONFIG_FOR_WEBHOOK)
    assert webhook_refusal(lab, pool)[0] == 500, "pool configs go through the validating webhook"
    wait(lambda: len([s for s in lab.list(SRIOV, "SriovNetworkNodeState", SRIOV_NS)
                      if (s.get("status") or {}).get("syncStatus") == "Succeeded"]) == 2, timeout=20, what="node states synced")
    webhook_ready(lab)
    # Now the webhook judges the policy, and admits it.
    assert webhook_refusal(lab, SRIOV_POLICY) is None


def test_a_sriov_webhook_whose_pod_never_starts_keeps_answering_500(kube_factory):
    """The webhook's image cannot be pulled (operand fault): every policy write gets the 500 for as long as it lasts."""
    lab = kube_factory(profile="mixed-lab", faults={"operator_faults": {"operand_failures": [
        {"workload": "operator-webhook", "reason": "ImagePullBackOff", "message": "manifest unknown"}]}})
    nfd_instance(lab)
    lab.install("sriov-network-operator")
    lab.create({"apiVersion": SRIOV, "kind": "SriovOperatorConfig", "metadata": {"name": "default", "namespace": SRIOV_NS},
                "spec": {"enableInjector": True, "enableOperatorWebhook": True, "logLevel": 2}})
    wait(lambda: lab.list(SRIOV, "SriovNetworkNodeState", SRIOV_NS) or None, what="config daemons running")
    for _attempt in range(3):
        assert webhook_refusal(lab, SRIOV_POLICY) == (500, WEBHOOK_DOWN)
        time.sleep(0.2)


def test_an_mtu_change_is_applied_after_the_daemon_read_the_host(lab):
    """Conformance with sriov-network-operator v1.6.0: api/v1/helper.go (Apply, generatePfNameVfGroup) copies the
    policy's mtu and isRdma into the node state's interface and VF group; pkg/daemon/daemon.go Reconcile reads the host
    before it writes InProgress, so with the daemon held there the re-rendered spec stands beside the previous sync's
    Succeeded; pkg/host/internal/sriov/sriov.go raises the PF MTU to the policy's and sets each netdevice VF's MTU;
    api/v1/helper.go NeedToUpdateSriov makes a VF MTU change a drain (generic plugin needDrainNode)."""
    sriov_ready(lab)
    lab.create(SRIOV_POLICY)
    states = lambda: lab.list(SRIOV, "SriovNetworkNodeState", SRIOV_NS)  # noqa: E731
    wait(lambda: all((s.get("status") or {}).get("syncStatus") == "Succeeded" and
                     any(i.get("numVfs") == 8 for i in s["status"]["interfaces"]) for s in states()),
         timeout=10, what="VFs applied")
    group = states()[0]["spec"]["interfaces"][0]["vfGroups"][0]
    assert group["isRdma"] is True and group["mtu"] == 1500
    lab.sim.faults.update({"operator_faults": {"sriov_daemon_host_read_hold": True}})
    seen_before = len(history(lab, "sriovnetwork.openshift.io", "sriovnetworknodestates", SRIOV_NS))
    lab.patch(SRIOV, "SriovNetworkNodePolicy", "sriov-legacy-policy", {"spec": {"mtu": 9000}}, namespace=SRIOV_NS)
    wait(lambda: all(s["spec"]["interfaces"][0]["mtu"] == 9000 for s in states()), timeout=10, what="the MTU rendered")
    time.sleep(0.3)
    for state in states():
        (pf,) = [i for i in state["status"]["interfaces"] if i["name"] == "ens8f0np0"]
        assert state["status"]["syncStatus"] == "Succeeded" and pf["mtu"] < 9000, "the daemon is still reading the host"
    lab.sim.faults.update({"operator_faults": {"sriov_daemon_host_read_hold": False}})
    wait(lambda: all(s["status"]["syncStatus"] == "Succeeded" and
                     all(i["mtu"] == 9000 and {vf["mtu"] for vf in i["Vfs"]} == {9000}
                         for i in s["status"]["interfaces"] if i["name"] == "ens8f0np0") for s in states()),
         timeout=10, what="the MTU applied")
    desired = [s["metadata"]["annotations"]["sriovnetwork.openshift.io/desired-state"]
               for s in history(lab, "sriovnetwork.openshift.io", "sriovnetworknodestates", SRIOV_NS)[seen_before:]]
    assert desired.count("Drain_Required") >= len(states()), "each node drained for the VF MTU change"
