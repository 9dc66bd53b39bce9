# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Gathered node facts (the collector's JSON, one document per node) flattened into what plays and reports read.

Pure functions: NIC ports flattened into the entries `gpudirect_rdma_nic_facts` takes, GPU-NIC relations in the shape
of `gpudirect_rdma_gpu_nic_affinity`, a readiness summary per node and the one-line summary of a facts run.
hardware_report.py writes the reports of the same documents.
"""


from ansible_collections.gpudirect.openshift.plugins.module_utils import vocabulary

# nvidia-smi topo names, nearest first.
RELATIONS = vocabulary.TOPOLOGY_RELATIONS
# ARPHRD types of a netdev: how the link layer is known for a function without an RDMA device.
_NET_TYPE_LAYER = {1: "Ethernet", 32: "InfiniBand"}


def _hex4(value):
    """'0x15b3' -> '15b3'; None stays None."""
    if not isinstance(value, str):
        return None
    text = value.strip().lower()
    return text[2:] if text.startswith("0x") else text


def _netdev_by_name(nic, name):
    for dev in nic.get("netdevs") or []:
        if dev.get("name") == name:
            return dev
    return None


def nic_ports(node, facts):
    """One entry per RDMA port of every NVIDIA/Mellanox function (PF and VF) of one node.

    Keys are those gpudirect_rdma_nic_facts reads (node, pci_address, link_layer, vendor_id, device_id,
    netdev, rdma_device, total_vfs, numa_node, address, type, is_vf) plus port details for people.
    A function without an RDMA device gives one entry per netdev whose type tells the link layer."""
    ports = []
    # Path from every GPU to each function (topology.pairs), and each GPU's PCIe link: the verification names the path
    # and the PCIe links of the pair it measured, and judges against them (bandwidth_calibration.expected).
    paths = {}
    for pair in ((facts or {}).get("topology") or {}).get("pairs") or []:
        paths.setdefault(pair.get("nic_pci_address"), {})[pair.get("gpu_pci_address")] = pair.get("relation")
    gpu_links = {gpu.get("pci_address"): _link(gpu.get("pcie")) for gpu in (facts or {}).get("gpus") or []}
    for nic in (facts or {}).get("nics") or []:
        sriov = nic.get("sriov") or {}
        gts, width = _link(nic.get("pcie"))
        base = {
            "node": node,
            "pci_address": nic.get("pci_address"),
            "vendor_id": _hex4(nic.get("vendor_id")),
            "device_id": _hex4(nic.get("device_id")),
            "model": nic.get("model"),
            "total_vfs": sriov.get("totalvfs"),
            "num_vfs": sriov.get("numvfs"),
            "numa_node": nic.get("numa_node"),
            "is_vf": nic.get("function") == "VF",
            "pf_pci_address": nic.get("pf_pci_address"),
            "firmware": nic.get("fw_ver"),
            "pcie_gts": gts,
            "pcie_width": width,
        }
        if nic.get("rdma_device") and nic.get("function") != "VF" and paths.get(nic.get("pci_address")):
            base["gpu_paths"] = [{"gpu": gpu, "relation": relation, "pcie_gts": gpu_links.get(gpu, (None, None))[0],
                                  "pcie_width": gpu_links.get(gpu, (None, None))[1]}
                                 for gpu, relation in sorted(paths[nic.get("pci_address")].items())]
        rdma_ports = nic.get("ports") or []
        if rdma_ports:
            for port in rdma_ports:
                netdev = _netdev_by_name(nic, port.get("netdev")) if port.get("netdev") else None
                entry = dict(base)
                entry.update({
                    "port": port.get("port"),
                    "link_layer": port.get("link_layer"),
                    "netdev": port.get("netdev"),
                    "rdma_device": nic.get("rdma_device"),
                    "state": port.get("state"),
                    "rate_gbps": port.get("rate_gbps"),
                    "mtu": port.get("mtu"),
                    "address": netdev.get("address") if netdev else None,
                    "type": netdev.get("type") if netdev else None,
                })
                ports.append(entry)
            continue
        for netdev in nic.get("netdevs") or []:
            layer = _NET_TYPE_LAYER.get(netdev.get("type"))
            if layer is None:
                continue
            entry = dict(base)
            entry.update({"port": None, "link_layer": layer, "netdev": netdev.get("name"), "rdma_device": None,
                          "state": None, "rate_gbps": None, "mtu": netdev.get("mtu"), "address": netdev.get("address"),
                          "type": netdev.get("type")})
            ports.append(entry)
    return ports


def _link(pcie):
    """(GT/s, lanes) of the current PCIe link in a collector `pcie` entry, or (None, None)."""
    pcie = pcie or {}
    return pcie.get("current_link_speed_gts"), pcie.get("current_link_width")


def gpu_nic_affinity(node, facts):
    """{node, gpu, nic, relation, ...} for every GPU x RDMA-capable PF pair whose relation is known."""
    facts = facts or {}
    functions = {nic.get("pci_address"): nic for nic in facts.get("nics") or []}
    gpus = {gpu.get("index"): gpu for gpu in facts.get("gpus") or []}
    links = []
    for pair in (facts.get("topology") or {}).get("pairs") or []:
        nic = functions.get(pair.get("nic_pci_address")) or {}
        if pair.get("relation") not in RELATIONS or not nic.get("rdma_device") or nic.get("function") == "VF":
            continue
        gpu = gpus.get(pair.get("gpu_index")) or {}
        netdevs = [dev.get("name") for dev in nic.get("netdevs") or [] if dev.get("name")]
        links.append({
            "node": node,
            "gpu": pair.get("gpu_index"),
            "gpu_pci_address": pair.get("gpu_pci_address"),
            "gpu_uuid": gpu.get("uuid"),
            "nic": pair.get("nic_pci_address"),
            "netdev": netdevs[0] if netdevs else None,
            "rdma_device": nic.get("rdma_device"),
            "relation": pair.get("relation"),
        })
    return links


def nearest_links(links, ports):
    """Of gpu_nic_affinity's links, for each GPU its nearest NIC(s) of each link layer and vendor, ties kept: what NIC
    selection reads (render/nics.py takes, per GPU, the nearest Mellanox PF of the fabric), a seventh of the matrix
    of an 8-GPU, 8-NIC node."""
    kinds = {}
    for port in ports:
        if not port.get("is_vf"):
            kinds.setdefault((port.get("node"), port.get("pci_address")),
                             set()).add((port.get("link_layer"), port.get("vendor_id")))
    rank = {relation: position for position, relation in enumerate(RELATIONS)}
    best = {}
    for link in links:
        for kind in kinds.get((link.get("node"), link.get("nic"))) or [None]:
            key = (link.get("node"), link.get("gpu"), kind)
            best[key] = min(best.get(key, len(RELATIONS)), rank.get(link.get("relation"), len(RELATIONS)))
    return [link for link in links
            if any(rank.get(link.get("relation")) == best[(link.get("node"), link.get("gpu"), kind)]
                   for kind in kinds.get((link.get("node"), link.get("nic"))) or [None])]


def readiness_summary(node, facts):
    """Short per-node verdict: ready, reasons, counts, link layers and peer memory path."""
    facts = facts or {}
    verdict = facts.get("readiness") or {}
    pfs = [nic for nic in facts.get("nics") or [] if nic.get("function") != "VF"]
    layers = sorted({layer for nic in pfs for layer in nic.get("link_layers") or []})
    return {
        "node": node,
        "ready": bool(verdict.get("ready")),
        "reason_codes": list(verdict.get("reason_codes") or []),
        "reasons": list(verdict.get("reasons") or []),
        "warning_codes": list(verdict.get("warning_codes") or []),
        "gpus": len(facts.get("gpus") or []),
        "nic_functions": len(pfs),
        "link_layers": layers,
        "peer_memory_path": (facts.get("peer_memory") or {}).get("path"),
        "kernel": (facts.get("kernel") or {}).get("release"),
    }


def flatten(nodes):
    """nodes: {node: facts} -> (nic_ports, gpu_nic_affinity, readiness), sorted by node."""
    ports, links, readiness = [], [], {}
    for node in sorted(nodes):
        ports.extend(nic_ports(node, nodes[node]))
        links.extend(gpu_nic_affinity(node, nodes[node]))
        readiness[node] = readiness_summary(node, nodes[node])
    return ports, links, readiness


def facts_summary(counts, readiness, pods=None, check_mode=False, listed=20):
    """One line on a facts run: how many nodes were selected, ready, taken from the cache, gathered now or left
    without facts. The nodes that are not ready are named (at most ``listed``); in check mode the nodes a pod would
    gather are named instead, since check mode starts none and their readiness is not known."""
    counts = counts or {}
    readiness = readiness or {}
    selected = counts.get("selected", 0)
    ready = sorted(node for node, verdict in readiness.items() if verdict.get("ready"))
    not_ready = sorted(node for node, verdict in readiness.items() if not verdict.get("ready"))

    def named(nodes):
        more = len(nodes) - listed
        return ", ".join(nodes[:listed]) + (" and %d more" % more if more > 0 else "")

    parts = ["%d node(s)" % selected]
    if check_mode:
        waiting = sorted(pod.get("node") for pod in pods or [] if pod.get("node"))
        text = "%s: %d from the cache (%d ready)" % (parts[0], counts.get("from_cache", 0), len(ready))
        if waiting:
            text += "; check mode starts no pod, so the facts of %d are not read: %s" % (len(waiting), named(waiting))
        if counts.get("failed"):
            text += "; %d without facts" % counts["failed"]
        return text + "."
    text = "%s: %d ready, %d from the cache, %d gathered now, %d without facts." % (
        parts[0], len(ready), counts.get("from_cache", 0), counts.get("gathered", 0), counts.get("failed", 0))
    if not_ready:
        text += " Not ready: %s." % named(not_ready)
    return text
