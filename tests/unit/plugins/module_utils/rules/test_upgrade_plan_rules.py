# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The upgrade planning rules (plugins/module_utils/rules/upgrade_plan.py) on YAML fixtures.

Each file under fixtures/upgrade_plan is one situation: what plan_status read (operator_versions, the cluster summary),
the operators' settings, the operand images rendered for the installed and the offered versions, and what the
operators run afterwards; ``expected`` holds what each rule must return (the sentences byte for byte)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import os

import pytest
import yaml

from ansible_collections.gpudirect.openshift.plugins.filter.upgrade import upgrade_outcome, upgrade_plan_report
from ansible_collections.gpudirect.openshift.plugins.module_utils.rules import upgrade_plan

FIXTURES = sorted(glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "upgrade_plan", "*.yaml")))


def load(path):
    with open(path) as handle:
        return yaml.safe_load(handle)


def outputs(given):
    """Every rule's answer for one situation, in the order the preflight role asks."""
    plan = upgrade_plan.planned_upgrades(given["operator_versions"], given["operators"], given["operator_roles"], given["packages"])
    automatic = upgrade_plan.automatic_packages(given["operators"])
    changes = upgrade_plan.upgrade_changes(plan, given["images_before"], given["images_after"], given["cluster_summary"],
                                           given["max_parallel"])
    outcome = upgrade_plan.upgrade_outcome(plan, given["operator_versions_after"])
    return {
        "plan": plan, "automatic": automatic, "operand_versions": upgrade_plan.operand_versions(plan), "changes": changes,
        "lines": upgrade_plan.plan_lines(given["host"], plan, changes, automatic), "next_step": upgrade_plan.next_step(plan),
        "targets": upgrade_plan.upgrade_targets(plan),
        "outcome_done": dict((o["package"], [o["installed_now"], o["done"]]) for o in outcome),
        "keep_these_pins": upgrade_plan.pins_to_keep(plan), "upgraded_line": upgrade_plan.upgraded_line(outcome),
    }


@pytest.mark.parametrize("path", FIXTURES, ids=[os.path.basename(p)[:-5] for p in FIXTURES])
def test_upgrade_planning_says_exactly_this(path):
    fixture = load(path)
    found = outputs(fixture["inputs"])
    assert dict((key, found[key]) for key in fixture["expected"]) == fixture["expected"]


def test_every_rule_is_checked_with_an_upgrade_and_without():
    expectations = [load(p)["expected"] for p in FIXTURES]
    rules = set(outputs(load(FIXTURES[0])["inputs"]))
    assert rules == set().union(*expectations)
    assert any(e["plan"] for e in expectations) and any(not e["plan"] for e in expectations)


def test_the_filters_read_plan_status_and_the_two_renders():
    given = load(FIXTURES[[os.path.basename(p) for p in FIXTURES].index("two_offers.yaml")])
    inputs, expected = given["inputs"], given["expected"]
    status = {"upgrade_plan": expected["plan"], "upgrade_automatic": expected["automatic"],
              "cluster": {"summary": inputs["cluster_summary"]}}
    renders = [{"item": "before", "images": [{"image": i} for i in inputs["images_before"]]},
               {"item": "after", "images": [{"image": i} for i in inputs["images_after"]]}]
    report = upgrade_plan_report(status, renders, inputs["host"], inputs["max_parallel"])
    assert report["lines"] == expected["lines"] and report["changes"] == expected["changes"]
    assert report["targets"] == expected["targets"] and report["next_step"] == expected["next_step"]
    # Nothing planned: the render task was skipped, its results carry no images.
    skipped = upgrade_plan_report(dict(status, upgrade_plan=[]), [{"skipped": True}, {"skipped": True}], "lab")
    assert skipped["changes"]["images_added"] == [] and skipped["lines"][0].startswith("No operator upgrade is offered on lab")
    done = upgrade_outcome(expected["plan"], {"operator_versions": inputs["operator_versions_after"]})
    assert done["keep_these_pins"] == expected["keep_these_pins"] and done["line"] == expected["upgraded_line"]
    assert [(o["package"], o["done"]) for o in done["operators"]] == [("nvidia-network-operator", True), ("gpu-operator-certified", False)]
