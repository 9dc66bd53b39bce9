"""Hardware facts pods: what kubelet and the collector would do for gpudirect.openshift.gather_node_hardware.

A pod labelled app.kubernetes.io/component=gpudirect-facts goes Pending -> Running -> Succeeded after short
delays (sim.config `facts_pod_step_seconds`, default 0.05). Its log is the JSON the real collector prints on
that node: a sysfs/procfs tree is built in a temporary directory from the node's hardware profile (GPUs,
NICs with their ports, netdevs, RDMA devices, NUMA nodes, VFs the SR-IOV operator created) and the
collection's collector runs over it, so the simulator's facts come from the same code path as a real node.
At 1000 nodes the tree goes to tmpfs when there is one, the output is kept per node state (a second pod on an
unchanged node prints the same line), and a node's SriovNetworkNodeState is read by name, not found in a list of
every node's state per pod.

Modelled around it:
- PCIe topology: the profile has none, so devices whose bus numbers share the high nibble (0x18 and 0x1a)
  sit behind one PCIe switch of one host bridge (PIX); other devices get their own host bridge (NODE or SYS
  by NUMA node). The shipped labs pair each GPU with the NIC next to it this way.
- Kernel modules: the inbox mlx5/RDMA modules are loaded; `nvidia` (open kernel module, so DMA-BUF) once the
  GPU Operator labelled the node with a driver version; `nvidia_peermem` when the ClusterPolicy enables
  driver.rdma; `irdma` when the node has an Intel RDMA NIC and no MachineConfig blacklisting it is rolled out.
- A pod bound to a node that does not exist stays Pending with PodScheduled=False (Unschedulable) and a
  FailedScheduling event.
- operator_faults `facts_pod_failure: {node: message}` fails the pod on that node (exit code 1, the message as
  log); `facts_pod_log: {node: text}` replaces the log (unparsable output).
"""

import json
import os
import shutil
import tempfile

from ansible_collections.gpudirect.openshift.plugins.module_utils.hardware import collector
from ansible_collections.gpudirect.openshift.tests.unit.fixtures import synthetic_sysfs as synth

from ._base import log, now, profile_node, rand_suffix

COMPONENT_LABEL = "app.kubernetes.io/component"
COMPONENT_VALUE = "gpudirect-facts"
DEFAULT_STEP_SECONDS = 0.05
INBOX_MODULES = ("mlx5_core", "mlx5_ib", "ib_core", "ib_uverbs", "rdma_cm", "rdma_ucm")
DRIVER_LABEL = "nvidia.com/cuda.driver-version.full"
MCO_GROUP = "machineconfiguration.openshift.io"
RATE_NAMES = {100: "4X EDR", 200: "4X HDR", 400: "4X NDR", 800: "4X XDR"}
PORT_STATE_CODES = {"DOWN": 1, "INIT": 2, "ARMED": 3, "ACTIVE": 4, "POLLING": 5}
SCRATCH = "/dev/shm"


def _hex(value):
    return "0x" + value.lower()


def _class(pci_class):
    return "0x%s00" % pci_class.lower()


class _Topology:
    """Synthetic PCIe chains: devices sharing bus >> 4 hang off one switch under one host bridge."""

    def __init__(self):
        self.blocks = {}

    def chain(self, address):
        domain, bus, _rest = address.split(":", 2)
        block = int(bus, 16) & 0xF0
        slots = self.blocks.setdefault((domain, block), [])
        slots.append(address)
        prefix = "%s:%02x" % (domain, block)
        # Bridge functions use .7 so they never collide with the profile's endpoints (.0/.1).
        return ["pci%s" % prefix, "%s:01.7" % prefix, "%s:02.7" % prefix, "%s:%02x.7" % (prefix, 0x10 + len(slots)), address]


def relation(gpu_address, nic_address, gpu_numa, nic_numa):
    """nvidia-smi's name for the path between a GPU and a NIC in the trees _Topology builds: one switch (PIX) when
    their buses share the high nibble, else through the CPU: NODE on one NUMA node, SYS across nodes."""
    gpu_domain, gpu_bus = gpu_address.split(":")[:2]
    nic_domain, nic_bus = nic_address.split(":")[:2]
    if gpu_domain == nic_domain and int(gpu_bus, 16) & 0xF0 == int(nic_bus, 16) & 0xF0:
        return "PIX"
    return "NODE" if gpu_numa == nic_numa else "SYS"


def _rate(speed):
    return "%d Gb/sec (%s)" % (speed, RATE_NAMES.get(speed, "4X"))


def _ipoib_address(guid):
    """20-byte IPoIB hardware address ending with the port GUID."""
    raw = guid.replace(":", "")
    return "00:00:10:87:fe:80:00:00:00:00:00:00:" + ":".join(raw[i:i + 2] for i in range(0, 16, 2))


def build_node_tree(base, pnode, vfs_by_pf=None, modules=(), kernel=None, nvidia_version=None):
    """sysfs + procfs of one profile node under base; returns (sys_root, proc_root)."""
    builder = synth.SysfsBuilder(base)
    topo = _Topology()
    for gpu in pnode.gpus:
        builder.add_pci(topo.chain(gpu.pci_address), _hex(gpu.vendor_id), _hex(gpu.device_id), _class(gpu.pci_class),
                        numa_node=gpu.numa_node, driver="nvidia" if nvidia_version else None,
                        link=("%.1f GT/s PCIe" % gpu.pcie_gts, gpu.pcie_width))
    for dev in pnode.pci_devices:
        builder.add_pci(topo.chain(dev.pci_address), _hex(dev.vendor_id), _hex(dev.device_id), _class(dev.pci_class))
    for nic in pnode.nics:
        vfs = (vfs_by_pf or {}).get(nic.pci_address) or []
        chain = topo.chain(nic.pci_address)
        builder.add_pci(chain, _hex(nic.vendor_id), _hex(nic.device_id), _class(nic.pci_class), numa_node=nic.numa_node,
                        driver=nic.driver, link=("%.1f GT/s PCIe" % nic.pcie_gts, nic.pcie_width),
                        sriov_totalvfs=nic.total_vfs if nic.total_vfs else None, sriov_numvfs=len(vfs))
        for index, port in enumerate(nic.ports):
            _add_port(builder, nic.pci_address, port, index, nic)
        for vf_index, vf in enumerate(vfs):
            vf_chain = chain[:-1] + [vf["pciAddress"]]
            vf_device = vf.get("deviceID") or "101e"
            builder.add_pci(vf_chain, _hex(nic.vendor_id), _hex(vf_device), _class(nic.pci_class), numa_node=nic.numa_node,
                            driver=vf.get("driver") or nic.driver)
            builder.add_virtfn(nic.pci_address, vf["pciAddress"], vf_index)
            if vf.get("name") and vf.get("driver") != "vfio-pci":
                port = nic.ports[0]
                infiniband = port.is_infiniband
                vf_guid = vf.get("guid") or port.guid
                builder.add_netdev(vf["pciAddress"], vf["name"], mtu=vf.get("mtu") or port.mtu,
                                   mac=_ipoib_address(vf_guid) if infiniband else vf.get("mac", "02:00:00:00:00:00"),
                                   net_type=32 if infiniband else 1)
                gid = synth.guid_gid(vf_guid) if infiniband else "fe80:0000:0000:0000:0000:0000:0000:0000"
                builder.add_rdma(vf["pciAddress"], "%sv%d" % (port.rdma_device, vf_index), vf_guid or "0000:0000:0000:0000",
                                 nic.firmware, "MT4126", [synth.ib_port(
                                     state="4: ACTIVE", rate=_rate(port.speed_gbps), link_layer=port.link_layer,
                                     gids=[(gid, "IB/RoCE v1" if infiniband else "RoCE v2", "" if infiniband else vf["name"])])])
    for module in modules:
        builder.add_module(module)
    version_text = None
    if nvidia_version:
        version_text = ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  %s  Release Build  "
                        "(dvs-builder@U16-I3-B03-4-3)  Tue Jan 1 00:00:00 UTC 2026\nGCC version:  gcc version 11.5.0" % nvidia_version)
    proc = synth.ProcBuilder(base, modules=modules, osrelease=kernel, nvidia_version=version_text)
    return builder.root, proc.root


def _add_port(builder, address, port, index, nic):
    infiniband = port.is_infiniband
    guid = port.guid or _guid_from_mac(port.mac)
    builder.add_netdev(address, port.netdev, mtu=port.mtu, operstate="up" if port.state == "ACTIVE" else "down",
                       mac=_ipoib_address(port.guid) if infiniband else port.mac, dev_port=index,
                       net_type=32 if infiniband else 1, speed=port.speed_gbps * 1000 if port.state == "ACTIVE" else None)
    if infiniband:
        gids = [(synth.guid_gid(port.guid), "IB/RoCE v1", "")]
    else:
        gids = [(synth.guid_gid(guid), "IB/RoCE v1", port.netdev), (synth.guid_gid(guid), "RoCE v2", port.netdev)]
    code = PORT_STATE_CODES.get(port.state, 1)
    builder.add_rdma(address, port.rdma_device, guid, nic.firmware or "0.0.0", "MT4129" if nic.is_mellanox else "irdma",
                     [synth.ib_port(port=port.port, state="%d: %s" % (code, port.state),
                                    phys_state="5: LinkUp" if port.state == "ACTIVE" else "3: Disabled",
                                    rate=_rate(port.speed_gbps), link_layer=port.link_layer, gids=gids)])


def _guid_from_mac(mac):
    """EUI-64 interface ID of a MAC, as mlx5 derives the RoCE GUID."""
    parts = [int(p, 16) for p in mac.split(":")]
    parts[0] ^= 0x02
    raw = parts[:3] + [0xFF, 0xFE] + parts[3:]
    return ":".join("%02x%02x" % (raw[i], raw[i + 1]) for i in range(0, 8, 2))


class FactsPodController:
    """Runs the facts collector for pods labelled as gpudirect-facts pods."""

    def __init__(self, rt):
        self.rt = rt
        self.sim = rt.sim
        self.outputs = {}

    def step(self):
        conf = getattr(self.sim, "config", None) or {}
        return float(conf.get("facts_pod_step_seconds", DEFAULT_STEP_SECONDS))

    def on_event(self, etype, rtype, obj):
        if etype != "ADDED" or (rtype.group, rtype.plural) != ("", "pods"):
            return
        if ((obj.get("metadata") or {}).get("labels") or {}).get(COMPONENT_LABEL) != COMPONENT_VALUE:
            return
        meta = obj["metadata"]
        key = (meta["namespace"], meta["name"], meta.get("uid"))
        self.rt.later(self.step(), lambda: self._schedule(key))

    # ------------------------------------------------------------------ lifecycle
    def _pod(self, key):
        pod = self.rt.get("", "pods", key[0], key[1])
        if pod is None or pod["metadata"].get("uid") != key[2] or pod["metadata"].get("deletionTimestamp"):
            return None
        return pod

    def _schedule(self, key):
        pod = self._pod(key)
        if pod is None:
            return
        node = (pod.get("spec") or {}).get("nodeName")
        if not node or self.rt.get("", "nodes", None, node) is None:
            message = "0/%d nodes are available: node %s not found" % (len(self.rt.profile.nodes), node or "(none)")
            self.rt.set_status("", "pods", key[0], key[1], {
                "phase": "Pending",
                "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message,
                                "lastTransitionTime": now()}]})
            self._event(pod, "FailedScheduling", message)
            return
        self.rt.set_status("", "pods", key[0], key[1], self._status(pod, "Running", {"running": {"startedAt": now()}}))
        self.rt.later(self.step(), lambda: self._finish(key))

    def _finish(self, key):
        pod = self._pod(key)
        if pod is None:
            return
        node = pod["spec"]["nodeName"]
        faults = self.rt.operator_faults()
        failure = (faults.get("facts_pod_failure") or {}).get(node)
        logs = self.sim.pod_logs
        if failure is not None:
            text = "Traceback (most recent call last):\n  File \"/opt/gpudirect/gpudirect-facts.py\"\n%s\n" % failure
            logs[(key[0], key[1])] = text
            state = {"terminated": {"exitCode": 1, "reason": "Error", "message": text, "startedAt": now(), "finishedAt": now()}}
            self.rt.set_status("", "pods", key[0], key[1], self._status(pod, "Failed", state))
            return
        override = (faults.get("facts_pod_log") or {}).get(node)
        logs[(key[0], key[1])] = override if override is not None else self.collect(node, pod)
        state = {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": now(), "finishedAt": now()}}
        self.rt.set_status("", "pods", key[0], key[1], self._status(pod, "Succeeded", state))

    def _status(self, pod, phase, state):
        ready = phase == "Running"
        return {
            "phase": phase,
            "conditions": [{"type": "PodScheduled", "status": "True", "lastTransitionTime": now()},
                           {"type": "Initialized", "status": "True", "lastTransitionTime": now()},
                           {"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": now()}],
            "containerStatuses": [{"name": c.get("name"), "image": c.get("image"), "imageID": "", "ready": ready,
                                   "restartCount": 0, "started": ready, "state": state}
                                  for c in (pod.get("spec") or {}).get("containers") or []],
            "hostIP": "10.0.0.1", "startTime": now(), "qosClass": "Burstable",
        }

    def _event(self, pod, reason, message):
        meta = pod["metadata"]
        try:
            self.rt.create("", "events", {
                "metadata": {"name": "%s.%s" % (meta["name"], rand_suffix(10, self.rt.rng)), "namespace": meta["namespace"]},
                "involvedObject": {"kind": "Pod", "namespace": meta["namespace"], "name": meta["name"], "uid": meta.get("uid"),
                                   "apiVersion": "v1"},
                "reason": reason, "message": message, "type": "Warning", "count": 1,
                "source": {"component": "default-scheduler"}, "firstTimestamp": now(), "lastTimestamp": now()})
        except Exception:  # noqa: BLE001  (an event is informative only)
            log.exception("facts pod event")

    # ------------------------------------------------------------------ facts
    def node_state(self, node_name):
        """(vfs by PF address, loaded modules, nvidia driver version) from what the cluster did to the node."""
        node = self.rt.get("", "nodes", None, node_name) or {}
        labels = (node.get("metadata") or {}).get("labels") or {}
        annotations = (node.get("metadata") or {}).get("annotations") or {}
        pnode = profile_node(self.rt, node_name)
        modules = list(INBOX_MODULES) if any(n.is_mellanox for n in pnode.nics) else []
        driver = labels.get(DRIVER_LABEL)
        if driver:
            modules += ["nvidia", "nvidia_uvm"]
            if self._peermem_enabled():
                modules.append("nvidia_peermem")
        if any(n.vendor_id == "8086" and n.ports for n in pnode.nics) and not self._irdma_blacklisted(annotations):
            modules.append("irdma")
        vfs = {}
        # The node's state by name in each namespace the SR-IOV operator runs in (where its SriovOperatorConfig is),
        # not a scan of every node's state for every pod (O(n^2) over a facts run).
        namespaces = sorted(set(c["metadata"]["namespace"] for c in self.rt.list("sriovnetwork.openshift.io", "sriovoperatorconfigs")))
        states = [self.rt.get("sriovnetwork.openshift.io", "sriovnetworknodestates", ns, node_name) for ns in namespaces]
        for state in [s for s in states if s is not None]:
            for iface in (state.get("status") or {}).get("interfaces") or []:
                if iface.get("Vfs"):
                    vfs[iface.get("pciAddress")] = iface["Vfs"]
        return vfs, modules, driver

    def _peermem_enabled(self):
        for policy in self.rt.list("nvidia.com", "clusterpolicies"):
            rdma = ((policy.get("spec") or {}).get("driver") or {}).get("rdma") or {}
            if rdma.get("enabled") and not rdma.get("useHostMofed"):
                return True
        return False

    def _irdma_blacklisted(self, annotations):
        current = annotations.get(MCO_GROUP + "/currentConfig")
        if not current:
            return False
        blacklisting = set(mc["metadata"]["name"] for mc in self.rt.list(MCO_GROUP, "machineconfigs")
                           if any("module_blacklist=irdma" in arg for arg in (mc.get("spec") or {}).get("kernelArguments") or []))
        for pool in self.rt.list(MCO_GROUP, "machineconfigpools"):
            configuration = (pool.get("status") or {}).get("configuration") or {}
            if configuration.get("name") == current:
                return any(src.get("name") in blacklisting for src in configuration.get("source") or [])
        return False

    def collect(self, node_name, pod=None):
        """The collector's JSON line for a profile node, paths as the pod sees them (/host/sys, /host/proc).

        The output depends only on the node's profile and what the cluster did to it (VFs, modules, driver), so it is
        kept per node for that state: a second pod on an unchanged node prints the same line without a new tree."""
        pnode = profile_node(self.rt, node_name)
        vfs, modules, driver = self.node_state(node_name)
        key = (node_name, json.dumps(vfs, sort_keys=True), tuple(modules), driver)
        known = self.outputs.get(node_name)
        if known is not None and known[0] == key:
            return known[1]
        # The tree is ~600 small files and ~100 symlinks: on tmpfs when the host has one, where building it costs a
        # tenth of a disk-backed /tmp, since this runs on the API server's event loop.
        base = tempfile.mkdtemp(prefix="sim-facts-", dir=SCRATCH if os.path.isdir(SCRATCH) and os.access(SCRATCH, os.W_OK) else None)
        try:
            sys_root, proc_root = build_node_tree(base, pnode, vfs, modules, kernel=pnode.kernel, nvidia_version=driver)
            facts = collector.collect(sys_root, proc_root)
            text = json.dumps(facts, sort_keys=True)
            text = text.replace(sys_root, "/host/sys").replace(proc_root, "/host/proc")
        finally:
            shutil.rmtree(base, ignore_errors=True)
        self.outputs[node_name] = (key, text + "\n")
        return text + "\n"


def facts_for(sim, node_name):
    """Facts (dict) the simulator's collector pod would print for a node (tests compare with these)."""
    controller = next(c for c in sim.controllers.operators if isinstance(c, FactsPodController))
    return json.loads(controller.collect(node_name))


def profile_facts(nodes):
    """(nic_ports, gpu_nic_affinity) of profile nodes as the hardware_facts role hands them to the playbooks: the
    collector run over each node's tree, flattened by module_utils/reports/hardware_facts.py (tests use these as variables)."""
    from ansible_collections.gpudirect.openshift.plugins.module_utils.reports import hardware_facts

    ports, affinity = [], []
    for pnode in nodes:
        base = tempfile.mkdtemp(prefix="sim-facts-")
        try:
            sys_root, proc_root = build_node_tree(base, pnode, modules=INBOX_MODULES)
            facts = collector.collect(sys_root, proc_root)
        finally:
            shutil.rmtree(base, ignore_errors=True)
        ports += hardware_facts.nic_ports(pnode.name, facts)
        affinity += hardware_facts.gpu_nic_affinity(pnode.name, facts)
    return ports, affinity


__all__ = ["FactsPodController", "build_node_tree", "facts_for", "profile_facts"]
