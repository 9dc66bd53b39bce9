# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lines site.yml ends with (plugins/module_utils/rules/summary.py, through the run_summary filter) on the runs of
fixtures/summary/runs.yaml."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest
import yaml

from ansible_collections.gpudirect.openshift.plugins.filter.run_summary import run_summary_filter

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "summary", "runs.yaml")) as handle:
    RUNS = yaml.safe_load(handle)


@pytest.mark.parametrize("case", RUNS["cases"], ids=[c["name"] for c in RUNS["cases"]])
def test_site_ends_with_these_lines(case):
    given = dict(RUNS["defaults"], **case["given"])
    assert run_summary_filter(given.pop("operator_results"), **given) == case["lines"]
