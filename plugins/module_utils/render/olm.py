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


from ansible_collections.gpudirect.openshift.plugins.module_utils import catalogue
from ansible_collections.gpudirect.openshift.plugins.module_utils import names


def olm_manifests(variables, operators=None):
    """(entries, errors): [{"order", "file", "manifest"}] of Namespace, OperatorGroup and Subscription per operator, in
    install order, numbered in one block per operator (names.olm_order: 0010-0012 the first, 0020-0022 the second ...,
    so that another operator renames no file; the names sort before every other rendered object). ``operators`` are the
    operator catalogue's entries with their settings (the gpudirect.openshift.operators lookup); None takes the
    catalogue's defaults, with the NFD and SR-IOV namespaces the gpudirect_rdma_* ``variables`` may name."""
    if operators is None:
        try:
            operators = catalogue.resolve({entry["namespace_alias"]: (variables or {}).get(entry["namespace_alias"])
                                           for entry in catalogue.OPERATORS if entry.get("namespace_alias")})
        except ValueError as exc:
            return [], [str(exc)]
    errors = []
    entries = []
    for index, entry in enumerate(operators):
        role = entry.get("role") or entry.get("package")

        def value(setting, default, entry=entry):
            given = entry.get(setting)
            return str(given).strip() if given not in (None, "") else default

        namespace = value("namespace", None)
        approval = value("install_plan_approval", "Automatic")
        for setting, text, valid, what in (("namespace", namespace, names.is_dns1123_label, "namespace"),
                                           ("source", value("source", entry.get("catalog_source")),
                                            names.is_dns1123_subdomain, "CatalogSource"),
                                           ("source_namespace", value("source_namespace", catalogue.MARKETPLACE),
                                            names.is_dns1123_label, "namespace")):
            if not valid(text):
                errors.append("%s_%s: %r is not a valid %s name" % (role, setting, text, what))
        if approval not in ("Automatic", "Manual"):
            errors.append("%s_install_plan_approval: %r is not Automatic or Manual" % (role, approval))
        labels = {names.MANAGED_BY_LABEL: names.MANAGED_BY_VALUE}
        subscription = {"name": entry["package"], "source": value("source", entry.get("catalog_source")),
                        "sourceNamespace": value("source_namespace", catalogue.MARKETPLACE),
                        "installPlanApproval": approval}
        if value("channel", None):
            subscription["channel"] = value("channel", None)
        if value("starting_csv", None):
            subscription["startingCSV"] = value("starting_csv", None)
        config = entry.get("subscription_config")
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
            order = names.olm_order(index, names.OLM_POSITIONS[manifest["kind"]])
            entries.append({"order": order, "manifest": manifest, "file": names.numbered_file_name(order, manifest)})
    return (entries if not errors else []), errors
