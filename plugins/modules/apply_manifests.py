#!/usr/bin/python
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
---
module: apply_manifests
short_description: Apply a set of Kubernetes manifests with no write when nothing changed, and prune what the set
  dropped
version_added: 0.1.0
author: gpudirect.openshift maintainers (@gpudirect)
description:
  - Reads each kind once per namespace (one list request) and writes by server-side apply under the field manager
    C(gpudirect.openshift), with force. An object is left alone, with no request, when that manager owns exactly
    the fields of its manifest (C(metadata.managedFields)) and each has the manifest's value, so a re-run on a
    converged cluster makes no write request, whatever annotations an operator rewrote. Fields dropped from a
    manifest are removed from the object unless another field manager owns them.
  - Objects created by client-side apply (the C(kubectl.kubernetes.io/last-applied-configuration) annotation, as
    earlier releases of this collection wrote them) are migrated once as C(kubectl) does, by one JSON patch that
    moves the fields of the manager that wrote the annotation to C(gpudirect.openshift) and removes the annotation.
  - With O(prune_kinds), deletes objects of those kinds that carry O(prune_label_selector) but are no longer in
    O(manifests), last kind first, so switching configuration leaves nothing stale.
  - Labels every applied object with C(app.kubernetes.io/managed-by=gpudirect.openshift) so teardown and pruning
    touch only what this collection created.
  - With O(waits), then waits in the same task, by watch, until each readiness condition holds, as
    M(gpudirect.openshift.resource_wait) does, so applying and waiting cost one module run.
options:
  manifests:
    description:
      - The objects, each a full manifest with C(apiVersion), C(kind) and C(metadata.name).
      - Required unless O(state=deleted_by_label), which takes none.
    type: list
    elements: dict
  state:
    description:
      - V(present) creates or patches the objects, in the order given.
      - V(absent) deletes them, in reverse order.
      - V(pruned) only deletes what O(prune_kinds) selects and O(manifests) does not hold, so that a previous
        configuration can be removed before the objects it depends on change.
      - V(deleted_by_label) deletes every object of O(prune_kinds) that carries O(prune_label_selector) (in
        O(prune_namespaces) where given), last kind first; it takes no O(manifests). Teardown uses it.
    type: str
    choices: [present, absent, pruned, deleted_by_label]
    default: present
  prune_kinds:
    description:
      - Kinds to prune, as C(apiVersion/Kind) strings, in apply order (deletion runs in reverse).
    type: list
    elements: str
    default: []
  prune_label_selector:
    description: Only objects matching this selector are pruned.
    type: str
    default: app.kubernetes.io/managed-by=gpudirect.openshift
  prune_namespaces:
    description:
      - Namespaces in which namespaced O(prune_kinds) are looked for. Empty looks in all namespaces, which needs
        a cluster-wide C(list) right; naming them lets an identity whose rights are Roles in those namespaces prune.
    type: list
    elements: str
    default: []
  prune_names:
    description:
      - The names to look for of the O(prune_kinds) that the collection reads by name only, never by list or watch
        (C(MachineConfig), since a list returns the controller's MachineConfigs, which carry the cluster pull secret).
        Each is read with one GET; those that exist and match O(prune_label_selector) are pruned like the listed kinds'.
      - Required when O(prune_kinds) holds such a kind; the P(gpudirect.openshift.machineconfig_names#filter) filter
        gives the names the collection can have created.
    type: list
    elements: str
  webhook_grace_period:
    description:
      - Seconds a write may keep meeting an admission webhook that is not serving yet (the API server's HTTP 500
        C(failed calling webhook), while the operator's webhook pod starts) before the task fails quoting the API
        server. The write is tried again every 5 s meanwhile; a webhook that answers and denies fails at once.
      - The default is the slow end of the documented range of a webhook pod's start (6-150 s; docs/simulator.md).
    type: int
    default: 150
  schema_owner:
    description:
      - The operator (for example its installed CSV) whose CRDs serve O(manifests), named in the message when a
        manifest holds a field the served CRD schema does not declare.
      - Whatever its value, with O(state=present) every custom resource is first checked against the schema of
        its CRD as the cluster serves it; a field the API server would drop fails the task before any write,
        naming the field, since the installed operator would run without it and every re-run would patch again.
    type: str
    default: ""
  waits:
    description:
      - Readiness conditions to wait for after a successful O(state=present), one after the other, each with the
        options of M(gpudirect.openshift.resource_wait). The first that fails or times out fails the task, with
        the message M(gpudirect.openshift.resource_wait) would give.
      - Their JMESPath expressions are checked before anything is applied; one that does not compile fails the
        task naming it (for example C(waits[1].condition)) with no request sent.
      - Ignored for O(state=absent), O(state=pruned) and O(state=deleted_by_label). In check mode they wait the same way
        (they only read); pass an empty list to skip them there.
    type: list
    elements: dict
    default: []
extends_documentation_fragment:
  - gpudirect.openshift.cluster_connection
  - gpudirect.openshift.wait_entries
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Writes are sent with C(dryRun=All), so the server validates them and stores nothing.
  diff_mode:
    support: full
seealso:
  - module: kubernetes.core.k8s
"""

EXAMPLES = r"""
- name: Apply the RDMA networks and remove the ones of a previous method
  gpudirect.openshift.apply_manifests:
    manifests: "{{ rendered | map(attribute='manifest') | list }}"
    prune_kinds:
      - mellanox.com/v1alpha1/MacvlanNetwork
      - mellanox.com/v1alpha1/IPoIBNetwork
      - mellanox.com/v1alpha1/HostDeviceNetwork
      - sriovnetwork.openshift.io/v1/SriovNetwork

- name: Apply the NicClusterPolicy and wait until the operator reports it ready
  gpudirect.openshift.apply_manifests:
    manifests: "{{ nic_cluster_policy_manifests }}"
    waits:
      - title: NicClusterPolicy ready
        api_version: mellanox.com/v1alpha1
        kind: NicClusterPolicy
        name: nic-cluster-policy
        condition: "status.state == 'ready'"
        failure_condition: "status.state == 'error'"
        failure_message: "status.reason"
        failure_grace_period: 30
        timeout: 900

- name: Delete objects
  gpudirect.openshift.apply_manifests:
    state: absent
    manifests: "{{ rendered | map(attribute='manifest') | list }}"

- name: Delete every network the collection created
  gpudirect.openshift.apply_manifests:
    state: deleted_by_label
    prune_kinds: "{{ 'networks' | gpudirect.openshift.managed_kinds }}"
    prune_label_selector: app.kubernetes.io/managed-by=gpudirect.openshift

- name: Delete the collection's MachineConfigs, read by name (never listed)
  gpudirect.openshift.apply_manifests:
    state: deleted_by_label
    prune_kinds: [machineconfiguration.openshift.io/v1/MachineConfig]
    prune_names: "{{ {'gpudirect_rdma_machineconfig_pool': 'worker'} | gpudirect.openshift.machineconfig_names }}"
"""

RETURN = r"""
results:
  description: What happened to each object.
  returned: always
  type: list
  elements: dict
  contains:
    action:
      description: V(created), V(patched), V(deleted) or V(unchanged).
      type: str
    api_version:
      description: API version.
      type: str
    kind:
      description: Kind.
      type: str
    namespace:
      description: Namespace, null for cluster-scoped objects.
      type: str
    name:
      description: Name.
      type: str
  sample: [{"action": "created", "api_version": "mellanox.com/v1alpha1", "kind": "MacvlanNetwork", "namespace": null,
    "name": "rdmashared-net"}]
counts:
  description: Number of objects per action.
  returned: always
  type: dict
  sample: {"created": 1, "patched": 0, "deleted": 0, "unchanged": 4}
waits:
  description: The waits of O(waits) that ended satisfied, in order.
  returned: always
  type: list
  elements: dict
  contains:
    title:
      description: The wait's O(waits[].title), or its kind and name.
      type: str
    elapsed:
      description: Seconds the wait took.
      type: float
    events:
      description: Watch events evaluated.
      type: int
    progress:
      description:
        - Each distinct value of the O(waits[].progress) expression (with O(waits[].count), of the count, or of the
          objects' O(waits[].each_progress) texts); the first and the latest, at most 20.
      type: list
      elements: str
    count:
      description: With O(waits[].count), how many listed objects count, how many are listed, and up to 20 names that do
        not count.
      type: dict
      returned: with O(waits[].count)
  sample: [{"title": "NicClusterPolicy ready", "elapsed": 12.4, "events": 3, "progress": []}]
wait:
  description: The wait that failed - its title, the objects as last seen, and its progress texts.
  returned: when a wait of O(waits) fails
  type: dict
  sample: {"title": "NicClusterPolicy ready", "resources": [], "progress": ["notReady"]}
"""

import copy

from ansible.module_utils.basic import missing_required_lib

from ansible_collections.gpudirect.openshift.plugins.module_utils import vocabulary
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.module_base import ClusterModule
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.exceptions import CoreException
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.apply import (
    ManifestApplier, describe, parse_kind, validate_manifests)
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.api_errors import ClusterError
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.conditions import (
    HAS_JMESPATH, JMESPATH_IMPORT_ERROR)
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.schema import SchemaChecker
from ansible_collections.gpudirect.openshift.plugins.module_utils.names import READ_BY_NAME_KINDS
from ansible_collections.gpudirect.openshift.plugins.module_utils.rules import webhooks
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.waits import (
    WAIT_OPTIONS,
    WaitFailed,
    run_wait,
    take_baseline,
    describe_wait,
    wait_problems,
    wait_title,
)


def argument_spec():
    return dict(
        manifests=dict(type="list", elements="dict"),
        state=dict(type="str", choices=["present", "absent", "pruned", "deleted_by_label"], default="present"),
        prune_kinds=dict(type="list", elements="str", default=[]),
        prune_label_selector=dict(type="str", default=vocabulary.MANAGED_BY_SELECTOR),
        prune_namespaces=dict(type="list", elements="str", default=[]),
        prune_names=dict(type="list", elements="str"),
        waits=dict(type="list", elements="dict", default=[], options=copy.deepcopy(WAIT_OPTIONS)),
        schema_owner=dict(type="str", default=""),
        webhook_grace_period=dict(type="int", default=webhooks.DEFAULT_WEBHOOK_GRACE_SECONDS),
    )


def main():
    module = ClusterModule(argument_spec())
    params = module.options
    if params["state"] == "deleted_by_label":
        problems = ["manifests: state deleted_by_label takes none"] if params["manifests"] else []
        problems.extend([] if params["prune_kinds"]
                        else ["prune_kinds: state deleted_by_label needs the kinds to delete"])
    elif params["manifests"] is None:
        problems = ["manifests: required with state %s" % params["state"]]
    else:
        problems = validate_manifests(params["manifests"])
    params["manifests"] = params["manifests"] or []
    try:
        prune_kinds = [parse_kind(k) for k in params["prune_kinds"]]
    except ValueError as exc:
        prune_kinds = []
        problems.append(str(exc))
    by_name = sorted({"%s/%s" % k for k in prune_kinds if k in READ_BY_NAME_KINDS})
    if by_name and params["prune_names"] is None and params["state"] != "absent":
        problems.append("prune_names: required for %s, which the collection reads by name only (never listed); give "
                        "the names to look for, for example with the gpudirect.openshift.machineconfig_names filter"
                        % ", ".join(by_name))
    if params["waits"] and not HAS_JMESPATH:
        module.fail_json(msg=missing_required_lib("jmespath"), exception=JMESPATH_IMPORT_ERROR)
    problems.extend(wait_problems(params["waits"]))
    if params["webhook_grace_period"] < 0:
        problems.append("webhook_grace_period: must be 0 or more seconds, got %d" % params["webhook_grace_period"])
    if problems:
        module.fail_json(msg="Invalid input: %s" % "; ".join(problems))

    applier = None
    current = []  # the manifest being applied or deleted, named in a failure
    baselines = {}  # index in waits -> the wait's objects before the first write (waits with each_busy)

    def before_first_write():
        for index, spec in enumerate(params["waits"]):
            baselines[index] = take_baseline(module.cluster, spec)

    def work():
        nonlocal applier
        applier = ManifestApplier(module.cluster, webhook_grace_period=params["webhook_grace_period"],
                                  before_first_write=before_first_write)
        if params["state"] == "present":
            unknown = SchemaChecker(module.cluster).problems(params["manifests"], params["schema_owner"])
            if unknown:
                module.fail_json(msg=" ".join(unknown), results=[])
        if params["state"] in ("present", "pruned", "deleted_by_label") and prune_kinds:
            applier.prune(params["manifests"], prune_kinds, params["prune_label_selector"],
                          params["prune_namespaces"] or None, params["prune_names"])
        if params["state"] == "present":
            for manifest in params["manifests"]:
                current[:] = [manifest]
                applier.apply(manifest)
        elif params["state"] == "absent":
            for manifest in reversed(params["manifests"]):
                current[:] = [manifest]
                applier.delete(manifest)

    def applied():
        return {"results": applier.results if applier else []}

    def reported(exc):
        where = " (at %s)" % describe(current[0]) if current else ""
        module.fail_json(msg="%s%s" % (exc, where), **applied())

    module.run(work, lambda: "Applying manifests failed%s" % (" at %s" % describe(current[0]) if current else ""),
               handlers=[((CoreException, ClusterError), reported)], result=applied)

    output = dict(changed=applier.changed, results=applier.results, counts=_counts(applier.results), waits=[])
    if module.diff:
        output["diff"] = [{"before": d["before"], "after": d["after"], "before_header": d["object"],
                           "after_header": d["object"]}
                          for d in applier.diffs]
    if params["state"] == "present":
        _wait(module, params["waits"], output, baselines)
    module.exit_json(**output)


def _counts(results):
    counts = {action: 0 for action in ("created", "patched", "deleted", "unchanged")}
    for result in results:
        counts[result["action"]] += 1
    return counts


def _wait(module, waits, output, baselines):
    """Run the waits in order into output["waits"]; the first failure fails the task with what was applied."""
    for index, spec in enumerate(waits):
        done = _wait_one(module, spec, output, baselines.get(index))
        done.pop("resources")
        output["waits"].append(done)


def _wait_one(module, spec, output, baseline):
    def timed_out(exc):
        module.fail_json(msg=str(exc), wait=dict(exc.details, title=wait_title(spec)), **output)

    def reported(exc):
        module.fail_json(msg="%s (waiting for %s)" % (exc, wait_title(spec)), **output)

    return module.run(lambda: run_wait(module.cluster, spec, baseline=baseline),
                      "Waiting for %s failed" % describe_wait(spec),
                      handlers=[(WaitFailed, timed_out), ((CoreException, ClusterError), reported)],
                      result=lambda: output)


if __name__ == "__main__":
    main()
