# -*- coding: utf-8 -*-
# Copyright (c) 2025 gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The perftest filter plugin: called directly, and loaded by its FQCN in a real ansible-playbook run."""

import json
import os
import subprocess
import sys

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpudirect.openshift.tests.unit.fixtures import synthetic_sysfs
from ansible_collections.gpudirect.openshift.plugins.filter.perftest import FilterModule

CLIENT = 'cloud-native-stack_ubuntu24_v19_client_sweep_roce.txt'
SERVER = 'cloud-native-stack_ubuntu24_v19_server_roce.txt'
CUDA_CLIENT = 'nvidia-gpu-addon-operator_ocp410_T4_client_use_cuda_sweep_roce.txt'
FILTERS = FilterModule().filters()


def capture_path(name):
    root = synthetic_sysfs.fixtures_dir()
    return os.path.join(root, 'command-outputs', 'ib_write_bw', name)


def read_capture(name):
    with open(capture_path(name)) as handle:
        return handle.read()


def test_filter_names():
    assert sorted(FILTERS) == ['ib_write_bw_evaluate', 'ib_write_bw_parse', 'perftest_diagnose']


def test_parse_text_and_stdout_lines():
    text = read_capture(CLIENT)
    parsed = FILTERS['ib_write_bw_parse'](text)
    assert parsed['largest_message_row']['bw_avg_gbps'] == 52.52
    assert FILTERS['ib_write_bw_parse'](text.splitlines()) == parsed


def test_parse_errors_are_filter_errors():
    lines = read_capture(CLIENT).split('\n')
    with pytest.raises(AnsibleFilterError, match='ib_write_bw_parse: result table not terminated'):
        FILTERS['ib_write_bw_parse']('\n'.join(lines[:25]))
    with pytest.raises(AnsibleFilterError, match='ib_write_bw_parse: perftest output is empty'):
        FILTERS['ib_write_bw_parse']('')
    with pytest.raises(AnsibleFilterError, match='ib_write_bw_parse: no perftest output'):
        FILTERS['ib_write_bw_parse'](None)


def test_parse_without_results():
    text = read_capture(SERVER).split(' #bytes')[0]
    parsed = FILTERS['ib_write_bw_parse'](text, require_results=False)
    assert parsed['rows'] == []
    assert parsed['role'] == 'server'


def test_evaluate():
    parsed = FILTERS['ib_write_bw_parse'](read_capture(CUDA_CLIENT))
    verdict = FILTERS['ib_write_bw_evaluate'](parsed, 25)
    assert verdict['passed'] is True
    assert verdict['measured_gbps'] == 22.99
    assert verdict['fraction'] == 0.9196
    assert FILTERS['ib_write_bw_evaluate'](parsed, '25 Gb/sec (1X EDR)', 0.95)['passed'] is False
    with pytest.raises(AnsibleFilterError, match='ib_write_bw_evaluate: link_rate_gbps must be a positive number'):
        FILTERS['ib_write_bw_evaluate'](parsed, 0)
    with pytest.raises(AnsibleFilterError, match='ib_write_bw_evaluate: no result table found'):
        FILTERS['ib_write_bw_evaluate'](read_capture(SERVER).split(' #bytes')[0], 100)


def test_diagnose_input_forms():
    log = "Couldn't connect to 192.168.111.2:18515\n Unable to init the socket connection\n"
    assert FILTERS['perftest_diagnose'](log)['code'] == 'link_down'
    assert FILTERS['perftest_diagnose'](log.splitlines())['code'] == 'link_down'
    assert FILTERS['perftest_diagnose']({'log': log, 'phase': 'Failed'})['code'] == 'link_down'
    pod = {'kind': 'Pod', 'status': {'phase': 'Pending', 'containerStatuses': [
        {'name': 'perftest', 'state': {'waiting': {'reason': 'ErrImagePull'}}}]}}
    assert FILTERS['perftest_diagnose'](pod)['code'] == 'image_pull_error'
    assert FILTERS['perftest_diagnose']('', pod=pod)['code'] == 'image_pull_error'
    assert FILTERS['perftest_diagnose'](read_capture(CLIENT))['code'] == 'ok'
    with pytest.raises(AnsibleFilterError, match='log must be text'):
        FILTERS['perftest_diagnose'](log=42)


PLAYBOOK = """\
- hosts: localhost
  gather_facts: false
  vars:
    client_text: "{{ lookup('ansible.builtin.file', client_file) }}"
  tasks:
    - name: Parse every capture by FQCN
      ansible.builtin.set_fact:
        parsed: "{{ parsed | default({}) | combine({item | basename: lookup('ansible.builtin.file', item)
                    | gpudirect.openshift.ib_write_bw_parse}) }}"
      loop: "{{ capture_files }}"

    - name: Evaluate and diagnose the CUDA client run
      ansible.builtin.set_fact:
        verdict: "{{ parsed[cuda_name] | gpudirect.openshift.ib_write_bw_evaluate(100) }}"
        diagnosis: "{{ client_text | gpudirect.openshift.perftest_diagnose(phase='Succeeded') }}"

    - name: Diagnose with the evaluation
      ansible.builtin.set_fact:
        low_bandwidth: "{{ {'log': lookup('ansible.builtin.file', capture_files[2]), 'evaluation': verdict}
                           | gpudirect.openshift.perftest_diagnose }}"

    - name: Parse truncated output
      ansible.builtin.debug:
        msg: "{{ (client_text.split('\\n')[:25] | join('\\n')) | gpudirect.openshift.ib_write_bw_parse }}"
      register: truncated
      ignore_errors: true

    - name: Report
      ansible.builtin.debug:
        msg:
          largest: "{{ parsed | dict2items | map(attribute='value.largest_message_row.bw_avg_gbps') | list }}"
          roles: "{{ parsed | dict2items | map(attribute='value.role') | list }}"
          verdict: "{{ verdict }}"
          diagnosis: "{{ diagnosis.code }}"
          low_bandwidth: "{{ low_bandwidth.code }}"
          truncated_failed: "{{ truncated is failed }}"
          truncated_msg: "{{ truncated.msg | default('') }}"
"""


def test_filters_load_by_fqcn_in_ansible_playbook(tmp_path):
    captures = [capture_path(name) for name in (CLIENT, SERVER, CUDA_CLIENT)]
    playbook = tmp_path / 'perftest.yml'
    playbook.write_text(PLAYBOOK)
    extra_vars = {'capture_files': captures, 'client_file': captures[0], 'cuda_name': CUDA_CLIENT,
                  'ansible_python_interpreter': sys.executable}
    env = dict(os.environ, ANSIBLE_STDOUT_CALLBACK='ansible.builtin.json', ANSIBLE_LOAD_CALLBACK_PLUGINS='1',
               ANSIBLE_NOCOLOR='1', ANSIBLE_DEPRECATION_WARNINGS='0')
    assert env.get('ANSIBLE_COLLECTIONS_PATH'), 'ANSIBLE_COLLECTIONS_PATH is not set: source hack/env.sh first'
    completed = subprocess.run(
        [os.path.join(os.path.dirname(sys.executable), 'ansible-playbook'), '-i', 'localhost,', '-c', 'local',
         '-e', json.dumps(extra_vars), str(playbook)],
        env=env, capture_output=True, text=True, timeout=300, check=False)
    assert completed.returncode == 0, completed.stdout[-4000:] + completed.stderr[-4000:]
    report = json.loads(completed.stdout)
    tasks = report['plays'][0]['tasks']
    msg = [task for task in tasks if task['task']['name'] == 'Report'][0]['hosts']['localhost']['msg']
    assert msg['largest'] == [52.52, 52.52, 22.99]
    assert msg['roles'] == ['client', 'server', 'client']
    assert msg['verdict']['passed'] is False
    assert msg['verdict']['measured_gbps'] == 22.99
    assert msg['verdict']['code'] == 'bandwidth_below_threshold'
    assert msg['diagnosis'] == 'ok'
    assert msg['low_bandwidth'] == 'bandwidth_below_threshold'
    assert msg['truncated_failed'] is True
    assert 'ib_write_bw_parse: result table not terminated' in msg['truncated_msg']
