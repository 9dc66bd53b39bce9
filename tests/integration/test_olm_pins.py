"""Pins that hold while OLM keeps resolving (issue 15): olm_operator through ansible-playbook against a simulated
cluster whose catalog changes at run time (SimulatedCluster.update_catalog: published bundles, moved default
channels)."""

import pytest
from simulator.controllers.testing import wait

from test_olm_operator import OLM_V1A1, OPERATORS, get, items, kube, run_olm

GPU = OPERATORS[3]
NS = GPU["namespace"]
V25_3_1, V25_3_4 = "gpu-operator-certified.v25.3.1", "gpu-operator-certified.v25.3.4"
V25_10_0 = "gpu-operator-certified.v25.10.0"


def subscription(client):
    return get(client, OLM_V1A1, "Subscription", "gpu-operator-certified", NS)


def pending_upgrade(client, csv):
    status = (subscription(client) or {}).get("status") or {}
    return status.get("state") == "UpgradePending" and status.get("currentCSV") == csv


def test_a_moved_default_channel_leaves_a_pinned_install_unchanged(sim_factory, tmp_path):
    sim = sim_factory(profile="roce-lab@4.17.30")
    client = kube(sim)
    pinned = dict(GPU, install_plan_approval="Manual", starting_csv=V25_3_4)
    first, _took = run_olm(sim, tmp_path, [pinned])
    assert first[0]["csv"] == V25_3_4 and first[0]["channel"] == "v25.3" and first[0]["upgrade_available"] is None

    sim.update_catalog(publish=[{"package": "gpu-operator-certified", "channel": "v25.10", "csv": V25_10_0}],
                       default_channels={"gpu-operator-certified": "v25.10"})
    mark = sim.mark()
    again, _took = run_olm(sim, tmp_path, [pinned])
    result = again[0]
    assert not result.get("failed"), result.get("msg")
    assert result["changed"] is False and sim.count(writes_only=True, since=mark) == 0
    assert result["channel"] == "v25.3" and result["default_channel"] == "v25.10"
    assert subscription(client)["spec"]["channel"] == "v25.3"
    assert [p for p in items(client, OLM_V1A1, "InstallPlan", NS) if V25_10_0 in p["spec"]["clusterServiceVersionNames"]] == []

    # Without a pin, Manual approval: an installed operator keeps its channel and CSV too.
    unpinned = dict(GPU, install_plan_approval="Manual")
    mark = sim.mark()
    third, _took = run_olm(sim, tmp_path, [unpinned])
    assert third[0]["changed"] is False and third[0]["csv"] == V25_3_4 and third[0]["channel"] == "v25.3"
    assert sim.count(writes_only=True, since=mark) == 0


def test_a_pin_holds_while_olm_offers_an_upgrade_and_the_offer_is_reported(sim_factory, tmp_path):
    sim = sim_factory(profile="roce-lab@4.17.30")
    client = kube(sim)
    pinned = dict(GPU, install_plan_approval="Manual", starting_csv=V25_3_1)
    first, _took = run_olm(sim, tmp_path, [pinned])
    assert first[0]["csv"] == V25_3_1 and first[0]["phase"] == "Succeeded"
    wait(lambda: pending_upgrade(client, V25_3_4), what="OLM offers the channel head")
    mark = sim.mark()
    again, _took = run_olm(sim, tmp_path, [pinned])
    result = again[0]
    assert result["changed"] is False and sim.count(writes_only=True, since=mark) == 0
    assert result["installed_csv"] == V25_3_1 and result["upgrade_available"] == V25_3_4
    assert get(client, OLM_V1A1, "ClusterServiceVersion", V25_3_4, NS) is None


def test_moving_the_pin_to_the_offered_csv_upgrades_exactly_to_it(sim_factory, tmp_path):
    sim = sim_factory(profile="roce-lab@4.17.30")
    client = kube(sim)
    run_olm(sim, tmp_path, [dict(GPU, install_plan_approval="Manual", starting_csv=V25_3_1)])
    wait(lambda: pending_upgrade(client, V25_3_4), what="OLM offers the channel head")
    bumped = dict(GPU, install_plan_approval="Manual", starting_csv=V25_3_4)
    upgraded, _took = run_olm(sim, tmp_path, [bumped])
    result = upgraded[0]
    assert not result.get("failed"), result.get("msg")
    assert result["csv"] == V25_3_4 and result["phase"] == "Succeeded" and result["installed_csv"] == V25_3_4
    wait(lambda: get(client, OLM_V1A1, "ClusterServiceVersion", V25_3_1, NS) is None, what="the old CSV replaced")
    mark = sim.mark()
    again, _took = run_olm(sim, tmp_path, [bumped])
    assert again[0]["changed"] is False and sim.count(writes_only=True, since=mark) == 0


def test_a_pin_olm_cannot_reach_fails_before_any_write_naming_the_offer(sim_factory, tmp_path):
    sim = sim_factory(profile="roce-lab@4.17.30")
    client = kube(sim)
    run_olm(sim, tmp_path, [dict(GPU, install_plan_approval="Manual", starting_csv=V25_3_4)])
    mark = sim.mark()
    down, _took = run_olm(sim, tmp_path, [dict(GPU, install_plan_approval="Manual", starting_csv=V25_3_1)])
    result = down[0]
    assert result["failed"] is True and sim.count(writes_only=True, since=mark) == 0
    assert "starting_csv is %s but %s is installed" % (V25_3_1, V25_3_4) in result["msg"]
    assert "offers no upgrade" in result["msg"] and "Nothing was changed" in result["msg"]
    assert subscription(client)["spec"]["startingCSV"] == V25_3_4


def test_automatic_approval_with_a_starting_csv_is_refused_before_any_write(sim_factory, tmp_path):
    sim = sim_factory(profile="roce-lab@4.17.30")
    mark = sim.mark()
    results, _took = run_olm(sim, tmp_path, [dict(GPU, install_plan_approval="Automatic", starting_csv=V25_3_1)])
    result = results[0]
    assert result["failed"] is True and sim.count(writes_only=True, since=mark) == 0
    assert "does not pin the version" in result["msg"] and "Set install_plan_approval to Manual" in result["msg"]


def test_two_approval_modes_in_one_namespace_are_refused_before_any_write(sim_factory, tmp_path):
    sim = sim_factory(profile="roce-lab@4.17.30")
    client = kube(sim)
    run_olm(sim, tmp_path, [dict(OPERATORS[2], namespace=NS, install_plan_approval="Manual")])
    mark = sim.mark()
    results, _took = run_olm(sim, tmp_path, [dict(GPU, install_plan_approval="Automatic")])
    result = results[0]
    assert result["failed"] is True and sim.count(writes_only=True, since=mark) == 0
    assert "also holds Subscription nvidia-network-operator (Manual)" in result["msg"]
    assert get(client, OLM_V1A1, "Subscription", "gpu-operator-certified", NS) is None


def test_preflight_refuses_a_pin_that_cannot_hold_and_mixed_approvals_before_any_write(sim_factory):
    from site_support import example, run_playbook

    sim = sim_factory(profile="mixed-lab@4.17.30")
    run = run_playbook(sim, "-e", "@" + example("shared_device/roce"), "-e",
                       '{"nvidia_gpu_operator_install_plan_approval": "Automatic", '
                       '"nvidia_gpu_operator_starting_csv": "%s", '
                       '"nvidia_network_operator_namespace": "nvidia-gpu-operator", '
                       '"nvidia_network_operator_install_plan_approval": "Manual"}' % V25_3_1)
    text = run.output.replace("\n", " ")
    assert run.rc != 0 and "Preflight found" in run.output, run.output[-4000:]
    assert "gpu-operator-certified: starting_csv=%s with install_plan_approval=Automatic does not pin" % V25_3_1 in text
    assert "namespace nvidia-gpu-operator also holds Subscription" in text
    assert run.writes == 0 and run.dry_run_writes == 0


def test_preflight_lists_the_upgrade_olm_offers_without_acting_and_the_subscription_config_is_applied(sim_factory):
    from site_support import example, run_playbook

    sim = sim_factory(profile="mixed-lab@4.17.30")  # the lab the configuration examples describe
    pin = ('{"nvidia_gpu_operator_starting_csv": "%s", "nvidia_gpu_operator_subscription_config": '
           '{"env": [{"name": "HTTPS_PROXY", "value": "http://proxy.example:3128"}]}}' % V25_3_1)
    first = run_playbook(sim, "-e", "@" + example("shared_device/roce"), "-e", pin)
    assert first.rc == 0, first.output[-4000:]
    assert subscription(kube(sim))["spec"]["config"] == {"env": [{"name": "HTTPS_PROXY", "value": "http://proxy.example:3128"}]}
    wait(lambda: pending_upgrade(kube(sim), V25_3_4), what="OLM offers the channel head")
    again = run_playbook(sim, "-e", "@" + example("shared_device/roce"), "-e", pin, "--tags", "preflight")
    assert again.rc == 0, again.output[-4000:]
    assert "gpu-operator-certified in nvidia-gpu-operator: %s installed on channel v25.3, %s available" % (V25_3_1, V25_3_4) \
        in " ".join(again.output.split())
    assert again.writes == 0 and again.dry_run_writes == 0


@pytest.mark.parametrize("approval", ["Manual", "Automatic"])
def test_a_bundle_that_cannot_be_unpacked_fails_within_the_grace_period_quoting_olm(sim_factory, tmp_path, approval):
    sim = sim_factory(profile="roce-lab@4.17.30", faults={"operator_faults": {"bundle_unpack_failure": {"gpu-operator-certified": {}}}})
    results, took = run_olm(sim, tmp_path, [dict(GPU, install_plan_approval=approval, failure_grace_period=3, wait_timeout=300)])
    result = results[0]
    assert result["failed"] is True
    assert "BundleUnpacking (UnpackingInProgress): Bundle image pull failed" in result["msg"], result["msg"]
    assert result["reason"] == "BundleUnpacking"
    # Failed after the grace period, long before wait_timeout (and before OLM's own unpack timeout).
    assert result["elapsed"] >= 3 and took < 200
