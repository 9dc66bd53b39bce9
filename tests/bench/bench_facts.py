# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Time collect() on a synthetic node with 8 GPUs, 8 dual-port NICs and 64 VFs (80 RDMA devices).

    source hack/env.sh && python3 tests/bench/bench_facts.py [--runs 15]

Prints the median (and min/max) of several runs, without and with an 8-GPU nvidia-smi XML to parse
(the nvidia-smi call itself is not timed). Target: median under 50 ms."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import argparse
import os
import statistics
import sys
import tempfile
import time

from ansible_collections.gpudirect.openshift.plugins.module_utils.hardware import collector
from ansible_collections.gpudirect.openshift.tests.unit.fixtures import synthetic_sysfs as synth

TARGET_MS = 50.0


def measure(runs, *args):
    times = []
    for _run in range(runs):
        start = time.perf_counter()
        facts = collector.collect(*args)
        times.append((time.perf_counter() - start) * 1000.0)
    return times, facts


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--xml", help="nvidia-smi -q -x output used as the per-GPU template "
                                      "(default: the h200-node capture under $GPUDIRECT_FIXTURES_DIR)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as base:
        tree = synth.build_gpu_nic_node(base)
        proc = synth.ProcBuilder(base, modules=("nvidia", "nvidia_peermem", "mlx5_core", "mlx5_ib", "ib_core",
                                                "ib_uverbs"), osrelease="5.14.0-427.el9.x86_64")
        gpus = sorted(addr for addr, path in tree.paths.items()
                      if synth.NVIDIA in open(os.path.join(path, "vendor")).read())
        if args.xml:
            with open(args.xml) as handle:
                template = handle.read()
        else:
            template = synth.read_fixture("h200-node", "nvidia-smi-q-x.xml")
        xml = synth.multi_gpu_xml(template, gpus)
        results = {}
        for label, xml_text in (("sysfs only", None), ("with 8-GPU nvidia-smi XML", xml)):
            measure(2, tree.root, proc.root, xml_text)  # warm the page cache and imports
            times, facts = measure(args.runs, tree.root, proc.root, xml_text)
            results[label] = statistics.median(times)
            print("collect() %-26s median %6.2f ms  min %6.2f  max %6.2f  (%d runs; %d GPUs, %d NIC functions, "
                  "%d RDMA devices, %d GPU-NIC pairs)"
                  % (label, results[label], min(times), max(times), args.runs, len(facts["gpus"]), len(facts["nics"]),
                     len(facts["rdma_devices"]), len(facts["topology"]["pairs"])))
    worst = max(results.values())
    print("target %.0f ms: %s" % (TARGET_MS, "met" if worst < TARGET_MS else "MISSED"))
    return 0 if worst < TARGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())
