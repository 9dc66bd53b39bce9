"""Issue 34 (LOW): a kubeconfig's token never goes over plain http (unit tests: tests/unit/security)."""

import subprocess

import yaml


def kubeconfig(tmp_path, server, user):
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "k", "cluster": {"server": server}}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}]}))
    return str(path)


def test_a_module_refuses_before_any_connection(tmp_path):
    """Through the real interface: the cluster_info module with such a kubeconfig fails with the sentence at once
    (10.255.255.1 is unroutable: a connection attempt would hang until its timeout instead)."""
    path = kubeconfig(tmp_path, "http://10.255.255.1:6443", {"token": "sha256~secret"})
    proc = subprocess.run(["ansible", "localhost", "-m", "gpudirect.openshift.cluster_info", "-a", "kubeconfig=%s" % path],
                          capture_output=True, text=True, timeout=120, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "over plain http to http://10.255.255.1:6443" in out, out[-2000:]
    assert "sha256~secret" not in out
