"""SR-IOV Network Operator: SriovOperatorConfig `default` -> SriovNetworkNodeStates; SriovNetworkNodePolicies
-> VFs on the selected PFs, node drain/reboot for Mellanox firmware changes, openshift.io/<resource> capacity.

Timing and the drain handshake follow k8snetworkplumbingwg/sriov-network-operator v1.6.0:
- controllers/sriovnetworknodepolicy_controller.go: every policy event re-queues one sync about a second later
  (AddAfter), which renders each node state's spec (its generation moves only when that spec changes). Until then the
  node states keep the old spec and the old `syncStatus` (`sriov_policy_sync_delay_seconds`, scaled).
- pkg/daemon/daemon.go: on a new generation the config daemon first writes `InProgress`; when VFs change it asks for
  a drain by setting `sriovnetwork.openshift.io/state` on the Node and `sriovnetwork.openshift.io/desired-state` on the
  node state (Drain_Required, or Reboot_Required), applies once drained, sets both back to `Idle`, and only then
  writes `Succeeded`. The status carries no generation: a `Succeeded` may be the previous generation's.
- controllers/drain_controller.go (+ _helper.go): `sriovnetwork.openshift.io/current-state` on the node state goes
  Idle -> Draining -> DrainComplete -> Idle; both annotations start as Idle (ensureAnnotationExists). The daemon
  applies (and reboots) only once it reads DrainComplete; the drain controller sets Idle again once the daemon's
  desired-state is back to Idle (handleNodeIdleNodeStateDrainingOrCompleted). The simulator evicts no pod, so a
  drain completes on the controller's next look.
- controllers/sriovnetworknodepolicy_controller.go handleStaleNodeState: the node state of a node the
  configDaemonNodeSelector no longer selects (the Network Operator's `mofed.wait=true` during a driver reload does
  that) is kept: the operator annotates it `sriovnetwork.openshift.io/keep-state-until` (RFC 3339, now + 30 minutes,
  pkg/consts DefaultNodeStateCleanupDelayMinutes) and deletes it only after that time; a node selected again keeps
  its state and loses the annotation (`sriov_stale_node_state_seconds`, scaled).
- pkg/platforms/openshift/openshift.go: before the first drain of a MachineConfigPool the operator waits until the
  pool is not rolling out (spec.configuration.name == status.configuration.name), then annotates it
  `sriovnetwork.openshift.io/state: Paused` and sets spec.paused; the last node of the pool to finish unpauses it
  and sets the annotation back to Idle.
"""

import hashlib
import json
import re
import time

from . import devicemanager, operands
from ._base import OperatorController, node_matches, now, profile_node, update_node
from .seed import node_pool

GROUP = "sriovnetwork.openshift.io"
# PF device IDs the operator's supported-nic-ids list carries, and the VF device ID of each.
VF_DEVICE = {
    "15b3": {"1013": "1014", "1015": "1016", "1017": "1018", "1019": "101a", "101b": "101c", "101d": "101e",
             "101f": "101e", "1021": "101e", "1023": "101e", "a2d6": "101e", "a2dc": "101e"},
    "8086": {"158b": "154c", "1572": "154c", "1583": "154c", "159b": "1889", "1592": "1889", "1593": "1889",
             "37d2": "37cd", "0d58": "154c"},
}
SUPPORTED_DEVICES = {vendor: set(ids) for vendor, ids in VF_DEVICE.items()}
DEFAULT_DAEMON_SELECTOR = {"node-role.kubernetes.io/worker": ""}
MCO_GROUP = "machineconfiguration.openshift.io"
# Drain handshake annotations (pkg/consts/constants.go): on the Node and the pool, and on the node state.
DRAIN_STATE = GROUP + "/state"
DESIRED_STATE = GROUP + "/desired-state"
CURRENT_STATE = GROUP + "/current-state"
IDLE, DRAIN_REQUIRED, REBOOT_REQUIRED, DRAINING = "Idle", "Drain_Required", "Reboot_Required", "Draining"
DRAIN_COMPLETE = "DrainComplete"
KEEP_UNTIL = GROUP + "/keep-state-until"  # pkg/consts NodeStateKeepUntilAnnotation
MAX_MELLANOX_VFS = 128


def ipoib_hwaddr(guid):
    """20-byte IPoIB hardware address of a port: QPN/flags, subnet prefix fe80::, then the port GUID."""
    raw = guid.replace(":", "")
    return "00:00:10:49:fe:80:00:00:00:00:00:00:" + ":".join(raw[i:i + 2] for i in range(0, 16, 2))


def interface_status(nic, port):
    return {
        "name": port.netdev,
        "pciAddress": nic.pci_address,
        "vendor": nic.vendor_id,
        "deviceID": nic.device_id,
        "driver": nic.driver,
        "linkType": "IB" if port.is_infiniband else "ETH",
        "linkSpeed": "%d Mb/s" % (port.speed_gbps * 1000) if port.state == "ACTIVE" else "-1 Mb/s",
        "linkAdminState": "up",
        "mtu": port.mtu,
        "mac": port.mac or ipoib_hwaddr(port.guid),
        "totalvfs": nic.total_vfs,
        "numVfs": 0,
        "eSwitchMode": "legacy",
    }


def sriov_pfs(pnode):
    return [(nic, nic.ports[0]) for nic in pnode.nics
            if nic.total_vfs and nic.device_id in SUPPORTED_DEVICES.get(nic.vendor_id, ())]


def sriov_interfaces(pnode):
    return [interface_status(nic, port) for nic, port in sriov_pfs(pnode)]


def _pf_names(selector):
    """[(pf name, vf range or None)] from nicSelector.pfNames ('ens8f0np0#0-7')."""
    out = []
    for entry in selector.get("pfNames") or []:
        name, _sep, rng = str(entry).partition("#")
        out.append((name, rng or None))
    return out


def policy_matches_pf(policy, nic, port):
    sel = (policy.get("spec") or {}).get("nicSelector") or {}
    if sel.get("vendor") and str(sel["vendor"]).lower() != nic.vendor_id:
        return False, None
    if sel.get("deviceID") and str(sel["deviceID"]).lower() != nic.device_id:
        return False, None
    if sel.get("rootDevices") and nic.pci_address not in [str(r).lower() for r in sel["rootDevices"]]:
        return False, None
    names = _pf_names(sel)
    if names:
        for name, rng in names:
            if name == port.netdev:
                return True, rng
        return False, None
    return bool(sel.get("vendor") or sel.get("deviceID") or sel.get("rootDevices")), None


# The operator's validating webhook (pkg/webhook/validate.go, v1.6.0), registered with failurePolicy Fail by the
# SriovOperatorConfig controller while `default` has enableOperatorWebhook (bindata/manifests/operator-webhook/
# 003-webhook.yaml; controllers/sriovoperatorconfig_controller.go syncWebhookObjs). It answers a refusal with the error
# text as Status.reason (pkg/webhook/webhook.go); the API server turns that into HTTP 400 with the message
# 'admission webhook "<name>" denied the request: <text>' (k8s.io/apiserver .../webhook/errors/statuserror.go).
# Not modelled: vdpa, bridge and externallyManaged checks, and the pool config's maxUnavailable parsing.
WEBHOOK_NAME = "operator-webhook.sriovnetwork.openshift.io"
RESOURCE_NAME = re.compile(r"^[a-zA-Z0-9_]+$")
NO_VF_INDEX = -1  # api/v1/helper.go ParseVfRange: a PF name without '#' has no range


def _parse_vf_range(entry):
    """(pf name, first, last) as ParseVfRange reads 'name#first-last'; (name, -1, -1) without a range."""
    name, sep, rng = str(entry).partition("#")
    if not sep:
        return name, NO_VF_INDEX, NO_VF_INDEX
    first, _dash, last = rng.partition("-")
    return name, int(first), int(last)


def policy_static_error(policy):
    """staticValidateSriovNetworkNodePolicy: the checks that need nothing but the policy."""
    spec = policy.get("spec") or {}
    sel = spec.get("nicSelector") or {}
    name = policy["metadata"].get("name")
    resource = spec.get("resourceName") or ""
    if not RESOURCE_NAME.match(resource):
        return ('resource name "%s" contains invalid characters, the accepted syntax of the regular expressions is: '
                '"^[a-zA-Z0-9_]+$"' % resource)
    if not (sel.get("vendor") or sel.get("deviceID") or sel.get("pfNames") or sel.get("rootDevices") or sel.get("netFilter")):
        return ("at least one of these parameters (vendor, deviceID, pfNames, rootDevices or netFilter) has to be defined "
                "in nicSelector in CR %s" % name)
    vendor, device = sel.get("vendor") or "", sel.get("deviceID") or ""
    if vendor:
        if vendor not in SUPPORTED_DEVICES:
            return "vendor %s is not supported" % vendor
        if device and device not in SUPPORTED_DEVICES[vendor]:
            return "vendor/device %s/%s is not supported" % (vendor, device)
    elif device and not any(device in ids for ids in SUPPORTED_DEVICES.values()):
        return "device %s is not supported" % device
    num_vfs = int(spec.get("numVfs") or 0)
    for entry in sel.get("pfNames") or []:
        entry = str(entry)
        if "#" not in entry:
            continue
        fields = entry.split("#")
        if len(fields) != 2:
            return "failed to parse %s PF name in nicSelector, probably incorrect separator character usage" % entry
        bounds = fields[1].split("-")
        if len(bounds) != 2:
            return "failed to parse %s PF name nicSelector, probably incorrect range character usage" % entry
        if not re.match(r"^[+-]?[0-9]+$", bounds[0]):
            return "failed to parse %s PF name nicSelector, start range is incorrect" % entry
        if not re.match(r"^[+-]?[0-9]+$", bounds[1]):
            return "failed to parse %s PF name nicSelector, end range is incorrect" % entry
        if int(bounds[1]) < int(bounds[0]):
            return "failed to parse %s PF name nicSelector, end range shall not be smaller than start range" % entry
        if int(bounds[1]) >= num_vfs:
            return "failed to parse %s PF name nicSelector, end range exceeds the maximum VF index " % entry
    if spec.get("deviceType") == "vfio-pci" and spec.get("isRdma"):
        return ("'deviceType: vfio-pci' conflicts with 'isRdma: true'; Set 'deviceType' to (string)'netdevice' Or "
                "Set 'isRdma' to (bool)'false'")
    if spec.get("linkType") and str(spec["linkType"]).lower() != "eth" and spec.get("eSwitchMode") == "switchdev":
        return "'eSwitchMode: switchdev' can be used only with ethernet links"
    return None


def _nic_model_matches(sel, iface):
    """validateNicModel: the selector's fields against one reported interface, then the supported-NIC list."""
    if sel.get("vendor") and sel["vendor"] != iface.get("vendor"):
        return False
    if sel.get("deviceID") and sel["deviceID"] != iface.get("deviceID"):
        return False
    if sel.get("rootDevices") and iface.get("pciAddress") not in sel["rootDevices"]:
        return False
    if sel.get("pfNames") and iface.get("name") not in [str(p).split("#", 1)[0] for p in sel["pfNames"]]:
        return False
    return iface.get("deviceID") in SUPPORTED_DEVICES.get(iface.get("vendor"), ())


def _conflict_with(current, other):
    """validatePolicyForNodePolicy: overlapping VF ranges of one PF, or a shared root device."""
    cur_sel = (current.get("spec") or {}).get("nicSelector") or {}
    other_sel = (other.get("spec") or {}).get("nicSelector") or {}
    for cur in cur_sel.get("pfNames") or []:
        try:
            cur_name, cur_first, cur_last = _parse_vf_range(cur)
        except ValueError:
            return "invalid PF name: %s" % cur
        for prev in other_sel.get("pfNames") or []:
            try:
                prev_name, prev_first, prev_last = _parse_vf_range(prev)
            except ValueError:
                continue
            if cur_name == prev_name:
                # Only the first PF name both policies share is compared (validatePfNames returns at once).
                if cur_last < prev_first or cur_first > prev_last:
                    return None
                return "VF index range in %s is overlapped with existing policy %s" % (cur, other["metadata"]["name"])
    for device in cur_sel.get("rootDevices") or []:
        if device in (other_sel.get("rootDevices") or []):
            return "root device %s is overlapped with existing policy %s" % (device, other["metadata"]["name"])
    return None


def policy_dynamic_error(policy, nodes, node_states, policies):
    """dynamicValidateSriovNetworkNodePolicy: the policy against the nodes it selects, the interfaces their config
    daemons reported (SriovNetworkNodeState status) and the other policies. Before any daemon reported, no interface
    can be selected, so every policy is refused."""
    spec = policy.get("spec") or {}
    sel = spec.get("nicSelector") or {}
    name = policy["metadata"].get("name")
    num_vfs = int(spec.get("numVfs") or 0)
    states = dict((s["metadata"]["name"], s) for s in node_states)
    nodes_selected = interface_selected = False
    for node in nodes:
        if not node_matches(node, spec.get("nodeSelector") or {}):
            continue
        nodes_selected = True
        state = states.get(node["metadata"]["name"])
        for iface in ((state or {}).get("status") or {}).get("interfaces") or []:
            if not _nic_model_matches(sel, iface):
                continue
            interface_selected = True
            if num_vfs == 0:
                return "numVfs(%d) in CR %s is not allowed" % (num_vfs, name)
            if num_vfs > iface.get("totalvfs", 0) and iface.get("vendor") == "8086":
                return "numVfs(%d) in CR %s exceed the maximum allowed value(%d) interface(%s)" % (
                    num_vfs, name, iface.get("totalvfs", 0), iface.get("name"))
            if num_vfs > MAX_MELLANOX_VFS and iface.get("vendor") == "15b3":
                return "numVfs(%d) in CR %s exceed the maximum allowed value(%d) interface(%s)" % (
                    num_vfs, name, MAX_MELLANOX_VFS, iface.get("name"))
        for other in policies:
            if other["metadata"]["name"] != name and node_matches(node, (other.get("spec") or {}).get("nodeSelector") or {}):
                conflict = _conflict_with(policy, other)
                if conflict:
                    return conflict
    if not nodes_selected:
        return "no matched node is selected by the nodeSelector in CR %s" % name
    if not interface_selected:
        return "no supported NIC is selected by the nicSelector in CR %s" % name
    return None


# The webhook is served by the operator-webhook DaemonSet's pods behind operator-webhook-service, port 443
# (bindata/manifests/operator-webhook/server.yaml, 001-service.yaml). failurePolicy Fail: while no pod is ready,
# kube-apiserver cannot call it and answers 500 InternalError with the webhook client's error (k8s.io/apiserver
# pkg/admission/plugin/webhook/mutating/dispatcher.go and validating/dispatcher.go: NewInternalError of
# ErrCallingWebhook "failed calling webhook %q: failed to call webhook: %w"; the service resolver's
# "no endpoints available for service"). Policies go through the mutating webhook first; SriovOperatorConfigs and
# SriovNetworkPoolConfigs only through the validating one (003-webhook.yaml rules). Deletes are not modelled.
WEBHOOK_DAEMONSET = "operator-webhook"
WEBHOOK_SERVICE = "operator-webhook-service"


def webhook_unreachable(plural, operator_namespace, ready):
    """The API server's error text while the registered webhook has no ready pod, else None."""
    if ready:
        return None
    path = "mutating-custom-resource" if plural == "sriovnetworknodepolicies" else "validating-custom-resource"
    return ('failed calling webhook "%s": failed to call webhook: Post "https://%s.%s.svc:443/%s?timeout=10s": '
            'no endpoints available for service "%s"' % (WEBHOOK_NAME, WEBHOOK_SERVICE, operator_namespace, path, WEBHOOK_SERVICE))


def webhook_denial(kind, obj, operator_namespace, lookup):
    """The refusal text of the operator's webhook for a create or update, or None when admitted. lookup(group,
    plural, namespace) lists objects as the webhook's client would."""
    meta = obj.get("metadata") or {}
    if kind == "SriovOperatorConfig":
        if meta.get("name") != "default" or meta.get("namespace") != operator_namespace:
            return "only default SriovOperatorConfig in %s namespace is used" % operator_namespace
        return None
    if kind != "SriovNetworkNodePolicy" or (meta.get("name") == "default" and meta.get("namespace") == operator_namespace):
        return None  # the deprecated default policy is not validated
    error = policy_static_error(obj)
    if error is None:
        policies = [p for p in lookup(GROUP, "sriovnetworknodepolicies", operator_namespace)
                    if p["metadata"]["name"] != meta.get("name")]
        error = policy_dynamic_error(obj, lookup("", "nodes", None),
                                     lookup(GROUP, "sriovnetworknodestates", operator_namespace), policies)
    return error


def vf_pci_address(pf_address, index):
    domain, bus, devfn = pf_address.split(":")
    dev, fn = devfn.split(".")
    slot = int(fn) + 2 + index  # mlx5 / ice VFs start two functions after the PF
    return "%s:%s:%02x.%d" % (domain, bus, int(dev, 16) + slot // 8, slot % 8)


def vf_netdev(pf_name, index):
    base = pf_name[:-3] if pf_name.endswith(("np0", "np1")) else pf_name
    return "%sv%d" % (base, index)


def desired_interfaces(node, pnode, policies):
    """(spec.interfaces, errors) for one node from the policies that select it (lower priority value wins)."""
    chosen = {}
    errors = []
    ordered = sorted(policies, key=lambda p: ((p.get("spec") or {}).get("priority", 99), p["metadata"]["name"]))
    for policy in ordered:
        spec = policy.get("spec") or {}
        if not node_matches(node, spec.get("nodeSelector") or {}):
            continue
        for nic, port in sriov_pfs(pnode):
            ok, rng = policy_matches_pf(policy, nic, port)
            if not ok:
                continue
            num = int(spec.get("numVfs") or 0)
            link = (spec.get("linkType") or "eth").lower()
            device_type = spec.get("deviceType") or "netdevice"
            name = policy["metadata"]["name"]
            if num > nic.total_vfs and not nic.is_mellanox:
                errors.append("numVfs(%d) in CR %s exceed the maximum allowed value(%d) of interface %s"
                              % (num, name, nic.total_vfs, port.netdev))
                continue
            if nic.vendor_id == "15b3" and num > MAX_MELLANOX_VFS:
                errors.append("numVfs(%d) in CR %s exceeds %d, the maximum for Mellanox NICs" % (num, name, MAX_MELLANOX_VFS))
                continue
            if link == "ib" and device_type == "vfio-pci":
                errors.append("CR %s: can not use InfiniBand (linkType ib) with deviceType vfio-pci" % name)
                continue
            iface = chosen.setdefault(port.netdev, {"name": port.netdev, "pciAddress": nic.pci_address, "numVfs": 0,
                                                    "linkType": link, "vfGroups": []})
            iface["numVfs"] = max(iface["numVfs"], num)
            if spec.get("mtu"):
                iface["mtu"] = spec["mtu"]
            # api/v1/helper.go generatePfNameVfGroup copies isRdma and mtu from the policy (both omitempty).
            group = {"resourceName": spec.get("resourceName", ""), "deviceType": device_type,
                     "vfRange": rng or "0-%d" % (num - 1), "policyName": name}
            if spec.get("isRdma"):
                group["isRdma"] = True
            if spec.get("mtu"):
                group["mtu"] = spec["mtu"]
            iface["vfGroups"].append(group)
    return [chosen[k] for k in sorted(chosen)], errors


def _vf_indexes(vf_range, num):
    first, _sep, last = vf_range.partition("-")
    return [i for i in range(int(first), int(last or first) + 1) if i < num]


def applied_status(pnode, desired, errors, firmware_vfs=None):
    """status.interfaces after the daemon applied desired, and node resources {openshift.io/<name>: VF count}.
    firmware_vfs: {PF PCI address: NUM_OF_VFS the Mellanox firmware runs with}, reported as totalvfs."""
    by_name = {d["name"]: d for d in desired}
    interfaces, resources = [], {}
    for nic, port in sriov_pfs(pnode):
        entry = interface_status(nic, port)
        if nic.pci_address in (firmware_vfs or {}):
            entry["totalvfs"] = firmware_vfs[nic.pci_address]
        want = by_name.get(port.netdev)
        if want and want.get("mtu"):
            # pkg/host/internal/sriov/sriov.go configSriovPFDevice: the PF MTU is raised to the policy's, never lowered.
            entry["mtu"] = max(entry["mtu"], want["mtu"])
        if want and want["numVfs"]:
            entry["numVfs"] = want["numVfs"]
            vfs = []
            for group in want["vfGroups"]:
                for i in _vf_indexes(group["vfRange"], want["numVfs"]):
                    vf = {"vfID": i, "deviceID": VF_DEVICE[nic.vendor_id][nic.device_id], "vendor": nic.vendor_id,
                          "pciAddress": vf_pci_address(nic.pci_address, i),
                          "driver": "vfio-pci" if group["deviceType"] == "vfio-pci" else nic.driver,
                          "mtu": want.get("mtu", port.mtu)}
                    if group["deviceType"] != "vfio-pci":
                        vf["name"] = vf_netdev(port.netdev, i)
                        if port.is_infiniband:
                            vf["guid"] = "%s:%04x" % (port.guid.rsplit(":", 1)[0], 0x8000 + i)
                        else:
                            vf["mac"] = "02:%s:%02x" % (":".join(port.mac.split(":")[2:5]), i)
                    vfs.append(vf)
                    if group["resourceName"]:
                        key = "openshift.io/" + group["resourceName"]
                        resources[key] = resources.get(key, 0) + 1
            entry["Vfs"] = sorted(vfs, key=lambda v: v["vfID"])
        interfaces.append(entry)
    status = {"interfaces": interfaces, "syncStatus": "Failed" if errors else "Succeeded",
              "lastSyncError": "; ".join(errors), "system": {"rdmaMode": "shared"}}
    return status, resources


def _selects(selector, labels):
    """A LabelSelector's matchLabels and matchExpressions (In, NotIn, Exists, DoesNotExist) against node labels."""
    selector = selector or {}
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        if (op == "In" and labels.get(key) not in values) or (op == "NotIn" and labels.get(key) in values) \
                or (op == "Exists" and key not in labels) or (op == "DoesNotExist" and key in labels):
            return False
    return bool(selector.get("matchLabels") or selector.get("matchExpressions"))


def _policy_key(policies):
    return sorted((p["metadata"]["name"], p.get("spec")) for p in policies)


def _rfc3339_seconds(text):
    import calendar
    try:
        return calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%SZ"))
    except (TypeError, ValueError):
        return 0.0


def _digest(value):
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:16]


class SriovController(OperatorController):
    package = "sriov-network-operator"
    watched = ((GROUP, "sriovoperatorconfigs"), (GROUP, "sriovnetworknodestates"), (GROUP, "sriovnetworknodepolicies"))
    watch_nodes = True

    def __init__(self, rt):
        super().__init__(rt)
        self.applied = {}  # node -> digest of the spec the daemon applied
        self.applied_vfs = {}  # node -> {pf: numVfs} applied
        self.applied_desired = {}  # node -> spec.interfaces applied (with VFs)
        self.firmware = {}  # node -> {PF PCI address: [NUM_OF_VFS now, at next boot]} (Mellanox only)
        self.syncing = {}  # node -> (digest, start, reboot, drain)
        self.stale_until = {}  # node -> time.time() after which its de-selected node state may be deleted
        self.resources = {}  # node -> set of resource names we advertise
        self.rendered_policies = None  # the policies the last (delayed) policy sync rendered into node states
        self.policies_changed_at = None  # when the policies first differed from rendered_policies

    def _policies_to_render(self, live):
        """(policies the node states follow now, seconds until the pending policy sync or None)."""
        if self.rendered_policies is None or _digest(_policy_key(live)) == _digest(_policy_key(self.rendered_policies)):
            self.rendered_policies, self.policies_changed_at = live, None
            return live, None
        if self.rt.operator_faults().get("sriov_policy_sync_hold"):
            return self.rendered_policies, None  # test control: a policy sync that has not come yet (a longer delay)
        if self.policies_changed_at is None:
            self.policies_changed_at = time.monotonic()
        left = self.rt.cfg("sriov_policy_sync_delay_seconds") - (time.monotonic() - self.policies_changed_at)
        if left > 0:
            return self.rendered_policies, left
        self.rendered_policies, self.policies_changed_at = live, None
        return live, None

    def reconcile(self, operator_namespace):
        config = self.rt.get(GROUP, "sriovoperatorconfigs", operator_namespace, "default")
        if config is None or config["metadata"].get("deletionTimestamp"):
            return  # the operator only acts on the config named "default"; nothing runs without it
        selector = (config.get("spec") or {}).get("configDaemonNodeSelector") or DEFAULT_DAEMON_SELECTOR
        # Its operands (bindata/manifests): config daemon and device plugin on the selected nodes, webhook and
        # resources injector on the control plane while SriovOperatorConfig enables them.
        operands.ensure(self.rt, config, operands.sriov_operands(config, operator_namespace, selector), None)
        live = [p for p in self.rt.list(GROUP, "sriovnetworknodepolicies", operator_namespace)
                if not p["metadata"].get("deletionTimestamp") and p["metadata"]["name"] != "default"]
        policies, pending = self._policies_to_render(live)
        existing = {s["metadata"]["name"]: s for s in self.rt.list(GROUP, "sriovnetworknodestates", operator_namespace)}
        wanted = set()
        recheck = [pending] if pending is not None else []
        for node in self.rt.list("", "nodes"):
            name = node["metadata"]["name"]
            pnode = profile_node(self.rt, name)
            if pnode is None or not node_matches(node, selector) or not sriov_pfs(pnode):
                continue
            wanted.add(name)
            state = existing.get(name)
            if state is not None and KEEP_UNTIL in (state["metadata"].get("annotations") or {}):
                state = self._keep(operator_namespace, name, None) or state  # selected again (ResetKeepUntilTime)
            if state is None:
                state = self.rt.create(GROUP, "sriovnetworknodestates", {
                    "metadata": {"name": name, "namespace": operator_namespace,
                                 "annotations": {DESIRED_STATE: IDLE, CURRENT_STATE: IDLE},
                                 "ownerReferences": [{"apiVersion": "%s/v1" % GROUP, "kind": "SriovOperatorConfig",
                                                      "name": "default", "uid": config["metadata"]["uid"],
                                                      "controller": True, "blockOwnerDeletion": True}]},
                    "spec": {},
                    "status": {"syncStatus": "InProgress"},
                })
                if state is None:
                    continue
                self._annotate_node(name, IDLE)
            left = self._sync_node(operator_namespace, node, pnode, state, policies)
            if left is not None:
                recheck.append(left)
        for name in set(existing) - wanted:
            left = self._stale_node_state(operator_namespace, existing[name])
            if left is not None:
                recheck.append(left)
                continue
            self.rt.delete(GROUP, "sriovnetworknodestates", operator_namespace, name)
            self.applied.pop(name, None)
            self.syncing.pop(name, None)
        if recheck:
            self.resync(min(recheck) + 0.001)

    def _sync_node(self, ns, node, pnode, state, policies):
        """Advance one node's sync; returns seconds until it should be looked at again, or None when settled."""
        name = pnode.name
        desired, errors = desired_interfaces(node, pnode, policies)
        spec = {"interfaces": desired} if desired else {}
        if (state.get("spec") or {}) != spec:
            def set_spec(obj):
                obj["spec"] = spec
            state = self.rt.mutate(GROUP, "sriovnetworknodestates", ns, name, set_spec) or state
        digest = _digest([desired, errors])
        if self.applied.get(name) == digest:
            return None
        if name not in self.applied and self.rt.operator_faults().get("sriov_daemon_report_hold"):
            return self.rt.cfg("sriov_sync_seconds")  # test control: this node's config daemon has not reported yet
        record = self.syncing.get(name)
        firmware = self._firmware(pnode)
        if record is None or record[0] != digest:
            if self.rt.operator_faults().get("sriov_daemon_host_read_hold"):
                # Test control: the daemon is still reading the host (pkg/daemon/daemon.go Reconcile runs
                # updateStatusFromHost before updateSyncState InProgress), so the re-rendered spec stands beside the
                # previous sync's status.
                return self.rt.cfg("sriov_sync_seconds")
            before = self.applied_vfs.get(name, {})
            # pkg/vendors/mellanox/mellanox.go HandleTotalVfs: a Mellanox PF whose firmware runs another TotalVfs than
            # the policy's numVfs gets NUM_OF_VFS rewritten, and the node reboots (mellanox_plugin.go OnNodeStateChange).
            reboot = any(d["numVfs"] != firmware[d["pciAddress"]][0] for d in desired if d["pciAddress"] in firmware)
            after = {d["name"]: d["numVfs"] for d in desired}
            # api/v1/helper.go NeedToUpdateSriov: a VF count or a VF MTU that differs, or a PF MTU below the policy's,
            # needs an update, and the generic plugin drains for it (pkg/plugins/generic/generic_plugin.go needDrainNode).
            drain = reboot or any(after.get(pf, 0) != vfs for pf, vfs in before.items()) or \
                any(vfs != before.get(pf, 0) for pf, vfs in after.items()) or self._mtu_changes(name, desired)
            # The daemon's first act on a new generation, then its drain request.
            self._status(ns, name, state, {"syncStatus": "InProgress"})
            if drain:
                self._annotate(ns, name, desired=REBOOT_REQUIRED if reboot else DRAIN_REQUIRED)
            others_rebooting = [n for n, r in self.syncing.items() if n != name and r[2]]
            if reboot and others_rebooting:  # one node drains and reboots at a time (maxUnavailable 1)
                return self.rt.cfg("sriov_sync_seconds")
            if drain and not self._pause_pool(node):
                return self.rt.cfg("sriov_sync_seconds")  # the MachineConfigPool is rolling out: wait for it
            if drain:
                self._annotate(ns, name, current=DRAINING)
            record = (digest, time.monotonic(), reboot, drain)
            self.syncing[name] = record
        if record[3]:
            self._annotate(ns, name, current=DRAIN_COMPLETE)  # the drain controller drained the node
        total = self.rt.cfg("sriov_sync_seconds") + (self.rt.cfg("sriov_reboot_seconds") if record[2] else 0)
        left = total - (time.monotonic() - record[1])
        if left > 0:
            if record[2]:
                self._reboot(name, down=True)
            return left
        sync_error = self._sync_error(name) if desired else None  # the NICs are reported whatever the apply does
        if sync_error:
            if record[2]:
                self._reboot(name, down=False)  # the node is back from its reboot; the daemon's apply fails again
            self._status(ns, name, state, {"syncStatus": "InProgress", "lastSyncError": sync_error})
            return self.rt.cfg("sriov_sync_seconds")  # the daemon requeues and fails again
        self._write_firmware(name, pnode, firmware, desired, rebooted=record[2])
        status, resources = applied_status(pnode, desired, errors, dict((pci, fw[0]) for pci, fw in firmware.items()))
        status["system"] = {"rdmaMode": self._pool_rdma_mode(ns, name)}
        if record[3]:
            self._annotate(ns, name, desired=IDLE)  # the daemon's annotate(Idle) comes before Succeeded
        self._status(ns, name, state, status, replace=True)
        for stale in self.resources.get(name, set()) - set(resources):
            resources[stale] = 0  # the kubelet keeps a withdrawn resource at 0
        update_node(self.rt, name, set_resources=resources)
        self.resources[name] = {k for k, v in resources.items() if v}
        if record[2]:
            self._reboot(name, down=False)
        self.applied[name] = digest
        self.applied_vfs[name] = {d["name"]: d["numVfs"] for d in desired}
        self.syncing.pop(name, None)
        if record[3]:
            self._unpause_pool(node)
            self._annotate(ns, name, current=IDLE)
        return 0.0 if self.syncing else None

    def _mtu_changes(self, name, desired):
        """A PF of desired whose VFs run another MTU than the applied spec gave them."""
        applied = {d["name"]: d.get("mtu") for d in self.applied_desired.get(name, [])}
        return any(d["numVfs"] and d["name"] in applied and d.get("mtu") and d.get("mtu") != applied[d["name"]] for d in desired)

    def _stale_node_state(self, ns, state):
        """handleStaleNodeState: seconds the state of a de-selected node is still kept, or None once it may go."""
        name = state["metadata"]["name"]
        keep = (state["metadata"].get("annotations") or {}).get(KEEP_UNTIL)
        if keep is None:
            until = time.time() + self.rt.cfg("sriov_stale_node_state_seconds")
            self._keep(ns, name, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(until)))
            self.stale_until[name] = until
            return self.rt.cfg("sriov_stale_node_state_seconds")
        until = self.stale_until.get(name)
        if until is None:  # kept by an earlier operator instance: read the annotation (RFC 3339, whole seconds)
            until = _rfc3339_seconds(keep)
        left = until - time.time()
        return left if left > 0 else None

    def _keep(self, ns, name, value):
        """Set (a time) or remove (None) the keep-state-until annotation of a node state."""
        def edit(obj):
            annotations = obj["metadata"].setdefault("annotations", {})
            if value is None:
                annotations.pop(KEEP_UNTIL, None)
            else:
                annotations[KEEP_UNTIL] = value
            return obj
        self.stale_until.pop(name, None)
        return self.rt.mutate(GROUP, "sriovnetworknodestates", ns, name, edit)

    def _sync_error(self, name):
        """Fault sriov_sync_error {node name or "*": message}: the config daemon's apply fails on that node. In daemon
        mode (OpenShift) the daemon writes syncStatus InProgress with the error in lastSyncError and retries; Failed is
        written only in systemd mode (sriov-network-operator pkg/daemon/daemon.go). Real cases: "Mellanox device
        detected when in lockdown mode" (k8snetworkplumbingwg/sriov-network-operator#103), "operation not supported"
        (openshift/sriov-network-operator#640), a drain that never completes, "timed out waiting for the condition"
        (k8snetworkplumbingwg/sriov-network-operator#306)."""
        errors = self.rt.operator_faults().get("sriov_sync_error") or {}
        return errors.get(name) or errors.get("*")

    def _firmware(self, pnode):
        """{PF PCI address: [TotalVfs now, TotalVfs at next boot]} of the node's Mellanox NICs (mlxconfig NUM_OF_VFS);
        at first what the profile says the NIC reports (sriov_totalvfs)."""
        return self.firmware.setdefault(pnode.name, dict(
            (nic.pci_address, [nic.total_vfs, nic.total_vfs]) for nic, _port in sriov_pfs(pnode) if nic.is_mellanox))

    def _write_firmware(self, name, pnode, firmware, desired, rebooted):
        """The Mellanox plugin's firmware writes: NUM_OF_VFS = numVfs for a PF with a spec; 0 at next boot for a PF
        the operator configured before and no policy selects now (no reboot for that); a reboot runs the next values."""
        wanted = dict((d["pciAddress"], d["numVfs"]) for d in desired if d["pciAddress"] in firmware)
        configured = set(d["pciAddress"] for d in self.applied_desired.get(name, []))
        for pci, values in firmware.items():
            if pci in wanted:
                values[1] = wanted[pci]
            elif pci in configured:
                values[1] = 0
            if rebooted:
                values[0] = values[1]
        self.applied_desired[name] = [d for d in desired if d["numVfs"]]

    def _annotate(self, ns, name, desired=None, current=None):
        """The daemon's drain request (desired, mirrored on the Node) and the drain controller's answer (current)."""
        changes = {}
        if desired is not None:
            changes[DESIRED_STATE] = desired
            self._annotate_node(name, desired)
        if current is not None:
            changes[CURRENT_STATE] = current
        state = self.rt.get(GROUP, "sriovnetworknodestates", ns, name)
        if state is None or all((state["metadata"].get("annotations") or {}).get(k) == v for k, v in changes.items()):
            return

        def edit(obj):
            obj["metadata"].setdefault("annotations", {}).update(changes)
            return obj
        self.rt.mutate(GROUP, "sriovnetworknodestates", ns, name, edit)

    def _annotate_node(self, name, value):
        node = self.rt.get("", "nodes", None, name)
        if node is None or (node["metadata"].get("annotations") or {}).get(DRAIN_STATE) == value:
            return

        def edit(obj):
            obj["metadata"].setdefault("annotations", {})[DRAIN_STATE] = value
            return obj
        self.rt.mutate("", "nodes", None, name, edit)

    def _pool(self, node):
        pool = node_pool(node["metadata"].get("labels") or {}, self.rt.list(MCO_GROUP, "machineconfigpools"))
        return self.rt.get(MCO_GROUP, "machineconfigpools", None, pool) if pool else None

    def _pause_pool(self, node):
        """OpenshiftBeforeDrainNode: False while the node's pool is rolling out; otherwise pause it (annotated)."""
        mcp = self._pool(node)
        if mcp is None:
            return True
        paused_by_us = (mcp["metadata"].get("annotations") or {}).get(DRAIN_STATE) == "Paused"
        if (mcp.get("spec") or {}).get("paused") and paused_by_us:
            return True
        wanted = ((mcp.get("spec") or {}).get("configuration") or {}).get("name")
        reported = ((mcp.get("status") or {}).get("configuration") or {}).get("name")
        if not wanted or wanted != reported:
            return False

        def pause(obj):
            obj["metadata"].setdefault("annotations", {})[DRAIN_STATE] = "Paused"
            obj.setdefault("spec", {})["paused"] = True
            return obj
        self.rt.mutate(MCO_GROUP, "machineconfigpools", None, mcp["metadata"]["name"], pause)
        return True

    def _unpause_pool(self, node):
        """OpenshiftAfterCompleteDrainNode: the last node of the pool to finish unpauses it."""
        mcp = self._pool(node)
        if mcp is None or (mcp["metadata"].get("annotations") or {}).get(DRAIN_STATE) != "Paused":
            return
        pool = mcp["metadata"]["name"]
        me = node["metadata"]["name"]
        pools = self.rt.list(MCO_GROUP, "machineconfigpools")
        for other in self.rt.list("", "nodes"):
            labels = other["metadata"].get("labels") or {}
            ann = other["metadata"].get("annotations") or {}
            if other["metadata"]["name"] != me and node_pool(labels, pools) == pool and ann.get(DRAIN_STATE, IDLE) != IDLE:
                return

        def unpause(obj):
            obj.setdefault("spec", {})["paused"] = False
            obj["metadata"].setdefault("annotations", {})[DRAIN_STATE] = IDLE
            return obj
        self.rt.mutate(MCO_GROUP, "machineconfigpools", None, pool, unpause)

    def _pool_rdma_mode(self, namespace, node_name):
        """The RDMA subsystem mode the node's config daemon reports (status.system.rdmaMode) once it applied its spec:
        the operator copies the rdmaMode of the SriovNetworkPoolConfig that selects the node into the node state's
        spec.system.rdmaMode, the daemon sets it as a kernel argument and the node runs it after its reboot
        (sriov-network-operator controllers/sriovnetworkpoolconfig_controller.go, pkg/plugins/generic/generic_plugin.go);
        "shared" is the kernel's default. The reboot itself is not modelled for a mode change alone."""
        node = self.rt.get("", "nodes", None, node_name) or {}
        labels = (node.get("metadata") or {}).get("labels") or {}
        for pool in self.rt.list(GROUP, "sriovnetworkpoolconfigs", namespace):
            spec = pool.get("spec") or {}
            if spec.get("rdmaMode") and _selects(spec.get("nodeSelector"), labels):
                return spec["rdmaMode"]
        return "shared"

    def _status(self, ns, name, state, changes, replace=False):
        status = dict(changes) if replace else dict(state.get("status") or {}, **changes)
        if status != (state.get("status") or {}):
            self.rt.set_status(GROUP, "sriovnetworknodestates", ns, name, status)

    def _reboot(self, name, down):
        """Drain and reboot (NotReady,SchedulingDisabled) while the Mellanox firmware is reconfigured."""
        def edit(obj):
            if down:
                obj.setdefault("spec", {})["unschedulable"] = True
            else:
                obj.setdefault("spec", {}).pop("unschedulable", None)
                devicemanager.withdraw(obj)  # the kubelet's first status after the reboot
            for cond in obj.get("status", {}).get("conditions") or []:
                if cond.get("type") == "Ready":
                    want = "False" if down else "True"
                    if cond.get("status") != want:
                        cond.update({"status": want, "lastTransitionTime": now(),
                                     "reason": "KubeletNotReady" if down else "KubeletReady",
                                     "message": "node is rebooting" if down else "kubelet is posting ready status"})
            return obj
        node = self.rt.get("", "nodes", None, name)
        if node is None:
            return
        unsched = bool((node.get("spec") or {}).get("unschedulable"))
        if unsched != down:
            self.rt.mutate("", "nodes", None, name, edit)
            if not down:
                devicemanager.kubelet_started(self.rt, name, written=True)
