# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Wait entries: condition or count, the counted view's arithmetic and the capped progress history."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.conditions import HISTORY_LIMIT, ConditionFailed, note_progress
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.waits import compile_condition, wait_problems

LABELLED = {"each": "metadata.labels.gpu == 'yes'", "at_least": 2}
NIC = {"each": "metadata.labels.nic == 'yes'", "at_least": 1}


def node(name, gpu, nic="yes"):
    return {"metadata": {"name": name, "labels": {"gpu": gpu, "nic": nic}}}


def test_an_entry_needs_exactly_one_of_condition_and_count():
    base = {"api_version": "v1", "kind": "Node"}
    assert wait_problems([dict(base, condition="items", count=[LABELLED])]) == [
        "waits[0] needs exactly one of condition (over the listed objects) and count (per object)"]
    assert wait_problems([dict(base)])[0].startswith("waits[0] needs exactly one")
    assert wait_problems([dict(base, count=[LABELLED], progress="x")]) == [
        "waits[0].count counts many objects, one event at a time; drop progress"]
    assert "waits[0].count[1].each is not a valid JMESPath expression" in wait_problems([dict(base, count=[NIC, {"each": "=="}])])[0]
    assert wait_problems([dict(base, count=[LABELLED, NIC])]) == []


def test_counts_follow_additions_changes_and_deletions():
    condition = compile_condition({"kind": "Node", "count": [LABELLED, NIC]})
    condition.reset([node("a", "yes"), node("b", "no", "no")])
    assert condition.state() == {"counted": [1, 1], "selected": 2} and not condition()
    condition.apply("MODIFIED", node("b", "yes", "no"))
    assert condition() and condition.settled()
    condition.apply("MODIFIED", node("b", "no"))  # back: a stale count would still hold here
    assert condition.state() == {"counted": [1, 2], "selected": 2} and not condition()
    condition.apply("DELETED", node("a", "yes"))
    assert condition.state() == {"counted": [0, 1], "selected": 1}
    assert condition.evaluations == 8  # two counters, four objects or events


def test_all_selected_needs_every_selected_object_and_at_least_one():
    condition = compile_condition({"kind": "Node", "count": [dict(LABELLED, at_least=0, all=True)]})
    condition.reset([])
    assert not condition()
    condition.reset([node("a", "yes"), node("b", "no")])
    assert not condition() and condition.not_counted(20) == ["b"] and not condition.settled()
    condition.apply("MODIFIED", node("b", "yes"))
    assert condition() and not condition.settled()  # every selected object: only the whole list can tell


def test_progress_history_keeps_the_first_and_the_latest_texts():
    history = []
    for i in range(1000):
        note_progress(history, "%d of 1000" % i)
    assert len(history) == HISTORY_LIMIT and history[0] == "0 of 1000" and history[-1] == "999 of 1000"
    note_progress(history, "999 of 1000")
    assert len(history) == HISTORY_LIMIT


def test_per_object_options_go_with_count_and_a_maximum_cannot_be_below_the_minimum():
    base = {"api_version": "v1", "kind": "Node"}
    assert wait_problems([dict(base, condition="items", each_progress="metadata.name")]) == [
        "waits[0].each_progress goes with count (it is over one object); with condition use progress"]
    assert wait_problems([dict(base, count=[dict(NIC, at_most=0)])]) == [
        "waits[0].count[0]: at_most (0) is below at_least (1); give at_least: 0 for a maximum alone"]
    assert wait_problems([dict(base, count=[LABELLED], each_failure_message="metadata.name")]) == [
        "waits[0].each_failure_message needs each_failure_condition"]
    assert "waits[0].each_progress is not a valid JMESPath expression" in wait_problems([dict(base, count=[LABELLED], each_progress="==")])[0]


def test_a_maximum_alone_holds_on_no_object_and_names_the_objects_that_exceed_it():
    condition = compile_condition({"kind": "Node", "count": [dict(NIC, at_least=0, at_most=0)]})
    condition.reset([])
    assert condition() and not condition.monotone() and not condition.settled()
    condition.reset([node("a", "yes", "no"), node("b", "yes", "yes")])
    assert not condition() and condition.not_counted(20) == ["b"]  # b counts, and a maximum of 0 allows none
    condition.apply("MODIFIED", node("b", "yes", "no"))
    assert condition()


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_per_object_failure_and_progress_are_kept_by_object_and_joined_in_name_order():
    clock = Clock()
    condition = compile_condition({"kind": "Node", "count": [dict(LABELLED, at_least=1, all=True)], "failure_grace_period": 10,
                                   "each_failure_condition": "metadata.labels.broken", "each_failure_message": "metadata.labels.broken",
                                   "each_progress": "join(': ', [metadata.name, metadata.labels.gpu])"}, clock=clock)
    broken = node("b", "no")
    broken["metadata"]["labels"]["broken"] = "driver failed"
    condition.reset([node("c", "yes"), broken, node("a", "no")])
    assert not condition() and condition.history == ["a: no, b: no, c: yes"]
    assert condition.recheck_at() == 10.0  # the grace period started with the first failing object
    clock.t = 5.0
    condition.apply("MODIFIED", node("b", "no"))  # b recovered: the grace period starts over
    assert not condition() and condition.recheck_at() is None
    condition.apply("MODIFIED", broken)
    assert not condition() and condition.recheck_at() == 15.0
    clock.t = 15.0
    try:
        condition()
        raise AssertionError("the failure outlasted its grace period")
    except ConditionFailed as exc:
        assert str(exc) == "driver failed" and [o["metadata"]["name"] for o in exc.state] == ["b"]
    condition.apply("DELETED", broken)
    condition.apply("MODIFIED", node("a", "yes"))
    assert condition() and condition.history[-1] == "a: yes, c: yes"
