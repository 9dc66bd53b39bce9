"""The wait filters the roles call: every entry a role passes to resource_wait carries what the task reads."""

from ansible_collections.gpudirect.openshift.plugins.filter import waits


def test_the_sriov_teardown_wait_carries_its_grace_period_and_timeout():
    # roles/teardown reads failure_grace_period and timeout from the entry: the counted SR-IOV wait (per-object failure
    # condition) must carry both, as the list waits do (a missing key failed every teardown that deleted policies).
    entry = waits.teardown_wait("sriov_node_states", ["sriovlegacy-roce-policy"], namespace="openshift-sriov-network-operator",
                                failure_grace_period=7, timeout=99)
    assert entry["each_failure_condition"] and entry["failure_grace_period"] == 7 and entry["timeout"] == 99
    assert entry["count"][0]["at_most"] == 0


def test_the_network_attachments_teardown_wait_has_a_timeout():
    entry = waits.teardown_wait("network_attachments", ["sriov-network"], timeout=5)
    assert entry["timeout"] == 5
