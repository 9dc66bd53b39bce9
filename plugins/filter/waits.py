# -*- coding: utf-8 -*-
# Copyright (c) 2026 gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma_waits and machineconfig_pool_wait: readiness waits built in Python (render/waits.py), not in Jinja.

Documentation lives next to this file (rdma_waits.yml, machineconfig_pool_wait.yml).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpudirect.openshift.plugins.module_utils.render import waits


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
    if entry.get('failure_condition'):
        entry['failure_grace_period'] = failure_grace_period
    return entry


def rdma_waits(plan, min_ready_nodes=1, failure_grace_period=60, timeout=1800, machineconfig_timeout=5400, all_selected_nodes=False):
    if not isinstance(plan, dict):
        raise AnsibleFilterError('rdma_waits: expects the rendered plan (gpudirect_manifests result), a mapping')
    min_ready_nodes = _count('min_ready_nodes', min_ready_nodes, 1)
    grace = _count('failure_grace_period', failure_grace_period, 0)
    timeout = _count('timeout', timeout, 1)
    machineconfig_timeout = _count('machineconfig_timeout', machineconfig_timeout, 1)
    if not isinstance(all_selected_nodes, bool):
        raise AnsibleFilterError('all_selected_nodes must be true or false, got %r' % (all_selected_nodes,))
    sets = waits.rdma_wait_sets(plan, min_ready_nodes, all_selected_nodes)
    return {'machineconfig': [_timed(w, machineconfig_timeout, grace) for w in sets['machineconfig']],
            'configuration': [_timed(w, timeout, grace) for w in sets['configuration']]}


def machineconfig_pool_wait(pool, machineconfigs, present=True, failure_grace_period=60, timeout=5400):
    if not isinstance(pool, str) or not pool:
        raise AnsibleFilterError('machineconfig_pool_wait: expects a MachineConfigPool name')
    if not isinstance(machineconfigs, list):
        raise AnsibleFilterError('machineconfig_pool_wait: machineconfigs must be a list of MachineConfig names')
    entry = waits.machineconfig_pool_wait(pool, [str(name) for name in machineconfigs], present=bool(present))
    return _timed(entry, _count('timeout', timeout, 1), _count('failure_grace_period', failure_grace_period, 0))


class FilterModule(object):
    """Readiness waits."""

    def filters(self):
        return {'rdma_waits': rdma_waits, 'machineconfig_pool_wait': machineconfig_pool_wait}
