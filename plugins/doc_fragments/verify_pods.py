# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)


class ModuleDocFragment:
    # The pod options the two verification modules share (nccl_allreduce, rdma_bandwidth): both place their test pods
    # the same way and watch them with module_utils/cluster/pods.py PodRun, so each option means the same in both and
    # has the same type and default in both argument specs (validate-modules compares them with this text). The
    # options that differ between the two (image, namespace, nodes, timeouts) stay in each module's DOCUMENTATION.
    DOCUMENTATION = r"""
options:
  image_pull_policy:
    description: Image pull policy of the test pods.
    type: str
    default: IfNotPresent
    choices: [Always, IfNotPresent, Never]
  node_selector:
    description: Labels a node must carry to be chosen when O(nodes) is empty.
    type: dict
    default: {}
  gpu_resource:
    description:
      - Extended resource the pods request their GPUs as. Empty requests no GPU.
    type: str
    default: nvidia.com/gpu
  service_account:
    description: Service account of the test pods. Its SCC must allow the C(IPC_LOCK) capability, which the pods add to
      pin RDMA memory.
    type: str
  pending_grace_period:
    description: Seconds a test pod may stay unschedulable or failing to pull its image before the test fails, quoting
      the kubelet's reason.
    type: int
    default: 60
  cleanup_timeout:
    description: Seconds to wait for the test pods to be gone.
    type: int
    default: 120
"""
