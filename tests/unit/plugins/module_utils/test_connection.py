"""connection_problem: where a bearer token may go."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.connection import cluster_name, connection_problem

ENV = {"K8S_AUTH_HOST": "https://api.ocp.example:6443", "K8S_AUTH_API_KEY": "sha256~credential"}


def test_credential_token_to_its_own_host_is_fine():
    assert connection_problem(host="https://api.ocp.example:6443/", api_key="sha256~credential", environ=ENV) is None
    assert connection_problem(host="HTTPS://API.ocp.example:6443", api_key="sha256~credential", environ=ENV) is None


def test_credential_token_to_another_host_is_refused():
    problem = connection_problem(host="https://evil.example", api_key="sha256~credential", environ=ENV)
    assert "not the credential's host" in problem and "gpudirect_api_host" in problem


def test_host_with_its_own_token_is_fine():
    assert connection_problem(host="https://other.example:6443", api_key="sha256~own", environ=ENV) is None


def test_plain_http_with_a_token_is_refused_whoever_gives_it():
    for env in (ENV, {}):
        problem = connection_problem(host="http://127.0.0.1:18999", api_key="sha256~own", environ=env)
        assert "plain http" in problem


def test_no_token_no_problem():
    assert connection_problem(host="http://127.0.0.1:8080", api_key=None, environ={}) is None
    assert connection_problem(host=None, api_key=None, environ=ENV) is None


def test_parameters_fall_back_to_the_environment_as_kubernetes_core_does():
    # No host or api_key given to the module: both come from the credential, which is safe.
    assert connection_problem(host=None, api_key=None, environ=ENV) is None
    # Only the host given: the credential's token would follow it.
    assert "not the credential's host" in connection_problem(host="https://evil.example", api_key=None, environ=ENV)
    assert "plain http" in connection_problem(host="http://127.0.0.1:1", api_key=None, environ=ENV)
    assert "plain http" in connection_problem(host=None, api_key=None,
                                              environ={"K8S_AUTH_HOST": "http://x:80", "K8S_AUTH_API_KEY": "t"})


@pytest.mark.parametrize("url,name", [
    ("https://api.lab-1.example.com:6443", "lab-1"),
    ("https://api-int.prod-east.example.com:6443/", "prod-east"),
    ("api.hpc-ib.example.com:6443", "hpc-ib"),
    ("https://openshift.internal:8443", "openshift.internal"),
    ("https://10.0.0.5:6443", "10.0.0.5"),
    ("https://api.crc.testing:6443", "crc"),
    (None, None), ("", None), ("https://", None),
])
def test_cluster_name_from_the_api_server_url(url, name):
    # Reports named the implicit inventory host "localhost" (issue 18 point 8): the API URL names the cluster.
    assert cluster_name(url) == name
