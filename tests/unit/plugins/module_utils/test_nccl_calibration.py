# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The all-reduce calibration table (plugins/module_utils/verify/nccl_calibration.py): every row's verdict is what its source
says, the range follows from the healthy rows, and the fixtures the table names parse and get their source's verdict."""

import os

import pytest

from ansible_collections.gpudirect.openshift.plugins.module_utils.verify import nccl_calibration as nc
from ansible_collections.gpudirect.openshift.plugins.module_utils.verify.nccl_tests_output import evaluate_allreduce, parse_nccl_tests_output

FIXTURES = os.path.join(os.path.dirname(__file__), '..', '..', 'fixtures', 'nccl')


def test_every_row_names_its_source_and_the_table_covers_1_4_8_rails():
    for key, row in nc.SOURCES.items():
        assert row['url'].startswith('https://github.com/'), key
        assert row['title'] and row['hardware'] and row['algorithm'] in ('ring', 'tree'), key
        assert row['verdict'] == 'healthy' or row['verdict'].startswith('degraded: '), key
    healthy_rails = set(nc.SOURCES[key]['rails'] for key in nc.RING_HEALTHY_ROWS)
    assert healthy_rails == {1, 4, 8}
    assert set(nc.RING_HEALTHY_ROWS) | set(nc.DEGRADED_ROWS) | set(nc.TREE_ROWS) == set(nc.SOURCES)


def test_range_is_the_healthy_rows_and_every_degraded_row_falls_below_it():
    low, high, sources = nc.ring_range()
    assert (round(low, 3), round(high, 3)) == (0.8, 0.976) and sources == list(nc.RING_HEALTHY_ROWS)
    for key in nc.DEGRADED_ROWS:
        assert nc.rails_fraction(key) < low, key
    for key in nc.RING_HEALTHY_ROWS:
        assert low <= nc.rails_fraction(key) <= 1.0, key


@pytest.mark.parametrize('key', sorted(nc.SOURCES))
def test_the_verdict_on_each_row_is_what_its_source_says(key):
    """A run at the row's busbw on the row's rails: passed for healthy rows, failed for degraded ones."""
    row = nc.SOURCES[key]
    ranks = row.get('ranks', 16)
    text = _run_text(row['busbw_gbs'], ranks, row.get('nodes', 2))
    verdict = evaluate_allreduce(parse_nccl_tests_output(text), [row['link_gbps']] * row['rails'])
    assert verdict['passed'] is (row['verdict'] == 'healthy'), verdict['reason']
    if not verdict['passed']:
        assert 'is below the range' in verdict['reason'] and 'through the CPU' in verdict['reason']


def test_a_real_fixture_named_by_the_table_parses_and_gets_its_sources_verdict():
    checked = []
    for key, row in nc.SOURCES.items():
        if not row.get('fixture'):
            continue
        with open(os.path.join(FIXTURES, row['fixture'])) as handle:
            parsed = parse_nccl_tests_output(handle.read(), collective='all_reduce')
        assert parsed['largest_message_row']['out_of_place']['busbw_gbs'] == row['busbw_gbs']
        cut = row['fixture'].endswith('_cut.txt')  # the post kept only the table: no device lines, so no hosts
        assert (parsed['ranks'], len(parsed['hosts'])) == ((None, 0) if cut else (row['ranks'], row['nodes']))
        verdict = evaluate_allreduce(parsed, [row['link_gbps']] * row['rails'], min_nodes=0 if cut else 2)
        assert verdict['passed'] is (row['verdict'] == 'healthy') and '%' not in verdict['reason'].split('(')[0], verdict['reason']
        checked.append(key)
    assert checked == ['nccl-tests-252', 'a3mega-2x8']


def test_busbw_above_the_rails_is_explained_never_a_percentage_above_100():
    """The held-out A3 Mega output: 338.82 GB/s on rails of 200 GB/s was reported as 169 %; now the tree bound explains it."""
    with open(os.path.join(FIXTURES, 'a3mega_2x8_h100_v2.1x.txt')) as handle:
        verdict = evaluate_allreduce(parse_nccl_tests_output(handle.read()), [200] * 8)
    assert verdict['passed'] and verdict['algorithm'] == 'tree' and verdict['rail_bound_busbw_gbs'] == 375.0
    assert '169' not in verdict['reason'] and 'NVLink' in verdict['reason'] and 'a3mega-2x8' in verdict['reason']


def test_expected_for_the_simulated_profiles():
    """rail-ib-lab and rail-roce-lab: 8 rails of 400 Gb/s, 2 nodes of 8 GPUs."""
    expected = nc.expected([400] * 8, ranks=16, nodes=2)
    assert expected['rails_gbs'] == 400.0 and (expected['low_gbs'], expected['high_gbs']) == (320.0, 390.4)
    assert expected['tree_bound_gbs'] == 750.0 and expected['tree_sources'] == ['a3mega-2x8']
    # the rails' payload: a known path MTU takes the headers off (bandwidth_calibration.wire_efficiency)
    assert nc.expected([400] * 8, link_layer='InfiniBand', mtu=4096)['rails_gbs'] == round(400 * 4096 / 4122.0, 3)
    assert nc.expected([100], ranks=8, nodes=1)['tree_bound_gbs'] is None


def _run_text(busbw, ranks, nodes):
    """A two-row all_reduce_perf output at this busbw (nccl-tests v2.19.6 layout, as our own captures)."""
    size = 8589934592
    algbw = busbw / (2.0 * (ranks - 1) / ranks)
    time_us = size / (algbw * 1e3)
    lines = ['# nccl-tests version 2.19.6 nccl-headers=22803 nccl-library=22803',
             '# Collective test starting: all_reduce_perf',
             '# nThread 1 nGpus 1 minBytes %d maxBytes %d step: 2(factor) warmup iters: 1 iters: 20 agg iters: 1 '
             'validation: 1 graph: 0 unalign: 0' % (size, size), '#', '# Using devices']
    for rank in range(ranks):
        lines.append('#  Rank %2d Group  0 Pid %6d on %10s device %2d [0000:%02x:00] NVIDIA H100 80GB HBM3'
                     % (rank, 1000 + rank, 'node-%d' % (rank * nodes // ranks), rank % 8, 0x18 + rank % 8))
    lines += ['#',
              '#                                                              out-of-place                       in-place          ',
              '#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong ',
              '#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         ',
              '%12d  %12d  %8s  %6s  %6d  %7.0f  %6.2f  %6.2f  %6d  %7.0f  %6.2f  %6.2f  %6d'
              % (size, size // 4, 'float', 'sum', -1, time_us, algbw, busbw, 0, time_us, algbw, busbw, 0),
              '# Out of bounds values : 0 OK', '# Avg bus bandwidth    : %.2f ' % busbw, '#',
              '# Collective test concluded: all_reduce_perf', '#', '']
    return '\n'.join(lines)


def test_docs_table_lists_every_row_with_its_source():
    with open(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..', 'docs', 'nccl-tests.md')) as handle:
        text = handle.read()
    for key, row in nc.SOURCES.items():
        assert '| [`%s`](%s) |' % (key, row['url']) in text, key
