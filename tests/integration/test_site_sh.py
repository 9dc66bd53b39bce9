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
