# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Input model: defaults, coercion and the table of invalid combinations."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy

import pytest

from ansible_collections.gpudirect.openshift.plugins.module_utils.render import model
from ansible_collections.gpudirect.openshift.plugins.module_utils.render.plan import render_all, validate, validate_checks

from conftest import NIC_FACTS, P, base_variables


def errors_of(variables):
    return render_all(variables)["errors"]


def facts_with(**changes):
    facts = copy.deepcopy(NIC_FACTS)
    for entry in facts:
        entry.update(changes)
    return facts


# (id, method, fabric, extra variables, expected message fragment: always starts with the variable name)
E810_FACTS = [{"node": "worker-0", "pci_address": "0000:4b:00.0", "vendor_id": "8086", "device_id": "159b", "netdev": "eno8303",
               "rdma_device": "irdma0", "link_layer": "Ethernet", "total_vfs": 16, "numa_node": 0}]

INVALID = [
    ("unknown-method", "rdma_magic", "roce", {}, "gpudirect_rdma_method: 'rdma_magic' is not one of"),
    ("unknown-fabric", "shared_device", "omnipath", {}, "gpudirect_rdma_fabric: 'omnipath' is not one of"),
    ("unknown-variable", "shared_device", "roce", {"ipam_rnage": "10.0.0.0/8"}, "gpudirect_rdma_ipam_rnage: unknown variable"),
    ("ib-with-macvlan-mode", "shared_device", "infiniband", {"macvlan_mode": "private"},
     "gpudirect_rdma_macvlan_mode: macvlan options do not apply to infiniband"),
    ("ib-with-macvlan-master", "shared_device", "infiniband", {"macvlan_master": "ibs2f0"},
     "gpudirect_rdma_macvlan_master: macvlan options do not apply to infiniband"),
    ("roce-with-ipoib-master", "shared_device", "roce", {"ipoib_master": "ibs2f0"}, "gpudirect_rdma_ipoib_master: IPoIB options do not apply to roce"),
    ("roce-with-ipoib-mode", "host_device", "roce", {"ipoib_mode": "connected"}, "gpudirect_rdma_ipoib_mode: IPoIB options do not apply to roce"),
    # Only a non-Mellanox port is bound by totalvfs (test_mellanox_vfs_above_total_vfs_are_a_firmware_change).
    ("num-vfs-above-total-vfs", "sriov_legacy", "roce", {"num_vfs": 32, "nic_interfaces": ["eno8303"], "nic_facts": E810_FACTS},
     "gpudirect_rdma_num_vfs: 32 is more than the 16 VFs eno8303"),
    ("num-vfs-above-128", "sriov_legacy", "roce", {"num_vfs": 129}, "gpudirect_rdma_num_vfs: 129 is out of range 1-128"),
    ("num-vfs-negative", "sriov_legacy", "infiniband", {"num_vfs": -1}, "gpudirect_rdma_num_vfs: -1 is out of range"),
    ("sriov-num-vfs-zero", "sriov_legacy", "roce", {"num_vfs": 0}, "gpudirect_rdma_num_vfs: 0 creates no VFs"),
    ("sriov-num-vfs-missing", "sriov_legacy", "roce", {"num_vfs": None}, "gpudirect_rdma_num_vfs: required for sriov_legacy"),
    ("host-device-with-num-vfs", "host_device", "roce", {"num_vfs": 4}, "gpudirect_rdma_num_vfs: only used by sriov_legacy"),
    ("malformed-range", "shared_device", "roce", {"ipam_range": "192.168.2.0/33"}, "gpudirect_rdma_ipam_range: 192.168.2.0/33 is not a valid CIDR"),
    ("range-without-prefix", "shared_device", "roce", {"ipam_range": "192.168.2.0"}, "gpudirect_rdma_ipam_range: 192.168.2.0 is not a valid CIDR"),
    ("range-overlaps-cluster-network", "shared_device", "roce", {"ipam_range": "10.130.0.0/24"},
     "gpudirect_rdma_ipam_range: 10.130.0.0/24 overlaps the cluster or service network 10.128.0.0/14"),
    ("excludes-overlap", "shared_device", "roce", {"ipam_exclude": ["192.168.3.228/30", "192.168.3.229/32"]},
     "gpudirect_rdma_ipam_exclude: 192.168.3.229/32 overlaps 192.168.3.228/30"),
    ("exclude-outside-range", "shared_device", "roce", {"ipam_exclude": ["192.168.4.0/30"]}, "gpudirect_rdma_ipam_exclude: 192.168.4.0/30 is outside"),
    ("exclude-malformed", "shared_device", "roce", {"ipam_exclude": ["192.168.3.300/32"]}, "gpudirect_rdma_ipam_exclude: 192.168.3.300/32 is not a valid CIDR"),
    ("gateway-outside-range", "shared_device", "roce", {"ipam_gateway": "192.168.9.1"}, "gpudirect_rdma_ipam_gateway: 192.168.9.1 is outside"),
    ("range-start-after-end", "shared_device", "roce", {"ipam_range_start": "192.168.3.238", "ipam_range_end": "192.168.3.230"},
     "gpudirect_rdma_ipam_range_start: 192.168.3.238 is after"),
    ("range-end-outside", "shared_device", "roce", {"ipam_range_end": "192.168.3.250"}, "gpudirect_rdma_ipam_range_end: 192.168.3.250 is outside"),
    ("mtu-on-host-device", "host_device", "roce", {"mtu": 9000},
     "gpudirect_rdma_mtu: host_device over roce renders HostDeviceNetwork objects, which have no MTU field"),
    ("mtu-on-ipoib-network", "shared_device", "infiniband", {"mtu": 2044},
     "gpudirect_rdma_mtu: shared_device over infiniband renders IPoIBNetwork objects, which have no MTU field"),
    ("ipoib-mode-on-ipoib-network", "shared_device", "infiniband", {"ipoib_mode": "connected"},
     "gpudirect_rdma_ipoib_mode: only used by sriov_legacy over infiniband"),
    ("mtu-ipoib-datagram", "sriov_legacy", "infiniband", {"mtu": 9000},
     "gpudirect_rdma_mtu: 9000 is out of range for infiniband (IPoIB datagram mode): 576-4092"),
    ("mtu-ipoib-connected", "sriov_legacy", "infiniband", {"mtu": 65521, "ipoib_mode": "connected"},
     "gpudirect_rdma_mtu: 65521 is out of range for infiniband (IPoIB connected mode)"),
    ("mtu-ethernet", "shared_device", "roce", {"mtu": 9217}, "gpudirect_rdma_mtu: 9217 is out of range for roce: 576-9216"),
    ("rdma-hca-max-zero", "shared_device", "roce", {"rdma_hca_max": 0}, "gpudirect_rdma_rdma_hca_max: must be at least 1"),
    ("empty-nic-selection", "host_device", "roce", {"nic_pci_addresses": []}, "gpudirect_rdma_nic_interfaces: no NIC selected"),
    ("auto-without-facts", "host_device", "roce", {"nic_pci_addresses": [], "nic_selection": "auto"},
     "gpudirect_rdma_nic_facts: required when gpudirect_rdma_nic_selection is auto"),
    ("auto-with-manual-list", "host_device", "roce", {"nic_selection": "auto", "nic_facts": NIC_FACTS},
     "gpudirect_rdma_nic_pci_addresses: conflicts with gpudirect_rdma_nic_selection: auto"),
    ("duplicate-resource-names", "host_device", "roce", {"resource_names": ["hostdev_a", "hostdev_a"], "nic_interfaces": ["ens8f0np0", "ens8f1np1"]},
     "gpudirect_rdma_resource_names: duplicate resource names: hostdev_a"),
    ("resource-name-with-dash", "host_device", "roce", {"resource_name": "host-dev"},
     "gpudirect_rdma_resource_name: 'host-dev' is not a valid device plugin resource name"),
    ("resource-name-leading-underscore", "shared_device", "roce", {"resource_name": "_shared"},
     "gpudirect_rdma_resource_name: '_shared' is not a valid device plugin resource name"),
    ("namespace-not-dns1123", "shared_device", "roce", {"network_namespaces": ["RDMA_Tests"]},
     "gpudirect_rdma_network_namespaces: 'RDMA_Tests' is not a valid namespace name"),
    ("operator-namespace-not-dns1123", "sriov_legacy", "roce", {"sriov_operator_namespace": "-sriov"},
     "gpudirect_rdma_sriov_operator_namespace: '-sriov' is not a valid namespace name"),
    ("network-name-invalid", "shared_device", "roce", {"network_name": "RDMA.net"}, "gpudirect_rdma_network_name: 'RDMA.net' is not a valid network name"),
    ("ipoib-on-ethernet-port", "shared_device", "infiniband", {"nic_interfaces": ["ens8f0np0"], "nic_facts": NIC_FACTS},
     "gpudirect_rdma_nic_interfaces: ens8f0np0 on node worker-0 is an Ethernet port (from nic_facts)"),
    ("roce-on-ib-port", "host_device", "roce", {"nic_pci_addresses": ["0000:0d:00.0"], "nic_interfaces": [], "nic_facts": NIC_FACTS},
     "gpudirect_rdma_nic_pci_addresses: 0000:0d:00.0 on node worker-0 is an InfiniBand port"),
    ("interface-not-in-facts", "host_device", "roce", {"nic_interfaces": ["ens1f0"], "nic_facts": NIC_FACTS},
     "gpudirect_rdma_nic_interfaces: ens1f0 is not a physical port"),
    ("machineconfigs-without-opt-in", "shared_device", "roce", {"machineconfigs": ["crio_memlock"]},
     "gpudirect_rdma_machineconfigs: crio_memlock reboot every node of the worker pool: set gpudirect_rdma_apply_machineconfigs: true"),
    ("udev-rules-without-opt-in", "shared_device", "roce", {"udev_rules": [{"address": "b8:3f:d2:3b:51:29", "name": "ens8f0np0", "link_layer": "Ethernet"}]},
     "gpudirect_rdma_udev_rules: persistent names are a MachineConfig"),
    ("machineconfig-unknown-item", "shared_device", "roce", {"apply_machineconfigs": True, "machineconfigs": ["hugepages"]},
     "gpudirect_rdma_machineconfigs: unknown item 'hugepages'"),
    ("gpu-rdma-mode-unknown", "shared_device", "roce", {"gpu_rdma_mode": "gdrcopy"}, "gpudirect_rdma_gpu_rdma_mode: 'gdrcopy' is not one of dmabuf, peermem"),
    ("peermem-with-inbox-driver", "shared_device", "roce", {"gpu_rdma_mode": "peermem", "nic_driver": "inbox"},
     "gpudirect_rdma_gpu_rdma_mode: peermem needs MLNX/DOCA-OFED"),
    ("host-mofed-with-doca", "shared_device", "roce", {"gpu_rdma_mode": "peermem", "gpu_use_host_mofed": True},
     "gpudirect_rdma_gpu_use_host_mofed: must be false when the Network Operator provides"),
    ("dmabuf-proprietary-modules", "shared_device", "roce", {"gpu_kernel_module_type": "proprietary"},
     "gpudirect_rdma_gpu_kernel_module_type: dmabuf needs the open GPU kernel modules"),
    ("shared-by-pci-address", "shared_device", "roce", {"nic_interfaces": [], "nic_pci_addresses": ["0000:a0:00.0"]},
     "gpudirect_rdma_nic_pci_addresses: the RDMA shared device plugin cannot select by PCI address"),
    ("shared-by-device-id-without-master", "shared_device", "roce", {"nic_interfaces": [], "nic_device_ids": ["101b"]},
     "gpudirect_rdma_macvlan_master: required: shared_device selects by device ID"),
    ("bad-pci-address", "host_device", "roce", {"nic_interfaces": [], "nic_pci_addresses": ["a0:00"]},
     "gpudirect_rdma_nic_pci_addresses: 'a0:00' is not a PCI address"),
    ("bad-device-id", "host_device", "roce", {"nic_interfaces": [], "nic_device_ids": ["cx7"]},
     "gpudirect_rdma_nic_device_ids: 'cx7' is not a 4-digit hex PCI device ID"),
    ("sriov-two-device-ids", "sriov_legacy", "roce", {"nic_interfaces": [], "nic_device_ids": ["101b", "1021"]},
     "gpudirect_rdma_nic_device_ids: SriovNetworkNodePolicy.nicSelector.deviceID takes one ID"),
    ("pool-config-on-shared", "shared_device", "roce", {"sriov_pool_rdma_mode": "exclusive"}, "gpudirect_rdma_sriov_pool_rdma_mode: only used by sriov_legacy"),
    ("pool-rdma-mode-unknown", "sriov_legacy", "roce", {"sriov_pool_rdma_mode": "private"},
     "gpudirect_rdma_sriov_pool_rdma_mode: 'private' is not one of shared, exclusive"),
    ("pool-max-unavailable-bad", "sriov_legacy", "roce", {"sriov_pool_max_unavailable": "half"},
     "gpudirect_rdma_sriov_pool_max_unavailable: must be an integer or a percentage"),
    ("resource-prefix-on-sriov", "sriov_legacy", "roce", {"resource_prefix": "example.com"},
     "gpudirect_rdma_resource_prefix: only used by shared_device and host_device"),
    ("vlan-on-ib", "sriov_legacy", "infiniband", {"vlan": 5}, "gpudirect_rdma_vlan: only used by sriov_legacy over roce"),
    ("vlan-out-of-range", "sriov_legacy", "roce", {"vlan": 5000}, "gpudirect_rdma_vlan: 5000 is out of range 0-4094"),
    ("priority-out-of-range", "sriov_legacy", "roce", {"sriov_policy_priority": 100}, "gpudirect_rdma_sriov_policy_priority: 100 is out of range 0-99"),
    ("node-selector-bad-key", "sriov_legacy", "roce", {"node_selector": {"bad key": "x"}}, "gpudirect_rdma_node_selector: 'bad key' is not a valid label key"),
    ("node-selector-empty", "sriov_legacy", "roce", {"node_selector": {}}, "gpudirect_rdma_node_selector: must select the RDMA nodes"),
    ("ignition-2", "shared_device", "roce", {"apply_machineconfigs": True, "ignition_version": "2.2.0"},
     "gpudirect_rdma_ignition_version: '2.2.0' is not an Ignition 3.x version"),
    ("image-override-unknown", "shared_device", "roce", {"image_overrides": {"multus": {"image": "multus-cni"}}},
     "gpudirect_rdma_image_overrides: unknown component 'multus'"),
    ("doca-settings-with-inbox", "shared_device", "roce", {"nic_driver": "inbox", "doca_driver_version": "25.04"},
     "gpudirect_rdma_doca_driver_version: unused with gpudirect_rdma_nic_driver: inbox"),
    ("non-mellanox-vendor", "host_device", "roce", {"nic_vendor": "8086"}, "gpudirect_rdma_nic_vendor: '8086': only NVIDIA/Mellanox NICs"),
    ("mtu-not-integer", "shared_device", "roce", {"mtu": "jumbo"}, "gpudirect_rdma_mtu: must be an integer, got 'jumbo'"),
    ("bool-not-bool", "shared_device", "roce", {"apply_machineconfigs": "maybe"}, "gpudirect_rdma_apply_machineconfigs: must be a boolean"),
    ("facts-bad-link-layer", "host_device", "roce", {"nic_facts": [dict(NIC_FACTS[1], link_layer="Omni-Path")]},
     "gpudirect_rdma_nic_facts[0].link_layer: 'Omni-Path' is not Ethernet or InfiniBand"),
    ("rails-count-mismatch", "host_device", "roce", {"resource_names": ["rail_a", "rail_b"]},
     "gpudirect_rdma_resource_names: has 2 names for 1 selected ports"),
    ("rail-ranges-overlap", "shared_device", "roce",
     {"nic_interfaces": ["ens8f0np0", "ens8f1np1"], "resource_names": ["rail_a", "rail_b"], "ipam_range": None, "ipam_exclude": [],
      "ipam_gateway": None, "ipam_ranges": ["10.10.0.0/16", "10.10.4.0/24"]},
     "gpudirect_rdma_ipam_ranges: 10.10.4.0/24 overlaps 10.10.0.0/16: two rails would hand out the same addresses"),
    ("rail-ranges-count", "shared_device", "roce",
     {"nic_interfaces": ["ens8f0np0", "ens8f1np1"], "resource_names": ["rail_a", "rail_b"], "ipam_range": None, "ipam_exclude": [],
      "ipam_gateway": None, "ipam_ranges": ["10.10.1.0/24"]},
     "gpudirect_rdma_ipam_ranges: has 1 ranges for 2 rails"),
    ("rail-ranges-with-one-rail", "host_device", "roce", {"ipam_range": None, "ipam_exclude": [], "ipam_gateway": None,
                                                          "ipam_ranges": ["10.10.1.0/24"]},
     "gpudirect_rdma_ipam_ranges: one range per rail, but there is one rail"),
    ("rail-gateway", "shared_device", "roce",
     {"nic_interfaces": ["ens8f0np0", "ens8f1np1"], "resource_names": ["rail_a", "rail_b"], "ipam_gateway": "192.168.3.238"},
     "gpudirect_rdma_ipam_gateway: bounds one range, but the 2 rails get one range each"),
    ("rail-range-too-small", "shared_device", "roce",
     {"nic_interfaces": ["ens8f0np0", "ens8f1np1"], "resource_names": ["rail_a", "rail_b"], "ipam_range": "192.168.3.0/30",
      "ipam_exclude": [], "ipam_gateway": None},
     "gpudirect_rdma_ipam_range: 192.168.3.0/30 is too small to give each of the 2 rails a range of its own"),
    ("network-names-without-rails", "host_device", "roce", {"network_names": ["a", "b"]}, "gpudirect_rdma_network_names: needs gpudirect_rdma_resource_names"),
    ("affinity-unknown-relation", "host_device", "roce", {"nic_interfaces": [], "nic_selection": "auto", "nic_facts": NIC_FACTS,
                                                          "gpu_nic_affinity": [{"node": "worker-0", "gpu": 0, "nic": "0000:a0:00.0", "relation": "NEAR"}]},
     "gpudirect_rdma_gpu_nic_affinity[0].relation: 'NEAR' is not one of"),
]


def test_mellanox_vfs_above_total_vfs_are_a_firmware_change():
    """sriov-network-operator v1.6.0 pkg/vendors/mellanox/mellanox.go HandleTotalVfs: the operator sets the firmware's
    NUM_OF_VFS to numVfs and reboots, so a Mellanox port's sriov_totalvfs is not its limit (128 is)."""
    variables = base_variables("sriov_legacy", "roce")
    variables.update({P + "num_vfs": 32, P + "nic_facts": NIC_FACTS})
    result = render_all(variables)
    assert result["errors"] == [] and result["manifests"]
    assert [w for w in result["warnings"] if w.startswith("gpudirect_rdma_num_vfs: 32 differs from the 16 VFs the firmware of "
                                                          "ens8f0np0 (0000:a0:00.0) on node worker-")]


@pytest.mark.parametrize("case_id,method,fabric,extra,expected", INVALID, ids=[c[0] for c in INVALID])
def test_invalid_combination_is_reported(case_id, method, fabric, extra, expected):
    variables = base_variables(method, fabric)
    for key, value in extra.items():
        if value is None:
            variables.pop(P + key, None)
        else:
            variables[P + key] = value
    result = render_all(variables)
    assert result["manifests"] == []
    assert any(message.startswith(expected) for message in result["errors"]), result["errors"]
    assert all(message.startswith("gpudirect_rdma_") for message in result["errors"]), result["errors"]


def test_table_covers_at_least_twenty_distinct_variables():
    variables = set(expected.split(":")[0].split("[")[0] for _i, _m, _f, _e, expected in INVALID)
    assert len(INVALID) >= 20 and len(variables) >= 20


def test_every_error_is_returned_at_once():
    variables = base_variables("sriov_legacy", "roce", num_vfs=0, ipam_range="10.0.0.0/33", mtu=20000,
                               network_namespaces=["Bad_NS"], gpu_rdma_mode="cuda", machineconfigs=["crio_memlock"])
    errors = errors_of(variables)
    for variable in ("num_vfs", "ipam_range", "mtu", "network_namespaces", "gpu_rdma_mode", "machineconfigs"):
        assert any(e.startswith(P + variable + ":") for e in errors), (variable, errors)


def test_errors_are_reported_even_when_method_is_unknown():
    errors = errors_of({P + "method": "x", P + "fabric": "roce", P + "ipam_range": "192.168.2.0/33"})
    assert "gpudirect_rdma_ipam_range: 192.168.2.0/33 is not a valid CIDR" in errors
    assert any(e.startswith("gpudirect_rdma_method:") for e in errors)


def test_variables_without_prefix_are_rejected():
    errors = errors_of(dict(base_variables("shared_device", "roce"), method="shared_device"))
    assert errors == ["method: not a gpudirect_rdma_* variable"]


def test_defaults_follow_method_and_fabric():
    built, errors, _warnings = model.build(base_variables("host_device", "infiniband"))
    assert errors == []
    assert built["resource_name"] == "hostdev_ib"
    assert built["network_name"] == "hostdev-ib-net"
    assert built["resource_prefix"] == "nvidia.com"
    assert built["machineconfigs"] == []
    assert built["gpu_kernel_module_type"] == "open"
    built, errors, _warnings = model.build(base_variables("shared_device", "roce", gpu_rdma_mode="peermem", apply_machineconfigs=True))
    assert errors == []
    assert built["gpu_kernel_module_type"] == "auto"
    assert built["machineconfigs"] == ["irdma_blacklist"]  # crio_memlock is opt-in (issue 20 point 7)
    assert built["machineconfig_name"] == "99-worker-gpudirect-rdma"


def test_survey_style_strings_are_coerced():
    variables = base_variables("sriov_legacy", "roce", num_vfs="8", nic_interfaces="ens8f0np0, ens8f1np1",
                               apply_machineconfigs="yes", machineconfigs="crio_memlock", ipam_exclude="")
    built, errors, _warnings = model.build(variables)
    assert errors == []
    assert built["num_vfs"] == 8
    assert built["apply_machineconfigs"] is True
    assert built["machineconfigs"] == ["crio_memlock"]
    assert built["ipam_exclude"] == []
    assert built["selection"]["groups"][0]["interfaces"] == ["ens8f0np0", "ens8f1np1"]


def test_validate_accepts_auto_before_facts_exist():
    variables = base_variables("host_device", "roce", nic_selection="auto")
    del variables[P + "nic_pci_addresses"]
    assert validate(variables) == ([], [])
    assert errors_of(variables) == ["gpudirect_rdma_nic_facts: required when gpudirect_rdma_nic_selection is auto (collect NIC facts first)"]


def test_the_memlock_pool_is_known_before_the_facts():
    """Issue 31 point 4: preflight checks the memlock pool with NIC selection auto too, before the facts exist."""
    variables = base_variables("shared_device", "roce", nic_selection="auto")
    variables.pop(P + "nic_interfaces", None)
    assert validate_checks(variables)["memlock_pool"] is None
    variables.update({P + "apply_machineconfigs": True, P + "machineconfigs": ["crio_memlock"]})
    assert validate_checks(variables) == {"errors": [], "warnings": [], "memlock_pool": "gpudirect-rdma"}
    # On the main role's pool the drop-in joins the main MachineConfig: no pool of its own to check.
    assert validate_checks(dict(variables, **{P + "memlock_pool": "worker"}))["memlock_pool"] is None


def test_range_with_host_bits_is_accepted_like_whereabouts():
    assert errors_of(base_variables("host_device", "roce", ipam_range="192.168.3.225/28")) == []


def test_ipv6_range_and_gateway():
    variables = base_variables("host_device", "roce", ipam_range="fd00:10::/64", ipam_exclude=["fd00:10::/126"], ipam_gateway="fd00:10::1")
    assert errors_of(variables) == []
    variables[P + "ipam_gateway"] = "192.168.3.1"
    assert errors_of(variables) == ["gpudirect_rdma_ipam_gateway: 192.168.3.1 is outside gpudirect_rdma_ipam_range fd00:10::/64"]


@pytest.mark.parametrize("pool", ["master", "arbiter"])
def test_machineconfigs_for_the_control_plane_pool_are_refused_unless_allowed(pool):
    variables = base_variables("shared_device", "roce", apply_machineconfigs=True, machineconfigs=["irdma_blacklist"],
                               machineconfig_pool=pool)
    errors = render_all(variables)["errors"]
    assert any(e.startswith("gpudirect_rdma_machineconfig_pool: %r is the control-plane pool" % pool) for e in errors), errors
    allowed = dict(variables, gpudirect_rdma_machineconfig_allow_control_plane=True)
    result = render_all(allowed)
    assert result["errors"] == []
    assert any(m["manifest"]["metadata"]["name"] == "99-%s-gpudirect-rdma" % pool for m in result["manifests"])


def test_the_memlock_pool_is_refused_on_the_control_plane():
    variables = base_variables("shared_device", "roce", apply_machineconfigs=True, machineconfigs=["crio_memlock"], memlock_pool="master")
    errors = render_all(variables)["errors"]
    assert any(e.startswith("gpudirect_rdma_memlock_pool: 'master' is the control-plane pool") for e in errors), errors
    bad = render_all(base_variables("shared_device", "roce", memlock_pool="Not_A_Pool"))["errors"]
    assert bad == ["gpudirect_rdma_memlock_pool: 'Not_A_Pool' is not a valid MachineConfigPool and role name (DNS-1123 label)"]


def test_a_huge_value_is_cut_in_the_message():
    """Issue 18 point 8: a 100 000-character answer is echoed as its first 80 characters and its length."""
    variables = base_variables("shared_device", "roce")
    variables[P + "network_name"] = "n" * 100000
    (message,) = [e for e in render_all(variables)["errors"] if e.startswith("gpudirect_rdma_network_name")]
    assert len(message) < 250 and "...(100002 characters)" in message, message
