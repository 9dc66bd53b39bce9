"""Fixtures for the API-server conformance tests: a bare simulated server (no profile, no simulated operators),
a kubernetes DynamicClient and a raw HTTP session against it."""

import pytest
import requests
from kubernetes import config
from kubernetes.dynamic import DynamicClient

from simulator.pytest_fixtures import crd_dir, sim, sim_factory  # noqa: F401 pylint: disable=unused-import


@pytest.fixture
def api(sim_factory):
    """Simulated API server without simulated operators: only API-server semantics are under test."""
    return sim_factory(profile=None, controllers=False)


class Http:
    """Raw HTTP against the simulated server, authenticated like a client with the kubeconfig token."""

    def __init__(self, cluster):
        self.base = cluster.url
        self.session = requests.Session()
        self.session.headers["Authorization"] = "Bearer " + cluster.token

    def request(self, method, path, json_body=None, content_type=None, data=None, **kwargs):
        headers = kwargs.pop("headers", {})
        if content_type:
            headers["Content-Type"] = content_type
        if json_body is not None and data is None:
            import json

            data = json.dumps(json_body)
            headers.setdefault("Content-Type", "application/json")
        return self.session.request(method, self.base + path, data=data, headers=headers, timeout=10, **kwargs)

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, body, **kw):
        return self.request("POST", path, json_body=body, **kw)

    def put(self, path, body, **kw):
        return self.request("PUT", path, json_body=body, **kw)

    def patch(self, path, body, content_type="application/merge-patch+json", **kw):
        import json

        data = body if isinstance(body, str) else json.dumps(body)
        return self.request("PATCH", path, data=data, content_type=content_type, **kw)

    def delete(self, path, body=None, **kw):
        return self.request("DELETE", path, json_body=body, **kw)


@pytest.fixture
def http(api):
    return Http(api)


@pytest.fixture
def dyn(api, tmp_path):
    """DynamicClient with its own discovery cache file (as kubernetes.core keeps one per server)."""
    client = config.new_client_from_config(config_file=api.kubeconfig)
    return DynamicClient(client, cache_file=str(tmp_path / "discovery.json"))


def served_ncp(cluster):
    """The NicClusterPolicy resource type, marked served (the OLM simulation serves it only after install)."""
    cluster.store.set_served("mellanox.com", "nicclusterpolicies", True)
    return cluster.store.find_type("mellanox.com", "v1alpha1", "nicclusterpolicies")


def ncp_body(name="nic-cluster-policy", **spec):
    return {"apiVersion": "mellanox.com/v1alpha1", "kind": "NicClusterPolicy", "metadata": {"name": name},
            "spec": spec or {"ofedDriver": {"image": "doca-driver", "repository": "nvcr.io/nvidia/mellanox",
                                            "version": "25.04-0.6.1.0-2"}}}
