"""Helpers for tests that run playbooks/site.yml with ansible-playbook against the simulator."""

import os
import json
import re
import subprocess
import sys
import time
from dataclasses import dataclass

from ansible_collections.gpudirect.openshift.tests.configurations import example_path

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TEST_PLAYBOOKS = os.path.join(ROOT, "tests", "integration", "playbooks")
RAILS = ["rail%d" % index for index in range(8)]
RECAP = re.compile(r"^\S+\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", re.M)


@dataclass
class PlayRun:
    rc: int
    output: str
    requests: int
    writes: int
    dry_run_writes: int
    seconds: float

    @property
    def changed(self):
        match = RECAP.search(self.output)
        assert match, "no PLAY RECAP in:\n" + self.output[-3000:]
        return int(match.group(2))


def example(name):
    """The example variables file of a configuration ("sriov_legacy/roce") or of an example file name."""
    return example_path(name)


def run_playbook(sim, *args, playbook="playbooks/site.yml", env=None):
    """Run a playbook against ``sim`` and count what it did to the API."""
    start = len(sim.request_log)
    began = time.monotonic()
    full_env = dict(os.environ, K8S_AUTH_KUBECONFIG=sim.kubeconfig, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0")
    full_env.pop("KUBECONFIG", None)
    full_env.update(env or {})
    proc = subprocess.run(["ansible-playbook", playbook] + list(args), cwd=ROOT, env=full_env,
                          capture_output=True, text=True, check=False)
    return PlayRun(
        rc=proc.returncode,
        output=proc.stdout + proc.stderr,
        requests=len(sim.request_log) - start,
        writes=sim.count(writes_only=True, since=start),
        dry_run_writes=sim.count(writes_only=True, include_dry_run=True, since=start) - sim.count(writes_only=True, since=start),
        seconds=time.monotonic() - began,
    )


def objects(sim, api_version, kind, namespace=None):
    rtype = sim.store.find_kind(api_version, kind)
    items, _rv = sim.store.list(rtype, namespace)
    return items


def allocatable(sim, resource):
    return {n["metadata"]["name"]: n["status"].get("allocatable", {}).get(resource) for n in objects(sim, "v1", "Node")}


def run_test_playbook(sim, tmp_path, playbook, extra_vars, check=False):
    """Run a playbook of tests/integration/playbooks against ``sim``; return the JSON it saved to ``result_file``."""
    result_file = tmp_path / ("result-%d.json" % len(list(tmp_path.glob("result-*.json"))))
    extra = dict(extra_vars, result_file=str(result_file), ansible_python_interpreter=sys.executable)
    vars_file = tmp_path / "vars.json"
    vars_file.write_text(json.dumps(extra))
    env = dict(os.environ, K8S_AUTH_KUBECONFIG=sim.kubeconfig, ANSIBLE_NOCOLOR="1", TMPDIR=str(tmp_path))
    cmd = ["ansible-playbook", "-i", "localhost,", "-c", "local", os.path.join(TEST_PLAYBOOKS, playbook),
           "-e", "@%s" % vars_file]
    if check:
        cmd.append("--check")
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(result_file.read_text())


def rail_site_variables(fabric):
    """site.yml variables of the rail profiles (issue 17): shared device, auto NIC selection, rail0..rail7 carved
    from one range."""
    return {"gpudirect_rdma_method": "shared_device", "gpudirect_rdma_fabric": fabric, "gpudirect_rdma_nic_selection": "auto",
            "gpudirect_rdma_resource_names": list(RAILS), "gpudirect_rdma_network_names": list(RAILS),
            "gpudirect_rdma_ipam_range": "192.168.0.0/16"}


# verify.yml settings of the simulated runs: a quick measurement, short starts and a one-second pending grace.
FAST_VERIFY = {"verify_image": "registry.example/perftest-cuda:25.01", "verify_duration": 2, "verify_start_timeout": 30,
               "verify_pending_grace_period": 1, "verify_cleanup_timeout": 30}


def converge_and_wait_for(sim, tmp, site_vars, resources, nodes):
    """Run site.yml with ``site_vars`` (written to a file in ``tmp``), then wait until the device plugins advertise
    each of ``resources`` on each of ``nodes`` (they do once the policies are ready, a little after site.yml ends)."""
    from simulator.controllers.testing import wait

    vars_file = tmp / "site.json"
    vars_file.write_text(json.dumps(site_vars))
    site = run_playbook(sim, "-e", "@%s" % vars_file)
    assert site.rc == 0, site.output[-6000:]
    for resource in resources:
        wait(lambda r=resource: all(int(allocatable(sim, r).get(n) or 0) > 0 for n in nodes), timeout=30)
    return site
