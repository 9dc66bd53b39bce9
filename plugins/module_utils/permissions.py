# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Which of the requests the playbooks make the identity may not make: pure functions, no cluster client.

The requests are those of deploy/rbac/clusterrole.yml, which hack/gen_clusterrole.py generates from what the
playbooks ask of the API (its ClusterRole: cluster-wide; each Role: its namespace). What the identity holds is what the
API server answers to SelfSubjectRulesReview (module_utils/cluster/permissions.py), one per namespace plus one for the
cluster-wide rules. Matching follows RBAC (kubernetes plugin/pkg/auth/authorizer/rbac/rbac.go with
pkg/apis/rbac/v1/evaluation_helpers.go: "*" matches any verb, group or resource, "*/sub" any resource's
subresource), except that resource names are left out on both sides: the names come from the configuration (a user
who regenerated the role with `--vars` holds other names than the committed file), so a rule limited to names counts
as holding its verb on its resource. A missing verb, resource or namespace is found; a missing name is not.
"""


CLUSTER = ""  # the scope of cluster-wide rules (a ClusterRole bound by a ClusterRoleBinding)
ROLE_FILE = "deploy/rbac/clusterrole.yml"


def required_rules(documents):
    """[(scope, rule)] from the items of the role file's documents: the ClusterRole's rules with scope CLUSTER, each
    Role's with its namespace. Bindings, namespaces and service accounts are what grants the rules, not rules."""
    out = []
    for document in documents or []:
        items = document.get("items") if isinstance(document, dict) and document.get("kind") == "List" else [document]
        for item in items or []:
            if not isinstance(item, dict):
                continue
            if item.get("kind") == "ClusterRole":
                out.extend((CLUSTER, rule, item["metadata"]["name"]) for rule in item.get("rules") or [])
            elif item.get("kind") == "Role":
                meta = item.get("metadata") or {}
                out.extend((meta.get("namespace") or "", rule, meta.get("name")) for rule in item.get("rules") or [])
    return out


def scopes(required):
    """The namespaces whose rules must be read, in order (CLUSTER first when any rule is cluster-wide)."""
    seen = []
    for scope, _rule, _role in required:
        if scope not in seen:
            seen.append(scope)
    return sorted(seen)


def _matches(values, wanted):
    return "*" in values or wanted in values


def _resource_matches(resources, resource):
    if "*" in resources or resource in resources:
        return True
    _main, sep, sub = resource.partition("/")
    return bool(sep) and ("*/" + sub) in resources


def holds(granted, verb, group, resource):
    """Whether one of the granted rules allows verb on group/resource (names aside)."""
    return any(_matches(rule.get("verbs") or [], verb) and _matches(rule.get("apiGroups") or [], group)
               and _resource_matches(rule.get("resources") or [], resource) for rule in granted or [])


def missing_permissions(required, granted_by_scope):
    """Every (scope, group, resource) with the verbs the identity may not use there, with the role that lists them.

    required: required_rules(); granted_by_scope: {scope: [resource rules]} where a namespace's rules are what a
    SelfSubjectRulesReview of that namespace answers (cluster-wide rules included) and CLUSTER's those of no namespace.
    Returns [{"namespace", "group", "resource", "verbs", "role"}], in the role file's order."""
    found, order = {}, []
    for scope, rule, role in required:
        granted = granted_by_scope.get(scope) or []
        for group in rule.get("apiGroups") or []:
            for resource in rule.get("resources") or []:
                for verb in rule.get("verbs") or []:
                    if holds(granted, verb, group, resource):
                        continue
                    key = (scope, group, resource)
                    if key not in found:
                        found[key] = {"namespace": scope, "group": group, "resource": resource, "verbs": [],
                                      "role": role}
                        order.append(key)
                    if verb not in found[key]["verbs"]:
                        found[key]["verbs"].append(verb)
    return [found[key] for key in order]


def describe(entry):
    """One line: what is missing, where, and the rule that grants it."""
    where = "in namespace %s" % entry["namespace"] if entry["namespace"] else "cluster-wide"
    kind = ("Role %s in %s" % (entry["role"], entry["namespace"]) if entry["namespace"]
            else "ClusterRole %s" % entry["role"])
    return ("%s on %s %s: add to the %s the rule {apiGroups: [\"%s\"], resources: [\"%s\"], verbs: [%s]}"
            % (", ".join(entry["verbs"]), _qualified(entry["group"], entry["resource"]), where, kind, entry["group"],
               entry["resource"], ", ".join(entry["verbs"])))


def _qualified(group, resource):
    return resource + ("." + group if group else "")


def problem_message(missing, identity=None):
    """The failure message for a non-empty missing list (None when nothing is missing)."""
    if not missing:
        return None
    who = "%s " % identity if identity else "The identity "
    lines = ["%smay not make %d kind(s) of request the playbooks make; nothing was written. Bind the ClusterRole and "
             "Roles of %s (oc apply -f deploy/rbac/workloads.yml -f %s, see docs/least-privilege.md), or add:"
             % (who, len(missing), ROLE_FILE, ROLE_FILE)]
    lines.extend("- " + describe(entry) for entry in missing)
    return "\n".join(lines)
