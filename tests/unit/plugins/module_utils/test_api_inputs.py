# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The parsers' Python API takes bytes as well as text and refuses None with a ValueError, never a TypeError
(issue 18 point 9): subprocess output and pod logs often arrive as bytes."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.gpudirect.openshift.plugins.module_utils.verify import perftest_diagnosis, perftest_output
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster import node_facts
from ansible_collections.gpudirect.openshift.plugins.module_utils.hardware import devices, nvidia_smi, readiness, sysfs, topology
from ansible_collections.gpudirect.openshift.tests.unit.fixtures.synthetic_sysfs import read_fixture


def _perftest_log():
    return read_fixture("command-outputs", "ib_write_bw", "cloud-native-stack_ubuntu24_v19_client_sweep_roce.txt")


# (name, function of one argument, a good text input)
TEXT_APIS = [
    ("parse_bw_output", perftest_output.parse_bw_output, _perftest_log()),
    ("diagnose", lambda log: perftest_diagnosis.diagnose(log=log), _perftest_log()),
    ("evaluate_bw", lambda log: perftest_output.evaluate_bw(log, 100), _perftest_log()),
    ("evaluate_bw link rate", lambda rate: perftest_output.evaluate_bw(_perftest_log(), rate)["link_rate_gbps"], "100000 Mb/s"),
    ("nvidia_smi.parse", nvidia_smi.parse, read_fixture("h200-node", "nvidia-smi-q-x.xml")),
    ("nvidia_smi.normalize_bus_id", nvidia_smi.normalize_bus_id, "00000000:00:1E.0"),
    ("parse_topo_matrix", topology.parse_topo_matrix, read_fixture("h200-node", "nvidia-smi-topo.txt")),
    ("pci_chain", topology.pci_chain, "/sys/devices/pci0000:00/0000:00:06.0"),
    ("parse_state", sysfs.parse_state, "4: ACTIVE"),
    ("parse_rate_gbps", sysfs.parse_rate_gbps, "400 Gb/sec (4X NDR)"),
    ("parse_link_speed_gts", sysfs.parse_link_speed_gts, "32.0 GT/s PCIe"),
    ("normalize_pci_address", sysfs.normalize_pci_address, "0000:00:1E.0"),
    ("parse_hex_id", devices.parse_hex_id, "0x1021"),
    ("mellanox_model_from_hca_type", devices.mellanox_model_from_hca_type, "MT4129"),
    ("dma_buf_support", lambda release: readiness.dma_buf_support(release, True, "580.1"), "5.14.0-427.el9.x86_64"),
    ("parse_collector_log", node_facts.parse_collector_log, 'log line\n{"readiness": {"ready": true}}\n'),
]

# Parsers of a whole output: None is a mistake of the caller, answered with a ValueError that says so.
REFUSE_NONE = [
    ("parse_bw_output", perftest_output.parse_bw_output, "no perftest output"),
    ("evaluate_bw", lambda parsed: perftest_output.evaluate_bw(parsed, 100), "got None"),
    ("nvidia_smi.parse", nvidia_smi.parse, "no nvidia-smi output"),
    ("parse_topo_matrix", topology.parse_topo_matrix, "no nvidia-smi topo output"),
    ("parse_collector_log", node_facts.parse_collector_log, "printed nothing"),
]


@pytest.mark.parametrize("name,function,text", TEXT_APIS, ids=[item[0] for item in TEXT_APIS])
def test_bytes_give_the_same_result_as_text(name, function, text):
    assert function(text.encode("utf-8")) == function(text), name


@pytest.mark.parametrize("name,function,text", TEXT_APIS, ids=[item[0] for item in TEXT_APIS])
def test_undecodable_bytes_are_replaced_not_raised(name, function, text):
    data = b"\xff\xfe" + text.encode("utf-8")
    try:
        function(data)
    except ValueError:
        pass  # a parse error is fine; a TypeError or UnicodeDecodeError is not


@pytest.mark.parametrize("name,function,message", REFUSE_NONE, ids=[item[0] for item in REFUSE_NONE])
def test_none_is_refused_with_a_value_error(name, function, message):
    with pytest.raises(ValueError, match=message):
        function(None)


def test_diagnose_reads_a_bytes_log_instead_of_ignoring_it():
    assert perftest_diagnosis.diagnose(log=_perftest_log().encode("utf-8"))["code"] == "ok"
    with pytest.raises(ValueError, match="log must be text, got int"):
        perftest_diagnosis.diagnose(log=42)
