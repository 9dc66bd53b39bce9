"""The kube-controller-manager's DaemonSet and Deployment controllers and the kubelet's pod lifecycle, for the
operands the simulated operators run (simulator/controllers/operands.py).

Written from kubernetes v1.33 (the Kubernetes of OpenShift 4.20):
- pkg/controller/daemon/daemon_controller.go (syncDaemonSet, manage, podsShouldBeOnNode, updateDaemonSetStatus) and
  update.go (rollingUpdate, OnDelete): one pod per node the pod template's nodeSelector, required node affinity and
  taints admit; a pod whose `controller-revision-hash` is not the template's is old; RollingUpdate deletes old pods
  while no more than `maxUnavailable` (default 1) are unavailable, OnDelete replaces a pod only once someone deleted
  it. Status: desiredNumberScheduled, currentNumberScheduled, numberMisscheduled, numberReady, numberAvailable,
  numberUnavailable, updatedNumberScheduled, observedGeneration, as the controller counts them.
- pkg/controller/deployment (sync.go syncDeploymentStatus, calculateStatus; progress.go; rolling.go): replicas,
  updatedReplicas, readyReplicas, availableReplicas, unavailableReplicas, observedGeneration, the Available and
  Progressing conditions with their reasons.
- The kubelet (pkg/kubelet/kubelet_pods.go convertToAPIContainerStatuses, kuberuntime/kuberuntime_manager.go,
  images/image_manager.go): a new container waits `ContainerCreating`; an image that cannot be pulled waits
  `ErrImagePull`, then `ImagePullBackOff` with 'Back-off pulling image "IMAGE"'; a container that exits is restarted
  with a back-off that doubles from 10 s to 300 s (pkg/kubelet/kubelet.go backOffPeriod, MaxContainerBackOff) and waits
  `CrashLoopBackOff` with "back-off 5m0s restarting failed container=NAME pod=NAME_NAMESPACE(UID)", its
  `lastState.terminated` holding the exit code, reason `Error` and the termination message.

Pods are not scheduled by a separate scheduler: the DaemonSet controller binds each pod to its node (it sets a
node-name affinity that only that node passes), the Deployment controller picks the first admitting node by name.
The operand an operator fault names (`operand_failures`) fails as the kubelet shows it; its log is served.
"""

import copy
import hashlib
import json

from ._base import log, now, pod_hash, rand_suffix

OPERAND_LABELS_SKIP = ("olm.managed",)  # OLM's own operator Deployments are written by the OLM controller (olm.py)


def template_hash(template):
    """A stable hash of a pod template (the daemon controller names its ControllerRevision after one)."""
    text = json.dumps(template or {}, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]


def _expr_match(labels, expr):
    key, op, values = expr.get("key"), expr.get("operator"), [str(v) for v in expr.get("values") or []]
    if op == "In":
        return key in labels and labels[key] in values
    if op == "NotIn":
        return key not in labels or labels[key] not in values
    if op == "Exists":
        return key in labels
    if op == "DoesNotExist":
        return key not in labels
    if op in ("Gt", "Lt"):
        try:
            value, bound = int(labels[key]), int(values[0])
        except (KeyError, ValueError, IndexError):
            return False
        return value > bound if op == "Gt" else value < bound
    return False


def _field_match(node, expr):
    if expr.get("key") != "metadata.name":
        return False
    name = node["metadata"]["name"]
    values = expr.get("values") or []
    return name in values if expr.get("operator") == "In" else name not in values


def _tolerated(taint, tolerations):
    for tol in tolerations or ():
        if tol.get("effect") and tol.get("effect") != taint.get("effect"):
            continue
        if tol.get("operator") == "Exists":
            if not tol.get("key") or tol.get("key") == taint.get("key"):
                return True
        elif tol.get("key") == taint.get("key") and str(tol.get("value", "")) == str(taint.get("value", "")):
            return True
    return False


def node_admits(node, pod_spec):
    """Whether a node passes the pod's nodeSelector, required node affinity and NoSchedule/NoExecute taints
    (kube-scheduler NodeAffinity and TaintToleration filters, which the daemon controller runs in
    podsShouldBeOnNode; DaemonSet pods tolerate node.kubernetes.io/unschedulable, so a cordoned node keeps its pod)."""
    labels = node["metadata"].get("labels") or {}
    for key, value in ((pod_spec or {}).get("nodeSelector") or {}).items():
        if labels.get(key) != str(value):
            return False
    required = ((((pod_spec or {}).get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    terms = required.get("nodeSelectorTerms") or []
    if terms and not any(all(_expr_match(labels, e) for e in term.get("matchExpressions") or [])
                         and all(_field_match(node, e) for e in term.get("matchFields") or []) for term in terms):
        return False
    for taint in (node.get("spec") or {}).get("taints") or ():
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not _tolerated(taint, (pod_spec or {}).get("tolerations")):
            return False
    return True


def _max_unavailable(strategy, desired):
    value = ((strategy or {}).get("rollingUpdate") or {}).get("maxUnavailable", 1)
    if isinstance(value, str) and value.endswith("%"):
        return max(1, int(desired * int(value[:-1]) / 100))  # rounded down, at least one (intstr.GetScaledValueFromIntOrPercent)
    return max(1, int(value))


def pod_ready(pod):
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in (pod.get("status") or {}).get("conditions") or ())


def find_failure(faults, namespace, workload, container_names, node):
    """The operator fault entry (`operand_failures`) that applies to a pod of `workload` on `node`, or None."""
    for entry in faults.get("operand_failures") or ():
        if entry.get("namespace") and entry["namespace"] != namespace:
            continue
        wanted = entry.get("workload") or ""
        if not (workload == wanted or (wanted.endswith("*") and workload.startswith(wanted[:-1]))):
            continue
        if entry.get("nodes") and node not in entry["nodes"]:
            continue
        if entry.get("container") and entry["container"] not in container_names:
            continue
        return entry
    return None


class WorkloadController:
    """DaemonSets and Deployments of operands -> pods per node with real container statuses -> workload status."""

    def __init__(self, rt):
        self.rt = rt
        self.kubelet = {}  # pod uid -> {"restarts": n, "started": bool}
        # (namespace, daemonset) -> how many outdated OnDelete pods the owning operator replaces at a time (its
        # driver upgrade controller deletes them; 0 or absent: only someone else's delete replaces a pod).
        self.on_delete_upgrades = {}
        self.node_keys = {}  # node -> (labels, taints) last seen: only a change of those moves DaemonSet pods

    # ------------------------------------------------------------------ events
    def on_event(self, etype, rtype, obj):
        key = (rtype.group, rtype.plural)
        meta = obj.get("metadata") or {}
        if key == ("apps", "daemonsets"):
            self._enqueue_ds(meta.get("namespace"), meta.get("name"))
        elif key == ("apps", "deployments"):
            if not any(k in (meta.get("labels") or {}) for k in OPERAND_LABELS_SKIP):
                self._enqueue_deploy(meta.get("namespace"), meta.get("name"))
        elif key == ("", "pods"):
            for ref in meta.get("ownerReferences") or ():
                if ref.get("kind") == "DaemonSet":
                    self._enqueue_ds(meta.get("namespace"), ref.get("name"))
                elif ref.get("kind") == "Deployment":
                    self._enqueue_deploy(meta.get("namespace"), ref.get("name"))
            if etype == "DELETED":
                self.kubelet.pop(meta.get("uid"), None)
                logs = getattr(self.rt.sim, "pod_logs", None)
                if isinstance(logs, dict):
                    logs.pop((meta.get("namespace"), meta.get("name")), None)
        elif key == ("", "nodes"):
            name = meta.get("name")
            seen = None if etype == "DELETED" else (
                json.dumps(meta.get("labels") or {}, sort_keys=True),
                json.dumps((obj.get("spec") or {}).get("taints") or [], sort_keys=True))
            if self.node_keys.get(name) == seen:
                return
            self.node_keys[name] = seen
            for ds in self.rt.list("apps", "daemonsets"):
                self._enqueue_ds(ds["metadata"]["namespace"], ds["metadata"]["name"])

    def resync(self):
        for ds in self.rt.list("apps", "daemonsets"):
            self._enqueue_ds(ds["metadata"]["namespace"], ds["metadata"]["name"])
        for dep in self.rt.list("apps", "deployments"):
            if not any(k in (dep["metadata"].get("labels") or {}) for k in OPERAND_LABELS_SKIP):
                self._enqueue_deploy(dep["metadata"]["namespace"], dep["metadata"]["name"])

    def _enqueue_ds(self, namespace, name):
        self.rt.enqueue(("daemonset", namespace, name), lambda: self.sync_daemonset(namespace, name))

    def _enqueue_deploy(self, namespace, name):
        self.rt.enqueue(("deployment", namespace, name), lambda: self.sync_deployment(namespace, name))

    # ------------------------------------------------------------------ light reads (no copies of many objects)
    def _node_views(self):
        """[(name, {"metadata": {"name", "labels"}, "spec": {"taints"}})] of every node, read without copies."""
        rtype = self.rt.require("", "nodes")

        def view(node):
            spec = node.get("spec") or {}
            return {"metadata": {"name": node["metadata"]["name"], "labels": dict(node["metadata"].get("labels") or {})},
                    "spec": {"taints": list(spec.get("taints") or []), "unschedulable": spec.get("unschedulable")}}

        return self.rt.store.scan(rtype, view)

    def _pod_views(self, owner):
        """Light views of the owner's live pods: metadata name/labels, spec nodeName, status conditions."""
        uid = owner["metadata"]["uid"]
        rtype = self.rt.require("", "pods")

        def view(p):
            meta = p["metadata"]
            if meta.get("deletionTimestamp") or not any(r.get("uid") == uid for r in meta.get("ownerReferences") or ()):
                return None
            return {"metadata": {"name": meta["name"], "labels": dict(meta.get("labels") or {})},
                    "spec": {"nodeName": (p.get("spec") or {}).get("nodeName")},
                    "status": {"conditions": list((p.get("status") or {}).get("conditions") or [])}}

        return [v for v in self.rt.store.scan(rtype, view, owner["metadata"]["namespace"]) if v is not None]

    def _host_ip(self, node_name):
        rtype = self.rt.require("", "nodes")
        return self.rt.store.inspect(rtype, None, node_name, lambda n: next(
            (a.get("address") for a in (n.get("status") or {}).get("addresses") or () if a.get("type") == "InternalIP"), "")) or ""

    # ------------------------------------------------------------------ pods
    def _create_pod(self, owner, kind, node_name, revision_hash, extra_labels, name):
        template = copy.deepcopy((owner.get("spec") or {}).get("template") or {})
        labels = dict((template.get("metadata") or {}).get("labels") or {})
        labels.update(extra_labels)
        spec = template.get("spec") or {}
        spec["nodeName"] = node_name
        if kind == "DaemonSet":
            # daemon util ReplaceDaemonSetPodNodeNameNodeAffinity: the pod may run only on its node.
            spec.setdefault("affinity", {})["nodeAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}}
        meta = owner["metadata"]
        pod = {"metadata": {"name": name, "namespace": meta["namespace"], "labels": labels,
                            "annotations": dict((template.get("metadata") or {}).get("annotations") or {}),
                            "ownerReferences": [{"apiVersion": "apps/v1", "kind": kind, "name": meta["name"],
                                                 "uid": meta["uid"], "controller": True, "blockOwnerDeletion": True}]},
               "spec": spec}
        created = self.rt.create("", "pods", pod)
        if created is None:
            return
        containers = [c.get("name") for c in spec.get("containers") or ()]
        self._write_pod_status(created, "Pending", [self._waiting(c, "ContainerCreating", None, 0) for c in spec.get("containers") or ()],
                               ready=False)
        self.kubelet[created["metadata"]["uid"]] = {"restarts": 0}
        delay = self._start_delay(owner)
        ident = (meta["namespace"], name, created["metadata"]["uid"])
        self.rt.later(delay, lambda: self._start(ident, containers))

    def _start_delay(self, owner):
        """Image pull plus container start (plus, for a driver, its build and load): operands.py's time model."""
        from .operands import start_seconds

        return start_seconds(self.rt, owner)

    @staticmethod
    def _waiting(container, reason, message, restarts, last=None, image=None):
        status = {"name": container.get("name"), "image": image or container.get("image", ""), "imageID": "",
                  "ready": False, "started": False, "restartCount": restarts, "state": {"waiting": {"reason": reason}},
                  "lastState": last or {}}
        if message:
            status["state"]["waiting"]["message"] = message
        return status

    def _write_pod_status(self, pod, phase, container_statuses, ready):
        node_name = (pod.get("spec") or {}).get("nodeName")
        host_ip = self._host_ip(node_name) if node_name else ""
        flag = "True" if ready else "False"
        old = pod.get("status") or {}
        conditions = [{"type": "PodScheduled", "status": "True"}, {"type": "Initialized", "status": "True"},
                      {"type": "ContainersReady", "status": flag}, {"type": "Ready", "status": flag}]
        for cond in conditions:
            before = next((c for c in old.get("conditions") or () if c.get("type") == cond["type"]), None)
            cond["lastTransitionTime"] = before["lastTransitionTime"] if before and before.get("status") == cond["status"] else now()
            cond["lastProbeTime"] = None
            if not ready and cond["type"] in ("ContainersReady", "Ready"):
                waiting = [c["name"] for c in container_statuses if not c.get("ready")]
                cond["reason"] = "ContainersNotReady"
                cond["message"] = "containers with unready status: [%s]" % " ".join(waiting)
        status = {"phase": phase, "conditions": conditions, "hostIP": host_ip, "podIP": host_ip,
                  "startTime": old.get("startTime") or now(), "qosClass": "BestEffort",
                  "containerStatuses": container_statuses}
        self.rt.set_status("", "pods", pod["metadata"]["namespace"], pod["metadata"]["name"], status)

    def _start(self, ident, container_names):
        namespace, name, uid = ident
        pod = self.rt.get("", "pods", namespace, name)
        if pod is None or pod["metadata"]["uid"] != uid or uid not in self.kubelet:
            return
        owner = (pod["metadata"].get("ownerReferences") or [{}])[0]
        node = (pod.get("spec") or {}).get("nodeName")
        failure = find_failure(self.rt.operator_faults(), namespace, owner.get("name", ""), container_names, node)
        containers = (pod.get("spec") or {}).get("containers") or ()
        state = self.kubelet[uid]
        if failure is None:
            started = now()
            statuses = [{"name": c.get("name"), "image": c.get("image", ""), "imageID": "", "ready": True, "started": True,
                         "restartCount": state["restarts"], "state": {"running": {"startedAt": started}},
                         "lastState": (self._status_of(pod, c.get("name")) or {}).get("lastState") or {}}
                        for c in containers]
            self._write_pod_status(pod, "Running", statuses, ready=True)
            self._set_log(namespace, name, None)
            return
        failing = failure.get("container") or containers[0].get("name")
        reason = failure.get("reason", "CrashLoopBackOff")
        statuses = []
        for c in containers:
            if c.get("name") != failing:
                statuses.append({"name": c.get("name"), "image": c.get("image", ""), "imageID": "", "ready": True,
                                 "started": True, "restartCount": 0, "state": {"running": {"startedAt": now()}},
                                 "lastState": {}})
                continue
            image = c.get("image", "")
            if reason in ("ImagePullBackOff", "ErrImagePull"):
                # images/image_manager.go: the first failure shows ErrImagePull with the runtime's error, then the
                # back-off; the message the kubelet keeps while backing off names the image.
                if state["restarts"] == 0 and not state.get("pulled_once"):
                    message = failure.get("message") or "rpc error: code = Unknown desc = failed to pull image %s" % image
                    statuses.append(self._waiting(c, "ErrImagePull", message, 0, image=image))
                    state["pulled_once"] = True
                else:
                    statuses.append(self._waiting(c, "ImagePullBackOff", 'Back-off pulling image "%s"' % image, 0, image=image))
            else:
                state["restarts"] += 1
                backoff = self._backoff_text(state["restarts"])
                last = {"terminated": {"exitCode": int(failure.get("exit_code", 1)), "reason": "Error",
                                       "message": failure.get("message", ""), "startedAt": now(), "finishedAt": now(),
                                       "containerID": "cri-o://%s" % rand_suffix(12, self.rt.rng)}}
                statuses.append(self._waiting(
                    c, "CrashLoopBackOff", "back-off %s restarting failed container=%s pod=%s_%s(%s)" % (
                        backoff, c.get("name"), name, namespace, uid), state["restarts"] - 1, last=last, image=image))
        self._write_pod_status(pod, "Running" if reason == "CrashLoopBackOff" else "Pending", statuses, ready=False)
        self._set_log(namespace, name, failure.get("log"), failing)
        # The kubelet retries: the next attempt after the back-off (doubled each time, capped), scaled.
        retry = min(self.rt.cfg("kubelet_backoff_seconds") * (2 ** max(state["restarts"] - 1, 0)),
                    self.rt.cfg("kubelet_backoff_max_seconds"))
        self.rt.later(retry, lambda: self._start(ident, container_names))

    @staticmethod
    def _status_of(pod, container):
        return next((c for c in (pod.get("status") or {}).get("containerStatuses") or () if c.get("name") == container), None)

    @staticmethod
    def _backoff_text(restarts):
        seconds = min(10 * 2 ** max(restarts - 1, 0), 300)
        return "%dm%ds" % divmod(seconds, 60) if seconds >= 60 else "%ds" % seconds

    def _set_log(self, namespace, name, text, container=None):
        logs = getattr(self.rt.sim, "pod_logs", None)
        if not isinstance(logs, dict):
            return
        if text is None:
            logs.pop((namespace, name), None)
        else:
            logs[(namespace, name)] = {container: text} if container else text

    # ------------------------------------------------------------------ DaemonSet controller
    def sync_daemonset(self, namespace, name):
        # Test control (operator fault workload_controller_hold: [namespace, ...]): the DaemonSet controller has not
        # synced these namespaces yet, so their DaemonSets keep the status of the previous generation, as they do
        # upstream until the controller's queue reaches them; lifting it resyncs every DaemonSet.
        if namespace in (self.rt.operator_faults().get("workload_controller_hold") or ()):
            return
        ds = self.rt.get("apps", "daemonsets", namespace, name)
        if ds is None or ds["metadata"].get("deletionTimestamp"):
            return
        spec = ds.get("spec") or {}
        template = spec.get("template") or {}
        revision = template_hash(template)
        generation = ds["metadata"].get("generation", 1)
        nodes = self._node_views()
        wanted = [n["metadata"]["name"] for n in nodes if node_admits(n, template.get("spec"))]
        pods = self._pod_views(ds)
        by_node = {}
        for pod in pods:
            by_node.setdefault((pod.get("spec") or {}).get("nodeName"), []).append(pod)
        changed = False
        for node_name, on_node in by_node.items():
            # manage(): pods on nodes that should not run one go, and duplicates beyond the first.
            extra = on_node if node_name not in wanted else on_node[1:]
            for pod in extra:
                self.rt.delete("", "pods", namespace, pod["metadata"]["name"])
                changed = True
        for node_name in wanted:
            if node_name not in by_node:
                self._create_pod(ds, "DaemonSet", node_name, revision,
                                 {"controller-revision-hash": revision, "pod-template-generation": str(generation)},
                                 "%s-%s" % (name, rand_suffix(5, self.rt.rng)))
                changed = True
        if changed:
            pods = self._pod_views(ds)
        current = [p for p in pods if (p.get("spec") or {}).get("nodeName") in wanted]
        old = [p for p in current if (p["metadata"].get("labels") or {}).get("controller-revision-hash") != revision]
        strategy = spec.get("updateStrategy") or {"type": "RollingUpdate"}
        budget = 0
        if strategy.get("type", "RollingUpdate") == "RollingUpdate":
            budget = _max_unavailable(strategy, len(wanted))
        else:
            budget = self.on_delete_upgrades.get((namespace, name), 0)
        if old and budget:
            unavailable = sum(1 for p in current if not pod_ready(p))
            # update.go rollingUpdate: old pods that are not available go at once; available ones while the number of
            # unavailable pods stays within maxUnavailable.
            for pod in [p for p in old if not pod_ready(p)] + [p for p in old if pod_ready(p)]:
                if pod_ready(pod):
                    if unavailable >= budget:
                        break
                    unavailable += 1
                self.rt.delete("", "pods", namespace, pod["metadata"]["name"])
            self._enqueue_ds(namespace, name)
        ready = [p for p in current if pod_ready(p)]
        updated = [p for p in current if (p["metadata"].get("labels") or {}).get("controller-revision-hash") == revision]
        status = {
            "currentNumberScheduled": len({(p.get("spec") or {}).get("nodeName") for p in current}),
            "desiredNumberScheduled": len(wanted),
            "numberMisscheduled": len([p for p in pods if (p.get("spec") or {}).get("nodeName") not in wanted]),
            "numberReady": len(ready),
            "numberAvailable": len(ready),  # minReadySeconds 0 in every operand template
            "updatedNumberScheduled": len(updated),
            "observedGeneration": generation,
        }
        unavailable = len(wanted) - len(ready)
        if unavailable:
            status["numberUnavailable"] = unavailable
        if status != (ds.get("status") or {}):
            self.rt.set_status("apps", "daemonsets", namespace, name, status)

    # ------------------------------------------------------------------ Deployment controller
    def sync_deployment(self, namespace, name):
        # The same test control as sync_daemonset's: the Deployment controller has not reached these namespaces yet.
        if namespace in (self.rt.operator_faults().get("workload_controller_hold") or ()):
            return
        dep = self.rt.get("apps", "deployments", namespace, name)
        if dep is None or dep["metadata"].get("deletionTimestamp"):
            return
        spec = dep.get("spec") or {}
        template = spec.get("template") or {}
        revision = template_hash(template)
        replicas = int(spec.get("replicas", 1))
        pods = self._pod_views(dep)
        new = [p for p in pods if (p["metadata"].get("labels") or {}).get("pod-template-hash") == revision]
        old = [p for p in pods if p not in new]
        nodes = self._node_views()
        admitting = [n["metadata"]["name"] for n in nodes if node_admits(n, template.get("spec"))
                     and not (n.get("spec") or {}).get("unschedulable")]
        if len(new) < replicas and admitting:
            for index in range(replicas - len(new)):
                self._create_pod(dep, "Deployment", admitting[index % len(admitting)], revision,
                                 {"pod-template-hash": revision},
                                 "%s-%s-%s" % (name, revision, rand_suffix(5, self.rt.rng)))
            self._enqueue_deploy(namespace, name)
        # rolling.go: old pods are scaled down as new ones become available (maxSurge 25%, maxUnavailable 25%).
        if old and sum(1 for p in new if pod_ready(p)) >= replicas:
            for pod in old:
                self.rt.delete("", "pods", namespace, pod["metadata"]["name"])
        pods = self._pod_views(dep)
        new = [p for p in pods if (p["metadata"].get("labels") or {}).get("pod-template-hash") == revision]
        ready = [p for p in pods if pod_ready(p)]
        available = len(ready) >= replicas
        rs_name = "%s-%s" % (name, revision)
        previous = {c.get("type"): c for c in (dep.get("status") or {}).get("conditions") or ()}

        def condition(ctype, status, reason, message):
            before = previous.get(ctype) or {}
            stamp = before.get("lastTransitionTime") if before.get("status") == status else now()
            return {"type": ctype, "status": status, "reason": reason, "message": message,
                    "lastTransitionTime": stamp or now(), "lastUpdateTime": stamp or now()}

        complete = available and len(new) == replicas and len(pods) == replicas
        status = {
            "observedGeneration": dep["metadata"].get("generation", 1),
            "replicas": len(pods), "updatedReplicas": len(new), "readyReplicas": len(ready),
            "availableReplicas": len(ready),
            "conditions": [
                condition("Available", "True" if available else "False",
                          "MinimumReplicasAvailable" if available else "MinimumReplicasUnavailable",
                          "Deployment has minimum availability." if available else "Deployment does not have minimum availability."),
                condition("Progressing", "True", "NewReplicaSetAvailable" if complete else "ReplicaSetUpdated",
                          ('ReplicaSet "%s" has successfully progressed.' if complete else 'ReplicaSet "%s" is progressing.') % rs_name),
            ],
        }
        if len(pods) - len(ready):
            status["unavailableReplicas"] = len(pods) - len(ready)
        if not status["readyReplicas"]:
            status.pop("readyReplicas")
            status.pop("availableReplicas")
        if status != (dep.get("status") or {}):
            self.rt.set_status("apps", "deployments", namespace, name, status)


def daemonset_ready(obj):
    """network-operator pkg/state/state_skel.go isDaemonSetReady: desiredNumberScheduled != 0 (the controller counted
    the nodes), every desired pod available, and as many updated pods as available ones. It reads no
    observedGeneration, as upstream does not."""
    if obj is None:
        return False
    status = obj.get("status") or {}
    desired = status.get("desiredNumberScheduled", 0)
    return desired != 0 and desired == status.get("numberAvailable", 0) and status.get("updatedNumberScheduled", 0) == status.get("numberAvailable", 0)


__all__ = ["WorkloadController", "node_admits", "daemonset_ready", "template_hash", "pod_ready", "log", "pod_hash"]
