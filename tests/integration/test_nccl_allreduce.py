"""nccl_allreduce (issue 17) through ansible-playbook against the simulator's rail profile: workers and launcher
as an MPIJob lays them out, all_reduce_perf's output parsed and judged against 8 rails of 400 Gb/s; the run with
the node whose rail 3 is down fails and names that rail (node, NIC, GPU) from the facts; no pod is left."""

from simulator.controllers.facts_pods import profile_facts
from site_support import objects, run_test_playbook

HCAS = ["mlx5_%d" % index for index in range(8)]


def test_allreduce_passes_on_healthy_rails_and_names_the_degraded_one(sim_factory, tmp_path):
    sim = sim_factory(profile="rail-ib-lab", config={"perftest_start_seconds": 0.02, "nccl_run_seconds": 0.05})
    ports, affinity = profile_facts(sim.profile.workers)
    common = {"image": "registry.example/nccl-tests-mpi:2.19.6", "gpu_resource": "", "hcas": HCAS, "rail_rates_gbps": [400] * 8,
              "min_bytes": "1M", "max_bytes": "8G", "nic_ports": ports, "gpu_nic_affinity": affinity, "start_timeout": 60, "run_timeout": 60}
    steps = [dict(common, nodes=["rail-ib-0", "rail-ib-1"]), dict(common, nodes=["rail-ib-0", "rail-ib-2"])]
    healthy, degraded = run_test_playbook(sim, tmp_path, "nccl_allreduce.yml", {"steps": steps})
    assert healthy["passed"] is True and healthy["code"] == "passed", healthy
    assert healthy["nodes"] == ["rail-ib-0", "rail-ib-1"] and healthy["expected_busbw_gbs"] == 400.0
    assert 360 < healthy["measured_busbw_gbs"] < 400 and healthy["suspects"] == []
    # judged against published real runs (issue 36): the range for 8 rails of 400 Gb/s and its rows are named
    assert healthy["threshold_source"] == "calibrated" and healthy["expected_range"]["low_gbs"] == 320.0
    assert "expected 320.0-390.4 GB/s for 8 rails of 400 Gb/s" in healthy["reason"] and "nccl-tests-290-ndr" in healthy["reason"]
    assert degraded["passed"] is False and degraded["code"] == "rail_down", degraded
    assert 320 < degraded["measured_busbw_gbs"] < 340  # 7 of the 8 rails
    assert degraded["suspects"] == [{"rail": 3, "node": "rail-ib-2", "nic": "ibp94s0", "rdma_device": "mlx5_3", "gpu": 3,
                                     "problem": "link DOWN"}]
    assert "rail 3 on rail-ib-2: NIC ibp94s0 (GPU 3) link DOWN" in degraded["msg"]
    assert "<svg" in degraded["report_html"] and "ibp94s0" in degraded["report_html"] and "FAILED" in degraded["report_html"]
    assert "Expected for this hardware" in degraded["report_html"] and "https://github.com/NVIDIA/nccl-tests/issues/290" in degraded["report_html"]
    left = [p["metadata"]["name"] for p in objects(sim, "v1", "Pod")
            if (p["metadata"].get("labels") or {}).get("app.kubernetes.io/component") == "gpudirect-nccl"]
    assert left == []
