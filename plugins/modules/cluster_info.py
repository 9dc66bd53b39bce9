#!/usr/bin/python
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
---
module: cluster_info
short_description: Gather OpenShift, node GPU and RDMA NIC information
version_added: 0.1.0
author: gpudirect.openshift maintainers (@gpudirect)
description:
  - Returns the OpenShift and Kubernetes versions and, for each node, its roles, readiness, the node
    labels that matter for GPUDirect RDMA (NFD PCI vendor labels, NVIDIA GPU and network operator
    labels), GPU and RDMA extended resources, and the SR-IOV network node state when the SR-IOV
    Network Operator is installed.
  - Makes a fixed number of API requests whatever the number of nodes (one list per kind).
  - Never changes anything.
options:
  nodes:
    description:
      - Only report these nodes (by name).
    type: list
    elements: str
  label_selectors:
    description:
      - Only report nodes matching all of these label selectors, for example V(node-role.kubernetes.io/worker).
    type: list
    elements: str
  extra_label_prefixes:
    description:
      - Node label prefixes to report besides the built-in ones.
    type: list
    elements: str
    default: []
extends_documentation_fragment:
  - gpudirect.openshift.cluster_connection
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
notes:
  - The SR-IOV information is only present when the C(SriovNetworkNodeState) kind is served.
seealso:
  - module: gpudirect.openshift.olm_operator
  - module: kubernetes.core.k8s_cluster_info
"""

EXAMPLES = r"""
- name: Gather GPU and NIC facts
  gpudirect.openshift.cluster_info:
  register: cluster

- name: Show GPU nodes
  ansible.builtin.debug:
    msg: "{{ cluster.summary.gpu_nodes }} ({{ cluster.summary.total_gpus }} GPUs)"

- name: Only workers
  gpudirect.openshift.cluster_info:
    label_selectors:
      - node-role.kubernetes.io/worker
"""

RETURN = r"""
openshift:
  description: OpenShift version from the ClusterVersion C(version); null on a cluster that is not OpenShift.
  returned: always
  type: dict
  sample: {"version": "4.20.3", "channel": "stable-4.20", "cluster_id": "5a1c..."}
kubernetes:
  description: Kubernetes version from C(/version).
  returned: always
  type: dict
  sample: {"version": "v1.33.5", "major": "1", "minor": "33", "platform": "linux/amd64"}
sriov_node_states_served:
  description: Whether the SriovNetworkNodeState kind is served (SR-IOV Network Operator installed).
  returned: always
  type: bool
nodes:
  description: One entry per node, sorted by name.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: Node name.
      type: str
      returned: always
    roles:
      description: Roles from the C(node-role.kubernetes.io/*) labels.
      type: list
      elements: str
      returned: always
    ready:
      description: Whether the Ready condition is True.
      type: bool
      returned: always
    unschedulable:
      description: Whether the node is cordoned.
      type: bool
      returned: always
    labels:
      description:
        - Labels of interest (NFD vendor labels C(pci-15b3)/C(pci-10de) and C(pci-0302_10de)/C(pci-0300_10de),
          C(nvidia.com/*), C(network.nvidia.com/*), RDMA, SR-IOV, kernel).
      type: dict
      returned: always
    gpus:
      description:
        - Capacity and allocatable of C(nvidia.com/gpu).
        - With MIG slices advertised (mixed strategy), C(mig_allocatable) maps each C(nvidia.com/mig-<profile>) resource
          to its allocatable count.
      type: dict
      returned: always
      sample: {"capacity": 8, "allocatable": 8}
    rdma_resources:
      description: Capacity and allocatable of C(rdma/*), C(openshift.io/*) and C(nvidia.com/*) resources other than
        GPUs.
      type: dict
      returned: always
      sample: {"rdma/rdma_shared_device_eth": {"capacity": 63, "allocatable": 63}}
    has_gpu:
      description:
        - NVIDIA GPU present; an NFD label the GPU Operator selects by, in vendor or class_vendor form.
        - Or a GPU Operator node label, GPU capacity, or MIG slices.
      type: bool
      returned: always
    has_nvidia_nic:
      description: NVIDIA/Mellanox NIC present (NFD label, RDMA resource or SR-IOV interface with vendor 15b3).
      type: bool
      returned: always
    kernel_version:
      description: Kernel version from the node info.
      type: str
      returned: always
    os_image:
      description: OS image from the node info.
      type: str
      returned: always
    sriov:
      description: SR-IOV node state (sync status, last sync error, interfaces); null when not served or no state exists
        for the node.
      type: dict
      returned: always
summary:
  description: Cluster-wide counts; C(role_counts) is the number of nodes per role (the node-role.kubernetes.io/
    labels).
  returned: always
  type: dict
  sample: {"node_count": 3, "ready_nodes": 3, "gpu_nodes": ["worker-0"], "nic_nodes": ["worker-0"],
           "gpu_nic_nodes": ["worker-0"], "role_counts": {"master": 3, "worker": 1}, "total_gpus": 8,
           "allocatable_gpus": 8}
"""


from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.module_base import ClusterModule
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.info import gather


def argument_spec():
    return dict(
        nodes=dict(type="list", elements="str"),
        label_selectors=dict(type="list", elements="str"),
        extra_label_prefixes=dict(type="list", elements="str", default=[]),
    )


def main():
    module = ClusterModule(argument_spec(), client_options=dict(rediscover_once=True))
    options = module.options
    info = module.run(lambda: gather(module.cluster, node_names=options["nodes"],
                                     label_selectors=options["label_selectors"],
                                     extra_label_prefixes=options["extra_label_prefixes"]),
                      "Failed to gather cluster information")
    module.exit_json(changed=False, **info)


if __name__ == "__main__":
    main()
