"""NVIDIA Network Operator: NicClusterPolicy -> component states, driver-ready node label, device-plugin resources."""

import json
import re

from . import operands
from ._base import OperatorController, profile_node, update_node

GROUP = "mellanox.com"
POLICY_NAME = "nic-cluster-policy"
NIC_NODE_LABEL = "feature.node.kubernetes.io/pci-15b3.present"  # the operator's default node affinity (set by NFD)
MOFED_WAIT = "network.nvidia.com/operator.mofed.wait"
RESOURCE_NAME = re.compile(r"^[a-zA-Z0-9_]+$")
STATE_LABEL = "nvidia.network-operator.state"  # pkg/consts StateLabel, set on every object of a state
DEVICE_PLUGIN_STATES = ("state-RDMA-device-plugin", "state-SRIOV-device-plugin")

# spec path -> applied state name, in the order the operator reports them.
COMPONENTS = (
    (("ofedDriver",), "state-OFED"),
    (("rdmaSharedDevicePlugin",), "state-RDMA-device-plugin"),
    (("sriovDevicePlugin",), "state-SRIOV-device-plugin"),
    (("ibKubernetes",), "state-ib-kubernetes"),
    (("secondaryNetwork", "multus"), "state-multus-cni"),
    (("secondaryNetwork", "cniPlugins"), "state-container-networking-plugins"),
    (("secondaryNetwork", "ipoib"), "state-ipoib-cni"),
    (("secondaryNetwork", "ipamPlugin"), "state-whereabouts-cni"),
    (("nvIpam",), "state-nv-ipam-cni"),
    (("nicFeatureDiscovery",), "state-nic-feature-discovery"),
    (("docaTelemetryService",), "state-doca-telemetry-service"),
)
LINK_TYPES = {"Ethernet": "ether", "InfiniBand": "infiniband"}


def _dig(spec, path):
    for key in path:
        if not isinstance(spec, dict):
            return None
        spec = spec.get(key)
    return spec


def _as_list(value):
    if value is None:
        return None
    return value if isinstance(value, list) else [value]


def port_matches_shared(nic, port, selectors):
    """k8s-rdma-shared-dev-plugin selectors: OR within a list, AND across selector kinds."""
    if not port.rdma_device:
        return False
    checks = (("vendors", nic.vendor_id), ("deviceIDs", nic.device_id), ("drivers", nic.driver),
              ("ifNames", port.netdev), ("linkTypes", LINK_TYPES[port.link_layer]))
    for key, value in checks:
        wanted = _as_list(selectors.get(key))
        if wanted and value not in [str(w).lower() if key != "ifNames" else str(w) for w in wanted]:
            return False
    return True


def port_matches_sriov_dp(nic, port, selectors):
    """sriov-network-device-plugin netDevice selectors, applied to a PF (the host-device method).

    From k8snetworkplumbingwg/sriov-network-device-plugin: pkg/resources/deviceSelectors.go (vendors, devices,
    drivers, pciAddresses, linkTypes: OR within a list, AND across) and pkg/utils/utils.go (GetPfName and the root
    device are empty for a device that is not a VF), so pfNames and rootDevices never select a PF."""
    if selectors.get("pfNames") or selectors.get("rootDevices"):
        return False
    checks = (("vendors", nic.vendor_id), ("devices", nic.device_id), ("drivers", nic.driver),
              ("pciAddresses", nic.pci_address), ("linkTypes", LINK_TYPES[port.link_layer]))
    for key, value in checks:
        wanted = _as_list(selectors.get(key))
        if wanted and value not in [str(w).lower() for w in wanted]:
            return False
    if selectors.get("isRdma") and not port.rdma_device:
        return False
    return True


# The operator's validating webhook (failurePolicy Fail, in the CSV's webhookdefinitions) refuses a NicClusterPolicy
# whose device-plugin config is not valid: network-operator api/v1alpha1/validator/nicpolicy_webhook.go
# (validateRdmaSharedDevicePlugin, validateSriovNetworkDevicePlugin) with webhook-schemas/*.json; v26.4.1.
WEBHOOK_NAME = "vnicclusterpolicy.kb.io"
RDMA_RESOURCE_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")


def webhook_errors(policy):
    """(field path, rejected value, detail) for each device-plugin config the webhook refuses."""
    spec = policy.get("spec") or {}
    errors = []
    for key, path, list_key in (("rdmaSharedDevicePlugin", "spec.rdmaSharedDevicePlugin.Config", "configList"),
                                ("sriovDevicePlugin", "spec.sriovNetworkDevicePlugin.Config", "resourceList")):
        raw = (spec.get(key) or {}).get("config")
        if raw is None:
            continue
        try:
            data = json.loads(raw)
        except (TypeError, ValueError) as exc:
            label = "RdmaSharedDevicePluginConfig" if key == "rdmaSharedDevicePlugin" else "SriovNetworkDevicePluginConfig"
            errors.append((path, raw, "Invalid json of %s%s" % (label, exc)))
            continue
        entries = data.get(list_key) if isinstance(data, dict) else None
        if not isinstance(entries, list) or not entries:
            errors.append((path, raw, "%s: Array must have at least 1 items" % list_key))
            continue
        for entry in entries:
            name = (entry or {}).get("resourceName") if isinstance(entry, dict) else None
            if key == "rdmaSharedDevicePlugin" and not RDMA_RESOURCE_NAME.match(str(name or "")):
                errors.append((path, raw, "Invalid Resource name, it must consist of alphanumeric characters, '-', '_' or '.', "
                                          "and must start and end with an alphanumeric character"))
    return errors


def webhook_denial(policy):
    """The API server's text for a denied request (apiserver webhook errors: 'admission webhook "NAME" denied the
    request: ' + the webhook's apierrors.NewInvalid message), or None when the policy is admitted."""
    errors = webhook_errors(policy)
    if not errors:
        return None
    causes = ", ".join("%s: Invalid value: %s: %s" % (path, json.dumps(value), detail) for path, value, detail in errors)
    if len(errors) > 1:
        causes = "[%s]" % causes
    return 'admission webhook "%s" denied the request: NicClusterPolicy.mellanox.com "%s" is invalid: %s' % (
        WEBHOOK_NAME, policy["metadata"].get("name"), causes)


def parse_plugin_config(spec, key, list_key):
    """The plugin's config entries; None when the plugin could not read it (its pod then crash-loops)."""
    raw = (spec.get(key) or {}).get("config")
    if raw is None:
        return []
    try:
        data = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return None
    entries = (data or {}).get(list_key) if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return None
    good = [e for e in entries if isinstance(e, dict) and e.get("resourceName") and RESOURCE_NAME.match(str(e["resourceName"]))]
    return good if len(good) == len(entries) else None


def node_resources(pnode, shared_entries, sriov_entries):
    """{resource: count} the device plugins advertise on one node, plus [(plugin, resource, selectors)] that match nothing."""
    resources, unmatched = {}, []
    ports = [(nic, port) for nic in pnode.nics for port in nic.ports]
    for entry in shared_entries:
        selectors = entry.get("selectors") or {}
        if entry.get("devices") and not selectors.get("ifNames"):
            selectors = dict(selectors, ifNames=entry["devices"])
        name = "%s/%s" % (entry.get("resourcePrefix") or "rdma", entry["resourceName"])
        if any(port_matches_shared(nic, port, selectors) for nic, port in ports):
            resources[name] = int(entry.get("rdmaHcaMax") or 0)
        else:
            unmatched.append(("rdmaSharedDevicePlugin", name, selectors))
    for entry in sriov_entries:
        selector_list = entry.get("selectors") or {}
        selector_list = selector_list if isinstance(selector_list, list) else [selector_list]
        name = "%s/%s" % (entry.get("resourcePrefix") or "nvidia.com", entry["resourceName"])
        count = sum(1 for nic, port in ports if any(port_matches_sriov_dp(nic, port, s) for s in selector_list))
        if count:
            resources[name] = count
        else:
            unmatched.append(("sriovDevicePlugin", name, selector_list))
    return resources, unmatched


class NetworkOperatorController(OperatorController):
    package = "nvidia-network-operator"
    watched = ((GROUP, "nicclusterpolicies"), ("apps", "daemonsets"), ("apps", "deployments"))
    watch_nodes = True

    def __init__(self, rt):
        super().__init__(rt)
        self.applied = {}  # node -> set of resource names this operator advertises

    def reconcile(self, operator_namespace):
        policies = self.rt.list(GROUP, "nicclusterpolicies")
        active = None
        for policy in policies:
            meta = policy["metadata"]
            if meta["name"] != POLICY_NAME:
                self._write(policy, {"state": "ignore", "reason": "Unsupported NicClusterPolicy instance %s. Only instance "
                                     "with name %s is supported" % (meta["name"], POLICY_NAME)})
            elif not meta.get("deletionTimestamp"):
                active = policy
        if active is None:
            self._clear_resources()
            return
        self._reconcile_policy(active, operator_namespace)

    def _write(self, policy, status):
        meta = policy["metadata"]
        if (policy.get("status") or {}) != status:
            self.rt.set_status(GROUP, "nicclusterpolicies", None, meta["name"], status)

    def _selected_nodes(self, with_objects=False):
        out = []
        for node in self.rt.list("", "nodes"):
            if (node["metadata"].get("labels") or {}).get(NIC_NODE_LABEL) == "true":
                pnode = profile_node(self.rt, node["metadata"]["name"])
                if pnode is not None:
                    out.append((node, pnode) if with_objects else pnode)
        return out

    def _reconcile_policy(self, policy, operator_namespace):
        spec = policy.get("spec") or {}
        meta = policy["metadata"]
        included = [(state, path) for path, state in COMPONENTS if _dig(spec, path) is not None]
        nodes = self._selected_nodes()
        # A config the plugin cannot read (possible only when the policy predates the webhook, i.e. the operator):
        # the plugin's pods crash-loop, so its state stays notReady, without a message (state getSyncState returns no
        # error for pods that are not ready: pkg/state/state_rdma_shared_device_plugin.go, state_sriov_dp.go).
        shared = parse_plugin_config(spec, "rdmaSharedDevicePlugin", "configList")
        sriov = parse_plugin_config(spec, "sriovDevicePlugin", "resourceList")
        unreadable = [state for state, entries in (("state-RDMA-device-plugin", shared), ("state-SRIOV-device-plugin", sriov))
                      if entries is None]
        if unreadable:
            self._write(policy, {"state": "notReady", "appliedStates": [
                {"name": state, "state": "notReady" if state in unreadable else "ready"} for state, _path in included]})
            return
        # A selector that matches no device is no error anywhere: the plugin advertises the resource with no devices,
        # its pods are ready and so is the policy; only the node's allocatable shows it.
        per_node = dict((pnode.name, node_resources(pnode, shared, sriov)[0]) for pnode in nodes)
        failing = self.rt.operator_faults().get("nic_policy_component_failure")
        if failing:
            # A component whose pods never become ready (a driver that does not build, a crash-looping plugin):
            # the policy stays notReady and the node resources stay as they were.
            # sync_state "error" is what a state returns when it cannot even render its objects (pkg/state/state_ofed.go:
            # "failed to create k8s objects from manifest"); the policy itself is still only notReady.
            self._write(policy, {"state": "notReady", "appliedStates": [
                {"name": state, "state": failing.get("sync_state", "notReady"), "message": failing.get("message", "")}
                if state == failing.get("state") else {"name": state, "state": "ready"} for state, _path in included]})
            return
        # The operands (pkg/state/state_*.go render them; state_skel.go getSyncState reads their readiness).
        node_objs = [node for node, _p in self._selected_nodes(with_objects=True)]
        groups = operands.network_operands(policy, operator_namespace, node_objs)
        current = operands.ensure(self.rt, policy, groups, STATE_LABEL)
        driver = spec.get("ofedDriver")
        upgrade = (driver or {}).get("upgradePolicy") or {}
        for obj in current.get("state-OFED", ()):
            # The driver DaemonSet is OnDelete; the operator's upgrade controller (controllers/upgrade_controller.go,
            # k8s-operator-libs upgrade state machine) replaces outdated driver pods, maxParallelUpgrades nodes at a time.
            key = (obj["metadata"]["namespace"], obj["metadata"]["name"])
            workloads = getattr(self.rt, "workloads", None)
            if workloads is not None:
                workloads.on_delete_upgrades[key] = int(upgrade.get("maxParallelUpgrades") or 1) if upgrade.get("autoUpgrade") else 0
        self._mofed_wait_labels(nodes, current.get("state-OFED") if driver is not None else None)
        states = {state: operands.state_ready(objs) for state, objs in current.items()}
        ready = all(states.get(state, True) for state, _path in included)
        # A node advertises the device plugins' resources once their pods run there (the kubelet registers them).
        serving = self._device_plugin_nodes(current)
        self._apply_resources(dict((name, res) for name, res in per_node.items() if name in serving))
        if not ready:
            # Pods not ready yet: notReady without a message (pkg/state/manager.go SyncState; the policy's own state is
            # only ever ready or notReady, never error: controllers/nic_policy_helpers.go updatePolicyCRStatus).
            self._write(policy, {"state": "notReady", "appliedStates": [
                {"name": state, "state": "ready" if states.get(state, True) else "notReady"} for state, _p in included]})
            return
        all_states = [{"name": state, "state": "ready" if _dig(spec, path) is not None else "ignore"}
                      for path, state in COMPONENTS]
        self._write(policy, {"state": "ready", "appliedStates": all_states})

    def _mofed_wait_labels(self, nodes, driver_sets):
        """controllers/mofed_wait_labels.go: with a driver, a node carries mofed.wait=true until the mofed-container
        of its driver pod is ready; without one (handleWaitLabelsNoConfig) every NIC node gets false."""
        ready_nodes = set()
        for obj in driver_sets or ():
            for node, pod in operands.pods_by_node(self.rt, obj).items():
                if operands.container_ready(pod, "mofed-container"):
                    ready_nodes.add(node)
        for pnode in nodes:
            value = "false" if driver_sets is None or pnode.name in ready_nodes else "true"
            update_node(self.rt, pnode.name, set_labels={MOFED_WAIT: value})

    def _device_plugin_nodes(self, current):
        plugin_sets = [obj for state in DEVICE_PLUGIN_STATES for obj in current.get(state, ())]
        if not plugin_sets:
            return set(p.name for p in self._selected_nodes())
        serving = None
        for obj in plugin_sets:
            ready = {node for node, pod in operands.pods_by_node(self.rt, obj).items()
                     if all(c.get("ready") for c in (pod.get("status") or {}).get("containerStatuses") or [{}])}
            serving = ready if serving is None else serving & ready
        return serving or set()

    def _apply_resources(self, per_node):
        for name in set(self.applied) | set(per_node):
            wanted = dict(per_node.get(name, {}))
            # A device plugin that goes away leaves its resource at 0 on the node, as the kubelet shows it.
            for stale in self.applied.get(name, set()) - set(wanted):
                wanted[stale] = 0
            update_node(self.rt, name, set_resources=wanted)
            self.applied[name] = {k for k, v in wanted.items() if v}

    def _clear_resources(self):
        self._apply_resources({})
        self.applied = {}
