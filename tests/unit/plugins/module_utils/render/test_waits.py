# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

import jmespath

from ansible_collections.gpudirect.openshift.plugins.module_utils.render.plan import render_all

from conftest import base_variables

PF = {"name": "ens8f0np0", "pciAddress": "0000:a0:00.0", "vendor": "15b3", "deviceID": "1017", "numVfs": 0}
OTHER_PF = {"name": "ens9f0np0", "pciAddress": "0000:b0:00.0", "vendor": "15b3", "deviceID": "1017", "numVfs": 0}
IDLE = {"sriovnetwork.openshift.io/desired-state": "Idle", "sriovnetwork.openshift.io/current-state": "Idle"}


def sriov_wait():
    return render_all(base_variables("sriov_legacy", "roce"))["waits"]["sriov_node_states"]


def node_state(name, spec_vfs=None, status_vfs=0, sync="Succeeded", annotations=None, policy="sriovlegacy-policy"):
    spec = {}
    if spec_vfs is not None:
        spec = {"interfaces": [{"name": PF["name"], "pciAddress": PF["pciAddress"], "numVfs": spec_vfs,
                                "vfGroups": [{"policyName": policy, "resourceName": "x", "vfRange": "0-7"}]}]}
    return {"metadata": {"name": name, "annotations": dict(IDLE if annotations is None else annotations)}, "spec": spec,
            "status": {"syncStatus": sync, "interfaces": [dict(PF, numVfs=status_vfs), dict(OTHER_PF)]}}


def holds(wait, *states):
    return bool(jmespath.search(wait["condition"], {"items": list(states)}))


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
    text = jmespath.search(wait["progress"], {"items": [
        node_state("a", spec_vfs=8, status_vfs=8), node_state("b", sync="InProgress", annotations={
            "sriovnetwork.openshift.io/desired-state": "Drain_Required", "sriovnetwork.openshift.io/current-state": "Draining"})]})
    assert text == "a: Succeeded, drain Idle/Idle, b: InProgress, drain Drain_Required/Draining (policies not rendered by the operator yet)"
    text = jmespath.search(wait["progress"], {"items": [node_state("c", spec_vfs=8, status_vfs=0)]})
    assert text == "c: Succeeded, drain Idle/Idle (VFs not applied yet)"


def test_no_sriov_policies_no_sriov_wait():
    assert "sriov_node_states" not in render_all(base_variables("shared_device", "roce"))["waits"]
