# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Node hardware facts through short-lived pods: one pod per node runs the facts collector.

RHCOS nodes are not reached over SSH, so the collector (plugins/module_utils/hardware, standard
library only) runs in a pod pinned to each node with ``spec.nodeName``, reading the host's /sys and
/proc through read-only hostPath mounts. The script travels in a ConfigMap generated at run time
from the collection's own sources, so any image with python3 works and nothing is built.
The pods and the ConfigMap are always deleted, also when something fails.

Manifest builders, node selection and log parsing are pure functions (unit tested); ``FactsRun``
does the API calls: list nodes, ensure namespace and service account, create, watch (one watch for
all pods), read logs, delete.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import random
import time

from ansible_collections.gpudirect.openshift.plugins.module_utils.render.names import MANAGED_BY_LABEL, MANAGED_BY_VALUE
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.client import (
    ClusterError,
    api_message,
    api_status,
)
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.waiter import WaitTimeout, wait_for
# Imported (not only read) so that Ansible ships them with the module: their sources become the pod's script.
from ansible_collections.gpudirect.openshift.plugins.module_utils.hardware import (
    collector,
    devices,
    nvidia_smi,
    readiness,
    sysfs,
    topology,
)

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
GPU_RESOURCE = "nvidia.com/gpu"
CONTAINER = "collector"
NIC_VENDOR_LABEL = "feature.node.kubernetes.io/pci-15b3.present"
GPU_VENDOR_LABEL = "feature.node.kubernetes.io/pci-10de.present"
WORKER_LABEL = "node-role.kubernetes.io/worker"

DEFAULT_IMAGE = "registry.access.redhat.com/ubi9/python-312:9.6-1762197685@sha256:7b8f2ee184b40eb160e2c90c240a16fd9ec93279cc1553c0b8b872e2274a139b"
DEFAULT_TOLERATIONS = [{"operator": "Exists"}]

SCRIPT_MODULES = (("devices", devices), ("sysfs", sysfs), ("nvidia_smi", nvidia_smi), ("topology", topology),
                  ("readiness", readiness), ("collector", collector))

# Container waiting reasons that never resolve by themselves: fail the node at once instead of timing out.
FATAL_WAITING_REASONS = frozenset(["InvalidImageName", "ErrImageNeverPull", "CreateContainerConfigError",
                                   "CreateContainerError", "RunContainerError"])
_RUN_ID_CHARS = "bcdfghjklmnpqrstvwxz2456789"


# -- the script -------------------------------------------------------------------------------


def _module_source(module):
    """Source text of a hardware module, also when it is loaded from AnsiballZ's zip (no plain file)."""
    loader = getattr(module, "__loader__", None)
    source = loader.get_source(module.__name__) if loader is not None and hasattr(loader, "get_source") else None
    if source is None:
        with open(module.__file__, "r") as handle:
            source = handle.read()
    return source


def standalone_script():
    """One self-contained collector script (the layout of collector.py --write-standalone).

    Built from the loaded modules' sources rather than from files next to collector.py, because
    inside a module run those files sit in a zip archive."""
    sources = dict((name, _module_source(module)) for name, module in SCRIPT_MODULES)
    return collector.standalone_from_sources(sources, "gpudirect.openshift (node hardware facts)")


# -- names and manifests ----------------------------------------------------------------------


def new_run_id(rng=random):
    return "".join(rng.choice(_RUN_ID_CHARS) for _position in range(5))


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
    Allocate answer names the devices for the container toolkit to expose with nvidia-smi; no NVIDIA_VISIBLE_DEVICES=all,
    which bypasses the device plugin's accounting (NVIDIA/k8s-device-plugin internal/plugin/server.go Allocate)."""
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
            {"name": volume, "mountPath": HOST_PROC + "/" + entry, "readOnly": True} for volume, entry, _type in PROC_MOUNTS] + [
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
            {"name": volume, "hostPath": {"path": "/proc/" + entry, "type": kind}} for volume, entry, kind in PROC_MOUNTS] + [
            {"name": "collector", "configMap": {"name": configmap, "defaultMode": 0o444}}],
    }
    if service_account:
        spec["serviceAccountName"] = service_account
    if deadline_seconds:
        spec["activeDeadlineSeconds"] = int(deadline_seconds)
    metadata = {"name": name, "namespace": namespace, "labels": _labels(run_id), "annotations": {NODE_ANNOTATION: node}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def allocatable_gpus(node):
    """GPUs the node's device plugin offers (status.allocatable nvidia.com/gpu); 0 without the plugin."""
    value = (((node.get("status") or {}).get("allocatable")) or {}).get(GPU_RESOURCE)
    try:
        return int(str(value))
    except ValueError:
        return 0


def scc_role_binding(namespace, service_account, scc):
    """RoleBinding that lets the service account use an SCC (OpenShift ships a ClusterRole per SCC)."""
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "%s-scc-%s" % (service_account, scc), "namespace": namespace,
                     "labels": {MANAGED_BY_LABEL: MANAGED_BY_VALUE, COMPONENT_LABEL: COMPONENT_VALUE}},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:openshift:scc:%s" % scc},
        "subjects": [{"kind": "ServiceAccount", "name": service_account, "namespace": namespace}],
    }


# -- node selection ---------------------------------------------------------------------------


def _labels_of(node):
    return (node.get("metadata") or {}).get("labels") or {}


def _matches_selector(labels, selector):
    return all(labels.get(key) == str(value) for key, value in (selector or {}).items())


def select_nodes(nodes, names=None, node_selector=None):
    """(selected names, unknown names, how they were chosen).

    names: exactly these nodes; node_selector: label map all must match; neither: nodes with NFD's
    NVIDIA/Mellanox PCI vendor labels, else (NFD not run yet) every worker."""
    by_name = dict(((n.get("metadata") or {}).get("name"), n) for n in nodes)
    if names:
        wanted = []
        for name in names:
            if name not in wanted:
                wanted.append(name)
        return [n for n in wanted if n in by_name], [n for n in wanted if n not in by_name], "names"
    if node_selector:
        chosen = sorted(name for name, node in by_name.items() if _matches_selector(_labels_of(node), node_selector))
        return chosen, [], "node_selector"
    vendor = sorted(name for name, node in by_name.items()
                    if _labels_of(node).get(NIC_VENDOR_LABEL) == "true" or _labels_of(node).get(GPU_VENDOR_LABEL) == "true")
    if vendor:
        return vendor, [], "nfd_vendor_labels"
    return sorted(name for name, node in by_name.items() if WORKER_LABEL in _labels_of(node)), [], "workers"


# -- pod states and logs ----------------------------------------------------------------------


def pod_outcome(pod):
    """(terminal, error) for one pod: Succeeded -> (True, None); failures -> (True, text); else (False, None)."""
    status = pod.get("status") or {}
    phase = status.get("phase")
    if phase == "Succeeded":
        return True, None
    if phase == "Failed":
        return True, "pod failed: %s" % (_termination_text(status) or status.get("reason") or status.get("message") or "no reason given")
    for cond in status.get("conditions") or []:
        if cond.get("type") == "PodScheduled" and cond.get("status") == "False" and cond.get("reason") == "Unschedulable":
            return True, "pod cannot be scheduled: %s" % (cond.get("message") or "Unschedulable")
    for cstatus in status.get("containerStatuses") or []:
        waiting = (cstatus.get("state") or {}).get("waiting") or {}
        if waiting.get("reason") in FATAL_WAITING_REASONS:
            return True, "container cannot start: %s: %s" % (waiting.get("reason"), waiting.get("message") or "")
    return False, None


def pod_progress(pod):
    """Phase plus a waiting reason, for timeout messages (e.g. 'Pending (ImagePullBackOff: ...)')."""
    status = pod.get("status") or {}
    phase = status.get("phase") or "Pending"
    for cstatus in status.get("containerStatuses") or []:
        waiting = (cstatus.get("state") or {}).get("waiting") or {}
        if waiting.get("reason"):
            return "%s (%s%s)" % (phase, waiting["reason"], ": " + waiting["message"] if waiting.get("message") else "")
    return phase


def _termination_text(status):
    for cstatus in status.get("containerStatuses") or []:
        terminated = (cstatus.get("state") or {}).get("terminated") or {}
        if terminated:
            text = "exit code %s" % terminated.get("exitCode")
            if terminated.get("reason"):
                text += " (%s)" % terminated["reason"]
            if terminated.get("message"):
                text += ": %s" % terminated["message"].strip()[-500:]
            return text
    return None


GFD_MEMORY_LABEL = "nvidia.com/gpu.memory"


def fill_from_node_labels(facts, labels):
    """GPU memory the collector could not read (no nvidia-smi) from GPU feature discovery's node label, in MiB.

    The label describes one GPU model per node, so it is used only when every GPU of the node has the same known
    PCI device ID; memory read by nvidia-smi is never replaced."""
    gpus = (facts or {}).get("gpus") or []
    try:
        memory = int(str((labels or {}).get(GFD_MEMORY_LABEL)))
    except ValueError:
        return
    device_ids = set(gpu.get("pci_device_id") for gpu in gpus)
    if memory <= 0 or len(device_ids) != 1 or None in device_ids:
        return
    for gpu in gpus:
        if gpu.get("memory_total_mib") is None:
            gpu["memory_total_mib"] = memory
            gpu["memory_source"] = "node label %s" % GFD_MEMORY_LABEL


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


# -- the run ----------------------------------------------------------------------------------


class FactsRun:
    """One gathering: plan (check mode) or create -> wait -> read -> always delete."""

    def __init__(self, cluster, params, run_id=None, clock=time.monotonic):
        self.cluster = cluster
        self.params = params
        self.run_id = run_id or new_run_id()
        self.clock = clock
        self.namespace = params["namespace"]
        self.configmap = "%s-%s" % (params["name_prefix"], self.run_id)
        self.changed = False
        self.created = []

    def _resources(self):
        return dict((kind, self.cluster.require(api, kind)) for api, kind in (
            ("v1", "Node"), ("v1", "Pod"), ("v1", "ConfigMap"), ("v1", "Namespace"), ("v1", "ServiceAccount")))

    def plan(self, node_objects):
        params = self.params
        selected, unknown, how = select_nodes(node_objects, params.get("nodes"), params.get("node_selector"))
        gpus = dict((n["metadata"]["name"], allocatable_gpus(n)) for n in node_objects) if params.get("nvidia_smi") else {}
        pods = [pod_manifest(pod_name(params["name_prefix"], self.run_id, node), self.namespace, node, self.run_id, self.configmap,
                             params["image"], params.get("service_account"), params.get("tolerations"), gpus.get(node, 0),
                             params.get("timeout"), params.get("image_pull_policy") or "IfNotPresent")
                for node in selected]
        return selected, unknown, how, pods

    def list_nodes(self, resources):
        selector = ",".join(self.params.get("label_selectors") or []) or None
        nodes, _rv = self.cluster.list(resources["Node"], label_selector=selector)
        return nodes

    def run(self, check_mode=False):
        resources = self._resources()
        nodes = self.list_nodes(resources)
        selected, unknown, how, pods = self.plan(nodes)
        result = {
            "run_id": self.run_id, "namespace": self.namespace, "selection": how, "nodes": {}, "failed_nodes": [],
            "pods": [{"name": p["metadata"]["name"], "node": p["spec"]["nodeName"]} for p in pods],
            "configmap": self.configmap, "image": self.params["image"],
        }
        result["failed_nodes"] = [{"node": name, "pod": None, "error": "no such node"} for name in unknown]
        if check_mode or not pods:
            return result
        try:
            self._prepare(resources)
            self.cluster.create(resources["ConfigMap"], configmap_manifest(self.configmap, self.namespace, self.run_id, standalone_script()))
            self.created.append(("ConfigMap", self.configmap))
            outcomes = self._create_pods(resources, pods)
            pending = [p["metadata"]["name"] for p in pods if p["metadata"]["name"] not in outcomes]
            if pending:
                outcomes.update(self._wait(resources, pending))
            self._read(resources, pods, outcomes, result)
        finally:
            self.cleanup(resources)
        labels = dict((node["metadata"]["name"], _labels_of(node)) for node in nodes)
        for name, facts in result["nodes"].items():
            fill_from_node_labels(facts, labels.get(name))
        return result

    def _prepare(self, resources):
        """The namespace, service account and SCC binding the pods need. What this run creates is removed again at
        its end (cleanup): a namespace that lets pods mount host paths must not outlive the run that needed it."""
        params = self.params
        existing = self.cluster.get(resources["Namespace"], self.namespace)
        if existing is not None and (existing.get("metadata") or {}).get("deletionTimestamp"):
            self._wait_gone(resources["Namespace"], self.namespace)  # an earlier run's namespace still terminating
            existing = None
        if existing is None:
            if not params.get("create_namespace", True):
                raise ClusterError("Namespace %s does not exist. A cluster administrator creates it, its service account "
                                   "and the SCC the collector pods need once: oc apply -f deploy/rbac/workloads.yml "
                                   "(or set hardware_facts_create_namespace and hardware_facts_manage_rbac to create "
                                   "them per run)" % self.namespace)
            self.cluster.create(resources["Namespace"], {"apiVersion": "v1", "kind": "Namespace", "metadata": {
                "name": self.namespace, "labels": {MANAGED_BY_LABEL: MANAGED_BY_VALUE, COMPONENT_LABEL: COMPONENT_VALUE,
                                                   # the collector pods need hostPath: keep Pod Security admission out of the way
                                                   "pod-security.kubernetes.io/enforce": "privileged",
                                                   "pod-security.kubernetes.io/audit": "privileged",
                                                   "pod-security.kubernetes.io/warn": "privileged",
                                                   "security.openshift.io/scc.podSecurityLabelSync": "false"}}})
            self.created.append(("Namespace", self.namespace))
            self.changed = True
        account = params.get("service_account")
        if not account:
            return
        if not params.get("manage_rbac", True):
            # Prepared by an administrator: a missing account would only show as pods refused one by one.
            if self.cluster.get(resources["ServiceAccount"], account, self.namespace) is None:
                raise ClusterError("Service account %s/%s does not exist. A cluster administrator creates it once: oc apply "
                                   "-f deploy/rbac/workloads.yml (or set hardware_facts_manage_rbac to create it and its "
                                   "SCC RoleBinding per run)" % (self.namespace, account))
            return
        if self.cluster.get(resources["ServiceAccount"], account, self.namespace) is None:
            self.cluster.create(resources["ServiceAccount"], {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {
                "name": account, "namespace": self.namespace,
                "labels": {MANAGED_BY_LABEL: MANAGED_BY_VALUE, COMPONENT_LABEL: COMPONENT_VALUE}}})
            self.created.append(("ServiceAccount", account))
            self.changed = True
        scc = params.get("scc")
        if scc:
            resources["RoleBinding"] = self.cluster.resource("rbac.authorization.k8s.io/v1", "RoleBinding")
            binding = scc_role_binding(self.namespace, account, scc)
            if self.cluster.get(resources["RoleBinding"], binding["metadata"]["name"], self.namespace) is None:
                self.cluster.create(resources["RoleBinding"], binding)
                self.created.append(("RoleBinding", binding["metadata"]["name"]))
                self.changed = True

    def _wait_gone(self, resource, name):
        try:
            wait_for(self.cluster, resource, lambda state: not any(o["metadata"]["name"] == name for o in state or []),
                     timeout=min(self.params.get("timeout") or 300, 300))
        except WaitTimeout:
            raise ClusterError("Namespace %s is still terminating from an earlier facts run; try again when it is gone"
                               % name)

    def _create_pods(self, resources, pods):
        """Create every pod; a refused pod (e.g. 403 from SCC admission) is that node's failure."""
        outcomes = {}
        for pod in pods:
            name = pod["metadata"]["name"]
            try:
                self.cluster.create(resources["Pod"], pod)
                self.created.append(("Pod", name))
            except Exception as exc:  # pylint: disable=broad-except
                if api_status(exc) is None:
                    raise
                hint = ""
                if api_status(exc) == 403:
                    hint = (" (the service account needs an SCC that allows read-only hostPath volumes: apply "
                            "deploy/rbac/workloads.yml once, or see the scc and manage_rbac options)")
                outcomes[name] = "pod rejected: %s%s" % (api_message(exc), hint)
        return outcomes

    def _wait(self, resources, names):
        wanted = set(names)
        outcomes = {}

        def predicate(state):
            for pod in state or []:
                name = pod["metadata"]["name"]
                if name in wanted and name not in outcomes:
                    terminal, error = pod_outcome(pod)
                    if terminal:
                        outcomes[name] = error
            return wanted.issubset(outcomes)

        try:
            wait_for(self.cluster, resources["Pod"], predicate, namespace=self.namespace,
                     label_selector="%s=%s" % (RUN_LABEL, self.run_id), timeout=self.params.get("timeout") or 300)
        except WaitTimeout as exc:
            seen = dict((p["metadata"]["name"], p) for p in exc.state or [])
            for name in wanted - set(outcomes):
                pod = seen.get(name)
                outcomes[name] = "timed out after %s s, pod %s" % (self.params.get("timeout"), pod_progress(pod) if pod else "missing")
        return outcomes

    def _read(self, resources, pods, outcomes, result):
        for pod in pods:
            name, node = pod["metadata"]["name"], pod["spec"]["nodeName"]
            error = outcomes.get(name)
            if error is None:
                try:
                    result["nodes"][node] = parse_collector_log(self._log(name))
                    continue
                except ValueError as exc:
                    error = "unreadable facts: %s" % exc
            elif error.startswith("pod failed"):
                log = self._log(name, tail=20, ignore_errors=True)
                if log and log.strip():
                    error += "; log: %s" % _tail(log)
            result["failed_nodes"].append({"node": node, "pod": name, "error": error})

    def _log(self, name, tail=None, ignore_errors=False):
        path = "/api/v1/namespaces/%s/pods/%s/log" % (self.namespace, name)
        params = {"container": CONTAINER}
        if tail:
            params["tailLines"] = tail
        try:
            response = self.cluster.retry.call(self.cluster.dynamic.request, "get", path, serialize=False, query_params=list(params.items()))
        except Exception as exc:  # pylint: disable=broad-except
            if ignore_errors:
                return None
            raise ValueError("cannot read the pod log: %s" % api_message(exc))
        data = response.data
        return data.decode("utf-8", "replace") if isinstance(data, bytes) else data

    def cleanup(self, resources):
        """Delete what this run created (pods, ConfigMap, and the RoleBinding, ServiceAccount and Namespace when it
        created them), newest first: one delete per object, errors collected, never raised early."""
        errors = []
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
        path = resource.path(name=name, namespace=self.namespace)
        try:
            # The pods have finished: no grace period to wait for.
            self.cluster.retry.call(self.cluster.dynamic.request, "delete", path, serialize=False, grace_period_seconds=0,
                                    propagation_policy="Background")
        except Exception as exc:  # pylint: disable=broad-except
            if api_status(exc) != 404:
                raise
