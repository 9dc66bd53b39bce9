#!/usr/bin/python
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
---
module: nccl_allreduce
short_description: Run nccl-tests all_reduce_perf across GPU nodes over every rail and judge its bus bandwidth
version_added: 0.1.0
author: gpudirect.openshift maintainers (@gpudirect)
description:
  - Starts one worker pod per node (as MPI Operator does for an MPIJob) that requests the node's GPUs
    (O(gpus_per_node) of O(gpu_resource)), one of every rail's resource and every rail's network, and runs the
    image's SSH daemon (O(worker_command)); once every worker runs, a launcher pod runs
    C(mpirun -H <worker IP>:<GPUs>,... all_reduce_perf_mpi -b MIN -e MAX -f 2 -g 1) with the NCCL variables
    (C(NCCL_IB_HCA) naming the rails' RDMA devices in GPU order, C(NCCL_IB_GID_INDEX) for RoCE) passed to every rank.
  - The image must hold nccl-tests built with MPI, OpenMPI and an SSH set-up that lets the launcher reach the workers
    without a password (the way MPI Operator's images are built).
  - Parses the launcher's log with P(gpudirect.openshift.nccl_tests_parse#filter) and judges the out-of-place bus
    bandwidth of the largest message against the range published real runs reach on the rails (by default from
    its calibrated low end) or O(threshold) times the sum of one node's rail rates in GB/s
    (P(gpudirect.openshift.nccl_allreduce_evaluate#filter)); the verdict names the range and its sources. When the run
    is low, the rails that O(nic_ports) show down or slower than the same rail on other nodes are named with their node,
    NIC and GPU.
  - Every pod it created is deleted, and gone, before the module returns.
options:
  image:
    description: Image with nccl-tests (MPI build), OpenMPI and sshd.
    type: str
    required: true
  namespace:
    description: Namespace of the pods; the rails' networks must have their NetworkAttachmentDefinitions there.
    type: str
    default: default
  nodes:
    description: Nodes to run on (at least two); default every schedulable node with the GPU resource.
    type: list
    elements: str
    default: []
  gpus_per_node:
    description: GPUs, and MPI ranks, per node.
    type: int
    default: 8
  rails:
    description: The rails, in GPU order, each with C(network) (annotation value) and C(resource) (extended resource).
    type: list
    elements: dict
    default: []
  rail_rates_gbps:
    description: Link rate of each rail, Gb/s; the expected bus bandwidth is their sum / 8.
    type: list
    elements: float
    default: []
  hcas:
    description: RDMA devices of the rails in GPU order (C(NCCL_IB_HCA)); see the rail_hcas helper and the facts.
    type: list
    elements: str
    default: []
  fabric:
    description: Fabric of the rails.
    type: str
    default: infiniband
    choices: [roce, infiniband]
  nic_ports:
    description: NIC facts (C(gather_node_hardware) C(nic_ports)), to name a down or slow rail.
    type: list
    elements: dict
    default: []
  gpu_nic_affinity:
    description: GPU/NIC relations (C(gather_node_hardware) C(gpu_nic_affinity)), to name the GPU of a suspect rail.
    type: list
    elements: dict
    default: []
  binary:
    description: nccl-tests program.
    type: str
    default: all_reduce_perf_mpi
  min_bytes:
    description: Smallest message (C(-b)), with an optional K, M or G suffix.
    type: str
    default: "8"
  max_bytes:
    description: Largest message (C(-e)); its bus bandwidth is the one judged.
    type: str
    default: 8G
  worker_command:
    description: Command of the worker pods.
    type: list
    elements: str
    default: [/usr/sbin/sshd, -D, -e]
  threshold:
    description:
      - Fraction of the rails' sum (one node's rail rates / 8, GB/s) the busbw must reach.
      - V(0) (the default) means calibrated, the low end of published healthy runs for this many rails (0.8 of the
        rails' sum today; the table is in docs/nccl-tests.md); a number in (0, 1] overrides it.
    type: float
    default: 0
  start_timeout:
    description: Seconds for the workers to run.
    type: int
    default: 300
  run_timeout:
    description: Seconds for the launcher to finish.
    type: int
    default: 600
extends_documentation_fragment:
  - gpudirect.openshift.cluster_connection
  - gpudirect.openshift.verify_pods
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: partial
    details: In check mode no pod is created; the result names the nodes that would run.
  diff_mode:
    support: none
"""

EXAMPLES = r"""
- name: All-reduce over the 8 rails of two nodes
  gpudirect.openshift.nccl_allreduce:
    image: registry.example/nccl-tests-mpi:2.19.6
    nodes: [rail-ib-0, rail-ib-1]
    rails:
      - {network: rail0, resource: rdma/rail0}
      - {network: rail1, resource: rdma/rail1}
      - {network: rail2, resource: rdma/rail2}
      - {network: rail3, resource: rdma/rail3}
      - {network: rail4, resource: rdma/rail4}
      - {network: rail5, resource: rdma/rail5}
      - {network: rail6, resource: rdma/rail6}
      - {network: rail7, resource: rdma/rail7}
    rail_rates_gbps: "{{ [400] * 8 }}"
    hcas: [mlx5_0, mlx5_1, mlx5_2, mlx5_3, mlx5_4, mlx5_5, mlx5_6, mlx5_7]
  register: nccl
"""

RETURN = r"""
passed:
  description: Whether the bus bandwidth reached the threshold with no NCCL errors, no wrong results and no rail of a
    tested node down.
  returned: always
  type: bool
code:
  description: V(passed), V(busbw_below_threshold), V(rail_down) (the bandwidth reached the threshold but the facts show
    a rail of a tested node with its link down, so NCCL ran without it), V(nccl_errors), V(wrong_results),
    V(too_few_nodes), V(unparsable_output), V(timeout), V(workers_not_running) or V(worker_failed).
  returned: always
  type: str
reason:
  description: One sentence explaining the verdict, naming suspect rails (node, NIC, GPU) when the run is low.
  returned: always
  type: str
measured_busbw_gbs:
  description: Out-of-place busbw of the largest message, GB/s.
  returned: when the output parsed
  type: float
expected_busbw_gbs:
  description: Sum of the rail rates / 8, GB/s.
  returned: when the output parsed
  type: float
expected_range:
  description: What published real runs give for these rails, C(low_gbs) to C(high_gbs) for a ring (C(low_fraction),
    C(high_fraction) of C(rails_gbs)), C(tree_bound_gbs) the most a tree or NVLS run can show, C(sources) and
    C(tree_sources) (C(key), C(title), C(url)) and C(low_causes).
  returned: when the output parsed
  type: dict
threshold_source:
  description: V(calibrated) (threshold 0) or V(threshold) (a fraction given).
  returned: when the output parsed
  type: str
nodes:
  description: Nodes the run spanned.
  returned: when the output parsed
  type: list
  elements: str
suspects:
  description: Rails that the facts show down or slow on a tested node, with C(rail), C(node), C(nic), C(rdma_device),
    C(gpu), C(problem).
  returned: always
  type: list
  elements: dict
report_html:
  description: Self-contained HTML report (verdict, suspect rails, busbw by message size as an inline SVG chart).
  returned: when not in check mode
  type: str
rows:
  description: Size, algbw and busbw (out-of-place) of every row.
  returned: when the output parsed
  type: list
  elements: dict
"""


from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.module_base import ClusterModule
from ansible_collections.gpudirect.openshift.plugins.module_utils.reports import nccl_report
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.nccl_run import (
    NcclAllReduceTest, SettingsError, settings_from)


def argument_spec():
    return dict(
        image=dict(type="str", required=True),
        image_pull_policy=dict(type="str", default="IfNotPresent", choices=["Always", "IfNotPresent", "Never"]),
        namespace=dict(type="str", default="default"),
        nodes=dict(type="list", elements="str", default=[]),
        node_selector=dict(type="dict", default={}),
        gpu_resource=dict(type="str", default="nvidia.com/gpu"),
        gpus_per_node=dict(type="int", default=8),
        rails=dict(type="list", elements="dict", default=[]),
        rail_rates_gbps=dict(type="list", elements="float", default=[]),
        hcas=dict(type="list", elements="str", default=[]),
        fabric=dict(type="str", default="infiniband", choices=["roce", "infiniband"]),
        nic_ports=dict(type="list", elements="dict", default=[]),
        gpu_nic_affinity=dict(type="list", elements="dict", default=[]),
        binary=dict(type="str", default="all_reduce_perf_mpi"),
        min_bytes=dict(type="str", default="8"),
        max_bytes=dict(type="str", default="8G"),
        worker_command=dict(type="list", elements="str", default=["/usr/sbin/sshd", "-D", "-e"]),
        threshold=dict(type="float", default=0),
        service_account=dict(type="str"),
        start_timeout=dict(type="int", default=300),
        run_timeout=dict(type="int", default=600),
        pending_grace_period=dict(type="int", default=60),
        cleanup_timeout=dict(type="int", default=120),
    )


def main():
    module = ClusterModule(argument_spec(), stop_on_sigterm=True)
    options = module.options
    try:
        # nic_ports and gpu_nic_affinity go to the run (which pairs each rank with its NIC), the rest to the settings.
        settings = settings_from(**{key: value for key, value in options.items()
                                    if key not in ("nic_ports", "gpu_nic_affinity")})
    except (SettingsError, ValueError, TypeError) as exc:
        module.fail_json(msg="Invalid options: %s" % exc)
    result = module.run(
        lambda: NcclAllReduceTest(module.cluster, settings).run(
            check_mode=module.check_mode, nic_ports=options["nic_ports"], affinity=options["gpu_nic_affinity"]),
        "The NCCL all-reduce test failed")
    result["changed"] = False  # pods come and go; nothing stays on the cluster
    if not module.check_mode:
        result["report_html"] = nccl_report.html(result)
    if module.check_mode or result.get("passed"):
        module.exit_json(msg=result.get("reason") or "check mode: nothing run", **result)
    module.fail_json(msg=result.get("reason"), **result)


if __name__ == "__main__":
    main()
