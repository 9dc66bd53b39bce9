# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parse time on 1 MB lines (issue 18 point 9): every parser stays linear on hostile input.

Each case runs in a child interpreter with a hard timeout, because a backtracking regex holds the GIL and no
signal stops it. A linear parser needs well under a second per megabyte; the quadratic ones this replaced needed
17 s for 24 KB, i.e. hours for 1 MB, so the bound below is generous and not a flaky timing."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import subprocess
import sys
import textwrap

import pytest

MIB = 1 << 20
BOUND_S = 15.0  # CPU seconds per case (the child's own, so other load does not count), for about 1 MB of each hostile line
KILL_S = 90

PRELUDE = """
import time
from ansible_collections.gpudirect.openshift.plugins.module_utils.verify import perftest_diagnosis, perftest_output
from ansible_collections.gpudirect.openshift.plugins.module_utils.hardware import collector, nvidia_smi, sysfs, topology

MIB = %d


def line(unit, prefix=""):
    return prefix + unit * (MIB // len(unit))


def attempt(function, *args, **kwargs):
    try:
        function(*args, **kwargs)
    except ValueError:
        pass
""" % MIB

# One hostile shape per regex that was quadratic (or worse), and the parser entry point that meets it.
HOSTILE_HEADER = [
    'line("a")',                              # header key: a run of key characters without a colon
    'line("a ")',                             # header key: single-spaced words without a colon
    'line(":")',                              # colons without keys
    'line("Send BW ")',                       # test title: verb and kind words but no trailing "Test"
    'line(" ", "#bytes") + "x"',              # table header: #bytes then spaces, no #iterations
    'line("BW peak[")',                       # column names never closed by "]"
    'line("invalid option")',                 # CUDA option error without use_cuda
    'line("gid_index")',                      # GID error prefix without its ending
    'line("device name = [")',                # CUDA device name never closed
    'line("Waiting for client ")',
    'line("Port number 1 state is ")',
]

CASES = {
    "perftest_diagnose": """
log = "\\n".join(["RDMA_Write BW Test", line("a "), " Device : mlx5_0", "-" * 40])
start = time.process_time()
perftest_diagnosis.diagnose(log=log)
""",
    "perftest_many_distinct_error_lines": """
log = "\\n".join("ERROR %d" % index for index in range(MIB // 12))
start = time.process_time()
attempt(perftest_output.parse_bw_output, log, require_results=False)
""",
}
for _index, _shape in enumerate(HOSTILE_HEADER):
    CASES["perftest_line_%02d" % _index] = """
log = "\\n".join(["RDMA_Write BW Test", %s, " Device : mlx5_0", "-" * 40])
start = time.process_time()
attempt(perftest_output.parse_bw_output, log, require_results=False)
""" % _shape
CASES.update({
    "link_rate": """
start = time.process_time()
attempt(perftest_output._rate, line(" ", "1") + "x", "link_rate_gbps")
attempt(perftest_output._rate, "1" + line(" ") + "Gb/s" + line(" ") + "(" + line(" "), "link_rate_gbps")
""",
    "nvidia_smi_unclosed_tags": """
document = "<nvidia_smi_log>" + line("<processes>") + line("<supported_clocks><processes>") + "</nvidia_smi_log>"
start = time.process_time()
attempt(nvidia_smi.parse, document)
""",
    "sysfs_port_state": """
start = time.process_time()
sysfs.parse_state(line(" ", "4: A") + "x")
sysfs.parse_rate_gbps(line(" ", "4") + "x")
sysfs.parse_link_speed_gts(line(" ", "4") + "x")
""",
    "topology_matrix": """
start = time.process_time()
attempt(topology.parse_topo_matrix, "\\t" + line("GPU0 ") + "\\n" + line("NIC0: ") + "\\n" + line(" ", "NIC0:") + "x")
""",
    "proc_driver_version": """
start = time.process_time()
collector._PROC_VERSION_RE.search(line("Kernel Module for x "))
""",
})


def _run_child(body):
    code = PRELUDE + textwrap.dedent(body) + "\nprint(time.process_time() - start)\n"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(path for path in sys.path if path))
    proc = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=KILL_S, env=env, check=False)
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")[-2000:]
    return float(proc.stdout.decode().strip().splitlines()[-1])


@pytest.mark.parametrize("case", sorted(CASES))
def test_one_megabyte_of_hostile_input_parses_in_linear_time(case):
    try:
        elapsed = _run_child(CASES[case])
    except subprocess.TimeoutExpired:
        pytest.fail("%s: still running after %d s on 1 MB lines: a parser is super-linear" % (case, KILL_S))
    assert elapsed < BOUND_S, "%s took %.1f s on 1 MB lines" % (case, elapsed)
