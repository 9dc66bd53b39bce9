# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Which nodes a converge will drain and reboot, and why: the planned objects against the live ones.

Pure: takes the planned manifests and the objects read from the cluster (plain dicts), returns one entry per
disruptive change. preflight prints them in check mode and in a real run before any write, and stops a real run
when they disrupt a cluster that already carries the collection's configuration unless gpudirect_allow_disruption
is true (docs/disruption.md).

What drains and reboots, from upstream:

- MachineConfig (openshift/machine-config-operator pkg/daemon/update.go, calculatePostConfigChangeAction and
  calculatePostConfigChangeActionFromMCDiffs): a change of kernel arguments or systemd units always reboots; a file
  change reboots unless the path is one of a short list (the CA bundle, the kubelet auth file, the registries and
  policy files of CRI-O, the NMState directory). The collection's files (/etc/modprobe.d, /etc/crio/crio.conf.d,
  /etc/udev/rules.d) are none of them, so creating, changing or deleting one of its MachineConfigs drains and reboots
  every node of the pool, one at a time.
- SriovNetworkNodePolicy (k8snetworkplumbingwg/sriov-network-operator v1.6.0, pkg/plugins/generic/generic_plugin.go
  needDrainNode/needToUpdateVFs and api/v1/helper.go NeedToUpdateSriov): a PF whose VFs exist (numVfs > 0) drains
  when its numVfs, VF driver (deviceType) or RDMA setting changes, or when no policy selects it any more (its VFs are
  removed); a PF without VFs is configured without a drain. pkg/plugins/mellanox/mellanox_plugin.go
  OnNodeStateChange with pkg/vendors/mellanox/mellanox.go HandleTotalVfs: a Mellanox PF whose firmware enables
  another number of VFs (NUM_OF_VFS, reported as totalvfs) than numVfs gets the firmware rewritten, and the node
  drains and reboots; lowering it to 0 needs no reboot.
- SriovNetworkPoolConfig rdmaMode (same repository, controllers/sriovnetworknodepolicy_controller.go copies it to
  each node state's spec.system.rdmaMode; pkg/plugins/generic/generic_plugin.go configRdmaKernelArg/needRebootNode):
  the mode is a kernel argument, so a node whose RDMA subsystem runs another mode (status.system.rdmaMode) drains
  and reboots.
"""


from ansible_collections.gpudirect.openshift.plugins.module_utils import names

MACHINE_CONFIG = "MachineConfig"
SRIOV_POLICY = "SriovNetworkNodePolicy"
SRIOV_POOL_CONFIG = "SriovNetworkPoolConfig"
DISRUPTIVE_KINDS = (MACHINE_CONFIG, SRIOV_POLICY, SRIOV_POOL_CONFIG)
# The parts of a MachineConfig spec the machine-config daemon compares (pkg/daemon/update.go newMachineConfigDiff).
MACHINE_CONFIG_PARTS = ("config", "kernelArguments", "kernelType", "extensions", "fips", "osImageURL")
# The parts of a policy that reach a PF's VFs (NeedToUpdateSriov: numVfs, VF driver, MTU, RDMA/GUID, link type).
POLICY_PARTS = ("numVfs", "deviceType", "isRdma", "linkType", "mtu", "nicSelector", "nodeSelector")
DRAIN = "drain"
REBOOT = "drain and reboot"


def _key(obj):
    meta = obj.get("metadata") or {}
    return (obj.get("kind"), meta.get("namespace") or "", meta.get("name"))


def _ref(obj):
    meta = obj.get("metadata") or {}
    return "%s %s%s" % (obj.get("kind"), "%s/" % meta["namespace"] if meta.get("namespace") else "", meta.get("name"))


def managed(obj):
    return ((obj.get("metadata") or {}).get("labels") or {}).get(names.MANAGED_BY_LABEL) == names.MANAGED_BY_VALUE


def _labels_match(match_labels, node):
    labels = (node.get("metadata") or {}).get("labels") or {}
    return all(labels.get(key) == str(value if value is not None else "")
               for key, value in (match_labels or {}).items())


def _node_names(nodes, match_labels):
    return sorted(n["metadata"]["name"] for n in nodes if _labels_match(match_labels, n))


def _pool_nodes(pool_name, pools, nodes):
    """The nodes of a MachineConfigPool: its spec.nodeSelector.matchLabels, or the role label of the same name."""
    for pool in pools:
        if pool["metadata"]["name"] == pool_name:
            selector = ((pool.get("spec") or {}).get("nodeSelector") or {}).get("matchLabels")
            if selector is not None:
                return _node_names(nodes, selector)
    return _node_names(nodes, {"node-role.kubernetes.io/%s" % pool_name: ""})


def _machine_config_pool(obj, pools):
    """The pools whose machineConfigSelector takes this MachineConfig (by its role label); the role's pool when the
    pools are not known."""
    labels = (obj.get("metadata") or {}).get("labels") or {}
    chosen = []
    for pool in pools:
        selector = ((pool.get("spec") or {}).get("machineConfigSelector") or {})
        match = selector.get("matchLabels")
        expressions = selector.get("matchExpressions") or []
        if match and all(labels.get(k) == v for k, v in match.items()):
            chosen.append(pool["metadata"]["name"])
        elif not match and any(e.get("key") == names.MCO_ROLE_LABEL and e.get("operator") == "In"
                               and labels.get(names.MCO_ROLE_LABEL) in (e.get("values") or []) for e in expressions):
            chosen.append(pool["metadata"]["name"])
    return sorted(chosen) or [labels.get(names.MCO_ROLE_LABEL) or "worker"]


def _pf_selected(policy, node, iface):
    """Whether a policy selects this reported PF on this node (the operator's nicSelector and nodeSelector)."""
    spec = policy.get("spec") or {}
    if not _labels_match(spec.get("nodeSelector") or {}, node):
        return False
    selector = spec.get("nicSelector") or {}
    if selector.get("vendor") and str(selector["vendor"]).lower() != str(iface.get("vendor") or "").lower():
        return False
    if selector.get("deviceID") and str(selector["deviceID"]).lower() != str(iface.get("deviceID") or "").lower():
        return False
    if selector.get("pfNames") and iface.get("name") not in [p.split("#")[0] for p in selector["pfNames"]]:
        return False
    if selector.get("rootDevices") and str(iface.get("pciAddress") or "").lower() not in [
            str(d).lower() for d in selector["rootDevices"]]:
        return False
    return True


def _state_interfaces(node_states):
    return {(s.get("metadata") or {}).get("name"): (s.get("status") or {}).get("interfaces") or []
            for s in node_states or []}


def _policy_effects(before, after, nodes, node_states):
    """{node: (effect, [reasons])} of replacing the policy ``before`` (None: none yet) by ``after`` (None: deleted)."""
    interfaces = _state_interfaces(node_states)
    effects = {}
    for node in nodes:
        name = node["metadata"]["name"]
        reported = interfaces.get(name)
        for iface in reported or []:
            was = before is not None and _pf_selected(before, node, iface)
            will = after is not None and _pf_selected(after, node, iface)
            if not (was or will):
                continue
            port = iface.get("name") or iface.get("pciAddress")
            current_vfs = int(iface.get("numVfs") or 0)
            wanted_vfs = int(((after or {}).get("spec") or {}).get("numVfs") or 0) if will else 0
            reasons, reboot = [], False
            total = iface.get("totalvfs")
            mellanox = str(iface.get("vendor") or "").lower() == names.MELLANOX_VENDOR_ID
            if mellanox and wanted_vfs and total is not None and int(total) != wanted_vfs:
                reboot = True
                reasons.append(
                    "%s: the firmware enables %s VFs, %d wanted (NUM_OF_VFS is rewritten)" % (port, total, wanted_vfs))
            if current_vfs and not will:
                reasons.append("%s: its %d VFs are removed" % (port, current_vfs))
            elif current_vfs and current_vfs != wanted_vfs:
                reasons.append("%s: numVfs %d -> %d" % (port, current_vfs, wanted_vfs))
            elif current_vfs and was and will:
                changed = [k for k in ("deviceType", "isRdma", "linkType", "mtu")
                           if (before.get("spec") or {}).get(k) != (after.get("spec") or {}).get(k)]
                if changed:
                    reasons.append("%s: %s change on its VFs" % (port, ", ".join(changed)))
            if reasons:
                effect, old = effects.get(name, (DRAIN, []))
                effects[name] = (REBOOT if reboot or effect == REBOOT else DRAIN, old + reasons)
        if reported is None and after is not None \
                and _labels_match((after.get("spec") or {}).get("nodeSelector"), node) \
                and (before is None or (before.get("spec") or {}) != (after.get("spec") or {})):
            # No node state yet (the SR-IOV operator is not running): the config daemon's first sync configures the
            # VFs and, on a Mellanox PF whose firmware enables another VF count, reboots.
            effects[name] = (REBOOT, ["no SR-IOV node state yet: VFs are created, and the firmware may be rewritten"])
    return effects


def _rdma_mode_effects(before, after, nodes, node_states):
    states = {(s.get("metadata") or {}).get("name"): ((s.get("status") or {}).get("system") or {}).get("rdmaMode")
              for s in node_states or []}
    old_mode = ((before or {}).get("spec") or {}).get("rdmaMode") or ""
    new_mode = ((after or {}).get("spec") or {}).get("rdmaMode") or ""
    if old_mode == new_mode and (not new_mode or all(states.get(n["metadata"]["name"]) in (None, new_mode)
                                                     for n in nodes)):
        return {}
    selector = (((after or before).get("spec") or {}).get("nodeSelector") or {}).get("matchLabels") or {}
    effects = {}
    for node in nodes:
        name = node["metadata"]["name"]
        if not _labels_match(selector, node):
            continue
        running = states.get(name) or old_mode
        if running == new_mode and old_mode == new_mode:
            continue
        if not new_mode and not old_mode:
            continue
        effects[name] = (REBOOT,
                         ["RDMA subsystem mode %s -> %s (a kernel argument)"
                          % (running or "default", new_mode or "default")])
    return effects


def disruptions(manifests, live, nodes=(), node_states=(), pools=(), prune_kinds=(), configured=None):
    """Each change a converge makes that drains or reboots nodes, in the order a converge makes it.

    ``manifests``: the planned objects; ``live``: the cluster's objects of DISRUPTIVE_KINDS (any label);
    ``nodes``, ``node_states`` (SriovNetworkNodeStates), ``pools`` (MachineConfigPools): as read; ``prune_kinds``:
    the kinds whose labelled objects the plan no longer holds are deleted. Returns
    {"disruptions": [{"object", "action", "effect", "pool", "nodes", "reasons"}], "configured": bool} where
    ``configured`` says the cluster already carries a configuration of the collection, so a disruption affects nodes
    that already work: the caller's answer (a labelled object of any kind it manages), else whether ``live`` holds a
    labelled object.
    """
    nodes = [n for n in nodes or [] if isinstance(n, dict) and n.get("metadata")]
    pools = list(pools or [])
    prune_kinds = {k.split("/")[-1] if isinstance(k, str) else k[-1] for k in prune_kinds or []}
    live_by_key = {_key(o): o for o in live or [] if o.get("kind") in DISRUPTIVE_KINDS}
    planned = [m for m in manifests or [] if m.get("kind") in DISRUPTIVE_KINDS]
    planned_keys = {_key(m) for m in planned}
    changes = []  # (before, after)
    for manifest in planned:
        changes.append((live_by_key.get(_key(manifest)), manifest))
    for key, obj in sorted(live_by_key.items()):
        if key not in planned_keys and managed(obj) and key[0] in prune_kinds:
            changes.append((obj, None))
    result = []
    for before, after in changes:
        obj = after or before
        kind = obj["kind"]
        action = "create" if before is None else "delete" if after is None else "update"
        if kind == MACHINE_CONFIG:
            parts = [p for p in MACHINE_CONFIG_PARTS
                     if ((before or {}).get("spec") or {}).get(p) != ((after or {}).get("spec") or {}).get(p)]
            if action == "update" and not parts:
                continue
            for pool in _machine_config_pool(obj, pools):
                why = {"create": "a new MachineConfig", "delete": "the MachineConfig is deleted",
                       "update": "its %s change%s" % (", ".join(parts), "" if len(parts) > 1 else "s")}[action]
                result.append({"object": _ref(obj), "action": action, "effect": REBOOT, "pool": pool,
                               "nodes": _pool_nodes(pool, pools, nodes),
                               "reasons": ["%s: the machine-config daemon drains and reboots each node of pool %s, one "
                                           "at a time" % (why, pool)]})
            continue
        if kind == SRIOV_POLICY:
            if action == "update" and all((before.get("spec") or {}).get(p) == (after.get("spec") or {}).get(p)
                                          for p in POLICY_PARTS):
                continue
            effects = _policy_effects(before, after, nodes, node_states)
            if not effects and action == "create" and not node_states:
                # Before NFD has labelled the nodes and the SR-IOV operator runs, which nodes the policy selects is
                # not known: say so rather than nothing (each selected node drains, and reboots for new firmware).
                selector = ", ".join("%s=%s" % kv
                                     for kv in sorted(((after.get("spec") or {}).get("nodeSelector") or {}).items()))
                result.append({"object": _ref(obj), "action": action, "effect": REBOOT, "pool": None, "nodes": [],
                               "reasons": ["the nodes labelled %s drain, and reboot where the firmware enables another "
                                           "number of VFs than numVfs (no node carries the label or reports to the "
                                           "SR-IOV operator yet)" % (selector or "(any)")]})
                continue
        else:
            effects = _rdma_mode_effects(before, after, nodes, node_states)
        if not effects:
            continue
        result.append({"object": _ref(obj), "action": action,
                       "effect": REBOOT if any(e == REBOOT for e, _r in effects.values()) else DRAIN, "pool": None,
                       "nodes": sorted(effects),
                       "reasons": ["%s (%s): %s" % (node, effect, "; ".join(reasons))
                                   for node, (effect, reasons) in sorted(effects.items())]})
    if configured is None:
        configured = any(managed(o) for o in live_by_key.values())
    return {"disruptions": result, "configured": configured}


def describe(entry, sample=10):
    """One sentence per disruption: what, which nodes, why."""
    nodes = entry["nodes"]
    shown = ", ".join(nodes[:sample]) + (" and %d more" % (len(nodes) - sample) if len(nodes) > sample else "")
    where = (("pool %s (%s)" % (entry["pool"], shown or "no node yet")) if entry.get("pool")
             else (shown or "the nodes it selects (not known yet)"))
    verb = {"create": "created", "update": "changed", "delete": "deleted"}[entry["action"]]
    reasons = entry["reasons"][:sample] + (["..."] if len(entry["reasons"]) > sample else [])
    effect = "drain and reboot" if entry["effect"] == REBOOT else "drain"
    return "%s is %s: %s %s. %s" % (entry["object"], verb, where, effect,
                                    " ".join(r.rstrip(".") + "." for r in reasons))
