# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Argo CD health checks (render/argocd_health.py) run in a real Lua 5.1 interpreter (lupa's lua51 module; Argo CD
runs them with gopher-lua, a Lua 5.1) on the real status fixtures (tests/unit/fixtures/status, SOURCES.md), and
compared with the verdict of the collection's wait for the same object (render/waits.py evaluated by
cluster/waits.py, as test_status_fixtures.py does) and with the state each fixture's thread reports."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from lupa.lua51 import LuaRuntime

from ansible_collections.gpudirect.openshift.plugins.module_utils.render import argocd_health, gitops
from ansible_collections.gpudirect.openshift.plugins.module_utils.render import waits as render_waits
from tests.unit.plugins.module_utils.test_status_fixtures import OURS, judge, load

# The wait's verdict and Argo CD's health status name the same three outcomes.
HEALTH = {"ready": "Healthy", "failed": "Degraded", "progressing": "Progressing"}


def run_check(check, obj):
    lua = LuaRuntime(unpack_returned_tuples=True)
    function = lua.eval("function(obj)\n%s\nend" % check)
    result = function(lua.table_from(obj, recursive=True))
    return result["status"], result["message"]


def check_of(kind):
    return next(check for _group, k, check in argocd_health.CHECKS if k == kind)


def agree(kind, fixture, verdict, text):
    status, message = run_check(check_of(kind), fixture["object"])
    assert status == HEALTH[verdict], (status, message, verdict, text)
    reported = fixture["reported"]
    if reported["state"] == "failed" and reported.get("signal") != "pods":
        assert status == "Degraded" and reported["quote"] in message, message
    elif reported["state"] in ("ready", "progressing"):
        assert status == HEALTH[reported["state"]]
    return status, message


@pytest.mark.parametrize("fixture", load("nicclusterpolicy"))
def test_nic_cluster_policy_health_matches_its_wait(fixture):
    verdict, text = judge(render_waits.nic_cluster_policy_wait(), fixture["object"])
    agree("NicClusterPolicy", fixture, verdict, text)


@pytest.mark.parametrize("fixture", load("clusterpolicy"))
def test_cluster_policy_health_matches_its_wait(fixture):
    obj = fixture["object"]
    ours = dict(obj, metadata=dict(obj["metadata"], labels=dict(obj["metadata"].get("labels") or {}, **OURS)))
    verdict, text = judge(render_waits.cluster_policy_wait(), [ours])
    status, message = agree("ClusterPolicy", dict(fixture, object=ours), verdict, text)
    if fixture["reported"]["state"] == "ignored":
        assert status == "Degraded" and "ignored by the GPU Operator" in message


@pytest.mark.parametrize("fixture", load("machineconfigpool"))
def test_machineconfig_pool_health_matches_its_wait(fixture):
    # No MachineConfig names: the check cannot know the plan's, so the wait is compared without them.
    wait = render_waits.machineconfig_pool_wait(fixture["object"]["metadata"]["name"], [])
    verdict, text = judge(wait, fixture["object"])
    agree("MachineConfigPool", fixture, verdict, text)


@pytest.mark.parametrize("fixture", load("sriovnetworknodestate"))
def test_sriov_node_state_health_matches_its_waits(fixture):
    namespace = fixture["object"]["metadata"]["namespace"]
    settled, _text = judge(render_waits.sriov_node_states_settled_wait([], namespace), [fixture["object"]])
    reported, text = judge(render_waits.sriov_interfaces_reported_wait(namespace), [fixture["object"]])
    verdict = "failed" if settled == "failed" else "ready" if settled == reported == "ready" else "progressing"
    agree("SriovNetworkNodeState", fixture, verdict, text)


@pytest.mark.parametrize("kind", render_waits.NETWORK_OPERATOR_KINDS)
@pytest.mark.parametrize("state,reason", [("ready", None), ("notReady", None), ("error", "failed to render NetworkAttachmentDefinition")])
def test_network_health_matches_its_wait(kind, state, reason):
    # status.state and status.reason as the Network Operator writes them (controllers/macvlannetwork_controller.go and
    # siblings: ready, notReady, error); no thread in reach quotes one, so the three states are built from that source.
    obj = {"apiVersion": "mellanox.com/v1alpha1", "kind": kind, "metadata": {"name": "net", "labels": OURS},
           "status": dict({"state": state}, **({"reason": reason} if reason else {}))}
    verdict, _text = judge(render_waits.network_cr_wait(kind), [obj])
    status, message = run_check(check_of(kind), obj)
    assert status == HEALTH[verdict]
    if reason:
        assert message == reason


def test_a_check_on_an_object_without_status_is_progressing():
    for group, kind, check in argocd_health.CHECKS:
        assert run_check(check, {"apiVersion": group + "/v1", "kind": kind, "metadata": {"name": "x"}})[0] == "Progressing", kind


def test_the_tree_ships_every_check_for_argo_cd_and_openshift_gitops():
    files = dict((f["path"], f["manifest"]) for f in gitops.gitops_tree([], [], cluster="lab"))
    data = files["argocd/argocd-cm-health-patch.yaml"]["data"]
    assert sorted(data) == sorted("resource.customizations.health.%s_%s" % (group, kind) for group, kind, _c in argocd_health.CHECKS)
    assert "resource.customizations.health.mellanox.com_NicClusterPolicy" in data
    checks = files["argocd/openshift-gitops-argocd-health-patch.yaml"]["spec"]["resourceHealthChecks"]
    assert [(c["group"], c["kind"]) for c in checks] == [(group, kind) for group, kind, _c in argocd_health.CHECKS]
    assert all(c["check"] == data["resource.customizations.health.%s_%s" % (c["group"], c["kind"])] for c in checks)
