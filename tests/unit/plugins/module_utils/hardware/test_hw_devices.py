# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Mellanox device table, checked against the identifiers in the real captures."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

import pytest

from ansible_collections.gpudirect.openshift.plugins.module_utils.hardware import devices
from ansible_collections.gpudirect.openshift.tests.unit.fixtures.synthetic_sysfs import read_fixture


@pytest.mark.parametrize("device_id,model,kind", [
    ("0x1013", "ConnectX-4", "PF"), ("0x1014", "ConnectX-4 VF", "VF"),
    ("0x1015", "ConnectX-4 Lx", "PF"), ("0x1016", "ConnectX-4 Lx VF", "VF"),
    ("0x1017", "ConnectX-5", "PF"), ("0x1018", "ConnectX-5 VF", "VF"),
    ("0x1019", "ConnectX-5 Ex", "PF"), ("0x101a", "ConnectX-5 Ex VF", "VF"),
    ("0x101b", "ConnectX-6", "PF"), ("0x101c", "ConnectX-6 VF", "VF"),
    ("0x101d", "ConnectX-6 Dx", "PF"), ("0x101f", "ConnectX-6 Lx", "PF"),
    ("0x1021", "ConnectX-7", "PF"), ("0x1023", "ConnectX-8", "PF"),
    ("0xa2d6", "BlueField-2", "PF"), ("0xa2dc", "BlueField-3", "PF"),
    ("0x101e", "ConnectX VF (mlx5 generic)", "VF"),
])
def test_table_covers_every_supported_adapter(device_id, model, kind):
    entry = devices.mellanox_device(device_id)
    assert entry == {"model": model, "function": kind, "family": "mlx5"}


def test_ids_accept_every_notation():
    assert devices.mellanox_device("1021")["model"] == "ConnectX-7"
    assert devices.mellanox_device(0x1021)["model"] == "ConnectX-7"
    assert devices.mellanox_device("0xffff") is None
    assert devices.mellanox_device(None) is None
    assert devices.format_hex_id(0x15b3) == "0x15b3"


def test_generic_vf_takes_the_model_of_its_pf():
    assert devices.vf_model("0x101e", "ConnectX-7") == "ConnectX-7 VF"
    assert devices.vf_model("0x101e", "BlueField-3") == "BlueField-3 VF"
    assert devices.vf_model("0x101e") == "ConnectX VF (mlx5 generic)"
    assert devices.vf_model("0x101c", "ConnectX-6") == "ConnectX-6 VF"


def test_ibstat_ca_types_map_to_models():
    text = read_fixture("command-outputs", "ibstat", "gpud_ibstat.47.0.h100.all.active.2.txt")
    types = dict(re.findall(r"CA '(\S+)'\n\s+CA type: (MT\d+)", text))
    assert len(types) == 9
    models = dict((name, devices.mellanox_model_from_hca_type(ca)["model"]) for name, ca in types.items())
    assert models["mlx5_0"] == "ConnectX-7"
    assert models["mlx5_bond_0"] == "BlueField-3"
    assert set(models.values()) == {"ConnectX-7", "BlueField-3"}


def test_ibv_devinfo_part_ids_and_lspci_vf_id_are_in_the_table():
    info = read_fixture("command-outputs", "ibv_devinfo", "stelline_asus-esc8000a-e12_connectx7_x4.txt")
    parts = set(re.findall(r"vendor_part_id:\s+(\d+)", info))
    assert parts == {"4129"}
    assert devices.mellanox_device(int(parts.pop()))["model"] == "ConnectX-7"
    lspci = read_fixture("command-outputs", "lspci", "stelline_asus-esc8000a-e12_lspci-vvv_21-00.0_connectx7.txt")
    assert "[ConnectX-7]" in lspci
    vf_id = re.search(r"VF offset: \d+, stride: \d+, Device ID: ([0-9a-f]{4})", lspci).group(1)
    assert devices.mellanox_device(vf_id)["function"] == "VF"
    assert devices.vf_model(vf_id, "ConnectX-7") == "ConnectX-7 VF"


def test_hca_type_rejects_other_vendors():
    assert devices.mellanox_model_from_hca_type("I40IW") is None
    assert devices.mellanox_model_from_hca_type(None) is None
    assert devices.mellanox_model_from_hca_type("MT4099")["model"] == "ConnectX-3"


@pytest.mark.parametrize("pci_class,expected", [
    ("0x030200", True), ("0x030000", True), ("0x040300", False), ("0x068000", False), (None, False), ("junk", False)])
def test_gpu_class(pci_class, expected):
    assert devices.is_gpu_class(pci_class) is expected


def test_nvidia_gpu_marketing_names_from_the_pci_id_table():
    assert devices.nvidia_gpu_model("0x2235") == "NVIDIA A40"
    assert devices.nvidia_gpu_model(0x2335) == "NVIDIA H200 SXM 141GB"
    assert devices.nvidia_gpu_model("2237") == "NVIDIA A10G"
    assert devices.nvidia_gpu_model("0x0000") is None and devices.nvidia_gpu_model(None) is None
    assert all(0 < key <= 0xFFFF and name and name == name.strip() for key, name in devices.NVIDIA_GPU_MODELS.items())
