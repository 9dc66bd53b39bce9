# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Unit tests of cluster_info's summaries (pure functions over Node / SriovNetworkNodeState dicts)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.module_base import with_connection_options
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster import info
from ansible_collections.gpudirect.openshift.plugins.modules import cluster_info


def node(name, labels=None, capacity=None, allocatable=None, ready="True", unschedulable=False):
    return {
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {"unschedulable": unschedulable} if unschedulable else {},
        "status": {
            "capacity": capacity or {},
            "allocatable": allocatable or capacity or {},
            "conditions": [{"type": "MemoryPressure", "status": "False"}, {"type": "Ready", "status": ready}],
            "nodeInfo": {"kernelVersion": "5.14.0-570.49.1.el9_6.x86_64", "osImage": "Red Hat Enterprise Linux CoreOS 9.6"},
        },
    }


GPU_NODE = node(
    "worker-0",
    labels={
        "node-role.kubernetes.io/worker": "",
        "kubernetes.io/hostname": "worker-0",
        "feature.node.kubernetes.io/pci-10de.present": "true",
        "feature.node.kubernetes.io/pci-15b3.present": "true",
        "feature.node.kubernetes.io/pci-15b3.sriov.capable": "true",
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB",
        "network.nvidia.com/operator.mofed.wait": "false",
        "beta.kubernetes.io/arch": "amd64",
    },
    capacity={"cpu": "64", "memory": "512Gi", "nvidia.com/gpu": "8", "rdma/rdma_shared_device_eth": "63",
              "openshift.io/mlxnics": "4", "nvidia.com/hostdev": "2"},
    allocatable={"cpu": "63500m", "nvidia.com/gpu": "7", "rdma/rdma_shared_device_eth": "63",
                 "openshift.io/mlxnics": "4", "nvidia.com/hostdev": "2"},
)
MASTER = node("master-0", labels={"node-role.kubernetes.io/master": "", "node-role.kubernetes.io/control-plane": ""})
NOT_READY_NIC_ONLY = node("worker-1", labels={"node-role.kubernetes.io/worker": "",
                                              "feature.node.kubernetes.io/pci-15b3.present": "true"},
                          ready="False", unschedulable=True)
SRIOV_STATE = {
    "metadata": {"name": "worker-0", "namespace": "openshift-sriov-network-operator"},
    "status": {"syncStatus": "Succeeded", "lastSyncError": "",
               "interfaces": [{"name": "ens1f0", "pciAddress": "0000:17:00.0", "vendor": "15b3", "deviceID": "101d",
                               "driver": "mlx5_core", "linkType": "ETH", "linkSpeed": "200000 Mb/s", "mtu": 9000,
                               "numVfs": 8, "totalvfs": 16, "eSwitchMode": "legacy", "mac": "aa:bb:cc:dd:ee:ff"}]},
}


def test_gpu_and_nic_node_summary():
    out = info.summarize_node(GPU_NODE, SRIOV_STATE)
    assert out["name"] == "worker-0" and out["roles"] == ["worker"] and out["ready"] is True
    assert out["gpus"] == {"capacity": 8, "allocatable": 7}
    assert out["rdma_resources"] == {
        "nvidia.com/hostdev": {"capacity": 2, "allocatable": 2},
        "openshift.io/mlxnics": {"capacity": 4, "allocatable": 4},
        "rdma/rdma_shared_device_eth": {"capacity": 63, "allocatable": 63},
    }
    assert "nvidia.com/gpu" not in out["rdma_resources"] and "cpu" not in out["rdma_resources"]
    assert set(out["labels"]) == {
        "feature.node.kubernetes.io/pci-10de.present", "feature.node.kubernetes.io/pci-15b3.present",
        "feature.node.kubernetes.io/pci-15b3.sriov.capable", "nvidia.com/gpu.present", "nvidia.com/gpu.product",
        "network.nvidia.com/operator.mofed.wait"}
    assert out["has_gpu"] and out["has_nvidia_nic"]
    assert out["sriov"]["sync_status"] == "Succeeded" and out["sriov"]["last_sync_error"] is None
    assert out["sriov"]["interfaces"][0]["eSwitchMode"] == "legacy" and "mac" not in out["sriov"]["interfaces"][0]


def test_master_and_not_ready_nodes():
    master = info.summarize_node(MASTER)
    assert master["roles"] == ["control-plane", "master"]
    assert not master["has_gpu"] and not master["has_nvidia_nic"] and master["sriov"] is None
    worker = info.summarize_node(NOT_READY_NIC_ONLY)
    assert worker["ready"] is False and worker["unschedulable"] is True and worker["has_nvidia_nic"]


def test_nic_detected_from_sriov_interfaces_only():
    bare = node("worker-2")
    assert info.summarize_node(bare, SRIOV_STATE)["has_nvidia_nic"] is True
    assert info.summarize_node(bare, None)["has_nvidia_nic"] is False


def test_extra_label_prefixes():
    out = info.summarize_node(GPU_NODE, extra_label_prefixes=["beta.kubernetes.io/"])
    assert out["labels"]["beta.kubernetes.io/arch"] == "amd64"


def test_cluster_summary():
    nodes = [info.summarize_node(n) for n in (GPU_NODE, MASTER, NOT_READY_NIC_ONLY)]
    assert info.summarize_cluster(nodes) == {
        "node_count": 3, "ready_nodes": 2, "gpu_nodes": ["worker-0"], "nic_nodes": ["worker-0", "worker-1"],
        "gpu_nic_nodes": ["worker-0"], "role_counts": {"control-plane": 1, "master": 1, "worker": 2},
        "total_gpus": 8, "allocatable_gpus": 7}


def test_openshift_version_from_cluster_version():
    cv = {"spec": {"channel": "stable-4.20", "clusterID": "abc"},
          "status": {"desired": {"version": "4.20.3"}, "history": [{"state": "Completed", "version": "4.20.3"}]}}
    assert info.openshift_version(cv) == {"version": "4.20.3", "channel": "stable-4.20", "cluster_id": "abc"}
    assert info.openshift_version({"status": {"history": [{"state": "Completed", "version": "4.19.9"}]}})["version"] == "4.19.9"
    assert info.openshift_version(None) is None


def test_non_integer_quantities_count_as_zero():
    odd = node("w", capacity={"nvidia.com/gpu": "1k"})
    assert info.summarize_node(odd)["gpus"]["capacity"] == 0


def test_argument_spec():
    spec = with_connection_options(cluster_info.argument_spec())
    assert spec["nodes"] == {"type": "list", "elements": "str"}
    assert "kubeconfig" in spec and spec["kubeconfig"]["no_log"] is True
