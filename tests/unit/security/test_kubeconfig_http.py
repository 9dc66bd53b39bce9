"""Issue 34 (LOW): a bearer token from a kubeconfig went over plain http; only K8S_AUTH_* tokens were checked."""

import yaml

from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.connection import kubeconfig_problem


def kubeconfig(tmp_path, server, user, name="config"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "k", "cluster": {"server": server}}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}]}))
    return str(path)


def test_a_kubeconfig_token_over_plain_http_is_refused(tmp_path):
    path = kubeconfig(tmp_path, "http://api.lab.example.com:6443", {"token": "sha256~secret"})
    problem = kubeconfig_problem(kubeconfig=path, environ={})
    assert problem and "plain http" in problem and "http://api.lab.example.com:6443" in problem
    assert "sha256~secret" not in problem
    for user in ({"tokenFile": "/var/run/token"}, {"exec": {"command": "oc"}}, {"username": "a", "password": "b"}):
        assert kubeconfig_problem(kubeconfig=kubeconfig(tmp_path, "http://10.0.0.1:6443", user), environ={})


def test_the_kubeconfig_chosen_by_environment_and_context_is_judged(tmp_path):
    good = kubeconfig(tmp_path, "https://api.lab.example.com:6443", {"token": "t"}, "good")
    bad = kubeconfig(tmp_path, "http://api.lab.example.com:6443", {"token": "t"}, "bad")
    assert kubeconfig_problem(environ={"KUBECONFIG": good}) is None
    # KUBECONFIG lists several files: the first one that names a context wins (client-go's merge rule)
    assert kubeconfig_problem(environ={"KUBECONFIG": bad + ":" + good})
    assert kubeconfig_problem(environ={"K8S_AUTH_KUBECONFIG": bad})
    # a host option replaces the kubeconfig's server
    assert kubeconfig_problem(kubeconfig=good, host="http://api.lab.example.com:6443", environ={})


def test_what_stays_allowed(tmp_path):
    # https; loopback (the simulated cluster serves plain http on 127.0.0.1); no credentials; a token given as
    # api_key (judged by connection_problem); no kubeconfig at all.
    assert kubeconfig_problem(kubeconfig=kubeconfig(tmp_path, "https://10.0.0.1:6443", {"token": "t"}), environ={}) is None
    assert kubeconfig_problem(kubeconfig=kubeconfig(tmp_path, "http://127.0.0.1:8080", {"token": "t"}), environ={}) is None
    assert kubeconfig_problem(kubeconfig=kubeconfig(tmp_path, "http://localhost:8080", {"token": "t"}), environ={}) is None
    assert kubeconfig_problem(kubeconfig=kubeconfig(tmp_path, "http://10.0.0.1:6443", {}), environ={}) is None
    assert kubeconfig_problem(kubeconfig=kubeconfig(tmp_path, "http://10.0.0.1:6443", {"token": "t"}),
                              api_key="x", environ={}) is None
    assert kubeconfig_problem(kubeconfig=str(tmp_path / "missing"), environ={}) is None
