"""preflight stops before any write and lists every problem at once."""

from site_support import example, objects, run_playbook


def test_missing_package_and_unready_catalog_fail_before_any_write(sim_factory):
    sim = sim_factory(profile="mixed-lab", config={
        "catalog_remove_packages": ["nvidia-network-operator"],
        "catalog_source_states": {"redhat-operators": "TRANSIENT_FAILURE"},
    })
    run = run_playbook(sim, "-e", "@" + example("shared_device/roce"))
    assert run.rc != 0
    assert run.writes == 0 and run.dry_run_writes == 0
    assert "Package nvidia-network-operator is not in any catalog" in run.output
    # every problem in the same message: the unready catalog hides nfd and sriov-network-operator, and says so
    text = " ".join(run.output.split())
    assert "Package nfd is not in any catalog" in text
    assert "CatalogSource(s) redhat-operators (TRANSIENT_FAILURE) do not serve now, so their packages are hidden" in text
    assert "Preflight found 3 problem(s)" in run.output


def test_an_idle_catalog_serves_and_catalogs_the_collection_does_not_use_are_not_its_problem(sim_factory):
    """A gRPC catalog connection goes IDLE when unused (operator-lifecycle-manager keeps serving from it); a broken
    community catalog does not concern the four operators."""
    sim = sim_factory(profile="mixed-lab", config={
        "catalog_source_states": {"certified-operators": "IDLE", "community-operators": "TRANSIENT_FAILURE"}})
    run = run_playbook(sim, "-e", "@" + example("shared_device/roce"), "--tags", "preflight")
    assert run.rc == 0, run.output[-4000:]
    assert "Preflight found" not in run.output
    assert run.writes == 0


def test_foreign_operator_group_and_second_nic_cluster_policy_are_reported(sim_factory):
    sim = sim_factory(profile="mixed-lab")
    namespace = sim.store.find_kind("v1", "Namespace")
    sim.store.create(namespace, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "nvidia-network-operator"}})
    group = sim.store.find_kind("operators.coreos.com/v1", "OperatorGroup")
    sim.store.create(group, {"apiVersion": "operators.coreos.com/v1", "kind": "OperatorGroup",
                             "metadata": {"name": "global", "namespace": "nvidia-network-operator"}, "spec": {}})
    run = run_playbook(sim, "-e", "@" + example("shared_device/roce"))
    assert run.rc != 0 and run.writes == 0
    assert "OperatorGroup nvidia-network-operator/global targets all namespaces" in run.output
    assert len(objects(sim, "operators.coreos.com/v1alpha1", "Subscription")) == 0


def test_a_bare_cluster_is_rediscovered_once_however_many_kinds_are_missing(sim_factory):
    """No operator is installed, so a dozen kinds of the plan are not served: preflight's comparison reads them as
    absent after one rediscovery of the API, not one rediscovery per missing kind."""
    sim = sim_factory(profile="mixed-lab")
    run = run_playbook(sim, "-e", "@" + example("shared_device/roce"), "--tags", "preflight")
    assert run.rc == 0, run.output[-4000:]
    assert "A converge is needed" in run.output
    group_lists = [r for r in sim.request_log[-run.requests:] if r["path"].split("?")[0] == "/apis"]
    # the client's first discovery (absent a cache file) and the one rediscovery
    assert len(group_lists) <= 2, len(group_lists)
