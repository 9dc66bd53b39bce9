"""Machine Config Operator: MachineConfigs of a role -> new rendered config -> rolling node reboots of the pool.

A pool renders its MachineConfigs (label machineconfiguration.openshift.io/role=<pool>) into
`rendered-<pool>-<hash>`; nodes whose currentConfig differs are updated one at a time (maxUnavailable 1):
desiredConfig set, state Working, cordoned and NotReady for `mco_node_update_seconds`, then currentConfig
= desiredConfig, state Done. While nodes update the pool is Updating=True/Updated=False; a paused pool
renders but does not roll. Deleting the MachineConfig rolls the nodes back.

Rendering a changed set of MachineConfigs waits `mco_render_delay_seconds` first, as the render controller does
(openshift/machine-config-operator, pkg/controller/render/render_controller.go: renderDelay, 5 s, "to avoid churn"):
until then the pool keeps its old spec and status, so a pool that was Updated still says so.
"""

import hashlib
import json
import time

from . import devicemanager
from ._base import now, set_condition
from .seed import label_selector_matches, node_pool, rendered_config

GROUP = "machineconfiguration.openshift.io"
ROLE = GROUP + "/role"
CURRENT, DESIRED, STATE = GROUP + "/currentConfig", GROUP + "/desiredConfig", GROUP + "/state"
BASE_SOURCES = ("00-{pool}", "01-{pool}-container-runtime", "01-{pool}-kubelet")


class MachineConfigController:
    def __init__(self, rt):
        self.rt = rt
        self.updating = {}  # pool -> (node name, start)
        self.pending = {}  # pool -> (rendered name waiting for the render delay, since)

    def resync(self):
        self.rt.enqueue(("mco",), self.reconcile)

    def on_event(self, etype, rtype, obj):
        if rtype.group == GROUP:
            self.rt.enqueue(("mco",), self.reconcile)

    def rendered(self, pool, configs):
        if not configs:
            return rendered_config(pool, self.rt.profile)
        blob = json.dumps([(c["metadata"]["name"], c.get("spec")) for c in configs], sort_keys=True)
        return "rendered-%s-%s" % (pool, hashlib.sha256(blob.encode()).hexdigest()[:32])

    def reconcile(self):
        configs = self.rt.list(GROUP, "machineconfigs")
        pools = self.rt.list(GROUP, "machineconfigpools")
        for mcp in pools:
            self._reconcile_pool(mcp, configs, pools)

    def _reconcile_pool(self, mcp, all_configs, pools):
        pool = mcp["metadata"]["name"]
        # machineConfigSelector is a full LabelSelector (render_controller.go LabelSelectorAsSelector): a custom pool
        # selects the worker role and its own with matchExpressions (docs/custom-pools.md).
        selector = (mcp.get("spec") or {}).get("machineConfigSelector") or {"matchLabels": {ROLE: pool}}

        def selected(config):
            return bool(label_selector_matches(selector, config["metadata"].get("labels") or {}))

        configs = sorted((c for c in all_configs if selected(c)), key=lambda c: c["metadata"]["name"])
        target = self.rendered(pool, configs)
        sources = [{"apiVersion": GROUP + "/v1", "kind": "MachineConfig", "name": n.format(pool=pool)} for n in BASE_SOURCES]
        sources += [{"apiVersion": GROUP + "/v1", "kind": "MachineConfig", "name": c["metadata"]["name"]} for c in configs]
        current = ((mcp.get("spec") or {}).get("configuration") or {}).get("name")
        if current and current != target and pool in (self.rt.operator_faults().get("mco_render_hold") or ()):
            return  # test control: the render controller has not got to this pool yet (a longer render delay)
        if current and current != target:
            pending = self.pending.get(pool)
            if pending is None or pending[0] != target:
                pending = self.pending[pool] = (target, time.monotonic())
            left = self.rt.cfg("mco_render_delay_seconds") - (time.monotonic() - pending[1])
            if left > 0:
                self.rt.enqueue(("mco",), self.reconcile, left + 0.001)
                return
        self.pending.pop(pool, None)
        if current != target:
            def set_target(obj):
                obj.setdefault("spec", {})["configuration"] = {"name": target, "source": sources}
            mcp = self.rt.mutate(GROUP, "machineconfigpools", None, pool, set_target)
        nodes = [n for n in self.rt.list("", "nodes") if node_pool(n["metadata"].get("labels") or {}, pools) == pool]
        stale = [n for n in nodes if (n["metadata"].get("annotations") or {}).get(CURRENT) != target]
        paused = bool((mcp.get("spec") or {}).get("paused"))
        recheck = None
        degraded = self._node_degraded(pool, stale)
        if stale and not paused and not degraded:
            recheck = self._roll(pool, target, stale)
            nodes = [n for n in self.rt.list("", "nodes") if node_pool(n["metadata"].get("labels") or {}, pools) == pool]
            stale = [n for n in nodes if (n["metadata"].get("annotations") or {}).get(CURRENT) != target]
        self._pool_status(mcp, pool, target, sources, nodes, stale, paused, degraded)
        if recheck is not None:
            self.rt.enqueue(("mco",), self.reconcile, recheck + 0.001)

    def _roll(self, pool, target, stale):
        current = self.updating.get(pool)
        if current is None or current[0] not in [n["metadata"]["name"] for n in stale]:
            name = sorted(n["metadata"]["name"] for n in stale)[0]
            current = (name, time.monotonic())
            self.updating[pool] = current
            self._node(name, desired=target, working=True)
        left = self.rt.cfg("mco_node_update_seconds") - (time.monotonic() - current[1])
        if left > 0:
            return left
        self._node(current[0], desired=target, working=False)
        del self.updating[pool]
        return 0.0

    def _node(self, name, desired, working):
        def edit(obj):
            ann = obj["metadata"].setdefault("annotations", {})
            ann[DESIRED] = desired
            ann[STATE] = "Working" if working else "Done"
            if not working:
                ann[CURRENT] = desired
                obj.setdefault("spec", {}).pop("unschedulable", None)
                devicemanager.withdraw(obj)  # the kubelet's first status after the reboot
            else:
                obj.setdefault("spec", {})["unschedulable"] = True
            for cond in (obj.get("status") or {}).get("conditions") or []:
                if cond.get("type") == "Ready":
                    cond.update({"status": "False" if working else "True", "lastTransitionTime": now(),
                                 "reason": "KubeletNotReady" if working else "KubeletReady",
                                 "message": "node is rebooting" if working else "kubelet is posting ready status"})
            return obj
        self.rt.mutate("", "nodes", None, name, edit)
        if not working:
            devicemanager.kubelet_started(self.rt, name, written=True)  # back from its reboot: plugins register again

    def _node_degraded(self, pool, stale):
        """Fault mcp_node_degraded {pool: message}: the machine config daemon of the pool's first node to update
        cannot apply the rendered config and marks the node Degraded, so the roll stops there. Returns
        (node name, message) or None. As since the MachineConfigNode rework (openshift/machine-config-operator#5110,
        in 4.19 by #5662; pkg/controller/node/status.go calculateStatus), the pool's NodeDegraded condition carries
        'Node <name> is reporting: "<message>"' and Degraded is True with an empty message, as a real pool showed
        (openstack-k8s-operators/neutron-operator#332)."""
        message = (self.rt.operator_faults().get("mcp_node_degraded") or {}).get(pool)
        if not message or not stale:
            return None
        return sorted(n["metadata"]["name"] for n in stale)[0], message

    def _pool_status(self, mcp, pool, target, sources, nodes, stale, paused, degraded=None):
        status = dict(mcp.get("status") or {})
        updated = len(nodes) - len(stale)
        unavailable = sum(1 for n in nodes if (n.get("spec") or {}).get("unschedulable"))
        conditions = status.get("conditions")
        done = not stale
        conditions = set_condition(conditions, "Updated", "True" if done else "False", "",
                                   "All nodes are updated with %s" % target if done else "")
        conditions = set_condition(conditions, "Updating", "False" if done or paused else "True", "",
                                   "" if done or paused else "All nodes are updating to %s" % target)
        status.update({
            "machineCount": len(nodes), "updatedMachineCount": updated,
            "readyMachineCount": sum(1 for n in nodes if n not in stale and not (n.get("spec") or {}).get("unschedulable")),
            "unavailableMachineCount": unavailable, "degradedMachineCount": 1 if degraded else 0,
            "observedGeneration": mcp["metadata"].get("generation", 1),
            "conditions": conditions,
        })
        if degraded or any(c.get("type") == "NodeDegraded" for c in conditions or []):
            reported = 'Node %s is reporting: "%s"' % degraded if degraded else ""
            status["conditions"] = set_condition(set_condition(
                conditions, "NodeDegraded", "True" if degraded else "False",
                "1 nodes are reporting degraded status on sync" if degraded else "", reported),
                "Degraded", "True" if degraded else "False", "", "")
        if done:
            status["configuration"] = {"name": target, "source": sources}
        if status != (mcp.get("status") or {}):
            self.rt.set_status(GROUP, "machineconfigpools", None, pool, status)
