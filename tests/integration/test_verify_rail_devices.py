"""verify.yml measures each rail on that rail's own NIC (issue 31 item 2).

On rail-ib-lab (8 InfiniBand rail NICs per worker; on rail-ib-2 the link of rail 3, ibp94s0 / mlx5_3, is down) with
the 8 rail NICs given by hand, verify.yml gets no port facts from site.yml. It used to leave the device to the pods,
which all took the first active port (mlx5_0): every rail "passed" on mlx5_0 and the down rail was reported as
link_rate_unknown with a bandwidth measured on another NIC. Now the role collects the facts, each rail's pods are
told their own device, the report names the device of every row and the down rail fails as link_down, naming it.
"""

import json

import pytest

from site_support import FAST_VERIFY, converge_and_wait_for, run_playbook

# One worker runs this module: its module fixture (a converged rail cluster) would be set up again on each xdist worker.
pytestmark = pytest.mark.xdist_group("verify_rail_devices")


NICS = ["ibp26s0", "ibp44s0", "ibp60s0", "ibp94s0", "ibp156s0", "ibp172s0", "ibp188s0", "ibp220s0"]
RAILS = {"gpudirect_rdma_method": "shared_device", "gpudirect_rdma_fabric": "infiniband", "gpudirect_rdma_nic_interfaces": NICS,
         "gpudirect_rdma_ipam_range": "192.168.0.0/16", "gpudirect_rdma_resource_names": ["rail%d" % i for i in range(8)],
         "gpudirect_rdma_network_names": ["rail%d" % i for i in range(8)]}
# rail-ib-2's rail 3 is down (simulator/profiles/rail-ib-lab.yaml): one pair per rail, rail-ib-1 -> rail-ib-2.
NODES = ["rail-ib-1", "rail-ib-2"]
FAST = {"perftest_start_seconds": 0.02, "perftest_run_seconds": 0.05}


@pytest.fixture(scope="module")
def rail_run(crd_dir, tmp_path_factory):
    from simulator import SimulatedCluster

    tmp = tmp_path_factory.mktemp("rail-devices")
    sim = SimulatedCluster(profile="rail-ib-lab", crd_dir=crd_dir, config=dict(FAST)).start()
    try:
        converge_and_wait_for(sim, tmp, RAILS, ["rdma/rail%d" % i for i in range(8)] + ["nvidia.com/gpu"], NODES)
        # Nothing about ports: verify.yml must find each rail's device itself.
        verify_vars = tmp / "verify.json"
        verify_vars.write_text(json.dumps(dict(
            RAILS, **FAST_VERIFY, verify_nodes=NODES, verify_artifacts_dir=str(tmp / "verify"),
            hardware_facts_report_dir=str(tmp / "facts"))))
        run = run_playbook(sim, "-e", "@%s" % verify_vars, playbook="playbooks/verify.yml")
        results = tmp / "verify" / "results.json"
        assert results.exists(), run.output[-6000:]
        yield {"run": run, "results": json.loads(results.read_text()), "report": (tmp / "verify" / "report.md").read_text()}
    finally:
        sim.stop()
    assert not sim.errors, sim.errors


def test_each_rail_is_measured_on_its_own_device(rail_run):
    pairs = rail_run["results"]["pairs"]
    assert [p["rail"]["index"] for p in pairs] == list(range(8))
    for pair in pairs:
        device = "mlx5_%d" % pair["rail"]["index"]
        assert (pair["server_device"], pair["client_device"]) == (device, device), pair
        assert pair["rail"]["interfaces"] == [NICS[pair["rail"]["index"]]]
    assert [p["verdict"] for p in pairs] == ["passed"] * 3 + ["failed"] + ["passed"] * 4
    # Every report row names the device it measured.
    rows = [line for line in rail_run["report"].splitlines() if line.startswith("| ") and ": default/rail" in line.split("|")[1]]
    assert len(rows) == 8
    for index, row in enumerate(rows):
        assert "| mlx5_%d / mlx5_%d |" % (index, index) in row, row


def test_each_rail_row_names_its_path_pcie_links_and_expected_range(rail_run):
    """Issue 31 item 10 / issue 36: the pod's GPU (18:00, NUMA 0) meets rail 0's NIC on one switch (PIX), rails 1-3 on
    NUMA 0 through the CPU (NODE), rails 4-7 across the sockets (SYS); H100 and ConnectX-7 are PCIe Gen5 x16."""
    pairs = [p for p in rail_run["results"]["pairs"] if p["verdict"] == "passed"]
    paths = dict((p["rail"]["index"], p["path"]["client"]) for p in rail_run["results"]["pairs"])
    assert paths == {0: "PIX", 1: "NODE", 2: "NODE", 3: "NODE", 4: "SYS", 5: "SYS", 6: "SYS", 7: "SYS"}
    for pair in pairs:
        expectation = pair["expected"]
        assert pair["pcie"]["client"] == {"gpu": "PCIe Gen5 x16 (32 GT/s)", "nic": "PCIe Gen5 x16 (32 GT/s)"}
        assert expectation["bound_gbps"] == 400.0 and expectation["low_gbps"] <= pair["bandwidth_gbps"] <= expectation["high_gbps"]
        if pair["path"]["client"] == "SYS":  # across the sockets: far below the link, and the verdict says why
            assert pair["bandwidth_gbps"] < 200 and "perftest-241" in [s["key"] for s in expectation["sources"]]
            assert "(SYS)" in pair["reason"]
    report = rail_run["report"]
    assert "## Expected ranges" in report and "https://github.com/linux-rdma/perftest/issues/241" in report
    assert "| 0: default/rail0 (ibp26s0) | rail-ib-1 | rail-ib-2 | mlx5_0 / mlx5_0 | PIX | PCIe Gen5 x16 (32 GT/s) / PCIe Gen5 x16 (32 GT/s) | 400 |" in report


def test_the_down_rail_fails_naming_its_rail_and_nic(rail_run):
    run, results = rail_run["run"], rail_run["results"]
    assert run.rc != 0
    down = results["pairs"][3]
    assert down["diagnosis"]["code"] == "link_down" and down["bandwidth_gbps"] is None
    assert "rail-ib-2 ibp94s0 (mlx5_3) is DOWN in the facts" in down["diagnosis"]["message"]
    message = results["message"]
    assert message.startswith("GPUDirect RDMA bandwidth test failed for 1 of 8 pair(s), on 1 of 8 rail(s): "
                              "rail 3 (network default/rail3, resource rdma/rail3, NIC ibp94s0): rail-ib-1 -> rail-ib-2: link_down"), message
    assert [r["all_passed"] for r in results["summary"]["rails"]] == [True] * 3 + [False] + [True] * 4
