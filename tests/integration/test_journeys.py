"""Journeys (issue 31): on every shipped simulated profile, run what the README, docs/index.md and the hack/site.sh
summary tell a user to run, in order, each in a fresh shell (env -i), as a user would.

The commands are read from the texts themselves, so that a new next-step line is covered without touching this file:
- the fenced block after a `<!-- journey -->` comment in README.md and docs/index.md (placeholders: `<profile>`);
- the "Next (run from ...):" lines of the summary that the first command prints, which hand off to the cluster it kept
  (`--keep`).
One converge per profile; every next step runs against the kept cluster. Each step must end rc 0 with a summary that
names the kept cluster (no new simulator), keep the user's variables in its own "Next:" lines, and show only reports it
wrote itself.
"""

import glob
import json
import os
import re
import signal
import subprocess
import time

import pytest
from kubernetes import config, dynamic

from simulator.profiles import shipped_profiles

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCUMENTS = ["README.md", os.path.join("docs", "index.md")]
JOURNEY_BLOCK = re.compile(r"<!-- journey\b[^>]*-->\s*```(?:bash|sh|console)?\n(.*?)```", re.S)
NEXT_HEADER = re.compile(r"^Next \(run from (?P<root>[^)]+)\):$", re.M)
NEXT_LINE = re.compile(r"^  (?P<label>\S.*?)\s{2,}(?P<command>\S.*)$")
# Next-step lines that are not commands to run here, and why. Every other "Next:" line runs.
NOT_RUN = {
    "a real cluster": "needs a real OpenShift cluster",
    "every test": "the whole test suite, which CI runs anyway",
}
MANAGED = "app.kubernetes.io/managed-by=gpudirect.openshift"

def documented_commands():
    """The journey commands of README.md and docs/index.md, in order, comments and blank lines dropped."""
    commands = []
    for document in DOCUMENTS:
        with open(os.path.join(ROOT, document), encoding="utf-8") as stream:
            blocks = JOURNEY_BLOCK.findall(stream.read())
        assert blocks, "%s has no <!-- journey --> block" % document
        for block in blocks:
            for line in block.splitlines():
                command = re.sub(r"\s+#.*$", "", line).strip()
                if command and not command.startswith("#"):
                    commands.append(command)
    return commands


def next_steps(output):
    """(label, command) of each "Next:" line of the last summary in ``output``."""
    headers = list(NEXT_HEADER.finditer(output))
    assert headers, "no 'Next (run from ...):' in:\n" + output[-3000:]
    assert headers[-1].group("root") == ROOT
    steps = []
    for line in output[headers[-1].end():].lstrip("\n").splitlines():
        match = NEXT_LINE.match(line)
        if not match:
            break
        steps.append((match.group("label"), match.group("command")))
    assert steps, output[-3000:]
    return steps


def fresh_shell(command, journey):
    """``command`` in bash in a new, nearly empty environment (env -i), from the repository root. Only HOME, PATH and
    the test's own places are set: where the simulator keeps its kubeconfig, where reports go, and the shared
    virtualenv when the test run has one (GPUDIRECT_VENV, as hack/env.sh reads it)."""
    env = {"HOME": os.environ.get("HOME", "/root"), "PATH": "/usr/local/bin:/usr/bin:/bin", "ANSIBLE_NOCOLOR": "1",
           "GPUDIRECT_SIM_DIR": journey["sim_dir"], "GPUDIRECT_ARTIFACTS_DIR": journey["artifacts"]}
    if os.environ.get("GPUDIRECT_VENV"):
        env["GPUDIRECT_VENV"] = os.environ["GPUDIRECT_VENV"]
    began = time.time()
    proc = subprocess.run(["env", "-i"] + ["%s=%s" % item for item in sorted(env.items())] + ["bash", "-c", command],
                          cwd=ROOT, capture_output=True, text=True, check=False, timeout=900)
    return proc.returncode, proc.stdout + proc.stderr, began


def labelled(journey, api_version, kind):
    """Names of the objects of ``kind`` labelled as the collection's, read with the kubeconfig the user would use."""
    client = dynamic.DynamicClient(config.new_client_from_config(config_file=journey["kubeconfig"]))
    items = client.resources.get(api_version=api_version, kind=kind).get(label_selector=MANAGED).to_dict()["items"]
    return ["%s %s" % (kind, item["metadata"]["name"]) for item in items]


def fresh_files(pattern, since):
    return [path for path in glob.glob(pattern, recursive=True) if os.path.getmtime(path) >= since - 1]


def check_summary(output, journey, rc):
    assert rc == 0 and "Result:        succeeded" in output, output[-6000:]
    assert re.search(r"PLAY RECAP.*\n\S+\s*: ok=\d+\s+changed=\d+\s+unreachable=0\s+failed=0", output), output[-3000:]
    assert "[WARNING]: Encountered" not in output and "is undefined" not in output, output[-6000:]


def check_next_step(command, output, journey, began):
    """A step run from a "Next:" line: the kept cluster, nothing started anew, the user's variables kept, and only
    reports this step wrote."""
    assert ">> no cluster given: starting the simulated" not in output, output[-3000:]
    assert "Cluster:       the one given by K8S_AUTH_KUBECONFIG=%s" % journey["kubeconfig"] in output, output[-3000:]
    for label, next_command in next_steps(output):
        if next_command.startswith("hack/site.sh") and label not in NOT_RUN:
            assert "--kubeconfig %s" % journey["kubeconfig"] in next_command, (label, next_command)
            assert "--vars %s" % journey["vars"] in next_command, (label, next_command)
    playbook = re.search(r"--playbook (\S+)|--then (\S+)", command)
    playbook = os.path.basename(next(group for group in playbook.groups() if group)) if playbook else ""
    if playbook == "verify.yml":
        shown = re.findall(r"Verification reports: ([^\s'\"]+)", output)
        assert shown, output[-3000:]
        results = fresh_files(os.path.join(shown[-1], "results.json"), began)
        assert results, "verify pointed to %s, which holds no results.json of this run" % shown[-1]
        with open(results[0], encoding="utf-8") as stream:
            verdict = json.load(stream)
        assert verdict["passed"] is True and verdict["summary"]["pairs"] >= 1, verdict.get("summary")
    elif playbook == "facts.yml":
        line = re.search(r"(\d+) node\(s\): (\d+) ready, (\d+) from the cache, \d+ gathered now, (\d+) without facts\.",
                         " ".join(output.split()))
        assert line, output[-3000:]
        # Facts from before the drivers would be stale: a node the cache held as "not ready" is read again, so only
        # ready nodes may come from the cache. A node may still be not ready for a reason of its hardware (an E810
        # port loads irdma, which the profile's variables do not blacklist): the report then says so, read now.
        total, ready, cached, missing = (int(line.group(i)) for i in range(1, 5))
        assert total >= ready and missing == 0 and cached <= ready, line.group(0)
        reports = fresh_files(os.path.join(journey["artifacts"], "**", "hardware-report.md"), began)
        assert reports, "facts.yml wrote no hardware-report.md under %s" % journey["artifacts"]
    elif playbook == "teardown.yml":
        labels = [label for label, _command in next_steps(output)]
        assert "verify RDMA" not in labels and "install again" in labels, labels
        left = (labelled(journey, "mellanox.com/v1alpha1", "NicClusterPolicy") + labelled(journey, "nvidia.com/v1", "ClusterPolicy")
                + labelled(journey, "operators.coreos.com/v1", "OperatorGroup"))
        assert left == [], "teardown left: %s" % left


@pytest.fixture
def journey(tmp_path, request):
    sim_dir = tmp_path / "sim"
    data = {"sim_dir": str(sim_dir), "kubeconfig": str(sim_dir / "kubeconfig"), "artifacts": str(tmp_path / "artifacts"),
            "pids": []}
    yield data
    for pid in data["pids"]:  # the simulators --keep left running, started by this test
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass


@pytest.mark.parametrize("profile", shipped_profiles())
def test_every_documented_next_step_works_on_the_profile(journey, profile):
    journey["vars"] = "playbooks/vars/simulator/%s.yml" % profile
    with open(os.path.join(ROOT, "simulator", "profiles", "%s.yaml" % profile), encoding="utf-8") as stream:
        journey["down_link"] = "state: DOWN" in stream.read()
    commands = list(dict.fromkeys(command.replace("<profile>", profile) for command in documented_commands()))
    assert commands[0].startswith("hack/site.sh") and "--keep" in commands[0], commands
    steps = []
    # The first documented command converges and keeps the cluster; its summary says what comes next.
    rc, output, _began = fresh_shell(commands[0], journey)
    kept = re.search(r"The simulated cluster keeps running \(pid (\d+)", output)
    if kept:
        journey["pids"].append(int(kept.group(1)))
    check_summary(output, journey, rc)
    assert "profile %s" % profile in output and "Variables:     %s" % journey["vars"] in output, output[-3000:]
    assert kept, output[-3000:]
    later = commands[1:] + [command for label, command in next_steps(output) if label not in NOT_RUN]
    later = list(dict.fromkeys(later))
    labels = [label for label, _command in next_steps(output)]
    assert {"verify RDMA", "NIC/GPU facts", "tear down"} <= set(labels), labels
    # Tear down last, whatever order the texts give: the other steps need the installed cluster.
    later.sort(key=lambda command: "teardown.yml" in command)
    for command in later:
        rc, output, began = fresh_shell(command, journey)
        steps.append(command)
        if "verify.yml" in command and journey.get("down_link"):
            # The profile's own degraded rail (a port DOWN in its hardware): verify must fail and name it.
            assert rc != 0 and "link_down" in output and "is DOWN in the facts" in output, output[-3000:]
            continue
        check_summary(output, journey, rc)
        check_next_step(command, output, journey, began)
    assert any("teardown.yml" in command for command in steps), steps
