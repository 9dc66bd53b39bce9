"""Issue 17 acceptance on the rail-optimised profile: site.yml with auto NIC selection configures 8 rails from the
nodes' facts (one resource, network and IPAM range each, rail0..rail7, storage NICs left out); a re-run writes
nothing but the short-lived facts pods."""

import json

from simulator.controllers.testing import wait
from site_support import allocatable, objects, run_playbook

RAILS = ["rail%d" % index for index in range(8)]
VARIABLES = {"gpudirect_rdma_method": "shared_device", "gpudirect_rdma_fabric": "infiniband", "gpudirect_rdma_nic_selection": "auto",
             "gpudirect_rdma_resource_names": RAILS, "gpudirect_rdma_network_names": RAILS, "gpudirect_rdma_ipam_range": "192.168.0.0/16"}
FACTS_POD_KINDS = {"pods", "configmaps"}


def test_auto_configures_eight_rails_and_a_rerun_writes_nothing(sim_factory, tmp_path):
    sim = sim_factory(profile="rail-ib-lab")
    variables = tmp_path / "rails.json"
    variables.write_text(json.dumps(VARIABLES))
    first = run_playbook(sim, "-e", "@%s" % variables)
    assert first.rc == 0, first.output[-6000:]
    networks = objects(sim, "mellanox.com/v1alpha1", "IPoIBNetwork")
    assert sorted(n["metadata"]["name"] for n in networks) == RAILS
    ranges = sorted(json.loads(n["spec"]["ipam"])["range"] for n in networks)
    assert len(set(ranges)) == 8
    by_name = dict((n["metadata"]["name"], n["spec"]["master"]) for n in networks)
    assert by_name["rail0"] == "ibp26s0" and by_name["rail7"] == "ibp220s0"
    config = json.loads(objects(sim, "mellanox.com/v1alpha1", "NicClusterPolicy")[0]["spec"]["rdmaSharedDevicePlugin"]["config"])
    assert [(c["resourceName"], c["selectors"]["ifNames"]) for c in config["configList"]][:2] == [
        ("rail0", ["ibp26s0"]), ("rail1", ["ibp44s0"])]
    assert not any("enp65s0f0np0" in c["selectors"].get("ifNames", []) for c in config["configList"])  # storage left out
    workers = ("rail-ib-0", "rail-ib-1", "rail-ib-2")
    wait(lambda: all(int(allocatable(sim, "rdma/rail7").get(w) or 0) > 0 for w in workers), timeout=30, what="rdma/rail7")

    again = run_playbook(sim, "-e", "@%s" % variables)
    assert again.rc == 0, again.output[-6000:]
    assert "The cluster already matches the plan" in again.output, again.output[-4000:]
    written = {r["plural"] for r in sim.request_log[-again.requests:]
               if r["verb"] in ("create", "update", "patch", "delete") and not r.get("dry_run")}
    assert written <= FACTS_POD_KINDS, written
