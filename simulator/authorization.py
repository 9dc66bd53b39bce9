"""authorization.k8s.io/v1: the access reviews, answered by the simulator's RBAC authorizer (rbac.py).

Written from Kubernetes v1.32:
- kinds and fields: staging/src/k8s.io/api/authorization/v1/types.go (SelfSubjectAccessReview, SubjectAccessReview,
  LocalSubjectAccessReview: spec.resourceAttributes {namespace, verb, group, resource, subresource, name} or
  spec.nonResourceAttributes {path, verb}; status {allowed, denied, reason, evaluationError};
  SelfSubjectRulesReview: spec.namespace; status {resourceRules, nonResourceRules, incomplete, evaluationError});
- what each answers: pkg/registry/authorization/{selfsubjectaccessreview,subjectaccessreview,
  localsubjectaccessreview,selfsubjectrulesreview}/rest.go (the requesting user for the self reviews; spec.user and
  spec.groups for the others; a LocalSubjectAccessReview's namespace must be the request's; a rules review needs
  spec.namespace) and pkg/registry/authorization/util/helpers.go (ResourceAttributesFrom);
- the verdicts: plugin/pkg/auth/authorizer/rbac/rbac.go (Authorize: allowed with the reason naming the binding and
  role; otherwise no opinion with an empty reason; RulesFor: the rules of the bindings that apply) after the
  system:masters authorizer (staging/src/k8s.io/apiserver/pkg/authorization/authorizerfactory/builtin.go:
  everything allowed, rules `*` on `*`);
- who may ask: the bootstrap ClusterRole system:basic-user lets every authenticated user create the two self reviews
  (plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go), which the simulator serves as data in
  builtins.BOOTSTRAP_RBAC.
"""

from . import rbac
from .errors import ApiError

GROUP = "authorization.k8s.io"
KINDS = {
    "selfsubjectaccessreviews": "SelfSubjectAccessReview",
    "subjectaccessreviews": "SubjectAccessReview",
    "localsubjectaccessreviews": "LocalSubjectAccessReview",
    "selfsubjectrulesreviews": "SelfSubjectRulesReview",
}


def _invalid(kind, field, message):
    cause = {"reason": "FieldValueInvalid", "message": message, "field": field}
    return ApiError(422, "Invalid", '%s.authorization.k8s.io "" is invalid: %s: %s' % (kind, field, message),
                    details={"group": GROUP, "kind": kind, "causes": [cause]})


def _non_resource_allowed(authorizer, user, verb, path):
    """RBAC NonResourceURLs: exact path or a prefix ending in *."""
    if user.privileged:
        return True
    for rule in authorizer.rules_for(user, None):
        if not rbac._matches(rule.get("verbs") or [], verb):  # pylint: disable=protected-access
            continue
        for url in rule.get("nonResourceURLs") or []:
            if url == "*" or url == path or (url.endswith("*") and path.startswith(url[:-1])):
                return True
    return False


def _binding_reason(authorizer, user, attrs):
    """rbac.go's allowed reason: the first binding whose role holds a matching rule."""
    namespace = attrs.get("namespace") or None
    verb, group, resource = attrs.get("verb", ""), attrs.get("group", ""), attrs.get("resource", "")
    subresource, name = attrs.get("subresource") or None, attrs.get("name") or ""
    sources = [("ClusterRoleBinding", b, None) for b in authorizer._items("clusterrolebindings")]  # pylint: disable=protected-access
    if namespace:
        sources += [("RoleBinding", b, namespace) for b in authorizer._items("rolebindings", namespace)]  # pylint: disable=protected-access
    for binding_kind, binding, binding_ns in sources:
        subject = next((s for s in binding.get("subjects") or []
                        if rbac._subject_applies(s, user, binding_ns or "")), None)  # pylint: disable=protected-access
        if subject is None:
            continue
        ref = binding.get("roleRef") or {}
        rules = authorizer._role_rules(ref, binding_ns)  # pylint: disable=protected-access
        if any(rbac.rule_allows(r, verb, group, resource, subresource, name) for r in rules):
            # pkg/registry/rbac/validation/rule.go: the binding describers ("name/namespace" for a RoleBinding)
            # and describeSubject ("name/namespace" for a service account).
            where = ' of %s "%s"' % (ref.get("kind"), ref.get("name"))
            name_text = '%s "%s"' % (binding_kind, binding["metadata"]["name"])
            if binding_ns:
                name_text = '%s "%s/%s"' % (binding_kind, binding["metadata"]["name"], binding_ns)
            who = subject.get("kind")
            subject_name = subject.get("name")
            if who == "ServiceAccount":
                subject_name = "%s/%s" % (subject_name, subject.get("namespace") or binding_ns or "")
            return "RBAC: allowed by %s%s to %s \"%s\"" % (name_text, where, who, subject_name)
    return ""


def review_access(authorizer, user, spec, kind):
    """status of an access review of ``user``."""
    resource_attrs, non_resource_attrs = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if resource_attrs and non_resource_attrs:
        raise _invalid(kind, "spec.nonResourceAttributes", "cannot be specified in combination with resourceAttributes")
    if not resource_attrs and not non_resource_attrs:
        raise _invalid(kind, "spec.resourceAttributes", "exactly one of nonResourceAttributes or resourceAttributes "
                       "must be specified")
    if non_resource_attrs:
        allowed = _non_resource_allowed(authorizer, user, non_resource_attrs.get("verb", ""),
                                        non_resource_attrs.get("path", ""))
        return {"allowed": allowed}
    attrs = resource_attrs
    allowed = authorizer.allowed(user, attrs.get("verb", ""), attrs.get("group", ""), attrs.get("resource", ""),
                                 attrs.get("subresource") or None, attrs.get("namespace") or None, attrs.get("name") or "")
    status = {"allowed": allowed}
    if allowed and not user.privileged:
        reason = _binding_reason(authorizer, user, attrs)
        if reason:
            status["reason"] = reason
    return status


def review_rules(authorizer, user, namespace):
    """status of a SelfSubjectRulesReview (RulesFor of the privileged-group and RBAC authorizers)."""
    resource_rules, non_resource_rules = [], []
    if user.privileged:
        resource_rules.append({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]})
        non_resource_rules.append({"verbs": ["*"], "nonResourceURLs": ["*"]})
    for rule in authorizer.rules_for(user, namespace):
        if rule.get("nonResourceURLs"):
            non_resource_rules.append({"verbs": list(rule.get("verbs") or []),
                                       "nonResourceURLs": list(rule["nonResourceURLs"])})
        else:
            entry = {"verbs": list(rule.get("verbs") or []), "apiGroups": list(rule.get("apiGroups") or []),
                     "resources": list(rule.get("resources") or [])}
            if rule.get("resourceNames"):
                entry["resourceNames"] = list(rule["resourceNames"])
            resource_rules.append(entry)
    return {"resourceRules": resource_rules, "nonResourceRules": non_resource_rules, "incomplete": False}


def answer(authorizer, requester, plural, namespace, body):
    """The created review (the body with its status) for a POST to ``plural``."""
    kind = KINDS[plural]
    if not isinstance(body, dict):
        raise ApiError(400, "BadRequest", "the body of the request was in an unknown format - expected an object")
    spec = body.get("spec") or {}
    meta = dict(body.get("metadata") or {})
    meta.pop("namespace", None)
    out = {"kind": kind, "apiVersion": GROUP + "/v1", "metadata": meta, "spec": spec}
    if plural == "selfsubjectrulesreviews":
        if not spec.get("namespace"):
            raise ApiError(400, "BadRequest", "no namespace on request")
        out["status"] = review_rules(authorizer, requester, spec["namespace"])
        return out
    if plural == "selfsubjectaccessreviews":
        subject = requester
    else:
        if not spec.get("user") and not spec.get("groups"):
            raise _invalid(kind, "spec.user", "at least one of user or group must be specified")
        subject = rbac.User(spec.get("user") or "", tuple(spec.get("groups") or ()))
    if plural == "localsubjectaccessreviews":
        attrs = spec.get("resourceAttributes") or {}
        if spec.get("resourceAttributes") is not None and attrs.get("namespace") != namespace:
            raise ApiError(400, "BadRequest", "spec.resourceAttributes.namespace must match namespace: %s"
                           % namespace)
        meta["namespace"] = namespace
    out["status"] = review_access(authorizer, subject, spec, kind)
    return out
