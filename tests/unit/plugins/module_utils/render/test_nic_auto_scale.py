# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""NIC selection auto is linear in the number of nodes (issue 38) and renders exactly what the quadratic version did.

The reference below is render/nics.py's _auto_ports and _warn_far_rails as they were before issue 38 (every link
scanned every candidate port, chosen ports were found by list membership). The whole plan is rendered once with the
reference and once with the indexed code, on the rail profiles' facts (full matrix and nearest links) and on hand-made
edge cases, and the two renders must be byte-identical. The cost is counted, not timed: the port fields read per node
stay the same from 20 to 200 nodes (tests/bench/bench_nic_auto.py times the render at 100, 500 and 1000 nodes).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy
import json

import pytest

from ansible_collections.gpudirect.openshift.plugins.module_utils.reports import hardware_facts
from ansible_collections.gpudirect.openshift.plugins.module_utils import names
from ansible_collections.gpudirect.openshift.plugins.module_utils.render import model, nics
from ansible_collections.gpudirect.openshift.plugins.module_utils.render.plan import render_all
from simulator.controllers.facts_pods import profile_facts
from simulator.profiles import load_profile

P = "gpudirect_rdma_"
RAILS = ["rail%d" % index for index in range(8)]


def reference_auto_ports(values, ports, errors, warnings=None):
    """render/nics.py _auto_ports before issue 38 (git 349f1c1^), kept to compare outputs with."""
    fabric = values["fabric"]
    candidates = [p for p in ports if not p["is_vf"] and p["vendor_id"] == names.MELLANOX_VENDOR_ID and p["fabric"] == fabric]
    if not candidates:
        layers = sorted(set(p["fabric"] for p in ports if not p["is_vf"]))
        errors.add("nic_facts", "no NVIDIA/Mellanox %s port found (ports seen: %s)"
                   % ("InfiniBand" if fabric == "infiniband" else "Ethernet", ", ".join(layers) or "none"))
        return []
    affinity = values["gpu_nic_affinity"]
    if not affinity:
        return sorted(candidates, key=lambda p: (p["node"], p["pci_address"]))
    best = {}
    for index, link in enumerate(affinity):
        relation = str(link.get("relation", "")).upper()
        if relation not in nics.AFFINITY_RANK:
            errors.add("gpu_nic_affinity[%d].relation" % index, "%r is not one of %s" % (link.get("relation"), ", ".join(nics.AFFINITY_RANK)))
            continue
        node, nic = link.get("node"), link.get("nic")
        nic_pci = names.normalise_pci_address(str(nic)) if nic is not None else None
        matches = [p for p in candidates if p["node"] == node and (p["pci_address"] == nic_pci or p["netdev"] == nic)]
        if not matches:
            if not any(p["node"] == node and (p["pci_address"] == nic_pci or p["netdev"] == nic) for p in ports):
                errors.add("gpu_nic_affinity[%d].nic" % index, "%r on node %r is not in gpudirect_rdma_nic_facts" % (nic, node))
            continue
        key = (node, str(link.get("gpu")))
        rank = nics.AFFINITY_RANK[relation]
        if key not in best or rank < best[key][0]:
            best[key] = (rank, list(matches))
        elif rank == best[key][0]:
            best[key][1].extend(matches)
    chosen = []
    for key in sorted(best, key=lambda k: (k[0], nics._gpu_sort_key(k[1]))):
        for port in sorted(best[key][1], key=lambda p: p["pci_address"]):
            if port not in chosen:
                chosen.append(port)
    reference_warn_far_rails(affinity, chosen, warnings)
    if not chosen and not errors.messages:
        errors.add("gpu_nic_affinity", "names no %s port of gpudirect_rdma_nic_facts" % fabric)
    return chosen


def reference_warn_far_rails(affinity, chosen, warnings):
    """render/nics.py _warn_far_rails before issue 38 (git 349f1c1^)."""
    if warnings is None:
        return
    for port in chosen:
        ranks = [nics.AFFINITY_RANK.get(str(link.get("relation", "")).upper(), 9) for link in affinity
                 if link.get("node") == port["node"] and names.normalise_pci_address(str(link.get("nic"))) == port["pci_address"]]
        nearest = min(ranks) if ranks else None
        if nearest is None or nearest > nics.AFFINITY_RANK["PXB"]:
            relation = [name for name, rank in nics.AFFINITY_RANK.items() if rank == nearest]
            warnings.append("%s: NIC %s (%s) on node %s is %s to every GPU, not PIX or PXB: GPUDirect RDMA through it "
                            "crosses the CPU's host bridge; check that the NIC sits in a GPU's PCIe switch, or leave it out" % (
                                names.variable("gpu_nic_affinity"), port["netdev"] or port["pci_address"], port["pci_address"],
                                port["node"], relation[0] if relation else "unrelated"))


def renamed(facts, nodes):
    """One node's (ports, links) repeated for each of ``nodes`` (the collector runs once per profile: it builds a
    sysfs tree per node, seconds on a loaded machine)."""
    ports, links = facts
    return ([dict(p, node=node) for node in nodes for p in ports], [dict(link, node=node) for node in nodes for link in links])


@pytest.fixture(scope="module")
def rail_facts():
    """The rail profiles' first worker (8 GPUs, 8 rail NICs PIX to one GPU each, 2 storage NICs) as three nodes."""
    return {"infiniband": renamed(profile_facts(load_profile("rail-ib-lab").workers[:1]), ["rail-ib-%d" % n for n in range(3)]),
            "roce": renamed(profile_facts(load_profile("rail-roce-lab").workers[:1]), ["rail-roce-%d" % n for n in range(3)])}


def variables(method, fabric, ports, affinity, rails=True):
    values = {P + "method": method, P + "fabric": fabric, P + "nic_selection": "auto", P + "nic_facts": ports,
              P + "gpu_nic_affinity": affinity, P + "ipam_range": "192.168.0.0/16"}
    if rails:
        values.update({P + "resource_names": list(RAILS), P + "network_names": list(RAILS)})
    if method == "sriov_legacy":
        values[P + "num_vfs"] = 16
    return values


def rendered(values, monkeypatch=None, reference=False):
    """The whole plan (manifests, summary, errors, warnings) as text, with the current or the reference selection."""
    if reference:
        with monkeypatch.context() as patch:
            patch.setattr(nics, "_auto_ports", reference_auto_ports)
            result = render_all(copy.deepcopy(values))
    else:
        result = render_all(copy.deepcopy(values))
    return json.dumps(result, sort_keys=True, default=repr)


def edge_cases(ports, affinity):
    """Inputs the index must treat as the scan did, on one rail node's facts."""
    node = "rail-roce-0"
    ports = [p for p in ports if p["node"] == node]
    links = [link for link in affinity if link["node"] == node]
    rail = next(p for p in ports if p["rdma_device"] == "mlx5_1")
    storage = next(p for p in ports if p["rdma_device"] == "mlx5_8")
    pix = [link for link in links if link["relation"] == "PIX"]
    cases = {
        "duplicate fact entries (equal ports count once)": (ports + [dict(rail)], links),
        "links naming the netdev": (ports, [dict(link, nic=link["netdev"]) for link in links]),
        "links with upper-case and short PCI addresses": (
            ports, [dict(link, nic=link["nic"].upper()[5:] if index % 2 else link["nic"].upper()) for index, link in enumerate(links)]),
        "a link to an unknown NIC and an unknown node": (ports, links + [dict(pix[0], nic="0000:ff:00.0"), dict(pix[0], node="elsewhere")]),
        "a link with a bad relation and one without NIC": (ports, links + [dict(pix[0], relation="NEAR"), dict(pix[0], nic=None)]),
        "a link without relation and one in lower case": (ports, links + [dict((k, v) for k, v in pix[0].items() if k != "relation"),
                                                                          dict(pix[1], relation="pxb")]),
        "links whose node, NIC or GPU is a list": (ports, links + [dict(pix[0], node=[node]), dict(pix[1], nic=[pix[1]["nic"]]),
                                                                   dict(pix[2], gpu=[2], relation=None)]),
        "two NICs PIX to one GPU (a tie)": (ports, links + [dict(pix[0], nic=storage["pci_address"], netdev=storage["netdev"])]),
        "a storage NIC chosen alone (far from every GPU)": (ports, [link for link in links if link["rdma_device"] == "mlx5_8"]),
        "a port of the other fabric": ([dict(p, link_layer="InfiniBand") if p is rail else p for p in ports], links),
        "no link names a port of the fabric": ([dict(p, link_layer="InfiniBand") for p in ports], links),
        "no affinity at all": (ports, []),
        "rail NICs whose nearest GPU is PXB or PHB": (
            ports, [dict(link, relation={"PIX": "PXB" if index % 2 else "PHB"}.get(link["relation"], "SYS")) for index, link in enumerate(links)]),
        "a VF and another vendor": (ports + [dict(rail, pci_address="0000:1a:00.2", is_vf=True, netdev="vf0"),
                                             dict(storage, pci_address="0000:77:00.0", vendor_id="8086", netdev="eth9")],
                                    links + [dict(pix[1], nic="0000:77:00.0")]),
    }
    return cases


def test_every_configuration_renders_as_the_quadratic_selection_did(rail_facts, monkeypatch):
    compared = 0
    for fabric, (ports, affinity) in sorted(rail_facts.items()):
        nearest = hardware_facts.nearest_links(affinity, ports)
        for method in ("shared_device", "host_device", "sriov_legacy"):
            for links in (affinity, nearest):
                values = variables(method, fabric, ports, links)
                new = rendered(values)
                assert '"errors": []' in new
                assert new == rendered(values, monkeypatch, reference=True)
                compared += 1
    assert compared == 12


def test_edge_cases_render_as_the_quadratic_selection_did(rail_facts, monkeypatch):
    ports, affinity = rail_facts["roce"]
    outcomes = set()
    for name, (case_ports, case_links) in edge_cases(ports, affinity).items():
        for rails in (True, False):
            values = variables("host_device", "roce", case_ports, case_links, rails=rails)
            new = rendered(values)
            assert new == rendered(values, monkeypatch, reference=True), name
            outcomes.add((json.loads(new)["errors"] == [], bool(json.loads(new)["warnings"])))
    # the cases reach the error and the warning paths, and clean renders
    assert {(True, False), (False, False)} <= outcomes and any(warned for _clean, warned in outcomes)


def test_selection_and_warnings_equal_the_reference_directly(rail_facts):
    """_auto_ports itself (chosen ports, errors, warnings in order) on every edge case, with and without warnings."""
    ports, affinity = rail_facts["roce"]
    for name, (case_ports, case_links) in edge_cases(ports, affinity).items():
        results = []
        for select in (nics._auto_ports, reference_auto_ports):
            errors, warnings = model.Errors(), []
            normalised = nics.normalise_facts(case_ports, errors)
            chosen = select({"fabric": "roce", "gpu_nic_affinity": case_links}, normalised, errors, warnings)
            results.append((chosen, errors.messages, warnings))
        assert results[0] == results[1], name


class CountingPort(dict):
    """A port that counts the fields read from it (every comparison of the selection reads one)."""
    reads = 0

    def __getitem__(self, key):
        CountingPort.reads += 1
        return dict.__getitem__(self, key)


def field_reads(nodes, ports, affinity, select):
    """Port fields read by ``select`` over ``nodes`` copies of one rail node (8 GPUs, 10 NICs, full matrix)."""
    one = [p for p in ports if p["node"] == "rail-roce-0"]
    links = [link for link in affinity if link["node"] == "rail-roce-0"]
    errors = model.Errors()
    facts = [dict(p, node="n-%04d" % n) for n in range(nodes) for p in one]
    normalised = [CountingPort(p) for p in nics.normalise_facts(facts, errors)]
    every_link = [dict(link, node="n-%04d" % n) for n in range(nodes) for link in links]
    CountingPort.reads = 0
    chosen = select({"fabric": "roce", "gpu_nic_affinity": every_link}, normalised, errors, [])
    assert len(chosen) == 8 * nodes and errors.messages == []
    return CountingPort.reads


def test_the_selection_reads_the_same_port_fields_per_node_at_20_and_200_nodes(rail_facts):
    ports, affinity = rail_facts["roce"]
    per_node = [field_reads(nodes, ports, affinity, nics._auto_ports) / float(nodes) for nodes in (20, 200)]
    assert per_node[0] == per_node[1]
    # the reference grows with the number of nodes: what the count above would catch
    quadratic = [field_reads(nodes, ports, affinity, reference_auto_ports) / float(nodes) for nodes in (5, 20)]
    assert quadratic[1] > 3 * quadratic[0]
