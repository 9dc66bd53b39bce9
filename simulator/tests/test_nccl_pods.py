"""NCCL verification pods (simulator/controllers/nccl_pods.py): MPI workers and launcher on the rail profiles.

The pods are the collection's own manifests (plugins/module_utils/cluster/nccl_run.py), created through the real
kubernetes client; the launcher's log must parse with the collection's nccl-tests parser, and its bus bandwidth
follow the rails: 8 x 400 Gb/s on two healthy nodes, 7/8 of it with a node whose rail 3 is down (NCCL drops the
inactive port and the weakest node sets every rank's channels: the model in simulator/controllers/nccl_pods.py),
each at a fraction of the rails inside the range published healthy runs reach (nccl_calibration.py).
"""

import pytest

from ansible_collections.gpudirect.openshift.plugins.module_utils.verify import nccl_tests_output
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster import nccl_run
from ansible_collections.gpudirect.openshift.plugins.module_utils.verify import nccl_calibration
from simulator.controllers.testing import Kube, wait

# The ring's healthy range of the rails' sum in published runs (plugins/module_utils/verify/nccl_calibration.py)
LOW, HIGH, _SOURCES = nccl_calibration.ring_range()

HCAS = ["mlx5_%d" % index for index in range(8)]
FAST = {"perftest_start_seconds": 0.02, "nccl_run_seconds": 0.05}


@pytest.fixture
def kube(sim_factory, tmp_path):
    return Kube(sim_factory(profile="rail-ib-lab", config=dict(FAST)), str(tmp_path / "discovery.json"))


def settings(**extra):
    params = {"image": "registry.example/nccl-tests:2.19.6", "gpus_per_node": 8, "gpu_resource": "", "hcas": HCAS,
              "min_bytes": "1M", "max_bytes": "8G", "rails": []}
    params.update(extra)
    return nccl_run.settings_from(**params)


def phase(kube, name):
    return ((kube.get("v1", "Pod", name, "default") or {}).get("status") or {}).get("phase")


def run(kube, run_id, nodes, **extra):
    config = settings(**extra)
    ips = []
    for index, node in enumerate(nodes):
        manifest = nccl_run.worker_manifest(config, run_id, index, node)
        kube.create(manifest)
        name = manifest["metadata"]["name"]
        wait(lambda n=name: phase(kube, n) == "Running", what="worker %s running" % name)
        ips.append(kube.get("v1", "Pod", name, "default")["status"]["podIP"])
    launcher = nccl_run.launcher_manifest(config, run_id, ips)
    kube.create(launcher)
    name = launcher["metadata"]["name"]
    wait(lambda: phase(kube, name) in ("Succeeded", "Failed"), what="launcher done")
    return phase(kube, name), kube.core.read_namespaced_pod_log(name, "default")


def test_two_healthy_nodes_carry_the_eight_rails(kube):
    status, log = run(kube, "a", ["rail-ib-0", "rail-ib-1"])
    assert status == "Succeeded"
    parsed = nccl_tests_output.parse_nccl_tests_output(log)
    assert parsed["version"] == "2.19.6" and parsed["ranks"] == 16
    assert parsed["hosts"] == ["nccl-a-worker-0", "nccl-a-worker-1"]
    assert parsed["devices"][8]["name"] == "NVIDIA H100 80GB HBM3" and parsed["devices"][8]["bus_id"] == "0000:18:00"
    assert parsed["largest_message_row"]["size_bytes"] == 8 << 30 and parsed["passed_checks"]
    verdict = nccl_tests_output.evaluate_allreduce(parsed, [400] * 8)
    assert verdict["passed"] is True and LOW < verdict["fraction"] <= HIGH, verdict
    # the report names the calibrated range and its sources
    assert verdict["threshold_source"] == "calibrated" and verdict["expected_range"]["low_gbs"] == round(400 * LOW, 2)
    assert "expected %.1f-%.1f GB/s for 8 rails of 400 Gb/s" % (400 * LOW, 400 * HIGH) in verdict["reason"]
    assert "nccl-tests-290-ndr" in verdict["reason"]
    # small messages are latency-bound: busbw grows with the size
    busbw = [row["out_of_place"]["busbw_gbs"] for row in parsed["rows"]]
    assert busbw == sorted(busbw) and busbw[0] < 100


def test_a_node_with_a_rail_down_carries_seven_eighths(kube):
    """One rail of eight down on one node: that node has 7 NETs (src/transport/net_ib/init.cc skips the port), so it
    and through the minimum over ranks (src/init.cc) the whole job carry 7 x 400 Gb/s, inside the calibrated range."""
    status, degraded = run(kube, "d", ["rail-ib-0", "rail-ib-2"])
    assert status == "Succeeded"
    low = nccl_tests_output.parse_nccl_tests_output(degraded)
    verdict = nccl_tests_output.evaluate_allreduce(low, [400] * 8)
    assert 0.875 * LOW <= verdict["fraction"] <= 0.875 * HIGH + 0.001, verdict
    # the same rail left out of NCCL_IB_HCA on two healthy nodes: the same bound, not less
    _status, unlisted = run(kube, "u", ["rail-ib-0", "rail-ib-1"], hcas=[h for h in HCAS if h != "mlx5_3"])
    fraction = nccl_tests_output.evaluate_allreduce(nccl_tests_output.parse_nccl_tests_output(unlisted), [400] * 8)["fraction"]
    assert 0.875 * LOW <= fraction <= 0.875 * HIGH + 0.001


def test_node_bandwidth_is_the_sum_of_its_active_rails(kube):
    """The per-node bound on its own: channels share one speed and each NET carries floor(its speed / that speed)."""
    from simulator.controllers.nccl_pods import node_bus_gbps

    profile = {node.name: node for node in kube.sim.profile.workers}
    assert node_bus_gbps(profile["rail-ib-0"], HCAS, 8) == 3200
    assert node_bus_gbps(profile["rail-ib-2"], HCAS, 8) == 2800
    # one GPU uses the rail beside it; when that rail is down (mlx5_3 listed first) it falls back to another one
    assert node_bus_gbps(profile["rail-ib-2"], HCAS, 1) == 400
    assert node_bus_gbps(profile["rail-ib-2"], ["mlx5_3", "mlx5_0"], 1) == 400
    assert node_bus_gbps(profile["rail-ib-2"], ["mlx5_3"], 8) == 0.0


def test_faults_and_a_single_node(kube):
    kube.sim.faults.operator_faults["nccl"] = "wrong_results"
    _status, log = run(kube, "w", ["rail-ib-0", "rail-ib-1"], max_bytes="64M")
    parsed = nccl_tests_output.parse_nccl_tests_output(log)
    assert parsed["out_of_bounds"] == 1 and parsed["wrong_rows"][0]["size_bytes"] == 64 << 20
    kube.sim.faults.operator_faults["nccl"] = "launch_failure"
    status, log = run(kube, "f", ["rail-ib-0", "rail-ib-1"])
    assert status == "Failed"
    with pytest.raises(nccl_tests_output.NcclTestsParseError, match="Test NCCL failure"):
        nccl_tests_output.parse_nccl_tests_output(log)
    kube.sim.faults.operator_faults.pop("nccl")
    _status, log = run(kube, "s", ["rail-ib-0"], max_bytes="1G")
    single = nccl_tests_output.parse_nccl_tests_output(log)
    assert single["ranks"] == 8 and len(single["hosts"]) == 1
    # one node: NVLink-bound (18 links x 25 GB/s at 85 %), not rail-bound
    assert single["largest_message_row"]["out_of_place"]["busbw_gbs"] > 300


def test_perftest_on_the_rail_that_is_down_cannot_connect(kube):
    """The same profile's per-rail ib_write_bw (perftest pods): rail 3 of rail-ib-2 is down, so its client fails to
    connect while rail 2 of the same node passes."""
    from ansible_collections.gpudirect.openshift.plugins.module_utils.verify import bandwidth_plan as bt

    settings = bt.settings_from(**{"configuration": {}, "method": "shared_device", "fabric": "infiniband", "image": "registry.example/perftest",
                                   "network": "railnet", "resources": {"rdma/unused": 1}, "gpu_resource": "", "rails": "first", "namespace": "default",
                                   "start_timeout": 60, "run_timeout": 60, "gpu_rdma_mode": "none"})
    kube.create({"apiVersion": "k8s.cni.cncf.io/v1", "kind": "NetworkAttachmentDefinition", "metadata": {"name": "railnet", "namespace": "default"},
                 "spec": {"config": '{"cniVersion": "0.3.1", "type": "ipoib", "master": "ibp60s0", '
                                    '"ipam": {"type": "whereabouts", "range": "192.168.50.0/24"}}'}})
    outcomes = {}
    for index, device in enumerate(("mlx5_2", "mlx5_3")):
        server = bt.pod_manifest(settings, "r%d" % index, 0, "server", "rail-ib-0", rdma_device=device)
        server["spec"]["containers"][0]["resources"] = {}  # no operators in this cluster: nothing allocatable
        kube.create(server)
        name = server["metadata"]["name"]
        wait(lambda n=name: phase(kube, n) == "Running", what="server running")
        ip = bt.secondary_ips(kube.get("v1", "Pod", name, "default"), "railnet", "default")[0]
        client = bt.pod_manifest(settings, "r%d" % index, 0, "client", "rail-ib-2", rdma_device=device, server_ip=ip)
        client["spec"]["containers"][0]["resources"] = {}
        kube.create(client)
        wait(lambda n=client["metadata"]["name"]: phase(kube, n) in ("Succeeded", "Failed"), what="client done")
        outcomes[device] = (phase(kube, client["metadata"]["name"]), kube.core.read_namespaced_pod_log(client["metadata"]["name"], "default"))
    assert outcomes["mlx5_2"][0] == "Succeeded"
    assert outcomes["mlx5_3"][0] == "Failed" and "Unable to init the socket connection" in outcomes["mlx5_3"][1]
