"""Which nodes a converge drains and reboots (render/disruption.py), with the rules of machine-config-operator
pkg/daemon/update.go and sriov-network-operator v1.6.0 (generic and mellanox plugins, api/v1/helper.go)."""

import copy

from ansible_collections.gpudirect.openshift.plugins.module_utils.render.disruption import DRAIN, REBOOT, describe, disruptions

MANAGED = {"app.kubernetes.io/managed-by": "gpudirect.openshift"}
SRIOV_NS = "openshift-sriov-network-operator"
PRUNE = ["sriovnetwork.openshift.io/v1/SriovNetworkNodePolicy", "sriovnetwork.openshift.io/v1/SriovNetworkPoolConfig"]


def node(name, *roles):
    return {"metadata": {"name": name, "labels": dict(("node-role.kubernetes.io/%s" % r, "") for r in roles)}}


NODES = [node("master-0", "master"), node("worker-0", "worker"), node("worker-1", "worker")]
WORKER_POOL = {"metadata": {"name": "worker"},
               "spec": {"nodeSelector": {"matchLabels": {"node-role.kubernetes.io/worker": ""}},
                        "machineConfigSelector": {"matchLabels": {"machineconfiguration.openshift.io/role": "worker"}}}}


def port(num_vfs, totalvfs=8, name="ens8f0np0"):
    return {"name": name, "pciAddress": "0000:a0:00.0", "vendor": "15b3", "deviceID": "101d", "linkType": "ETH",
            "numVfs": num_vfs, "totalvfs": totalvfs}


def states(num_vfs, totalvfs=8, rdma_mode="shared"):
    return [{"metadata": {"name": n}, "status": {"interfaces": [port(num_vfs, totalvfs)], "system": {"rdmaMode": rdma_mode}}}
            for n in ("worker-0", "worker-1")]


def policy(num_vfs=8, managed=True, **spec):
    body = {"resourceName": "rdma_vf", "nodeSelector": {"node-role.kubernetes.io/worker": ""}, "numVfs": num_vfs,
            "nicSelector": {"vendor": "15b3", "pfNames": ["ens8f0np0"]}, "deviceType": "netdevice", "isRdma": True,
            "linkType": "eth"}
    body.update(spec)
    return {"apiVersion": "sriovnetwork.openshift.io/v1", "kind": "SriovNetworkNodePolicy",
            "metadata": {"name": "rdma-vf-policy", "namespace": SRIOV_NS, "labels": dict(MANAGED) if managed else {}},
            "spec": body}


def pool_config(mode=None):
    spec = {"maxUnavailable": 1, "nodeSelector": {"matchLabels": {"node-role.kubernetes.io/worker": ""}}}
    if mode:
        spec["rdmaMode"] = mode
    return {"apiVersion": "sriovnetwork.openshift.io/v1", "kind": "SriovNetworkPoolConfig",
            "metadata": {"name": "worker", "namespace": SRIOV_NS, "labels": dict(MANAGED)}, "spec": spec}


def machine_config(files=("/etc/modprobe.d/blacklist-irdma.conf",)):
    return {"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfig",
            "metadata": {"name": "99-worker-gpudirect-rdma",
                         "labels": dict(MANAGED, **{"machineconfiguration.openshift.io/role": "worker"})},
            "spec": {"config": {"ignition": {"version": "3.2.0"}, "storage": {"files": [{"path": p} for p in files]}}}}


def run(manifests, live, node_states=()):
    return disruptions(manifests, live, nodes=NODES, node_states=node_states, pools=[WORKER_POOL], prune_kinds=PRUNE)


def test_a_cluster_that_already_matches_disrupts_nothing():
    found = run([policy(8), machine_config()], [policy(8), machine_config()], states(8))
    assert found == {"disruptions": [], "configured": True}


def test_num_vfs_change_drains_each_selected_node_and_reboots_when_the_firmware_count_changes():
    found = run([policy(4)], [policy(8)], states(8, totalvfs=8))
    (entry,) = found["disruptions"]
    assert entry["object"] == "SriovNetworkNodePolicy %s/rdma-vf-policy" % SRIOV_NS and entry["action"] == "update"
    assert entry["effect"] == REBOOT and entry["nodes"] == ["worker-0", "worker-1"]
    assert "numVfs 8 -> 4" in entry["reasons"][0] and "NUM_OF_VFS" in entry["reasons"][0]
    assert found["configured"] is True
    text = describe(entry)
    assert text.startswith("SriovNetworkNodePolicy %s/rdma-vf-policy is changed: worker-0, worker-1 drain and reboot." % SRIOV_NS)


def test_a_policy_change_within_the_firmware_count_drains_without_reboot():
    # Intel-like: no firmware rewrite, only the VFs are recreated (needToUpdateVFs).
    intel = {"vendor": "8086", "pfNames": ["ens8f0np0"]}
    intel_states = [{"metadata": {"name": n}, "status": {"interfaces": [dict(port(vfs), vendor="8086", totalvfs=64)]}}
                    for n, vfs in (("worker-0", 8), ("worker-1", 0))]
    found = run([policy(4, nicSelector=intel)], [policy(8, nicSelector=intel)], intel_states)
    (entry,) = found["disruptions"]
    # worker-1's PF has no VFs yet: configured without a drain.
    assert entry["effect"] == DRAIN and entry["nodes"] == ["worker-0"]


def test_a_first_policy_on_ports_without_vfs_whose_firmware_already_fits_is_no_disruption():
    # generic_plugin.go needToUpdateVFs: a PF whose numVfs is 0 is configured without a drain.
    found = run([policy(8)], [], states(0, totalvfs=8))
    assert found == {"disruptions": [], "configured": False}


def test_a_first_policy_whose_vf_count_needs_new_firmware_reboots_but_on_a_fresh_cluster():
    found = run([policy(4)], [], states(0, totalvfs=8))
    assert [e["effect"] for e in found["disruptions"]] == [REBOOT] and found["configured"] is False


def test_the_rdma_mode_change_of_the_pool_reboots_every_node_of_the_pool():
    found = run([policy(8), pool_config("exclusive")], [policy(8), pool_config()], states(8, rdma_mode="shared"))
    (entry,) = found["disruptions"]
    assert entry["object"] == "SriovNetworkPoolConfig %s/worker" % SRIOV_NS and entry["effect"] == REBOOT
    assert entry["nodes"] == ["worker-0", "worker-1"] and "shared -> exclusive" in entry["reasons"][0]


def test_the_rdma_mode_the_nodes_already_run_is_no_disruption():
    assert run([policy(8), pool_config("exclusive")], [policy(8), pool_config("exclusive")],
               states(8, rdma_mode="exclusive"))["disruptions"] == []


def test_adding_a_machine_config_reboots_its_pool():
    found = run([policy(8), machine_config()], [policy(8)], states(8))
    (entry,) = found["disruptions"]
    assert entry["action"] == "create" and entry["pool"] == "worker" and entry["nodes"] == ["worker-0", "worker-1"]
    assert entry["effect"] == REBOOT and "machine-config daemon drains and reboots" in entry["reasons"][0]
    assert describe(entry).startswith("MachineConfig 99-worker-gpudirect-rdma is created: pool worker (worker-0, worker-1) drain and reboot.")


def test_removing_an_entry_from_a_machine_config_reboots_its_pool():
    live = machine_config(("/etc/modprobe.d/blacklist-irdma.conf", "/etc/crio/crio.conf.d/99-memlock.conf"))
    (entry,) = run([machine_config()], [live])["disruptions"]
    assert entry["action"] == "update" and "its config changes" in entry["reasons"][0]


def test_deleting_a_machine_config_reboots_its_pool_when_machine_configs_are_pruned():
    found = disruptions([], [machine_config()], nodes=NODES, pools=[WORKER_POOL],
                        prune_kinds=["machineconfiguration.openshift.io/v1/MachineConfig"])
    assert [(e["action"], e["pool"]) for e in found["disruptions"]] == [("delete", "worker")]
    # site.yml does not prune MachineConfigs: a MachineConfig the plan no longer holds stays, and nothing reboots.
    assert run([], [machine_config()])["disruptions"] == []


def test_a_method_switch_that_removes_the_vfs_drains_the_nodes_that_had_them():
    found = run([], [policy(8)], states(8))
    (entry,) = found["disruptions"]
    assert entry["action"] == "delete" and entry["effect"] == DRAIN and entry["nodes"] == ["worker-0", "worker-1"]
    assert "its 8 VFs are removed" in entry["reasons"][0]


def test_an_unlabelled_policy_is_never_taken_for_a_deletion():
    assert run([], [policy(8, managed=False)], states(8)) == {"disruptions": [], "configured": False}


def test_a_change_that_does_not_reach_the_vfs_is_no_disruption():
    changed = copy.deepcopy(policy(8))
    changed["spec"]["priority"] = 5
    assert run([changed], [policy(8)], states(8))["disruptions"] == []


def test_without_node_states_the_selected_nodes_are_named():
    (entry,) = run([policy(8)], [])["disruptions"]
    assert entry["nodes"] == ["worker-0", "worker-1"] and "no SR-IOV node state yet" in entry["reasons"][0]


def test_the_node_list_is_shortened_in_the_sentence():
    many = [node("worker-%02d" % i, "worker") for i in range(30)]
    found = disruptions([machine_config()], [], nodes=many, pools=[WORKER_POOL])
    assert "and 20 more" in describe(found["disruptions"][0])


def test_a_first_policy_before_the_nodes_are_labelled_says_the_nodes_are_not_known_yet():
    unlabelled = [node("worker-0", "worker")]
    found = disruptions([policy(8, nodeSelector={"feature.node.kubernetes.io/pci-15b3.present": "true"})], [],
                        nodes=unlabelled, prune_kinds=PRUNE)
    (entry,) = found["disruptions"]
    assert entry["nodes"] == [] and found["configured"] is False
    assert describe(entry).startswith("SriovNetworkNodePolicy %s/rdma-vf-policy is created: the nodes it selects (not known yet) drain and reboot. "
                                      "the nodes labelled feature.node.kubernetes.io/pci-15b3.present=true drain" % SRIOV_NS)
