#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

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
  api_version:
    description: API version of the objects, for example V(mellanox.com/v1alpha1).
    type: str
    required: true
  kind:
    description: Kind of the objects, for example V(NicClusterPolicy).
    type: str
    required: true
  name:
    description:
      - Wait on this one object. The condition sees the object itself, or an empty object while it does not exist.
      - 'Without O(name), the condition sees C({"items": [...]}), every object matching O(namespace) and O(label_selectors).'
    type: str
  namespace:
    description: Namespace of namespaced objects; without it a list covers all namespaces.
    type: str
  label_selectors:
    description: Label selectors that listed objects must all match.
    type: list
    elements: str
    default: []
  condition:
    description:
      - JMESPath expression that is true (not false, null or empty) when the wait is over.
      - For example V(status.state == 'ready') or V(length(items[?metadata.labels."nvidia.com/gpu.present" == 'true']) >= `2`).
      - Exactly one of O(condition) and O(count) is required.
    type: str
  count:
    description:
      - Instead of O(condition), counters over the listed objects; the wait is over when every counter holds. Each
        watch event evaluates the counters on the one object it carries, so the work per event does not grow with
        the number of objects (a list condition re-reads all of them). Without O(name), O(failure_condition) and
        O(progress).
      - Minimums only (no C(all)) start with a watch without resourceVersion, whose first events are the current
        objects, so one request serves any number of them; with C(all) the list is read first, in pages.
    type: list
    elements: dict
    suboptions:
      each:
        description: JMESPath expression over one object that holds when the object counts.
        type: str
        required: true
      at_least:
        description: The counter holds when at least this many objects count.
        type: int
        default: 1
      all:
        description: The counter holds only when every listed object counts (and at least one is listed).
        type: bool
        default: false
  failure_condition:
    description: JMESPath expression that is true when the objects report a failure.
    type: str
  failure_message:
    description: JMESPath expression giving the text to quote when O(failure_condition) holds, for example V(status.reason).
    type: str
  progress:
    description:
      - JMESPath expression giving a progress text; each distinct value is returned in RV(progress), and the last one
        is quoted when the wait times out.
    type: str
  failure_grace_period:
    description: Seconds O(failure_condition) must hold without interruption before the task fails.
    type: int
    default: 0
  timeout:
    description: Seconds to wait before failing.
    type: int
    default: 600
  api_missing_ok:
    description:
      - When the kind is not served, treat the objects as absent instead of failing. Useful to wait for an object
        whose CRD an operator is still installing.
    type: bool
    default: false
extends_documentation_fragment:
  - gpudirect.openshift.cluster_connection
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: The module only reads; in check mode it waits the same way.
  diff_mode:
    support: none
  platform:
    support: full
    platforms: posix
requirements:
  - python >= 3.10
  - kubernetes >= 24.2.0
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
    progress: "join(', ', items[?metadata.labels.\"feature.node.kubernetes.io/pci-10de.present\" == 'true'].metadata.name)"

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
  description: The objects as last seen (one element with O(name), possibly none; none with O(count)).
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
    - Each distinct value of the O(progress) expression (with O(count), of the count), in order; the first one and
      the latest ones, at most 20.
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

import traceback

from ansible.module_utils.basic import missing_required_lib

from ansible_collections.kubernetes.core.plugins.module_utils.args_common import AUTH_ARG_SPEC
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.connection import connect
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.core import AnsibleK8SModule
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.exceptions import CoreException
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.client import ClusterError
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.conditions import HAS_JMESPATH, JMESPATH_IMPORT_ERROR
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.waits import DEFAULT_TIMEOUT, WAIT_OPTIONS, WaitFailed, run_wait, wait_error_message


def argument_spec():
    spec = dict(AUTH_ARG_SPEC)
    # The options of one wait entry (as apply_manifests and plan_status take them), without the title,
    # with the defaults shown in this module's documentation.
    spec.update((key, dict(value)) for key, value in WAIT_OPTIONS.items() if key != "title")
    spec["failure_grace_period"]["default"] = 0
    spec["timeout"]["default"] = DEFAULT_TIMEOUT
    spec["api_missing_ok"] = dict(type="bool", default=False)
    return spec


def main():
    module = AnsibleK8SModule(argument_spec=argument_spec(), supports_check_mode=True)
    if not HAS_JMESPATH:
        module.fail_json(msg=missing_required_lib("jmespath"), exception=JMESPATH_IMPORT_ERROR)
    spec = dict((key, module.params[key]) for key in argument_spec() if key not in AUTH_ARG_SPEC)
    try:
        result = run_wait(connect(module), spec)
    except WaitFailed as exc:
        module.fail_json(msg=str(exc), **exc.details)
    except (CoreException, ClusterError) as exc:
        module.fail_from_exception(exc)
    except Exception as exc:  # pylint: disable=broad-except
        module.fail_json(msg=wait_error_message(spec, exc), exception=traceback.format_exc())
    result.pop("title")
    module.exit_json(changed=False, **result)


if __name__ == "__main__":
    main()
