# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Must-gather style diagnostics: list the kinds that explain an install, redact secrets, write YAML and a summary.

The number of requests is fixed by the plan (one list per kind, per operator namespace for the kinds that OLM
copies into every namespace), so collecting on a broken cluster is cheap and predictable. A kind that is not
served, or that the credentials may not read, is noted in the summary instead of failing the collection.
"""

import copy
import datetime
import os
import re

from ansible_collections.gpudirect.openshift.plugins.module_utils import vocabulary
from ansible_collections.gpudirect.openshift.plugins.module_utils.verify import pod_states
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.api_errors import api_message, api_status
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.client import paged_list
from ansible_collections.gpudirect.openshift.plugins.module_utils.label_selectors import (
    labels_match, parse_label_selector)

REDACTED = "<redacted>"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
# Keys whose values are credentials wherever they appear (case-insensitive, separators ignored).
SENSITIVE_KEY = re.compile(r"(token|passw(or)?d|passwd|secret|api_?key|credential|dockerconfigjson|dockercfg|"
                           r"kubeconfig|private_?key|client_?key|auth(orization)?$|bearer|cookie|\.pem$|\.key$|"
                           r"(^|_)pass(_|$))", re.IGNORECASE)
# A value that is a kubeconfig or a private key, whatever its key is called: replaced whole. (Bearer and Basic
# credentials inside a message are replaced alone, by _AUTH_SCHEME below.)
SENSITIVE_VALUE = re.compile(r'(-----BEGIN [A-Z ]*PRIVATE KEY-----|client-key-data|'
                             r'\bkind"?:\s*"?Config\b[\s\S]*\bclusters"?:)')
# Parts of free text (messages, arguments, URLs) that carry a credential: replaced, the rest of the text kept.
_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@:]+(:[^/\s@]*)?@")
_AUTH_SCHEME = re.compile(r"(?i)\b(Basic|Bearer|Digest|Token)(\s+)[A-Za-z0-9._~+/=-]{6,}")
_SECRET_WORD = r"[A-Za-z0-9_.-]*(?:passw(?:or)?d|passwd|pass|secret|token|api[_-]?key|credentials?|auth)"
# key=value, key: value, --key=value (the key ends with the secret word: DB_PASS=x, --password=x, token: x)
_SECRET_ASSIGNMENT = re.compile(r"(?i)(\b%s\s*[=:]\s*)(\"[^\"]*\"|'[^']*'|[^\s,;&\"']+)" % _SECRET_WORD)
# --password value (a flag and its separate argument)
_SECRET_FLAG = re.compile(r"(?i)(--?%s\s+)([^\s-][^\s,;]*)" % _SECRET_WORD)
# Environment-variable names that hold keys: NGC_KEY, NGC_API_KEY, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, HF_TOKEN.
# Only for the names of name/value pairs and NAME=value text: a plain "key" is a taint's or a selector's field.
_KEY_NAME = r"[A-Za-z0-9_.-]*(?:_key(?:_id)?|access_?key(?:_id)?|_pat)"
_KEY_ASSIGNMENT = re.compile(r"(?i)(\b%s\s*=\s*)(\"[^\"]*\"|'[^']*'|[^\s,;&\"']+)" % _KEY_NAME)
# "password": "x" inside JSON text (a CNI config, an annotation): the quoted key form the assignments above miss.
_JSON_SECRET = re.compile(r'(?i)("(?:%s|%s)"\s*:\s*)("(?:[^"\\]|\\.)*"|[^\s,}\]]+)' % (_SECRET_WORD, _KEY_NAME))
# curl -u user:password, --user user:password, wget --password (the user part is kept)
_USER_PASSWORD = re.compile(r"(?i)((?:^|\s)(?:-u|--user|--proxy-user)[=\s]+[^\s:]+:)(\S+)")
# Keys that name a Kubernetes object field whose content is meant to be visible even though the key matches.
NOT_SENSITIVE_KEYS = frozenset(["secretName", "secretRef", "secretKeyRef", "tokenSecretRef", "serviceAccountToken",
                                "automountServiceAccountToken", "secretResourceName", "imagePullSecrets",
                                "authorization_mode"])

OLM_V1 = "operators.coreos.com/v1"
OLM_V1A1 = "operators.coreos.com/v1alpha1"

# What is collected: (apiVersion, kind, plural, where, label selector). ``where`` is "cluster" (cluster-scoped),
# "all" (namespaced, one list across namespaces), "operators" (one list per operator namespace),
# "marketplace" (the catalog namespace) or "names" (cluster-scoped, one GET per name the collection can have given one).
PLAN = (
    (OLM_V1A1, "Subscription", "subscriptions", "operators", None),
    (OLM_V1A1, "InstallPlan", "installplans", "operators", None),
    (OLM_V1A1, "ClusterServiceVersion", "clusterserviceversions", "operators", None),
    (OLM_V1, "OperatorGroup", "operatorgroups", "operators", None),
    (OLM_V1A1, "CatalogSource", "catalogsources", "marketplace", None),
    ("nfd.openshift.io/v1", "NodeFeatureDiscovery", "nodefeaturediscoveries", "all", None),
    ("sriovnetwork.openshift.io/v1", "SriovOperatorConfig", "sriovoperatorconfigs", "all", None),
    ("mellanox.com/v1alpha1", "NicClusterPolicy", "nicclusterpolicies", "cluster", None),
    ("nvidia.com/v1", "ClusterPolicy", "clusterpolicies", "cluster", None),
    ("sriovnetwork.openshift.io/v1", "SriovNetworkNodeState", "sriovnetworknodestates", "all", None),
    ("sriovnetwork.openshift.io/v1", "SriovNetworkNodePolicy", "sriovnetworknodepolicies", "all", None),
    ("sriovnetwork.openshift.io/v1", "SriovNetworkPoolConfig", "sriovnetworkpoolconfigs", "all", None),
    ("mellanox.com/v1alpha1", "MacvlanNetwork", "macvlannetworks", "cluster", "managed"),
    ("mellanox.com/v1alpha1", "IPoIBNetwork", "ipoibnetworks", "cluster", "managed"),
    ("mellanox.com/v1alpha1", "HostDeviceNetwork", "hostdevicenetworks", "cluster", "managed"),
    ("sriovnetwork.openshift.io/v1", "SriovNetwork", "sriovnetworks", "all", "managed"),
    ("sriovnetwork.openshift.io/v1", "SriovIBNetwork", "sriovibnetworks", "all", "managed"),
    ("k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition", "network-attachment-definitions", "all", None),
    ("machineconfiguration.openshift.io/v1", "MachineConfigPool", "machineconfigpools", "cluster", None),
    # By name only (module_utils/names.py READ_BY_NAME_KINDS): a list would return the pull secret with the controller's
    # ones.
    ("machineconfiguration.openshift.io/v1", "MachineConfig", "machineconfigs", "names", "managed"),
    ("v1", "Node", "nodes", "cluster", None),
    ("v1", "Event", "events", "operators", None),
    ("v1", "Pod", "pods", "operators", None),
)
CLUSTER_DIR = "cluster-scoped"
# Kinds with one object per node (or more): the files keep every abnormal one, up to ABNORMAL_CAP, and the first
# NORMAL_SAMPLE of the others, so that a 1000-node cluster gives a readable bundle; the summary says what was left out.
CAPPED_KINDS = ("Node", "SriovNetworkNodeState", "Pod", "Event")
ABNORMAL_CAP = 200
NORMAL_SAMPLE = 20
# One quick request before the plan: against an API server that does not answer, each list would wait out the whole
# retry policy (about 200 s for the plan), and the summary would then read as if nothing were abnormal.
PROBE_PATH = "/version"
PROBE_TIMEOUT = (3, 5)  # (connect, read) seconds
# Containers that crash-loop, cannot pull their image or cannot be created (pod_states.operand_problems): the last
# lines of the log of at most LOG_CAP of them are kept, one request each, so the bundle says why a driver never loads.
LOG_CAP = 10
LOG_LINES = 20
LOG_DIR = "logs"


def list_path(api_version, plural, namespace=None):
    base = "/api/v1" if api_version == "v1" else "/apis/%s" % api_version
    if namespace:
        return "%s/namespaces/%s/%s" % (base, namespace, plural)
    return "%s/%s" % (base, plural)


def plan_requests(namespaces, marketplace_namespace, managed_selector, object_names=()):
    """Every request, in order: dicts with api_version, kind, plural, namespace, label_selector, and name for the
    kinds read by name (``object_names``, one GET each)."""
    requests = []
    for api_version, kind, plural, where, selector in PLAN:
        label_selector = managed_selector if selector == "managed" else None
        if where == "names":
            requests.extend({"api_version": api_version, "kind": kind, "plural": plural, "namespace": None,
                             "name": name, "label_selector": label_selector, "namespaced": False}
                            for name in object_names)
            continue
        if where == "operators":
            targets = list(namespaces)
        elif where == "marketplace":
            targets = [marketplace_namespace]
        else:
            targets = [None]
        for namespace in targets:
            requests.append({"api_version": api_version, "kind": kind, "plural": plural, "namespace": namespace,
                             "label_selector": label_selector, "namespaced": where != "cluster"})
    return requests


# -- redaction -------------------------------------------------------------------------------------------------


def _sensitive_key(key):
    return isinstance(key, str) and key not in NOT_SENSITIVE_KEYS and bool(SENSITIVE_KEY.search(key))


def scrub_text(text, secrets):
    """``text`` with every known secret string replaced; a value that looks like a credential becomes REDACTED."""
    for secret in secrets:
        if secret and secret in text:
            text = text.replace(secret, REDACTED)
    if SENSITIVE_VALUE.search(text):
        return REDACTED
    text = _URL_USERINFO.sub(lambda m: m.group(1) + REDACTED + "@", text)
    text = _AUTH_SCHEME.sub(lambda m: m.group(1) + m.group(2) + REDACTED, text)
    text = _JSON_SECRET.sub(lambda m: m.group(1) + '"%s"' % REDACTED, text)
    text = _USER_PASSWORD.sub(lambda m: m.group(1) + REDACTED, text)
    text = _KEY_ASSIGNMENT.sub(lambda m: m.group(1) + REDACTED, text)
    text = _SECRET_ASSIGNMENT.sub(lambda m: m.group(1) + REDACTED, text)
    return _SECRET_FLAG.sub(lambda m: m.group(1) + REDACTED, text)


def redact(value, secrets=(), parent_key=None):
    """A deep copy of ``value`` with credentials replaced by REDACTED.

    Values under sensitive keys (token, password, apiKey, credentials, .dockerconfigjson, kubeconfig, ...),
    ``value`` of name/value pairs whose name is sensitive (container env), strings that look like a kubeconfig,
    a private key or a bearer header, and any occurrence of the ``secrets`` strings.
    """
    if isinstance(value, dict):
        out = {}
        name = value.get("name")
        sensitive_pair = "value" in value and (_sensitive_key(name) or (
            isinstance(name, str) and re.fullmatch(_KEY_NAME, name, re.IGNORECASE) is not None))
        for key, item in value.items():
            if _sensitive_key(key) and not isinstance(item, (dict, list)) and item not in (None, "", False, True):
                out[key] = REDACTED
            elif _sensitive_key(key) and isinstance(item, dict):
                out[key] = {k: REDACTED for k in item}
            elif sensitive_pair and key == "value" and item not in (None, ""):
                out[key] = REDACTED
            else:
                out[key] = redact(item, secrets, key)
        return out
    if isinstance(value, list):
        return [redact(item, secrets, parent_key) for item in value]
    if isinstance(value, str):
        return scrub_text(value, secrets)
    return value


def redact_object(obj, secrets=()):
    """One API object made safe to write: Secret payloads and last-applied copies removed, then redact()."""
    obj = copy.deepcopy(obj)
    meta = obj.get("metadata") or {}
    meta.pop("managedFields", None)
    annotations = meta.get("annotations") or {}
    if LAST_APPLIED in annotations:
        # A copy of the whole object as last applied: for a Secret it holds the data in clear.
        annotations[LAST_APPLIED] = "<omitted>"
    if obj.get("kind") == "Secret":
        for field in ("data", "stringData"):
            if isinstance(obj.get(field), dict):
                obj[field] = {k: REDACTED for k in obj[field]}
    return redact(obj, secrets)


def trim_node(node):
    """What matters about a node for GPUDirect RDMA: labels, taints, capacity, allocatable, conditions."""
    meta = node.get("metadata") or {}
    status = node.get("status") or {}
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {k: meta[k] for k in ("name", "labels", "annotations", "creationTimestamp") if k in meta},
        "spec": {k: v for k, v in (node.get("spec") or {}).items() if k in ("taints", "unschedulable", "providerID")},
        "status": {k: status[k] for k in ("capacity", "allocatable", "conditions", "nodeInfo", "addresses")
                   if k in status},
    }


def trim_pod(pod):
    """What explains a pod's state and nothing that may carry a secret: names, images, states and the references
    of env values (valueFrom), never env values, commands or arguments."""
    meta = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}

    def container(c):
        env = [{"name": e.get("name"), "valueFrom": e["valueFrom"]} for e in c.get("env") or [] if "valueFrom" in e]
        return dict({"name": c.get("name"), "image": c.get("image")}, **({"env": env} if env else {}))

    def state(cs):
        return {k: cs[k] for k in ("name", "image", "ready", "restartCount", "state", "lastState") if k in cs}

    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {k: meta[k] for k in ("name", "namespace", "labels", "ownerReferences", "creationTimestamp")
                     if k in meta},
        "spec": dict({"containers": [container(c) for c in spec.get("containers") or []],
                      "initContainers": [container(c) for c in spec.get("initContainers") or []]},
                     **{k: spec[k] for k in ("nodeName", "serviceAccountName") if k in spec}),
        "status": {k: [state(cs) for cs in status[k]] if k.endswith("Statuses") else status[k]
                   for k in ("phase", "reason", "message", "conditions", "containerStatuses",
                             "initContainerStatuses") if k in status},
    }


# -- findings ---------------------------------------------------------------------------------------------------


def _true_conditions(obj, types=None):
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if cond.get("status") == "True" and (types is None or cond.get("type") in types):
            yield cond


def findings_for(kind, items):
    """Lines worth reading first, for one kind."""
    found = []
    for obj in items:
        status = obj.get("status") or {}
        ref = vocabulary.object_ref(obj)
        if kind == "ClusterServiceVersion" and status.get("phase") != "Succeeded":
            found.append("%s is %s (%s): %s" % (
                ref, status.get("phase") or "without phase", status.get("reason") or "no reason",
                status.get("message") or "no message"))
        elif kind == "Subscription":
            for cond in _true_conditions(obj, ("ResolutionFailed", "CatalogSourcesUnhealthy", "InstallPlanFailed",
                                               "InstallPlanMissing")):
                found.append("%s: %s %s" % (ref, cond.get("type"), cond.get("message") or cond.get("reason") or ""))
        elif kind == "InstallPlan":
            if status.get("phase") == "RequiresApproval" or (obj.get("spec") or {}).get("approved") is False:
                found.append("%s waits for approval (%s)"
                             % (ref, ", ".join((obj.get("spec") or {}).get("clusterServiceVersionNames") or [])))
            elif status.get("phase") == "Failed":
                found.append("%s failed: %s"
                             % (ref, "; ".join(c.get("message", "") for c in status.get("conditions") or [])))
        elif kind == "CatalogSource":
            state = ((status.get("connectionState") or {}).get("lastObservedState"))
            if state != "READY":
                found.append("%s is %s" % (ref, state or "not reporting a state"))
        elif kind in ("NicClusterPolicy", "ClusterPolicy", "MacvlanNetwork", "IPoIBNetwork", "HostDeviceNetwork"):
            if status.get("state") != "ready":
                reason = status.get("reason") or "; ".join(c.get("message", "") for c in status.get("conditions") or []
                                                           if c.get("type") == "Error" and c.get("message"))
                found.append("%s is %s%s" % (ref, status.get("state") or "without state",
                                             ": " + reason if reason else ""))
                for applied in status.get("appliedStates") or []:
                    if applied.get("state") not in ("ready", "ignore"):
                        found.append("  %s: %s %s" % (applied.get("name"), applied.get("state"),
                                                      applied.get("message") or ""))
        elif kind == "SriovNetworkNodeState" and status.get("syncStatus") != "Succeeded":
            found.append("%s syncStatus %s%s" % (ref, status.get("syncStatus") or "not reported",
                                                 ": " + status["lastSyncError"] if status.get("lastSyncError") else ""))
        elif kind == "MachineConfigPool":
            for cond in _true_conditions(obj, ("Degraded", "NodeDegraded", "RenderDegraded")):
                found.append("%s %s: %s" % (ref, cond.get("type"), cond.get("message") or cond.get("reason") or ""))
            if (obj.get("spec") or {}).get("paused"):
                found.append("%s is paused (spec.paused: true): the Machine Config Operator rolls nothing out" % ref)
            if status.get("updatedMachineCount") != status.get("machineCount"):
                found.append("%s: %s of %s nodes updated" % (ref, status.get("updatedMachineCount"),
                                                             status.get("machineCount")))
        elif kind == "Node":
            ready = [c for c in status.get("conditions") or [] if c.get("type") == "Ready"]
            if not ready or ready[0].get("status") != "True":
                found.append("%s is NotReady%s" % (ref, ": " + ready[0].get("message", "") if ready else ""))
            if (obj.get("spec") or {}).get("unschedulable"):
                found.append("%s is cordoned (SchedulingDisabled)" % ref)
        elif kind == "Pod" and pod_states.operand_problems([obj]):
            # A crash-looping container leaves its pod Running: the container states say what fails.
            found.extend(pod_states.describe_operand_problem(problem) for problem in pod_states.operand_problems([obj]))
        elif kind == "Pod" and status.get("phase") not in ("Running", "Succeeded"):
            waiting = [cs.get("state", {}).get("waiting", {}) for cs in status.get("containerStatuses") or []]
            reasons = ", ".join("%s%s" % (w.get("reason"), " (%s)" % w["message"] if w.get("message") else "")
                                for w in waiting if w)
            found.append("%s is %s%s" % (ref, status.get("phase") or "Unknown", ": " + reasons if reasons else ""))
    if kind == "Event":
        warnings = [e for e in items if e.get("type") == "Warning"]
        warnings.sort(key=lambda e: e.get("lastTimestamp") or e.get("eventTime") or "")
        for event in warnings[-20:]:
            involved = event.get("involvedObject") or {}
            found.append("Warning %s on %s %s/%s: %s" % (
                event.get("reason"), involved.get("kind"), involved.get("namespace") or "-", involved.get("name"),
                event.get("message")))
    return found


# -- collection -------------------------------------------------------------------------------------------------


def abnormal(kind, obj):
    """Whether an object of a capped kind says something is wrong (what the findings report on)."""
    status = obj.get("status") or {}
    if kind == "Node":
        ready = [c for c in status.get("conditions") or [] if c.get("type") == "Ready"]
        return not ready or ready[0].get("status") != "True" or bool((obj.get("spec") or {}).get("unschedulable"))
    if kind == "SriovNetworkNodeState":
        return status.get("syncStatus") != "Succeeded" or bool(status.get("lastSyncError"))
    if kind == "Pod":
        restarted = any((cs.get("restartCount") or 0) > 0 for cs in status.get("containerStatuses") or [])
        return status.get("phase") not in ("Running", "Succeeded") or restarted
    if kind == "Event":
        return obj.get("type") == "Warning"
    return True


class _Capped:
    """The part of a paged list a capped kind keeps: abnormal objects (up to ABNORMAL_CAP), then a sample."""

    def __init__(self, kind):
        self.kind = kind
        self.items, self.listed, self.abnormal, self.normal = [], 0, 0, 0

    def page(self, items, first):
        if first:
            self.items, self.listed, self.abnormal, self.normal = [], 0, 0, 0
        for item in items:
            self.listed += 1
            if abnormal(self.kind, item):
                self.abnormal += 1
                if self.abnormal <= ABNORMAL_CAP:
                    self.items.append(item)
            else:
                self.normal += 1
                if self.normal <= NORMAL_SAMPLE:
                    self.items.append(item)


def safe_name(text):
    return re.sub(r"[^A-Za-z0-9._-]", "_", text)


# The collection's network kinds, listed with the managed selector above; their operators write one
# NetworkAttachmentDefinition per network, of the same name (Mellanox/network-operator pkg/state/
# state_macvlan_network.go, state_ipoib_network.go, state_hostdevice_network.go;
# sriov-network-operator controllers/generic_network_controller.go), in the network's target namespace.
NETWORK_KINDS = ("MacvlanNetwork", "IPoIBNetwork", "HostDeviceNetwork", "SriovNetwork", "SriovIBNetwork")


def _keep_own_attachments(groups):
    """Drop the NetworkAttachmentDefinitions that no network of the collection explains: other teams' CNI configs
    are theirs (issue 34) and may hold credentials of their own plugins."""
    own = set()
    for (kind, _plural, _namespace), items in groups.items():
        if kind in NETWORK_KINDS:
            own.update((item.get("metadata") or {}).get("name") for item in items)
    for key in [key for key in groups if key[0] == "NetworkAttachmentDefinition"]:
        groups[key] = [item for item in groups[key] if (item.get("metadata") or {}).get("name") in own]
        if not groups[key] and key[2] not in (None, "*"):
            del groups[key]
            groups.setdefault((key[0], key[1], "*"), [])


class DiagnosticsCollector:
    """Runs the plan against ``cluster`` (a ClusterClient); ``secrets`` are strings never to be written."""

    def __init__(self, cluster, namespaces, marketplace_namespace="openshift-marketplace",
                 managed_selector=vocabulary.MANAGED_BY_SELECTOR, secrets=(), machineconfig_names=()):
        self.cluster = cluster
        self.requests = plan_requests(namespaces, marketplace_namespace, managed_selector, machineconfig_names)
        self.secrets = sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True)
        self.collected = []   # {kind, namespace, count, file}
        self.unavailable = []  # {kind, namespace, reason}
        self.findings = []
        self.unreachable = None  # why the API server did not answer the probe
        self.capped = []  # {kind, namespace, listed, abnormal, written} of the capped lists that left objects out
        self.requests_sent = 0
        self.logs = []  # {namespace, pod, container, text} of failing containers (LOG_CAP at most)

    def _request(self, method, path, **query):
        """Every read goes through the client (its timeouts and retries); diagnostics only read."""
        if method != "get":
            raise ValueError("diagnostics only read")
        return self.cluster.raw_get(path, **query)

    def _list(self, request):
        """The items to keep of one list request, read in pages; capped kinds keep a part (self.capped says so)."""
        query = {}
        if request["label_selector"]:
            query["label_selector"] = request["label_selector"]
        path = list_path(request["api_version"], request["plural"], request["namespace"])
        if request["kind"] not in CAPPED_KINDS:
            return paged_list(self._request, path, query)[0]
        capped = _Capped(request["kind"])
        paged_list(self._request, path, query, on_page=capped.page)
        if len(capped.items) < capped.listed:
            self.capped.append({"kind": request["kind"], "namespace": request["namespace"], "listed": capped.listed,
                                "abnormal": capped.abnormal, "written": len(capped.items)})
        return capped.items

    def _named(self, request):
        """The object of one GET by name, as a list: empty when it does not exist or does not match the label
        selector (a GET ignores labelSelector)."""
        try:
            item = self._request("get", "%s/%s" % (list_path(request["api_version"], request["plural"]),
                                                   request["name"]))
        except Exception as exc:  # pylint: disable=broad-except
            if api_status(exc) == 404:
                return []
            raise
        labels = (item.get("metadata") or {}).get("labels")
        return [item] if labels_match(parse_label_selector(request["label_selector"]), labels) else []

    def probe(self):
        """None when the API server answers (any HTTP status will do), else why not; one request, no retries."""
        self.requests_sent += 1
        try:
            self.cluster.probe(PROBE_PATH, PROBE_TIMEOUT)
        except Exception as exc:  # pylint: disable=broad-except
            if api_status(exc) is None:
                return scrub_text(api_message(exc) or exc.__class__.__name__, self.secrets)
        return None

    def collect(self):
        """{(kind, plural, namespace or None): [redacted objects]} for everything the plan could read; {} when the API
        server does not answer the probe (self.unreachable says why)."""
        groups = {}
        self.unreachable = self.probe()
        if self.unreachable:
            return groups
        for request in self.requests:
            self.requests_sent += 1
            try:
                items = self._named(request) if request.get("name") else self._list(request)
            except Exception as exc:  # pylint: disable=broad-except
                status = api_status(exc)
                reason = {404: "not served (operator or CRD not installed)",
                          403: "forbidden for these credentials"}.get(status,
                                                                      scrub_text(api_message(exc), self.secrets))
                self.unavailable.append({"kind": request["kind"], "namespace": request["namespace"], "reason": reason})
                continue
            for item in items:
                item.setdefault("apiVersion", request["api_version"])
                item.setdefault("kind", request["kind"])
                if request["kind"] == "Node":
                    item = trim_node(item)
                elif request["kind"] == "Pod":
                    item = trim_pod(item)
                item = redact_object(item, self.secrets)
                namespace = (item.get("metadata") or {}).get("namespace") if request["namespaced"] else None
                groups.setdefault((request["kind"], request["plural"], namespace), []).append(item)
            if not items:
                # Nothing found still gets a line in the summary; "*" marks a list across all namespaces.
                where = (request["namespace"] or "*") if request["namespaced"] else None
                groups.setdefault((request["kind"], request["plural"], where), [])
        _keep_own_attachments(groups)
        for (kind, _plural, _namespace), items in groups.items():
            items.sort(key=lambda o: ((o.get("metadata") or {}).get("namespace") or "",
                                      (o.get("metadata") or {}).get("name") or ""))
        self._collect_logs([pod for (kind, _p, _n), items in sorted(groups.items(),
                                                                    key=lambda kv: (kv[0][0], kv[0][2] or ""))
                            if kind == "Pod" for pod in items])
        return groups

    def _collect_logs(self, pods):
        """The last LOG_LINES lines of each failing container (the previous run's for a crash loop), LOG_CAP at most."""
        for problem in pod_states.operand_problems(pods)[:LOG_CAP]:
            path = "/api/v1/namespaces/%s/pods/%s/log" % (problem["namespace"], problem["pod"])
            query = [("container", problem["container"]), ("tailLines", LOG_LINES)]
            if problem["reason"] == "CrashLoopBackOff":
                query.append(("previous", "true"))
            self.requests_sent += 1
            try:
                text = self.cluster.read_text(path, query)
            except Exception as exc:  # pylint: disable=broad-except
                text = "(no log: %s)" % scrub_text(api_message(exc), self.secrets)
            self.logs.append(dict(problem, text=scrub_text(text, self.secrets)))

    def write(self, dest, groups, failure=None, failed_task=None, check_mode=False, dumper=None):
        """Write one YAML list per kind and namespace plus summary.md; returns the file paths (relative to dest)."""
        files = []
        by_kind = {}
        for (kind, plural, namespace), items in sorted(groups.items(), key=lambda kv: (kv[0][2] or "", kv[0][1])):
            by_kind.setdefault(kind, []).extend(items)
            if not items:
                self.collected.append({"kind": kind, "namespace": None if namespace == "*" else namespace, "count": 0,
                                       "file": None, "scope": "all namespaces" if namespace == "*"
                                       else ("cluster" if namespace is None else "namespace")})
                continue
            relative = os.path.join(safe_name(namespace) if namespace else CLUSTER_DIR, "%s.yaml" % safe_name(plural))
            files.append(relative)
            self.collected.append({"kind": kind, "namespace": namespace, "count": len(items), "file": relative})
            if not check_mode:
                _write_private(os.path.join(dest, relative),
                               dumper({"apiVersion": "v1", "kind": "List", "items": items}))
        for entry in self.logs:
            relative = os.path.join(safe_name(entry["namespace"]), LOG_DIR,
                                    "%s.%s.log" % (safe_name(entry["pod"]), safe_name(entry["container"])))
            files.append(relative)
            if not check_mode:
                _write_private(os.path.join(dest, relative), entry["text"])
        for _api, kind, _plural, _where, _sel in PLAN:
            self.findings.extend(findings_for(kind, by_kind.get(kind, [])))
        for entry in self.logs:
            lines = [line.strip() for line in entry["text"].splitlines() if line.strip()][-5:]
            if lines:
                self.findings.append("log of %s/%s container %s ends: %s" % (
                    entry["namespace"], entry["pod"], entry["container"], " | ".join(lines)))
        summary = self.summary(failure, failed_task)
        files.append("summary.md")
        if not check_mode:
            _write_private(os.path.join(dest, "summary.md"), summary)
        return files

    def summary(self, failure=None, failed_task=None):
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        if self.unreachable:
            lines = ["# GPUDirect RDMA diagnostics", "",
                     "Not collected (%s): the API server did not answer (%s). Nothing was listed."
                     % (now, self.unreachable), ""]
        else:
            lines = ["# GPUDirect RDMA diagnostics", "",
                     "Collected %s with %d list requests. Secrets are redacted." % (now, len(self.requests)), ""]
        if failed_task or failure:
            lines += ["## Failure", ""]
            if failed_task:
                lines.append("Task: %s" % scrub_text(failed_task, self.secrets))
                lines.append("")
            if failure:
                lines += ["```", scrub_text(failure, self.secrets), "```", ""]
        if self.unreachable:
            return "\n".join(lines) + "\n"
        lines += ["## Findings", ""]
        lines += ["- %s" % f.replace("\n", " ")
                  for f in self.findings] or ["- nothing abnormal in the collected objects"]
        lines += ["", "## Collected", "", "| Kind | Namespace | Objects | File |", "|---|---|---|---|"]
        for entry in self.collected:
            where = "(all namespaces)" if entry.get("scope") == "all namespaces" else entry["namespace"] or "(cluster)"
            lines.append("| %s | %s | %d | %s |" % (entry["kind"], where, entry["count"], entry["file"] or "-"))
        if self.capped:
            lines += ["", "## Capped", "",
                      "Large lists keep every abnormal object (up to %d) and the first %d others:"
                      % (ABNORMAL_CAP, NORMAL_SAMPLE), ""]
            lines += ["- %s%s: %d listed, %d abnormal, %d written"
                      % (c["kind"], " in " + c["namespace"] if c["namespace"] else "", c["listed"], c["abnormal"],
                         c["written"]) for c in self.capped]
        if self.unavailable:
            lines += ["", "## Not collected", ""]
            lines += ["- %s%s: %s" % (u["kind"], " in " + u["namespace"] if u["namespace"] else "", u["reason"])
                      for u in self.unavailable]
        return "\n".join(lines) + "\n"


def _write_private(path, text):
    directory = os.path.dirname(path)
    if not os.path.isdir(directory):
        os.makedirs(directory, 0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(text)


def client_secrets(k8s_client, api_key=None, password=None):
    """Credential strings the client holds (bearer token, password), and the ``api_key`` and ``password`` the task
    gave: they are scrubbed from anything written."""
    found = [value for value in (api_key, password) if value]
    configuration = getattr(getattr(getattr(k8s_client, "client", None), "client", None), "configuration", None)
    if configuration is not None:
        for value in (getattr(configuration, "api_key", None) or {}).values():
            if value:
                found.append(value)
                found.append(re.sub(r"^Bearer\s+", "", value))
        if getattr(configuration, "password", None):
            found.append(configuration.password)
    return found
