"""cluster_info's API cost does not grow with the cluster: time and request count for 3 and 1000 GPU nodes.

Runs the module's logic (module_utils/cluster/info.gather) in-process against simulated clusters built from
synthetic profiles, after one warm-up call (discovery is cached by the client), and prints per size the median
time of a few calls and the number of requests one call sent. Lists are read in pages of 500 (issue 21), so the
requests that continue a list grow with the cluster; the others must be the same for every size.

Usage: source hack/env.sh && python tests/bench/bench_cluster_info.py [rounds] [sizes, e.g. 3,1000]
"""

import statistics
import sys
import time

from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.client import ClusterClient
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.info import gather
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import get_api_client
from simulator import SimulatedCluster


def measure(nodes, rounds):
    profile = "synthetic:nodes=%d,gpus=8,nics=8,masters=3,link_layer=mixed" % nodes
    with SimulatedCluster(profile=profile, controllers=True) as sim:
        cluster = ClusterClient(get_api_client(kubeconfig=sim.kubeconfig))
        gather(cluster)  # warm-up: discovery
        times, counts, pages = [], set(), set()
        for _round in range(rounds):
            mark = sim.mark()
            start = time.perf_counter()
            info = gather(cluster)
            times.append(time.perf_counter() - start)
            continued = sum(1 for entry in sim.requests.entries(since=mark) if (entry.get("query") or {}).get("continue"))
            counts.add(sim.count(since=mark) - continued)
            pages.add(continued)
            assert info["summary"]["node_count"] == nodes + 3
        return statistics.median(times), counts, pages


def main(argv):
    rounds = int(argv[1]) if len(argv) > 1 else 3
    sizes = [int(s) for s in argv[2].split(",")] if len(argv) > 2 else [3, 1000]
    results = {}
    for size in sizes:
        median, counts, pages = measure(size, rounds)
        results[size] = counts
        print("%5d GPU nodes (+3 masters): cluster_info %.3f s median of %d, %s API requests per call and %s more pages"
              % (size, median, rounds, "/".join(str(c) for c in sorted(counts)), "/".join(str(p) for p in sorted(pages))))
    constant = len(set(c for counts in results.values() for c in counts)) == 1
    print("request count, pages of a list apart, constant across sizes: %s" % ("yes" if constant else "NO"))
    return 0 if constant else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
