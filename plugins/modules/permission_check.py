#!/usr/bin/python
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
---
module: permission_check
short_description: Check that the identity may make the requests the playbooks make, before any write
version_added: 0.1.0
author: gpudirect.openshift maintainers (@gpudirect)
description:
  - Asks the API server (C(authorization.k8s.io/v1)) whether the module's identity may make every request listed by
    O(required), the rules of the collection's C(deploy/rbac/clusterrole.yml) (its ClusterRole cluster-wide, each
    Role in its namespace).
  - One C(SelfSubjectAccessReview) first; an identity that may do everything (cluster-admin) is done with it.
    Otherwise one C(SelfSubjectRulesReview) per namespace of the Roles and one for the cluster-wide rules.
  - Fails listing each verb, resource and namespace the identity lacks, with the rule that grants it and the
    ClusterRole or Role of C(deploy/rbac/clusterrole.yml) that holds it.
  - Resource names are not compared (they come from the configuration), so a rule limited to names counts as holding
    its verb; a missing verb, resource or namespace is found.
  - When the API server cannot list every rule (an authorizer that answers rules reviews incompletely), nothing is
    concluded and the module does not fail (RV(incomplete)).
  - Never changes anything; the reviews are questions the API server answers without storing them.
options:
  required:
    description:
      - The documents of C(deploy/rbac/clusterrole.yml) (a C(List) whose C(ClusterRole) and C(Role) items list the
        rules), as C(lookup('ansible.builtin.file', ...) | from_yaml_all | list) gives them.
    type: list
    elements: dict
    required: true
extends_documentation_fragment:
  - gpudirect.openshift.cluster_connection
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
seealso:
  - name: Least privilege
    description: docs/least-privilege.md, the role to bind and how it is generated.
    link: https://github.com/gpudirect/gpudirect.openshift/blob/main/docs/least-privilege.md
"""

EXAMPLES = r"""
- name: Stop before any write when the identity lacks a permission the playbooks use
  gpudirect.openshift.permission_check:
    required: "{{ lookup('ansible.builtin.file', 'deploy/rbac/clusterrole.yml') | from_yaml_all | list }}"
"""

RETURN = r"""
everything:
  description: Whether the identity may use every verb on every resource (one review answered it).
  returned: always
  type: bool
missing:
  description: What the identity may not do, one entry per namespace (empty for cluster-wide), group and resource.
  returned: always
  type: list
  elements: dict
  sample: [{"namespace": "gpudirect-facts", "group": "", "resource": "pods", "verbs": ["create"],
            "role": "gpudirect-openshift"}]
incomplete:
  description: Whether the API server said its rules list was incomplete (then nothing is concluded).
  returned: always
  type: bool
requests:
  description: Number of review requests made.
  returned: always
  type: int
"""

from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.module_base import ClusterModule
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.permissions import (
    granted_rules, may_do_everything)
from ansible_collections.gpudirect.openshift.plugins.module_utils.permissions import (missing_permissions,
                                                                                      problem_message, required_rules,
                                                                                      scopes)


def argument_spec():
    return dict(required=dict(type="list", elements="dict", required=True))


def main():
    module = ClusterModule(argument_spec(), client_options=dict(rediscover_once=True))
    required = required_rules(module.options["required"])
    if not required:
        module.fail_json(msg="permission_check: required holds no ClusterRole or Role rules; pass the documents of "
                             "deploy/rbac/clusterrole.yml (lookup('ansible.builtin.file', ...) | from_yaml_all | list)")

    def work():
        cluster = module.cluster
        if may_do_everything(cluster):
            return {"everything": True, "missing": [], "incomplete": False, "requests": 1}
        wanted = scopes(required)
        granted, incomplete = granted_rules(cluster, wanted)
        return {"everything": False, "missing": missing_permissions(required, granted), "incomplete": incomplete,
                "requests": 1 + len(wanted)}

    result = module.run(work, "Failed to review the identity's permissions")
    if result["missing"] and not result["incomplete"]:
        module.fail_json(msg=problem_message(result["missing"]), changed=False, **result)
    module.exit_json(changed=False, **result)


if __name__ == "__main__":
    main()
