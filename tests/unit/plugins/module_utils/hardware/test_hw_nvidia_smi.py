# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia-smi -q -x parser over the real v11, v12 and v13 captures, and the runner."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import stat

import pytest

from ansible_collections.gpudirect.openshift.plugins.module_utils.hardware import nvidia_smi
from ansible_collections.gpudirect.openshift.tests.unit.fixtures.synthetic_sysfs import read_fixture


def h200_xml():
    return read_fixture("h200-node", "nvidia-smi-q-x.xml")


def test_v13_layout_h200_capture():
    parsed = nvidia_smi.parse(h200_xml())  # the capture keeps its '$ nvidia-smi -q -x' and '[rc=0]' lines
    assert parsed["xml_schema"] == "v13"
    assert parsed["driver_version"] == "580.159.04"
    assert parsed["cuda_version"] == "13.0"
    assert parsed["attached_gpus"] == 1
    [gpu] = parsed["gpus"]
    assert gpu["index"] == 0
    assert gpu["name"] == "NVIDIA H200"
    assert gpu["architecture"] == "Hopper"
    assert gpu["uuid"] == "GPU-9afc864c-c5d7-6c43-7842-f5e9cfaba8a3"
    assert gpu["pci_address"] == "0000:00:06.0"
    assert gpu["pci_device_id"] == "0x2335"
    assert gpu["memory_total_mib"] == 143771
    assert gpu["bar1_total_mib"] == 262144
    assert gpu["mig_mode"] == {"current": "Disabled", "pending": "Disabled"}
    assert gpu["mig_device_count"] == 0
    assert gpu["persistence_mode"] == "Enabled"
    assert gpu["addressing_mode"] == "None"
    assert gpu["module_id"] == 6  # v13: platformInfo/module_id
    assert gpu["pcie_link"] == {"current_gen": 5, "max_gen": 5, "current_width": 16, "max_width": 16}
    assert gpu["virtualization_mode"] == "Pass-Through"


def test_v12_layout_a100_with_mig():
    parsed = nvidia_smi.parse(read_fixture("command-outputs", "nvidia-smi-q-x", "telegraf_a100-sxm4-v12.xml"))
    assert parsed["xml_schema"] == "v12"
    assert (parsed["driver_version"], parsed["cuda_version"]) == ("535.54.03", "12.2")
    [gpu] = parsed["gpus"]
    assert gpu["name"] == "NVIDIA A100-SXM4-80GB"
    assert gpu["uuid"] == "GPU-513536b6-7d19-9063-b049-1e69664bb298"
    assert gpu["pci_address"] == "0000:01:00.0"
    # the GPU's own framebuffer, not the first MIG device's (19968 MiB)
    assert gpu["memory_total_mib"] == 81920
    assert gpu["mig_mode"] == {"current": "Enabled", "pending": "Enabled"}
    assert gpu["mig_device_count"] == 4
    assert gpu["module_id"] == 4  # v12: gpu_module_id
    assert gpu["persistence_mode"] == "Disabled"
    assert gpu["addressing_mode"] == "None"
    assert gpu["driver_version"] == "535.54.03"


def test_v11_layout_t4_without_addressing_mode_or_mig():
    parsed = nvidia_smi.parse(read_fixture("command-outputs", "nvidia-smi-q-x", "telegraf_tesla-t4.xml"))
    assert parsed["xml_schema"] == "v11"
    assert parsed["cuda_version"] == "11.7"
    [gpu] = parsed["gpus"]
    assert gpu["name"] == "Tesla T4"
    assert gpu["pci_address"] == "0000:00:1e.0"  # upper-case '1E' normalised
    assert gpu["memory_total_mib"] == 15360
    assert gpu["addressing_mode"] is None
    assert gpu["mig_mode"] == {"current": None, "pending": None}  # N/A
    assert gpu["pcie_link"]["current_width"] == 8
    assert gpu["pcie_link"]["max_width"] == 16


@pytest.mark.parametrize("text", ["", "nvidia-smi: command not found", "<nvidia_smi_log><gpu></nvidia_smi_log>"])
def test_unparsable_output_raises_value_error(text):
    with pytest.raises(ValueError):
        nvidia_smi.parse(text)


def test_bus_id_normalisation():
    assert nvidia_smi.normalize_bus_id("00000000:C1:00.0") == "0000:c1:00.0"
    assert nvidia_smi.normalize_bus_id("0001:41:00.0") == "0001:41:00.0"
    assert nvidia_smi.normalize_bus_id("garbage") is None


def _script(tmp_path, body):
    path = tmp_path / "nvidia-smi"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_run_returns_stdout_of_q_x(tmp_path):
    xml_file = tmp_path / "out.xml"
    xml_file.write_text(h200_xml())
    binary = _script(tmp_path, '[ "$1 $2" = "-q -x" ] || exit 9\ncat %s\n' % xml_file)
    out, err = nvidia_smi.run(binary)
    assert err is None
    assert nvidia_smi.parse(out)["gpus"][0]["name"] == "NVIDIA H200"


def test_run_reports_failures(tmp_path):
    binary = _script(tmp_path, 'echo "NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver" >&2\nexit 9\n')
    out, err = nvidia_smi.run(binary)
    assert out is None and "exited 9" in err and "could not communicate" in err
    out, err = nvidia_smi.run(os.path.join(str(tmp_path), "missing"))
    assert out is None and "failed" in err
    slow = _script(tmp_path, "sleep 5\n")
    out, err = nvidia_smi.run(slow, timeout=0.2)
    assert out is None and "timed out" in err


def a10g_xml():
    return read_fixture("command-outputs", "nvidia-smi-q-x", "telegraf_a10g.xml")


def test_a10g_capture_device_id_000000de_is_unknown_not_0x0000():
    # The field is (device << 16) | vendor; this VM reports vendor 0x00de and device 0: no usable ID.
    [gpu] = nvidia_smi.parse(a10g_xml())["gpus"]
    assert gpu["name"] == "NVIDIA A10G"
    assert gpu["pci_address"] == "0000:00:1e.0"
    assert gpu["pci_device_id"] is None
    assert gpu["memory_total_mib"] == 23028


@pytest.mark.parametrize("text,expected", [
    ("233510DE", "0x2335"), ("20B210DE", "0x20b2"), ("1eb810de", "0x1eb8"), (" 223710DE ", "0x2237"),
    ("000000DE", None), ("000010DE", None), ("223715B3", None), ("10DE", None), ("N/A", None), (None, None),
    ("1223510DE", None),
])
def test_pci_device_id_is_device_over_vendor(text, expected):
    assert nvidia_smi.pci_device_id(text) == expected
