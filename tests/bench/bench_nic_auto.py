"""NIC selection auto at scale (issue 38): CPU seconds of one plan render (render/plan.py render_all) with
gpudirect_rdma_nic_selection auto, and of its NIC selection alone (render/nics.py resolve), at 100, 500 and 1000 nodes.

The input is what site.yml's auto converge renders from: the NIC facts of `synthetic:nodes=N,gpus=8,nics=8,link_layer=Ethernet`
workers (the simulator's collector over the first worker's sysfs tree, the same document under each worker's name: the
synthetic workers are alike), with the GPU-NIC links the hardware_facts role passes (each GPU's nearest NICs,
module_utils/reports/hardware_facts.py nearest_links) and, as a harder input, the whole 8x8 matrix a user may pass. CPU time
(time.process_time), best of --repeat renders, so that other jobs on the machine do not count. Prints numbers and the
target verdict (< 0.5 s per render at 1000 nodes, both inputs); never fails on them.

Usage: source hack/env.sh && python tests/bench/bench_nic_auto.py [--nodes 100,500,1000] [--repeat 3]
"""

import argparse
import copy
import sys
import time

from ansible_collections.gpudirect.openshift.plugins.module_utils.reports import hardware_facts
from ansible_collections.gpudirect.openshift.plugins.module_utils.render import model, nics
from ansible_collections.gpudirect.openshift.plugins.module_utils.render.plan import render_all
from simulator.controllers.facts_pods import profile_facts
from simulator.profiles import load_profile

TARGET_S = 0.5
P = "gpudirect_rdma_"


def one_worker():
    worker = load_profile("synthetic:nodes=1,gpus=8,nics=8,link_layer=Ethernet").workers[0]
    ports, links = profile_facts([worker])
    return worker.name, ports, links


def inputs(nodes, template):
    """(nic_facts, nearest links, whole matrix) of ``nodes`` workers, each with the template worker's facts."""
    name, ports, links = template
    nearest = hardware_facts.nearest_links(links, ports)
    names = ["gpu-worker-%04d" % n for n in range(nodes)]

    def renamed(items):
        return [dict(item, node=node) for node in names for item in items if item["node"] == name]
    return renamed(ports), renamed(nearest), renamed(links)


def best_cpu(repeat, work):
    times = []
    for _attempt in range(repeat):
        start = time.process_time()
        work()
        times.append(time.process_time() - start)
    return min(times)


def variables(ports, links):
    return {P + "method": "shared_device", P + "fabric": "roce", P + "nic_selection": "auto", P + "nic_facts": ports,
            P + "gpu_nic_affinity": links, P + "ipam_range": "192.168.0.0/16"}


def measure(nodes, template, repeat):
    ports, nearest, matrix = inputs(nodes, template)
    row = {"nodes": nodes, "ports": len(ports)}
    for label, links in (("nearest", nearest), ("matrix", matrix)):
        values = variables(ports, links)
        result = render_all(copy.deepcopy(values))
        if result["errors"]:
            raise RuntimeError("render failed at %d nodes: %s" % (nodes, result["errors"][:3]))
        row[label + "_links"] = len(links)
        row[label + "_render_s"] = best_cpu(repeat, lambda: render_all(values))

        def select(links=links):
            errors = model.Errors()
            nics._auto_ports({"fabric": "roce", "gpu_nic_affinity": links}, nics.normalise_facts(ports, errors), errors, [])
        row[label + "_selection_s"] = best_cpu(repeat, select)
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", default="100,500,1000")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    template = one_worker()
    rows = []
    for nodes in [int(n) for n in args.nodes.split(",") if n]:
        row = measure(nodes, template, args.repeat)
        rows.append(row)
        print("nic auto %5d nodes (%5d ports): render %.3f s CPU (selection %.3f s) with %d nearest links; render %.3f s CPU "
              "(selection %.3f s) with the whole matrix, %d links" % (
                  nodes, row["ports"], row["nearest_render_s"], row["nearest_selection_s"], row["nearest_links"],
                  row["matrix_render_s"], row["matrix_selection_s"], row["matrix_links"]), flush=True)
    largest = max(rows, key=lambda r: r["nodes"])
    worst = max(largest["nearest_render_s"], largest["matrix_render_s"])
    print("NIC selection auto render at %d nodes < %.1f s CPU: %s (%.3f s)" % (
        largest["nodes"], TARGET_S, "met" if worst < TARGET_S else "MISSED", worst))
    return 0


if __name__ == "__main__":
    sys.exit(main())
