# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 17: per-rail configuration from the facts of a rail-optimised node (simulator profiles rail-ib-lab and
rail-roce-lab: 8 GPUs, 8 rail NICs each PIX to one GPU, 2 storage NICs near no GPU, rail 3 of the third node down).

The facts are what the collector reads on each node (the simulator builds the node's sysfs from the profile and
runs the collection's collector over it); the renderer turns them into one resource, network and range per rail.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import ipaddress
import json

import pytest

from ansible_collections.gpudirect.openshift.plugins.module_utils.render import workload
from ansible_collections.gpudirect.openshift.plugins.module_utils.render.plan import render_all
from simulator.controllers.facts_pods import profile_facts
from simulator.profiles import load_profile

P = "gpudirect_rdma_"
RAILS = ["rail%d" % index for index in range(8)]
NIC_BUS = [0x1a, 0x2c, 0x3c, 0x5e, 0x9c, 0xac, 0xbc, 0xdc]  # rail NICs of the profiles, GPU 0 to 7


@pytest.fixture(scope="module")
def ib_facts():
    return profile_facts(load_profile("rail-ib-lab").workers)


@pytest.fixture(scope="module")
def roce_facts():
    return profile_facts(load_profile("rail-roce-lab").workers)


def rail_variables(method, fabric, facts, **extra):
    ports, affinity = facts
    variables = {P + "method": method, P + "fabric": fabric, P + "nic_selection": "auto", P + "nic_facts": ports,
                 P + "gpu_nic_affinity": affinity, P + "resource_names": list(RAILS), P + "network_names": list(RAILS),
                 P + "ipam_range": "192.168.0.0/16"}
    if method == "sriov_legacy":
        variables[P + "num_vfs"] = 16
    variables.update(dict((P + key, value) for key, value in extra.items()))
    return variables


def test_profile_facts_pair_each_gpu_with_its_rail(ib_facts):
    ports, affinity = ib_facts
    assert len([p for p in ports if p["node"] == "rail-ib-0"]) == 10
    pix = sorted((link["node"], link["gpu"], link["rdma_device"]) for link in affinity if link["relation"] == "PIX")
    assert pix == sorted((node, gpu, "mlx5_%d" % gpu) for node in ("rail-ib-0", "rail-ib-1", "rail-ib-2") for gpu in range(8))
    storage = set(link["relation"] for link in affinity if link["rdma_device"] in ("mlx5_8", "mlx5_9"))
    assert storage == {"NODE", "SYS"}
    down = [p for p in ports if p["state"] != "ACTIVE"]
    assert [(p["node"], p["rdma_device"], p["state"]) for p in down] == [("rail-ib-2", "mlx5_3", "DOWN")]


@pytest.mark.parametrize("method,fabric", [(m, f) for m in ("shared_device", "host_device", "sriov_legacy") for f in ("infiniband", "roce")])
def test_auto_configures_eight_rails_and_leaves_storage_out(method, fabric, ib_facts, roce_facts):
    facts = ib_facts if fabric == "infiniband" else roce_facts
    result = render_all(rail_variables(method, fabric, facts))
    assert result["errors"] == [], result["errors"]
    groups = result["summary"]["nic_selection"]["groups"]
    assert [g["resource_name"] for g in groups] == RAILS
    assert [g["network_name"] for g in groups] == RAILS
    ranges = [ipaddress.ip_network(g["ipam_range"]) for g in groups]
    assert [str(r) for r in ranges] == ["192.168.%d.0/19" % (32 * index) for index in range(8)]
    nodes = sorted("rail-%s-%d" % ("ib" if fabric == "infiniband" else "roce", index) for index in range(3))
    for rank, group in enumerate(groups):
        assert group["nodes"] == nodes
        # rail k is the NIC beside GPU k on every node; the storage NICs (0000:41:00.0, 0000:c1:00.0) are in no rail
        bus = NIC_BUS[rank]
        if method == "shared_device":
            assert group["interfaces"] == [("ibp%ds0" if fabric == "infiniband" else "enp%ds0np0") % bus]
        else:
            assert group["pci_addresses"] == ["0000:%02x:00.0" % bus]
    networks = [e["manifest"] for e in result["manifests"] if e["phase"] == "network"]
    assert [n["metadata"]["name"] for n in networks] == RAILS
    assert len(result["summary"]["resources"]) == 8


def test_storage_nics_only_when_asked(roce_facts):
    ports, _affinity = roce_facts
    storage = render_all({P + "method": "shared_device", P + "fabric": "roce", P + "nic_interfaces": ["enp65s0f0np0"],
                          P + "nic_facts": ports, P + "ipam_range": "192.168.50.0/24"})
    assert storage["errors"] == []
    assert storage["summary"]["nic_selection"]["groups"][0]["interfaces"] == ["enp65s0f0np0"]


def test_overlapping_rail_ranges_are_refused(ib_facts):
    ranges = ["192.168.%d.0/24" % index for index in range(7)] + ["192.168.0.128/25"]
    result = render_all(rail_variables("shared_device", "infiniband", ib_facts, ipam_range=None, ipam_ranges=ranges))
    assert result["errors"] == ["gpudirect_rdma_ipam_ranges: 192.168.0.128/25 overlaps 192.168.0.0/24: two rails would hand out "
                                "the same addresses"]
    assert result["manifests"] == []


def test_more_rails_than_nics_is_refused(ib_facts):
    result = render_all(rail_variables("shared_device", "infiniband", ib_facts, resource_names=RAILS + ["rail8"],
                                       network_names=RAILS + ["rail8"]))
    expected = "gpudirect_rdma_resource_names: has 9 names but the selected ports per node are rail-ib-0=8, rail-ib-1=8, rail-ib-2=8"
    assert len(result["errors"]) == 1 and result["errors"][0].startswith(expected)
    assert result["manifests"] == []


def test_rail_nic_near_no_gpu_is_warned(ib_facts):
    ports, affinity = ib_facts
    # The NIC of rail 5 moved out of GPU 5's PCIe switch on rail-ib-0: its nearest GPU is now across the host bridge.
    moved = [dict(link, relation="NODE") if (link["node"], link["rdma_device"]) == ("rail-ib-0", "mlx5_5") else link for link in affinity]
    result = render_all(rail_variables("shared_device", "infiniband", (ports, moved)))
    assert result["errors"] == []
    assert any(w.startswith("gpudirect_rdma_gpu_nic_affinity: NIC ibp172s0 (0000:ac:00.0) on node rail-ib-0 is NODE to every GPU")
               for w in result["warnings"]), result["warnings"]
    clean = render_all(rail_variables("shared_device", "infiniband", ib_facts))
    assert not [w for w in clean["warnings"] if "PIX or PXB" in w]


def test_rails_render_the_same_twice(ib_facts):
    first = render_all(rail_variables("sriov_legacy", "infiniband", ib_facts))
    second = render_all(rail_variables("sriov_legacy", "infiniband", ib_facts))
    assert json.dumps(first["manifests"], sort_keys=True) == json.dumps(second["manifests"], sort_keys=True)


@pytest.mark.parametrize("method,fabric,hca", [("shared_device", "infiniband", True), ("host_device", "roce", True),
                                               ("sriov_legacy", "infiniband", False)])
def test_workload_pod_asks_eight_gpus_and_the_eight_rails(method, fabric, hca, ib_facts, roce_facts):
    result = render_all(rail_variables(method, fabric, ib_facts if fabric == "infiniband" else roce_facts))
    workload = result["workload"]
    pod = workload["manifest"]
    assert workload["file"] == "workload-rail-job-pod.yaml" and pod["kind"] == "Pod"
    assert pod["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"] == ",".join(RAILS)
    limits = pod["spec"]["containers"][0]["resources"]["limits"]
    assert limits["nvidia.com/gpu"] == "8"
    assert sorted(k for k in limits if k != "nvidia.com/gpu") == sorted(result["summary"]["resources"]) and len(limits) == 9
    env = dict((e["name"], e["value"]) for e in pod["spec"]["containers"][0]["env"])
    if hca:
        assert env["NCCL_IB_HCA"] == "=" + ",".join("mlx5_%d" % index for index in range(8))
        assert workload["notes"] == []
    else:
        assert "NCCL_IB_HCA" not in env and "SR-IOV VFs" in workload["notes"][0]
    assert env.get("NCCL_IB_GID_INDEX") == ("3" if fabric == "roce" else None)
    assert pod["spec"]["containers"][0]["securityContext"] == {"capabilities": {"add": ["IPC_LOCK"]}}


def test_rails_of_the_plan_for_the_allreduce(ib_facts):
    ports, affinity = ib_facts
    summary = render_all(rail_variables("shared_device", "infiniband", ib_facts))["summary"]
    rails = workload.rails_from_plan(summary, ports, affinity)
    assert rails["namespace"] == "default" and rails["fabric"] == "infiniband"
    assert rails["rails"][3] == {"network": "rail3", "resource": "rdma/rail3"} and len(rails["rails"]) == 8
    assert rails["rail_rates_gbps"] == [400.0] * 8  # rail 3 is down on rail-ib-2 only: the rail's rate is its NICs' best
    assert rails["hcas"] == ["mlx5_%d" % index for index in range(8)]
    # From verify's own namespace (issue 34) the NCCL pods name the networks of "default" with their namespace.
    own = workload.rails_from_plan(summary, ports, affinity, "gpudirect-verify")
    assert own["namespace"] == "gpudirect-verify" and own["rails"][3] == {"network": "default/rail3", "resource": "rdma/rail3"}
    sriov = render_all(rail_variables("sriov_legacy", "infiniband", ib_facts))["summary"]
    assert workload.rails_from_plan(sriov, ports, affinity)["hcas"] == []
