# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The operator catalogue: every operator the collection installs through OLM, as data, in install order.

Install (the olm_install role), the in-sync check (preflight), render.yml's OLM objects (render/olm.py), teardown and
diagnostics all read this one table. Each entry's <role>_<setting> variables (nfd_channel, ...) override its
defaults; ``gpudirect_extra_operators`` appends operators beyond these four (same keys). Standard library only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

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
# The per-operator variables (<role>_<setting>); empty values mean "the catalogue's default" or "OLM decides".
SETTINGS = ("namespace", "channel", "source", "source_namespace", "starting_csv", "subscription_config",
            "install_plan_approval", "wait_timeout", "failure_grace_period")
DEFAULTS = {"channel": "", "source": "", "source_namespace": "", "starting_csv": "", "subscription_config": {},
            "wait_timeout": 900, "failure_grace_period": 60}
ENTRY_KEYS = ("role", "title", "package", "namespace", "namespace_alias", "catalog_source", "install_plan_approval", "phase")
MARKETPLACE = "openshift-marketplace"

# The support table: per OpenShift minor version, the GPU and Network Operator versions the collection supports there
# (those Red Hat's catalog of that version holds: each bundle's com.redhat.openshift.versions label, see docs/support.md).
# Preflight refuses, before any write, an OpenShift version that is not a row and an operator version its row does not
# list, unless preflight_allow_unsupported_versions is true. NFD and the SR-IOV Network Operator ship with OpenShift
# itself (channel stable), so they are not columns. docs/support.md shows it; tests/integration/test_support_table.py
# checks that the two agree and that the simulator models every row.
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
        for key, valid in (("role", _ROLE.match), ("package", names.is_dns1123_label), ("namespace", names.is_dns1123_label)):
            if not valid(str(entry.get(key) or "")):
                raise ValueError("%s.%s: %r is missing or not a valid name" % (where, key, entry.get(key)))
        if any(known["role"] == entry["role"] or known["package"] == entry["package"] for known in result):
            raise ValueError("%s: role %s or package %s is in the catalogue already" % (where, entry["role"], entry["package"]))
        full = {"title": entry["package"], "namespace_alias": None, "catalog_source": "", "install_plan_approval": "Automatic",
                "phase": None}
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
            raise ValueError("%s_install_plan_approval: %r is not Automatic or Manual" % (role, operator["install_plan_approval"]))
        if not isinstance(operator["subscription_config"], dict):
            raise ValueError("%s_subscription_config: must be a mapping (the Subscription's spec.config)" % role)
        result.append(operator)
    return result
