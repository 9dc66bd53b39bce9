"""site.yml's in-sync check (plan_status in preflight): a converged cluster is recognised from one list per kind,
and every kind of drift - a changed variable, a leftover object, an edited object, a readiness condition that no
longer holds - is reported and sends site.yml through the roles again, which repair what is theirs to repair."""

import json
import re

from simulator.controllers.testing import wait

from site_support import example, objects, run_playbook

EXAMPLE = example("shared_device/roce")
IN_SYNC = "The cluster already matches the plan"
# 5 rendered objects; Namespace, OperatorGroup, Subscription and CSV for each of the four operators.
MANAGED_OBJECTS = 5 + 4 * 4


def differences(run):
    """The difference sentences preflight printed (the YAML callback wraps long ones over several lines)."""
    match = re.search(r"A converge is needed \((\d+) difference\(s\)\):'?\n(.*?)\n\n", run.output, re.S)
    assert match, run.output[-3000:]
    items = []
    for line in match.group(2).splitlines():
        text = line.strip()
        if text.startswith("- "):
            items.append(text[2:])
        elif items:
            items[-1] += " " + text
    return [i.strip("'") for i in items]


def policy_state(sim):
    return (objects(sim, "mellanox.com/v1alpha1", "NicClusterPolicy")[0].get("status") or {}).get("state")


def check_only(sim, *extra):
    run = run_playbook(sim, "-e", "@" + EXAMPLE, "--tags", "preflight", *extra)
    assert run.rc == 0, run.output[-4000:]
    assert run.writes == 0 and run.dry_run_writes == 0
    return run


def test_a_converged_cluster_is_recognised_and_every_drift_is_reported_and_repaired(sim_factory):
    sim = sim_factory(profile="mixed-lab")
    first = run_playbook(sim, "-e", "@" + EXAMPLE)
    assert first.rc == 0, first.output[-4000:]
    assert "A converge is needed" in first.output

    rerun = run_playbook(sim, "-e", "@" + EXAMPLE)
    assert rerun.rc == 0 and rerun.changed == 0 and rerun.writes == 0, rerun.output[-4000:]
    assert IN_SYNC in rerun.output
    # Object reads, that is; discovery (GET /apis/<group>/<version>) is the client's cached API metadata.
    reads = [r for r in sim.request_log[-rerun.requests:] if r["verb"] in ("get", "list", "watch") and r.get("plural")]
    assert len(reads) <= MANAGED_OBJECTS, [(r["verb"], r["path"]) for r in reads]
    assert all(r["verb"] == "list" for r in reads), [(r["verb"], r["path"]) for r in reads]

    # A variable the operator roles use: the Subscription would be updated.
    run = check_only(sim, "-e", "nvidia_gpu_operator_install_plan_approval=Automatic")
    assert "operator gpu-operator-certified in nvidia-gpu-operator: Subscription nvidia-gpu-operator/gpu-operator-certified would be updated" \
        in differences(run)

    client = sim.dynamic_client()
    macvlan = client.resources.get(api_version="mellanox.com/v1alpha1", kind="MacvlanNetwork")
    stray = json.loads(json.dumps(objects(sim, "mellanox.com/v1alpha1", "MacvlanNetwork")[0]))
    stray["metadata"] = {"name": "stray-net", "labels": stray["metadata"]["labels"]}
    stray.pop("status", None)
    macvlan.create(body=stray)
    policy = client.resources.get(api_version="mellanox.com/v1alpha1", kind="NicClusterPolicy")
    policy.patch(name="nic-cluster-policy", body={"spec": {"ofedDriver": {"version": "0.0-edited"}}},
                 content_type="application/merge-patch+json")
    run = check_only(sim)
    found = differences(run)
    assert "MacvlanNetwork stray-net is left from another configuration and would be removed" in found
    assert "NicClusterPolicy nic-cluster-policy differs from the plan and would be patched" in found

    # The roles run again and repair both; then the cluster matches again.
    repair = run_playbook(sim, "-e", "@" + EXAMPLE)
    assert repair.rc == 0 and repair.changed > 0, repair.output[-4000:]
    assert {m["metadata"]["name"] for m in objects(sim, "mellanox.com/v1alpha1", "MacvlanNetwork")} == {"rdmashared-net"}
    assert objects(sim, "mellanox.com/v1alpha1", "NicClusterPolicy")[0]["spec"]["ofedDriver"]["version"] != "0.0-edited"
    assert IN_SYNC in check_only(sim).output

    # Like the real network operator, the simulated one renders a deleted NetworkAttachmentDefinition again.
    nads = client.resources.get(api_version="k8s.cni.cncf.io/v1", kind="NetworkAttachmentDefinition")
    nad = objects(sim, "k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition")[0]
    nads.delete(name=nad["metadata"]["name"], namespace=nad["metadata"]["namespace"])
    wait(lambda: [n["metadata"]["uid"] for n in objects(sim, "k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition")]
         not in ([], [nad["metadata"]["uid"]]), timeout=30, what="the NAD rendered again")
    assert IN_SYNC in check_only(sim).output

    # Readiness is part of the plan: a component that stops working is reported, not ignored.
    sim.faults.update({"operator_faults": {"nic_policy_component_failure": {
        "state": "state-OFED", "message": "driver pod is in CrashLoopBackOff"}}})
    wait(lambda: policy_state(sim) == "notReady", timeout=30, what="the NicClusterPolicy notReady")
    assert "NicClusterPolicy nic-cluster-policy ready: not ready (state-OFED: driver pod is in CrashLoopBackOff)" in differences(check_only(sim))
    sim.faults.clear()
    wait(lambda: policy_state(sim) == "ready", timeout=30, what="the NicClusterPolicy ready again")
    assert IN_SYNC in check_only(sim).output
