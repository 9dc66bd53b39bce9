# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The operator catalogue: every operator the collection installs through OLM, as data, in install order.

Install (the olm_install role), the in-sync check (preflight), render.yml's OLM objects (render/olm.py), teardown and
diagnostics all read this one table. Each entry's <role>_<setting> variables (nfd_channel, ...) override its
defaults; ``gpudirect_extra_operators`` appends operators beyond these four (same keys). Standard library only.
"""


import re

from ansible_collections.gpudirect.openshift.plugins.module_utils import names

# role: the prefix of the entry's variables (and the per-operator role's name, where there is one);
# phase: the renderer's phase that holds the operator's own custom resource (None: the operator gets none);
# catalog_source: the CatalogSource that carries it (render.yml writes it; on a cluster an empty <role>_source lets
# the PackageManifest decide); namespace_alias: an older gpudirect_rdma_* variable that may also name the namespace;
# install_plan_approval: Manual for all four (issue 34): with Automatic, OLM installs every new CSV of the channel, and
# its operand images, without a run and without review; with Manual the collection approves only the InstallPlan that
# lists the wanted CSV (olm_install), so nothing newer runs until playbooks/upgrade.yml approves it.
OPERATORS = (
    {"role": "nfd", "title": "Node Feature Discovery", "package": "nfd", "namespace": "openshift-nfd",
     "namespace_alias": "gpudirect_rdma_nfd_namespace", "catalog_source": "redhat-operators",
     "install_plan_approval": "Manual", "phase": "nfd"},
    {"role": "sriov_network_operator", "title": "SR-IOV Network Operator", "package": "sriov-network-operator",
     "namespace": "openshift-sriov-network-operator", "namespace_alias": "gpudirect_rdma_sriov_operator_namespace",
     "catalog_source": "redhat-operators", "install_plan_approval": "Manual", "phase": "sriov_operator"},
    {"role": "nvidia_network_operator", "title": "NVIDIA Network Operator", "package": "nvidia-network-operator",
     "namespace": "nvidia-network-operator", "catalog_source": "certified-operators", "install_plan_approval": "Manual",
     "phase": "nic_cluster_policy"},
    # NVIDIA's OpenShift guide installs the GPU Operator with Manual approval.
    {"role": "nvidia_gpu_operator", "title": "NVIDIA GPU Operator", "package": "gpu-operator-certified",
     "namespace": "nvidia-gpu-operator", "catalog_source": "certified-operators", "install_plan_approval": "Manual",
     "phase": "gpu_cluster_policy"},
)
# The order the chapter needs, as dependencies: each step's custom resources are applied only once the steps named
# here are ready (their operator's CSV Succeeded and their own resource ready). OLM installs operators independently
# (one Subscription, InstallPlan and CSV each), so their Subscriptions are created together; only these edges order the
# rest (install_plan below; site.yml imports the roles in an order tests/unit/test_install_plan.py checks against it).
INSTALL_AFTER = {
    "nfd": (),
    "sriov_network_operator": (),
    # The NicClusterPolicy's driver and device plugin go to the nodes NFD labels pci-15b3
    # (render/nic_cluster_policy.py).
    "nvidia_network_operator": ("nfd",),
    # The ClusterPolicy's GPU nodes are NFD's pci-10de nodes; with driver.rdma.enabled the GPU driver pod waits in its
    # mofed-validation init container for the DOCA driver (NVIDIA/gpu-operator controllers/object_controls.go keeps that
    # init container only with driver.rdma.enabled), so nvidia-peermem loads only after the NicClusterPolicy is ready.
    "nvidia_gpu_operator": ("nfd", "nvidia_network_operator"),
    # SriovNetworkNodePolicies need the SR-IOV operator's CRDs and webhook; its config daemon runs only where the DOCA
    # driver is up (configDaemonNodeSelector), and the RDMA networks use the NicClusterPolicy's device plugins. The
    # chapter creates them after the ClusterPolicy is ready: a policy's drain and reboot would restart a GPU driver
    # build.
    "rdma": ("sriov_network_operator", "nvidia_network_operator", "nvidia_gpu_operator"),
}
INSTALL_ORDERS = ("overlapped", "sequential")
# The per-operator variables (<role>_<setting>); empty values mean "the catalogue's default" or "OLM decides".
SETTINGS = ("namespace", "channel", "source", "source_namespace", "starting_csv", "subscription_config",
            "install_plan_approval", "wait_timeout", "failure_grace_period")
DEFAULTS = {"channel": "", "source": "", "source_namespace": "", "starting_csv": "", "subscription_config": {},
            "wait_timeout": 900, "failure_grace_period": 60}
ENTRY_KEYS = ("role", "title", "package", "namespace", "namespace_alias", "catalog_source", "install_plan_approval",
              "phase")
MARKETPLACE = "openshift-marketplace"

# The support table: per OpenShift minor version, the GPU and Network Operator versions the collection supports there
# (those Red Hat's catalog of that version holds: each bundle's com.redhat.openshift.versions label, see
# docs/support.md). Preflight refuses, before any write, an OpenShift version that is not a row and an operator version
# its row does not list, unless preflight_allow_unsupported_versions is true. NFD and the SR-IOV Network Operator ship
# with OpenShift itself (channel stable), so they are not columns. docs/support.md shows it;
# tests/integration/test_support_table.py checks that the two agree and that the simulator models every row.
SUPPORT_TABLE = {
    "4.16": {
        "gpu-operator-certified": ["v24.9.0", "v24.9.2", "v25.3.0", "v25.3.1", "v25.3.4"],
        "nvidia-network-operator": ["v25.1.0", "v25.4.0"],
    },
    "4.17": {
        "gpu-operator-certified": ["v24.9.0", "v24.9.2", "v25.3.0", "v25.3.1", "v25.3.4"],
        "nvidia-network-operator": ["v25.1.0", "v25.4.0", "v26.4.1"],
    },
    "4.18": {
        "gpu-operator-certified": ["v25.3.0", "v25.3.1", "v25.3.4", "v26.7.0"],
        "nvidia-network-operator": ["v25.4.0", "v26.4.1"],
    },
    "4.19": {
        "gpu-operator-certified": ["v25.3.4", "v26.7.0"],
        "nvidia-network-operator": ["v26.4.1"],
    },
    "4.20": {
        "gpu-operator-certified": ["v26.7.0"],
        "nvidia-network-operator": ["v26.4.1"],
    },
}

_ROLE = re.compile(r"^[a-z][a-z0-9_]{0,62}\Z")


def entries(extra=None):
    """The catalogue's entries followed by the valid ``extra`` ones; raises ValueError naming the bad key."""
    result = [dict(entry) for entry in OPERATORS]
    for index, entry in enumerate(extra or []):
        where = "gpudirect_extra_operators[%d]" % index
        if not isinstance(entry, dict):
            raise ValueError("%s: must be a mapping with role, package and namespace" % where)
        unknown = sorted(set(entry) - set(ENTRY_KEYS))
        if unknown:
            raise ValueError("%s: unknown key(s) %s (known: %s)" % (where, ", ".join(unknown), ", ".join(ENTRY_KEYS)))
        for key, valid in (("role", _ROLE.match), ("package", names.is_dns1123_label),
                           ("namespace", names.is_dns1123_label)):
            if not valid(str(entry.get(key) or "")):
                raise ValueError("%s.%s: %r is missing or not a valid name" % (where, key, entry.get(key)))
        if any(known["role"] == entry["role"] or known["package"] == entry["package"] for known in result):
            raise ValueError(
                "%s: role %s or package %s is in the catalogue already" % (where, entry["role"], entry["package"]))
        full = {"title": entry["package"], "namespace_alias": None, "catalog_source": "",
                "install_plan_approval": "Automatic", "phase": None}
        full.update(entry)
        result.append(full)
    return result


def variable_names(extra=None):
    """Every <role>_<setting> variable name of the catalogue (and the extra entries), plus the namespace aliases."""
    names = []
    for entry in entries(extra):
        names.extend("%s_%s" % (entry["role"], setting) for setting in SETTINGS)
        if entry.get("namespace_alias"):
            names.append(entry["namespace_alias"])
    return names


def variable_pattern(extra=None):
    """A regular expression for ansible.builtin.varnames that matches exactly variable_names()."""
    return "^(%s)$" % "|".join(re.escape(name) for name in variable_names(extra))


def resolve(variables, extra=None):
    """Each operator with its settings filled from ``variables`` ({"nfd_channel": "stable", ...}; missing or empty
    values take the catalogue's defaults). Raises ValueError naming the variable and its fix."""
    variables = variables or {}
    result = []
    for entry in entries(extra):
        role = entry["role"]

        def given(setting, role=role):
            value = variables.get("%s_%s" % (role, setting))
            return None if value in (None, "") else value

        operator = dict(entry)
        for setting in SETTINGS:
            value = given(setting)
            if setting == "namespace" and value is None and entry.get("namespace_alias"):
                value = variables.get(entry["namespace_alias"]) or None
            if value is None:
                value = entry[setting] if setting in entry else DEFAULTS.get(setting, "")
            operator[setting] = value
        if not names.is_dns1123_label(str(operator["namespace"])):
            raise ValueError("%s_namespace: %r is not a valid namespace name (lower-case letters, digits and '-')"
                             % (role, operator["namespace"]))
        if operator["install_plan_approval"] not in ("Automatic", "Manual"):
            raise ValueError(
                "%s_install_plan_approval: %r is not Automatic or Manual" % (role, operator["install_plan_approval"]))
        if not isinstance(operator["subscription_config"], dict):
            raise ValueError("%s_subscription_config: must be a mapping (the Subscription's spec.config)" % role)
        result.append(operator)
    return result


def install_plan(roles, after=None, order="overlapped", operators=None):
    """The install plan of ``roles`` (site.yml's steps, in the order they are listed) under the dependencies ``after``
    (role -> roles that must be ready first; INSTALL_AFTER by default; a role it does not name depends on nothing).

    Returns {"order": the roles, each after every role it depends on, ties kept in the listed order;
    "subscribe_together": the roles whose Subscriptions are created in one pass before any wait (every role of
    ``operators``, the OLM operators among the roles, default all, when ``order`` is "overlapped"; none when
    "sequential": each operator is then subscribed when its turn comes);
    "after": each role's dependencies}. Raises ValueError for an unknown order, a dependency on a role that is not
    listed, or a cycle (naming the roles in it).
    """
    if order not in INSTALL_ORDERS:
        raise ValueError("gpudirect_install_order: %r is not one of %s" % (order, ", ".join(INSTALL_ORDERS)))
    roles = list(roles)
    after = INSTALL_AFTER if after is None else after
    edges = {role: tuple(after.get(role) or ()) for role in roles}
    for role, needs in edges.items():
        unknown = [need for need in needs if need not in edges]
        if unknown:
            raise ValueError("install order: %s comes after %s, which is not installed" % (role, ", ".join(unknown)))
    placed, ordered = set(), []
    while len(ordered) < len(roles):
        ready = next((role for role in roles if role not in placed and all(need in placed for need in edges[role])),
                     None)
        if ready is None:
            stuck = [role for role in roles if role not in placed]
            raise ValueError("install order: a cycle among %s (each waits for another of them); remove one of their "
                             "dependencies" % ", ".join(_cycle(stuck, edges)))
        placed.add(ready)
        ordered.append(ready)
    operators = roles if operators is None else [role for role in ordered if role in operators]
    return {"order": ordered, "subscribe_together": list(operators) if order == "overlapped" else [],
            "after": {role: list(needs) for role, needs in edges.items()}}


def _cycle(stuck, edges):
    """One cycle among the ``stuck`` roles (every one of them waits on another stuck role), in dependency order."""
    path, role = [], stuck[0]
    while role not in path:
        path.append(role)
        role = next(need for need in edges[role] if need in stuck)
    return path[path.index(role):] + [role]


def subscribe_together(operators, order="overlapped"):
    """The operators (resolve()'s mappings) whose Subscriptions site.yml creates in one pass before any wait, in
    install order: the catalogue's and the extra ones under ``order`` "overlapped", none under "sequential". The
    steps of INSTALL_AFTER that are no operator (rdma) take part in the ordering only."""
    roles = [operator["role"] for operator in operators]
    steps = roles + [step for step in INSTALL_AFTER if step not in roles]
    plan = install_plan(steps, order=order, operators=roles)
    by_role = {operator["role"]: operator for operator in operators}
    return [by_role[role] for role in plan["subscribe_together"]]
