"""The kubelet's device manager across a node reboot: extended resources withdrawn until their device plugin
registers again.

From kubernetes pkg/kubelet/cm/devicemanager (manager.go readCheckpoint, GetCapacity; types.go):
- A kubelet that starts (the node is back from its reboot) reads its checkpoint: every resource it knew gets a
  stopped endpoint and its devices count as unhealthy, so the node keeps the resource in `capacity` while its
  `allocatable` is 0 (capacity = healthy + unhealthy devices, allocatable = healthy ones).
- When the device plugin's pod runs again it registers on the kubelet socket, lists its devices healthy, and the
  allocatable count comes back.
- A plugin that does not register within endpointStopGracePeriod (5 minutes) is dropped: GetCapacity reports the
  resource deleted and the node status setter writes 0 for both capacity and allocatable
  (pkg/kubelet/nodestatus/setters.go MachineInfo, removedDevicePlugins).

The plugin of a resource is the pod of its DaemonSet on that node: `rdma/*` the RDMA shared device plugin
(Network Operator), `openshift.io/*` the SR-IOV device plugin (SR-IOV Network Operator), `nvidia.com/*` the GPU
Operator's device plugin. The simulator does not restart those pods at a reboot (docs/simulator.md, Simplified): a
plugin whose pod is ready registers `device_plugin_register_seconds` after the kubelet started (a container start:
documented range 1-30 s, scaled); `kubelet_endpoint_stop_grace_seconds` is the 5 minutes, scaled by 1/100.
"""

import time

from .workloads import pod_ready

# Resource name prefix -> the DaemonSet whose pod on the node is its device plugin.
PLUGINS = (("rdma/", "rdma-shared-dp-ds"), ("openshift.io/", "sriov-device-plugin"),
           ("nvidia.com/", "nvidia-device-plugin-daemonset"))


def extended(resource):
    """A device plugin's resource: vendor-domain names (the kubelet's own are cpu, memory, pods, hugepages-*, ...)."""
    return "/" in resource and not resource.startswith("kubernetes.io/")


def _plugin_of(resource):
    for prefix, daemonset in PLUGINS:
        if resource.startswith(prefix):
            return daemonset
    return None


def withdraw(node):
    """Edit a Node in place as its kubelet's first status after a start writes it: allocatable 0 for every extended
    resource, capacity kept. The reboot's own Ready=True write calls it, so no reader sees the old allocatable."""
    allocatable = node.setdefault("status", {}).setdefault("allocatable", {})
    for key in list(allocatable):
        if extended(key):
            allocatable[key] = "0"
    return node


def kubelet_started(rt, name, written=False):
    """The node's kubelet started after a reboot: its extended resources wait for their plugins (``written``: the
    caller's node write already withdrew them)."""
    rt.unregistered[name] = time.monotonic()
    if not written:
        rt.mutate("", "nodes", None, name, withdraw)
    rt.enqueue(("devicemanager", name), lambda: register(rt, name), rt.cfg("device_plugin_register_seconds"))


def _plugin_ready(rt, node_name, daemonset):
    for pod in rt.list("", "pods"):
        meta = pod["metadata"]
        owners = [r.get("name") for r in meta.get("ownerReferences") or ()]
        if daemonset in owners and (pod.get("spec") or {}).get("nodeName") == node_name and not meta.get("deletionTimestamp"):
            return pod_ready(pod)
    return False


def register(rt, name):
    """Plugins whose pod is ready register (allocatable = capacity); one not registered after the grace is dropped."""
    started = rt.unregistered.get(name)
    node = rt.get("", "nodes", None, name)
    if started is None or node is None:
        rt.unregistered.pop(name, None)
        return
    status = node.get("status") or {}
    capacity, allocatable = dict(status.get("capacity") or {}), dict(status.get("allocatable") or {})
    expired = time.monotonic() - started >= rt.cfg("kubelet_endpoint_stop_grace_seconds")
    waiting = False
    for key, value in capacity.items():
        if not extended(key) or allocatable.get(key) == value:
            continue
        daemonset = _plugin_of(key)
        if daemonset and _plugin_ready(rt, name, daemonset):
            allocatable[key] = value
        elif expired:
            capacity[key] = allocatable[key] = "0"
        else:
            waiting = True

    def edit(obj):
        obj.setdefault("status", {})["capacity"] = capacity
        obj["status"]["allocatable"] = allocatable
        return obj
    if capacity != (status.get("capacity") or {}) or allocatable != (status.get("allocatable") or {}):
        rt.mutate("", "nodes", None, name, edit)
    if waiting:
        rt.enqueue(("devicemanager", name), lambda: register(rt, name), rt.cfg("device_plugin_register_seconds"))
    else:
        rt.unregistered.pop(name, None)
