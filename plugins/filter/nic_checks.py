# Copyright (c) 2026 gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""reported_nic_problems: the NIC variables against what the SR-IOV config daemons report, or the hardware facts.

Documentation lives next to this file (reported_nic_problems.yml).
"""


from ansible.errors import AnsibleFilterError

from ansible_collections.gpudirect.openshift.plugins.module_utils.render.reported import (
    FACTS_SOURCE,
    facts_as_reports,
    reported_nic_problems,
)


def reported_nic_problems_filter(summary, node_states, num_vfs=None, from_facts=False):
    if summary is not None and not isinstance(summary, dict):
        raise AnsibleFilterError(
            'reported_nic_problems: expects the plan summary (gpudirect_manifests summary), a mapping')
    if node_states is not None and not isinstance(node_states, list):
        raise AnsibleFilterError('reported_nic_problems: node_states must be a list of SriovNetworkNodeStates')
    if num_vfs not in (None, '') and not str(num_vfs).isdigit():
        raise AnsibleFilterError('reported_nic_problems: num_vfs must be a count, got %r' % (num_vfs,))
    num_vfs = int(num_vfs) if num_vfs not in (None, '') else None
    if from_facts:
        return reported_nic_problems(summary or {}, facts_as_reports(node_states), num_vfs, source=FACTS_SOURCE)
    return reported_nic_problems(summary or {}, node_states or [], num_vfs)


class FilterModule:
    """NIC input checks against the cluster."""

    def filters(self):
        return {'reported_nic_problems': reported_nic_problems_filter}
