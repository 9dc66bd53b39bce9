"""How long after a CSV turns Succeeded does olm_operator's wait return? (no assertions; prints numbers)

Runs the olm_operator logic in-process against the simulated cluster (so ansible-playbook start-up does
not blur the number), installs the four operators of the GPUDirect RDMA chapter in fresh clusters, and
for every install compares
  - the moment the simulated API server stored the CSV's Succeeded status (store event, monotonic clock), and
  - the moment OperatorInstaller.run() returned,
and also prints the gap to the CSV's status.lastTransitionTime (wall clock, one-second resolution).
For comparison: a GET/sleep loop with kubernetes.core's default wait_sleep of 5 s returns 2.5 s late on average.

Usage: source hack/env.sh && python tests/bench/bench_olm_wait.py [rounds]
"""

import statistics
import sys
import threading
import time
from datetime import datetime, timezone

from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.client import ClusterClient
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.operator_installer import OperatorInstaller
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import get_api_client
from simulator import SimulatedCluster

OPERATORS = [
    ("nfd", "openshift-nfd"),
    ("sriov-network-operator", "openshift-sriov-network-operator"),
    ("nvidia-network-operator", "nvidia-network-operator"),
    ("gpu-operator-certified", "nvidia-gpu-operator"),
]


def operator(package, namespace):
    return {"package": package, "namespace": namespace, "install_plan_approval": "Automatic",
            "namespace_labels": {"openshift.io/cluster-monitoring": "true"}, "namespace_annotations": {},
            "package_namespace": "openshift-marketplace"}


def one_round(samples):
    succeeded_at = {}
    lock = threading.Lock()

    def on_change(event_type, rtype, obj):
        if rtype.kind == "ClusterServiceVersion" and (obj.get("status") or {}).get("phase") == "Succeeded":
            with lock:
                succeeded_at.setdefault(obj["metadata"]["name"], time.monotonic())

    with SimulatedCluster(profile="roce-lab") as sim:
        sim.store.subscribe(on_change)
        cluster = ClusterClient(get_api_client(kubeconfig=sim.kubeconfig))
        for package, namespace in OPERATORS:
            result = OperatorInstaller(cluster, operator(package, namespace), wait_timeout=120).run()
            returned = time.monotonic()
            returned_wall = datetime.now(timezone.utc)
            csv = result["csv"]
            transition = next(e["time"] for e in reversed(result["timeline"]) if e["phase"] == "Succeeded")
            wall_gap = (returned_wall - datetime.strptime(transition, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)).total_seconds()
            with lock:
                event_gap = returned - succeeded_at[csv]
            samples.append((package, event_gap, wall_gap, result["elapsed"]))


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    samples = []
    for _round in range(rounds):
        one_round(samples)
    print("%-26s %14s %18s %10s" % ("package", "after event (s)", "after lastTransition", "elapsed"))
    for package, event_gap, wall_gap, elapsed in samples:
        print("%-26s %14.4f %18.2f %10.2f" % (package, event_gap, wall_gap, elapsed))
    gaps = [s[1] for s in samples]
    print("wait returned after the CSV turned Succeeded: n=%d min=%.4f median=%.4f max=%.4f s (target < 1 s)" % (
        len(gaps), min(gaps), statistics.median(gaps), max(gaps)))


if __name__ == "__main__":
    main()
