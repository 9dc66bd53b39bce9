# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""sysfs/procfs readers over the real captures and synthetic trees."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os

import pytest

from ansible_collections.gpudirect.openshift.plugins.module_utils.hardware import sysfs
from ansible_collections.gpudirect.openshift.tests.unit.fixtures.synthetic_sysfs import (
    ProcBuilder, SysfsBuilder, build_from_attr_dump, fixture_path, ib_port, read_fixture, strip_capture, MELLANOX,
    CLASS_ETHERNET)


@pytest.mark.parametrize("text,expected", [
    ("4: ACTIVE", (4, "ACTIVE")), ("1: DOWN", (1, "DOWN")), ("5: LinkUp", (5, "LinkUp")),
    ("3: Disabled", (3, "Disabled")), ("ACTIVE", (None, "ACTIVE")), (None, (None, None)), ("", (None, None))])
def test_parse_state(text, expected):
    assert sysfs.parse_state(text) == expected


@pytest.mark.parametrize("text,expected", [
    ("400 Gb/sec (4X NDR)", 400.0), ("200 Gb/sec (2X NDR)", 200.0), ("40 Gb/sec (4X QDR)", 40.0),
    ("10 Gb/sec (4X)", 10.0), ("2.5 Gb/sec (1X SDR)", 2.5), ("invalid", None), (None, None)])
def test_parse_rate(text, expected):
    assert sysfs.parse_rate_gbps(text) == expected


@pytest.mark.parametrize("text,expected", [
    ("32.0 GT/s PCIe", 32.0), ("16.0 GT/s PCIe", 16.0), ("2.5 GT/s", 2.5), ("Unknown", None), (None, None)])
def test_parse_link_speed(text, expected):
    assert sysfs.parse_link_speed_gts(text) == expected


def test_normalize_pci_address():
    assert sysfs.normalize_pci_address("00000000:00:06.0") == "0000:00:06.0"
    assert sysfs.normalize_pci_address("0000:C1:00.1") == "0000:c1:00.1"
    assert sysfs.normalize_pci_address("c1:00.1") is None


def test_proc_modules_from_h200_lsmod_capture(tmp_path):
    text = strip_capture(read_fixture("h200-node", "lsmod.txt"))
    proc = ProcBuilder(tmp_path, modules_text=text)
    modules = sysfs.read_proc_modules(proc.root)
    assert sorted(modules) == ["nvidia", "nvidia_uvm"]
    assert modules["nvidia"]["state"] == "Live"
    assert modules["nvidia"]["size"] == 14299136


def test_proc_modules_skips_noise_and_missing_file(tmp_path):
    proc = ProcBuilder(tmp_path, modules_text="garbage line\nmlx5_ib 1 0 - Live 0x0\n\n")
    assert list(sysfs.read_proc_modules(proc.root)) == ["mlx5_ib"]
    assert sysfs.read_proc_modules(str(tmp_path / "nowhere")) is None


def test_pci_attributes_of_the_h200_capture(tmp_path):
    tree = build_from_attr_dump(tmp_path, fixture_path("h200-node", "pci-sysfs-attrs"))
    assert sysfs.list_pci_functions(tree.root) == ["0000:00:0%d.0" % n for n in range(7)]
    gpu = sysfs.read_pci_function(tree.root, "0000:00:06.0")
    assert (gpu["vendor_id"], gpu["device_id"], gpu["class"]) == ("0x10de", "0x2335", "0x030200")
    assert gpu["subsystem_device_id"] == "0x18bf"
    assert gpu["driver"] == "nvidia"
    assert gpu["numa_node"] is None  # the VM reports -1
    assert gpu["pcie"]["current_link_speed_gts"] == 32.0 and gpu["pcie"]["max_link_width"] == 16
    assert gpu["sysfs_path"].endswith("/sys/devices/pci0000:00/0000:00:06.0")
    host_bridge = sysfs.read_pci_function(tree.root, "0000:00:00.0")
    assert host_bridge["driver"] is None  # empty driver.link in the capture
    assert host_bridge["pcie"]["current_link_speed"] is None


def test_node_exporter_infiniband_tree_without_device_links():
    root = fixture_path("sysfs", "node-exporter-sys")
    assert sysfs.list_rdma_devices(root) == ["i40iw0", "mlx4_0"]
    mlx4 = sysfs.read_rdma_device(root, "mlx4_0")
    assert mlx4["pci_address"] is None
    assert (mlx4["fw_ver"], mlx4["hca_type"], mlx4["board_id"]) == ("2.31.5050", "MT4099", "SM_1141000001000")
    assert [port["port"] for port in mlx4["ports"]] == [1, 2]
    for port in mlx4["ports"]:
        assert (port["state"], port["state_code"]) == ("ACTIVE", 4)
        assert (port["phys_state"], port["phys_state_code"]) == ("LinkUp", 5)
        assert port["rate_gbps"] == 40.0 and port["link_layer"] == "InfiniBand"
        assert port["gids"] == [] and port["port_guid"] is None
    assert sysfs.read_rdma_device(root, "i40iw0")["ports"][0]["rate_gbps"] == 10.0


def test_roce_port_gids_netdev_and_sriov(tmp_path):
    tree = SysfsBuilder(tmp_path)
    chain = ["pci0000:20", "0000:20:03.1", "0000:21:00.0"]
    tree.add_pci(chain, MELLANOX, "0x1021", CLASS_ETHERNET, numa_node=0, driver="mlx5_core",
                 link=("32.0 GT/s PCIe", 16), sriov_totalvfs=16, sriov_numvfs=1)
    tree.add_pci(chain[:-1] + ["0000:21:00.2"], MELLANOX, "0x101e", CLASS_ETHERNET, numa_node=0, driver="mlx5_core")
    tree.add_virtfn("0000:21:00.0", "0000:21:00.2", 0)
    tree.add_netdev("0000:21:00.0", "ens1f0np0", mtu=9000, speed=200000)
    gids = [("fe80:0000:0000:0000:9e63:c0ff:fed4:20f0", "IB/RoCE v1", "ens1f0np0"),
            ("fe80:0000:0000:0000:9e63:c0ff:fed4:20f0", "RoCE v2", "ens1f0np0"),
            ("0000:0000:0000:0000:0000:ffff:c0a8:0302", "RoCE v2", "ens1f0np0")]
    tree.add_rdma("0000:21:00.0", "mlx5_0", "9c63:c003:00d4:20f0", "28.41.1000", "MT4129",
                  [ib_port(state="1: DOWN", phys_state="3: Disabled", rate="200 Gb/sec (4X HDR)", link_layer="Ethernet",
                           gids=gids)])
    dev = sysfs.read_rdma_device(tree.root, "mlx5_0")
    assert dev["pci_address"] == "0000:21:00.0"
    [port] = dev["ports"]
    assert (port["state"], port["phys_state"], port["link_layer"]) == ("DOWN", "Disabled", "Ethernet")
    assert [gid["type"] for gid in port["gids"]] == ["IB/RoCE v1", "RoCE v2", "RoCE v2"]
    assert port["gids"][2] == {"index": 2, "gid": gids[2][0], "type": "RoCE v2", "netdev": "ens1f0np0"}
    assert port["port_guid"] == "9e63:c0ff:fed4:20f0"
    assert sysfs.read_sriov(tree.root, "0000:21:00.0") == {"totalvfs": 16, "numvfs": 1, "vf_addresses": ["0000:21:00.2"]}
    assert sysfs.read_physfn(tree.root, "0000:21:00.2") == "0000:21:00.0"
    assert sysfs.read_physfn(tree.root, "0000:21:00.0") is None
    [netdev] = sysfs.read_pci_netdevs(tree.root, "0000:21:00.0")
    assert (netdev["name"], netdev["mtu"], netdev["speed_mbps"], netdev["operstate"]) == ("ens1f0np0", 9000, 200000, "up")
    assert sysfs.read_pci_rdma_names(tree.root, "0000:21:00.0") == ["mlx5_0"]


def test_unreadable_and_missing_files_read_as_none(tmp_path):
    directory = tmp_path / "adir"
    directory.mkdir()
    assert sysfs.read_text(str(directory)) is None  # a directory where a file was expected
    assert sysfs.read_text(str(tmp_path / "missing")) is None
    (tmp_path / "bad").write_bytes(b"\xff\xfe")
    assert sysfs.read_text(str(tmp_path / "bad")) is None
    (tmp_path / "num").write_text("x12\n")
    assert sysfs.read_int(str(tmp_path / "num")) is None
    os.symlink(str(tmp_path / "nowhere"), str(tmp_path / "dangling"))
    assert sysfs.link_name(str(tmp_path / "dangling")) == "nowhere"
    assert sysfs.resolve(str(tmp_path / "dangling")) is None
    assert sysfs.list_dir(str(tmp_path / "missing")) == []
