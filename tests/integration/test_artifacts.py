"""Where the reports go, and that none is stale (issue 31 point 5 and the released-tarball bullet).

The playbooks run as the released collection is run: from a directory of the user's, with the playbook named by its
path in the collection, and with no PWD in the environment (env -i, systemd units); the reports must land in
<working directory>/artifacts/<cluster>/, the cluster named by its API server URL for the implicit localhost."""

import json
import os
import subprocess
import sys

from site_support import ROOT, example

CLUSTER = "127.0.0.1"  # the simulator's API server URL: http://127.0.0.1:<port>/<prefix>


def run(sim, tmp_path, playbook, *args):
    """ansible-playbook from tmp_path, with the environment of a systemd unit: no PWD, HOME and PATH only."""
    env = {name: os.environ[name] for name in ("PATH", "HOME", "ANSIBLE_COLLECTIONS_PATH", "ANSIBLE_CONFIG", "PYTHONPATH",
                                               "ANSIBLE_LOCAL_TEMP", "ANSIBLE_HOME", "VIRTUAL_ENV") if name in os.environ}
    env.update(K8S_AUTH_KUBECONFIG=sim.kubeconfig, ANSIBLE_NOCOLOR="1")
    proc = subprocess.run(["ansible-playbook", os.path.join(ROOT, "playbooks", playbook),
                           "-e", "ansible_python_interpreter=%s" % sys.executable] + list(args),
                          cwd=str(tmp_path), env=env, capture_output=True, text=True, check=False, timeout=300)
    return proc.returncode, proc.stdout + proc.stderr


def test_facts_reports_go_to_the_working_directory_under_the_clusters_name_without_pwd(sim_factory, tmp_path):
    sim = sim_factory(profile="roce-lab")
    rc, output = run(sim, tmp_path, "facts.yml")
    assert rc == 0, output[-3000:]
    report = tmp_path / "artifacts" / CLUSTER / "hardware-report.md"
    assert report.is_file(), output[-3000:]
    assert "Reports: %s " % report.parent in output
    assert not (tmp_path / "artifacts" / "localhost").exists()
    assert not os.path.exists(os.path.join(ROOT, "playbooks", "artifacts"))


def test_a_verify_that_fails_early_leaves_no_older_passed_report(sim_factory, tmp_path):
    """An earlier run's PASSED results in this cluster's directory are removed when verify starts, and a run that
    stops before the bandwidth test says nothing about reports."""
    sim = sim_factory(profile="mixed-lab")
    verify_dir = tmp_path / "artifacts" / CLUSTER / "verify"
    verify_dir.mkdir(parents=True)
    (verify_dir / "results.json").write_text(json.dumps({"cluster": "another", "passed": True}))
    (verify_dir / "report.md").write_text("PASSED")
    (verify_dir / "pair-0-client.log").write_text("")
    (verify_dir / "notes.txt").write_text("the user's own file")
    rc, output = run(sim, tmp_path, "verify.yml", "-e", "@" + example("shared_device/roce"), "-e", "verify_image=not-an-image:")
    assert rc != 0, output[-3000:]
    assert "is not an image reference" in output, output[-3000:]
    assert sorted(os.listdir(verify_dir)) == ["notes.txt"]
    assert "Verification reports:" not in output
