"""API requests and wall time of playbooks/site.yml against the naive baseline, per configuration (prints only).

For one example configuration (playbooks/vars/examples/N-*.yml) on the simulated mixed-lab cluster:
  ours:  playbooks/site.yml, a fresh converge then a no-op re-run, in one simulated cluster;
  naive: tests/bench/naive/site_naive.yml (one kubernetes.core.k8s call per object, k8s_info polled with
         retries/delay), a fresh converge then a no-op re-run, in another fresh simulated cluster.
Each run is an ansible-playbook subprocess; requests come from the simulator's request log. Reads are get/list/watch
of objects; discovery (GET /api, /apis/<group>/<version>: the client's cached API metadata) is counted apart. Writes
are create/update/patch/delete (dry runs excluded); "effective" writes changed stored state.
Managed objects = the rendered plan's objects + Namespace, OperatorGroup, Subscription and ClusterServiceVersion per
operator (the collection creates the first three, waits on the CSV and removes it on teardown).

Usage: source hack/env.sh && python tests/bench/bench_site.py [--config 1] [--naive-delay 10] [--no-naive] [--json F]
"""

import argparse
import glob
import json
import os
import subprocess
import sys
import time

import yaml

from ansible_collections.gpudirect.openshift.plugins.module_utils.render.plan import render_all
from simulator import SimulatedCluster

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SITE = os.path.join(ROOT, "playbooks", "site.yml")
NAIVE = os.path.join(ROOT, "tests", "bench", "naive", "site_naive.yml")
PROFILE = "mixed-lab"
OPERATORS = 4  # NFD, SR-IOV, NVIDIA network, NVIDIA GPU
OLM_OBJECTS_PER_OPERATOR = 4  # Namespace, OperatorGroup, Subscription, ClusterServiceVersion
READS = ("get", "list", "watch")


def example_file(number):
    found = sorted(glob.glob(os.path.join(ROOT, "playbooks", "vars", "examples", "%d-*.yml" % number)))
    if not found:
        raise SystemExit("no playbooks/vars/examples/%d-*.yml" % number)
    return found[0]


def managed_objects(vars_file):
    with open(vars_file) as handle:
        plan = render_all(yaml.safe_load(handle))
    return len(plan["manifests"]) + OPERATORS * OLM_OBJECTS_PER_OPERATOR


def playbook_run(sim, playbook, vars_file, extra_vars=None):
    """Run one playbook; returns its numbers (requests from the simulator's log)."""
    env = dict(os.environ, K8S_AUTH_KUBECONFIG=sim.kubeconfig, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0")
    cmd = ["ansible-playbook", playbook, "-e", "@" + vars_file]
    for key, value in (extra_vars or {}).items():
        cmd += ["-e", "%s=%s" % (key, value)]
    mark = sim.mark()
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError("%s failed (rc %d):\n%s\n%s" % (" ".join(cmd), proc.returncode, proc.stdout[-4000:], proc.stderr[-2000:]))
    log = [r for r in sim.request_log[mark:] if not r.get("dry_run")]
    return {
        "wall_s": round(wall, 2),
        "requests": len(log),
        "reads": sum(1 for r in log if r["verb"] in READS and r.get("plural")),
        "discovery": sum(1 for r in log if r["verb"] in READS and not r.get("plural")),
        "writes": sim.count(writes_only=True, since=mark),
        "effective_writes": sim.count(writes_only=True, effective_only=True, since=mark),
        "errors": sum(1 for r in log if r["code"] >= 400),
    }


def converge_and_rerun(playbook, vars_file, extra_vars=None):
    with SimulatedCluster(profile=PROFILE) as sim:
        converge = playbook_run(sim, playbook, vars_file, extra_vars)
        rerun = playbook_run(sim, playbook, vars_file, extra_vars)
    return {"converge": converge, "rerun": rerun}


def bench_config(number, naive_delay=10, naive=True):
    vars_file = example_file(number)
    result = {"config": number, "vars_file": os.path.relpath(vars_file, ROOT), "profile": PROFILE,
              "managed_objects": managed_objects(vars_file), "naive_delay_s": naive_delay}
    result["ours"] = converge_and_rerun(SITE, vars_file)
    if naive:
        result["naive"] = converge_and_rerun(NAIVE, vars_file, {"naive_delay": naive_delay})
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=int, action="append", help="example number 1-6 (repeatable; default all)")
    parser.add_argument("--naive-delay", type=float, default=10, help="seconds between the naive k8s_info polls (default 10)")
    parser.add_argument("--no-naive", action="store_true", help="only site.yml")
    parser.add_argument("--json", help="append one JSON line per configuration to this file")
    args = parser.parse_args(argv)
    delay = int(args.naive_delay) if float(args.naive_delay).is_integer() else args.naive_delay
    for number in args.config or range(1, 7):
        res = bench_config(number, delay, not args.no_naive)
        for who in ("ours", "naive"):
            for run in ("converge", "rerun"):
                if who in res:
                    r = res[who][run]
                    print("config %d %-5s %-8s %6.1f s  %4d requests (%d reads, %d discovery, %d writes, %d effective, %d errors)" % (
                        number, who, run, r["wall_s"], r["requests"], r["reads"], r["discovery"], r["writes"], r["effective_writes"],
                        r["errors"]))
        sys.stdout.flush()
        if args.json:
            with open(args.json, "a") as handle:
                handle.write(json.dumps(res) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
