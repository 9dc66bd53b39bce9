# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Facts the collector printed on a real H200 machine (tests/unit/fixtures/h200_real_facts.json, from
`python3 plugins/module_utils/hardware/collector.py --json` run there)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import re

import pytest

from ansible_collections.gpudirect.openshift.plugins.module_utils.hardware import collector, readiness

REAL_FACTS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "h200_real_facts.json")


@pytest.fixture(scope="module")
def real():
    if not os.path.exists(REAL_FACTS):
        raise AssertionError("%s is missing: run `python3 plugins/module_utils/hardware/collector.py --json > "
                             "h200_real_facts.json` on the H200 machine and commit it there" % REAL_FACTS)
    with open(REAL_FACTS) as handle:
        return json.load(handle)


def test_gpu(real):
    [gpu] = real["gpus"]
    assert "H200" in gpu["name"]
    assert re.match(r"^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", gpu["uuid"])
    assert re.match(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$", gpu["pci_address"])
    assert gpu["pci_device_id"] == "0x2335"
    assert gpu["driver"] == "nvidia" and gpu["source"] == "nvidia-smi"
    assert gpu["driver_version"].startswith("580.")
    assert gpu["cuda_version"] == "13.0"
    assert 140000 < gpu["memory_total_mib"] < 145000
    assert gpu["mig_mode"] == {"current": "Disabled", "pending": "Disabled"}
    assert gpu["sysfs_path"].startswith("/sys/devices/pci")
    assert real["nvidia_smi"]["xml_schema"] == "v13"


def test_not_ready_without_rdma_nic_and_without_peermem_module(real):
    assert real["schema_version"] == collector.FACTS_SCHEMA_VERSION
    assert real["nics"] == [] and real["rdma_devices"] == [] and real["topology"]["pairs"] == []
    assert real["kernel_modules"]["nvidia"] is True
    assert real["kernel_modules"]["nvidia_peermem"] is False
    assert real["peer_memory"]["nvidia_peermem_loaded"] is False
    # The machine runs the open kernel module on a 6.x kernel: DMA-BUF is the peer memory path there,
    # so the only blocking reason is the missing RDMA NIC.
    assert real["nvidia_driver"]["open_kernel_module"] is True
    assert real["peer_memory"]["path"] == "dma_buf"
    assert real["readiness"]["ready"] is False
    assert real["readiness"]["reason_codes"] == ["no_mellanox_nic"]
    assert real["warnings"] == []


def test_verdict_is_reproducible_from_the_facts(real):
    assert readiness.evaluate(real) == real["readiness"]
    without_dma_buf = dict(real, peer_memory=dict(real["peer_memory"], path=None))
    assert readiness.evaluate(without_dma_buf)["reason_codes"] == ["no_mellanox_nic", "no_peer_memory_path"]


def test_verdict_names_the_missing_peer_memory_module(real):
    """Not blocking there (the open 580 driver on kernel 6.18 gives DMA-BUF), but the verdict says it."""
    verdict = readiness.evaluate(real)
    assert verdict["ready"] is False and verdict["reason_codes"] == ["no_mellanox_nic"]
    assert "nvidia_peermem_not_loaded" in verdict["warning_codes"]
