# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rules/timeouts.py: the MachineConfigPool rollout's timeout derived from the nodes plan_status says a change drains
and reboots, at both ends of the documented per-node range, and the sentence the play prints before the wait."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpudirect.openshift.plugins.filter.waits import rollout_timeout as rollout_timeout_filter
from ansible_collections.gpudirect.openshift.plugins.module_utils.rules.timeouts import (
    BASE_SECONDS, NODE_ROLLOUT_SECONDS, rollout_timeout)


def machineconfig(pool, nodes):
    """A plan_status disruption entry (plugins/modules/plan_status.py RETURN sample)."""
    return {"object": "MachineConfig 99-%s-gpudirect-rdma" % pool, "action": "create", "effect": "drain and reboot",
            "pool": pool, "nodes": ["%s-%d" % (pool, index) for index in range(nodes)], "reasons": ["a new MachineConfig"]}


SRIOV = {"object": "SriovNetworkNodePolicy sriov-legacy-policy", "action": "create", "effect": "drain and reboot",
         "pool": None, "nodes": ["worker-%d" % i for i in range(50)], "reasons": ["VFs"]}


@pytest.mark.parametrize("per_node", NODE_ROLLOUT_SECONDS)
@pytest.mark.parametrize("nodes", [2, 10, 100])
def test_the_timeout_grows_with_the_nodes_that_reboot_one_at_a_time(per_node, nodes):
    result = rollout_timeout([machineconfig("worker", nodes), SRIOV], per_node=per_node)
    assert result["timeout"] == BASE_SECONDS + nodes * per_node and result["derived"] is True
    assert result["text"] == ("Waiting up to %d s for the MachineConfig rollout: %d node(s) of pool worker drain and reboot one "
                              "at a time, %d s each, plus %d s (set rdma_machineconfig_timeout to override)."
                              % (result["timeout"], nodes, per_node, BASE_SECONDS))


def test_the_largest_pool_counts_and_max_unavailable_makes_rounds():
    result = rollout_timeout([machineconfig("worker", 3), machineconfig("gpu", 8)], per_node=600, max_unavailable=3)
    assert result["timeout"] == BASE_SECONDS + 3 * 600 and "8 node(s) of pool gpu drain and reboot 3 at a time" in result["text"]


def test_a_given_timeout_wins_and_no_planned_drain_keeps_the_fixed_default():
    assert rollout_timeout([machineconfig("worker", 100)], given=7200) == {
        "timeout": 7200, "derived": False, "text": "Waiting up to 7200 s for the MachineConfig rollout (rdma_machineconfig_timeout)."}
    nothing = rollout_timeout([SRIOV])
    assert nothing["timeout"] == 5400 and nothing["derived"] is False and "no node drain is planned" in nothing["text"]


def test_the_filter_checks_its_input():
    from ansible.errors import AnsibleFilterError

    assert rollout_timeout_filter([machineconfig("worker", 2)])["timeout"] == BASE_SECONDS + 2 * NODE_ROLLOUT_SECONDS[1]
    with pytest.raises(AnsibleFilterError, match="rollout_timeout: expects the disruptions"):
        rollout_timeout_filter(None)
    with pytest.raises(AnsibleFilterError, match="rdma_machineconfig_timeout must be at least 0"):
        rollout_timeout_filter([], given=-1)


# SR-IOV policy sync: the drain controller's parallelism (sriov-network-operator controllers/helper.go defaultPoolConfig,
# api/v1/helper.go SriovNetworkPoolConfig.MaxUnavailable), at both ends of the per-node range.
from ansible_collections.gpudirect.openshift.plugins.module_utils.rules.timeouts import (  # noqa: E402
    ALL_AT_ONCE, drain_timeout, max_unavailable_of, pool_rollout_timeout, sriov_sync_timeout)


def sriov(nodes, kind="SriovNetworkNodePolicy", name="sriov-legacy-policy"):
    return {"object": "%s openshift-sriov-network-operator/%s" % (kind, name), "action": "create", "effect": "drain and reboot",
            "pool": None, "nodes": ["worker-%d" % i for i in range(nodes)], "reasons": ["VFs"]}


@pytest.mark.parametrize("per_node", NODE_ROLLOUT_SECONDS)
@pytest.mark.parametrize("nodes", [2, 10, 100])
def test_an_sriov_sync_drains_one_node_at_a_time_without_a_pool_config(per_node, nodes):
    result = sriov_sync_timeout([sriov(nodes), machineconfig("worker", 3)], per_node=per_node)
    assert result["timeout"] == BASE_SECONDS + nodes * per_node and result["derived"] is True
    assert result["text"] == ("Waiting up to %d s for the SR-IOV policy sync: %d node(s) drain and reboot one at a time, %d s "
                              "each, plus %d s (set rdma_sriov_timeout to override)." % (result["timeout"], nodes, per_node, BASE_SECONDS))


def test_an_sriov_pool_config_sets_how_many_nodes_drain_at_once():
    # Two policies on the same nodes drain each node once; the rdmaMode change of the pool config adds no node.
    both = [sriov(10), sriov(10, name="second"), sriov(4, kind="SriovNetworkPoolConfig", name="worker")]
    assert sriov_sync_timeout(both)["timeout"] == BASE_SECONDS + 10 * 1800
    assert sriov_sync_timeout(both, pool_config=True, pool_max_unavailable=3)["timeout"] == BASE_SECONDS + 4 * 1800
    # A percentage is scaled down (intstr GetScaledValueFromIntOrPercent, roundUp false), never below one node.
    assert sriov_sync_timeout(both, pool_config=True, pool_max_unavailable="25%")["timeout"] == BASE_SECONDS + 5 * 1800
    assert sriov_sync_timeout(both, pool_config=True, pool_max_unavailable="5%")["timeout"] == BASE_SECONDS + 10 * 1800
    # A pool config without maxUnavailable drains every node at once (MaxUnavailable returns -1).
    everyone = sriov_sync_timeout(both, pool_config=True, pool_max_unavailable=None)
    assert everyone["timeout"] == BASE_SECONDS + 1800 and "10 node(s) drain and reboot all at once" in everyone["text"]


def test_an_sriov_sync_whose_nodes_preflight_could_not_know_counts_the_reported_node_states():
    unknown = sriov(0)
    assert sriov_sync_timeout([unknown], reported_nodes=6)["timeout"] == BASE_SECONDS + 6 * 1800
    # Nothing planned: rdma_wait_timeout, whatever reports; a given timeout wins.
    nothing = sriov_sync_timeout([machineconfig("worker", 3)], reported_nodes=6, fallback=1800)
    assert nothing == {"timeout": 1800, "derived": False, "text": "Waiting up to 1800 s for the SR-IOV policy sync: no node drain "
                                                                  "is planned (set rdma_sriov_timeout to change it)."}
    assert sriov_sync_timeout([sriov(100)], given=900)["timeout"] == 900
    assert sriov_sync_timeout([], nodes=3, variable="teardown_sriov_timeout")["timeout"] == BASE_SECONDS + 3 * 1800


@pytest.mark.parametrize("per_node", NODE_ROLLOUT_SECONDS)
@pytest.mark.parametrize("machines", [2, 10, 100])
def test_a_pool_rollback_counts_every_machine_of_the_pool(per_node, machines):
    result = pool_rollout_timeout("worker", machines, per_node=per_node)
    assert result["timeout"] == BASE_SECONDS + machines * per_node
    assert ("%d node(s) of pool worker drain and reboot one at a time" % machines) in result["text"]
    assert "teardown_machineconfig_timeout" in result["text"]
    # maxUnavailable as the MCO reads it: a percentage of the machines, rounded down, at least one.
    assert pool_rollout_timeout("worker", machines, "50%", per_node=per_node)["timeout"] == BASE_SECONDS + -(-machines // max(1, machines // 2)) * per_node
    assert pool_rollout_timeout("worker", 0)["timeout"] == 5400


def test_max_unavailable_and_the_one_derivation():
    assert max_unavailable_of(None, 10) == 1 and max_unavailable_of("10%", 5) == 1 and max_unavailable_of(3, 10) == 3
    assert max_unavailable_of(None, 10, unset=ALL_AT_ONCE, at_least_one=False) == ALL_AT_ONCE
    assert drain_timeout("x", 7, max_unavailable=ALL_AT_ONCE, per_node=600, variable="v")["timeout"] == BASE_SECONDS + 600


def test_the_filter_derives_sriov_and_pool_timeouts():
    from ansible.errors import AnsibleFilterError

    pool_config = {"kind": "SriovNetworkPoolConfig", "spec": {"maxUnavailable": 2}}
    assert rollout_timeout_filter([sriov(4)], kind="SR-IOV", pool_config=pool_config, variable="rdma_sriov_timeout")["timeout"] == \
        BASE_SECONDS + 2 * 1800
    assert rollout_timeout_filter([], kind="SR-IOV", fallback=1200, variable="rdma_sriov_timeout")["timeout"] == 1200
    pool = {"metadata": {"name": "gpu"}, "spec": {"maxUnavailable": 2}, "status": {"machineCount": 5}}
    assert rollout_timeout_filter(pool, per_node=600, variable="teardown_machineconfig_timeout")["timeout"] == BASE_SECONDS + 3 * 600
    with pytest.raises(AnsibleFilterError, match="kind must be MachineConfig or SR-IOV"):
        rollout_timeout_filter([], kind="Other")
    with pytest.raises(AnsibleFilterError, match="pool_config must be"):
        rollout_timeout_filter([], kind="SR-IOV", pool_config="x")
