# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Would a converge change or wait on anything? Decided from one list request per kind.

The same code that converges decides: OperatorInstaller (check mode, no wait) for each operator,
ManifestApplier for each manifest and for pruning, and the waits' JMESPath conditions, all run on
a SnapshotClient. Every difference is reported as one sentence; none means the cluster already is
what the plan asks for, and site.yml can skip the roles.
"""


import copy

from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.apply import (
    ManifestApplier, describe, parse_kind)
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.api_errors import ClusterError
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.conditions import (
    CountCondition, document, render_text, truthy)
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.info import (
    CLUSTER_VERSION, NODE, SRIOV_NODE_STATE)
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.operator_installer import (
    CSV,
    NAMESPACE,
    OPERATOR_GROUP,
    PACKAGE_MANIFEST,
    SUBSCRIPTION,
    OperatorInstaller,
)
from ansible_collections.gpudirect.openshift.plugins.module_utils.rules.olm_install import OPERATOR_OPTIONS
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.waits import (
    SAMPLE_NAMES, compile_condition, wait_title)
from ansible_collections.gpudirect.openshift.plugins.module_utils.names import READ_BY_NAME_KINDS

MARKETPLACE = "openshift-marketplace"
CATALOG_SOURCE = ("operators.coreos.com/v1alpha1", "CatalogSource")
NIC_CLUSTER_POLICY = ("mellanox.com/v1alpha1", "NicClusterPolicy")
MACHINE_CONFIG_POOL = ("machineconfiguration.openshift.io/v1", "MachineConfigPool")
# OLM copies the CSV of an AllNamespaces operator into every namespace; the copies say nothing new.
NOT_COPIED_CSV = "!olm.copiedFrom"
WRITES = ("create", "update", "approve", "delete")


def operator_entry(entry):
    """An operators[] entry with olm_operator's defaults; empty strings mean unset, as in the roles."""
    operator = {}
    for key, spec in OPERATOR_OPTIONS.items():
        value = entry.get(key)
        if value in (None, ""):
            value = copy.deepcopy(spec.get("default"))
        operator[key] = value
    return operator


def prefetch_kinds(operators, manifests, waits, prune_kinds, sriov_states, olm_state=True, machine_config_pools=False):
    """(apiVersion, kind, namespace, label selector) to list once each, in a stable order.

    The first seven are what preflight checks; ``olm_state`` adds what the operators' state needs;
    ``machine_config_pools`` the pools (listed once, also for the waits on them).
    """
    package_namespaces = sorted({operator_entry(o)["package_namespace"] for o in operators}) or [MARKETPLACE]
    kinds = [CLUSTER_VERSION + (None, None), NODE + (None, None), CATALOG_SOURCE + (MARKETPLACE, None),
             PACKAGE_MANIFEST + (package_namespaces[0] if len(package_namespaces) == 1 else None, None),
             OPERATOR_GROUP + (None, None), SUBSCRIPTION + (None, None), NIC_CLUSTER_POLICY + (None, None)]
    if operators and olm_state:
        kinds += [NAMESPACE + (None, None), CSV + (None, NOT_COPIED_CSV)]
    if sriov_states:
        kinds.append(SRIOV_NODE_STATE + (None, None))
    if machine_config_pools:
        kinds.append(MACHINE_CONFIG_POOL + (None, None))
    extra = [(m.get("apiVersion"), m.get("kind")) for m in manifests]
    extra += [parse_kind(k) if isinstance(k, str) else tuple(k) for k in prune_kinds]
    extra += [(w.get("api_version"), w.get("kind")) for w in waits]
    # Kinds read by name only (MachineConfigs: a list would return the pull secret) are never listed: see names_to_read.
    seen = {(k[0], k[1]) for k in kinds} | set(READ_BY_NAME_KINDS)
    for api_version, kind in extra:
        if api_version and kind and (api_version, kind) not in seen:
            seen.add((api_version, kind))
            kinds.append((api_version, kind, None, None))
    return kinds


def names_to_read(manifests):
    """{(apiVersion, kind): [names]} of the manifests whose kind is read by name only (one GET each, never a list)."""
    found = {}
    for manifest in manifests:
        key = (manifest.get("apiVersion"), manifest.get("kind"))
        if key in READ_BY_NAME_KINDS:
            found.setdefault(key, []).append((manifest.get("metadata") or {}).get("name"))
    return found


VERSION_KEYS = ("package", "namespace", "channel", "default_channel", "csv", "installed_csv", "channel_head",
                "upgrade_available")


def _operator_differences(snapshot, entry, versions=None):
    operator = operator_entry(entry)
    # What the installer would do now, without waiting: a check-mode run on the snapshot.
    installer = OperatorInstaller(snapshot, operator, wait=False, failure_grace_period=0, wait_timeout=0,
                                  check_mode=True)
    where = "operator %s in %s" % (operator["package"], operator["namespace"])
    try:
        result = installer.run()
    except ClusterError as exc:
        return ["%s: %s" % (where, exc)]
    if versions is not None:
        versions.append({k: result.get(k) for k in VERSION_KEYS})
    differences = []
    passive = {"create": "created", "update": "updated", "approve": "approved", "delete": "deleted"}
    for obj in result.get("objects") or []:
        if obj["action"] in WRITES:
            ref = "%s %s" % (obj["kind"], "%s/%s" % (obj["namespace"], obj["name"]) if obj.get("namespace")
                             else obj["name"])
            differences.append("%s: %s would be %s" % (where, ref, passive[obj["action"]]))
    if result.get("phase") != "Succeeded":
        differences.append("%s: ClusterServiceVersion %s is %s, not Succeeded"
                           % (where, result.get("csv"), result.get("phase") or "not there"))
    return differences


def _manifest_differences(snapshot, manifests, prune_kinds, prune_label_selector, leftovers=None):
    applier = ManifestApplier(snapshot)
    differences = []
    if prune_kinds:
        try:
            applier.prune(manifests, prune_kinds, prune_label_selector)
        except ClusterError as exc:
            differences.append("pruning: %s" % exc)
            if leftovers is not None:
                leftovers.append("unknown (%s)" % exc)  # never taken for "nothing to prune"
        if leftovers is not None:
            leftovers.extend("%s %s%s" % (r["kind"], "%s/" % r["namespace"] if r.get("namespace") else "", r["name"])
                             for r in applier.results if r["action"] == "deleted")
    for manifest in manifests:
        try:
            applier.apply(manifest)
        except ClusterError as exc:
            differences.append("%s: %s" % (describe(manifest), exc))
    verbs = {"created": "would be created", "patched": "differs from the plan and would be patched",
             "deleted": "is left from another configuration and would be removed"}
    for result in applier.results:
        if result["action"] in verbs:
            differences.append("%s %s%s %s" % (result["kind"],
                                               "%s/" % result["namespace"] if result.get("namespace") else "",
                                               result["name"], verbs[result["action"]]))
    return differences


def _wait_difference(snapshot, wait, option):
    """None when the wait's condition holds on the snapshot, else a sentence saying what is not ready."""
    title = wait_title(wait)
    condition = compile_condition(wait, option)
    resource = snapshot.resource(wait["api_version"], wait["kind"])
    if resource is None:
        return "%s: %s %s is not served yet" % (title, wait["api_version"], wait["kind"])
    single = bool(wait.get("name"))
    if single:
        state = snapshot.get(resource, wait["name"], wait.get("namespace"))
    else:
        state, _rv = snapshot.list(resource, namespace=wait.get("namespace"),
                                   label_selector=",".join(wait.get("label_selectors") or []) or None)
    if isinstance(condition, CountCondition):
        condition.reset(state)
        if condition.holds():
            return None
        # Per-object failure and progress texts say it as the list condition they stand for did.
        detail = (condition.failure_text() or "failing") if condition.failing else condition.progress_text()
        if detail is not None:
            return "%s: not ready%s" % (title, " (%s)" % detail if detail else "")
        return "%s: not ready (%s of %d selected count%s)" % (
            title, ", ".join(str(m) for m in condition.matching), len(condition.counted), _sample(condition))
    doc = document(state, single)
    if truthy(condition.success.search(doc)):
        return None
    detail = None
    if condition.failure is not None and truthy(condition.failure.search(doc)):
        detail = render_text(condition.failure_message, doc) or "failing"
    if detail is None:
        detail = render_text(condition.progress, doc)
    return "%s: not ready%s" % (title, " (%s)" % detail if detail else "")


def _sample(condition):
    names = condition.not_counted(SAMPLE_NAMES)
    return "; not yet: %s%s" % (", ".join(names), " ..." if len(names) >= SAMPLE_NAMES else "") if names else ""


def compare(snapshot, operators=(), manifests=(), waits=(), prune_kinds=(), prune_label_selector=None, versions=None,
            leftovers=None):
    """Every way the cluster differs from the plan, as sentences, in the order a converge meets them.

    ``versions``, a list, receives each operator's channel and CSVs (wanted, installed, channel head, upgrade OLM
    offers); an available upgrade is information, not a difference. ``leftovers``, a list, receives the labelled
    objects of ``prune_kinds`` that the plan no longer holds (what a prune would delete).
    """
    prune_kinds = [parse_kind(k) if isinstance(k, str) else tuple(k) for k in prune_kinds]
    differences = []
    for entry in operators:
        differences.extend(_operator_differences(snapshot, entry, versions))
    differences.extend(_manifest_differences(snapshot, list(manifests), prune_kinds, prune_label_selector, leftovers))
    for index, wait in enumerate(waits):
        text = _wait_difference(snapshot, wait, "waits[%d]." % index)
        if text:
            differences.append(text)
    return differences
