# -*- coding: utf-8 -*-
# Copyright (c) 2026 gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""misspelt_variables and role_argument_spec: the variable names and types the collection reads, from
module_utils/variable_names.py.

Documentation lives next to this file (misspelt_variables.yml, role_argument_spec.yml).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.openshift.plugins.module_utils import variable_names
from ansible_collections.gpudirect.openshift.plugins.module_utils.plain_data import plain


def misspelt_variables(given, roles_dir):
    argument_specs, defaults = variable_names.read_roles(str(roles_dir))
    known = variable_names.known_variables(variable_names.role_options(argument_specs, defaults))
    return variable_names.misspelt_messages([str(name) for name in plain(given or [])], known)


def role_argument_spec(roles_dir):
    return variable_names.merged_options(variable_names.read_roles(str(roles_dir))[0])


class FilterModule(object):
    """Variable names and types of the collection."""

    def filters(self):
        return {'misspelt_variables': misspelt_variables, 'role_argument_spec': role_argument_spec}
