# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""hardware_report.Documents (gather_node_hardware's report folder) writes the reports one node at a time (issue 38):
the files are byte for byte what the whole structures give (json.dumps(indent=4, sort_keys=True), render_markdown,
render_html), and the facts module holds neither every node's GPU-NIC matrix nor every cached document at once."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

from ansible_collections.gpudirect.openshift.plugins.module_utils.reports import hardware_facts, hardware_report
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster import node_facts
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.facts_nodes import FactsSettings
from ansible_collections.gpudirect.openshift.plugins.module_utils.hardware import collector
from ansible_collections.gpudirect.openshift.tests.unit.fixtures import synthetic_sysfs as synth

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "fixtures")


def synthetic_facts(path, gpus, nics, vfs=0):
    builder = synth.build_gpu_nic_node(path, gpus=gpus, nics=nics, vfs_per_pf=vfs)
    proc = synth.ProcBuilder(path, modules=["mlx5_core", "ib_uverbs", "nvidia", "nvidia_peermem"], osrelease="5.14.0")
    return collector.collect(builder.root, proc.root)


def documents(tmp_path):
    """{node: facts}: the real H200 capture, synthetic nodes (with VFs, and one whose NIC has none), a node without
    GPUs or NICs (no link: an empty part of the matrix), in an order that is not the nodes' order."""
    with open(os.path.join(FIXTURES, "h200_real_facts.json")) as handle:
        real = json.load(handle)
    docs = {
        "worker-b": synthetic_facts(tmp_path / "b", gpus=2, nics=2, vfs=1),
        "h200-0": real,
        "worker-a": synthetic_facts(tmp_path / "a", gpus=8, nics=4),
        "empty-0": {"readiness": {"ready": False, "reason_codes": ["NO_GPU"], "reasons": ["no GPU"]}},
    }
    # What the module stores and reads back is JSON: compare with the documents as JSON gives them.
    return dict((node, json.loads(json.dumps(facts))) for node, facts in docs.items())


def write(tmp_path, docs, failed, note):
    report_dir = str(tmp_path / "report")
    found = hardware_report.Documents(report_dir, keep=False)
    for node, facts in docs.items():
        found(node, facts)
    flat = found.flat()
    files = found.write_reports("GPU/NIC inventory of lab", "lab", flat, failed, note)
    found.close()

    def read(name):
        with open(os.path.join(report_dir, name)) as handle:
            return handle.read()
    return flat, files, read


def test_reports_are_byte_identical_to_the_whole_structures(tmp_path):
    docs = documents(tmp_path)
    failed = [{"node": "gone-0", "pod": None, "error": "no such node"}]
    for note in (None, "taken before the drivers"):
        flat, files, read = write(tmp_path / str(bool(note)), docs, failed, note)
        ports, links, readiness = hardware_facts.flatten(docs)
        assert flat[0] == ports and flat[2] == readiness
        whole = {"cluster": "lab", "failed_nodes": failed, "gpu_nic_affinity": links, "nic_ports": ports,
                 "nodes": docs, "readiness": readiness}
        if note:
            whole["note"] = note
        assert len(links) > 50 and any(p["is_vf"] for p in ports)  # the fixtures have a matrix and VFs to write
        assert read("hardware-facts.json") == json.dumps(whole, indent=4, sort_keys=True) + "\n"
        assert read("hardware-report.md") == hardware_report.render_markdown(docs, title="GPU/NIC inventory of lab", failed=failed, note=note)
        assert read("hardware-report.html") == hardware_report.render_html(docs, title="GPU/NIC inventory of lab", failed=failed, note=note)
        assert files[:3] == ["hardware-report.md", "hardware-report.html", "hardware-facts.json"]
        assert sorted(files[3:]) == ["nodes/%s.json" % node for node in sorted(docs)]


def test_reports_of_no_node_are_the_empty_structures(tmp_path):
    _flat, _files, read = write(tmp_path, {}, [], None)
    whole = {"cluster": "lab", "failed_nodes": [], "gpu_nic_affinity": [], "nic_ports": [], "nodes": {}, "readiness": {}}
    assert read("hardware-facts.json") == json.dumps(whole, indent=4, sort_keys=True) + "\n"
    assert read("hardware-report.md") == hardware_report.render_markdown({}, title="GPU/NIC inventory of lab")


def test_the_matrix_waits_on_disk_not_in_memory(tmp_path):
    """Only the nearest links (what plays read) stay as objects; the whole matrix the report needs is kept as text in a
    temporary file, so the module's memory does not grow with 64 links per 8-GPU, 8-NIC node."""
    docs = documents(tmp_path)
    found = hardware_report.Documents(str(tmp_path / "report"), keep=False)
    for node, facts in docs.items():
        found(node, facts)
    nearest = dict((node, hardware_facts.nearest_links(hardware_facts.gpu_nic_affinity(node, facts), hardware_facts.nic_ports(node, facts)))
                   for node, facts in docs.items())
    assert found.links == nearest
    held = [link for value in vars(found).values() if isinstance(value, dict)
            for items in value.values() if isinstance(items, list) for link in items if isinstance(link, dict) and "gpu_uuid" in link]
    assert len(held) == sum(len(links) for links in nearest.values()) < sum(
        len(hardware_facts.gpu_nic_affinity(node, facts)) for node, facts in docs.items())
    assert found.nodes == {}  # return_facts off: no document kept
    found.close()


def test_alike_nodes_share_their_texts_and_gpu_paths(tmp_path):
    """The ports of alike nodes hold one object per distinct text and list of GPU paths (what they return is unchanged)."""
    facts = synthetic_facts(tmp_path, gpus=2, nics=2)
    found = hardware_report.Documents(None, keep=False)
    for node in ("gpu-0", "gpu-1"):
        found(node, json.loads(json.dumps(facts)))
    assert found.ports["gpu-1"] == hardware_facts.nic_ports("gpu-1", facts)
    first, second = found.ports["gpu-0"], found.ports["gpu-1"]
    paths = [(a["gpu_paths"], b["gpu_paths"]) for a, b in zip(first, second) if a.get("gpu_paths")]
    assert paths and all(a is b for a, b in paths)
    assert all(a["pci_address"] is b["pci_address"] and a["model"] is b["model"] for a, b in zip(first, second))


class PagedCluster:
    """The cache ConfigMaps, served in pages as the API does; records what had been read when each document went out."""

    def __init__(self, items, page_size):
        self.pages = [items[i:i + page_size] for i in range(0, len(items), page_size)]
        self.read = 0

    def list_pages(self, resource, on_page, namespace=None, label_selector=None):
        for number, page in enumerate(self.pages):
            self.read = number + 1
            if on_page(list(page), number == 0):
                break
        return "1"


def test_cached_documents_go_out_page_by_page_and_are_not_kept(tmp_path):
    facts = synthetic_facts(tmp_path, gpus=2, nics=2)
    line = json.dumps(facts)
    items = [node_facts.cache_configmap("c-%d" % n, "ns", "node-%d" % n, "fp-%d" % n, line) for n in range(7)]
    items.append({"metadata": {"name": "broken", "annotations": {}}, "binaryData": {node_facts.CACHE_KEY: "not gzip"}})
    cluster = PagedCluster(items, page_size=3)
    run = node_facts.FactsRun(cluster, FactsSettings(namespace="ns", name_prefix="gpudirect-facts"))
    taken = []
    cache = run._cache({"ConfigMap": None}, usable=lambda node, fingerprint, doc: node != "node-4",
                       take=lambda node, doc: taken.append((node, cluster.read, doc["readiness"]["ready"])))
    # each document went out while its own page was the last one read
    assert taken == [("node-%d" % n, n // 3 + 1, True) for n in range(7) if n != 4]
    # what is kept is the fingerprint and the ConfigMap name of every readable entry, never the document
    assert cache == dict(("node-%d" % n, ("fp-%d" % n, "c-%d" % n)) for n in range(7))
