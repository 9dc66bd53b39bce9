"""NIC variables that contradict what the cluster reports fail in preflight, before any write (fail-fast issue,
point 1): an interface or a PCI address no node has, a fabric the port does not run. (A VF count above what a
Mellanox NIC reports is not a contradiction: the SR-IOV operator rewrites the firmware; see
tests/unit/plugins/module_utils/render/test_reported.py for the VF limits.) What the nodes
have comes from the SR-IOV operator's SriovNetworkNodeState objects, so the checks apply once that operator runs (a
re-run, or a cluster prepared before)."""

import pytest

from site_support import example, run_playbook

# One worker runs this module: its module fixture (a configured cluster) would be set up again on each xdist worker.
pytestmark = pytest.mark.xdist_group("input_vs_cluster")


CASES = [
    # (example, extra variables, expected problem)
    ("shared_device/roce", ["-e", '{"gpudirect_rdma_nic_interfaces": ["eth99"], "gpudirect_rdma_macvlan_master": "eth99"}'],
     "gpudirect_rdma_nic_interfaces: eth99 is not an interface of any node (the SR-IOV operator reports "),
    # IPoIB over an Ethernet port (the example's MachineConfig and udev rules left out).
    ("shared_device/infiniband", ["-e", '{"gpudirect_rdma_nic_interfaces": ["ens8f0np0"], "gpudirect_rdma_apply_machineconfigs": false, '
                                        '"gpudirect_rdma_machineconfigs": [], "gpudirect_rdma_udev_rules": []}'],
     "gpudirect_rdma_fabric: infiniband, but ens8f0np0 (0000:a0:00.0) on "),
    ("sriov_legacy/roce", ["-e", '{"gpudirect_rdma_nic_interfaces": [], "gpudirect_rdma_nic_pci_addresses": ["0000:ff:00.0"]}'],
     "gpudirect_rdma_nic_pci_addresses: 0000:ff:00.0 is not a NIC of any node (the SR-IOV operator reports "),
]


@pytest.fixture(scope="module")
def configured(crd_dir):
    from simulator import SimulatedCluster

    sim = SimulatedCluster(profile="mixed-lab", crd_dir=crd_dir).start()
    try:
        run = run_playbook(sim, "-e", "@" + example("shared_device/roce"))
        assert run.rc == 0, run.output[-4000:]
        yield sim
    finally:
        sim.stop()
    assert not sim.errors, sim.errors


@pytest.mark.parametrize("name,extra,problem", CASES, ids=["unknown-interface", "wrong-link-layer", "unknown-pci-address"])
def test_contradicting_the_cluster_fails_in_preflight_without_a_write(configured, name, extra, problem):
    run = run_playbook(configured, "-e", "@" + example(name), *extra)
    assert run.rc != 0, run.output[-4000:]
    assert problem in run.output.replace("\n", " "), run.output[-4000:]
    assert "Preflight found" in run.output
    assert run.writes == 0 and run.dry_run_writes == 0
