# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPU x NIC PCIe relations computed from sysfs trees that mirror real machines, checked against the
`nvidia-smi topo -m` matrices captured on those machines; and the matrix text parser."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.gpudirect.openshift.plugins.module_utils.hardware import collector, topology
from ansible_collections.gpudirect.openshift.tests.unit.fixtures import synthetic_sysfs as synth

ASUS_TOPO = ("command-outputs", "nvidia-smi-topo", "stelline_asus-esc8000a-e12_4gpu_4nic.txt")
DGX_TOPO = ("command-outputs", "nvidia-smi-topo", "gpu-compress-decompress_8xA100-SXM4_10xmlx5_dgxa100_tabs.txt")
ASUS_LSPCI = ("command-outputs", "lspci", "stelline_asus-esc8000a-e12_lspci-tv.txt")


def test_parse_tab_separated_matrix_dgx_a100():
    parsed = topology.parse_topo_matrix(synth.read_fixture(*DGX_TOPO))
    assert parsed["devices"] == ["GPU%d" % n for n in range(8)] + ["NIC%d" % n for n in range(10)]
    assert parsed["extra_columns"] == ["CPU Affinity", "NUMA Affinity"]
    assert parsed["matrix"]["GPU0"]["GPU0"] == "X"
    assert parsed["matrix"]["GPU0"]["GPU1"] == "NV12"
    assert parsed["matrix"]["GPU0"]["NIC0"] == "PXB"
    assert parsed["matrix"]["GPU7"]["NIC9"] == "SYS"
    assert parsed["matrix"]["NIC8"]["NIC9"] == "PIX"
    assert parsed["attributes"]["GPU2"] == {"CPU Affinity": "16-31,144-159", "NUMA Affinity": "1"}
    assert parsed["attributes"]["NIC0"] == {}
    assert parsed["nic_legend"]["NIC7"] == "mlx5_7"
    assert len(parsed["matrix"]) == 18


def test_parse_space_aligned_matrix_asus():
    parsed = topology.parse_topo_matrix(synth.read_fixture(*ASUS_TOPO))
    assert parsed["devices"] == ["GPU0", "GPU1", "GPU2", "GPU3", "NIC0", "NIC1", "NIC2", "NIC3"]
    assert parsed["extra_columns"] == ["CPU Affinity", "NUMA Affinity", "GPU NUMA ID"]
    assert parsed["matrix"]["GPU1"] == {"GPU0": "NODE", "GPU1": "X", "GPU2": "SYS", "GPU3": "SYS",
                                        "NIC0": "NODE", "NIC1": "NODE", "NIC2": "SYS", "NIC3": "SYS"}
    assert parsed["attributes"]["GPU3"] == {"CPU Affinity": "32-63", "NUMA Affinity": "1", "GPU NUMA ID": "N/A"}
    assert parsed["nic_legend"] == {"NIC0": "mlx5_0", "NIC1": "mlx5_1", "NIC2": "mlx5_2", "NIC3": "mlx5_3"}


def test_parse_h200_matrix_with_ansi_codes_and_capture_lines():
    parsed = topology.parse_topo_matrix(synth.read_fixture("h200-node", "nvidia-smi-topo.txt"))
    assert parsed["devices"] == ["GPU0"]
    assert parsed["matrix"] == {"GPU0": {"GPU0": "X"}}
    assert parsed["attributes"]["GPU0"] == {"CPU Affinity": "0-15", "NUMA Affinity": "0", "GPU NUMA ID": "N/A"}


def test_parse_rejects_text_without_matrix():
    with pytest.raises(ValueError):
        topology.parse_topo_matrix("nvidia-smi: not found\n")


def _computed(facts, labels_gpu, labels_nic):
    """Matrix {GPUi/NICj: {label: relation}} from facts, NICs labelled in the given order of addresses."""
    nic_label = dict((addr, label) for label, addr in labels_nic)
    result = {}
    for gpu_index, row in facts["topology"]["matrix"].items():
        label = labels_gpu[int(gpu_index)]
        result[label] = dict((nic_label[addr], rel) for addr, rel in row.items())
    return result


def _nic_nic(facts):
    chains = dict((nic["pci_address"], topology.pci_chain(nic["sysfs_path"])) for nic in facts["nics"])
    numa = dict((nic["pci_address"], nic["numa_node"]) for nic in facts["nics"])
    return chains, numa


def _classify_asus(description):
    if "RTX 6000" in description:
        return synth.NVIDIA, "0x26b1", synth.CLASS_VGA, "nvidia"
    if "NVIDIA" in description and "Audio" in description:
        return synth.NVIDIA, "0x22ba", synth.CLASS_AUDIO, "snd_hda_intel"
    if "ConnectX-7" in description:
        return synth.MELLANOX, "0x1021", synth.CLASS_ETHERNET, "mlx5_core"
    return "0x1022", "0x14a4", synth.CLASS_OTHER, None


def test_asus_box_from_its_lspci_tree_matches_its_topo_matrix(tmp_path):
    # NUMA: the two sockets own domains 00-60 and 80-e0 (topo affinity: GPU0/1 node 0, GPU2/3 node 1;
    # lspci -vvv of 21:00.0 says "NUMA node: 0").
    tree = synth.build_from_lspci_tv(tmp_path, synth.read_fixture(*ASUS_LSPCI),
                                     lambda root: 0 if int(root[-2:], 16) < 0x80 else 1, _classify_asus)
    # mlx5_0/1 carry the GUID of 21:00.x (ibv_devinfo node_guid 9c63:c003:00d4:20f0 <- lspci VPD ...9c63c0d420f0)
    for name, address in (("mlx5_0", "0000:21:00.0"), ("mlx5_1", "0000:21:00.1"),
                          ("mlx5_2", "0000:81:00.0"), ("mlx5_3", "0000:81:00.1")):
        tree.add_rdma(address, name, "9c63:c003:00d4:20f%s" % name[-1], "28.41.1000", "MT4129",
                      [synth.ib_port(state="1: DOWN", phys_state="3: Disabled", link_layer="Ethernet")])
    facts = collector.collect(tree.root, str(tmp_path / "proc"))
    assert [gpu["pci_address"] for gpu in facts["gpus"]] == ["0000:01:00.0", "0000:41:00.0", "0000:c1:00.0", "0000:e1:00.0"]
    assert [nic["model"] for nic in facts["nics"]] == ["ConnectX-7"] * 4
    captured = topology.parse_topo_matrix(synth.read_fixture(*ASUS_TOPO))
    nics = [("NIC%d" % n, nic["pci_address"]) for n, nic in enumerate(facts["nics"])]
    computed = _computed(facts, ["GPU0", "GPU1", "GPU2", "GPU3"], nics)
    for gpu in computed:
        expected = dict((label, rel) for label, rel in captured["matrix"][gpu].items() if label.startswith("NIC"))
        assert computed[gpu] == expected, gpu
    chains, numa = _nic_nic(facts)
    for label_a, addr_a in nics:
        for label_b, addr_b in nics:
            if label_a != label_b:
                assert topology.relation(chains[addr_a], chains[addr_b], numa[addr_a], numa[addr_b]) == \
                    captured["matrix"][label_a][label_b], (label_a, label_b)
    assert facts["topology"]["nearest_nic"]["0"]["relation"] == "NODE"
    assert facts["topology"]["nearest_nic"]["2"]["rdma_device"] == "mlx5_2"


def test_dgx_a100_mirror_matches_its_topo_matrix(tmp_path):
    tree, gpu_addresses, nic_addresses = synth.build_dgx_a100(tmp_path)
    facts = collector.collect(tree.root, str(tmp_path / "proc"))
    assert [gpu["pci_address"] for gpu in facts["gpus"]] == gpu_addresses
    assert [nic["pci_address"] for nic in facts["nics"]] == sorted(nic_addresses)
    captured = topology.parse_topo_matrix(synth.read_fixture(*DGX_TOPO))
    nics = [("NIC%d" % n, addr) for n, addr in enumerate(nic_addresses)]
    computed = _computed(facts, ["GPU%d" % n for n in range(8)], nics)
    for gpu, row in computed.items():
        expected = dict((label, rel) for label, rel in captured["matrix"][gpu].items() if label.startswith("NIC"))
        assert row == expected, gpu
    chains, numa = _nic_nic(facts)
    for label_a, addr_a in nics:
        for label_b, addr_b in nics:
            if label_a != label_b:
                assert topology.relation(chains[addr_a], chains[addr_b], numa[addr_a], numa[addr_b]) == \
                    captured["matrix"][label_a][label_b], (label_a, label_b)
    nearest = facts["topology"]["nearest_nic"]
    assert [nearest[str(n)]["relation"] for n in range(8)] == ["PXB"] * 8
    assert nearest["0"]["rdma_device"] == "mlx5_0" and nearest["7"]["rdma_device"] == "mlx5_6"


@pytest.mark.parametrize("path_a,path_b,numa,expected", [
    ("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0",
     "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0/0000:04:00.0", (0, 0), "PIX"),
    ("/sys/devices/pci0000:00/0000:00:01.0/0000:05:00.0", "/sys/devices/pci0000:00/0000:00:01.0/0000:05:00.1", (0, 0), "PIX"),
    ("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0/0000:04:00.0/0000:05:00.0",
     "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0/0000:06:00.0", (0, 0), "PXB"),
    ("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0", "/sys/devices/pci0000:00/0000:00:02.0/0000:02:00.0", (0, 0), "PHB"),
    ("/sys/devices/pci0000:00/0000:00:06.0", "/sys/devices/pci0000:00/0000:00:07.0", (None, None), "PHB"),
    ("/sys/devices/pci0000:00/0000:00:01.1/0000:01:00.0", "/sys/devices/pci0000:20/0000:20:03.1/0000:21:00.0", (0, 0), "NODE"),
    ("/sys/devices/pci0000:00/0000:00:01.1/0000:01:00.0", "/sys/devices/pci0000:80/0000:80:01.1/0000:81:00.0", (0, 1), "SYS"),
    ("/sys/devices/pci0000:00/0000:00:01.1/0000:01:00.0", "/sys/devices/pci0000:80/0000:80:01.1/0000:81:00.0", (None, None), "NODE"),
    ("/sys/devices/LNXSYSTM:00/VMBUS:00/7870-guid/pci7870:00/7870:00:00.0",
     "/sys/devices/LNXSYSTM:00/VMBUS:00/1234-guid/pci1234:00/1234:00:00.0", (0, 1), "SYS"),
])
def test_relation_rules(path_a, path_b, numa, expected):
    chain_a, chain_b = topology.pci_chain(path_a), topology.pci_chain(path_b)
    assert topology.relation(chain_a, chain_b, numa[0], numa[1]) == expected
    assert topology.relation(chain_b, chain_a, numa[1], numa[0]) == expected


def test_unknown_paths_give_no_relation():
    assert topology.pci_chain(None) is None
    assert topology.pci_chain("/sys/devices/virtual/net/lo") is None
    assert topology.pci_chain("/sys/devices/pci0000:00") is None
    assert topology.relation(None, topology.pci_chain("/sys/devices/pci0000:00/0000:00:06.0")) is None
    assert topology.better("PIX", "SYS") and topology.better("SYS", None) and not topology.better(None, "SYS")
