# -*- coding: utf-8 -*-
# Copyright (c) 2025 gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nccl_tests filter plugin: called directly, and loaded by its FQCN in a real ansible-playbook run."""

import json
import os
import subprocess
import sys

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpudirect.openshift.plugins.filter.nccl_tests import FilterModule

FIXTURES = os.path.join(os.path.dirname(__file__), '..', '..', 'fixtures', 'nccl')
TWO_NODES = os.path.abspath(os.path.join(FIXTURES, 'a3mega_2x8_h100_v2.1x.txt'))
FILTERS = FilterModule().filters()


def test_filter_names_and_errors():
    assert sorted(FILTERS) == ['nccl_allreduce_evaluate', 'nccl_rails', 'nccl_tests_parse']
    with open(TWO_NODES) as handle:
        lines = handle.read().splitlines()
    parsed = FILTERS['nccl_tests_parse'](lines)  # stdout_lines
    assert parsed['ranks'] == 16
    with pytest.raises(AnsibleFilterError, match='nccl_tests_parse: output cut after 2 result rows'):
        FILTERS['nccl_tests_parse']('\n'.join(lines[:25]))
    with pytest.raises(AnsibleFilterError, match='nccl_tests_parse: no nccl-tests output'):
        FILTERS['nccl_tests_parse'](None)
    with pytest.raises(AnsibleFilterError, match='nccl_allreduce_evaluate: threshold'):
        FILTERS['nccl_allreduce_evaluate'](parsed, [400], 1.5)
    # 0: the calibrated low end of published healthy runs (nccl_calibration.py)
    assert FILTERS['nccl_allreduce_evaluate'](parsed, [400] * 8, 0)['threshold_source'] == 'calibrated'


PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Judge
      ansible.builtin.set_fact:
        verdict: "{{ lookup('ansible.builtin.file', capture) | gpudirect.openshift.nccl_tests_parse(collective='all_reduce')
                     | gpudirect.openshift.nccl_allreduce_evaluate([400] * 8, 0.8) }}"
    - name: Cut output
      ansible.builtin.set_fact:
        cut: "{{ (lookup('ansible.builtin.file', capture).split('# Out of bounds')[0]) | gpudirect.openshift.nccl_tests_parse }}"
      ignore_errors: true
      register: cut_result
    - name: Report
      ansible.builtin.debug:
        msg:
          verdict: "{{ verdict }}"
          cut_msg: "{{ cut_result.msg | default('') }}"
"""


def test_filters_load_by_fqcn_in_ansible_playbook(tmp_path):
    playbook = tmp_path / 'nccl.yml'
    playbook.write_text(PLAYBOOK)
    env = dict(os.environ, ANSIBLE_STDOUT_CALLBACK='ansible.builtin.json', ANSIBLE_LOAD_CALLBACK_PLUGINS='1',
               ANSIBLE_NOCOLOR='1', ANSIBLE_DEPRECATION_WARNINGS='0')
    assert env.get('ANSIBLE_COLLECTIONS_PATH'), 'ANSIBLE_COLLECTIONS_PATH is not set: source hack/env.sh first'
    completed = subprocess.run(
        [os.path.join(os.path.dirname(sys.executable), 'ansible-playbook'), '-i', 'localhost,', '-c', 'local',
         '-e', json.dumps({'capture': TWO_NODES, 'ansible_python_interpreter': sys.executable}), str(playbook)],
        env=env, capture_output=True, text=True, timeout=300, check=False)
    assert completed.returncode == 0, completed.stdout[-4000:] + completed.stderr[-4000:]
    tasks = json.loads(completed.stdout)['plays'][0]['tasks']
    msg = [task for task in tasks if task['task']['name'] == 'Report'][0]['hosts']['localhost']['msg']
    assert msg['verdict']['passed'] is True and msg['verdict']['measured_busbw_gbs'] == 338.82
    assert msg['verdict']['expected_busbw_gbs'] == 400.0
    assert 'nccl_tests_parse: output cut after 31 result rows' in msg['cut_msg']
