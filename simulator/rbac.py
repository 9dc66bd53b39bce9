"""Authentication, RBAC authorization and RBAC escalation checks of the simulated API server.

Written from Kubernetes' own code (v1.31-v1.33, the releases of OpenShift 4.18-4.20):
- who may do what: plugin/pkg/auth/authorizer/rbac/rbac.go (RBACAuthorizer.Authorize) walking the bindings as
  pkg/registry/rbac/validation/rule.go (VisitRulesFor: ClusterRoleBindings, then the RoleBindings of the request's
  namespace), matching with pkg/apis/rbac/v1/evaluation_helpers.go (VerbMatches, APIGroupMatches, ResourceMatches
  with "resource/subresource" and "*/subresource", ResourceNameMatches where an empty list means every name) and
  subjects as appliesToUser (User by name, Group by membership, ServiceAccount by system:serviceaccount:NS:NAME);
- the system:masters group is allowed everything before RBAC is asked (pkg/kubeapiserver/authorizer/config.go,
  authorizerfactory.NewPrivilegedGroups);
- a service account's user: staging/src/k8s.io/apiserver/pkg/authentication/serviceaccount/util.go (UserInfo: name
  system:serviceaccount:NS:NAME, groups system:serviceaccounts and system:serviceaccounts:NS), plus
  system:authenticated added to every authenticated user (group adder in pkg/kubeapiserver/authenticator);
- escalation: pkg/registry/rbac/rolebinding/policybased/storage.go and clusterrolebinding/... (a binding is created or
  updated when the user is in system:masters, may `bind` the referenced role (rbac.BindingAuthorized), or already
  holds every rule of that role (validation.ConfirmNoEscalation)); pkg/registry/rbac/role/policybased/storage.go and
  clusterrole/... (a role needs `escalate` on it or rules the user already holds);
  "holds" is pkg/registry/rbac/validation/policy_comparator.go (Covers, rule by rule broken down to one group,
  resource, verb and name);
- the refusal text: staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/errors.go (forbiddenMessage)
  inside apimachinery's NewForbidden ("<resource> \"<name>\" is forbidden: <reason>").
"""

from dataclasses import dataclass, field

SYSTEM_MASTERS = "system:masters"
AUTHENTICATED = "system:authenticated"
ROLE_TYPES = {
    "Role": ("rbac.authorization.k8s.io", "roles"),
    "ClusterRole": ("rbac.authorization.k8s.io", "clusterroles"),
}


@dataclass(frozen=True)
class User:
    name: str
    groups: tuple = field(default=())

    @property
    def privileged(self):
        return SYSTEM_MASTERS in self.groups


def admin_user():
    return User("system:admin", (SYSTEM_MASTERS, AUTHENTICATED))


def service_account_user(namespace, name):
    return User("system:serviceaccount:%s:%s" % (namespace, name),
                ("system:serviceaccounts", "system:serviceaccounts:%s" % namespace, AUTHENTICATED))


def _matches(values, wanted):
    return "*" in values or wanted in values


def _resource_matches(resources, resource, subresource):
    combined = resource + ("/" + subresource if subresource else "")
    for item in resources:
        if item == "*" or item == combined:
            return True
        if subresource and item == "*/" + subresource:
            return True
    return False


def rule_allows(rule, verb, group, resource, subresource, name):
    """evaluation_helpers.go RuleAllows for a resource request."""
    if not _matches(rule.get("verbs") or [], verb):
        return False
    if not _matches(rule.get("apiGroups") or [], group):
        return False
    if not _resource_matches(rule.get("resources") or [], resource, subresource):
        return False
    names = rule.get("resourceNames") or []
    return not names or name in names


def _subject_applies(subject, user, binding_namespace):
    kind = subject.get("kind")
    if kind == "User":
        return subject.get("name") == user.name
    if kind == "Group":
        return subject.get("name") in user.groups
    if kind == "ServiceAccount":
        namespace = subject.get("namespace") or binding_namespace
        return user.name == "system:serviceaccount:%s:%s" % (namespace, subject.get("name"))
    return False


class Authorizer:
    def __init__(self, store):
        self.store = store

    def _type(self, plural):
        return self.store.find_type("rbac.authorization.k8s.io", "v1", plural)

    def _items(self, plural, namespace=None):
        items, _rv = self.store.list(self._type(plural), namespace, None, None)
        return items

    def _role_rules(self, role_ref, namespace):
        kind = role_ref.get("kind")
        if kind == "ClusterRole":
            role = self.store.try_get(self._type("clusterroles"), None, role_ref.get("name"))
        elif kind == "Role" and namespace:
            role = self.store.try_get(self._type("roles"), namespace, role_ref.get("name"))
        else:
            role = None
        return (role or {}).get("rules") or []

    def rules_for(self, user, namespace):
        """Every rule that applies to ``user`` in ``namespace`` (cluster-wide ones when namespace is empty)."""
        rules = []
        for binding in self._items("clusterrolebindings"):
            if any(_subject_applies(s, user, "") for s in binding.get("subjects") or []):
                rules.extend(self._role_rules(binding.get("roleRef") or {}, None))
        if namespace:
            for binding in self._items("rolebindings", namespace):
                if any(_subject_applies(s, user, namespace) for s in binding.get("subjects") or []):
                    rules.extend(self._role_rules(binding.get("roleRef") or {}, namespace))
        return rules

    def allowed(self, user, verb, group, resource, subresource=None, namespace=None, name=None):
        if user.privileged:
            return True
        return any(rule_allows(rule, verb, group, resource, subresource, name or "")
                   for rule in self.rules_for(user, namespace))

    # -- escalation -----------------------------------------------------------------------------------------------

    def uncovered(self, user, namespace, requested):
        """The requested rules, broken down, that ``user`` does not hold in ``namespace`` (policy_comparator.Covers)."""
        held = self.rules_for(user, namespace)
        missing = []
        for rule in requested:
            for part in _breakdown(rule):
                if not any(_rule_covers(owner, part) for owner in held):
                    missing.append(part)
        return missing

    def check_binding(self, user, binding, namespace):
        """None when ``user`` may create or update ``binding``; else the reason it may not."""
        if user.privileged:
            return None
        ref = binding.get("roleRef") or {}
        group, plural = ROLE_TYPES.get(ref.get("kind"), ("rbac.authorization.k8s.io", "clusterroles"))
        if self.allowed(user, "bind", group, plural, None, namespace, ref.get("name")):
            return None
        missing = self.uncovered(user, namespace, self._role_rules(ref, namespace))
        if not missing:
            return None
        return _escalation_message(user, missing)

    def check_role(self, user, role, namespace, plural):
        if user.privileged:
            return None
        name = (role.get("metadata") or {}).get("name")
        if self.allowed(user, "escalate", "rbac.authorization.k8s.io", plural, None, namespace, name):
            return None
        missing = self.uncovered(user, namespace, role.get("rules") or [])
        if not missing:
            return None
        return _escalation_message(user, missing)


def _breakdown(rule):
    """One rule per group, resource, verb and name (policy_comparator.go BreakdownRule)."""
    names = rule.get("resourceNames") or [None]
    for group in rule.get("apiGroups") or []:
        for resource in rule.get("resources") or []:
            for verb in rule.get("verbs") or []:
                for name in names:
                    part = {"apiGroups": [group], "resources": [resource], "verbs": [verb]}
                    if name is not None:
                        part["resourceNames"] = [name]
                    yield part


def _rule_covers(owner, part):
    """ruleCovers: every field of ``part`` is in ``owner`` (or owner has "*"); owner names restrict."""
    verb, group, resource = part["verbs"][0], part["apiGroups"][0], part["resources"][0]
    if not _matches(owner.get("verbs") or [], verb) or not _matches(owner.get("apiGroups") or [], group):
        return False
    owner_resources = owner.get("resources") or []
    if not ("*" in owner_resources or resource in owner_resources):
        main, _sep, sub = resource.partition("/")
        if not (sub and ("*/" + sub) in owner_resources):
            return False
    owner_names = owner.get("resourceNames") or []
    if not owner_names:
        return True
    wanted = part.get("resourceNames") or []
    return bool(wanted) and all(n in owner_names for n in wanted)


def _escalation_message(user, missing):
    # Format of validation.ConfirmNoEscalation: the user, groups and the rules not held, one per line.
    lines = ["{APIGroups:%s, Resources:%s, %sVerbs:%s}" % (
        _go_list(p["apiGroups"]), _go_list(p["resources"]),
        ("ResourceNames:%s, " % _go_list(p["resourceNames"])) if p.get("resourceNames") else "", _go_list(p["verbs"]))
        for p in missing]
    return "user %s (groups=%s) is attempting to grant RBAC permissions not currently held:\n%s" % (
        _go_quote(user.name), _go_list(user.groups), "\n".join(lines))


def _go_quote(text):
    return '"%s"' % text


def _go_list(values):
    return "[%s]" % " ".join(_go_quote(v) for v in values)


def forbidden_reason(user, verb, group, resource, subresource, namespace):
    """responsewriters/errors.go forbiddenMessage for a resource request."""
    full = resource + ("/" + subresource if subresource else "")
    if namespace:
        return 'User "%s" cannot %s resource "%s" in API group "%s" in the namespace "%s"' % (
            user.name, verb, full, group, namespace)
    return 'User "%s" cannot %s resource "%s" in API group "%s" at the cluster scope' % (user.name, verb, full, group)


def qualified(group, resource):
    return resource + ("." + group if group else "")


def forbidden_message(group, resource, name, reason):
    """apimachinery errors.NewForbidden's message."""
    if name:
        return '%s "%s" is forbidden: %s' % (qualified(group, resource), name, reason)
    return "%s is forbidden: %s" % (qualified(group, resource), reason)
