# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every predicate of the collection on real status objects (tests/unit/fixtures/status, see its SOURCES.md).

Each fixture is an object copied from an upstream issue thread or document together with the state the thread reports
(ready, progressing, failed with its cause, ignored; for nodes whether they count). The predicates are the ones the
roles and modules run: the wait entries of render/waits.py evaluated by cluster/waits.py's Condition (with its grace
period, on a fake clock), the OLM rules of rules/olm_install.py, and the node counting of cluster/info.py, facts_nodes.py and
the counted waits. A failure must end the wait within its grace period and quote the cause the thread reports."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import os

import jmespath
import pytest
import yaml

from ansible_collections.gpudirect.openshift.plugins.module_utils import vocabulary
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster import info
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster import facts_nodes
from ansible_collections.gpudirect.openshift.plugins.module_utils.rules import olm_install
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.conditions import ConditionFailed
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.waits import compile_condition
from ansible_collections.gpudirect.openshift.plugins.module_utils.render import waits as render_waits

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "status")
GRACE = 30
OURS = {vocabulary.MANAGED_BY_LABEL: vocabulary.MANAGED_BY_VALUE}


def load(kind_dir):
    found = sorted(glob.glob(os.path.join(FIXTURES, kind_dir, "*.yaml")))
    assert found, "no fixtures under %s" % kind_dir
    return [pytest.param(yaml.safe_load(open(path)), id=os.path.basename(path)[:-5]) for path in found]


class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


def judge(spec, state):
    """('ready' | 'failed' | 'progressing', failure message or last progress) of a wait entry on ``state`` that stays
    as it is: evaluated now and again when the grace period ended, as the waiter does (recheck_at)."""
    clock = Clock()
    condition = compile_condition(dict(spec, failure_grace_period=GRACE), clock=clock)
    if hasattr(condition, "reset"):  # a counted wait: the waiter feeds it the objects one by one
        condition.reset(state)
    try:
        for _repeat in range(2):
            if condition(state):
                return "ready", None
            at = condition.recheck_at()
            clock.t = at if at is not None else clock.t + GRACE
    except ConditionFailed as exc:
        assert clock.t - 1000.0 <= GRACE, "the failure ended the wait only after its grace period"
        return "failed", str(exc)
    return "progressing", condition.history[-1] if condition.history else None


def test_there_are_at_least_30_fixtures_each_with_its_source_and_reported_state():
    paths = glob.glob(os.path.join(FIXTURES, "*", "*.yaml"))
    assert len(paths) >= 30
    sources = open(os.path.join(FIXTURES, "SOURCES.md")).read()
    for path in paths:
        data = yaml.safe_load(open(path))
        assert data["source"].startswith("https://") and data["reported"]["state"] and data["object"]["kind"], path
        assert os.path.relpath(path, FIXTURES) in sources, "%s is not listed in SOURCES.md" % path
        if data["reported"]["state"] == "failed":
            assert data["reported"].get("quote") or data["reported"].get("signal"), path


@pytest.mark.parametrize("fixture", load("nicclusterpolicy"))
def test_nic_cluster_policy_wait_on_real_statuses(fixture):
    wait = render_waits.nic_cluster_policy_wait()
    reported = fixture["reported"]
    verdict, text = judge(wait, fixture["object"])
    if reported["state"] == "failed" and reported.get("signal") == "pods":
        # The policy says only notReady: not a failure of the custom resource, but the progress names the component.
        assert verdict == "progressing" and "state-OFED: notReady" in text
    elif reported["state"] == "failed":
        assert verdict == "failed" and reported["quote"] in text, text
    else:
        assert verdict == reported["state"], (verdict, text)
    progress = jmespath.search(wait["progress"], fixture["object"]) or ""
    assert ": ignore" not in progress, "components the policy does not configure block nothing"


@pytest.mark.parametrize("fixture", load("clusterpolicy"))
def test_cluster_policy_wait_on_real_statuses(fixture):
    wait = render_waits.cluster_policy_wait()
    obj = fixture["object"]
    ours = dict(obj, metadata=dict(obj["metadata"], labels=dict(obj["metadata"].get("labels") or {}, **OURS)))
    verdict, text = judge(wait, [ours])
    if fixture["reported"]["state"] == "ignored":
        # The collection's own policy ignored: another one drives the cluster, so it never becomes ready.
        assert verdict == "failed" and "ignored by the GPU Operator" in text
        # Someone else's ignored policy beside ours blocks nothing and is left out of the progress.
        ready = {"metadata": {"name": "gpu-cluster-policy", "labels": OURS}, "status": {"state": "ready"}}
        assert judge(wait, [obj, ready])[0] == "ready"
        assert obj["metadata"]["name"] not in jmespath.search(wait["progress"], {"items": [obj, ready]})
    else:
        assert verdict == fixture["reported"]["state"], (verdict, text)
        # A policy that is not the collection's never satisfies the wait, whatever its state.
        assert judge(wait, [obj])[0] != "ready"


@pytest.mark.parametrize("fixture", load("sriovnetworknodestate"))
def test_sriov_node_state_waits_on_real_statuses(fixture):
    namespace = fixture["object"]["metadata"]["namespace"]
    settled = render_waits.sriov_node_states_settled_wait([], namespace)
    reported = render_waits.sriov_interfaces_reported_wait(namespace)
    verdict, text = judge(settled, [fixture["object"]])
    if fixture["reported"]["state"] == "failed":
        assert verdict == "failed" and fixture["reported"]["quote"] in text, text
        # The wait after applying policies shares the rule, and its progress shows the error.
        policies = [{"metadata": {"name": g["policyName"]}, "spec": {"numVfs": i["numVfs"], "nicSelector": {"pfNames": [i["name"]]}}}
                    for i in (fixture["object"].get("spec") or {}).get("interfaces") or [] for g in i["vfGroups"]]
        if policies:
            applied = render_waits.sriov_node_states_wait(policies, namespace)
            assert judge(applied, [fixture["object"]])[0] == "failed"
            last_error = fixture["object"]["status"].get("lastSyncError")
            if last_error:
                condition = compile_condition(applied)
                condition.reset([fixture["object"]])
                assert last_error in condition.progress_text()
    else:
        # Succeeded without any interface: nothing failed, but the daemons have not reported the NICs.
        assert verdict == "ready"
        assert judge(reported, [fixture["object"]])[0] == "progressing"


def csv_timeline(fixture):
    """The statuses a watch on the CSV sees: each condition in turn, then the final status (for a CSV the thread shows
    cycling, the conditions over and over)."""
    status = fixture["object"]["status"]
    steps = [dict(status, phase=c["phase"], reason=c.get("reason"), message=c.get("message")) for c in status.get("conditions") or []]
    return steps, status


@pytest.mark.parametrize("fixture", load("olm"))
def test_olm_rules_on_real_statuses(fixture):
    obj, reported = fixture["object"], fixture["reported"]
    kind = obj["kind"]
    if kind == "InstallPlan":
        text = olm_install.install_plan_failure(obj)
        assert text and reported["quote"] in " ".join(text.split()), text
    elif kind == "Subscription":
        text = olm_install.subscription_failure(obj)
        assert text and reported["quote"] in text, text
    else:
        clock = Clock()
        progress = olm_install.CsvProgress(obj["metadata"]["name"], GRACE, clock=clock)
        steps, final = csv_timeline(fixture)
        verdict, text = "progressing", None
        try:
            if fixture.get("timeline") == "repeats":
                while clock.t < 1000.0 + 3 * GRACE:
                    for step in steps:
                        progress(dict(obj, status=step))
                        clock.t += 0.5
            else:
                for step in steps:
                    progress(dict(obj, status=step))
                    clock.t += 0.5
                for _repeat in range(3):
                    if progress(dict(obj, status=final)):
                        verdict = "ready"
                        break
                    clock.t += GRACE
        except olm_install.OLMProblem as exc:
            verdict, text = "failed", str(exc)
            assert progress.failing_since is not None and clock.t - progress.failing_since <= GRACE + 1
        assert verdict == reported["state"], (verdict, text)
        if verdict == "failed":
            assert reported["quote"] in text, text


@pytest.mark.parametrize("fixture", load("machineconfigpool"))
def test_machineconfig_pool_wait_on_real_statuses(fixture):
    pool = fixture["object"]["metadata"]["name"]
    wait = render_waits.machineconfig_pool_wait(pool, ["99-%s-gpudirect-rdma" % pool])
    verdict, text = judge(wait, fixture["object"])
    assert verdict == fixture["reported"]["state"], (verdict, text)
    assert fixture["reported"]["quote"] in text, text
    assert text != "MachineConfigPool %s updated reports a failure: " % pool


@pytest.mark.parametrize("fixture", load("node"))
def test_node_counting_on_real_nodes(fixture):
    node, state = fixture["object"], fixture["reported"]["state"]
    nfd = render_waits.nfd_labels_wait()
    gpu_label, nic_label = [jmespath.search(counter["each"], node) for counter in nfd["count"]]
    allocatable = jmespath.search(render_waits.allocatable_wait("nvidia.com/gpu", 1)["count"][0]["each"], node)
    summary = info.summarize_node(node)
    nfd_gpu = any(key.startswith("feature.node.kubernetes.io/pci-") and "10de" in key for key in (node["metadata"].get("labels") or {}))
    if state == "gpu-node":
        assert summary["has_gpu"], summary
        # Every NFD form of an NVIDIA GPU label counts, as the GPU Operator reads them.
        assert bool(gpu_label) == nfd_gpu
        if nfd_gpu:
            assert facts_nodes.select_nodes([node])[2] == "nfd_vendor_labels"
        mig = [r for r in (node.get("status") or {}).get("allocatable") or {} if r.startswith("nvidia.com/mig-")]
        if mig:
            assert set(summary["gpus"]["mig_allocatable"]) == set(mig)
    elif state == "no-allocatable":
        # "0" is advertised but nothing can be scheduled: the node does not count towards the resource.
        assert not allocatable and summary["gpus"]["allocatable"] == 0 and summary["gpus"]["capacity"] > 0
    elif state == "allocatable":
        assert allocatable and summary["gpus"]["allocatable"] > 0
    elif state == "not-nic-node":
        assert not nic_label and not summary["has_nvidia_nic"]
    else:
        pytest.fail("unknown reported state %s" % state)


@pytest.mark.parametrize("fixture", load("machineconfigpool"))
def test_diagnostics_findings_quote_the_pools_reason(fixture):
    """The diagnostics a failed play writes name what the wait quoted: the node's reason, or the pause."""
    from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster import diagnostics

    found = " ".join(" ".join(diagnostics.findings_for("MachineConfigPool", [fixture["object"]])).split())
    quote = fixture["reported"]["quote"]
    assert (quote if "paused" not in quote else "is paused (spec.paused: true)") in found, found


@pytest.mark.parametrize("fixture", load("webhook"))
def test_a_webhook_that_cannot_be_called_is_told_from_one_that_denies(fixture):
    """rules/webhooks.py on kube-apiserver's real answers while a webhook's pod is not ready: a call failure (retried
    within the webhook's start window), never a denial."""
    from ansible_collections.gpudirect.openshift.plugins.module_utils.rules import webhooks

    status = fixture["object"]
    assert fixture["reported"]["quote"] in status["message"]
    name = webhooks.webhook_call_failure(status["code"], status["message"])
    assert name and ('failed calling webhook "%s"' % name) in status["message"]
    denied = 'admission webhook "%s" denied the request: no supported NIC is selected by the nicSelector in CR p' % name
    assert webhooks.webhook_call_failure(400, denied) is None
