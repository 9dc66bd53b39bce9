# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Timeouts derived from the work a wait covers, with the sentence that says how (printed before the wait starts).

Every wait that covers node drains and reboots takes its timeout from ``drain_timeout``: BASE_SECONDS plus one per-node
budget for each round of nodes that drain at once. Who sets the rounds:

- A MachineConfigPool rollout drains and reboots its nodes maxUnavailable at a time (1 when unset; a percentage is
  scaled down from the pool's machine count and never below 1: machine-config-operator
  pkg/controller/node/node_controller.go, getMaxUnavailable).
- An SR-IOV policy sync drains a node when its VFs change, and reboots it for new firmware or an RDMA mode. The drain
  controller lets the nodes of a SriovNetworkPoolConfig drain maxUnavailable at a time (unset: every node at once,
  -1; a percentage scaled down); a node no SriovNetworkPoolConfig selects uses the default pool config, one node at a
  time (k8snetworkplumbingwg/sriov-network-operator v1.6.0 and openshift/sriov-network-operator release-4.18 to
  release-4.22: controllers/helper.go defaultPoolConfig, controllers/drain_controller_helper.go tryDrainNode and
  findNodePoolConfig, api/v1/helper.go SriovNetworkPoolConfig.MaxUnavailable). The old SriovOperatorConfig field
  maxParallelNodeConfiguration (doc/design/parallel-node-config.md) is gone from those versions.

A fixed timeout is either far too long for two nodes or too short for a hundred. No upstream source gives the time one
node takes (drain, firmware POST of a GPU server, RHCOS boot, kubelet ready); docs/simulator.md ("Time model")
documents 600-1800 s per node, and the default budget is the slow end, so that only a failure the cluster reports
(Degraded, lastSyncError, which the waits read within their grace period) ends a healthy but slow rollout."""


NODE_ROLLOUT_SECONDS = (600, 1800)  # documented range for one node's drain, reboot and return (see docs/simulator.md)
DEFAULT_NODE_ROLLOUT_SECONDS = NODE_ROLLOUT_SECONDS[1]
# What the rollout costs beyond its nodes: the render controller's delay or the policy sync, and the first node's
# cordon.
BASE_SECONDS = 600
DEFAULT_MAX_UNAVAILABLE = 1  # machine-config-operator getMaxUnavailable, sriov-network-operator defaultPoolConfig
ALL_AT_ONCE = -1  # sriov-network-operator SriovNetworkPoolConfig.MaxUnavailable without spec.maxUnavailable
SRIOV_KINDS = ("SriovNetworkNodePolicy", "SriovNetworkPoolConfig")


def max_unavailable_of(value, nodes, unset=DEFAULT_MAX_UNAVAILABLE, at_least_one=True):
    """How many of ``nodes`` may drain at once for an int-or-percent ``value`` (k8s.io/apimachinery intstr
    GetScaledValueFromIntOrPercent, rounding down); ``unset`` when it is None. The MachineConfigPool never goes below
    1 (getMaxUnavailable); ALL_AT_ONCE stays as it is."""
    if value is None:
        return unset
    text = str(value).strip()
    if text.endswith("%"):
        number = int(text[:-1]) * int(nodes) // 100
    else:
        number = int(text)
    if number == ALL_AT_ONCE and not at_least_one:
        return number
    return max(1, number)


def drain_timeout(what, nodes, given=0, per_node=DEFAULT_NODE_ROLLOUT_SECONDS, max_unavailable=DEFAULT_MAX_UNAVAILABLE,
                  variable="", fallback=5400, where=""):
    """{"timeout": seconds, "derived": bool, "text": sentence} for a wait on ``what`` that drains and reboots ``nodes``
    (a number) ``max_unavailable`` at a time (ALL_AT_ONCE: one round).

    ``given`` (the user's timeout variable) wins when it is above 0. Otherwise BASE_SECONDS plus one ``per_node``
    budget per round; without a node to drain, ``fallback``."""
    given, nodes = int(given or 0), int(nodes or 0)
    if given > 0:
        return {"timeout": given, "derived": False,
                "text": "Waiting up to %d s for the %s (%s)." % (given, what, variable)}
    if not nodes:
        return {"timeout": int(fallback), "derived": False,
                "text": "Waiting up to %d s for the %s: no node drain is planned (set %s to change it)." % (
                    int(fallback), what, variable)}
    per_node, max_unavailable = int(per_node), int(max_unavailable if max_unavailable is not None else 1)
    if max_unavailable == ALL_AT_ONCE:
        rounds, at_once = 1, "all at once"
    else:
        max_unavailable = max(1, max_unavailable)
        rounds = -(-nodes // max_unavailable)
        at_once = "one at a time" if max_unavailable == 1 else "%d at a time" % max_unavailable
    timeout = BASE_SECONDS + rounds * per_node
    return {"timeout": timeout, "derived": True,
            "text": "Waiting up to %d s for the %s: %d node(s)%s drain and reboot %s, %d s each, plus %d s "
                    "(set %s to override)." % (timeout, what, nodes, where, at_once, per_node, BASE_SECONDS, variable)}


def _rollout_nodes(disruptions, kinds):
    """{pool: [node names]} that the planned changes of ``kinds`` drain or reboot (plan_status RV disruptions); the
    SR-IOV changes carry no pool and count as one set of nodes (the policies of one sync drain a node once)."""
    pools = {}
    for entry in disruptions or []:
        if not isinstance(entry, dict) or not str(entry.get("object") or "").startswith(tuple(k + " " for k in kinds)):
            continue
        pool = entry.get("pool") or ""
        pools.setdefault(pool, set()).update(entry.get("nodes") or [])
    return pools


def rollout_timeout(disruptions, given=0, per_node=DEFAULT_NODE_ROLLOUT_SECONDS,
                    max_unavailable=DEFAULT_MAX_UNAVAILABLE, kind="MachineConfig",
                    variable="rdma_machineconfig_timeout", fallback=5400):
    """The MachineConfigPool rollout's timeout: the largest pool the plan's ``kind`` changes drain and reboot."""
    pools = _rollout_nodes(disruptions, (kind,))
    nodes = max(len(v) for v in pools.values()) if pools else 0
    pool = max(sorted(pools), key=lambda name: len(pools[name])) if pools else ""
    return drain_timeout("%s rollout" % kind, nodes, given=given, per_node=per_node, max_unavailable=max_unavailable,
                         variable=variable, fallback=fallback, where=" of pool %s" % pool if pool else "")


def pool_rollout_timeout(pool, machine_count, max_unavailable=None, given=0, per_node=DEFAULT_NODE_ROLLOUT_SECONDS,
                         variable="teardown_machineconfig_timeout", fallback=5400):
    """A MachineConfigPool rollout that reboots every machine of the pool (teardown deletes a MachineConfig): the
    pool's status.machineCount and spec.maxUnavailable."""
    count = int(machine_count or 0)
    return drain_timeout("MachineConfig rollout", count, given=given, per_node=per_node,
                         max_unavailable=max_unavailable_of(max_unavailable, count), variable=variable,
                         fallback=fallback, where=" of pool %s" % pool)


def sriov_sync_timeout(disruptions, given=0, per_node=DEFAULT_NODE_ROLLOUT_SECONDS, pool_max_unavailable=None,
                       pool_config=False, reported_nodes=0, variable="rdma_sriov_timeout", fallback=1800, nodes=None):
    """The SR-IOV node states' wait after a policy change: the nodes the plan's SR-IOV changes drain (or, when the plan
    could not know them because no config daemon had reported yet, the ``reported_nodes`` now reported), as many at once
    as the SriovNetworkPoolConfig allows (``pool_config``: one is applied, with ``pool_max_unavailable``; otherwise the
    operator's default pool config, one at a time). ``nodes``: the number of nodes that drain, when the caller knows it
    without a plan (teardown: the node states that carry VFs)."""
    pools = _rollout_nodes(disruptions, SRIOV_KINDS)
    named = set()
    for members in pools.values():
        named.update(members)
    nodes = len(named) if nodes is None else int(nodes)
    if not nodes and pools:
        # A change is planned but its nodes were not known at preflight (no node state yet): every node that reports
        # may drain and reboot for new firmware.
        nodes = int(reported_nodes or 0)
    if pool_config:
        at_once = max_unavailable_of(pool_max_unavailable, nodes, unset=ALL_AT_ONCE, at_least_one=False)
    else:
        at_once = DEFAULT_MAX_UNAVAILABLE
    return drain_timeout("SR-IOV policy sync", nodes, given=given, per_node=per_node, max_unavailable=at_once,
                         variable=variable, fallback=fallback)
