# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The OLM objects of the four operators (Namespace, OperatorGroup, Subscription) for render-only use.

site.yml creates them through the olm_operator module, which reads the catalog on the cluster (default channel,
install modes). Rendering contacts no cluster, so it takes what the chapter's install steps state (sections
2.0.1-2.0.4): every operator in its own namespace with an OperatorGroup targeting that namespace (the Network
Operator's CSV supports only OwnNamespace/SingleNamespace), from redhat-operators (NFD, SR-IOV) or
certified-operators (NVIDIA). A Subscription without a channel follows the package's default channel, as OLM
resolves it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.openshift.plugins.module_utils.render import model as input_model
from ansible_collections.gpudirect.openshift.plugins.module_utils.render import names

# Install order; "role" is the role whose <role>_* variables set the Subscription, "namespace_field" the input-model
# field that names the namespace where the model has one.
OPERATORS = (
    {"package": "nfd", "role": "nfd", "namespace": "openshift-nfd", "namespace_field": "nfd_namespace",
     "source": "redhat-operators", "approval": "Automatic"},
    {"package": "sriov-network-operator", "role": "sriov_network_operator", "namespace": "openshift-sriov-network-operator",
     "namespace_field": "sriov_operator_namespace", "source": "redhat-operators", "approval": "Automatic"},
    {"package": "nvidia-network-operator", "role": "nvidia_network_operator", "namespace": "nvidia-network-operator",
     "source": "certified-operators", "approval": "Automatic"},
    # NVIDIA's OpenShift guide installs the GPU Operator with Manual approval; the role does too.
    {"package": "gpu-operator-certified", "role": "nvidia_gpu_operator", "namespace": "nvidia-gpu-operator",
     "source": "certified-operators", "approval": "Manual"},
)
SETTINGS = ("namespace", "channel", "source", "source_namespace", "install_plan_approval", "starting_csv", "subscription_config")
MARKETPLACE = "openshift-marketplace"


def settings_names():
    """Every <role>_<setting> variable name the OLM objects read."""
    return ["%s_%s" % (entry["role"], setting) for entry in OPERATORS for setting in SETTINGS]


def olm_manifests(variables, settings):
    """(entries, errors): [{"order", "file", "manifest"}] of Namespace, OperatorGroup and Subscription per operator, in
    install order (file names 001-... sort before every other rendered object), from the role variables in
    ``settings`` ({"nfd_channel": "stable", ...}; empty values mean the default). ``variables`` are the
    gpudirect_rdma_* variables, which name the NFD and SR-IOV namespaces."""
    model, _provided, _errors = input_model.normalise(variables)
    settings = settings or {}
    errors = []
    unknown = sorted(set(settings) - set(settings_names()))
    if unknown:
        errors.append("operators: unknown setting %s (known: <role>_%s)" % (", ".join(unknown), ", <role>_".join(SETTINGS)))
    entries = []
    for entry in OPERATORS:
        role = entry["role"]

        def value(setting, default, role=role):
            given = settings.get("%s_%s" % (role, setting))
            return str(given).strip() if given not in (None, "") else default

        default_namespace = model.get(entry.get("namespace_field") or "", None) or entry["namespace"]
        namespace = value("namespace", default_namespace)
        approval = value("install_plan_approval", entry["approval"])
        for setting, text, valid, what in (("namespace", namespace, names.is_dns1123_label, "namespace"),
                                           ("source", value("source", entry["source"]), names.is_dns1123_subdomain, "CatalogSource"),
                                           ("source_namespace", value("source_namespace", MARKETPLACE), names.is_dns1123_label, "namespace")):
            if not valid(text):
                errors.append("%s_%s: %r is not a valid %s name" % (role, setting, text, what))
        if approval not in ("Automatic", "Manual"):
            errors.append("%s_install_plan_approval: %r is not Automatic or Manual" % (role, approval))
        labels = {names.MANAGED_BY_LABEL: names.MANAGED_BY_VALUE}
        subscription = {"name": entry["package"], "source": value("source", entry["source"]),
                        "sourceNamespace": value("source_namespace", MARKETPLACE), "installPlanApproval": approval}
        if value("channel", None):
            subscription["channel"] = value("channel", None)
        if value("starting_csv", None):
            subscription["startingCSV"] = value("starting_csv", None)
        config = settings.get("%s_subscription_config" % role)
        if config:
            if isinstance(config, dict):
                subscription["config"] = dict(config)
            else:
                errors.append("%s_subscription_config: must be a mapping (Subscription spec.config)" % role)
        for manifest in (
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace, "labels": dict(labels)}},
                # Named after the namespace, as the olm_operator module names the OperatorGroup it creates.
                {"apiVersion": "operators.coreos.com/v1", "kind": "OperatorGroup",
                 "metadata": {"name": namespace, "namespace": namespace, "labels": dict(labels)},
                 "spec": {"targetNamespaces": [namespace]}},
                {"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
                 "metadata": {"name": entry["package"], "namespace": namespace, "labels": dict(labels)},
                 "spec": subscription}):
            order = len(entries) + 1
            entries.append({"order": order, "manifest": manifest,
                            "file": "%03d-%s-%s.yaml" % (order, manifest["kind"].lower(), manifest["metadata"]["name"])})
    return (entries if not errors else []), errors
