"""What a teardown leaves, and the operator namespaces a later one still removes (issue 31 point 7)."""

from ansible_collections.gpudirect.openshift.plugins.filter.teardown import teardown_leftovers

OPERATOR_NAMESPACES = ["openshift-nfd", "openshift-sriov-network-operator", "nvidia-network-operator", "nvidia-gpu-operator"]


def namespace(name):
    return {"metadata": {"name": name, "labels": {"app.kubernetes.io/managed-by": "gpudirect.openshift"}}}


def namespaced(name, namespace_name):
    return {"metadata": {"name": name, "namespace": namespace_name}}


# After a default teardown: operators, their OperatorGroups and Subscriptions gone; namespaces and the MachineConfig
# stay, labelled (what the issue saw).
AFTER_DEFAULT = {
    "namespaces": [namespace(name) for name in OPERATOR_NAMESPACES] + [namespace("gpudirect-facts-unrelated")],
    "subscriptions": [], "operator_groups": [],
    "machineconfigs": [{"metadata": {"name": "99-worker-gpudirect-crio-memlock"}}],
}


def test_a_later_run_with_remove_namespaces_removes_the_namespaces_an_earlier_one_left():
    found = teardown_leftovers(AFTER_DEFAULT, OPERATOR_NAMESPACES, remove_namespaces=True)
    assert found["orphaned_namespaces"] == sorted(OPERATOR_NAMESPACES)
    assert found["left"] == ["MachineConfig 99-worker-gpudirect-crio-memlock (teardown_machineconfigs=true removes them; "
                             "every node of their pool drains and reboots once)"]


def test_a_default_run_says_what_it_leaves_and_the_setting_that_removes_it():
    found = teardown_leftovers(AFTER_DEFAULT, OPERATOR_NAMESPACES)
    assert found["left"][1] == ("Namespace nvidia-gpu-operator, nvidia-network-operator, openshift-nfd, "
                                "openshift-sriov-network-operator (teardown_remove_namespaces=true removes them)")
    assert len(found["left"]) == 2
    assert teardown_leftovers(AFTER_DEFAULT, OPERATOR_NAMESPACES, remove_machineconfigs=True, remove_namespaces=True)["left"] == []


def test_a_namespace_with_someone_elses_operator_stays_and_says_why():
    found = dict(AFTER_DEFAULT, subscriptions=[namespaced("nfd", "openshift-nfd")])
    result = teardown_leftovers(found, OPERATOR_NAMESPACES, remove_machineconfigs=True, remove_namespaces=True)
    assert "openshift-nfd" not in result["orphaned_namespaces"]
    assert result["left"] == ["Namespace openshift-nfd: an operator the collection did not install runs there (its "
                              "Subscription), so it stays"]


def test_operators_kept_and_namespaces_with_our_operator_group_are_not_orphans():
    found = dict(AFTER_DEFAULT, operator_groups=[namespaced("openshift-nfd-og", "openshift-nfd")],
                 subscriptions=[namespaced("nfd", "openshift-nfd")])
    result = teardown_leftovers(found, OPERATOR_NAMESPACES, remove_machineconfigs=True, remove_operators=False,
                                remove_namespaces=True)
    assert "openshift-nfd" not in result["orphaned_namespaces"]
    assert result["left"][0] == "the operators in openshift-nfd (teardown_operators=true removes them)"
    assert result["left"][1].endswith("(teardown_remove_namespaces=true removes them, with teardown_operators=true)")
