#!/usr/bin/python
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
---
module: gather_node_hardware
short_description: Gather GPU/NIC hardware facts of OpenShift nodes through short-lived pods
version_added: 0.1.0
author: gpudirect.openshift maintainers (@gpudirect)
description:
  - Runs the collection's hardware facts collector (the code behind M(gpudirect.openshift.gpu_nic_facts)) once on each
    selected node, in a pod pinned with C(spec.nodeName), and returns the facts of every node. Nodes are never
    reached over SSH, so this works on RHCOS and from AWX.
  - The collector script is generated from the collection at run time and delivered in a ConfigMap, so the pod
    only needs an image with C(python3) (O(image)); nothing is built.
  - Each pod mounts the host's C(/sys) at C(/host/sys) and only the C(/proc) entries the collector reads
    (C(/proc/modules), C(/proc/sys/kernel/osrelease), C(/proc/driver)) under C(/host/proc), read-only (hostPath). It is
    not privileged, uses no host namespaces, drops every capability and has a read-only root filesystem. hostPath
    volumes need a SecurityContextConstraints that allows them. By default an administrator has prepared O(namespace),
    O(service_account) and a minimal SCC it may use once (C(deploy/rbac/workloads.yml)), and the module creates
    nothing but the pods and a ConfigMap; with O(manage_rbac) it creates the service account and a RoleBinding to
    O(scc) itself and deletes them at the end of the run.
  - Runs at most O(max_pods_in_flight) pods at once, follows them with one watch, reads each pod log as its pod
    ends, and always deletes the pods (by label, in one request) and the ConfigMap, also when a pod fails, times out
    or the module is interrupted by an error.
  - Keeps each node's document on the cluster, in a ConfigMap per node in O(namespace) labelled
    C(app.kubernetes.io/component=gpudirect-facts-cache) and keyed by a hardware fingerprint (NFD's
    C(feature.node.kubernetes.io/pci-*) labels, the kernel and boot ID, and the collector's source; an entry made
    before NFD labelled the node stays good for the same boot). A later run starts pods only for nodes without a
    matching entry, or for every node with O(refresh) (needed for VFs or a driver loaded without a reboot). A cached
    document is parsed and checked like a pod's output before it is used.
  - Returns what plays need, the NIC ports and GPU-NIC relations in the shapes the C(gpudirect_rdma_nic_facts) and
    C(gpudirect_rdma_gpu_nic_affinity) variables take, a readiness summary per node and counts; the documents
    themselves go to O(report_dir) (and to RV(nodes) only with O(return_facts)).
options:
  nodes:
    description:
      - Gather from exactly these nodes. Names that are not nodes are reported in RV(failed_nodes).
      - Mutually exclusive with O(node_selector).
    type: list
    elements: str
  allow_control_plane:
    description:
      - Run facts pods (read-only host paths) on control-plane nodes too (role label C(node-role.kubernetes.io/master)
        or C(node-role.kubernetes.io/control-plane)).
      - Off, control-plane nodes named in O(nodes) are reported in RV(failed_nodes), and those O(node_selector) or
        the automatic choice matched are left out (RV(control_plane_left_out)).
    type: bool
    default: false
  node_selector:
    description:
      - Gather from the nodes whose labels contain all of these.
      - Without O(nodes) and O(node_selector), the nodes labelled by NFD as carrying an NVIDIA GPU or an
        NVIDIA/Mellanox NIC (C(feature.node.kubernetes.io/pci-10de.present) or C(pci-15b3.present)), or every
        worker when no node has those labels.
    type: dict
  label_selectors:
    description: Only consider nodes matching all of these label selectors (sent to the API server).
    type: list
    elements: str
    default: []
  namespace:
    description: Namespace of the pods and the ConfigMap.
    type: str
    default: gpudirect-facts
  create_namespace:
    description:
      - Create O(namespace) when it is missing (and delete it at the end of the run). When V(false) a missing
        namespace is an error that names C(deploy/rbac/workloads.yml).
    type: bool
    default: false
  service_account:
    description: Service account of the pods. Empty means the namespace's C(default) account.
    type: str
    default: gpudirect-facts
  manage_rbac:
    description:
      - Create O(service_account) and a RoleBinding to the ClusterRole C(system:openshift:scc:<scc>) when missing,
        and delete them at the end of the run. Binding an SCC needs the right to use it (in practice a cluster
        administrator), or RBAC refuses the RoleBinding.
      - V(false) (the default) expects O(service_account) to exist and to be allowed an SCC with hostPath volumes,
        as C(deploy/rbac/workloads.yml) sets up; a missing account is an error before any pod is created.
    type: bool
    default: false
  scc:
    description:
      - SCC bound to the service account with O(manage_rbac). It must allow hostPath volumes and must not force a
        seccomp profile the SCC does not list (C(hostmount-anyuid) lists none, so the pods set none).
    type: str
    default: hostmount-anyuid
  image:
    description: Image with C(python3) (3.10 or newer) that runs the collector.
    type: str
    default:
      registry.access.redhat.com/ubi9/python-312:9.6-1762197685@sha256:7b8f2ee184b40eb160e2c90c240a16fd9ec93279cc1553c0b8b872e2274a139b
  image_pull_policy:
    description: Pull policy of the collector container.
    type: str
    choices: [Always, IfNotPresent, Never]
    default: IfNotPresent
  nvidia_smi:
    description:
      - Request the node's allocatable C(nvidia.com/gpu) from the NVIDIA device plugin, so that the container toolkit
        (installed by the GPU Operator) exposes those GPUs and injects C(nvidia-smi), for GPU names, UUIDs and driver
        versions. Never C(NVIDIA_VISIBLE_DEVICES=all). The GPUs must be free while the pod runs. On a node without the
        device plugin, or when nvidia-smi is not injected, GPUs are read from sysfs.
    type: bool
    default: false
  tolerations:
    description: Tolerations of the pods. The default tolerates every taint (GPU, control-plane, cordoned nodes).
    type: list
    elements: dict
    default: [{operator: Exists}]
  timeout:
    description: Seconds to wait for all pods to finish; also the pods' C(activeDeadlineSeconds).
    type: int
    default: 300
  name_prefix:
    description: Prefix of the pod and ConfigMap names (a run ID and the node name follow).
    type: str
    default: gpudirect-facts
  max_pods_in_flight:
    description: How many collector pods exist at once; the next starts when one ends.
    type: int
    default: 50
  pending_grace_period:
    description:
      - Seconds a pod may show an image pull or container set-up problem (C(ImagePullBackOff), C(ErrImagePull),
        C(CreateContainerConfigError) ...) before its node counts as failed, with the kubelet's reason and message.
        A pod that cannot be scheduled on its node fails at once.
    type: int
    default: 60
  cache:
    description:
      - Use and keep the per-node documents on the cluster (see the description). V(false) reads and writes no cache.
    type: bool
    default: true
  refresh:
    description: Start a pod on every selected node even when its cached document matches its fingerprint.
    type: bool
    default: false
  refresh_not_ready:
    description:
      - Start a pod on the selected nodes whose cached document says the node is not ready, even when it matches the
        fingerprint. The operators load drivers without a reboot, which the fingerprint does not see.
    type: bool
    default: false
  cache_only:
    description:
      - Only read the per-node cache, start no pod and send no write. The facts of the selected nodes the cache
        holds with a matching fingerprint are returned; RV(counts) says how many (C(from_cache) below C(selected)
        means the cache lacks nodes, which a normal run then gathers). Nothing is written to O(report_dir) either.
      - site.yml uses it with NIC selection auto, so that a re-run has its plan before anything is written.
    type: bool
    default: false
  report_dir:
    description:
      - Directory, on the host that runs the module (the controller with the collection's playbooks), where the module
        writes C(hardware-report.md), C(hardware-report.html), C(hardware-facts.json) and one document per node as
        C(nodes/<node>.json). Created when missing. Nothing is written in check mode or without it.
    type: path
  cluster_name:
    description: Name of the cluster in the report titles; default the name in the API server URL.
    type: str
  report_note:
    description:
      - A sentence under the reports' titles and as C(note) in C(hardware-facts.json), saying when the facts were taken
        (site.yml takes them before it installs the drivers, so its report shows the nodes as they were then).
    type: str
  return_facts:
    description: Also return every node's document in RV(nodes) (large at scale; they are in O(report_dir) anyway).
    type: bool
    default: false
  fail_on_error:
    description:
      - Fail when any selected node gives no facts (unknown node, pod rejected, failed, unschedulable or timed out).
      - With V(false) the facts of the other nodes are returned and the problems listed in RV(failed_nodes).
    type: bool
    default: true
extends_documentation_fragment:
  - gpudirect.openshift.cluster_connection
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Lists the nodes and the pods that would run (RV(pods)); creates nothing and sends no write request.
  diff_mode:
    support: none
notes:
  - The pods are temporary, so the module reports C(changed) only when it created the namespace, the service
    account or the RoleBinding, or wrote a cache entry. A re-run on unchanged nodes starts no pod and writes nothing.
  - The user running the module needs to list nodes, get the service account, create pods and delete them by label,
    create, list and delete ConfigMaps in O(namespace) and read the pods' logs (the Role in
    C(deploy/rbac/clusterrole.yml)); with O(manage_rbac) or O(create_namespace) also to create those objects.
seealso:
  - module: gpudirect.openshift.gpu_nic_facts
  - module: gpudirect.openshift.cluster_info
"""

EXAMPLES = r"""
- name: Gather facts of the GPU/NIC nodes
  gpudirect.openshift.gather_node_hardware:
  register: hardware

- name: Feed the RDMA input model
  ansible.builtin.set_fact:
    gpudirect_rdma_nic_facts: "{{ hardware.nic_ports }}"
    gpudirect_rdma_gpu_nic_affinity: "{{ hardware.gpu_nic_affinity }}"

- name: Two named nodes, with a mirrored image
  gpudirect.openshift.gather_node_hardware:
    nodes: [worker-0, worker-1]
    image: registry.example.com/ubi9/python-312:9.6-1762197685
    timeout: 120
"""

RETURN = r"""
nodes:
  description: Facts of each node that answered, keyed by node name (the collector's document, see docs/facts.md).
  returned: with O(return_facts)
  type: dict
summary:
  description:
    - One line on the run, what the role prints; names the nodes that are not ready, or in check mode the nodes whose
      facts a pod would gather.
  returned: always
  type: str
  sample: "2 node(s): 2 ready, 1 from the cache, 1 gathered now, 0 without facts."
counts:
  description: Nodes selected, taken from the cache, gathered by a pod now, and failed.
  returned: always
  type: dict
  sample: {"selected": 2, "from_cache": 1, "gathered": 1, "failed": 0}
report_files:
  description: The files written to O(report_dir).
  returned: when O(report_dir) is set and not in check mode
  type: list
  elements: str
nic_ports:
  description: NVIDIA/Mellanox NIC ports of all nodes, in the entry format of C(gpudirect_rdma_nic_facts).
  returned: always
  type: list
  elements: dict
  sample: [{"node": "worker-0", "pci_address": "0000:1a:00.0", "vendor_id": "15b3", "device_id": "1021",
            "link_layer": "Ethernet", "netdev": "ens1f0np0", "rdma_device": "mlx5_0", "total_vfs": 16,
            "numa_node": 0, "address": "b8:3f:d2:10:20:00", "type": 1, "is_vf": false, "port": 1, "state": "ACTIVE"}]
gpu_nic_affinity:
  description:
    - For each GPU, its nearest RDMA-capable NIC PF(s) of each link layer and vendor (ties kept), in the entry format of
      C(gpudirect_rdma_gpu_nic_affinity), which is what NIC selection reads. The relation of every GPU to every NIC is
      in C(hardware-facts.json) under O(report_dir).
  returned: always
  type: list
  elements: dict
  sample: [{"node": "worker-0", "gpu": 0, "nic": "0000:1a:00.0", "netdev": "ens1f0np0", "rdma_device": "mlx5_0",
    "relation": "PIX"}]
readiness:
  description: Per node GPUDirect RDMA verdict (ready, reason codes and texts, GPU and NIC counts, link layers, peer
    memory path).
  returned: always
  type: dict
failed_nodes:
  description: Selected nodes without facts, with the reason.
  returned: always
  type: list
  elements: dict
  sample: [{"node": "worker-9", "pod": null, "error": "no such node"}]
pods:
  description: The pods this run created (or, in check mode, would create), with their node.
  returned: always
  type: list
  elements: dict
control_plane_left_out:
  description: Control-plane nodes the selection matched and left out (O(allow_control_plane) off).
  returned: always
  type: list
  elements: str
  sample: ["master-0"]
selection:
  description: How the nodes were chosen (names, node_selector, nfd_vendor_labels or workers).
  returned: always
  type: str
run_id:
  description: Random ID in the pod and ConfigMap names and in the C(gpudirect.openshift/facts-run) label.
  returned: always
  type: str
cluster_name:
  description:
    - Name of the cluster taken from its API server URL (C(lab-1) for C(https://api.lab-1.example.com:6443), the host
      name for other URLs), for report titles when the inventory host is just C(localhost); null when unknown.
  returned: always
  type: str
  sample: lab-1
"""

import dataclasses

from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.module_base import ClusterModule
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.connection import cluster_name
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.facts_nodes import FactsSettings
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.node_facts import (
    DEFAULT_IMAGE, DEFAULT_MAX_PODS_IN_FLIGHT, FactsRun)
from ansible_collections.gpudirect.openshift.plugins.module_utils.reports.hardware_facts import facts_summary
from ansible_collections.gpudirect.openshift.plugins.module_utils.reports.hardware_report import Documents
from ansible_collections.gpudirect.openshift.plugins.module_utils import names


def argument_spec():
    return dict(
        nodes=dict(type="list", elements="str"),
        allow_control_plane=dict(type="bool", default=False),
        node_selector=dict(type="dict"),
        label_selectors=dict(type="list", elements="str", default=[]),
        namespace=dict(type="str", default="gpudirect-facts"),
        create_namespace=dict(type="bool", default=False),
        service_account=dict(type="str", default="gpudirect-facts"),
        manage_rbac=dict(type="bool", default=False),
        scc=dict(type="str", default="hostmount-anyuid"),
        image=dict(type="str", default=DEFAULT_IMAGE),
        image_pull_policy=dict(type="str", default="IfNotPresent", choices=["Always", "IfNotPresent", "Never"]),
        nvidia_smi=dict(type="bool", default=False),
        tolerations=dict(type="list", elements="dict", default=[{"operator": "Exists"}]),
        timeout=dict(type="int", default=300),
        name_prefix=dict(type="str", default="gpudirect-facts"),
        max_pods_in_flight=dict(type="int", default=DEFAULT_MAX_PODS_IN_FLIGHT),
        pending_grace_period=dict(type="int", default=60),
        cache=dict(type="bool", default=True),
        refresh=dict(type="bool", default=False),
        refresh_not_ready=dict(type="bool", default=False),
        cache_only=dict(type="bool", default=False),
        report_dir=dict(type="path"),
        cluster_name=dict(type="str"),
        report_note=dict(type="str"),
        return_facts=dict(type="bool", default=False),
        fail_on_error=dict(type="bool", default=True),
    )


def main():
    # A run stopped by SIGTERM (a task timeout, a cancelled AWX job) still deletes its pods and per-run SCC grant.
    module = ClusterModule(argument_spec(), stop_on_sigterm=True, mutually_exclusive=[("nodes", "node_selector")])
    params = module.options
    if not names.is_image_reference(params["image"]):
        module.fail_json(msg="image (hardware_facts_image): %r is not an image reference; use %s"
                         % (params["image"], names.IMAGE_REFERENCE_HINT))
    if params["max_pods_in_flight"] < 1:
        module.fail_json(msg="max_pods_in_flight (hardware_facts_max_pods_in_flight) must be at least 1, got %d"
                         % params["max_pods_in_flight"])
    report_dir = None if module.check_mode or params["cache_only"] else params["report_dir"]

    def work():
        documents = Documents(report_dir, params["return_facts"])
        settings = FactsSettings(**{field.name: params[field.name] for field in dataclasses.fields(FactsSettings)})
        run = FactsRun(module.cluster, settings, on_document=documents)
        return documents, run, run.run(check_mode=module.check_mode)

    documents, run, result = module.run(work, "Gathering node hardware facts failed", handlers=[(
        (IOError, OSError),
        lambda exc: module.fail_json(msg="Cannot write the hardware documents to %s: %s" % (report_dir, exc)))])
    flat = documents.flat()
    name = params["cluster_name"] or cluster_name(module.cluster.api_host())
    result.update(cluster_name=name, changed=run.changed, nic_ports=flat[0], gpu_nic_affinity=flat[1],
                  readiness=flat[2])
    result["summary"] = facts_summary(result["counts"], flat[2], result.get("pods"), module.check_mode)
    result["nodes"] = documents.nodes if params["return_facts"] else {}
    if report_dir:
        try:
            result["report_files"] = documents.write_reports("GPU/NIC inventory of %s" % (name or "the cluster"), name,
                                                             flat, result["failed_nodes"], params["report_note"])
        except OSError as exc:
            module.fail_json(msg="Cannot write the hardware reports to %s: %s" % (report_dir, exc))
        finally:
            documents.close()
        if not params["return_facts"]:
            result["nodes"] = {}
    if result["failed_nodes"] and params["fail_on_error"]:
        module.fail_json(msg="No hardware facts from %d node(s): %s" % (len(result["failed_nodes"]), "; ".join(
            "%s: %s" % (item["node"], item["error"]) for item in result["failed_nodes"])), **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
