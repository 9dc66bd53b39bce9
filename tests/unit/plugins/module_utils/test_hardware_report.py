# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Unit tests of the inventory: flattening into the RDMA input model's shapes and the Markdown/HTML reports."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpudirect.openshift.plugins.module_utils.reports import hardware_facts, hardware_report
from ansible_collections.gpudirect.openshift.plugins.module_utils.hardware import collector
from ansible_collections.gpudirect.openshift.plugins.module_utils.render import plan
from ansible_collections.gpudirect.openshift.tests.unit.fixtures import synthetic_sysfs as synth


def node_facts(tmp_path, vfs=1):
    builder = synth.build_gpu_nic_node(tmp_path, gpus=2, nics=2, vfs_per_pf=vfs)
    proc = synth.ProcBuilder(tmp_path, modules=["mlx5_core", "ib_uverbs", "nvidia", "nvidia_peermem"], osrelease="5.14.0")
    return collector.collect(builder.root, proc.root)


def test_nic_ports_have_the_input_model_keys(tmp_path):
    facts = node_facts(tmp_path)
    ports = hardware_facts.nic_ports("gpu-0", facts)
    pfs = [p for p in ports if not p["is_vf"]]
    vfs = [p for p in ports if p["is_vf"]]
    assert len(pfs) == 4 and len(vfs) == 4
    first = pfs[0]
    assert first["node"] == "gpu-0" and first["vendor_id"] == "15b3" and first["device_id"] == "1021"
    assert first["link_layer"] == "InfiniBand" and first["netdev"] == "ibp20s0f0" and first["rdma_device"] == "mlx5_0"
    assert first["total_vfs"] == 16 and first["type"] == 32 and first["address"] and first["state"] == "ACTIVE"
    assert all(v["pf_pci_address"] in [p["pci_address"] for p in pfs] for v in vfs)


def test_nic_without_rdma_device_uses_netdev_type():
    facts = {"nics": [{"pci_address": "0000:01:00.0", "vendor_id": "0x15b3", "device_id": "0x1017", "function": "PF", "ports": [],
                       "netdevs": [{"name": "eth0", "type": 1, "address": "aa:bb:cc:dd:ee:ff"}, {"name": "odd", "type": 772}]}]}
    ports = hardware_facts.nic_ports("n", facts)
    assert [(p["netdev"], p["link_layer"], p["rdma_device"]) for p in ports] == [("eth0", "Ethernet", None)]


def test_affinity_lists_pf_pairs_only(tmp_path):
    links = hardware_facts.gpu_nic_affinity("gpu-0", node_facts(tmp_path))
    assert len(links) == 2 * 4  # 2 GPUs x 4 PFs, no VF
    assert set(l["relation"] for l in links) <= set(hardware_facts.RELATIONS)
    assert {"node", "gpu", "nic", "relation"} <= set(links[0])
    assert [l["relation"] for l in links if l["gpu"] == 0][:2] == ["PIX", "PIX"]


def test_flattened_ports_render_with_nic_selection_auto(tmp_path):
    ports, links, readiness = hardware_facts.flatten({"gpu-0": node_facts(tmp_path / "a"), "gpu-1": node_facts(tmp_path / "b")})
    assert readiness["gpu-0"]["ready"] is True and readiness["gpu-0"]["link_layers"] == ["InfiniBand"]
    result = plan.render_all({
        "gpudirect_rdma_method": "sriov_legacy", "gpudirect_rdma_fabric": "infiniband", "gpudirect_rdma_num_vfs": 8,
        "gpudirect_rdma_ipam_range": "192.168.10.0/24", "gpudirect_rdma_nic_selection": "auto",
        "gpudirect_rdma_nic_facts": ports, "gpudirect_rdma_gpu_nic_affinity": links})
    assert result["errors"] == []
    chosen = result["summary"]["nics"] if "nics" in result["summary"] else result["summary"]
    assert "0000:14:00.0" in repr(chosen)


def test_reports(tmp_path):
    facts = node_facts(tmp_path)
    failed = [{"node": "gpu-9", "error": "pod failed: exit code 1"}]
    markdown = hardware_report.render_markdown({"gpu-0": facts}, title="lab", failed=failed)
    assert markdown.startswith("# lab\n") and "| gpu-0 | yes | 2 | 4 | InfiniBand | nvidia_peermem |" in markdown
    assert "| GPU0 | PIX | PIX | SYS | SYS |" in markdown
    assert "**gpu-9: no facts** - pod failed: exit code 1" in markdown
    html = hardware_report.render_html({"gpu-0": facts, "<x>": {}}, title="lab <1>", failed=failed)
    assert html.startswith("<!DOCTYPE html>") and "<title>lab &lt;1&gt;</title>" in html and "&lt;x&gt;" in html
    assert '<td class="rel-PIX">PIX</td>' in html and '<td class="rel-SYS">SYS</td>' in html
    assert not re.search(r"(src|href)=", html) and "<script" not in html  # self-contained


def test_report_names_a_sysfs_only_gpu_and_gives_its_memory_from_the_node_label(tmp_path):
    # The simulated A40 node (no nvidia-smi): the report showed the model as "0x2235" and the memory as "-".
    from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster import node_facts as nf
    from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster import facts_nodes
    tree = synth.SysfsBuilder(tmp_path)
    for bus in ("18", "1a"):
        tree.add_pci(["pci0000:%s" % bus, "0000:%s:00.0" % bus], synth.NVIDIA, "0x2235", synth.CLASS_3D, driver="nvidia")
    facts = collector.collect(tree.root, synth.ProcBuilder(tmp_path, modules=("nvidia",)).root)
    facts_nodes.fill_from_node_labels(facts, {"nvidia.com/gpu.memory": "46068", "nvidia.com/gpu.product": "NVIDIA-A40"})
    rows = [line for line in hardware_report.render_markdown({"gpu-0": facts}, title="lab").splitlines() if "0000:18:00.0" in line]
    assert rows == ["| 0 | 0000:18:00.0 | NVIDIA A40 | - | nvidia | 46068 |"]
    assert facts["gpus"][0]["memory_source"] == "node label nvidia.com/gpu.memory"


def test_nearest_links_keep_what_nic_selection_reads():
    """Per GPU the nearest NIC of each link layer and vendor: auto NIC selection renders the same from them as from the
    whole matrix (issue 21: the module returns these, the matrix goes to the report)."""
    from ansible_collections.gpudirect.openshift.plugins.module_utils.reports.hardware_facts import nearest_links
    from ansible_collections.gpudirect.openshift.plugins.module_utils.render.plan import render_all

    def port(pci, netdev, layer, vendor="15b3"):
        return {"node": "n0", "pci_address": pci, "vendor_id": vendor, "device_id": "1021", "link_layer": layer, "netdev": netdev,
                "rdma_device": "mlx5_%s" % netdev[-1], "total_vfs": 8, "numa_node": 0, "address": "b8:3f:d2:00:00:0%s" % netdev[-1],
                "type": 1, "is_vf": False}
    ports = [port("0000:1a:00.0", "eth0", "Ethernet"), port("0000:3c:00.0", "eth1", "Ethernet"),
             port("0000:9c:00.0", "ib2", "InfiniBand"), port("0000:bc:00.0", "eth3", "Ethernet", vendor="8086")]
    relation = {(0, "0000:1a:00.0"): "PIX", (0, "0000:3c:00.0"): "NODE", (0, "0000:9c:00.0"): "SYS", (0, "0000:bc:00.0"): "PIX",
                (1, "0000:1a:00.0"): "NODE", (1, "0000:3c:00.0"): "NODE", (1, "0000:9c:00.0"): "PXB", (1, "0000:bc:00.0"): "SYS"}
    links = [{"node": "n0", "gpu": gpu, "nic": nic, "relation": rel} for (gpu, nic), rel in sorted(relation.items())]
    nearest = nearest_links(links, ports)
    assert sorted((l["gpu"], l["nic"], l["relation"]) for l in nearest) == [
        (0, "0000:1a:00.0", "PIX"), (0, "0000:9c:00.0", "SYS"), (0, "0000:bc:00.0", "PIX"),
        (1, "0000:1a:00.0", "NODE"), (1, "0000:3c:00.0", "NODE"), (1, "0000:9c:00.0", "PXB"), (1, "0000:bc:00.0", "SYS")]
    for fabric in ("roce", "infiniband"):
        base = {"gpudirect_rdma_method": "host_device", "gpudirect_rdma_fabric": fabric, "gpudirect_rdma_nic_selection": "auto",
                "gpudirect_rdma_ipam_range": "192.168.50.0/24", "gpudirect_rdma_nic_facts": ports}
        whole = render_all(dict(base, gpudirect_rdma_gpu_nic_affinity=links))
        reduced = render_all(dict(base, gpudirect_rdma_gpu_nic_affinity=nearest))
        assert whole["errors"] == reduced["errors"] == []
        assert whole["summary"]["nic_selection"] == reduced["summary"]["nic_selection"]


def test_facts_summary_names_only_what_applies():
    """Issue 31 point 8: no "Not ready: ." when every node is ready, and check mode says that it read no facts
    instead of "0 ready, 0 from the cache, 0 gathered now"."""
    ready = {"worker-0": {"ready": True}, "worker-1": {"ready": True}}
    counts = {"selected": 2, "from_cache": 1, "gathered": 1, "failed": 0}
    assert hardware_facts.facts_summary(counts, ready) == "2 node(s): 2 ready, 1 from the cache, 1 gathered now, 0 without facts."
    mixed = dict(ready, **{"worker-1": {"ready": False}})
    assert hardware_facts.facts_summary(counts, mixed).endswith(" Not ready: worker-1.")
    many = dict(("w-%02d" % i, {"ready": False}) for i in range(25))
    assert hardware_facts.facts_summary({"selected": 25, "gathered": 25}, many, listed=3).endswith(
        "Not ready: w-00, w-01, w-02 and 22 more.")
    pods = [{"name": "facts-a", "node": "worker-0"}, {"name": "facts-b", "node": "worker-1"}]
    check = hardware_facts.facts_summary({"selected": 2, "from_cache": 0, "gathered": 0, "failed": 0}, {}, pods, check_mode=True)
    assert check == ("2 node(s): 0 from the cache (0 ready); check mode starts no pod, so the facts of 2 are not read: "
                     "worker-0, worker-1.")
