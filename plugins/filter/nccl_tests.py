# Copyright (c) 2025 gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters over nccl-tests output: nccl_tests_parse, nccl_allreduce_evaluate; nccl_rails for its input.

Documentation of each filter lives next to this file (nccl_tests_parse.yml, nccl_allreduce_evaluate.yml,
nccl_rails.yml).
"""


from ansible.errors import AnsibleFilterError
from ansible.module_utils.common.text.converters import to_text

from ansible_collections.gpudirect.openshift.plugins.module_utils.plain_data import plain
from ansible_collections.gpudirect.openshift.plugins.module_utils.render.workload import rails_from_plan
from ansible_collections.gpudirect.openshift.plugins.module_utils.verify.nccl_tests_output import (
    NcclTestsParseError,
    evaluate_allreduce,
    parse_nccl_tests_output,
)


def nccl_tests_parse(output, require_results=True, collective=None):
    """Parse the text printed by all_reduce_perf (or another nccl-tests binary) into a dict (bandwidth in GB/s)."""
    if output is None:
        raise AnsibleFilterError('nccl_tests_parse: no nccl-tests output (got None)')
    if isinstance(output, (list, tuple)):
        output = '\n'.join(to_text(line) for line in output)
    try:
        return parse_nccl_tests_output(to_text(output, errors='surrogate_or_strict'),
                                       require_results=bool(require_results), collective=plain(collective))
    except NcclTestsParseError as exc:
        raise AnsibleFilterError('nccl_tests_parse: %s' % exc)


def nccl_allreduce_evaluate(parsed, rail_rates_gbps, threshold=0, message_size=None, min_nodes=2):
    """Judge a parsed all_reduce_perf run against the calibrated range of its rails (threshold 0) or threshold x their
    sum."""
    try:
        return evaluate_allreduce(plain(parsed), plain(rail_rates_gbps), plain(threshold), plain(message_size),
                                  plain(min_nodes))
    except (NcclTestsParseError, TypeError, ValueError, KeyError) as exc:
        raise AnsibleFilterError('nccl_allreduce_evaluate: %s' % exc)


def nccl_rails(summary, nic_ports=None, gpu_nic_affinity=None, namespace=None):
    """The rails of a rendered plan as nccl_allreduce takes them: networks, resources, rates and RDMA devices."""
    try:
        return rails_from_plan(plain(summary), plain(nic_ports), plain(gpu_nic_affinity), plain(namespace) or None)
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise AnsibleFilterError('nccl_rails: %s' % exc)


class FilterModule:
    """nccl-tests output filters."""

    def filters(self):
        return {
            'nccl_tests_parse': nccl_tests_parse,
            'nccl_allreduce_evaluate': nccl_allreduce_evaluate,
            'nccl_rails': nccl_rails,
        }
