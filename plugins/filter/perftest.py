# Copyright (c) 2025 gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters over perftest output: ib_write_bw_parse, ib_write_bw_evaluate, perftest_diagnose.

Documentation of each filter lives next to this file (ib_write_bw_parse.yml and friends).
"""


from ansible.errors import AnsibleFilterError
from ansible.module_utils.common.text.converters import to_text

from ansible_collections.gpudirect.openshift.plugins.module_utils.plain_data import plain
from ansible_collections.gpudirect.openshift.plugins.module_utils.verify.perftest_output import (
    PerftestParseError,
    evaluate_bw,
    parse_bw_output,
)
from ansible_collections.gpudirect.openshift.plugins.module_utils.verify.perftest_diagnosis import diagnose


def ib_write_bw_parse(output, require_results=True):
    """Parse the text printed by ib_write_bw/ib_read_bw/ib_send_bw into a dict (bandwidth in Gb/s)."""
    if output is None:
        raise AnsibleFilterError('ib_write_bw_parse: no perftest output (got None)')
    if isinstance(output, (list, tuple)):
        # stdout_lines of a registered command result
        output = '\n'.join(to_text(line) for line in output)
    try:
        return parse_bw_output(to_text(output, errors='surrogate_or_strict'), require_results=bool(require_results))
    except PerftestParseError as exc:
        raise AnsibleFilterError('ib_write_bw_parse: %s' % exc)


def ib_write_bw_evaluate(parsed, link_rate_gbps, threshold=0.8, message_size=None):
    """Judge a parsed run against threshold * link rate."""
    try:
        return evaluate_bw(plain(parsed), plain(link_rate_gbps), plain(threshold), plain(message_size))
    except PerftestParseError as exc:
        raise AnsibleFilterError('ib_write_bw_evaluate: %s' % exc)
    except (TypeError, ValueError, KeyError) as exc:
        raise AnsibleFilterError('ib_write_bw_evaluate: %s' % exc)


def perftest_diagnose(data=None, log=None, phase=None, reason=None, message=None, events=None, timed_out=False,
                      evaluation=None, pod=None):
    """Diagnose a perftest run from its log text and/or pod state."""
    data = plain(data)
    if isinstance(data, dict):
        if 'status' in data or data.get('kind') == 'Pod':
            pod = pod or data
        else:
            log = log if log is not None else data.get('log')
            phase = phase or data.get('phase')
            reason = reason or data.get('reason')
            message = message or data.get('message')
            events = events or data.get('events')
            timed_out = timed_out or bool(data.get('timed_out'))
            evaluation = evaluation or data.get('evaluation')
            pod = pod or data.get('pod')
    elif isinstance(data, list):
        log = '\n'.join(to_text(line) for line in data) if log is None else log
    elif data is not None:
        log = to_text(data) if log is None else log
    if isinstance(log, list):
        log = '\n'.join(to_text(line) for line in log)
    if log is not None and not isinstance(log, str):
        raise AnsibleFilterError('perftest_diagnose: log must be text, got %s' % type(log).__name__)
    try:
        return diagnose(log=log, phase=plain(phase), reason=plain(reason), message=plain(message),
                        events=plain(events), timed_out=bool(timed_out), evaluation=plain(evaluation),
                        pod=plain(pod))
    except (TypeError, ValueError, AttributeError) as exc:
        raise AnsibleFilterError('perftest_diagnose: %s' % exc)


class FilterModule:
    """perftest output filters."""

    def filters(self):
        return {
            'ib_write_bw_parse': ib_write_bw_parse,
            'ib_write_bw_evaluate': ib_write_bw_evaluate,
            'perftest_diagnose': perftest_diagnose,
        }
