# Copyright (c) 2026 gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""teardown_leftovers: what a teardown leaves and the operator namespaces it may still remove, from
module_utils/teardown_leftovers.py.

Documentation lives next to this file (teardown_leftovers.yml).
"""


from ansible_collections.gpudirect.openshift.plugins.module_utils import teardown_leftovers as rules
from ansible_collections.gpudirect.openshift.plugins.module_utils.plain_data import plain


def teardown_leftovers(found, operator_namespaces, remove_machineconfigs=False, remove_operators=True,
                       remove_namespaces=False):
    found = plain(found or {})
    namespaces, subscriptions, groups = (found.get("namespaces"), found.get("subscriptions"),
                                         found.get("operator_groups"))
    operator_namespaces = plain(operator_namespaces)
    return {
        "orphaned_namespaces": rules.orphaned_namespaces(namespaces, subscriptions, groups, operator_namespaces),
        "left": rules.leftovers(namespaces, subscriptions, groups, found.get("machineconfigs"), operator_namespaces,
                                remove_machineconfigs=bool(remove_machineconfigs),
                                remove_operators=bool(remove_operators), remove_namespaces=bool(remove_namespaces)),
    }


class FilterModule:
    """What a teardown leaves."""

    def filters(self):
        return {'teardown_leftovers': teardown_leftovers}
