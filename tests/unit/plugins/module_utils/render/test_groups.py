# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Node groups (gpudirect_rdma_node_groups): each group rendered by the one renderer, merged, and refused with one
message naming the variable when two groups would share nodes, names, ports, ranges or an operator singleton."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy
import json

from ansible_collections.gpudirect.openshift.plugins.module_utils.render import groups
from ansible_collections.gpudirect.openshift.plugins.module_utils.render.plan import render_all
from ansible_collections.gpudirect.openshift.plugins.module_utils.render.waits import rdma_wait_sets

LABEL = "example.com/rdma-group"
IB = {"name": "ib", "node_selector": {LABEL: "ib"}, "nic_interfaces": ["ibs2f0"], "ipam_range": "192.168.0.0/24"}
ROCE = {"name": "roce", "node_selector": {LABEL: "roce"}, "fabric": "roce", "nic_interfaces": ["ens8f0np0"], "ipam_range": "192.168.1.0/24"}
BASE = {"gpudirect_rdma_method": "shared_device", "gpudirect_rdma_fabric": "infiniband"}


def variables(*items, **shared):
    out = dict(BASE, gpudirect_rdma_node_groups=[copy.deepcopy(item) for item in items])
    out.update(("gpudirect_rdma_" + key, value) for key, value in shared.items())
    return out


def kinds(plan, kind):
    return [e["manifest"] for e in plan["manifests"] if e["manifest"]["kind"] == kind]


def test_without_groups_the_variables_are_the_one_implicit_group():
    single = dict(BASE, gpudirect_rdma_nic_interfaces=["ibs2f0"], gpudirect_rdma_ipam_range="192.168.0.0/24")
    plan = render_all(single)
    assert plan["errors"] == [] and "node_groups" not in plan["summary"]
    assert [n["metadata"]["name"] for n in kinds(plan, "IPoIBNetwork")] == ["rdmashared-ib-net"]


def test_two_groups_share_the_nic_cluster_policy_with_names_that_cannot_collide():
    plan = render_all(variables(IB, ROCE))
    assert plan["errors"] == []
    config = json.loads(kinds(plan, "NicClusterPolicy")[0]["spec"]["rdmaSharedDevicePlugin"]["config"])["configList"]
    assert [(c["resourceName"], c["selectors"]) for c in config] == [
        ("rdma_shared_device_ib_ib", {"ifNames": ["ibs2f0"]}), ("rdma_shared_device_eth_roce", {"ifNames": ["ens8f0np0"]})]
    assert [n["metadata"]["name"] for n in kinds(plan, "IPoIBNetwork") + kinds(plan, "MacvlanNetwork")] == [
        "rdmashared-ib-net-ib", "rdmashared-net-roce"]
    assert len(kinds(plan, "NicClusterPolicy")) == 1 and "ipoib" in kinds(plan, "NicClusterPolicy")[0]["spec"]["secondaryNetwork"]
    waits = [w for w in rdma_wait_sets(plan)["configuration"] if w["kind"] == "Node"]
    assert [(w["title"], w["label_selectors"]) for w in waits] == [
        ("rdma/rdma_shared_device_ib_ib allocatable", [LABEL + "=ib"]), ("rdma/rdma_shared_device_eth_roce allocatable", [LABEL + "=roce"])]


def test_the_shared_node_selector_is_unused_with_groups():
    plan = render_all(variables(IB, ROCE, node_selector={LABEL: "any"}))
    assert plan["errors"] == [] and plan["warnings"] == [
        "gpudirect_rdma_node_selector is not used with gpudirect_rdma_node_groups: each group's node_selector picks its nodes"]


def test_each_group_has_its_own_machineconfig_pool():
    plan = render_all(variables(dict(IB, machineconfig_pool="rdma-ib"), dict(ROCE, machineconfig_pool="rdma-roce"),
                                apply_machineconfigs=True))
    assert plan["errors"] == []
    assert [m["metadata"]["name"] for m in kinds(plan, "MachineConfig")] == ["99-rdma-ib-gpudirect-rdma", "99-rdma-roce-gpudirect-rdma"]
    pools = [w["name"] for w in rdma_wait_sets(plan)["machineconfig"]]
    assert pools == ["rdma-ib", "rdma-roce"]


def test_an_sriov_group_gets_a_policy_with_its_node_selector_and_the_config_daemons():
    sriov = dict(ROCE, method="sriov_legacy", num_vfs=4)
    plan = render_all(variables(IB, sriov))
    assert plan["errors"] == []
    assert [p["spec"]["nodeSelector"] for p in kinds(plan, "SriovNetworkNodePolicy")] == [{LABEL: "roce"}]
    assert kinds(plan, "SriovOperatorConfig")[0]["spec"]["configDaemonNodeSelector"][LABEL] == "roce"
    assert plan["summary"]["sriov_daemon_group"] == "roce"


def refused(plan, variable):
    assert plan["manifests"] == [] and any(e.startswith(variable) for e in plan["errors"]), plan["errors"]
    return plan["errors"]


def test_bad_groups_are_refused_naming_the_variable():
    refused(render_all(variables(IB, dict(ROCE, name="ib"))), "gpudirect_rdma_node_groups: two groups are named ib")
    refused(render_all(variables(IB, dict(ROCE, node_selector={LABEL: "ib"}))), "gpudirect_rdma_node_groups[roce].node_selector")
    refused(render_all(variables(IB, dict(ROCE, ipam_range="192.168.0.128/25"))), "gpudirect_rdma_node_groups[roce].ipam_range")
    refused(render_all(variables(IB, dict(ROCE, node_selector=None))), "gpudirect_rdma_node_groups[roce].node_selector")
    refused(render_all(variables(IB, dict(ROCE, nic_driver="inbox"))), "gpudirect_rdma_node_groups: group roce: unknown key nic_driver")
    refused(render_all(variables(IB, dict(ROCE, mtu=99999))), "gpudirect_rdma_node_groups[roce].mtu")
    refused(render_all(variables(IB, dict(ROCE, network_name="rdmashared-ib-net-ib"))), "gpudirect_rdma_node_groups[roce].network_name")
    refused(render_all(variables(IB, ROCE, nic_selection="auto")), "gpudirect_rdma_node_groups: group ib: gpudirect_rdma_nic_selection auto")


def test_groups_the_operators_cannot_tell_apart_are_refused():
    # One device-plugin config on every NIC node: the same port names in two groups would feed both resources.
    refused(render_all(variables(IB, dict(ROCE, fabric="infiniband", nic_interfaces=["ibs2f0"]))),
            "gpudirect_rdma_node_groups[roce].nic_interfaces")
    host = dict(ROCE, method="host_device", nic_interfaces=[], nic_pci_addresses=["0000:a0:00.0"])
    refused(render_all(variables(IB, host)), "gpudirect_rdma_node_groups[roce].method")
    sriov = dict(method="sriov_legacy", num_vfs=4)
    refused(render_all(variables(dict(IB, fabric="roce", nic_interfaces=["ens1f0np0"], **sriov), dict(ROCE, **sriov))),
            "gpudirect_rdma_node_groups[roce].method")


def test_node_group_problems_name_the_group_and_the_node():
    summary = render_all(variables(IB, ROCE))["summary"]
    ib, roce = summary["node_groups"]
    node = "worker-0"
    assert groups.node_group_problems(summary, [{"item": ib, "nodes": [node]}, {"item": roce, "nodes": [node]}]) == [
        "gpudirect_rdma_node_groups[roce].node_selector: node worker-0 is also selected by group ib, and a node belongs to one "
        "group only; give each group a node_selector with a label the other group's nodes do not carry"]
    problems = groups.node_group_problems(summary, [{"item": ib, "nodes": [node]}, {"item": roce, "nodes": []}])
    assert len(problems) == 1 and problems[0].startswith("gpudirect_rdma_node_groups[roce].node_selector: %s=roce selects no node" % LABEL)


def test_reported_nics_are_checked_only_for_the_group_the_sriov_config_daemons_serve():
    from ansible_collections.gpudirect.openshift.plugins.module_utils.render.reported import reported_nic_problems

    summary = render_all(variables(IB, dict(ROCE, method="sriov_legacy", num_vfs=32)))["summary"]
    states = [{"node": "roce-0", "interfaces": [{"name": "ens8f0np0", "pciAddress": "0000:a0:00.0", "vendor": "8086", "linkType": "ETH",
                                                 "totalvfs": 16}]}]
    problems = reported_nic_problems(summary, states)
    # ibs2f0 of the ib group is on nodes without config daemons: not reported, not an error; the roce group's VF count is.
    assert [p.split(":")[0] for p in problems["errors"]] == ["gpudirect_rdma_node_groups[roce].num_vfs"], problems
