#!/usr/bin/python
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
---
module: rdma_bandwidth
short_description: Measure GPUDirect RDMA bandwidth between GPU nodes with ib_write_bw pods
version_added: 0.1.0
author: gpudirect.openshift maintainers (@gpudirect)
description:
  - For each pair of GPU nodes (one pair for two nodes, else a ring n0->n1, ..., n(k-1)->n0) starts an C(ib_write_bw)
    server pod on the first node and, once it runs with an address on the secondary network (read from the
    C(k8s.v1.cni.cncf.io/network-status) annotation), a client pod on the second node pointed at that address.
  - Each pod requests one GPU, the RDMA resource and the secondary network of the configured method, and the
    C(IPC_LOCK) capability (not privileged).
  - Waits with watches (no polling), reads both logs, parses them, compares the BW average with a fraction of the
    link rate, and diagnoses failed pairs (image pull, resources not allocatable, no GPU memory path, link down,
    wrong GID, timeout, bandwidth below the threshold).
  - Pairs run in rounds of pairs that share no node, so that a node's NIC carries one test at a time; around a ring
    that is two rounds for an even number of nodes and three for an odd one, whatever the number of nodes. Within a
    round at most O(parallel_pairs) pairs run at once. One watch follows a round's pods; they are deleted by label in
    one request, and the next round starts when they are gone.
  - With several rails in O(configuration) (NIC groups, each with its own RDMA resource and network, from
    C(gpudirect_rdma_resource_names)) every rail is tested (O(rails=all); together, see O(parallel_rails)), and its pods
    request only that rail's resource (and the GPU), attach only that rail's network and use that rail's RDMA device.
    Each pair result names its rail, and a failure names the rail (network, resource, NIC) that did not pass.
  - Every pod it created is deleted, and gone, before the module returns, also when a pair fails or times out.
    Pods left by an earlier run that was killed are deleted first.
options:
  configuration:
    description:
      - The C(summary) of the rendered plan (C(gpudirect_manifests) result or C(render_all)); gives the method,
        fabric, RDMA resource, network and GPU RDMA mode. The options below override it.
    type: dict
    default: {}
  method:
    description: RDMA method; default from O(configuration).
    type: str
    choices: [shared_device, host_device, sriov_legacy]
  fabric:
    description: Fabric; default from O(configuration).
    type: str
    choices: [roce, infiniband]
  namespace:
    description:
      - Namespace of the test pods; the network must have its NetworkAttachmentDefinition there.
      - Default the namespace of the configuration's first network (C(default) without a configuration).
    type: str
  network:
    description:
      - Value of the pods' C(k8s.v1.cni.cncf.io/networks) annotation; default each rail's network in O(namespace)
        (the configuration's first network when it has one rail).
      - Given, only this network is tested (one rail), whatever O(rails) says.
    type: str
  resources:
    description:
      - "RDMA resources each pod requests, for example C({rdma/rdma_shared_device_eth: 1}); default each rail's own
        resource (the configuration's C(pod_resources) when it has one rail)."
      - Given, only one rail is tested, with these resources and O(network) (or the first network).
    type: dict
  rails:
    description:
      - V(all) tests every rail of O(configuration) (NIC group in C(nic_selection.groups)), one rail after the other,
        each with its own network, resource and RDMA device.
      - V(first) tests only the first rail's network, with every resource of C(pod_resources) (the behaviour before
        rails were tested one by one).
      - Without several rails, or with O(network) or O(resources) given, both test one network.
    type: str
    default: all
    choices: [all, first]
  gpu_rdma_mode:
    description:
      - V(dmabuf) runs C(--use_cuda=<gpu_index> --use_cuda_dmabuf), V(peermem) runs C(--use_cuda=<gpu_index>), V(none)
        uses host memory.
      - Default from O(configuration), else V(dmabuf).
      - Each pod requests one GPU of O(gpu_resource); an empty O(gpu_resource) is accepted only with V(none).
    type: str
    choices: [dmabuf, peermem, none]
  gpu_index:
    description: CUDA device index inside the pod (the pod sees only its own GPU, so 0).
    type: int
    default: 0
  image:
    description: Image with C(ib_write_bw) built with CUDA support (perftest C(--use_cuda)). Users must provide one.
    type: str
    required: true
  binary:
    description: Path or name of C(ib_write_bw) in the image.
    type: str
    default: ib_write_bw
  rdma_device:
    description:
      - RDMA device passed with C(-d) on every node. Unset takes it from O(nic_ports) (shared and host device), else the
        pod uses the device behind its secondary interface, else the first active port of the fabric's link layer.
      - One device cannot serve several rails; it is refused with O(rails=all) and several rails.
    type: str
  nic_ports:
    description:
      - Port facts, one dict per port with C(node), C(rdma_device), C(netdev), C(link_layer), C(pci_address) and the
        rate as C(rate_gbps), C(speed_gbps), C(speed) (number or text such as C(400 Gb/sec (4X NDR))) or C(speed_mbps).
      - Used to pick the device and the link rate of each node and rail (the port whose netdev, PCI address or device ID
        the rail selected).
    type: list
    elements: dict
    default: []
  link_rate_gbps:
    description: Link rate to judge against. Unset uses O(nic_ports), then the node's SriovNetworkNodeState
      C(linkSpeed).
    type: float
  threshold:
    description:
      - Fraction of the pair's bound (the link rate, or the PCIe payload rate of its GPU or NIC when lower) the BW
        average must reach.
      - Unset, each pair is judged at the calibrated low end of the range that published real runs reach on its hardware
        (link rate, PCIe links, GPU-NIC path, MTU; see docs/verify.md, Expected bandwidth).
    type: float
  rdma_cm:
    description: Connect the queue pairs with RDMA-CM (C(-R)).
    type: bool
    default: true
  gid_index:
    description: GID index (C(-x)); needed for RoCE without RDMA-CM.
    type: int
  qps:
    description: Number of queue pairs (C(-q)).
    type: int
    default: 16
  message_size:
    description: Message size in bytes (C(-s)) when O(sweep=false).
    type: int
    default: 65536
  sweep:
    description: Run every message size from 2 B to 8 MiB (C(-a)) with O(iterations) messages each, instead of one size.
    type: bool
    default: false
  iterations:
    description: Messages per size in a sweep (C(-n)).
    type: int
    default: 5000
  duration:
    description: Seconds a single-size run lasts (C(-D)).
    type: int
    default: 10
  port:
    description: TCP port of perftest's connection set-up (C(-p)).
    type: int
    default: 18515
  extra_args:
    description: More C(ib_write_bw) arguments for both sides, for example C([-T, "41"]).
    type: list
    elements: str
    default: []
  secondary_interface:
    description: Name of the secondary interface in the pod (Multus names the first one C(net1)).
    type: str
    default: net1
  nodes:
    description: Nodes to test, in ring order. Default every schedulable node with a GPU, in name order.
    type: list
    elements: str
    default: []
  start_timeout:
    description: Seconds a pod may take to start (scheduling, image pull, network).
    type: int
    default: 600
  run_timeout:
    description: Seconds the client may run once started; default 120 + the duration (or the sweep's length).
    type: int
  parallel_pairs:
    description:
      - How many pairs of one round run at once. The pairs of a round share no node, but they share the fabric's
        switches, so a higher value finishes sooner and loads the spine links more.
    type: int
    default: 16
  parallel_rails:
    description:
      - Test the rails of a pair of nodes at the same time (they share the pair's round) rather than one after another.
      - Each rail's pods use only that rail's NIC, RDMA resource and network, and one GPU each from the device plugin,
        which does not give one GPU to two pods. With the buffers in GPU memory the rails share no NIC, GPU or PCIe
        path, so the result per rail is the one a run rail after rail gives. Set it to false where the GPU Operator
        shares GPUs by time-slicing.
      - With O(gpu_rdma_mode=none) the buffers of every rail are in the node's host memory, so the rails run one after
        another whatever this says.
    type: bool
    default: true
  artifacts_dir:
    description:
      - Directory, on the host that runs the module (the controller with the collection's playbooks), where the module
        writes C(results.json) (the pairs without their logs), C(report.md), C(report.html) and each pod's log as
        C(pair-<index>-<server|client>.log). Created when missing.
      - When set, the logs are not returned in RV(pairs) and the reports not in RV(report_markdown) and
        RV(report_html), since they are in the files.
    type: path
  cluster_name:
    description:
      - Name of the cluster in the reports.
      - Defaults to the name in the API server URL (C(lab-1) for C(https://api.lab-1.example.com:6443), else its host
        name), or C(cluster) when the URL is unknown.
    type: str
extends_documentation_fragment:
  - gpudirect.openshift.cluster_connection
  - gpudirect.openshift.verify_pods
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: partial
    details: In check mode no pod is created; RV(pods) shows the pods of each pair.
  diff_mode:
    support: none
notes:
  - The pods need an SCC that allows the C(IPC_LOCK) capability (cluster administrators get one in C(default)).
  - With several rails the run takes as many pairs as rails times node pairs; O(rails=first) tests only the first rail.
seealso:
  - module: gpudirect.openshift.gpudirect_manifests
"""

EXAMPLES = r"""
- name: Test GPUDirect RDMA between every GPU node of the rendered configuration
  gpudirect.openshift.rdma_bandwidth:
    configuration: "{{ preflight_plan.summary }}"
    image: quay.io/example/perftest-cuda:24.10
    nic_ports: "{{ hardware_facts_nic_ports | default([]) }}"
    threshold: 0.8
  register: verify_run

- name: Test only the first rail of a configuration with several rails
  gpudirect.openshift.rdma_bandwidth:
    configuration: "{{ preflight_plan.summary }}"
    image: quay.io/example/perftest-cuda:24.10
    rails: first

- name: Sweep all message sizes between two named nodes over RoCE with GID index 3
  gpudirect.openshift.rdma_bandwidth:
    method: sriov_legacy
    fabric: roce
    network: sriov-network
    resources: {openshift.io/sriovlegacy: 1}
    image: quay.io/example/perftest-cuda:24.10
    nodes: [worker-0, worker-1]
    rdma_cm: false
    gid_index: 3
    sweep: true
    link_rate_gbps: 200
"""

RETURN = r"""
passed:
  description: Every pair passed.
  returned: always
  type: bool
run_id:
  description: Value of the C(gpudirect.openshift/verify-run) label of this run's pods.
  returned: always
  type: str
  sample: 3fa9c1
cluster_name:
  description: Name of the cluster in the reports (O(cluster_name) or the name from the API server URL).
  returned: when not in check mode
  type: str
  sample: lab-1
arguments:
  description: The C(ib_write_bw) arguments both sides ran with (the client adds the server address).
  returned: always
  type: str
  sample: -F --report_gbits -q 16 -s 65536 -D 10 -R --use_cuda=0 --use_cuda_dmabuf
pairs:
  description:
    - One entry per pair and rail, in rail order, with index (unique in the run), rail (index, count, network,
      resource, nic, interfaces, pci_addresses, device_ids, ipam_range), server_node, client_node, server_device,
      client_device, server_ip, link_rate_gbps, link_rate_source, threshold, threshold_source (verify_threshold or
      calibrated), threshold_gbps, bound_gbps (the link rate or the PCIe payload rate, the lower), expected (bound_gbps,
      limited_by, low_gbps, high_gbps, low_fraction, why, sources with key, title and url), path (server and client
      GPU-NIC relation PIX/PXB/PHB/NODE/SYS), pcie (server and client GPU and NIC links), bandwidth_gbps (BW average
      of the largest message), bw_peak_gbps, msg_rate_mpps, message_size, fraction (of the bound), use_cuda, use_dmabuf,
      gpu, sweep (bytes and bw_avg_gbps per size),
      verdict (passed or failed), reason, diagnosis (code, ok, message, evidence), server_state, client_state,
      server_log and client_log (without O(artifacts_dir)), round, elapsed.
  returned: success
  type: list
  elements: dict
summary:
  description:
    - pairs, passed, failed, all_passed, min/avg/max_bandwidth_gbps, threshold, diagnoses (codes of failed pairs).
    - rails, one entry per rail tested with index, network, resource, nic, interfaces, pci_addresses, ipam_range and the
      same counts and bandwidths for that rail's pairs.
  returned: success
  type: dict
report_markdown:
  description: The report in Markdown.
  returned: success, without O(artifacts_dir)
  type: str
report_html:
  description: The report as a self-contained HTML page with inline SVG charts.
  returned: success, without O(artifacts_dir)
  type: str
rounds:
  description: The rounds the pairs ran in, in order, with index and pairs (their indexes). No node is in two pairs of a
    round.
  returned: always
  type: list
  elements: dict
  sample: [{"index": 0, "pairs": [0, 2]}, {"index": 1, "pairs": [1, 3]}]
artifacts:
  description: The files written to O(artifacts_dir).
  returned: when O(artifacts_dir) is set and not in check mode
  type: list
  elements: str
pods:
  description: In check mode, the pod manifests that would be created.
  returned: check mode
  type: list
  elements: dict
pods_left:
  description: Pods of this run still present after clean-up (empty unless the API refused to delete them).
  returned: success
  type: list
  elements: str
"""


from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.module_base import ClusterModule
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.connection import cluster_name
from ansible_collections.gpudirect.openshift.plugins.module_utils.reports import bandwidth_report
from ansible_collections.gpudirect.openshift.plugins.module_utils.verify.bandwidth_plan import (
    SettingsError,
    perftest_args,
    settings_from,
)
from ansible_collections.gpudirect.openshift.plugins.module_utils.verify.bandwidth_verdicts import (
    failure_message,
    summarize,
)
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.bandwidth_run import BandwidthTest
from ansible_collections.gpudirect.openshift.plugins.module_utils import names


def argument_spec():
    return dict(
        configuration=dict(type="dict", default={}),
        method=dict(type="str", choices=["shared_device", "host_device", "sriov_legacy"]),
        fabric=dict(type="str", choices=["roce", "infiniband"]),
        namespace=dict(type="str"),
        network=dict(type="str"),
        resources=dict(type="dict"),
        rails=dict(type="str", default="all", choices=["all", "first"]),
        gpu_resource=dict(type="str", default="nvidia.com/gpu"),
        gpu_rdma_mode=dict(type="str", choices=["dmabuf", "peermem", "none"]),
        gpu_index=dict(type="int", default=0),
        image=dict(type="str", required=True),
        image_pull_policy=dict(type="str", default="IfNotPresent", choices=["Always", "IfNotPresent", "Never"]),
        binary=dict(type="str", default="ib_write_bw"),
        rdma_device=dict(type="str"),
        nic_ports=dict(type="list", elements="dict", default=[]),
        link_rate_gbps=dict(type="float"),
        threshold=dict(type="float"),
        rdma_cm=dict(type="bool", default=True),
        gid_index=dict(type="int"),
        qps=dict(type="int", default=16),
        message_size=dict(type="int", default=65536),
        sweep=dict(type="bool", default=False),
        iterations=dict(type="int", default=5000),
        duration=dict(type="int", default=10),
        port=dict(type="int", default=18515),
        extra_args=dict(type="list", elements="str", default=[]),
        secondary_interface=dict(type="str", default="net1"),
        nodes=dict(type="list", elements="str", default=[]),
        node_selector=dict(type="dict", default={}),
        service_account=dict(type="str"),
        start_timeout=dict(type="int", default=600),
        run_timeout=dict(type="int"),
        pending_grace_period=dict(type="int", default=60),
        cleanup_timeout=dict(type="int", default=120),
        parallel_pairs=dict(type="int", default=16),
        parallel_rails=dict(type="bool", default=True),
        artifacts_dir=dict(type="path"),
        cluster_name=dict(type="str"),
    )


def main():
    module = ClusterModule(argument_spec(), stop_on_sigterm=True)
    options = module.options
    if not names.is_image_reference(options["image"]):
        module.fail_json(msg="image (verify_image): %r is not an image reference; use %s"
                         % (options["image"], names.IMAGE_REFERENCE_HINT))
    try:
        # artifacts_dir and cluster_name are the reports', the rest the test's settings.
        settings = settings_from(**{key: value for key, value in options.items()
                                    if key not in ("artifacts_dir", "cluster_name")})
    except (SettingsError, ValueError, TypeError) as exc:
        module.fail_json(msg="Invalid options: %s" % exc)
    arguments = " ".join(perftest_args(settings))
    outcome = module.run(lambda: BandwidthTest(module.cluster, settings).run(check_mode=module.check_mode),
                         "The bandwidth test failed")

    if module.check_mode:
        module.exit_json(changed=False, passed=False, run_id=outcome["run_id"], arguments=arguments,
                         pairs=outcome["pairs"], pods=outcome["pods"], rounds=outcome["rounds"])

    pairs = outcome["pairs"]
    summary = summarize(pairs, settings["threshold"])
    name = options["cluster_name"] or cluster_name(module.cluster.api_host()) or "cluster"
    report_input = {"pairs": pairs, "summary": summary, "cluster": name,
                    "configuration": settings["configuration_label"], "binary": settings["binary"],
                    "arguments": arguments}
    result = dict(
        changed=False,
        passed=summary["all_passed"],
        run_id=outcome["run_id"],
        cluster_name=name,
        arguments=arguments,
        pairs=pairs,
        summary=summary,
        rounds=outcome["rounds"],
        pods_left=outcome["pods_left"],
        stale_pods_deleted=outcome["stale_pods_deleted"],
    )
    message = None
    if outcome["pods_left"]:
        message = "Pods of the bandwidth test are left behind: %s (%s)" % (
            ", ".join(outcome["pods_left"]), outcome.get("cleanup_error") or "still terminating")
    elif not summary["all_passed"]:
        message = failure_message(pairs)
    if options["artifacts_dir"]:
        try:
            result["artifacts"] = bandwidth_report.write_artifacts(options["artifacts_dir"], report_input, result,
                                                                   settings, message)
        except OSError as exc:
            module.fail_json(msg="Cannot write the verification artifacts to %s: %s" % (options["artifacts_dir"], exc))
        result["pairs"] = [{k: v for k, v in pair.items() if k not in ("server_log", "client_log")} for pair in pairs]
    else:
        result.update(report_markdown=bandwidth_report.markdown(report_input),
                      report_html=bandwidth_report.html(report_input))
    if message:
        module.fail_json(msg=message, **result)
    rails = len(settings["rails"])
    module.exit_json(msg="GPUDirect RDMA bandwidth test passed for %d pair(s)%s: min %.2f Gb/s, avg %.2f Gb/s" % (
        summary["pairs"], " on %d rails" % rails if rails > 1 else "", summary["min_bandwidth_gbps"],
        summary["avg_bandwidth_gbps"]),
        **result)


if __name__ == "__main__":
    main()
