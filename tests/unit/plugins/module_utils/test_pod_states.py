# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one vocabulary of pod states (module_utils/verify/pod_states.py) that facts and bandwidth-test pods share."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import random

from ansible_collections.gpudirect.openshift.plugins.module_utils.verify import pod_states as ps


def _pod(phase, conditions=None, statuses=None):
    return {"metadata": {"name": "p"}, "status": {"phase": phase, "conditions": conditions or [], "containerStatuses": statuses or []}}


NOT_SCHEDULED = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "node x not found"}
PULLING = _pod("Pending", statuses=[{"state": {"waiting": {"reason": "ImagePullBackOff", "message": "no such image"}}}])


def test_a_terminated_container_is_a_failure_with_its_exit_code_and_message():
    assert ps.pod_failure(_pod("Succeeded")) is None
    assert ps.pod_failure(_pod("Running")) is None
    failed = _pod("Failed", statuses=[{"state": {"terminated": {"exitCode": 1, "reason": "Error", "message": "boom"}}}])
    assert ps.pod_failure(failed) == "pod failed: exit code 1 (Error): boom"
    assert ps.pod_state_text(failed) == "Failed (exit code 1, Error)"


def test_pending_problems_fail_only_after_the_grace_period_quoting_the_kubelet():
    assert ps.pending_problem(PULLING) == ("ImagePullBackOff", "no such image")
    assert ps.pod_failure(PULLING, problem_for=None, grace=60) is None
    assert ps.pod_failure(PULLING, problem_for=59, grace=60) is None
    assert ps.pod_failure(PULLING, problem_for=60, grace=60) == "container cannot start: ImagePullBackOff: no such image"
    assert ps.pod_state_text(PULLING) == "Pending (ImagePullBackOff: no such image)"


def test_reasons_that_never_clear_fail_at_once_and_pinned_pods_may_fail_unschedulable_at_once():
    bad_image = _pod("Pending", statuses=[{"state": {"waiting": {"reason": "InvalidImageName", "message": "x"}}}])
    assert ps.pod_failure(bad_image, problem_for=0, grace=60) == "container cannot start: InvalidImageName: x"
    unschedulable = _pod("Pending", conditions=[NOT_SCHEDULED])
    assert ps.pod_failure(unschedulable, problem_for=0, grace=60) is None
    assert ps.pod_failure(unschedulable, problem_for=0, grace=60, fail_at_once=("Unschedulable",)) == \
        "pod cannot be scheduled: node x not found"
    assert ps.pending_problem({"status": {"phase": "Running"}}) is None


def test_run_ids_are_short_and_differ():
    rng = random.Random(1)
    ids = set(ps.new_run_id(rng) for _draw in range(50))
    assert len(ids) == 50 and all(len(i) == 5 and i.isalnum() for i in ids)
