# Copyright (c) 2026 gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
name: input_lookups
version_added: 0.1.0
author: gpudirect.openshift maintainers (@gpudirect)
short_description: The input variables whose values call a lookup, found without evaluating them
description:
  - Reads the raw values of the play's C(gpudirect_rdma_*) variables (and of the names given as terms), before
    Ansible templates them, and returns one problem sentence per variable whose value holds a Jinja expression or
    statement that calls C(lookup), C(query) or C(q).
  - Such a value would run a lookup plugin on the controller (C(pipe) runs a command, C(file) reads a file) as soon as
    any task used it, and a validation error would then show its output. The sentences name the variable only; they
    never contain the value, evaluated or not.
  - References to other variables and filters (C("{{ hardware_facts_nic_ports }}")) are not refused.
options:
  _terms:
    description: Further variable names to check besides the C(gpudirect_rdma_*) ones.
    type: list
    elements: str
    required: false
"""

EXAMPLES = r"""
- name: Refuse input that would run a lookup on the controller, before any task evaluates it
  ansible.builtin.assert:
    that: query('gpudirect.openshift.input_lookups') | length == 0
    quiet: true
    fail_msg: "{{ query('gpudirect.openshift.input_lookups') }}"
"""

RETURN = r"""
_raw:
  description: One sentence per refused variable, naming it and the fix; empty when none calls a lookup.
  type: list
  elements: str
"""

import re

from ansible.plugins.lookup import LookupBase

PREFIX = "gpudirect_rdma_"
# A Jinja expression or statement ({{ ... }}, {% ... %}) that calls a lookup plugin: lookup(...), query(...), q(...).
_BLOCK = re.compile(r"{{.*?}}|{%.*?%}", re.S)
_CALL = re.compile(r"(?<![\w.])(lookup|query|q)\s*\(")


def calls_lookup(value):
    """True when a string, or any string inside lists and mappings (keys included), holds Jinja calling a lookup."""
    if isinstance(value, str):
        return any(_CALL.search(block) for block in _BLOCK.findall(value))
    if isinstance(value, dict):
        return any(calls_lookup(k) or calls_lookup(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return any(calls_lookup(item) for item in value)
    return False


def lookup_problems(raw_variables, names=()):
    """One sentence per variable (gpudirect_rdma_* and `names`) whose raw value calls a lookup; the value never
    shown."""
    wanted = sorted({name for name in raw_variables
                     if str(name).startswith(PREFIX)} | {n for n in names if n in raw_variables})
    return ["%s: the value holds Jinja that calls a lookup (it would run on the controller before it could be "
            "checked); give the value itself (a string, list or mapping), not a lookup." % name
            for name in wanted if calls_lookup(raw_variables[name])]


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        # The variables a lookup receives are not templated yet (the vars lookup templates them on demand).
        return lookup_problems(variables or {}, [str(term) for term in terms or []])
