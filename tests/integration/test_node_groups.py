"""Issue 17 node groups on the groups-lab profile: site.yml gives each group its own configuration (the rail-ib
group eight shared-device InfiniBand rails, the roce group SR-IOV VFs through a policy with the group's node
selector), a re-run writes nothing, teardown removes both groups' objects; bad groups are refused before any write."""

import json
import os

import yaml

from simulator.controllers.testing import wait
from site_support import ROOT, allocatable, objects, run_playbook

VARS = os.path.join(ROOT, "playbooks", "vars", "simulator", "groups-lab.yml")
RAILS = ["rail%d" % index for index in range(8)]
LABEL = "gpudirect.example.com/rdma-group"
MANAGED = ("MacvlanNetwork", "IPoIBNetwork", "HostDeviceNetwork", "SriovNetwork", "SriovNetworkNodePolicy", "NicClusterPolicy")
API = {"SriovNetwork": "sriovnetwork.openshift.io/v1", "SriovNetworkNodePolicy": "sriovnetwork.openshift.io/v1"}


def _objects(sim, kind):
    return objects(sim, API.get(kind, "mellanox.com/v1alpha1"), kind)


def test_two_groups_converge_rerun_prune_one_and_tear_down(sim_factory, tmp_path):
    """One cluster walked through the groups' life in order: each group gets its own configuration, a re-run writes
    nothing, a group left out of the list is pruned, teardown removes both groups' objects. One test, not four sharing a
    module fixture: the steps depend on each other, and under xdist or in random order four tests would not keep theirs."""
    sim = sim_factory(profile="groups-lab")
    first = run_playbook(sim, "-e", "@" + VARS)
    assert first.rc == 0, first.output[-6000:]

    # Each group gets its own configuration.
    ipoib = _objects(sim, "IPoIBNetwork")
    assert sorted(n["metadata"]["name"] for n in ipoib) == RAILS
    policy = _objects(sim, "NicClusterPolicy")[0]["spec"]
    config = json.loads(policy["rdmaSharedDevicePlugin"]["config"])["configList"]
    assert [c["resourceName"] for c in config] == RAILS and "sriovDevicePlugin" not in policy
    sriov = _objects(sim, "SriovNetworkNodePolicy")
    assert [(p["metadata"]["name"], p["spec"]["nodeSelector"]) for p in sriov] == [("sriovlegacy-roce-policy", {LABEL: "roce"})]
    network = _objects(sim, "SriovNetwork")
    assert [n["metadata"]["name"] for n in network] == ["sriov-network-roce"]
    assert json.loads(network[0]["spec"]["ipam"])["range"] == "10.20.0.0/16"
    wait(lambda: int(allocatable(sim, "openshift.io/sriovlegacy_roce").get("roce-0") or 0) > 0, timeout=30, what="VFs")
    rails, vfs = allocatable(sim, "rdma/rail0"), allocatable(sim, "openshift.io/sriovlegacy_roce")
    assert [n for n in rails if int(rails[n] or 0)] == ["rail-ib-0", "rail-ib-1"]
    assert sorted(n for n in vfs if int(vfs[n] or 0)) == ["roce-0", "roce-1"]
    assert "node groups rail-ib: shared_device/infiniband; roce: sriov_legacy/roce" in first.output

    # A re-run writes nothing.
    again = run_playbook(sim, "-e", "@" + VARS)
    assert again.rc == 0 and again.changed == 0 and again.writes == 0, again.output[-4000:]

    # A group left out of the list is pruned. Removing the SR-IOV group removes its VFs: its nodes drain, which a
    # configured cluster confirms.
    run = run_playbook(sim, "-e", _with_groups(tmp_path, lambda items: items.pop()), "-e", "gpudirect_allow_disruption=true")
    assert run.rc == 0, run.output[-4000:]
    assert "VFs are removed" in run.output, run.output[-4000:]
    assert _objects(sim, "SriovNetwork") == [] and _objects(sim, "SriovNetworkNodePolicy") == []
    assert sorted(n["metadata"]["name"] for n in _objects(sim, "IPoIBNetwork")) == RAILS

    # Teardown removes both groups' objects.
    down = run_playbook(sim, "-e", "@" + VARS, playbook="playbooks/teardown.yml")
    assert down.rc == 0, down.output[-4000:]
    assert {kind: [o["metadata"]["name"] for o in _objects(sim, kind)] for kind in MANAGED} == {kind: [] for kind in MANAGED}


def _with_groups(tmp_path, change):
    with open(VARS, encoding="utf-8") as stream:
        variables = yaml.safe_load(stream)
    change(variables["gpudirect_rdma_node_groups"])
    path = tmp_path / "vars.json"
    path.write_text(json.dumps(variables))
    return "@%s" % path


def test_a_group_that_selects_no_node_is_refused_before_any_write(sim_factory, tmp_path):
    sim = sim_factory(profile="groups-lab")
    bad = _with_groups(tmp_path, lambda groups: groups[1]["node_selector"].update({LABEL: "rocee"}))
    run = run_playbook(sim, "-e", bad)
    assert run.rc != 0 and run.writes == 0, run.output[-3000:]
    assert "gpudirect_rdma_node_groups[roce].node_selector: gpudirect.example.com/rdma-group=rocee selects no node" in run.output


def test_a_node_two_groups_select_is_refused_before_any_write(sim_factory, tmp_path):
    sim = sim_factory(profile="groups-lab")
    bad = _with_groups(tmp_path, lambda groups: groups[1].update({"node_selector": {"kubernetes.io/arch": "amd64"}}))
    run = run_playbook(sim, "-e", bad)
    assert run.rc != 0 and run.writes == 0, run.output[-3000:]
    assert "gpudirect_rdma_node_groups[roce].node_selector: node rail-ib-0 is also selected by group rail-ib" in run.output
