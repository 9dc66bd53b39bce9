# Copyright (c) 2025 gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parse nccl-tests output (all_reduce_perf and its siblings) and judge an all-reduce against the rails' bandwidth.

The layout follows nccl-tests' own printing code (NVIDIA/nccl-tests src/util.cu writeResultHeader,
writeBenchmarkLinePreamble, writeBenchmarkLineBody, writeResultFooter at v2.19.6; src/common.cu before v2.13,
where the last column of each half was the largest delta, "error", instead of the count "#wrong").
Pure standard library: the same code runs in filter plugins, modules and the simulator's tests.
"""


import math
import re

from ansible_collections.gpudirect.openshift.plugins.module_utils.verify import nccl_calibration
from ansible_collections.gpudirect.openshift.plugins.module_utils.verify.table_numbers import (
    NOT_A_NUMBER,
    CellError,
    cell_number,
    judged_row,
    threshold_fraction,
)


# The environment of an NCCL job on the rails: the NCCL pods (cluster/nccl_run.py) and the rendered workload
# template (render/workload.py) both set it.
def nccl_environment(hcas, fabric, gid_index=None):
    """NCCL variables that make NCCL use the rails: NCCL_IB_HCA lists them after '=' (exact names, not prefixes, so
    mlx5_1 does not also pick mlx5_10); RoCE needs the RoCE v2 GID index (3 on RHCOS with an IPv4 address)."""
    env = {"NCCL_IB_HCA": "=" + ",".join(hcas)} if hcas else {}
    if fabric == "roce":
        env["NCCL_IB_GID_INDEX"] = str(3 if gid_index is None else gid_index)
    return env


# Element sizes by the type names nccl-tests prints (src/common.cu test_typenames).
TYPE_BYTES = {
    'int8': 1, 'uint8': 1, 'int32': 4, 'uint32': 4, 'int64': 8, 'uint64': 8,
    'half': 2, 'float': 4, 'double': 8, 'bfloat16': 2, 'f8e4m3': 1, 'f8e5m2': 1,
    # names printed by the oldest releases
    'char': 1, 'int': 4, 'float16': 2, 'float32': 4, 'float64': 8,
}

_TAG_PREFIX = re.compile(r'^\[\d{1,6},\d{1,6}\]<(stdout|stderr)>:')
_NCCL_LOG = re.compile(
    r'^(?:\[[0-9: -]{1,32}\] )?\S{1,256}:\d{1,10}:\d{1,10} \[\d{1,4}\] (?:\S{1,200} )?NCCL (INFO|WARN|TRACE)\b')
_VERSION = re.compile(r'^# nccl-tests version (\S+) nccl-headers=(\d+) nccl-library=(\d+)\s*$')
_STARTING = re.compile(r'^# Collective test starting: (\S+)\s*$')
_CONCLUDED = re.compile(r'^# Collective test concluded: (\S+)\s*$')
_NCCL_VERSION = re.compile(r'^NCCL version (\S+)\s*$')
_DEVICE = re.compile(r'^#\s+Rank\s+(\d+)(?:\s+Group\s+(\d+))?\s+Pid\s+(\d+)\s+on\s+(\S+)\s+device\s+(\d+)\s+'
                     r'\[([^\]]{1,32})\]\s+(.*?)\s*$')
_OUT_OF_BOUNDS = re.compile(r'^# Out of bounds values\s*: (\d+) (OK|FAILED)\s*$')
_AVG_BUS = re.compile(r'^# Avg bus bandwidth\s*: (\S+)\s*(OK|FAILED)?\s*$')
_ERROR_LINES = (
    re.compile(r'Test (NCCL|CUDA) failure'),
    re.compile(r'Test failure'),
    re.compile(r'NCCL error'),
    re.compile(r'Invalid number of GPUs'),
    re.compile(r'^rank=\d+ #wrong=\d+'),
    re.compile(r'(Segmentation fault|Bus error|Aborted|core dumped)'),
    re.compile(r'mpirun (noticed|detected)|prterun (noticed|detected)'),
)
_PRE_COLUMNS = ('size', 'count', 'type', 'redop', 'root')
_HALF_COLUMNS = ('time', 'algbw', 'busbw')
_ITER_COLUMNS = ('i_min', 'i_max', 'i_p99', 'i_cv%')


class NcclTestsParseError(ValueError):
    """The text is not complete nccl-tests output; the message says what is missing and where."""


def _strip(line):
    return _TAG_PREFIX.sub('', line, count=1).rstrip()


def _number(token, lineno, name):
    try:
        return cell_number(token)
    except CellError as exc:
        text = 'a number' if exc.problem == NOT_A_NUMBER else 'a finite non-negative number'
        raise NcclTestsParseError('result row at line %d: %s is not %s (%r)' % (lineno, name, text, token))


def _integer(token, lineno, name, signed=False):
    try:
        return cell_number(token, whole=True, signed=signed)
    except CellError:
        raise NcclTestsParseError('result row at line %d: %s is not a whole number (%r)' % (lineno, name, token))


def _half_unit(token):
    """Half of the last printed digit of a number as nccl-tests rounded it (None: exponent form, not checked)."""
    if 'e' in token.lower():
        return None
    if '.' not in token:
        return 0.5
    return 0.5 * 10 ** -len(token.split('.', 1)[1])


def _parse_params(line):
    """'# nThread 1 nGpus 1 minBytes 8 ... step: 2(factor) warmup iters: 5 ...' -> dict."""
    body = line[1:].strip()
    params = {}
    match = re.search(r'step:\s*(\d+)\((factor|bytes)\)', body)
    if match:
        params['step'] = int(match.group(1))
        params['step_kind'] = match.group(2)
        body = body[:match.start()] + body[match.end():]
    for key, name in (('nThread', 'nthreads'), ('nGpus', 'ngpus'), ('minBytes', 'min_bytes'), ('maxBytes', 'max_bytes'),
                      ('warmup iters:', 'warmup_iters'), ('agg iters:', 'agg_iters'), ('validation:', 'validation'),
                      ('graph:', 'graph'), ('unalign:', 'unalign')):
        found = re.search(r'(?:^|\s)' + re.escape(key) + r'\s*(\d+)', body)
        if found:
            params[name] = int(found.group(1))
    found = re.search(r'(?:^|\s)(?<!warmup )(?<!agg )iters:\s*(\d+)', body)
    if found:
        params['iters'] = int(found.group(1))
    return params


def _parse_header(line, lineno):
    """The column header line -> (pre columns, half columns, per-iteration, timestamps, time name, error name)."""
    tokens = line[1:].split()
    pre = []
    index = 0
    while index < len(tokens) and tokens[index] in _PRE_COLUMNS:
        pre.append(tokens[index])
        index += 1
    if pre[:3] != ['size', 'count', 'type']:
        raise NcclTestsParseError('table header at line %d does not start with size, count, type: %r' % (lineno, line))
    rest = tokens[index:]
    timestamps = bool(rest) and rest[-1] == 'timestamp'
    if timestamps:
        rest = rest[:-1]
    if len(rest) % 2:
        raise NcclTestsParseError('table header at line %d has an odd number of result columns: %r' % (lineno, line))
    half = rest[:len(rest) // 2]
    if half != rest[len(rest) // 2:]:
        raise NcclTestsParseError(
            'table header at line %d: the out-of-place and in-place columns differ: %r' % (lineno, line))
    time_name = half[0] if half else None
    if time_name not in ('time', 'cputime') or half[1:3] != ['algbw', 'busbw'] or len(half) < 4:
        raise NcclTestsParseError('table header at line %d: expected time, algbw, busbw and #wrong (or error) in each '
                                  'half: %r' % (lineno, line))
    error_name = half[3]
    if error_name not in ('#wrong', 'error'):
        raise NcclTestsParseError('table header at line %d: unknown check column %r' % (lineno, error_name))
    per_iteration = tuple(half[4:]) == _ITER_COLUMNS
    if half[4:] and not per_iteration:
        raise NcclTestsParseError('table header at line %d: unknown columns %s' % (lineno, ', '.join(half[4:])))
    return pre, len(half), per_iteration, timestamps, time_name, error_name


def _parse_half(tokens, lineno, error_name, per_iteration, label):
    result = {
        'time_us': _number(tokens[0], lineno, label + ' time'),
        'algbw_gbs': _number(tokens[1], lineno, label + ' algbw'),
        'busbw_gbs': _number(tokens[2], lineno, label + ' busbw'),
    }
    check = tokens[3]
    if error_name == '#wrong':
        # "N/A" when the run did not check results (-c 0)
        result['wrong'] = None if check == 'N/A' else _integer(check, lineno, label + ' #wrong')
    else:
        result['max_error'] = None if check == 'N/A' else _number(check, lineno, label + ' error')
    if per_iteration:
        for offset, name in enumerate(('i_min_us', 'i_max_us', 'i_p99_us', 'i_cv_percent')):
            result[name] = _number(tokens[4 + offset], lineno, label + ' ' + name)
    result['_tokens'] = tokens[:3]
    return result


def _check_row(row, half, label, lineno, nranks, collective):
    """A row whose numbers do not fit together was cut, mixed with other text or is not nccl-tests output."""
    time_token, algbw_token, busbw_token = half.pop('_tokens')
    size = row['size_bytes']
    time_half = _half_unit(time_token)
    algbw_half = _half_unit(algbw_token)
    if time_half is not None and algbw_half is not None and half['time_us'] > time_half:
        # algbw = size / time (GB/s = bytes / us / 1000), from the printed time with its rounding
        highest = size / ((half['time_us'] - time_half) * 1e3)
        lowest = size / ((half['time_us'] + time_half) * 1e3)
        if not lowest - algbw_half <= half['algbw_gbs'] <= highest + algbw_half:
            raise NcclTestsParseError('result row at line %d: %s algbw %s GB/s does not match %d bytes in %s us'
                                      % (lineno, label, algbw_token, size, time_token))
    busbw_half = _half_unit(busbw_token)
    if collective == 'all_reduce' and nranks and algbw_half is not None and busbw_half is not None:
        factor = 2.0 * (nranks - 1) / nranks
        expected = half['algbw_gbs'] * factor
        if abs(half['busbw_gbs'] - expected) > algbw_half * factor + busbw_half + 1e-9:
            raise NcclTestsParseError('result row at line %d: %s busbw %s GB/s is not algbw x 2(n-1)/n = %.2f for the '
                                      '%d ranks listed under "Using devices" (output of two runs mixed, or cut?)'
                                      % (lineno, label, busbw_token, expected, nranks))


def _collective(program):
    if not program:
        return None
    name = program.split('/')[-1]
    for suffix in ('_perf_mpi', '_perf'):
        if name.endswith(suffix):
            return name[:-len(suffix)]
    return name


def parse_nccl_tests_output(text, require_results=True, collective=None):
    """Parse the output of one nccl-tests run (rank 0's stdout, optionally with mpirun --tag-output prefixes).

    Returns a dict with the run parameters, the devices, one entry per result row (out-of-place and in-place
    halves, bandwidths in GB/s as printed), the footer values and the warning and error lines. Raises
    NcclTestsParseError for output that is empty, cut, holds two runs, is not nccl-tests output or whose numbers
    do not fit together; with require_results=False a run that failed before its table is returned with rows=[].
    collective names the test (for example 'all_reduce') when the output does not (releases before 2.18).
    """
    if text is None:
        raise NcclTestsParseError('no nccl-tests output (got None)')
    if isinstance(text, (bytes, bytearray)):
        text = text.decode('utf-8', 'replace')
    if not isinstance(text, str):
        raise NcclTestsParseError('nccl-tests output must be text, got %s' % type(text).__name__)
    if not text.strip():
        raise NcclTestsParseError('nccl-tests output is empty')
    lines = [_strip(line) for line in text.replace('\r\n', '\n').replace('\r', '\n').split('\n')]

    result = {
        'version': None, 'nccl_headers': None, 'nccl_library': None, 'nccl_version': None,
        'program': None, 'collective': collective, 'params': {}, 'devices': [],
        'columns': None, 'time_column': None, 'check_column': None, 'per_iteration': False, 'timestamps': False,
        'rows': [], 'out_of_bounds': None, 'out_of_bounds_ok': None, 'avg_busbw_gbs': None, 'avg_busbw_check': None,
        'concluded': False, 'warnings': [], 'errors': [], 'wrong_rows': [],
    }
    layout = None
    table_line = None
    seen_params = 0
    footer_line = None
    for lineno, line in enumerate(lines, 1):
        stripped = line.strip()
        if not stripped:
            continue
        log = _NCCL_LOG.match(stripped)
        if log:
            if log.group(1) == 'WARN':
                result['warnings'].append(stripped)
            continue
        if any(pattern.search(stripped) for pattern in _ERROR_LINES):
            result['errors'].append(stripped)
            continue
        match = _VERSION.match(stripped)
        if match:
            if result['version'] is not None:
                raise NcclTestsParseError('line %d starts a second run (second "nccl-tests version" line): '
                                          'parse one run at a time' % lineno)
            result['version'], result['nccl_headers'], result['nccl_library'] = (match.group(1), int(match.group(2)),
                                                                                 int(match.group(3)))
            continue
        match = _STARTING.match(stripped)
        if match:
            result['program'] = match.group(1)
            result['collective'] = _collective(match.group(1))
            continue
        match = _CONCLUDED.match(stripped)
        if match:
            result['concluded'] = True
            continue
        match = _NCCL_VERSION.match(stripped)
        if match:
            result['nccl_version'] = match.group(1)
            continue
        if stripped.startswith('# nThread '):
            seen_params += 1
            if seen_params > 1:
                raise NcclTestsParseError('line %d starts a second run (second "# nThread" line): two processes '
                                          'printed their own output (nccl-tests built without MPI but started by '
                                          'mpirun?)' % lineno)
            result['params'] = _parse_params(stripped)
            continue
        match = _DEVICE.match(stripped)
        if match:
            result['devices'].append({
                'rank': int(match.group(1)), 'group': int(match.group(2)) if match.group(2) is not None else None,
                'pid': int(match.group(3)), 'host': match.group(4), 'device': int(match.group(5)),
                'bus_id': match.group(6), 'name': match.group(7),
            })
            continue
        if stripped.startswith('#') and re.match(r'^#\s+size\s+count\s', stripped):
            if layout is not None:
                raise NcclTestsParseError('line %d holds a second table header (first at line %s): output of two runs '
                                          'mixed' % (lineno, table_line))
            if result['rows']:
                raise NcclTestsParseError('line %d: table header after result rows' % lineno)
            layout = _parse_header(stripped, lineno)
            table_line = lineno
            pre, half_width, per_iteration, timestamps, time_name, error_name = layout
            result['columns'] = pre
            result['time_column'] = time_name
            result['check_column'] = error_name
            result['per_iteration'] = per_iteration
            result['timestamps'] = timestamps
            continue
        match = _OUT_OF_BOUNDS.match(stripped)
        if match:
            result['out_of_bounds'] = int(match.group(1))
            result['out_of_bounds_ok'] = match.group(2) == 'OK'
            continue
        match = _AVG_BUS.match(stripped)
        if match:
            result['avg_busbw_gbs'] = _number(match.group(1), lineno, 'Avg bus bandwidth')
            result['avg_busbw_check'] = match.group(2)
            footer_line = lineno
            continue
        if stripped.startswith('#'):
            continue
        if re.match(r'^\d', stripped):
            if layout is None:
                raise NcclTestsParseError('line %d looks like a result row but no table header came before it '
                                          '(output cut at the start, or not nccl-tests output): %r'
                                          % (lineno, stripped[:120]))
            if footer_line is not None:
                raise NcclTestsParseError('line %d: result row after the "Avg bus bandwidth" line' % lineno)
            result['rows'].append(_parse_row(stripped, lineno, layout, result))
            continue
        # Anything else (launcher chatter, NCCL's own banner lines) is kept out of the numbers.
    return _finish(result, require_results, table_line, footer_line, len(lines))


def _parse_row(line, lineno, layout, result):
    pre, half_width, per_iteration, timestamps, time_name, error_name = layout
    tokens = line.split()
    expected = len(pre) + 2 * half_width + (2 if timestamps else 0)
    if len(tokens) != expected:
        raise NcclTestsParseError('result row at line %d has %d fields, the table header has %d (row cut or mixed with '
                                  'other output): %r' % (lineno, len(tokens), expected, line[:160]))
    row = {'size_bytes': _integer(tokens[0], lineno, 'size'), 'count': _integer(tokens[1], lineno, 'count'),
           'type': tokens[2]}
    position = 3
    if 'redop' in pre:
        row['redop'] = tokens[position]
        position += 1
    if 'root' in pre:
        row['root'] = _integer(tokens[position], lineno, 'root', signed=True)
        position += 1
    width = TYPE_BYTES.get(row['type'])
    if width is None:
        raise NcclTestsParseError('result row at line %d: unknown data type %r' % (lineno, row['type']))
    if result['collective'] == 'all_reduce' and row['size_bytes'] != row['count'] * width:
        raise NcclTestsParseError('result row at line %d: %d bytes is not %d %s elements of %d bytes'
                                  % (lineno, row['size_bytes'], row['count'], row['type'], width))
    out_of_place = _parse_half(tokens[position:position + half_width], lineno, error_name, per_iteration,
                               'out-of-place')
    in_place = _parse_half(tokens[position + half_width:position + 2 * half_width], lineno, error_name, per_iteration,
                           'in-place')
    nranks = len(result['devices'])
    for label, half in (('out-of-place', out_of_place), ('in-place', in_place)):
        _check_row(row, half, label, lineno, nranks, result['collective'])
    row['out_of_place'] = out_of_place
    row['in_place'] = in_place
    if timestamps:
        row['timestamp'] = ' '.join(tokens[-2:])
    return row


def _finish(result, require_results, table_line, footer_line, line_count):
    rows = result['rows']
    if not rows:
        if result['errors'] and not require_results:
            return _summarise(result)
        if result['errors']:
            raise NcclTestsParseError('the run failed before any result: %s' % ' | '.join(result['errors'][:3]))
        if not require_results and (result['params'] or result['devices']):
            return _summarise(result)
        if table_line is None and not result['params']:
            raise NcclTestsParseError('not nccl-tests output: no "# nThread" line and no result table')
        where = ' after the table header at line %d' % table_line if table_line else ''
        raise NcclTestsParseError('no result rows%s: output cut short' % where)
    if footer_line is None:
        if result['errors']:
            raise NcclTestsParseError(
                'the run failed after %d result rows: %s' % (len(rows), ' | '.join(result['errors'][:3])))
        raise NcclTestsParseError('output cut after %d result rows: no "# Avg bus bandwidth" line' % len(rows))
    if result['devices']:
        ranks = sorted(device['rank'] for device in result['devices'])
        if ranks != list(range(len(ranks))):
            raise NcclTestsParseError('the "Using devices" lines list ranks %s, not 0..%d once each (two runs mixed?)'
                                      % (ranks, len(ranks) - 1))
    return _summarise(result)


def _summarise(result):
    rows = result['rows']
    result['ranks'] = len(result['devices']) or None
    result['hosts'] = sorted({device['host'] for device in result['devices']})
    wrong_rows = []
    for row in rows:
        for label in ('out_of_place', 'in_place'):
            half = row[label]
            if half.get('wrong'):
                wrong_rows.append({'size_bytes': row['size_bytes'], 'type': row['type'], 'place': label,
                                   'wrong': half['wrong']})
    result['wrong_rows'] = wrong_rows
    if rows:
        largest = max(row['size_bytes'] for row in rows)
        result['largest_message_row'] = [row for row in rows if row['size_bytes'] == largest][-1]
        result['peak_busbw_gbs'] = max(max(row['out_of_place']['busbw_gbs'], row['in_place']['busbw_gbs'])
                                       for row in rows)
        busbw = [row[label]['busbw_gbs'] for row in rows for label in ('out_of_place', 'in_place')]
        mean = sum(busbw) / len(busbw)
        # The footer is rank 0's mean busbw over every half-row it measured (src/common.cu bw[0] / bw_count[0]);
        # with several threads per process it mixes threads whose rows are not printed, so a gap is a warning only.
        if result['avg_busbw_gbs'] is not None and abs(mean - result['avg_busbw_gbs']) > 0.006 + 0.01 * mean:
            result['warnings'].append('the "Avg bus bandwidth" line (%s GB/s) is not the mean busbw of the rows (%.3f '
                                      'GB/s)' % (result['avg_busbw_gbs'], mean))
    else:
        result['largest_message_row'] = None
        result['peak_busbw_gbs'] = None
    result['passed_checks'] = bool(rows) and not result['errors'] and not wrong_rows and result['out_of_bounds'] == 0
    return result


def _rates(rail_rates_gbps):
    if isinstance(rail_rates_gbps, (int, float)) and not isinstance(rail_rates_gbps, bool):
        rail_rates_gbps = [rail_rates_gbps]
    if not isinstance(rail_rates_gbps, (list, tuple)) or not rail_rates_gbps:
        raise ValueError('rail_rates_gbps must be a non-empty list of link rates in Gb/s, got %r' % (rail_rates_gbps,))
    rates = []
    for rate in rail_rates_gbps:
        try:
            value = float(rate)
        except (TypeError, ValueError):
            raise ValueError('rail_rates_gbps: %r is not a link rate in Gb/s' % (rate,))
        if math.isnan(value) or math.isinf(value) or value <= 0:
            raise ValueError('rail_rates_gbps: %r is not a positive link rate in Gb/s' % (rate,))
        rates.append(value)
    return rates


def expected_allreduce_busbw(rail_rates_gbps):
    """Bus bandwidth (GB/s) an all-reduce across nodes can reach: the sum of one node's rail link rates.

    nccl-tests reports busbw = algbw x 2(n-1)/n for all-reduce (src/all_reduce.cu AllReduceGetBw), which is the
    rate each rank moves data at in a ring; across nodes every GPU's ring traffic leaves through the rail NIC beside
    it, so one node can carry at most the sum of its rails' rates, converted from Gb/s to GB/s.
    """
    return round(sum(_rates(rail_rates_gbps)) / 8.0, 3)


def rail_bound_busbw(rails_gbs, ranks, nodes):
    """Highest all-reduce busbw the rails allow with `ranks` ranks on `nodes` nodes when NCCL reduces inside each node
    first (tree, NVLS tree), or None when unknown: rails x N(n-1)/(n(N-1)) (nccl_calibration.hierarchical_bound).
    With one rank per node (n = N) that is the rails' sum itself."""
    return nccl_calibration.hierarchical_bound(rails_gbs, ranks, nodes)


def _rails_text(rates):
    speeds = sorted(set(rates))
    if len(speeds) == 1:
        return '%d rail%s of %g Gb/s' % (len(rates), '' if len(rates) == 1 else 's', speeds[0])
    return '%d rails (%s Gb/s)' % (len(rates), ', '.join('%g' % rate for rate in rates))


def calibrated_threshold(threshold):
    """(fraction, source): 0, None or '' mean the calibrated low end of published healthy runs (nccl_calibration.py)."""
    if threshold in (None, '') or _is_zero(threshold):
        return nccl_calibration.ring_range()[0], 'calibrated'
    return threshold_fraction(threshold), 'threshold'


def _is_zero(value):
    try:
        return float(value) == 0
    except (TypeError, ValueError):
        return False


def evaluate_allreduce(parsed, rail_rates_gbps, threshold=0, message_size=None, min_nodes=2):
    """Judge a parsed all_reduce_perf run against the range published healthy runs give for its rails.

    The measured value is the out-of-place busbw of the largest message (the plateau of a sweep), or of
    message_size. A run with error lines, non-zero #wrong, failed out-of-bounds check, or fewer hosts than
    min_nodes (it never crossed the rails) fails whatever its numbers. threshold 0 (the default) passes from the
    calibrated low end of the range (nccl_calibration.py); a fraction in (0, 1] of the rails' sum overrides it.
    """
    if isinstance(parsed, (str, bytes, bytearray)):
        parsed = parse_nccl_tests_output(parsed, collective='all_reduce')
    if not isinstance(parsed, dict) or 'rows' not in parsed:
        raise ValueError('expected the result of nccl_tests_parse (a dict with rows), got %s' % type(parsed).__name__)
    if parsed.get('collective') not in (None, 'all_reduce'):
        raise ValueError(
            'the run is %s, not all_reduce: its bus bandwidth is computed differently' % parsed.get('collective'))
    fraction_required, threshold_source = calibrated_threshold(threshold)
    row = judged_row(parsed, message_size, 'size_bytes')
    rates = _rates(rail_rates_gbps)
    expected = expected_allreduce_busbw(rates)
    required = round(expected * fraction_required, 3)
    measured = float(row['out_of_place']['busbw_gbs'])
    hosts = parsed.get('hosts') or []
    calibrated = nccl_calibration.expected(rates, parsed.get('ranks'), len(hosts))
    verdict = {
        'measured_busbw_gbs': measured, 'expected_busbw_gbs': expected, 'required_busbw_gbs': required,
        'threshold': fraction_required, 'threshold_source': threshold_source,
        'fraction': round(measured / expected, 4), 'message_size': row['size_bytes'],
        'avg_busbw_gbs': parsed.get('avg_busbw_gbs'), 'ranks': parsed.get('ranks'), 'hosts': hosts,
        'rails': len(rates), 'wrong_rows': parsed.get('wrong_rows') or [],
        'expected_range': dict(calibrated, sources=nccl_calibration.source_list(calibrated['sources']),
                               tree_sources=nccl_calibration.source_list(calibrated['tree_sources'])),
        'formula': 'busbw = algbw x 2(n-1)/n; rails = sum of one node\'s rail rates (Gb/s) / 8; a ring reaches '
                   '[low, high] x rails (published healthy runs); a tree/NVLS run up to rails x N(n-1)/(n(N-1))',
    }
    rails_text = _rails_text(rates)
    range_text = ('expected %.1f-%.1f GB/s for %s (%.0f-%.0f%% of their %.1f GB/s in the published healthy runs %s)'
                  % (calibrated['low_gbs'], calibrated['high_gbs'], rails_text, calibrated['low_fraction'] * 100,
                     calibrated['high_fraction'] * 100, expected, ', '.join(calibrated['sources'])))
    if threshold_source == 'threshold':
        range_text += '; threshold %.0f%% of %.1f GB/s = %.1f GB/s' % (fraction_required * 100, expected, required)
    if parsed.get('errors'):
        verdict.update(passed=False, code='nccl_errors',
                       reason='nccl-tests reported errors: %s' % ' | '.join(parsed['errors'][:3]))
    elif verdict['wrong_rows'] or parsed.get('out_of_bounds'):
        verdict.update(passed=False, code='wrong_results',
                       reason='all-reduce results were wrong: %d half-rows with #wrong > 0, out of bounds values %s'
                       % (len(verdict['wrong_rows']), parsed.get('out_of_bounds')))
    elif len(hosts) < int(min_nodes):
        verdict.update(passed=False, code='too_few_nodes',
                       reason='the run spans %d node(s) (%s), at least %d are needed for traffic to cross the rails'
                       % (len(hosts), ', '.join(hosts) or 'none listed', int(min_nodes)))
    elif measured > expected:
        # Above what a ring can carry is no error and no "more than 100 %": tree/NVLS move less over the rails
        # (nccl_calibration.py module docstring).
        bound = calibrated['tree_bound_gbs']
        verdict.update(passed=True, code='passed', rail_bound_busbw_gbs=bound, algorithm='tree',
                       reason='busbw %.2f GB/s at %d bytes is above the %.1f GB/s a ring can reach on %s: %s; with %s '
                       'ranks on %d nodes that bound is %.1f x N(n-1)/(n(N-1)) = %s GB/s%s (published tree run: %s)'
                       % (measured, row['size_bytes'], expected, rails_text, nccl_calibration.TREE_EXPLANATION,
                          parsed.get('ranks'), len(hosts), expected, '%.1f' % bound if bound else '-',
                          ' (%.0f%% of it)' % (100.0 * measured / bound) if bound else '',
                          ', '.join(calibrated['tree_sources'])))
    elif measured >= required:
        verdict.update(passed=True, code='passed',
                       reason='busbw %.2f GB/s at %d bytes: %s' % (measured, row['size_bytes'], range_text))
    else:
        verdict.update(passed=False, code='busbw_below_threshold',
                       reason='busbw %.2f GB/s at %d bytes is below the %s: %s. Low results in published runs came '
                       'from: %s'
                       % (measured, row['size_bytes'], 'range' if measured < calibrated['low_gbs'] else 'threshold',
                          range_text, '; '.join(nccl_calibration.LOW_CAUSES)))
    return verdict
