# -*- coding: utf-8 -*-
# Copyright (c) 2025 gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""perftest output parser, bandwidth evaluation and diagnosis, over the real captures in the captures folder."""

import os
import re

import pytest

from ansible_collections.gpudirect.openshift.tests.unit.fixtures import synthetic_sysfs
from ansible_collections.gpudirect.openshift.plugins.module_utils.verify import perftest_diagnosis, perftest_output
from ansible_collections.gpudirect.openshift.plugins.module_utils.verify.perftest_output import (
    MIB_PER_SEC_TO_GBPS,
    PerftestParseError,
    evaluate_bw,
    parse_bw_output,
)
from ansible_collections.gpudirect.openshift.plugins.module_utils.verify.perftest_diagnosis import DIAGNOSIS_CODES, diagnose

CLIENT = 'cloud-native-stack_ubuntu24_v19_client_sweep_roce.txt'
SERVER = 'cloud-native-stack_ubuntu24_v19_server_roce.txt'
CUDA_CLIENT = 'nvidia-gpu-addon-operator_ocp410_T4_client_use_cuda_sweep_roce.txt'
SIZES = [2 ** exponent for exponent in range(1, 24)]


def _capture_dir():
    root = synthetic_sysfs.fixtures_dir()
    return os.path.join(root, 'command-outputs', 'ib_write_bw')


def read_capture(name):
    with open(os.path.join(_capture_dir(), name)) as handle:
        return handle.read()


def test_every_capture_is_covered():
    assert sorted(os.listdir(_capture_dir())) == sorted([CLIENT, SERVER, CUDA_CLIENT])


# ---------------------------------------------------------------------------------------------- real captures

def test_client_sweep_capture():
    result = parse_bw_output(read_capture(CLIENT))
    assert result['role'] == 'client'
    assert result['test'] == 'ib_write_bw'
    assert result['verb'] == 'RDMA_Write'
    assert result['test_title'] == 'RDMA_Write BW Test'
    assert result['bidirectional'] is False
    assert result['device'] == 'mlx5_0'
    assert result['link_type'] == 'Ethernet'
    assert result['transport_type'] == 'IB'
    assert result['connection_type'] == 'RC'
    assert result['mtu'] == 1024
    assert result['qps'] == 1
    assert result['gid_index'] == 4
    assert result['rdma_cm'] is False
    assert result['use_cuda'] is False
    assert result['cuda'] is None
    assert result['units'] == 'Gb/sec'
    header = result['header']
    assert header['tx_depth'] == 128
    assert header['cq_moderation'] == 100
    assert header['max_inline_data'] == 0
    assert header['using_srq'] is False
    assert header['dual_port'] is False
    assert header['data_exchange_method'] == 'Ethernet'
    assert result['local_addresses'] == [{
        'lid': '0000', 'qpn': '0x0137', 'psn': '0x3c5d65', 'rkey': '0x00370e', 'vaddr': '0x007ff44bf1d000',
        'gid': '00:00:00:00:00:00:00:00:00:00:255:255:192:168:111:01'}]
    assert result['remote_addresses'][0]['qpn'] == '0x0136'
    assert result['remote_addresses'][0]['gid'].endswith('192:168:111:02')
    assert [row['bytes'] for row in result['rows']] == SIZES
    assert all(row['iterations'] == 5000 for row in result['rows'])
    # first row is printed with six decimals (perftest's extended-accuracy format for < 0.1 Gb/s)
    assert result['rows'][0] == {'bytes': 2, 'iterations': 5000, 'bw_peak_gbps': 0.080755, 'bw_avg_gbps': 0.07309,
                                 'msg_rate_mpps': 4.568094}
    assert result['rows'][10] == {'bytes': 2048, 'iterations': 5000, 'bw_peak_gbps': 47.11, 'bw_avg_gbps': 43.5,
                                  'msg_rate_mpps': 2.655219}
    assert result['largest_message_row'] == {'bytes': 8388608, 'iterations': 5000, 'bw_peak_gbps': 52.52,
                                             'bw_avg_gbps': 52.52, 'msg_rate_mpps': 0.000783}
    assert result['peak_bw_avg_gbps'] == 52.52
    assert result['warnings'] == []
    assert result['errors'] == []


def test_server_capture_prints_the_last_row_only():
    result = parse_bw_output(read_capture(SERVER))
    assert result['role'] == 'server'
    assert result['device'] == 'mlx5_0'
    assert result['gid_index'] == 8
    assert 'tx_depth' not in result['header']  # perftest prints TX depth on the client side only
    assert result['local_addresses'][0]['qpn'] == '0x0136'
    assert result['remote_addresses'][0]['qpn'] == '0x0137'
    assert result['rows'] == [{'bytes': 8388608, 'iterations': 5000, 'bw_peak_gbps': 52.52, 'bw_avg_gbps': 52.52,
                               'msg_rate_mpps': 0.000783}]
    assert result['largest_message_row']['bw_avg_gbps'] == 52.52
    assert result['peak_bw_avg_gbps'] == 52.52


def test_client_and_server_captures_describe_the_same_connection():
    client = parse_bw_output(read_capture(CLIENT))
    server = parse_bw_output(read_capture(SERVER))
    assert client['local_addresses'] == server['remote_addresses']
    assert client['remote_addresses'] == server['local_addresses']


def test_cuda_client_capture_with_two_qps_and_rdma_cm():
    result = parse_bw_output(read_capture(CUDA_CLIENT))
    assert result['role'] == 'client'
    assert result['qps'] == 2
    assert result['rdma_cm'] is True
    assert result['header']['data_exchange_method'] == 'rdma_cm'
    assert result['header']['pcie_relax_order'] == 'Unsupported'
    assert result['header']['ibv_wr_api'] is False
    assert result['gid_index'] == 4
    assert result['use_cuda'] is True
    assert result['use_dmabuf'] is False  # cuMemAlloc + peer memory, not DMA-BUF
    assert result['cuda'] == {'pci_address': '41:00', 'device_index': 0, 'device_name': 'Tesla T4', 'dmabuf': False}
    assert [entry['qpn'] for entry in result['local_addresses']] == ['0x00e4', '0x00e5']
    assert [entry['qpn'] for entry in result['remote_addresses']] == ['0x00e4', '0x00e5']
    assert all(entry['gid'].endswith('192:168:02:226') for entry in result['local_addresses'])
    assert all('rkey' not in entry for entry in result['local_addresses'])
    assert [row['bytes'] for row in result['rows']] == SIZES
    assert result['largest_message_row'] == {'bytes': 8388608, 'iterations': 10000, 'bw_peak_gbps': 23.01,
                                             'bw_avg_gbps': 22.99, 'msg_rate_mpps': 0.000343}
    # the sweep peaks at 128 KiB, above the largest message
    assert result['peak_bw_avg_gbps'] == 23.22
    assert [row for row in result['rows'] if row['bw_avg_gbps'] == 23.22][0]['bytes'] == 131072
    assert result['errors'] == []


# ---------------------------------------------------------------------------------------------- format variants

def _to_mb_table(text):
    """Rewrite a Gb/sec table into perftest's MB/sec form (MB = 2^20 bytes), values rounded as perftest prints."""
    out = []
    for line in text.split('\n'):
        if '#bytes' in line:
            line = line.replace('Gb/sec', 'MB/sec')
        elif re.match(r'^\s*\d', line):
            size, iters, peak, avg, rate = line.split()
            line = ' %-7s    %-10s       %-7.2f            %-7.2f\t\t   %s' % (
                size, iters, float(peak) / MIB_PER_SEC_TO_GBPS, float(avg) / MIB_PER_SEC_TO_GBPS, rate)
        out.append(line)
    return '\n'.join(out)


def test_mb_per_sec_factor_is_perftest_mebibyte():
    assert MIB_PER_SEC_TO_GBPS == pytest.approx(1048576 * 8 / 1e9)
    assert MIB_PER_SEC_TO_GBPS == pytest.approx(0.008388608)


def test_mb_per_sec_table_is_converted_to_gbps():
    original = parse_bw_output(read_capture(CLIENT))
    converted = parse_bw_output(_to_mb_table(read_capture(CLIENT)))
    assert converted['units'] == 'MB/sec'
    assert len(converted['rows']) == len(original['rows'])
    for mb_row, gb_row in zip(converted['rows'], original['rows']):
        assert mb_row['bytes'] == gb_row['bytes']
        # MB/sec printed with 2 decimals: at most 0.005 MB/s = 4.2e-5 Gb/s of rounding
        assert mb_row['bw_avg_gbps'] == pytest.approx(gb_row['bw_avg_gbps'], abs=5e-5)
        assert mb_row['bw_peak_gbps'] == pytest.approx(gb_row['bw_peak_gbps'], abs=5e-5)
    assert converted['largest_message_row']['bw_avg_gbps'] == pytest.approx(52.52, abs=5e-5)


def test_single_size_mb_per_sec_row_exact_value():
    text = read_capture(SERVER).replace('Gb/sec', 'MB/sec').replace(
        ' 8388608    5000             52.52              52.52             0.000783',
        ' 65536      5000             11172.70           11172.06          0.178753')
    row = parse_bw_output(text)['rows'][0]
    assert row['bytes'] == 65536
    assert row['bw_avg_gbps'] == pytest.approx(11172.06 * 1048576 * 8 / 1e9)
    assert row['bw_avg_gbps'] == pytest.approx(93.719, abs=1e-3)


def test_crlf_and_unindented_output_parse_the_same():
    text = read_capture(CUDA_CLIENT)
    expected = parse_bw_output(text)
    assert parse_bw_output(text.replace('\n', '\r\n')) == expected
    assert parse_bw_output('\n'.join(line.lstrip() for line in text.split('\n'))) == expected


def test_stdout_with_warnings_inside_header_and_table():
    warning = 'Conflicting CPU frequency values detected: 3000.000000 != 2250.000000. CPU Frequency is not max.'
    lines = read_capture(CLIENT).split('\n')
    table_start = [index for index, line in enumerate(lines) if '#bytes' in line][0]
    lines.insert(table_start + 3, warning)
    lines.insert(1, ' WARNING: BW peak won\'t be measured in this run.')
    lines.insert(0, ' Requested mtu is higher than active mtu ')
    result = parse_bw_output('\n'.join(lines))
    assert result['rows'] == parse_bw_output(read_capture(CLIENT))['rows']
    assert warning in result['warnings']
    assert "WARNING: BW peak won't be measured in this run." in result['warnings']
    assert 'Requested mtu is higher than active mtu' in result['warnings']
    assert result['errors'] == []


SPEC_RUN = """\
 WARNING: BW peak won't be measured in this run.
 Perftest doesn't supports CUDA tests with inline messages: inline size set to 0
initializing CUDA
Listing all CUDA devices in system:
CUDA device 0: PCIe address is 61:00

Picking device No. 0
[pid = 42, dev = 0] device name = [NVIDIA A40]
creating CUDA Ctx
making it the current CUDA Ctx
CUDA device integrated: 0
using DMA-BUF for GPU buffer address at 0x7f0000000000 aligned at 0x7f0000000000 with aligned size 2097152
allocated GPU buffer of a 2097152 address at 0x5570 for type CUDA_MEM_DEVICE
Calling ibv_reg_dmabuf_mr(offset=0, size=2097152, addr=0x7f0000000000, fd=40) for QP #0
---------------------------------------------------------------------------------------
                    RDMA_Write BW Test
 Dual-port       : OFF\t\tDevice         : mlx5_2
 Number of qps   : 16\t\tTransport type : IB
 Connection type : RC\t\tUsing SRQ      : OFF
 PCIe relax order: ON
 ibv_wr* API     : ON
 TX depth        : 128
 CQ Moderation   : 1
 Mtu             : 1024[B]
 Link type       : Ethernet
 GID index       : 3
 Max inline data : 0[B]
 rdma_cm QPs\t : ON
 Data ex. method : rdma_cm \tTOS    : 41
---------------------------------------------------------------------------------------
 local address: LID 0000 QPN 0x0148 PSN 0x2c4a5e
 GID: 00:00:00:00:00:00:00:00:00:00:255:255:192:168:04:226
 remote address: LID 0000 QPN 0x0148 PSN 0x8fcd9e
 GID: 00:00:00:00:00:00:00:00:00:00:255:255:192:168:04:225
---------------------------------------------------------------------------------------
 #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]
 65536      10329004         0.00               180.47\t\t   0.344228
---------------------------------------------------------------------------------------
deallocating GPU buffer 00007f0000000000
destroying current CUDA Ctx
"""


def test_duration_run_with_dmabuf_tabs_and_tos():
    result = parse_bw_output(SPEC_RUN)
    assert result['qps'] == 16
    assert result['rdma_cm'] is True
    assert result['header']['tos'] == 41
    assert result['header']['data_exchange_method'] == 'rdma_cm'
    assert result['header']['pcie_relax_order'] == 'ON'
    assert result['use_cuda'] is True
    assert result['use_dmabuf'] is True
    assert result['cuda']['device_name'] == 'NVIDIA A40'
    assert result['rows'] == [{'bytes': 65536, 'iterations': 10329004, 'bw_peak_gbps': 0.0, 'bw_avg_gbps': 180.47,
                               'msg_rate_mpps': 0.344228}]
    assert "WARNING: BW peak won't be measured in this run." in result['warnings']
    assert result['errors'] == []


def test_rdma_cm_server_banner_gives_server_role():
    text = SPEC_RUN.replace(
        ' Data ex. method : rdma_cm \tTOS    : 41\n',
        ' Data ex. method : rdma_cm \tTOS    : 41\n' + '-' * 87 + '\n Waiting for client rdma_cm QP to connect\n'
        ' Please run the same command with the IB/RoCE interface IP\n').replace(' TX depth        : 128\n', '')
    result = parse_bw_output(text)
    assert result['role'] == 'server'
    assert result['rows'][0]['bw_avg_gbps'] == 180.47


@pytest.mark.parametrize('title, tool', [
    ('Send BW Test', 'ib_send_bw'),
    ('RDMA_Read BW Test', 'ib_read_bw'),
    ('RDMA_Write Bidirectional BW Test', 'ib_write_bw'),
])
def test_other_bandwidth_tools(title, tool):
    result = parse_bw_output(read_capture(SERVER).replace('RDMA_Write BW Test', title))
    assert result['test'] == tool
    assert result['bidirectional'] == ('Bidirectional' in title)
    assert result['largest_message_row']['bw_avg_gbps'] == 52.52


def test_per_port_and_cpu_util_columns():
    text = read_capture(SERVER).replace(
        ' #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]',
        ' #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]   BW Port1[Gb/sec]   '
        'MsgRate Port1[Mpps]   BW Port2[Gb/sec]   MsgRate Port2[Mpps]    CPU_Util[%]').replace(
        ' 8388608    5000             52.52              52.52             0.000783',
        ' 8388608    5000           52.52              52.52\t\t   0.000783        26.26              0.000391'
        '              26.26              0.000392\t    97.50')
    row = parse_bw_output(text)['rows'][0]
    assert row['bw_avg_gbps'] == 52.52
    assert row['bw_port1_gbps'] == 26.26
    assert row['msg_rate_port2_mpps'] == 0.000392
    assert row['cpu_util_percent'] == 97.5


# ---------------------------------------------------------------------------------------------- malformed output

@pytest.mark.parametrize('name', [CLIENT, SERVER, CUDA_CLIENT])
def test_every_prefix_either_fails_or_gives_the_full_numbers(name):
    """Cut the capture anywhere: a prefix never yields a number the full output does not have.

    Cuts at every line boundary (and one character either side), every third character of the table and every
    character of its last 300 characters, where a cut inside the last row is the hardest case.
    """
    text = read_capture(name)
    full = parse_bw_output(text)
    table_at = text.index('#bytes')
    boundaries = [index for index, char in enumerate(text) if char == '\n']
    cuts = set(range(table_at, len(text), 3)) | set(range(max(0, len(text) - 300), len(text)))
    cuts |= {cut + delta for cut in boundaries for delta in (-1, 0, 1) if 0 <= cut + delta < len(text)}
    failures = 0
    for cut in sorted(cuts):
        try:
            result = parse_bw_output(text[:cut])
        except PerftestParseError:
            failures += 1
            continue
        assert cut > table_at, 'a prefix without the whole table parsed (cut at %d)' % cut
        assert result['rows'] == full['rows']
        assert result['largest_message_row'] == full['largest_message_row']
    assert failures > len(cuts) / 2


def _table_lines(text):
    lines = text.split('\n')
    start = [index for index, line in enumerate(lines) if '#bytes' in line][0]
    return lines, start


def test_cut_mid_table_names_the_problem():
    lines, start = _table_lines(read_capture(CLIENT))
    with pytest.raises(PerftestParseError, match=r'result table not terminated: output truncated after line %d'
                       % (start + 6)):
        parse_bw_output('\n'.join(lines[:start + 6]))


def test_cut_inside_a_row_names_the_line():
    lines, start = _table_lines(read_capture(CLIENT))
    row_line = lines[start + 5]
    text = '\n'.join(lines[:start + 5] + [row_line[:30]])
    with pytest.raises(PerftestParseError, match=r'result row truncated at line %d: expected 5 columns, found 3'
                       % (start + 6)):
        parse_bw_output(text)


def test_table_header_without_rows():
    lines, start = _table_lines(read_capture(SERVER))
    with pytest.raises(PerftestParseError, match='result table has no rows'):
        parse_bw_output('\n'.join(lines[:start + 1]))


def test_server_only_header_has_no_result_table():
    lines, start = _table_lines(read_capture(SERVER))
    text = '\n'.join(lines[:start])
    with pytest.raises(PerftestParseError, match='^no result table found$'):
        parse_bw_output(text)
    waiting = parse_bw_output(text, require_results=False)
    assert waiting['role'] == 'server'
    assert waiting['rows'] == []
    assert waiting['largest_message_row'] is None
    assert waiting['peak_bw_avg_gbps'] is None


@pytest.mark.parametrize('text, message', [
    ('', 'perftest output is empty'),
    ('  \n\n\t\n', 'perftest output is empty'),
    ('the quick brown fox\n\x00\x01\x02 ### 12 34\n', 'no perftest header and no result table found'),
    ('<html><body>502 Bad Gateway</body></html>', 'no perftest header and no result table found'),
])
def test_empty_and_garbage(text, message):
    with pytest.raises(PerftestParseError, match=message):
        parse_bw_output(text)


def test_non_text_input():
    with pytest.raises(PerftestParseError, match='got None'):
        parse_bw_output(None)
    with pytest.raises(PerftestParseError, match='must be text, got int'):
        parse_bw_output(42)


def test_table_without_header():
    lines, start = _table_lines(read_capture(CLIENT))
    with pytest.raises(PerftestParseError, match='no test header found'):
        parse_bw_output('\n'.join(lines[start - 1:]))


def test_header_without_device_line():
    text = '\n'.join(line for line in read_capture(SERVER).split('\n') if 'Device' not in line)
    with pytest.raises(PerftestParseError, match='no "Device" line'):
        parse_bw_output(text)


def test_non_numeric_and_extra_cells():
    text = read_capture(CLIENT)
    with pytest.raises(PerftestParseError, match=r"result row at line \d+ has a non-numeric value '52\.5x'"):
        parse_bw_output(text.replace('52.51              52.51             0.006260', '52.5x              52.51  '
                                     '           0.006260'))
    with pytest.raises(PerftestParseError, match=r'result row at line \d+ has 6 columns, the table header has 5'):
        parse_bw_output(text.replace('0.006260', '0.006260 17'))
    with pytest.raises(PerftestParseError, match='non-finite'):
        parse_bw_output(text.replace('52.51              52.51             0.006260', 'nan  52.51  0.006260'))


def test_two_runs_in_one_text():
    text = read_capture(SERVER) + read_capture(SERVER)
    with pytest.raises(PerftestParseError, match='a second test header at line'):
        parse_bw_output(text)


def test_latency_output_is_refused():
    text = read_capture(SERVER).replace('RDMA_Write BW Test', 'RDMA_Write Latency Test')
    with pytest.raises(PerftestParseError, match='latency test header; only bandwidth tests are supported'):
        parse_bw_output(text)


def test_failed_client_reports_perftest_errors():
    text = "Couldn't connect to 192.168.111.2:18515\n Unable to init the socket connection\n"
    with pytest.raises(PerftestParseError) as raised:
        parse_bw_output(text)
    assert str(raised.value) == ("no perftest header and no result table found; perftest reported: "
                                 "Couldn't connect to 192.168.111.2:18515 | Unable to init the socket connection")


def test_failed_run_after_header_keeps_errors_with_require_results_false():
    lines, start = _table_lines(read_capture(CLIENT))
    text = '\n'.join(lines[:start] + [' Failed to modify QP 311 to RTR', " Unable to Connect the HCA's through the link"])
    with pytest.raises(PerftestParseError, match='no result table found; perftest reported: Failed to modify QP 311'):
        parse_bw_output(text)
    result = parse_bw_output(text, require_results=False)
    assert result['errors'] == ['Failed to modify QP 311 to RTR', "Unable to Connect the HCA's through the link"]
    assert result['error_codes'] == ['wrong_gid']


# ---------------------------------------------------------------------------------------------- evaluation

def test_evaluate_spec_run_on_hdr_link():
    verdict = evaluate_bw(parse_bw_output(SPEC_RUN), 200)
    assert verdict == {
        'passed': True, 'code': 'passed', 'measured_gbps': 180.47, 'expected_gbps': 160.0, 'link_rate_gbps': 200.0,
        'threshold': 0.8, 'fraction': 0.9023, 'message_size': 65536,
        'reason': '180.47 Gb/s at 65536 B is 90.2% of the 200 Gb/s link, at or above the 80% threshold (160.00 Gb/s)'}


def test_evaluate_sweep_uses_largest_message():
    parsed = parse_bw_output(read_capture(CLIENT))
    verdict = evaluate_bw(parsed, '56 Gb/sec (4X FDR)', 0.9)
    assert verdict['measured_gbps'] == 52.52
    assert verdict['message_size'] == 8388608
    assert verdict['expected_gbps'] == pytest.approx(50.4)
    assert verdict['fraction'] == pytest.approx(0.9379)
    assert verdict['passed'] is True
    failed = evaluate_bw(parsed, 100)
    assert failed['passed'] is False
    assert failed['code'] == 'bandwidth_below_threshold'
    assert failed['reason'] == ('52.52 Gb/s at 8388608 B is 52.5% of the 100 Gb/s link, below the 80% threshold '
                                '(80.00 Gb/s)')


def test_evaluate_selected_message_size_and_boundary():
    parsed = parse_bw_output(read_capture(CUDA_CLIENT))
    verdict = evaluate_bw(parsed, 25, threshold=0.92, message_size=65536)
    assert verdict['measured_gbps'] == 23.03
    assert verdict['expected_gbps'] == 23.0
    assert verdict['passed'] is True
    exact = evaluate_bw(parsed, 23.03, threshold=1.0, message_size=65536)
    assert exact['passed'] is True
    with pytest.raises(ValueError, match='no result row for message size 65537'):
        evaluate_bw(parsed, 25, message_size=65537)


def test_evaluate_raw_text_and_bad_arguments():
    assert evaluate_bw(read_capture(SERVER), 50)['passed'] is True
    parsed = parse_bw_output(read_capture(SERVER))
    for bad_rate in (0, -100, 'fast', True, None, float('nan')):
        with pytest.raises(ValueError, match='link_rate_gbps'):
            evaluate_bw(parsed, bad_rate)
    for bad_threshold in (0, 1.5, -0.1, 'high'):
        with pytest.raises(ValueError, match='threshold'):
            evaluate_bw(parsed, 100, bad_threshold)
    with pytest.raises(ValueError, match='no result rows'):
        evaluate_bw(dict(parsed, rows=[], largest_message_row=None), 100)
    with pytest.raises(ValueError, match='expected the result of ib_write_bw_parse'):
        evaluate_bw({'device': 'mlx5_0'}, 100)


def test_evaluate_fails_when_perftest_printed_errors():
    parsed = dict(parse_bw_output(read_capture(SERVER)), errors=['Completion with error at server'])
    verdict = evaluate_bw(parsed, 50)
    assert verdict['passed'] is False
    assert verdict['code'] == 'perftest_errors'
    assert 'Completion with error at server' in verdict['reason']


# ---------------------------------------------------------------------------------------------- diagnosis

def _pod(phase, waiting_reason=None, conditions=None, message=None):
    status = {'phase': phase, 'conditions': conditions or []}
    if waiting_reason:
        status['containerStatuses'] = [{'name': 'perftest', 'state': {'waiting': {
            'reason': waiting_reason, 'message': message or ''}}}]
    return {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': 'rdma-client'}, 'status': status}


def test_diagnose_image_pull_from_pod_object():
    pod = _pod('Pending', 'ImagePullBackOff', message='Back-off pulling image "quay.io/x/perftest:bad"')
    result = diagnose(pod=pod)
    assert result['code'] == 'image_pull_error'
    assert result['ok'] is False
    assert 'ImagePullBackOff' in result['evidence']
    assert diagnose(phase='Pending', reason='ErrImagePull')['code'] == 'image_pull_error'


def test_diagnose_resources_not_allocatable():
    message = ('0/6 nodes are available: 3 Insufficient rdma/rdma_shared_device_eth, 2 Insufficient nvidia.com/gpu, '
               '3 node(s) had untolerated taint {node-role.kubernetes.io/master: }.')
    pod = _pod('Pending', conditions=[{'type': 'PodScheduled', 'status': 'False', 'reason': 'Unschedulable',
                                       'message': message}])
    result = diagnose(pod=pod)
    assert result['code'] == 'resource_not_allocatable'
    assert 'rdma/rdma_shared_device_eth, nvidia.com/gpu' in result['message']
    assert result['evidence'] == [message]
    event = {'reason': 'FailedScheduling', 'message': '0/3 nodes are available: 3 Insufficient openshift.io/sriov_rdma.'}
    assert 'openshift.io/sriov_rdma' in diagnose(phase='Pending', events=[event])['message']


def test_diagnose_other_scheduling_failure():
    pod = _pod('Pending', conditions=[{'type': 'PodScheduled', 'status': 'False', 'reason': 'Unschedulable',
                                       'message': "0/3 nodes are available: 3 node(s) didn't match node selector."}])
    result = diagnose(pod=pod)
    assert result['code'] == 'pod_unschedulable'
    assert "didn't match node selector" in result['message']


@pytest.mark.parametrize('log, code', [
    ('initializing CUDA\ncuInit(0) returned 100\n', 'no_gpu_memory_path'),
    ('initializing CUDA\nThere are no available device(s) that support CUDA\n', 'no_gpu_memory_path'),
    ('CUDA device integrated: 0\ncuMemAlloc error=2\nFailed to init memory\n', 'no_gpu_memory_path'),
    ('DMA-BUF is not supported on this GPU\nFailed to init memory\n', 'no_gpu_memory_path'),
    ("ib_write_bw: unrecognized option '--use_cuda=0'\n", 'no_gpu_memory_path'),
    ("initializing CUDA\nallocated GPU buffer address at 00007f\nCouldn't allocate MR\n", 'no_gpu_memory_path'),
    ("Couldn't allocate MR\nfailed to create mr\nFailed to create MR\n Couldn't create IB resources\n",
     'memory_registration_failed'),
    (' IB device mlx5_9 not found\n Unable to find the Infiniband/RoCE device\n', 'rdma_device_not_found'),
    (' Port number 1 state is Down\n Couldn\'t set the link layer\n', 'link_down'),
    ("Couldn't connect to 192.168.4.225:10000\n Unable to init the socket connection\n", 'link_down'),
    ('Received 10 times ADDR_ERROR\n Unable to perform rdma_client function\n', 'link_down'),
    ("Failed to modify QP 228 to RTR\n Unable to Connect the HCA's through the link\n", 'wrong_gid'),
    ('Completion with error at client\nFailed status 12: wr_id 0 syndrom 0x81\nscnt=128, ccnt=0\n', 'wrong_gid'),
    ('Segmentation fault (core dumped)\n', 'unknown'),
])
def test_diagnose_perftest_log(log, code):
    result = diagnose(log=log, phase='Failed')
    assert result['code'] == code
    assert result['evidence'], 'the diagnosis must show the line it is based on'
    assert all(line in log for line in result['evidence'])


def test_diagnose_real_captures_are_ok():
    for name in (CLIENT, SERVER, CUDA_CLIENT):
        result = diagnose(log=read_capture(name), phase='Succeeded')
        assert result == {'code': 'ok', 'ok': True, 'message': perftest_diagnosis._MESSAGES['ok'], 'evidence': []}


def test_diagnose_timeout():
    lines, start = _table_lines(read_capture(SERVER))
    server_waiting = '\n'.join(lines[:start])
    result = diagnose(log=server_waiting, phase='Running', timed_out=True)
    assert result['code'] == 'timeout'
    assert 'still waiting for the client' in result['message']
    assert result['evidence'] == ['* Waiting for client to connect... *']
    assert diagnose(pod=_pod('Failed'), reason='DeadlineExceeded')['code'] == 'timeout'
    assert diagnose(log='', timed_out=True)['message'].endswith('no perftest output was captured')


def test_diagnose_bandwidth_below_threshold():
    log = read_capture(CUDA_CLIENT)
    evaluation = evaluate_bw(parse_bw_output(log), 100)
    result = diagnose(log=log, phase='Succeeded', evaluation=evaluation)
    assert result['code'] == 'bandwidth_below_threshold'
    assert '22.99 Gb/s at 8388608 B is 23.0% of the 100 Gb/s link' in result['message']
    passed = diagnose(log=log, evaluation=evaluate_bw(parse_bw_output(log), 25))
    assert passed['code'] == 'ok'


def test_diagnose_unknown():
    assert diagnose()['code'] == 'unknown'
    result = diagnose(log='hello\n', phase='Failed')
    assert result['code'] == 'unknown'
    assert result['message'].endswith('perftest printed no result table and no recognised error (pod phase Failed)')
    assert diagnose(phase='Failed', reason='Error')['message'].endswith('pod phase Failed, reasons: Error and no perftest output')


def test_every_code_has_a_message():
    assert set(DIAGNOSIS_CODES) == set(perftest_diagnosis._MESSAGES)
    assert {code for code, _pattern in perftest_output.ERROR_PATTERNS} <= set(DIAGNOSIS_CODES)


@pytest.mark.parametrize('rate, gbps', [
    ('100000 Mb/s', 100.0), ('100000Mb/s', 100.0), ('25000Mbps', 25.0),
    ('200 Gb/sec (4X HDR)', 200.0), ('400 Gb/s', 400.0), ('50', 50.0), (' 100 Gbps ', 100.0),
])
def test_link_rate_units_are_read_not_skipped(rate, gbps):
    """issue 18 point 9: '100000 Mb/s' (ethtool) was read as 100000 Gb/s."""
    result = evaluate_bw(parse_bw_output(read_capture(SERVER)), rate)
    assert result['link_rate_gbps'] == gbps


@pytest.mark.parametrize('rate', ['100 Kb/s', '100 GB/s', '100 Gb/s extra', '100 furlongs'])
def test_a_link_rate_with_an_unknown_unit_is_refused(rate):
    with pytest.raises(ValueError, match='link_rate_gbps'):
        evaluate_bw(parse_bw_output(read_capture(SERVER)), rate)


# ---------------------------------------------------------------------------------------------- issue 18 point 9

def _cut_after(text, marker):
    """The text up to and including marker (a log cut there, mid-line)."""
    return text[:text.index(marker) + len(marker)]


def test_log_cut_inside_a_header_value_leaves_it_unknown_and_warns():
    # 'Mtu             : 1024[B]' cut to '... : 10': the value must not be read as an MTU of 10.
    text = _cut_after(read_capture(CLIENT), 'Mtu             : 10')
    result = parse_bw_output(text, require_results=False)
    assert result['mtu'] is None and 'mtu' not in result['header']
    assert result['device'] == 'mlx5_0' and result['qps'] == 1  # complete lines before the cut are kept
    assert result['link_type'] is None  # after the cut
    assert result['truncated'] == 'the output ends inside the test header (line 8)'
    assert 'line 8 was cut: header value mtu=10 ignored' in result['warnings']
    with pytest.raises(PerftestParseError, match=r'no result table found \(the output ends inside the test header'):
        parse_bw_output(text)


def test_log_cut_inside_the_device_value_is_an_error_not_a_device():
    text = _cut_after(read_capture(CLIENT), 'Device         : mlx5')
    with pytest.raises(PerftestParseError, match='ends inside the test header .line 3., before a complete "Device" value'):
        parse_bw_output(text, require_results=False)
    diagnosis = diagnose(log=text)
    assert diagnosis['code'] == 'unknown'
    assert 'the log is cut short: the output ends inside the test header' in diagnosis['message']


def test_log_cut_at_a_line_break_in_the_header_keeps_whole_values():
    text = _cut_after(read_capture(CLIENT), 'Link type       : Ethernet\n')
    result = parse_bw_output(text, require_results=False)
    assert (result['mtu'], result['link_type'], result['gid_index']) == (1024, 'Ethernet', None)
    assert result['truncated'] == 'the output ends inside the test header (line 9)'
    assert not any('was cut' in warning for warning in result['warnings'])


def test_complete_captures_are_not_truncated():
    for name in (CLIENT, SERVER, CUDA_CLIENT):
        result = parse_bw_output(read_capture(name))
        assert result['truncated'] is None
        assert not any('cut' in warning for warning in result['warnings'])


def test_log_cut_inside_a_gid_drops_the_gid():
    full = read_capture(CLIENT)
    remote_gid = full.index('GID: ', full.index('remote address'))
    text = full[:remote_gid + len('GID: 00:00:00:00:00:00:00:00:00:00:255:255:192:168:11')]
    result = parse_bw_output(text, require_results=False)
    assert 'gid' not in result['remote_addresses'][0]
    assert result['local_addresses'][0]['gid'] == '00:00:00:00:00:00:00:00:00:00:255:255:192:168:111:01'
    assert any(warning.startswith('line 18 was cut: GID') for warning in result['warnings'])


@pytest.mark.parametrize('names', [(SERVER, SERVER), (CLIENT, SERVER), (SERVER, CUDA_CLIENT)])
def test_diagnose_names_two_concatenated_runs(names):
    log = '\n'.join(read_capture(name) for name in names)
    diagnosis = diagnose(log=log, phase='Succeeded')
    assert diagnosis['code'] == 'unknown'
    assert diagnosis['message'].startswith('the cause could not be determined: the log holds more than one perftest run '
                                           '(a second test header at line ')
    assert 'no result table' not in diagnosis['message']
