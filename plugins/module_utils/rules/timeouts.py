# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Timeouts derived from the work a wait covers, with the sentence that says how (printed before the wait starts).

A MachineConfigPool rollout drains and reboots its nodes in rounds of the pool's maxUnavailable (1 when unset:
machine-config-operator pkg/controller/node/node_controller.go, getMaxUnavailable), so a fixed timeout is either far
too long for two nodes or too short for a hundred. No upstream source gives the time one node takes (drain, firmware
POST of a GPU server, RHCOS boot, kubelet ready); docs/simulator.md ("Time model") documents 600-1800 s per node, and
the default budget is the slow end, so that only a failure the pool reports (Degraded, which the wait reads within its
grace period) ends a healthy but slow rollout."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

NODE_ROLLOUT_SECONDS = (600, 1800)  # documented range for one node's drain, reboot and return (see docs/simulator.md)
DEFAULT_NODE_ROLLOUT_SECONDS = NODE_ROLLOUT_SECONDS[1]
# What the rollout costs beyond its nodes: the render controller's delay and the first node's cordon.
BASE_SECONDS = 600
DEFAULT_MAX_UNAVAILABLE = 1  # machine-config-operator getMaxUnavailable: 1 when the pool does not set it


def _rollout_nodes(disruptions, kind):
    """{pool: number of nodes} that the planned changes of ``kind`` drain or reboot (plan_status RV disruptions)."""
    pools = {}
    for entry in disruptions or []:
        if not isinstance(entry, dict) or not str(entry.get("object") or "").startswith(kind + " "):
            continue
        pool = entry.get("pool") or "?"
        pools[pool] = max(pools.get(pool, 0), len(entry.get("nodes") or []))
    return pools


def rollout_timeout(disruptions, given=0, per_node=DEFAULT_NODE_ROLLOUT_SECONDS, max_unavailable=DEFAULT_MAX_UNAVAILABLE,
                    kind="MachineConfig", variable="rdma_machineconfig_timeout", fallback=5400):
    """{"timeout": seconds, "derived": bool, "text": sentence} for a wait on the pool rollout of ``kind`` changes.

    ``given`` (the user's timeout variable) wins when it is above 0. Otherwise the timeout is BASE_SECONDS plus one
    ``per_node`` budget per round of ``max_unavailable`` nodes of the largest pool the plan drains; without a plan
    (the role run alone, or nothing known about the nodes), ``fallback``."""
    given = int(given or 0)
    if given > 0:
        return {"timeout": given, "derived": False, "text": "Waiting up to %d s for the %s rollout (%s)." % (given, kind, variable)}
    pools = _rollout_nodes(disruptions, kind)
    nodes = max(pools.values()) if pools else 0
    if not nodes:
        return {"timeout": int(fallback), "derived": False,
                "text": "Waiting up to %d s for the %s rollout: no node drain is planned (set %s to change it)." % (
                    int(fallback), kind, variable)}
    per_node, max_unavailable = int(per_node), max(1, int(max_unavailable or 1))
    rounds = -(-nodes // max_unavailable)
    timeout = BASE_SECONDS + rounds * per_node
    pool = max(sorted(pools), key=lambda name: pools[name])
    at_once = "one at a time" if max_unavailable == 1 else "%d at a time" % max_unavailable
    return {"timeout": timeout, "derived": True,
            "text": "Waiting up to %d s for the %s rollout: %d node(s) of pool %s drain and reboot %s, %d s each, plus %d s "
                    "(set %s to override)." % (timeout, kind, nodes, pool, at_once, per_node, BASE_SECONDS, variable)}
