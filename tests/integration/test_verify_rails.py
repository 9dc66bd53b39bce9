"""verify.yml with several rails (issue 13): each rail is tested with its own network, RDMA resource and NIC.

site.yml configures shared device RoCE with two rails on the roce-lab profile (ens1f0np0/mlx5_0 and
ens2f0np0/mlx5_1 on both workers, one resource, network and IPAM range each); verify.yml then runs one pair per
rail. A second verify.yml run with the link of the second rail's NIC down (simulator fault limited to mlx5_1)
fails and names that rail: its network and its NIC.
"""

import json

import pytest

from site_support import FAST_VERIFY, converge_and_wait_for, objects, run_playbook
from test_verify import PodRecorder, nic_ports  # one copy of the port facts and the pod recorder

# One worker runs this module: its module fixture (a converged two-rail cluster) would be set up again on each xdist worker.
pytestmark = pytest.mark.xdist_group("verify_rails")


RAILS = {"gpudirect_rdma_method": "shared_device", "gpudirect_rdma_fabric": "roce",
         "gpudirect_rdma_nic_interfaces": ["ens1f0np0", "ens2f0np0"], "gpudirect_rdma_resource_names": ["rail_a", "rail_b"],
         "gpudirect_rdma_ipam_ranges": ["192.168.10.0/24", "192.168.11.0/24"]}
WORKERS = ("worker-0", "worker-1")
# network, resource, NIC and RDMA device of each rail, in rail order
# The pods run in verify's own namespace and attach the networks of "default" by <namespace>/<name> (issue 34).
EXPECTED = [("default/rdmashared-net-1", "rdma/rail_a", "ens1f0np0", "mlx5_0", "192.168.10."),
            ("default/rdmashared-net-2", "rdma/rail_b", "ens2f0np0", "mlx5_1", "192.168.11.")]
FAST = {"perftest_start_seconds": 0.02, "perftest_run_seconds": 0.05}


def verify(sim, tmp_path, name):
    variables = dict(RAILS, **FAST_VERIFY, verify_nic_ports=nic_ports(sim),
                     verify_artifacts_dir=str(tmp_path / name))
    path = tmp_path / ("%s.json" % name)
    path.write_text(json.dumps(variables))
    run = run_playbook(sim, "-e", "@%s" % path, playbook="playbooks/verify.yml")
    results = tmp_path / name / "results.json"
    assert results.exists(), run.output[-6000:]
    return run, json.loads(results.read_text())


@pytest.fixture(scope="module")
def two_rails(crd_dir, tmp_path_factory):
    from simulator import SimulatedCluster

    tmp = tmp_path_factory.mktemp("rails")
    sim = SimulatedCluster(profile="roce-lab", crd_dir=crd_dir, config=dict(FAST)).start()
    try:
        # The device plugin advertises each rail's resource once the NicClusterPolicy is ready.
        converge_and_wait_for(sim, tmp, RAILS, ("rdma/rail_a", "rdma/rail_b", "nvidia.com/gpu"), WORKERS)
        recorder = PodRecorder(sim)
        passing = verify(sim, tmp, "pass")
        passing_pods = list(recorder.pods)
        passing_events = list(recorder.events)
        # The second rail's NIC loses its link: only pods using mlx5_1 fail.
        sim.faults.operator_faults["perftest"] = {"fault": "link_down", "devices": ["mlx5_1"]}
        failing = verify(sim, tmp, "fail")
        yield {"sim": sim, "tmp": tmp, "pass": passing, "fail": failing, "passing_pods": passing_pods,
               "passing_events": passing_events}
    finally:
        sim.stop()
    assert not sim.errors, sim.errors


def test_site_configured_two_rails(two_rails):
    sim = two_rails["sim"]
    nads = {n["metadata"]["name"] for n in objects(sim, "k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition")}
    assert {"rdmashared-net-1", "rdmashared-net-2"} <= nads


def test_each_rail_is_tested_with_its_own_network_resource_and_device(two_rails):
    run, results = two_rails["pass"]
    assert run.rc == 0, run.output[-6000:]
    assert results["passed"] is True
    pairs = results["pairs"]
    assert len(pairs) == 2 and [p["verdict"] for p in pairs] == ["passed", "passed"]
    for pair, (network, resource, nic, device, prefix) in zip(pairs, EXPECTED):
        assert pair["rail"]["network"] == network and pair["rail"]["resource"] == resource, pair["rail"]
        assert pair["rail"]["interfaces"] == [nic] and pair["rail"]["nic"] == nic
        assert pair["server_device"] == pair["client_device"] == device
        assert pair["server_ip"].startswith(prefix)
        assert (pair["server_node"], pair["client_node"]) == WORKERS
    assert [r["network"] for r in results["summary"]["rails"]] == ["default/rdmashared-net-1", "default/rdmashared-net-2"]
    assert all(r["passed"] == r["pairs"] == 1 for r in results["summary"]["rails"])
    # Four pods, each asking for its own rail's resource only (plus the GPU) and attaching that rail's network.
    pods = two_rails["passing_pods"]
    assert len(pods) == 4
    seen = set()
    for pod in pods:
        container = pod["spec"]["containers"][0]
        network = pod["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"]
        device = dict((e["name"], e["value"]) for e in container["env"])["RDMA_DEVICE"]
        rail = [r for r in EXPECTED if r[0] == network]
        assert len(rail) == 1, network
        _network, resource, _nic, expected_device, _prefix = rail[0]
        assert container["resources"]["requests"] == {resource: "1", "nvidia.com/gpu": "1"} == container["resources"]["limits"]
        assert device == expected_device
        seen.add((network, pod["metadata"]["labels"]["gpudirect.openshift/verify-role"]))
    assert len(seen) == 4
    # The two rails ran together (each its own NIC and GPU, buffers in GPU memory): one round, and the store added
    # all four pods before it deleted any
    assert [p["round"] for p in pairs] == [0, 0] and [r["pairs"] for r in results["rounds"]] == [[0, 1]]
    events = two_rails["passing_events"]
    first_delete = next(i for i, (etype, _name) in enumerate(events) if etype == "DELETED")
    assert sorted(name for etype, name in events[:first_delete] if etype == "ADDED") == sorted(p["metadata"]["name"] for p in pods)
    report = (two_rails["tmp"] / "pass" / "report.md").read_text()
    assert "rdmashared-net-1" in report and "rdmashared-net-2" in report and "ens2f0np0" in report
    html = (two_rails["tmp"] / "pass" / "report.html").read_text()
    assert "rdmashared-net-2" in html
    assert sorted(p.name for p in (two_rails["tmp"] / "pass").glob("pair-*-client.log")) == ["pair-0-client.log", "pair-1-client.log"]


def test_the_weak_rail_is_named_in_the_failure(two_rails):
    run, results = two_rails["fail"]
    assert run.rc != 0
    assert results["passed"] is False
    first, second = results["pairs"]
    assert first["verdict"] == "passed" and first["rail"]["network"] == "default/rdmashared-net-1"
    assert second["verdict"] == "failed" and second["diagnosis"]["code"] == "link_down"
    message = results["message"]
    assert "rdmashared-net-2" in message and "ens2f0np0" in message, message
    assert "rdmashared-net-1" not in message, message  # the healthy rail is not blamed
    assert [r["all_passed"] for r in results["summary"]["rails"]] == [True, False]
    assert "rdmashared-net-2" in run.output
    sim = two_rails["sim"]
    assert sim.store.list(sim.type("v1", "Pod"), None, label_selector="app.kubernetes.io/component=gpudirect-verify")[0] == []
