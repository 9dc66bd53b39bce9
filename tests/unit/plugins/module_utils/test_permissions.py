"""missing_permissions: the requests of deploy/rbac/clusterrole.yml against the rules an identity holds."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import os

import yaml

from ansible_collections.gpudirect.openshift.plugins.module_utils.permissions import (CLUSTER, describe, holds,
                                                                                      missing_permissions,
                                                                                      problem_message, required_rules,
                                                                                      scopes)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
# The bootstrap policy's cluster-admin rule (kubernetes plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go).
CLUSTER_ADMIN = [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]


def role_documents():
    with open(os.path.join(ROOT, "deploy", "rbac", "clusterrole.yml"), encoding="utf-8") as handle:
        return list(yaml.safe_load_all(handle))


def granted_as_bound(documents):
    """What rules reviews answer for the service account bound as deploy/rbac binds it: the ClusterRole's rules
    everywhere, each Role's in its namespace."""
    required = required_rules(documents)
    cluster_rules = [rule for scope, rule, _role in required if scope == CLUSTER]
    granted = {CLUSTER: list(cluster_rules)}
    for scope, rule, _role in required:
        if scope != CLUSTER:
            granted.setdefault(scope, list(cluster_rules)).append(rule)
    return granted


def test_the_committed_role_lists_cluster_and_namespace_rules():
    required = required_rules(role_documents())
    wanted = scopes(required)
    assert wanted[0] == CLUSTER and "gpudirect-facts" in wanted and "kube-system" not in wanted
    assert all(isinstance(rule.get("verbs"), list) for _scope, rule, _role in required)


def test_the_full_role_and_cluster_admin_miss_nothing():
    documents = role_documents()
    required = required_rules(documents)
    assert missing_permissions(required, granted_as_bound(documents)) == []
    assert missing_permissions(required, {scope: CLUSTER_ADMIN for scope in scopes(required)}) == []
    assert problem_message([]) is None


def test_each_rule_removed_in_turn_is_named():
    documents = role_documents()
    required = required_rules(documents)
    redundant = []
    for index, (scope, rule, role) in enumerate(required):
        reduced = copy.deepcopy(documents)
        items = reduced[0]["items"]
        owner = next(i for i in items if i["kind"] == ("ClusterRole" if scope == CLUSTER else "Role")
                     and i["metadata"]["name"] == role and (scope == CLUSTER or i["metadata"]["namespace"] == scope))
        position = [r for s, r, _rest in required if s == scope].index(rule)
        del owner["rules"][position]
        reduced_grant = granted_as_bound(reduced)
        missing = missing_permissions(required, reduced_grant)
        still_held = all(holds(reduced_grant[scope], verb, group, resource) for verb in rule["verbs"]
                         for group in rule["apiGroups"] for resource in rule["resources"])
        if still_held:  # a Role rule the ClusterRole holds as well (list/watch of a kind in its namespace)
            assert scope != CLUSTER and missing == [], (rule, missing)
            redundant.append(rule)
            continue
        assert missing, "rule %d %r of %s removed, nothing missing" % (index, rule, scope or "the ClusterRole")
        for entry in missing:
            assert entry["namespace"] == scope and entry["group"] in rule["apiGroups"]
            assert entry["resource"] in rule["resources"] and set(entry["verbs"]) <= set(rule["verbs"])
    assert len(redundant) < len(required) // 4, redundant


def test_names_are_left_out_and_wildcards_match():
    named = [{"apiGroups": ["nvidia.com"], "resources": ["clusterpolicies"], "verbs": ["get"],
              "resourceNames": ["someone-elses"]}]
    assert holds(named, "get", "nvidia.com", "clusterpolicies")
    assert holds([{"apiGroups": [""], "resources": ["*/status"], "verbs": ["patch"]}], "patch", "", "pods/status")
    assert not holds([{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}], "get", "", "pods/log")
    assert not holds([{"apiGroups": ["apps"], "resources": ["pods"], "verbs": ["*"]}], "get", "", "pods")


def test_the_message_names_verb_resource_namespace_and_rule():
    required = [("gpudirect-facts", {"apiGroups": [""], "resources": ["pods", "pods/log"], "verbs": ["create", "get"]},
                 "gpudirect-openshift"),
                (CLUSTER, {"apiGroups": ["mellanox.com"], "resources": ["nicclusterpolicies"], "verbs": ["list"]},
                 "gpudirect-openshift")]
    granted = {"gpudirect-facts": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}], CLUSTER: []}
    missing = missing_permissions(required, granted)
    assert [(m["namespace"], m["resource"], m["verbs"]) for m in missing] == [
        ("gpudirect-facts", "pods", ["create"]), ("gpudirect-facts", "pods/log", ["create", "get"]),
        ("", "nicclusterpolicies", ["list"])]
    assert describe(missing[0]) == ('create on pods in namespace gpudirect-facts: add to the Role gpudirect-openshift '
                                    'in gpudirect-facts the rule {apiGroups: [""], resources: ["pods"], verbs: [create]}')
    assert describe(missing[2]).startswith("list on nicclusterpolicies.mellanox.com cluster-wide: add to the ClusterRole "
                                           "gpudirect-openshift")
    text = problem_message(missing)
    assert "deploy/rbac/clusterrole.yml" in text and text.count("\n- ") == 3
