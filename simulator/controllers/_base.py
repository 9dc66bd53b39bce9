"""Shared plumbing for the simulated operators: type lookup, a coalescing work queue, small helpers."""

import copy
import datetime
import json
import logging
import random
import threading

from ..errors import ApiError
from ..ssa import record_update

log = logging.getLogger("simulator.controllers")

# Timing knobs and switches read from sim.config (documented in docs/hardware-profiles.md, "Cluster behaviour").
DEFAULT_CONFIG = {
    "controller_delay_seconds": 0.01,  # reaction delay of every controller to an event
    "olm_step_seconds": 0.05,  # one OLM state transition (InstallPlan and CSV phases)
    "olm_transient_failure_seconds": 0.2,  # how long a transient CSV failure lasts
    # A bundle unpack job that cannot pull its image is given up after --bundle-unpack-timeout (10 min upstream,
    # operator-lifecycle-manager cmd/catalog/start.go); scaled like the other OLM timings.
    "olm_bundle_unpack_timeout_seconds": 30.0,
    # Plan execution errors are retried for this long, then the plan fails (catalog --install-plan-retry-timeout,
    # 1 min upstream; operator fault installplan_failure).
    "olm_installplan_retry_timeout_seconds": 3,
    "nfd_label_delay_seconds": 0.1,  # NodeFeatureDiscovery created -> node labels
    "sriov_sync_seconds": 0.1,  # SriovNetworkNodeState InProgress -> Succeeded
    # A changed SriovNetworkNodePolicy reaches the node states' spec one policy sync later (AddAfter 1 s upstream,
    # sriovnetworknodepolicy_controller.go); scaled so that it still outlasts a client's apply-then-read.
    "sriov_policy_sync_delay_seconds": 0.1,
    "sriov_reboot_seconds": 0.2,  # extra time a node is drained/NotReady when a policy adds Mellanox VFs
    # The node state of a node the config daemons no longer select is kept 30 minutes (sriov-network-operator
    # handleStaleNodeState, pkg/consts DefaultNodeStateCleanupDelayMinutes), scaled by 1/100 like the kubelet back-off.
    "sriov_stale_node_state_seconds": 18.0,
    "mco_node_update_seconds": 0.1,  # one node's drain + reboot during a MachineConfigPool rollout
    # The render controller waits before rendering a changed MachineConfig set (5 s upstream), and until then the
    # pool reports the old rendered config as Updated. Scaled so that it still outlasts a client's apply-then-read.
    "mco_render_delay_seconds": 0.3,
    "nic_policy_ready_seconds": 0.2,  # NicClusterPolicy notReady -> ready (driver load)
    "gpu_policy_ready_seconds": 0.2,  # ClusterPolicy notReady -> ready
    # Operand pods (operands.py, workloads.py): image pull and container start of every operand pod, scaled like the
    # other timings (docs/simulator.md, "Time model", gives the real ranges); a driver pod adds the driver's own
    # nic_policy_ready_seconds / gpu_policy_ready_seconds (build and load).
    "operand_image_pull_seconds": 0.02,
    "operand_start_seconds": 0.03,
    # After a reboot the kubelet keeps each device plugin's resource in capacity with allocatable 0 until the plugin
    # registers again (a container start, documented range 1-30 s, scaled like operand_start_seconds), and drops one
    # that has not registered after endpointStopGracePeriod, 5 minutes (kubernetes pkg/kubelet/cm/devicemanager
    # types.go), scaled by 1/100 (simulator/controllers/devicemanager.py).
    "device_plugin_register_seconds": 0.05,
    "kubelet_endpoint_stop_grace_seconds": 3.0,
    # The kubelet's restart back-off of a failing container: 10 s doubling to 300 s (kubernetes pkg/kubelet/kubelet.go
    # backOffPeriod, MaxContainerBackOff), scaled by 1/100.
    "kubelet_backoff_seconds": 0.1,
    "kubelet_backoff_max_seconds": 3.0,
    # "csv_succeeded": operator-owned kinds appear when the CSV succeeds; "installplan_complete": when the
    # InstallPlan creates the CRDs (what OLM really does, slightly earlier than the CSV success).
    "crds_served_at": "csv_succeeded",
    "catalog_remove_packages": [],  # package names missing from the catalog (preflight tests)
    "catalog_source_states": {},  # CatalogSource name -> READY | CONNECTING | TRANSIENT_FAILURE
    # A disconnected cluster: OperatorHub's spec.disableAllDefaultSources (no default CatalogSource) and the name of
    # the CatalogSource of a mirrored index that holds every package; whoever mirrors creates it in openshift-marketplace.
    "catalog_disable_default_sources": False,
    "catalog_mirror": "",
    # package -> the CatalogSources that hold it (each serves its own PackageManifest of that name), e.g. a default
    # catalog and a mirror; a source that is not a default one is created by whoever set it up, as the mirror is.
    "catalog_package_sources": {},
    # package -> PACKAGES fields (catalogs, channels at least): further packages in the catalog (a test harness).
    "catalog_extra_packages": {},
}

OLM_GROUP = "operators.coreos.com"
_K8S_RAND = "bcdfghjklmnpqrstvwxz2456789"


def now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def rand_suffix(n=5, rng=random):
    return "".join(rng.choice(_K8S_RAND) for _position in range(n))


def pod_hash(rng=random):
    """ReplicaSet-style hash of a pod name (deployment-<hash>-<suffix>)."""
    return rand_suffix(10, rng)


def config_value(sim, key):
    """sim.config[key] or its default, coerced to the default's type (`--set key=value` gives strings)."""
    conf = getattr(sim, "config", None) or {}
    value, default = conf.get(key, DEFAULT_CONFIG[key]), DEFAULT_CONFIG[key]
    if isinstance(value, str) and not isinstance(default, str):
        if isinstance(default, bool):
            return value.strip().lower() in ("1", "true", "yes", "on")
        if isinstance(default, (int, float)):
            return float(value)
        if isinstance(default, list) and not value.strip().startswith("["):
            return [v.strip() for v in value.split(",") if v.strip()]
        return json.loads(value)
    return value


class Runtime:
    """What every controller shares for one SimulatedCluster."""

    def __init__(self, sim, catalog):
        self.sim = sim
        self.store = sim.store
        self.catalog = catalog
        self.profile = sim.profile
        self._pending = set()
        self._lock = threading.Lock()
        self._types = {}
        self.rng = random.Random(0x5EED)
        # node -> when its kubelet started after a reboot, while device plugins have not registered (devicemanager.py)
        self.unregistered = {}

    # ------------------------------------------------------------------ config
    def cfg(self, key):
        return config_value(self.sim, key)

    def operator_faults(self):
        faults = getattr(self.sim, "faults", None)
        return getattr(faults, "operator_faults", None) or {}

    # ------------------------------------------------------------------ types
    def rtype(self, group, plural, version=None):
        """The registered ResourceType (served or not) for group/plural; None if absent."""
        key = (group, plural, version)
        cached = self._types.get(key)
        if cached is not None:
            return self.store.type_of(cached)
        best = None
        for t in self.store.resource_types():
            if t.group == group and t.plural == plural and (version is None or t.version == version):
                # Prefer the storage-like first version the CRD lists (v1 before v1alpha2).
                if best is None or (version is None and _version_rank(t.version) < _version_rank(best.version)):
                    best = t
        if best is not None:
            self._types[key] = best
        return best

    def require(self, group, plural):
        t = self.rtype(group, plural)
        if t is None:
            raise LookupError("resource %s.%s is not registered in the simulator" % (plural, group))
        return t

    # ------------------------------------------------------------------ queue
    def enqueue(self, key, fn, delay=None):
        """Run fn() on the server loop after delay; several requests for one key before it runs coalesce."""
        with self._lock:
            if key in self._pending:
                return
            self._pending.add(key)
        if delay is None:
            delay = self.cfg("controller_delay_seconds")

        def run():
            with self._lock:
                self._pending.discard(key)
            try:
                fn()
            except ApiError as exc:
                if exc.code not in (404, 409):
                    log.warning("controller %s: %s", key, exc)
                elif exc.code == 409:  # lost a race with another writer: try again
                    self.enqueue(key, fn)
            except Exception:  # noqa: BLE001  (a bug in one controller must not stop the server loop)
                log.exception("controller %s failed", key)

        self.sim.schedule(delay, run)

    def later(self, delay, fn):
        """Run fn() once after delay (no coalescing), with the same error handling as enqueue."""
        def run():
            try:
                fn()
            except ApiError as exc:
                if exc.code != 404:
                    log.warning("controller timer: %s", exc)
            except Exception:  # noqa: BLE001
                log.exception("controller timer failed")
        self.sim.schedule(delay, run)

    # ------------------------------------------------------------------ object helpers
    def get(self, group, plural, namespace, name):
        t = self.rtype(group, plural)
        return None if t is None else self.store.try_get(t, namespace, name)

    def list(self, group, plural, namespace=None, label_selector=None):
        t = self.rtype(group, plural)
        if t is None:
            return []
        return self.store.list(t, namespace, label_selector=label_selector)[0]

    def create(self, group, plural, obj):
        t = self.require(group, plural)
        try:
            return self.store.create(t, obj)
        except ApiError as exc:
            if exc.code == 409:
                return None
            raise

    def set_status(self, group, plural, namespace, name, status):
        """Replace status if it differs (no-op writes are dropped by the store)."""
        t = self.require(group, plural)
        return self.store.update_status(t, namespace, name, status)

    def mutate(self, group, plural, namespace, name, fn):
        return self.store.mutate(self.require(group, plural), namespace, name, fn)

    def update_as(self, group, plural, namespace, name, fn, manager):
        """mutate() as an Update through the API by field manager `manager`: managedFields record it like the
        apiserver does (the fields it changed become its own, fields it removed leave every manager)."""
        t = self.require(group, plural)

        def edit(obj):
            old = copy.deepcopy(obj)
            fn(obj)
            record_update(t, old, obj, manager)

        return self.store.mutate(t, namespace, name, edit)

    def delete(self, group, plural, namespace, name):
        t = self.rtype(group, plural)
        if t is None:
            return
        try:
            self.store.delete(t, namespace, name)
        except ApiError as exc:
            if exc.code != 404:
                raise

    # ------------------------------------------------------------------ OLM queries shared by operators
    def installed_namespace(self, package):
        """Namespace where package's CSV is Succeeded (the operator runs), else None."""
        for csv in self.list(OLM_GROUP, "clusterserviceversions"):
            labels = csv["metadata"].get("labels") or {}
            if any(k.startswith("operators.coreos.com/%s." % package) for k in labels):
                if (csv.get("status") or {}).get("phase") == "Succeeded" and not csv["metadata"].get("deletionTimestamp"):
                    return csv["metadata"]["namespace"]
        return None


def _version_rank(version):
    # v1 < v1beta1 < v1alpha2 ... in preference order
    if "alpha" in version:
        return 2
    if "beta" in version:
        return 1
    return 0


def set_condition(conditions, ctype, status, reason, message, extra=None):
    """Upsert a metav1.Condition-style entry; lastTransitionTime changes only when status changes."""
    conditions = copy.deepcopy(conditions or [])
    for cond in conditions:
        if cond.get("type") == ctype:
            if cond.get("status") != status:
                cond["lastTransitionTime"] = now()
            cond.update({"status": status, "reason": reason, "message": message})
            if extra:
                cond.update(extra)
            return conditions
    entry = {"type": ctype, "status": status, "reason": reason, "message": message, "lastTransitionTime": now()}
    if extra:
        entry.update(extra)
    conditions.append(entry)
    return conditions


def node_matches(node, selector):
    """Equality-based nodeSelector match (map of label -> value)."""
    labels = node["metadata"].get("labels") or {}
    return all(labels.get(k) == str(v) for k, v in (selector or {}).items())


def profile_node(runtime, name):
    try:
        return runtime.profile.node(name)
    except KeyError:
        return None


def update_node(rt, name, set_labels=None, remove_labels=(), remove_label_prefix=None, keep_labels=(),
                set_resources=None, remove_resources=()):
    """Change a node's labels and status.capacity/allocatable in one write, only when something differs.
    Returns None when the node does not exist, else whether it was written. The node is read without a copy:
    reconciles call this for every node, and most calls change nothing."""
    node_type = rt.require("", "nodes")
    found = rt.store.inspect(node_type, None, name, lambda node: (
        dict(node["metadata"].get("labels") or {}), dict((node.get("status") or {}).get("capacity") or {}),
        dict((node.get("status") or {}).get("allocatable") or {})))
    if found is None:
        return None
    labels, cap, alloc = found
    new_labels = dict(labels)
    if remove_label_prefix:
        for key in list(new_labels):
            if key.startswith(remove_label_prefix) and key not in (set_labels or {}) and key not in keep_labels:
                del new_labels[key]
    for key in remove_labels:
        new_labels.pop(key, None)
    new_labels.update({k: str(v) for k, v in (set_labels or {}).items()})
    new_cap, new_alloc = dict(cap), dict(alloc)
    for key in remove_resources:
        new_cap.pop(key, None)
        new_alloc.pop(key, None)
    withdrawn = name in rt.unregistered  # the kubelet restarted and the plugins have not registered (devicemanager.py)
    for key, value in (set_resources or {}).items():
        new_cap[key] = str(value)
        new_alloc[key] = "0" if withdrawn and "/" in key else str(value)
    if new_labels == labels and new_cap == cap and new_alloc == alloc:
        return False

    def edit(obj):
        obj["metadata"]["labels"] = new_labels
        obj.setdefault("status", {})["capacity"] = new_cap
        obj["status"]["allocatable"] = new_alloc

    rt.mutate("", "nodes", None, name, edit)
    return True


class OperatorController:
    """Base of the simulated operators: reconcile everything of one package, coalesced, on relevant events."""

    package = ""
    watched = ()  # (group, plural) of the operator's own kinds
    watch_nodes = False

    def __init__(self, rt):
        self.rt = rt

    def on_event(self, etype, rtype, obj):
        key = (rtype.group, rtype.plural)
        if key in self.watched or (self.watch_nodes and key == ("", "nodes")):
            self.resync()
        elif key == (OLM_GROUP, "clusterserviceversions"):
            labels = obj["metadata"].get("labels") or {}
            if any(k.startswith("operators.coreos.com/%s." % self.package) for k in labels):
                self.resync()

    def resync(self, delay=None):
        self.rt.enqueue((type(self).__name__,), self._reconcile_if_running, delay)

    def _reconcile_if_running(self):
        # Operator fault operators_stopped: [package, ...]: the operator's pod is down (crash-looping, scaled to 0), so
        # it reconciles nothing, finalizers included, while its CSV still says Succeeded.
        if self.package in (self.rt.operator_faults().get("operators_stopped") or []):
            return
        ns = self.rt.installed_namespace(self.package)
        if ns is not None:
            self.reconcile(ns)

    def reconcile(self, operator_namespace):  # pragma: no cover - abstract
        raise NotImplementedError


class Rollout:
    """notReady -> ready after a delay, restarted whenever the watched generation changes."""

    def __init__(self):
        self._started = {}

    def progress(self, key, generation, delay):
        """(ready, seconds_left)."""
        import time

        started = self._started.get(key)
        if started is None or started[0] != generation:
            started = (generation, time.monotonic())
            self._started[key] = started
        left = delay - (time.monotonic() - started[1])
        return left <= 0, max(left, 0.0)

    def forget(self, key):
        self._started.pop(key, None)
