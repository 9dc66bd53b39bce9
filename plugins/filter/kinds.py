# Copyright (c) 2026 gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""managed_kinds: the kinds the collection prunes, from the one list in module_utils/names.py; machineconfig_names: the
names of the MachineConfigs a configuration can have (render/plan.py), read by name since the collection never lists
them;
select_labelled: the objects that match a label selector.

Documentation lives next to this file (managed_kinds.yml, machineconfig_names.yml, select_labelled.yml).
"""


from ansible.errors import AnsibleFilterError

from ansible_collections.gpudirect.openshift.plugins.module_utils.label_selectors import (
    labels_match, parse_label_selector)
from ansible_collections.gpudirect.openshift.plugins.module_utils.plain_data import plain
from ansible_collections.gpudirect.openshift.plugins.module_utils import names
from ansible_collections.gpudirect.openshift.plugins.module_utils.render.plan import owned_machineconfig_names


def managed_kinds(which):
    try:
        return names.managed_kinds(which)
    except ValueError as exc:
        raise AnsibleFilterError(str(exc))


def machineconfig_names(variables):
    if not isinstance(variables, dict):
        raise AnsibleFilterError('machineconfig_names: the input must be a mapping of gpudirect_rdma_* variables')
    return owned_machineconfig_names(plain(variables))


def select_labelled(objects, selector):
    try:
        requirements = parse_label_selector(selector)
    except ValueError as exc:
        raise AnsibleFilterError('select_labelled: %s' % exc)
    return [obj for obj in plain(objects or []) if isinstance(obj, dict)
            and labels_match(requirements, (obj.get('metadata') or {}).get('labels'))]


class FilterModule:
    """Kinds and objects the collection manages."""

    def filters(self):
        return {'managed_kinds': managed_kinds, 'machineconfig_names': machineconfig_names,
                'select_labelled': select_labelled}
