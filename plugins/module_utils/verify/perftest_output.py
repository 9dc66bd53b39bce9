# Copyright (c) 2025 gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parse perftest bandwidth output (ib_write_bw, ib_read_bw, ib_send_bw) and judge it (perftest_diagnosis.py says why
a run failed).

Pure standard library: the same code runs on the controller (filter plugins) and could run inside a pod.
"""


import math
import re

from ansible_collections.gpudirect.openshift.plugins.module_utils.verify.table_numbers import (
    NEGATIVE, NOT_A_NUMBER, NOT_FINITE, NOT_WHOLE, CellError, cell_number, judged_row, threshold_fraction,
)

# perftest's "MB" is 2^20 bytes (format_factor 0x100000 in print_report_bw), its "Gb" is 10^9 bits
# (format_factor 125000000 bytes). So 1 MB/sec = 2^20 * 8 / 10^9 Gb/s = 0.008388608 Gb/s.
MIB_PER_SEC_TO_GBPS = (1 << 20) * 8 / 1e9


_RESULT_LINE = re.compile(r'^\s*-{20,}\s*$')
# Every pattern here runs on untrusted log lines: no unbounded repeat may be retried from many start positions
# (a 24 KB header line took 17 s with the old ones). Header pairs and titles are split by hand for that reason.
_TITLE_VERB = re.compile(r'(Send|RDMA_Write|RDMA_Read|Atomic)\b')
_TITLE_KIND = re.compile(r'\b(BW|Latency)\b')
_TABLE_UNIT = re.compile(r'#iterations\s+BW peak\[(Gb/sec|MB/sec)\]')
_ADDRESS = re.compile(r'^\s*(?P<side>local|remote) address:\s*(?P<rest>.*)$')
_GID = re.compile(r'^\s*GID:\s*(?P<gid>\S+)\s*$')
_COLUMN = re.compile(r'#bytes|#sl|#iterations|BW peak\[[^\]\s]{1,16}\]|BW average\[[^\]\s]{1,16}\]|MsgRate\[Mpps\]'
                     r'|BW Port[12]\[[^\]\s]{1,16}\]|MsgRate Port[12]\[Mpps\]|CPU_Util\[%\]')
_LEADING_NUMBER = re.compile(r'^\s*\d')
WAITING_SERVER = re.compile(r'Waiting for client (rdma_cm QP )?to connect')

_VERB_TO_TOOL = {'RDMA_Write': 'ib_write_bw', 'RDMA_Read': 'ib_read_bw', 'Send': 'ib_send_bw', 'Atomic': 'ib_atomic_bw'}

# Header keys as perftest prints them (lower-cased, single-spaced) -> (output key, converter).
_ON_OFF = {'ON': True, 'OFF': False}


def _int_suffix(value):
    return int(re.sub(r'\[B\]$', '', value))


def _on_off(value):
    return _ON_OFF.get(value.upper(), value)


_HEADER_KEYS = {
    'dual-port': ('dual_port', _on_off),
    'device': ('device', str),
    'number of qps': ('qps', int),
    'transport type': ('transport_type', str),
    'connection type': ('connection_type', str),
    'using srq': ('using_srq', _on_off),
    'pcie relax order': ('pcie_relax_order', str),
    'ibv_wr* api': ('ibv_wr_api', _on_off),
    'tx depth': ('tx_depth', int),
    'rx depth': ('rx_depth', int),
    'post list': ('post_list', int),
    'cq moderation': ('cq_moderation', int),
    'mtu': ('mtu', _int_suffix),
    'link type': ('link_type', str),
    'gid index': ('gid_index', int),
    'gid index2': ('gid_index2', int),
    'max inline data': ('max_inline_data', _int_suffix),
    'outstand reads': ('outstand_reads', int),
    'rdma_cm qps': ('rdma_cm', _on_off),
    'data ex. method': ('data_exchange_method', str),
    'tos': ('tos', int),
    'buffer size': ('buffer_size', _int_suffix),
}

# Lines perftest prints on stderr/stdout when something is off but the run goes on.
WARNING_PATTERNS = (
    re.compile(r'Conflicting CPU frequency values'),
    re.compile(r'CPU Frequency is not max'),
    re.compile(r'^\s*WARNING\b', re.IGNORECASE),
    re.compile(r'Requested mtu is higher than active mtu'),
    re.compile(r'Changing to active mtu'),
    re.compile(r"doesn't support[s]? CUDA tests with inline messages"),
    re.compile(r'inline size set to 0'),
    re.compile(r'Max msg size in (UD|RawEth) is MTU'),
    re.compile(r'Changing (msg size )?to this MTU'),
)

# (diagnosis code, pattern) for lines that end a perftest run. Matched against each output line; the strings
# come from perftest (perftest_parameters.c, perftest_communication.c, perftest_resources.c, cuda_memory.c).
ERROR_PATTERNS = (
    ('no_gpu_memory_path', re.compile(r'cuInit\(0\) returned|cuDeviceGetCount\(\) returned|cuCtxCreate\(\) error'
                                      r'|cuCtxSetCurrent\(\) error|cuMemAlloc(Host|Managed)?( error|\(\) failed)'
                                      r'|cuMemGetHandleForAddressRange error|cuDeviceGetByPCIBusId failed')),
    ('no_gpu_memory_path',
     re.compile(r'There are no available device\(s\) that support CUDA|No such device ID \(\d+\) exists')),
    ('no_gpu_memory_path', re.compile(r"Couldn't init GPU context|Couldn't allocate memory with CUDA"
                                      r'|CUDA initiali[sz]ation failed', re.IGNORECASE)),
    ('no_gpu_memory_path', re.compile(r'DMA-BUF is not supported|OFED stack does not support DMA-BUF'
                                      r'|CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE is missing'
                                      r'|does not support CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE')),
    ('no_gpu_memory_path', re.compile(r"unrecognized option '--use_cuda|invalid option.{0,80}use_cuda")),
    ('rdma_device_not_found', re.compile(r'No IB devices found|IB device \S+ not found'
                                         r"|Couldn't get context for the device|Unable to find the Infiniband/RoCE "
                                         r"device")),
    ('link_down', re.compile(r'Port number \d+ state is (Down|Init|Armed|Nop)\b|Unable to query port'
                             r'|Link layer on port \d+ is Unknown|Unable to determine link layer')),
    ('link_down', re.compile(r"Couldn't connect to \S+|Unable to init the socket connection|Couldn't listen to port"
                             r'|Problem in resolving basic address and port|accept\(\) failed')),
    ('link_down', re.compile(r'rdma_resolve_(addr|route) failed|Received \d+ times ADDR_ERROR|Unable to connect '
                             r'\(retries|Unexpected CM event|rdma_get_cm_events? failed', re.IGNORECASE)),
    ('wrong_gid', re.compile(r'Failed to modify QP( \S+)? to (RTR|RTS)|Unable to Connect the HCA.s through the link')),
    ('wrong_gid', re.compile(r'Failed status 12\b|transport retry counter exceeded|IBV_WC_RETRY_EXC_ERR')),
    ('wrong_gid', re.compile(r'gid[ _]index\S{0,32} should be between|invalid gid|Failed to query GID|ibv_query_gid '
                             r'failed',
                             re.IGNORECASE)),
    ('memory_registration_failed', re.compile(r"Couldn't allocate MR|failed to create mr|Couldn't allocate work buf",
                                              re.IGNORECASE)),
    ('timeout', re.compile(r'\btimed out\b|\btimeout (expired|reached)\b', re.IGNORECASE)),
    ('unknown', re.compile(r'Completion with error|Failed status \d+|Can.t produce a report'
                           r'|Failed to exchange da(ta|te) between server and clients')),
    ('unknown', re.compile(r"Couldn't (create|allocate|post|get|set|register)|Failed to "
                           r"(create|modify|init|allocate|post)"
                           r'|Unable to (create|set up|perform)')),
    ('unknown', re.compile(r'\bERROR\b|Segmentation fault|core dumped|^\s*Aborted\b')),
)


class PerftestParseError(ValueError):
    """The text is not complete perftest bandwidth output; the message says what is missing and where."""


def classify_line(line):
    """Return ('error', code), ('warning', None) or (None, None) for one output line."""
    for code, pattern in ERROR_PATTERNS:
        if pattern.search(line):
            return 'error', code
    for pattern in WARNING_PATTERNS:
        if pattern.search(line):
            return 'warning', None
    return None, None


_CELL_TEXT = {NOT_A_NUMBER: 'non-numeric', NOT_WHOLE: 'non-numeric', NOT_FINITE: 'non-finite', NEGATIVE: 'negative'}


def _number(token, kind, lineno):
    try:
        return cell_number(token, whole=kind is int)
    except CellError as exc:
        raise PerftestParseError('result row at line %d has a %s value %r' % (lineno, _CELL_TEXT[exc.problem], token))


def _parse_address(rest):
    tokens = rest.split()
    entry = {}
    for index in range(0, len(tokens) - 1, 2):
        entry[tokens[index].lower()] = tokens[index + 1]
    return entry


_KEY_START = frozenset('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz')
_KEY_CHARS = _KEY_START | frozenset('0123456789_.*/()-')


def _key_before(line, low, colon):
    """The header key that ends before line[colon] (words of key characters joined by single spaces, starting
    with a letter, not before index low), or None. Scans back from the colon only: linear over a line."""
    end = colon
    while end > low and line[end - 1].isspace():
        end -= 1
    start = end
    while start > low:
        char = line[start - 1]
        if char in _KEY_CHARS or (char == ' ' and start - 2 >= low and line[start - 2] in _KEY_CHARS):
            start -= 1
        else:
            break
    for index in range(start, end):
        if line[index] in _KEY_START:
            return line[index:end]
    return None


def _header_pairs(line):
    """('Key words', 'value') for each 'Key words : value' cell of a header line, left to right."""
    pairs = []
    low = 0
    size = len(line)
    colon = line.find(':')
    while colon >= 0:
        key = _key_before(line, low, colon) if colon > low else None
        if key is None:
            low = colon + 1
            colon = line.find(':', colon + 1)
            continue
        start = colon + 1
        while start < size and line[start].isspace():
            start += 1
        end = start
        while end < size and not line[end].isspace():
            end += 1
        if end == start:
            break
        pairs.append((key, line[start:end]))
        low = end
        colon = line.find(':', end)
    return pairs


def _parse_header_line(line, header):
    """Store the pairs of one header line in header; return their output keys, in line order."""
    keys = []
    for key, value in _header_pairs(line):
        raw_key = ' '.join(key.split()).lower()
        out_key, convert = _HEADER_KEYS.get(raw_key, (re.sub(r'[^a-z0-9]+', '_', raw_key).strip('_'), str))
        try:
            header[out_key] = convert(value)
        except ValueError:
            header[out_key] = value
        keys.append(out_key)
    return keys


def _test_title(line):
    """(title, verb, kind) of a test header line such as 'RDMA_Write BW Test', else None."""
    title = line.strip()
    if not title.endswith('Test'):
        return None
    verb = _TITLE_VERB.match(title)
    if not verb:
        return None
    kind = _TITLE_KIND.search(title, verb.end())
    if not kind or kind.end() > len(title) - 4:
        return None
    return title, verb.group(1), kind.group(1)


def _table_unit(line):
    """The bandwidth unit of a result table header line ('#bytes ... #iterations BW peak[Gb/sec] ...'), else None."""
    stripped = line.lstrip()
    if not stripped.startswith('#bytes') or not stripped[6:7].isspace():
        return None
    match = _TABLE_UNIT.search(stripped, 7)
    return match.group(1) if match else None


def parse_cuda_setup(text):
    """The CUDA set-up perftest printed (pci_address '61:00', device_index, device_name, dmabuf), or None: also for a
    server log, whose table may be missing."""
    return _parse_cuda((text or '').splitlines())


def _parse_cuda(lines):
    cuda = {}
    text = '\n'.join(lines)
    if not re.search(r'initializing CUDA|cuMemAlloc|CUDA device \d+:|CUDA Ctx|CUDA_MEM_|DMA-BUF', text):
        return None
    match = re.search(r'CUDA device (\d+): PCIe address is (\S+)', text)
    if match:
        cuda['pci_address'] = match.group(2)
    match = re.search(r'Picking device No\. (\d+)', text)
    if match:
        cuda['device_index'] = int(match.group(1))
    match = re.search(r'device name = \[([^\]\n]{0,256})\]', text)
    if match:
        cuda['device_name'] = match.group(1)
    cuda['dmabuf'] = bool(re.search(r'using DMA-BUF|ibv_reg_dmabuf_mr', text))
    return cuda


def parse_bw_output(text, require_results=True):
    """Parse the output of one run of ib_write_bw / ib_read_bw / ib_send_bw (client or server side).

    Bandwidth is always returned in Gb/s. Raises PerftestParseError for output that is empty, truncated or
    not perftest bandwidth output; with require_results=False a run that printed no result table (a failed
    run) is returned with rows=[] so that its errors can be inspected.
    """
    if text is None:
        raise PerftestParseError('no perftest output (got None)')
    if isinstance(text, (bytes, bytearray)):  # a pod log or subprocess output read as bytes
        text = text.decode('utf-8', 'replace')
    if not isinstance(text, str):
        raise PerftestParseError('perftest output must be text, got %s' % type(text).__name__)
    lines = text.replace('\r\n', '\n').replace('\r', '\n').split('\n')
    if not text.strip():
        raise PerftestParseError('perftest output is empty')

    warnings = []
    errors = []
    seen = set()
    error_codes = []
    header = {}
    local_addresses = []
    remote_addresses = []
    rows = []
    titles = []
    tables = 0
    units = None
    columns = None
    state = 'preamble'  # preamble -> header -> addresses -> table -> done
    table_closed = False
    last_address = None
    last_header = (None, [])  # (line number, keys) of the latest header line
    # A log cut mid-line ends without a line break: what its last line holds may be cut short.
    last_line_cut = bool(lines) and lines[-1].strip() != ''

    for index, line in enumerate(lines):
        lineno = index + 1
        stripped = line.strip()
        if not stripped:
            continue

        kind, code = classify_line(stripped)
        if kind == 'error':
            if stripped not in seen:  # a set: a list lookup per line is quadratic on a long log
                seen.add(stripped)
                errors.append(stripped)
                error_codes.append(code)
        elif kind == 'warning':
            if stripped not in seen:
                seen.add(stripped)
                warnings.append(stripped)

        if state == 'table':
            if _RESULT_LINE.match(line):
                state = 'done'
                table_closed = True
                continue
            if _LEADING_NUMBER.match(line):
                tokens = stripped.split()
                if len(tokens) < len(columns):
                    raise PerftestParseError('result row truncated at line %d: expected %d columns, found %d'
                                             % (lineno, len(columns), len(tokens)))
                if len(tokens) > len(columns):
                    raise PerftestParseError('result row at line %d has %d columns, the table header has %d'
                                             % (lineno, len(tokens), len(columns)))
                rows.append(_make_row(dict(zip(columns, tokens)), units, lineno))
                continue
            if kind is None:
                warnings.append('unrecognised line %d inside the result table: %s' % (lineno, stripped))
            continue

        title = _test_title(line)
        if title:
            if title[2] != 'BW':
                raise PerftestParseError('line %d is a %s test header; only bandwidth tests are supported'
                                         % (lineno, title[2].lower()))
            titles.append((lineno, title))
            if len(titles) > 1:
                raise PerftestParseError('a second test header at line %d (first at line %d): pass the output of '
                                         'one run only' % (lineno, titles[0][0]))
            state = 'header'
            continue

        table_unit = _table_unit(line)
        if table_unit:
            tables += 1
            if tables > 1:
                raise PerftestParseError('a second result table at line %d: pass the output of one run only' % lineno)
            units = table_unit
            columns = _COLUMN.findall(line)
            for required in ('#bytes', '#iterations', 'MsgRate[Mpps]'):
                if required not in columns:
                    raise PerftestParseError('result table header at line %d lacks the %s column' % (lineno, required))
            state = 'table'
            continue

        if state == 'header':
            if _RESULT_LINE.match(line):
                if header:
                    state = 'addresses'
                continue
            if kind is None:
                last_header = (lineno, _parse_header_line(line, header))
            continue

        if state == 'addresses':
            address = _ADDRESS.match(line)
            if address:
                last_address = _parse_address(address.group('rest'))
                (local_addresses if address.group('side') == 'local' else remote_addresses).append(last_address)
                continue
            gid = _GID.match(line)
            if gid and last_address is not None:
                last_address['gid'] = gid.group('gid')
                continue

    if not titles:
        if tables:
            raise PerftestParseError('no test header found (expected a line such as "RDMA_Write BW Test" '
                                     'before the result table)')
        raise PerftestParseError(_missing_table_message('no perftest header and no result table found', errors))
    truncated = None
    if state == 'header':
        truncated = 'the output ends inside the test header (line %d)' % _last_content_line(lines)
        cut_line, cut_keys = last_header
        if last_line_cut and cut_line == _last_content_line(lines) and cut_keys:
            # 'Mtu : 4096[B]' cut to 'Mtu : 40': the last value of a cut line is not trusted
            dropped = header.pop(cut_keys[-1], None)
            warnings.append('line %d was cut: header value %s=%s ignored' % (cut_line, cut_keys[-1], dropped))
        warnings.append('%s: the header lines after it are missing, their values unknown' % truncated)
    elif state == 'addresses' and last_line_cut and last_address is not None and 'gid' in last_address:
        if lines[_last_content_line(lines) - 1].lstrip().startswith('GID:'):
            warnings.append('line %d was cut: GID %s ignored' % (_last_content_line(lines), last_address.pop('gid')))
    if 'device' not in header:
        if truncated:
            raise PerftestParseError('%s, before a complete "Device" value' % truncated)
        raise PerftestParseError('test header at line %d is incomplete: no "Device" line' % titles[0][0])
    if not tables:
        if require_results:
            raise PerftestParseError(_missing_table_message(
                'no result table found' + (' (%s)' % truncated if truncated else ''), errors))
    elif not rows:
        raise PerftestParseError('result table has no rows (output truncated after the table header?)')
    elif not table_closed:
        raise PerftestParseError('result table not terminated: output truncated after line %d' % len(lines))

    title, verb, _kind = titles[0][1]
    role = _role(text, header)
    largest = None
    for row in rows:
        if largest is None or row['bytes'] >= largest['bytes']:
            largest = row
    cuda = _parse_cuda(lines)

    return {
        'role': role,
        'test': _VERB_TO_TOOL[verb],
        'test_title': title,
        'verb': verb,
        'bidirectional': 'Bidirectional' in title,
        'device': header.get('device'),
        'link_type': header.get('link_type'),
        'transport_type': header.get('transport_type'),
        'connection_type': header.get('connection_type'),
        'mtu': header.get('mtu'),
        'qps': header.get('qps'),
        'gid_index': header.get('gid_index'),
        'rdma_cm': header.get('rdma_cm'),
        'use_cuda': cuda is not None,
        'use_dmabuf': bool(cuda and cuda.get('dmabuf')),
        'cuda': cuda,
        'header': header,
        'local_addresses': local_addresses,
        'remote_addresses': remote_addresses,
        'units': units,
        'rows': rows,
        'peak_bw_avg_gbps': max(row['bw_avg_gbps'] for row in rows) if rows else None,
        'largest_message_row': largest,
        'warnings': warnings,
        'errors': errors,
        'error_codes': unique(error_codes),
        'truncated': truncated,
    }


def _last_content_line(lines):
    """Number of the last non-blank line."""
    for index in range(len(lines) - 1, -1, -1):
        if lines[index].strip():
            return index + 1
    return 0


def unique(items):
    seen = []
    for item in items:
        if item not in seen:
            seen.append(item)
    return seen


def _missing_table_message(prefix, errors):
    if errors:
        return '%s; perftest reported: %s' % (prefix, ' | '.join(errors[:3]))
    return prefix


def _role(text, header):
    if WAITING_SERVER.search(text):
        return 'server'
    if 'tx_depth' in header:
        return 'client'
    return 'server'


def _to_gbps(value, units):
    if units == 'MB/sec':
        return round(value * MIB_PER_SEC_TO_GBPS, 6)
    return value


def _make_row(cells, units, lineno):
    peak_key = 'BW peak[%s]' % units
    avg_key = 'BW average[%s]' % units
    if peak_key not in cells or avg_key not in cells:
        raise PerftestParseError('result row at line %d: table header lacks the BW peak/average columns' % lineno)
    row = {
        'bytes': _number(cells['#bytes'], int, lineno),
        'iterations': _number(cells['#iterations'], int, lineno),
        'bw_peak_gbps': _to_gbps(_number(cells[peak_key], float, lineno), units),
        'bw_avg_gbps': _to_gbps(_number(cells[avg_key], float, lineno), units),
        'msg_rate_mpps': _number(cells['MsgRate[Mpps]'], float, lineno),
    }
    if '#sl' in cells:
        row['sl'] = _number(cells['#sl'], int, lineno)
    for port in ('1', '2'):
        bw_key = 'BW Port%s[%s]' % (port, units)
        if bw_key in cells:
            row['bw_port%s_gbps' % port] = _to_gbps(_number(cells[bw_key], float, lineno), units)
            row['msg_rate_port%s_mpps' % port] = _number(cells['MsgRate Port%s[Mpps]' % port], float, lineno)
    if 'CPU_Util[%]' in cells:
        row['cpu_util_percent'] = _number(cells['CPU_Util[%]'], float, lineno)
    return row


_RATE_NUMBER = re.compile(r'\d+(?:\.\d+)?')
_RATE_UNITS = {'': 1.0, 'Gb/s': 1.0, 'Gb/sec': 1.0, 'Gbps': 1.0, 'Mb/s': 0.001, 'Mb/sec': 0.001, 'Mbps': 0.001}


def _rate_text(value, name):
    """'200', '200 Gb/sec (4X HDR)', '100000Mb/s' -> Gb/s. Split by hand: a regex of optional parts between
    optional spaces backtracks cubically on a long run of spaces."""
    text = value.strip()
    match = _RATE_NUMBER.match(text)
    rest = text[match.end():].strip() if match else None
    if rest and rest.endswith(')'):
        opening = rest.rfind('(')
        if opening >= 0 and '(' not in rest[opening + 1:-1] and ')' not in rest[opening + 1:-1]:
            rest = rest[:opening].strip()
    # The unit is read, not skipped: '100000 Mb/s' is 100 Gb/s, and an unknown unit is refused.
    if rest is None or rest not in _RATE_UNITS:
        raise ValueError('%s %r is not a rate in Gb/s' % (name, value if len(value) <= 80 else value[:80] + '...'))
    return float(match.group(0)) * _RATE_UNITS[rest]


def _rate(value, name):
    """Accept 200, 200.0, '200', '200 Gb/sec (4X HDR)' (ibstatus), '200 Gb/s', or '100000Mb/s' (ethtool, converted)."""
    if isinstance(value, bool):
        raise ValueError('%s must be a number, got a boolean' % name)
    if isinstance(value, (bytes, bytearray)):
        value = value.decode('utf-8', 'replace')
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        number = _rate_text(value, name)
    else:
        raise ValueError('%s must be a number, got %s' % (name, type(value).__name__))
    if math.isnan(number) or math.isinf(number) or number <= 0:
        raise ValueError('%s must be a positive number, got %r' % (name, value))
    return number


def evaluate_bw(parsed, link_rate_gbps, threshold=0.8, message_size=None):
    """Compare the BW average of a parsed run with threshold * link rate.

    The measured value is the BW average of the row for message_size when given, else of the largest message
    (the plateau of an -a sweep, or the only row of a single-size run).
    """
    if isinstance(parsed, (str, bytes, bytearray)):
        parsed = parse_bw_output(parsed)
    if parsed is None:
        raise ValueError('no parsed run to evaluate (got None)')
    if not isinstance(parsed, dict) or 'rows' not in parsed:
        raise ValueError('expected the result of ib_write_bw_parse (a dict with rows), got %s' % type(parsed).__name__)
    link = _rate(link_rate_gbps, 'link_rate_gbps')
    fraction_required = threshold_fraction(threshold)
    row = judged_row(parsed, message_size, 'bytes')

    measured = float(row['bw_avg_gbps'])
    expected = round(link * fraction_required, 6)
    fraction = round(measured / link, 4)
    errors = parsed.get('errors') or []
    if errors:
        passed = False
        code = 'perftest_errors'
        reason = 'perftest reported errors: %s' % ' | '.join(errors[:3])
    elif measured >= expected:
        passed = True
        code = 'passed'
        reason = ('%.2f Gb/s at %d B is %.1f%% of the %g Gb/s link, at or above the %.0f%% threshold (%.2f Gb/s)'
                  % (measured, row['bytes'], fraction * 100, link, fraction_required * 100, expected))
    else:
        passed = False
        code = 'bandwidth_below_threshold'
        reason = ('%.2f Gb/s at %d B is %.1f%% of the %g Gb/s link, below the %.0f%% threshold (%.2f Gb/s)'
                  % (measured, row['bytes'], fraction * 100, link, fraction_required * 100, expected))
    return {
        'passed': passed,
        'code': code,
        'measured_gbps': measured,
        'expected_gbps': expected,
        'link_rate_gbps': link,
        'threshold': fraction_required,
        'fraction': fraction,
        'message_size': row['bytes'],
        'reason': reason,
    }
