# -*- coding: utf-8 -*-
# Copyright (c) 2026 gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure parts of the NCCL all-reduce verification: rails from facts, NCCL environment, pods, suspects, settings."""

import pytest

from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster import nccl_run

AFFINITY = [
    {"node": "n0", "gpu": 0, "rdma_device": "mlx5_0", "relation": "PIX"},
    {"node": "n0", "gpu": 0, "rdma_device": "mlx5_8", "relation": "NODE"},
    {"node": "n0", "gpu": 1, "rdma_device": "mlx5_1", "relation": "PXB"},
    {"node": "n0", "gpu": 1, "rdma_device": "mlx5_0", "relation": "PIX"},
    {"node": "n0", "gpu": 10, "rdma_device": "mlx5_2", "relation": "PIX"},
    {"node": "n0", "gpu": 2, "rdma_device": "mlx5_9", "relation": "SYS"},
    {"node": "n1", "gpu": 0, "rdma_device": "mlx5_5", "relation": "PIX"},
]


def test_rail_hcas_in_gpu_order_nearest_first():
    # GPU 1 is PIX to mlx5_0 already listed; GPU 2 has no near NIC (left out); GPU 10 sorts after 1 numerically
    assert nccl_run.rail_hcas(AFFINITY, "n0") == ["mlx5_0", "mlx5_2"]
    assert nccl_run.rail_hcas(AFFINITY, "n0", rail_devices=["mlx5_1", "mlx5_2"]) == ["mlx5_1", "mlx5_2"]
    assert nccl_run.rail_hcas(AFFINITY, "n1") == ["mlx5_5"]


def test_nccl_environment():
    assert nccl_run.nccl_environment(["mlx5_0", "mlx5_1"], "infiniband") == {"NCCL_IB_HCA": "=mlx5_0,mlx5_1"}
    assert nccl_run.nccl_environment(["mlx5_0"], "roce") == {"NCCL_IB_HCA": "=mlx5_0", "NCCL_IB_GID_INDEX": "3"}


def test_worker_and_launcher_pods():
    settings = nccl_run.settings_from(**{"image": "img", "gpus_per_node": 8, "hcas": ["mlx5_0", "mlx5_1"],
                                         "rails": [{"network": "rail0", "resource": "rdma/rail0"},
                                                   {"network": "rail1", "resource": "rdma/rail1"}]})
    worker = nccl_run.worker_manifest(settings, "abc", 0, "node-a")
    assert worker["metadata"]["annotations"] == {"k8s.v1.cni.cncf.io/networks": "rail0,rail1"}
    assert worker["spec"]["containers"][0]["resources"]["limits"] == {"rdma/rail0": "1", "rdma/rail1": "1", "nvidia.com/gpu": "8"}
    assert worker["spec"]["nodeSelector"] == {"kubernetes.io/hostname": "node-a"}
    launcher = nccl_run.launcher_manifest(settings, "abc", ["10.128.0.5", "10.128.0.6"])
    command = launcher["spec"]["containers"][0]["command"]
    assert command[:6] == ["mpirun", "--allow-run-as-root", "-np", "16", "-H", "10.128.0.5:8,10.128.0.6:8"]
    assert command[command.index("-x") + 1] == "NCCL_IB_HCA" and command[-8:] == ["all_reduce_perf_mpi", "-b", "8", "-e", "8G", "-f", "2", "-g", "1"][-8:]
    assert launcher["spec"]["containers"][0]["env"] == [{"name": "NCCL_IB_HCA", "value": "=mlx5_0,mlx5_1"}]
    assert "nodeSelector" not in launcher["spec"] and "annotations" not in launcher["metadata"]


def test_settings_refuse_what_cannot_work():
    with pytest.raises(nccl_run.SettingsError) as info:
        nccl_run.settings_from(**{"image": "img", "nodes": ["one"], "gpus_per_node": 0, "threshold": 2,
                                  "rails": [{"network": "rail0"}], "rail_rates_gbps": [400, 400]})
    text = str(info.value)
    for part in ("rails[0]: network and resource", "nodes: give at least two", "gpus_per_node", "threshold", "rail_rates_gbps: 2 rates for 1 rails"):
        assert part in text
    # 0 (the default) is the calibrated threshold, not a refusal
    assert nccl_run.settings_from(**{"image": "img", "gpus_per_node": 8})["threshold"] == 0


def test_suspects_name_node_nic_and_gpu():
    ports = [{"node": "n0", "rdma_device": "mlx5_0", "netdev": "ibp26s0", "state": "ACTIVE", "rate_gbps": 400.0},
             {"node": "n1", "rdma_device": "mlx5_0", "netdev": "ibp26s0", "state": "ACTIVE", "rate_gbps": 200.0},
             {"node": "n1", "rdma_device": "mlx5_5", "netdev": "ibp172s0", "state": "DOWN", "rate_gbps": None},
             {"node": "n2", "rdma_device": "mlx5_5", "netdev": "ibp172s0", "state": "DOWN", "rate_gbps": None}]
    suspects = nccl_run.suspect_rails(ports, AFFINITY, ["mlx5_0", "mlx5_5"], ["n0", "n1"])
    assert suspects == [
        {"rail": 0, "node": "n1", "nic": "ibp26s0", "rdma_device": "mlx5_0", "gpu": None, "problem": "at 200.0 Gb/s, the others at 400.0"},
        {"rail": 1, "node": "n1", "nic": "ibp172s0", "rdma_device": "mlx5_5", "gpu": 0, "problem": "link DOWN"}]


def test_judge_unparsable_output():
    settings = nccl_run.settings_from(**{"image": "img", "gpus_per_node": 8, "rail_rates_gbps": [400]})
    result = nccl_run.judge(settings, "hello", {})
    assert result["passed"] is False and result["code"] == "unparsable_output"


def test_html_report_shows_verdict_suspects_and_chart():
    import os
    from ansible_collections.gpudirect.openshift.plugins.module_utils.reports import nccl_report

    fixture = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "nccl", "a3mega_2x8_h100_v2.1x.txt")
    with open(fixture) as handle:
        log = handle.read()
    settings = nccl_run.settings_from(**{"image": "img", "gpus_per_node": 8, "rail_rates_gbps": [400] * 8})
    suspects = [{"rail": 3, "node": "ztan-mig-gq73", "nic": "ibp94s0", "rdma_device": "mlx5_3", "gpu": 3,
                 "problem": "at 200 Gb/s, the others at 400"}]
    result = nccl_run.judge(settings, log, {"ztan-mig-235z": "node-a", "ztan-mig-gq73": "node-b"}, suspects)
    assert result["passed"] is True and result["nodes"] == ["node-a", "node-b"] and len(result["rows"]) == 31
    text = nccl_report.html(result)
    assert "PASSED" in text and "<svg" in text and text.count("<rect") == 31 and "8G" in text
    assert "ibp94s0" in text and "at 200 Gb/s" in text and "<script" not in text
    # the expected range for 8 rails of 400 Gb/s and its sources, each with its address (issue 36)
    assert result["threshold_source"] == "calibrated"
    assert "A ring reaches 320.0-390.4 GB/s (80-98% of the rails' 400.0 GB/s)" in text
    assert 'href="https://github.com/NVIDIA/nccl-tests/issues/290"' in text and "a tree or NVLS run up to 750.0 GB/s" in text
    # a rail whose link is down fails the run even above the threshold: NCCL ran without it
    down = [dict(suspects[0], problem="link DOWN")]
    result = nccl_run.judge(settings, log, {"ztan-mig-235z": "node-a", "ztan-mig-gq73": "node-b"}, down)
    assert result["passed"] is False and result["code"] == "rail_down" and result["measured_busbw_gbs"] == 338.82
    assert "rail 3 on ztan-mig-gq73: NIC ibp94s0 (GPU 3) link DOWN" in result["reason"]
    assert "FAILED" in nccl_report.html(result) and "Low results in published runs came from" in nccl_report.html(result)
