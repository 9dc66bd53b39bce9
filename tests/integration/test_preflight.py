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
    # every problem in the same message: the unready catalog hides nfd and sriov-network-operator
    assert "CatalogSource redhat-operators in openshift-marketplace is TRANSIENT_FAILURE, not READY" in run.output
    assert "Package nfd is not in any catalog" in run.output
    assert "Preflight found 4 problem(s)" in run.output


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
