# -*- coding: utf-8 -*-
# Copyright (c) 2025 gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nccl-tests output parser and all-reduce verdict, on real outputs (tests/unit/fixtures/nccl, see SOURCES.md)."""

import os

import pytest

from ansible_collections.gpudirect.openshift.plugins.module_utils.verify.nccl_tests_output import (
    NcclTestsParseError,
    evaluate_allreduce,
    expected_allreduce_busbw,
    parse_nccl_tests_output,
)

FIXTURES = os.path.join(os.path.dirname(__file__), '..', '..', 'fixtures', 'nccl')
TWO_NODES = 'a3mega_2x8_h100_v2.1x.txt'
OURS = 'ours_h100_v2.19.6_1gpu.txt'


def read(name):
    with open(os.path.join(FIXTURES, name)) as handle:
        return handle.read()


def test_two_nodes_of_eight_h100():
    parsed = parse_nccl_tests_output(read(TWO_NODES))
    assert parsed['ranks'] == 16
    assert parsed['hosts'] == ['ztan-mig-235z', 'ztan-mig-gq73']
    assert parsed['devices'][8] == {'rank': 8, 'group': 0, 'pid': 6733, 'host': 'ztan-mig-gq73', 'device': 0,
                                    'bus_id': '0000:04:00', 'name': 'NVIDIA H100 80GB HBM3'}
    assert parsed['params']['max_bytes'] == 8589934592 and parsed['params']['step'] == 2
    assert parsed['params']['warmup_iters'] == 5 and parsed['params']['iters'] == 20
    assert len(parsed['rows']) == 31
    largest = parsed['largest_message_row']
    assert largest['size_bytes'] == 8589934592 and largest['count'] == 2147483648 and largest['type'] == 'float'
    assert largest['redop'] == 'sum' and largest['root'] == -1
    assert largest['out_of_place'] == {'time_us': 47535.0, 'algbw_gbs': 180.71, 'busbw_gbs': 338.82, 'wrong': 0}
    assert largest['in_place']['busbw_gbs'] == 337.35
    assert parsed['avg_busbw_gbs'] == 70.742 and parsed['out_of_bounds'] == 0
    assert parsed['passed_checks'] is True and parsed['warnings'] == [] and parsed['errors'] == []
    # releases before 2.18 do not name the test: the caller does, which turns on the all-reduce checks
    assert parsed['collective'] is None
    assert parse_nccl_tests_output(read(TWO_NODES), collective='all_reduce')['rows'] == parsed['rows']


@pytest.mark.parametrize('name, rows, check', [
    (OURS, 26, 0),
    ('ours_h100_v2.19.6_1gpu_half_prod.txt', 13, 0),
    ('ours_h100_v2.19.6_1gpu_no_check.txt', 4, None),
    ('ours_h100_v2.19.6_1gpu_per_iter.txt', 4, 0),
    ('ours_h100_v2.19.6_1gpu_timestamps.txt', 4, 0),
    ('ours_h100_v2.19.6_1gpu_debug_info.txt', 1, 0),
])
def test_our_h100_captures_of_2_19_6(name, rows, check):
    parsed = parse_nccl_tests_output(read(name))
    assert parsed['version'] == '2.19.6' and parsed['nccl_library'] == 22803
    assert parsed['collective'] == 'all_reduce' and parsed['concluded'] is True
    assert len(parsed['rows']) == rows
    assert all(row['out_of_place']['wrong'] == check for row in parsed['rows'])
    # one rank: 2(n-1)/n = 0, so every busbw and the average are 0 whatever algbw is
    assert parsed['avg_busbw_gbs'] == 0 and parsed['peak_busbw_gbs'] == 0
    assert parsed['devices'][0]['name'] == 'NVIDIA H100 80GB HBM3'


def test_per_iteration_timestamps_and_debug_lines():
    per_iter = parse_nccl_tests_output(read('ours_h100_v2.19.6_1gpu_per_iter.txt'))
    assert per_iter['per_iteration'] is True
    assert per_iter['rows'][0]['out_of_place']['i_cv_percent'] == 19.21
    stamped = parse_nccl_tests_output(read('ours_h100_v2.19.6_1gpu_timestamps.txt'))
    assert stamped['rows'][-1]['timestamp'] == '2026-12-05 21:31:27'
    debug = parse_nccl_tests_output(read('ours_h100_v2.19.6_1gpu_debug_info.txt'))
    assert debug['nccl_version'] is None  # with NCCL_DEBUG=INFO the banner is an INFO line, kept out
    assert debug['rows'][0]['size_bytes'] == 67108864


def test_alltoall_na_in_place_and_wide_numbers():
    parsed = parse_nccl_tests_output(read('issue287_5090_alltoall_na.txt'))
    row = parsed['rows'][0]
    assert row['redop'] == 'none' and row['out_of_place']['algbw_gbs'] == 1715.44
    assert row['in_place']['wrong'] is None and row['in_place']['algbw_gbs'] == 43046.10


@pytest.mark.parametrize('name, message', [
    ('issue107_v100_2x1_nompi_duplicated.txt', 'line 4 starts a second run'),
    ('issue44_2080ti_old_no_redop_cut.txt', 'no table header came before it'),
    ('issue82_v100_broadcast_old_na_warn_cut.txt', 'output cut after 1 result rows'),
    ('ours_h100_v2.19.6_too_many_gpus.txt', 'Invalid number of GPUs: 2 requested but only 1 were found'),
    ('ours_h100_v2.19.6_net_plugin_warn.txt', "Test NCCL failure common.cu:222 'invalid usage"),
])
def test_real_broken_outputs_are_refused(name, message):
    with pytest.raises(NcclTestsParseError, match=message.replace('(', r'\(').replace(')', r'\)')):
        parse_nccl_tests_output(read(name))


def test_failed_run_readable_without_results():
    parsed = parse_nccl_tests_output(read('ours_h100_v2.19.6_net_plugin_warn.txt'), require_results=False)
    assert parsed['rows'] == [] and parsed['passed_checks'] is False
    assert parsed['nccl_version'] == '2.28.3+cuda13.0'
    assert parsed['warnings'] == ['[2026-12-05 21:29:35] vm:1411:1411 [0] plugin/net.cc:306 NCCL WARN Failed to initialize any NET plugin']
    assert len(parsed['errors']) == 3


def test_mpirun_tag_output_prefixes():
    text = '\n'.join('[1,0]<stdout>:' + line for line in read(TWO_NODES).splitlines())
    assert parse_nccl_tests_output(text)['rows'] == parse_nccl_tests_output(read(TWO_NODES))['rows']


def _edit(text, old, new):
    assert old in text
    return text.replace(old, new, 1)


LARGEST = '  8589934592    2147483648     float     sum      -1    47535  180.71  338.82      0    47743  179.92  337.35      0'


@pytest.mark.parametrize('edit, message', [
    # a row cut in the middle
    (lambda text: _edit(text, LARGEST, LARGEST[:70]), 'has 7 fields, the table header has 13'),
    # the footer lost: the run died or the log was cut
    (lambda text: text.split('# Out of bounds')[0], 'output cut after 31 result rows'),
    # only the start: header, no rows
    (lambda text: text.split('           8             2')[0], 'no result rows after the table header'),
    # a number that does not fit: busbw not algbw x 2(n-1)/n for 16 ranks
    (lambda text: _edit(text, '180.71  338.82', '180.71  238.82'), 'is not algbw x 2\\(n-1\\)/n = 338.83 for the 16 ranks'),
    # algbw that is not size / time
    (lambda text: _edit(text, '47535  180.71', '47535  190.71'), 'algbw 190.71 GB/s does not match 8589934592 bytes'),
    # count x element size
    (lambda text: _edit(text, '8589934592    2147483648', '8589934592    2147483647'), 'is not 2147483647 float elements'),
    # a rank line lost: 15 ranks listed, busbw computed for 16
    (lambda text: _edit(text, '#  Rank  3 Group  0 Pid   6902 on ztan-mig-235z device  3 [0000:0c:00] NVIDIA H100 80GB HBM3\n', ''),
     'for the 15 ranks'),
    (lambda text: 'hello\nworld\n', 'not nccl-tests output'),
    (lambda text: '', 'empty'),
    (lambda text: text.replace('#wrong', 'bogus'), 'unknown check column'),
    (lambda text: _edit(text, '#wrong     time', 'bogus     time'), 'out-of-place and in-place columns differ'),
    (lambda text: _edit(text, '     float     sum      -1    47535', '     float     sum      -1    47x35'), 'is not a number'),
    (lambda text: text + '\n' + text, 'second run'),
])
def test_edited_outputs_are_refused(edit, message):
    with pytest.raises(NcclTestsParseError, match=message):
        parse_nccl_tests_output(edit(read(TWO_NODES)), collective='all_reduce')


def test_foreign_perftest_output_is_refused():
    path = os.path.join(FIXTURES, '..', 'captures', 'command-outputs', 'ib_write_bw',
                        'cloud-native-stack_ubuntu24_v19_client_sweep_roce.txt')
    with open(path) as handle:
        with pytest.raises(NcclTestsParseError, match='not nccl-tests output|no table header'):
            parse_nccl_tests_output(handle.read())


def test_wrong_results_are_reported_not_hidden():
    text = _edit(read(TWO_NODES), LARGEST, LARGEST[:-1] + '7')
    text = _edit(text, '# Out of bounds values : 0 OK', '# Out of bounds values : 1 FAILED')
    parsed = parse_nccl_tests_output(text)
    assert parsed['wrong_rows'] == [{'size_bytes': 8589934592, 'type': 'float', 'place': 'in_place', 'wrong': 7}]
    assert parsed['out_of_bounds'] == 1 and parsed['out_of_bounds_ok'] is False and parsed['passed_checks'] is False
    verdict = evaluate_allreduce(parsed, [400] * 8)
    assert verdict['passed'] is False and verdict['code'] == 'wrong_results'


def test_rail_bound_of_busbw_with_several_ranks_per_node():
    from ansible_collections.gpudirect.openshift.plugins.module_utils.verify.nccl_tests_output import rail_bound_busbw
    assert rail_bound_busbw(400.0, 2, 2) == 400.0  # one rank per node: the rails' sum
    assert rail_bound_busbw(400.0, 16, 2) == 750.0 and rail_bound_busbw(400.0, 64, 8) == 450.0
    assert rail_bound_busbw(400.0, 8, 1) is None and rail_bound_busbw(400.0, None, 2) is None


def test_expected_busbw_is_the_sum_of_the_rails():
    assert expected_allreduce_busbw([400] * 8) == 400.0
    assert expected_allreduce_busbw(200) == 25.0
    with pytest.raises(ValueError, match='rail_rates_gbps'):
        expected_allreduce_busbw([])
    with pytest.raises(ValueError, match='positive'):
        expected_allreduce_busbw([400, 0])


def test_allreduce_verdicts():
    parsed = parse_nccl_tests_output(read(TWO_NODES))
    # A3 Mega: 8 GPUDirect-TCPXO NICs of 200 Gb/s per node -> 200 GB/s; 338.82 GB/s exceeds it (NVLink share of the ring)
    passed = evaluate_allreduce(parsed, [200] * 8)
    assert passed['passed'] is True and passed['code'] == 'passed' and passed['measured_busbw_gbs'] == 338.82
    # Explained, never "169 %": 16 ranks on 2 nodes: the rails bound busbw at 200 x 2 x 15 / 16 = 375 GB/s (issue 36)
    assert passed['rail_bound_busbw_gbs'] == 375.0 and '169' not in passed['reason']
    # the explanation names the algorithm that carries more than a ring, the bound and the published tree run
    assert passed['algorithm'] == 'tree' and passed['reason'].startswith(
        'busbw 338.82 GB/s at 8589934592 bytes is above the 200.0 GB/s a ring can reach on 8 rails of 200 Gb/s: on 2 nodes '
        'NCCL runs all-reduce as a tree')
    assert passed['reason'].endswith('= 375.0 GB/s (90% of it) (published tree run: a3mega-2x8)')
    # 8 rails of 400 Gb/s: inside the calibrated range (0.8-0.976 of 400 GB/s), the range and its rows named
    calibrated = evaluate_allreduce(parsed, [400] * 8)
    assert calibrated['passed'] is True and calibrated['threshold_source'] == 'calibrated' and calibrated['threshold'] == 0.8
    assert calibrated['reason'].startswith('busbw 338.82 GB/s at 8589934592 bytes: expected 320.0-390.4 GB/s for 8 rails of '
                                           '400 Gb/s (80-98% of their 400.0 GB/s in the published healthy runs nccl-tests-29,')
    assert [row['key'] for row in calibrated['expected_range']['sources']][-1] == 'nccl-tests-290-ndr'
    low = evaluate_allreduce(parsed, [400] * 8, threshold=0.9)
    assert low['passed'] is False and low['code'] == 'busbw_below_threshold' and low['threshold_source'] == 'threshold'
    # inside the published range but under the user's threshold: said so, with the causes of low runs
    assert 'is below the threshold: expected 320.0-390.4' in low['reason'] and 'threshold 90% of 400.0 GB/s = 360.0' in low['reason']
    assert 'NCCL uses only active listed ports' in low['reason']
    # 12 rails of 400 Gb/s (600 GB/s): below the range, named as such
    below = evaluate_allreduce(parsed, [400] * 12)
    assert below['passed'] is False and 'is below the range: expected 480.0-585.6 GB/s for 12 rails of 400 Gb/s' in below['reason']
    assert low['expected_busbw_gbs'] == 400.0 and low['required_busbw_gbs'] == 360.0 and low['fraction'] == 0.847
    sized = evaluate_allreduce(parsed, [400] * 8, message_size=1073741824)
    assert sized['measured_busbw_gbs'] == 297.86
    single = evaluate_allreduce(parse_nccl_tests_output(read(OURS)), [400] * 8)
    assert single['passed'] is False and single['code'] == 'too_few_nodes'
    with pytest.raises(ValueError, match='not all_reduce'):
        evaluate_allreduce(parse_nccl_tests_output(read('issue287_5090_alltoall_na.txt'), collective='alltoall'), [400])
    with pytest.raises(ValueError, match='threshold'):
        evaluate_allreduce(parsed, [400], threshold=1.5)
    with pytest.raises(ValueError, match='no result row for message size 3'):
        evaluate_allreduce(parsed, [400], message_size=3)


def test_issue252_ring_table_cut_from_its_post():
    """2 nodes of 4 H100, NCCL_ALGO=RING (nccl-tests issue 252): the post keeps only the table and its footer."""
    parsed = parse_nccl_tests_output(read('issue252_h100_2x4_ring_4rails_cut.txt'), collective='all_reduce')
    assert [row['size_bytes'] for row in parsed['rows']] == [512 << 20, 1 << 30, 2 << 30, 4 << 30, 8 << 30]
    assert parsed['rows'][0]['out_of_place'] == {'time_us': 10052.0, 'algbw_gbs': 53.41, 'busbw_gbs': 93.46, 'wrong': 0}
    assert parsed['rows'][-1]['in_place'] == {'time_us': 158561.0, 'algbw_gbs': 54.17, 'busbw_gbs': 94.8, 'wrong': 0}
    assert parsed['avg_busbw_gbs'] == 95.3009 and parsed['warnings'] == [] and parsed['errors'] == []
    assert parsed['out_of_bounds'] == 0 and parsed['devices'] == [] and parsed['ranks'] is None
