# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared inputs for the renderer tests: the six configurations and CRD schema access."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy

import pytest

from ansible_collections.gpudirect.openshift.tests.configurations import METHOD_FABRICS
from simulator.crds import load_crd_documents

P = "gpudirect_rdma_"

# Two workers as in the chapter's lab: one InfiniBand and one Ethernet port per node.
NIC_FACTS = [
    {"node": "worker-0", "pci_address": "0000:0d:00.0", "vendor_id": "15b3", "device_id": "a2dc", "netdev": "ibs2f0",
     "rdma_device": "mlx5_0", "link_layer": "InfiniBand", "total_vfs": 16, "numa_node": 0,
     "address": "00:00:10:29:fe:80:00:00:00:00:00:00:b8:3f:d2:03:00:3b:51:28"},
    {"node": "worker-0", "pci_address": "0000:a0:00.0", "vendor_id": "15b3", "device_id": "a2dc", "netdev": "ens8f0np0",
     "rdma_device": "mlx5_1", "link_layer": "Ethernet", "total_vfs": 16, "numa_node": 1, "address": "b8:3f:d2:3b:51:29"},
    {"node": "worker-1", "pci_address": "0000:0d:00.0", "vendor_id": "15b3", "device_id": "a2dc", "netdev": "ibs2f0",
     "rdma_device": "mlx5_0", "link_layer": "InfiniBand", "total_vfs": 16, "numa_node": 0,
     "address": "00:00:10:29:fe:80:00:00:00:00:00:00:b8:3f:d2:03:00:f0:36:d0"},
    {"node": "worker-1", "pci_address": "0000:a0:00.0", "vendor_id": "15b3", "device_id": "a2dc", "netdev": "ens8f0np0",
     "rdma_device": "mlx5_1", "link_layer": "Ethernet", "total_vfs": 16, "numa_node": 1, "address": "b8:3f:d2:f0:36:d1"},
]

INTERFACE = {"roce": "ens8f0np0", "infiniband": "ibs2f0"}
# Host device selects PFs by PCI address (the SR-IOV device plugin knows PF names only for VFs).
PCI_ADDRESS = {"roce": "0000:a0:00.0", "infiniband": "0000:0d:00.0"}


def base_variables(method, fabric, **extra):
    variables = {
        P + "method": method,
        P + "fabric": fabric,
        P + "ipam_range": "192.168.3.225/28",
        P + "ipam_exclude": ["192.168.3.229/30", "192.168.3.236/32"],
    }
    if method == "host_device":
        variables[P + "nic_pci_addresses"] = [PCI_ADDRESS.get(fabric, "0000:a0:00.0")]
    else:
        variables[P + "nic_interfaces"] = [INTERFACE.get(fabric, "ens8f0np0")]
    if method == "sriov_legacy":
        variables[P + "num_vfs"] = 8
    variables.update(dict((P + key, value) for key, value in extra.items()))
    return variables


def variants():
    """Every configuration plainly, and with the optional parts turned on."""
    cases = []
    for method, fabric in METHOD_FABRICS:
        cases.append(("%s-%s" % (method, fabric), base_variables(method, fabric)))
        full = base_variables(method, fabric, apply_machineconfigs=True,
                              machineconfigs=["irdma_blacklist", "persistent_names", "crio_memlock"],
                              nic_facts=copy.deepcopy(NIC_FACTS), udev_rules_from_facts=True, network_namespaces=["default", "rdma-tests"],
                              ipam_gateway="192.168.3.238", nfd_operand_image="registry.redhat.io/openshift4/ose-node-feature-discovery:v4.19",
                              gpu_rdma_mode="peermem", gpu_gdrcopy=True, sriov_disable_plugins=["mellanox"])
        if method == "sriov_legacy":
            full.update({P + "sriov_pool_rdma_mode": "exclusive", P + "sriov_pool_max_unavailable": "10%", P + "mtu": 4000 if fabric == "roce" else 2044})
            if fabric == "roce":
                full[P + "vlan"] = 12
        if method == "shared_device" and fabric == "roce":
            full.update({P + "mtu": 9000, P + "macvlan_mode": "private"})
        cases.append(("%s-%s-full" % (method, fabric), full))
        auto = base_variables(method, fabric, nic_selection="auto", nic_facts=copy.deepcopy(NIC_FACTS), nic_driver="inbox")
        auto.pop(P + "nic_interfaces", None)
        auto.pop(P + "nic_pci_addresses", None)
        cases.append(("%s-%s-auto-inbox" % (method, fabric), auto))
    for fabric, other in (("roce", "infiniband"), ("infiniband", "roce")):
        # shared_device with gpudirect_rdma_second_fabric: both fabrics from one NicClusterPolicy
        cases.append(("shared_device-%s-and-%s" % (fabric, other), base_variables(
            "shared_device", fabric, second_fabric={"nic_interfaces": [INTERFACE[other]], "ipam_range": "192.168.9.0/24"})))
    return cases


@pytest.fixture(scope="session")
def crd_schemas(crd_dir):
    """{(group, version, kind): (scope, openAPIV3Schema)} of the CRDs the simulator serves by default."""
    schemas = {}
    for _path, crd in load_crd_documents(crd_dir):
        for version in crd["spec"]["versions"]:
            key = (crd["spec"]["group"], version["name"], crd["spec"]["names"]["kind"])
            schemas[key] = (crd["spec"]["scope"], version["schema"]["openAPIV3Schema"])
    return schemas
