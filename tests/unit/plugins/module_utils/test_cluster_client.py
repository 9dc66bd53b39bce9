# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ClusterClient.resource: what a missing kind costs in discovery requests.

The discoverer is kubernetes.core's own LazyDiscoverer (the one K8SClient builds) over a fake transport that serves
APIResourceLists and counts requests, so the tests also show that the discoverer finds what ClusterClient added.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json

from kubernetes.client.rest import ApiException
from kubernetes.dynamic.exceptions import NotFoundError
from kubernetes.dynamic.resource import ResourceInstance

from ansible_collections.kubernetes.core.plugins.module_utils.client.discovery import LazyDiscoverer
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.api_errors import RetryPolicy
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.client import ClusterClient


def api_resource(kind, plural, namespaced=True):
    return {"name": plural, "singularName": kind.lower(), "namespaced": namespaced, "kind": kind,
            "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"]}


class FakeApi:
    """Serves /version, /api, /apis and the APIResourceList of each group version in ``served``."""

    def __init__(self, served):
        self.served = served  # {"v1" or "group/version": [APIResource]}
        self.requests = []
        self.timeouts = []
        self.fail_next = []  # statuses to answer the next requests with
        self.configuration = type("Configuration", (), {"host": "https://fake.example:6443"})()

    def body(self, path):
        if path == "/version":
            return {"major": "1", "minor": "33"}
        if path == "/apis":
            groups = {}
            for api_version in self.served:
                group, _sep, version = api_version.rpartition("/")
                if group:
                    groups.setdefault(group, []).append({"groupVersion": api_version, "version": version})
            return {"kind": "APIGroupList", "groups": [{"name": g, "versions": v, "preferredVersion": v[0]} for g, v in groups.items()]}
        api_version = path.split("/", 2)[2] if path.startswith("/apis/") else path[len("/api/"):]
        if api_version not in self.served:
            raise NotFoundError(ApiException(status=404, reason="Not Found"))
        return {"kind": "APIResourceList", "groupVersion": api_version, "resources": self.served[api_version]}

    def request(self, method, path, serialize=True, serializer=None, **params):
        assert method.lower() == "get"
        path = "/" + path.lstrip("/")
        self.requests.append(path)
        self.timeouts.append(params.get("_request_timeout"))
        if self.fail_next:
            raise ApiException(status=self.fail_next.pop(0), reason="Service Unavailable")
        body = self.body(path)
        if serializer is not None:  # the discoverer reads /version through a serializer of its own
            return serializer(self, body)
        if not serialize:
            return type("Response", (), {"data": json.dumps(body).encode("utf-8")})()
        return ResourceInstance(self, body)


class FakeK8s:
    def __init__(self, api, cache_file):
        self.discoverer = LazyDiscoverer(api, str(cache_file))
        self.client = type("Dynamic", (), {"resources": self.discoverer, "request": staticmethod(api.request)})()
        self.dry_run = False


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


SERVED = {
    "v1": [api_resource("Node", "nodes", False), api_resource("Pod", "pods"),
           {"name": "pods/status", "kind": "Pod", "namespaced": True, "verbs": ["get"]}],
    "operators.coreos.com/v1alpha1": [api_resource("Subscription", "subscriptions")],
}
MISSING = [("mellanox.com/v1alpha1", "NicClusterPolicy"), ("mellanox.com/v1alpha1", "MacvlanNetwork"),
           ("nvidia.com/v1", "ClusterPolicy"), ("sriovnetwork.openshift.io/v1", "SriovNetwork")]
NO_SLEEP = RetryPolicy(sleep=lambda _s: None)


def connect(tmp_path, served=None, **options):
    api = FakeApi(copy.deepcopy(served or SERVED))
    k8s = FakeK8s(api, tmp_path / "discovery.json")
    assert api.requests == ["/version", "/apis"]  # the discoverer's first reading (no cache file yet)
    del api.requests[:], api.timeouts[:]
    return api, k8s, ClusterClient(k8s, retry=NO_SLEEP, **options)


def test_a_missing_kind_costs_one_group_version_request_and_no_rediscovery(tmp_path):
    clock = Clock()
    api, _k8s, cluster = connect(tmp_path, clock=clock)
    assert cluster.resource("mellanox.com/v1alpha1", "NicClusterPolicy") is None
    assert api.requests == ["/apis/mellanox.com/v1alpha1"]
    # the "not served" answer holds for a few seconds: other kinds of the group version cost nothing
    assert cluster.resource("mellanox.com/v1alpha1", "MacvlanNetwork") is None
    assert api.requests == ["/apis/mellanox.com/v1alpha1"]
    assert "/version" not in api.requests and "/apis" not in api.requests
    # every request is one of ours, under the request timeout
    assert api.timeouts == [cluster.request_timeout]


def test_a_kind_served_after_the_not_served_answer_expired_is_found(tmp_path):
    clock = Clock()
    api, k8s, cluster = connect(tmp_path, clock=clock)
    assert cluster.resource("mellanox.com/v1alpha1", "NicClusterPolicy") is None
    api.served["mellanox.com/v1alpha1"] = [api_resource("NicClusterPolicy", "nicclusterpolicies", False)]  # the operator came
    clock.now += 2
    assert cluster.resource("mellanox.com/v1alpha1", "NicClusterPolicy") is None  # still believed absent
    clock.now += cluster.not_served_ttl
    found = cluster.resource("mellanox.com/v1alpha1", "NicClusterPolicy")
    wanted = ("mellanox.com/v1alpha1", "NicClusterPolicy", "nicclusterpolicies", False)
    assert (found.group_version, found.kind, found.name, found.namespaced) == wanted
    assert found.path(name="x") == "/apis/mellanox.com/v1alpha1/nicclusterpolicies/x"
    assert api.requests == ["/apis/mellanox.com/v1alpha1"] * 2
    # the discoverer itself (what kubernetes.core's modules search) and the next task's, from the cache file, know it
    assert k8s.discoverer.get(api_version="mellanox.com/v1alpha1", kind="NicClusterPolicy").name == "nicclusterpolicies"
    later = LazyDiscoverer(api, str(tmp_path / "discovery.json"))
    assert later.get(api_version="mellanox.com/v1alpha1", kind="NicClusterPolicy").name == "nicclusterpolicies"
    assert api.requests == ["/apis/mellanox.com/v1alpha1"] * 2


def test_a_kind_new_in_a_group_version_already_read_is_found(tmp_path):
    clock = Clock()
    api, _k8s, cluster = connect(tmp_path, clock=clock)
    assert cluster.resource("operators.coreos.com/v1alpha1", "Subscription").name == "subscriptions"
    assert cluster.resource("operators.coreos.com/v1alpha1", "InstallPlan") is None  # the answer just read says so
    assert api.requests == ["/apis/operators.coreos.com/v1alpha1"]
    api.served["operators.coreos.com/v1alpha1"].append(api_resource("InstallPlan", "installplans"))
    clock.now += cluster.not_served_ttl
    assert cluster.resource("operators.coreos.com/v1alpha1", "InstallPlan").name == "installplans"
    assert cluster.resource("operators.coreos.com/v1alpha1", "Subscription").name == "subscriptions"
    assert api.requests == ["/apis/operators.coreos.com/v1alpha1"] * 2


def test_served_kinds_come_from_the_cache_with_their_subresources(tmp_path):
    api, _k8s, cluster = connect(tmp_path)
    pod = cluster.resource("v1", "Pod")
    assert cluster.resource("v1", "Node").namespaced is False
    assert api.requests == ["/api/v1"]
    assert pod.prefix == "api" and pod.group_version == "v1" and "status" in pod.subresources
    assert cluster.resource("v1", "Pod") is pod
    assert api.requests == ["/api/v1"]


def test_point_in_time_readers_list_the_groups_once_for_any_number_of_missing_kinds(tmp_path):
    api, _k8s, cluster = connect(tmp_path, rediscover_once=True)
    assert [cluster.resource(v, k) for v, k in MISSING] == [None] * len(MISSING)
    assert api.requests == ["/apis"]
    # served kinds are still found; a missing kind of a served group version costs that group version, once
    assert cluster.resource("operators.coreos.com/v1alpha1", "Subscription").name == "subscriptions"
    assert cluster.resource("operators.coreos.com/v1alpha1", "InstallPlan") is None
    assert cluster.resource("operators.coreos.com/v1alpha1", "InstallPlan") is None
    assert api.requests == ["/apis", "/apis/operators.coreos.com/v1alpha1"]


def test_a_group_listed_after_the_cache_was_written_is_read(tmp_path):
    api, _k8s, cluster = connect(tmp_path, rediscover_once=True)
    api.served["nvidia.com/v1"] = [api_resource("ClusterPolicy", "clusterpolicies", False)]
    assert cluster.resource("nvidia.com/v1", "ClusterPolicy").name == "clusterpolicies"
    assert api.requests == ["/apis", "/apis/nvidia.com/v1"]


def test_discovery_requests_are_retried_when_transient(tmp_path):
    api, _k8s, cluster = connect(tmp_path)
    api.fail_next = [503, 429]
    assert cluster.resource("v1", "Node").name == "nodes"
    assert api.requests == ["/api/v1"] * 3


def test_an_unreadable_discovery_cache_falls_back_to_the_discoverer():
    class Discoverer:
        asked = []

        def get(self, prefix, api_version, kind):
            self.asked.append((prefix, api_version, kind))
            return "resource" if kind == "Node" else None

    k8s = type("K8s", (), {"client": type("Dynamic", (), {"resources": Discoverer()})(), "dry_run": False})()
    cluster = ClusterClient(k8s)
    assert cluster.resource("v1", "Node") == "resource"
    assert Discoverer.asked == [("api", "v1", "Node")]
