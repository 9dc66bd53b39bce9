# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    # The entries of a ``waits`` option (module_utils/cluster/waits.py WAIT_OPTIONS). A module that extends this
    # fragment documents ``waits`` itself (description, type, default); the fragment adds the suboptions.
    DOCUMENTATION = r"""
options:
  waits:
    description: Readiness conditions.
    type: list
    elements: dict
    suboptions:
      title:
        description: What the condition is about, for messages and results.
        type: str
      api_version:
        description: API version of the objects.
        type: str
        required: true
      kind:
        description: Kind of the objects.
        type: str
        required: true
      name:
        description: 'One object, seen by the condition as the document; without it the condition sees C({"items": [...]}).'
        type: str
      namespace:
        description: Namespace of the objects; without it all namespaces.
        type: str
      label_selectors:
        description: Label selectors the listed objects must match.
        type: list
        elements: str
        default: []
      condition:
        description: JMESPath expression that holds when the objects are ready; each entry has this or O(waits[].count).
        type: str
      count:
        description:
          - Instead of O(waits[].condition), counters over the listed objects; the wait holds when every counter holds.
            One event evaluates the counters on one object, so the work per event does not grow with the number of
            objects. Without O(waits[].name) only.
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
        description: JMESPath expression that holds when the objects report a failure.
        type: str
      failure_message:
        description: JMESPath expression giving the text to quote when the failure condition holds.
        type: str
      progress:
        description: JMESPath expression giving a progress text, quoted when the condition does not hold in time.
        type: str
      timeout:
        description: Seconds to wait; unset means 600. Not used by M(gpudirect.openshift.plan_status), which does not wait.
        type: int
      failure_grace_period:
        description:
          - Seconds the failure condition must hold without interruption before the wait fails; unset means 0.
          - Not used by M(gpudirect.openshift.plan_status), which does not wait.
        type: int
"""
