"""The NIC variables against what the SR-IOV config daemons report (render/reported.py), with the VF limits of
sriov-network-operator v1.6.0: Mellanox up to 128 whatever the NIC reports (the operator rewrites NUM_OF_VFS and
reboots), other vendors up to totalvfs (pkg/webhook/validate.go)."""

import pytest

from ansible_collections.gpudirect.openshift.plugins.filter.nic_checks import reported_nic_problems_filter
from ansible_collections.gpudirect.openshift.plugins.module_utils.render.reported import facts_as_reports, reported_nic_problems

ROCE = {"name": "ens8f0np0", "pciAddress": "0000:a0:00.0", "vendor": "15b3", "linkType": "ETH", "totalvfs": 16}
IB = {"name": "ibs2f0", "pciAddress": "0000:b0:00.0", "vendor": "15b3", "linkType": "IB", "totalvfs": 16}
E810 = {"name": "eno8303", "pciAddress": "0000:4b:00.0", "vendor": "8086", "linkType": "ETH", "totalvfs": 64}


def state(node, *interfaces):
    return {"metadata": {"name": node}, "status": {"interfaces": list(interfaces)}}


def summary(method="sriov_legacy", fabric="roce", interfaces=(), pci_addresses=()):
    return {"method": method, "fabric": fabric,
            "nic_selection": {"groups": [{"interfaces": list(interfaces), "pci_addresses": list(pci_addresses)}]}}


def test_nothing_is_checked_before_a_daemon_reported():
    assert reported_nic_problems(summary(interfaces=["eth99"]), [state("a")], 8) == {"errors": [], "warnings": []}


def test_an_interface_or_address_no_node_reports_is_an_error_naming_the_variable():
    found = reported_nic_problems(summary(interfaces=["eth99"], pci_addresses=["0000:ff:00.0"]), [state("a", ROCE, IB)], 8)
    assert found["errors"] == [
        "gpudirect_rdma_nic_interfaces: eth99 is not an interface of any node (the SR-IOV operator reports ens8f0np0, "
        "ibs2f0); give one of those names, or PCI addresses in gpudirect_rdma_nic_pci_addresses.",
        "gpudirect_rdma_nic_pci_addresses: 0000:ff:00.0 is not a NIC of any node (the SR-IOV operator reports "
        "0000:a0:00.0, 0000:b0:00.0); give one of those addresses."]


def test_a_port_of_the_other_fabric_is_an_error():
    found = reported_nic_problems(summary(method="shared_device", fabric="infiniband", interfaces=["ens8f0np0"]),
                                  [{"node": "a", "interfaces": [ROCE]}])
    assert found["errors"] == ["gpudirect_rdma_fabric: infiniband, but ens8f0np0 (0000:a0:00.0) on a is an Ethernet port "
                               "(linkType ETH); set the fabric that port runs, or select a port of the infiniband fabric."]


def test_mellanox_vfs_above_totalvfs_are_a_firmware_change_not_an_error():
    found = reported_nic_problems(summary(interfaces=["ens8f0np0"]), [state("a", ROCE), state("b", ROCE)], 64)
    assert found["errors"] == []
    assert found["warnings"] == ["gpudirect_rdma_num_vfs: 64 differs from the 16 VFs the firmware of ens8f0np0 "
                                 "(0000:a0:00.0) on %s enables (NUM_OF_VFS); the SR-IOV operator rewrites the firmware and "
                                 "reboots the node." % node for node in ("a", "b")]
    settled = dict(ROCE, totalvfs=64)
    assert reported_nic_problems(summary(interfaces=["ens8f0np0"]), [state("a", settled)], 64) == {"errors": [], "warnings": []}


def test_vf_limits_per_vendor():
    assert "more than the 128 VFs the SR-IOV operator allows" in \
        reported_nic_problems(summary(interfaces=["ens8f0np0"]), [state("a", ROCE)], 200)["errors"][0]
    assert reported_nic_problems(summary(interfaces=["eno8303"]), [state("a", E810)], 100)["errors"] == [
        "gpudirect_rdma_num_vfs: 100 is more than the 64 VFs eno8303 (0000:4b:00.0) on a supports (totalvfs); give at most 64."]
    assert reported_nic_problems(summary(interfaces=["eno8303"]), [state("a", E810)], 64)["errors"] == []
    # VF counts matter only for the SR-IOV legacy method.
    assert reported_nic_problems(summary(method="host_device", interfaces=["eno8303"]), [state("a", E810)], 100)["errors"] == []


def test_a_second_fabric_port_is_checked_against_its_own_fabric_and_named_by_its_key():
    groups = [{"interfaces": ["ens8f0np0"], "fabric": "roce"},
              {"interfaces": ["ens8f0np0", "ib9"], "fabric": "infiniband", "variable": "gpudirect_rdma_second_fabric"}]
    found = reported_nic_problems({"method": "shared_device", "fabric": "roce", "nic_selection": {"groups": groups}},
                                  [state("a", ROCE, IB)])
    assert found["errors"] == [
        "gpudirect_rdma_second_fabric.nic_interfaces: ib9 is not an interface of any node (the SR-IOV operator reports "
        "ens8f0np0, ibs2f0); give one of those names.",
        "gpudirect_rdma_second_fabric: ports of the infiniband fabric, but ens8f0np0 (0000:a0:00.0) on a is an Ethernet "
        "port (linkType ETH); set the fabric that port runs, or select a port of the infiniband fabric."]


# The hardware_facts role's port facts (module_utils/reports/hardware_facts.py nic_ports keys) of one node: a RoCE PF, an InfiniBand
# PF and a VF of the RoCE PF, as the collector reads them from sysfs.
PORT_FACTS = [
    {"node": "a", "pci_address": "0000:a0:00.0", "vendor_id": "15b3", "netdev": "ens8f0np0", "link_layer": "Ethernet",
     "total_vfs": 16, "is_vf": False},
    {"node": "a", "pci_address": "0000:b0:00.0", "vendor_id": "15b3", "netdev": "ibs2f0", "link_layer": "InfiniBand",
     "total_vfs": 16, "is_vf": False},
    {"node": "a", "pci_address": "0000:a0:00.2", "vendor_id": "15b3", "netdev": "ens8f0v0", "link_layer": "Ethernet",
     "is_vf": True},
]


def test_port_facts_read_as_the_node_states_of_a_first_install():
    """Issue 31 point 3: before the SR-IOV operator runs, the collector's port facts stand in for the node states."""
    assert facts_as_reports(PORT_FACTS) == [{"node": "a", "interfaces": [
        {"name": "ens8f0np0", "pciAddress": "0000:a0:00.0", "linkType": "ETH", "vendor": "15b3", "totalvfs": 16},
        {"name": "ibs2f0", "pciAddress": "0000:b0:00.0", "linkType": "IB", "vendor": "15b3", "totalvfs": 16}]}]


def test_a_wrong_nic_name_is_named_from_the_hardware_facts():
    found = reported_nic_problems_filter(summary(method="shared_device", interfaces=["ens9f0np0"]), PORT_FACTS, from_facts=True)
    assert found["errors"] == [
        "gpudirect_rdma_nic_interfaces: ens9f0np0 is not an interface of any node (the hardware facts show the NVIDIA NIC "
        "ports ens8f0np0, ibs2f0); give one of those names, or PCI addresses in gpudirect_rdma_nic_pci_addresses."]


@pytest.mark.parametrize("method", ["shared_device", "host_device", "sriov_legacy"])
def test_the_link_layer_check_covers_every_method_on_the_hardware_facts(method):
    """Held-out input of issue 31: an InfiniBand fabric on an Ethernet port is refused for every method, not only SR-IOV."""
    found = reported_nic_problems_filter(summary(method=method, fabric="infiniband", interfaces=["ens8f0np0"]), PORT_FACTS,
                                         8, from_facts=True)
    assert found["errors"] == ["gpudirect_rdma_fabric: infiniband, but ens8f0np0 (0000:a0:00.0) on a is an Ethernet port "
                               "(linkType ETH); set the fabric that port runs, or select a port of the infiniband fabric."]
    by_address = reported_nic_problems_filter(summary(method=method, fabric="roce", pci_addresses=["0000:b0:00.0"]), PORT_FACTS,
                                              8, from_facts=True)
    assert [e.split(",")[0] for e in by_address["errors"]] == ["gpudirect_rdma_fabric: roce"]
    assert reported_nic_problems_filter(summary(method=method, fabric="roce", interfaces=["ens8f0np0"]), PORT_FACTS, 8,
                                        from_facts=True)["errors"] == []
