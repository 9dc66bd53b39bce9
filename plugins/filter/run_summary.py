# Copyright (c) 2026 gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""run_summary: the lines site.yml ends with (module_utils/rules/summary.py).

Documentation lives next to this file (run_summary.yml).
"""


from ansible.errors import AnsibleFilterError

from ansible_collections.gpudirect.openshift.plugins.module_utils.rules.summary import run_summary


def run_summary_filter(operator_results, host="", cluster_source="", cluster=None, check_mode=False, in_sync=False,
                       plan_summary=None, method="shared_device", fabric="roce", nic_interfaces=None,
                       nic_pci_addresses=None, nic_facts=None):
    if operator_results is not None and not isinstance(operator_results, list):
        raise AnsibleFilterError("run_summary: expects the registered results of the operator roles, a list")
    return run_summary(host, cluster_source, cluster, check_mode, in_sync, operator_results, plan_summary=plan_summary,
                       method=method, fabric=fabric, nic_interfaces=nic_interfaces, nic_pci_addresses=nic_pci_addresses,
                       nic_facts=nic_facts)


class FilterModule:
    """The run's summary."""

    def filters(self):
        return {"run_summary": run_summary_filter}
