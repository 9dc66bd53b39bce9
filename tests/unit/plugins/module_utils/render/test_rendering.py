# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What each configuration renders: matrix, NIC selection from facts, MachineConfig, operators, order."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import base64
import copy
import re
import json

import pytest

from ansible_collections.gpudirect.openshift.plugins.module_utils import catalogue
from ansible_collections.gpudirect.openshift.plugins.module_utils import names
from ansible_collections.gpudirect.openshift.plugins.module_utils.render import gitops, machineconfigs, olm
from ansible_collections.gpudirect.openshift.plugins.module_utils.render.plan import render_all, stale_objects, teardown_order
from ansible_collections.gpudirect.openshift.plugins.module_utils.render.rdma import MATRIX

from ansible_collections.gpudirect.openshift.tests.configurations import METHOD_FABRICS
from conftest import NIC_FACTS, P, base_variables

MANAGED = {"app.kubernetes.io/managed-by": "gpudirect.openshift"}


def render(variables):
    result = render_all(variables)
    assert result["errors"] == [], result["errors"]
    return result


def by_kind(result, kind):
    return [e["manifest"] for e in result["manifests"] if e["manifest"]["kind"] == kind]


EXPECTED = {
    # (method, fabric): (NicClusterPolicy keys, network kind, SR-IOV policy count, pod resource)
    ("shared_device", "roce"): ({"ofedDriver", "rdmaSharedDevicePlugin"}, "MacvlanNetwork", 0, "rdma/rdma_shared_device_eth"),
    ("shared_device", "infiniband"): ({"ofedDriver", "rdmaSharedDevicePlugin", "secondaryNetwork"}, "IPoIBNetwork", 0, "rdma/rdma_shared_device_ib"),
    ("host_device", "roce"): ({"ofedDriver", "sriovDevicePlugin"}, "HostDeviceNetwork", 0, "nvidia.com/hostdev"),
    ("host_device", "infiniband"): ({"ofedDriver", "sriovDevicePlugin"}, "HostDeviceNetwork", 0, "nvidia.com/hostdev_ib"),
    ("sriov_legacy", "roce"): ({"ofedDriver"}, "SriovNetwork", 1, "openshift.io/sriovlegacy"),
    ("sriov_legacy", "infiniband"): ({"ofedDriver"}, "SriovIBNetwork", 1, "openshift.io/sriovlegacy_ib"),
}


@pytest.mark.parametrize("method,fabric", METHOD_FABRICS)
def test_configuration_composition(method, fabric):
    result = render(base_variables(method, fabric))
    policy_keys, network_kind, policies, resource = EXPECTED[(method, fabric)]
    (ncp,) = by_kind(result, "NicClusterPolicy")
    assert ncp["metadata"] == {"name": "nic-cluster-policy", "labels": MANAGED}
    assert set(ncp["spec"]) == policy_keys
    assert [n["manifest"]["kind"] for n in result["manifests"] if n["phase"] == "network"] == [network_kind]
    assert len(by_kind(result, "SriovNetworkNodePolicy")) == policies
    assert result["summary"]["resources"] == [resource]
    assert result["summary"]["configuration_number"] == MATRIX[(method, fabric)].number
    assert len(by_kind(result, "NodeFeatureDiscovery")) == len(by_kind(result, "SriovOperatorConfig")) == len(by_kind(result, "ClusterPolicy")) == 1
    assert by_kind(result, "MachineConfig") == []


def test_shared_roce_matches_the_chapter():
    result = render(base_variables("shared_device", "roce", ipam_range="192.168.2.0/24", ipam_exclude=[], ipam_gateway="192.168.2.1", mtu=1500))
    (ncp,) = by_kind(result, "NicClusterPolicy")
    config = json.loads(ncp["spec"]["rdmaSharedDevicePlugin"]["config"])
    assert config == {"configList": [{"resourceName": "rdma_shared_device_eth", "resourcePrefix": "rdma", "rdmaHcaMax": 63,
                                      "selectors": {"ifNames": ["ens8f0np0"]}}]}
    (net,) = by_kind(result, "MacvlanNetwork")
    assert net["metadata"] == {"name": "rdmashared-net", "labels": MANAGED}
    assert net["spec"]["master"] == "ens8f0np0" and net["spec"]["mode"] == "bridge" and net["spec"]["mtu"] == 1500
    assert json.loads(net["spec"]["ipam"]) == {"type": "whereabouts", "range": "192.168.2.0/24", "gateway": "192.168.2.1"}


def test_host_device_selectors_are_narrowed_to_the_fabric():
    result = render(base_variables("host_device", "infiniband", nic_pci_addresses=[], nic_device_ids=["101B"]))
    (ncp,) = by_kind(result, "NicClusterPolicy")
    config = json.loads(ncp["spec"]["sriovDevicePlugin"]["config"])
    (resource,) = config["resourceList"]
    assert resource["resourcePrefix"] == "nvidia.com" and resource["resourceName"] == "hostdev_ib"
    assert resource["selectors"] == {"vendors": ["15b3"], "devices": ["101b"], "linkTypes": ["infiniband"], "isRdma": True}


def test_shared_device_by_device_id_restricts_link_type():
    result = render(base_variables("shared_device", "infiniband", nic_interfaces=[], nic_device_ids=["1021"], ipoib_master="ibp1s0"))
    config = json.loads(by_kind(result, "NicClusterPolicy")[0]["spec"]["rdmaSharedDevicePlugin"]["config"])
    assert config["configList"][0]["selectors"] == {"vendors": ["15b3"], "deviceIDs": ["1021"], "linkTypes": ["infiniband"]}
    assert by_kind(result, "IPoIBNetwork")[0]["spec"]["master"] == "ibp1s0"


def test_sriov_legacy_infiniband_policy_and_network():
    result = render(base_variables("sriov_legacy", "infiniband", num_vfs=4, mtu=2044, network_namespaces=["ai"]))
    (policy,) = by_kind(result, "SriovNetworkNodePolicy")
    assert policy["metadata"] == {"name": "sriovlegacy-ib-policy", "namespace": "openshift-sriov-network-operator", "labels": MANAGED}
    spec = policy["spec"]
    assert (spec["linkType"], spec["isRdma"], spec["deviceType"], spec["numVfs"], spec["mtu"]) == ("ib", True, "netdevice", 4, 2044)
    assert spec["nicSelector"] == {"vendor": "15b3", "pfNames": ["ibs2f0"]}
    assert spec["nodeSelector"] == {"feature.node.kubernetes.io/pci-15b3.present": "true"}
    (network,) = by_kind(result, "SriovIBNetwork")
    assert network["metadata"]["namespace"] == "openshift-sriov-network-operator"
    assert network["spec"]["networkNamespace"] == "ai" and network["spec"]["resourceName"] == "sriovlegacy_ib"


def test_pool_config_rendered_only_when_asked():
    assert by_kind(render(base_variables("sriov_legacy", "roce")), "SriovNetworkPoolConfig") == []
    result = render(base_variables("sriov_legacy", "roce", sriov_pool_rdma_mode="exclusive", machineconfig_pool="gpu"))
    (pool,) = by_kind(result, "SriovNetworkPoolConfig")
    assert pool["metadata"]["name"] == "gpu"
    assert pool["spec"] == {"maxUnavailable": 1, "rdmaMode": "exclusive", "nodeSelector": {"matchLabels": {"node-role.kubernetes.io/gpu": ""}}}
    assert any("rdmaMode exclusive" in r for r in result["summary"]["reboots"])


def test_sriov_legacy_with_inbox_driver_has_no_nic_cluster_policy():
    result = render(base_variables("sriov_legacy", "roce", nic_driver="inbox"))
    assert by_kind(result, "NicClusterPolicy") == []
    selector = by_kind(result, "SriovOperatorConfig")[0]["spec"]["configDaemonNodeSelector"]
    assert "network.nvidia.com/operator.mofed.wait" not in selector


def test_sriov_operator_config_waits_for_the_doca_driver():
    config = by_kind(render(base_variables("shared_device", "roce", machineconfig_pool="gpu")), "SriovOperatorConfig")[0]
    assert config["metadata"] == {"name": "default", "namespace": "openshift-sriov-network-operator", "labels": MANAGED}
    assert config["spec"]["configDaemonNodeSelector"] == {
        "network.nvidia.com/operator.mofed.wait": "false", "node-role.kubernetes.io/gpu": "",
        "feature.node.kubernetes.io/pci-15b3.sriov.capable": "true", "feature.node.kubernetes.io/pci-15b3.present": "true"}


def test_config_daemons_run_only_where_the_policies_select():
    variables = base_variables("sriov_legacy", "roce", node_selector={"gpudirect/rdma": True})
    result = render(variables)
    selector = by_kind(result, "SriovOperatorConfig")[0]["spec"]["configDaemonNodeSelector"]
    policy = by_kind(result, "SriovNetworkNodePolicy")[0]["spec"]["nodeSelector"]
    assert policy == {"gpudirect/rdma": "true"} and selector["gpudirect/rdma"] == "true"


def test_nfd_labels_network_infiniband_display_and_accelerators():
    nfd = by_kind(render(base_variables("shared_device", "roce")), "NodeFeatureDiscovery")[0]
    data = nfd["spec"]["workerConfig"]["configData"]
    for cls in ('"0200"', '"0207"', '"03"', '"12"', '"vendor"'):
        assert cls in data
    assert "image" not in nfd["spec"]["operand"]


@pytest.mark.parametrize("mode,rdma_enabled,module_type", [("dmabuf", False, "open"), ("peermem", True, "auto")])
def test_gpu_cluster_policy_rdma_mode(mode, rdma_enabled, module_type):
    policy = by_kind(render(base_variables("host_device", "roce", gpu_rdma_mode=mode, gpu_driver_version="570.124.06")), "ClusterPolicy")[0]
    driver = policy["spec"]["driver"]
    assert driver["rdma"] == {"enabled": rdma_enabled, "useHostMofed": False}
    assert driver["kernelModuleType"] == module_type and driver["version"] == "570.124.06"


@pytest.mark.parametrize("version,default_runtime", [("", "crio"), ("v24.9.2", "crio"), ("v25.3.4", "crio"), ("v26.7.0", None)])
def test_default_runtime_only_where_the_cluster_policy_crd_still_uses_it(version, default_runtime):
    """Issue 13 point 8: required (default docker) up to v25.x; deprecated and unused from v26.7."""
    policy = by_kind(render(base_variables("shared_device", "roce", gpu_operator_version=version)), "ClusterPolicy")[0]
    assert policy["spec"]["operator"].get("defaultRuntime") == default_runtime


def test_image_overrides_replace_only_given_fields():
    result = render(base_variables("shared_device", "infiniband", image_overrides={"ipoib_cni": {"version": "network-operator-v25.10.0"}}))
    ipoib = by_kind(result, "NicClusterPolicy")[0]["spec"]["secondaryNetwork"]["ipoib"]
    assert ipoib == {"image": "ipoib-cni", "repository": "nvcr.io/nvidia/mellanox", "version": "network-operator-v25.10.0"}


DIGEST = "sha256:" + "0123456789abcdef" * 4


def test_image_versions_take_digests_and_are_listed_with_at():
    """Issue 20 point 6: a digest pins an image; both operators join a `sha256:` version with '@'
    (network-operator pkg/render/render.go, gpu-operator api/nvidia/v1 imagePath)."""
    result = render(base_variables("shared_device", "infiniband", doca_driver_version=DIGEST, gpu_driver_version=DIGEST,
                                   image_overrides={"ipoib_cni": {"version": DIGEST}}))
    assert result["errors"] == []
    spec = by_kind(result, "NicClusterPolicy")[0]["spec"]
    assert spec["ofedDriver"]["version"] == DIGEST and spec["secondaryNetwork"]["ipoib"]["version"] == DIGEST
    assert by_kind(result, "ClusterPolicy")[0]["spec"]["driver"]["version"] == DIGEST
    images = [i["image"] for i in result["images"]]
    assert "nvcr.io/nvidia/mellanox/doca-driver@" + DIGEST in images
    assert "nvcr.io/nvidia/mellanox/ipoib-cni@" + DIGEST in images
    bad = render_all(base_variables("shared_device", "infiniband", doca_driver_version="sha256:abc"))
    assert [e for e in bad["errors"] if e.startswith("gpudirect_rdma_doca_driver_version: 'sha256:abc' is not a valid image tag or digest")]


@pytest.mark.parametrize("version, repository, doca, rdma_plugin", [
    ("", "nvcr.io/nvidia/mellanox", "doca3.4.1-26.04-1.1.0.0-1", "network-operator-v26.4.1"),
    ("26.4.1", "nvcr.io/nvidia/mellanox", "doca3.4.1-26.04-1.1.0.0-1", "network-operator-v26.4.1"),
    ("25.4.0", "ghcr.io/mellanox", "25.04-0.6.1.0-2", "v1.5.3"),
    ("25.7.0", "ghcr.io/mellanox", "25.04-0.6.1.0-2", "v1.5.3"),
    ("v25.1", "ghcr.io/mellanox", "25.01-0.6.0.0-0", "v1.5.2"),
    ("24.10.0", "ghcr.io/mellanox", "25.01-0.6.0.0-0", "v1.5.2"),
])
def test_component_images_follow_the_network_operator_release(version, repository, doca, rdma_plugin):
    """render/releases.py: each release's hack/release.yaml images; a user's DOCA pin and overrides stay on top."""
    result = render(base_variables("shared_device", "roce", network_operator_version=version))
    spec = by_kind(result, "NicClusterPolicy")[0]["spec"]
    assert spec["rdmaSharedDevicePlugin"]["repository"] == repository
    tag, digest = spec["rdmaSharedDevicePlugin"]["version"].split("@")
    assert tag == rdma_plugin and re.match(r"^sha256:[a-f0-9]{64}$", digest)  # pinned, the tag kept (issue 20 point 6)
    assert spec["ofedDriver"]["version"] == doca and spec["ofedDriver"]["repository"] == "nvcr.io/nvidia/mellanox"
    pinned = render(base_variables("shared_device", "roce", network_operator_version=version, doca_driver_version="24.10-0.7.0.0-0"))
    assert by_kind(pinned, "NicClusterPolicy")[0]["spec"]["ofedDriver"]["version"] == "24.10-0.7.0.0-0"


# NIC selection from facts ---------------------------------------------------------------------

def auto_variables(method, fabric, **extra):
    extra.setdefault("nic_facts", copy.deepcopy(NIC_FACTS))
    variables = base_variables(method, fabric, nic_selection="auto", **extra)
    variables.pop(P + "nic_interfaces", None)
    variables.pop(P + "nic_pci_addresses", None)
    return variables


def test_auto_picks_ports_of_the_fabric():
    shared = render(auto_variables("shared_device", "infiniband"))
    assert shared["summary"]["nic_selection"]["groups"][0]["interfaces"] == ["ibs2f0"]
    hostdev = render(auto_variables("host_device", "roce"))
    config = json.loads(by_kind(hostdev, "NicClusterPolicy")[0]["spec"]["sriovDevicePlugin"]["config"])
    assert config["resourceList"][0]["selectors"]["pciAddresses"] == ["0000:a0:00.0"]


def test_auto_without_matching_ports_is_an_error():
    facts = [f for f in NIC_FACTS if f["link_layer"] == "Ethernet"]
    errors = render_all(dict(auto_variables("host_device", "infiniband"), **{P + "nic_facts": facts}))["errors"]
    assert errors == ["gpudirect_rdma_nic_facts: no NVIDIA/Mellanox InfiniBand port found (ports seen: roce)"]


def test_auto_prefers_nic_nearest_each_gpu_and_builds_rails():
    facts = []
    for node in ("gpu-a", "gpu-b"):
        for index, pci in enumerate(("0000:1a:00.0", "0000:3b:00.0", "0000:9c:00.0")):
            facts.append({"node": node, "pci_address": pci, "device_id": "1021", "netdev": "ens%df0np0" % (index + 1),
                          "link_layer": "Ethernet", "total_vfs": 8})
    affinity = []
    for node in ("gpu-a", "gpu-b"):
        affinity += [
            {"node": node, "gpu": 0, "nic": "0000:1a:00.0", "relation": "PIX"},
            {"node": node, "gpu": 0, "nic": "0000:3b:00.0", "relation": "SYS"},
            {"node": node, "gpu": 1, "nic": "0000:3b:00.0", "relation": "PXB"},
            {"node": node, "gpu": 1, "nic": "0000:1a:00.0", "relation": "NODE"},
        ]  # 0000:9c:00.0 is near no GPU: left out
    variables = auto_variables("sriov_legacy", "roce", nic_facts=facts, gpu_nic_affinity=affinity, resource_names=["rail_0", "rail_1"])
    result = render(variables)
    policies = by_kind(result, "SriovNetworkNodePolicy")
    assert [(p["metadata"]["name"], p["spec"]["nicSelector"]["rootDevices"]) for p in policies] == [
        ("rail-0-policy", ["0000:1a:00.0"]), ("rail-1-policy", ["0000:3b:00.0"])]
    assert [n["metadata"]["name"] for n in by_kind(result, "SriovNetwork")] == ["sriov-network-1", "sriov-network-2"]
    assert result["summary"]["resources"] == ["openshift.io/rail_0", "openshift.io/rail_1"]


def test_manual_rails_one_resource_per_interface():
    result = render(base_variables("shared_device", "roce", nic_interfaces=["ens1f0np0", "ens2f0np0"],
                                   resource_names=["rdma_a", "rdma_b"], network_names=["net-a", "net-b"]))
    config = json.loads(by_kind(result, "NicClusterPolicy")[0]["spec"]["rdmaSharedDevicePlugin"]["config"])
    assert [(c["resourceName"], c["selectors"]["ifNames"]) for c in config["configList"]] == [("rdma_a", ["ens1f0np0"]), ("rdma_b", ["ens2f0np0"])]
    assert [(n["metadata"]["name"], n["spec"]["master"]) for n in by_kind(result, "MacvlanNetwork")] == [("net-a", "ens1f0np0"), ("net-b", "ens2f0np0")]


def _ipam(network):
    return json.loads(network["spec"]["ipam"])


def test_each_rail_gets_its_own_range_split_from_the_one_given():
    """Issue 13 point 5: two rails with one range would hand out the same addresses on two fabrics."""
    result = render(base_variables("shared_device", "roce", nic_interfaces=["ens1f0np0", "ens2f0np0", "ens3f0np0"],
                                   resource_names=["rdma_a", "rdma_b", "rdma_c"], ipam_range="192.168.8.0/22",
                                   ipam_exclude=["192.168.9.0/30"], ipam_gateway=None))
    ipams = [_ipam(n) for n in by_kind(result, "MacvlanNetwork")]
    assert [i["range"] for i in ipams] == ["192.168.8.0/24", "192.168.9.0/24", "192.168.10.0/24"]
    assert [i.get("exclude") for i in ipams] == [None, ["192.168.9.0/30"], None]
    assert [g["ipam_range"] for g in result["summary"]["nic_selection"]["groups"]] == [i["range"] for i in ipams]


def test_rails_take_the_ranges_given_per_rail():
    result = render(base_variables("host_device", "roce", nic_pci_addresses=["0000:a0:00.0", "0000:a1:00.0"], resource_names=["rail_a", "rail_b"],
                                   ipam_range=None, ipam_ranges=["10.10.1.0/24", "10.10.2.0/24"], ipam_exclude=[], ipam_gateway=None))
    assert [_ipam(n)["range"] for n in by_kind(result, "HostDeviceNetwork")] == ["10.10.1.0/24", "10.10.2.0/24"]


def test_one_rail_keeps_the_range_as_given():
    result = render(base_variables("shared_device", "roce", ipam_range="192.168.2.0/24", ipam_exclude=[], ipam_gateway="192.168.2.1"))
    ipam = _ipam(by_kind(result, "MacvlanNetwork")[0])
    assert ipam["range"] == "192.168.2.0/24" and ipam["gateway"] == "192.168.2.1"


def test_master_defaults_to_first_interface_with_a_warning():
    result = render(base_variables("shared_device", "roce", nic_interfaces=["ens1f0np0", "ens2f0np0"]))
    assert by_kind(result, "MacvlanNetwork")[0]["spec"]["master"] == "ens1f0np0"
    assert result["warnings"] == ["gpudirect_rdma_macvlan_master: not set; the rdmashared-net network uses ens1f0np0, the first of ens1f0np0, ens2f0np0"]


# MachineConfig ---------------------------------------------------------------------------------

def decode(file_entry):
    source = file_entry["contents"]["source"]
    prefix = "data:text/plain;charset=utf-8;base64,"
    assert source.startswith(prefix)
    return base64.b64decode(source[len(prefix):]).decode("utf-8")


def test_one_machineconfig_carries_everything():
    result = render(base_variables("shared_device", "infiniband", apply_machineconfigs=True, nic_facts=NIC_FACTS,
                                   machineconfigs=["irdma_blacklist", "persistent_names", "crio_memlock"], machineconfig_pool="gpu",
                                   memlock_pool="gpu", udev_rules_from_facts=True))
    (mc,) = by_kind(result, "MachineConfig")
    assert result["manifests"][0]["manifest"] is mc  # applied first: one reboot before drivers load
    assert mc["metadata"] == {"name": "99-gpu-gpudirect-rdma", "labels": dict(MANAGED, **{"machineconfiguration.openshift.io/role": "gpu"})}
    assert mc["spec"]["kernelArguments"] == ["module_blacklist=irdma"]
    assert mc["spec"]["config"]["ignition"]["version"].startswith("3.")
    files = dict((f["path"], f) for f in mc["spec"]["config"]["storage"]["files"])
    assert all(f["mode"] == 420 and "filesystem" not in f for f in files.values())  # ignition 3 has no filesystem key
    assert decode(files[machineconfigs.CRIO_DROPIN_PATH]) == '[crio.runtime]\ndefault_ulimits = [\n"memlock=-1:-1"\n]\n'
    rules = decode(files[machineconfigs.UDEV_RULES_PATH]).splitlines()[1:]
    assert rules == sorted([
        'SUBSYSTEM=="net", ACTION=="add", ATTR{type}=="1", ATTR{address}=="b8:3f:d2:3b:51:29", NAME="ens8f0np0"',
        'SUBSYSTEM=="net", ACTION=="add", ATTR{type}=="1", ATTR{address}=="b8:3f:d2:f0:36:d1", NAME="ens8f0np0"',
        'SUBSYSTEM=="net", ACTION=="add", ATTR{type}=="32", ATTR{address}=="?*b8:3f:d2:03:00:3b:51:28", NAME="ibs2f0"',
        'SUBSYSTEM=="net", ACTION=="add", ATTR{type}=="32", ATTR{address}=="?*b8:3f:d2:03:00:f0:36:d0", NAME="ibs2f0"',
    ])


def test_memlock_goes_to_its_own_machineconfig_for_the_rdma_pool_by_default():
    """Issue 20 point 7: the CRI-O memlock drop-in lifts the limit of every container of a pool, so by default it is a
    MachineConfig of the custom pool gpudirect-rdma (the RDMA nodes), not of the whole worker pool."""
    result = render(base_variables("shared_device", "roce", apply_machineconfigs=True, machineconfigs=["irdma_blacklist", "crio_memlock"]))
    main, memlock = by_kind(result, "MachineConfig")
    assert main["metadata"]["labels"]["machineconfiguration.openshift.io/role"] == "worker"
    assert machineconfigs.CRIO_DROPIN_PATH not in [f["path"] for f in (main["spec"]["config"].get("storage") or {}).get("files", [])]
    assert memlock["metadata"]["name"] == "99-gpudirect-rdma-gpudirect-rdma-memlock"
    assert memlock["metadata"]["labels"]["machineconfiguration.openshift.io/role"] == "gpudirect-rdma"
    assert [f["path"] for f in memlock["spec"]["config"]["storage"]["files"]] == [machineconfigs.CRIO_DROPIN_PATH]
    summary = result["summary"]
    assert summary["memlock_pool"] == "gpudirect-rdma"
    # The custom pool selects the worker role too, so it renders both; the worker pool only its own.
    assert summary["machineconfig_pools"] == {"worker": ["99-worker-gpudirect-rdma"],
                                              "gpudirect-rdma": ["99-gpudirect-rdma-gpudirect-rdma-memlock", "99-worker-gpudirect-rdma"]}
    only = render(base_variables("shared_device", "roce", apply_machineconfigs=True, machineconfigs=["crio_memlock"]))
    assert [m["metadata"]["name"] for m in by_kind(only, "MachineConfig")] == ["99-gpudirect-rdma-gpudirect-rdma-memlock"]
    whole_pool = render(base_variables("shared_device", "roce", apply_machineconfigs=True, machineconfigs=["crio_memlock"], memlock_pool="worker"))
    (mc,) = by_kind(whole_pool, "MachineConfig")
    assert mc["metadata"]["name"] == "99-worker-gpudirect-rdma" and whole_pool["summary"]["memlock_pool"] is None


@pytest.mark.parametrize("entry,expected", [
    ({"address": "B8:3F:D2:3B:51:29", "name": "ens8f0np0", "link_layer": "Ethernet"}, None),
    ({"address": "0x248a070300f38a0a", "name": "ib0", "type": 32}, None),
    ({"address": "b8:3f:d2:3b:51:29", "name": "ib0", "link_layer": "InfiniBand"},
     "gpudirect_rdma_udev_rules[0].address: 'b8:3f:d2:3b:51:29' is not a 20-byte IPoIB address"),
    ({"address": "00:00:10:29:fe:80:00:00:00:00:00:00:b8:3f:d2:03:00:3b:51:28", "name": "ens8", "link_layer": "Ethernet"},
     "gpudirect_rdma_udev_rules[0].address: '00:00:10:29:fe:80:00:00:00:00:00:00:b8:3f:d2:03:00:3b:51:28' is not a 6-byte MAC"),
    ({"address": "b8:3f:d2:3b:51:29", "name": "a name with spaces", "link_layer": "Ethernet"},
     "gpudirect_rdma_udev_rules[0].name: 'a name with spaces' is not a network interface name"),
])
def test_udev_rule_entries(entry, expected):
    result = render_all(base_variables("host_device", "roce", apply_machineconfigs=True, machineconfigs=["persistent_names"], udev_rules=[entry]))
    if expected is None:
        assert result["errors"] == []
        rules = decode(by_kind(result, "MachineConfig")[0]["spec"]["config"]["storage"]["files"][0])
        assert ('ATTR{type}=="32", ATTR{address}=="?*24:8a:07:03:00:f3:8a:0a"' in rules) or ('ATTR{address}=="b8:3f:d2:3b:51:29"' in rules)
    else:
        assert expected in result["errors"][0]


def test_conflicting_udev_names_are_rejected():
    rules = [{"address": "b8:3f:d2:3b:51:29", "name": "rdma0", "link_layer": "Ethernet"},
             {"address": "b8:3f:d2:3b:51:29", "name": "rdma1", "link_layer": "Ethernet"}]
    errors = render_all(base_variables("host_device", "roce", apply_machineconfigs=True, machineconfigs=["persistent_names"], udev_rules=rules))["errors"]
    assert errors == ["gpudirect_rdma_udev_rules[1]: b8:3f:d2:3b:51:29 is already named rdma0; one address cannot get two names"]


# Order, teardown and method switches -----------------------------------------------------------

def test_apply_order_and_file_names():
    result = render(base_variables("sriov_legacy", "roce", apply_machineconfigs=True, sriov_pool_config=True))
    phases = [e["phase"] for e in result["manifests"]]
    assert phases == ["machineconfig", "nfd", "sriov_operator", "nic_cluster_policy", "gpu_cluster_policy", "sriov_pool", "sriov_policy", "network"]
    orders = [e["order"] for e in result["manifests"]]
    assert orders == sorted(orders) and len(set(orders)) == len(orders)
    files = [e["file"] for e in result["manifests"]]
    assert files == sorted(files)  # file-name order is apply order
    assert files[-1].endswith("-sriovnetwork-sriov-network.yaml")
    assert [t["manifest"]["kind"] for t in result["teardown_order"]] == [
        "SriovNetwork", "SriovNetworkNodePolicy", "SriovNetworkPoolConfig", "ClusterPolicy", "NicClusterPolicy",
        "SriovOperatorConfig", "NodeFeatureDiscovery", "MachineConfig"]
    assert teardown_order(result["manifests"]) == result["teardown_order"]
    assert set(result["phases"]) == set(phases)


FIFTH_OPERATOR = {"role": "fake_operator", "package": "fake-operator", "namespace": "fake-operator", "catalog_source": "community-operators"}


def test_a_fifth_operator_renames_no_file():
    variables = base_variables("sriov_legacy", "roce", apply_machineconfigs=True, sriov_pool_config=True)
    four, errors = olm.olm_manifests(variables, catalogue.resolve({}))
    assert errors == []
    five, errors = olm.olm_manifests(variables, catalogue.resolve({}, extra=[FIFTH_OPERATOR]))
    assert errors == []
    assert five[:len(four)] == four
    added = [e["file"] for e in five[len(four):]]
    assert [f.split("-", 1)[1] for f in added] == [
        "namespace-fake-operator.yaml", "operatorgroup-fake-operator.yaml", "subscription-fake-operator.yaml"]
    rendered = [e["file"] for e in render(variables)["manifests"]]
    files = [e["file"] for e in five] + rendered
    assert files == sorted(files) and len(set(files)) == len(files)  # after the fourth operator, before every phase


def test_file_numbers_are_sync_wave_times_100_plus_position():
    # the files and the GitOps sync waves tell one apply order (docs/gitops.md)
    variables = base_variables("sriov_legacy", "roce", apply_machineconfigs=True, sriov_pool_config=True,
                               machineconfigs=["irdma_blacklist", "persistent_names", "crio_memlock"], nic_facts=copy.deepcopy(NIC_FACTS),
                               udev_rules_from_facts=True, network_namespaces=["default", "rdma-tests"])
    entries = render(variables)["manifests"]
    for entry in entries:
        assert entry["file"] == "%04d-%s-%s.yaml" % (entry["order"], entry["manifest"]["kind"].lower(), entry["manifest"]["metadata"]["name"])
        assert entry["order"] // names.PHASE_SLOTS == gitops.sync_wave(entry["phase"]), entry["file"]
    positions = {}
    for entry in entries:
        positions.setdefault(entry["phase"], []).append(entry["order"] % names.PHASE_SLOTS)
    assert all(found == list(range(len(found))) for found in positions.values()), positions
    assert len(positions["machineconfig"]) > 1 and len(positions["network"]) == 2
    for entry in olm.olm_manifests(variables)[0]:
        assert entry["order"] // names.PHASE_SLOTS == gitops.OLM_WAVE and entry["order"] % names.OLM_BLOCK < names.OLM_APPROVER_POSITION
    assert names.verification_order() // names.PHASE_SLOTS == gitops.VERIFICATION_WAVE


def test_switch_from_sriov_legacy_to_shared_device():
    before = render(base_variables("sriov_legacy", "roce", apply_machineconfigs=True))["manifests"]
    after = render(base_variables("shared_device", "roce"))["manifests"]
    stale = stale_objects(before, after)
    assert [(s["action"], s["manifest"]["kind"], s["manifest"]["metadata"]["name"]) for s in stale] == [
        ("delete", "SriovNetwork", "sriov-network"),
        ("delete", "SriovNetworkNodePolicy", "sriovlegacy-policy"),
        ("replace", "NicClusterPolicy", "nic-cluster-policy"),
    ]
    assert "none to rdmaSharedDevicePlugin" in stale[2]["reason"]
    # MachineConfigs only when asked: deleting one reboots the pool.
    assert stale_objects(before, after, include_machineconfigs=True)[-1]["manifest"]["kind"] == "MachineConfig"


def test_switch_fabric_within_shared_device_replaces_policy_and_network():
    before = render(base_variables("shared_device", "roce"))["manifests"]
    after = render(base_variables("shared_device", "infiniband"))["manifests"]
    stale = stale_objects([e["manifest"] for e in before], [e["manifest"] for e in after])
    assert [(s["action"], s["manifest"]["kind"]) for s in stale] == [("delete", "MacvlanNetwork"), ("replace", "NicClusterPolicy")]


def test_same_configuration_has_nothing_stale():
    manifests = render(base_variables("host_device", "roce"))["manifests"]
    changed = render(base_variables("host_device", "roce", nic_pci_addresses=["0000:a1:00.0"]))["manifests"]
    assert stale_objects(manifests, changed) == []


@pytest.mark.parametrize("method,fabric", METHOD_FABRICS)
def test_every_manifest_carries_the_managed_by_label(method, fabric):
    """Teardown and method switches select on this label, so nothing may lack it."""
    for entry in render(base_variables(method, fabric))["manifests"]:
        assert entry["manifest"]["metadata"]["labels"] == dict(entry["manifest"]["metadata"]["labels"], **MANAGED)


# Facts and variables are untrusted text for nodes (security issue, point 2) ---------------------------------------

INJECTION = 'ens1"\nRUN+="/bin/sh -c \'touch /pwned\'"'


def _facts_with(**override):
    facts = copy.deepcopy(NIC_FACTS)
    facts[0].update(override)
    return facts


def test_udev_rules_from_facts_need_an_explicit_opt_in():
    variables = base_variables("shared_device", "infiniband", apply_machineconfigs=True, nic_facts=NIC_FACTS,
                               machineconfigs=["persistent_names"])
    result = render_all(variables)
    assert result["manifests"] == []
    assert any(e.startswith("gpudirect_rdma_udev_rules_from_facts: persistent_names would name") for e in result["errors"])


@pytest.mark.parametrize("key,value", [
    ("netdev", INJECTION), ("netdev", 'a",RUN+="x'), ("netdev", "eth 0"), ("rdma_device", 'mlx5_0"'),
    ("node", 'worker-0"\n'),
])
def test_facts_with_text_that_could_escape_a_rule_are_refused_before_rendering(key, value):
    variables = base_variables("shared_device", "infiniband", apply_machineconfigs=True, nic_selection="auto",
                               nic_facts=_facts_with(**{key: value}), machineconfigs=["persistent_names"],
                               udev_rules_from_facts=True)
    variables.pop(P + "nic_interfaces", None)
    result = render_all(variables)
    assert "gpudirect_rdma_nic_facts[0].%s: %r" % (key, value) in "\n".join(result["errors"]), result["errors"]
    rendered = json.dumps([m["manifest"] for m in result["manifests"]])
    assert "RUN+=" not in rendered and "pwned" not in rendered


@pytest.mark.parametrize("field,value", [
    ("udev_rules", [{"address": "b8:3f:d2:3b:51:29", "name": 'a",RUN+="x', "link_layer": "Ethernet"}]),
    ("udev_rules", [{"address": "b8:3f:d2:3b:51:29", "name": "a,b", "link_layer": "Ethernet"}]),
    ("macvlan_master", 'x","y{}'),
    ("gpu_driver_repository", 'a b"c'),
    ("gpu_driver_version", "1;rm"),
])
def test_variables_with_text_that_could_escape_are_refused(field, value):
    variables = base_variables("shared_device", "roce", apply_machineconfigs=True, machineconfigs=["persistent_names"],
                               udev_rules=[{"address": "b8:3f:d2:3b:51:29", "name": "rdma0", "link_layer": "Ethernet"}])
    variables[P + field] = value
    result = render_all(variables)
    assert result["manifests"] == [] and any(e.startswith(P + field) for e in result["errors"]), result["errors"]


@pytest.mark.parametrize("name", ['a"b', "a\\b", "a,b", "a\nb", "a\x7fb", "a'b"])
def test_udev_rule_writer_refuses_text_that_would_escape(name):
    with pytest.raises(ValueError, match="must not contain quotes"):
        machineconfigs.udev_rule("b8:3f:d2:3b:51:29", name, "roce")


# Host device selects PFs the way the SR-IOV device plugin can (issue: six configurations, point 1) ----------------

def test_host_device_never_selects_a_pf_by_name_or_root_device():
    """pfNames and rootDevices match VFs only; a PF is selected by PCI address (names map through facts)."""
    by_address = render(base_variables("host_device", "roce"))
    config = json.loads(by_kind(by_address, "NicClusterPolicy")[0]["spec"]["sriovDevicePlugin"]["config"])
    assert config["resourceList"][0]["selectors"] == {"vendors": ["15b3"], "pciAddresses": ["0000:a0:00.0"],
                                                      "linkTypes": ["ether"], "isRdma": True}
    by_name_with_facts = render(base_variables("host_device", "roce", nic_pci_addresses=[], nic_interfaces=["ens8f0np0"],
                                               nic_facts=copy.deepcopy(NIC_FACTS)))
    config = json.loads(by_kind(by_name_with_facts, "NicClusterPolicy")[0]["spec"]["sriovDevicePlugin"]["config"])
    selectors = config["resourceList"][0]["selectors"]
    assert selectors["pciAddresses"] == ["0000:a0:00.0"] and "pfNames" not in selectors and "rootDevices" not in selectors
    by_name_only = render_all(base_variables("host_device", "roce", nic_pci_addresses=[], nic_interfaces=["ens8f0np0"]))
    assert by_name_only["manifests"] == []
    assert by_name_only["errors"][0].startswith(
        "gpudirect_rdma_nic_interfaces: host_device cannot select a physical function by interface name (ens8f0np0)")


@pytest.mark.parametrize("fabric,kind", [("infiniband", "SriovIBNetwork"), ("roce", "SriovNetwork")])
def test_sriov_networks_chain_the_rdma_cni_under_exclusive_rdma_mode(fabric, kind):
    """Exclusive RDMA mode hides every RDMA device the CNI chain does not move into the pod: rdma CNI is chained."""
    exclusive = render(base_variables("sriov_legacy", fabric, sriov_pool_rdma_mode="exclusive"))
    (network,) = by_kind(exclusive, kind)
    assert json.loads(network["spec"]["metaPlugins"]) == {"type": "rdma"}
    (pool,) = by_kind(exclusive, "SriovNetworkPoolConfig")
    assert pool["spec"]["rdmaMode"] == "exclusive"
    shared = render(base_variables("sriov_legacy", fabric, sriov_pool_rdma_mode="shared"))
    assert "metaPlugins" not in by_kind(shared, kind)[0]["spec"]
    if kind == "SriovIBNetwork":
        assert network["spec"]["linkState"] == "auto"


def both_fabrics(**second):
    given = {"nic_interfaces": ["ibs2f0"], "ipam_range": "192.168.6.0/24"}
    given.update(second)
    return base_variables("shared_device", "roce", ipam_range="192.168.2.0/24", ipam_exclude=[], second_fabric=given)


def test_shared_device_serves_both_fabrics_from_one_policy_as_the_chapter_does():
    """Issue 13 point 7: the chapter's shared-device policy lists rdma_shared_device_ib and rdma_shared_device_eth in one
    configList, with the IPoIB CNI; each fabric gets its own network and range."""
    result = render(both_fabrics())
    (ncp,) = by_kind(result, "NicClusterPolicy")
    assert set(ncp["spec"]) == {"ofedDriver", "rdmaSharedDevicePlugin", "secondaryNetwork"}
    assert set(ncp["spec"]["secondaryNetwork"]) == {"ipoib"}
    config = json.loads(ncp["spec"]["rdmaSharedDevicePlugin"]["config"])
    assert [(c["resourceName"], c["selectors"]) for c in config["configList"]] == [
        ("rdma_shared_device_eth", {"ifNames": ["ens8f0np0"]}), ("rdma_shared_device_ib", {"ifNames": ["ibs2f0"]})]
    (macvlan,) = by_kind(result, "MacvlanNetwork")
    (ipoib,) = by_kind(result, "IPoIBNetwork")
    assert (macvlan["metadata"]["name"], macvlan["spec"]["master"], json.loads(macvlan["spec"]["ipam"])["range"]) == (
        "rdmashared-net", "ens8f0np0", "192.168.2.0/24")
    assert (ipoib["metadata"]["name"], ipoib["spec"]["master"], json.loads(ipoib["spec"]["ipam"])["range"]) == (
        "rdmashared-ib-net", "ibs2f0", "192.168.6.0/24")
    summary = result["summary"]
    assert summary["fabrics"] == ["roce", "infiniband"]
    assert summary["configuration"] == "shared_device/roce + infiniband"
    assert summary["resources"] == ["rdma/rdma_shared_device_eth", "rdma/rdma_shared_device_ib"]
    assert [(g["fabric"], g["network_name"]) for g in summary["nic_selection"]["groups"]] == [
        ("roce", "rdmashared-net"), ("infiniband", "rdmashared-ib-net")]


def test_second_fabric_by_device_id_restricts_its_link_type():
    result = render(both_fabrics(nic_interfaces=None, nic_device_ids=["a2dc"], master="ibs2f0"))
    (ncp,) = by_kind(result, "NicClusterPolicy")
    second = json.loads(ncp["spec"]["rdmaSharedDevicePlugin"]["config"])["configList"][1]
    assert second["selectors"] == {"vendors": ["15b3"], "deviceIDs": ["a2dc"], "linkTypes": ["infiniband"]}
    assert by_kind(result, "IPoIBNetwork")[0]["spec"]["master"] == "ibs2f0"


@pytest.mark.parametrize("second,message", [
    ({"nic_interfaces": ["ens8f0np0"]}, "gpudirect_rdma_second_fabric.nic_interfaces: ens8f0np0 is also a port of the roce fabric"),
    ({"ipam_range": "192.168.2.128/25"}, "gpudirect_rdma_second_fabric.ipam_range: 192.168.2.128/25 overlaps 192.168.2.0/24"),
    ({"ipam_range": None}, "gpudirect_rdma_second_fabric.ipam_range: required"),
    ({"nic_interfaces": None}, "gpudirect_rdma_second_fabric.nic_interfaces: required"),
    ({"network_name": "rdmashared-net"}, "gpudirect_rdma_second_fabric.network_name: rdmashared-net is also a network of the roce"),
    ({"resource_name": "rdma_shared_device_eth"}, "gpudirect_rdma_second_fabric.resource_name: rdma_shared_device_eth is also a resource"),
    ({"nic_interfaces": None, "nic_device_ids": ["a2dc"]}, "gpudirect_rdma_second_fabric.master: required"),
    ({"vlan": 3}, "gpudirect_rdma_second_fabric: unknown key vlan"),
    ({"ipam_range": "10.128.0.0/24"}, "gpudirect_rdma_second_fabric.ipam_range: 10.128.0.0/24 overlaps the cluster"),
])
def test_second_fabric_mistakes_name_the_key(second, message):
    variables = both_fabrics(**second)
    variables[P + "second_fabric"] = dict((k, v) for k, v in variables[P + "second_fabric"].items() if v is not None)
    errors = render_all(variables)["errors"]
    assert any(e.startswith(message) for e in errors), errors


def test_second_fabric_ports_are_checked_against_facts_of_their_own_fabric():
    facts = copy.deepcopy(NIC_FACTS) + [
        {"node": "worker-0", "pci_address": "0000:a1:00.0", "vendor_id": "15b3", "device_id": "a2dc", "netdev": "ens9f0np0",
         "rdma_device": "mlx5_2", "link_layer": "Ethernet"}]
    variables = both_fabrics(nic_interfaces=["ibs2f0"])
    variables[P + "nic_facts"] = facts
    assert render_all(variables)["errors"] == []
    variables[P + "second_fabric"]["nic_interfaces"] = ["ens9f0np0"]
    errors = render_all(variables)["errors"]
    assert any(e.startswith("gpudirect_rdma_second_fabric.nic_interfaces: ens9f0np0 on node worker-0 is an Ethernet port")
               for e in errors), errors


@pytest.mark.parametrize("method", ["host_device", "sriov_legacy"])
def test_second_fabric_is_refused_for_methods_of_one_fabric(method):
    variables = base_variables(method, "roce", second_fabric={"nic_interfaces": ["ibs2f0"], "ipam_range": "192.168.6.0/24"})
    errors = render_all(variables)["errors"]
    assert ("gpudirect_rdma_second_fabric: %s configures one fabric; only shared_device serves RoCE and InfiniBand ports "
            "from one NicClusterPolicy. Leave it unset, or use method shared_device" % method) in errors, errors
