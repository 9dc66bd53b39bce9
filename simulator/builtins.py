"""Built-in kinds the simulated server registers itself (core, apps, rbac, apiextensions, security) and the objects
every OpenShift cluster starts with (namespaces, stock SCCs and the RBAC that grants their use)."""

import os

import yaml

from .store import ResourceType

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
READ_VERBS = ("get", "list", "watch")


# The "all" category (what `kubectl get all` lists): the kinds whose REST storage says so
# (pkg/registry/core/pod/storage/storage.go, core/service/storage, apps/daemonset/storage,
# apps/deployment/storage: Categories() returns []string{"all"}).
ALL = ("all",)


def _t(group, version, kind, plural, namespaced, singular, short=(), sub=(), verbs=ALL_VERBS, categories=()):
    return ResourceType(group=group, version=version, kind=kind, plural=plural, namespaced=namespaced,
                        singular=singular, short_names=tuple(short), subresources=tuple(sub), verbs=verbs,
                        builtin=True, categories=tuple(categories))


BUILTIN_TYPES = (
    _t("", "v1", "Namespace", "namespaces", False, "namespace", ("ns",), ("status",),
       ("create", "delete", "get", "list", "patch", "update", "watch")),
    _t("", "v1", "Node", "nodes", False, "node", ("no",), ("status",)),
    _t("", "v1", "Pod", "pods", True, "pod", ("po",), ("log", "status"), categories=ALL),
    _t("", "v1", "ConfigMap", "configmaps", True, "configmap", ("cm",)),
    _t("", "v1", "Secret", "secrets", True, "secret"),
    _t("", "v1", "ServiceAccount", "serviceaccounts", True, "serviceaccount", ("sa",)),
    _t("", "v1", "Event", "events", True, "event", ("ev",)),
    _t("", "v1", "Service", "services", True, "service", ("svc",), ("status",), categories=ALL),
    _t("apps", "v1", "DaemonSet", "daemonsets", True, "daemonset", ("ds",), ("status",), categories=ALL),
    _t("apps", "v1", "Deployment", "deployments", True, "deployment", ("deploy",), ("status",), categories=ALL),
    _t("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions", False,
       "customresourcedefinition", ("crd", "crds"), ("status",), READ_VERBS + ("delete",)),
    _t("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", False, "clusterrole"),
    _t("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings", False, "clusterrolebinding"),
    _t("rbac.authorization.k8s.io", "v1", "Role", "roles", True, "role"),
    _t("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", True, "rolebinding"),
    # A CRD in OpenShift (openshift/api security/v1), present from the first boot.
    _t("security.openshift.io", "v1", "SecurityContextConstraints", "securitycontextconstraints", False,
       "securitycontextconstraints", ("scc",)),
    # Create-only reviews, answered and never stored (authorization.py).
    _t("authorization.k8s.io", "v1", "LocalSubjectAccessReview", "localsubjectaccessreviews", True,
       "localsubjectaccessreview", verbs=("create",)),
    _t("authorization.k8s.io", "v1", "SelfSubjectAccessReview", "selfsubjectaccessreviews", False,
       "selfsubjectaccessreview", verbs=("create",)),
    _t("authorization.k8s.io", "v1", "SelfSubjectRulesReview", "selfsubjectrulesreviews", False,
       "selfsubjectrulesreview", verbs=("create",)),
    _t("authorization.k8s.io", "v1", "SubjectAccessReview", "subjectaccessreviews", False, "subjectaccessreview",
       verbs=("create",)),
    # Served from Kubernetes 1.30 (OpenShift 4.17); cluster.py stops serving them for an older profile. Evaluated by
    # admission_policy.py.
    _t("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicy", "validatingadmissionpolicies", False,
       "validatingadmissionpolicy", sub=("status",)),
    _t("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicyBinding", "validatingadmissionpolicybindings", False,
       "validatingadmissionpolicybinding"),
)
# The bootstrap policy's system:basic-user (plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go,
# ClusterRoles and ClusterRoleBindings): every authenticated user may review its own access.
BOOTSTRAP_RBAC = (
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
     "metadata": {"name": "system:basic-user", "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
                  "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}},
     "rules": [{"apiGroups": ["authorization.k8s.io"], "resources": ["selfsubjectaccessreviews",
                                                                     "selfsubjectrulesreviews"],
                "verbs": ["create"]}]},
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
     "metadata": {"name": "system:basic-user", "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
                  "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}},
     "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:basic-user"},
     "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:authenticated"}]},
)
STOCK_SCC_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "sccs", "stock.yaml")

INITIAL_NAMESPACES = ("default", "kube-system", "kube-public", "openshift-marketplace")

CRD_TYPE = BUILTIN_TYPES[10]


def register_builtins(store):
    from .scc import namespace_annotations

    for rtype in BUILTIN_TYPES:
        store.register(rtype)
    ns_type = BUILTIN_TYPES[0]
    for index, name in enumerate(INITIAL_NAMESPACES):
        if store.try_get(ns_type, None, name) is None:
            store.create(ns_type, {"metadata": {"name": name, "annotations": namespace_annotations(index)}})
    by_kind = {(t.api_version, t.kind): t for t in BUILTIN_TYPES}
    with open(STOCK_SCC_FILE, encoding="utf-8") as handle:
        for doc in list(yaml.safe_load(handle)["items"]) + [dict(d) for d in BOOTSTRAP_RBAC]:
            rtype = by_kind[(doc["apiVersion"], doc["kind"])]
            if store.try_get(rtype, None, doc["metadata"]["name"]) is None:
                store.create(rtype, doc)
