# Copyright (c) 2026 gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""node_group_problems: the node groups of a plan against the nodes their selectors pick.

Documentation lives next to this file (node_group_problems.yml).
"""


from ansible.errors import AnsibleFilterError

from ansible_collections.gpudirect.openshift.plugins.module_utils.render.groups import node_group_problems


def node_group_problems_filter(summary, selected):
    if summary is not None and not isinstance(summary, dict):
        raise AnsibleFilterError(
            'node_group_problems: expects the plan summary (gpudirect_manifests summary), a mapping')
    if selected is not None and not isinstance(selected, list):
        raise AnsibleFilterError(
            'node_group_problems: expects the node groups with their nodes (plan_status node_groups), a list')
    return node_group_problems(summary or {}, selected or [])


class FilterModule:
    """Node group checks against the cluster."""

    def filters(self):
        return {'node_group_problems': node_group_problems_filter}
