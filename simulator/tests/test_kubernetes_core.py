"""kubernetes.core modules (ansible-playbook in a subprocess) against the simulated API server."""

import os
import re
import shutil
import subprocess
import sys

import pytest
import requests

PLAYBOOK = os.path.join(os.path.dirname(__file__), "playbooks", "kubernetes_core.yml")
CM_PATH = "/api/v1/namespaces/default/configmaps"
NCP_PATH = "/apis/mellanox.com/v1alpha1/nicclusterpolicies"


def run_playbook(cluster, tmp_path, *extra):
    ansible_playbook = shutil.which("ansible-playbook")
    if ansible_playbook is None:
        pytest.fail("ansible-playbook is not on PATH: run the tests under `source hack/env.sh`", pytrace=False)
    env = dict(os.environ)
    env.update({
        "K8S_AUTH_KUBECONFIG": cluster.kubeconfig,
        "ANSIBLE_LOCAL_TEMP": str(tmp_path / "ansible-tmp"),
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_RETRY_FILES_ENABLED": "0",
        "ANSIBLE_STDOUT_CALLBACK": "default",
        "ANSIBLE_CALLBACK_RESULT_FORMAT": "yaml",
    })
    cmd = [ansible_playbook, "-i", "localhost,", "-c", "local", "-e", "ansible_python_interpreter=" + sys.executable,
           PLAYBOOK] + list(extra)
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300, check=False)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    recap = re.search(r"localhost\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", output)
    assert recap, output
    return int(recap.group(2)), output


def test_kubernetes_core_modules_against_simulator(sim_factory, tmp_path):
    cluster = sim_factory(profile=None, controllers=False)
    cluster.store.set_served("mellanox.com", "nicclusterpolicies", True)
    http = requests.Session()
    http.headers["Authorization"] = "Bearer " + cluster.token
    assert http.post(cluster.url + CM_PATH, json={"metadata": {"name": "sim-doomed"}, "data": {}}, timeout=5).ok
    assert http.post(cluster.url + "/api/v1/namespaces/default/pods", timeout=5, json={
        "metadata": {"name": "sim-logger"}, "spec": {"containers": [{"name": "main", "image": "perftest"}]}}).ok
    cluster.pod_logs[("default", "sim-logger")] = "ib_write_bw done\nBW average 97.5 Gb/sec\n"
    assert http.post(cluster.url + NCP_PATH, timeout=5, json={
        "apiVersion": "mellanox.com/v1alpha1", "kind": "NicClusterPolicy", "metadata": {"name": "nic-cluster-policy"},
        "spec": {"ofedDriver": {"image": "doca-driver", "repository": "nvcr.io/nvidia/mellanox",
                                "version": "24.10-0.7.0.0-0"}}}).ok

    # Check mode: reported as changed, answered by dry-run requests (dryRun=All), nothing written.
    rv = cluster.store.current_resource_version
    mark = cluster.mark()
    changed, out = run_playbook(cluster, tmp_path, "--check")
    assert changed == 6, out
    assert cluster.count(writes_only=True, since=mark) == 0, cluster.request_log[mark:]
    dry = [e for e in cluster.request_log[mark:] if e["dry_run"]]
    assert {e["verb"] for e in dry} >= {"create", "patch", "delete"}, dry
    assert cluster.store.current_resource_version == rv

    # Real run: creates the ConfigMaps, updates the CR, deletes sim-doomed.
    mark = cluster.mark()
    changed, out = run_playbook(cluster, tmp_path)
    assert changed == 6, out
    log = cluster.request_log[mark:]
    assert cluster.count(verb="create", since=mark) == 2  # sim-ssa is created by an apply patch
    assert any(e["verb"] == "patch" and e["content_type"] == "application/apply-patch+yaml" and e["code"] == 201
               and e["query"].get("fieldManager") == "gpudirect-sim-test" for e in log)
    assert any(e["verb"] == "delete" and e["name"] == "sim-doomed" and e["code"] == 200 for e in log)
    assert http.get(cluster.url + CM_PATH + "/sim-doomed", timeout=5).status_code == 404
    applied = http.get(cluster.url + CM_PATH + "/sim-applied", timeout=5).json()
    assert "kubectl.kubernetes.io/last-applied-configuration" in applied["metadata"]["annotations"]
    ssa = http.get(cluster.url + CM_PATH + "/sim-ssa", timeout=5).json()
    assert [m["manager"] for m in ssa["metadata"]["managedFields"]] == ["gpudirect-sim-test"]
    # Updating the CR: kubernetes.core tries a strategic merge patch, gets 415, retries as a merge patch.
    ncp_patches = [(e["content_type"], e["code"]) for e in log
                   if e["verb"] == "patch" and e["plural"] == "nicclusterpolicies"
                   and e["content_type"] != "application/apply-patch+yaml"]
    assert ncp_patches == [("application/strategic-merge-patch+json", 415), ("application/merge-patch+json", 200)]

    # Same run again: changed=0 and nothing written. kubernetes.core still sends its PATCH / apply requests
    # (a real apiserver sees them too); they must be no-ops that leave every object untouched.
    rv = cluster.store.current_resource_version
    mark = cluster.mark()
    changed, out = run_playbook(cluster, tmp_path)
    assert changed == 0, out
    assert cluster.count(writes_only=True, effective_only=True, since=mark) == 0, cluster.request_log[mark:]
    assert cluster.count(verb=("create", "update", "delete", "deletecollection"), since=mark) == 0
    assert cluster.store.current_resource_version == rv
