# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Readiness waits the renderer returns beside the objects it renders (resource_wait entries, no timeouts).

The SR-IOV node states carry no generation in their status (sriov-network-operator api/v1
sriovnetworknodestate_types.go), the policy controller renders a changed policy into them about a second later
(controllers/sriovnetworknodepolicy_controller.go, AddAfter) and the config daemon writes Succeeded only at the end
of its sync (pkg/daemon/daemon.go). So ``syncStatus == 'Succeeded'`` alone is often the previous sync's. A node state
is in sync with the rendered policies when, for each policy, every PF of its status that the policy's nicSelector
selects (api/v1/helper.go, Selected) appears in its spec with the policy's VF group, VF count, MTU and isRdma, the
status reports that VF count (and MTU) on those PFs, both drain annotations are Idle and syncStatus is Succeeded; and
since the daemon reads the host before it writes InProgress, a node state whose generation moved after the policies
were written counts only once it was seen InProgress at that generation (the wait's ``each_busy``).
"""


import json

from ansible_collections.gpudirect.openshift.plugins.module_utils import vocabulary
from ansible_collections.gpudirect.openshift.plugins.module_utils import names

DESIRED_STATE = "sriovnetwork.openshift.io/desired-state"
CURRENT_STATE = "sriovnetwork.openshift.io/current-state"
# The operator marks the node state of a node its config daemons no longer select (the Network Operator's
# mofed.wait=true while the DOCA driver reloads after a reboot does that) and keeps it, unchanged, up to 30 minutes
# (sriov-network-operator controllers/sriovnetworknodepolicy_controller.go handleStaleNodeState, pkg/consts
# NodeStateKeepUntilAnnotation): its Succeeded is stale, no daemon applies anything there.
KEEP_UNTIL = "sriovnetwork.openshift.io/keep-state-until"


def _literal(value):
    return "`%s`" % json.dumps(value, sort_keys=True)


def _string(value):
    return "'%s'" % str(value).replace("\\", "\\\\").replace("'", "\\'")


def _selected_by(selector):
    """JMESPath filter over status.interfaces[] for the PFs a nicSelector selects (helper.go, Selected)."""
    terms = []
    if selector.get("vendor"):
        terms.append("vendor == %s" % _string(selector["vendor"]))
    if selector.get("deviceID"):
        terms.append("deviceID == %s" % _string(selector["deviceID"]))
    if selector.get("rootDevices"):
        terms.append("contains(%s, pciAddress)" % _literal(list(selector["rootDevices"])))
    if selector.get("pfNames"):
        terms.append("contains(%s, name)" % _literal([str(n).split("#", maxsplit=1)[0] for n in selector["pfNames"]]))
    return " && ".join(terms) or "`false`"


# A node state whose config daemon could not apply its spec. The daemon writes syncStatus Failed only in systemd mode;
# on OpenShift (daemon mode) a failed apply stays InProgress with the error in lastSyncError, kept until a sync succeeds
# (sriov-network-operator pkg/daemon/daemon.go; "Keep 'lastSyncError' content until 'syncStatus' becomes succeeded",
# openshift/sriov-network-operator#192). Both are failures; the wait's grace period absorbs one that a retry clears.
# The SR-IOV waits are counted (one node state per watch event, cluster/conditions.py CountCondition): these
# expressions are over one node state, and the wait joins the failing ones' messages with "; ".
SRIOV_FAILING = "status.syncStatus == 'Failed' || (status.syncStatus == 'InProgress' && status.lastSyncError)"
SRIOV_FAILURE_MESSAGE = "join(': ', [metadata.name, status.syncStatus, status.lastSyncError || 'no error text'])"
SRIOV_BUSY = "status.syncStatus == 'InProgress'"
# The progress text of a node state shows its last error, which is what blocks it.
SRIOV_LAST_ERROR = "(status.lastSyncError && join('', [' (', status.lastSyncError, ')'])) || ''"


def _annotation(key):
    return "(metadata.annotations.\"%s\" || 'Idle')" % key


def _policy_counts(policy):
    """JMESPath over one node state: (PFs the policy selects, of them in spec with its VF group, of them applied).

    The spec must carry the policy's VF count, MTU, resource name and isRdma (api/v1/helper.go Apply and
    generatePfNameVfGroup copy them from the policy), so a node state the operator has not re-rendered yet does not
    count. The status must report the VF count and, with an MTU, the PF raised to at least it and every netdevice VF at
    it (pkg/host/internal/sriov/sriov.go configSriovPFDevice raises the PF MTU only upwards, configSriovVFDevices sets
    the VF MTU). isRdma shows nowhere in the status: the wait's each_busy rule covers it."""
    spec = policy["spec"]
    chosen = _selected_by(spec.get("nicSelector") or {})
    vfs = _literal(int(spec.get("numVfs") or 0))
    mtu = _literal(int(spec.get("mtu") or 0))
    name = _string(policy["metadata"]["name"])
    group = "policyName == %s && resourceName == %s && (isRdma || `false`) == %s && (mtu || `0`) == %s" % (
        name, _string(spec.get("resourceName") or ""), _literal(bool(spec.get("isRdma"))), mtu)
    selected = "length((status.interfaces || `[]`)[?%s])" % chosen
    rendered = ("length((spec.interfaces || `[]`)[?numVfs == %s && (mtu || `0`) == %s "
                "&& length(vfGroups[?%s] || `[]`) > `0`])" % (vfs, mtu, group))
    applied_terms = "(%s) && numVfs == %s" % (chosen, vfs)
    if spec.get("mtu"):
        applied_terms += (" && (mtu || `0`) >= %s && length((Vfs || `[]`)[?driver != 'vfio-pci' && mtu != %s]) "
                          "== `0`" % (mtu, mtu))
    applied = "length((status.interfaces || `[]`)[?%s])" % applied_terms
    return selected, rendered, applied


def sriov_policy_rendered(policy):
    """JMESPath over one node state: the operator put the policy into its spec."""
    selected, rendered, _applied = _policy_counts(policy)
    return "%s == %s" % (selected, rendered)


def sriov_policy_applied(policy):
    """JMESPath over one node state: its status reports the policy's VF count on the PFs the policy selects."""
    selected, _rendered, applied = _policy_counts(policy)
    return "%s == %s" % (applied, selected)


def sriov_node_states_wait(policies, namespace):
    """The wait that the SR-IOV policies took effect on every node state (None without policies)."""
    if not policies:
        return None
    idle = "%s == 'Idle' && %s == 'Idle'" % (_annotation(DESIRED_STATE), _annotation(CURRENT_STATE))
    rendered = " && ".join(sriov_policy_rendered(p) for p in policies)
    applied = " && ".join(sriov_policy_applied(p) for p in policies)
    daemon_runs = "!(metadata.annotations.\"%s\")" % KEEP_UNTIL
    in_sync = " && ".join(["status.syncStatus == 'Succeeded'", daemon_runs, idle, rendered, applied])
    ours = _literal(sorted(p["metadata"]["name"] for p in policies))
    carries_ours = ("length((spec.interfaces || `[]`)[?length(vfGroups[?contains(%s, policyName)] || `[]`) > `0`]) "
                    "> `0`" % ours)
    waiting_for = ("(metadata.annotations.\"%s\" && join('', [' (no config daemon on the node; the operator keeps this "
                   "state until ', metadata.annotations.\"%s\", ')'])) || "
                   "(!(%s || `false`) && ' (policies not rendered by the operator yet)') || "
                   "(!(%s) && ' (VFs not applied yet)') || ''") % (
        KEEP_UNTIL, KEEP_UNTIL, "%s && %s" % (carries_ours, rendered), applied)
    # Some node state carries our policies and every one is in sync, counted one node state per event.
    return {
        "title": "SR-IOV node states synced with the policies",
        "api_version": names.API_SRIOV,
        "kind": "SriovNetworkNodeState",
        "namespace": namespace,
        "count": [{"each": carries_ours, "at_least": 1, "all": False},
                  {"each": in_sync, "at_least": 1, "all": True}],
        # The config daemon reads the host before it writes InProgress for a new generation (pkg/daemon/daemon.go
        # Reconcile: updateStatusFromHost, then updateSyncState InProgress), so a re-rendered node state first shows
        # the previous sync's Succeeded: one whose generation moved counts only once it was seen InProgress there.
        "each_busy": SRIOV_BUSY,
        "each_failure_condition": SRIOV_FAILING,
        "each_failure_message": SRIOV_FAILURE_MESSAGE,
        "each_progress": ("join('', [metadata.name, ': ', status.syncStatus || 'not reported', %s, ', drain ', %s, "
                          "'/', %s, %s])" % (SRIOV_LAST_ERROR, _annotation(DESIRED_STATE), _annotation(CURRENT_STATE),
                                             waiting_for)),
    }


def sriov_interfaces_reported_wait(namespace):
    """The wait that the config daemons reported their interfaces. Until one has, the operator's webhook refuses every
    policy ("no supported NIC is selected by the nicSelector", sriov-network-operator pkg/webhook/validate.go), and the
    NIC variables cannot be checked against the nodes. Node states exist only where a config daemon runs."""
    return {
        "title": "SR-IOV config daemons reported the NICs",
        "api_version": names.API_SRIOV,
        "kind": "SriovNetworkNodeState",
        "namespace": namespace,
        "count": [{"each": "length(status.interfaces || `[]`) > `0`", "at_least": 1, "all": True}],
        "each_progress": "join('', [metadata.name, ': ', to_string(length(status.interfaces || `[]`)), ' interfaces'])",
    }


def _mcp_condition(kind, field):
    return "(status.conditions[?type == '%s' && status == 'True'].%s | [0])" % (kind, field)


# machine-config-operator pkg/controller/node/status.go (calculateStatus): Degraded is True when NodeDegraded or
# RenderDegraded is; since the MachineConfigNode rework (openshift/machine-config-operator#5110, in 4.19 by #5662) the
# node reasons are on NodeDegraded and Degraded's own message can be empty. A paused pool is never rolled out
# (pkg/controller/node/node_controller.go skips paused pools; status.go reports Updating False "Pool is paused").
MCP_FAILING = "%s == 'True' || %s == 'True' || %s == 'True' || spec.paused == `true`" % (
    _mcp_condition("Degraded", "status"), _mcp_condition("NodeDegraded", "status"),
    _mcp_condition("RenderDegraded", "status"))
MCP_FAILURE_MESSAGE = " || ".join([
    _mcp_condition("NodeDegraded", "message"), _mcp_condition("RenderDegraded", "message"),
    _mcp_condition("Degraded", "message"), _mcp_condition("NodeDegraded", "reason"),
    _mcp_condition("Degraded", "reason"),
    "(spec.paused && join('', ['the pool is paused (spec.paused: true), so the Machine Config Operator does not roll "
    "out ', spec.configuration.name || 'the new rendered config', '; set spec.paused to false']))",
    "'Degraded without a message'"])


def machineconfig_pool_wait(pool, machineconfigs, present=True):
    """The wait that every node of ``pool`` runs a rendered config with (``present``) or without the named
    MachineConfigs. Right after a change the pool still reports the previous rendered config as Updated: the render
    controller renders about 5 s later (machine-config-operator pkg/controller/render/render_controller.go), so the
    rendered config's sources must show the change before Updated counts."""
    wanted = sorted(machineconfigs)
    in_source = "length(status.configuration.source[?contains(%s, name)] || `[]`)" % _literal(wanted)
    return {
        "title": "MachineConfigPool %s updated" % pool,
        "api_version": names.API_MCO,
        "kind": "MachineConfigPool",
        "name": pool,
        "condition": " && ".join([
            "status.observedGeneration == metadata.generation",
            "%s == %s" % (in_source, _literal(len(wanted) if present else 0)),
            "status.configuration.name == spec.configuration.name",
            "status.conditions[?type == 'Updated'].status | [0] == 'True'",
            "status.updatedMachineCount == status.machineCount"]),
        "failure_condition": MCP_FAILING,
        "failure_message": MCP_FAILURE_MESSAGE,
        "progress": "join('', [to_string(status.updatedMachineCount), '/', to_string(status.machineCount), ' nodes "
                    "updated', (spec.paused && ' (pool paused)') || '', (status.degradedMachineCount && join('', [', "
                    "', to_string(status.degradedMachineCount), ' degraded'])) || ''])",
    }


# Network CRs the Network Operator reconciles; their status.state is ready, notReady or error with status.reason
# (network-operator controllers/macvlannetwork_controller.go and its IPoIB/host-device siblings).
NETWORK_OPERATOR_KINDS = ("MacvlanNetwork", "IPoIBNetwork", "HostDeviceNetwork")


def network_cr_wait(kind):
    return {
        "title": "%s ready" % kind,
        "api_version": names.API_MELLANOX,
        "kind": kind,
        "label_selectors": [vocabulary.MANAGED_BY_SELECTOR],
        "condition": "length(items) > `0` && length(items[?status.state != 'ready']) == `0`",
        "failure_condition": "items[?status.state == 'error']",
        "failure_message": "join('; ', items[?status.state == 'error'].join(': ', [metadata.name, status.reason || 'no "
                           "reason given']))",
    }


def network_attachments_wait(networks):
    """The NetworkAttachmentDefinitions the operators render from the network CRs, in their network namespaces."""
    wanted = ["%s/%s" % (n["namespace"], n["name"]) for n in networks]
    found = "items[?contains(%s, join('/', [metadata.namespace, metadata.name]))]" % _literal(wanted)
    return {
        "title": "NetworkAttachmentDefinitions %s" % ", ".join(wanted),
        "api_version": "k8s.cni.cncf.io/v1",
        "kind": "NetworkAttachmentDefinition",
        "condition": "length(%s) == %s" % (found, _literal(len(wanted))),
        "progress": "join(', ', %s.join('/', [metadata.namespace, metadata.name]))" % found,
    }


def allocatable_wait(resource, min_nodes, node_selector=None, all_nodes=False):
    """The wait that at least ``min_nodes`` nodes (with ``all_nodes``: every node ``node_selector`` picks, and at
    least ``min_nodes``) advertise ``resource``. Only the selected nodes are watched and each event counts one node."""
    return {
        "title": "%s allocatable" % resource,
        "api_version": "v1",
        "kind": "Node",
        "label_selectors": ["%s=%s" % (key, value) for key, value in sorted((node_selector or {}).items())],
        "count": [{"each": "to_number(status.allocatable.\"%s\" || '0') > `0`" % resource, "at_least": int(min_nodes),
                   "all": bool(all_nodes)}],
    }


def rdma_wait_sets(plan, min_ready_nodes=1, all_nodes=False):
    """{"machineconfig": [...], "configuration": [...]}: what the rdma role waits for after the MachineConfig, and
    after the SR-IOV objects and networks, in that order (resource_wait entries without timeouts)."""
    summary = plan.get("summary") or {}
    manifests = [e["manifest"] for e in plan.get("manifests") or []]
    machineconfigs = [m["metadata"]["name"] for m in manifests if m["kind"] == "MachineConfig"]
    sets = {"machineconfig": [], "configuration": []}
    if machineconfigs:
        pools = summary.get("machineconfig_pools") or {summary["machineconfig_pool"]: machineconfigs}
        sets["machineconfig"].extend(machineconfig_pool_wait(pool, pools[pool]) for pool in sorted(pools))
    waits = plan.get("waits") or {}
    if waits.get("sriov_node_states"):
        sets["configuration"].append(waits["sriov_node_states"])
    networks = summary.get("networks") or []
    kinds = [n["kind"] for n in networks]
    sets["configuration"].extend(network_cr_wait(kind) for kind in NETWORK_OPERATOR_KINDS if kind in kinds)
    if networks:
        sets["configuration"].append(network_attachments_wait(networks))
    # With node groups each group's resources are watched on that group's nodes only (render/groups.py).
    for group in summary.get("node_groups") or [summary]:
        sets["configuration"].extend(allocatable_wait(resource, min_ready_nodes, group.get("node_selector"), all_nodes)
                                     for resource in group.get("resources") or [])
    return sets


def render_waits(manifests, model):
    """{wait name: resource_wait entry} for what the rendered manifests need."""
    policies = [e["manifest"] for e in manifests if e["manifest"]["kind"] == "SriovNetworkNodePolicy"]
    waits = {}
    sriov = sriov_node_states_wait(policies, model["sriov_operator_namespace"])
    if sriov:
        waits["sriov_interfaces_reported"] = sriov_interfaces_reported_wait(model["sriov_operator_namespace"])
        waits["sriov_node_states"] = sriov
    return waits


# The labels each operator selects its nodes by: the GPU Operator's three NFD label forms (vocabulary.py); the Network
# Operator selects NIC nodes by the vendor label only (its manifests' node affinity), so a class_vendor NIC label
# does not count.
GPU_NODE_LABELS = vocabulary.NFD_GPU_NODE_LABELS
NIC_NODE_LABELS = (vocabulary.nfd_vendor_label(vocabulary.MELLANOX_VENDOR_ID),)


def any_label_true(labels):
    """JMESPath over one Node: one of ``labels`` is "true"."""
    return " || ".join("metadata.labels.\"%s\" == 'true'" % label for label in labels)


def nfd_labels_wait(min_gpu_nodes=1, min_nic_nodes=1, node_selector="", all_nodes=False):
    """The wait that NFD labelled at least the given numbers of GPU (10de) and NIC (15b3) nodes (with ``all_nodes``:
    every node ``node_selector`` picks carries both). One counted wait, a counter per label: each node event moves
    the counters, so no event re-reads every node."""
    # NFD labels a node pci-<vendor>.present when a device of that vendor matches the instance's deviceClassWhitelist.
    counters = []
    for labels, minimum in ((GPU_NODE_LABELS, min_gpu_nodes), (NIC_NODE_LABELS, min_nic_nodes)):
        counters.append({"each": any_label_true(labels), "at_least": int(minimum), "all": bool(all_nodes)})
    return {
        "title": "NFD labels on the GPU and NIC nodes",
        "api_version": "v1",
        "kind": "Node",
        "label_selectors": [node_selector] if node_selector else [],
        "count": counters,
    }


def _with_operand_pods(entry, operand_namespace, images=()):
    """The wait also follows the operator's operand pods (cluster/waits.py OperandPods) when the namespace is known: a
    driver that crash-loops or an image that cannot be pulled shows only there, and the DaemonSets must have rolled
    out the ``images`` applied (the operator's status may still be the one from before the change)."""
    if operand_namespace:
        entry["operand_pods"] = {"namespace": operand_namespace, "label_selectors": [], "images": sorted(images)}
    return entry


def nic_cluster_policy_images(policy):
    """The image references a NicClusterPolicy makes its DaemonSets run: the driver's repository/image:version followed
    by its OS suffix (network-operator pkg/state/state_ofed.go mofedImageFormat), the device plugins' and secondary
    network's repository/image:version (imagePath)."""
    spec = (policy or {}).get("spec") or {}
    images = []
    driver = spec.get("ofedDriver")
    if driver and driver.get("image") and driver.get("version") and not str(driver["version"]).startswith("sha256:"):
        images.append("%s/%s:%s-" % (driver.get("repository"), driver["image"], driver["version"]))
    sections = [spec.get("rdmaSharedDevicePlugin"), spec.get("sriovDevicePlugin")]
    sections += [(spec.get("secondaryNetwork") or {}).get(k) for k in ("multus", "cniPlugins", "ipoib")]
    for section in sections:
        if section and section.get("image") and section.get("version") and section.get("repository"):
            sep = "@" if str(section["version"]).startswith("sha256:") else ":"
            images.append("%s/%s%s%s" % (section["repository"], section["image"], sep, section["version"]))
    return images


# network-operator controllers/nic_policy_helpers.go (updatePolicyCRStatus) copies a state's sync error into its
# appliedStates message whatever the state (api/v1alpha1 nicclusterpolicy_types.go AppliedState.message; "Support errors
# on NCP status", Mellanox/network-operator#895): a state waiting for its pods is notReady with no message, one whose
# objects cannot be rendered or applied is notReady (or error) with the error. A policy with another name is "ignore"
# with status.reason (nicclusterpolicy_controller.go handleUnsupportedInstance). Components the policy does not
# configure are "ignore" and block nothing.
NCP_FAILING_STATES = "status.appliedStates[?state == 'error' || (state == 'notReady' && message)]"


def nic_cluster_policy_wait(operand_namespace=None, policy=None):
    """The wait that the NicClusterPolicy is ready: fails on a component error (with its message) or an ignored
    policy; the progress names the components that block, with their messages, and leaves out "ignore". A driver whose
    pods never become ready leaves it notReady without a message (pkg/state/state_skel.go getSyncState): the operand
    pods tell why."""
    return _with_operand_pods({
        "title": "NicClusterPolicy %s ready" % names.NIC_CLUSTER_POLICY_NAME,
        "api_version": names.API_MELLANOX,
        "kind": "NicClusterPolicy",
        "name": names.NIC_CLUSTER_POLICY_NAME,
        "condition": "status.state == 'ready'",
        "failure_condition": "status.state == 'ignore' || %s" % NCP_FAILING_STATES,
        "failure_message": "(status.state == 'ignore' && join('', ['ignored by the Network Operator: ', status.reason "
                           "|| 'no reason given'])) || join('; ', %s.join(': ', [name, message || 'no message']))"
                           % NCP_FAILING_STATES,
        "progress": "join(', ', status.appliedStates[?state != 'ready' && state != 'ignore'].join('', [name, ': ', "
                    "state, (message && join('', [' (', message, ')'])) || '']) || `[]`)",
    }, operand_namespace, nic_cluster_policy_images(policy))


# gpu-operator controllers/clusterpolicy_controller.go: one ClusterPolicy drives the cluster; another one gets state
# "ignored" (gpuv1.Ignored; some releases set it only on the operator's in-memory copy, so it may show no status) and
# is never reconciled. Either way only the collection's own policy decides the wait. Its
# states are ready/notReady; Error=True also means "not ready yet" (reason OperandNotReady), so only reason
# ReconcileFailed is a failure (internal/conditions). The policy the collection renders (the one with its managed-by
# label, render/plan.py) must be the one driven.
def cluster_policy_wait(operand_namespace=None):
    """The wait that the collection's ClusterPolicy is ready: a foreign ClusterPolicy that the operator ignores
    blocks nothing; ours being ignored (another one drives the cluster) or failing to reconcile fails the wait."""
    ours = "metadata.labels.\"%s\" == '%s'" % (names.MANAGED_BY_LABEL, names.MANAGED_BY_VALUE)
    failed = "items[?%s && (status.conditions[?type == 'Error' && status == 'True' && reason == 'ReconcileFailed'] " \
             "|| status.state == 'ignored')]" % ours
    return _with_operand_pods({
        "title": "ClusterPolicy ready",
        "api_version": names.API_NVIDIA,
        "kind": "ClusterPolicy",
        "condition": "length(items[?%s && status.state == 'ready']) > `0`" % ours,
        "failure_condition": failed,
        "failure_message": "join('; ', %s.join(': ', [metadata.name, (status.state == 'ignored' && "
                           "'ignored by the GPU Operator, which drives another ClusterPolicy (it reconciles only "
                           "one)') || join('', status.conditions[?type == 'Error'].message || `[]`)]))" % failed,
        "progress": "join(', ', items[?status.state != 'ignored'].join(': ', [metadata.name, status.state || 'no "
                    "status yet']))",
    }, operand_namespace)


def network_attachments_gone_wait(attachments):
    """The wait that the operators removed the NetworkAttachmentDefinitions ("namespace/name") of deleted networks."""
    found = "items[?contains(%s, join('/', [metadata.namespace, metadata.name]))]" % _literal(sorted(attachments))
    return {
        "title": "NetworkAttachmentDefinitions removed",
        "api_version": "k8s.cni.cncf.io/v1",
        "kind": "NetworkAttachmentDefinition",
        "condition": "length(%s) == `0`" % found,
        "progress": "join(', ', %s.join('/', [metadata.namespace, metadata.name]))" % found,
    }


def sriov_node_states_settled_wait(deleted_policies, namespace):
    """The wait that the SR-IOV node states settled after policies were deleted: the operator took them out of every
    spec, no node has more VF-configured ports than its spec asks for, both drain annotations are Idle and the
    config daemon reports Succeeded (nodes drain and may reboot on the way)."""
    unsettled = " || ".join([
        "status.syncStatus != 'Succeeded'",
        "length((spec.interfaces || `[]`)[].vfGroups[] | [?contains(%s, policyName)]) > `0`"
        % _literal(sorted(deleted_policies)),
        "length((status.interfaces || `[]`)[?numVfs > `0`]) > length((spec.interfaces || `[]`)[?numVfs > `0`])",
        "%s != 'Idle'" % _annotation(DESIRED_STATE),
        "%s != 'Idle'" % _annotation(CURRENT_STATE)])
    # No node state unsettled (none at all is settled too): a maximum of 0, counted one node state per event.
    return {
        "title": "SR-IOV node states in sync after the policies were deleted",
        "api_version": names.API_SRIOV,
        "kind": "SriovNetworkNodeState",
        "namespace": namespace,
        "count": [{"each": unsettled, "at_least": 0, "all": False, "at_most": 0}],
        "each_failure_condition": SRIOV_FAILING,
        "each_failure_message": SRIOV_FAILURE_MESSAGE,
        "each_progress": "join('', [metadata.name, ': ', status.syncStatus || 'not reported', %s])" % SRIOV_LAST_ERROR,
    }


# The waits of each operator's phase (catalogue "phase"), for the operator roles.
def operator_phase_waits(phase, min_gpu_nodes=1, min_nic_nodes=1, node_selector="", all_nodes=False,
                         operand_namespace=None, manifests=()):
    if phase == "nfd":
        return [nfd_labels_wait(min_gpu_nodes, min_nic_nodes, node_selector, all_nodes)]
    if phase == "nic_cluster_policy":
        policy = next((m for m in manifests or () if (m or {}).get("kind") == "NicClusterPolicy"), None)
        return [nic_cluster_policy_wait(operand_namespace, policy)]
    if phase == "gpu_cluster_policy":
        return [cluster_policy_wait(operand_namespace)]
    return []


def plan_target(plan, min_gpu_nodes=1, min_nic_nodes=1, min_ready_nodes=1, nfd_node_selector="", nfd_all_nodes=False,
                rdma_all_nodes=False):
    """What a converge of ``plan`` ensures, for preflight's in-sync check: every rendered manifest in apply order, the
    waits each step runs after it (operator custom resources, then the RDMA MachineConfig and configuration) and the
    kinds pruned. The roles apply and wait on the same values, phase by phase."""
    manifests = [entry["manifest"] for entry in sorted(plan.get("manifests") or [], key=lambda e: e.get("order", 0))]
    phases = {entry.get("phase") for entry in plan.get("manifests") or []}
    waits = []
    for phase in ("nfd", "sriov_operator", "nic_cluster_policy", "gpu_cluster_policy"):
        if phase in phases:
            waits.extend(operator_phase_waits(phase, min_gpu_nodes, min_nic_nodes, nfd_node_selector, nfd_all_nodes))
    sets = rdma_wait_sets(plan, min_ready_nodes, rdma_all_nodes)
    waits.extend(sets["machineconfig"] + sets["configuration"])
    return {"manifests": manifests, "waits": waits, "prune_kinds": names.managed_kinds("rdma")}
