"""Issue 34 (MEDIUM, point 5): with the opt-in gpudirect_rdma_udev_rules_from_facts, one node's facts naming another
NIC's MAC made site.yml rename that MAC on every node of the pool, rc 0, no warning. Facts come from pods on the nodes,
so a MAC that two nodes claim is refused, and so is one that the SR-IOV node states (a second source) do not report
for that node and PCI address."""

import copy

from ansible_collections.gpudirect.openshift.plugins.module_utils.render.plan import render_all
from ansible_collections.gpudirect.openshift.plugins.module_utils.render.reported import reported_nic_problems
from ansible_collections.gpudirect.openshift.tests.unit.plugins.module_utils.render.conftest import NIC_FACTS, base_variables


def variables(facts):
    return base_variables("shared_device", "roce", apply_machineconfigs=True, nic_facts=facts,
                          machineconfigs=["persistent_names"], udev_rules_from_facts=True)


def test_a_mac_that_two_nodes_report_is_refused_naming_both():
    facts = copy.deepcopy(NIC_FACTS)
    facts[3]["address"] = facts[1]["address"]  # worker-1 claims worker-0's Ethernet MAC
    result = render_all(variables(facts))
    assert result["manifests"] == []
    assert any("udev_rules_from_facts" in e and "b8:3f:d2:3b:51:29 is reported by nodes worker-0 and worker-1" in e
               for e in result["errors"]), result["errors"]


def node_state(node, interfaces):
    return {"metadata": {"name": node}, "status": {"interfaces": interfaces}}


def test_a_mac_the_sriov_daemon_does_not_report_there_is_refused_naming_the_node():
    result = render_all(variables(copy.deepcopy(NIC_FACTS)))
    assert not result["errors"], result["errors"]
    summary = result["summary"]
    assert {p["node"] for p in summary["udev_from_facts"]} == {"worker-0", "worker-1"}
    honest = [node_state("worker-0", [{"name": "ens8f0np0", "pciAddress": "0000:a0:00.0", "mac": "B8:3F:D2:3B:51:29", "linkType": "ETH"},
                                      {"name": "ibs2f0", "pciAddress": "0000:0d:00.0", "linkType": "IB",
                                       "mac": "00:00:10:29:fe:80:00:00:00:00:00:00:b8:3f:d2:03:00:3b:51:28"}])]
    assert reported_nic_problems(summary, honest)["errors"] == []
    lying = [node_state("worker-1", [{"name": "ens8f0np0", "pciAddress": "0000:a0:00.0", "mac": "b8:3f:d2:00:00:01",
                                      "linkType": "ETH"}])]
    errors = reported_nic_problems(summary, lying)["errors"]
    assert any(e.startswith("gpudirect_rdma_udev_rules_from_facts: node worker-1's facts give b8:3f:d2:f0:36:d1")
               and "reports b8:3f:d2:00:00:01 there" in e for e in errors), errors
    assert any("node worker-1" in e and "0000:0d:00.0" in e and "no such port" in e for e in errors), errors


def test_no_rules_from_facts_means_nothing_to_compare():
    result = render_all(base_variables("shared_device", "roce"))
    assert result["summary"]["udev_from_facts"] == []
