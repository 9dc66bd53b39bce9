# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Unit tests of the hardware_report_markdown / hardware_report_html filters."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpudirect.openshift.plugins.filter.hardware_report import FilterModule

FACTS = {"gpus": [{"index": 0, "pci_address": "0000:18:00.0", "numa_node": 0}],
         "nics": [{"pci_address": "0000:1a:00.0", "vendor_id": "0x15b3", "device_id": "0x1021", "function": "PF", "rdma_device": "mlx5_0",
                   "netdevs": [{"name": "ens1f0np0", "type": 1}], "ports": [{"port": 1, "link_layer": "Ethernet", "netdev": "ens1f0np0"}],
                   "link_layers": ["Ethernet"]}],
         "topology": {"matrix": {"0": {"0000:1a:00.0": "SYS"}}, "nearest_nic": {}},
         "readiness": {"ready": False, "reason_codes": ["irdma_loaded"]}}


def test_filters_render_both_formats():
    filters = FilterModule().filters()
    markdown = filters["hardware_report_markdown"]({"worker-0": FACTS}, title="t")
    assert "| GPU0 | SYS |" in markdown and "irdma_loaded" in markdown
    html = filters["hardware_report_html"]({"worker-0": FACTS}, failed=[{"node": "w1", "error": "timed out"}])
    assert '<td class="rel-SYS">SYS</td>' in html and "w1: no facts" in html


def test_filters_reject_wrong_input():
    with pytest.raises(AnsibleFilterError, match="mapping of node name"):
        FilterModule().filters()["hardware_report_markdown"]([FACTS])
