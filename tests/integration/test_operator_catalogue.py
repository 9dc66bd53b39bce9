"""One catalogue entry is all an operator needs: a fifth operator, given only as an entry of gpudirect_extra_operators,
is installed by site.yml, checked by preflight's in-sync comparison, collected by diagnostics and removed by
teardown, with no other change.

The simulated catalog holds the fake package (config catalog_extra_packages, a test harness); OLM installs it like the
four real ones.
"""

import glob
import json
import os

from site_support import example, objects, run_playbook

FIFTH = {"role": "fifth_operator", "package": "fifth-operator", "namespace": "fifth-operator-system",
         "title": "A fifth operator"}
EXTRA = json.dumps({"gpudirect_extra_operators": [FIFTH], "fifth_operator_channel": "alpha"})
CATALOG = {"fifth-operator": {"catalogs": ["redhat-operators"], "defaultChannel": "stable",
                              "channels": {"stable": ["fifth-operator.v1.0.0"], "alpha": ["fifth-operator.v1.1.0"]}}}


def subscriptions(sim, namespace):
    return [s["spec"] for s in objects(sim, "operators.coreos.com/v1alpha1", "Subscription", namespace)]


def csv_phases(sim, namespace):
    return {c["metadata"]["name"]: c.get("status", {}).get("phase")
            for c in objects(sim, "operators.coreos.com/v1alpha1", "ClusterServiceVersion", namespace)}


def test_a_fifth_operator_needs_one_catalogue_entry(sim_factory, tmp_path):
    sim = sim_factory(profile="mixed-lab", config={"catalog_extra_packages": CATALOG})
    env = {"GPUDIRECT_ARTIFACTS_DIR": str(tmp_path)}
    args = ["-e", "@" + example("shared_device/roce"), "-e", EXTRA]

    first = run_playbook(sim, *args, env=env)
    assert first.rc == 0, first.output[-5000:]
    # Installed with its own <role>_* setting (the channel), after the four operators.
    assert [(s["name"], s.get("channel")) for s in subscriptions(sim, FIFTH["namespace"])] == [("fifth-operator", "alpha")]
    assert csv_phases(sim, FIFTH["namespace"]) == {"fifth-operator.v1.1.0": "Succeeded"}
    assert "fifth-operator.v1.1.0" in first.output  # the summary names its CSV

    # The in-sync check covers it: converged, the re-run writes nothing ...
    again = run_playbook(sim, *args, env=env)
    assert again.rc == 0 and again.writes == 0 and again.changed == 0, again.output[-3000:]
    # ... and notices when it is gone, so the next run installs it again.
    client = sim.dynamic_client()
    client.resources.get(api_version="operators.coreos.com/v1alpha1", kind="Subscription").delete(
        name="fifth-operator", namespace=FIFTH["namespace"])
    repaired = run_playbook(sim, *args, env=env)
    assert repaired.rc == 0 and repaired.writes > 0, repaired.output[-3000:]
    assert "fifth-operator" in repaired.output and "would be created" in repaired.output
    assert [s["name"] for s in subscriptions(sim, FIFTH["namespace"])] == ["fifth-operator"]

    # Diagnostics collect its namespace.
    gathered = run_playbook(sim, "-e", EXTRA, playbook="playbooks/must_gather.yml", env=env)
    assert gathered.rc == 0, gathered.output[-3000:]
    assert glob.glob(os.path.join(str(tmp_path), "**", FIFTH["namespace"], "*.yaml"), recursive=True), \
        sorted(glob.glob(os.path.join(str(tmp_path), "**"), recursive=True))[:40]

    # Teardown removes it with the others.
    removed = run_playbook(sim, "-e", "@" + example("shared_device/roce"), "-e", EXTRA, playbook="playbooks/teardown.yml", env=env)
    assert removed.rc == 0, removed.output[-3000:]
    assert subscriptions(sim, FIFTH["namespace"]) == []
    assert csv_phases(sim, FIFTH["namespace"]) == {}
    assert objects(sim, "operators.coreos.com/v1", "OperatorGroup", FIFTH["namespace"]) == []


def test_a_bad_extra_operator_is_refused_before_any_write(sim_factory):
    sim = sim_factory(profile="mixed-lab")
    bad = json.dumps({"gpudirect_extra_operators": [{"role": "nfd", "package": "x-operator", "namespace": "x"}]})
    run = run_playbook(sim, "-e", "@" + example("shared_device/roce"), "-e", bad)
    assert run.rc != 0 and run.writes == 0
    assert "gpudirect_extra_operators[0]" in run.output and "in the catalogue already" in run.output
