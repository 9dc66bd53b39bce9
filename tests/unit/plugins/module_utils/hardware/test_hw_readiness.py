# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Readiness verdict and the DMA-BUF heuristic on hand-written facts."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.gpudirect.openshift.plugins.module_utils.hardware import readiness


@pytest.mark.parametrize("kernel,open_module,driver,usable", [
    ("5.12.0", True, "515.43.04", True),
    ("5.11.22", True, "580.1", False),
    ("6.8.0-45-generic", False, "580.1", False),
    ("5.14.0-427.el9.x86_64", True, "510.108.03", False),
    ("5.14.0", None, "580.1", None),
    (None, True, "580.1", None),
    ("5.14.0", True, None, True),
])
def test_dma_buf_support(kernel, open_module, driver, usable):
    verdict = readiness.dma_buf_support(kernel, open_module, driver)
    assert verdict["usable"] is usable
    assert verdict["detail"]


def facts(**overrides):
    base = {
        "gpus": [{"index": 0, "driver": "nvidia"}],
        "nics": [{"pci_address": "0000:21:00.0", "function": "PF", "family": "mlx5", "rdma_device": "mlx5_0",
                  "ports": [{"port": 1, "state": "ACTIVE"}]}],
        "rdma_devices": [{"name": "mlx5_0", "pci_address": "0000:21:00.0", "vendor": "mellanox", "ports": []}],
        "kernel_modules": {"nvidia": True, "nvidia_peermem": True, "ib_uverbs": True, "irdma": False},
        "peer_memory": {"path": "nvidia_peermem", "dma_buf": {"usable": None, "detail": "x"}},
        "topology": {"pairs": [{"rdma_device": "mlx5_0", "relation": "PIX"}]},
    }
    base.update(overrides)
    return base


def test_ready_node():
    assert readiness.evaluate(facts()) == {"ready": True, "reasons": [], "reason_codes": [], "warnings": [],
                                           "warning_codes": []}


def test_modules_unknown_are_not_reasons():
    verdict = readiness.evaluate(facts(kernel_modules={"nvidia": None, "ib_uverbs": None, "irdma": None}))
    assert verdict["ready"] is True


def test_vf_ports_down_are_not_warned_about():
    nics = facts()["nics"] + [{"pci_address": "0000:21:00.2", "function": "VF", "family": "mlx5",
                               "rdma_device": "mlx5_2", "ports": [{"port": 1, "state": "DOWN"}]}]
    assert readiness.evaluate(facts(nics=nics))["warning_codes"] == []


def test_unknown_topology_is_a_warning():
    verdict = readiness.evaluate(facts(topology={"pairs": [{"rdma_device": "mlx5_0", "relation": None}]}))
    assert verdict["ready"] is True and verdict["warning_codes"] == ["topology_unknown"]


def test_no_gpu_no_nic():
    verdict = readiness.evaluate(facts(gpus=[], nics=[], rdma_devices=[], peer_memory={"path": None}))
    assert verdict["reason_codes"] == ["no_nvidia_gpu", "no_mellanox_nic"]  # no peer memory reason without GPU
