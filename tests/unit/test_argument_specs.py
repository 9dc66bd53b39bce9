# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The role argument specs carry the input model: same names, types and choices as input_fields.FIELDS."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import subprocess
import sys

import yaml

from ansible_collections.gpudirect.openshift.plugins.module_utils import names
from ansible_collections.gpudirect.openshift.plugins.module_utils.render import input_fields

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TYPES = {"str": "str", "int": "int", "bool": "bool", "list": "list", "dict": "dict", "dictlist": "list", "intorstr": "raw"}


def specs(role):
    with open(os.path.join(ROOT, "roles", role, "meta", "argument_specs.yml")) as handle:
        return yaml.safe_load(handle)["argument_specs"]


def test_generated_options_are_up_to_date():
    result = subprocess.run([sys.executable, os.path.join(ROOT, "hack", "gen_argument_specs.py"), "--check"],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_model_field_is_an_option_with_its_type_and_choices():
    for role, entry in (("preflight", "main"), ("rdma", "main"), ("rdma", "prune")):
        options = specs(role)[entry]["options"]
        for field, spec in input_fields.FIELDS.items():
            option = options[names.variable(field)]
            if option["type"] == "raw" and spec.kind not in ("intorstr", "dictlist"):
                # only optional fields without a fixed default, so AWX's blank answers pass; the model checks them
                assert spec.default is None or callable(spec.default), (role, field)
                continue
            assert option["type"] == ("raw" if spec.kind == "dictlist" else TYPES[spec.kind]), (role, field)
            assert option.get("choices") == (list(spec.choices) if spec.choices else None), (role, field)
            if spec.default is not None and not callable(spec.default) and spec.kind != "dictlist":
                assert option["default"] == spec.default, (role, field)
        rdma_options = [name for name in options if name.startswith(names.VARIABLE_PREFIX)]
        assert sorted(rdma_options) == sorted(names.variable(f) for f in input_fields.FIELDS), role
