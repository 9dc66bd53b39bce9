"""Invalid input makes site.yml stop before any write, with a message that names the variable.

Each case changes a valid shared-device/RoCE configuration (None removes a variable) and runs the real
playbook against the simulator with the result as extra vars, as a user or an AWX survey would.
"""

import json

import pytest

from site_support import run_playbook

# One worker runs this module: its module fixtures (simulated clusters) would be set up again on each xdist worker.
pytestmark = pytest.mark.xdist_group("bad_input")


BASE = {
    "gpudirect_rdma_method": "shared_device",
    "gpudirect_rdma_fabric": "roce",
    "gpudirect_rdma_nic_interfaces": ["ens8f0np0"],
    "gpudirect_rdma_macvlan_mode": "bridge",
    "gpudirect_rdma_rdma_hca_max": 63,
    "gpudirect_rdma_ipam_range": "192.168.2.0/24",
    "gpudirect_rdma_ipam_gateway": "192.168.2.1",
}

ROCE_PORT = {"node": "w0", "pci_address": "0000:19:00.0", "device_id": "101b", "vendor_id": "15b3", "netdev": "ens8f0np0",
             "rdma_device": "mlx5_0", "link_layer": "Ethernet", "total_vfs": 8, "numa_node": 0}

E810_PORT = {"node": "w0", "pci_address": "0000:4b:00.0", "device_id": "159b", "vendor_id": "8086", "netdev": "eno8303",
             "rdma_device": "irdma0", "link_layer": "Ethernet", "total_vfs": 8, "numa_node": 0}

CASES = [
    # (case id, extra vars, variable the message must name)
    ("unknown-method", {"gpudirect_rdma_method": "rdma_magic"}, "gpudirect_rdma_method"),
    ("unknown-fabric", {"gpudirect_rdma_fabric": "omnipath"}, "gpudirect_rdma_fabric"),
    ("infiniband-with-macvlan-options", {"gpudirect_rdma_fabric": "infiniband", "gpudirect_rdma_nic_interfaces": ["ibs2f0"],
                                         "gpudirect_rdma_macvlan_mode": "private"},
     "gpudirect_rdma_macvlan_mode"),
    ("roce-with-ipoib-options", {"gpudirect_rdma_ipoib_master": "ibs2f0"}, "gpudirect_rdma_ipoib_master"),
    # An Intel port cannot exceed totalvfs (a Mellanox one can: the SR-IOV operator rewrites its firmware).
    ("num-vfs-above-total-vfs", {"gpudirect_rdma_method": "sriov_legacy", "gpudirect_rdma_num_vfs": 16,
                                 "gpudirect_rdma_rdma_hca_max": None, "gpudirect_rdma_macvlan_mode": None,
                                 "gpudirect_rdma_nic_interfaces": ["eno8303"], "gpudirect_rdma_nic_facts": [E810_PORT]},
     "gpudirect_rdma_num_vfs"),
    ("sriov-without-vfs", {"gpudirect_rdma_method": "sriov_legacy", "gpudirect_rdma_num_vfs": 0,
                           "gpudirect_rdma_rdma_hca_max": None, "gpudirect_rdma_macvlan_mode": None}, "gpudirect_rdma_num_vfs"),
    ("host-device-with-vfs", {"gpudirect_rdma_method": "host_device", "gpudirect_rdma_num_vfs": 4,
                              "gpudirect_rdma_rdma_hca_max": None, "gpudirect_rdma_macvlan_mode": None}, "gpudirect_rdma_num_vfs"),
    ("malformed-range", {"gpudirect_rdma_ipam_range": "192.168.2.0/33"}, "gpudirect_rdma_ipam_range"),
    ("range-not-an-address", {"gpudirect_rdma_ipam_range": "rdma-net"}, "gpudirect_rdma_ipam_range"),
    ("overlapping-excludes", {"gpudirect_rdma_ipam_exclude": ["192.168.2.0/28", "192.168.2.8/29"]}, "gpudirect_rdma_ipam_exclude"),
    ("exclude-outside-range", {"gpudirect_rdma_ipam_exclude": ["10.0.0.0/24"]}, "gpudirect_rdma_ipam_exclude"),
    ("gateway-outside-range", {"gpudirect_rdma_ipam_gateway": "192.168.9.1"}, "gpudirect_rdma_ipam_gateway"),
    ("range-overlaps-pod-network", {"gpudirect_rdma_ipam_range": "10.128.4.0/24", "gpudirect_rdma_ipam_gateway": None},
     "gpudirect_rdma_ipam_range"),
    ("roce-mtu-too-large", {"gpudirect_rdma_mtu": 10000}, "gpudirect_rdma_mtu"),
    ("mtu-on-ipoib-network", {"gpudirect_rdma_fabric": "infiniband", "gpudirect_rdma_nic_interfaces": ["ibs2f0"],
                              "gpudirect_rdma_macvlan_mode": None, "gpudirect_rdma_mtu": 9000}, "gpudirect_rdma_mtu"),
    ("rdma-hca-max-zero", {"gpudirect_rdma_rdma_hca_max": 0}, "gpudirect_rdma_rdma_hca_max"),
    ("no-nics-selected", {"gpudirect_rdma_nic_interfaces": []}, "gpudirect_rdma_nic_interfaces"),
    ("bad-resource-name", {"gpudirect_rdma_resource_name": "rdma-shared!"}, "gpudirect_rdma_resource_name"),
    ("bad-namespace", {"gpudirect_rdma_network_namespaces": ["Bad_Namespace"]}, "gpudirect_rdma_network_namespaces"),
    ("ipoib-on-ethernet-only-nic", {"gpudirect_rdma_fabric": "infiniband", "gpudirect_rdma_nic_interfaces": [],
                                    "gpudirect_rdma_macvlan_mode": None, "gpudirect_rdma_nic_selection": "auto",
                                    "gpudirect_rdma_nic_facts": [ROCE_PORT]}, "gpudirect_rdma_nic_facts"),
    ("machineconfigs-without-opt-in", {"gpudirect_rdma_machineconfigs": ["irdma_blacklist"]}, "gpudirect_rdma_apply_machineconfigs"),
    ("unknown-gpu-rdma-mode", {"gpudirect_rdma_gpu_rdma_mode": "magic"}, "gpudirect_rdma_gpu_rdma_mode"),
    ("host-mofed-with-dmabuf", {"gpudirect_rdma_gpu_use_host_mofed": True}, "gpudirect_rdma_gpu_use_host_mofed"),
    ("misspelt-variable", {"gpudirect_rdma_ipam_rnage": "192.168.2.0/24"}, "gpudirect_rdma_ipam_rnage"),
    ("wrong-type", {"gpudirect_rdma_rdma_hca_max": "many"}, "gpudirect_rdma_rdma_hca_max"),
    # Wrong types, unknown values, contradictions, names no node can have, huge values (issue 18 acceptance).
    ("method-not-a-string", {"gpudirect_rdma_method": 5}, "gpudirect_rdma_method"),
    ("fabric-as-a-list", {"gpudirect_rdma_fabric": ["roce"]}, "gpudirect_rdma_fabric"),
    ("interface-name-too-long", {"gpudirect_rdma_nic_interfaces": ["ens8f0np0ens8f0np0"]}, "gpudirect_rdma_nic_interfaces"),
    ("interface-name-with-quote", {"gpudirect_rdma_nic_interfaces": ['ens8f0np0",RUN+="/bin/sh']}, "gpudirect_rdma_nic_interfaces"),
    ("macvlan-master-with-quote", {"gpudirect_rdma_macvlan_master": 'x","y{}'}, "gpudirect_rdma_macvlan_master"),
    ("pci-address-malformed", {"gpudirect_rdma_method": "host_device", "gpudirect_rdma_nic_interfaces": [],
                               "gpudirect_rdma_nic_pci_addresses": ["0000:zz:00.0"], "gpudirect_rdma_rdma_hca_max": None,
                               "gpudirect_rdma_macvlan_mode": None}, "gpudirect_rdma_nic_pci_addresses"),
    ("huge-network-name", {"gpudirect_rdma_network_name": "n" * 100000}, "gpudirect_rdma_network_name"),
    ("mtu-negative", {"gpudirect_rdma_mtu": -1}, "gpudirect_rdma_mtu"),
    ("mtu-not-a-number", {"gpudirect_rdma_mtu": "jumbo"}, "gpudirect_rdma_mtu"),
    ("vlan-out-of-range", {"gpudirect_rdma_method": "sriov_legacy", "gpudirect_rdma_num_vfs": 8, "gpudirect_rdma_vlan": 5000,
                           "gpudirect_rdma_rdma_hca_max": None, "gpudirect_rdma_macvlan_mode": None}, "gpudirect_rdma_vlan"),
    ("num-vfs-above-128", {"gpudirect_rdma_method": "sriov_legacy", "gpudirect_rdma_num_vfs": 129,
                           "gpudirect_rdma_rdma_hca_max": None, "gpudirect_rdma_macvlan_mode": None}, "gpudirect_rdma_num_vfs"),
    ("policy-priority-out-of-range", {"gpudirect_rdma_method": "sriov_legacy", "gpudirect_rdma_num_vfs": 8,
                                      "gpudirect_rdma_sriov_policy_priority": 100, "gpudirect_rdma_rdma_hca_max": None,
                                      "gpudirect_rdma_macvlan_mode": None}, "gpudirect_rdma_sriov_policy_priority"),
    ("exclude-a-number", {"gpudirect_rdma_ipam_exclude": 5}, "gpudirect_rdma_ipam_exclude"),
    ("empty-node-selector", {"gpudirect_rdma_node_selector": {}}, "gpudirect_rdma_node_selector"),
    ("unknown-image-component", {"gpudirect_rdma_image_overrides": {"ofed": {"version": "1"}}}, "gpudirect_rdma_image_overrides"),
    ("doca-version-with-space", {"gpudirect_rdma_doca_driver_version": "24.10 latest"}, "gpudirect_rdma_doca_driver_version"),
    ("gpu-repository-with-quote", {"gpudirect_rdma_gpu_driver_repository": 'a b"c'}, "gpudirect_rdma_gpu_driver_repository"),
    ("control-plane-pool", {"gpudirect_rdma_apply_machineconfigs": True, "gpudirect_rdma_machineconfigs": ["crio_memlock"],
                            "gpudirect_rdma_machineconfig_pool": "master"}, "gpudirect_rdma_machineconfig_pool"),
    # Node groups (issue 17): two groups of one name, and two groups whose networks hand out the same addresses.
    ("node-groups-duplicate-name", {"gpudirect_rdma_node_groups": [{"name": "a", "node_selector": {"group": "a"}},
                                                                   {"name": "a", "node_selector": {"group": "b"}}]},
     "gpudirect_rdma_node_groups: two groups are named a"),
    ("node-groups-overlapping-ranges", {"gpudirect_rdma_node_groups": [
        {"name": "a", "node_selector": {"group": "a"}, "ipam_range": "192.168.0.0/16"},
        {"name": "b", "node_selector": {"group": "b"}, "nic_interfaces": ["ens9f0np0"]}]}, "gpudirect_rdma_node_groups[b].ipam_range"),
]


@pytest.fixture(scope="module")
def shared_sim(crd_dir):
    from simulator import SimulatedCluster
    with SimulatedCluster(profile="mixed-lab", crd_dir=crd_dir) as sim:
        yield sim


@pytest.mark.parametrize("extra,variable", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_invalid_input_fails_before_any_write_naming_the_variable(shared_sim, extra, variable):
    variables = dict(BASE, **extra)
    run = run_playbook(shared_sim, "-e", json.dumps({k: v for k, v in variables.items() if v is not None}))
    assert run.rc != 0, run.output[-3000:]
    assert run.writes == 0 and run.dry_run_writes == 0
    failure = run.output[run.output.find("fatal:"):] if "fatal:" in run.output else run.output
    assert variable in failure, failure[-3000:]
    # One message, values cut: a 100 000-character value must not be echoed back whole.
    assert len(failure) < 40000, (len(failure), failure[:3000])  # the role argument spec Ansible prints is about 20 000


def test_at_least_forty_distinct_cases():
    assert len(CASES) >= 40 and len({c[0] for c in CASES}) == len(CASES)


# Issue 17: bad rail input on the rail profile, with auto selection from the nodes' facts given as variables (so
# site.yml starts no facts pod either). (case id, change of the facts or variables, variable named, refused or warned)
RAIL_CASES = [
    ("overlapping-rail-ranges", {"gpudirect_rdma_ipam_range": None,
                                 "gpudirect_rdma_ipam_ranges": ["192.168.%d.0/24" % i for i in range(7)] + ["192.168.0.128/25"]},
     "gpudirect_rdma_ipam_ranges", "refused"),
    ("more-rails-than-nics", {"gpudirect_rdma_resource_names": ["rail%d" % i for i in range(9)],
                              "gpudirect_rdma_network_names": ["rail%d" % i for i in range(9)]},
     "gpudirect_rdma_resource_names", "refused"),
    ("rail-nic-near-no-gpu", {"move_mlx5_5": "NODE"}, "gpudirect_rdma_gpu_nic_affinity", "warned"),
]


@pytest.fixture(scope="module")
def rail_sim(crd_dir):
    from simulator import SimulatedCluster
    with SimulatedCluster(profile="rail-ib-lab", crd_dir=crd_dir) as sim:
        yield sim


@pytest.mark.parametrize("extra,variable,outcome", [c[1:] for c in RAIL_CASES], ids=[c[0] for c in RAIL_CASES])
def test_bad_rail_input_is_refused_or_warned_before_any_write(rail_sim, extra, variable, outcome):
    from simulator.controllers.facts_pods import profile_facts
    from site_support import rail_site_variables

    ports, affinity = profile_facts(rail_sim.profile.workers)
    extra = dict(extra)
    relation = extra.pop("move_mlx5_5", None)
    if relation:  # rail 5's NIC on rail-ib-0 moved out of GPU 5's PCIe switch
        affinity = [dict(link, relation=relation) if (link["node"], link["rdma_device"]) == ("rail-ib-0", "mlx5_5") else link
                    for link in affinity]
    variables = dict(rail_site_variables("infiniband"), gpudirect_rdma_nic_facts=ports, gpudirect_rdma_gpu_nic_affinity=affinity,
                     **extra)
    args = ["-e", json.dumps({k: v for k, v in variables.items() if v is not None})]
    # the warned case in check mode: the warning comes from planning, where nothing is written in any mode
    run = run_playbook(rail_sim, *(args + (["--check"] if outcome == "warned" else [])))
    assert run.writes == 0, run.output[-3000:]
    if outcome == "refused":
        assert run.rc != 0 and run.dry_run_writes == 0, run.output[-3000:]
        failure = run.output[run.output.find("fatal:"):] if "fatal:" in run.output else run.output
        assert variable in failure, failure[-3000:]
    else:
        assert run.rc == 0, run.output[-3000:]
        text = " ".join(run.output.split())
        assert "%s: NIC ibp172s0 (0000:ac:00.0) on node rail-ib-0 is NODE to every GPU" % variable in text, run.output[-4000:]
