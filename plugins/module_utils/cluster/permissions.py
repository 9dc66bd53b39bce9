# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Asking the API server what the module's identity may do (authorization.k8s.io/v1, Kubernetes
pkg/registry/authorization): one SelfSubjectAccessReview for everything (a cluster administrator is done with it),
else one SelfSubjectRulesReview per namespace the playbooks work in and one for the cluster-wide rules. Every
authenticated user may ask both (the bootstrap ClusterRole system:basic-user)."""


from ansible_collections.gpudirect.openshift.plugins.module_utils.permissions import CLUSTER

ACCESS_REVIEW = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
RULES_REVIEW = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews"
# A rules review needs a namespace (selfsubjectrulesreview/rest.go: "no namespace on request") and answers the
# cluster-wide rules plus that namespace's RoleBindings. A namespace that does not exist holds no RoleBinding, so its
# answer is the cluster-wide rules alone; the collection never creates this one.
NO_NAMESPACE = "gpudirect-openshift-cluster-scope"


def may_do_everything(cluster):
    """Whether the identity may use every verb on every resource of every group cluster-wide (cluster-admin)."""
    answer = cluster.ask(ACCESS_REVIEW, {
        "apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": {"verb": "*", "group": "*", "resource": "*"}}})
    return bool((answer.get("status") or {}).get("allowed"))


def granted_rules(cluster, scopes):
    """({scope: [resource rules]}, incomplete) for each scope (CLUSTER or a namespace)."""
    granted, incomplete = {}, False
    for scope in scopes:
        answer = cluster.ask(RULES_REVIEW, {
            "apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview",
            "spec": {"namespace": scope if scope != CLUSTER else NO_NAMESPACE}})
        status = answer.get("status") or {}
        granted[scope] = status.get("resourceRules") or []
        # An authorizer that cannot list its rules (a webhook) makes the answer incomplete: absence proves nothing.
        incomplete = incomplete or bool(status.get("incomplete"))
    return granted, incomplete
