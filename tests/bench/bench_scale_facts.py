"""Facts and verify at scale on the simulator's synthetic profiles (issue 21): prints numbers, never fails on them.

facts:  playbooks/facts.yml on `synthetic:nodes=N,gpus=8,nics=8`, a first run (every node gathered, at most
        hardware_facts_max_pods_in_flight pods at once) then a re-run (the per-node cache, kept for nodes not
        RDMA-ready too: no pod expected). Per run:
        wall time, API requests, pods created, writes, peak RSS of ansible-playbook, of its largest worker fork and of
        the module process, and the CPU seconds of the whole ansible-playbook process tree (controller time; the
        simulator runs in this process and is not counted).
verify: playbooks/verify.yml over N GPU nodes (`synthetic:nodes=N,gpus=2,nics=2,link_layer=Ethernet`, shared device
        RoCE, the cluster prepared as tests/integration/test_verify.py does): rounds of node-disjoint pairs, pairs,
        wall time, requests, and whether every pair passed.
The simulated scheduler reads the one node a verify pod selects and the verify pods counted on it (no list per pod),
so 1000 nodes run end to end; the rounds do not depend on the size (two for an even ring, three for an odd one).
Targets (issue 21, at 1000 nodes): facts peak memory <= 150 MB for every process it starts (ansible-playbook, its
worker forks and the module process; issue 38) and <= 60 s controller CPU; a re-run starts no pods and makes <= 30
requests; verify in <= 3 rounds.

Usage: source hack/env.sh && python tests/bench/bench_scale_facts.py [--nodes 2,100,1000] [--only facts|verify]
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time

from ansible_collections.gpudirect.openshift.plugins.module_utils.render.plan import render_all
from simulator import SimulatedCluster
from simulator.controllers.networks import render_nad

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FACTS = os.path.join(ROOT, "playbooks", "facts.yml")
VERIFY = os.path.join(ROOT, "playbooks", "verify.yml")
INVENTORY = os.path.join(ROOT, "playbooks", "inventory", "localhost.yml")
MEMORY_TARGET_MB = 150
CPU_TARGET_S = 60
RERUN_REQUESTS_TARGET = 30
ROUNDS_TARGET = 3
VERIFY_VARS = {"gpudirect_rdma_method": "shared_device", "gpudirect_rdma_fabric": "roce",
               "gpudirect_rdma_nic_interfaces": ["enp26s0np0"], "gpudirect_rdma_ipam_range": "10.20.0.0/16"}
FAST_SIM = {"perftest_start_seconds": 0.02, "perftest_run_seconds": 0.05, "facts_pod_step_seconds": 0.02}


class TreeSampler(threading.Thread):
    """Peak RSS (MB) of a process, its ansible-playbook forks and other descendants, read from /proc every 50 ms."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid = pid
        self.peaks = {"ansible-playbook": 0.0, "worker": 0.0, "module": 0.0}
        self.stop = threading.Event()

    def _children(self, pid):
        found = []
        try:
            for task in os.listdir("/proc/%d/task" % pid):
                with open("/proc/%d/task/%s/children" % (pid, task)) as handle:
                    found += [int(c) for c in handle.read().split()]
        except OSError:
            pass
        return found

    @staticmethod
    def _rss_mb(pid):
        try:
            with open("/proc/%d/status" % pid) as handle:
                for line in handle:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) / 1024.0
        except OSError:
            pass
        return 0.0

    @staticmethod
    def _cmd(pid):
        try:
            with open("/proc/%d/cmdline" % pid, "rb") as handle:
                return handle.read().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            return ""

    def run(self):
        while not self.stop.is_set():
            self.peaks["ansible-playbook"] = max(self.peaks["ansible-playbook"], self._rss_mb(self.pid))
            todo = list(self._children(self.pid))
            while todo:
                pid = todo.pop()
                kind = "worker" if "ansible-playbook" in self._cmd(pid) else "module"
                self.peaks[kind] = max(self.peaks[kind], self._rss_mb(pid))
                todo += self._children(pid)
            self.stop.wait(0.05)


def run_playbook(sim, playbook, extra_vars, workdir):
    vars_file = os.path.join(workdir, "vars-%d.json" % time.monotonic_ns())
    with open(vars_file, "w") as handle:
        json.dump(dict(extra_vars, ansible_python_interpreter=sys.executable), handle)
    env = dict(os.environ, K8S_AUTH_KUBECONFIG=sim.kubeconfig, ANSIBLE_NOCOLOR="1", TMPDIR=workdir)
    mark = sim.mark()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(["ansible-playbook", "-i", INVENTORY, playbook, "-e", "@" + vars_file], cwd=workdir, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    sampler = TreeSampler(proc.pid)
    sampler.start()
    output = proc.communicate()[0]
    wall = time.perf_counter() - start
    sampler.stop.set()
    sampler.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    log = sim.request_log[mark:]
    return {
        "rc": proc.returncode,
        "wall_s": round(wall, 1),
        "controller_cpu_s": round((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), 1),
        "requests": len(log),
        "writes": sim.count(writes_only=True, since=mark),
        "pods_created": sum(1 for r in log if r["verb"] == "create" and r.get("plural") == "pods"),
        "peak_rss_mb": dict((k, round(v, 1)) for k, v in sampler.peaks.items()),
        "output_tail": output[-1500:],
    }


PROCESSES = ("ansible-playbook", "worker", "module")


def peaks_text(run):
    """'ansible-playbook 110.2 MB, worker 95.0 MB, module 140.1 MB': the peak RSS of each process of a run."""
    return ", ".join("%s %.1f MB" % (name, run["peak_rss_mb"][name]) for name in PROCESSES)


def largest_process(*runs):
    """(MB, 'module, re-run'): the largest peak RSS of any process of the runs (the module process included: it holds
    the nodes' documents), and which process of which run it was."""
    labels = ("first run", "re-run")
    return max((run["peak_rss_mb"][name], "%s, %s" % (name, labels[position] if position < len(labels) else position))
               for position, run in enumerate(runs) for name in PROCESSES)


def bench_facts(nodes, workdir):
    with SimulatedCluster(profile="synthetic:nodes=%d,gpus=8,nics=8" % nodes, config=dict(FAST_SIM)) as sim:
        extra = {"hardware_facts_report_dir": os.path.join(workdir, "facts-%d" % nodes)}
        first = run_playbook(sim, FACTS, extra, workdir)
        # facts.yml gathers again the nodes whose RDMA stack is not ready (hardware_facts_refresh_not_ready: a node
        # before site.yml loaded its driver), and no synthetic node is ready before a converge: the re-run keeps the
        # cache for those too, which is the path a re-run after site.yml takes.
        rerun = run_playbook(sim, FACTS, dict(extra, hardware_facts_refresh_not_ready=False), workdir)
    return {"first": first, "rerun": rerun}


def prepare_verify(sim):
    """GPU and RDMA allocatable on every worker and the network's NAD, as tests/integration/test_verify.py prepares."""
    plan = render_all(VERIFY_VARS)
    summary = plan["summary"]
    workers = [n.name for n in sim.profile.nodes if n.is_worker]
    for name in workers:
        def edit(node):
            node["metadata"].setdefault("labels", {})["nvidia.com/gpu.present"] = "true"
            for key in ("capacity", "allocatable"):
                node["status"][key]["nvidia.com/gpu"] = "2"
                for name_ in summary["pod_resources"]:
                    node["status"][key][name_] = "63"
        sim.store.mutate(sim.type("v1", "Node"), None, name, edit)
    for entry in plan["manifests"]:
        if entry["manifest"]["kind"] == "MacvlanNetwork":
            nad, _error = render_nad(("mellanox.com", "macvlannetworks"), entry["manifest"])
            sim.store.create(sim.type("k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition"), nad)
    return workers


def bench_verify(nodes, workdir, parallel):
    with SimulatedCluster(profile="synthetic:nodes=%d,gpus=2,nics=2,link_layer=Ethernet" % nodes, config=dict(FAST_SIM)) as sim:
        prepare_verify(sim)
        artifacts = os.path.join(workdir, "verify-%d" % nodes)
        extra = dict(VERIFY_VARS, verify_image="registry.example/perftest-cuda:25.01", verify_duration=2, verify_start_timeout=120,
                     verify_pending_grace_period=5, verify_cleanup_timeout=120, verify_parallel_pairs=parallel,
                     verify_artifacts_dir=artifacts, verify_link_rate_gbps=400)
        result = run_playbook(sim, VERIFY, extra, workdir)
        path = os.path.join(artifacts, "results.json")
        if os.path.exists(path):
            with open(path) as handle:
                data = json.load(handle)
            result.update(rounds=len(data.get("rounds") or []), pairs=len(data.get("pairs") or []), passed=data.get("passed"))
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", default="2,100,1000")
    parser.add_argument("--only", choices=["facts", "verify"])
    parser.add_argument("--parallel-pairs", type=int, default=1000, help="verify_parallel_pairs for the verify column")
    parser.add_argument("--json", help="also write the numbers to this file")
    args = parser.parse_args()
    sizes = [int(n) for n in args.nodes.split(",")]
    results = {}
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as workdir:
        for nodes in sizes:
            row = results.setdefault(nodes, {})
            if args.only in (None, "facts"):
                row["facts"] = bench_facts(nodes, workdir)
                first, rerun = row["facts"]["first"], row["facts"]["rerun"]
                print("facts  %5d nodes: first rc %d %6.1f s wall, %5.1f s controller CPU, %5d requests, %4d pods, peak RSS %s | "
                      "re-run rc %d %5.1f s, %3d requests, %d pods, %d writes, peak RSS %s" % (
                          nodes, first["rc"], first["wall_s"], first["controller_cpu_s"], first["requests"], first["pods_created"],
                          peaks_text(first), rerun["rc"], rerun["wall_s"], rerun["requests"], rerun["pods_created"], rerun["writes"],
                          peaks_text(rerun)))
                if first["rc"] or rerun["rc"]:
                    print(first["output_tail"] if first["rc"] else rerun["output_tail"])
                if nodes >= 1000:
                    worst, process = largest_process(first, rerun)
                    print("  targets: memory %s (<= %d MB for every process; most %.1f MB, %s), controller CPU %s (<= %d s), "
                          "re-run %s (0 pods, <= %d requests)" % (
                              "met" if worst <= MEMORY_TARGET_MB else "MISSED", MEMORY_TARGET_MB, worst, process,
                              "met" if first["controller_cpu_s"] <= CPU_TARGET_S else "MISSED", CPU_TARGET_S,
                              "met" if rerun["pods_created"] == 0 and rerun["requests"] <= RERUN_REQUESTS_TARGET else "MISSED",
                              RERUN_REQUESTS_TARGET))
            if args.only in (None, "verify"):
                row["verify"] = verify = bench_verify(nodes, workdir, args.parallel_pairs)
                print("verify %5d nodes: rc %d, %s pairs in %s rounds (parallel_pairs %d), passed %s, %6.1f s wall, %5.1f s controller "
                      "CPU, %6d requests, %5d pods%s" % (
                          nodes, verify["rc"], verify.get("pairs"), verify.get("rounds"), args.parallel_pairs, verify.get("passed"),
                          verify["wall_s"], verify["controller_cpu_s"], verify["requests"], verify["pods_created"],
                          "" if nodes < 1000 else "  target: <= %d rounds %s" % (
                              ROUNDS_TARGET, "met" if (verify.get("rounds") or 99) <= ROUNDS_TARGET else "MISSED")))
                if verify["rc"]:
                    print(verify["output_tail"])
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=2, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
