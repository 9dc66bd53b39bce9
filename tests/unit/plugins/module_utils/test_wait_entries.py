# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Wait entries: condition or count, the counted view's arithmetic and the capped progress history."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.conditions import HISTORY_LIMIT, note_progress
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
