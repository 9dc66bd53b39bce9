"""Where the reports go (plugins/lookup/artifacts_dir.py), issue 31 point 5 and the released-tarball bullet: the
working directory of the process (never PWD, which env -i and systemd units leave unset or stale) or
GPUDIRECT_ARTIFACTS_DIR, then the cluster's name; for the implicit localhost, the name in its API server URL."""

import os

import yaml

from ansible_collections.gpudirect.openshift.plugins.lookup.artifacts_dir import artifacts_root, cluster_directory

KUBECONFIG = {
    "apiVersion": "v1", "kind": "Config", "current-context": "lab-1",
    "clusters": [{"name": "one", "cluster": {"server": "https://api.lab-1.example.com:6443"}},
                 {"name": "two", "cluster": {"server": "https://api.lab-2.example.com:6443"}}],
    "contexts": [{"name": "lab-1", "context": {"cluster": "one", "user": "u"}},
                 {"name": "lab-2", "context": {"cluster": "two", "user": "u"}}],
}


def test_the_root_is_the_working_directory_not_pwd(tmp_path):
    assert artifacts_root(environ={"PWD": "/usr/share/ansible/collections"}, cwd=str(tmp_path)) == str(tmp_path / "artifacts")
    assert artifacts_root(environ={}, cwd=str(tmp_path)) == str(tmp_path / "artifacts")
    assert artifacts_root(environ={"GPUDIRECT_ARTIFACTS_DIR": "/var/lib/runs", "PWD": "/x"}) == "/var/lib/runs"


def test_the_implicit_localhost_is_named_by_its_cluster(tmp_path):
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(KUBECONFIG))
    env = {"K8S_AUTH_KUBECONFIG": str(path)}
    assert cluster_directory("localhost", {}, env) == "lab-1"
    assert cluster_directory("localhost", {}, dict(env, K8S_AUTH_CONTEXT="lab-2")) == "lab-2"
    assert cluster_directory("127.0.0.1", {"gpudirect_kubeconfig": str(path), "gpudirect_context": "lab-2"}, {}) == "lab-2"
    assert cluster_directory("localhost", {}, {"KUBECONFIG": os.pathsep.join([str(path), "/nonexistent"])}) == "lab-1"
    assert cluster_directory("localhost", {}, {"K8S_AUTH_HOST": "https://api.prod.example.com:6443"}) == "prod"
    # An inventory host is its own name; no kubeconfig at all keeps localhost.
    assert cluster_directory("lab-9", {}, env) == "lab-9"
    assert cluster_directory("localhost", {}, {"HOME": str(tmp_path / "nohome")}) == "localhost"
