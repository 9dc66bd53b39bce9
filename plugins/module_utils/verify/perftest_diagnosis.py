# Copyright (c) 2025 gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Diagnose a failed perftest run: pod state, events and the perftest log mapped to one code of DIAGNOSIS_CODES with
its message and the evidence lines. Pure standard library, like the parser it reads the log with (perftest_output.py).
"""


import re

from ansible_collections.gpudirect.openshift.plugins.module_utils.verify.perftest_output import (
    WAITING_SERVER, PerftestParseError, classify_line, parse_bw_output, unique,
)

DIAGNOSIS_CODES = (
    'ok',
    'image_pull_error',
    'resource_not_allocatable',
    'pod_unschedulable',
    'no_gpu_memory_path',
    'rdma_device_not_found',
    'link_down',
    'wrong_gid',
    'memory_registration_failed',
    'timeout',
    'bandwidth_below_threshold',
    'wrong_rdma_device',
    'unknown',
)

_IMAGE_PULL_REASONS = ('ErrImagePull', 'ImagePullBackOff', 'InvalidImageName', 'ErrImageNeverPull',
                       'RegistryUnavailable')
_IMAGE_PULL_TEXT = re.compile(r'Failed to pull image|pull access denied|manifest unknown|ImagePullBackOff|ErrImagePull')
_INSUFFICIENT = re.compile(r'Insufficient ([A-Za-z0-9_./-]+)')

_MESSAGES = {
    'ok': 'perftest completed and printed its result table without errors',
    'image_pull_error': 'the perftest image could not be pulled: check the image reference, the registry credentials '
                        '(pull secret) and that the cluster can reach the registry',
    'resource_not_allocatable': 'the pod cannot be scheduled because no node has enough of: %s; check the node '
                                'allocatable resources (RDMA device plugin / SR-IOV policy / GPU operator)',
    'pod_unschedulable': 'the pod cannot be scheduled: %s',
    'no_gpu_memory_path': 'perftest could not put its buffers in GPU memory (CUDA or DMA-BUF/peer memory path): check '
                          'the GPU driver, nvidia-peermem or DMA-BUF support and that the image was built with CUDA',
    'rdma_device_not_found': 'the RDMA device perftest was told to use is not visible in the pod: check the -d device '
                             'name and that the pod requested the RDMA resource',
    'link_down': 'the peers cannot reach each other: the port is not active, or the server address/port is unreachable '
                 '(server not started, wrong IP, secondary network not attached)',
    'wrong_gid': 'the queue pairs could not be connected: usually a wrong GID index (RoCE v1/v2, IPv4-mapped entry) '
                 'or a path/MTU mismatch between the two ends',
    'memory_registration_failed': 'memory registration failed: usually the locked-memory limit (ulimit -l, IPC_LOCK, '
                                  'CRI-O default_ulimits) or, with --use_cuda, a missing GPU peer-memory path',
    'timeout': 'the test did not finish in time: %s',
    'bandwidth_below_threshold': 'the test ran but the bandwidth is below the threshold: %s',
    'wrong_rdma_device': 'perftest measured another RDMA device than the one of the tested rail: %s',
    'unknown': 'the cause could not be determined: %s',
}


def _pod_fields(pod):
    """Extract phase, reasons and messages from a Kubernetes Pod object (dict)."""
    status = pod.get('status') or {}
    reasons = []
    messages = []
    if status.get('reason'):
        reasons.append(status['reason'])
    if status.get('message'):
        messages.append(status['message'])
    for condition in status.get('conditions') or []:
        if condition.get('status') == 'False':
            if condition.get('reason'):
                reasons.append(condition['reason'])
            if condition.get('message'):
                messages.append(condition['message'])
    for key in ('initContainerStatuses', 'containerStatuses'):
        for container in status.get(key) or []:
            for state_name in ('waiting', 'terminated'):
                state = (container.get('state') or {}).get(state_name) or {}
                if state.get('reason'):
                    reasons.append(state['reason'])
                if state.get('message'):
                    messages.append(state['message'])
    return status.get('phase'), reasons, messages


def _as_list(value):
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


def diagnose(log=None, phase=None, reason=None, message=None, events=None, timed_out=False, evaluation=None, pod=None):
    """Map pod state and perftest log text to {code, ok, message, evidence}.

    pod: a Kubernetes Pod object (dict); phase/reason/message: the same facts given directly (reason and message
    may be lists); events: event dicts (with message/reason) or strings; timed_out: the caller's wait gave up;
    evaluation: a result of evaluate_bw for this run.
    """
    reasons = [str(item) for item in _as_list(reason) if item]
    messages = [str(item) for item in _as_list(message) if item]
    if pod:
        pod_phase, pod_reasons, pod_messages = _pod_fields(pod)
        phase = phase or pod_phase
        reasons.extend(pod_reasons)
        messages.extend(pod_messages)
    for event in _as_list(events):
        if isinstance(event, dict):
            if event.get('reason'):
                reasons.append(str(event['reason']))
            if event.get('message'):
                messages.append(str(event['message']))
        elif event:
            messages.append(str(event))

    def result(code, detail=None, evidence=None):
        text = _MESSAGES[code]
        if '%s' in text:
            text = text % (detail or 'no further detail')
        return {'code': code, 'ok': code == 'ok', 'message': text, 'evidence': evidence or []}

    pull = [item for item in reasons if item in _IMAGE_PULL_REASONS]
    pull_text = [item for item in messages if _IMAGE_PULL_TEXT.search(item)]
    if pull or pull_text:
        return result('image_pull_error', evidence=pull + pull_text)

    insufficient = []
    insufficient_text = []
    for item in messages:
        found = _INSUFFICIENT.findall(item)
        if found:
            insufficient_text.append(item)
            insufficient.extend(resource.rstrip('.,') for resource in found)
    if insufficient:
        return result('resource_not_allocatable', ', '.join(unique(insufficient)), insufficient_text)
    if phase == 'Pending' and ('Unschedulable' in reasons or 'FailedScheduling' in reasons):
        return result('pod_unschedulable', ' | '.join(messages) or 'the scheduler gave no message', messages)

    parsed = None
    parse_problem = None
    if isinstance(log, (bytes, bytearray)):
        log = log.decode('utf-8', 'replace')
    if log is not None and not isinstance(log, str):
        raise ValueError('log must be text, got %s' % type(log).__name__)
    log_text = log or ''
    if log_text.strip():
        try:
            parsed = parse_bw_output(log_text, require_results=False)
        except PerftestParseError as exc:
            parse_problem = str(exc)
    error_lines = []
    for line in log_text.splitlines():
        kind, code = classify_line(line.strip())
        if kind == 'error':
            error_lines.append((code, line.strip()))

    uses_cuda = bool(parsed and parsed.get('use_cuda')) or '--use_cuda' in log_text or 'initializing CUDA' in log_text
    for code in ('no_gpu_memory_path', 'rdma_device_not_found', 'link_down', 'wrong_gid', 'memory_registration_failed',
                 'timeout'):
        evidence = [line for line_code, line in error_lines if line_code == code]
        if not evidence:
            continue
        if code == 'memory_registration_failed' and uses_cuda:
            return result('no_gpu_memory_path', evidence=evidence)
        if code == 'timeout':
            return result('timeout', evidence[0], evidence)
        return result(code, evidence=evidence)

    has_rows = bool(parsed and parsed.get('rows'))
    if timed_out or 'DeadlineExceeded' in reasons:
        if not has_rows and WAITING_SERVER.search(log_text):
            detail = 'the server was still waiting for the client to connect (client not started or cannot reach it)'
        elif not log_text.strip():
            detail = 'no perftest output was captured'
        else:
            detail = 'the run had not printed a complete result table'
        return result('timeout', detail, [line for line in log_text.splitlines() if WAITING_SERVER.search(line)])

    if error_lines:
        return result('unknown', error_lines[0][1], [line for _code, line in error_lines])

    if evaluation:
        if not evaluation.get('passed') and evaluation.get('code') == 'bandwidth_below_threshold':
            return result('bandwidth_below_threshold', evaluation.get('reason'), [evaluation.get('reason')])
        if evaluation.get('passed'):
            return result('ok', evidence=[evaluation.get('reason')])
    if has_rows:
        return result('ok')
    pod_state = 'pod phase %s%s' % (phase or 'unknown', ', reasons: %s' % ', '.join(reasons) if reasons else '')
    if parse_problem and parse_problem.startswith(('a second test header', 'a second result table')):
        return result('unknown',
                      'the log holds more than one perftest run (%s): give the log of one run' % parse_problem,
                      messages)
    truncated = parse_problem if parse_problem and 'ends inside' in parse_problem else (parsed or {}).get('truncated')
    if truncated:
        return result('unknown', 'the log is cut short: %s (%s)' % (truncated, pod_state), messages)
    if log_text.strip():
        return result('unknown', 'perftest printed no result table and no recognised error (%s)' % pod_state, messages)
    if phase or reasons:
        return result('unknown', '%s and no perftest output' % pod_state, messages)
    return result('unknown', 'no pod state and no perftest output to examine')
