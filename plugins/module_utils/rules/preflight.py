# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Preflight rules: is the cluster ready for the collection, before any write.

Each rule is a pure function of pieces of the snapshot plan_status returns (``cluster``, ``catalog_sources``,
``package_manifests``, ``operator_package_manifests``, ``operator_groups``, ``subscriptions``,
``nic_cluster_policies``, ``node_groups``, ``machine_config_pools``, ``operator_problems``), the plan (the
gpudirect_manifests summary and memlock pool) and the settings (the operators, their roles, the support table), and
returns a list of sentences, each naming what is wrong and the fix. ``problems()`` runs them all in the order the
preflight role has always listed them.
"""


import re

from ansible.module_utils.compat.version import LooseVersion

from ansible_collections.gpudirect.openshift.plugins.module_utils.rules import unique as _unique
from ansible_collections.gpudirect.openshift.plugins.module_utils import catalogue
from ansible_collections.gpudirect.openshift.plugins.module_utils.render.groups import node_group_problems
from ansible_collections.gpudirect.openshift.plugins.module_utils.names import NIC_CLUSTER_POLICY_NAME
from ansible_collections.gpudirect.openshift.plugins.module_utils.render.reported import reported_nic_problems

MARKETPLACE = catalogue.MARKETPLACE
# A gRPC catalog connection goes IDLE when unused and still serves (operator-lifecycle-manager: the package server
# keeps its cache, OLM checks the registry server's health); only the catalogs the operators use are checked.
SERVING_STATES = ("READY", "IDLE")
_MINOR = re.compile(r"^v?(\d+\.\d+).*$")
_CSV_VERSION = re.compile(r"\.(v?\d+\.\d+\.\d+)$")


def _get(obj, *path):
    """obj[path[0]][path[1]]..., None where any step is missing."""
    for key in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def _catalog_state(catalog):
    return _get(catalog, "status", "connectionState", "lastObservedState")


def openshift_version(cluster):
    """The ClusterVersion's version, '' when the cluster has none."""
    return _get(cluster, "openshift", "version") or ""


def openshift_minor(version):
    """4.18 of 4.18.3 (a version that does not parse is kept whole)."""
    return _MINOR.sub(r"\1", version)


def support_row(cluster, support_table):
    """The support table's row of the cluster's OpenShift minor version, None when it has none."""
    version = openshift_version(cluster)
    return support_table.get(openshift_minor(version)) if version else None


def openshift_version_problems(cluster, support_table, allow_unsupported=False):
    """A cluster without ClusterVersion is not OpenShift; an OpenShift version the support table lacks is refused
    unless preflight_allow_unsupported_versions."""
    version = openshift_version(cluster)
    if not version:
        return ['The cluster has no ClusterVersion "version": this does not look like OpenShift.']
    if support_row(cluster, support_table) is None and not allow_unsupported:
        return ["OpenShift %s is not in the support table (OpenShift %s, docs/support.md). Use a supported OpenShift "
                "version, or set preflight_allow_unsupported_versions: true to run on it untested."
                % (version, ", ".join(support_table))]
    return []


def worker_node_problems(cluster):
    """The operands run on worker nodes: a cluster needs at least one."""
    if (_get(cluster, "summary") or {}).get("worker_nodes", 0) == 0:
        return ["The cluster has no worker nodes."]
    return []


def missing_package_problems(operator, package_manifests, catalog_sources):
    """A package no catalog lists, and which catalogs do not serve now (their packages are hidden)."""
    if any(_get(p, "metadata", "name") == operator["package"] for p in package_manifests):
        return []
    hidden = ["%s (%s)" % (_get(c, "metadata", "name"),
                           _catalog_state(c) if _catalog_state(c) is not None else "no state")
              for c in catalog_sources if (_catalog_state(c) or "") not in SERVING_STATES]
    return ["Package %s is not in any catalog in openshift-marketplace (oc get packagemanifests -n "
            "openshift-marketplace).%s"
            % (operator["package"], (" CatalogSource(s) %s do not serve now, so their packages are hidden; OLM cannot "
                                     "resolve from them either." % ", ".join(hidden)) if hidden else "")]


def catalog_source_problems(operator, package, catalog_sources):
    """The CatalogSource the package comes from must exist and serve (only those of openshift-marketplace are read)."""
    if (_get(package, "status", "catalogSourceNamespace") or MARKETPLACE) != MARKETPLACE:
        return []
    source = _get(package, "status", "catalogSource")
    catalog = next((c for c in catalog_sources if _get(c, "metadata", "name") == source), None)
    if catalog is None:
        return ["CatalogSource %s (for package %s) does not exist in openshift-marketplace."
                % (source, operator["package"])]
    state = _catalog_state(catalog)
    if (state or "") not in SERVING_STATES:
        return ["CatalogSource %s (for package %s) is %s, not READY or IDLE: OLM cannot resolve from it."
                % (source, operator["package"], state if state is not None else "not reporting a state")]
    return []


def _catalog_of(cluster):
    return ("the catalog of this OpenShift %s cluster (Red Hat builds one index per OpenShift version, with the "
            "bundles labelled for it; docs/support.md lists what each version has)"
            % (openshift_version(cluster) or "?"))


def _channels(package):
    return _get(package, "status", "channels") or []


def channel_problems(operator, package, cluster):
    """The channel the role sets must be one of the package's in this cluster's catalog."""
    channels = [c.get("name") for c in _channels(package)]
    if operator.get("channel") and operator["channel"] not in channels:
        return ["Channel %s of package %s is not in %s; available: %s. Set the role's channel to one of them."
                % (operator["channel"], operator["package"], _catalog_of(cluster), ", ".join(channels))]
    return []


def starting_csv_problems(operator, package, cluster):
    """The starting_csv the role pins must be an entry of one of the package's channels."""
    entries = _unique(e for c in _channels(package) for e in (c.get("entries") or []))
    if operator.get("starting_csv") and entries and operator["starting_csv"] not in entries:
        return ["CSV %s (starting_csv of %s) is not in %s; channel heads: %s."
                % (operator["starting_csv"], operator["package"], _catalog_of(cluster),
                   ", ".join(_unique(c.get("currentCSV") for c in _channels(package))))]
    return []


def wanted_channel(operator, package):
    """The channel a Subscription gets: the role's, else the package's default; {} when the package has no such."""
    name = operator.get("channel") or _get(package, "status", "defaultChannel")
    return next((c for c in _channels(package) if c.get("name") == name), {})


def operator_support_problems(operator, package, cluster, support_table, operator_roles, allow_unsupported=False):
    """The operator version (the pinned CSV's, else the channel head's) must be one the support table lists for this
    OpenShift minor version (packages without a column, NFD and SR-IOV, are not checked)."""
    supported = support_row(cluster, support_table)
    if allow_unsupported or supported is None or operator["package"] not in supported:
        return []
    wanted = wanted_channel(operator, package)
    match = _CSV_VERSION.search(operator.get("starting_csv") or wanted.get("currentCSV") or "")
    version = match.group(1) if match else ""
    if not version or "v" + re.sub(r"^v", "", version) in supported[operator["package"]]:
        return []
    role = operator_roles.get(operator["package"], operator["package"])
    return ["%s %s (%s) is not supported on OpenShift %s: the support table (docs/support.md) lists %s. Set %s_channel "
            "or %s_starting_csv to one of them, or preflight_allow_unsupported_versions: true to install it untested."
            % (operator["package"], version,
               "starting_csv" if operator.get("starting_csv") else "head of channel %s" % wanted.get("name", "?"),
               openshift_minor(openshift_version(cluster)), ", ".join(supported[operator["package"]]), role, role)]


def min_kube_version_problems(operator, package, cluster):
    """A CSV whose minKubeVersion is above the cluster's Kubernetes stays Pending (RequirementsNotMet)."""
    wanted = wanted_channel(operator, package)
    kube = re.sub(r"[-+].*$", "", re.sub(r"^v", "", _get(cluster, "kubernetes", "version") or ""))
    needed = wanted.get("minKubeVersion")
    if not needed or not kube or LooseVersion(kube) >= LooseVersion(re.sub(r"^v", "", needed)):
        return []
    return ["%s (channel %s of %s) needs Kubernetes %s (CSV minKubeVersion); this cluster runs %s, so OLM would leave "
            "it Pending (RequirementsNotMet). Choose an older channel or upgrade OpenShift."
            % (wanted.get("currentCSV"), wanted.get("name"), operator["package"], needed, kube)]


def operator_group_problems(operator, operator_groups):
    """OLM needs exactly one OperatorGroup in the operator's namespace, targeting that namespace (OwnNamespace)."""
    namespace = operator["namespace"]
    here = [g for g in operator_groups if _get(g, "metadata", "namespace") == namespace]
    problems = []
    if len(here) > 1:
        problems.append("Namespace %s has %d OperatorGroups (%s); OLM needs exactly one."
                        % (namespace, len(here), ", ".join(_get(g, "metadata", "name") for g in here)))
    for group in here:
        targets = _get(group, "spec", "targetNamespaces") or []
        if targets != [namespace]:
            problems.append("OperatorGroup %s/%s targets %s, but %s needs OwnNamespace (%s)."
                            % (namespace, _get(group, "metadata", "name"), ", ".join(targets) or "all namespaces",
                               operator["package"], namespace))
    return problems


def duplicate_subscription_problems(operator, subscriptions):
    """A package subscribed in another namespace would be installed twice."""
    return ["Package %s is already subscribed in namespace %s (Subscription %s); expected namespace %s."
            % (operator["package"], _get(s, "metadata", "namespace"), _get(s, "metadata", "name"),
               operator["namespace"])
            for s in subscriptions
            if _get(s, "spec", "name") == operator["package"]
            and _get(s, "metadata", "namespace") != operator["namespace"]]


def each_operator_problems(operators, snapshot, support_table, operator_roles, allow_unsupported=False):
    """Every operator's rules, operator by operator. The package entry is the one of the operator's catalog source
    (plan_status operator_package_manifests, in the order of the operators); without that list, the first listed."""
    cluster = snapshot.get("cluster") or {}
    packages = snapshot.get("package_manifests") or []
    catalogs = snapshot.get("catalog_sources") or []
    chosen = snapshot.get("operator_package_manifests") or []
    problems = []
    for index, operator in enumerate(operators):
        listed = [p for p in packages if _get(p, "metadata", "name") == operator["package"]]
        if chosen:
            package = chosen[index] if index < len(chosen) else None
        else:
            package = listed[0] if listed else None
        if not listed:
            problems += missing_package_problems(operator, packages, catalogs)
        elif package:
            problems += catalog_source_problems(operator, package, catalogs)
            problems += channel_problems(operator, package, cluster)
            problems += starting_csv_problems(operator, package, cluster)
            problems += operator_support_problems(operator, package, cluster, support_table, operator_roles,
                                                  allow_unsupported)
            problems += min_kube_version_problems(operator, package, cluster)
        problems += operator_group_problems(operator, snapshot.get("operator_groups") or [])
        problems += duplicate_subscription_problems(operator, snapshot.get("subscriptions") or [])
    return problems


def installer_problems(snapshot):
    """The checks the installer of olm_operator makes before it writes (plan_status operator_problems), as they are."""
    return list(snapshot.get("operator_problems") or [])


def nic_cluster_policy_problems(nic_cluster_policies):
    """A NicClusterPolicy of another name is ignored by the operator, and the user believes it applies."""
    return ["NicClusterPolicy %s exists; the NVIDIA Network Operator only acts on one named nic-cluster-policy. Delete "
            "or rename it." % _get(p, "metadata", "name")
            for p in nic_cluster_policies if _get(p, "metadata", "name") != NIC_CLUSTER_POLICY_NAME]


def num_vfs_count(num_vfs):
    """gpudirect_rdma_num_vfs as a count, None when unset; ValueError when it is not a count."""
    if num_vfs in (None, ""):
        return None
    if not str(num_vfs).isdigit():
        raise ValueError("gpudirect_rdma_num_vfs must be a count, got %r" % (num_vfs,))
    return int(num_vfs)


def reported_nic_variable_problems(plan_summary, cluster, num_vfs=None):
    """The NIC variables against what the SR-IOV config daemons report, when the operator already runs (the rdma role
    checks again once they have reported, before it writes a policy)."""
    reported = [{"node": r.get("node"), "interfaces": r.get("interfaces")}
                for r in (cluster or {}).get("sriov_reports") or []]
    return reported_nic_problems(plan_summary or {}, reported, num_vfs_count(num_vfs))["errors"]


def node_group_selection_problems(plan_summary, node_groups):
    """Each node group must select nodes, and no node two groups (render/groups.py node_group_problems)."""
    return node_group_problems(plan_summary or {}, node_groups or [])


def memlock_pool_problems(memlock_pool, cluster, machine_config_pools):
    """The memlock MachineConfig of a custom pool: the pool must exist and select nodes (machine-config-operator
    docs/custom-pools.md: a node joins a custom pool by its node-role.kubernetes.io/<pool> label). Known from the
    variables alone, so also checked with NIC selection auto before the facts."""
    if not memlock_pool:
        return []
    fix = ("label the RDMA nodes (oc label node <node> node-role.kubernetes.io/%s=) and create the pool (oc apply -f "
           "deploy/machineconfigpool-gpudirect-rdma.yml, with its name and role changed if you chose another), or set "
           "gpudirect_rdma_memlock_pool: worker to raise memlock on every node of the worker pool." % memlock_pool)
    problems = []
    if ((_get(cluster, "summary", "role_counts") or {}).get(memlock_pool) or 0) == 0:
        problems.append("gpudirect_rdma_memlock_pool: no node carries node-role.kubernetes.io/%s, so the CRI-O memlock "
                        "MachineConfig would reach no node; %s" % (memlock_pool, fix))
    if memlock_pool not in (machine_config_pools or []):
        problems.append("gpudirect_rdma_memlock_pool: MachineConfigPool %s does not exist, so no node would get the "
                        "CRI-O memlock MachineConfig; %s" % (memlock_pool, fix))
    return problems


def problems(snapshot, plan, settings):
    """Every preflight problem, in order: the cluster, each operator, the OLM checks of the installer
    (``operator_problems``), foreign NicClusterPolicies, the NIC variables, the node groups, the memlock pool.

    snapshot: plan_status's lists (see the module docstring). plan: ``summary`` (gpudirect_manifests summary) and
    ``memlock_pool``. settings: ``operators``, ``operator_roles``, ``support_table`` (default: the catalogue's),
    ``allow_unsupported_versions``, ``num_vfs``."""
    cluster = snapshot.get("cluster") or {}
    support_table = settings.get("support_table") or catalogue.SUPPORT_TABLE
    allow = bool(settings.get("allow_unsupported_versions"))
    summary = plan.get("summary") or {}
    found = openshift_version_problems(cluster, support_table, allow)
    found += worker_node_problems(cluster)
    found += each_operator_problems(settings.get("operators") or [], snapshot, support_table,
                                    settings.get("operator_roles") or {}, allow)
    found += installer_problems(snapshot)
    found += nic_cluster_policy_problems(snapshot.get("nic_cluster_policies") or [])
    found += reported_nic_variable_problems(summary, cluster, settings.get("num_vfs"))
    found += node_group_selection_problems(summary, snapshot.get("node_groups"))
    found += memlock_pool_problems(plan.get("memlock_pool"), cluster, snapshot.get("machine_config_pools"))
    return found
