# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Cluster information for GPUDirect RDMA: versions, node hardware labels and resources.

The number of API requests is fixed whatever the number of nodes: one list per kind, never one
request per node. ``summarize_*`` functions are pure and unit tested on fixtures.
"""


from ansible_collections.gpudirect.openshift.plugins.module_utils import vocabulary
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.api_errors import api_status

CLUSTER_VERSION = ("config.openshift.io/v1", "ClusterVersion")
NODE = ("v1", "Node")
SRIOV_NODE_STATE = ("sriovnetwork.openshift.io/v1", "SriovNetworkNodeState")

GPU_RESOURCE = "nvidia.com/gpu"
NIC_VENDOR_LABEL = "feature.node.kubernetes.io/pci-15b3.present"
ROLE_PREFIX = "node-role.kubernetes.io/"

# Node labels that matter for GPUDirect RDMA (NFD PCI vendor labels, GPU and network operator
# labels, RDMA/SR-IOV capability and kernel labels).
LABEL_PREFIXES = (
    "feature.node.kubernetes.io/pci-15b3",
    "feature.node.kubernetes.io/pci-10de",
    "feature.node.kubernetes.io/pci-0302_10de",
    "feature.node.kubernetes.io/pci-0300_10de",
    "feature.node.kubernetes.io/rdma",
    "feature.node.kubernetes.io/network-sriov",
    "feature.node.kubernetes.io/kernel-version",
    "feature.node.kubernetes.io/system-os_release",
    "nvidia.com/",
    "network.nvidia.com/",
)
RESOURCE_PREFIXES = ("rdma/", "nvidia.com/", "openshift.io/")


def _as_int(quantity):
    """Extended resources are plain integers; anything else (e.g. "1k") counts as 0 here."""
    try:
        return int(str(quantity))
    except (TypeError, ValueError):
        return 0


def node_roles(labels):
    return sorted(k[len(ROLE_PREFIX):] for k in labels if k.startswith(ROLE_PREFIX) and k[len(ROLE_PREFIX):])


def node_ready(node):
    for cond in (node.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            return cond.get("status") == "True"
    return False


def labels_of_interest(labels, extra_prefixes=()):
    prefixes = tuple(LABEL_PREFIXES) + tuple(extra_prefixes or ())
    return {k: v for k, v in sorted(labels.items()) if k.startswith(prefixes)}


def rdma_resources(node):
    """{resource: {capacity, allocatable}} for rdma/*, openshift.io/* and nvidia.com/* other than GPUs."""
    status = node.get("status") or {}
    capacity = status.get("capacity") or {}
    allocatable = status.get("allocatable") or {}
    names = sorted(set(capacity) | set(allocatable))
    return {n: {"capacity": _as_int(capacity.get(n)), "allocatable": _as_int(allocatable.get(n))}
            for n in names if n.startswith(RESOURCE_PREFIXES) and n != GPU_RESOURCE}


def sriov_state_summary(state):
    status = state.get("status") or {}
    interfaces = []
    for iface in status.get("interfaces") or []:
        interfaces.append({k: iface.get(k) for k in (
            "name", "pciAddress", "vendor", "deviceID", "driver", "linkType", "linkSpeed", "mtu",
            "numVfs", "totalvfs", "eSwitchMode") if k in iface})
    return {"sync_status": status.get("syncStatus"), "last_sync_error": status.get("lastSyncError") or None,
            "interfaces": interfaces}


def summarize_node(node, sriov_state=None, extra_label_prefixes=()):
    meta = node.get("metadata") or {}
    labels = meta.get("labels") or {}
    status = node.get("status") or {}
    gpus = {"capacity": _as_int((status.get("capacity") or {}).get(GPU_RESOURCE)),
            "allocatable": _as_int((status.get("allocatable") or {}).get(GPU_RESOURCE))}
    rdma = rdma_resources(node)
    has_nic = labels.get(NIC_VENDOR_LABEL) == "true" or any(n.startswith("rdma/") for n in rdma) or bool(
        sriov_state and any((i.get("vendor") or "").lower() == "15b3"
                            for i in (sriov_state.get("status") or {}).get("interfaces") or []))
    # MIG slices under the mixed strategy are resources of their own (nvidia.com/mig-<profile>); a node whose GPUs are
    # all sliced advertises nvidia.com/gpu 0 (NVIDIA/gpu-operator#637) and is a GPU node all the same.
    mig = {name: _as_int(value) for name, value in sorted((status.get("allocatable") or {}).items())
           if name.startswith(vocabulary.MIG_RESOURCE_PREFIX)}
    if mig:
        gpus["mig_allocatable"] = mig
    has_gpu = (any(labels.get(label) == "true"
                   for label in vocabulary.NFD_GPU_NODE_LABELS + vocabulary.GPU_OPERATOR_NODE_LABELS)
               or gpus["capacity"] > 0 or any(mig.values()))
    info = {
        "name": meta.get("name"),
        "roles": node_roles(labels),
        "ready": node_ready(node),
        "unschedulable": bool((node.get("spec") or {}).get("unschedulable")),
        "labels": labels_of_interest(labels, extra_label_prefixes),
        "gpus": gpus,
        "rdma_resources": rdma,
        "has_gpu": has_gpu,
        "has_nvidia_nic": has_nic,
        "kernel_version": (status.get("nodeInfo") or {}).get("kernelVersion"),
        "os_image": (status.get("nodeInfo") or {}).get("osImage"),
        "sriov": sriov_state_summary(sriov_state) if sriov_state is not None else None,
    }
    return info


def summarize_cluster(nodes, sample=None):
    """Counts of ``nodes`` (summaries) and their names by kind; with ``sample``, at most that many names per list."""
    def names(selected):
        found = [n["name"] for n in selected]
        return found if sample is None else found[:sample]
    # Every node counted, as a sample of names may miss them (preflight checks that a custom pool's role has nodes).
    role_counts = {}
    for node in nodes:
        for role in node["roles"]:
            role_counts[role] = role_counts.get(role, 0) + 1
    summary = {
        "node_count": len(nodes),
        "ready_nodes": sum(1 for n in nodes if n["ready"]),
        "gpu_nodes": names(n for n in nodes if n["has_gpu"]),
        "nic_nodes": names(n for n in nodes if n["has_nvidia_nic"]),
        "gpu_nic_nodes": names(n for n in nodes if n["has_gpu"] and n["has_nvidia_nic"]),
        "role_counts": role_counts,
        "total_gpus": sum(n["gpus"]["capacity"] for n in nodes),
        "allocatable_gpus": sum(n["gpus"]["allocatable"] for n in nodes),
    }
    if sample is not None:
        summary.update({
            "worker_nodes": sum(1 for n in nodes if "worker" in n["roles"]),
            "gpu_node_count": sum(1 for n in nodes if n["has_gpu"]),
            "nic_node_count": sum(1 for n in nodes if n["has_nvidia_nic"]),
            "gpu_nic_node_count": sum(1 for n in nodes if n["has_gpu"] and n["has_nvidia_nic"]),
            "sample_size": sample,
        })
    return summary


def sriov_reports(nodes):
    """The SR-IOV interfaces the nodes report, one entry per distinct set: {node (the first), nodes (how many),
    interfaces}. A thousand nodes of one hardware type give one entry, and every distinct report is still checked."""
    groups = {}
    for node in nodes:
        interfaces = ((node.get("sriov") or {}).get("interfaces")) or []
        if not interfaces:
            continue
        key = repr(interfaces)
        if key in groups:
            groups[key]["nodes"] += 1
        else:
            groups[key] = {"node": node["name"], "nodes": 1, "interfaces": interfaces}
    return list(groups.values())


def openshift_version(cluster_version):
    if not cluster_version:
        return None
    status = cluster_version.get("status") or {}
    desired = status.get("desired") or {}
    history = [h for h in status.get("history") or [] if h.get("state") == "Completed"]
    return {
        "version": desired.get("version") or (history[0].get("version") if history else None),
        "channel": (cluster_version.get("spec") or {}).get("channel"),
        "cluster_id": (cluster_version.get("spec") or {}).get("clusterID"),
    }


def gather(cluster, node_names=None, label_selectors=None, extra_label_prefixes=(), kubernetes_version=True,
           sriov_states=True, sample=None):
    """Everything cluster_info returns. One request per kind (plus discovery), never per node.

    ``kubernetes_version=False`` skips ``/version`` (RV kubernetes is then null) and
    ``sriov_states=False`` the SR-IOV node states, for callers that count their requests.
    """
    result = {"openshift": None, "kubernetes": None, "sriov_node_states_served": False if sriov_states else None}
    try:
        version = cluster.raw_get("/version") if kubernetes_version else None
        if version is not None:
            result["kubernetes"] = {"version": version.get("gitVersion"), "major": version.get("major"),
                                    "minor": version.get("minor"), "platform": version.get("platform")}
    except Exception as exc:  # pylint: disable=broad-except
        if api_status(exc) not in (403, 404):
            raise

    cv_resource = cluster.resource(*CLUSTER_VERSION)
    if cv_resource is not None:
        result["openshift"] = openshift_version(cluster.get(cv_resource, "version"))

    node_resource = cluster.require(*NODE)
    selector = ",".join(label_selectors) if label_selectors else None
    field_selector = "metadata.name=%s" % node_names[0] if node_names and len(node_names) == 1 else None
    nodes, _rv = cluster.list(node_resource, label_selector=selector, field_selector=field_selector)
    if node_names:
        wanted = set(node_names)
        nodes = [n for n in nodes if n["metadata"]["name"] in wanted]

    states = {}
    state_resource = cluster.resource(*SRIOV_NODE_STATE) if sriov_states else None
    if state_resource is not None:
        result["sriov_node_states_served"] = True
        items, _rv = cluster.list(state_resource)
        states = {s["metadata"]["name"]: s for s in items}

    summaries = [summarize_node(n, states.get(n["metadata"]["name"]) if state_resource is not None else None,
                                extra_label_prefixes)
                 for n in sorted(nodes, key=lambda n: n["metadata"]["name"])]
    result["summary"] = summarize_cluster(summaries, sample)
    if sample is None:
        result["nodes"] = summaries
    else:
        # Point-in-time readers of large clusters: counts, a sample of the nodes, and each distinct SR-IOV report.
        result["nodes"] = summaries[:sample]
        result["sriov_reports"] = sriov_reports(summaries)
    return result
