#!/usr/bin/python
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
---
module: resource_wait
short_description: Wait until a Kubernetes object, or a set of objects, satisfies a JMESPath condition
version_added: 0.1.0
author: gpudirect.openshift maintainers (@gpudirect)
description:
  - Lists once, then follows a watch from the returned resourceVersion and evaluates the condition on every
    event, so it returns as soon as the cluster is ready; there is no polling interval.
  - Resumes a dropped watch from the last resourceVersion and relists when the server answers 410 Gone.
  - Fails fast, with a message taken from the object, when an optional failure condition holds longer than a
    grace period (operators often pass through an error state while starting).
  - Covers readiness that C(kubernetes.core.k8s_info)'s O(kubernetes.core.k8s_info#module:wait_condition) cannot
    express, such as C(status.state) strings of operator CRs or counts of labelled nodes.
options:
  api_missing_ok:
    description:
      - When the kind is not served, treat the objects as absent instead of failing. Useful to wait for an object
        whose CRD an operator is still installing.
    type: bool
    default: false
extends_documentation_fragment:
  - gpudirect.openshift.wait_entries.object
  - gpudirect.openshift.cluster_connection
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: The module only reads; in check mode it waits the same way.
  diff_mode:
    support: none
requirements:
  - jmespath
seealso:
  - module: kubernetes.core.k8s_info
"""

EXAMPLES = r"""
- name: Wait for the NicClusterPolicy to be ready, failing fast on an error state
  gpudirect.openshift.resource_wait:
    api_version: mellanox.com/v1alpha1
    kind: NicClusterPolicy
    name: nic-cluster-policy
    condition: "status.state == 'ready'"
    failure_condition: "status.state == 'error'"
    failure_message: "status.reason"
    failure_grace_period: 30
    timeout: 900

- name: Wait until every GPU worker carries the NFD label
  gpudirect.openshift.resource_wait:
    api_version: v1
    kind: Node
    label_selectors:
      - node-role.kubernetes.io/worker
    condition: "length(items[?metadata.labels.\"feature.node.kubernetes.io/pci-10de.present\" == 'true']) >= `2`"
    progress: "join(', ', items[?metadata.labels.\"feature.node.kubernetes.io/pci-10de.present\" ==
      'true'].metadata.name)"

- name: The same on a large cluster, counting one node per event; every selected worker must be labelled
  gpudirect.openshift.resource_wait:
    api_version: v1
    kind: Node
    label_selectors:
      - node-role.kubernetes.io/worker
    count:
      - each: "metadata.labels.\"feature.node.kubernetes.io/pci-10de.present\" == 'true'"
        all: true
"""

RETURN = r"""
resources:
  description:
    - The objects as last seen (one element with O(name), possibly none; with O(count) none unless O(return_resources)).
    - When O(each_failure_condition) failed the wait, the failing objects.
  returned: always
  type: list
  elements: dict
elapsed:
  description: Seconds the wait took.
  returned: always
  type: float
  sample: 0.42
events:
  description: Watch events evaluated.
  returned: always
  type: int
progress:
  description:
    - Each distinct value of the O(progress) expression (with O(count), of the count, or of the objects'
      O(each_progress) texts), in order; the first one and the latest ones, at most 20.
  returned: always
  type: list
  elements: str
  sample: ["0/2 nodes updated", "1/2 nodes updated", "2/2 nodes updated"]
count:
  description:
    - With O(count), how many listed objects each counter counts, how many were read, and up to 20 names that some
      counter does not count.
    - Minimums (no O(count[].all)) may hold before every object was seen, so C(selected) then counts the objects
      seen so far.
  returned: with O(count)
  type: dict
  sample: {"counted": [998], "selected": 1000, "not_counted_sample": ["worker-0007", "worker-0420"]}
"""


from ansible.module_utils.basic import missing_required_lib

from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.module_base import ClusterModule
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.conditions import (
    HAS_JMESPATH, JMESPATH_IMPORT_ERROR)
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.waits import (
    WAIT_OPTIONS, WaitFailed, describe_wait, run_wait)


def argument_spec():
    # The options of one wait entry (as apply_manifests and plan_status take them), without the title;
    # run_wait supplies the timeout and grace period defaults.
    spec = {key: dict(value) for key, value in WAIT_OPTIONS.items() if key != "title"}
    spec["api_missing_ok"] = dict(type="bool", default=False)
    return spec


def main():
    # A wait only reads: its client is built as for a task outside check mode.
    module = ClusterModule(argument_spec(), client_options=dict(check_mode=False))
    if not HAS_JMESPATH:
        module.fail_json(msg=missing_required_lib("jmespath"), exception=JMESPATH_IMPORT_ERROR)
    spec = module.options
    result = module.run(lambda: run_wait(module.cluster, spec), "Waiting for %s failed" % describe_wait(spec),
                        handlers=[(WaitFailed, lambda exc: module.fail_json(msg=str(exc), **exc.details))])
    result.pop("title")
    module.exit_json(changed=False, **result)


if __name__ == "__main__":
    main()
