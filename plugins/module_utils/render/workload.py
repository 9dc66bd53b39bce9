# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A pod template for a job that uses the configuration's rails: one GPU per rail, every rail's resource and network,
and the NCCL variables that make NCCL use them. Pure: rendered from the model, never applied by the roles."""


from ansible_collections.gpudirect.openshift.plugins.module_utils import names
from ansible_collections.gpudirect.openshift.plugins.module_utils.verify.nccl_tests_output import nccl_environment
from ansible_collections.gpudirect.openshift.plugins.module_utils.render import rdma

FILE = "workload-rail-job-pod.yaml"
IMAGE_PLACEHOLDER = "registry.example/your-nccl-workload:tag"


def rails_from_plan(summary, nic_ports=None, affinity=None, namespace=None):
    """{"namespace", "rails", "rail_rates_gbps", "hcas", "fabric"} of the plan's rails, in rail order (GPU order with
    auto selection): each rail's network (in ``namespace``, default the first network's) and resource, the highest link
    rate the facts show for its NICs, and the RDMA device of its NIC on the first node (none for SR-IOV VFs)."""
    summary = summary or {}
    groups = (summary.get("nic_selection") or {}).get("groups") or []
    networks = summary.get("networks") or []
    namespace = namespace or (networks[0]["namespace"] if networks else "default")
    # The networks its pods may attach: of their namespace, else of Multus' global namespaces as <namespace>/<name>.
    in_namespace = names.attachable_networks(networks, namespace)
    resources = summary.get("resources") or []
    rails, rates, hcas = [], [], []
    for index, group in enumerate(groups):
        if index >= len(resources) or index >= len(in_namespace):
            break
        rails.append({"network": in_namespace[index]["annotation"], "resource": resources[index]})
        ports = [p for p in nic_ports or [] if p.get("node") in group.get("nodes", []) and not p.get("is_vf")
                 and (p.get("netdev") in group.get("interfaces", [])
                      or p.get("pci_address") in group.get("pci_addresses", []))]
        found = [float(p["rate_gbps"]) for p in ports if p.get("rate_gbps")]
        rates.append(max(found) if found else None)
        devices = [p["rdma_device"] for p in sorted(ports, key=lambda p: p["node"]) if p.get("rdma_device")]
        hcas.append(devices[0] if devices else None)
    sriov = summary.get("method") == "sriov_legacy"
    return {"namespace": namespace, "rails": rails,
            "rail_rates_gbps": rates if rates and all(rates) else [],
            "hcas": hcas if hcas and all(hcas) and not sriov else [],
            "fabric": summary.get("fabric") or "infiniband"}


def rail_devices(model):
    """RDMA device of each rail in rail order, from the ports NIC facts gave it (its first node's), or None when a rail
    has none: an SR-IOV VF gets its own RDMA device only when the pod starts, and manual selection has no facts."""
    if rdma.configuration(model).vf_policy:
        return None
    devices = []
    for _config, group in rdma.fabric_groups(model):
        ports = sorted((p for p in group.get("ports") or [] if p.get("rdma_device")), key=lambda p: p["node"])
        if not ports:
            return None
        devices.append(ports[0]["rdma_device"])
    return devices


def rail_job_pod(model, summary):
    """{"file", "manifest", "notes"}: a Pod asking one GPU per rail and every rail, with the NCCL environment."""
    resources = {"nvidia.com/gpu": str(max(1, len(summary["resources"])))}
    for resource in summary["resources"]:
        resources[resource] = "1"
    namespace = model["network_namespaces"][0]
    networks = [n["annotation"] for n in summary["networks"] if n["namespace"] == namespace]
    devices = rail_devices(model)
    env = nccl_environment(devices or [], model["fabric"])
    notes = []
    if devices is None:
        notes.append("NCCL_IB_HCA is not set: the rails' RDMA devices are not known before the pod starts (SR-IOV VFs, "
                     "or NICs selected without facts); NCCL then uses every RDMA device the pod has, which are the "
                     "rails'.")
    manifest = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "gpudirect-rail-job", "namespace": namespace,
                     "annotations": {"k8s.v1.cni.cncf.io/networks": ",".join(networks)}},
        "spec": {
            "restartPolicy": "Never",
            "containers": [{
                "name": "job",
                "image": IMAGE_PLACEHOLDER,
                "env": [{"name": key, "value": value} for key, value in sorted(env.items())],
                # IPC_LOCK: NCCL pins its buffers for RDMA
                "securityContext": {"capabilities": {"add": ["IPC_LOCK"]}},
                "resources": {"requests": dict(resources), "limits": dict(resources)},
            }],
        },
    }
    return {"file": FILE, "manifest": manifest, "notes": notes}
