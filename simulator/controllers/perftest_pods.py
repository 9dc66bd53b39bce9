"""Scheduler, Multus and kubelet for the GPUDirect RDMA verification pods (ib_write_bw server and client).

Pods labelled app.kubernetes.io/component=gpudirect-verify are the only pods the simulator runs:

- Scheduling: the pod's nodeSelector picks the nodes; a node fits when its allocatable covers every extended
  resource the pod requests (minus what other running verify pods on it hold). Otherwise the pod stays Pending
  with PodScheduled False / Unschedulable and kube-scheduler's message ("0/3 nodes are available: 1 Insufficient
  rdma/rdma_shared_device_eth, 2 node(s) didn't match Pod's node affinity/selector. preemption: ..."). Pending
  pods are tried again when a node changes.
- Networks: the NetworkAttachmentDefinition named by k8s.v1.cni.cncf.io/networks gives an address from its
  whereabouts range (exclusions honoured), written to k8s.v1.cni.cncf.io/network-status as Multus does.
- Running: the container's command arguments and env (PERFTEST_ROLE, RDMA_DEVICE, RDMA_LINK_LAYER, PERFTEST_SERVER_IP) says
  what ib_write_bw would do. The server logs "Waiting for client to connect" until its client (found by the
  server address) finishes; both then exit 0 with perftest's header, table and footer, the bandwidth inside the
  range plugins/module_utils/verify/bandwidth_calibration.py expects for the hardware (slower port's speed, PCIe links of the pod's
  GPU and NIC, their path, MTU; deterministic per node pair), CUDA set-up lines for --use_cuda and DMA-BUF lines
  for --use_cuda_dmabuf.
- A port whose state in the profile is not ACTIVE (a rail down) makes the client fail as "link_down" does.
- Faults, sim.faults.operator_faults["perftest"]: "link_down", "wrong_gid", "no_gpu", "image_pull", "hang", "slow"
  (a string for every pod, or {"fault": name, "nodes": [node, ...], "devices": [rdma device, ...]} for pods on those
  nodes and/or with RDMA_DEVICE one of those devices).

Timing knobs (sim.config): perftest_start_seconds (0.05, scheduling to Running), perftest_run_seconds (0.2, client
run), perftest_backoff_seconds (0.2, ErrImagePull to ImagePullBackOff).
"""

import hashlib
import ipaddress
import json

from ansible_collections.gpudirect.openshift.plugins.module_utils.verify import bandwidth_calibration

from ._base import log, node_matches, now, profile_node
from .facts_pods import relation

COMPONENT_LABEL = "app.kubernetes.io/component"
COMPONENT = "gpudirect-verify"
ROLE_LABEL = "gpudirect.openshift/verify-role"
NETWORKS_ANNOTATION = "k8s.v1.cni.cncf.io/networks"
# OpenShift runs Multus with namespaceIsolation on (openshift/cluster-network-operator, bindata/network/multus/multus.yaml):
# a pod may use a NetworkAttachmentDefinition of its own namespace or of these; any other is refused
# (k8snetworkplumbingwg/multus-cni, pkg/k8sclient/k8sclient.go, GetNetworkDelegates).
MULTUS_GLOBAL_NAMESPACES = ("default", "openshift-multus", "openshift-sriov-network-operator")
NETWORK_STATUS_ANNOTATION = "k8s.v1.cni.cncf.io/network-status"
NAD = ("k8s.cni.cncf.io", "network-attachment-definitions")
FAULTS = ("link_down", "wrong_gid", "no_gpu", "image_pull", "hang", "slow")
SWEEP_SIZES = [2 ** n for n in range(1, 24)]
RULE = "-" * 87

_DEFAULTS = {"perftest_start_seconds": 0.05, "perftest_run_seconds": 0.2, "perftest_backoff_seconds": 0.2}


def is_verify_pod(obj):
    return ((obj.get("metadata") or {}).get("labels") or {}).get(COMPONENT_LABEL) == COMPONENT


def _requests(pod):
    total = {}
    for container in (pod.get("spec") or {}).get("containers") or []:
        resources = container.get("resources") or {}
        wanted = resources.get("requests") or resources.get("limits") or {}
        for name, value in wanted.items():
            if "/" in name:
                total[name] = total.get(name, 0) + int(float(str(value)))
    return total


def _container(pod):
    return ((pod.get("spec") or {}).get("containers") or [{}])[0].get("name") or "perftest"


def _count(value):
    try:
        return int(float(str(value)))
    except (TypeError, ValueError):
        return 0


def _env(pod):
    env = {}
    for container in (pod.get("spec") or {}).get("containers") or []:
        for item in container.get("env") or []:
            env[item.get("name")] = str(item.get("value", ""))
    return env


def _network_names(value, namespace):
    """(namespace, name) of each network in a k8s.v1.cni.cncf.io/networks value (names or JSON list)."""
    value = (value or "").strip()
    if not value:
        return []
    if value.startswith("["):
        try:
            items = json.loads(value)
        except ValueError:
            return []
        return [(i.get("namespace") or namespace, i.get("name")) for i in items if isinstance(i, dict) and i.get("name")]
    out = []
    for item in value.split(","):
        item = item.strip().split("@")[0]
        if "/" in item:
            ns, name = item.split("/", 1)
            out.append((ns, name))
        elif item:
            out.append((namespace, item))
    return out


class PerftestPodController:
    """Not an operator: it reacts to the verification pods themselves (and to nodes for pending pods)."""

    def __init__(self, rt):
        self.rt = rt
        self.unscheduled = set()  # (namespace, name)
        self.allocated = {}  # (nad namespace, nad name) -> {ip: (pod namespace, pod name)}
        self.pod_ips = {}  # (namespace, name) -> (nad key, ip)
        self.waiting_servers = {}  # server secondary ip -> (namespace, name)
        self.started = 0  # pods started so far: numbers their cluster-network addresses
        # node name -> verify pods bound there (namespace, name). kube-scheduler keeps such a cache of the pods per
        # node and counts a pod it just bound before the watch reports it (kubernetes/kubernetes,
        # pkg/scheduler/backend/cache/cache.go, AssumePod); entries are checked against the stored pod when used.
        self.on_node = {}

    # ------------------------------------------------------------------ helpers
    @staticmethod
    def is_mine(obj):
        return is_verify_pod(obj)

    def cfg(self, key):
        conf = getattr(self.rt.sim, "config", None) or {}
        return float(conf.get(key, _DEFAULTS[key]))

    def fault_for(self, pod):
        value = self.rt.operator_faults().get("perftest")
        if not value:
            return None
        if isinstance(value, dict):
            nodes = value.get("nodes")
            if nodes and (pod.get("spec") or {}).get("nodeName") not in nodes:
                return None
            # One NIC (one rail) faulty: only pods told to use one of these RDMA devices see the fault.
            devices = value.get("devices")
            if devices and _env(pod).get("RDMA_DEVICE") not in devices:
                return None
            value = value.get("fault")
        if value not in FAULTS:
            log.warning("unknown perftest fault %r (known: %s)", value, ", ".join(FAULTS))
            return None
        return value

    def _get(self, namespace, name):
        return self.rt.get("", "pods", namespace, name)

    def _set_log(self, namespace, name, text):
        logs = getattr(self.rt.sim, "pod_logs", None)
        if isinstance(logs, dict):
            logs[(namespace, name)] = text

    # ------------------------------------------------------------------ events
    def on_event(self, etype, rtype, obj):
        key = (rtype.group, rtype.plural)
        if key == ("", "nodes") and etype == "MODIFIED":
            for namespace, name in list(self.unscheduled):
                self.rt.enqueue(("perftest-schedule", namespace, name), lambda ns=namespace, n=name: self.schedule(ns, n))
            return
        if key != ("", "pods") or not self.is_mine(obj):
            return
        meta = obj["metadata"]
        ident = (meta.get("namespace"), meta["name"])
        if etype == "DELETED":
            self._forget(ident)
            return
        node_name = (obj.get("spec") or {}).get("nodeName")
        if node_name:
            self.on_node.setdefault(node_name, set()).add(ident)
        if etype == "ADDED":
            self.rt.enqueue(("perftest-schedule",) + ident, lambda: self.schedule(*ident))

    def _forget(self, ident):
        self.unscheduled.discard(ident)
        for idents in self.on_node.values():
            idents.discard(ident)
        entry = self.pod_ips.pop(ident, None)
        if entry:
            nad_key, ip = entry
            self.allocated.get(nad_key, {}).pop(ip, None)
            if self.waiting_servers.get(ip) == ident:
                del self.waiting_servers[ip]
        logs = getattr(self.rt.sim, "pod_logs", None)
        if isinstance(logs, dict):
            logs.pop(ident, None)

    # ------------------------------------------------------------------ scheduler
    def _used(self, node_name, exclude):
        """Extended resources the other running verify pods on the node hold (the pods of self.on_node, read now)."""
        used = {}
        for ident in sorted(self.on_node.get(node_name) or ()):
            if ident == exclude:
                continue
            pod = self._get(*ident)
            if pod is None or (pod.get("spec") or {}).get("nodeName") != node_name:
                continue
            if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                continue
            for name, count in _requests(pod).items():
                used[name] = used.get(name, 0) + count
        return used

    def _fits(self, node, selector, wanted, exclude):
        """None when the pod fits the node, else the scheduler's reasons against it (kube-scheduler's NodeAffinity,
        NodeUnschedulable and NodeResourcesFit filters, pkg/scheduler/framework/plugins/)."""
        if not node_matches(node, selector):
            return ["node(s) didn't match Pod's node affinity/selector"]
        if (node.get("spec") or {}).get("unschedulable"):
            return ["node(s) were unschedulable"]
        allocatable = (node.get("status") or {}).get("allocatable") or {}
        used = self._used(node["metadata"]["name"], exclude)
        short = [res for res, count in sorted(wanted.items()) if _count(allocatable.get(res)) - used.get(res, 0) < count]
        return ["Insufficient %s" % res for res in short] or None

    def _scan(self, selector, wanted, exclude):
        """(first node that fits or None, every node, {reason: node count}): kube-scheduler filtering each node."""
        nodes = self.rt.list("", "nodes")
        reasons = {}
        for node in nodes:
            against = self._fits(node, selector, wanted, exclude)
            if against is None:
                return node, nodes, reasons
            for reason in against:
                reasons[reason] = reasons.get(reason, 0) + 1
        return None, nodes, reasons

    def schedule(self, namespace, name):
        pod = self._get(namespace, name)
        if pod is None or (pod.get("spec") or {}).get("nodeName") or pod["metadata"].get("deletionTimestamp"):
            self.unscheduled.discard((namespace, name))
            return
        selector = (pod.get("spec") or {}).get("nodeSelector") or {}
        wanted = _requests(pod)
        chosen = None
        # The verify pods select one node by its kubernetes.io/hostname label, which the kubelet sets to the node's
        # own name by default (kubernetes/kubernetes, pkg/kubelet/kubelet_node_status.go, initialNode): that node is
        # read alone. Any other selector, a hostname that is not the node name, or a node that does not fit takes
        # the scan of every node below, which also words the Unschedulable message.
        hostname = selector.get("kubernetes.io/hostname")
        if hostname:
            node = self.rt.get("", "nodes", None, str(hostname))
            if node is not None and self._fits(node, selector, wanted, (namespace, name)) is None:
                chosen = node
        if chosen is None:
            chosen, nodes, reasons = self._scan(selector, wanted, (namespace, name))
        if chosen is None:
            self.unscheduled.add((namespace, name))
            detail = ", ".join("%d %s" % (count, reason) for reason, count in sorted(reasons.items()))
            message = "0/%d nodes are available: %s. preemption: 0/%d nodes are available: %d Preemption is not helpful for scheduling." % (
                len(nodes), detail, len(nodes), len(nodes))
            status = dict(pod.get("status") or {})
            status.update({"phase": "Pending", "qosClass": "BestEffort", "conditions": [{
                "type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message,
                "lastProbeTime": None, "lastTransitionTime": now()}]})
            self.rt.set_status("", "pods", namespace, name, status)
            return
        self.unscheduled.discard((namespace, name))
        node_name = chosen["metadata"]["name"]
        addresses = (chosen.get("status") or {}).get("addresses") or []
        host_ip = next((a["address"] for a in addresses if a.get("type") == "InternalIP"), "10.0.0.1")
        image = ((pod.get("spec") or {}).get("containers") or [{}])[0].get("image", "")

        def bind(obj):
            obj["spec"]["nodeName"] = node_name
            obj["status"] = {
                "phase": "Pending", "hostIP": host_ip, "hostIPs": [{"ip": host_ip}], "startTime": now(), "qosClass": "Guaranteed",
                "conditions": [{"type": "PodScheduled", "status": "True", "lastTransitionTime": now()},
                               {"type": "Initialized", "status": "True", "lastTransitionTime": now()},
                               {"type": "Ready", "status": "False", "reason": "ContainersNotReady", "lastTransitionTime": now(),
                                "message": "containers with unready status: [perftest]"}],
                "containerStatuses": [{"name": _container(pod), "image": image, "imageID": "", "ready": False, "restartCount": 0,
                                       "started": False, "state": {"waiting": {"reason": "ContainerCreating"}}}],
            }

        self.rt.mutate("", "pods", namespace, name, bind)
        self.on_node.setdefault(node_name, set()).add((namespace, name))
        self.rt.later(self.cfg("perftest_start_seconds"), lambda: self.start(namespace, name))

    # ------------------------------------------------------------------ Multus + kubelet
    def _allocate_ip(self, nad, ident):
        try:
            config = json.loads((nad.get("spec") or {}).get("config") or "{}")
        except ValueError:
            config = {}
        if "plugins" in config:
            config = config["plugins"][0]
        ipam = config.get("ipam") or {}
        nad_key = (nad["metadata"].get("namespace"), nad["metadata"]["name"])
        taken = self.allocated.setdefault(nad_key, {})
        try:
            network = ipaddress.ip_network(ipam.get("range") or "192.168.100.0/24", strict=False)
        except ValueError:
            return None, config
        start = ipaddress.ip_address(ipam["range_start"]) if ipam.get("range_start") else None
        excluded = []
        for item in ipam.get("exclude") or []:
            try:
                excluded.append(ipaddress.ip_network(item, strict=False))
            except ValueError:
                continue
        for host in network.hosts():
            if start is not None and host < start:
                continue
            if str(host) in taken or any(host in net for net in excluded) or str(host) == ipam.get("gateway"):
                continue
            taken[str(host)] = ident
            self.pod_ips[ident] = (nad_key, str(host))
            return "%s/%d" % (host, network.prefixlen), config
        return None, config

    def start(self, namespace, name):
        pod = self._get(namespace, name)
        if pod is None or (pod.get("status") or {}).get("phase") != "Pending":
            return
        fault = self.fault_for(pod)
        image = pod["spec"]["containers"][0].get("image", "")
        if fault == "image_pull":
            self._image_pull(namespace, name, image, "ErrImagePull")
            self.rt.later(self.cfg("perftest_backoff_seconds"), lambda: self._image_pull(namespace, name, image, "ImagePullBackOff"))
            return
        networks = _network_names((pod["metadata"].get("annotations") or {}).get(NETWORKS_ANNOTATION), namespace)
        # Each started pod its own cluster-network address, also pods without a secondary network.
        self.started += 1
        status_entries = [{"name": "ovn-kubernetes", "interface": "eth0", "ips": ["10.128.%d.%d" % (self.started // 250 + 2, self.started % 250 + 5)],
                           "mac": "0a:58:0a:80:02:%02x" % (self.started % 256), "default": True, "dns": {}}]
        nad_types = []
        for index, (nad_ns, nad_name) in enumerate(networks):
            if nad_ns != namespace and nad_ns not in MULTUS_GLOBAL_NAMESPACES:
                self._waiting(namespace, name, "ContainerCreating",
                              "failed to create pod network sandbox: Multus: GetPodNetwork: namespace isolation violation: "
                              "podnamespace: %s / target namespace: %s" % (namespace, nad_ns))
                return
            nad = self.rt.get(NAD[0], NAD[1], nad_ns, nad_name)
            if nad is None:
                # Multus cannot attach a network that has no definition: the sandbox is never created.
                self._waiting(namespace, name, "ContainerCreating",
                              'failed to create pod network sandbox: Multus: error getting network-attachment-definition "%s/%s": not found'
                              % (nad_ns, nad_name))
                return
            ip, config = self._allocate_ip(nad, (namespace, name))
            nad_types.append(config.get("type"))
            entry = {"name": "%s/%s" % (nad_ns, nad_name), "interface": "net%d" % (index + 1), "ips": [ip.split("/")[0]] if ip else [],
                     "mac": "02:00:%s" % ":".join("%02x" % b for b in hashlib.sha256(name.encode()).digest()[:4]), "dns": {}}
            if config.get("type") in ("sriov", "ib-sriov", "host-device"):
                entry["device-info"] = {"type": "pci", "version": "1.1.0", "pci": {"pci-address": "0000:a0:00.%d" % (2 + len(self.pod_ips) % 6)}}
            status_entries.append(entry)
        env = _env(pod)
        role = env.get("PERFTEST_ROLE") or (pod["metadata"].get("labels") or {}).get(ROLE_LABEL) or "server"
        run = self._describe(pod, env, nad_types)
        secondary = status_entries[1]["ips"][0] if len(status_entries) > 1 and status_entries[1]["ips"] else None
        run["own_ip"] = secondary

        def running(obj):
            obj["metadata"].setdefault("annotations", {})[NETWORK_STATUS_ANNOTATION] = json.dumps(status_entries, indent=1)
            status = obj["status"]
            status["phase"] = "Running"
            status["podIP"] = status_entries[0]["ips"][0]
            status["podIPs"] = [{"ip": status_entries[0]["ips"][0]}]
            status["conditions"] = [c for c in status.get("conditions") or [] if c.get("type") not in ("Ready", "ContainersReady")]
            status["conditions"] += [{"type": "Ready", "status": "True", "lastTransitionTime": now()},
                                     {"type": "ContainersReady", "status": "True", "lastTransitionTime": now()}]
            status["containerStatuses"] = [{"name": _container(pod), "image": image, "imageID": image, "ready": True, "restartCount": 0,
                                            "started": True, "state": {"running": {"startedAt": now()}}}]

        self._begin(namespace, name, role, run, fault, secondary, running)

    def _begin(self, namespace, name, role, run, fault, secondary, running):
        """The container started (network attached): what the program in it does from here."""
        if role == "server":
            self._set_log(namespace, name, server_waiting_log(run))
            if secondary:
                self.waiting_servers[secondary] = (namespace, name)
        else:
            self._set_log(namespace, name, cuda_lines(run) if run["use_cuda"] else "")
        self.rt.mutate("", "pods", namespace, name, running)
        if role == "server":
            if run["device_missing"] or fault == "no_gpu":
                log_text = (device_missing_log(run) if run["device_missing"] else no_gpu_log(run))
                self.rt.later(self.cfg("perftest_start_seconds"), lambda: self.finish(namespace, name, 1, log_text))
            return
        self.rt.later(self.cfg("perftest_run_seconds"), lambda: self.client_run(namespace, name, run, fault))

    def _describe(self, pod, env, nad_types):
        """What ib_write_bw would do in this pod: device, port, link layer, CUDA use, arguments."""
        # bash -c SCRIPT NAME ARG...: perftest gets the positional parameters (the collection's pod command).
        command = (pod["spec"]["containers"][0].get("command") or [])
        args = list(command[4:])
        node_name = pod["spec"].get("nodeName")
        pnode = profile_node(self.rt, node_name)
        ports = [(nic, port) for nic in (pnode.nics if pnode else []) for port in nic.ports]
        link_layer = env.get("RDMA_LINK_LAYER") or "Ethernet"
        device = env.get("RDMA_DEVICE") or ""
        chosen = None
        vf = False
        if device:
            chosen = next(((nic, port) for nic, port in ports if port.rdma_device == device), None)
        elif any(t in ("sriov", "ib-sriov") for t in nad_types):
            # A VF has its own RDMA device, numbered after the PFs' devices.
            chosen = next(((nic, port) for nic, port in ports if port.link_layer == link_layer and nic.is_mellanox), None)
            vf = True
            device = "mlx5_%d" % (len(ports) + sum(ord(c) for c in pod["metadata"]["name"]) % 8)
        else:
            chosen = next(((nic, port) for nic, port in ports if port.link_layer == link_layer and port.state == "ACTIVE"), None)
            device = chosen[1].rdma_device if chosen else "mlx5_0"
        use_cuda = None
        for arg in args:
            if arg.startswith("--use_cuda="):
                use_cuda = int(arg.split("=", 1)[1])
        # The pod's GPU is the node's first (nvidia.com/gpu: 1); the path and PCIe links of that GPU and the tested
        # NIC bound what it measures (plugins/module_utils/verify/bandwidth_calibration.py).
        gpu = pnode.gpus[0] if pnode and pnode.gpus else None
        nic = chosen[0] if chosen else None
        sizes = SWEEP_SIZES if "-a" in args else [int(args[args.index("-s") + 1]) if "-s" in args else 65536]
        return {
            "node": node_name,
            "device": device,
            "device_missing": bool(env.get("RDMA_DEVICE")) and chosen is None,
            "vf": vf,
            "speed_gbps": chosen[1].speed_gbps if chosen else 100,
            # a port the profile has down (a degraded rail) fails as the link_down fault does
            "port_active": chosen[1].state == "ACTIVE" if chosen else True,
            "mtu": 4096 if (chosen and chosen[1].is_infiniband) else 1024,
            "link_type": "IB" if link_layer == "InfiniBand" else "Ethernet",
            "qps": int(args[args.index("-q") + 1]) if "-q" in args else 1,
            "rdma_cm": "-R" in args,
            "gid_index": int(args[args.index("-x") + 1]) if "-x" in args else (3 if link_layer == "Ethernet" else 0),
            "duration": int(args[args.index("-D") + 1]) if "-D" in args else None,
            "iterations": int(args[args.index("-n") + 1]) if "-n" in args else 5000,
            "sizes": sizes,
            "use_cuda": use_cuda is not None,
            "dmabuf": "--use_cuda_dmabuf" in args,
            "gpu_pci": gpu.pci_address[5:10] if gpu else "00:00",
            "gpu_name": gpu.model if gpu else "NVIDIA GPU",
            "gpu_link": (gpu.pcie_gts, gpu.pcie_width) if gpu else (None, None),
            "nic_link": (nic.pcie_gts, nic.pcie_width) if nic else (None, None),
            "path": relation(gpu.pci_address, nic.pci_address, gpu.numa_node, nic.numa_node) if gpu and nic else None,
            "link_layer": link_layer,
            "server_ip": env.get("PERFTEST_SERVER_IP"),
            "port": env.get("PERFTEST_PORT", "18515"),
        }

    def _waiting(self, namespace, name, reason, message):
        def edit(obj):
            status = obj.setdefault("status", {})
            for container in status.get("containerStatuses") or []:
                container["state"] = {"waiting": {"reason": reason, "message": message}}
        self.rt.mutate("", "pods", namespace, name, edit)

    def _image_pull(self, namespace, name, image, reason):
        pod = self._get(namespace, name)
        if pod is None or (pod.get("status") or {}).get("phase") != "Pending":
            return
        if reason == "ErrImagePull":
            message = ('initializing source docker://%s: reading manifest in %s: manifest unknown' % (image, image.rsplit(":", 1)[0]))
        else:
            message = 'Back-off pulling image "%s"' % image
        self._waiting(namespace, name, reason, message)

    def client_run(self, namespace, name, run, fault):
        client = self._get(namespace, name)
        if client is None:
            return
        server_ident = self.waiting_servers.get(run["server_ip"] or "")
        server = self._get(*server_ident) if server_ident else None
        if run["device_missing"]:
            self.finish(namespace, name, 1, device_missing_log(run))
            return
        if fault == "no_gpu":
            self.finish(namespace, name, 1, no_gpu_log(run))
            return
        if fault == "hang":
            self._set_log(namespace, name, cuda_lines(run) if run["use_cuda"] else "")
            return
        if fault == "link_down" or not run["port_active"] or server is None or (server.get("status") or {}).get("phase") != "Running":
            self.finish(namespace, name, 1, link_down_log(run))
            return
        server_env = _env(server)
        server_run = self._describe(server, server_env, self._nad_types(server))
        server_run["own_ip"] = run["server_ip"]
        if not server_run["port_active"]:
            self.finish(namespace, name, 1, link_down_log(run))
            return
        if fault == "wrong_gid":
            self.finish(namespace, name, 1, wrong_gid_log(run, server_run))
            return
        plateau = calibrated_gbps(run, server_run)
        if fault == "slow":  # a degraded pair: 41 % of what its hardware gives
            plateau *= 0.41
        rows = result_rows(run, plateau)
        self.finish(namespace, name, 0, client_log(run, server_run, rows))
        server_ns, server_name = server_ident
        self.waiting_servers.pop(run["server_ip"], None)
        self.rt.later(self.cfg("perftest_start_seconds"),
                      lambda: self.finish(server_ns, server_name, 0, server_log(server_run, run, rows[-1:])))

    def _nad_types(self, pod):
        types = []
        for nad_ns, nad_name in _network_names((pod["metadata"].get("annotations") or {}).get(NETWORKS_ANNOTATION), pod["metadata"]["namespace"]):
            nad = self.rt.get(NAD[0], NAD[1], nad_ns, nad_name)
            try:
                config = json.loads(((nad or {}).get("spec") or {}).get("config") or "{}")
            except ValueError:
                config = {}
            types.append((config.get("plugins") or [config])[0].get("type"))
        return types

    def finish(self, namespace, name, exit_code, text):
        pod = self._get(namespace, name)
        if pod is None or (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            return
        self._set_log(namespace, name, text)
        image = pod["spec"]["containers"][0].get("image", "")

        def done(obj):
            status = obj["status"]
            started = ((((status.get("containerStatuses") or [{}])[0].get("state") or {}).get("running") or {}).get("startedAt")) or now()
            status["phase"] = "Succeeded" if exit_code == 0 else "Failed"
            status["conditions"] = [c for c in status.get("conditions") or [] if c.get("type") not in ("Ready", "ContainersReady")]
            status["conditions"] += [{"type": "Ready", "status": "False", "reason": "PodCompleted", "lastTransitionTime": now()},
                                     {"type": "ContainersReady", "status": "False", "reason": "PodCompleted", "lastTransitionTime": now()}]
            status["containerStatuses"] = [{"name": _container(pod), "image": image, "imageID": image, "ready": False, "restartCount": 0,
                                            "started": False, "state": {"terminated": {
                                                "exitCode": exit_code, "reason": "Completed" if exit_code == 0 else "Error",
                                                "startedAt": started, "finishedAt": now()}}}]

        self.rt.mutate("", "pods", namespace, name, done)


# ---------------------------------------------------------------------------------------------- perftest output

def bandwidth_fraction(server_node, client_node):
    """A number in [0, 1), the same for the same pair every run: where in the calibrated range the pair lands."""
    digest = hashlib.sha256(("%s->%s" % (server_node, client_node)).encode()).digest()
    return (int.from_bytes(digest[:2], "big") % 1000) / 1000.0


def calibrated_gbps(client_run, server_run):
    """BW average of large messages: inside the range bandwidth_calibration.expected gives for the slower side's hardware
    (link rate, PCIe links of its GPU and NIC, path, MTU), drawn per node pair; kept 5 % of the range above its low
    end so that the two decimals perftest prints never fall under it."""
    link = min(client_run["speed_gbps"], server_run["speed_gbps"])
    ranges = []
    for run in (client_run, server_run):
        gpu_memory = run["use_cuda"]
        # Only SYS has a published derating (bandwidth_calibration.SOURCES perftest-241); NODE/PHB runs are drawn as PIX ones.
        path = run["path"] if gpu_memory and run["path"] == "SYS" else None
        ranges.append(bandwidth_calibration.expected(link, run["link_layer"], run["mtu"], run["gpu_link"] if gpu_memory else None,
                                                     run["nic_link"], path))
    low = min(r["low_gbps"] for r in ranges)
    high = min(r["high_gbps"] for r in ranges)
    return low + (high - low) * (0.05 + 0.95 * bandwidth_fraction(server_run["node"], client_run["node"]))


def result_rows(run, plateau_gbps):
    """(bytes, iterations, peak, average, Mpps) rows; small messages are limited by the message rate."""
    rows = []
    max_mpps = 9.5 * min(run["qps"], 4)
    for size in run["sizes"]:
        average = min(plateau_gbps, size * 8 * max_mpps * 1e6 / 1e9)
        if size >= 65536:
            average = plateau_gbps
        mpps = average * 1e9 / 8 / size / 1e6
        if run["duration"] and len(run["sizes"]) == 1:
            iterations = int(mpps * 1e6 * run["duration"])
            peak = 0.0
        else:
            iterations = run["iterations"]
            peak = average * 1.004
        rows.append((size, iterations, peak, average, mpps))
    return rows


def _gid(ip, link_type):
    if link_type == "IB":
        return "fe:80:00:00:00:00:00:00:5c:25:73:03:00:32:0a:10"
    parts = [int(p) for p in (ip or "192.168.0.1").split(".")]
    return "00:00:00:00:00:00:00:00:00:00:255:255:%d:%d:%02d:%02d" % tuple(parts)


def cuda_lines(run):
    lines = ["initializing CUDA", "Listing all CUDA devices in system:", "CUDA device 0: PCIe address is %s" % run["gpu_pci"], "",
             "Picking device No. 0", "[pid = 1, dev = 0] device name = [%s]" % run["gpu_name"], "creating CUDA Ctx",
             "making it the current CUDA Ctx"]
    if run["dmabuf"]:
        lines += ["CUDA device integrated: 0", "using DMA-BUF for GPU buffer address at 0x7f5c20000000 aligned at 0x7f5c20000000 with aligned size 2097152",
                  "allocated GPU buffer of a 2097152 address at 0x7f5c20000000 for type CUDA_MEM_DEVICE"]
        lines += ["Calling ibv_reg_dmabuf_mr(offset=0, size=2097152, addr=0x7f5c20000000, fd=%d) for QP #%d" % (40 + q, q) for q in range(run["qps"])]
    else:
        lines += ["cuMemAlloc() of a 2097152 bytes GPU buffer", "allocated GPU buffer address at 00007f5c20000000 pointer=0x7f5c20000000"]
    return "\n".join(lines) + "\n"


def _header(run, role):
    lines = []
    if run["use_cuda"]:
        lines.append("Perftest doesn't supports CUDA tests with inline messages: inline size set to 0")
    lines += [RULE, "                    RDMA_Write BW Test",
              " Dual-port       : OFF          Device         : %s" % run["device"],
              " Number of qps   : %-13d Transport type : IB" % run["qps"],
              " Connection type : RC           Using SRQ      : OFF",
              " PCIe relax order: ON"]
    if role == "client":
        lines += [" ibv_wr* API     : ON", " TX depth        : 128"]
    lines += [" CQ Moderation   : %d" % min(100, 128), " Mtu             : %d[B]" % run["mtu"], " Link type       : %s" % run["link_type"]]
    if run["link_type"] == "Ethernet":
        lines.append(" GID index       : %d" % run["gid_index"])
    lines += [" Max inline data : 0[B]", " rdma_cm QPs     : %s" % ("ON" if run["rdma_cm"] else "OFF"),
              " Data ex. method : %s" % ("rdma_cm" if run["rdma_cm"] else "Ethernet"), RULE]
    return lines


def _addresses(run, local_ip, remote_ip):
    lines = []
    for side, ip in (("local", local_ip), ("remote", remote_ip)):
        for q in range(run["qps"]):
            lines.append(" %s address: LID 0000 QPN 0x%04x PSN 0x%06x" % (side, 0x120 + q, (0x3c5d65 + q * 7919) & 0xFFFFFF))
            lines.append(" GID: %s" % _gid(ip, run["link_type"]))
    return lines + [RULE]


def _table(rows):
    lines = [" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]"]
    for size, iterations, peak, average, mpps in rows:
        lines.append(" %-10d %-10d       %-.2f              %-.2f              %.6f" % (size, iterations, peak, average, mpps))
    return lines + [RULE]


def server_waiting_log(run):
    text = " WARNING: BW peak won't be measured in this run.\n" if run["duration"] else ""
    if run["use_cuda"]:
        text += cuda_lines(run)
    if run["rdma_cm"]:
        banner = ["* Waiting for client rdma_cm QP to connect *", "* Please run the same command with the IB/RoCE interface IP *"]
    else:
        banner = ["* Waiting for client to connect... *"]
    return text + "\n".join(["", "************************************"] + banner + ["************************************"]) + "\n"


def server_log(run, client_run, rows):
    lines = _header(run, "server") + _addresses(run, run.get("own_ip"), client_run.get("own_ip")) + _table(rows)
    if run["use_cuda"]:
        lines += ["deallocating GPU buffer 00007f5c20000000", "destroying current CUDA Ctx"]
    return server_waiting_log(run) + "\n".join(lines) + "\n"


def client_log(run, server_run, rows):
    text = ""
    if run["duration"]:
        text += " WARNING: BW peak won't be measured in this run.\n"
    if run["use_cuda"]:
        text += cuda_lines(run)
    lines = _header(run, "client") + _addresses(run, run.get("own_ip"), run["server_ip"]) + _table(rows)
    if run["use_cuda"]:
        lines += ["deallocating GPU buffer 00007f5c20000000", "destroying current CUDA Ctx"]
    return text + "\n".join(lines) + "\n"


def link_down_log(run):
    # perftest's rdma_cm client retries address resolution NUM_OF_RETRIES (10) times, then prints "Received %d times
    # ADDR_ERROR" (linux-rdma/perftest, src/perftest_communication.c, rdma_client_connect); without rdma_cm the TCP
    # exchange fails with "Couldn't connect to %s:%d" (same file, ethernet_client_connect).
    text = cuda_lines(run) if run["use_cuda"] else ""
    if run["rdma_cm"]:
        return text + "Received 10 times ADDR_ERROR\n Unable to perform rdma_client function\n Unable to init the socket connection\n"
    return text + "Couldn't connect to %s:%s\n Unable to init the socket connection\n" % (run["server_ip"], run["port"])


def wrong_gid_log(run, server_run):
    text = cuda_lines(run) if run["use_cuda"] else ""
    lines = _header(run, "client") + _addresses(run, run.get("own_ip"), run["server_ip"])
    lines += ["Failed to modify QP %d to RTR" % 0x120, " Unable to Connect the HCA's through the link"]
    return text + "\n".join(lines) + "\n"


def no_gpu_log(run):
    return ("initializing CUDA\nThere are no available device(s) that support CUDA\nCouldn't init GPU context\n"
            " Couldn't create IB resources\n")


def device_missing_log(run):
    return "IB device %s not found\n Unable to find the Infiniband/RoCE device\n" % run["device"]
