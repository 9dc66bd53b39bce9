"""hack/site.sh with no arguments but --profile: each shipped simulator profile converges with the variables file
that fits it (playbooks/vars/simulator/<profile>.yml), and the default profile is the simulator's own."""

import inspect
import os
import re
import subprocess
import sys

import pytest
import yaml

from simulator import SimulatedCluster
from simulator.profiles import shipped_profiles

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SITE_SH = os.path.join(ROOT, "hack", "site.sh")
PROFILE_VARS = os.path.join(ROOT, "playbooks", "vars", "simulator")


def site_sh(tmp_path, *args):
    env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "K8S_AUTH_KUBECONFIG", "K8S_AUTH_HOST")}
    env.update(GPUDIRECT_SIM_DIR=str(tmp_path / "sim"), ANSIBLE_NOCOLOR="1")
    return subprocess.run(["bash", SITE_SH, *args], cwd=ROOT, env=env, capture_output=True, text=True, check=False,
                          timeout=300)


@pytest.mark.parametrize("profile", ["roce-lab", "infiniband-lab"])
def test_site_sh_converges_on_a_profile_with_no_other_argument(tmp_path, profile):
    proc = site_sh(tmp_path, "--profile", profile)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    assert re.search(r"failed=0", out) and "Result:        succeeded" in out, out[-3000:]
    assert "profile %s" % profile in out
    assert "Variables:     playbooks/vars/simulator/%s.yml" % profile in out
    fabric = yaml.safe_load(open(os.path.join(PROFILE_VARS, profile + ".yml")))["gpudirect_rdma_fabric"]
    assert re.search(r"RDMA: shared_device over %s on \w+" % fabric, out), out[-3000:]


def test_every_shipped_profile_has_variables_and_one_default_profile_everywhere(tmp_path):
    assert sorted(f[:-4] for f in os.listdir(PROFILE_VARS) if f.endswith(".yml")) == sorted(shipped_profiles())
    default = inspect.signature(SimulatedCluster).parameters["profile"].default
    script = open(SITE_SH).read()
    assert re.search(r'^profile="%s"' % re.escape(default), script, re.M)
    cli = subprocess.run([sys.executable, "-m", "simulator", "serve", "--help"], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    assert "(default %s)" % default in cli
    molecule = open(os.path.join(ROOT, "extensions", "molecule", "default", "vars", "simulator.yml")).read()
    assert "default('%s')" % default in molecule
    # A profile without a shipped variables file asks for --vars instead of running a configuration that may not fit.
    proc = site_sh(tmp_path, "--profile", "synthetic:nodes=2,gpus=1,nics=1")
    assert proc.returncode == 2 and "give --vars FILE" in proc.stderr, proc.stderr


def test_help_names_every_option_the_script_takes():
    """Issue 31 point 9: --help omitted --playbook. Every option of the argument loop is in the help."""
    script = open(SITE_SH).read()
    loop = script[script.index('while [ $# -gt 0 ]; do'):script.index("done", script.index('while [ $# -gt 0 ]; do'))]
    options = set(re.findall(r"^\s+(--[a-z]+)[|)]", loop, re.M)) - {"--"}
    assert {"--profile", "--vars", "--playbook", "--then", "--keep", "--kubeconfig"} <= options, options
    proc = subprocess.run(["bash", SITE_SH, "--help"], cwd=ROOT, capture_output=True, text=True, check=False, timeout=120)
    assert proc.returncode == 0, proc.stderr
    for option in options:
        assert option in proc.stdout, (option, proc.stdout)
    assert "shellcheck" not in proc.stdout


def next_lines(output):
    text = output[output.rindex("Next (run from %s):" % ROOT):]
    return dict(re.findall(r"^  (\S.*?)\s{2,}(\S.*)$", text, re.M))


def test_after_a_failure_next_says_the_cause_and_reruns_with_the_users_arguments_on_the_kept_cluster(tmp_path):
    """Issue 31 point 9: after a failure "Next:" suggested verify, dropped --vars and the ansible-playbook arguments,
    and started a new simulator instead of using the kept one; the ansible-playbook hint failed in a fresh shell."""
    vars_file = tmp_path / "my-vars.yml"
    vars_file.write_text(open(os.path.join(PROFILE_VARS, "roce-lab.yml")).read())
    sim_dir = tmp_path / "sim"
    proc = site_sh(tmp_path, "--vars", str(vars_file), "--keep", "--", "-e", "gpudirect_rdma_mtu=abc")
    out = proc.stdout + proc.stderr
    pid = re.search(r"keeps running \(pid (\d+)", out)
    try:
        assert proc.returncode != 0 and "Result:        FAILED" in out, out[-3000:]
        assert "gpudirect_rdma_mtu: must be an integer" in out
        steps = next_lines(out)
        assert "verify RDMA" not in steps and "tear down" not in steps, steps
        rerun = steps["run it again"]
        assert rerun == "hack/site.sh --kubeconfig %s/kubeconfig --vars %s --playbook playbooks/site.yml -- -e gpudirect_rdma_mtu=abc" % (
            sim_dir, vars_file), rerun
        assert "the cause" in steps and "docs/troubleshooting.md" in steps["the cause"]
        # The hand-made ansible-playbook command, as printed, works in a fresh shell (it needs the environment first).
        hint = out[out.index("ansible-playbook by hand"):].splitlines()[1:3]
        assert hint[0].startswith("  cd %s && source hack/env.sh" % ROOT) and hint[1].startswith("  ansible-playbook "), hint
        env = {"HOME": os.environ.get("HOME", "/root"), "PATH": "/usr/bin:/bin", "ANSIBLE_NOCOLOR": "1"}
        if os.environ.get("GPUDIRECT_VENV"):
            env["GPUDIRECT_VENV"] = os.environ["GPUDIRECT_VENV"]
        fresh = subprocess.run(["env", "-i"] + ["%s=%s" % item for item in env.items()]
                               + ["bash", "-c", "%s\n%s -e gpudirect_rdma_mtu=abc" % (hint[0].strip(), hint[1].strip())],
                               cwd=str(tmp_path), capture_output=True, text=True, check=False, timeout=300)
        fresh_out = fresh.stdout + fresh.stderr
        assert "command not found" not in fresh_out and "PLAY [" in fresh_out, fresh_out[-3000:]
        assert "gpudirect_rdma_mtu: must be an integer" in fresh_out, fresh_out[-3000:]
        # The kept cluster is the one the next command reaches: no new simulator.
        again = subprocess.run(["bash", "-c", rerun], cwd=ROOT, capture_output=True, text=True, check=False, timeout=300,
                               env={k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "K8S_AUTH_KUBECONFIG")})
        again_out = again.stdout + again.stderr
        assert "no cluster given: starting" not in again_out, again_out[-3000:]
        assert "Cluster:       the one given by K8S_AUTH_KUBECONFIG=%s/kubeconfig" % sim_dir in again_out, again_out[-3000:]
        assert next_lines(again_out)["run it again"] == rerun
    finally:
        if pid:
            os.kill(int(pid.group(1)), 15)


def test_check_mode_next_step_applies_and_the_summary_lists_no_operator_as_running(tmp_path):
    """Issue 31 point 9: after `-- --check` the summary said "succeeded", listed the operators as if installed and
    offered verify."""
    proc = site_sh(tmp_path, "--", "--check")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    assert "Result:        check mode, nothing written" in out, out[-3000:]
    assert re.search(r"Operators running: none; a run would install or change: nfd\.", " ".join(out.split())), out[-3000:]
    steps = next_lines(out)
    assert "verify RDMA" not in steps, steps
    assert steps["apply it"] == "hack/site.sh --vars playbooks/vars/simulator/roce-lab.yml --playbook playbooks/site.yml", steps
