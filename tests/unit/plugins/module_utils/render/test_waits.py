# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

import jmespath

from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.waits import compile_condition
from ansible_collections.gpudirect.openshift.plugins.module_utils.render.plan import render_all

from conftest import base_variables

PF = {"name": "ens8f0np0", "pciAddress": "0000:a0:00.0", "vendor": "15b3", "deviceID": "1017", "numVfs": 0}
OTHER_PF = {"name": "ens9f0np0", "pciAddress": "0000:b0:00.0", "vendor": "15b3", "deviceID": "1017", "numVfs": 0}
IDLE = {"sriovnetwork.openshift.io/desired-state": "Idle", "sriovnetwork.openshift.io/current-state": "Idle"}
# The VF group the operator renders from the configuration's policy (api/v1/helper.go generatePfNameVfGroup).
RENDERED_GROUP = {"resourceName": "sriovlegacy", "isRdma": True}


def sriov_wait():
    return render_all(base_variables("sriov_legacy", "roce"))["waits"]["sriov_node_states"]


def node_state(name, spec_vfs=None, status_vfs=0, sync="Succeeded", annotations=None, policy="sriovlegacy-policy"):
    spec = {}
    if spec_vfs is not None:
        spec = {"interfaces": [{"name": PF["name"], "pciAddress": PF["pciAddress"], "numVfs": spec_vfs,
                                "vfGroups": [dict(RENDERED_GROUP, policyName=policy, vfRange="0-7")]}]}
    return {"metadata": {"name": name, "annotations": dict(IDLE if annotations is None else annotations)}, "spec": spec,
            "status": {"syncStatus": sync, "interfaces": [dict(PF, numVfs=status_vfs), dict(OTHER_PF)]}}


def counted(wait, states):
    """The wait's condition as the waiter keeps it (a counted view), fed with ``states``."""
    condition = compile_condition(wait)
    condition.reset(list(states))
    return condition


def holds(wait, *states):
    return counted(wait, states).holds()


def progress(wait, states):
    return counted(wait, states).progress_text()


def test_the_previous_sync_s_succeeded_does_not_satisfy_the_wait():
    wait = sriov_wait()
    assert wait["kind"] == "SriovNetworkNodeState" and wait["namespace"] == "openshift-sriov-network-operator"
    synced = node_state("a", spec_vfs=8, status_vfs=8)
    assert holds(wait, synced, copy.deepcopy(synced))
    # The policy controller has not rendered the policy yet (about a second after the apply).
    assert not holds(wait, synced, node_state("b"))
    # A spec from an earlier run with another VF count, still Succeeded.
    assert not holds(wait, synced, node_state("b", spec_vfs=4, status_vfs=4))
    # Rendered, the daemon has not started: Succeeded and the old VF count.
    assert not holds(wait, synced, node_state("b", spec_vfs=8, status_vfs=0))
    # The daemon asked for a drain, or the drain controller is still draining.
    assert not holds(wait, synced, node_state("b", spec_vfs=8, status_vfs=8, annotations=dict(
        IDLE, **{"sriovnetwork.openshift.io/desired-state": "Reboot_Required"})))
    assert not holds(wait, synced, node_state("b", spec_vfs=8, status_vfs=8, annotations=dict(
        IDLE, **{"sriovnetwork.openshift.io/current-state": "Draining"})))
    assert not holds(wait, synced, node_state("b", spec_vfs=8, status_vfs=8, sync="InProgress"))
    # Another policy's VF group on the PF is not ours.
    assert not holds(wait, synced, node_state("b", spec_vfs=8, status_vfs=8, policy="someone-else"))
    assert not holds(wait)


def test_a_node_state_without_a_selected_pf_needs_nothing_but_one_node_must_carry_the_policy():
    wait = sriov_wait()
    bare = {"metadata": {"name": "c", "annotations": IDLE}, "spec": {},
            "status": {"syncStatus": "Succeeded", "interfaces": [dict(OTHER_PF)]}}
    assert holds(wait, node_state("a", spec_vfs=8, status_vfs=8), bare)
    assert not holds(wait, bare)


def test_progress_names_each_node_state_and_what_it_waits_for():
    wait = sriov_wait()
    text = progress(wait, [
        node_state("a", spec_vfs=8, status_vfs=8), node_state("b", sync="InProgress", annotations={
            "sriovnetwork.openshift.io/desired-state": "Drain_Required", "sriovnetwork.openshift.io/current-state": "Draining"})])
    assert text == "a: Succeeded, drain Idle/Idle, b: InProgress, drain Drain_Required/Draining (policies not rendered by the operator yet)"
    text = progress(wait, [node_state("c", spec_vfs=8, status_vfs=0)])
    assert text == "c: Succeeded, drain Idle/Idle (VFs not applied yet)"


def test_a_node_state_the_operator_keeps_for_a_de_selected_node_does_not_satisfy_the_wait():
    """handleStaleNodeState: while the DOCA driver reloads after a reboot, mofed.wait=true takes the node out of the
    configDaemonNodeSelector; its state stays, Succeeded from before, annotated keep-state-until (30 minutes)."""
    wait = sriov_wait()
    kept = node_state("b", spec_vfs=8, status_vfs=8, annotations=dict(
        IDLE, **{"sriovnetwork.openshift.io/keep-state-until": "2026-12-07T20:05:00Z"}))
    assert not holds(wait, node_state("a", spec_vfs=8, status_vfs=8), kept)
    assert progress(wait, [kept]) == ("b: Succeeded, drain Idle/Idle (no config daemon on the node; the operator keeps this state "
                                      "until 2026-12-07T20:05:00Z)")
    # Selected again, the operator removes the annotation (ResetKeepUntilTime) and the state counts.
    assert holds(wait, node_state("a", spec_vfs=8, status_vfs=8), node_state("b", spec_vfs=8, status_vfs=8))


def with_generation(state, generation, **group):
    """``state`` at metadata.generation ``generation``, its VF group changed by ``group`` (e.g. isRdma, mtu)."""
    state = copy.deepcopy(state)
    state["metadata"]["generation"] = generation
    for iface in state["spec"].get("interfaces") or []:
        for vf_group in iface["vfGroups"]:
            vf_group.update(group)
            for key in [k for k, v in group.items() if v is None]:
                del vf_group[key]
    return state


def test_an_mtu_change_counts_only_once_the_operator_rendered_it_and_the_daemon_applied_it():
    """api/v1/helper.go copies the policy's mtu into the interface and its VF group; pkg/host/internal/sriov/sriov.go
    raises the PF MTU (never lowers it) and sets each netdevice VF's MTU. The status shows the host, so until the
    daemon applied the MTU the previous sync's Succeeded does not count."""
    variables = dict(base_variables("sriov_legacy", "roce"), gpudirect_rdma_mtu=9000)
    wait = render_all(variables)["waits"]["sriov_node_states"]
    old = node_state("a", spec_vfs=8, status_vfs=8)
    assert not holds(wait, old), "the spec the operator rendered before the MTU change"
    rendered = copy.deepcopy(old)
    rendered["spec"]["interfaces"][0]["mtu"] = 9000
    rendered["spec"]["interfaces"][0]["vfGroups"][0]["mtu"] = 9000
    rendered["status"]["interfaces"][0].update(mtu=1500, Vfs=[{"vfID": 0, "driver": "mlx5_core", "mtu": 1500}])
    assert not holds(wait, rendered), "re-rendered, the daemon has not applied the MTU yet"
    applied = copy.deepcopy(rendered)
    applied["status"]["interfaces"][0].update(mtu=9000, Vfs=[{"vfID": 0, "driver": "mlx5_core", "mtu": 9000}])
    assert holds(wait, applied)
    # A PF already above the policy's MTU stays there (it is only raised); its VFs take the policy's.
    higher = copy.deepcopy(applied)
    higher["status"]["interfaces"][0]["mtu"] = 9216
    assert holds(wait, higher)


def test_an_is_rdma_change_waits_for_the_daemon_to_start_on_the_new_generation():
    """isRdma shows nowhere in the status, and the config daemon reads the host before it writes InProgress
    (pkg/daemon/daemon.go Reconcile), so the re-rendered node state first stands with the previous sync's Succeeded.
    With the baseline taken before the policy write, a node state whose generation moved counts only once it was
    seen InProgress at its new generation."""
    wait = sriov_wait()
    before = with_generation(node_state("a", spec_vfs=8, status_vfs=8), 4, isRdma=None)
    assert not holds(wait, before), "isRdma false in the spec: the operator has not rendered the new policy"
    condition = compile_condition(wait)
    condition.set_baseline([before])
    condition.reset([before])
    assert not condition()
    rendered = with_generation(before, 5, isRdma=True)  # re-rendered; the daemon is still reading the host
    condition.apply("MODIFIED", rendered)
    assert not condition(), "the previous sync's Succeeded counted for the new generation"
    assert condition.not_counted(5) == ["a"]
    assert condition.progress_text() == ("a: Succeeded, drain Idle/Idle (spec changed to generation 5; its controller has not "
                                         "started on it yet)")
    started = copy.deepcopy(rendered)
    started["status"]["syncStatus"] = "InProgress"
    condition.apply("MODIFIED", started)
    assert not condition()
    condition.apply("MODIFIED", rendered)  # Succeeded again, now after the daemon's sync of generation 5
    assert condition()
    # Without a baseline (resource_wait) the first list is the baseline: a node state as it is counts by its status.
    assert holds(wait, rendered)


def test_when_the_watch_history_is_lost_a_changed_node_state_counts_by_its_status():
    """After a 410 Gone the waiter lists again: what happened between the baseline and the new list is unknown, so
    the busy rule cannot be applied, and the status decides (the wait must not hang on an event it can never see)."""
    wait = sriov_wait()
    before = with_generation(node_state("a", spec_vfs=8, status_vfs=8), 4, isRdma=None)
    after = with_generation(before, 5, isRdma=True)
    condition = compile_condition(wait)
    condition.set_baseline([before])
    condition.reset([after])
    assert not condition()
    condition.reset([after])  # the relist after a 410
    assert condition()


def test_a_pending_node_state_blocks_a_maximum_alone():
    """For a maximum alone (at_least 0, at_most N) a pending object counts as blocking, whatever its status."""
    condition = compile_condition({"kind": "SriovNetworkNodeState", "api_version": "sriovnetwork.openshift.io/v1",
                                   "count": [{"each": "status.syncStatus != 'Succeeded'", "at_least": 0, "at_most": 0}],
                                   "each_busy": "status.syncStatus == 'InProgress'"})
    before = with_generation(node_state("a", spec_vfs=8, status_vfs=8), 1)
    condition.set_baseline([before])
    condition.reset([before])
    assert condition()
    condition.apply("MODIFIED", with_generation(before, 2))
    assert not condition()


def test_no_sriov_policies_no_sriov_wait():
    assert "sriov_node_states" not in render_all(base_variables("shared_device", "roce"))["waits"]


# The waits the rdma role takes from the renderer (issue 16: no JMESPath built by Jinja) --------------------------

from ansible_collections.gpudirect.openshift.plugins.module_utils.render import waits as render_waits  # noqa: E402


def pool(sources, rendered="rendered-worker-2", spec_rendered="rendered-worker-2", updated="True", machines=(3, 3), generation=2):
    return {"metadata": {"name": "worker", "generation": generation},
            "spec": {"configuration": {"name": spec_rendered}},
            "status": {"observedGeneration": generation, "configuration": {"name": rendered, "source": [{"name": n} for n in sources]},
                       "conditions": [{"type": "Updated", "status": updated}, {"type": "Degraded", "status": "False"}],
                       "machineCount": machines[0], "updatedMachineCount": machines[1]}}


def test_the_pool_wait_is_not_satisfied_by_the_previous_rendered_config():
    wait = render_waits.machineconfig_pool_wait("worker", ["99-worker-gpudirect-rdma"])
    stale = pool(["00-worker", "01-worker-kubelet"])  # right after the apply: old config, Updated, every machine on it
    assert jmespath.search(wait["condition"], stale) is False
    rolling = pool(["00-worker", "99-worker-gpudirect-rdma"], rendered="rendered-worker-2", spec_rendered="rendered-worker-3",
                   updated="False", machines=(3, 1))
    assert jmespath.search(wait["condition"], rolling) is False
    done = pool(["00-worker", "99-worker-gpudirect-rdma"], rendered="rendered-worker-3", spec_rendered="rendered-worker-3")
    assert jmespath.search(wait["condition"], done) is True
    gone = render_waits.machineconfig_pool_wait("worker", ["99-worker-gpudirect-rdma"], present=False)
    assert jmespath.search(gone["condition"], done) is False
    assert jmespath.search(gone["condition"], stale) is True


def test_the_pool_wait_fails_on_degraded_with_the_pools_message():
    wait = render_waits.machineconfig_pool_wait("worker", ["99-worker-gpudirect-rdma"])
    degraded = pool([])
    degraded["status"]["conditions"][1] = {"type": "Degraded", "status": "True", "message": "Node worker-0 is reporting: unexpected on-disk state"}
    assert jmespath.search(wait["failure_condition"], degraded) is True
    assert jmespath.search(wait["failure_message"], degraded) == "Node worker-0 is reporting: unexpected on-disk state"


def test_allocatable_wait_counts_nodes_that_advertise_the_resource():
    wait = render_waits.allocatable_wait("rdma/rdma_shared_device_eth", 2, {"feature.node.kubernetes.io/pci-15b3.present": "true"})
    assert wait["label_selectors"] == ["feature.node.kubernetes.io/pci-15b3.present=true"]
    assert wait["count"][0]["at_least"] == 2 and wait["count"][0]["all"] is False
    nodes = [{"metadata": {"name": "a"}, "status": {"allocatable": {"rdma/rdma_shared_device_eth": "63"}}},
             {"metadata": {"name": "b"}, "status": {"allocatable": {"rdma/rdma_shared_device_eth": "0"}}},
             {"metadata": {"name": "c"}, "status": {"allocatable": {}}}]
    assert [jmespath.search(wait["count"][0]["each"], n) for n in nodes] == [True, False, False]
    nodes[1]["status"]["allocatable"]["rdma/rdma_shared_device_eth"] = "63"
    assert jmespath.search(wait["count"][0]["each"], nodes[1]) is True
    assert render_waits.allocatable_wait("rdma/x", 1, {}, all_nodes=True)["count"][0]["all"] is True


def test_a_node_back_from_a_reboot_does_not_count_until_its_device_plugin_registered():
    """kubelet devicemanager (readCheckpoint): after a reboot the resource keeps its capacity while allocatable is 0
    until the plugin registers; the wait counts allocatable only, so with every selected node required it holds
    only once the rebooted node advertises again."""
    wait = dict(render_waits.allocatable_wait("rdma/rdma_shared_device_eth", 1, {}, all_nodes=True))
    ready = {"metadata": {"name": "a"}, "status": {"capacity": {"rdma/rdma_shared_device_eth": "63"},
                                                   "allocatable": {"rdma/rdma_shared_device_eth": "63"}}}
    rebooted = {"metadata": {"name": "b"}, "status": {"capacity": {"rdma/rdma_shared_device_eth": "63"},
                                                      "allocatable": {"rdma/rdma_shared_device_eth": "0"}}}
    assert not holds(wait, ready, rebooted)
    dropped = copy.deepcopy(rebooted)
    dropped["status"]["capacity"]["rdma/rdma_shared_device_eth"] = "0"  # not registered within the 5 minutes
    assert not holds(wait, ready, dropped)
    registered = copy.deepcopy(rebooted)
    registered["status"]["allocatable"]["rdma/rdma_shared_device_eth"] = "63"
    assert holds(wait, ready, registered)


def test_rdma_wait_sets_follow_the_plan():
    plan = render_all(base_variables("shared_device", "roce", apply_machineconfigs=True, machineconfigs=["irdma_blacklist"],
                                     second_fabric={"nic_interfaces": ["ibs2f0"], "ipam_range": "192.168.9.0/24"}))
    sets = render_waits.rdma_wait_sets(plan, 2)
    assert [w["title"] for w in sets["machineconfig"]] == ["MachineConfigPool worker updated"]
    assert [w["title"] for w in sets["configuration"]] == [
        "MacvlanNetwork ready", "IPoIBNetwork ready",
        "NetworkAttachmentDefinitions default/rdmashared-net, default/rdmashared-ib-net",
        "rdma/rdma_shared_device_eth allocatable", "rdma/rdma_shared_device_ib allocatable"]
    nads = {"items": [{"metadata": {"namespace": "default", "name": "rdmashared-net"}}]}
    assert jmespath.search(sets["configuration"][2]["condition"], nads) is False
    nads["items"].append({"metadata": {"namespace": "default", "name": "rdmashared-ib-net"}})
    assert jmespath.search(sets["configuration"][2]["condition"], nads) is True
    sriov = render_waits.rdma_wait_sets(render_all(base_variables("sriov_legacy", "roce")), 1)
    assert sriov["machineconfig"] == []
    assert [w["title"] for w in sriov["configuration"]][0] == "SR-IOV node states synced with the policies"


def labelled(name, *vendors):
    return {"metadata": {"name": name, "labels": dict(("feature.node.kubernetes.io/pci-%s.present" % v, "true") for v in vendors)}}


def test_the_nfd_wait_counts_gpu_and_nic_nodes_separately():
    wait = render_waits.nfd_labels_wait(min_gpu_nodes=2, min_nic_nodes=1)
    gpu, nic = wait["count"]
    assert (gpu["at_least"], nic["at_least"], gpu["all"], wait["label_selectors"]) == (2, 1, False, [])
    gpu_node, cpu_node = labelled("gpu-0", "10de", "15b3"), labelled("cpu-0", "8086")
    assert [jmespath.search(gpu["each"], n) for n in (gpu_node, cpu_node)] == [True, False]
    assert [jmespath.search(nic["each"], n) for n in (gpu_node, cpu_node)] == [True, False]
    every = render_waits.nfd_labels_wait(1, 1, node_selector="node-role.kubernetes.io/worker", all_nodes=True)
    assert every["label_selectors"] == ["node-role.kubernetes.io/worker"] and all(c["all"] for c in every["count"])


def test_the_nic_cluster_policy_wait_fails_on_a_component_in_error_with_its_message():
    wait = render_waits.nic_cluster_policy_wait()
    applied = [{"name": "state-OFED", "state": "error", "message": "driver build failed"}, {"name": "state-RDMA-device-plugin", "state": "ready"}]
    policy = {"status": {"state": "notReady", "appliedStates": applied}}
    assert not jmespath.search(wait["condition"], policy)
    assert jmespath.search(wait["failure_condition"], policy)
    assert jmespath.search(wait["failure_message"], policy) == "state-OFED: driver build failed"
    assert jmespath.search(wait["progress"], policy) == "state-OFED: error (driver build failed)"
    policy["status"] = {"state": "ready", "appliedStates": [{"name": "state-OFED", "state": "ready"}]}
    assert jmespath.search(wait["condition"], policy) and not jmespath.search(wait["failure_condition"], policy)


def test_the_cluster_policy_wait_treats_only_reconcile_failed_as_a_failure():
    wait = render_waits.cluster_policy_wait()

    def policies(state, reason):
        return {"items": [{"metadata": {"name": "gpu-cluster-policy", "labels": {"app.kubernetes.io/managed-by": "gpudirect.openshift"}}, "status": {
            "state": state, "conditions": [{"type": "Error", "status": "True", "reason": reason, "message": "m-" + reason}]}}]}

    assert jmespath.search(wait["condition"], {"items": []}) is False
    assert not jmespath.search(wait["failure_condition"], policies("notReady", "OperandNotReady"))
    assert jmespath.search(wait["failure_condition"], policies("notReady", "ReconcileFailed"))
    assert jmespath.search(wait["failure_message"], policies("notReady", "ReconcileFailed")) == "gpu-cluster-policy: m-ReconcileFailed"
    assert jmespath.search(wait["condition"], policies("ready", "")) is True


def test_the_teardown_waits_hold_only_once_the_operators_finished():
    nads = render_waits.network_attachments_gone_wait(["default/rdma-net"])
    assert jmespath.search(nads["condition"], {"items": [{"metadata": {"namespace": "default", "name": "rdma-net"}}]}) is False
    assert jmespath.search(nads["condition"], {"items": [{"metadata": {"namespace": "other", "name": "rdma-net"}}]}) is True
    settled = render_waits.sriov_node_states_settled_wait(["policy-a"], "openshift-sriov-network-operator")
    state = {"metadata": {"name": "worker-0", "annotations": {}},
             "spec": {"interfaces": [{"numVfs": 8, "vfGroups": [{"policyName": "policy-a"}]}]},
             "status": {"syncStatus": "Succeeded", "interfaces": [{"numVfs": 8}]}}
    # The previous sync's Succeeded, with the deleted policy still in the spec, does not satisfy it.
    assert holds(settled, state) is False
    state["spec"]["interfaces"] = []
    assert holds(settled, state) is False  # VFs still configured
    state["status"]["interfaces"] = [{"numVfs": 0}]
    assert holds(settled, state) is True
    state["metadata"]["annotations"]["sriovnetwork.openshift.io/current-state"] = "Draining"
    assert holds(settled, state) is False


def test_the_plan_target_is_every_manifest_and_every_wait_the_steps_run():
    plan = render_all(base_variables("shared_device", "roce", apply_machineconfigs=True, machineconfigs=["irdma_blacklist"]))
    target = render_waits.plan_target(plan, min_gpu_nodes=2, min_nic_nodes=2, min_ready_nodes=2)
    assert [m["kind"] for m in target["manifests"]] == [e["manifest"]["kind"] for e in sorted(plan["manifests"], key=lambda e: e["order"])]
    kinds = [w["kind"] for w in target["waits"]]
    assert kinds[:3] == ["Node", "NicClusterPolicy", "ClusterPolicy"] and "MachineConfigPool" in kinds
    assert target["waits"][0] == render_waits.nfd_labels_wait(2, 2)
    last = target["waits"][-1]
    assert last["title"] == "rdma/rdma_shared_device_eth allocatable" and last["count"][0]["at_least"] == 2
    assert target["prune_kinds"] == render_waits.names.managed_kinds("rdma")


def test_the_memlock_pool_is_waited_for_with_every_machineconfig_it_renders():
    """Issue 20 point 7: the custom pool renders the worker MachineConfig and its own; the run waits for both pools,
    each with the MachineConfigs it must show in its rendered config's sources."""
    plan = render_all(base_variables("shared_device", "roce", apply_machineconfigs=True, machineconfigs=["irdma_blacklist", "crio_memlock"]))
    waits = render_waits.rdma_wait_sets(plan, 1)["machineconfig"]
    assert [(w["title"], w["name"]) for w in waits] == [("MachineConfigPool gpudirect-rdma updated", "gpudirect-rdma"),
                                                        ("MachineConfigPool worker updated", "worker")]
    memlock_wait = waits[0]
    pool = {"metadata": {"generation": 2}, "spec": {"configuration": {"name": "rendered-gpudirect-rdma-1"}},
            "status": {"observedGeneration": 2, "configuration": {"name": "rendered-gpudirect-rdma-1", "source": [
                {"name": "00-worker"}, {"name": "99-gpudirect-rdma-gpudirect-rdma-memlock"}]},
                "conditions": [{"type": "Updated", "status": "True"}], "updatedMachineCount": 1, "machineCount": 1}}
    # Stale: the worker MachineConfig is not rendered into the custom pool yet.
    assert jmespath.search(memlock_wait["condition"], pool) is False
    pool["status"]["configuration"]["source"].append({"name": "99-worker-gpudirect-rdma"})
    assert jmespath.search(memlock_wait["condition"], pool) is True
