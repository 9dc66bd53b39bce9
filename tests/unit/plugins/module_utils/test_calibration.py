"""Expected ib_write_bw bandwidth from physical bounds and published real runs (issue 36, issue 31 item 10)."""

import pytest
from ansible_collections.gpudirect.openshift.plugins.module_utils.verify import bandwidth_calibration as cal
from ansible_collections.gpudirect.openshift.plugins.module_utils.verify import bandwidth_verdicts


def test_pcie_payload_bound_follows_the_stated_formula():
    # GT/s x lanes x 128/130 x 256/(256+24)
    assert cal.pcie_payload_gbps(16.0, 16) == pytest.approx(16 * 16 * 128 / 130.0 * 256 / 280.0)
    assert round(cal.pcie_payload_gbps(16.0, 16), 2) == 230.46  # Gen4 x16: less than a 400 Gb/s port
    assert round(cal.pcie_payload_gbps(32.0, 16), 2) == 460.91  # Gen5 x16: more than a 400 Gb/s port
    assert round(cal.pcie_payload_gbps(5.0, 8), 2) == 29.26  # Gen2 uses 8b/10b
    assert cal.pcie_payload_gbps(None, 16) is None and cal.pcie_payload_gbps(12.0, 16) is None
    assert cal.pcie_text(16.0, 16) == "PCIe Gen4 x16 (16 GT/s)" and cal.pcie_text(None, None) is None
    assert cal.gpu_pcie("NVIDIA A40") == (16.0, 16) and cal.gpu_pcie("NVIDIA H100 80GB HBM3") == (32.0, 16)


def test_every_number_has_a_source_row():
    for key, row in cal.SOURCES.items():
        assert row["url"].startswith("https://") and row["title"] and row["verdict"], key
    low, high, keys = cal.healthy_range()
    assert keys == list(cal.HEALTHY_ROWS)
    # the chapter's 180.47 Gb/s on 200 Gb/s (90.2 %) and Azure's NDv4 180 on 200 set the low end, NDv5 380/400 the top
    assert (round(low, 4), round(high, 4)) == (0.9, 0.95)
    assert round(cal.sys_derating(), 3) == 0.478  # perftest#241: 11000 MB/s from GPU memory, 23000 from host memory


@pytest.mark.parametrize("key, link, layer, mtu, gpu, nic, path", [
    ("redhat-chapter", 200, "Ethernet", 1024, (16.0, 16), (16.0, 16), None),
    ("redhat-gpu-tools", 200, "Ethernet", 1024, (16.0, 16), (16.0, 16), None),
    ("nvidia-gpu-operator", 100, "Ethernet", 1024, (None, None), (None, None), None),
    ("azure-ndv5-gdr", 400, "InfiniBand", 4096, (32.0, 16), (32.0, 16), "PIX"),
    ("azure-ndv4-gdr", 200, "InfiniBand", 4096, (16.0, 16), (16.0, 16), None),
])
def test_each_healthy_published_run_is_judged_healthy_on_its_own_hardware(key, link, layer, mtu, gpu, nic, path):
    row = cal.SOURCES[key]
    expectation = cal.expected(link, layer, mtu, gpu, nic, path)
    assert expectation["low_gbps"] <= round(row["measured_gbps"], 2) <= expectation["high_gbps"], (key, expectation)
    assert key in expectation["sources"]


def test_the_published_sys_run_is_low_and_the_verdict_says_why():
    row = cal.SOURCES["perftest-241"]
    # Judged as if GPU and NIC sat on one switch, the run is far below the healthy range: what its thread reports.
    pix = cal.expected(200, "InfiniBand", 4096, (16.0, 16), (16.0, 16), "PIX")
    assert row["measured_gbps"] < pix["low_gbps"]
    sys_path = cal.expected(200, "InfiniBand", 4096, (16.0, 16), (16.0, 16), "SYS")
    # Judged on its real path it reaches the calibrated low end: low, and explained by the path.
    assert sys_path["low_gbps"] <= round(row["measured_gbps"], 2)
    assert "perftest-241" in sys_path["sources"] and any("SYS" in why for why in sys_path["why"])


def test_a40_on_a_400_gbps_port_is_bounded_by_its_pcie_gen4_link():
    expectation = cal.expected(400, "InfiniBand", 4096, (16.0, 16), (32.0, 16), "PIX")
    assert expectation["bound_gbps"] == 230.46 and expectation["limited_by"].startswith("GPU PCIe Gen4 x16")
    # 375 Gb/s, what the simulator reported for an A40 before, is impossible on this hardware
    assert 375.12 > expectation["high_gbps"] == 218.93
    text = bandwidth_verdicts.expectation_text(212.0, expectation)
    assert text.startswith("212.00 Gb/s measured, expected 207.41-218.93 Gb/s for this hardware (bound 230.46 Gb/s: GPU PCIe Gen4 x16")
    assert "lower than the link because the GPU PCIe Gen4 x16" in text and "redhat-chapter" in text


def test_mtu_and_paths_through_the_cpu_are_named():
    roce = cal.expected(200, "Ethernet", 1024, (32.0, 16), (32.0, 16), "PIX")
    assert roce["bound_gbps"] == 200.0 and any("path MTU 1024" in why for why in roce["why"])
    node = cal.expected(400, "InfiniBand", 4096, (32.0, 16), (32.0, 16), "NODE")
    assert node["sources_thin"] is True and node["high_gbps"] == 380.0 and node["low_gbps"] < 200
    assert cal.expected(None) is None


def test_the_weaker_side_of_a_pair_sets_the_expectation():
    pix = {"nic_pcie": (32.0, 16), "gpu_pcie": (32.0, 16), "path": "PIX", "gpu": "0000:18:00.0"}
    sys_side = dict(pix, path="SYS")
    expectation = bandwidth_verdicts.calibrated_expectation(400, "InfiniBand", 4096, [pix, sys_side])
    assert expectation["sources"][-1] == "perftest-241" and expectation["high_gbps"] < 200
    # GPU link unknown from facts: the model's (an A40 is Gen4)
    unknown = {"nic_pcie": (None, None), "gpu_pcie": (None, None), "path": None, "gpu": None}
    assert bandwidth_verdicts.calibrated_expectation(400, "InfiniBand", 4096, [unknown], gpu_model="NVIDIA A40")["bound_gbps"] == 230.46
    # host memory: no GPU in the path
    assert bandwidth_verdicts.calibrated_expectation(400, "InfiniBand", 4096, [unknown], gpu_model="NVIDIA A40", gpu_memory=False)["bound_gbps"] == 400.0


def test_pair_side_hardware_reads_path_and_links_from_the_port_facts():
    settings = {"nic_ports": [{"node": "n0", "rdma_device": "mlx5_0", "netdev": "ibs2f0", "link_layer": "InfiniBand",
                               "pcie_gts": 32.0, "pcie_width": 16,
                               "gpu_paths": [{"gpu": "0000:61:00.0", "relation": "NODE", "pcie_gts": 16.0, "pcie_width": 16},
                                             {"gpu": "0000:e1:00.0", "relation": "SYS", "pcie_gts": 16.0, "pcie_width": 16}]}],
                "link_layer": "InfiniBand", "selection": {"interfaces": ["ibs2f0"], "pci_addresses": [], "device_ids": []},
                "method": "shared_device"}
    side = bandwidth_verdicts.pair_side_hardware(settings, "n0", "mlx5_0", "e1:00")
    assert side == {"nic_pcie": (32.0, 16), "gpu": "0000:e1:00.0", "gpu_pcie": (16.0, 16), "path": "SYS"}
    assert bandwidth_verdicts.pair_side_hardware(settings, "n0", "mlx5_0", None)["path"] is None
