"""Issue 31 point 6: check mode names every drain and reboot a converge would cause, and a real run stops before any
write when the change drains or reboots nodes that already carry a configuration, unless
gpudirect_allow_disruption=true. One converged cluster (sriov_legacy/roce on mixed-lab) serves every case."""

import pytest

from site_support import example, objects, run_playbook

# One worker runs this module: its module fixture (a converged cluster) would be set up again on each xdist worker.
pytestmark = pytest.mark.xdist_group("disruption")


SRIOV = example("sriov_legacy/roce")
POLICY = "SriovNetworkNodePolicy openshift-sriov-network-operator/sriov-legacy-policy"


@pytest.fixture(scope="module")
def converged(crd_dir):
    from simulator import SimulatedCluster
    with SimulatedCluster(profile="mixed-lab", crd_dir=crd_dir) as sim:
        yield _converge(sim)
        assert not sim.errors, sim.errors


def _converge(sim):
    first = run_playbook(sim, "-e", "@" + SRIOV)
    assert first.rc == 0, first.output[-4000:]
    # A first configuration reboots too (the policy's VF count is new), and needs no confirmation.
    assert "A converge drains or reboots nodes" in first.output, first.output[-4000:]
    return sim


def vf_nodes(sim):
    """The nodes whose SR-IOV node state reports the example's port with its VFs."""
    return sorted(s["metadata"]["name"] for s in objects(sim, "sriovnetwork.openshift.io/v1", "SriovNetworkNodeState")
                  if any(i.get("name") == "ens8f0np0" and int(i.get("numVfs") or 0) == 8
                         for i in (s.get("status") or {}).get("interfaces") or []))


def worker_nodes(sim):
    """The nodes of the worker MachineConfigPool (and of the SR-IOV pool config on the worker role)."""
    return sorted(n["metadata"]["name"] for n in objects(sim, "v1", "Node")
                  if "node-role.kubernetes.io/worker" in (n["metadata"].get("labels") or {}))


def flat(output):
    """The output with the YAML callback's line wrapping undone."""
    return " ".join(output.split())


def disruption_lines(output):
    output = flat(output)
    start = output.find("A converge drains or reboots nodes")
    assert start >= 0, output[-4000:]
    return output[start:start + 6000]


# Each case's variables; the first runs a whole check-mode converge, the others stop after preflight (which is where
# the list is printed, before any role runs) to keep the test short.
@pytest.mark.parametrize("case, variables, expected, nodes_of", [
    ("num_vfs", ["-e", "@" + SRIOV, "-e", "gpudirect_rdma_num_vfs=4"],
     [POLICY + " is changed", "drain", "numVfs 8 -> 4"], vf_nodes),
    ("rdma_mode", ["-e", "@" + SRIOV, "-e", "gpudirect_rdma_sriov_pool_rdma_mode=exclusive", "--tags", "preflight"],
     ["SriovNetworkPoolConfig openshift-sriov-network-operator/worker is created", "drain and reboot",
      "RDMA subsystem mode shared -> exclusive"], worker_nodes),
    ("machineconfig", ["-e", "@" + SRIOV, "-e", '{"gpudirect_rdma_apply_machineconfigs": true, "gpudirect_rdma_machineconfigs": ["irdma_blacklist"]}',
                       "--tags", "preflight"],
     ["MachineConfig 99-worker-gpudirect-rdma is created: pool worker (", "drain and reboot",
      "the machine-config daemon drains and reboots each node of pool worker"], worker_nodes),
    ("method_switch", ["-e", "@" + example("shared_device/roce"), "--tags", "preflight"],
     [POLICY + " is deleted", "drain", "VFs are removed"], vf_nodes),
])
def test_check_mode_names_each_drain_and_reboot(converged, case, variables, expected, nodes_of):
    sim = converged
    run = run_playbook(sim, *variables, "--check", "--diff")
    assert run.rc == 0, (case, run.output[-4000:])
    assert run.writes == 0
    text = disruption_lines(run.output)
    for part in expected:
        assert part in text, (case, part, text)
    nodes = nodes_of(sim)
    assert nodes and all(node in text for node in nodes), (case, nodes, text)


def test_a_real_run_stops_before_any_write_when_disruption_is_not_allowed(converged):
    sim = converged
    refused = run_playbook(sim, "-e", "@" + SRIOV, "-e", "gpudirect_rdma_num_vfs=4", "-e", "gpudirect_allow_disruption=false")
    assert refused.rc != 0
    assert refused.writes == 0, "the run wrote before it asked for the confirmation"
    output = flat(refused.output)
    assert "Nothing was written: this change drains or reboots nodes that already carry" in output, output[-4000:]
    assert "gpudirect_allow_disruption=true" in output and POLICY + " is changed" in output
    (policy,) = objects(sim, "sriovnetwork.openshift.io/v1", "SriovNetworkNodePolicy")
    assert policy["spec"]["numVfs"] == 8

    # A re-run that changes nothing disrupts nothing and needs no confirmation.
    again = run_playbook(sim, "-e", "@" + SRIOV)
    assert again.rc == 0 and again.writes == 0, again.output[-4000:]
    assert "A converge drains or reboots nodes" not in again.output
