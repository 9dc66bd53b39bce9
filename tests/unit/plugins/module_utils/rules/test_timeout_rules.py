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
