"""Generic OLM: Subscription -> InstallPlan -> ClusterServiceVersion, driven by catalog data.

Behaviour follows OLM as an OpenShift cluster shows it (see docs/hardware-profiles.md, "OLM"):
- Subscription resolution against the PackageManifest catalog; unknown source, package, channel or
  startingCSV -> condition ResolutionFailed (and CatalogSourcesUnhealthy for a source that is not READY).
- InstallPlan install-xxxxx with approval from the Subscription; Manual waits in RequiresApproval.
- CSV phases Pending -> InstallReady -> Installing -> Succeeded, with a history in status.conditions;
  OperatorGroup checks as olm-operator does them (NoOperatorGroup, TooManyOperatorGroups,
  UnsupportedOperatorGroup) and injected faults (csv_failure) from sim.faults.operator_faults.
- Subscription.status.installedCSV and state AtLatestKnown as soon as the InstallPlan is Complete (before the
  CSV succeeds, as on a real cluster: waiting for installedCSV alone is not enough).
- The package's CRD groups become served when the CSV succeeds (config crds_served_at).
"""

import json
import time

from ..catalog import csv_version, version_key
from ._base import OLM_GROUP, now, pod_hash, rand_suffix
from .seed import SERVING_STATES, catalog_source_status, install_modes_list, source_ready, sync_package_manifests

SUB, IP, CSV, OG, CS = "subscriptions", "installplans", "clusterserviceversions", "operatorgroups", "catalogsources"
V1A1 = OLM_GROUP + "/v1alpha1"

# Subscription conditions of a bundle whose image cannot be pulled, as the catalog operator words them
# (pkg/controller/operators/catalog/operator.go); the job failure is Kubernetes' DeadlineExceeded.
_UNPACK_GUIDANCE = ("Common causes: Missing ICSP (ppc64le/s390x/arm64), auth failure, invalid image. ")
UNPACK_PULL_MESSAGE = ("Bundle image pull failed. " + _UNPACK_GUIDANCE + "Job will retry until timeout (~10 min), then "
                       "auto-cleanup and retry in ~5 min. Manual retry: in the CatalogSource namespace, run `kubectl get "
                       "jobs -l operatorframework.io/bundle-unpack-ref` and delete the specific failing job.")
UNPACK_FAILED_MESSAGE = ("Bundle unpacking failed - DeadlineExceeded: Job was active longer than specified deadline. "
                         "Auto-retry in ~5 min after job cleanup (TTL). " + _UNPACK_GUIDANCE + "Manual retry: in the "
                         "CatalogSource namespace, run `kubectl get jobs -l operatorframework.io/bundle-unpack-ref` and "
                         "delete the specific failing job.")

# Reasons and messages as olm-operator sets them.
MSG = {
    "RequirementsUnknown": "requirements not yet checked",
    "RequirementsMet": "all requirements found, attempting install",
    "InstallSucceeded": "waiting for install components to report healthy",
    "InstallWaiting": "installing: waiting for deployment %s to become ready: deployment \"%s\" not available: "
                      "Deployment does not have minimum availability.",
    "Succeeded": "install strategy completed with no errors",
    "RequirementsNotMet": "one or more requirements couldn't be found",
    "NoOperatorGroup": "csv in namespace with no operatorgroups",
    "TooManyOperatorGroups": "csv created in namespace with multiple operatorgroups, can't pick one automatically",
}


def pkg_label(package, namespace):
    return "operators.coreos.com/%s.%s" % (package, namespace)


def og_target_namespaces(og):
    """[""] means all namespaces, as OperatorGroup.status.namespaces shows it."""
    spec = og.get("spec") or {}
    targets = spec.get("targetNamespaces")
    if targets:
        return sorted(set(targets))
    if spec.get("selector"):
        return [og["metadata"]["namespace"]]  # selector-based groups: approximated by the own namespace
    return [""]


def install_mode_error(modes, operator_ns, targets):
    """The olm InstallModeSet.Supports check; returns an error message or None."""
    if not targets:
        return "operatorgroup has invalid selected namespaces, cannot configure to watch zero namespaces"
    if len(targets) == 1:
        target = targets[0]
        if target == "":
            if not modes.get("AllNamespaces"):
                return "AllNamespaces InstallModeType not supported, cannot configure to watch all namespaces"
        elif target == operator_ns:
            if not modes.get("OwnNamespace"):
                return "OwnNamespace InstallModeType not supported, cannot configure to watch own namespace"
        elif not modes.get("SingleNamespace"):
            return "SingleNamespace InstallModeType not supported, cannot configure to watch one namespace"
        return None
    if "" in targets:
        return "operatorgroup has invalid selected namespaces, NamespaceAll found when |selected namespaces| > 1"
    if not modes.get("MultiNamespace"):
        return "MultiNamespace InstallModeType not supported, cannot configure to watch %d namespaces" % len(targets)
    if operator_ns in targets and not modes.get("OwnNamespace"):
        return "OwnNamespace InstallModeType not supported, cannot configure to watch own namespace"
    return None


class OlmController:
    def __init__(self, rt, crd_serving):
        self._plan_retry_since = {}  # InstallPlan uid -> monotonic time of the first failed execution
        self.rt = rt
        self.crds = crd_serving
        self._transient_done = set()  # CSV uids that already went through their injected transient failure

    # ------------------------------------------------------------------ events
    def on_event(self, etype, rtype, obj):
        if rtype.group != OLM_GROUP:
            return
        meta = obj["metadata"]
        ns, name = meta.get("namespace"), meta["name"]
        if rtype.plural == SUB and etype != "DELETED":
            self.rt.enqueue(("sub", ns, name), lambda: self.sync_subscription(ns, name))
        elif rtype.plural == IP and etype != "DELETED":
            self.rt.enqueue(("ip", ns, name), lambda: self.sync_installplan(ns, name), self.rt.cfg("olm_step_seconds"))
        elif rtype.plural == CSV:
            if etype == "ADDED":
                self.rt.enqueue(("csv", ns, name), lambda: self.sync_csv(ns, name), self.rt.cfg("olm_step_seconds"))
            replaced = (obj.get("spec") or {}).get("replaces")
            if replaced and etype != "DELETED":
                self.rt.enqueue(("csv", ns, replaced), lambda: self.sync_csv(ns, replaced), self.rt.cfg("olm_step_seconds"))
            self._subscriptions_follow(ns)
        elif rtype.plural == OG:
            if etype != "DELETED":
                self.rt.enqueue(("og", ns, name), lambda: self.sync_operator_group(ns, name))
            self._subscriptions_follow(ns)  # syncOperatorGroups requeues the namespace's resolution
            for csv in self.rt.list(OLM_GROUP, CSV, ns):
                cname = csv["metadata"]["name"]
                self.rt.enqueue(("csv", ns, cname), lambda cname=cname: self.sync_csv(ns, cname), self.rt.cfg("olm_step_seconds"))
        elif rtype.plural == CS:
            if etype != "DELETED" and not (obj.get("status") or {}).get("connectionState"):
                # A CatalogSource someone created (a mirrored index): its registry pod starts, then the catalog
                # operator reports the gRPC connection READY and re-resolves the namespaces that use it
                # (catalog/operator.go syncSourceState). One that names no catalog the simulator knows serves nothing.
                self.rt.enqueue(("cs", ns, name), lambda: self._connect_source(ns, name), self.rt.cfg("olm_step_seconds"))
            self.rt.enqueue(("packagemanifests",), lambda: sync_package_manifests(self.rt))

    def _connect_source(self, ns, name):
        cs = self.rt.get(OLM_GROUP, CS, ns, name)
        if cs is None or (cs.get("status") or {}).get("connectionState"):
            return
        self.rt.set_status(OLM_GROUP, CS, ns, name, catalog_source_status(name, self.rt.catalog.source_states.get(name, "READY")))
        sync_package_manifests(self.rt)
        self.resync()

    def resync(self):
        """Every Subscription syncs again (after operator faults changed at run time)."""
        namespaces = {sub["metadata"]["namespace"] for sub in self.rt.list(OLM_GROUP, SUB, None)}
        for ns in sorted(namespaces):
            self._subscriptions_follow(ns)

    def _subscriptions_follow(self, ns):
        for sub in self.rt.list(OLM_GROUP, SUB, ns):
            sname = sub["metadata"]["name"]
            self.rt.enqueue(("sub", ns, sname), lambda sname=sname: self.sync_subscription(ns, sname))

    # ------------------------------------------------------------------ OperatorGroup
    def sync_operator_group(self, ns, name):
        og = self.rt.get(OLM_GROUP, OG, ns, name)
        if og is None or og["metadata"].get("deletionTimestamp"):
            return
        status = dict(og.get("status") or {})
        targets = og_target_namespaces(og)
        if status.get("namespaces") != targets:
            status.update({"namespaces": targets, "lastUpdated": now()})
            self.rt.set_status(OLM_GROUP, OG, ns, name, status)

    # ------------------------------------------------------------------ Subscription
    def resolve(self, sub):
        """(package dict, channel, csv name) or raise _Unresolvable(condition list)."""
        spec = sub.get("spec") or {}
        sname = sub["metadata"]["name"]
        source, source_ns = spec.get("source"), spec.get("sourceNamespace") or "openshift-marketplace"
        package = spec.get("name")
        tail = "in the catalog referenced by subscription %s, subscription %s exists" % (sname, sname)
        cs = self.rt.get(OLM_GROUP, CS, source_ns, source or "")
        if cs is None:
            raise _Unresolvable("CatalogSourcesUnhealthy", "True", "CatalogSourcesAdded",
                                "targeted catalogsource %s/%s missing" % (source_ns, source),
                                "failed to populate resolver cache from source %s/%s: catalogsource not found"
                                % (source, source_ns))
        if not source_ready(self.rt, source, source_ns):
            state = ((cs.get("status") or {}).get("connectionState") or {}).get("lastObservedState", "")
            raise _Unresolvable("CatalogSourcesUnhealthy", "True", "UnhealthyCatalogSourceFound",
                                "targeted catalogsource %s/%s unhealthy" % (source_ns, source),
                                "failed to populate resolver cache from source %s/%s: catalog source connection state %s"
                                % (source, source_ns, state or "unknown"))
        pkg = self.rt.catalog.package(package or "")
        if pkg is None or source not in pkg["catalogs"]:
            raise _Unresolvable(None, None, None, None, "constraints not satisfiable: no operators found in package %s %s"
                                % (package, tail))
        channel = spec.get("channel") or pkg["defaultChannel"]
        entries = pkg["channels"].get(channel)
        if entries is None:
            raise _Unresolvable(None, None, None, None, "constraints not satisfiable: no operators found in channel %s "
                                "of package %s %s" % (channel, package, tail))
        csv_name = spec.get("startingCSV") or entries[-1]
        if csv_name not in entries:
            raise _Unresolvable(None, None, None, None, "constraints not satisfiable: no operators found with name %s in "
                                "channel %s of package %s %s" % (csv_name, channel, package, tail))
        return package, pkg, channel, csv_name

    def sync_subscription(self, ns, name):
        sub = self.rt.get(OLM_GROUP, SUB, ns, name)
        if sub is None or sub["metadata"].get("deletionTimestamp"):
            return
        status = dict(sub.get("status") or {})
        ref = status.get("installPlanRef")
        # syncResolvingNamespace stops before resolving anything unless the namespace has exactly one OperatorGroup
        # (catalog/operator.go; resolver/fail_forward.go IsFailForwardEnabled: "found N operatorGroups, expected 1"):
        # no InstallPlan, no CSV, no Subscription status; an OperatorGroup event requeues the namespace.
        resolvable = len(self._operator_groups(ns)) == 1
        if ref:
            self._refresh_subscription(sub, status, ref)
            if resolvable:
                self._resolve_upgrade(ns, name)
            return
        if not resolvable:
            return
        try:
            package, pkg, _channel, csv_name = self.resolve(sub)
        except _Unresolvable as err:
            self._resolution_failed(sub, status, err)
            return
        self._ensure_label(SUB, sub, package)
        healthy = self._catalog_health()
        existing = self.rt.get(OLM_GROUP, CSV, ns, csv_name)
        if existing is not None:  # adopt an operator that is already installed (Subscription deleted and re-created)
            status.update({"state": "AtLatestKnown", "currentCSV": csv_name, "installedCSV": csv_name,
                           "catalogHealth": healthy, "lastUpdated": now(),
                           "conditions": _healthy_conditions(status.get("conditions"))})
            self.rt.set_status(OLM_GROUP, SUB, ns, name, status)
            return
        if ns in (self.rt.operator_faults().get("olm_resolution_hold") or ()):
            # Test control: resolution in this namespace has not finished yet (a slow catalog, a busy catalog
            # operator), so no InstallPlan exists; lifting the hold resyncs and resolution goes on.
            return
        if self._unpack_blocked(sub, status, package, csv_name):
            return
        self._create_plan(sub, status, package, pkg, csv_name, healthy)

    def _operator_groups(self, ns):
        return [g for g in self.rt.list(OLM_GROUP, OG, ns) if not g["metadata"].get("deletionTimestamp")]

    def _namespace_approval(self, ns):
        """Manual when any Subscription of the namespace is Manual: OLM plans a namespace at once
        (operator-lifecycle-manager, pkg/controller/operators/catalog/operator.go, syncResolvingNamespace)."""
        subs = self.rt.list(OLM_GROUP, SUB, ns)
        manual = any((s.get("spec") or {}).get("installPlanApproval") == "Manual" for s in subs)
        return "Manual" if manual else "Automatic"

    def _pending_peers(self, ns, name):
        """Other Subscriptions of the namespace that resolve now and have no plan yet: OLM resolves a namespace at
        once and writes one InstallPlan with every CSV it needs (catalog/operator.go syncResolvingNamespace,
        ensureInstallPlan), so operators subscribed together are planned together."""
        peers = []
        for other in self.rt.list(OLM_GROUP, SUB, ns):
            if other["metadata"]["name"] == name or other["metadata"].get("deletionTimestamp"):
                continue
            if ((other.get("status") or {}).get("installPlanRef")):
                continue
            try:
                package, pkg, _channel, csv_name = self.resolve(other)
            except _Unresolvable:
                continue
            if self.rt.catalog.package_of_csv(csv_name) and not self._unpack_fault(package):
                peers.append((other, package, pkg, csv_name))
        return peers

    def _unpack_fault(self, package):
        return package in ((self.rt.operator_faults().get("bundle_unpack_failure") or {}))

    def _create_plan(self, sub, status, package, pkg, csv_name, healthy):
        ns, name = sub["metadata"]["namespace"], sub["metadata"]["name"]
        approval = self._namespace_approval(ns)
        generation = max([(p.get("spec") or {}).get("generation") or 0 for p in self.rt.list(OLM_GROUP, IP, ns)] + [0]) + 1
        plan_name = "install-" + rand_suffix(rng=self.rt.rng)
        members = [(sub, package, pkg, csv_name)] + self._pending_peers(ns, name)
        ip = self.rt.create(OLM_GROUP, IP, {
            "metadata": {
                "name": plan_name, "namespace": ns,
                "labels": dict((pkg_label(m_package, ns), "") for _s, m_package, _p, _c in members),
                "ownerReferences": [{"apiVersion": V1A1, "kind": "Subscription", "name": m_sub["metadata"]["name"],
                                     "uid": m_sub["metadata"]["uid"], "controller": False, "blockOwnerDeletion": False}
                                    for m_sub, _pk, _p, _c in members],
            },
            "spec": {"approval": approval, "approved": approval == "Automatic",
                     "clusterServiceVersionNames": [m_csv for _s, _pk, _p, m_csv in members], "generation": generation},
            "status": {
                "phase": "RequiresApproval" if approval == "Manual" else "Installing",
                "catalogSources": sorted(set(_source(m_sub) for m_sub, _pk, _p, _c in members)),
                "bundleLookups": [],
                "plan": [step for m_sub, m_package, m_pkg, m_csv in members
                         for step in self._plan_steps(m_package, m_pkg, m_csv, _source(m_sub))],
                "startTime": now(),
                "conditions": ([{"type": "Installed", "status": "False", "reason": "RequiresApproval",
                                 "lastTransitionTime": now(), "lastUpdateTime": now()}] if approval == "Manual" else []),
            },
        })
        if ip is None:
            return
        for m_sub, _m_package, _m_pkg, m_csv in members:
            m_status = status if m_sub is sub else dict(m_sub.get("status") or {})
            self._point_to_plan(m_sub, m_status, ip, m_csv, approval, generation, healthy)

    def _point_to_plan(self, sub, status, ip, csv_name, approval, generation, healthy):
        ns, name = sub["metadata"]["namespace"], sub["metadata"]["name"]
        plan_name = ip["metadata"]["name"]
        conditions = _healthy_conditions(status.get("conditions"))
        conditions = [c for c in conditions if c.get("type") not in ("ResolutionFailed", "BundleUnpacking", "BundleUnpackFailed")]
        conditions.append({"type": "InstallPlanPending", "status": "True",
                           "reason": "RequiresApproval" if approval == "Manual" else "Installing",
                           "lastTransitionTime": now()})
        status.update({
            "state": "UpgradePending",
            "currentCSV": csv_name,
            "installPlanApproval": approval,
            "installPlanGeneration": generation,
            "installPlanRef": {"apiVersion": V1A1, "kind": "InstallPlan", "name": plan_name, "namespace": ns,
                               "resourceVersion": ip["metadata"]["resourceVersion"], "uid": ip["metadata"]["uid"]},
            "installplan": {"apiVersion": V1A1, "kind": "InstallPlan", "name": plan_name, "uuid": ip["metadata"]["uid"]},
            "catalogHealth": healthy,
            "lastUpdated": now(),
            "conditions": conditions,
        })
        self.rt.set_status(OLM_GROUP, SUB, ns, name, status)

    def _resolve_upgrade(self, ns, name):
        """An installed Subscription keeps being resolved: a bundle of its channel that replaces the installed CSV
        or whose skipRange covers its version becomes the next InstallPlan, the channel head first
        (operator-lifecycle-manager, pkg/controller/registry/resolver/resolver.go, getSubscriptionVariables). An
        empty spec.channel means the package's default channel at the time of each resolution."""
        sub = self.rt.get(OLM_GROUP, SUB, ns, name)
        if sub is None or sub["metadata"].get("deletionTimestamp"):
            return
        status = dict(sub.get("status") or {})
        installed = status.get("installedCSV")
        if status.get("state") != "AtLatestKnown" or not installed or self.rt.get(OLM_GROUP, CSV, ns, installed) is None:
            return
        if ns in (self.rt.operator_faults().get("olm_resolution_hold") or ()):
            return
        spec = sub.get("spec") or {}
        package = spec.get("name") or ""
        pkg = self.rt.catalog.package(package)
        if pkg is None or spec.get("source") not in pkg["catalogs"]:
            return
        entries = pkg["channels"].get(spec.get("channel") or pkg["defaultChannel"]) or []
        target = upgrade_target(entries, installed)
        if target is None or self.rt.get(OLM_GROUP, CSV, ns, target) is not None:
            return
        if self._unpack_blocked(sub, status, package, target):
            return
        self._create_plan(sub, status, package, pkg, target, self._catalog_health())

    def _unpack_blocked(self, sub, status, package, csv_name):
        """Operator fault bundle_unpack_failure {package: any}: the bundle image cannot be pulled. Resolution waits
        on the unpack job: condition BundleUnpacking (UnpackingInProgress, the image-pull message) at once, then
        after the unpack timeout BundleUnpackFailed, and no InstallPlan (operator-lifecycle-manager,
        pkg/controller/operators/catalog/operator.go, syncResolvingNamespace; pkg/controller/bundle/bundle_unpacker.go).
        True while the fault holds."""
        if package not in (self.rt.operator_faults().get("bundle_unpack_failure") or {}):
            return False
        types = {c.get("type") for c in status.get("conditions") or [] if c.get("status") == "True"}
        if "BundleUnpacking" in types or "BundleUnpackFailed" in types:
            return True
        ns, name = sub["metadata"]["namespace"], sub["metadata"]["name"]
        conditions = [c for c in _healthy_conditions(status.get("conditions")) if c.get("type") != "ResolutionFailed"]
        conditions.append({"type": "BundleUnpacking", "status": "True", "reason": "UnpackingInProgress",
                           "message": UNPACK_PULL_MESSAGE, "lastTransitionTime": now()})
        status.update({"conditions": conditions, "lastUpdated": now()})
        self.rt.set_status(OLM_GROUP, SUB, ns, name, status)
        self.rt.later(self.rt.cfg("olm_bundle_unpack_timeout_seconds"), lambda: self._unpack_timed_out(ns, name, package))
        return True

    def _unpack_timed_out(self, ns, name, package):
        sub = self.rt.get(OLM_GROUP, SUB, ns, name)
        if sub is None or package not in (self.rt.operator_faults().get("bundle_unpack_failure") or {}):
            return
        status = dict(sub.get("status") or {})
        conditions = [c for c in status.get("conditions") or [] if c.get("type") not in ("BundleUnpacking", "BundleUnpackFailed")]
        conditions.append({"type": "BundleUnpackFailed", "status": "True", "reason": "BundleUnpackFailed",
                           "message": UNPACK_FAILED_MESSAGE, "lastTransitionTime": now()})
        status.update({"conditions": conditions, "lastUpdated": now()})
        self.rt.set_status(OLM_GROUP, SUB, ns, name, status)

    def _plan_steps(self, package, pkg, csv_name, source):
        steps = [{"resolving": csv_name, "status": "Unknown",
                  "resource": {"group": OLM_GROUP, "version": "v1alpha1", "kind": "ClusterServiceVersion", "name": csv_name,
                               "sourceName": source, "sourceNamespace": "openshift-marketplace"}}]
        for group, version, kind, plural in pkg["ownedCRDs"]:
            steps.append({"resolving": csv_name, "status": "Unknown",
                          "resource": {"group": "apiextensions.k8s.io", "version": "v1", "kind": "CustomResourceDefinition",
                                       "name": "%s.%s" % (plural, group), "sourceName": source,
                                       "sourceNamespace": "openshift-marketplace"}})
        return steps

    def _catalog_health(self):
        out = []
        for cs in self.rt.list(OLM_GROUP, CS, "openshift-marketplace"):
            meta = cs["metadata"]
            state = ((cs.get("status") or {}).get("connectionState") or {}).get("lastObservedState")
            out.append({"catalogSourceRef": {"apiVersion": V1A1, "kind": "CatalogSource", "name": meta["name"],
                                             "namespace": meta["namespace"], "resourceVersion": meta["resourceVersion"],
                                             "uid": meta["uid"]},
                        "healthy": state in SERVING_STATES, "lastUpdated": now()})
        return out

    def _resolution_failed(self, sub, status, err):
        meta = sub["metadata"]
        conditions = [c for c in (status.get("conditions") or []) if c.get("type") not in ("ResolutionFailed", "CatalogSourcesUnhealthy")]
        if err.cs_type:
            conditions.append({"type": err.cs_type, "status": err.cs_status, "reason": err.cs_reason, "message": err.cs_message,
                               "lastTransitionTime": now()})
        else:
            conditions = _healthy_conditions(conditions)
        previous = {c["type"]: c for c in status.get("conditions") or []}
        old = previous.get("ResolutionFailed")
        conditions.append({"type": "ResolutionFailed", "status": "True", "reason": "ConstraintsNotSatisfiable",
                           "message": err.message,
                           "lastTransitionTime": old["lastTransitionTime"] if old and old.get("message") == err.message else now()})
        status.update({"conditions": conditions, "catalogHealth": self._catalog_health()})
        if without_times(status) == without_times(sub.get("status") or {}):
            return
        status["lastUpdated"] = now()
        self.rt.set_status(OLM_GROUP, SUB, meta["namespace"], meta["name"], status)

    def _refresh_subscription(self, sub, status, ref):
        ns, name = sub["metadata"]["namespace"], sub["metadata"]["name"]
        ip = self.rt.get(OLM_GROUP, IP, ns, ref["name"])
        if ip is None:
            return
        phase = (ip.get("status") or {}).get("phase")
        conditions = [c for c in (status.get("conditions") or []) if c.get("type") not in ("InstallPlanPending", "InstallPlanFailed")]
        if phase == "Complete":
            planned = ip["spec"]["clusterServiceVersionNames"]
            # A namespace's plan may install several operators: each Subscription records its own CSV.
            csv_name = status.get("currentCSV") if status.get("currentCSV") in planned else planned[0]
            status.update({"state": "AtLatestKnown", "installedCSV": csv_name, "currentCSV": csv_name})
        elif phase == "Failed":
            conditions.append({"type": "InstallPlanFailed", "status": "True", "reason": "InstallComponentFailed",
                               "message": (ip.get("status") or {}).get("message", ""), "lastTransitionTime": now()})
        else:
            old = {c["type"]: c for c in sub["status"].get("conditions") or []}.get("InstallPlanPending")
            conditions.append({"type": "InstallPlanPending", "status": "True", "reason": phase,
                               "lastTransitionTime": old["lastTransitionTime"] if old and old.get("reason") == phase else now()})
        status["conditions"] = conditions
        status["installPlanRef"] = dict(ref, resourceVersion=ip["metadata"]["resourceVersion"])
        if without_times(status) != without_times(sub.get("status") or {}):
            status["lastUpdated"] = now()
            self.rt.set_status(OLM_GROUP, SUB, ns, name, status)

    def _ensure_label(self, plural, obj, package):
        key = pkg_label(package, obj["metadata"]["namespace"])
        if key not in (obj["metadata"].get("labels") or {}):
            def add(o):
                o["metadata"].setdefault("labels", {})[key] = ""
            self.rt.mutate(OLM_GROUP, plural, obj["metadata"]["namespace"], obj["metadata"]["name"], add)

    # ------------------------------------------------------------------ InstallPlan
    def sync_installplan(self, ns, name):
        ip = self.rt.get(OLM_GROUP, IP, ns, name)
        if ip is None or ip["metadata"].get("deletionTimestamp"):
            return
        status = dict(ip.get("status") or {})
        phase = status.get("phase")
        if phase == "RequiresApproval":
            if not (ip.get("spec") or {}).get("approved"):
                return
            status.update({"phase": "Installing",
                           "conditions": [c for c in status.get("conditions") or [] if c.get("type") != "Installed"]})
            self.rt.set_status(OLM_GROUP, IP, ns, name, status)
            self.rt.enqueue(("ip", ns, name), lambda: self.sync_installplan(ns, name), self.rt.cfg("olm_step_seconds"))
        elif phase == "Installing":
            if self._plan_execution_fails(ns, name, ip, status):
                return
            for csv_name in ip["spec"]["clusterServiceVersionNames"]:
                self._apply_bundle_crds(csv_name)
                self._create_csv(ns, csv_name)
            steps = [dict(s, status="Created") for s in status.get("plan") or []]
            status.update({"phase": "Complete", "plan": steps,
                           "conditions": [{"type": "Installed", "status": "True", "lastTransitionTime": now(),
                                           "lastUpdateTime": now()}]})
            self.rt.set_status(OLM_GROUP, IP, ns, name, status)
            for planned in ip["spec"]["clusterServiceVersionNames"]:
                package = self.rt.catalog.package_of_csv(planned)
                if package and self.rt.cfg("crds_served_at") == "installplan_complete":
                    self.crds.set_groups(self.rt.catalog.package(package)["ownedGroups"], True)
        self._subscriptions_follow(ns)

    def _plan_execution_fails(self, ns, name, ip, status):
        """Operator fault installplan_failure {package: error}: ExecutePlan fails for a planned CSV of that package. OLM
        retries with status.message "retrying execution due to error: ..." until the retry timeout, then the plan is
        Failed with condition Installed=False/InstallComponentFailed (catalog/operator.go transitionInstallPlanState)."""
        faults = self.rt.operator_faults().get("installplan_failure") or {}
        error = next((faults[p] for p in (self.rt.catalog.package_of_csv(c) for c in ip["spec"]["clusterServiceVersionNames"])
                      if p in faults), None)
        if error is None:
            return False
        error = str(error or "error creating object")
        first = self._plan_retry_since.setdefault(ip["metadata"]["uid"], time.monotonic())
        left = float(self.rt.cfg("olm_installplan_retry_timeout_seconds")) - (time.monotonic() - first)
        if left > 0:
            retrying = "retrying execution due to error: %s" % error
            if status.get("message") != retrying:
                status.update({"startTime": status.get("startTime") or now(), "message": retrying})
                self.rt.set_status(OLM_GROUP, IP, ns, name, status)
            self.rt.enqueue(("ip-retry", ns, name), lambda: self.sync_installplan(ns, name), left + 0.01)
            return True
        conditions = [c for c in status.get("conditions") or [] if c.get("type") != "Installed"]
        conditions.append({"type": "Installed", "status": "False", "reason": "InstallComponentFailed", "message": error,
                           "lastTransitionTime": now(), "lastUpdateTime": now()})
        status.update({"phase": "Failed", "message": error, "conditions": conditions})
        self.rt.set_status(OLM_GROUP, IP, ns, name, status)
        self._subscriptions_follow(ns)
        return True

    def _apply_bundle_crds(self, csv_name):
        """The plan's CRD steps come first: the bundle's CRDs replace the served ones (catalog/operator.go ExecutePlan),
        so an upgrade brings the new operator version's schema and a first install the installed version's."""
        package = self.rt.catalog.package_of_csv(csv_name)
        source = (self.rt.catalog.package(package) or {}).get("crdSource")
        serve = getattr(self.rt.sim, "serve_operator_version", None)
        if source and serve:
            serve(source, csv_version(csv_name))

    def _create_csv(self, ns, csv_name):
        package = self.rt.catalog.package_of_csv(csv_name)
        pkg = self.rt.catalog.package(package)
        channel_entries = next(e for e in pkg["channels"].values() if csv_name in e)
        idx = channel_entries.index(csv_name)
        spec = {
            "displayName": pkg["displayName"],
            "version": csv_version(csv_name),
            "provider": {"name": pkg["provider"]},
            "maturity": "stable",
            "installModes": install_modes_list(pkg),
            "customresourcedefinitions": {"owned": [
                {"name": "%s.%s" % (plural, group), "version": version, "kind": kind, "displayName": kind}
                for group, version, kind, plural in pkg["ownedCRDs"]]},
            "install": {"strategy": "deployment", "spec": {"deployments": [
                {"name": pkg["deployment"], "spec": _deployment_spec(pkg)}]}},
        }
        bundle = self.rt.catalog.bundle(csv_name)
        for field in ("minKubeVersion", "relatedImages"):
            if bundle.get(field):
                spec[field] = bundle[field]
        # An upgrade's CSV replaces the CSV installed now, whatever the bundle says (resolver.go sets Replaces to
        # the current CSV; steps.go writes it into spec.replaces); a first install keeps the bundle's own edge.
        label = pkg_label(package, ns)
        current = next((c["metadata"]["name"] for c in self.rt.list(OLM_GROUP, CSV, ns)
                        if label in (c["metadata"].get("labels") or {}) and c["metadata"]["name"] != csv_name
                        and (c.get("status") or {}).get("phase") not in ("Replacing", "Deleting")), None)
        if current:
            spec["replaces"] = current
        elif idx > 0:
            spec["replaces"] = channel_entries[idx - 1]
        self.rt.create(OLM_GROUP, CSV, {
            "metadata": {
                "name": csv_name, "namespace": ns,
                "labels": {pkg_label(package, ns): "", "olm.managed": "true"},
                "annotations": {
                    "alm-examples": json.dumps(pkg["almExamples"], indent=2),
                    "capabilities": "Seamless Upgrades",
                    "operatorframework.io/suggested-namespace": pkg["suggestedNamespace"],
                    "olm.skipRange": "<%s" % csv_version(csv_name),
                },
            },
            "spec": spec,
        })

    # ------------------------------------------------------------------ CSV
    def _set_phase(self, csv, phase, reason, message):
        ns, name = csv["metadata"]["namespace"], csv["metadata"]["name"]
        status = dict(csv.get("status") or {})
        if status.get("phase") == phase and status.get("reason") == reason and status.get("message") == message:
            return
        ts = now()
        history = list(status.get("conditions") or [])
        history.append({"phase": phase, "reason": reason, "message": message, "lastTransitionTime": ts, "lastUpdateTime": ts})
        status.update({"phase": phase, "reason": reason, "message": message, "lastTransitionTime": ts,
                       "lastUpdateTime": ts, "conditions": history[-20:]})
        self.rt.set_status(OLM_GROUP, CSV, ns, name, status)

    def _step(self, ns, name):
        self.rt.enqueue(("csv", ns, name), lambda: self.sync_csv(ns, name), self.rt.cfg("olm_step_seconds"))

    def _fault(self, package):
        faults = self.rt.operator_faults()
        fault = (faults.get("csv_failure") or {}).get(package)
        transient = (faults.get("csv_transient_failure") or {}).get(package)
        if fault is None and transient is None:
            return None
        spec = fault if fault is not None else transient
        if isinstance(spec, str):
            spec = {"reason": spec}
        spec = dict(spec)
        spec.setdefault("transient", fault is None)
        spec.setdefault("reason", "InstallComponentFailed")
        spec.setdefault("message", "install strategy failed: simulated fault for package %s" % package)
        return spec

    def sync_csv(self, ns, name):
        csv = self.rt.get(OLM_GROUP, CSV, ns, name)
        if csv is None or csv["metadata"].get("deletionTimestamp"):
            return
        package = self.rt.catalog.package_of_csv(name)
        if package is None:
            return
        pkg = self.rt.catalog.package(package)
        status = csv.get("status") or {}
        phase, reason = status.get("phase", ""), status.get("reason", "")

        # OperatorGroup membership, checked on every sync as olm-operator does.
        groups = [g for g in self.rt.list(OLM_GROUP, OG, ns) if not g["metadata"].get("deletionTimestamp")]
        if not groups:
            self._set_phase(csv, "Failed", "NoOperatorGroup", MSG["NoOperatorGroup"])
            return
        if len(groups) > 1:
            self._set_phase(csv, "Failed", "TooManyOperatorGroups", MSG["TooManyOperatorGroups"])
            return
        og = groups[0]
        targets = og_target_namespaces(og)
        annotations = csv["metadata"].get("annotations") or {}
        wanted = {"olm.operatorGroup": og["metadata"]["name"], "olm.operatorNamespace": ns,
                  "olm.targetNamespaces": ",".join(targets)}
        if any(annotations.get(k) != v for k, v in wanted.items()):
            def annotate(o):
                o["metadata"].setdefault("annotations", {}).update(wanted)
            csv = self.rt.mutate(OLM_GROUP, CSV, ns, name, annotate)
        if self._replaced(csv, phase):
            return
        error = install_mode_error(pkg["installModes"], ns, targets)
        if error:
            self._set_phase(csv, "Failed", "UnsupportedOperatorGroup", error)
            return
        if phase == "Failed" and reason in ("NoOperatorGroup", "TooManyOperatorGroups", "UnsupportedOperatorGroup"):
            phase = ""  # the OperatorGroup was fixed: start over, as olm-operator requeues the CSV

        fault = self._fault(package)
        uid = csv["metadata"]["uid"]
        if phase == "":
            self._set_phase(csv, "Pending", "RequirementsUnknown", MSG["RequirementsUnknown"])
            self._step(ns, name)
        elif phase == "Pending":
            unmet = self._min_kube_version_unmet(csv)
            if unmet:
                # olm/requirements.go minKubeVersionStatus, olm/operator.go: the CSV stays Pending, re-checked.
                if status.get("requirementStatus") != [unmet]:
                    self.rt.set_status(OLM_GROUP, CSV, ns, name, dict(status, requirementStatus=[unmet]))
                    csv = self.rt.get(OLM_GROUP, CSV, ns, name)
                self._set_phase(csv, "Pending", "RequirementsNotMet", MSG["RequirementsNotMet"])
                return
            self._set_phase(csv, "InstallReady", "RequirementsMet", MSG["RequirementsMet"])
            self._step(ns, name)
        elif phase == "InstallReady":
            if self._cycle_failure(csv, package):
                return
            if fault and not (fault["transient"] and uid in self._transient_done):
                self._set_phase(csv, "Failed", fault["reason"], fault["message"])
                if fault["transient"]:
                    self._transient_done.add(uid)
                    self.rt.later(self.rt.cfg("olm_transient_failure_seconds"), lambda: self._recover(ns, name))
                return
            self._set_phase(csv, "Installing", "InstallSucceeded", MSG["InstallSucceeded"])
            self._deploy_operator(csv, pkg, ready=False)
            self._step(ns, name)
        elif phase == "Installing":
            self._deploy_operator(csv, pkg, ready=True)
            self._set_phase(csv, "Succeeded", "InstallSucceeded", MSG["Succeeded"])
            if self.rt.cfg("crds_served_at") == "csv_succeeded":
                self.crds.set_groups(pkg["ownedGroups"], True)
            self._subscriptions_follow(ns)

    def _min_kube_version_unmet(self, csv):
        """The requirementStatus entry of an unmet spec.minKubeVersion, else None (olm/requirements.go)."""
        wanted = (csv.get("spec") or {}).get("minKubeVersion")
        if not wanted or self.rt.profile is None:
            return None
        server = self.rt.profile.cluster.kubernetes_version
        if version_key(wanted.lstrip("v")) <= version_key(server):
            return None
        return {"group": OLM_GROUP, "version": "v1alpha1", "kind": "ClusterServiceVersion", "name": csv["metadata"]["name"],
                "status": "PresentNotSatisfied",
                "message": "CSV version requirement not met: minKubeVersion (%s) > server version (%s)" % (wanted, server)}

    def _replaced(self, csv, phase):
        """A CSV that a newer CSV in its namespace replaces goes Replacing, then, once the new one succeeded,
        Deleting and is removed (operator-lifecycle-manager, pkg/controller/operators/olm/operator.go,
        checkReplacementsAndUpdateStatus and the Replacing/Deleting phases). True when it is being replaced."""
        ns, name = csv["metadata"]["namespace"], csv["metadata"]["name"]
        successor = next((c for c in self.rt.list(OLM_GROUP, CSV, ns)
                          if (c.get("spec") or {}).get("replaces") == name), None)
        if successor is None:
            return False
        if phase == "Deleting":
            self.rt.delete(OLM_GROUP, CSV, ns, name)
        elif (successor.get("status") or {}).get("phase") == "Succeeded":
            self._set_phase(csv, "Deleting", "Replaced",
                            "has been replaced by a newer ClusterServiceVersion that has successfully installed.")
            self._step(ns, name)
        else:
            self._set_phase(csv, "Replacing", "BeingReplaced", "being replaced by csv: %s" % successor["metadata"]["name"])
        return True

    def _cycle_failure(self, csv, package):
        """Fault csv_failure_cycle {package: message}: the install check fails every time. olm-operator sets the CSV
        Failed (InstallCheckFailed, "install failed: ...") and on its next sync back to Pending (NeedsReinstall,
        "calculated deployment install is bad"), and round again (operator-framework-olm staging/operator-lifecycle-
        manager/pkg/controller/operators/olm/operator.go, transitionCSVState), so the CSV is never Failed for long; as
        the CSV in operator-framework/operator-lifecycle-manager#606 shows. True when the fault fired."""
        message = (self.rt.operator_faults().get("csv_failure_cycle") or {}).get(package)
        if not message:
            return False
        ns, name = csv["metadata"]["namespace"], csv["metadata"]["name"]
        self._set_phase(csv, "Failed", "InstallCheckFailed", "install failed: %s" % message)
        self.rt.later(self.rt.cfg("olm_step_seconds"), lambda: self._recover(ns, name))
        return True

    def _recover(self, ns, name):
        csv = self.rt.get(OLM_GROUP, CSV, ns, name)
        if csv is None or (csv.get("status") or {}).get("phase") != "Failed":
            return
        self._set_phase(csv, "Pending", "NeedsReinstall", "calculated deployment install is bad")
        self._step(ns, name)

    # ------------------------------------------------------------------ operator Deployment and pod
    def _deploy_operator(self, csv, pkg, ready):
        ns = csv["metadata"]["namespace"]
        dname = pkg["deployment"]
        if self.rt.rtype("apps", "deployments") is None:
            return
        owner = {"apiVersion": V1A1, "kind": "ClusterServiceVersion", "name": csv["metadata"]["name"],
                 "uid": csv["metadata"]["uid"], "controller": False, "blockOwnerDeletion": False}
        labels = {"olm.owner": csv["metadata"]["name"], "olm.owner.kind": "ClusterServiceVersion", "olm.owner.namespace": ns,
                  "olm.managed": "true", pkg_label(self.rt.catalog.package_of_csv(csv["metadata"]["name"]), ns): ""}
        dep = self.rt.get("apps", "deployments", ns, dname)
        if dep is None:
            dep = self.rt.create("apps", "deployments", {
                "metadata": {"name": dname, "namespace": ns, "labels": labels, "ownerReferences": [owner]},
                "spec": _deployment_spec(pkg),
            })
            if dep is None:
                return
        n = 1 if ready else 0
        cond = "True" if ready else "False"
        self.rt.set_status("apps", "deployments", ns, dname, {
            "observedGeneration": dep["metadata"].get("generation", 1), "replicas": 1, "updatedReplicas": 1,
            "readyReplicas": n, "availableReplicas": n, "unavailableReplicas": 1 - n,
            "conditions": [
                {"type": "Available", "status": cond, "reason": "MinimumReplicasAvailable" if ready else "MinimumReplicasUnavailable",
                 "message": "Deployment has minimum availability." if ready else "Deployment does not have minimum availability.",
                 "lastTransitionTime": now(), "lastUpdateTime": now()},
                {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable" if ready else "ReplicaSetUpdated",
                 "message": 'ReplicaSet "%s" has successfully progressed.' % dname, "lastTransitionTime": now(),
                 "lastUpdateTime": now()},
            ],
        })
        self._operator_pod(dep, pkg, ready)

    def _operator_pod(self, dep, pkg, ready):
        if self.rt.rtype("", "pods") is None:
            return
        ns, dname = dep["metadata"]["namespace"], dep["metadata"]["name"]
        pods = self.rt.list("", "pods", ns, label_selector="app.kubernetes.io/name=%s" % dname)
        if pods:
            pod = pods[0]
        else:
            pod_name = "%s-%s-%s" % (dname, pod_hash(self.rt.rng), rand_suffix(rng=self.rt.rng))
            node = next((n.name for n in self.rt.profile.nodes if n.is_master), self.rt.profile.nodes[0].name)
            pod = self.rt.create("", "pods", {
                "metadata": {"name": pod_name, "namespace": ns, "labels": {"app.kubernetes.io/name": dname, "control-plane": dname},
                             "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": dname,
                                                  "uid": dep["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]},
                "spec": {"nodeName": node, "serviceAccountName": dname,
                         "containers": [{"name": c, "image": "registry.example/%s:%s" % (c, pkg["defaultChannel"])}
                                        for c in pkg["containers"]]},
            })
            if pod is None:
                return
            logs = getattr(self.rt.sim, "pod_logs", None)
            if isinstance(logs, dict):
                logs[(ns, pod_name)] = "%s starting manager\n%s Starting workers\n" % (now(), now())
        n = len(pkg["containers"])
        self.rt.set_status("", "pods", ns, pod["metadata"]["name"], {
            "phase": "Running" if ready else "Pending",
            "conditions": [{"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": now()},
                           {"type": "ContainersReady", "status": "True" if ready else "False", "lastTransitionTime": now()},
                           {"type": "PodScheduled", "status": "True", "lastTransitionTime": now()}],
            "containerStatuses": [{"name": c, "ready": ready, "restartCount": 0, "started": ready,
                                   "image": "registry.example/%s" % c, "imageID": "",
                                   "state": {"running": {"startedAt": now()}} if ready else
                                   {"waiting": {"reason": "ContainerCreating"}}} for c in pkg["containers"]],
            "hostIP": "10.0.0.1", "podIP": "10.128.0.%d" % (10 + n), "startTime": now(), "qosClass": "Burstable",
        })


def upgrade_target(entries, installed):
    """The bundle of a channel (entries oldest first) that OLM resolves as the installed CSV's replacement:
    the head-most entry that replaces it (its predecessor in the channel) or whose skipRange (<own version, the
    annotation _create_csv writes) includes the installed version; None when nothing newer is there."""
    have = version_key(csv_version(installed))
    for idx in range(len(entries) - 1, -1, -1):
        entry = entries[idx]
        if entry == installed:
            continue
        replaces = entries[idx - 1] if idx > 0 else None
        if replaces == installed or have < version_key(csv_version(entry)):
            return entry
    return None


def _deployment_spec(pkg):
    name = pkg["deployment"]
    return {
        "replicas": 1,
        "selector": {"matchLabels": {"app.kubernetes.io/name": name}},
        "template": {"metadata": {"labels": {"app.kubernetes.io/name": name, "control-plane": name}},
                     "spec": {"serviceAccountName": name,
                              "containers": [{"name": c, "image": "registry.example/%s" % c} for c in pkg["containers"]]}},
    }


def _source(sub):
    """The CatalogSource a Subscription resolves from (its plan's steps name it)."""
    return (sub.get("spec") or {}).get("source") or ""


def _healthy_conditions(conditions):
    old = {c.get("type"): c for c in conditions or []}.get("CatalogSourcesUnhealthy")
    out = [c for c in (conditions or []) if c.get("type") not in ("CatalogSourcesUnhealthy", "ResolutionFailed")]
    keep = old is not None and old.get("status") == "False"
    out.insert(0, {"type": "CatalogSourcesUnhealthy", "status": "False", "reason": "AllCatalogSourcesHealthy",
                   "message": "all available catalogsources are healthy",
                   "lastTransitionTime": old["lastTransitionTime"] if keep else now()})
    return out


_TIME_KEYS = ("lastTransitionTime", "lastUpdated", "lastUpdateTime", "lastHeartbeatTime", "resourceVersion")


def without_times(value):
    """value with timestamps dropped, to tell a real status change from a refresh."""
    if isinstance(value, dict):
        return {k: without_times(v) for k, v in value.items() if k not in _TIME_KEYS}
    if isinstance(value, list):
        return [without_times(v) for v in value]
    return value


class _Unresolvable(Exception):
    def __init__(self, cs_type, cs_status, cs_reason, cs_message, message):
        super().__init__(message)
        self.cs_type, self.cs_status, self.cs_reason, self.cs_message = cs_type, cs_status, cs_reason, cs_message
        self.message = message


__all__ = ["OlmController", "install_mode_error", "og_target_namespaces"]
