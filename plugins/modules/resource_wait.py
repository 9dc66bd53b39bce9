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
    type: str
    required: true
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
  - kubernetes.core.k8s_auth_options
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
"""

RETURN = r"""
resources:
  description: The objects as last seen (one element with O(name), possibly none).
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
  description: Each distinct value of the O(progress) expression, in order.
  returned: always
  type: list
  elements: str
  sample: ["0/2 nodes updated", "1/2 nodes updated", "2/2 nodes updated"]
"""

import time
import traceback

from ansible.module_utils.basic import missing_required_lib
from ansible_collections.kubernetes.core.plugins.module_utils.args_common import AUTH_ARG_SPEC
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import get_api_client
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.core import AnsibleK8SModule
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.exceptions import CoreException
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.client import ClusterClient, ClusterError, api_message
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.conditions import (
    HAS_JMESPATH,
    JMESPATH_IMPORT_ERROR,
    Condition,
    ConditionError,
    ConditionFailed,
    compile_expression,
)
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.waiter import WaitTimeout, wait_for


def argument_spec():
    spec = dict(AUTH_ARG_SPEC)
    spec.update(
        api_version=dict(type="str", required=True),
        kind=dict(type="str", required=True),
        name=dict(type="str"),
        namespace=dict(type="str"),
        label_selectors=dict(type="list", elements="str", default=[]),
        condition=dict(type="str", required=True),
        failure_condition=dict(type="str"),
        failure_message=dict(type="str"),
        progress=dict(type="str"),
        failure_grace_period=dict(type="int", default=0),
        timeout=dict(type="int", default=600),
        api_missing_ok=dict(type="bool", default=False),
    )
    return spec


def _as_list(state, single):
    if single:
        return [state] if state else []
    return list(state or [])


def main():
    module = AnsibleK8SModule(argument_spec=argument_spec(), supports_check_mode=True)
    if not HAS_JMESPATH:
        module.fail_json(msg=missing_required_lib("jmespath"), exception=JMESPATH_IMPORT_ERROR)
    params = module.params
    single = bool(params["name"])
    what = "%s %s" % (params["kind"], params["name"] or "objects")
    try:
        condition = Condition(
            success=compile_expression("condition", params["condition"]),
            failure=compile_expression("failure_condition", params["failure_condition"]),
            failure_message=compile_expression("failure_message", params["failure_message"]),
            progress=compile_expression("progress", params["progress"]),
            grace=params["failure_grace_period"],
            single=single,
            clock=time.monotonic,
        )
    except ConditionError as exc:
        module.fail_json(msg=str(exc))

    try:
        cluster = ClusterClient(get_api_client(module))
        resource = cluster.resource(params["api_version"], params["kind"])
        if resource is None:
            if not params["api_missing_ok"]:
                module.fail_json(msg="The API server does not serve %s %s; is the operator that owns it installed?" % (
                    params["api_version"], params["kind"]))
            if condition(None):
                module.exit_json(changed=False, resources=[], elapsed=0.0, events=0, progress=condition.history)
            module.fail_json(msg="%s %s is not served, so %s cannot become ready" % (params["api_version"], params["kind"], what))
        result = wait_for(
            cluster, resource, condition, name=params["name"], namespace=params["namespace"],
            label_selector=",".join(params["label_selectors"]) or None, timeout=params["timeout"],
            recheck_at=condition.recheck_at)
    except ConditionFailed as exc:
        module.fail_json(msg="%s reports a failure: %s" % (what, exc), resources=_as_list(exc.state, single), progress=condition.history)
    except WaitTimeout as exc:
        last = (" Last progress: %s." % condition.history[-1]) if condition.history else ""
        module.fail_json(msg="%s did not satisfy %s within %d s.%s" % (what, params["condition"], params["timeout"], last),
                         resources=_as_list(exc.state, single), elapsed=exc.elapsed, progress=condition.history)
    except (CoreException, ClusterError) as exc:
        module.fail_from_exception(exc)
    except Exception as exc:  # pylint: disable=broad-except
        module.fail_json(msg="Waiting for %s failed: %s" % (what, api_message(exc)), exception=traceback.format_exc())
    module.exit_json(changed=False, resources=_as_list(result.state, single), elapsed=round(result.elapsed, 3),
                     events=result.events, progress=condition.history)


if __name__ == "__main__":
    main()
