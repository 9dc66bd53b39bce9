"""The AWX project of a user who installed the collection from Automation Hub (awx/project-example/): shim
playbooks that import the collection's playbooks by name, and inventories that run as shipped."""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
PROJECT = ROOT / "awx" / "project-example"
DEFINITIONS = yaml.safe_load((ROOT / "awx" / "job_templates.yml").read_text())
# AWX lists a project file as a playbook only when a line matches this (ansible/awx awx/main/utils/ansible.py,
# valid_playbook_re); a job template may only name a listed playbook.
AWX_PLAYBOOK_LINE = re.compile(r"^\s*?-?\s*?(?:hosts|include|import_playbook):\s*?.*?$")
CLUSTER_ENV = ("KUBECONFIG", "K8S_AUTH_KUBECONFIG", "K8S_AUTH_CONTEXT", "K8S_AUTH_HOST", "K8S_AUTH_API_KEY")


def clean_env(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in CLUSTER_ENV}
    (tmp_path / "home").mkdir(exist_ok=True)
    env.update(HOME=str(tmp_path / "home"), ANSIBLE_NOCOLOR="1")
    return env


@pytest.mark.parametrize("template", DEFINITIONS["job_templates"], ids=lambda t: t["name"])
def test_job_template_playbook_is_a_shim_of_a_collection_playbook(template):
    shim = PROJECT / template["playbook"]
    assert shim.is_file(), template["name"]
    assert any(AWX_PLAYBOOK_LINE.match(line) for line in shim.read_text().splitlines()), "AWX would not list " + str(shim)
    plays = yaml.safe_load(shim.read_text())
    assert len(plays) == 1 and set(plays[0]) <= {"name", "import_playbook"}, plays
    target = plays[0]["import_playbook"]
    assert target.startswith("gpudirect.openshift.") and (ROOT / "playbooks" / (target.split(".")[-1] + ".yml")).is_file()
    for inventory in DEFINITIONS["inventories"]:
        assert (PROJECT / inventory["source_path"]).is_file(), inventory


def test_example_project_files_are_the_shipped_ones():
    """The example project's inventories are the collection's own examples (one definition, tested below)."""
    assert (PROJECT / "inventory" / "localhost.yml").read_text() == (ROOT / "playbooks/inventory/localhost.yml").read_text()
    assert (PROJECT / "inventory" / "clusters.yml").read_text() == \
        (ROOT / "playbooks/inventory/clusters.example.yml").read_text()
    wanted = yaml.safe_load((PROJECT / "collections" / "requirements.yml").read_text())["collections"]
    assert [c["name"] for c in wanted] == ["gpudirect.openshift"]


def test_shims_run_the_collection_playbooks_by_name(tmp_path):
    """--list-tasks resolves import_playbook gpudirect.openshift.<name> through the installed collection."""
    for shim in ("site.yml", "verify.yml", "teardown.yml"):
        proc = subprocess.run(["ansible-playbook", "--list-tasks", "-i", "inventory/localhost.yml", shim], cwd=PROJECT,
                              env=clean_env(tmp_path), capture_output=True, text=True, check=False, timeout=120)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "gpudirect.openshift." in proc.stdout, proc.stdout


def test_clusters_example_inventory_runs_as_shipped(sim_factory, tmp_path):
    """playbooks/inventory/clusters.example.yml with only the connections changed (host_vars beside a copy win over
    the file's host variables) configures a RoCE and an InfiniBand cluster in one run of the project's site.yml."""
    roce, infiniband = sim_factory(profile="roce-lab"), sim_factory(profile="infiniband-lab", tls=True)
    project = tmp_path / "project"
    shutil.copytree(PROJECT, project)
    host_vars = project / "inventory" / "host_vars"
    host_vars.mkdir()
    (host_vars / "ocp-lab-roce.yml").write_text(yaml.safe_dump({"gpudirect_kubeconfig": roce.kubeconfig}))
    (host_vars / "ocp-hpc-ib.yml").write_text(yaml.safe_dump(
        {"gpudirect_api_host": infiniband.url, "gpudirect_api_key": infiniband.token, "gpudirect_validate_certs": False}))
    proc = subprocess.run(["ansible-playbook", "-i", "inventory/clusters.yml", "--limit", "ocp-lab-roce,ocp-hpc-ib",
                           "--forks", "2", "site.yml"], cwd=project, env=clean_env(tmp_path), capture_output=True,
                          text=True, check=False, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-5000:]
    assert re.search(r"^ocp-lab-roce\s+: ok=\d+\s+changed=[1-9]\d*\s+unreachable=0\s+failed=0", out, re.M), out[-3000:]
    assert re.search(r"^ocp-hpc-ib\s+: ok=\d+\s+changed=[1-9]\d*\s+unreachable=0\s+failed=0", out, re.M), out[-3000:]
    assert re.search(r"RDMA: shared_device over roce on ens\w+", out) and re.search(r"RDMA: host_device over infiniband", out)
    assert infiniband.token not in out
