"""Integration tests of gpudirect.openshift.cluster_info: ansible-playbook against the simulated cluster."""

import json
import urllib.request

import pytest

from simulator.profiles import synthetic

from site_support import run_test_playbook as run_playbook


def server_version(sim):
    request = urllib.request.Request(sim.url + "/version", headers={"Authorization": "Bearer %s" % sim.token})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())


def label_like_nfd_and_device_plugins(sim):
    """Give GPU/NIC nodes the labels NFD would add and the capacity the device plugins would report."""
    client = sim.dynamic_client()
    nodes = client.resources.get(api_version="v1", kind="Node")
    for node in sim.profile.nodes:
        labels = {}
        if node.gpus:
            labels.update({"feature.node.kubernetes.io/pci-10de.present": "true", "nvidia.com/gpu.present": "true"})
        if any(nic.vendor_id == "15b3" for nic in node.nics):
            labels["feature.node.kubernetes.io/pci-15b3.present"] = "true"
        if labels:
            nodes.patch(name=node.name, body={"metadata": {"labels": labels}}, content_type="application/merge-patch+json")
        if node.gpus:
            extra = {"nvidia.com/gpu": str(len(node.gpus)), "rdma/rdma_shared_device_eth": "63"}
            nodes.status.patch(name=node.name, body={"status": {"capacity": extra, "allocatable": extra}},
                               content_type="application/merge-patch+json")


def test_reports_versions_nodes_and_summary(sim_factory, tmp_path):
    sim = sim_factory(profile="roce-lab")
    label_like_nfd_and_device_plugins(sim)
    result = run_playbook(sim, tmp_path, "cluster_info.yml", {})
    assert not result.get("failed"), result.get("msg")
    assert result["changed"] is False
    profile = sim.profile
    assert result["openshift"]["version"] == profile.cluster.version
    assert result["kubernetes"]["version"] == server_version(sim)["gitVersion"]
    names = sorted(n.name for n in profile.nodes)
    assert [n["name"] for n in result["nodes"]] == names
    gpu_workers = sorted(n.name for n in profile.nodes if n.gpus)
    total_gpus = sum(len(n.gpus) for n in profile.nodes)
    by_name = {n["name"]: n for n in result["nodes"]}
    for name in gpu_workers:
        node = by_name[name]
        assert node["ready"] is True and "worker" in node["roles"]
        assert node["labels"].get("feature.node.kubernetes.io/pci-10de.present") == "true"
        assert node["has_gpu"] is True
        assert node["gpus"] == {"capacity": len(sim.profile.node(name).gpus), "allocatable": len(sim.profile.node(name).gpus)}
        assert node["rdma_resources"]["rdma/rdma_shared_device_eth"] == {"capacity": 63, "allocatable": 63}
    assert result["summary"]["gpu_nodes"] == gpu_workers
    assert result["summary"]["node_count"] == len(names)
    nic_nodes = sorted(n.name for n in profile.nodes if any(nic.vendor_id == "15b3" for nic in n.nics))
    assert result["summary"]["nic_nodes"] == nic_nodes
    assert result["summary"]["total_gpus"] == total_gpus
    assert result["sriov_node_states_served"] is False  # no SR-IOV operator installed
    assert all(n["sriov"] is None for n in result["nodes"])


def test_narrowing_by_name_and_selector_and_check_mode(sim_factory, tmp_path):
    sim = sim_factory(profile="roce-lab")
    workers = sorted(n.name for n in sim.profile.nodes if "worker" in n.roles)
    one = run_playbook(sim, tmp_path, "cluster_info.yml", {"info_nodes": [workers[0]]}, check=True)
    assert [n["name"] for n in one["nodes"]] == [workers[0]]
    selected = run_playbook(sim, tmp_path, "cluster_info.yml", {"info_label_selectors": ["node-role.kubernetes.io/worker"]})
    assert [n["name"] for n in selected["nodes"]] == workers
    assert sim.count(writes_only=True, include_dry_run=True) == 0


@pytest.mark.parametrize("sizes", [(3, 50)])
def test_request_count_does_not_grow_with_node_count(sim_factory, tmp_path, sizes):
    counts = {}
    for size in sizes:
        sim = sim_factory(profile=synthetic(nodes=size, gpus=8, nics=2, masters=3))
        mark = sim.mark()
        result = run_playbook(sim, tmp_path, "cluster_info.yml", {})
        assert result["summary"]["node_count"] == size + 3
        assert len(result["nodes"]) == size + 3
        counts[size] = sim.count(since=mark)
    print("cluster_info requests by node count: %s" % counts)
    assert counts[sizes[0]] == counts[sizes[1]]
