# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The preflight rules (plugins/module_utils/rules/preflight.py) on YAML fixtures.

fixtures/preflight/base.yaml is a cluster every rule passes, as plan_status reads it; each other file is named after
the rule it exercises and changes pieces of the base, case by case, listing the exact sentences preflight returns
(the same ones the preflight role stops with). Every rule has a file with a case that passes and one that fails."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import glob
import inspect
import os

import pytest
import yaml

from ansible_collections.gpudirect.openshift.plugins.module_utils.rules import preflight

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "preflight")
# Rules made of other rules: their parts have the fixtures.
COMPOSITES = {"problems", "each_operator_problems"}


def load(name):
    with open(os.path.join(FIXTURES, name + ".yaml")) as handle:
        return yaml.safe_load(handle)


BASE = load("base")


def merged(base, change):
    """base with change on top: mappings key by key, anything else replaced."""
    if not isinstance(base, dict) or not isinstance(change, dict):
        return copy.deepcopy(change)
    out = copy.deepcopy(base)
    for key, value in change.items():
        out[key] = merged(base.get(key), value) if key in base else copy.deepcopy(value)
    return out


def rule_files():
    return sorted(os.path.basename(p)[:-5] for p in glob.glob(os.path.join(FIXTURES, "*.yaml")) if not p.endswith("base.yaml"))


def cases():
    for rule in ["base"] + rule_files():
        for case in load(rule)["cases"]:
            yield pytest.param(rule, case, id="%s: %s" % (rule, case["name"]))


@pytest.mark.parametrize("rule, case", list(cases()))
def test_preflight_says_exactly_this(rule, case):
    found = preflight.problems(merged(BASE["snapshot"], case.get("snapshot") or {}), merged(BASE["plan"], case.get("plan") or {}),
                               merged(BASE["settings"], case.get("settings") or {}))
    assert found == case["problems"]


def test_every_rule_has_a_passing_and_a_failing_fixture():
    rules = sorted(name for name, value in vars(preflight).items()
                   if name.endswith("_problems") and inspect.isfunction(value) and value.__module__ == preflight.__name__
                   and name not in COMPOSITES)
    assert rule_files() == rules
    for rule in rules:
        outcomes = [bool(case["problems"]) for case in load(rule)["cases"]]
        assert True in outcomes and False in outcomes, rule


def test_num_vfs_that_is_not_a_count_is_refused_naming_the_variable():
    with pytest.raises(ValueError, match="gpudirect_rdma_num_vfs must be a count"):
        preflight.problems(BASE["snapshot"], BASE["plan"], dict(BASE["settings"], num_vfs="eight"))


def test_the_support_table_defaults_to_the_catalogues():
    from ansible_collections.gpudirect.openshift.plugins.module_utils import catalogue

    old = merged(BASE["snapshot"], {"cluster": {"openshift": {"version": "4.15.0"}}})
    assert preflight.problems(old, BASE["plan"], BASE["settings"]) == preflight.problems(
        old, BASE["plan"], dict(BASE["settings"], support_table=catalogue.SUPPORT_TABLE))
    assert preflight.problems(old, BASE["plan"], dict(BASE["settings"], support_table={"4.15": {}})) == []
