#!/usr/bin/python
# Copyright: (c) 2025, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
---
module: gpudirect_manifests
short_description: Render the GPUDirect RDMA manifests of one of the six configurations
version_added: 0.1.0
author: gpudirect.openshift maintainers (@gpudirect)
description:
  - Validates the C(gpudirect_rdma_*) variables and renders every object of the chosen configuration
    (RDMA method C(shared_device), C(host_device) or C(sriov_legacy) over C(roce) or C(infiniband)),
    namely the opt-in host preparation MachineConfig, NodeFeatureDiscovery, SriovOperatorConfig, NicClusterPolicy,
    GPU ClusterPolicy, SR-IOV pool config and node policies, and the network CRs.
  - Pure rendering on the controller. It never contacts a cluster, so it works before any operator or CRD exists.
  - All validation errors are returned at once, each naming the variable it is about.
  - The variables are described in docs/input-model.md of the collection.
options:
  variables:
    description:
      - The input model, a mapping of C(gpudirect_rdma_*) variable names to values, for example
        C(gpudirect_rdma_method) set to C(shared_device) and C(gpudirect_rdma_fabric) set to C(roce).
      - Keys without the C(gpudirect_rdma_) prefix and unknown C(gpudirect_rdma_*) names are errors.
    type: dict
    required: true
  previous_manifests:
    description:
      - Manifests rendered for the configuration currently on the cluster (the C(manifests) of an earlier
        run, or plain objects). When given, RV(stale_objects) lists what to delete before applying the new ones.
    type: list
    elements: dict
  include_machineconfigs_in_stale:
    description:
      - Also list MachineConfigs that are no longer rendered in RV(stale_objects). Deleting one reboots the pool.
    type: bool
    default: false
  fail_on_errors:
    description:
      - Fail the task when the variables do not validate. With C(false) the task succeeds and RV(errors) holds the
        problems.
    type: bool
    default: true
  operators:
    description:
      - The operators whose OLM objects to render, each a mapping as the P(gpudirect.openshift.operators#lookup) lookup
        returns it (C(role), C(package), C(namespace), C(channel), C(source) or C(catalog_source),
        C(source_namespace), C(install_plan_approval), C(starting_csv), C(subscription_config)).
      - With O(olm_manifests), RV(olm_manifests) holds the Namespace, OperatorGroup and Subscription of each of them
        (an empty list takes the operator catalogue's defaults). Without a channel the Subscription follows the
        package's default channel.
      - An operator's C(namespace) also places what the model renders into it (C(namespace_alias) names the
        C(gpudirect_rdma_*) variable it sets), so an operator and its custom resources never part.
    type: list
    elements: dict
  olm_manifests:
    description:
      - Also render the OLM objects of O(operators) (render-only use; site.yml installs through the olm_operator
        module).
    type: bool
    default: false
  output_format:
    description:
      - C(files) returns the objects for one file each (RV(manifests), RV(olm_manifests)).
      - C(gitops) also returns RV(gitops_files), a kustomize tree for Argo CD (docs/gitops.md) built from the same
        objects; it needs O(olm_manifests). An operator with Manual approval needs its C(starting_csv), which the tree's
        approver Job approves.
    type: str
    choices: [files, gitops]
    default: files
  gitops_cluster:
    description:
      - The name of the cluster's overlay directory (C(overlays/<name>)) with O(output_format=gitops).
    type: str
    default: cluster
  approver_image:
    description:
      - The image of the InstallPlan approver Job with O(output_format=gitops) (needs C(sh) and C(kubectl)). The default
        is the OpenShift C(cli) image stream of the cluster's internal registry.
    type: str
    default: image-registry.openshift-image-registry.svc:5000/openshift/cli:latest
  validate_only:
    description:
      - Only check the variables, accepting C(gpudirect_rdma_nic_selection=auto) before the NIC facts are known.
        RV(manifests) is then empty.
    type: bool
    default: false
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Rendering changes nothing, so check mode returns the same result.
  diff_mode:
    support: none
  platform:
    platforms: posix
notes:
  - Run it on localhost; the render-only playbook C(gpudirect.openshift.render) writes the result as YAML files.
seealso:
  - name: Input model
    description: Every C(gpudirect_rdma_*) variable, its default and the checks made.
    link: https://github.com/gpudirect/openshift/blob/main/docs/input-model.md
"""

EXAMPLES = r"""
- name: Render shared device RDMA over RoCE
  gpudirect.openshift.gpudirect_manifests:
    variables:
      gpudirect_rdma_method: shared_device
      gpudirect_rdma_fabric: roce
      gpudirect_rdma_nic_interfaces: [ens8f0np0]
      gpudirect_rdma_ipam_range: 192.168.2.0/24
      gpudirect_rdma_ipam_gateway: 192.168.2.1
  register: rendered

- name: Render SR-IOV legacy over InfiniBand from collected NIC facts and list what a switch must delete
  gpudirect.openshift.gpudirect_manifests:
    variables:
      gpudirect_rdma_method: sriov_legacy
      gpudirect_rdma_fabric: infiniband
      gpudirect_rdma_nic_selection: auto
      gpudirect_rdma_nic_facts: "{{ nic_facts }}"
      gpudirect_rdma_num_vfs: 8
      gpudirect_rdma_ipam_range: 192.168.8.0/24
    previous_manifests: "{{ rendered.manifests }}"
  register: switch

- name: Pass every gpudirect_rdma_* variable of the play
  gpudirect.openshift.gpudirect_manifests:
    variables: "{{ dict(names | zip(query('ansible.builtin.vars', *names))) }}"
  vars:
    names: "{{ query('ansible.builtin.varnames', '^gpudirect_rdma_') }}"
"""

RETURN = r"""
manifests:
  description:
    - Every object in apply order. C(order) is unique and ascending; C(file) is C(<order>-<kind>-<name>.yaml) with the
      order in four digits, gapped (the phase's sync wave x 100 plus the object's position; 1000 is the first
      MachineConfig, 8000 the first network), so that another object or operator renames no other file.
  returned: always
  type: list
  elements: dict
  sample:
    - phase: nic_cluster_policy
      order: 4000
      file: 4000-nicclusterpolicy-nic-cluster-policy.yaml
      manifest: {apiVersion: mellanox.com/v1alpha1, kind: NicClusterPolicy, metadata: {name: nic-cluster-policy}, spec:
        {}}
phases:
  description: File names grouped by phase (machineconfig, nfd, sriov_operator, nic_cluster_policy, gpu_cluster_policy,
    sriov_pool, sriov_policy, network).
  returned: always
  type: dict
  sample: {nfd: [2000-nodefeaturediscovery-nfd-instance.yaml]}
teardown_order:
  description: Identities (apiVersion, kind, metadata name/namespace) of the rendered objects in safe delete order.
  returned: always
  type: list
  elements: dict
stale_objects:
  description:
    - Objects of O(previous_manifests) to remove before applying, in safe order (network CRs, SR-IOV policies,
      then the NicClusterPolicy when its device plugin changes). C(action) is C(delete) or C(replace).
  returned: when O(previous_manifests) is given
  type: list
  elements: dict
  sample:
    - action: delete
      reason: not part of the new configuration
      phase: network
      order: 800
      manifest: {apiVersion: sriovnetwork.openshift.io/v1, kind: SriovNetwork, metadata: {name: sriov-network,
        namespace: openshift-sriov-network-operator}}
errors:
  description: Every validation error, each starting with the variable it is about. Empty when the variables are valid.
  returned: always
  type: list
  elements: str
  sample: ["gpudirect_rdma_ipam_range: 192.168.2.0/33 is not a valid CIDR"]
input_warnings:
  description: Non-fatal remarks about the input (also emitted as task warnings).
  returned: always
  type: list
  elements: str
images:
  description:
    - Every operand image the rendered objects name (NicClusterPolicy components, the GPU driver when pinned, the NFD
      operand when set), with the object and field that names it; the list to mirror for a disconnected cluster.
    - Images the operators pick by themselves and the operator bundles' own images are not in it; the PackageManifest
      of each operator lists those (C(status.channels[].currentCSVDesc.relatedImages)).
  returned: always
  type: list
  elements: dict
  sample: [{"object": "NicClusterPolicy/nic-cluster-policy", "field": "spec.ofedDriver", "image":
    "nvcr.io/nvidia/mellanox/doca-driver:24.10-0.7.0.0-0"}]
olm_manifests:
  description:
    - Namespace, OperatorGroup (targeting its own namespace) and Subscription of NFD, the SR-IOV Network Operator, the
      NVIDIA Network Operator and the NVIDIA GPU Operator, in install order, one block of ten numbers per operator
      (C(0010)-C(0012) the first, C(0020)-C(0022) the second ...); C(file) names sort before every entry of
      RV(manifests). The custom resources of RV(manifests) can be created only once each operator's CSV has succeeded.
  returned: when O(olm_manifests) is true and the input is valid
  type: list
  elements: dict
  sample:
    - order: 10
      file: 0010-namespace-openshift-nfd.yaml
      manifest: {apiVersion: v1, kind: Namespace, metadata: {name: openshift-nfd}}
gitops_files:
  description:
    - With O(output_format=gitops), every file of the kustomize tree as C(path) (relative, e.g.
      C(bases/operators/0010-namespace-openshift-nfd.yaml)) and C(manifest), in a stable order. Each object carries its
      C(argocd.argoproj.io/sync-wave) (the render phase's base, from 0 for the OLM objects through 10 to 80 to 90 for
      the verification Job) and, for an operator's custom resource, C(argocd.argoproj.io/sync-options)
      C(SkipDryRunOnMissingResource=true).
  returned: when O(output_format=gitops) and the input is valid
  type: list
  elements: dict
  sample:
    - path: overlays/cluster/kustomization.yaml
      manifest: {apiVersion: kustomize.config.k8s.io/v1beta1, kind: Kustomization, resources: [../../bases/operators]}
workload:
  description:
    - A pod template for a job that uses the rails (one GPU per rail, every rail's resource and network, C(NCCL_IB_HCA)
      with the rails' RDMA devices from the NIC facts, C(NCCL_IB_GID_INDEX) for RoCE), with C(file), C(manifest) and
      C(notes). Not applied; C(playbooks/render.yml) writes it. Empty with errors or O(validate_only).
  returned: always
  type: dict
memlock_pool:
  description:
    - The custom MachineConfigPool that gets the CRI-O memlock MachineConfig (C(crio_memlock) with
      C(gpudirect_rdma_memlock_pool) other than the main role), else null. Also with O(validate_only), where
      RV(summary) is empty, so that preflight checks that this pool exists before the NIC facts are known.
  returned: always
  type: str
  sample: gpudirect-rdma
waits:
  description:
    - Readiness waits the rendered objects need, by name, as M(gpudirect.openshift.resource_wait) entries without
      C(timeout) and C(failure_grace_period) (the roles add theirs).
    - C(sriov_node_states) (when SR-IOV policies are rendered) holds only once every SriovNetworkNodeState carries
      each policy in its spec for the PFs the policy selects, reports the policy's VF count on them, has both drain
      annotations C(Idle) and C(syncStatus) C(Succeeded); a C(Succeeded) left from the previous sync does not satisfy
      it.
    - C(sriov_interfaces_reported) (with SR-IOV policies) holds once every SriovNetworkNodeState reports its
      interfaces; before that the SR-IOV operator's admission webhook refuses every policy.
    - Both are counted waits (C(count) with C(each_failure_condition), C(each_failure_message) and C(each_progress));
      each watch event evaluates the one node state it carries, so their cost per event does not grow with the nodes.
  returned: always
  type: dict
  sample: {"sriov_node_states": {"kind": "SriovNetworkNodeState", "namespace": "openshift-sriov-network-operator"}}
summary:
  description:
    - Configuration label and number (1-6), pod resources, networks and their pod annotation, NIC selection and expected
      reboots.
    - C(udev_from_facts) lists the ports whose udev rules come from facts (node, PCI address, address, netdev, fabric);
      the preflight and rdma roles compare them with the SR-IOV node states before a policy is written.
    - With C(gpudirect_rdma_node_groups), every group's resources, networks and NICs, and C(node_groups), one entry per
      group (name, node selector, configuration, resources, networks, MachineConfigPool). C(configuration) names every
      group's; C(method), C(fabric) and the other keys are the first group's.
  returned: always
  type: dict
  sample:
    configuration: shared_device/roce
    configuration_number: 1
    resources: [rdma/rdma_shared_device_eth]
    pod_resources: {rdma/rdma_shared_device_eth: 1}
    networks: [{kind: MacvlanNetwork, name: rdmashared-net, namespace: default, annotation: rdmashared-net}]
    reboots: []
    udev_from_facts: []
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpudirect.openshift.plugins.module_utils import names
from ansible_collections.gpudirect.openshift.plugins.module_utils.render import gitops
from ansible_collections.gpudirect.openshift.plugins.module_utils.render.olm import olm_manifests
from ansible_collections.gpudirect.openshift.plugins.module_utils.render.plan import (
    render_all, stale_objects, validate_checks)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            variables=dict(type="dict", required=True),
            previous_manifests=dict(type="list", elements="dict"),
            include_machineconfigs_in_stale=dict(type="bool", default=False),
            fail_on_errors=dict(type="bool", default=True),
            validate_only=dict(type="bool", default=False),
            operators=dict(type="list", elements="dict"),
            olm_manifests=dict(type="bool", default=False),
            output_format=dict(type="str", default="files", choices=["files", "gitops"]),
            gitops_cluster=dict(type="str", default="cluster"),
            approver_image=dict(type="str", default=gitops.DEFAULT_APPROVER_IMAGE),
        ),
        supports_check_mode=True,
    )
    # The operators' namespaces are one fact: the catalogue's (with <role>_namespace) also places the custom
    # resources and SR-IOV objects the model renders into them.
    for entry in module.params["operators"] or []:
        if entry.get("namespace_alias") and entry.get("namespace"):
            module.params["variables"][entry["namespace_alias"]] = entry["namespace"]
    if module.params["validate_only"]:
        checks = validate_checks(module.params["variables"])
        result = {"errors": checks["errors"], "warnings": checks["warnings"], "manifests": [], "phases": {},
                  "teardown_order": [], "summary": {}, "images": [], "waits": {},
                  "memlock_pool": checks["memlock_pool"]}
    else:
        result = render_all(module.params["variables"])
        result["memlock_pool"] = result["summary"].get("memlock_pool")
    output = dict(
        changed=False,
        manifests=result["manifests"],
        phases=result["phases"],
        teardown_order=result["teardown_order"],
        errors=result["errors"],
        input_warnings=result["warnings"],
        summary=result["summary"],
        images=result["images"],
        waits=result["waits"],
        workload=result.get("workload") or {},
        memlock_pool=result["memlock_pool"],
    )
    for warning in result["warnings"]:
        module.warn(warning)
    if module.params["previous_manifests"] is not None and not result["errors"]:
        output["stale_objects"] = stale_objects(module.params["previous_manifests"], result["manifests"],
                                                include_machineconfigs=module.params["include_machineconfigs_in_stale"])
    if module.params["olm_manifests"] and not result["errors"] and not module.params["validate_only"]:
        output["olm_manifests"], olm_errors = olm_manifests(module.params["variables"],
                                                            module.params["operators"] or None)
        if olm_errors:
            output["errors"] = olm_errors
            if module.params["fail_on_errors"]:
                module.fail_json(msg="%d invalid operator setting(s): %s" % (len(olm_errors), "; ".join(olm_errors)),
                                 **output)
    if module.params["output_format"] == "gitops" and not output["errors"] and not module.params["validate_only"]:
        gitops_errors = [] if module.params["olm_manifests"] else [
            "olm_manifests: the GitOps tree holds the operators; set olm_manifests: true"]
        if not names.is_dns1123_label(module.params["gitops_cluster"]):
            gitops_errors.append("gitops_cluster: %r is not a DNS-1123 label (it names the overlay directory)"
                                 % module.params["gitops_cluster"])
        gitops_errors.extend(gitops.approval_errors(output.get("olm_manifests"), module.params["operators"]))
        if gitops_errors:
            output["errors"] = gitops_errors
            if module.params["fail_on_errors"]:
                module.fail_json(msg="; ".join(gitops_errors), **output)
        else:
            output["gitops_files"] = gitops.gitops_tree(
                output["olm_manifests"], result["manifests"], workload=result.get("workload"),
                cluster=module.params["gitops_cluster"], owners=gitops.node_group_owners(module.params["variables"]),
                approver_image=module.params["approver_image"])
    if result["errors"] and module.params["fail_on_errors"]:
        module.fail_json(msg="%d invalid gpudirect_rdma variable(s): %s"
                         % (len(result["errors"]), "; ".join(result["errors"])), **output)
    module.exit_json(**output)


if __name__ == "__main__":
    main()
