# Copyright (c) 2026 gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""misspelt_variables and role_argument_spec: the variable names and types the collection reads, from
module_utils/variable_names.py.

Documentation lives next to this file (misspelt_variables.yml, role_argument_spec.yml).
"""


import glob
import os

import yaml

from ansible_collections.gpudirect.openshift.plugins.module_utils import variable_names
from ansible_collections.gpudirect.openshift.plugins.module_utils.plain_data import plain


def read_roles(roles_dir):
    """(argument_specs, variables): the parsed meta/argument_specs.yml documents, and defaults/main.yml and
    vars/main.yml documents, of every role in ``roles_dir`` (the collection's roles/), sorted by role; the last of
    the variables is a mapping whose keys are the prefixed names the roles' tasks and the playbooks use."""
    def documents(pattern):
        found = []
        for path in sorted(glob.glob(os.path.join(roles_dir, "*", pattern))):
            with open(path, encoding="utf-8") as stream:
                found.append(yaml.safe_load(stream) or {})
        return found
    # The names the roles and playbooks set or register themselves (facts, results): never the user's typo.
    used = {}
    for path in glob.glob(os.path.join(roles_dir, "*", "tasks", "*.yml")) + glob.glob(
            os.path.join(os.path.dirname(os.path.abspath(roles_dir)), "playbooks", "*.yml")):
        with open(path, encoding="utf-8") as stream:
            used.update((name, None) for name in variable_names.USED_NAME.findall(stream.read()))
    return (documents(os.path.join("meta", "argument_specs.yml")),
            documents(os.path.join("defaults", "main.yml")) + documents(os.path.join("vars", "main.yml")) + [used])


def misspelt_variables(given, roles_dir):
    argument_specs, defaults = read_roles(str(roles_dir))
    known = variable_names.known_variables(variable_names.role_options(argument_specs, defaults))
    return variable_names.misspelt_messages([str(name) for name in plain(given or [])], known)


def role_argument_spec(roles_dir):
    return variable_names.merged_options(read_roles(str(roles_dir))[0])


class FilterModule:
    """Variable names and types of the collection."""

    def filters(self):
        return {'misspelt_variables': misspelt_variables, 'role_argument_spec': role_argument_spec}
