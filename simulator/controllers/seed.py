"""Objects a freshly installed OpenShift cluster already has: identity, nodes, pools, catalogs."""

import hashlib
import json

from ..catalog import csv_version
from ..selectors import labels_match
from ._base import OLM_GROUP, now
from .types import PACKAGEMANIFEST

SYSTEM_NAMESPACES = ("openshift-marketplace", "openshift-operators", "openshift-machine-config-operator",
                     "openshift-operator-lifecycle-manager", "openshift-config")


def _hash(*parts, n=32):
    return hashlib.sha256("/".join(map(str, parts)).encode()).hexdigest()[:n]


def rendered_config(pool, profile):
    return "rendered-%s-%s" % (pool, _hash(pool, profile.cluster.version))


def seed_cluster(rt):
    store = rt.store
    profile = rt.profile
    ns_type = rt.require("", "namespaces")
    for name in SYSTEM_NAMESPACES:
        if store.try_get(ns_type, None, name) is None:
            labels = {"openshift.io/cluster-monitoring": "true"} if name != "openshift-operators" else {}
            store.create(ns_type, {"metadata": {"name": name, "labels": labels}})
    seed_cluster_version(rt)
    node_type = rt.require("", "nodes")
    for node in profile.nodes:
        if store.try_get(node_type, None, node.name) is None:
            store.create(node_type, node_object(node, profile))
    seed_machine_config_pools(rt)
    seed_operator_groups(rt)
    seed_catalog_sources(rt)
    sync_package_manifests(rt)


def seed_cluster_version(rt):
    cluster = rt.profile.cluster
    t = rt.rtype("config.openshift.io", "clusterversions")
    if t is None or rt.store.try_get(t, None, "version") is not None:
        return
    image = "quay.io/openshift-release-dev/ocp-release@sha256:" + _hash("release", cluster.version, n=64)
    ts = now()
    rt.store.create(t, {
        "metadata": {"name": "version"},
        "spec": {"channel": cluster.channel, "clusterID": cluster.cluster_id},
        "status": {
            "desired": {"version": cluster.version, "image": image,
                        "channels": [cluster.channel, "fast-%s" % cluster.minor, "eus-%s" % cluster.minor]},
            "history": [{"state": "Completed", "version": cluster.version, "image": image, "verified": False,
                         "startedTime": ts, "completionTime": ts}],
            "observedGeneration": 1,
            "versionHash": _hash("vh", cluster.version, n=12),
            "capabilities": {"enabledCapabilities": ["Console", "Ingress", "MachineAPI", "marketplace", "OperatorLifecycleManager"],
                             "knownCapabilities": ["Console", "Ingress", "MachineAPI", "marketplace", "OperatorLifecycleManager"]},
            "availableUpdates": None,
            "conditions": [
                {"type": "Available", "status": "True", "lastTransitionTime": ts,
                 "message": "Done applying %s" % cluster.version},
                {"type": "Failing", "status": "False", "lastTransitionTime": ts},
                {"type": "Progressing", "status": "False", "lastTransitionTime": ts,
                 "message": "Cluster version is %s" % cluster.version},
                {"type": "RetrievedUpdates", "status": "True", "lastTransitionTime": ts},
            ],
        },
    })


def node_object(node, profile):
    cluster = profile.cluster
    labels = {
        "beta.kubernetes.io/arch": node.architecture,
        "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": node.architecture,
        "kubernetes.io/hostname": node.hostname,
        "kubernetes.io/os": "linux",
        "node.openshift.io/os_id": "rhcos",
    }
    for role in node.roles:
        labels["node-role.kubernetes.io/%s" % role] = ""
    labels.update(node.labels)
    pool = "master" if node.is_master else "worker"
    rendered = rendered_config(pool, profile)
    memory_kib = node.memory_gib * 1024 * 1024
    capacity = {"cpu": str(node.cpu), "memory": "%dKi" % memory_kib, "pods": "250", "ephemeral-storage": "936104940Ki",
                "hugepages-1Gi": "0", "hugepages-2Mi": "0"}
    allocatable = {"cpu": "%dm" % (node.cpu * 1000 - 500), "memory": "%dKi" % (memory_kib - 1024 * 1024), "pods": "250",
                   "ephemeral-storage": "862175228675", "hugepages-1Gi": "0", "hugepages-2Mi": "0"}
    ts = now()
    conditions = [
        {"type": t, "status": "False", "reason": "Kubelet" + r, "message": m, "lastHeartbeatTime": ts, "lastTransitionTime": ts}
        for t, r, m in (("MemoryPressure", "HasSufficientMemory", "kubelet has sufficient memory available"),
                        ("DiskPressure", "HasNoDiskPressure", "kubelet has no disk pressure"),
                        ("PIDPressure", "HasSufficientPID", "kubelet has sufficient PID available"))
    ]
    conditions.append({"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status",
                       "lastHeartbeatTime": ts, "lastTransitionTime": ts})
    return {
        "metadata": {
            "name": node.name,
            "labels": labels,
            "annotations": {
                "machineconfiguration.openshift.io/currentConfig": rendered,
                "machineconfiguration.openshift.io/desiredConfig": rendered,
                "machineconfiguration.openshift.io/state": "Done",
                "machineconfiguration.openshift.io/reason": "",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
        },
        "spec": {"providerID": "baremetalhost:///openshift-machine-api/%s/%s" % (node.name, _hash(node.name, n=8))},
        "status": {
            "addresses": [{"type": "InternalIP", "address": node.internal_ip}, {"type": "Hostname", "address": node.hostname}],
            "capacity": capacity,
            "allocatable": allocatable,
            "conditions": conditions,
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "architecture": node.architecture,
                "bootID": _uuid_like(node.name, "boot"),
                "containerRuntimeVersion": "cri-o://%s-3.rhaos%s.el9" % (cluster.crio_version, cluster.minor),
                "kernelVersion": node.kernel,
                "kubeProxyVersion": "",
                "kubeletVersion": "v%s" % cluster.kubernetes_version,
                "machineID": _hash(node.name, "machine"),
                "operatingSystem": "linux",
                "osImage": node.os_image,
                "systemUUID": _uuid_like(node.name, "system"),
            },
        },
    }


def _uuid_like(*parts):
    h = _hash(*parts)
    return "%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:32])


def label_selector_matches(selector, labels):
    """A metav1.LabelSelector (matchLabels and matchExpressions In, NotIn, Exists, DoesNotExist) against a label map,
    as LabelSelectorAsSelector builds it (kubernetes apimachinery pkg/apis/meta/v1/helpers.go). None or {} -> None:
    the caller decides what an empty selector means."""
    if not selector or not (selector.get("matchLabels") or selector.get("matchExpressions")):
        return None
    ops = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!exists"}
    reqs = [(key, "=", [str(value)]) for key, value in (selector.get("matchLabels") or {}).items()]
    reqs += [(expr.get("key"), ops.get(expr.get("operator")), [str(v) for v in expr.get("values") or []])
             for expr in selector.get("matchExpressions") or []]
    return labels_match(reqs, labels)


def node_pool(labels, pools=None):
    """The MachineConfigPool a node belongs to (its primary pool).

    With the pool objects (``pools``), as machine-config-operator pkg/helpers/helpers.go GetPoolsForNode/ListPools: the
    pools whose non-empty nodeSelector matches; one custom pool (any name but master and worker) wins over worker,
    master wins over a custom pool, two custom pools are an error (no pool). Without them, by the role labels:
    master wins for compact control-plane/worker nodes."""
    if pools is not None:
        matching = [p["metadata"]["name"] for p in pools
                    if label_selector_matches((p.get("spec") or {}).get("nodeSelector"), labels)]
        custom = [name for name in matching if name not in ("master", "worker")]
        if len(custom) > 1:
            return None
        if "master" in matching:
            return "master"
        if custom:
            return custom[0]
        return "worker" if "worker" in matching else None
    if "node-role.kubernetes.io/master" in labels or "node-role.kubernetes.io/control-plane" in labels:
        return "master"
    return "worker" if "node-role.kubernetes.io/worker" in labels else None


def pool_nodes(rt, pool):
    return [n for n in rt.list("", "nodes") if node_pool(n["metadata"].get("labels") or {}) == pool]


def seed_machine_config_pools(rt):
    t = rt.rtype("machineconfiguration.openshift.io", "machineconfigpools")
    if t is None:
        return
    for pool in ("master", "worker"):
        if rt.store.try_get(t, None, pool) is not None:
            continue
        count = len(pool_nodes(rt, pool))
        rendered = rendered_config(pool, rt.profile)
        ts = now()
        rt.store.create(t, {
            "metadata": {"name": pool, "labels": {"machineconfiguration.openshift.io/mco-built-in": "",
                                                  "pools.operator.machineconfiguration.openshift.io/%s" % pool: ""}},
            "spec": {
                "machineConfigSelector": {"matchLabels": {"machineconfiguration.openshift.io/role": pool}},
                "nodeSelector": {"matchLabels": {"node-role.kubernetes.io/%s" % pool: ""}},
                "paused": False,
                "maxUnavailable": 1,
                "configuration": {"name": rendered},
            },
            "status": {
                "configuration": {"name": rendered, "source": [
                    {"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfig", "name": "00-%s" % pool},
                    {"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfig",
                     "name": "01-%s-container-runtime" % pool},
                    {"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfig", "name": "01-%s-kubelet" % pool},
                ]},
                "machineCount": count, "readyMachineCount": count, "updatedMachineCount": count,
                "unavailableMachineCount": 0, "degradedMachineCount": 0, "observedGeneration": 1,
                "conditions": [
                    {"type": "Updated", "status": "True", "reason": "", "message": "All nodes are updated with %s" % rendered,
                     "lastTransitionTime": ts},
                    {"type": "Updating", "status": "False", "reason": "", "message": "", "lastTransitionTime": ts},
                    {"type": "Degraded", "status": "False", "reason": "", "message": "", "lastTransitionTime": ts},
                    {"type": "NodeDegraded", "status": "False", "reason": "", "message": "", "lastTransitionTime": ts},
                    {"type": "RenderDegraded", "status": "False", "reason": "", "message": "", "lastTransitionTime": ts},
                ],
            },
        })


def seed_operator_groups(rt):
    """OpenShift ships openshift-operators with an AllNamespaces OperatorGroup."""
    t = rt.rtype(OLM_GROUP, "operatorgroups")
    if t is None or rt.store.try_get(t, "openshift-operators", "global-operators") is not None:
        return
    rt.store.create(t, {"metadata": {"name": "global-operators", "namespace": "openshift-operators"},
                        "spec": {"upgradeStrategy": {"name": "Default"}},
                        "status": {"namespaces": [""], "lastUpdated": now()}})


def seed_catalog_sources(rt):
    t = rt.rtype(OLM_GROUP, "catalogsources")
    if t is None:
        return
    minor = rt.profile.cluster.minor
    for name, src in rt.catalog.sources.items():
        if name not in rt.catalog.seeded_sources or rt.store.try_get(t, "openshift-marketplace", name) is not None:
            continue
        state = rt.catalog.source_states.get(name, "READY")
        rt.store.create(t, {
            "metadata": {"name": name, "namespace": "openshift-marketplace",
                         "labels": {"olm.managed": "true", "operatorframework.io/managed-by": "marketplace-operator"}},
            "spec": {"sourceType": "grpc", "image": src["image"].format(minor=minor), "displayName": src["displayName"],
                     "publisher": src["publisher"], "priority": src["priority"],
                     "grpcPodConfig": {"securityContextConfig": "restricted"},
                     "updateStrategy": {"registryPoll": {"interval": "10m"}}},
            "status": catalog_source_status(name, state),
        })


def catalog_source_status(name, state):
    return {
        "connectionState": {"address": "%s.openshift-marketplace.svc:50051" % name, "lastConnect": now(),
                            "lastObservedState": state},
        "registryService": {"createdAt": now(), "port": "50051", "protocol": "grpc", "serviceName": name,
                            "serviceNamespace": "openshift-marketplace"},
    }


# Connection states in which a catalog still serves: READY, and IDLE (a gRPC connection with no traffic for a while).
# The package server keeps the packages it cached on every state but TRANSIENT_FAILURE and SHUTDOWN
# (operator-lifecycle-manager, pkg/package-server/provider/registry.go, "inert source state"), and OLM counts a catalog
# healthy when its registry server runs, whatever the gRPC state (catalog/subscription/reconciler.go healthy(),
# CheckRegistryServer).
SERVING_STATES = ("READY", "IDLE")


def source_state(rt, source, namespace="openshift-marketplace"):
    cs = rt.get(OLM_GROUP, "catalogsources", namespace, source)
    if cs is None:
        return None
    return ((cs.get("status") or {}).get("connectionState") or {}).get("lastObservedState")


def source_ready(rt, source, namespace="openshift-marketplace"):
    """Whether the catalog serves its packages (READY or IDLE)."""
    return source_state(rt, source, namespace) in SERVING_STATES


def install_modes_list(pkg):
    return [{"type": m, "supported": bool(ok)} for m, ok in pkg["installModes"].items()]


def package_manifest(rt, name, pkg, catalog):
    """The PackageManifest the package server makes of ``pkg`` as CatalogSource ``catalog`` serves it."""
    src = rt.catalog.sources.get(catalog) or {"displayName": catalog, "publisher": ""}
    channels = []
    for ch, entries in pkg["channels"].items():
        head = entries[-1]
        desc = {
            "displayName": pkg["displayName"],
            "version": csv_version(head),
            "provider": {"name": pkg["provider"]},
            "installModes": install_modes_list(pkg),
            "annotations": {"alm-examples": json.dumps(pkg["almExamples"]),
                            "operatorframework.io/suggested-namespace": pkg["suggestedNamespace"]},
            "customresourcedefinitions": {"owned": [
                {"name": "%s.%s" % (plural, group), "version": version, "kind": kind}
                for group, version, kind, plural in pkg["ownedCRDs"]]},
        }
        # The package server copies minKubeVersion and the related images of the head's CSV
        # (operator-lifecycle-manager, pkg/package-server/apis/operators/v1/packagemanifest.go CreateCSVDescription).
        bundle = rt.catalog.bundle(head)
        if bundle.get("minKubeVersion"):
            desc["minKubeVersion"] = bundle["minKubeVersion"]
        if bundle.get("relatedImages"):
            desc["relatedImages"] = sorted({i["image"] for i in bundle["relatedImages"]})
        channels.append({
            "name": ch,
            "currentCSV": head,
            "currentCSVDesc": desc,
            "entries": [{"name": e, "version": csv_version(e)} for e in reversed(entries)],
        })
    return {
        "metadata": {
            "name": name,
            "namespace": "openshift-marketplace",
            "labels": {"catalog": catalog, "catalog-namespace": "openshift-marketplace",
                       "provider": pkg["provider"], "provider-url": "", "operatorframework.io/arch.amd64": "supported",
                       "operatorframework.io/os.linux": "supported"},
        },
        "spec": {},
        "status": {
            "catalogSource": catalog,
            "catalogSourceDisplayName": src["displayName"],
            "catalogSourcePublisher": src["publisher"],
            "catalogSourceNamespace": "openshift-marketplace",
            "provider": {"name": pkg["provider"]},
            "packageName": name,
            "defaultChannel": pkg["defaultChannel"],
            "channels": channels,
        },
    }


def sync_package_manifests(rt):
    """PackageManifests exist for packages of serving CatalogSources only (SERVING_STATES), as the package server serves them:
    one per (package, catalog), so a package two catalogs hold is listed twice (types.PACKAGEMANIFEST_TYPE)."""
    t = rt.rtype(*PACKAGEMANIFEST)
    if t is None:
        return
    wanted = {(name, catalog) for name, pkg in rt.catalog.packages.items() for catalog in pkg["catalogs"] if source_ready(rt, catalog)}
    stored, _rv = rt.store.list(t, "openshift-marketplace")
    for existing in stored:
        key = (existing["metadata"]["name"], existing["status"]["catalogSource"])
        if key not in wanted:
            rt.store.delete(t, "openshift-marketplace", key[0], instance=key[1])
            continue
        wanted.discard(key)
        # The package server serves what the catalog holds now: a published bundle or a moved default
        # channel shows at once (operator-lifecycle-manager, pkg/package-server/provider/registry.go).
        fresh = package_manifest(rt, key[0], rt.catalog.package(key[0]), key[1])
        if existing.get("status") != fresh["status"]:
            rt.store.update(t, dict(existing, status=fresh["status"]))
    for name, catalog in sorted(wanted):
        rt.store.create(t, package_manifest(rt, name, rt.catalog.package(name), catalog))
