# Copyright (c) 2026 gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma_waits, machineconfig_pool_wait, operator_waits, teardown_wait and plan_target: readiness waits built in Python
(render/waits.py), not in Jinja; rollout_timeout: the timeout of a pool rollout derived from its nodes
(rules/timeouts.py).

Documentation lives next to this file (rdma_waits.yml, machineconfig_pool_wait.yml, operator_waits.yml,
teardown_wait.yml, plan_target.yml, rollout_timeout.yml).
"""


from ansible.errors import AnsibleFilterError

from ansible_collections.gpudirect.openshift.plugins.module_utils.render import waits
from ansible_collections.gpudirect.openshift.plugins.module_utils.rules import timeouts


def _count(name, value, minimum):
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise AnsibleFilterError('%s must be a whole number, got %r' % (name, value))
    if number < minimum:
        raise AnsibleFilterError('%s must be at least %d, got %d' % (name, minimum, number))
    return number


def _timed(entry, timeout, failure_grace_period):
    entry = dict(entry, timeout=timeout)
    # A counted wait judges failure per object (each_failure_condition): it has a grace period as much as a list's.
    if entry.get('failure_condition') or entry.get('each_failure_condition'):
        entry['failure_grace_period'] = failure_grace_period
    return entry


def rdma_waits(plan, min_ready_nodes=1, failure_grace_period=60, timeout=1800, machineconfig_timeout=5400,
               all_selected_nodes=False, sriov_timeout=None):
    if not isinstance(plan, dict):
        raise AnsibleFilterError('rdma_waits: expects the rendered plan (gpudirect_manifests result), a mapping')
    min_ready_nodes = _count('min_ready_nodes', min_ready_nodes, 1)
    grace = _count('failure_grace_period', failure_grace_period, 0)
    timeout = _count('timeout', timeout, 1)
    machineconfig_timeout = _count('machineconfig_timeout', machineconfig_timeout, 1)
    # The SR-IOV node states' wait covers the policy sync's drains and reboots: its own (derived) timeout.
    sriov_timeout = timeout if sriov_timeout is None else _count('sriov_timeout', sriov_timeout, 1)
    if not isinstance(all_selected_nodes, bool):
        raise AnsibleFilterError('all_selected_nodes must be true or false, got %r' % (all_selected_nodes,))
    sets = waits.rdma_wait_sets(plan, min_ready_nodes, all_selected_nodes)
    return {'machineconfig': [_timed(w, machineconfig_timeout, grace) for w in sets['machineconfig']],
            'configuration': [_timed(w, sriov_timeout if w.get('kind') == 'SriovNetworkNodeState' else timeout, grace)
                              for w in sets['configuration']]}


def rollout_timeout(work, given=0, per_node=timeouts.DEFAULT_NODE_ROLLOUT_SECONDS,
                    variable='rdma_machineconfig_timeout', kind='MachineConfig', pool_config=None, reported_nodes=0,
                    fallback=None, nodes=None):
    """``work``: plan_status disruptions (a list), or a MachineConfigPool as read (a mapping) whose every machine
    reboots. ``kind`` MachineConfig or SR-IOV; ``pool_config``: the SriovNetworkPoolConfig the plan applies, if any."""
    given = _count(variable, given, 0)
    per_node = _count('per_node', per_node, 1)
    if isinstance(work, dict):
        spec, status = work.get('spec') or {}, work.get('status') or {}
        return timeouts.pool_rollout_timeout((work.get('metadata') or {}).get('name') or '?',
                                             status.get('machineCount') or 0, spec.get('maxUnavailable'), given=given,
                                             per_node=per_node, variable=variable,
                                             fallback=_count('fallback', 5400 if fallback is None else fallback, 1))
    if not isinstance(work, list):
        raise AnsibleFilterError(
            'rollout_timeout: expects the disruptions of plan_status (a list) or a MachineConfigPool')
    if kind == 'SR-IOV':
        if pool_config is not None and not isinstance(pool_config, dict):
            raise AnsibleFilterError('rollout_timeout: pool_config must be a SriovNetworkPoolConfig manifest or null')
        return timeouts.sriov_sync_timeout(work, given=given, per_node=per_node,
                                           pool_max_unavailable=((pool_config or {}).get('spec')
                                                                 or {}).get('maxUnavailable'),
                                           pool_config=bool(pool_config),
                                           reported_nodes=_count('reported_nodes', reported_nodes, 0),
                                           variable=variable,
                                           fallback=_count('fallback', 1800 if fallback is None else fallback, 1),
                                           nodes=None if nodes is None else _count('nodes', nodes, 0))
    if kind != 'MachineConfig':
        raise AnsibleFilterError('rollout_timeout: kind must be MachineConfig or SR-IOV, got %r' % (kind,))
    return timeouts.rollout_timeout(work, given=given, variable=variable, per_node=per_node,
                                    fallback=_count('fallback', 5400 if fallback is None else fallback, 1))


def machineconfig_pool_wait(pool, machineconfigs, present=True, failure_grace_period=60, timeout=5400):
    if not isinstance(pool, str) or not pool:
        raise AnsibleFilterError('machineconfig_pool_wait: expects a MachineConfigPool name')
    if not isinstance(machineconfigs, list):
        raise AnsibleFilterError('machineconfig_pool_wait: machineconfigs must be a list of MachineConfig names')
    entry = waits.machineconfig_pool_wait(pool, [str(name) for name in machineconfigs], present=bool(present))
    return _timed(entry, _count('timeout', timeout, 1), _count('failure_grace_period', failure_grace_period, 0))


def _flag(name, value):
    if not isinstance(value, bool):
        raise AnsibleFilterError('%s must be true or false, got %r' % (name, value))
    return value


def operator_waits(phase, min_gpu_nodes=1, min_nic_nodes=1, failure_grace_period=60, timeout=900, node_selector='',
                   all_selected_nodes=False, operand_namespace='', manifests=None):
    if not isinstance(phase, str):
        raise AnsibleFilterError('operator_waits: expects the phase of an operator catalogue entry')
    entries = waits.operator_phase_waits(phase, _count('min_gpu_nodes', min_gpu_nodes, 0),
                                         _count('min_nic_nodes', min_nic_nodes, 0), str(node_selector or ''),
                                         _flag('all_selected_nodes', all_selected_nodes),
                                         str(operand_namespace or '') or None, list(manifests or []))
    timeout = _count('timeout', timeout, 1)
    grace = _count('failure_grace_period', failure_grace_period, 0)
    return [_timed(entry, timeout, grace) for entry in entries]


def teardown_wait(which, names, namespace='', failure_grace_period=60, timeout=1800):
    if not isinstance(names, list):
        raise AnsibleFilterError('teardown_wait: names must be a list')
    names = [str(name) for name in names]
    if which == 'network_attachments':
        entry = waits.network_attachments_gone_wait(names)
    elif which == 'sriov_node_states':
        if not namespace:
            raise AnsibleFilterError('teardown_wait: sriov_node_states needs the SR-IOV operator namespace')
        entry = waits.sriov_node_states_settled_wait(names, namespace)
    else:
        raise AnsibleFilterError('teardown_wait: expects network_attachments or sriov_node_states, got %r' % (which,))
    return _timed(entry, _count('timeout', timeout, 1), _count('failure_grace_period', failure_grace_period, 0))


def plan_target(plan, min_gpu_nodes=1, min_nic_nodes=1, min_ready_nodes=1, nfd_node_selector='',
                nfd_all_selected_nodes=False, rdma_all_selected_nodes=False):
    if not isinstance(plan, dict):
        raise AnsibleFilterError('plan_target: expects the rendered plan (gpudirect_manifests result), a mapping')
    return waits.plan_target(plan, _count('min_gpu_nodes', min_gpu_nodes, 0), _count('min_nic_nodes', min_nic_nodes, 0),
                             _count('min_ready_nodes', min_ready_nodes, 1), str(nfd_node_selector or ''),
                             _flag('nfd_all_selected_nodes', nfd_all_selected_nodes),
                             _flag('rdma_all_selected_nodes', rdma_all_selected_nodes))


class FilterModule:
    """Readiness waits."""

    def filters(self):
        return {'rdma_waits': rdma_waits, 'machineconfig_pool_wait': machineconfig_pool_wait,
                'operator_waits': operator_waits, 'teardown_wait': teardown_wait, 'plan_target': plan_target,
                'rollout_timeout': rollout_timeout}
