#!/usr/bin/python
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
---
module: plan_status
short_description: Compare an OpenShift cluster with a GPUDirect RDMA plan, in one list request per kind
version_added: 0.1.0
author: gpudirect.openshift maintainers (@gpudirect)
description:
  - Lists each kind it needs once (ClusterVersion, nodes, catalog sources, package manifests, operator groups,
    subscriptions, NicClusterPolicies, namespaces, cluster service versions, and the kinds of O(manifests),
    O(prune_kinds) and O(waits)) and answers, from those lists, whether converging would change or wait on anything.
  - The decision is made by the code that converges, run without writes on the lists - the installer of
    M(gpudirect.openshift.olm_operator) for each of O(operators), the applier of M(gpudirect.openshift.apply_manifests)
    for O(manifests) and O(prune_kinds), and the conditions of M(gpudirect.openshift.resource_wait) for O(waits) - so a
    cluster reported RV(in_sync) is one where those modules would change nothing and return at once.
  - Also returns the cluster information of M(gpudirect.openshift.cluster_info) (without C(/version)) and the
    catalog sources, package manifests, operator groups, subscriptions and NicClusterPolicies it read, which the
    C(preflight) role checks before any write.
  - Never changes anything.
options:
  operator_roles:
    description:
      - Which role's C(<role>_*) variables set each package's options (package name to role name), so that a problem
        names the variable to set (C(nfd_source)) rather than the option (C(source)).
    type: dict
    default: {}
  operators:
    description:
      - The operators to check, each with the options M(gpudirect.openshift.olm_operator) would get. Empty strings
        mean unset, as in the roles.
    type: list
    elements: dict
    default: []
    suboptions:
      package:
        description: Package name, for example V(nfd).
        type: str
        required: true
      namespace:
        description: Namespace the operator is installed into.
        type: str
        required: true
      channel:
        description: Subscription channel; unset means the package's default channel.
        type: str
      starting_csv:
        description: CSV to pin; unset means the channel's current CSV.
        type: str
      source:
        description:
          - Catalog source; unset means the one the package manifest comes from (the existing Subscription's when
            several catalogs list the package).
        type: str
      source_namespace:
        description: Namespace of the catalog source; unset means the one the package manifest names.
        type: str
      package_namespace:
        description: Namespace holding the package manifests.
        type: str
        default: openshift-marketplace
      install_plan_approval:
        description: InstallPlan approval of the Subscription.
        type: str
        choices: [Automatic, Manual]
        default: Automatic
      subscription_name:
        description: Subscription name; unset means the package name.
        type: str
      subscription_config:
        description: The Subscription's C(spec.config).
        type: dict
      operator_group_name:
        description: Name of an OperatorGroup to create.
        type: str
      target_namespaces:
        description: Namespaces the operator watches; unset lets the CSV's install modes decide.
        type: list
        elements: str
      namespace_labels:
        description: Labels the namespace must carry.
        type: dict
        default: {"openshift.io/cluster-monitoring": "true"}
      namespace_annotations:
        description: Annotations the namespace must carry.
        type: dict
        default: {}
  manifests:
    description: Objects that must exist as given (the same list M(gpudirect.openshift.apply_manifests) would apply).
    type: list
    elements: dict
    default: []
  prune_kinds:
    description:
      - Kinds, as C(apiVersion/Kind), whose objects labelled O(prune_label_selector) must all be in O(manifests);
        any other is a leftover that a converge would remove.
    type: list
    elements: str
    default: []
  prune_label_selector:
    description: Label selector of the objects the collection manages.
    type: str
    default: app.kubernetes.io/managed-by=gpudirect.openshift
  waits:
    description:
      - Readiness conditions that must already hold, with the options of M(gpudirect.openshift.resource_wait). A
        condition that does not hold is a difference (a converge would wait on it).
    type: list
    elements: dict
    default: []
  compare:
    description:
      - Compare at all. With V(false) only the cluster information and the lists are returned and RV(in_sync) is null,
        for callers that have no complete plan yet.
    type: bool
    default: true
  nodes:
    description: Only report these nodes (by name) in RV(cluster).
    type: list
    elements: str
  label_selectors:
    description: Only report nodes matching all of these label selectors in RV(cluster).
    type: list
    elements: str
  node_sample:
    description:
      - At most this many nodes in RV(cluster) (C(nodes)) and names per list of its C(summary); the summary counts
        every node. Keeps the result small on large clusters (M(gpudirect.openshift.cluster_info) returns them all).
    type: int
    default: 20
  node_groups:
    description:
      - Node groups (the plan summary's C(node_groups)) whose nodes to report in RV(node_groups), picked from the
        same one list of the nodes (preflight checks that each group selects nodes, and no node two groups).
      - Each entry has C(name) and C(label_selectors) (all of which a node of the group matches); other keys are
        ignored.
    type: list
    elements: dict
    default: []
  machine_config_pools:
    description:
      - MachineConfigPools whose existence to report in RV(machine_config_pools), read with the same one list of
        the kind that the O(waits) on pools use (preflight checks the pool of the CRI-O memlock MachineConfig).
    type: list
    elements: str
    default: []
  plan_summary:
    description:
      - The C(summary) of M(gpudirect.openshift.gpudirect_manifests) for the plan, whose NIC selection and node groups
        RV(problems) checks against the SR-IOV node states and the nodes read.
    type: dict
    default: {}
  memlock_pool:
    description:
      - The MachineConfigPool of the CRI-O memlock MachineConfig (the plan's C(memlock_pool)), when it is a custom
        pool. RV(problems) says when no node carries its role or it does not exist; it is read as one of
        O(machine_config_pools).
    type: str
  num_vfs:
    description: The VF count of the plan (C(gpudirect_rdma_num_vfs)), which RV(problems) checks against the ports'
      limits.
    type: raw
  allow_unsupported_versions:
    description:
      - Run on an OpenShift version, and install operator versions, that the support table (docs/support.md) does not
        list (C(preflight_allow_unsupported_versions)); otherwise RV(problems) refuses them.
    type: bool
    default: false
  upgrade_packages:
    description:
      - The packages RV(upgrade_plan) may plan (C(gpudirect_upgrade_packages)); empty means every operator with Manual
        approval that OLM offers an upgrade for.
    type: list
    elements: str
    default: []
extends_documentation_fragment:
  - gpudirect.openshift.cluster_connection
  - gpudirect.openshift.wait_entries
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
requirements:
  - jmespath
notes:
  - A difference is reported for anything the converging modules would do, so RV(in_sync) errs on the side of
    converging. Only objects the collection labels are considered leftovers.
  - The number of API requests depends on the number of kinds, never on the number of nodes or objects.
seealso:
  - module: gpudirect.openshift.cluster_info
  - module: gpudirect.openshift.olm_operator
  - module: gpudirect.openshift.apply_manifests
  - module: gpudirect.openshift.resource_wait
"""

EXAMPLES = r"""
- name: Does the cluster already match the plan?
  gpudirect.openshift.plan_status:
    operators:
      - package: nfd
        namespace: openshift-nfd
    manifests: "{{ plan.manifests | map(attribute='manifest') | list }}"
    waits:
      - title: NicClusterPolicy ready
        api_version: mellanox.com/v1alpha1
        kind: NicClusterPolicy
        name: nic-cluster-policy
        condition: "status.state == 'ready'"
  register: status

- name: Say what a converge would do
  ansible.builtin.debug:
    msg: "{{ status.differences if not status.in_sync else 'nothing to do' }}"
"""

RETURN = r"""
in_sync:
  description: True when nothing differs; null when O(compare=false).
  returned: always
  type: bool
differences:
  description: One sentence per difference, in the order a converge meets them.
  returned: always
  type: list
  elements: str
  sample: ["Subscription nvidia-gpu-operator/gpu-operator-certified would be created", "NicClusterPolicy ready: not
    ready (ofed: notReady)"]
leftovers:
  description:
    - The objects labelled O(prune_label_selector) of O(prune_kinds) that O(manifests) no longer holds, which a prune
      would delete (C(Kind namespace/name)); null when O(compare=false). A caller may skip its prune when it is empty.
  returned: always
  type: list
  elements: str
  sample: ["MacvlanNetwork rdmashared-net"]
checked:
  description: How much was compared.
  returned: always
  type: dict
  sample: {"operators": 4, "manifests": 5, "waits": 7, "prune_kinds": 7, "kinds_listed": 20}
requests:
  description: API requests made (discovery excluded).
  returned: always
  type: int
  sample: 20
cluster:
  description:
    - What M(gpudirect.openshift.cluster_info) returns (C(openshift), C(nodes), C(summary),
      C(sriov_node_states_served)), with C(kubernetes) null, capped by O(node_sample) - C(nodes) holds the first nodes
      by name and the C(summary) lists (C(gpu_nodes), C(nic_nodes), C(gpu_nic_nodes)) the first names, while
      C(node_count), C(ready_nodes), C(worker_nodes), C(gpu_node_count), C(nic_node_count), C(gpu_nic_node_count),
      C(role_counts) and the GPU totals count every node.
    - C(sriov_reports) holds each distinct set of interfaces the SR-IOV config daemons report, with the first node that
      reports it and how many do (C(node), C(nodes), C(interfaces)).
  returned: always
  type: dict
catalog_sources:
  description: CatalogSources in C(openshift-marketplace), as read.
  returned: always
  type: list
  elements: dict
package_manifests:
  description:
    - PackageManifests of the O(operators) packages (name, labels, catalog, default channel, channels with their current
      CSV).
    - A package several catalogs hold is listed once per catalog, all under the package's name.
  returned: always
  type: list
  elements: dict
operator_package_manifests:
  description:
    - For each of O(operators), in order, the entry of RV(package_manifests) it installs from (the one of its catalog
      source; see M(gpudirect.openshift.olm_operator)), or null when none fits (RV(operator_problems) then says why,
      unless the package is in no catalog at all).
  returned: always
  type: list
  elements: dict
operator_groups:
  description: OperatorGroups of all namespaces, as read.
  returned: always
  type: list
  elements: dict
subscriptions:
  description: Subscriptions of all namespaces, as read.
  returned: always
  type: list
  elements: dict
node_groups:
  description: Each of O(node_groups) (C(item)) with the names of the nodes it selects (C(nodes)).
  returned: always
  type: list
  elements: dict
  sample: [{"item": {"name": "roce", "label_selectors": ["gpudirect.example.com/rdma-group=roce"]}, "nodes": ["roce-0",
    "roce-1"]}]
machine_config_pools:
  description: The names of O(machine_config_pools) that exist (none while the kind is not served).
  returned: always
  type: list
  elements: str
  sample: ["gpudirect-rdma"]
nic_cluster_policies:
  description: NicClusterPolicies, as read (empty while the kind is not served).
  returned: always
  type: list
  elements: dict
operator_versions:
  description:
    - Per operator (when O(compare) is on), the channel, the CSV a converge keeps or installs (C(csv)), the installed
      CSV, the channel's head, the package's default channel and the upgrade OLM offers (C(upgrade_available), null
      when none). An available upgrade is not a difference; see M(gpudirect.openshift.olm_operator).
  returned: always
  type: list
  elements: dict
  sample: [{"package": "gpu-operator-certified", "namespace": "nvidia-gpu-operator", "channel": "v25.3",
            "default_channel": "v25.10", "csv": "gpu-operator-certified.v25.3.1",
            "installed_csv": "gpu-operator-certified.v25.3.1", "channel_head": "gpu-operator-certified.v25.3.4",
            "upgrade_available": "gpu-operator-certified.v25.3.4"}]
disruptions:
  description:
    - Each change a converge would make that drains or reboots nodes (creating, changing or deleting a MachineConfig,
      an SR-IOV policy change that reaches existing VFs or the firmware's VF count, an RDMA subsystem mode change),
      with the pool, the nodes and why, from the planned O(manifests) against the objects and SR-IOV node states read
      (render/disruption.py cites the upstream code). C(text) is one sentence saying all of it. Empty when
      O(compare=false).
  returned: always
  type: list
  elements: dict
  sample: [{"object": "MachineConfig 99-worker-gpudirect-rdma", "action": "create", "effect": "drain and reboot",
            "pool": "worker", "nodes": ["worker-0", "worker-1"], "reasons": ["a new MachineConfig: ..."], "text":
            "..."}]
disruption_of_configured_nodes:
  description:
    - True when RV(disruptions) is not empty and the cluster already carries a configuration of the collection (a
      MachineConfig, SR-IOV policy or pool config it labelled), so the nodes that drain or reboot already work.
  returned: always
  type: bool
problems:
  description:
    - Every reason the cluster is not ready for the collection, known before any write, each naming the fix (the rules
      of plugins/module_utils/rules/preflight.py on the lists read, the plan and the options) - no ClusterVersion, an
      OpenShift or operator version outside the support table, no worker node, catalogs, channels, CSVs and
      OperatorGroups, Subscriptions in another namespace, RV(operator_problems), a foreign NicClusterPolicy, NIC
      variables against the SR-IOV node states, node groups, the memlock pool. Empty when everything is fine.
  returned: always
  type: list
  elements: str
  sample: ["The cluster has no worker nodes."]
upgrade_plan:
  description:
    - The operator upgrades a run with C(gpudirect_upgrade=true) makes (plugins/module_utils/rules/upgrade_plan.py) -
      each operator of O(operators) with Manual approval (and in O(upgrade_packages) when given) that OLM offers an
      upgrade for, in install order, with its role (O(operator_roles)), the CSVs and versions from and to, and the line
      shown. Empty when O(compare=false).
  returned: always
  type: list
  elements: dict
  sample: [{"package": "gpu-operator-certified", "namespace": "nvidia-gpu-operator", "channel": "v25.3",
            "role": "nvidia_gpu_operator", "from": "gpu-operator-certified.v25.3.1", "to":
            "gpu-operator-certified.v25.3.4", "from_version": "25.3.1", "to_version": "25.3.4",
            "line": "gpu-operator-certified in nvidia-gpu-operator: gpu-operator-certified.v25.3.1 ->
            gpu-operator-certified.v25.3.4 (channel v25.3)"}]
upgrade_automatic:
  description: The packages of O(operators) with Automatic approval, which OLM upgrades by itself.
  returned: always
  type: list
  elements: str
upgrade_operand_versions:
  description:
    - The operand release variables to render for the installed (C(before)) and the offered (C(after)) operator
      versions of RV(upgrade_plan); an empty value keeps the renderer's choice.
  returned: always
  type: dict
  sample: {"before": {"gpudirect_rdma_gpu_operator_version": "25.3.1", "gpudirect_rdma_network_operator_version": ""},
           "after": {"gpudirect_rdma_gpu_operator_version": "25.3.4", "gpudirect_rdma_network_operator_version": ""}}
operator_problems:
  description:
    - Why an operator's options cannot be honoured, known before any write (a version pin with Automatic approval;
      two approval modes in one namespace, counting O(operators) and the Subscriptions already there). The same
      checks M(gpudirect.openshift.olm_operator) makes before it writes.
  returned: always
  type: list
  elements: str
  sample: ["gpu-operator-certified: starting_csv=gpu-operator-certified.v25.3.1 with install_plan_approval=Automatic
    does not pin the version"]
"""

import copy

from ansible_collections.gpudirect.openshift.plugins.module_utils import vocabulary
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.module_base import ClusterModule
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.apply import parse_kind
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.conditions import ConditionError
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.drift import (
    CATALOG_SOURCE,
    MACHINE_CONFIG_POOL,
    MARKETPLACE,
    NIC_CLUSTER_POLICY,
    compare,
    names_to_read,
    prefetch_kinds,
)
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.info import NODE, SRIOV_NODE_STATE, gather
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.operator_installer import (
    OPERATOR_GROUP, PACKAGE_MANIFEST, SUBSCRIPTION)
from ansible_collections.gpudirect.openshift.plugins.module_utils.rules.olm_install import (
    OPERATOR_OPTIONS,
    operator_package_choices,
    operator_problems,
    planned_subscription,
)
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.snapshot import SnapshotClient, selected_nodes
from ansible_collections.gpudirect.openshift.plugins.module_utils.render import disruption
from ansible_collections.gpudirect.openshift.plugins.module_utils.rules import preflight, upgrade_plan
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.waits import WAIT_OPTIONS


def argument_spec():
    return dict(
        operators=dict(type="list", elements="dict", default=[], options=copy.deepcopy(OPERATOR_OPTIONS)),
        operator_roles=dict(type="dict", default={}),
        manifests=dict(type="list", elements="dict", default=[]),
        prune_kinds=dict(type="list", elements="str", default=[]),
        prune_label_selector=dict(type="str", default=vocabulary.MANAGED_BY_SELECTOR),
        waits=dict(type="list", elements="dict", default=[], options=copy.deepcopy(WAIT_OPTIONS)),
        compare=dict(type="bool", default=True),
        nodes=dict(type="list", elements="str"),
        label_selectors=dict(type="list", elements="str"),
        node_sample=dict(type="int", default=20),
        machine_config_pools=dict(type="list", elements="str", default=[]),
        node_groups=dict(type="list", elements="dict", default=[]),
        plan_summary=dict(type="dict", default={}),
        memlock_pool=dict(type="str"),
        num_vfs=dict(type="raw"),
        allow_unsupported_versions=dict(type="bool", default=False),
        upgrade_packages=dict(type="list", elements="str", default=[]),
    )


def trimmed_package(manifest):
    status = manifest.get("status") or {}
    meta = manifest.get("metadata") or {}
    return {
        "metadata": {"name": meta.get("name"), "namespace": meta.get("namespace"), "labels": meta.get("labels") or {}},
        "status": {
            "catalogSource": status.get("catalogSource"),
            "catalogSourceNamespace": status.get("catalogSourceNamespace"),
            "defaultChannel": status.get("defaultChannel"),
            "channels": [{"name": c.get("name"), "currentCSV": c.get("currentCSV"),
                          "entries": [e.get("name") for e in c.get("entries") or []],
                          "minKubeVersion": (c.get("currentCSVDesc") or {}).get("minKubeVersion")}
                         for c in status.get("channels") or []],
        },
    }


def problems_of(operators, subscriptions):
    """operator_problems: each operator against the Subscriptions there and the other planned operators."""
    planned = [planned_subscription(o) for o in operators]
    keys = {(p["metadata"]["namespace"], p["metadata"]["name"]) for p in planned}
    others = [s for s in subscriptions if (s["metadata"].get("namespace"), s["metadata"]["name"]) not in keys]
    return ["%s: %s" % (o["package"], p) for o in operators for p in operator_problems(o, others + planned)]


def main():
    # Only reads: the client never writes, whatever the task's check mode.
    module = ClusterModule(argument_spec(), client_options=dict(check_mode=True, rediscover_once=True))
    params = module.options
    pools = list(params["machine_config_pools"])
    if params["memlock_pool"] and params["memlock_pool"] not in pools:
        pools.append(params["memlock_pool"])

    def work():
        snapshot = SnapshotClient(module.cluster)
        if params["compare"]:
            kinds = prefetch_kinds(params["operators"], params["manifests"], params["waits"], params["prune_kinds"],
                                   sriov_states=True, machine_config_pools=bool(pools))
        else:
            # The SR-IOV node states say which interfaces, link types and VF limits the nodes have: preflight checks
            # the NIC variables against them (when the operator already runs).
            kinds = prefetch_kinds(params["operators"], [], [], [], sriov_states=True, olm_state=False,
                                   machine_config_pools=bool(pools))
        for api_version, kind, namespace, selector in kinds:
            snapshot.prefetch(api_version, kind, namespace, selector)
        for (api_version, kind), names in sorted(
                names_to_read(params["manifests"] if params["compare"] else []).items()):
            snapshot.prefetch_names(api_version, kind, names)
        info = gather(snapshot, node_names=params["nodes"], label_selectors=params["label_selectors"],
                      kubernetes_version=False, sriov_states=any(k[1] == SRIOV_NODE_STATE[1] for k in kinds),
                      sample=max(params["node_sample"], 0))
        differences = None
        versions = []
        leftovers = None
        if params["compare"]:
            leftovers = []
            differences = compare(snapshot, params["operators"], params["manifests"], params["waits"],
                                  params["prune_kinds"], params["prune_label_selector"], versions=versions,
                                  leftovers=leftovers)
        return snapshot, kinds, info, differences, versions, leftovers

    def disruptions_of(snapshot):
        """What the planned manifests drain and reboot, from the lists already read (no further request)."""
        if not params["compare"]:
            return {"disruptions": [], "configured": False}
        live_kinds = {(m.get("apiVersion"), m.get("kind")) for m in params["manifests"]}
        live_kinds |= {parse_kind(k) for k in params["prune_kinds"]}
        live = {(api_version, kind): snapshot.items(api_version, kind) for api_version, kind in sorted(live_kinds)}
        # Nodes carry a working configuration once any object the collection labels exists (a network, a policy, a
        # MachineConfig): a first configuration necessarily reboots, a later change is the user's decision.
        configured = any(disruption.managed(obj) for items in live.values() for obj in items)
        found = disruption.disruptions(params["manifests"], [obj for (_v, kind), items in live.items()
                                                             if kind in disruption.DISRUPTIVE_KINDS for obj in items],
                                       nodes=snapshot.items(*NODE), node_states=snapshot.items(*SRIOV_NODE_STATE),
                                       pools=snapshot.items(*MACHINE_CONFIG_POOL), prune_kinds=params["prune_kinds"],
                                       configured=configured)
        for entry in found["disruptions"]:
            entry["text"] = disruption.describe(entry)
        return found

    snapshot, kinds, info, differences, versions, leftovers = module.run(
        work, "Failed to read the cluster",
        handlers=[((ConditionError, ValueError), lambda exc: module.fail_json(msg="Invalid input: %s" % exc))])

    found = disruptions_of(snapshot)
    packages = {o["package"] for o in params["operators"]}
    subscriptions = snapshot.items(*SUBSCRIPTION)
    choices = operator_package_choices(params["operators"], snapshot.items(*PACKAGE_MANIFEST), subscriptions,
                                       params["operator_roles"])
    existing_pools = sorted(set(pools) & {p["metadata"]["name"] for p in snapshot.items(*MACHINE_CONFIG_POOL)})
    lists = {
        "cluster": info,
        "catalog_sources": [c for c in snapshot.items(*CATALOG_SOURCE)
                            if c["metadata"].get("namespace") == MARKETPLACE],
        "package_manifests": [trimmed_package(p) for p in snapshot.items(*PACKAGE_MANIFEST)
                              if p["metadata"]["name"] in packages],
        "operator_package_manifests": [trimmed_package(m) if m else None for m, _problem in choices],
        "operator_groups": snapshot.items(*OPERATOR_GROUP),
        "subscriptions": subscriptions,
        "nic_cluster_policies": snapshot.items(*NIC_CLUSTER_POLICY),
        "node_groups": [{"item": group, "nodes": selected_nodes(snapshot.items(*NODE), group.get("label_selectors"))}
                        for group in params["node_groups"]],
        "machine_config_pools": existing_pools,
        "operator_problems": problems_of(params["operators"],
                                         subscriptions) + [problem for _m, problem in choices if problem],
    }
    try:
        problems = preflight.problems(lists,
                                      {"summary": params["plan_summary"], "memlock_pool": params["memlock_pool"]},
                                      {"operators": params["operators"], "operator_roles": params["operator_roles"],
                                       "allow_unsupported_versions": params["allow_unsupported_versions"],
                                       "num_vfs": params["num_vfs"]})
    except ValueError as exc:
        module.fail_json(msg="Invalid input: %s" % exc)
    upgrades = upgrade_plan.planned_upgrades(versions, params["operators"], params["operator_roles"],
                                             params["upgrade_packages"])
    module.exit_json(
        changed=False,
        problems=problems,
        upgrade_plan=upgrades,
        upgrade_automatic=upgrade_plan.automatic_packages(params["operators"]),
        upgrade_operand_versions=upgrade_plan.operand_versions(upgrades),
        in_sync=None if differences is None else not differences,
        differences=differences or [],
        leftovers=leftovers,
        checked={"operators": len(params["operators"]), "manifests": len(params["manifests"]),
                 "waits": len(params["waits"]), "prune_kinds": len(params["prune_kinds"]), "kinds_listed": len(kinds)},
        requests=snapshot.reads,
        operator_versions=versions,
        disruptions=found["disruptions"],
        disruption_of_configured_nodes=bool(found["disruptions"]) and found["configured"],
        **lists
    )


if __name__ == "__main__":
    main()
