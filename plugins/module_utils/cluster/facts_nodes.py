# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Which nodes a facts run reads and what their Node objects add: the selection (names, a label selector, NFD's
vendor labels or the workers; control-plane nodes only when allowed), the GPUs the device plugin offers and the GPU
memory that GPU feature discovery labels, and whether a cached document's fingerprint still describes the node. Pure
functions on Node objects; cluster/node_facts.py runs the pods.
"""


from dataclasses import dataclass
from typing import Dict, List, Optional

from ansible_collections.gpudirect.openshift.plugins.module_utils import vocabulary

GPU_RESOURCE = "nvidia.com/gpu"
NIC_VENDOR_LABEL = "feature.node.kubernetes.io/pci-15b3.present"
WORKER_LABEL = "node-role.kubernetes.io/worker"
# The role labels of OpenShift's control-plane nodes (the installer's master and control-plane roles; the
# machine-config-operator's master pool selects node-role.kubernetes.io/master). Facts pods mount host paths, so they
# go there only when asked (allow_control_plane): a control-plane node runs etcd and the API server.
CONTROL_PLANE_LABELS = ("node-role.kubernetes.io/master", "node-role.kubernetes.io/control-plane")


@dataclass(frozen=True)
class FactsSettings:
    """What one gathering does: where its pods run, which nodes, the cache, the limits (gather_node_hardware's
    options of the same names document each)."""

    namespace: str
    name_prefix: str
    image: Optional[str] = None  # gather_node_hardware gives node_facts.DEFAULT_IMAGE by default
    image_pull_policy: Optional[str] = None
    nodes: Optional[List[str]] = None
    node_selector: Optional[Dict[str, str]] = None
    label_selectors: Optional[List[str]] = None
    allow_control_plane: bool = False
    nvidia_smi: bool = False
    service_account: Optional[str] = None
    tolerations: Optional[List[dict]] = None
    create_namespace: bool = True
    manage_rbac: bool = True
    scc: Optional[str] = None
    timeout: Optional[int] = None
    pending_grace_period: Optional[int] = None
    max_pods_in_flight: Optional[int] = None
    cache: bool = True
    refresh: bool = False
    refresh_not_ready: bool = False
    cache_only: bool = False


def allocatable_gpus(node):
    """GPUs the node's device plugin offers (status.allocatable nvidia.com/gpu); 0 without the plugin."""
    value = (((node.get("status") or {}).get("allocatable")) or {}).get(GPU_RESOURCE)
    try:
        return int(str(value))
    except ValueError:
        return 0


def node_labels(node):
    return (node.get("metadata") or {}).get("labels") or {}


def _matches_selector(labels, selector):
    return all(labels.get(key) == str(value) for key, value in (selector or {}).items())


def is_control_plane(node):
    labels = node_labels(node)
    return any(label in labels for label in CONTROL_PLANE_LABELS)


def without_control_plane(nodes, selected, how, allowed):
    """(kept, refused, left out): the selected names without the control-plane nodes, unless ``allowed``. Nodes named
    by the user are refused (a failure naming the option); those a selector or the automatic choice matched (a
    compact cluster's nodes are control-plane and worker at once) are left out and listed."""
    if allowed:
        return list(selected), [], []
    control_plane = {(n.get("metadata") or {}).get("name") for n in nodes if is_control_plane(n)}
    out = [n for n in selected if n in control_plane]
    kept = [n for n in selected if n not in control_plane]
    return (kept, out, []) if how == "names" else (kept, [], out)


CONTROL_PLANE_REFUSAL = ("a control-plane node: facts pods (host paths) run there only with "
                         "hardware_facts_allow_control_plane: true (module option allow_control_plane)")


def select_nodes(nodes, names=None, node_selector=None):
    """(selected names, unknown names, how they were chosen).

    names: exactly these nodes; node_selector: label map all must match; neither: nodes with NFD's
    NVIDIA/Mellanox PCI vendor labels, else (NFD not run yet) every worker."""
    by_name = {(n.get("metadata") or {}).get("name"): n for n in nodes}
    if names:
        wanted = []
        for name in names:
            if name not in wanted:
                wanted.append(name)
        return [n for n in wanted if n in by_name], [n for n in wanted if n not in by_name], "names"
    if node_selector:
        chosen = sorted(name for name, node in by_name.items() if _matches_selector(node_labels(node), node_selector))
        return chosen, [], "node_selector"
    vendor = sorted(name for name, node in by_name.items()
                    if node_labels(node).get(NIC_VENDOR_LABEL) == "true"
                    or any(node_labels(node).get(label) == "true" for label in vocabulary.NFD_GPU_NODE_LABELS))
    if vendor:
        return vendor, [], "nfd_vendor_labels"
    return sorted(name for name, node in by_name.items() if WORKER_LABEL in node_labels(node)), [], "workers"


GFD_MEMORY_LABEL = "nvidia.com/gpu.memory"


def fill_from_node_labels(facts, labels):
    """GPU memory the collector could not read (no nvidia-smi) from GPU feature discovery's node label, in MiB.

    The label describes one GPU model per node, so it is used only when every GPU of the node has the same known
    PCI device ID; memory read by nvidia-smi is never replaced."""
    gpus = (facts or {}).get("gpus") or []
    try:
        memory = int(str((labels or {}).get(GFD_MEMORY_LABEL)))
    except ValueError:
        return
    device_ids = {gpu.get("pci_device_id") for gpu in gpus}
    if memory <= 0 or len(device_ids) != 1 or None in device_ids:
        return
    for gpu in gpus:
        if gpu.get("memory_total_mib") is None:
            gpu["memory_total_mib"] = memory
            gpu["memory_source"] = "node label %s" % GFD_MEMORY_LABEL


def fingerprint_matches(cached, current):
    """True when a cache entry made at `cached` still describes a node at `current`. An entry made before NFD labelled
    the node ('none') stays good once NFD describes the same boot: NFD only started to report the hardware."""
    if not cached or not current or "/" not in cached:
        return False
    cached_boot, cached_pci = cached.split("/", 1)
    boot, pci = current.split("/", 1)
    return cached_boot == boot and cached_pci in (pci, "none")
