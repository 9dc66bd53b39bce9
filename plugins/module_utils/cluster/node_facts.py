# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Node hardware facts through short-lived pods: one pod per node runs the facts collector.

RHCOS nodes are not reached over SSH, so the collector (plugins/module_utils/hardware, standard
library only) runs in a pod pinned to each node with ``spec.nodeName``, reading the host's /sys and
/proc through read-only hostPath mounts. The script travels in a ConfigMap generated at run time
from the collection's own sources, so any image with python3 works and nothing is built.

At most ``max_pods_in_flight`` pods run at once (cluster/pods.py follows them with one watch); the pods are
deleted by label in one request and the script ConfigMap by name, also when something fails. Each node's
document is kept on the cluster (a ConfigMap per node in the facts namespace, keyed by a hardware fingerprint:
NFD's PCI labels, kernel and boot ID, the collector's source), so a later run starts pods
only for nodes whose fingerprint changed, or for all with ``refresh``. A cached document goes through the same
parsing and checks as a fresh one: it is data read from the cluster, not trusted.

Manifest builders, fingerprints and log parsing are pure functions (unit tested), like the node selection
(cluster/facts_nodes.py) and the script (hardware/standalone.py); ``FactsRun`` does the API calls.
"""

import base64
import gzip
import hashlib
import json
import time

from ansible_collections.gpudirect.openshift.plugins.module_utils.names import MANAGED_BY_LABEL, MANAGED_BY_VALUE
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.api_errors import (
    ClusterError, api_message, api_status)
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.pods import PodRun
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.waiter import WaitTimeout, wait_for
from ansible_collections.gpudirect.openshift.plugins.module_utils.verify.pod_states import (
    new_run_id, pod_phase, pod_state_text)
from ansible_collections.gpudirect.openshift.plugins.module_utils.hardware.standalone import standalone_script
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.facts_nodes import (
    CONTROL_PLANE_REFUSAL, GPU_RESOURCE, allocatable_gpus, fill_from_node_labels, fingerprint_matches, node_labels,
    select_nodes, without_control_plane)

COMPONENT_LABEL = "app.kubernetes.io/component"
COMPONENT_VALUE = "gpudirect-facts"
RUN_LABEL = "gpudirect.openshift/facts-run"
NODE_ANNOTATION = "gpudirect.openshift/node"
SCRIPT_KEY = "gpudirect-facts.py"
SCRIPT_DIR = "/opt/gpudirect"
HOST_SYS = "/host/sys"
HOST_PROC = "/host/proc"
# The only /proc entries the collector reads (hardware/sysfs.py read_proc_modules, read_kernel_release,
# read_nvidia_proc_version), not the host's whole /proc. /proc/driver is a directory because driver/nvidia exists only
# once the GPU driver is loaded, and a hostPath of type File that is missing keeps the pod from starting.
PROC_MOUNTS = (("host-proc-modules", "modules", "File"), ("host-proc-osrelease", "sys/kernel/osrelease", "File"),
               ("host-proc-driver", "driver", "Directory"))
CONTAINER = "collector"
DEFAULT_IMAGE = ("registry.access.redhat.com/ubi9/python-312:9.6-1762197685"
                 "@sha256:7b8f2ee184b40eb160e2c90c240a16fd9ec93279cc1553c0b8b872e2274a139b")
DEFAULT_TOLERATIONS = [{"operator": "Exists"}]
DEFAULT_MAX_PODS_IN_FLIGHT = 50
# The per-node cache: data (no grant), in the facts namespace, found by its own component label.
CACHE_COMPONENT = "gpudirect-facts-cache"
CACHE_NODE_LABEL = "gpudirect.openshift/facts-node"
FINGERPRINT_ANNOTATION = "gpudirect.openshift/hardware-fingerprint"
CACHE_KEY = "facts.json.gz"
NFD_PCI_PREFIX = "feature.node.kubernetes.io/pci-"


# -- names and manifests ----------------------------------------------------------------------


def pod_name(prefix, run_id, node):
    """DNS-1123 label (at most 63 characters) naming the node; long names keep a hash for uniqueness."""
    base = "%s-%s-" % (prefix, run_id)
    slug = "".join(c if c.isalnum() else "-" for c in node.lower()).strip("-")
    if len(base) + len(slug) <= 63:
        return base + slug
    digest = hashlib.sha1(node.encode("utf-8")).hexdigest()[:6]
    keep = max(0, 63 - len(base) - len(digest) - 1)
    return (base + slug[:keep]).rstrip("-") + "-" + digest


def _labels(run_id):
    return {COMPONENT_LABEL: COMPONENT_VALUE, MANAGED_BY_LABEL: MANAGED_BY_VALUE, RUN_LABEL: run_id}


def configmap_manifest(name, namespace, run_id, script):
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "labels": _labels(run_id)},
        "data": {SCRIPT_KEY: script},
    }


def collector_command(nvidia_smi):
    """The container command: the script alone, isolated mode (-I: no env, no user site), no .pyc writes."""
    return ["python3", "-I", "-B", "%s/%s" % (SCRIPT_DIR, SCRIPT_KEY), "--sys-root", HOST_SYS, "--proc-root", HOST_PROC,
            "--nvidia-smi", "auto" if nvidia_smi else "skip", "--json"]


def pod_manifest(name, namespace, node, run_id, configmap, image, service_account=None, tolerations=None,
                 nvidia_smi=False, deadline_seconds=None, image_pull_policy="IfNotPresent"):
    """Pod that runs the collector once on ``node``.

    Privileges: read-only hostPath mounts of /sys and of the /proc entries the collector reads (PROC_MOUNTS; the SCC
    must allow hostPath volumes); no privileged mode, no host namespaces, every capability dropped, read-only root.
    ``nvidia_smi`` is the number of GPUs to request (0: none): the pod asks the NVIDIA device plugin for them, whose
    Allocate answer names the devices for the container toolkit to expose with nvidia-smi; no
    NVIDIA_VISIBLE_DEVICES=all, which bypasses the device plugin's accounting (NVIDIA/k8s-device-plugin
    internal/plugin/server.go Allocate)."""
    container = {
        "name": CONTAINER,
        "image": image,
        "imagePullPolicy": image_pull_policy,
        "command": collector_command(nvidia_smi),
        "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}, "limits": {"memory": "256Mi"}},
        "securityContext": {
            "privileged": False,
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "capabilities": {"drop": ["ALL"]},
        },
        "volumeMounts": [{"name": "host-sys", "mountPath": HOST_SYS, "readOnly": True}] + [
            {"name": volume, "mountPath": HOST_PROC + "/" + entry, "readOnly": True}
            for volume, entry, _type in PROC_MOUNTS] + [
            {"name": "collector", "mountPath": SCRIPT_DIR, "readOnly": True}],
        "terminationMessagePolicy": "FallbackToLogsOnError",
    }
    if nvidia_smi:
        container["resources"]["limits"][GPU_RESOURCE] = str(int(nvidia_smi))
        container["env"] = [{"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "utility"}]
    spec = {
        "nodeName": node,
        "restartPolicy": "Never",
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "terminationGracePeriodSeconds": 1,
        "tolerations": list(tolerations if tolerations is not None else DEFAULT_TOLERATIONS),
        "containers": [container],
        "volumes": [{"name": "host-sys", "hostPath": {"path": "/sys", "type": "Directory"}}] + [
            {"name": volume, "hostPath": {"path": "/proc/" + entry, "type": kind}}
            for volume, entry, kind in PROC_MOUNTS] + [
            {"name": "collector", "configMap": {"name": configmap, "defaultMode": 0o444}}],
    }
    if service_account:
        spec["serviceAccountName"] = service_account
    if deadline_seconds:
        spec["activeDeadlineSeconds"] = int(deadline_seconds)
    metadata = {"name": name, "namespace": namespace, "labels": _labels(run_id), "annotations": {NODE_ANNOTATION: node}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def _left_by_a_run(obj):
    """Whether ``obj`` is one that a facts run creates for itself (per-run namespace, service account or SCC grant):
    labelled by the collection as the facts component. What an administrator applies from deploy/rbac/workloads.yml
    carries neither label and is never taken over."""
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return labels.get(MANAGED_BY_LABEL) == MANAGED_BY_VALUE and labels.get(COMPONENT_LABEL) == COMPONENT_VALUE


def scc_role_binding(namespace, service_account, scc):
    """RoleBinding that lets the service account use an SCC (OpenShift ships a ClusterRole per SCC)."""
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "%s-scc-%s" % (service_account, scc), "namespace": namespace,
                     "labels": {MANAGED_BY_LABEL: MANAGED_BY_VALUE, COMPONENT_LABEL: COMPONENT_VALUE}},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": "system:openshift:scc:%s" % scc},
        "subjects": [{"kind": "ServiceAccount", "name": service_account, "namespace": namespace}],
    }


# -- logs and documents ----------------------------------------------------------------------


def parse_collector_log(text):
    """The facts dict from a pod log: the last line that is a JSON object (runtimes may add lines)."""
    if isinstance(text, (bytes, bytearray)):
        text = text.decode("utf-8", "replace")
    if not text or not text.strip():
        raise ValueError("the collector printed nothing")
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                facts = json.loads(line)
            except ValueError as exc:
                raise ValueError("the collector output is not valid JSON (%s); last lines: %s" % (exc, _tail(text)))
            if not isinstance(facts, dict) or "readiness" not in facts:
                raise ValueError("the collector output is JSON but not a facts document")
            return facts
    raise ValueError("no JSON document in the collector output; last lines: %s" % _tail(text))


def _tail(text, lines=5):
    return " | ".join(text.strip().splitlines()[-lines:])[-600:]


# -- the cache on the cluster -----------------------------------------------------------------


def script_digest(script):
    return hashlib.sha256(script.encode("utf-8")).hexdigest()[:16]


def hardware_fingerprint(node, digest, nvidia_smi=False):
    """'<boot>/<pci>': what the node's document depends on, as two short hashes. <boot>: kernel and boot ID (hardware
    and drivers change with a reboot) and the collector that would read it; <pci>: NFD's PCI device labels
    (feature.node.kubernetes.io/pci-*), or 'none' while NFD has not labelled the node. A change neither shows (VFs or
    a driver loaded without a reboot) needs refresh."""
    meta = node.get("metadata") or {}
    labels = meta.get("labels") or {}
    info = (node.get("status") or {}).get("nodeInfo") or {}
    boot = {"kernel": info.get("kernelVersion"), "boot": info.get("bootID"), "collector": digest,
            "nvidia_smi": bool(nvidia_smi)}
    pci = sorted((k, v) for k, v in labels.items() if k.startswith(NFD_PCI_PREFIX))
    return "%s/%s" % (_digest(boot), _digest(pci) if pci else "none")


def _digest(value):
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode("utf-8")).hexdigest()[:24]


def cache_name(prefix, node):
    return pod_name(prefix, "cache", node)


def cache_configmap(name, namespace, node, fingerprint, log_line):
    """The node's document as the collector printed it, gzip-compressed (ConfigMaps hold at most 1 MiB)."""
    packed = base64.b64encode(gzip.compress(log_line.encode("utf-8"), mtime=0)).decode("ascii")
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace,
                     "labels": {COMPONENT_LABEL: CACHE_COMPONENT, MANAGED_BY_LABEL: MANAGED_BY_VALUE},
                     "annotations": {FINGERPRINT_ANNOTATION: fingerprint, NODE_ANNOTATION: node}},
        "binaryData": {CACHE_KEY: packed},
    }


def cached_document(configmap):
    """(node, fingerprint, facts) from a cache ConfigMap; parsed and checked like a pod log; ValueError when
    unusable."""
    meta = configmap.get("metadata") or {}
    annotations = meta.get("annotations") or {}
    packed = (configmap.get("binaryData") or {}).get(CACHE_KEY)
    if not packed:
        raise ValueError("no %s in ConfigMap %s" % (CACHE_KEY, meta.get("name")))
    try:
        text = gzip.decompress(base64.b64decode(packed)).decode("utf-8")
    except (ValueError, OSError, EOFError) as exc:
        raise ValueError("ConfigMap %s does not hold a compressed document: %s" % (meta.get("name"), exc))
    return annotations.get(NODE_ANNOTATION), annotations.get(FINGERPRINT_ANNOTATION), parse_collector_log(text)


def _document_line(text):
    """The JSON line of a log that parse_collector_log accepted (what the cache stores)."""
    for line in reversed(text.strip().splitlines()):
        if line.strip().startswith("{"):
            return line.strip()
    return ""


# -- the run ----------------------------------------------------------------------------------


class FactsRun:
    """One gathering: plan (check mode) or create -> wait -> read -> always delete; cached nodes start no pod.

    on_document(node, facts) sees each node's document once (cached or fresh), so the caller can write it out and
    keep only what it needs."""

    def __init__(self, cluster, settings, run_id=None, clock=time.monotonic, on_document=None):
        self.cluster = cluster
        self.settings = settings
        self.run_id = run_id or new_run_id()
        self.clock = clock
        self.namespace = settings.namespace
        self.configmap = "%s-%s" % (settings.name_prefix, self.run_id)
        self.changed = False
        self.created = []
        self.on_document = on_document
        self.pods = None

    def _resources(self):
        return {kind: self.cluster.require(api, kind) for api, kind in (
            ("v1", "Node"), ("v1", "Pod"), ("v1", "ConfigMap"), ("v1", "Namespace"), ("v1", "ServiceAccount"))}

    def plan(self, node_objects):
        settings = self.settings
        selected, unknown, how = select_nodes(node_objects, settings.nodes, settings.node_selector)
        selected, _refused, _left_out = without_control_plane(node_objects, selected, how, settings.allow_control_plane)
        # i20: a facts pod asks the device plugin for the node's GPUs (nvidia-smi) instead of
        # NVIDIA_VISIBLE_DEVICES=all.
        self._gpus = {n["metadata"]["name"]: allocatable_gpus(n) for n in node_objects} if settings.nvidia_smi else {}
        return selected, unknown, how, [self._pod(node) for node in selected]

    def _pod(self, node):
        settings = self.settings
        return pod_manifest(pod_name(settings.name_prefix, self.run_id, node), self.namespace, node, self.run_id,
                            self.configmap, settings.image, settings.service_account, settings.tolerations,
                            getattr(self, "_gpus", {}).get(node, 0), settings.timeout,
                            settings.image_pull_policy or "IfNotPresent")

    def list_nodes(self, resources):
        selector = ",".join(self.settings.label_selectors or []) or None
        nodes, _rv = self.cluster.list(resources["Node"], label_selector=selector)
        return nodes

    def _cache(self, resources, usable=None, take=None):
        """{node: (fingerprint, ConfigMap name)} of the readable cache entries, read page by page; broken ones are
        ignored (re-gathered). An entry that ``usable(node, fingerprint, facts)`` accepts goes to ``take(node, facts)``
        while its page is read, and its facts are not kept: at 1000 nodes the documents are never all in memory at
        once (issue 38: holding them made the re-run's module process peak at 277 MB)."""
        if not self.settings.cache:
            return {}
        cache = {}

        def page(items, first):
            if first:
                cache.clear()  # the list started over (an expired continue token); what was taken stays taken
            for item in items:
                try:
                    node, fingerprint, facts = cached_document(item)
                except ValueError:
                    continue
                if node:
                    cache[node] = (fingerprint, item["metadata"]["name"])
                    if usable is not None and usable(node, fingerprint, facts):
                        take(node, facts)
            items[:] = []  # the page's ConfigMaps (the compressed documents) go with it
        try:
            self.cluster.list_pages(resources["ConfigMap"], page, namespace=self.namespace,
                                    label_selector="%s=%s" % (COMPONENT_LABEL, CACHE_COMPONENT))
        except Exception as exc:  # pylint: disable=broad-except
            if api_status(exc) in (403, 404):
                return {}  # no namespace yet, or no right to read it: gather
            raise
        return cache

    def run(self, check_mode=False):
        resources = self._resources()
        nodes = self.list_nodes(resources)
        by_name = {node["metadata"]["name"]: node for node in nodes}
        selected, unknown, how = select_nodes(nodes, self.settings.nodes, self.settings.node_selector)
        selected, refused, left_out = without_control_plane(nodes, selected, how, self.settings.allow_control_plane)
        script = standalone_script()
        digest = script_digest(script)
        fingerprints = {name: hardware_fingerprint(by_name.get(name) or {}, digest, self.settings.nvidia_smi)
                        for name in selected}
        refresh = self.settings.refresh
        # A cached "not ready" may be out of date without any fingerprint change (the operators load drivers without a
        # reboot): with refresh_not_ready such nodes are read again; a ready document stays good until the fingerprint
        # moves.
        stale_verdict = self.settings.refresh_not_ready
        labels = {name: node_labels(node) for name, node in by_name.items()}
        result = {
            "run_id": self.run_id, "namespace": self.namespace, "selection": how, "nodes": {}, "failed_nodes": [],
            "pods": [], "configmap": self.configmap, "image": self.settings.image, "control_plane_left_out": left_out,
            "counts": {"selected": len(selected), "from_cache": 0, "gathered": 0, "failed": 0},
        }
        taken = set()

        def usable(name, fingerprint, facts):
            return (not refresh and name in fingerprints and name not in taken
                    and fingerprint_matches(fingerprint, fingerprints[name])
                    and not (stale_verdict and not ((facts or {}).get("readiness") or {}).get("ready")))

        def take(name, facts):
            taken.add(name)
            self._document(result, name, facts, labels.get(name))
        cache = self._cache(resources, usable, take)
        from_cache = [name for name in selected if name in taken]
        to_gather = [name for name in selected if name not in taken]
        pods = [self._pod(node) for node in to_gather]
        result["pods"] = [{"name": p["metadata"]["name"], "node": p["spec"]["nodeName"]} for p in pods]
        result["counts"]["from_cache"] = len(from_cache)
        result["failed_nodes"] = [{"node": name, "pod": None, "error": "no such node"} for name in unknown]
        # Named (or matched) control-plane nodes are a failure the user sees, not a silent omission.
        result["failed_nodes"] += [{"node": name, "pod": None, "error": CONTROL_PLANE_REFUSAL} for name in refused]
        if check_mode or not pods or self.settings.cache_only:
            result["counts"]["failed"] = len(result["failed_nodes"])
            return result
        try:
            self._prepare(resources)
            self.cluster.create(resources["ConfigMap"],
                                configmap_manifest(self.configmap, self.namespace, self.run_id, script))
            self.created.append(("ConfigMap", self.configmap))
            self._gather(resources, pods, result, labels,
                         {name: (fingerprints[name], cache.get(name)) for name in to_gather})
        finally:
            self.cleanup(resources)
        result["counts"]["failed"] = len(result["failed_nodes"])
        return result

    def _prepare(self, resources):
        """The namespace, service account and SCC binding the pods need. What this run creates is removed again at
        its end (cleanup): a namespace that lets pods mount host paths must not outlive the run that needed it."""
        settings = self.settings
        existing = self.cluster.get(resources["Namespace"], self.namespace)
        if existing is not None and (existing.get("metadata") or {}).get("deletionTimestamp"):
            self._wait_gone(resources["Namespace"], self.namespace)  # an earlier run's namespace still terminating
            existing = None
        if existing is not None and settings.create_namespace and _left_by_a_run(existing):
            # An interrupted run's namespace (issue 34): this run takes it over and removes it at its end, so that a
            # namespace whose pods may mount host paths does not outlive the runs that need it.
            self.created.append(("Namespace", self.namespace))
        if existing is None:
            if not settings.create_namespace:
                raise ClusterError("Namespace %s does not exist. A cluster administrator creates it, its service "
                                   "account and the SCC the collector pods need once: oc apply -f "
                                   "deploy/rbac/workloads.yml (or set hardware_facts_create_namespace and "
                                   "hardware_facts_manage_rbac to create them per run)" % self.namespace)
            self.cluster.create(resources["Namespace"], {"apiVersion": "v1", "kind": "Namespace", "metadata": {
                "name": self.namespace, "labels": {MANAGED_BY_LABEL: MANAGED_BY_VALUE, COMPONENT_LABEL: COMPONENT_VALUE,
                                                   # the collector pods need hostPath: keep Pod Security admission out
                                                   # of the way
                                                   "pod-security.kubernetes.io/enforce": "privileged",
                                                   "pod-security.kubernetes.io/audit": "privileged",
                                                   "pod-security.kubernetes.io/warn": "privileged",
                                                   "security.openshift.io/scc.podSecurityLabelSync": "false"}}})
            self.created.append(("Namespace", self.namespace))
            self.changed = True
        account = settings.service_account
        if not account:
            return
        if not settings.manage_rbac:
            # Prepared by an administrator: a missing account would only show as pods refused one by one.
            if self.cluster.get(resources["ServiceAccount"], account, self.namespace) is None:
                raise ClusterError("Service account %s/%s does not exist. A cluster administrator creates it once: oc "
                                   "apply -f deploy/rbac/workloads.yml (or set hardware_facts_manage_rbac to create it "
                                   "and its SCC RoleBinding per run)" % (self.namespace, account))
            return
        found = self.cluster.get(resources["ServiceAccount"], account, self.namespace)
        if found is None:
            self.cluster.create(resources["ServiceAccount"], {
                "apiVersion": "v1", "kind": "ServiceAccount", "metadata": {
                    "name": account, "namespace": self.namespace,
                    "labels": {MANAGED_BY_LABEL: MANAGED_BY_VALUE, COMPONENT_LABEL: COMPONENT_VALUE}}})
            self.created.append(("ServiceAccount", account))
            self.changed = True
        elif _left_by_a_run(found):
            self.created.append(("ServiceAccount", account))
        scc = settings.scc
        if scc:
            resources["RoleBinding"] = self.cluster.resource("rbac.authorization.k8s.io/v1", "RoleBinding")
            binding = scc_role_binding(self.namespace, account, scc)
            found = self.cluster.get(resources["RoleBinding"], binding["metadata"]["name"], self.namespace)
            if found is None:
                binding["metadata"]["labels"][RUN_LABEL] = self.run_id
                self.cluster.create(resources["RoleBinding"], binding)
                self.created.append(("RoleBinding", binding["metadata"]["name"]))
                self.changed = True
            elif _left_by_a_run(found):
                # A killed run's SCC grant (issue 34): removed at this run's end instead of kept for good.
                self.created.append(("RoleBinding", binding["metadata"]["name"]))

    def _wait_gone(self, resource, name):
        try:
            wait_for(self.cluster, resource, lambda state: not any(o["metadata"]["name"] == name for o in state or []),
                     timeout=min(self.settings.timeout or 300, 300))
        except WaitTimeout:
            raise ClusterError("Namespace %s is still terminating from an earlier facts run; try again when it is gone"
                               % name)

    def _document(self, result, node, facts, labels):
        fill_from_node_labels(facts, labels)
        if self.on_document is not None:
            self.on_document(node, facts)
        else:
            result["nodes"][node] = facts

    def _gather(self, resources, pods, result, labels, keys):
        """Create pods, at most max_pods_in_flight at once; read each as it ends, then store its document."""
        run = self.pods = PodRun(self.cluster, self.namespace, RUN_LABEL, self.run_id,
                                 grace=int(self.settings.pending_grace_period or 60), fail_at_once=("Unschedulable",),
                                 clock=self.clock)
        cap = max(1, int(self.settings.max_pods_in_flight or DEFAULT_MAX_PODS_IN_FLIGHT))
        timeout = float(self.settings.timeout or 300)
        queue = list(pods)
        in_flight = {}
        node_of = {}
        touched = set()

        def fail(name, error):
            in_flight.pop(name, None)
            result["failed_nodes"].append({"node": node_of[name], "pod": name, "error": error})

        def fill(now):
            while queue and len(in_flight) < cap:
                pod = queue.pop(0)
                name = pod["metadata"]["name"]
                node_of[name] = pod["spec"]["nodeName"]
                refused = run.create(pod)
                if refused is None:
                    in_flight[name] = {"deadline": now + timeout, "pod": None}
                    continue
                hint = ""
                if refused[0] == 403:
                    hint = (" (the service account needs an SCC that allows read-only hostPath volumes: apply "
                            "deploy/rbac/workloads.yml once, or see the scc and manage_rbac options)")
                in_flight[name] = None
                fail(name, "pod rejected: %s%s" % (refused[1], hint))

        def on_change(pod, now):
            name = pod["metadata"]["name"]
            if in_flight.get(name) is not None:
                in_flight[name]["pod"] = pod
                touched.add(name)

        def done(now):
            for name in list(in_flight):
                entry = in_flight[name]
                if name not in touched and now < entry["deadline"] and not run.problem_since.get(name):
                    continue
                pod = entry["pod"]
                if pod_phase(pod) == "Succeeded":
                    in_flight.pop(name)
                    self._read(run, name, node_of[name], result, labels, keys)
                    continue
                error = run.failure(pod, now) if pod is not None else None
                if error:
                    if error.startswith("pod failed"):
                        log = run.log(name, CONTAINER, tail=20)
                        if log and log.strip():
                            error += "; log: %s" % _tail(log)
                    fail(name, error)
                elif now >= entry["deadline"]:
                    fail(name, "timed out after %s s, pod %s" % (self.settings.timeout,
                                                                 pod_state_text(pod) if pod else "missing"))
            touched.clear()
            fill(now)
            return not queue and not in_flight

        def wake_at():
            return min([entry["deadline"] for entry in in_flight.values()] or [None]) if in_flight else None

        fill(self.clock())
        waves = -(-len(pods) // cap)
        _seen, finished = run.follow(on_change, done, waves * timeout + 60, wake_at=wake_at)
        if not finished:
            for name in list(in_flight) + [p["metadata"]["name"] for p in queue]:
                node_of.setdefault(name, name)
                fail(name, "timed out after %s s" % self.settings.timeout)

    def _read(self, run, name, node, result, labels, keys):
        try:
            text = run.log(name, CONTAINER, missing_ok=False)
            facts = parse_collector_log(text)
        except (ValueError, ClusterError) as exc:
            result["failed_nodes"].append({"node": node, "pod": name, "error": "unreadable facts: %s" % exc})
            return
        result["counts"]["gathered"] += 1
        fingerprint, cached = keys.get(node, (None, None))
        if self.settings.cache and fingerprint:
            self._store(node, fingerprint, _document_line(text), cached)
        self._document(result, node, facts, labels.get(node))

    def _store(self, node, fingerprint, line, cached):
        """Write the node's cache entry. A stale entry is replaced by delete and create: like the pods and the script,
        the collection's ConfigMaps in the facts namespace are created and deleted, never changed (least privilege)."""
        resource = self.cluster.require("v1", "ConfigMap")
        name = cached[1] if cached else cache_name(self.settings.name_prefix, node)
        body = cache_configmap(name, self.namespace, node, fingerprint, line)
        for attempt in (1, 2):
            if cached or attempt == 2:
                self.cluster.delete(resource, name, self.namespace)
            try:
                self.cluster.create(resource, body)
                break
            except Exception as exc:  # pylint: disable=broad-except
                if api_status(exc) != 409 or attempt == 2:
                    raise
        self.changed = True

    def cleanup(self, resources):
        """Delete what this run created: its pods by label in one request, then the script ConfigMap, and the
        RoleBinding, ServiceAccount and Namespace when it created them, newest first; errors collected, never raised
        early."""
        errors = []
        if self.pods is not None and self.pods.created:
            try:
                self.pods.delete_all()
            except Exception as exc:  # pylint: disable=broad-except
                errors.append("Pods %s=%s: %s" % (RUN_LABEL, self.run_id, api_message(exc)))
        for kind, name in reversed(self.created):
            try:
                self._delete_now(resources[kind], name)
            except Exception as exc:  # pylint: disable=broad-except
                errors.append("%s %s/%s: %s" % (kind, self.namespace, name, api_message(exc)))
        self.created = []
        if errors:
            raise ClusterError("Could not delete the facts objects (delete them by label %s=%s; teardown.yml removes "
                               "the rest): %s" % (RUN_LABEL, self.run_id, "; ".join(errors)))

    def _delete_now(self, resource, name):
        # The pods have finished: no grace period to wait for. A 404 (already gone) is no error.
        self.cluster.delete(resource, name, self.namespace, grace_period_seconds=0)
