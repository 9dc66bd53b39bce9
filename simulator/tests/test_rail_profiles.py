"""The rail-optimised profiles (issue 17): shape, the degraded rail, and the NVLink field's validation."""

import copy

import pytest
import yaml

from simulator.profiles import ProfileError, load_profile, parse_profile, shipped_profiles


@pytest.mark.parametrize("name,layer", [("rail-ib-lab", "InfiniBand"), ("rail-roce-lab", "Ethernet")])
def test_rail_profiles_shape(name, layer):
    assert name in shipped_profiles()
    profile = load_profile(name)
    workers = profile.workers
    assert len(workers) == 3
    for node in workers:
        assert len(node.gpus) == 8 and node.nvlink_links_per_gpu == 18
        rails, storage = node.nics[:8], node.nics[8:]
        assert [nic.ports[0].link_layer for nic in rails] == [layer] * 8
        assert [nic.ports[0].speed_gbps for nic in rails] == [400] * 8
        # each rail NIC shares the PCIe switch block (bus >> 4) of one GPU; storage NICs share none
        assert [int(nic.pci_address[5:7], 16) >> 4 for nic in rails] == [int(g.pci_address[5:7], 16) >> 4 for g in node.gpus]
        gpu_blocks = set(int(g.pci_address[5:7], 16) >> 4 for g in node.gpus)
        assert [(nic.ports[0].link_layer, nic.ports[0].speed_gbps) for nic in storage] == [("Ethernet", 200)] * 2
        assert not gpu_blocks & set(int(nic.pci_address[5:7], 16) >> 4 for nic in storage)
    down = [(node.name, port.rdma_device) for node in workers for nic in node.nics for port in nic.ports if port.state != "ACTIVE"]
    assert down == [(workers[2].name, "mlx5_3")]


def test_nvlink_field_is_validated():
    with open(load_profile("rail-ib-lab").source) as handle:
        data = yaml.safe_load(handle)
    bad = copy.deepcopy(data)
    bad["nodes"][3]["nvlink_links_per_gpu"] = 19
    with pytest.raises(ProfileError, match=r"nodes\[3\]\.nvlink_links_per_gpu: must be <= 18, got 19"):
        parse_profile(bad, origin="rail.yaml")
    assert load_profile("roce-lab").workers[0].nvlink_links_per_gpu == 0
